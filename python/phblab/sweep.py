"""Parameter sweeps: a scenario run over the cartesian product of a grid of
values, several seeds per point, in parallel, resumable.

    import phblab
    sw = phblab.sweep("scenarios/examples/dumbbell-red.toml",
                      grid={"qdiscs.bottleneck.max_p": [0.05, 0.1, 0.2]},
                      seeds=3, out="results/red-maxp")
    sw.classes          # one row per run × (scope, class), with max_p and seed columns
    sw.summary()        # mean and 95% CI across seeds of every metric

Grid keys. A key with a dot or a bracket (`links[1].delay`,
`qdiscs.bottleneck.max_p`) is a scenario path and becomes a `--set`
override. A bare name (`R_ms`) is a parameter only: `set` templates turn
parameters into overrides, e.g. `set={"links[1].delay": "{R_ms/2 - 1}ms"}`
(`phblab.sweep.render`). Every grid key is a column of the dataset.

Runs. Each run (grid point × seed) is keyed by a hash of the scenario text,
its overrides, its seed, the phblab version and the build of the simulator
core, and stored as a results directory `OUT/runs/<key>/` with the manifest
of its files and their digests (`phblab.outdir`). A rerun of the sweep
reuses every run whose files still match their manifest and reruns the
others (saying which and why), so a killed sweep resumes where it stopped
and never reads half-written, truncated or corrupt results. One sweep at a
time writes into OUT: it holds OUT's lock from start to end.

Backends. Runs execute in the calling process (`jobs=1`), in a local
process pool (default: one process per core), or on any executor-like
`client`: a `concurrent.futures.Executor` or a Dask `distributed.Client`
(both have `submit`; results come back to this process, which alone writes
to OUT, so Dask workers need no shared file system).

Dataset. When every run is complete, the combined tables are rebuilt from
`OUT/runs/` in plan order (grid points in the order of the cartesian
product as given, then seeds ascending): `classes.parquet`,
`flows.parquet`, `delay_ratios.parquet` (empty unless the scenario sets
`run.delay_ratios`), `runs.parquet` (one row per run: key, events, wall time),
`summary.parquet` (statistics, `phblab.stats`) and `sweep.json` (the
manifest). The same plan therefore always gives the same dataset, whether
it ran in one go, resumed, or ran on Dask.

Emulation. `backend="emulate"` runs every point on real Linux TCP through
the user-space router (`phblab.emulate`) instead of the simulator: one run
at a time in the calling process (each takes its duration in real time and
wants the whole machine), so `jobs` above 1 and `client` are refused.
`congestion` chooses the senders' congestion control (reno, cubic, bbr).
The backend, the congestion control and a digest of the `phb-emu` binary
are part of an emulated run's key, `sweep.json` and `runs.parquet` record
the backend, and a directory that holds one backend's sweep is refused to
the other, so simulated and emulated results never mix; an emulated sweep's
default directory is `results/<name>-emulate-sweep`.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import signal
import stat
import sys
import time
import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from phblab import _core, api, outdir
from phblab.expr import evaluate
from phblab.results import Results, read_json_object
from phblab.scenario import toml_value

if TYPE_CHECKING:
    import pandas as pd

#: columns the sweep adds to every table besides the grid keys
RUN_COLUMNS = ["seed", "run"]
DATASET_TABLES = ["classes", "flows", "delay_ratios", "counters", "conditioners"]
#: where a sweep's runs execute: phblab's simulator or the emulator
BACKENDS = ("simulate", "emulate")
#: the emulated senders' congestion controls (`phblab emulate --congestion`)
CONGESTION_CONTROLS = ("reno", "cubic", "bbr")


class SweepError(RuntimeError):
    """A run of the sweep failed; completed runs are kept for a rerun."""


# ---------------------------------------------------------------- grid values


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Splits at `sep` outside brackets, braces and quotes."""
    parts, depth, quote, cur = [], 0, None, []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def parse_grid_arg(arg: str) -> tuple[str, list[Any]]:
    """`key=v1,v2,...` (the `--grid` option) as (key, [values])."""
    key, sep, values = arg.partition("=")
    key = key.strip()
    if not sep or not key or not values.strip():
        raise ValueError(f"--grid {arg!r}: expected KEY=V1,V2,... (e.g. qdiscs.bottleneck.max_p=0.05,0.1)")
    return key, [api.parse_value(v) for v in _split_top(values) if v != ""]


def is_path(key: str) -> bool:
    """A grid key that names a scenario path (applied as an override)."""
    return "." in key or "[" in key


# ------------------------------------------------------------------ templates


def _fmt_number(v: Any) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    if isinstance(v, float):
        return repr(round(v, 12))
    return str(v)


def _evaluate_in(template: str, expr: str, params: Mapping[str, Any]) -> Any:
    """`expr` of `template` evaluated; arithmetic without a value at these
    parameters (a division by zero) is an error of the template."""
    try:
        return evaluate(expr, params)
    except ArithmeticError as e:
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        raise ValueError(f"template {template!r}: {e} (at {shown or 'no parameters'})") from None


def render(template: Any, params: Mapping[str, Any]) -> Any:
    """A `set` template filled in with `params`: `"{R_ms/2 - 1}ms"` gives
    `"9ms"` for R_ms = 20. A template that is one `{expression}` keeps the
    expression's type (`"{p_pct/100}"` gives the float 0.005); a value that is
    not a string is used as it is."""
    if not isinstance(template, str) or "{" not in template:
        return template
    stripped = template.strip()
    if stripped.startswith("{") and stripped.endswith("}") and stripped.count("{") == 1:
        v = _evaluate_in(template, stripped[1:-1], params)
        return round(v, 12) if isinstance(v, float) else v
    out, i = [], 0
    while i < len(template):
        j = template.find("{", i)
        if j < 0:
            out.append(template[i:])
            break
        k = template.find("}", j)
        if k < 0:
            raise ValueError(f"unclosed {{ in template {template!r}")
        out.append(template[i:j])
        out.append(_fmt_number(_evaluate_in(template, template[j + 1 : k], params)))
        i = k + 1
    return "".join(out)


# ----------------------------------------------------------------------- plan


@lru_cache(maxsize=1)
def core_build() -> str:
    """A digest of the compiled simulator core, so that results of another
    build (same version, changed code) are never reused."""
    path = getattr(_core, "__file__", None)
    if not path or not os.path.exists(path):
        return _core.version()
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


@lru_cache(maxsize=1)
def emulator_build() -> str:
    """A digest of the `phb-emu` binary (`phblab.emulate.emulator`), so that
    emulated runs of another build are never reused. Raises EmulateError
    if there is none."""
    from phblab.emulate import emulator

    h = hashlib.sha256()
    with open(emulator(), "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def run_key(
    text: str, overrides: Sequence[str], seed: int, backend: str = "simulate", congestion: str | None = None
) -> str:
    """The key of one run: a hash of scenario text, overrides, seed, phblab
    version and the build of what runs it: the simulator core, or (an
    emulated run) the `phb-emu` binary with the congestion control."""
    doc = {
        "scenario": text.rstrip() + "\n",
        "overrides": list(overrides),
        "seed": int(seed),
        "version": _core.version(),
    }
    if backend == "simulate":
        doc["core"] = core_build()  # the key of a simulated run is what it was before emulation existed
    else:
        doc.update(backend=backend, congestion=congestion, emulator=emulator_build())
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:20]


def check_backend(backend: str, congestion: str | None) -> str | None:
    """The congestion control an emulated sweep uses (reno unless given);
    ValueError for an unknown backend or congestion control, or a
    congestion control given to the simulator."""
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r}: one of {', '.join(BACKENDS)}")
    if backend == "simulate":
        if congestion is not None:
            raise ValueError(
                "a congestion control applies only to the emulate backend (the simulator's TCP is the scenario's)"
            )
        return None
    congestion = congestion or "reno"
    if congestion not in CONGESTION_CONTROLS:
        raise ValueError(f"congestion control {congestion!r}: one of {', '.join(CONGESTION_CONTROLS)}")
    return congestion


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: grid point `point` (its index in the plan) with `seed`."""

    point: int
    params: dict
    seed: int
    overrides: tuple
    key: str


@dataclass
class Plan:
    text: str
    source: str
    name: str
    grid: dict
    seeds: list
    overrides: list
    set: dict
    runs: list = field(default_factory=list)
    #: the scenario's warnings at the first grid point (`phb_sim::advice`)
    warnings: list = field(default_factory=list)
    #: "simulate" or "emulate" (BACKENDS); an emulated plan's congestion control
    backend: str = "simulate"
    congestion: str | None = None

    @property
    def keys(self) -> list[str]:
        """The grid keys (dataset columns)."""
        return list(self.grid)


def _same_value(a: Any, b: Any) -> bool:
    """Grid values that make the same run: equal, and of the same kind (so
    1 and 1.0 count as the same, 1 and "1" do not)."""
    return a == b and isinstance(a, str) == isinstance(b, str)


def _seed_list(seeds: int | Iterable[int] | None) -> list[int]:
    if seeds is None:
        return [1]
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError("seeds must be at least 1")
        return list(range(1, seeds + 1))
    listed = [api.check_seed(s) for s in seeds]
    if not listed:
        raise ValueError("no seeds")
    if len(set(listed)) != len(listed):
        raise ValueError(f"seeds {listed}: a seed is listed twice")
    return sorted(listed)


def make_plan(
    scenario: api.Scenario,
    grid: Mapping[str, Sequence[Any]] | None = None,
    seeds: int | Iterable[int] | None = 1,
    overrides: api.Overrides = None,
    set: Mapping[str, Any] | None = None,
    backend: str = "simulate",
    congestion: str | None = None,
) -> Plan:
    """Every run of a sweep, in plan order, with its overrides and key.
    Every grid point is validated for `backend` (ScenarioError names the key,
    its position and the value), so what the backend cannot run is refused
    before anything runs."""
    congestion = check_backend(backend, congestion)
    text, source = api.scenario_text(scenario)
    grid = {str(k): list(v) if isinstance(v, (list, tuple)) else [v] for k, v in (grid or {}).items()}
    for k, values in grid.items():
        if not values:
            raise ValueError(f"grid key {k!r} has no values")
        if k in RUN_COLUMNS:
            raise ValueError(f"grid key {k!r} clashes with a dataset column; rename it")
        if k == "run.seed":
            raise ValueError(
                "grid key 'run.seed': a sweep sets each run's seed; give the seeds with seeds (--seeds, --seed-list)"
            )
        twice = next((v for i, v in enumerate(values) if any(_same_value(v, w) for w in values[:i])), None)
        if twice is not None:
            raise ValueError(f"grid key {k!r} lists {twice!r} twice: every grid point would be run (and counted) twice")
    set = dict(set or {})
    fixed = api.override_list(overrides)
    seed_list = _seed_list(seeds)
    # the scenario as each point runs it (with the grid's and `set`'s values)
    # is validated for the backend, not the file alone: a file the emulator
    # refuses may be emulated with a `set` that changes what it refuses
    plan = Plan(text, source, "", grid, seed_list, fixed, set, backend=backend, congestion=congestion)
    points = list(itertools.product(*grid.values())) if grid else [()]
    for i, values in enumerate(points):
        params = dict(zip(grid, values, strict=True))
        sets = list(fixed)
        sets += [f"{k}={toml_value(v)}" for k, v in params.items() if is_path(k)]
        sets += [f"{path}={toml_value(render(tpl, params))}" for path, tpl in set.items()]
        if i == 0:
            first = _core.validate(text, source, sets, backend, advise=True)
            plan.name, plan.warnings = first["name"], first["warnings"]
        else:
            _core.validate(text, source, sets, backend)  # every point, for its backend, before anything runs
        for seed in seed_list:
            plan.runs.append(RunSpec(i, params, seed, tuple(sets), run_key(text, sets, seed, backend, congestion)))
    return plan


# ------------------------------------------------------------------ execution


def run_one(text: str, source: str, seed: int, overrides: Sequence[str]) -> Results:
    """Runs one scenario text; the function a worker executes. In a local
    pool's worker, Ctrl-C (SIGINT) stops the run and nothing else."""
    if _IN_POOL_WORKER:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if _POOL_STOP is not None and _POOL_STOP.is_set():
            # The pool was told to stop before this run began (the SIGINT
            # came while this worker ignored it, between two runs): the
            # event, set before the signal, is read after the handler is in.
            raise KeyboardInterrupt
        return api.simulate(text, source, seed, list(overrides), None)
    finally:
        if _IN_POOL_WORKER:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def emulate_one(text: str, source: str, seed: int, overrides: Sequence[str], congestion: str) -> Results:
    """Emulates one scenario text (`phblab.emulate.emulate`), in real time."""
    from phblab import emulate

    return emulate.emulate(text, source, seed=seed, congestion=congestion, overrides=list(overrides))


class _Inline:
    """A serial 'executor': runs each submission at once, in this process."""

    def submit(self, fn, *args):
        import concurrent.futures as cf

        f: cf.Future = cf.Future()
        try:
            f.set_result(fn(*args))
        except BaseException as e:  # noqa: BLE001 - handed to the caller through the future
            f.set_exception(e)
        return f


def _is_dask(client: Any) -> bool:
    return type(client).__module__.split(".")[0] == "distributed"


def _as_completed(client: Any, futures: list) -> Iterable:
    if _is_dask(client):
        from distributed import as_completed

        return as_completed(futures)
    import concurrent.futures as cf

    return cf.as_completed(futures)


def _submit(client: Any, spec: RunSpec, plan: Plan):
    args = (run_one, plan.text, plan.source, spec.seed, spec.overrides)
    if _is_dask(client):
        return client.submit(*args, key=f"phblab-run-{spec.key}", pure=False)
    return client.submit(*args)


#: True in the worker processes of a `_LocalPool`
_IN_POOL_WORKER = False
#: in those workers: the pool's stop event (`_LocalPool.interrupt`)
_POOL_STOP: Any = None
#: how long an interrupted pool waits for its workers to stop before it kills them (seconds)
STOP_GRACE_S = 0.2

# prctl(2) option: a signal the kernel sends this process when its parent dies.
_PR_SET_PDEATHSIG = 1


def _worker_init(parent_pid: int, stop: Any) -> None:
    """A local pool worker's set-up: it ignores Ctrl-C while idle (the
    parent decides; `run_one` listens while a run is under way, and starts
    none once `stop` is set), and it dies with its parent, so that a killed
    sweep leaves no workers behind: by the kernel's parent-death signal on
    Linux, by a watchdog thread elsewhere."""
    global _IN_POOL_WORKER, _POOL_STOP
    _IN_POOL_WORKER = True
    _POOL_STOP = stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        armed = False
    if not armed:
        import threading

        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(0.5)
    os._exit(1)


class _LocalPool:
    """A local process pool (`concurrent.futures.ProcessPoolExecutor`)
    whose workers die with this process and can be told to stop their runs.

    Fork where there is fork: workers start at once and, unlike spawn and
    forkserver, need not re-import the caller's main script (which would
    rerun a script without an `if __name__ == "__main__"` guard)."""

    def __init__(self, jobs: int) -> None:
        import concurrent.futures as cf
        import multiprocessing

        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self._others = {p.pid for p in multiprocessing.active_children()}
        self.stop = ctx.Event()
        self.executor = cf.ProcessPoolExecutor(
            max_workers=jobs, mp_context=ctx, initializer=_worker_init, initargs=(os.getpid(), self.stop)
        )

    def submit(self, fn, *args):
        """Submits a run. The first submission starts the workers (forks):
        a Ctrl-C then is held until they are started, then raised here,
        since one that lands in the fork's own handlers is lost."""
        with _sigint_held():
            return self.executor.submit(fn, *args)

    def _workers(self) -> list:
        import multiprocessing

        return [p for p in multiprocessing.active_children() if p.pid not in self._others]

    def interrupt(self) -> None:
        """Tells the workers to stop: no worker starts another run (the
        event), and each stops the run it is doing (SIGINT)."""
        self.stop.set()
        for p in self._workers():
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGINT)

    def shutdown(self) -> None:
        """Waits for the workers to finish. After `interrupt`, a worker that
        has not stopped within STOP_GRACE_S is killed (its run's results
        would be thrown away anyway: only this process writes)."""
        if self.stop.is_set():
            self.executor.shutdown(wait=False, cancel_futures=True)
            deadline = time.monotonic() + STOP_GRACE_S
            for p in self._workers():
                p.join(max(0.0, deadline - time.monotonic()))
                if p.is_alive():
                    p.kill()
        self.executor.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def _sigint_held():
    """Holds a SIGINT that arrives in the block and raises KeyboardInterrupt
    at its end (in the main thread; elsewhere signals do not arrive)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        raise KeyboardInterrupt


def _store(runs_dir: Path, spec: RunSpec, results: Results) -> None:
    results.summary["sweep"] = {"point": spec.params, "seed": spec.seed, "key": spec.key}
    results._write(runs_dir / spec.key, owned=True)  # the sweep's lock and manifest own its runs


def _check_run_dir(path: Path) -> str | None:
    """What is wrong with a run's directory in the sweep's `runs/` (None:
    complete and intact; "absent"). The sweep owns `runs/`, so a regular
    file in a run's place is removed (the run is then redone); a symbolic
    link is refused (NotOurs), never followed."""
    st = os.lstat(path) if os.path.lexists(path) else None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise outdir.NotOurs(f"{path} is a symbolic link; phblab writes only into directories of its own")
    if st is not None and stat.S_ISREG(st.st_mode):
        path.unlink()
        return "it was a file, not a run's directory (removed)"
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise outdir.NotOurs(f"{path} is neither a directory nor a file phblab wrote; remove it")
    return outdir.verify(path)


@dataclass(frozen=True)
class Rerun:
    """A run found in the sweep directory that failed verification, and why."""

    spec: RunSpec
    reason: str

    def __str__(self) -> str:
        return f"run {self.spec.key} ({_describe(self.spec)}): {self.reason}; rerun"


def progress_bar(name: str, total: int, done: int) -> Any:
    """The sweep's progress bar: runs done of `total` (`done` of them found
    complete), and the time left at the average pace since it started
    (tqdm's `smoothing=0`): runs end in bursts on parallel workers, and a
    moving average of the gaps between them swings far from the truth."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=done,
        desc=f"sweep {name}",
        unit="run",
        bar_format="{desc}: {n_fmt}/{total_fmt} runs |{bar}| {elapsed}<{remaining}",
        smoothing=0,
        leave=False,
    )


def kept_runs(out: Path, plan_runs: Iterable[str]) -> int:
    """How many run directories `out/runs/` holds that are not runs of this
    plan (`plan_runs`: their keys): runs of other grids or seeds, kept for a
    sweep that asks for them again and left out of this dataset."""
    runs_dir = Path(out) / "runs"
    if not runs_dir.is_dir():
        return 0
    wanted = set(plan_runs)
    return sum(1 for p in runs_dir.iterdir() if p.is_dir() and not p.is_symlink() and p.name not in wanted)


def execute(
    plan: Plan,
    out: Path,
    jobs: int | None = None,
    client: Any = None,
    progress: bool = True,
) -> int:
    """Runs every run of `plan` that `out/runs/` does not hold verified
    into it; returns how many ran, and the runs that were there but failed
    verification (rerun)."""
    runs_dir = outdir.subdirectory(out, "runs")
    todo, seen, reruns = [], set(), []
    for spec in plan.runs:
        if spec.key in seen:
            continue
        seen.add(spec.key)
        problem = _check_run_dir(runs_dir / spec.key)
        if problem is None:
            continue
        todo.append(spec)
        if problem != "absent":
            reruns.append(Rerun(spec, problem))
    total = len(seen)
    bar = progress_bar(plan.name, total, total - len(todo)) if progress and todo else None
    if plan.backend == "emulate":
        try:
            _emulate_all(plan, todo, runs_dir, bar)
        finally:
            if bar is not None:
                bar.close()
        return len(todo), reruns
    own = None
    if client is None:
        jobs = jobs or os.cpu_count() or 1
        client = _Inline() if jobs == 1 or len(todo) <= 1 else _LocalPool(min(jobs, len(todo)))
        own = client if isinstance(client, _LocalPool) else None
    try:
        futures = {}
        for spec in todo:
            futures[_submit(client, spec, plan)] = spec
        failures = []
        for fut in _as_completed(client, list(futures)):
            spec = futures[fut]
            try:
                results = fut.result()
            except Exception as e:  # noqa: BLE001 - collected and reported together
                failures.append((spec, e))
                continue
            _store(runs_dir, spec, results)
            if bar is not None:
                bar.update(1)
        if failures:
            _raise_failures(failures, total - len(failures), runs_dir)
    except BaseException:
        for fut in futures if "futures" in locals() else ():
            fut.cancel()
        if own is not None:
            own.interrupt()
        raise
    finally:
        if bar is not None:
            bar.close()
        if own is not None:
            own.shutdown()
    return len(todo), reruns


def _raise_failures(failures: list, done: int, runs_dir: Path, cause: str = "") -> NoReturn:
    """Raises the SweepError that reports the first of the failed runs
    `failures` ((spec, exception) pairs), how many more failed, and that the
    `done` completed runs are kept."""
    spec, e = failures[0]
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    raise SweepError(
        f"run {spec.key} ({_describe(spec)}) failed: {cause}{e}{more}; "
        f"the {done} completed runs are kept in {runs_dir}, rerun to resume"
    ) from e


def _emulate_all(plan: Plan, todo: Sequence[RunSpec], runs_dir: Path, bar: Any) -> None:
    """Emulates the runs `todo`, one after the other, in this process. An
    emulation refused for its input or the machine (missing privileges, a
    feature the emulator cannot honour) stops at once (EmulateError): every
    other run would be refused too. A Ctrl-C stops the run under way and
    the sweep (KeyboardInterrupt)."""
    from phblab.emulate import EmulateError

    failures = []
    for spec in todo:
        try:
            results = emulate_one(plan.text, plan.source, spec.seed, spec.overrides, plan.congestion)
        except EmulateError as e:
            if e.bad_input:
                raise
            failures.append((spec, e))
            continue
        _store(runs_dir, spec, results)
        if bar is not None:
            bar.update(1)
    if failures:
        _raise_failures(failures, len({s.key for s in plan.runs}) - len(failures), runs_dir, "the emulation failed: ")


def _describe(spec: RunSpec) -> str:
    return ", ".join([f"{k}={v}" for k, v in spec.params.items()] + [f"seed {spec.seed}"])


# -------------------------------------------------------------------- dataset


def _param_frame(plan: Plan, spec: RunSpec, n: int) -> dict:
    cols = {k: [v] * n for k, v in spec.params.items()}
    cols["seed"] = [spec.seed] * n
    cols["run"] = [spec.key] * n
    return cols


def _with_params(plan: Plan, spec: RunSpec, table: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    front = pd.DataFrame(_param_frame(plan, spec, len(table)), index=table.index)
    return pd.concat([front, table], axis=1)


def build_dataset(plan: Plan, out: Path) -> dict[str, pd.DataFrame]:
    """The combined tables of a complete sweep, rebuilt from `out/runs/`."""
    import pandas as pd

    runs_dir = out / "runs"
    tables: dict[str, list[pd.DataFrame]] = {t: [] for t in DATASET_TABLES}
    run_rows = []
    for spec in plan.runs:
        d = runs_dir / spec.key
        problem = outdir.verify(d)
        if problem is not None:
            raise SweepError(f"run {spec.key} ({_describe(spec)}) in {runs_dir}: {problem}")
        for t in DATASET_TABLES:
            path = d / f"{t}.parquet"
            if path.is_file():  # results of older cores lack the newer tables
                tables[t].append(_with_params(plan, spec, pd.read_parquet(path)))
        s = read_json_object(d / "summary.json")
        row = {k: v for k, v in spec.params.items()}
        row.update(
            seed=spec.seed,
            run=spec.key,
            scenario=s.get("scenario"),
            duration_s=s.get("duration_s"),
            warmup_s=s.get("warmup_s"),
            events=s.get("events"),
            wall_time_s=s.get("wall_time_s"),
            phblab_version=s.get("phblab_version"),
            overrides=" ".join(spec.overrides),
            backend=s.get("backend", "simulate"),
        )
        if row["backend"] == "emulate":
            row["kernel"] = s.get("kernel")  # the kernel's release (None before runs recorded it)
        run_rows.append(row)
    data = {t: pd.concat(frames, ignore_index=True) if frames else pd.DataFrame() for t, frames in tables.items()}
    data["runs"] = pd.DataFrame(run_rows)
    return data


def _json_default(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return str(v)


class Sweep:
    """A complete sweep's dataset (what `phblab.sweep` returns).

    Attributes:
        dir: the sweep directory.
        grid: {key: values}; seeds: the seeds.
        backend: "simulate" or "emulate"; congestion: an emulated sweep's
            congestion control (None for a simulated one).
        classes, flows, delay_ratios, counters, conditioners: the combined tables, one row per run ×
            row, with the grid keys, `seed` and `run` (the run's key) in front.
        runs: one row per run (key, events, wall time, overrides).
        ran: how many runs this call executed (the rest were complete).
        reruns: the runs found in the directory that failed verification
            against their manifest and were run again (`Rerun`: spec, reason).
        warnings: what the scenario will not measure as it seems to, at
            the first grid point (as `phblab validate` prints them).
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        ran: int = 0,
        reruns: Sequence[Rerun] = (),
        warnings: Sequence[str] = (),
    ) -> None:
        self.dir = Path(directory)
        if (self.dir / outdir.MANIFEST).is_file():
            problem = outdir.verify(self.dir)
            if problem is not None:
                raise SweepError(f"{self.dir}: {problem}; run the sweep again")
        description = read_json_object(self.dir / "sweep.json")
        shape = [("grid", dict, "a table"), ("seeds", list, "a list"), ("name", str, "a name")]
        for key, kind, what in shape:
            if not isinstance(description.get(key), kind):
                raise SweepError(f"{self.dir / 'sweep.json'}: `{key}` is missing or not {what}; run the sweep again")
        self.description = description
        self.grid = description["grid"]
        self.seeds = description["seeds"]
        self.name = description["name"]
        self.backend = description.get("backend", "simulate")
        self.congestion = description.get("congestion_control")
        self.ran = ran
        self.reruns = list(reruns)
        self.warnings = list(warnings)
        import pandas as pd

        self.classes = pd.read_parquet(self.dir / "classes.parquet")
        self.flows = pd.read_parquet(self.dir / "flows.parquet")
        ratios = self.dir / "delay_ratios.parquet"
        self.delay_ratios = pd.read_parquet(ratios) if ratios.is_file() else pd.DataFrame()
        counters = self.dir / "counters.parquet"
        self.counters = pd.read_parquet(counters) if counters.is_file() else pd.DataFrame()
        conditioners = self.dir / "conditioners.parquet"
        self.conditioners = pd.read_parquet(conditioners) if conditioners.is_file() else pd.DataFrame()
        self.runs = pd.read_parquet(self.dir / "runs.parquet")

    @property
    def keys(self) -> list[str]:
        return list(self.grid)

    def summary(self, scope: str | None = None) -> pd.DataFrame:
        """Mean and 95% CI across seeds of every `classes` metric, per grid
        point × scope × class (long form; `phblab.stats.summarize`)."""
        from phblab import stats

        df = self.classes if scope is None else self.classes[self.classes.scope == scope]
        return stats.summarize(df, by=[*self.keys, "scope", "class"])

    def group_summary(self) -> pd.DataFrame:
        """The same for per-run totals of each traffic group (`flows`)."""
        from phblab import stats

        groups = stats.flow_groups(self.flows, by=[*self.keys, "seed", "run"])
        return stats.summarize(groups, by=[*self.keys, "group", "class", "transport"])

    def run_dir(self, **params: Any) -> Path:
        """The results directory of the first run matching `params` (grid
        keys and optionally `seed`), e.g. `sw.run_dir(max_p=0.1, seed=2)`."""
        rows = self.runs
        for k, v in params.items():
            rows = rows[rows[k] == v]
        if rows.empty:
            raise KeyError(f"no run with {params}")
        return self.dir / "runs" / rows.iloc[0]["run"]

    def __repr__(self) -> str:
        emulated = f" emulated ({self.congestion})" if self.backend == "emulate" else ""
        return f"<Sweep {self.name!r} {len(self.runs)} runs{emulated} in {self.dir}>"


def write_dataset(plan: Plan, out: Path) -> None:
    """Writes the combined tables, their statistics, `sweep.json` and
    `scenario.toml` into `out` (replacing the previous dataset there, and
    removing the figures `phblab plot` drew from another one)."""
    from phblab import stats

    data = build_dataset(plan, out)
    data["summary"] = stats.summarize(data["classes"], by=[*plan.keys, "scope", "class"])
    groups = stats.flow_groups(data["flows"], by=[*plan.keys, "seed", "run"])
    data["group_summary"] = stats.summarize(groups, by=[*plan.keys, "group", "class", "transport"])
    description = {
        "name": plan.name,
        "source": plan.source,
        "grid": plan.grid,
        "seeds": plan.seeds,
        "overrides": plan.overrides,
        "set": plan.set,
        "phblab_version": _core.version(),
        "backend": plan.backend,
        "runs": [r.key for r in plan.runs],
    }
    if plan.congestion is not None:
        description["congestion_control"] = plan.congestion
    with outdir.writing(out, "sweep") as staging:
        for name, df in data.items():
            df.to_parquet(staging / f"{name}.parquet", index=False)
        (staging / "sweep.json").write_text(json.dumps(description, indent=2, default=_json_default) + "\n")
        (staging / "scenario.toml").write_text(plan.text)
    outdir.drop_stale_plots(out)


def default_out(name: str, backend: str = "simulate") -> Path:
    return Path("results") / (f"{name}-sweep" if backend == "simulate" else f"{name}-{backend}-sweep")


def _backend_of(out: Path) -> tuple[str, str] | None:
    """(backend, where it is recorded) of the sweep in `out`: its
    `sweep.json`, else (a first sweep that was interrupted) the summary of a
    run in `out/runs/`; None if `out` holds neither."""
    for path in [out / "sweep.json", *sorted((out / "runs").glob("*/summary.json"))]:
        try:
            doc = read_json_object(path)
        except (OSError, ValueError):
            continue
        return doc.get("backend", "simulate"), str(path)
    return None


def check_same_backend(out: Path, backend: str) -> None:
    """ValueError if `out` holds a sweep (or runs) of another backend: a
    directory never mixes simulated and emulated results."""
    found = _backend_of(out)
    if found is not None and found[0] != backend:
        what = {"simulate": "simulated", "emulate": "emulated"}
        raise ValueError(
            f"{out} holds {what.get(found[0], found[0])} results ({found[1]}); "
            f"{what.get(backend, backend)} results go to another directory: choose another output (--out)"
        )


def sweep(
    scenario: api.Scenario,
    grid: Mapping[str, Sequence[Any]] | None = None,
    seeds: int | Iterable[int] | None = 1,
    jobs: int | None = None,
    out: str | os.PathLike | None = None,
    client: Any = None,
    overrides: api.Overrides = None,
    set: Mapping[str, Any] | None = None,
    progress: bool = False,
    backend: str = "simulate",
    congestion: str | None = None,
) -> Sweep:
    """Runs `scenario` over the cartesian product of `grid`, `seeds` seeds
    per point, and returns the combined dataset.

    Args:
        scenario: a scenario file or dict (a catalog entry's `[reproduce]`
            section is ignored).
        grid: {key: [values]}; a key with a dot or bracket is a scenario path
            (an override), a bare name a parameter for `set` templates.
        seeds: N for seeds 1..N, or a list of seeds.
        jobs: local worker processes (default: one per core; 1 runs in
            this process). Ignored when `client` is given.
        out: the sweep directory (default `results/<scenario name>-sweep`);
            complete runs already there are reused.
        client: an Executor-like object (`concurrent.futures.Executor` or a
            Dask `distributed.Client`) to run on instead of a local pool.
        overrides: fixed overrides applied to every run (before the grid's).
        set: {path: template}: overrides computed from grid parameters
            (`phblab.sweep.render`).
        progress: show a progress bar (runs done / total, ETA).
        backend: "simulate" (phblab's simulator) or "emulate" (real Linux
            TCP through `phb-emu`, one run at a time in this process; needs
            root, see docs/emulation.md).
        congestion: the emulated senders' congestion control, "reno"
            (default), "cubic" or "bbr"; only with backend="emulate".

    Raises:
        ScenarioError: the scenario or a fixed override is invalid.
        ValueError: a bad grid or backend option, or `out` holds results of
            the other backend.
        EmulateError: the emulator is missing, or refused to run (missing
            privileges, a feature it cannot emulate; `bad_input`).
        SweepError: a run failed (completed runs are kept).
    """
    check_backend(backend, congestion)
    if backend == "emulate" and (client is not None or (jobs or 1) > 1):
        what = "client (--dask)" if client is not None else f"jobs={jobs} (--jobs)"
        raise ValueError(
            f"the emulate backend runs one point at a time in this process (each in real time, on the whole "
            f"machine): drop {what}"
        )
    plan = make_plan(scenario, grid, seeds, overrides, set, backend, congestion)
    out = Path(out) if out is not None else default_out(plan.name, backend)
    outdir.claim(out, "sweep")
    with outdir.lock(out, "sweep"):
        check_same_backend(out, backend)
        ran, reruns = execute(plan, out, jobs=jobs, client=client, progress=progress)
        write_dataset(plan, out)
    return Sweep(out, ran=ran, reruns=reruns, warnings=plan.warnings)


def open_sweep(directory: str | os.PathLike) -> Sweep:
    """A sweep directory written earlier."""
    return Sweep(directory)


class _CallableModule(types.ModuleType):
    """This module, callable as `sweep`. Importing the submodule
    `phblab.sweep` makes the package attribute `phblab.sweep` this module
    (Python's import system sets it), and `phblab` imports its names lazily,
    so `phblab.sweep(...)` calls the module, which calls `sweep`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Sweep:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
