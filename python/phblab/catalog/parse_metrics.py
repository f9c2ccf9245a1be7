"""Parsing `[reproduce.metrics.NAME]`: the six kinds of metric (column,
ratio, expr, interval_ratio, interval_value, fit), each checked against the
entry's grid and scenario, and the order in which metrics that read each
other are computed."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from typing import Any

from phblab.catalog.schema import (
    ADDITIVE_SERIES,
    AGGREGATES,
    CLAIM_OPS,
    CLASS_SERIES,
    COLUMN_TABLES,
    DESCRIPTIVE_KEYS,
    METRIC_KEYS,
    PERCENTILE_AGG,
    TIMESERIES_KINDS,
    CatalogError,
    Metric,
    check_keys,
    is_number,
    need,
)


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

    need(
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
    check_keys(m, {"expr", "params", "scale", "unit", "label", *DESCRIPTIVE_KEYS}, mw)
    params = m.get("params", {})
    need(isinstance(params, dict), f"{mw}.params", 'a table {name = "grid key"}')
    for alias, key in params.items():
        need(alias.isidentifier(), f"{mw}.params", f"{alias!r} is not a name an expression can use")
        need(key in grid, f"{mw}.params", f"{alias} = {key!r}: not a grid key; grid keys: {', '.join(grid) or 'none'}")
        need(
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
            need(name not in grid, mw, f"{name!r} is both a metric and a grid key; rename one")
            need(name != metric.name, mw, f"expr {m['expr']!r} reads the metric itself")
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
            need(
                all(is_number(v) for v in grid[col]),
                mw,
                f"grid key {col!r} has values that are not numbers; an expr can only use numeric grid keys",
            )
        metric.inputs[name] = col
    metric.uses = tuple(uses)


def _series_classes(value: Any, classes: Mapping, where: str, what: str) -> list[str]:
    """A class name or a non-empty list of them, each a class of the scenario."""
    names = [value] if isinstance(value, str) else value
    need(
        isinstance(names, list) and names and all(isinstance(c, str) for c in names),
        where,
        f"{what} must be a class name or a list of class names",
    )
    for c in names:
        need(
            c in classes, where, f"{what} {c!r} is not a class of the scenario; classes: {', '.join(classes) or 'none'}"
        )
    return names


def _series_metric(name: Any, classes: list[str], where: str) -> str:
    need(
        name in CLASS_SERIES,
        where,
        f"metric {name!r}: a per-class time series, one of {', '.join(sorted(CLASS_SERIES))}",
    )
    need(
        len(classes) == 1 or name in ADDITIVE_SERIES,
        where,
        f"a list of classes adds their values up, which only {' and '.join(sorted(ADDITIVE_SERIES))} allow",
    )
    return name


def _parse_timeseries(
    metric: Metric, m: Mapping, scenario: Mapping, directions: Callable[[], set[str] | None], sweep: Mapping, mw: str
) -> None:
    check_keys(
        m,
        {
            *TIMESERIES_KINDS,
            "table",
            "percentile",
            "within",
            "during",
            "when",
            "scale",
            "unit",
            "label",
            *DESCRIPTIVE_KEYS,
        },
        mw,
    )
    kinds = [k for k in TIMESERIES_KINDS if k in m]
    need(
        metric.table == "timeseries",
        mw,
        f'{kinds[0] if kinds else "a time-series metric"} needs table = "timeseries", not {metric.table!r}',
    )
    need(
        len(kinds) == 1,
        mw,
        'table = "timeseries" needs interval_ratio = { scope, numerator, denominator, metric } '
        "or interval_value = { scope, class, metric }",
    )
    kind = kinds[0]
    spec = m[kind]
    iw = f"{mw}.{kind}"
    need(isinstance(spec, dict), iw, "must be a table")
    classes = scenario.get("classes", {})
    if kind == "interval_ratio":
        check_keys(spec, {"scope", "numerator", "denominator", "metric"}, iw)
        spec = {"metric": "delay_mean_s", **spec}
        for k in ("scope", "numerator", "denominator"):
            need(isinstance(spec.get(k), str), iw, f"{k} (a string) is required")
        for k in ("numerator", "denominator"):
            _series_classes(spec[k], classes, iw, k)
        _series_metric(spec["metric"], [spec["numerator"]], iw)
        need(spec["numerator"] != spec["denominator"], iw, "numerator and denominator are the same class")
        metric.interval_ratio = spec
    else:
        check_keys(spec, {"scope", "class", "metric"}, iw)
        spec = {"metric": "delay_mean_s", **spec}
        need(isinstance(spec.get("scope"), str), iw, "scope (a string) is required")
        need("class" in spec, iw, "class (a class name or a list of them) is required")
        spec["class"] = _series_classes(spec["class"], classes, iw, "class")
        _series_metric(spec["metric"], spec["class"], iw)
        metric.interval_value = spec
    scope = spec["scope"]
    if scope != "end-to-end":
        known = directions()
        need(
            "->" in scope and (known is None or scope in known),
            iw,
            f'scope {scope!r}: "end-to-end" or a link direction "A->B" of the scenario\'s links',
        )
    run = scenario.get("run", {})
    need(
        "sample_interval" in run or _overridden(sweep, "run.sample_interval"),
        mw,
        "a time-series metric needs run.sample_interval (in the scenario, or in the sweep's grid, set or overrides)",
    )
    chosen = run.get("sample_scopes")
    if isinstance(chosen, list) and not _overridden(sweep, "run.sample_scopes"):
        need(scope in chosen, iw, f"scope {scope!r} is not among run.sample_scopes ({', '.join(chosen)})")
    need(
        ("percentile" in m) != ("within" in m),
        mw,
        "a time-series metric reduces its intervals with either percentile = P or within = [lo, hi]",
    )
    if "percentile" in m:
        pct = m["percentile"]
        need(is_number(pct) and 0 <= pct <= 100, mw, f"percentile {pct!r}: a number from 0 to 100 is required")
        metric.percentile = float(pct)
    else:
        w = m["within"]
        need(
            isinstance(w, list) and len(w) == 2 and all(is_number(v) for v in w) and w[0] <= w[1],
            f"{mw}.within",
            f"{w!r}: [lo, hi], two numbers with lo <= hi",
        )
        metric.within = (float(w[0]), float(w[1]))
    during = m.get("during", [])
    need(
        isinstance(during, list)
        and all(isinstance(d, list) and len(d) == 2 and all(is_number(v) for v in d) and d[0] < d[1] for d in during),
        f"{mw}.during",
        f"{during!r}: a list of [start, end] spans in seconds, each with start < end",
    )
    metric.during = [(float(a), float(b)) for a, b in during]
    when = m.get("when", [])
    when = [when] if isinstance(when, dict) else when
    need(isinstance(when, list), f"{mw}.when", "a table { class, metric, op, value } or a list of them")
    for k, w in enumerate(when):
        ww = f"{mw}.when[{k}]"
        need(isinstance(w, dict), ww, "must be a table { class, metric, op, value }")
        check_keys(w, {"class", "metric", "op", "value"}, ww)
        if "class" in w:
            cls = _series_classes(w["class"], classes, ww, "class")
        else:
            need(kind == "interval_value", ww, "class is required (an interval_ratio has two)")
            cls = spec["class"]
        need("metric" in w, ww, "metric is required")
        _series_metric(w["metric"], cls, ww)
        need(w.get("op") in CLAIM_OPS, ww, f"op {w.get('op')!r}: one of {', '.join(CLAIM_OPS)}")
        need(is_number(w.get("value")), ww, "value (a number) is required")
        metric.when.append({"class": cls, "metric": w["metric"], "op": w["op"], "value": float(w["value"])})


def parse_metric(
    name: str,
    m: Any,
    metrics_raw: Mapping,
    sweep: Mapping,
    scenario: Mapping,
    directions: Callable[[], set[str] | None],
    mw: str,
) -> Metric:
    need(isinstance(m, dict), mw, "must be a table")
    check_keys(m, METRIC_KEYS, mw)
    kinds = [k for k in ("column", "ratio", "expr", *TIMESERIES_KINDS, "fit") if k in m]
    need(
        len(kinds) <= 1,
        mw,
        f"{' and '.join(kinds)} exclude each other: give one (a column, a ratio, an expr, an interval_ratio, "
        "an interval_value or a fit)",
    )
    kind = kinds[0] if kinds else "column"
    need("params" not in m or kind == "expr", mw, "params (aliases of grid keys) belongs to an expr metric")
    for k in ("percentile", "within", "during", "when"):
        need(
            k not in m or kind in TIMESERIES_KINDS,
            mw,
            f"{k} belongs to a time-series metric (interval_ratio or interval_value)",
        )
    table = m.get("table", "timeseries" if kind in TIMESERIES_KINDS else "flows")
    need(is_number(m.get("scale", 1.0)), mw, f"scale {m.get('scale')!r}: a number")
    for k in DESCRIPTIVE_KEYS:
        need(k not in m or (isinstance(m[k], str) and m[k].strip()), mw, f"{k}: a non-empty string")
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
        definition=m.get("definition", ""),
        measured_at=m.get("measured_at", ""),
        sensitivity_of=m.get("sensitivity_of"),
    )
    grid = sweep["grid"]
    if metric.fit is not None:
        need(metric.fit == "power_law", mw, f'fit {metric.fit!r}: only "power_law" (y = c / (x1^a · x2^b)) is known')
        need(len(metric.x) == 2 and all(x in grid for x in metric.x), mw, "x must name two grid keys")
        need(metric.param in ("a", "b", "c"), mw, 'param must be "a", "b" or "c"')
        need(metric.y is not None, mw, "y must name a per-point metric")
    elif metric.ratio is not None:
        need(len(metric.ratio) == 2, mw, "ratio = [numerator metric, denominator metric]")
    elif metric.expr is not None:
        _parse_expr(metric, m, metrics_raw, grid, mw)
    elif kind in TIMESERIES_KINDS or table == "timeseries":
        _parse_timeseries(metric, m, scenario, directions, sweep, mw)
    else:
        need(
            metric.table in COLUMN_TABLES,
            mw,
            f'table {metric.table!r}: {", ".join(repr(t) for t in COLUMN_TABLES)} or "timeseries"',
        )
        need(isinstance(metric.column, str), mw, "column (a numeric column of the table) is required")
        need(
            metric.agg in AGGREGATES or percentile_of(metric.agg) is not None,
            mw,
            f"agg {metric.agg!r}: one of {', '.join(sorted(AGGREGATES))} or a percentile p0 ... p100 (p10, p90)",
        )
        need(isinstance(m.get("where", {}), dict), f"{mw}.where", "a table {column = value or [values]}")
        for k, v in metric.where.items():
            if is_template(v):
                _template_names(v, grid, f"{mw}.where.{k}")
        if metric.table == "delay_ratios":
            run = scenario.get("run", {})
            need(
                "delay_ratios" in run or _overridden(sweep, "run.delay_ratios"),
                mw,
                'table = "delay_ratios" needs run.delay_ratios in the scenario (or in the sweep\'s set or overrides)',
            )
    return metric


def is_template(v: Any) -> bool:
    return isinstance(v, str) and "{" in v


def _template_names(template: str, grid: Mapping, where: str) -> None:
    """Checks a `where` template: each `{expression}` reads only grid keys
    that are bare names with numeric values."""
    for expr in re.findall(r"\{([^{}]*)\}", template):
        for name in sorted(_expr_names(expr, where)):
            need(
                name in grid and name.isidentifier(),
                where,
                f"template {template!r}: {name!r} is not a grid key; a where template reads the grid point's keys "
                f"({', '.join(k for k in grid if k.isidentifier()) or 'none'})",
            )
            need(
                all(is_number(v) for v in grid[name]),
                where,
                f"template {template!r}: grid key {name!r} has values that are not numbers",
            )


def percentile_of(agg: Any) -> float | None:
    """The percentile an aggregate "pNN" names (0–100), or None."""
    m = PERCENTILE_AGG.fullmatch(agg) if isinstance(agg, str) else None
    q = float(m.group(1)) if m else None
    return q if q is not None and q <= 100 else None


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
