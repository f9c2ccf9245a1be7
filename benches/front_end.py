"""The front end's cost beside the core's: `make bench` runs it after the
core benchmark.

For each scenario it runs, each in a process of its own and several times,
the core alone (`bench --repeat 1 SCENARIO`, the Rust example) and the
command (`phblab run SCENARIO -q`), and prints the median wall time and the
peak resident memory of each, with the command's overhead against the
targets: `phblab run` within 1.3 × the core's time + 60 ms, and within the
core's memory + 40 MB; `phblab --version` under 80 ms.

    python benches/front_end.py --bench target/dist/examples/bench \\
        --phblab .venv/bin/phblab benches/scenarios/thesis-7.toml
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

VERSION_TARGET_S = 0.080
RUN_FACTOR = 1.3
RUN_EXTRA_S = 0.060
RSS_EXTRA_MB = 40.0


def measure(command: list[str], repeat: int) -> tuple[float, float]:
    """Median wall time (s) and largest peak RSS (MB) of `command` over
    `repeat` runs, each a fresh process."""
    walls, peaks = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{' '.join(command)} failed: {proc.stderr.read().decode()}")
        proc.stderr.close()
        peaks.append(usage.ru_maxrss / 1024)  # KB on Linux
    return statistics.median(walls), max(peaks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", required=True, help="the core benchmark binary")
    parser.add_argument("--phblab", required=True, help="the phblab command")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args()

    version_s, version_mb = measure([args.phblab, "--version"], args.repeat)
    verdict = "ok" if version_s < VERSION_TARGET_S else "ABOVE TARGET"
    print(f"phblab --version: {version_s * 1e3:.0f} ms, {version_mb:.0f} MB (target < 80 ms: {verdict})")
    print()
    print(f"{'scenario':<18} {'core s':>7} {'run s':>7} {'ratio':>6} {'core MB':>8} {'run MB':>7}  targets")
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.scenarios:
            name = os.path.basename(path).removesuffix(".toml")
            core_s, core_mb = measure([args.bench, "--repeat", "1", path], args.repeat)
            out = os.path.join(tmp, name)
            run_s, run_mb = measure([args.phblab, "run", path, "-q", "--out", out], args.repeat)
            time_ok = run_s <= RUN_FACTOR * core_s + RUN_EXTRA_S
            rss_ok = run_mb <= core_mb + RSS_EXTRA_MB
            targets = f"time {'ok' if time_ok else 'ABOVE'}, memory {'ok' if rss_ok else 'ABOVE'}"
            print(
                f"{name:<18} {core_s:>7.3f} {run_s:>7.3f} {run_s / core_s:>6.2f} {core_mb:>8.1f} {run_mb:>7.1f}  {targets}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
