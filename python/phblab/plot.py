"""Plots (matplotlib, Agg backend; each figure written as PNG and SVG).

    plot_metric(sweep_dir, x="qdiscs.bottleneck.max_p", y="delay_mean_s", by="class")
        a metric against a swept parameter, one line per class (and per value
        of any other swept key), mean across seeds with its 95% CI band
    plot_timeseries(run_dir)
        one run's time series: queue length per link, per-class delay and
        throughput (the scenario must set run.sample_interval)
    plot_delay_cdf(run_dir)
        per-class delay distribution from the run's delay percentiles

Units: columns ending in `_s` are drawn in ms, `_bps` in Mb/s, `loss_rate`
in %; a swept value with a unit (`"20ms"`, `"5Mbps"`, `"64KB"`) is drawn as a
number in ms, Mb/s or bytes. Every function returns the written paths
(`out` with suffix .png and .svg; a suffix given in `out` is replaced).

The delay CDF is built from what a run records per class: the mean, the
50th, 95th and 99th percentiles and the maximum of the packets' delays (no
raw samples are kept). It is drawn as the points (p50, 0.5), (p95, 0.95),
(p99, 0.99), (max, 1.0), joined by lines; the lower half of the distribution
is not known and is not drawn.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from phblab import outdir, stats  # noqa: E402

END_TO_END = "end-to-end"

# ---------------------------------------------------------------------- units

_UNIT = re.compile(r"^\s*([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*([A-Za-z%]+)\s*$")
_TIME = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3}  # to ms
_RATE = {"bps": 1e-6, "kbps": 1e-3, "Kbps": 1e-3, "Mbps": 1.0, "Gbps": 1e3}  # to Mb/s
_SIZE = {"B": 1.0, "KB": 1e3, "kB": 1e3, "MB": 1e6, "pkt": 1.0}


def unit_value(v: Any) -> tuple[float, str] | None:
    """A value with a unit as (number, unit shown): "20ms" -> (20.0, "ms")."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v), ""
    m = _UNIT.match(str(v))
    if not m:
        return None
    num, unit = float(m.group(1)), m.group(2)
    for table, shown in ((_TIME, "ms"), (_RATE, "Mb/s")):
        if unit in table:
            return num * table[unit], shown
    if unit in _SIZE:
        return num * _SIZE[unit], "packets" if unit == "pkt" else "bytes"
    return None


def numeric_axis(values: Sequence[Any]) -> tuple[list[float] | None, str]:
    """Values as numbers for an axis, with their unit; (None, "") if they are
    not all numbers (a categorical axis)."""
    conv = [unit_value(v) for v in values]
    if any(c is None for c in conv) or len({c[1] for c in conv}) > 1:
        return None, ""
    return [c[0] for c in conv], conv[0][1] if conv else ""


_LABELS = {
    "throughput_bps": "throughput",
    "goodput_bps": "goodput",
    "loss_rate": "loss rate",
    "delay_mean_s": "mean delay",
    "delay_p50_s": "median delay",
    "delay_p95_s": "95th-percentile delay",
    "delay_p99_s": "99th-percentile delay",
    "delay_max_s": "maximum delay",
    "queue_pkts": "queue length",
    "queue_bytes": "queue length",
    "red_avg": "RED average queue",
}


def metric_scale(column: str) -> tuple[float, str]:
    """(scale, unit) to draw a metric column: seconds in ms, b/s in Mb/s."""
    if column.endswith("_s"):
        return 1e3, "ms"
    if column.endswith("_bps"):
        return 1e-6, "Mb/s"
    if column == "loss_rate":
        return 100.0, "%"
    if column.endswith("_pkts") or column in ("red_avg", "queued_end"):
        return 1.0, "packets"
    if column.endswith("_bytes"):
        return 1.0, "bytes"
    return 1.0, ""


def axis_label(column: str, unit: str | None = None) -> str:
    if unit is None:
        unit = metric_scale(column)[1]
    name = _LABELS.get(column, column)
    return f"{name} ({unit})" if unit else name


# ---------------------------------------------------------------------- output


def _paths(out: str | os.PathLike) -> list[Path]:
    out = Path(out)
    if out.suffix.lower() in (".png", ".svg"):
        out = out.with_suffix("")
    return [out.with_name(out.name + ".png"), out.with_name(out.name + ".svg")]


def save(fig, out: str | os.PathLike) -> list[Path]:
    """Writes `fig` as PNG and SVG (`out` without suffix); closes it."""
    paths = _paths(out)
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    for p in paths:
        tmp = p.with_name(f".{p.name}.tmp-{os.getpid()}{p.suffix}")
        fig.savefig(tmp, dpi=120, bbox_inches="tight", metadata={"Date": None} if p.suffix == ".svg" else None)
        os.replace(tmp, p)
    plt.close(fig)
    return paths


def _save_recorded(fig, out: str | os.PathLike, source: Any) -> list[Path]:
    """`save`, then, if `source` is a directory (a run's or a sweep's) and
    `out` lies in its plots/, records the files there as drawn from its
    tables, so that rewriting them with other tables removes the figures
    (`outdir.record_plots`)."""
    paths = save(fig, out)
    if isinstance(source, (str, os.PathLike)):
        outdir.record_plots(source, paths)
    return paths


# ----------------------------------------------------------- data from a path


def _load_sweep(results: Any):
    from phblab.sweep import Sweep

    if isinstance(results, Sweep):
        return results
    path = Path(results)
    if (path / "sweep.json").is_file():
        return Sweep(path)
    raise FileNotFoundError(f"{path} is not a sweep directory (no sweep.json)")


def _load_run(results: Any):
    """A run's summary, classes and time series: from a `Results`, or a
    results directory (`phblab.load`, which checks its manifest)."""
    from phblab.results import Results, load

    if not isinstance(results, Results):
        results = load(results)
    return results.summary, results.classes, results.timeseries


# -------------------------------------------------------------- metric vs x


def _fmt(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


_LINESTYLES = ["-", "--", ":", "-."]


def class_colours(classes: Iterable[Any]) -> dict:
    """{class: colour}: the default colour cycle in the order given (the
    scenario's declaration order, as the tables list classes), so that a
    class has the same colour in every figure of a run or sweep."""
    cycle = [matplotlib.colors.to_hex(c) for c in plt.rcParams["axes.prop_cycle"].by_key()["color"]]
    return {c: cycle[i % len(cycle)] for i, c in enumerate(dict.fromkeys(classes))}


def draw_lines(
    ax,
    data: pd.DataFrame,
    x: str,
    line_keys: Sequence[str],
    scale: float,
    xs_of: Mapping[Any, float] | None,
    label_prefix: str = "",
    colour_of: Mapping[Any, str] | None = None,
) -> dict:
    """Draws one line (mean) with a CI band (or error bars on a categorical
    axis) per group of `line_keys`; `data` has x, mean, ci_low, ci_high.
    With `colour_of` ({class: colour}) and "class" among `line_keys`, a
    line's colour is its class' and the other keys vary the line style.
    Returns {group key: colour}."""
    colours = {}
    by_class = colour_of is not None and "class" in line_keys
    styles: dict = {}
    groups = data.groupby(list(line_keys), sort=False, dropna=False) if line_keys else [((), data)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(
            f"{_fmt(v)}" if k in ("class", "group", "scope") else f"{k}={_fmt(v)}"
            for k, v in zip(line_keys, key, strict=True)
        )
        label = (label_prefix + label) if label else (label_prefix.rstrip(": ") or None)
        xs = [xs_of[v] for v in g[x]] if xs_of is not None else list(g[x])
        order = np.argsort(xs, kind="stable")
        xs = np.asarray(xs, float)[order]
        mean = g["mean"].to_numpy(float)[order] * scale
        lo = g["ci_low"].to_numpy(float)[order] * scale
        hi = g["ci_high"].to_numpy(float)[order] * scale
        categorical = xs_of is not None and getattr(xs_of, "categorical", False)
        style = {}
        if by_class:
            i = list(line_keys).index("class")
            rest = key[:i] + key[i + 1 :]
            style = {"color": colour_of[key[i]], "linestyle": _LINESTYLES[styles.setdefault(rest, len(styles)) % 4]}
        if categorical:
            yerr = np.vstack([mean - lo, hi - mean])
            yerr = np.where(np.isfinite(yerr), yerr, 0)
            style["linestyle"] = "none"
            line = ax.errorbar(xs, mean, yerr=yerr, marker="o", capsize=4, label=label, **style)
            colour = line[0].get_color()
        else:
            (line,) = ax.plot(xs, mean, marker="o", label=label, **style)
            colour = line.get_color()
            if np.isfinite(lo).any():
                ax.fill_between(xs, lo, hi, color=colour, alpha=0.2, linewidth=0)
        colours[key] = colour
    return colours


class _Positions(dict):
    categorical = True


def x_positions(values: Iterable[Any]) -> tuple[dict | None, str, list]:
    """How to place x values: ({value: position}, unit, category labels)."""
    uniq = list(dict.fromkeys(values))
    nums, unit = numeric_axis(uniq)
    if nums is not None:
        return dict(zip(uniq, nums, strict=True)), unit, []
    pos = _Positions({v: float(i) for i, v in enumerate(uniq)})
    return pos, "", [_fmt(v) for v in uniq]


def plot_metric(
    results: Any,
    x: str | None = None,
    y: str = "delay_mean_s",
    by: str | Sequence[str] | None = "class",
    scope: str | None = END_TO_END,
    table: str | None = None,
    where: Mapping[str, Any] | None = None,
    out: str | os.PathLike | None = None,
    logx: bool = False,
    logy: bool = False,
    title: str | None = None,
) -> list[Path]:
    """A metric of a sweep against a swept key, mean across seeds with 95% CI.

    Args:
        results: a sweep directory or a `Sweep`.
        x: the swept key for the x axis (default: the first grid key).
        y: a numeric column of `classes` (per scope and class) or of the
            per-group flow totals (`table="groups"`, e.g. goodput_bps).
        by: column(s) giving one line each ("class", "group", "scope"); the
            other swept keys always give separate lines too.
        scope: the `classes` scope to plot ("end-to-end" or a link "r1->r2");
            None keeps all (add "scope" to `by`).
        table: "classes" or "groups"; default: classes if it has `y`.
        where: further filters {column: value}.
        out: output path without suffix (default: DIR/plots/<y>-vs-<x>).
    """
    sw = _load_sweep(results)
    keys = sw.keys
    if not keys:
        raise ValueError("the sweep has no grid keys to plot against")
    x = x or keys[0]
    if x not in keys:
        raise ValueError(f"x={x!r} is not a swept key; the sweep's keys are {', '.join(keys)}")
    by = [by] if isinstance(by, str) else list(by or [])
    if table is None:
        table = "classes" if y in sw.classes.columns else "groups"
    if table == "classes":
        df = sw.classes
        if scope is not None:
            if scope not in set(df.scope):
                raise ValueError(f"scope {scope!r} not in the results; scopes: {', '.join(dict.fromkeys(df.scope))}")
            df = df[df.scope == scope]
        base = ["scope", "class"]
    elif table == "groups":
        df = stats.flow_groups(sw.flows, by=[*keys, "seed", "run"])
        base = ["group", "class", "transport"]
    else:
        raise ValueError(f"table must be 'classes' or 'groups', not {table!r}")
    if y not in df.columns:
        cols = stats.numeric_metrics(df, [*keys, *base])
        raise ValueError(f"no column {y!r} in {table}; numeric columns: {', '.join(cols)}")
    for k, v in (where or {}).items():
        df = df[df[k] == v]
    if df.empty:
        raise ValueError("nothing to plot: no rows match")
    unknown = [b for b in by if b not in base]
    if unknown:
        raise ValueError(f"by={unknown[0]!r}: one line per value of {', '.join(base)} (or none)")
    summary = stats.summarize(df, by=[*keys, *base], metrics=[y])
    line_keys = [k for k in keys if k != x and summary[k].nunique() > 1] + by
    scale, unit = metric_scale(y)
    xs_of, xunit, cats = x_positions(summary[x])
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    draw_lines(ax, summary, x, line_keys, scale, xs_of, colour_of=class_colours(sw.classes["class"]))
    _x_axis(ax, x, xunit, cats, xs_of, logx)
    if logy:
        ax.set_yscale("log")
    ax.set_ylabel(axis_label(y, unit))
    where_txt = f" at {scope}" if table == "classes" and scope else ""
    n = int(summary["n"].max())
    ax.set_title(
        title or f"{sw.name}: {_LABELS.get(y, y)}{where_txt} (mean, 95% CI over {n} seed{'s' if n != 1 else ''})",
        fontsize=9,
    )
    if line_keys:
        ax.legend(fontsize=8, title=", ".join(k for k in line_keys if k not in ("class", "group", "scope")) or None)
    ax.grid(True, alpha=0.3)
    if out is None:
        out = sw.dir / outdir.PLOTS / f"{_safe(y)}-vs-{_safe(x)}"
    return _save_recorded(fig, out, sw.dir)


def _x_axis(ax, x: str, unit: str, cats: list, xs_of, logx: bool) -> None:
    ax.set_xlabel(f"{x} ({unit})" if unit else x)
    if cats:
        ax.set_xticks(list(xs_of.values()), cats)
        ax.set_xlim(-0.5, len(cats) - 0.5)
    elif logx:
        ax.set_xscale("log")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "plot"


# ----------------------------------------------------------- one run's plots


def plot_timeseries(
    results: Any,
    scopes: Sequence[str] | None = None,
    out: str | os.PathLike | None = None,
) -> list[Path]:
    """A run's time series in three panels: queue length at each link
    direction (`scopes`, default: those whose queue was ever non-empty),
    per-class mean delay end to end, per-class throughput end to end.

    `results` is a `Results` or a run's results directory."""
    summary, classes, ts = _load_run(results)
    colour_of = class_colours(classes["class"])
    if ts is None or ts.empty:
        raise ValueError('the run has no time series: set run.sample_interval in the scenario (e.g. "100ms")')
    queues = ts[ts.metric == "queue_pkts"]
    if scopes is None:
        busy = queues.groupby("scope", sort=False)["value"].max()
        scopes = [s for s, v in busy.items() if v > 0] or list(busy.index[:1])
    fig, axes = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    ax = axes[0]
    for s in scopes:
        q = queues[queues.scope == s]
        ax.plot(q.time_s, q.value, label=f"{s} queue", linewidth=1)
        avg = ts[(ts.metric == "red_avg") & (ts.scope == s)]
        if not avg.empty:
            ax.plot(avg.time_s, avg.value, label=f"{s} RED average", linewidth=1, linestyle="--")
    ax.set_ylabel(axis_label("queue_pkts"))
    if scopes:
        ax.legend(fontsize=8)
    for ax, metric in zip(axes[1:], ["delay_mean_s", "throughput_bps"], strict=True):
        scale, unit = metric_scale(metric)
        d = ts[(ts.metric == metric) & (ts.scope == END_TO_END)]
        for cls, g in d.groupby("class", sort=False):
            ax.plot(g.time_s, g.value * scale, label=str(cls), linewidth=1, color=colour_of.get(cls))
        ax.set_ylabel(f"{axis_label(metric, unit)}, end to end")
        if not d.empty:
            ax.legend(fontsize=8, title="class")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    warm = summary.get("warmup_s") or 0
    if warm:
        for ax in axes:
            ax.axvline(warm, color="grey", linewidth=0.8, linestyle=":")
    axes[-1].set_xlabel("time (s)")
    axes[0].set_title(f"{summary.get('scenario')}, seed {summary.get('seed')} (dotted: end of warm-up)", fontsize=9)
    if out is None:
        out = _default_run_out(results, "timeseries")
    return _save_recorded(fig, out, results)


_PERCENTILES = [("delay_p50_s", 0.5), ("delay_p95_s", 0.95), ("delay_p99_s", 0.99), ("delay_max_s", 1.0)]


def plot_delay_cdf(
    results: Any,
    scope: str = END_TO_END,
    out: str | os.PathLike | None = None,
) -> list[Path]:
    """Per-class delay distribution at `scope` from the run's percentiles
    (see the module's doc: p50, p95, p99 and max; no raw samples)."""
    summary, classes, _ = _load_run(results)
    colour_of = class_colours(classes["class"])
    rows = classes[classes.scope == scope]
    if rows.empty:
        raise ValueError(f"scope {scope!r} not in the results; scopes: {', '.join(dict.fromkeys(classes.scope))}")
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for _, r in rows.iterrows():
        xs = [r[c] * 1e3 for c, _ in _PERCENTILES]
        ps = [p for _, p in _PERCENTILES]
        if not all(math.isfinite(v) for v in xs):
            continue
        (line,) = ax.plot(xs, ps, marker="o", label=str(r["class"]), color=colour_of[r["class"]])
        if math.isfinite(r.get("delay_mean_s", math.nan)):
            ax.axvline(r["delay_mean_s"] * 1e3, color=line.get_color(), linestyle=":", linewidth=0.8)
    what = "one-way delay" if scope == END_TO_END else f"queueing delay at {scope}"
    ax.set_xlabel(f"{what} (ms)")
    ax.set_ylabel("cumulative fraction of packets")
    ax.set_ylim(0.45, 1.02)
    ax.set_title(f"{summary.get('scenario')}: delay CDF from p50/p95/p99/max (dotted: mean)", fontsize=9)
    ax.legend(fontsize=8, title="class")
    ax.grid(True, alpha=0.3)
    if out is None:
        out = _default_run_out(results, f"delay-cdf-{_safe(scope)}")
    return _save_recorded(fig, out, results)


def _default_run_out(results: Any, name: str) -> Path:
    from phblab.results import Results

    if isinstance(results, Results):
        return Path("results") / "plots" / f"{results.summary.get('scenario')}-{name}"
    return Path(results) / outdir.PLOTS / name
