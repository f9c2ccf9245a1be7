"""`phblab emulate`: a scenario on the kernel's own TCP and UDP, through the
user-space router `phb-emu` (crates/phb-emu) running phblab's qdiscs in
real time. docs/emulation.md describes how it works and what it needs.

The router process creates one anonymous network namespace per host and
nothing that outlives it; this module runs it, stops it on any exit
(a `finally` sends SIGTERM, then SIGKILL), and turns what it wrote into
the same result files as `phblab run` (`Results.write`: manifest, lock,
never overwriting what phblab did not write).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from phblab.api import override_list
from phblab.results import TABLES, Results

#: how long the router gets to stop cleanly before it is killed
STOP_GRACE_S = 5.0


class EmulateError(Exception):
    """The emulation could not run or failed; `bad_input` says whether the
    cause is the input or the machine (missing privileges, a feature that
    cannot be emulated) rather than phblab."""

    def __init__(self, message: str, bad_input: bool) -> None:
        super().__init__(message)
        self.bad_input = bad_input


def emulator() -> Path:
    """The `phb-emu` binary: $PHBLAB_EMU, else the one built in this
    checkout (target/release or target/dist), else one on PATH."""
    if os.environ.get("PHBLAB_EMU"):
        return Path(os.environ["PHBLAB_EMU"])
    root = Path(__file__).resolve().parents[2]
    for profile in ("release", "dist"):
        candidate = root / "target" / profile / "phb-emu"
        if candidate.is_file():
            return candidate
    found = shutil.which("phb-emu")
    if found is None:
        raise EmulateError(
            "phb-emu not found: build it with `cargo build --release -p phb-emu` or set PHBLAB_EMU", bad_input=True
        )
    return Path(found)


def _stop(proc: subprocess.Popen) -> None:
    """Stops the router if it still runs: SIGTERM (it then removes
    everything it created), SIGKILL after STOP_GRACE_S (the kernel then
    does)."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def emulate(
    text: str,
    source_name: str,
    *,
    seed: int | None = None,
    duration: str | None = None,
    congestion: str = "reno",
    overrides: list[str] | None = None,
    spin_us: int = 0,
) -> Results:
    """Emulates the scenario `text` (named `source_name` in messages) and
    returns its results. `duration` (e.g. "5s") replaces `run.duration`;
    `spin_us` is the time before each timer in which the router polls
    instead of sleeping (docs/emulation.md, "Fidelity").

    Raises EmulateError; KeyboardInterrupt if the router was stopped by a
    signal."""
    sets = override_list(overrides)
    if duration is not None:
        sets.append(f'run.duration="{duration}"')
    with tempfile.TemporaryDirectory(prefix="phblab-emulate-") as tmp:
        scenario = Path(tmp) / "scenario.toml"
        scenario.write_text(text, encoding="utf-8")
        out = Path(tmp) / "out"
        out.mkdir()
        command = [str(emulator()), "run", str(scenario), "--source-name", source_name, "--out", str(out)]
        command += ["--congestion", congestion, "--spin-us", str(spin_us)]
        if seed is not None:
            command += ["--seed", str(seed)]
        for assignment in sets:
            command += ["--set", assignment]
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            _, stderr = proc.communicate()
        finally:
            _stop(proc)
        wall = time.perf_counter() - start
        if proc.returncode == 130:
            raise KeyboardInterrupt
        if proc.returncode != 0:
            lines = [line.removeprefix("phb-emu: ") for line in stderr.strip().splitlines()]
            message = lines[-1] if lines else f"phb-emu exited with status {proc.returncode}"
            raise EmulateError(message, bad_input=proc.returncode == 2)
        facts = json.loads((out / "emulation.json").read_text())
        parquet = {name: (out / f"{name}.parquet").read_bytes() for name in TABLES}
    summary = {
        "scenario": facts["scenario"],
        "scenario_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "seed": facts["seed"],
        "duration_s": facts["duration_s"],
        "warmup_s": facts["warmup_s"],
        "events": facts["forwarded"],
        "wall_time_s": wall,
        "phblab_version": _version(),
        "overrides": sets,
        "backend": "emulate",
        "congestion_control": facts["congestion_control"],
        "emulation": {k: v for k, v in facts.items() if k not in ("scenario", "seed", "duration_s", "warmup_s")},
    }
    return Results(summary, parquet, None, text)


def _version() -> str:
    from phblab import _core

    return _core.version()


def cleanup() -> list[str]:
    """Kills agents of runs whose router is gone (each `phb-emu agent`
    process adopted by init) and returns what it did. Namespaces and TUN
    devices need no cleaning: they are anonymous and vanish with the last
    process in them."""
    done = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            status = (entry / "status").read_text()
        except OSError:
            continue
        orphan = any(line.split() == ["PPid:", "1"] for line in status.splitlines())
        if orphan and len(argv) > 1 and argv[0].endswith(b"phb-emu") and argv[1] == b"agent":
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                continue
            done.append(f"killed orphaned agent {entry.name}")
    return done
