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
core, and stored as a results directory `OUT/runs/<key>/` (written
atomically by `Results.write`: a temporary sibling renamed into place). A
rerun of the sweep skips every key already complete, so a killed sweep
resumes where it stopped and never reads half-written results.

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
"""

from __future__ import annotations

import ast
import concurrent.futures as cf
import hashlib
import itertools
import json
import math
import multiprocessing
import operator
import os
import shutil
import time
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from phblab import _core, api
from phblab.results import Results
from phblab.scenario import toml_value

#: columns the sweep adds to every table besides the grid keys
RUN_COLUMNS = ["seed", "run"]
DATASET_TABLES = ["classes", "flows", "delay_ratios"]


class SweepError(RuntimeError):
    """A run of the sweep failed; completed runs are kept for a rerun."""


# ---------------------------------------------------------------- grid values


def parse_value(text: str) -> Any:
    """A value from the command line: a TOML value (`0.1`, `true`, `"x"`,
    `[1, 2]`), otherwise the string itself (`10ms`), as for `--set`."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


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
    return key, [parse_value(v) for v in _split_top(values) if v != ""]


def is_path(key: str) -> bool:
    """A grid key that names a scenario path (applied as an override)."""
    return "." in key or "[" in key


# ------------------------------------------------------------------ templates

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCS = {"min": min, "max": max, "round": round, "abs": abs, "int": int, "float": float}


def evaluate(expr: str, params: Mapping[str, Any]) -> Any:
    """Evaluates a small arithmetic expression over `params`: numbers,
    names, + - * / // % **, parentheses and min, max, round, abs, int, float."""

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in params:
                raise ValueError(f"unknown parameter {node.id!r} in {{{expr}}}; known: {', '.join(params)}")
            return params[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
            return _FUNCS[node.func.id](*[ev(a) for a in node.args])
        raise ValueError(f"unsupported expression {{{expr}}}")

    return ev(ast.parse(expr.strip(), mode="eval"))


def _fmt_number(v: Any) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    if isinstance(v, float):
        return repr(round(v, 12))
    return str(v)


def render(template: Any, params: Mapping[str, Any]) -> Any:
    """A `set` template filled in with `params`: `"{R_ms/2 - 1}ms"` gives
    `"9ms"` for R_ms = 20. A template that is one `{expression}` keeps the
    expression's type (`"{p_pct/100}"` gives the float 0.005); a value that is
    not a string is used as it is."""
    if not isinstance(template, str) or "{" not in template:
        return template
    stripped = template.strip()
    if stripped.startswith("{") and stripped.endswith("}") and stripped.count("{") == 1:
        v = evaluate(stripped[1:-1], params)
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
        out.append(_fmt_number(evaluate(template[j + 1 : k], params)))
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


def run_key(text: str, overrides: Sequence[str], seed: int) -> str:
    """The key of one run: a hash of scenario text, overrides, seed, phblab
    version and core build."""
    doc = {
        "scenario": text.rstrip() + "\n",
        "overrides": list(overrides),
        "seed": int(seed),
        "version": _core.version(),
        "core": core_build(),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:20]


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

    @property
    def keys(self) -> list[str]:
        """The grid keys (dataset columns)."""
        return list(self.grid)


def _seed_list(seeds: int | Iterable[int] | None) -> list[int]:
    if seeds is None:
        return [1]
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError("seeds must be at least 1")
        return list(range(1, seeds + 1))
    out = sorted({int(s) for s in seeds})
    if not out:
        raise ValueError("no seeds")
    return out


def make_plan(
    scenario: api.Scenario,
    grid: Mapping[str, Sequence[Any]] | None = None,
    seeds: int | Iterable[int] | None = 1,
    overrides: api.Overrides = None,
    set: Mapping[str, Any] | None = None,
) -> Plan:
    """Every run of a sweep, in plan order, with its overrides and key.
    Every grid point is validated (ScenarioError names the key and value)."""
    text, source = api.scenario_text(scenario)
    grid = {str(k): list(v) if isinstance(v, (list, tuple)) else [v] for k, v in (grid or {}).items()}
    for k, values in grid.items():
        if not values:
            raise ValueError(f"grid key {k!r} has no values")
        if k in RUN_COLUMNS:
            raise ValueError(f"grid key {k!r} clashes with a dataset column; rename it")
    set = dict(set or {})
    fixed = api.override_list(overrides)
    seed_list = _seed_list(seeds)
    name = _core.validate(text, source, fixed)["name"]
    plan = Plan(text, source, name, grid, seed_list, fixed, set)
    points = list(itertools.product(*grid.values())) if grid else [()]
    for i, values in enumerate(points):
        params = dict(zip(grid, values, strict=True))
        sets = list(fixed)
        sets += [f"{k}={toml_value(v)}" for k, v in params.items() if is_path(k)]
        sets += [f"{path}={toml_value(render(tpl, params))}" for path, tpl in set.items()]
        if i > 0 or sets != fixed:
            _core.validate(text, source, sets)  # every point, before anything runs
        for seed in seed_list:
            plan.runs.append(RunSpec(i, params, seed, tuple(sets), run_key(text, sets, seed)))
    return plan


# ------------------------------------------------------------------ execution


def run_one(text: str, source: str, seed: int, overrides: Sequence[str]) -> Results:
    """Runs one scenario text; the function a worker executes."""
    start = time.perf_counter()
    raw = _core.run(text, source, seed, list(overrides), None)
    wall = time.perf_counter() - start
    return Results.from_core(raw, wall_time_s=wall, overrides=list(overrides), version=_core.version())


class _Inline:
    """A serial 'executor': runs each submission at once, in this process."""

    def submit(self, fn, *args):
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
    return cf.as_completed(futures)


def _submit(client: Any, spec: RunSpec, plan: Plan):
    args = (run_one, plan.text, plan.source, spec.seed, spec.overrides)
    if _is_dask(client):
        return client.submit(*args, key=f"phblab-run-{spec.key}", pure=False)
    return client.submit(*args)


def _pool(jobs: int) -> cf.Executor:
    """A local process pool. Fork where there is fork: workers start at once
    and, unlike spawn and forkserver, need not re-import the caller's main
    script (which would rerun a script without an `if __name__ ==
    "__main__"` guard)."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    return cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)


def _clean_stale(runs_dir: Path) -> None:
    """Removes temporary directories a killed sweep left behind (a run being
    written, `<key>.tmp-<pid>`, or replaced, `<key>.old-<pid>`)."""
    if not runs_dir.is_dir():
        return
    for p in runs_dir.iterdir():
        if ".tmp-" in p.name or ".old-" in p.name:
            shutil.rmtree(p, ignore_errors=True)


def _complete(run_dir: Path) -> bool:
    return (run_dir / "summary.json").is_file()


def _store(runs_dir: Path, spec: RunSpec, results: Results) -> None:
    results.summary["sweep"] = {"point": spec.params, "seed": spec.seed, "key": spec.key}
    target = runs_dir / spec.key
    if target.exists() and not _complete(target):
        shutil.rmtree(target)  # not ours to keep: an incomplete run directory
    results.write(target)


def execute(
    plan: Plan,
    out: Path,
    jobs: int | None = None,
    client: Any = None,
    progress: bool = True,
) -> int:
    """Runs every incomplete run of `plan` into `out/runs/`; returns how many ran."""
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    _clean_stale(runs_dir)
    todo, seen = [], set()
    for spec in plan.runs:
        if spec.key not in seen and not _complete(runs_dir / spec.key):
            todo.append(spec)
        seen.add(spec.key)
    total = len(seen)
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(
            total=total,
            initial=total - len(todo),
            desc=f"sweep {plan.name}",
            unit="run",
            bar_format="{desc}: {n_fmt}/{total_fmt} runs |{bar}| {elapsed}<{remaining}",
            leave=False,
        )
    own = None
    if client is None:
        jobs = jobs or os.cpu_count() or 1
        client = _Inline() if jobs == 1 or len(todo) <= 1 else _pool(min(jobs, len(todo)))
        own = client if isinstance(client, cf.Executor) else None
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
            spec, e = failures[0]
            more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
            raise SweepError(
                f"run {spec.key} ({_describe(spec)}) failed: {e}{more}; "
                f"the {total - len(failures)} completed runs are kept in {runs_dir}, rerun to resume"
            ) from e
    except BaseException:
        for fut in futures if "futures" in locals() else ():
            fut.cancel()
        raise
    finally:
        if bar is not None:
            bar.close()
        if own is not None:
            own.shutdown(wait=True, cancel_futures=True)
    return len(todo)


def _describe(spec: RunSpec) -> str:
    return ", ".join([f"{k}={v}" for k, v in spec.params.items()] + [f"seed {spec.seed}"])


# -------------------------------------------------------------------- dataset


def _param_frame(plan: Plan, spec: RunSpec, n: int) -> dict:
    cols = {k: [v] * n for k, v in spec.params.items()}
    cols["seed"] = [spec.seed] * n
    cols["run"] = [spec.key] * n
    return cols


def _with_params(plan: Plan, spec: RunSpec, table: pd.DataFrame) -> pd.DataFrame:
    front = pd.DataFrame(_param_frame(plan, spec, len(table)), index=table.index)
    return pd.concat([front, table], axis=1)


def build_dataset(plan: Plan, out: Path) -> dict[str, pd.DataFrame]:
    """The combined tables of a complete sweep, rebuilt from `out/runs/`."""
    runs_dir = out / "runs"
    tables: dict[str, list[pd.DataFrame]] = {t: [] for t in DATASET_TABLES}
    run_rows = []
    for spec in plan.runs:
        d = runs_dir / spec.key
        if not _complete(d):
            raise SweepError(f"run {spec.key} ({_describe(spec)}) is not complete in {runs_dir}")
        for t in DATASET_TABLES:
            path = d / f"{t}.parquet"
            if path.is_file():  # results of older cores lack the newer tables
                tables[t].append(_with_params(plan, spec, pd.read_parquet(path)))
        s = json.loads((d / "summary.json").read_text())
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
        )
        run_rows.append(row)
    data = {t: pd.concat(frames, ignore_index=True) if frames else pd.DataFrame() for t, frames in tables.items()}
    data["runs"] = pd.DataFrame(run_rows)
    return data


def _write_parquet(df: pd.DataFrame, path: Path) -> None:
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def _write_text(text: str, path: Path) -> None:
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _json_default(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return str(v)


class Sweep:
    """A complete sweep's dataset (what `phblab.sweep` returns).

    Attributes:
        dir: the sweep directory.
        grid: {key: values}; seeds: the seeds.
        classes, flows, delay_ratios: the combined tables, one row per run ×
            row, with the grid keys, `seed` and `run` (the run's key) in front.
        runs: one row per run (key, events, wall time, overrides).
        ran: how many runs this call executed (the rest were complete).
    """

    def __init__(self, directory: str | os.PathLike, ran: int = 0) -> None:
        self.dir = Path(directory)
        manifest = json.loads((self.dir / "sweep.json").read_text())
        self.manifest = manifest
        self.grid = manifest["grid"]
        self.seeds = manifest["seeds"]
        self.name = manifest["name"]
        self.ran = ran
        self.classes = pd.read_parquet(self.dir / "classes.parquet")
        self.flows = pd.read_parquet(self.dir / "flows.parquet")
        ratios = self.dir / "delay_ratios.parquet"
        self.delay_ratios = pd.read_parquet(ratios) if ratios.is_file() else pd.DataFrame()
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
        return f"<Sweep {self.name!r} {len(self.runs)} runs in {self.dir}>"


def write_dataset(plan: Plan, out: Path) -> None:
    from phblab import stats

    data = build_dataset(plan, out)
    for name, df in data.items():
        _write_parquet(df, out / f"{name}.parquet")
    _write_parquet(stats.summarize(data["classes"], by=[*plan.keys, "scope", "class"]), out / "summary.parquet")
    groups = stats.flow_groups(data["flows"], by=[*plan.keys, "seed", "run"])
    _write_parquet(
        stats.summarize(groups, by=[*plan.keys, "group", "class", "transport"]), out / "group_summary.parquet"
    )
    manifest = {
        "name": plan.name,
        "source": plan.source,
        "grid": plan.grid,
        "seeds": plan.seeds,
        "overrides": plan.overrides,
        "set": plan.set,
        "phblab_version": _core.version(),
        "runs": [r.key for r in plan.runs],
    }
    _write_text(json.dumps(manifest, indent=2, default=_json_default) + "\n", out / "sweep.json")
    _write_text(plan.text, out / "scenario.toml")


def default_out(name: str) -> Path:
    return Path("results") / f"{name}-sweep"


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

    Raises:
        ScenarioError: the scenario or a fixed override is invalid.
        SweepError: a run failed (completed runs are kept).
    """
    plan = make_plan(scenario, grid, seeds, overrides, set)
    out = Path(out) if out is not None else default_out(plan.name)
    ran = execute(plan, out, jobs=jobs, client=client, progress=progress)
    write_dataset(plan, out)
    return Sweep(out, ran=ran)


def open_sweep(directory: str | os.PathLike) -> Sweep:
    """A sweep directory written earlier."""
    return Sweep(directory)
