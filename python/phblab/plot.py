"""Plots (matplotlib, Agg backend; each figure written as PNG and SVG).

    plot_metric(sweep_dir, x="qdiscs.bottleneck.max_p", y="delay_mean_s", by="class")
        a metric against a swept parameter, one line per class (and per value
        of any other swept key), mean across seeds with its 95% CI band
    plot_timeseries(run_dir, scope="end-to-end")
        one run's time series: queue length and RED averages (one per
        buffer) per link, per-class delay and throughput end to end; or, for
        a link direction, its queue, per-class backlog, queueing delay,
        throughput and offered load (the scenario must set run.sample_interval)
    plot_delay_cdf(run_dir, scope="end-to-end")
        per-class delay distribution, from the run's delay histogram

Units: columns ending in `_s` are drawn in ms, `_bps` in Mb/s, `loss_rate`
in %; a swept value with a unit (`"20ms"`, `"5Mbps"`, `"64KB"`) is drawn as a
number in ms, Mb/s or bytes. Axis labels name a swept key's parameter and
what it belongs to (`key_label`: "max_p of qdisc bottleneck") and say
whether a delay is one way (end to end, a flow's) or queueing (at a link).
Legends list at most LEGEND_MAX lines. Every function returns the written
paths (`out` with suffix .png and .svg; a suffix given in `out` is
replaced).

The delay CDF is drawn through the buckets of the `delay_histogram` table
(16 per power of two of nanoseconds, each 6.25% wide), straight within a
bucket: the whole distribution, to within a bucket's width.
"""

from __future__ import annotations

import functools
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
    "offered_bps": "offered load",
    "loss_rate": "loss rate",
    "busy_loss_rate": "loss rate over the busy period",
    "delay_mean_s": "mean delay",
    "delay_p50_s": "median delay",
    "delay_p95_s": "95th-percentile delay",
    "delay_p99_s": "99th-percentile delay",
    "delay_max_s": "maximum delay",
    "queueing_delay_mean_s": "mean queueing delay, summed over the hops",
    "queue_pkts": "queue length",
    "queue_bytes": "queue length",
    "backlog_pkts": "backlog",
    "backlog_mean_pkts": "mean backlog",
    "red_avg": "RED average queue",
}


def metric_scale(column: str) -> tuple[float, str]:
    """(scale, unit) to draw a metric column: seconds in ms, b/s in Mb/s."""
    if column.endswith("_s"):
        return 1e3, "ms"
    if column.endswith("_bps"):
        return 1e-6, "Mb/s"
    if column in ("loss_rate", "busy_loss_rate"):
        return 100.0, "%"
    if column.endswith("_pkts") or column in ("red_avg", "queued_end"):
        return 1.0, "packets"
    if column.endswith("_bytes"):
        return 1.0, "bytes"
    return 1.0, ""


def metric_name(column: str, at: str = "", place: bool = True) -> str:
    """What a column measures, for a reader: the delay columns say which
    delay they are, from `at`: one way end to end (`"end-to-end"`, or
    `"flows"` for a flow's delay_mean_s), queueing at a link direction
    (`"r1->r2"`), which `place` adds ("at r1->r2")."""
    name = _LABELS.get(column, column)
    link = at not in ("", END_TO_END, "flows")
    if column.startswith("delay_") and at:
        name = name.replace("delay", "queueing delay" if link else "one-way delay")
    return f"{name} at {at}" if link and place and column in _LABELS else name


def axis_label(column: str, unit: str | None = None, at: str = "", place: bool = True) -> str:
    """`metric_name` with the unit the column is drawn in."""
    if unit is None:
        unit = metric_scale(column)[1]
    name = metric_name(column, at, place)
    return f"{name} ({unit})" if unit else name


# ---------------------------------------------------------------------- output


def _paths(out: str | os.PathLike) -> list[Path]:
    out = Path(out)
    if out.suffix.lower() in (".png", ".svg"):
        out = out.with_suffix("")
    return [out.with_name(out.name + ".png"), out.with_name(out.name + ".svg")]


#: what each format records of its maker, so that phblab knows its own plots again
MAKER = "phblab plot"
_METADATA = {"png": {"Software": MAKER}, "svg": {"Creator": MAKER, "Date": None}}


def _made_by(existing: Any, makers: Sequence[bytes]) -> bool:
    """Whether the PNG or SVG file `existing` (open for reading) names one
    of `makers` as its maker, in the metadata at its start."""
    head = existing.read(1 << 16)
    if head.startswith(b"\x89PNG"):
        head = head[: head.find(b"IDAT")]  # the text chunks come before the image
        return any(b"tEXtSoftware\x00" + m in head for m in makers)
    return any(b"<dc:title>" + m in head for m in makers)


def _draw(fig, fmt: str, f: Any) -> None:
    fig.savefig(f, format=fmt, dpi=120, bbox_inches="tight", metadata=_METADATA[fmt])


def save(fig, out: str | os.PathLike, *, in_results: bool = False) -> list[Path]:
    """Writes `fig` as PNG and SVG (`out` without suffix); closes it. An
    existing file is replaced only if phblab drew it (`outdir.write_file`);
    `in_results`: `out` is in the `plots` directory phblab keeps in a
    results directory, which must not be a link, and whose files drawn by
    earlier versions (by Matplotlib, without phblab's name) are phblab's."""
    paths = _paths(out)
    if in_results:
        outdir.subdirectory(paths[0].parent.parent, paths[0].parent.name)
    makers = [MAKER.encode(), b"Matplotlib"] if in_results else [MAKER.encode()]
    try:
        for p in paths:
            write = functools.partial(_draw, fig, p.suffix[1:])
            outdir.write_file(p, write, functools.partial(_made_by, makers=makers))
    finally:
        plt.close(fig)
    return paths


def _save_recorded(fig, out: str | os.PathLike, source: Any, *, in_results: bool = False) -> list[Path]:
    """`save` (`in_results` as there), then, if `source` is a directory (a run's or a sweep's) and
    `out` lies in its plots/, records the files there as drawn from its
    tables, so that rewriting them with other tables removes the figures
    (`outdir.record_plots`)."""
    paths = save(fig, out, in_results=in_results)
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
    """A run's `Results`: as given, or read from a results directory
    (`phblab.load`, which checks its manifest)."""
    from phblab.results import Results, load

    return results if isinstance(results, Results) else load(results)


# -------------------------------------------------------------- metric vs x


def _fmt(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


_LINESTYLES = ["-", "--", ":", "-."]
#: line keys whose values label a line alone (others as key=value)
_BARE_KEYS = ("class", "scope", *stats.GROUP_KEYS, "family")


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
            f"{_fmt(v)}" if k in _BARE_KEYS else f"{k}={_fmt(v)}" for k, v in zip(line_keys, key, strict=True)
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


#: at most this many entries in a legend; further lines are counted in a last entry
LEGEND_MAX = 12


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
        by: column(s) giving one line each: "class" or "scope" (classes);
            "group", "generator", "class" or "transport" (groups: the flows
            are summed per run over each value, e.g. all TCP flows for
            "transport"). The other swept keys always give separate lines
            too. A groups plot by "group" with more than LEGEND_MAX groups
            sums each generator's groups as one ("generator").
        scope: the `classes` scope to plot ("end-to-end" or a link "r1->r2");
            None keeps all (add "scope" to `by`).
        table: "classes" or "groups"; default: the one with a column `y`.
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
    table = table or _table_of(sw, y, keys)
    note = ""
    if table == "classes":
        df = sw.classes
        if scope is not None:
            if scope not in set(df.scope):
                raise ValueError(f"scope {scope!r} not in the results; scopes: {', '.join(dict.fromkeys(df.scope))}")
            df = df[df.scope == scope]
        base = ["scope", "class"]
    elif table == "groups":
        base = list(by) or ["group"]
        unknown = [b for b in base if b not in stats.GROUP_KEYS]
        if unknown:
            raise ValueError(f"by={unknown[0]!r}: the groups table has one line per {', '.join(stats.GROUP_KEYS)}")
        if base == ["group"] and sw.flows.group.nunique() > LEGEND_MAX and "generator" in sw.flows:
            base = by = ["family"]
            note = "; generated groups summed per generator"
        flows = sw.flows
        if "generator" in flows:
            flows = flows.assign(generator=flows.generator.replace("", FILE_GROUPS))
        if "family" in base:
            flows = flows.assign(family=_families(sw.flows))
        df = stats.flow_groups(flows, by=[*keys, "seed", "run"], groups=base)
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
    _x_axis(ax, x, xunit, cats, xs_of, logx, scenario=_scenario_of(sw.dir))
    if logy:
        ax.set_yscale("log")
    at = (scope or "") if table == "classes" else "flows"
    ax.set_ylabel(axis_label(y, unit, at))
    n = int(summary["n"].max())
    what = "mean and 95% CI" if not cats else "mean, bars: 95% CI"
    ax.set_title(
        title or f"{sw.name}: {metric_name(y, at)} ({what} over {n} seed{'s' if n != 1 else ''}{note})",
        fontsize=9,
    )
    if line_keys:
        legend(ax, title=", ".join(k for k in line_keys if k not in _BARE_KEYS) or None)
    ax.grid(True, alpha=0.3)
    if out is None:
        return _save_recorded(fig, sw.dir / outdir.PLOTS / f"{_safe(y)}-vs-{_safe(x)}", sw.dir, in_results=True)
    return _save_recorded(fig, out, sw.dir)


def _table_of(sw, y: str, keys: Sequence[str]) -> str:
    """The table that has column `y` (classes first); ValueError listing
    both tables' numeric columns when neither has it."""
    if y in sw.classes.columns:
        return "classes"
    if y in sw.flows.columns or y == "flows":
        return "groups"
    listed = "; ".join(
        f"{name}: {', '.join(stats.numeric_metrics(df, [*keys, 'scope', *stats.GROUP_KEYS, 'flows']))}"
        for name, df in (("classes", sw.classes), ("groups (--table groups)", sw.flows))
    )
    raise ValueError(f"no column {y!r} in the classes or the groups table; {listed}")


#: the `generator` of the groups a scenario file wrote, as plots label it
FILE_GROUPS = "(the file's groups)"


def _families(flows: pd.DataFrame) -> pd.Series:
    """Each flow's family: its group's generator (`"wide.traffic"`), or the
    group itself for a group the file wrote."""
    return flows.generator.where(flows.generator != "", flows.group)


def legend(ax, title: str | None = None) -> None:
    """The axes' legend, at most LEGEND_MAX entries: beyond, the first
    LEGEND_MAX - 1 and one saying how many more lines there are."""
    handles, labels = ax.get_legend_handles_labels()
    if len(handles) > LEGEND_MAX:
        more = len(handles) - (LEGEND_MAX - 1)
        handles = handles[: LEGEND_MAX - 1] + [matplotlib.lines.Line2D([], [], linestyle="none")]
        labels = labels[: LEGEND_MAX - 1] + [f"... and {more} more lines"]
    if handles:
        ax.legend(handles, labels, fontsize=7, title=title, title_fontsize=7, ncol=2 if len(handles) > 5 else 1)


def _x_axis(ax, x: str, unit: str, cats: list, xs_of, logx: bool, scenario: Mapping | None = None) -> None:
    name = key_label(x, scenario)
    ax.set_xlabel(f"{name} ({unit})" if unit else name)
    if cats:
        ax.set_xticks(list(xs_of.values()), cats)
        ax.set_xlim(-0.5, len(cats) - 0.5)
    elif logx:
        ax.set_xscale("log")


_PATH_PART = re.compile(r"^(?P<list>[A-Za-z_]+)\[(?P<index>\d+)\]$")


def key_label(key: str, scenario: Mapping | None = None) -> str:
    """A swept key as an axis label: the parameter, then what it belongs
    to: `qdiscs.bottleneck.max_p` -> "max_p of qdisc bottleneck",
    `links[1].rate` -> "rate of link r1-r2" (its ends from `scenario`, the
    sweep's scenario as a dict, when it lists them), `traffic[0].count` ->
    "count of traffic onoff"; a bare parameter (`R_ms`) stays as it is."""
    parts = key.split(".")
    if len(parts) < 2:
        return key
    owner = []
    node: Any = scenario or {}
    for part in parts[:-1]:
        m = _PATH_PART.match(part)
        name, index = (m.group("list"), int(m.group("index"))) if m else (part, None)
        node = node.get(name) if isinstance(node, Mapping) else None
        if index is not None:
            node = node[index] if isinstance(node, list) and index < len(node) else None
        owner.append(_owner(name, index, node))
    return f"{parts[-1]} of {' '.join(o for o in owner if o)}"


_SINGULAR = {"qdiscs": "qdisc", "links": "link", "conditioners": "conditioner", "generators": "generator"}


def _owner(name: str, index: int | None, node: Any) -> str:
    """One step of a key's path, named for a reader."""
    if index is None:
        return _SINGULAR.get(name, name)
    if isinstance(node, Mapping):
        if isinstance(node.get("between"), list):
            return f"{_SINGULAR.get(name, name)} {'-'.join(map(str, node['between']))}"
        if isinstance(node.get("name"), str):
            return f"{_SINGULAR.get(name, name)} {node['name']}"
    return f"{name}[{index}]"


def _scenario_of(directory: Path) -> Mapping | None:
    """The scenario a sweep or run ran (its scenario.toml) as a dict, for
    labels; None if it cannot be read."""
    import tomllib

    try:
        return tomllib.loads((Path(directory) / "scenario.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "plot"


# ----------------------------------------------------------- one run's plots


def plot_timeseries(
    results: Any,
    scopes: Sequence[str] | None = None,
    out: str | os.PathLike | None = None,
    scope: str = END_TO_END,
) -> list[Path]:
    """A run's time series in three panels.

    With `scope` "end-to-end" (the default): the queue length at each link
    direction of `scopes` (default: those whose queue was ever non-empty)
    with its RED averages, one per buffer; per-class one-way delay and
    throughput end to end. With `scope` a link direction ("r1->r2"): that
    link's queue, its RED averages and each class's backlog; per-class
    queueing delay there; per-class throughput and offered load there.

    `results` is a `Results` or a run's results directory."""
    res = _load_run(results)
    summary, ts = res.summary, res.timeseries
    colour_of = class_colours(res.classes["class"])
    if ts is None or ts.empty:
        raise ValueError('the run has no time series: set run.sample_interval in the scenario (e.g. "100ms")')
    queues = ts[ts.metric == "queue_pkts"]
    if scope != END_TO_END:
        links = list(dict.fromkeys(queues.scope))
        if scope not in links:
            raise ValueError(
                f"scope {scope!r} has no time series; the link directions that have: {', '.join(links) or 'none'} "
                "(or end-to-end; run.sample_scopes chooses which are recorded)"
            )
        scopes = [scope]
    elif scopes is None:
        busy = queues.groupby("scope", sort=False)["value"].max()
        scopes = [s for s, v in busy.items() if v > 0] or list(busy.index[:1])
    fig, axes = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    ax = axes[0]
    link = scope != END_TO_END
    for s in scopes:
        q = queues[queues.scope == s]
        (line,) = ax.plot(q.time_s, q.value, label=f"{s} queue" if not link else "queue", linewidth=1,
                          color="black" if link else None)  # fmt: skip
        averages = ts[(ts.metric == "red_avg") & (ts.scope == s)]
        for i, (buffer, avg) in enumerate(averages.groupby("class", sort=False)):
            owner = (f"{s} " if not link else "") + (f"buffer {buffer} " if buffer else "")
            ax.plot(avg.time_s, avg.value, label=f"{owner}RED average", linewidth=1, color=line.get_color(),
                    linestyle=_LINESTYLES[1:][i % 3], alpha=0.8)  # fmt: skip
    if link:
        backlog = ts[(ts.metric == "backlog_pkts") & (ts.scope == scope)]
        for cls, g in backlog.groupby("class", sort=False):
            ax.plot(g.time_s, g.value, label=f"{cls} backlog", linewidth=0.8, color=colour_of.get(cls))
    ax.set_ylabel(axis_label("queue_pkts", at=scope, place=False))
    legend(ax)
    for ax, metric in zip(axes[1:], ["delay_mean_s", "throughput_bps"], strict=True):
        scale, unit = metric_scale(metric)
        d = ts[(ts.metric == metric) & (ts.scope == scope)]
        for cls, g in d.groupby("class", sort=False):
            ax.plot(g.time_s, g.value * scale, label=str(cls), linewidth=1, color=colour_of.get(cls))
        if metric == "throughput_bps" and scope != END_TO_END:
            offered = ts[(ts.metric == "offered_bps") & (ts.scope == scope)]
            for cls, g in offered.groupby("class", sort=False):
                ax.plot(g.time_s, g.value * scale, label=f"{cls} offered", linewidth=0.8, linestyle="--",
                        color=colour_of.get(cls))  # fmt: skip
        ax.set_ylabel(axis_label(metric, unit, scope, place=False))
        legend(ax, title="class")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    warm = summary.get("warmup_s") or 0
    if warm:
        for ax in axes:
            ax.axvline(warm, color="grey", linewidth=0.8, linestyle=":")
    axes[-1].set_xlabel("time (s)")
    where = "" if scope == END_TO_END else f", link {scope}"
    axes[0].set_title(
        f"{summary.get('scenario')}, seed {summary.get('seed')}{where} (dotted: end of warm-up)", fontsize=9
    )
    if out is None:
        name = "timeseries" if scope == END_TO_END else f"timeseries-{_safe(scope)}"
        return _save_recorded(fig, _default_run_out(results, name), results, in_results=True)
    return _save_recorded(fig, out, results)


def plot_delay_cdf(
    results: Any,
    scope: str = END_TO_END,
    out: str | os.PathLike | None = None,
) -> list[Path]:
    """Per-class delay distribution at `scope`: the cumulative fraction of
    packets against the delay, through the buckets of the run's delay
    histogram (`delay_histogram` table: 16 buckets per power of two, drawn
    straight within each), the mean dotted. Results of an older phblab,
    without that table, are drawn through p50, p95, p99 and max only."""
    res = _load_run(results)
    summary, classes = res.summary, res.classes
    colour_of = class_colours(classes["class"])
    rows = classes[classes.scope == scope]
    if rows.empty:
        raise ValueError(f"scope {scope!r} not in the results; scopes: {', '.join(dict.fromkeys(classes.scope))}")
    histogram = res.tables["delay_histogram"] if "delay_histogram" in res.tables else None
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for _, r in rows.iterrows():
        cls = r["class"]
        if histogram is not None:
            h = histogram[(histogram.scope == scope) & (histogram["class"] == cls)].sort_values("lower_s")
            if h.empty:
                continue
            counts = h.packets.to_numpy(float)
            xs = np.concatenate([h.lower_s.to_numpy()[:1], np.minimum(h.upper_s.to_numpy(), r["delay_max_s"])]) * 1e3
            ps = np.concatenate([[0.0], np.cumsum(counts) / counts.sum()])
            (line,) = ax.plot(xs, ps, label=str(cls), color=colour_of[cls], linewidth=1.2)
        else:
            xs = [r[c] * 1e3 for c, _ in _PERCENTILES]
            if not all(math.isfinite(v) for v in xs):
                continue
            (line,) = ax.plot(xs, [p for _, p in _PERCENTILES], marker="o", label=str(cls), color=colour_of[cls])
        if math.isfinite(r.get("delay_mean_s", math.nan)):
            ax.axvline(r["delay_mean_s"] * 1e3, color=line.get_color(), linestyle=":", linewidth=0.8)
    ax.set_xlabel(f"{'one-way delay' if scope == END_TO_END else f'queueing delay at {scope}'} (ms)")
    ax.set_ylabel("cumulative fraction of packets")
    if histogram is None:
        ax.set_ylim(0.45, 1.02)
        how = "through p50/p95/p99/max (results without a delay histogram)"
    else:
        ax.set_ylim(0, 1.02)
        how = "from the delay histogram"
    ax.set_title(f"{summary.get('scenario')}: delay CDF {how} (dotted: mean)", fontsize=9)
    legend(ax, title="class")
    ax.grid(True, alpha=0.3)
    if out is None:
        return _save_recorded(fig, _default_run_out(results, f"delay-cdf-{_safe(scope)}"), results, in_results=True)
    return _save_recorded(fig, out, results)


def plot_time_sequence(
    results: Any,
    flow: str,
    scope: str | None = None,
    out: str | os.PathLike | None = None,
) -> list[Path]:
    """A traced TCP flow's time–sequence graph from the run's event log
    (`events.parquet`, `docs/results.md`): the data segments reaching link
    direction `scope` (their first byte against the time they arrived;
    retransmissions, a first byte seen before, apart), those dropped there
    marked by reason, and the ACKs (next byte expected) reaching the
    reverse direction when it is traced too. `scope` defaults to the first
    traced direction the flow's data crossed. Segments are drawn at their
    arrival, or at their dequeue when the trace records no arrivals.

    `results` is a `Results` or a run's results directory. ValueError,
    naming the flow, when it is not in the trace or not a TCP flow."""
    res = _load_run(results)
    if "events" not in res.tables:
        raise ValueError(
            f"flow {flow!r}: the run has no packet trace (events.parquet); "
            "add a [trace] section naming the links the flow crosses"
        )
    events = res.tables["events"]
    mine = events[events.flow == flow]
    if mine.empty:
        present = set(events.flow.astype(str))
        traced = [f for f in res.flows.flow if f in present]  # in the flows table's order
        shown = ", ".join(traced[:8]) + (f" and {len(traced) - 8} more" if len(traced) > 8 else "")
        raise ValueError(f"flow {flow!r} is not in the packet trace; the traced flows: {shown or 'none'}")
    data = mine[mine.kind == "data"]
    if data.empty:
        raise ValueError(f"flow {flow!r} is not a TCP flow (the trace holds no data segments of it)")
    scopes = list(dict.fromkeys(data.scope.astype(str)))
    if scope is None:
        scope = scopes[0]
    elif scope not in scopes:
        raise ValueError(f"flow {flow!r} has no data segments traced at {scope!r}; it has at {', '.join(scopes)}")
    at = data[data.scope == scope]
    drawn = "arrive" if (at.event == "arrive").any() else "dequeue"
    sent = at[at.event == drawn]
    again = sent.seq.duplicated()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(sent.time_ns[~again] / 1e9, sent.seq[~again], ".", markersize=2, color="tab:blue", label="segment")
    if again.any():
        ax.plot(sent.time_ns[again] / 1e9, sent.seq[again], "s", markersize=3, color="tab:orange",
                label="retransmission")  # fmt: skip
    drops = at[at.event == "drop"]
    for marker, (reason, d) in zip("xv^+*d", drops.groupby("reason", observed=True, sort=True), strict=False):
        ax.plot(d.time_ns / 1e9, d.seq, marker, markersize=5, color="tab:red", label=f"drop: {reason}")
    a, b = scope.split("->", 1)
    reverse = f"{b}->{a}"
    acks = mine[(mine.kind == "ack") & (mine.scope == reverse)]
    acks = acks[acks.event == ("arrive" if (acks.event == "arrive").any() else "dequeue")]
    if not acks.empty:
        ax.step(acks.time_ns / 1e9, acks.ack, where="post", linewidth=0.8, color="tab:green",
                label=f"ACK (at {reverse})")  # fmt: skip
    ax.set_xlabel("time (s)")
    ax.set_ylabel("sequence number (bytes)")
    ax.grid(True, alpha=0.3)
    legend(ax)
    how = "arrivals" if drawn == "arrive" else "dequeues"
    ax.set_title(f"{res.summary.get('scenario')}: flow {flow}, its {how} at {scope}", fontsize=9)
    if out is None:
        return _save_recorded(fig, _default_run_out(results, f"time-sequence-{_safe(flow)}"), results, in_results=True)
    return _save_recorded(fig, out, results)


#: the percentiles the classes table gives, for results without a histogram
_PERCENTILES = [("delay_p50_s", 0.5), ("delay_p95_s", 0.95), ("delay_p99_s", 0.99), ("delay_max_s", 1.0)]


def _default_run_out(results: Any, name: str) -> Path:
    from phblab.results import Results

    if isinstance(results, Results):
        return Path("results") / "plots" / f"{results.summary.get('scenario')}-{name}"
    return Path(results) / outdir.PLOTS / name
