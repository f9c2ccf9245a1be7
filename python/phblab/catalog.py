"""The reproduction catalog: scenarios that carry a `[reproduce]` section.

A catalog entry is a scenario file `scenarios/<paper>/<id>.toml` whose
`[reproduce]` section says which sweep to run, which metrics to compute from
its results, the values to compare them with (a paper's published numbers,
or measured regression values), each with a tolerance, and the relations the
paper states between them (claims). Its id is `<paper>/<id>` (the path under
the catalog root without `.toml`). `docs/workflow.md` describes the section;
in short:

    [reproduce]
    title = "..."; paper = "..."; assumptions = ["...", ...]
    backends = ["simulate", "emulate"]   where it may run (default
                               ["simulate"]; `reproduce --backend emulate`)
    [reproduce.sweep]          grid, set, seeds, overrides (phblab.sweep)
    [reproduce.metrics.NAME]   table/column/where/agg/scale/unit (table
                               "flows", "classes", "delay_ratios",
                               "transfers" or "counters"; agg sum ... count
                               or a percentile pNN; where values may be
                               templates of grid keys), or ratio, or expr
                               (+ params), or table = "timeseries" with
                               interval_ratio or interval_value, a
                               percentile or within, during and when; or
                               fit = "power_law"
    [[reproduce.expect]]       metric, source, ref, tolerance, points
    [[reproduce.claims]]       text, ref, over, left, op, right
    [reproduce.plot]           x, by, metrics, logx, logy
    [reproduce.table]          metrics, where, title: per-point means shown
                               as a table (comparison.json, the report)

Everything is validated when the entry is loaded (`load_entry`), before any
run; `reproduce` then runs the sweep, computes the per-run metrics in
dependency order (`per_run_values`), their means and CIs per grid point, the
fits, and the checks: `Check` (a value within a tolerance) and `ClaimCheck`
(a relation between means), which share `passed`, `message()` and `row()`.

    entry = load_entry("scenarios/vukadinovic-2004/appendix-b.toml")
    outcome = reproduce(entry, results="results/reproduce")
    print(format_outcome(outcome)); outcome.passed

An entry whose `backends` lists "emulate" may also run on real Linux TCP
(`reproduce(entry, backend="emulate")`): its results go to
`results/reproduce/<id>-emulate/` (`entry_dir`), beside the simulated ones,
and record the backend; docs/emulation.md ("Sweeps and reproductions").
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import math
import operator
import os
import re
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from phblab import _core, outdir, stats
from phblab.entry import split_reproduce

DEFAULT_RESULTS = Path("results") / "reproduce"
AGGREGATES = {"sum", "mean", "min", "max", "count"}
#: the per-run tables a column metric may read (the sweep's dataset, and
#: each run's transfers.parquet)
COLUMN_TABLES = ("classes", "flows", "delay_ratios", "counters", "transfers")
#: a percentile aggregate: "p10", "p50", "p90", "p99.9" ...
PERCENTILE_AGG = re.compile(r"p(\d+(\.\d+)?)")
SOURCES = {"paper", "measured"}
#: what an entry is: a reproduction of a paper's result, or a sensitivity
#: study that reruns one under another assumption (not itself a reproduction)
ENTRY_KINDS = ("reproduction", "sensitivity")
#: where an entry's runs may execute (`[reproduce].backends`, phblab.sweep.BACKENDS)
BACKENDS = ("simulate", "emulate")
#: the backends an entry allows when it does not say
DEFAULT_BACKENDS = ("simulate",)
CLAIM_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
#: per-class series of a run's time series (`timeseries.parquet`)
CLASS_SERIES = {"delay_mean_s", "throughput_bps", "offered_bps", "loss_rate"}
#: series that add up over classes (an `interval_value` or `when` over a list of classes)
ADDITIVE_SERIES = {"throughput_bps", "offered_bps"}
TIMESERIES_KINDS = ("interval_ratio", "interval_value")
METRIC_KEYS = {
    "table",
    "column",
    "where",
    "agg",
    "scale",
    "unit",
    "label",
    "ratio",
    "fit",
    "x",
    "y",
    "param",
    "expr",
    "params",
    "interval_ratio",
    "interval_value",
    "percentile",
    "within",
    "during",
    "when",
}


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
    """A metric of an entry. Its kind follows from the keys given:
    `column` (a table's column, aggregated per run), `ratio`, `expr`,
    `interval_ratio` or `interval_value` (from each run's time series) or
    `fit` (one value for the whole grid); every kind but `fit` gives one
    value per run."""

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
    expr: str | None = None
    params: dict = field(default_factory=dict)  # expr: {name in the expression: grid key}
    interval_ratio: dict | None = None  # scope, numerator, denominator, metric
    interval_value: dict | None = None  # scope, class (a name or a list), metric
    percentile: float | None = None
    within: tuple | None = None  # (lo, hi): the fraction of intervals with a value in [lo, hi]
    during: list = field(default_factory=list)  # [(t0, t1)]: intervals ending in (t0, t1]
    when: list = field(default_factory=list)  # [{class, metric, op, value}]: intervals where all hold
    inputs: dict = field(default_factory=dict)  # expr: {name in the expression: per-run column}
    uses: tuple = ()  # expr: the metrics it reads

    @property
    def per_point(self) -> bool:
        return self.fit is None

    @property
    def kind(self) -> str:
        """ "column", "ratio", "expr", "interval_ratio", "interval_value" or
        "fit": the key that defines it."""
        if self.fit is not None:
            return "fit"
        if self.ratio is not None:
            return "ratio"
        if self.expr is not None:
            return "expr"
        if self.interval_ratio is not None:
            return "interval_ratio"
        if self.interval_value is not None:
            return "interval_value"
        return "column"

    @property
    def series(self) -> dict | None:
        """A time-series metric's interval_ratio or interval_value table."""
        return self.interval_ratio if self.interval_ratio is not None else self.interval_value

    @property
    def deps(self) -> tuple:
        """The metrics this one is computed from."""
        if self.ratio is not None:
            return tuple(self.ratio)
        if self.expr is not None:
            return self.uses
        if self.y is not None:
            return (self.y,)
        return ()


@dataclass
class Expectation:
    metric: str
    source: str
    ref: str
    tolerance: Any
    points: list  # of dicts: grid params + value (+ tolerance)


@dataclass
class Side:
    """One side of a claim: a per-point metric at grid coordinates (`at`
    plus the claim's `over`), times `scale`; or a constant `value`."""

    metric: str | None = None
    at: dict = field(default_factory=dict)
    scale: float = 1.0
    value: float | None = None


@dataclass
class Claim:
    """A relation the paper states, checked on the means over the seeds:
    `left op right`, once per combination of the `over` values."""

    text: str
    ref: str
    source: str
    over: dict  # {grid key: [values]}
    left: Side
    op: str
    right: Side

    def combinations(self) -> list[dict]:
        """The coordinates of each check, in the order of `over`."""
        return [dict(zip(self.over, vs, strict=True)) for vs in itertools.product(*self.over.values())]


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
    claims: list = field(default_factory=list)
    #: `[reproduce.table]`: {"metrics": [...], "where": {...}, "title": "..."}
    table: dict = field(default_factory=dict)
    #: "reproduction" or "sensitivity" (ENTRY_KINDS)
    kind: str = "reproduction"
    #: the scenario file the entry sweeps: `path` itself, or the file its
    #: `scenario` key names
    scenario: Path | None = None
    #: `[reproduce].backends`: where its runs may execute (BACKENDS)
    backends: tuple = DEFAULT_BACKENDS

    @property
    def scenario_path(self) -> Path:
        return self.scenario or self.path

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
    raise CatalogError(
        f'{where}: tolerance {tol!r}: expected a percentage string ("15%", relative) '
        "or a number (absolute, in the metric's unit)"
    )


def _check_keys(d: Mapping, allowed: set, where: str) -> None:
    extra = set(d) - allowed
    _need(
        not extra,
        where,
        f"unknown key{'s' if len(extra) > 1 else ''} {', '.join(sorted(extra))}; expected {', '.join(sorted(allowed))}",
    )


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _overridden(sweep: Mapping, path: str) -> bool:
    """Whether the entry's sweep sets scenario path `path` (grid, set or overrides)."""
    ov = sweep.get("overrides") or {}
    names = (
        set(ov)
        if isinstance(ov, Mapping)
        else {str(o).partition("=")[0].strip() for o in ([ov] if isinstance(ov, str) else ov)}
    )
    return path in sweep.get("grid", {}) or path in (sweep.get("set") or {}) or path in names


def _expr_names(expr: Any, where: str) -> set[str]:
    """The names an expression reads (not the functions it calls); checks that
    `phblab.sweep.evaluate` supports it."""
    from phblab.expr import evaluate

    _need(
        isinstance(expr, str) and expr.strip(),
        where,
        'expr must be an expression string, e.g. "abs(delay_ratio / delta - 1)"',
    )
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as e:
        raise CatalogError(f"{where}: expr {expr!r}: {e.msg}") from None
    funcs = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in funcs}
    try:
        evaluate(expr, {n: 1.7 for n in names})
    except (ValueError, TypeError) as e:
        raise CatalogError(f"{where}: expr {expr!r}: {e}") from None
    except ArithmeticError:
        pass  # a division by zero at the trial values is not an error of the entry
    return names


def _parse_expr(metric: Metric, m: Mapping, metrics_raw: Mapping, grid: Mapping, mw: str) -> None:
    """Resolves the names of an expr metric: other per-point metrics, bare
    numeric grid keys, and aliases of grid keys (`params`)."""
    _check_keys(m, {"expr", "params", "scale", "unit", "label"}, mw)
    params = m.get("params", {})
    _need(isinstance(params, dict), f"{mw}.params", 'a table {name = "grid key"}')
    for alias, key in params.items():
        _need(alias.isidentifier(), f"{mw}.params", f"{alias!r} is not a name an expression can use")
        _need(key in grid, f"{mw}.params", f"{alias} = {key!r}: not a grid key; grid keys: {', '.join(grid) or 'none'}")
        _need(
            alias not in metrics_raw and alias not in grid,
            f"{mw}.params",
            f"{alias!r} is already the name of a {'metric' if alias in metrics_raw else 'grid key'}",
        )
    metric.params = dict(params)
    uses = []
    for name in sorted(_expr_names(m["expr"], mw)):
        if name in params:
            col = params[name]
        elif name in metrics_raw:
            _need(name not in grid, mw, f"{name!r} is both a metric and a grid key; rename one")
            _need(name != metric.name, mw, f"expr {m['expr']!r} reads the metric itself")
            uses.append(name)
            col = name
        elif name in grid:
            col = name
        else:
            known = [*(k for k in metrics_raw if k != metric.name), *(k for k in grid if k.isidentifier()), *params]
            raise CatalogError(
                f"{mw}: expr {m['expr']!r}: unknown name {name!r}; known: {', '.join(known) or 'none'} "
                '(a grid key that is a path needs an alias: params = { name = "path" })'
            )
        if col in grid:
            _need(
                all(_number(v) for v in grid[col]),
                mw,
                f"grid key {col!r} has values that are not numbers; an expr can only use numeric grid keys",
            )
        metric.inputs[name] = col
    metric.uses = tuple(uses)


def _series_classes(value: Any, classes: Mapping, where: str, what: str) -> list[str]:
    """A class name or a non-empty list of them, each a class of the scenario."""
    names = [value] if isinstance(value, str) else value
    _need(
        isinstance(names, list) and names and all(isinstance(c, str) for c in names),
        where,
        f"{what} must be a class name or a list of class names",
    )
    for c in names:
        _need(
            c in classes, where, f"{what} {c!r} is not a class of the scenario; classes: {', '.join(classes) or 'none'}"
        )
    return names


def _series_metric(name: Any, classes: list[str], where: str) -> str:
    _need(
        name in CLASS_SERIES,
        where,
        f"metric {name!r}: a per-class time series, one of {', '.join(sorted(CLASS_SERIES))}",
    )
    _need(
        len(classes) == 1 or name in ADDITIVE_SERIES,
        where,
        f"a list of classes adds their values up, which only {' and '.join(sorted(ADDITIVE_SERIES))} allow",
    )
    return name


def _parse_timeseries(
    metric: Metric, m: Mapping, scenario: Mapping, directions: Callable[[], set[str] | None], sweep: Mapping, mw: str
) -> None:
    _check_keys(
        m,
        {*TIMESERIES_KINDS, "table", "percentile", "within", "during", "when", "scale", "unit", "label"},
        mw,
    )
    kinds = [k for k in TIMESERIES_KINDS if k in m]
    _need(
        metric.table == "timeseries",
        mw,
        f'{kinds[0] if kinds else "a time-series metric"} needs table = "timeseries", not {metric.table!r}',
    )
    _need(
        len(kinds) == 1,
        mw,
        'table = "timeseries" needs interval_ratio = { scope, numerator, denominator, metric } '
        "or interval_value = { scope, class, metric }",
    )
    kind = kinds[0]
    spec = m[kind]
    iw = f"{mw}.{kind}"
    _need(isinstance(spec, dict), iw, "must be a table")
    classes = scenario.get("classes", {})
    if kind == "interval_ratio":
        _check_keys(spec, {"scope", "numerator", "denominator", "metric"}, iw)
        spec = {"metric": "delay_mean_s", **spec}
        for k in ("scope", "numerator", "denominator"):
            _need(isinstance(spec.get(k), str), iw, f"{k} (a string) is required")
        for k in ("numerator", "denominator"):
            _series_classes(spec[k], classes, iw, k)
        _series_metric(spec["metric"], [spec["numerator"]], iw)
        _need(spec["numerator"] != spec["denominator"], iw, "numerator and denominator are the same class")
        metric.interval_ratio = spec
    else:
        _check_keys(spec, {"scope", "class", "metric"}, iw)
        spec = {"metric": "delay_mean_s", **spec}
        _need(isinstance(spec.get("scope"), str), iw, "scope (a string) is required")
        _need("class" in spec, iw, "class (a class name or a list of them) is required")
        spec["class"] = _series_classes(spec["class"], classes, iw, "class")
        _series_metric(spec["metric"], spec["class"], iw)
        metric.interval_value = spec
    scope = spec["scope"]
    if scope != "end-to-end":
        known = directions()
        _need(
            "->" in scope and (known is None or scope in known),
            iw,
            f'scope {scope!r}: "end-to-end" or a link direction "A->B" of the scenario\'s links',
        )
    run = scenario.get("run", {})
    _need(
        "sample_interval" in run or _overridden(sweep, "run.sample_interval"),
        mw,
        "a time-series metric needs run.sample_interval (in the scenario, or in the sweep's grid, set or overrides)",
    )
    chosen = run.get("sample_scopes")
    if isinstance(chosen, list) and not _overridden(sweep, "run.sample_scopes"):
        _need(scope in chosen, iw, f"scope {scope!r} is not among run.sample_scopes ({', '.join(chosen)})")
    _need(
        ("percentile" in m) != ("within" in m),
        mw,
        "a time-series metric reduces its intervals with either percentile = P or within = [lo, hi]",
    )
    if "percentile" in m:
        pct = m["percentile"]
        _need(_number(pct) and 0 <= pct <= 100, mw, f"percentile {pct!r}: a number from 0 to 100 is required")
        metric.percentile = float(pct)
    else:
        w = m["within"]
        _need(
            isinstance(w, list) and len(w) == 2 and all(_number(v) for v in w) and w[0] <= w[1],
            f"{mw}.within",
            f"{w!r}: [lo, hi], two numbers with lo <= hi",
        )
        metric.within = (float(w[0]), float(w[1]))
    during = m.get("during", [])
    _need(
        isinstance(during, list)
        and all(isinstance(d, list) and len(d) == 2 and all(_number(v) for v in d) and d[0] < d[1] for d in during),
        f"{mw}.during",
        f"{during!r}: a list of [start, end] spans in seconds, each with start < end",
    )
    metric.during = [(float(a), float(b)) for a, b in during]
    when = m.get("when", [])
    when = [when] if isinstance(when, dict) else when
    _need(isinstance(when, list), f"{mw}.when", "a table { class, metric, op, value } or a list of them")
    for k, w in enumerate(when):
        ww = f"{mw}.when[{k}]"
        _need(isinstance(w, dict), ww, "must be a table { class, metric, op, value }")
        _check_keys(w, {"class", "metric", "op", "value"}, ww)
        if "class" in w:
            cls = _series_classes(w["class"], classes, ww, "class")
        else:
            _need(kind == "interval_value", ww, "class is required (an interval_ratio has two)")
            cls = spec["class"]
        _need("metric" in w, ww, "metric is required")
        _series_metric(w["metric"], cls, ww)
        _need(w.get("op") in CLAIM_OPS, ww, f"op {w.get('op')!r}: one of {', '.join(CLAIM_OPS)}")
        _need(_number(w.get("value")), ww, "value (a number) is required")
        metric.when.append({"class": cls, "metric": w["metric"], "op": w["op"], "value": float(w["value"])})


def _parse_metric(
    name: str,
    m: Any,
    metrics_raw: Mapping,
    sweep: Mapping,
    scenario: Mapping,
    directions: Callable[[], set[str] | None],
    mw: str,
) -> Metric:
    _need(isinstance(m, dict), mw, "must be a table")
    _check_keys(m, METRIC_KEYS, mw)
    kinds = [k for k in ("column", "ratio", "expr", *TIMESERIES_KINDS, "fit") if k in m]
    _need(
        len(kinds) <= 1,
        mw,
        f"{' and '.join(kinds)} exclude each other: give one (a column, a ratio, an expr, an interval_ratio, "
        "an interval_value or a fit)",
    )
    kind = kinds[0] if kinds else "column"
    _need("params" not in m or kind == "expr", mw, "params (aliases of grid keys) belongs to an expr metric")
    for k in ("percentile", "within", "during", "when"):
        _need(
            k not in m or kind in TIMESERIES_KINDS,
            mw,
            f"{k} belongs to a time-series metric (interval_ratio or interval_value)",
        )
    table = m.get("table", "timeseries" if kind in TIMESERIES_KINDS else "flows")
    _need(_number(m.get("scale", 1.0)), mw, f"scale {m.get('scale')!r}: a number")
    metric = Metric(
        name=name,
        table=table,
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
        expr=m.get("expr"),
    )
    grid = sweep["grid"]
    if metric.fit is not None:
        _need(metric.fit == "power_law", mw, f'fit {metric.fit!r}: only "power_law" (y = c / (x1^a · x2^b)) is known')
        _need(len(metric.x) == 2 and all(x in grid for x in metric.x), mw, "x must name two grid keys")
        _need(metric.param in ("a", "b", "c"), mw, 'param must be "a", "b" or "c"')
        _need(metric.y is not None, mw, "y must name a per-point metric")
    elif metric.ratio is not None:
        _need(len(metric.ratio) == 2, mw, "ratio = [numerator metric, denominator metric]")
    elif metric.expr is not None:
        _parse_expr(metric, m, metrics_raw, grid, mw)
    elif kind in TIMESERIES_KINDS or table == "timeseries":
        _parse_timeseries(metric, m, scenario, directions, sweep, mw)
    else:
        _need(
            metric.table in COLUMN_TABLES,
            mw,
            f'table {metric.table!r}: {", ".join(repr(t) for t in COLUMN_TABLES)} or "timeseries"',
        )
        _need(isinstance(metric.column, str), mw, "column (a numeric column of the table) is required")
        _need(
            metric.agg in AGGREGATES or _percentile(metric.agg) is not None,
            mw,
            f"agg {metric.agg!r}: one of {', '.join(sorted(AGGREGATES))} or a percentile p0 ... p100 (p10, p90)",
        )
        _need(isinstance(m.get("where", {}), dict), f"{mw}.where", "a table {column = value or [values]}")
        for k, v in metric.where.items():
            if _is_template(v):
                _template_names(v, grid, f"{mw}.where.{k}")
        if metric.table == "delay_ratios":
            run = scenario.get("run", {})
            _need(
                "delay_ratios" in run or _overridden(sweep, "run.delay_ratios"),
                mw,
                'table = "delay_ratios" needs run.delay_ratios in the scenario (or in the sweep\'s set or overrides)',
            )
    return metric


def _is_template(v: Any) -> bool:
    return isinstance(v, str) and "{" in v


def _template_names(template: str, grid: Mapping, where: str) -> None:
    """Checks a `where` template: each `{expression}` reads only grid keys
    that are bare names with numeric values."""
    for expr in re.findall(r"\{([^{}]*)\}", template):
        for name in sorted(_expr_names(expr, where)):
            _need(
                name in grid and name.isidentifier(),
                where,
                f"template {template!r}: {name!r} is not a grid key; a where template reads the grid point's keys "
                f"({', '.join(k for k in grid if k.isidentifier()) or 'none'})",
            )
            _need(
                all(_number(v) for v in grid[name]),
                where,
                f"template {template!r}: grid key {name!r} has values that are not numbers",
            )


def _percentile(agg: Any) -> float | None:
    """The percentile an aggregate "pNN" names (0–100), or None."""
    m = PERCENTILE_AGG.fullmatch(agg) if isinstance(agg, str) else None
    q = float(m.group(1)) if m else None
    return q if q is not None and q <= 100 else None


def _aggregate(df: pd.DataFrame, column: str, agg: str) -> pd.Series:
    """`column` of `df` aggregated per run (`count`: rows; `pNN`: the NN-th
    percentile, interpolated linearly between order statistics)."""
    groups = df.groupby("run", sort=False)
    if agg == "count":
        return groups.size()
    q = _percentile(agg)
    if q is not None:
        return groups[column].quantile(q / 100)
    return groups[column].agg(agg)


def metric_order(metrics: Mapping[str, Metric], where: str = "[reproduce.metrics]") -> list[str]:
    """The per-point metrics, each after the metrics it is computed from;
    CatalogError on a cycle."""
    order: list[str] = []
    state: dict[str, int] = {}  # 1: being visited, 2: done

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            cycle = path[path.index(name) :] + [name]
            raise CatalogError(f"{where}: metrics {' → '.join(cycle)} depend on each other in a cycle")
        state[name] = 1
        for dep in metrics[name].deps:
            visit(dep, path + [name])
        state[name] = 2
        order.append(name)

    for name, m in metrics.items():
        if m.per_point:
            visit(name, [])
    return order


def _parse_side(s: Any, grid: Mapping, over: Mapping, metrics: Mapping, sw: str) -> Side:
    _need(isinstance(s, dict), sw, "a table: { metric = ..., at = {...}, scale = ... } or { value = ... }")
    _check_keys(s, {"metric", "at", "scale", "value"}, sw)
    if "value" in s:
        _need(not ({"metric", "at", "scale"} & set(s)), sw, "value is a constant: it takes no metric, at or scale")
        _need(_number(s["value"]), sw, f"value {s['value']!r}: a number")
        return Side(value=float(s["value"]))
    name = s.get("metric")
    _need(name in metrics, sw, f"metric {name!r} is not defined in [reproduce.metrics]")
    _need(
        metrics[name].per_point,
        sw,
        f"metric {name!r} is fitted (one value for the grid); a claim compares per-point metrics",
    )
    _need(_number(s.get("scale", 1.0)), sw, f"scale {s.get('scale')!r}: a number")
    at = s.get("at", {})
    _need(isinstance(at, dict), f"{sw}.at", "a table {grid key = value}")
    for k, v in at.items():
        _need(k in grid, f"{sw}.at", f"{k!r} is not a grid key; grid keys: {', '.join(grid) or 'none'}")
        _need(not isinstance(v, list), f"{sw}.at", f"{k}: one value (give several values in the claim's over)")
        _need(any(_same(v, g) for g in grid[k]), f"{sw}.at", f"{k} = {v!r} is not in the grid")
    missing = [k for k in grid if k not in at and k not in over]
    _need(not missing, sw, f"at and over together must give every grid key; missing: {', '.join(missing)}")
    return Side(metric=name, at=dict(at), scale=float(s.get("scale", 1.0)))


def _parse_claim(c: Any, grid: Mapping, metrics: Mapping, cw: str) -> Claim:
    _need(isinstance(c, dict), cw, "must be a table ([[reproduce.claims]])")
    _check_keys(c, {"text", "ref", "source", "over", "left", "op", "right"}, cw)
    _need(isinstance(c.get("text"), str) and c["text"].strip(), cw, "text (the paper's statement) is required")
    source = c.get("source", "paper")
    _need(source in SOURCES, cw, f'source {source!r}: "paper" or "measured"')
    _need(c.get("op") in CLAIM_OPS, cw, f"op {c.get('op')!r}: one of {', '.join(CLAIM_OPS)}")
    over = c.get("over", {})
    _need(isinstance(over, dict), f"{cw}.over", "a table {grid key = [values]}")
    over = {k: (v if isinstance(v, list) else [v]) for k, v in over.items()}
    for k, vs in over.items():
        _need(k in grid, f"{cw}.over", f"{k!r} is not a grid key; grid keys: {', '.join(grid) or 'none'}")
        _need(bool(vs), f"{cw}.over", f"{k} has no values")
        for v in vs:
            _need(any(_same(v, g) for g in grid[k]), f"{cw}.over", f"{k} = {v!r} is not in the grid")
    for side in ("left", "right"):
        _need(side in c, cw, f"{side} is required")
    left = _parse_side(c["left"], grid, over, metrics, f"{cw}.left")
    right = _parse_side(c["right"], grid, over, metrics, f"{cw}.right")
    _need(
        left.metric is not None or right.metric is not None,
        cw,
        "both sides are constant values; at least one must be a metric",
    )
    return Claim(c["text"].strip(), c.get("ref", ""), source, over, left, c["op"], right)


def _check_templates(sweep: Mapping[str, Any], where: str) -> None:
    """Fills in every `set` template at every grid point, so that a template
    that cannot be evaluated is an error of the entry, found when it is
    loaded."""
    from phblab.sweep import render

    templates = sweep.get("set") or {}
    _need(isinstance(templates, dict), where, "must be a table {path = template}")
    grid = sweep["grid"]
    for point in itertools.product(*grid.values()):
        params = dict(zip(grid, point, strict=True))
        for path, template in templates.items():
            try:
                render(template, params)
            except ValueError as e:
                raise CatalogError(f"{where}.{path}: {e}") from None


def parse_section(entry_id: str, path: Path, section: Mapping[str, Any], text: str) -> Entry:
    w = f"{path}: [reproduce]"
    _check_keys(
        section,
        {
            "title",
            "kind",
            "paper",
            "scenario",
            "assumptions",
            "notes",
            "sweep",
            "metrics",
            "expect",
            "claims",
            "plot",
            "table",
            "backends",
        },
        w,
    )
    kind = section.get("kind", "reproduction")
    _need(kind in ENTRY_KINDS, f"{w}.kind", f"{kind!r}: one of {', '.join(ENTRY_KINDS)}")
    sweep = dict(section.get("sweep", {}))
    _check_keys(sweep, {"grid", "set", "seeds", "overrides"}, f"{w}.sweep")
    grid = sweep.get("grid", {})
    _need(isinstance(grid, dict), f"{w}.sweep.grid", "must be a table {key = [values]}")
    sweep["grid"] = {k: (v if isinstance(v, list) else [v]) for k, v in grid.items()}
    seeds = sweep.get("seeds", 1)
    _need(
        isinstance(seeds, (int, list)) and not isinstance(seeds, bool),
        f"{w}.sweep.seeds",
        "an integer N (seeds 1..N) or a list of seeds",
    )
    try:
        scenario = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        scenario = {}  # the core reports the scenario's own errors, with positions

    @functools.cache
    def directions() -> set[str] | None:
        """The scenario's link directions, generated links included (the core
        expands generators); None if it does not validate: the core then
        reports its own error when it runs."""
        try:
            return set(_core.validate(text, str(path))["link_directions"])
        except _core.ScenarioError:
            return None

    metrics_raw = section.get("metrics", {})
    _need(isinstance(metrics_raw, dict), f"{w}.metrics", "must be tables [reproduce.metrics.NAME]")
    metrics = {
        name: _parse_metric(name, m, metrics_raw, sweep, scenario, directions, f"{w}.metrics.{name}")
        for name, m in metrics_raw.items()
    }
    for metric in metrics.values():
        for dep in metric.deps:
            _need(
                dep in metrics and metrics[dep].per_point,
                f"{w}.metrics.{metric.name}",
                f"{dep!r} is not a per-point metric of this entry",
            )
    metric_order(metrics, f"{w}.metrics")
    expect = []
    for i, e in enumerate(section.get("expect", [])):
        ew = f"{w}.expect[{i}]"
        _check_keys(e, {"metric", "source", "ref", "tolerance", "points"}, ew)
        _need(e.get("metric") in metrics, ew, f"metric {e.get('metric')!r} is not defined in [reproduce.metrics]")
        source = e.get("source", "paper")
        _need(source in SOURCES, ew, f'source {source!r}: "paper" or "measured"')
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
                _need(
                    set(coords) == set(sweep["grid"]),
                    pw,
                    f"give every grid key ({', '.join(sweep['grid'])}) and nothing else",
                )
                for k, v in coords.items():
                    _need(any(_same(v, g) for g in sweep["grid"][k]), pw, f"{k} = {v!r} is not in the grid")
            else:
                _need(not coords, pw, "a fitted metric has one value and no grid coordinates")
        expect.append(Expectation(e["metric"], source, e.get("ref", ""), e["tolerance"], points))
    claims_raw = section.get("claims", [])
    _need(isinstance(claims_raw, list), f"{w}.claims", "must be tables [[reproduce.claims]]")
    claims = [_parse_claim(c, sweep["grid"], metrics, f"{w}.claims[{i}]") for i, c in enumerate(claims_raw)]
    plot = dict(section.get("plot", {}))
    _check_keys(plot, {"x", "by", "metrics", "logx", "logy"}, f"{w}.plot")
    table = _parse_table(section.get("table"), sweep["grid"], metrics, f"{w}.table")
    assumptions = section.get("assumptions", [])
    _need(
        isinstance(assumptions, list) and all(isinstance(a, str) for a in assumptions),
        f"{w}.assumptions",
        "a list of strings",
    )
    _check_templates(sweep, f"{w}.sweep.set")
    backends = _parse_backends(section.get("backends", list(DEFAULT_BACKENDS)), f"{w}.backends")
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
        claims=claims,
        table=table,
        kind=kind,
        backends=backends,
    )


def _parse_backends(value: Any, bw: str) -> tuple:
    """`[reproduce].backends`: a non-empty list of distinct BACKENDS (the
    emulator writes every table the simulator does, so any metric reads
    either's results)."""
    _need(
        isinstance(value, list) and value and all(isinstance(b, str) for b in value),
        bw,
        f'a list of backends, e.g. ["simulate", "emulate"]; known: {", ".join(BACKENDS)}',
    )
    for b in value:
        _need(b in BACKENDS, bw, f"{b!r} is not a backend; known: {', '.join(BACKENDS)}")
    twice = next((b for i, b in enumerate(value) if b in value[:i]), None)
    _need(twice is None, bw, f"{twice!r} is listed twice")
    return tuple(value)


def _parse_table(t: Any, grid: Mapping, metrics: Mapping, tw: str) -> dict:
    """`[reproduce.table]`: per-point metrics to show as a table, one row
    per grid point (those matching `where`), one column per metric."""
    if t is None:
        return {}
    _need(isinstance(t, dict), tw, 'must be a table: metrics = [...], where = {...}, title = "..."')
    _check_keys(t, {"metrics", "where", "title"}, tw)
    names = t.get("metrics")
    _need(
        isinstance(names, list) and names and all(isinstance(n, str) for n in names),
        tw,
        "metrics (a list of per-point metric names) is required",
    )
    for n in names:
        _need(n in metrics and metrics[n].per_point, tw, f"metric {n!r} is not a per-point metric of this entry")
    where = t.get("where", {})
    _need(isinstance(where, dict), f"{tw}.where", "a table {grid key = value or [values]}")
    where = {k: (v if isinstance(v, list) else [v]) for k, v in where.items()}
    for k, vs in where.items():
        _need(k in grid, f"{tw}.where", f"{k!r} is not a grid key; grid keys: {', '.join(grid) or 'none'}")
        for v in vs:
            _need(any(_same(v, g) for g in grid[k]), f"{tw}.where", f"{k} = {v!r} is not in the grid")
    title = t.get("title", "")
    _need(isinstance(title, str), tw, "title: a string")
    return {"metrics": list(names), "where": where, "title": title}


def _shared_scenario(path: Path, text: str, section: Mapping[str, Any]) -> tuple[Path | None, str]:
    """An entry's `scenario = "base.toml"`: the file it sweeps (relative to
    the entry's own file, which then holds nothing but `[reproduce]`) and
    that file's scenario text. Without the key: (None, the entry's text)."""
    name = section.get("scenario")
    if name is None:
        return None, text
    w = f"{path}: [reproduce].scenario"
    _need(
        isinstance(name, str) and name.endswith(".toml"),
        w,
        f"{name!r}: the path of a scenario file (.toml), relative to this file",
    )
    rest = tomllib.loads(text)
    _need(
        not rest,
        w,
        f"this file gives its scenario by name, so it holds only [reproduce]; found {', '.join(sorted(rest))}",
    )
    base = (path.parent / name).resolve()
    _need(base.is_file(), w, f"{base} does not exist")
    _need(base != path.resolve(), w, "names the entry's own file")
    try:
        return base, split_reproduce(base.read_text(encoding="utf-8"))[0]
    except (ValueError, tomllib.TOMLDecodeError) as e:
        raise CatalogError(f"{w}: {base}: {e}") from None


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
    scenario, text = _shared_scenario(path, text, section)
    entry = parse_section(entry_id, path, section, text)
    entry.scenario = scenario
    return entry


def load_catalog(root: str | os.PathLike | None = None, errors: list[CatalogError] | None = None) -> list[Entry]:
    """Every entry under `root` (default `default_catalog()`), by id.

    A malformed entry raises its `CatalogError`, or, when `errors` is a
    list, is appended to it and left out, so the rest can still be listed."""
    root = Path(root) if root is not None else default_catalog()
    entries = []
    for path in sorted(root.rglob("*.toml")):
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError, RecursionError):
            continue
        if "reproduce" not in doc:
            continue
        try:
            entries.append(load_entry(path, root))
        except CatalogError as e:
            if errors is None:
                raise
            errors.append(e)
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
    """The rows of `df` whose column k equals v (or one of the list v) for
    every k, v of `where`; numbers compare within a relative 1e-9 (so
    `timescale_s = 0.4` finds 400 ms)."""
    for k, v in where.items():
        if k not in df.columns:
            raise CatalogError(f"metric filter: no column {k!r} in {what}")
        values = v if isinstance(v, list) else [v]
        col = df[k]
        if pd.api.types.is_numeric_dtype(col) and all(_number(x) for x in values):
            x = col.to_numpy(dtype=float)
            keep = np.zeros(len(df), dtype=bool)
            for want in values:
                keep |= np.isclose(x, float(want), rtol=1e-9, atol=1e-12)
            df = df[keep]
        else:
            df = df[col.isin(values)]
    return df


def _class_series(ts: pd.DataFrame, scope: str, classes: str | list, metric: str) -> pd.Series:
    """One class's values of `metric` at `scope` per interval (time_s), or
    the sum of several classes' (an interval where some have no value
    counts them as 0; one where none has a value is left out)."""
    names = [classes] if isinstance(classes, str) else list(classes)
    d = ts[(ts["scope"] == scope) & (ts["metric"] == metric) & ts["class"].isin(names)]
    wide = d.pivot(index="time_s", columns="class", values="value")
    if wide.empty:
        return pd.Series([], dtype=float, name="value")
    if len(names) == 1:
        return wide[names[0]].dropna().rename("value") if names[0] in wide.columns else pd.Series([], dtype=float)
    return wide.sum(axis=1, min_count=1).dropna().rename("value")


def _keep(
    values: pd.Series,
    ts: pd.DataFrame,
    scope: str,
    warmup_s: float,
    during: Sequence = (),
    when: Sequence = (),
) -> pd.Series:
    """The intervals of `values` (indexed by time_s) that end after the
    warm-up, end within one of the `during` spans (t0, t1] (if any), and
    meet every `when` condition at `scope`."""
    v = values[values.index > warmup_s + 1e-9]
    if during:
        t = v.index.to_numpy()
        inside = np.zeros(len(t), dtype=bool)
        for t0, t1 in during:
            inside |= (t > t0 + 1e-9) & (t <= t1 + 1e-9)
        v = v[inside]
    for w in when:
        cond = _class_series(ts, scope, w["class"], w["metric"])
        cond = cond[CLAIM_OPS[w["op"]](cond, w["value"])]
        v = v[v.index.isin(cond.index)]
    return v


def _column_values(entry: Entry, m: Metric, df: pd.DataFrame, out: pd.DataFrame) -> pd.Series:
    """A column metric per run (row of `out`): `df` (one of the dataset's
    tables, which repeats a run's rows for every grid point that shares the
    run) filtered by the metric's `where`, rendered for each row's grid
    point, and aggregated over that run's rows."""
    from phblab.sweep import render

    keys = list(entry.grid)
    if m.column not in df.columns:
        if m.table == "transfers" and df.empty:
            return pd.Series(np.nan, index=out.index, dtype=float)  # no run recorded a transfer
        raise CatalogError(f"metric {m.name}: no column {m.column!r} in {m.table}")
    if out["run"].duplicated().any() and len(df):
        # several grid points share a run (a grid key that changes nothing in
        # the scenario): keep one copy of each run's rows
        df = df.drop(columns=[k for k in keys if k in df.columns]).drop_duplicates()
    # one filter per distinct `where` (templates rendered per grid point)
    wheres: dict[str, tuple[dict, list]] = {}
    for i, row in out.iterrows():
        where = _render_where(m.where, row, render)
        wheres.setdefault(json.dumps(where, sort_keys=True, default=str), (where, []))[1].append(i)
    values = pd.Series(np.nan, index=out.index, dtype=float)
    for where, index in wheres.values():
        agg = _aggregate(_filter(df, where, m.table), m.column, m.agg)
        values[index] = out.loc[index, "run"].map(agg).astype(float) * m.scale
    return values


def _render_where(where: Mapping[str, Any], row: pd.Series, render: Any) -> dict:
    """`where` with its templates filled in from the grid point of `row`."""
    if not any(_is_template(v) for v in where.values()):
        return dict(where)
    params = {k: row[k] for k in row.index if isinstance(k, str) and k.isidentifier()}
    return {k: render(v, params) if _is_template(v) else v for k, v in where.items()}


def interval_ratios(
    ts: pd.DataFrame,
    scope: str,
    numerator: str,
    denominator: str,
    metric: str = "delay_mean_s",
    warmup_s: float = 0.0,
    during: Sequence = (),
    when: Sequence = (),
) -> pd.Series:
    """Per sampling interval of one run's time series (long form: time_s,
    scope, class, metric, value), the ratio of class `numerator`'s value of
    `metric` to class `denominator`'s at `scope`, indexed by time_s.
    Intervals ending at or before `warmup_s`, intervals where either class
    has no value (for delay_mean_s: no departure in the interval) and
    intervals where the denominator is 0 are left out, and so are those
    outside the `during` spans or failing a `when` condition (`_keep`)."""
    num = _class_series(ts, scope, numerator, metric)
    den = _class_series(ts, scope, denominator, metric)
    both = pd.concat([num.rename("n"), den.rename("d")], axis=1).dropna()
    both = both[both["d"] != 0]
    ratio = (both["n"] / both["d"]).rename("ratio")
    return _keep(ratio, ts, scope, warmup_s, during, when)


def interval_values(
    ts: pd.DataFrame,
    scope: str,
    classes: str | list,
    metric: str = "delay_mean_s",
    warmup_s: float = 0.0,
    during: Sequence = (),
    when: Sequence = (),
) -> pd.Series:
    """Per sampling interval, class `classes`' value of `metric` at `scope`
    (the sum over a list of classes), with the intervals `_keep` keeps."""
    return _keep(_class_series(ts, scope, classes, metric), ts, scope, warmup_s, during, when)


def reduce_intervals(values: pd.Series, percentile: float | None = None, within: tuple | None = None) -> float:
    """The `percentile` (0..100; numpy's default linear interpolation
    between order statistics) of the values, or the fraction of them within
    [lo, hi]; NaN if there are none."""
    if not len(values):
        return math.nan
    x = values.to_numpy()
    if within is not None:
        return float(np.mean((x >= within[0]) & (x <= within[1])))
    return float(np.percentile(x, percentile))


def interval_ratio_percentile(ts: pd.DataFrame, percentile: float, **kwargs: Any) -> float:
    """The `percentile` (0..100; numpy's default linear interpolation between
    order statistics) of `interval_ratios(ts, **kwargs)`; NaN if no interval
    is left."""
    return reduce_intervals(interval_ratios(ts, **kwargs), percentile=percentile)


def _timeseries_values(entry: Entry, runs: pd.DataFrame, runs_dir: Path | None) -> dict[str, pd.Series]:
    """The time-series metrics of every run (read from `runs_dir/<run>/`)."""
    ms = [m for m in entry.metrics.values() if m.kind in TIMESERIES_KINDS]
    if not ms:
        return {}
    if runs_dir is None:
        raise CatalogError(f"{entry.id}: time-series metrics need the sweep's run directories")
    scopes = sorted({m.series["scope"] for m in ms})
    series = sorted({m.series["metric"] for m in ms} | {w["metric"] for m in ms for w in m.when})
    values: dict[str, list] = {m.name: [] for m in ms}
    for _, run in runs.iterrows():
        d = Path(runs_dir) / run["run"]
        path = d / "timeseries.parquet"
        ts = (
            pd.read_parquet(
                path,
                columns=["time_s", "scope", "class", "metric", "value"],
                filters=[("scope", "in", scopes), ("metric", "in", series)],
            )
            if path.is_file()
            else pd.DataFrame(columns=["time_s", "scope", "class", "metric", "value"])
        )
        warmup = run.get("warmup_s")
        if warmup is None or pd.isna(warmup):
            warmup = json.loads((d / "summary.json").read_text()).get("warmup_s", 0.0)
        for m in ms:
            spec = m.series
            if not (ts["scope"] == spec["scope"]).any():
                raise CatalogError(
                    f"{entry.id}: metric {m.name}: run {run['run']} has no time series at scope {spec['scope']!r} "
                    f"(has: {', '.join(sorted(set(ts['scope']))) or 'none'}); the runs must set run.sample_interval, "
                    "and run.sample_scopes, if given, must include the scope"
                )
            common = dict(metric=spec["metric"], warmup_s=float(warmup), during=m.during, when=m.when)
            if m.kind == "interval_ratio":
                kept = interval_ratios(
                    ts, scope=spec["scope"], numerator=spec["numerator"], denominator=spec["denominator"], **common
                )
            else:
                kept = interval_values(ts, scope=spec["scope"], classes=spec["class"], **common)
            values[m.name].append(reduce_intervals(kept, m.percentile, m.within) * m.scale)
    return {name: pd.Series(v, index=runs.index, dtype=float) for name, v in values.items()}


def _transfers(entry: Entry, runs: pd.DataFrame, runs_dir: Path | None) -> pd.DataFrame:
    """The file transfers of every run (`runs_dir/<run>/transfers.parquet`)
    that started after the run's warm-up, with a `run` column; read only for
    entries with a transfers metric."""
    if not any(m.kind == "column" and m.table == "transfers" for m in entry.metrics.values()):
        return pd.DataFrame()
    if runs_dir is None:
        raise CatalogError(f"{entry.id}: transfer metrics need the sweep's run directories")
    frames = []
    for _, run in runs.iterrows():
        d = Path(runs_dir) / run["run"]
        t = pd.read_parquet(d / "transfers.parquet")
        warmup = run.get("warmup_s")
        if warmup is None or pd.isna(warmup):
            warmup = json.loads((d / "summary.json").read_text()).get("warmup_s", 0.0)
        frames.append(t[t["start_s"] >= float(warmup)].assign(run=run["run"]))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _expr_values(entry: Entry, m: Metric, table: pd.DataFrame) -> pd.Series:
    """An expr metric, evaluated per run over the columns it reads."""
    from phblab.expr import evaluate

    out = []
    for _, row in table.iterrows():
        env = {name: float(row[col]) for name, col in m.inputs.items()}
        try:
            v = evaluate(m.expr, env)
        except ArithmeticError:
            v = math.nan  # a division by zero or an overflow: no value for this run
        except (ValueError, TypeError) as e:
            raise CatalogError(f"{entry.id}: metric {m.name}: expr {m.expr!r}: {e}") from None
        if isinstance(v, complex):
            v = math.nan  # a negative number to a fractional power
        if not _number(v):
            raise CatalogError(f"{entry.id}: metric {m.name}: expr {m.expr!r} gave {v!r}, not a number")
        out.append(float(v) * m.scale)
    return pd.Series(out, index=table.index, dtype=float)


def per_run_values(
    entry: Entry, data: Mapping[str, pd.DataFrame], runs_dir: str | os.PathLike | None = None
) -> pd.DataFrame:
    """One row per run (grid keys, seed, run) and one column per per-point
    metric, in plan order. `runs_dir` (the sweep's `runs/`) is read only for
    time-series and transfer metrics (`data` may hold the transfers, with a
    `run` column, instead)."""
    runs = data["runs"].reset_index(drop=True)
    keys = list(entry.grid)
    out = runs[[*keys, "seed", "run"]].copy()
    runs_path = Path(runs_dir) if runs_dir is not None else None
    ts_values = _timeseries_values(entry, runs, runs_path)
    if "transfers" not in data:
        data = {**data, "transfers": _transfers(entry, runs, runs_path)}
    for name in metric_order(entry.metrics, entry.id):
        m = entry.metrics[name]
        if m.kind == "column":
            if m.table not in data:
                raise CatalogError(f"metric {m.name}: the sweep's dataset has no {m.table!r} table")
            out[m.name] = _column_values(entry, m, data[m.table], out)
        elif m.kind in TIMESERIES_KINDS:
            out[m.name] = ts_values[m.name]
        elif m.kind == "ratio":
            num, den = m.ratio
            out[m.name] = out[num] / out[den].where(out[den] != 0, np.nan) * m.scale
        elif m.kind == "expr":
            out[m.name] = _expr_values(entry, m, out)
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
            cache[sig] = (
                fit_power_law(d[m.x[0]].astype(float), d[m.x[1]].astype(float), d["mean"].astype(float)),
                len(d),
            )
        fit, n = cache[sig]
        if m.param == "c":
            out[m.name] = {"mean": fit.c, "ci_low": math.nan, "ci_high": math.nan, "n": n}
        else:
            ci = fit.a_ci if m.param == "a" else fit.b_ci
            out[m.name] = {"mean": getattr(fit, m.param), "ci_low": ci[0], "ci_high": ci[1], "n": n}
    return out


# ---------------------------------------------------------------- comparison


class _Verdict:
    """What both kinds of check share: coordinates (`coords`), `passed`, and
    the head of their one-line message."""

    kind: str
    coords: dict
    source: str
    ref: str

    @property
    def passed(self) -> bool:
        raise NotImplementedError

    def where(self) -> str:
        return _coords_text(self.coords)

    def _head(self, what: str) -> str:
        at = f" at {self.where()}" if self.coords else ""
        return f"{'PASS' if self.passed else 'FAIL'} {what}{at}"

    def _located(self) -> dict:
        """The columns every row has after its first two: the coordinates,
        their text, and where the checked value comes from."""
        return {
            **{f"at.{k}": v for k, v in self.coords.items()},
            "where": self.where(),
            "source": self.source,
            "ref": self.ref,
        }


@dataclass
class Check(_Verdict):
    """A value check: ours (the mean over the seeds) against an expected
    value, within a tolerance."""

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
    kind = "value"

    @property
    def gap(self) -> float:
        return self.ours - self.expected

    @property
    def rel_gap(self) -> float:
        return self.gap / self.expected if self.expected else math.nan

    @property
    def passed(self) -> bool:
        return math.isfinite(self.ours) and abs(self.gap) <= self.tol_abs * (1 + 1e-12)

    def message(self) -> str:
        ci = f" [{_fmt(self.ci_low)}, {_fmt(self.ci_high)}]" if math.isfinite(self.ci_low) else ""
        rel = f" ({100 * self.rel_gap:+.1f}%)" if math.isfinite(self.rel_gap) else ""
        verdict = "within" if self.passed else "exceeds"
        what = f"{self.source} ({self.ref})" if self.ref else self.source
        unit = f" {self.unit}" if self.unit else ""
        return (
            f"{self._head(self.metric)}: ours {_fmt(self.ours)}{ci}{unit}, "
            f"{what} {_fmt(self.expected)}: gap {self.gap:+.4g}{rel} {verdict} tolerance {self.tolerance}"
        )

    def row(self) -> dict:
        return {
            "kind": self.kind,
            "metric": self.metric,
            **self._located(),
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


@dataclass
class SideValue:
    """One side of a claim check, evaluated: the metric's mean over the
    seeds at `at` (or a constant: metric None), times `scale`."""

    metric: str | None
    at: dict
    scale: float
    mean: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    n: int = 0
    unit: str = ""

    @property
    def value(self) -> float:
        return self.scale * self.mean

    def row(self, side: str) -> dict:
        return {
            f"{side}_metric": self.metric or "",
            f"{side}_at": _coords_text(self.at),
            f"{side}_scale": self.scale,
            f"{side}_mean": self.mean,
            f"{side}_ci_low": self.ci_low,
            f"{side}_ci_high": self.ci_high,
            f"{side}_n": self.n,
            f"{side}_unit": self.unit,
            side: self.value,
        }


@dataclass
class ClaimCheck(_Verdict):
    """One check of a claim: `left op right` on the means, at the claim's
    `over` coordinates `coords`."""

    text: str
    source: str
    ref: str
    coords: dict
    op: str
    left: SideValue
    right: SideValue
    kind = "claim"

    @property
    def passed(self) -> bool:
        left, right = self.left.value, self.right.value
        return math.isfinite(left) and math.isfinite(right) and CLAIM_OPS[self.op](left, right)

    @property
    def margin(self) -> float:
        """left − right: how far the left side is above the right."""
        return self.left.value - self.right.value

    def label(self) -> str:
        """ "claim (Fig. 25)", "claim (measured, phblab 0.1.0)"."""
        what = claim_source(self.row())
        return f"claim ({what})" if what else "claim"

    def message(self) -> str:
        return f"{self._head(self.label())}: {self.text}: ours {claim_relation(self.row())}"

    def row(self) -> dict:
        return {
            "kind": self.kind,
            "text": self.text,
            **self._located(),
            "op": self.op,
            **self.left.row("left"),
            **self.right.row("right"),
            "margin": self.margin,
            "passed": self.passed,
        }


def _coords_text(coords: Mapping) -> str:
    return ", ".join(f"{k}={_fmt(v)}" for k, v in coords.items())


def _fmt(v: Any) -> str:
    if v is None:
        return "nan"
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else "nan"
    return str(v)


def _side_text(row: Mapping, side: str, ci: bool, unit: str) -> str:
    """'0.99 × tcp_throughput[scheduler=fifo] 5.13 = 5.079' from a claim row."""
    u = f" {unit}" if unit else ""
    mean = row.get(f"{side}_mean")
    if not row.get(f"{side}_metric"):
        return f"{_fmt(mean)}{u}"
    at = row.get(f"{side}_at")
    name = f"{row[f'{side}_metric']}[{at}]" if at else row[f"{side}_metric"]
    lo, hi = row.get(f"{side}_ci_low"), row.get(f"{side}_ci_high")
    interval = f" [{_fmt(lo)}, {_fmt(hi)}]" if ci and isinstance(lo, (int, float)) and math.isfinite(lo) else ""
    scale = row.get(f"{side}_scale", 1.0)
    if scale == 1:
        return f"{name} {_fmt(mean)}{interval}{u}"
    return f"{_fmt(float(scale))} × {name} {_fmt(mean)}{interval} = {_fmt(row.get(side))}{u}"


def claim_source(row: Mapping) -> str:
    """A claim's source as shown: its ref for a paper ("Fig. 25"), else
    "measured, <ref>"."""
    if row.get("source", "paper") == "paper":
        return row.get("ref") or ""
    return ", ".join(x for x in (row.get("source"), row.get("ref")) if x)


def claim_relation(row: Mapping, ci: bool = False) -> str:
    """A claim check's comparison as text, from its row (`ClaimCheck.row()`
    or comparison.json): 'tcp[scheduler=bpr_plc] 5.11 >= 0.99 ×
    tcp[scheduler=fifo] 5.13 = 5.079 Mb/s'; `ci` adds each mean's 95% CI."""
    lu, ru = row.get("left_unit") or "", row.get("right_unit") or ""
    same = lu == ru
    left = _side_text(row, "left", ci, "" if same else lu)
    right = _side_text(row, "right", ci, "" if same else ru)
    return f"{left} {row.get('op')} {right}{' ' + lu if same and lu else ''}"


def tally(checks: Sequence[Mapping | _Verdict]) -> str:
    """'2/3 values within tolerance, 4/4 claims hold' for checks or their rows."""
    counts = {"value": [0, 0], "claim": [0, 0]}
    for c in checks:
        kind, ok = (c.get("kind", "value"), c.get("passed")) if isinstance(c, Mapping) else (c.kind, c.passed)
        counts[kind][0] += bool(ok)
        counts[kind][1] += 1
    parts = []
    if counts["value"][1] or not counts["claim"][1]:
        parts.append(f"{counts['value'][0]}/{counts['value'][1]} values within tolerance")
    if counts["claim"][1]:
        parts.append(f"{counts['claim'][0]}/{counts['claim'][1]} claims hold")
    return ", ".join(parts)


def _point(pstats: pd.DataFrame, entry: Entry, metric: str, coords: Mapping) -> tuple[float, float, float, int]:
    """(mean, ci_low, ci_high, n) of a per-point metric at grid coordinates."""
    d = pstats[pstats.metric == metric]
    for k, v in coords.items():
        d = d[[_same(v, g) for g in d[k]]]
    if d.empty:
        raise CatalogError(f"{entry.id}: no results for {metric} at {coords}")
    r = d.iloc[0]
    return float(r["mean"]), float(r["ci_low"]), float(r["ci_high"]), int(r["n"])


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
                ours, lo, hi, n = _point(pstats, entry, m.name, coords)
            else:
                f = fits[m.name]
                ours, lo, hi, n = f["mean"], f["ci_low"], f["ci_high"], f["n"]
            tol_abs = tol * abs(expected) if kind == "rel" else tol
            tol_str = tol_text if isinstance(tol_text, str) else f"±{tol_text:g}{(' ' + m.unit) if m.unit else ''}"
            checks.append(Check(e.metric, coords, e.source, e.ref, expected, tol_str, tol_abs, ours, lo, hi, n, m.unit))
    return checks


def check_claims(entry: Entry, pstats: pd.DataFrame) -> list[ClaimCheck]:
    """One check per claim and combination of its `over` values, in order."""
    checks = []
    for c in entry.claims:
        units = [entry.metrics[s.metric].unit for s in (c.left, c.right) if s.metric]
        for combo in c.combinations():
            sides = []
            for s in (c.left, c.right):
                if s.metric is None:
                    sides.append(SideValue(None, {}, 1.0, s.value, unit=units[0]))
                else:
                    mean, lo, hi, n = _point(pstats, entry, s.metric, {**combo, **s.at})
                    sides.append(
                        SideValue(s.metric, dict(s.at), s.scale, mean, lo, hi, n, entry.metrics[s.metric].unit)
                    )
            checks.append(ClaimCheck(c.text, c.source, c.ref, combo, c.op, sides[0], sides[1]))
    return checks


# ----------------------------------------------------------------- reproduce


def point_table(entry: Entry, pstats: pd.DataFrame) -> dict:
    """`[reproduce.table]` filled in: {"title", "keys", "metrics": [{name,
    label, unit}], "rows": [{grid key: value, ..., metric: mean,
    "<metric>_ci_low", "<metric>_ci_high"}]}, one row per grid point that
    matches its `where`, in grid order; {} when the entry has no table."""
    t = entry.table
    if not t:
        return {}
    keys = list(entry.grid)
    rows = []
    for values in itertools.product(*entry.grid.values()) if keys else [()]:
        coords = dict(zip(keys, values, strict=True))
        if not all(any(_same(coords[k], w) for w in ws) for k, ws in t["where"].items()):
            continue
        row: dict = dict(coords)
        for name in t["metrics"]:
            mean, lo, hi, _ = _point(pstats, entry, name, coords)
            row.update({name: mean, f"{name}_ci_low": lo, f"{name}_ci_high": hi})
        rows.append(row)
    metrics = [{"name": n, "label": entry.metrics[n].label, "unit": entry.metrics[n].unit} for n in t["metrics"]]
    return {"title": t["title"], "keys": keys, "metrics": metrics, "rows": rows}


def format_table(table: Mapping) -> list[str]:
    """The lines `format_outcome` prints for a point table."""
    if not table or not table.get("rows"):
        return []
    lines = [f"  table{': ' + table['title'] if table.get('title') else ''}"]
    names = [m["name"] for m in table["metrics"]]
    for row in table["rows"]:
        at = _coords_text({k: row[k] for k in table["keys"]}) or "the point"
        lines.append(f"    {at}: " + ", ".join(f"{n} {_fmt(row[n])}" for n in names))
    return lines


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
    reruns: list = field(default_factory=list)  # sweep.Rerun: runs that failed verification
    table: dict = field(default_factory=dict)
    backend: str = "simulate"
    congestion: str | None = None  # an emulated reproduction's congestion control

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def to_json(self) -> dict:
        e = self.entry
        return {
            "id": e.id,
            "title": e.title,
            "kind": e.kind,
            "paper": e.paper,
            "scenario": str(e.scenario_path),
            "entry": str(e.path),
            "assumptions": e.assumptions,
            "notes": e.notes,
            "sweep": {**e.sweep, "seeds": self.seeds or e.sweep.get("seeds", 1)},
            "metrics": {m.name: _metric_json(m) for m in e.metrics.values()},
            "claims": [
                {
                    "text": c.text,
                    "ref": c.ref,
                    "source": c.source,
                    "over": c.over,
                    "op": c.op,
                    "left": _side_json(c.left),
                    "right": _side_json(c.right),
                }
                for c in e.claims
            ],
            "phblab_version": _core.version(),
            "backend": self.backend,
            **({"congestion_control": self.congestion} if self.congestion else {}),
            "runs": self.runs,
            "ran": self.ran,
            "wall_time_s": self.wall_time_s,
            "passed": self.passed,
            "checks": [c.row() for c in self.checks],
            "table": self.table,
            "plots": [str(p.relative_to(self.dir)) for p in self.plots],
        }


def _metric_json(m: Metric) -> dict:
    doc = {"label": m.label, "unit": m.unit, "kind": m.kind}
    if m.fit:
        doc.update(fit=m.fit, param=m.param)
    if m.expr is not None:
        doc.update(expr=m.expr, **({"params": m.params} if m.params else {}))
    if m.series is not None:
        doc[m.kind] = m.series
        reduction = {"percentile": m.percentile, "within": m.within, "during": m.during, "when": m.when}
        doc.update({k: v for k, v in reduction.items() if v is not None and v != []})
    return doc


def _side_json(s: Side) -> dict:
    if s.metric is None:
        return {"value": s.value}
    return {"metric": s.metric, "at": s.at, "scale": s.scale}


def entry_dir(entry: Entry, results: str | os.PathLike = DEFAULT_RESULTS, backend: str = "simulate") -> Path:
    """Where an entry's reproduction goes: `results/<id>`, or
    `results/<id>-emulate` for an emulated one."""
    return Path(results) / (entry.id if backend == "simulate" else f"{entry.id}-{backend}")


def check_backend(entry: Entry, backend: str) -> None:
    """CatalogError unless the entry allows `backend` (`[reproduce].backends`)."""
    if backend not in BACKENDS:
        raise CatalogError(f"backend {backend!r}: one of {', '.join(BACKENDS)}")
    if backend not in entry.backends:
        allowed = ", ".join(f'"{b}"' for b in entry.backends)
        raise CatalogError(
            f"{entry.id} does not allow the {backend} backend: its [reproduce].backends is [{allowed}] "
            f'({entry.path}; add "{backend}" there if the entry can run that way)'
        )


def reproduce(
    entry: Entry,
    results: str | os.PathLike = DEFAULT_RESULTS,
    jobs: int | None = None,
    client: Any = None,
    seeds: int | Sequence[int] | None = None,
    progress: bool = False,
    backend: str = "simulate",
    congestion: str | None = None,
) -> Outcome:
    """Runs an entry's sweep (reusing complete runs in its directory,
    `results/<id>/sweep`), computes its metrics, compares them and plots.
    Writes `results/<id>/comparison.json` and `.csv` and the plots.

    `backend="emulate"` (for an entry whose `backends` allow it) runs the
    sweep on real Linux TCP (`phblab.sweep`, one run at a time, with the
    congestion control `congestion`) into `results/<id>-emulate/`."""
    from phblab.sweep import sweep

    check_backend(entry, backend)
    start = time.perf_counter()
    d = entry_dir(entry, results, backend)
    outdir.claim(d, "reproduction")
    with outdir.lock(d, "reproduction"):
        sw = sweep(
            entry.scenario_path,
            grid=entry.grid,
            seeds=seeds if seeds is not None else entry.sweep.get("seeds", 1),
            jobs=jobs,
            out=d / "sweep",
            client=client,
            overrides=entry.sweep.get("overrides"),
            set=entry.sweep.get("set"),
            progress=progress,
            backend=backend,
            congestion=congestion,
        )
        data = {
            "classes": sw.classes,
            "flows": sw.flows,
            "delay_ratios": sw.delay_ratios,
            "counters": sw.counters,
            "runs": sw.runs,
        }
        per_run = per_run_values(entry, data, sw.dir / "runs")
        pstats = point_stats(entry, per_run)
        fits = fitted(entry, pstats)
        checks = compare(entry, pstats, fits) + check_claims(entry, pstats)
        with outdir.writing(d, "reproduction") as staging:
            plots = [d / p.relative_to(staging) for p in plot_entry(entry, pstats, staging)]
            outcome = Outcome(
                entry,
                checks,
                d,
                plots,
                len(sw.runs),
                sw.ran,
                time.perf_counter() - start,
                pstats,
                list(sw.seeds),
                sw.reruns,
                point_table(entry, pstats),
                sw.backend,
                sw.congestion,
            )
            text = json.dumps(outcome.to_json(), indent=2, default=_json_default) + "\n"
            (staging / "comparison.json").write_text(text)
            pd.DataFrame([c.row() for c in checks]).to_csv(staging / "comparison.csv", index=False)
            per_run.to_csv(staging / "per_run.csv", index=False)
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
    claimed = [s.metric for c in entry.claims for s in (c.left, c.right) if s.metric]
    names = entry.plot.get("metrics") or list(
        dict.fromkeys([*(e.metric for e in entry.expect if entry.metrics[e.metric].per_point), *claimed])
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
        shown: set = set()
        for e in entry.expect:
            if e.metric != name:
                continue
            for p in e.points:
                kind, tol = parse_tolerance(p.get("tolerance", e.tolerance), entry.id)
                v = float(p["value"])
                err = tol * abs(v) if kind == "rel" else tol
                key = tuple(p[k] for k in by)
                colour = next(
                    (c for k, c in colours.items() if all(_same(a, b) for a, b in zip(k, key, strict=True))), "black"
                )
                label = f"{e.source}{' (' + e.ref + ')' if e.ref else ''} ± tolerance"
                xpos = xs_of[next(g for g in xs_of if _same(g, p[x]))] + (0.12 if cats else 0.0)
                ax.errorbar(
                    [xpos],
                    [v],
                    yerr=[[err], [err]],
                    marker=markers[e.source],
                    mfc="none",
                    color=colour,
                    capsize=3,
                    linestyle="none",
                    label=None if label in shown else label,
                )
                shown.add(label)
        pl._x_axis(ax, x, xunit, cats, xs_of, bool(entry.plot.get("logx")))
        if entry.plot.get("logy"):
            ax.set_yscale("log")
        ylabel = m.label or m.name
        ax.set_ylabel(f"{ylabel} ({m.unit})" if m.unit else ylabel)
        n = int(d["n"].max()) if len(d) else 0
        expected = "; open markers: expected" if shown else ""
        ax.set_title(f"{entry.id}: {m.name} — lines: ours (mean, 95% CI, {n} seeds){expected}", fontsize=8)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, title=", ".join(by) if by else None, title_fontsize=7)
        ax.grid(True, alpha=0.3)
        paths = pl.save(fig, out_dir / f"{pl._safe(name)}")
        pngs.append(paths[0])
    return pngs


def format_outcome(outcome: Outcome) -> str:
    e = outcome.entry
    lines = [f"{e.id}: {e.title}" + (f" [{e.kind}]" if e.kind != "reproduction" else "")]
    if e.paper:
        lines.append(f"  paper: {e.paper}")
    if e.assumptions:
        lines.append("  assumptions:")
        lines += [f"    - {a}" for a in e.assumptions]
    if e.notes:
        lines.append(f"  notes: {e.notes}")
    grid = ", ".join(f"{k} ∈ {{{', '.join(_fmt(v) for v in vs)}}}" for k, vs in e.grid.items())
    how = f" emulated (TCP congestion control {outcome.congestion})" if outcome.backend == "emulate" else ""
    lines.append(
        f"  sweep: {grid or 'one point'}; {outcome.runs} runs{how} ({outcome.ran} run now, the rest reused) "
        f"in {outcome.wall_time_s:.1f} s; results in {outcome.dir}/"
    )
    lines += [f"  note: {r}" for r in outcome.reruns]
    for c in outcome.checks:
        lines.append(f"  {c.message()}")
    lines += format_table(outcome.table)
    verdict = "PASS" if outcome.passed else "FAIL"
    lines.append(f"  {verdict}: {tally(outcome.checks)}")
    return "\n".join(lines)


def list_entries(entries: Sequence[Entry]) -> str:
    if not entries:
        return "(no catalog entries)"
    width = max(len(e.id) for e in entries)
    out = []
    for e in entries:
        n = sum(len(x.points) for x in e.expect)
        sources = "/".join(sorted({x.source for x in e.expect}))
        checks = sum(len(c.combinations()) for c in e.claims)
        what = [f"{n} {sources} values"] if n else []
        if e.claims:
            what.append(f"{len(e.claims)} claim{'s' if len(e.claims) > 1 else ''} ({checks} checks)")
        points = math.prod(len(v) for v in e.grid.values()) if e.grid else 1
        seeds = e.sweep.get("seeds", 1)
        nseeds = seeds if isinstance(seeds, int) else len(seeds)
        kind = f" ({e.kind})" if e.kind != "reproduction" else ""
        backends = f"; {' and '.join(e.backends)}" if e.backends != DEFAULT_BACKENDS else ""
        out.append(
            f"{e.id.ljust(width)}  {e.title}{kind}  "
            f"[{', '.join(what) or 'no values'}; {points} points × {nseeds} seeds{backends}]"
        )
    return "\n".join(out)
