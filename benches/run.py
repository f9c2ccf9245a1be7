"""Speed benchmark: runs each reference scenario in its own process and
reports simulated events, wall time, events per second and peak memory.

    python benches/run.py [SCENARIO.toml ...] [--repeat N]

Without arguments it runs every file in benches/scenarios/. Wall time covers
the simulation only (parsing and the run inside the Rust core, not writing
results); peak memory is the child process's maximum resident set size,
which includes the Python interpreter and pandas (about 60-80 MB of it).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(path: str) -> None:
    from phblab import _core

    text = Path(path).read_text()
    start = time.perf_counter()
    out = _core.run(text, path, None, [], None)
    wall = time.perf_counter() - start
    print(json.dumps({"events": out["events"], "wall_s": wall}))


def measure(path: Path) -> dict:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", str(path)], stdout=subprocess.PIPE, text=True
    )
    stdout = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{path}: benchmark run failed")
    result = json.loads(stdout)
    result["peak_rss_mb"] = usage.ru_maxrss / 1024
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenarios", nargs="*", help="scenario files (default: benches/scenarios/*.toml)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per scenario; the fastest is reported")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    paths = [Path(p) for p in args.scenarios] or sorted((HERE / "scenarios").glob("*.toml"))
    print(f"{'scenario':<20} {'events':>12} {'wall s':>8} {'Mevents/s':>10} {'peak MB':>8}")
    for path in paths:
        runs = [measure(path) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["wall_s"])
        peak = max(r["peak_rss_mb"] for r in runs)
        rate = best["events"] / best["wall_s"] / 1e6
        print(f"{path.stem:<20} {best['events']:>12} {best['wall_s']:>8.3f} {rate:>10.2f} {peak:>8.1f}")


if __name__ == "__main__":
    main()
