"""`phblab emulate`: a scenario on the kernel's own TCP and UDP, through the
user-space router `phb-emu` (crates/phb-emu) running phblab's qdiscs in
real time. docs/emulation.md describes how it works and what it needs.

The router process creates one anonymous network namespace per host and
nothing that outlives it; this module runs it, stops it on any exit
(a `finally` sends SIGTERM, then SIGKILL), and turns what it wrote into
the same result files as `phblab run` (`Results.write`: manifest, lock,
never overwriting what phblab did not write).

Nothing outlives this process either. The router dies with it (the
kernel's parent-death signal, which the router asks for and checks as it
starts), the agents with the router; every one of them carries this
process as its owner in `PHBLAB_EMULATION` (pid and start time), and so
does the temporary directory the router writes into (`OWNER_FILE`). If
this process is killed, the next emulation removes the directory it
left, and `cleanup` (`phblab emulate --cleanup`) finds and stops any
emulation process whose owner is gone and removes such directories.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from phblab.api import override_list
from phblab.results import TABLES, Results, keep_trace

#: how long the router gets to stop cleanly before it is killed
STOP_GRACE_S = 5.0
#: the environment variable that marks every process of an emulation with its owner, "PID:START"
OWNER_VARIABLE = "PHBLAB_EMULATION"
#: the prefix of an emulation's temporary directory, and the file in it naming its owner
TEMP_PREFIX = "phblab-emulate-"
OWNER_FILE = "owner"


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


def settings(overrides: list[str] | None, duration: str | None) -> list[str]:
    """The overrides an emulation applies: `overrides`, then `duration`
    (e.g. "5s") as `run.duration`."""
    sets = override_list(overrides)
    if duration is not None:
        sets.append(f"run.duration={json.dumps(duration)}")
    return sets


def emulate(
    text: str,
    source_name: str,
    *,
    seed: int | None = None,
    duration: str | None = None,
    congestion: str = "reno",
    overrides: list[str] | None = None,
    spin_us: int = 0,
    shell: str | None = None,
) -> Results:
    """Emulates the scenario `text` (named `source_name` in messages) and
    returns its results. `duration` (e.g. "5s") replaces `run.duration`;
    `spin_us` is the time before each timer in which the router polls
    instead of sleeping (docs/emulation.md, "Fidelity"); `shell` names a
    host in whose namespace a shell runs on this process's standard input
    and output while the emulation lasts.

    Raises EmulateError; KeyboardInterrupt if the router was stopped by a
    signal."""
    sets = settings(overrides, duration)
    _remove_stale_directories()
    with _temporary_directory() as tmp:
        scenario = Path(tmp) / "scenario.toml"
        scenario.write_text(text, encoding="utf-8")
        out = Path(tmp) / "out"
        out.mkdir()
        command = [str(emulator()), "run", str(scenario), "--source-name", source_name, "--out", str(out)]
        command += ["--congestion", congestion, "--spin-us", str(spin_us)]
        if shell is not None:
            command += ["--shell", shell]
        if seed is not None:
            command += ["--seed", str(seed)]
        for assignment in sets:
            command += ["--set", assignment]
        start = time.perf_counter()
        env = {**os.environ, OWNER_VARIABLE: _owner(os.getpid())}
        stdin = None if shell is not None else subprocess.DEVNULL
        proc = subprocess.Popen(command, stdin=stdin, stderr=subprocess.PIPE, text=True, env=env)
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
        files = _command_outputs(out)
        scratch = keep_trace(out, parquet, files)
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
        "kernel": os.uname().release,
        "emulation": {k: v for k, v in facts.items() if k not in ("scenario", "seed", "duration_s", "warmup_s")},
    }
    return Results(summary, parquet, None, text, files, scratch=scratch)


def _command_outputs(out: Path) -> dict[str, bytes]:
    """The standard output and error of the scenario's commands, which the
    router wrote into `out/commands/` ({"commands/<i>.out": bytes, ...}),
    read as regular files only, never through a link."""
    files = {}
    commands = out / "commands"
    if not commands.is_dir() or commands.is_symlink():
        return files
    for path in sorted(commands.iterdir()):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                files[f"commands/{path.name}"] = f.read()
    return files


def _version() -> str:
    from phblab import _core

    return _core.version()


def _start_time(pid: int) -> str | None:
    """Process `pid`'s start time in clock ticks since boot (field 22 of
    /proc/PID/stat), which tells it from a later process given its pid."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def _zombie(pid: int) -> bool:
    """Whether process `pid` has ended and waits for its parent to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def _owner(pid: int) -> str:
    """The owner mark ("PID:START") of process `pid`."""
    return f"{pid}:{_start_time(pid) or 0}"


def _owner_alive(mark: str) -> bool:
    """Whether the process an owner mark names still runs (the same
    process: its start time matches)."""
    pid, _, start = mark.partition(":")
    return pid.isdigit() and _start_time(int(pid)) == start


@contextlib.contextmanager
def _temporary_directory():
    """A fresh temporary directory (mode 0700) marked with this process as
    its owner, removed when the body ends."""
    tmp = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    try:
        (tmp / OWNER_FILE).write_text(_owner(os.getpid()) + "\n")
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _remove_stale_directories() -> list[str]:
    """Removes the temporary directories of emulations whose owner is gone
    (it was killed before it could) and returns them. Only directories of
    this user that carry an owner file are touched; rmtree never follows a
    link."""
    removed = []
    root = Path(tempfile.gettempdir())
    for d in root.glob(f"{TEMP_PREFIX}*"):
        try:
            st = os.lstat(d)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                continue
            owner = d / OWNER_FILE
            if not stat.S_ISREG(os.lstat(owner).st_mode):
                continue
            mark = owner.read_text().strip()
        except OSError:
            continue
        if not _owner_alive(mark):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(f"removed {d} (its emulation's process {mark.partition(':')[0]} is gone)")
    return removed


def _left_behind() -> list[tuple[int, str, str]]:
    """Emulation processes whose owner is gone: (pid, what, namespace),
    what being "router", "agent" or "program" (what a `--shell` started,
    which outlives a router killed with SIGKILL). A process marked with an
    owner (`OWNER_VARIABLE`) is left behind when that owner no longer runs;
    an unmarked `phb-emu agent` (of an earlier version) when init adopted it."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            ours = len(argv) > 1 and argv[0].endswith(b"phb-emu") and argv[1] in (b"run", b"agent")
            environ = (entry / "environ").read_bytes().split(b"\0")
            status = (entry / "status").read_text()
            namespace = os.readlink(entry / "ns" / "net")
        except OSError:
            continue
        prefix = OWNER_VARIABLE.encode() + b"="
        marks = [v[len(prefix) :].decode(errors="replace") for v in environ if v.startswith(prefix)]
        if marks:
            left = not _owner_alive(marks[0])
        else:
            left = ours and argv[1] == b"agent" and any(line.split() == ["PPid:", "1"] for line in status.splitlines())
        if left:
            what = ("router" if argv[1] == b"run" else "agent") if ours else "program"
            found.append((int(entry.name), what, namespace))
    return found


def cleanup() -> list[str]:
    """Stops every emulation process whose owner is gone (routers and
    agents of killed runs, `_left_behind`), which takes their network
    namespaces with them, removes the temporary directories such runs left,
    and returns what it did. Namespaces and TUN devices need no other
    cleaning: they are anonymous and vanish with the last process in them.
    Emulations still running are left alone."""
    done = []
    left = _left_behind()
    for pid, what, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
        done.append(f"killed {what} {pid}, whose emulation's owner is gone")
    deadline = time.monotonic() + STOP_GRACE_S
    while any(_start_time(pid) is not None and not _zombie(pid) for pid, _, _ in left) and time.monotonic() < deadline:
        time.sleep(0.02)
    spaces = {ns for _, what, ns in left if what != "router"}
    if spaces:
        done.append(f"{len(spaces)} network namespace{'s' if len(spaces) != 1 else ''} went with them")
    return done + _remove_stale_directories()
