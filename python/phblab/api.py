"""The Python API: `run` and `validate` a scenario given as a file or a dict.

    import phblab
    res = phblab.run("scenarios/examples/dumbbell-red.toml",
                     seed=7, overrides={"qdiscs.bottleneck.max_p": 0.2})
    res.classes          # a pandas DataFrame per table
    res.write("results/red-maxp-0.2")

Scenarios are parsed and validated by the Rust core; a dict is first written
out as TOML (`phblab.scenario.to_toml`).
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from phblab import _core
from phblab.entry import scenario_text_of_file
from phblab.results import Results, keep_trace
from phblab.scenario import to_toml, toml_value

Scenario = str | os.PathLike | Mapping[str, Any]
Overrides = Mapping[str, Any] | Iterable[str] | None

# Show a progress bar only once a run has lasted this long (seconds).
PROGRESS_DELAY_S = 2.0


def scenario_text(scenario: Scenario) -> tuple[str, str]:
    """The TOML text of `scenario` and its name for messages: a path is read
    (and named by its path), a dict is written out as TOML (named "<dict>").
    A catalog entry's `[reproduce]` section is left out (`phblab.entry`)."""
    if isinstance(scenario, Mapping):
        return to_toml({k: v for k, v in scenario.items() if k != "reproduce"}), "<dict>"
    if isinstance(scenario, (str, os.PathLike)):
        return scenario_text_of_file(read_scenario_file(scenario)), str(scenario)
    raise TypeError(f"a scenario is a path or a dict, not {type(scenario).__name__}")


#: seeds are unsigned 64-bit integers
SEED_MAX = 2**64 - 1

#: the largest scenario file read, in bytes
MAX_SCENARIO_BYTES = 16 * 2**20


def check_seed(seed: int) -> int:
    """`seed` if it is an integer in 0..=2^64-1; otherwise ValueError."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
        raise ValueError(f"seed {seed!r}: a seed is an integer from 0 to {SEED_MAX}")
    return seed


#: what a file that is not a regular file is, for messages
_FILE_TYPES = {
    stat.S_IFIFO: "a named pipe",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


def read_scenario_file(path: str | os.PathLike) -> str:
    """The text of a scenario file, refusing one that is not a regular file
    (a named pipe would block for ever, a device never end) and one larger
    than `MAX_SCENARIO_BYTES` before reading it all; OSError or ValueError
    (not a regular file, not UTF-8, too large) with the path."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        kind = stat.S_IFMT(os.fstat(fd).st_mode)
        if kind != stat.S_IFREG:
            raise ValueError(f"{path}: {_FILE_TYPES.get(kind, 'not a regular file')}, not a scenario file")
        data = f.read(MAX_SCENARIO_BYTES + 1)
    if len(data) > MAX_SCENARIO_BYTES:
        raise ValueError(f"{path}: larger than {MAX_SCENARIO_BYTES // 2**20} MiB; not a scenario file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def override_list(overrides: Overrides) -> list[str]:
    """Overrides as "path=value" strings with the value written as TOML, one
    spelling whatever the caller's: a dict {"links[1].rate": "5Mbps"} and
    the command line's "links[1].rate=5Mbps" (a value that is not TOML is a
    string, as the core reads it) both give 'links[1].rate="5Mbps"', so
    that results record, and sweeps key, the same override the same way."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{key}={toml_value(value)}" for key, value in overrides.items()]
    if isinstance(overrides, str):
        overrides = [overrides]
    return [_canonical(str(o)) for o in overrides]


def _canonical(assignment: str) -> str:
    """'path = value' as 'path=<value as TOML>'; kept as given when it is not
    an assignment or its value has no TOML spelling here (the core then
    reports or reads it)."""
    path, sep, text = assignment.partition("=")
    if not sep:
        return assignment
    try:
        return f"{path.strip()}={toml_value(parse_value(text))}"
    except (TypeError, ValueError):  # a TOML date or time, an integer of 100,000 digits: the core reads or refuses it
        return assignment


def parse_value(text: str) -> Any:
    """A value from the command line: a TOML value (`0.1`, `true`, `"x"`,
    `[1, 2]`), otherwise the string itself (`10ms`), as the core reads
    `--set` values."""
    text = text.strip()
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


class ProgressBar:
    """A progress callback for `_core.run`: a tqdm bar over the fraction of
    simulated time done, which appears only once the run has lasted
    `delay_s` seconds, so that short runs print nothing."""

    def __init__(self, delay_s: float = PROGRESS_DELAY_S, desc: str = "simulating") -> None:
        self.start = time.monotonic()
        self.delay_s = delay_s
        self.desc = desc
        self.bar = None

    def __call__(self, fraction: float) -> None:
        if self.bar is None:
            elapsed = time.monotonic() - self.start
            if elapsed < self.delay_s:
                return
            from tqdm import tqdm

            self.bar = tqdm(
                initial=self._steps(fraction),
                total=1000,
                miniters=1,
                desc=self.desc,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}",
                leave=False,
            )
            self.bar.start_t -= elapsed  # count the time before the bar appeared
        done = self._steps(fraction)
        if done > self.bar.n:
            self.bar.update(done - self.bar.n)  # tqdm redraws at most every 0.1 s

    @staticmethod
    def _steps(fraction: float) -> int:
        return int(1000 * min(1.0, max(0.0, fraction)))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def run(
    scenario: Scenario,
    seed: int | None = None,
    overrides: Overrides = None,
    out: str | os.PathLike | None = None,
    progress: bool | Callable[[float], None] = False,
) -> Results:
    """Runs a scenario and returns its `Results`.

    Args:
        scenario: a path to a TOML scenario file, or the same as a dict.
        seed: the run's seed; None uses the scenario's `run.seed`.
        overrides: changes applied before validation, as a dict
            {"links[2].rate": "5Mbps"} or a list of "path=value" strings.
        out: if given, the results are also written to this directory.
        progress: True for a progress bar (shown once the run has lasted
            2 s), or a callable taking the fraction of simulated time done.

    Raises:
        ScenarioError: the scenario or an override is invalid.
        RunError: the run could not finish correctly (a simulator bug).
    """
    text, source = scenario_text(scenario)
    sets = override_list(overrides)
    if seed is not None:
        check_seed(seed)
    bar = ProgressBar() if progress is True else None
    callback = bar if bar is not None else (progress if callable(progress) else None)
    try:
        results = simulate(text, source, seed, sets, callback)
    finally:
        if bar is not None:
            bar.close()
    if out is not None:
        results.write(out)
    return results


def simulate(
    text: str,
    source: str,
    seed: int | None,
    overrides: list[str],
    progress: Callable[[float], object] | None,
) -> Results:
    """Runs scenario `text` (from `source`) in the simulator and returns
    its `Results`. A `[trace]` section's event log is written while the run
    goes into a directory the core creates under TMPDIR (only for a traced
    run; a failed or interrupted run removes it), then joins the results as
    the table `events`, written with the others as `events.parquet`, and
    its pcapng file joins the results' files as `trace.pcapng`; both move
    into a temporary directory that goes with the results."""
    start = time.perf_counter()
    raw = _core.run(text, source, seed, overrides, progress, tempfile.gettempdir())
    wall = time.perf_counter() - start
    written = raw.pop("trace_dir", None)
    if written is not None:
        files: dict[str, Path] = {}
        raw["scratch"] = keep_trace(Path(written), raw["parquet"], files)
        raw["files"] = files
        os.rmdir(written)
    return Results.from_core(raw, wall_time_s=wall, overrides=overrides, version=_core.version(), scenario_text=text)


def validate(scenario: Scenario, overrides: Overrides = None, backend: str = "simulate") -> dict[str, Any]:
    """Validates a scenario (path or dict) without running it, for
    `backend` ("simulate", or "emulate" for `phblab emulate`): what that
    backend cannot run is refused too.

    Returns a description: name, duration_s, warmup_s, seed, nodes, links
    (counts), classes (names), flows (count), link_directions (both
    directions of every link, generated ones included, as "a->b") and
    warnings (what the scenario will not measure as it seems to: a
    conditioner rule no traffic reaches, a TCP window too small for its
    link, flows that start after the run's end, JoBS rate guarantees above
    the link's rate). Raises ScenarioError.
    """
    text, source = scenario_text(scenario)
    return _core.validate(text, source, override_list(overrides), backend, advise=True)
