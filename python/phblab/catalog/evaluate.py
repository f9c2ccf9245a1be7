"""Metrics from a sweep's tables: per run (column aggregates, ratios,
expressions, time-series reductions, transfer percentiles), their means and
CIs per grid point, fitted parameters, and the point table."""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from phblab import stats
from phblab.catalog.parse_metrics import is_template, metric_order, percentile_of
from phblab.catalog.schema import CLAIM_OPS, TIMESERIES_KINDS, CatalogError, Entry, Metric, is_number, same


def _aggregate(df: pd.DataFrame, column: str, agg: str) -> pd.Series:
    """`column` of `df` aggregated per run (`count`: rows; `pNN`: the NN-th
    percentile, interpolated linearly between order statistics)."""
    groups = df.groupby("run", sort=False)
    if agg == "count":
        return groups.size()
    q = percentile_of(agg)
    if q is not None:
        return groups[column].quantile(q / 100)
    return groups[column].agg(agg)


def _filter(df: pd.DataFrame, where: Mapping[str, Any], what: str) -> pd.DataFrame:
    """The rows of `df` whose column k equals v (or one of the list v) for
    every k, v of `where`; numbers compare within a relative 1e-9 (so
    `timescale_s = 0.4` finds 400 ms)."""
    for k, v in where.items():
        if k not in df.columns:
            raise CatalogError(f"metric filter: no column {k!r} in {what}")
        values = v if isinstance(v, list) else [v]
        col = df[k]
        if pd.api.types.is_numeric_dtype(col) and all(is_number(x) for x in values):
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
    if not any(is_template(v) for v in where.values()):
        return dict(where)
    params = {k: row[k] for k in row.index if isinstance(k, str) and k.isidentifier()}
    return {k: render(v, params) if is_template(v) else v for k, v in where.items()}


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
        if not is_number(v):
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


def point_value(pstats: pd.DataFrame, entry: Entry, metric: str, coords: Mapping) -> tuple[float, float, float, int]:
    """(mean, ci_low, ci_high, n) of a per-point metric at grid coordinates."""
    d = pstats[pstats.metric == metric]
    for k, v in coords.items():
        d = d[[same(v, g) for g in d[k]]]
    if d.empty:
        raise CatalogError(f"{entry.id}: no results for {metric} at {coords}")
    r = d.iloc[0]
    return float(r["mean"]), float(r["ci_low"]), float(r["ci_high"]), int(r["n"])


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
        if not all(any(same(coords[k], w) for w in ws) for k, ws in t["where"].items()):
            continue
        row: dict = dict(coords)
        for name in t["metrics"]:
            mean, lo, hi, _ = point_value(pstats, entry, name, coords)
            row.update({name: mean, f"{name}_ci_low": lo, f"{name}_ci_high": hi})
        rows.append(row)
    metrics = [{"name": n, "label": entry.metrics[n].label, "unit": entry.metrics[n].unit} for n in t["metrics"]]
    return {"title": t["title"], "keys": keys, "metrics": metrics, "rows": rows}


def checked_points(entry: Entry, metric: str) -> list[dict]:
    """The grid points where `metric` is checked (its expected points, the
    claims' sides that read it), in order, each once; every grid point if
    it is checked nowhere."""
    points: list[dict] = []
    for e in entry.expect:
        if e.metric == metric:
            points += [{k: p[k] for k in entry.grid if k in p} for p in e.points]
    for c in entry.claims:
        for s in (c.left, c.right):
            if s.metric == metric:
                points += [{**combo, **s.at} for combo in c.combinations()]
    if not points and entry.metrics[metric].per_point:
        points = [dict(zip(entry.grid, vs, strict=True)) for vs in itertools.product(*entry.grid.values())]
    unique: list[dict] = []
    for p in points:
        ordered = {k: p[k] for k in entry.grid if k in p}
        if not any(all(same(ordered[k], u[k]) for k in ordered) for u in unique):
            unique.append(ordered)
    return unique or [{}]


def sensitivity_rows(entry: Entry, pstats: pd.DataFrame, fits: Mapping[str, dict]) -> list[dict]:
    """Each sensitivity row (a metric with `sensitivity_of`) beside its
    headline at the points where the headline is checked: [{"metric", "of",
    "label", "unit", "definition", "measured_at", "rows": [{"at": {grid
    point}, "headline": {mean, ci_low, ci_high}, "sensitivity": {...}}]}]."""

    def value(name: str, coords: Mapping) -> dict:
        if entry.metrics[name].per_point:
            mean, lo, hi, _ = point_value(pstats, entry, name, coords)
        else:
            f = fits[name]
            mean, lo, hi = f["mean"], f["ci_low"], f["ci_high"]
        return {"mean": mean, "ci_low": lo, "ci_high": hi}

    out = []
    for m in entry.metrics.values():
        if m.sensitivity_of is None:
            continue
        rows = [
            {"at": coords, "headline": value(m.sensitivity_of, coords), "sensitivity": value(m.name, coords)}
            for coords in checked_points(entry, m.sensitivity_of)
        ]
        out.append(
            {
                "metric": m.name,
                "of": m.sensitivity_of,
                "label": m.label,
                "unit": m.unit,
                "definition": m.definition,
                "measured_at": m.measured_at,
                "rows": rows,
            }
        )
    return out
