"""The reproduction catalog: scenarios that carry a `[reproduce]` section.

A catalog entry is a scenario file `scenarios/<paper>/<id>.toml` whose
`[reproduce]` section says which sweep to run, which metrics to compute from
its results, and the values to compare them with (a paper's published
numbers, or measured regression values), each with a tolerance. Its id is
`<paper>/<id>` (the path under the catalog root without `.toml`).
`docs/workflow.md` describes the section; in short:

    [reproduce]
    title = "..."; paper = "..."; assumptions = ["...", ...]
    [reproduce.sweep]          grid, set, seeds, overrides (phblab.sweep)
    [reproduce.metrics.NAME]   table/column/where/agg/scale/unit, or ratio,
                               or fit = "power_law"
    [[reproduce.expect]]       metric, source, ref, tolerance, points
    [reproduce.plot]           x, by, metrics, logx, logy

    entry = load_entry("scenarios/vukadinovic-2004/appendix-b.toml")
    outcome = reproduce(entry, out="results/reproduce")
    print(format_outcome(outcome)); outcome.passed
"""

from __future__ import annotations

import json
import math
import os
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from phblab import _core, stats
from phblab.entry import split_reproduce

DEFAULT_RESULTS = Path("results") / "reproduce"
AGGREGATES = {"sum", "mean", "min", "max", "count"}
SOURCES = {"paper", "measured"}


class CatalogError(ValueError):
    """A catalog entry's [reproduce] section is malformed."""


def default_catalog() -> Path:
    """The catalog root: $PHBLAB_CATALOG, else ./scenarios if it exists, else
    the repository's scenarios/ beside the installed (editable) package."""
    env = os.environ.get("PHBLAB_CATALOG")
    if env:
        return Path(env)
    here = Path("scenarios")
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[2] / "scenarios"


# -------------------------------------------------------------------- schema


@dataclass
class Metric:
    name: str
    table: str = "flows"
    column: str | None = None
    where: dict = field(default_factory=dict)
    agg: str = "sum"
    scale: float = 1.0
    unit: str = ""
    label: str = ""
    ratio: tuple | None = None
    fit: str | None = None
    x: tuple = ()
    y: str | None = None
    param: str | None = None

    @property
    def per_point(self) -> bool:
        return self.fit is None


@dataclass
class Expectation:
    metric: str
    source: str
    ref: str
    tolerance: Any
    points: list  # of dicts: grid params + value (+ tolerance)


@dataclass
class Entry:
    id: str
    path: Path
    title: str
    paper: str
    assumptions: list
    notes: str
    sweep: dict
    metrics: dict
    expect: list
    plot: dict
    text: str

    @property
    def grid(self) -> dict:
        return self.sweep.get("grid", {})


def _need(cond: bool, where: str, msg: str) -> None:
    if not cond:
        raise CatalogError(f"{where}: {msg}")


def parse_tolerance(tol: Any, where: str) -> tuple[str, float]:
    """("rel", 0.15) for "15%", ("abs", 0.5) for 0.5."""
    if isinstance(tol, str) and tol.strip().endswith("%"):
        try:
            return "rel", float(tol.strip()[:-1]) / 100
        except ValueError:
            pass
    elif isinstance(tol, (int, float)) and not isinstance(tol, bool):
        return "abs", float(tol)
    raise CatalogError(f"{where}: tolerance {tol!r}: expected a percentage string (\"15%\", relative) or a number (absolute, in the metric's unit)")


def _check_keys(d: Mapping, allowed: set, where: str) -> None:
    extra = set(d) - allowed
    _need(not extra, where, f"unknown key{'s' if len(extra) > 1 else ''} {', '.join(sorted(extra))}; expected {', '.join(sorted(allowed))}")


def parse_section(entry_id: str, path: Path, section: Mapping[str, Any], text: str) -> Entry:
    w = f"{path}: [reproduce]"
    _check_keys(section, {"title", "paper", "assumptions", "notes", "sweep", "metrics", "expect", "plot"}, w)
    sweep = dict(section.get("sweep", {}))
    _check_keys(sweep, {"grid", "set", "seeds", "overrides"}, f"{w}.sweep")
    grid = sweep.get("grid", {})
    _need(isinstance(grid, dict), f"{w}.sweep.grid", "must be a table {key = [values]}")
    sweep["grid"] = {k: (v if isinstance(v, list) else [v]) for k, v in grid.items()}
    seeds = sweep.get("seeds", 1)
    _need(isinstance(seeds, (int, list)) and not isinstance(seeds, bool), f"{w}.sweep.seeds", "an integer N (seeds 1..N) or a list of seeds")
    metrics = {}
    for name, m in section.get("metrics", {}).items():
        mw = f"{w}.metrics.{name}"
        _need(isinstance(m, dict), mw, "must be a table")
        _check_keys(m, {"table", "column", "where", "agg", "scale", "unit", "label", "ratio", "fit", "x", "y", "param"}, mw)
        metric = Metric(
            name=name,
            table=m.get("table", "flows"),
            column=m.get("column"),
            where=dict(m.get("where", {})),
            agg=m.get("agg", "sum"),
            scale=float(m.get("scale", 1.0)),
            unit=m.get("unit", ""),
            label=m.get("label", ""),
            ratio=tuple(m["ratio"]) if "ratio" in m else None,
            fit=m.get("fit"),
            x=tuple(m.get("x", ())),
            y=m.get("y"),
            param=m.get("param"),
        )
        if metric.fit is not None:
            _need(metric.fit == "power_law", mw, f"fit {metric.fit!r}: only \"power_law\" (y = c / (x1^a · x2^b)) is known")
            _need(len(metric.x) == 2 and all(x in sweep["grid"] for x in metric.x), mw, "x must name two grid keys")
            _need(metric.param in ("a", "b", "c"), mw, "param must be \"a\", \"b\" or \"c\"")
            _need(metric.y is not None, mw, "y must name a per-point metric")
        elif metric.ratio is not None:
            _need(len(metric.ratio) == 2, mw, "ratio = [numerator metric, denominator metric]")
        else:
            _need(metric.table in ("classes", "flows"), mw, f"table {metric.table!r}: \"classes\" or \"flows\"")
            _need(isinstance(metric.column, str), mw, "column (a numeric column of the table) is required")
            _need(metric.agg in AGGREGATES, mw, f"agg {metric.agg!r}: one of {', '.join(sorted(AGGREGATES))}")
        metrics[name] = metric
    for metric in metrics.values():
        for dep in (metric.ratio or ()) + ((metric.y,) if metric.y else ()):
            _need(dep in metrics and metrics[dep].per_point, f"{w}.metrics.{metric.name}", f"{dep!r} is not a per-point metric of this entry")
    expect = []
    for i, e in enumerate(section.get("expect", [])):
        ew = f"{w}.expect[{i}]"
        _check_keys(e, {"metric", "source", "ref", "tolerance", "points"}, ew)
        _need(e.get("metric") in metrics, ew, f"metric {e.get('metric')!r} is not defined in [reproduce.metrics]")
        source = e.get("source", "paper")
        _need(source in SOURCES, ew, f"source {source!r}: \"paper\" or \"measured\"")
        _need("tolerance" in e, ew, "tolerance is required")
        parse_tolerance(e["tolerance"], ew)
        points = e.get("points", [])
        _need(isinstance(points, list) and points, ew, "points = [{<grid key> = ..., value = ...}, ...] is required")
        for j, p in enumerate(points):
            pw = f"{ew}.points[{j}]"
            _need("value" in p, pw, "value is required")
            if "tolerance" in p:
                parse_tolerance(p["tolerance"], pw)
            coords = {k: v for k, v in p.items() if k not in ("value", "tolerance")}
            if metrics[e["metric"]].per_point:
                _need(set(coords) == set(sweep["grid"]), pw, f"give every grid key ({', '.join(sweep['grid'])}) and nothing else")
                for k, v in coords.items():
                    _need(any(_same(v, g) for g in sweep["grid"][k]), pw, f"{k} = {v!r} is not in the grid")
            else:
                _need(not coords, pw, "a fitted metric has one value and no grid coordinates")
        expect.append(Expectation(e["metric"], source, e.get("ref", ""), e["tolerance"], points))
    plot = dict(section.get("plot", {}))
    _check_keys(plot, {"x", "by", "metrics", "logx", "logy"}, f"{w}.plot")
    assumptions = section.get("assumptions", [])
    _need(isinstance(assumptions, list) and all(isinstance(a, str) for a in assumptions), f"{w}.assumptions", "a list of strings")
    return Entry(
        id=entry_id,
        path=path,
        title=section.get("title", entry_id),
        paper=section.get("paper", ""),
        assumptions=list(assumptions),
        notes=section.get("notes", ""),
        sweep=sweep,
        metrics=metrics,
        expect=expect,
        plot=plot,
        text=text,
    )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def load_entry(path: str | os.PathLike, root: str | os.PathLike | None = None) -> Entry:
    """The catalog entry in scenario file `path` (id relative to `root`)."""
    path = Path(path)
    raw = path.read_text(encoding="utf-8")
    try:
        text, section = split_reproduce(raw)
    except ValueError as e:
        raise CatalogError(f"{path}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise CatalogError(f"{path}: {e}") from None
    if section is None:
        raise CatalogError(f"{path}: no [reproduce] section; not a catalog entry")
    try:
        entry_id = path.resolve().relative_to(Path(root).resolve()).with_suffix("").as_posix() if root else path.stem
    except ValueError:
        entry_id = path.stem
    return parse_section(entry_id, path, section, text)


def load_catalog(root: str | os.PathLike | None = None) -> list[Entry]:
    """Every entry under `root` (default `default_catalog()`), by id."""
    root = Path(root) if root is not None else default_catalog()
    entries = []
    for path in sorted(root.rglob("*.toml")):
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
            continue
        if "reproduce" in doc:
            entries.append(load_entry(path, root))
    return entries


def find_entries(ids: Sequence[str], root: str | os.PathLike | None = None) -> list[Entry]:
    """Entries by id (`paper/id`, or just `id` when unique) or by file path."""
    catalog = load_catalog(root)
    found = []
    for want in ids:
        if want.endswith(".toml") and Path(want).is_file():
            found.append(load_entry(want, root if root is not None else default_catalog()))
            continue
        matches = [e for e in catalog if e.id == want] or [e for e in catalog if e.id.split("/")[-1] == want]
        if not matches:
            known = ", ".join(e.id for e in catalog) or "none"
            raise CatalogError(f"no catalog entry {want!r}; entries: {known}")
        if len(matches) > 1:
            raise CatalogError(f"{want!r} is ambiguous: {', '.join(e.id for e in matches)}")
        found.append(matches[0])
    return found


# ------------------------------------------------------------------- metrics


def _filter(df: pd.DataFrame, where: Mapping[str, Any], what: str) -> pd.DataFrame:
    for k, v in where.items():
        if k not in df.columns:
            raise CatalogError(f"metric filter: no column {k!r} in {what}")
        df = df[df[k].isin(v) if isinstance(v, list) else df[k] == v]
    return df


def per_run_values(entry: Entry, data: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per run (grid keys, seed, run) and one column per per-point
    metric, in plan order."""
    runs = data["runs"]
    keys = list(entry.grid)
    out = runs[[*keys, "seed", "run"]].copy().reset_index(drop=True)
    simple = [m for m in entry.metrics.values() if m.per_point and m.ratio is None]
    for m in simple:
        df = data[m.table]
        if m.column not in df.columns:
            raise CatalogError(f"metric {m.name}: no column {m.column!r} in {m.table}")
        df = _filter(df, m.where, m.table)
        if m.agg == "count":
            agg = df.groupby("run", sort=False).size()
        else:
            agg = df.groupby("run", sort=False)[m.column].agg(m.agg)
        out[m.name] = out["run"].map(agg).astype(float) * m.scale
    for m in entry.metrics.values():
        if m.ratio is not None:
            num, den = m.ratio
            out[m.name] = out[num] / out[den].where(out[den] != 0, np.nan) * m.scale
    return out


def point_stats(entry: Entry, per_run: pd.DataFrame) -> pd.DataFrame:
    keys = list(entry.grid)
    metrics = [m.name for m in entry.metrics.values() if m.per_point]
    return stats.summarize(per_run, by=keys, metrics=metrics)


def fitted(entry: Entry, pstats: pd.DataFrame) -> dict[str, dict]:
    """Fitted metrics: {name: {"mean", "ci_low", "ci_high", "n"}}."""
    from phblab.fit import fit_power_law

    out = {}
    cache = {}
    for m in entry.metrics.values():
        if m.fit is None:
            continue
        sig = (m.y, m.x)
        if sig not in cache:
            d = pstats[pstats.metric == m.y]
            cache[sig] = (fit_power_law(d[m.x[0]].astype(float), d[m.x[1]].astype(float), d["mean"].astype(float)), len(d))
        fit, n = cache[sig]
        if m.param == "c":
            out[m.name] = {"mean": fit.c, "ci_low": math.nan, "ci_high": math.nan, "n": n}
        else:
            ci = fit.a_ci if m.param == "a" else fit.b_ci
            out[m.name] = {"mean": getattr(fit, m.param), "ci_low": ci[0], "ci_high": ci[1], "n": n}
    return out


# ---------------------------------------------------------------- comparison


@dataclass
class Check:
    metric: str
    coords: dict
    source: str
    ref: str
    expected: float
    tolerance: str
    tol_abs: float
    ours: float
    ci_low: float
    ci_high: float
    n: int
    unit: str

    @property
    def gap(self) -> float:
        return self.ours - self.expected

    @property
    def rel_gap(self) -> float:
        return self.gap / self.expected if self.expected else math.nan

    @property
    def passed(self) -> bool:
        return math.isfinite(self.ours) and abs(self.gap) <= self.tol_abs * (1 + 1e-12)

    def where(self) -> str:
        return ", ".join(f"{k}={_fmt(v)}" for k, v in self.coords.items())

    def message(self) -> str:
        ci = f" [{_fmt(self.ci_low)}, {_fmt(self.ci_high)}]" if math.isfinite(self.ci_low) else ""
        at = f" at {self.where()}" if self.coords else ""
        rel = f" ({100 * self.rel_gap:+.1f}%)" if math.isfinite(self.rel_gap) else ""
        verdict = "within" if self.passed else "exceeds"
        what = f"{self.source} ({self.ref})" if self.ref else self.source
        unit = f" {self.unit}" if self.unit else ""
        return (
            f"{'PASS' if self.passed else 'FAIL'} {self.metric}{at}: ours {_fmt(self.ours)}{ci}{unit}, "
            f"{what} {_fmt(self.expected)}: gap {self.gap:+.4g}{rel} {verdict} tolerance {self.tolerance}"
        )

    def row(self) -> dict:
        return {
            "metric": self.metric,
            **{f"at.{k}": v for k, v in self.coords.items()},
            "where": self.where(),
            "source": self.source,
            "ref": self.ref,
            "expected": self.expected,
            "ours": self.ours,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n": self.n,
            "unit": self.unit,
            "tolerance": self.tolerance,
            "tol_abs": self.tol_abs,
            "gap": self.gap,
            "rel_gap": self.rel_gap,
            "passed": self.passed,
        }


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else "nan"
    return str(v)


def compare(entry: Entry, pstats: pd.DataFrame, fits: Mapping[str, dict]) -> list[Check]:
    checks = []
    keys = list(entry.grid)
    for e in entry.expect:
        m = entry.metrics[e.metric]
        for p in e.points:
            tol_text = p.get("tolerance", e.tolerance)
            kind, tol = parse_tolerance(tol_text, f"{entry.id} expect {e.metric}")
            expected = float(p["value"])
            coords = {k: p[k] for k in keys if k in p}
            if m.per_point:
                d = pstats[pstats.metric == m.name]
                for k, v in coords.items():
                    d = d[[_same(v, g) for g in d[k]]]
                if d.empty:
                    raise CatalogError(f"{entry.id}: no results for {e.metric} at {coords}")
                r = d.iloc[0]
                ours, lo, hi, n = float(r["mean"]), float(r["ci_low"]), float(r["ci_high"]), int(r["n"])
            else:
                f = fits[m.name]
                ours, lo, hi, n = f["mean"], f["ci_low"], f["ci_high"], f["n"]
            tol_abs = tol * abs(expected) if kind == "rel" else tol
            tol_str = tol_text if isinstance(tol_text, str) else f"±{tol_text:g}{(' ' + m.unit) if m.unit else ''}"
            checks.append(Check(e.metric, coords, e.source, e.ref, expected, tol_str, tol_abs, ours, lo, hi, n, m.unit))
    return checks


# ----------------------------------------------------------------- reproduce


@dataclass
class Outcome:
    entry: Entry
    checks: list
    dir: Path
    plots: list
    runs: int
    ran: int
    wall_time_s: float
    per_point: pd.DataFrame
    seeds: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def to_json(self) -> dict:
        e = self.entry
        return {
            "id": e.id,
            "title": e.title,
            "paper": e.paper,
            "scenario": str(e.path),
            "assumptions": e.assumptions,
            "notes": e.notes,
            "sweep": {**e.sweep, "seeds": self.seeds or e.sweep.get("seeds", 1)},
            "metrics": {
                m.name: {"label": m.label, "unit": m.unit, **({"fit": m.fit, "param": m.param} if m.fit else {})}
                for m in e.metrics.values()
            },
            "phblab_version": _core.version(),
            "runs": self.runs,
            "ran": self.ran,
            "wall_time_s": self.wall_time_s,
            "passed": self.passed,
            "checks": [c.row() for c in self.checks],
            "plots": [str(p.relative_to(self.dir)) for p in self.plots],
        }


def entry_dir(entry: Entry, results: str | os.PathLike = DEFAULT_RESULTS) -> Path:
    return Path(results) / entry.id


def reproduce(
    entry: Entry,
    results: str | os.PathLike = DEFAULT_RESULTS,
    jobs: int | None = None,
    client: Any = None,
    seeds: int | Sequence[int] | None = None,
    progress: bool = False,
) -> Outcome:
    """Runs an entry's sweep (reusing complete runs in its directory,
    `results/<id>/sweep`), computes its metrics, compares them and plots.
    Writes `results/<id>/comparison.json` and `.csv` and the plots."""
    from phblab.sweep import sweep

    start = time.perf_counter()
    d = entry_dir(entry, results)
    sw = sweep(
        entry.path,
        grid=entry.grid,
        seeds=seeds if seeds is not None else entry.sweep.get("seeds", 1),
        jobs=jobs,
        out=d / "sweep",
        client=client,
        overrides=entry.sweep.get("overrides"),
        set=entry.sweep.get("set"),
        progress=progress,
    )
    data = {"classes": sw.classes, "flows": sw.flows, "runs": sw.runs}
    per_run = per_run_values(entry, data)
    pstats = point_stats(entry, per_run)
    fits = fitted(entry, pstats)
    checks = compare(entry, pstats, fits)
    plots = plot_entry(entry, pstats, d)
    outcome = Outcome(entry, checks, d, plots, len(sw.runs), sw.ran, time.perf_counter() - start, pstats, list(sw.seeds))
    d.mkdir(parents=True, exist_ok=True)
    (d / "comparison.json").write_text(json.dumps(outcome.to_json(), indent=2, default=_json_default) + "\n")
    pd.DataFrame([c.row() for c in checks]).to_csv(d / "comparison.csv", index=False)
    per_run.to_csv(d / "per_run.csv", index=False)
    return outcome


def _json_default(v: Any) -> Any:
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return str(v)


def plot_entry(entry: Entry, pstats: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Ours (mean, 95% CI band) beside the expected values (markers with
    tolerance bars), one figure per plotted metric; returns the PNG paths."""
    from phblab import plot as pl

    keys = list(entry.grid)
    if not keys:
        return []
    x = entry.plot.get("x", keys[0])
    by = entry.plot.get("by", [k for k in keys if k != x])
    by = [by] if isinstance(by, str) else list(by)
    names = entry.plot.get("metrics") or list(
        dict.fromkeys(e.metric for e in entry.expect if entry.metrics[e.metric].per_point)
    )
    pngs = []
    for name in names:
        m = entry.metrics.get(name)
        if m is None or not m.per_point:
            continue
        d = pstats[pstats.metric == name].copy()
        xs_of, xunit, cats = pl.x_positions(d[x])
        fig, ax = pl.plt.subplots(figsize=(6.4, 4.4))
        colours = pl.draw_lines(ax, d, x, by, 1.0, xs_of, label_prefix="ours: " if not by else "")
        markers = {"paper": "s", "measured": "D"}
        shown = set()
        for e in entry.expect:
            if e.metric != name:
                continue
            for p in e.points:
                kind, tol = parse_tolerance(p.get("tolerance", e.tolerance), entry.id)
                v = float(p["value"])
                err = tol * abs(v) if kind == "rel" else tol
                key = tuple(p[k] for k in by)
                colour = next((c for k, c in colours.items() if all(_same(a, b) for a, b in zip(k, key))), "black")
                label = f"{e.source}{' (' + e.ref + ')' if e.ref else ''} ± tolerance"
                xpos = xs_of[next(g for g in xs_of if _same(g, p[x]))] + (0.12 if cats else 0.0)
                ax.errorbar(
                    [xpos], [v], yerr=[[err], [err]],
                    marker=markers[e.source], mfc="none", color=colour, capsize=3, linestyle="none",
                    label=None if label in shown else label,
                )
                shown.add(label)
        pl._x_axis(ax, x, xunit, cats, xs_of, bool(entry.plot.get("logx")))
        if entry.plot.get("logy"):
            ax.set_yscale("log")
        ylabel = m.label or m.name
        ax.set_ylabel(f"{ylabel} ({m.unit})" if m.unit else ylabel)
        n = int(d["n"].max()) if len(d) else 0
        ax.set_title(f"{entry.id}: {m.name} — lines: ours (mean, 95% CI, {n} seeds); open markers: expected", fontsize=8)
        ax.legend(fontsize=7, title=", ".join(by) if by else None, title_fontsize=7)
        ax.grid(True, alpha=0.3)
        paths = pl.save(fig, out_dir / f"{pl._safe(name)}")
        pngs.append(paths[0])
    return pngs


def format_outcome(outcome: Outcome) -> str:
    e = outcome.entry
    lines = [f"{e.id}: {e.title}"]
    if e.paper:
        lines.append(f"  paper: {e.paper}")
    if e.assumptions:
        lines.append("  assumptions:")
        lines += [f"    - {a}" for a in e.assumptions]
    if e.notes:
        lines.append(f"  notes: {e.notes}")
    grid = ", ".join(f"{k} ∈ {{{', '.join(_fmt(v) for v in vs)}}}" for k, vs in e.grid.items())
    lines.append(
        f"  sweep: {grid or 'one point'}; {outcome.runs} runs ({outcome.ran} run now, the rest reused) "
        f"in {outcome.wall_time_s:.1f} s; results in {outcome.dir}/"
    )
    for c in outcome.checks:
        lines.append(f"  {c.message()}")
    npass = sum(c.passed for c in outcome.checks)
    verdict = "PASS" if outcome.passed else "FAIL"
    lines.append(f"  {verdict}: {npass}/{len(outcome.checks)} values within tolerance")
    return "\n".join(lines)


def list_entries(entries: Sequence[Entry]) -> str:
    if not entries:
        return "(no catalog entries)"
    width = max(len(e.id) for e in entries)
    out = []
    for e in entries:
        n = sum(len(x.points) for x in e.expect)
        sources = "/".join(sorted({x.source for x in e.expect})) or "no values"
        points = math.prod(len(v) for v in e.grid.values()) if e.grid else 1
        seeds = e.sweep.get("seeds", 1)
        nseeds = seeds if isinstance(seeds, int) else len(seeds)
        out.append(f"{e.id.ljust(width)}  {e.title}  [{n} {sources} values; {points} points × {nseeds} seeds]")
    return "\n".join(out)
