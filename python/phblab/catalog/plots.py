"""An entry's plots: ours (mean and 95% CI per grid point) beside every
value the entry compares it with, one figure per metric.

A metric is plotted if the entry's `[reproduce.plot].metrics` lists it, or
if it has expected values or a claim bounds it by a constant (a number of
the paper, drawn even where the list leaves the metric out). Expected
values are open markers with their tolerance as error bars; a claim's
constant is a bar at the points it is checked at (with its tolerance for a
`within` claim). Each marker's legend names its source, its kind (printed,
stated, derived, model, measured) and its reference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from phblab.catalog.schema import CLAIM_OPS, PAPER_KINDS, WITHIN, Claim, Entry, same
from phblab.catalog.tolerance import absolute
from phblab.catalog.verdict import expected_tolerance

#: the marker of an expected value, by the check's kind
KIND_MARKERS = {"printed": "s", "stated": "s", "derived": "D", "model": "o", "measured": "P", "unlabelled": "s"}
#: a relation read from the constant's side: `value op metric` is `metric flipped[op] value`
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", WITHIN: WITHIN}


def _bounded(claim: Claim) -> tuple | None:
    """(metric side, op as seen from the metric, constant side) of a claim
    between a metric and a constant; None for a claim between metrics."""
    left, right = claim.left, claim.right
    if (left.metric is None) == (right.metric is None):
        return None
    if left.metric is not None:
        return left, claim.op, right
    return right, _FLIPPED[claim.op], left


def plotted_metrics(entry: Entry) -> list[str]:
    """The per-point metrics the entry plots: those `[reproduce.plot]`
    lists, then any other with expected values or bounded by a claim's
    constant; without a list, every metric a value or a claim reads."""
    valued = [e.metric for e in entry.expect] + [b[0].metric for c in entry.claims if (b := _bounded(c))]
    listed = entry.plot.get("metrics")
    if listed:
        names = [*listed, *valued]
    else:
        names = [*valued, *(s.metric for c in entry.claims for s in (c.left, c.right) if s.metric)]
    return [n for n in dict.fromkeys(names) if n in entry.metrics and entry.metrics[n].per_point]


def _source(source: str, kind: str, ref: str) -> str:
    """ "paper, printed (Table 3)", "measured (phblab 0.1.0)"."""
    what = source if kind == source else f"{source}, {kind}"
    return f"{what} ({ref})" if ref else what


def plot_entry(entry: Entry, pstats: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Ours (mean, 95% CI) beside the expected values and the claims'
    constants, one figure per plotted metric; returns the PNG paths."""
    keys = list(entry.grid)
    if not keys:
        return [_one_point_figure(entry, pstats, out_dir)] if plotted_metrics(entry) else []
    x = entry.plot.get("x", keys[0])
    by = entry.plot.get("by", [k for k in keys if k != x])
    by = [by] if isinstance(by, str) else list(by)
    return [_figure(entry, name, pstats[pstats.metric == name], x, by, out_dir) for name in plotted_metrics(entry)]


def _figure(entry: Entry, name: str, d: pd.DataFrame, x: str, by: list, out_dir: Path) -> Path:
    """One metric's figure (PNG and SVG); returns the PNG's path."""
    from phblab import plot as pl

    m = entry.metrics[name]
    xs_of, xunit, cats = pl.x_positions(d[x])
    fig, ax = pl.plt.subplots(figsize=(6.4, 4.4))
    colours = pl.draw_lines(ax, d, x, by, 1.0, xs_of, label_prefix="ours: " if not by else "")
    shown: set = set()
    kinds: set = set()
    drawn: set = set()

    def mark(coords: Mapping, value: float, err: float, marker: str, label: str, kind: str) -> None:
        """One value of the paper (or a regression value) at a grid point."""
        kinds.add(kind)
        drawn.add(marker)
        key = tuple(coords[k] for k in by)
        colour = next((c for k, c in colours.items() if all(same(a, b) for a, b in zip(k, key, strict=True))), "black")
        xpos = xs_of[next(g for g in xs_of if same(g, coords[x]))] + (0.12 if cats else 0.0)
        ax.errorbar(
            [xpos],
            [value],
            yerr=[[err], [err]] if math.isfinite(err) else None,
            marker=marker,
            markersize=14 if marker == "_" else 6,
            mfc="none",
            color=colour,
            capsize=3,
            linestyle="none",
            label=None if label in shown else label,
        )
        shown.add(label)

    for e in entry.expect:
        if e.metric != name:
            continue
        label = f"{_source(e.source, e.kind, e.ref)} ± tolerance"
        for p in e.points:
            err, _ = expected_tolerance(e, p, m.unit, entry.id)
            mark(p, float(p["value"]), err, KIND_MARKERS[e.kind], label, e.kind)
    for c in entry.claims:
        bounded = _bounded(c)
        if bounded is None or bounded[0].metric != name:
            continue
        side, op, constant = bounded
        err, relation = math.nan, f"{op} {constant.value:g}"
        if op == WITHIN:
            err, tolerance = absolute(c.tolerance, constant.value, constant.printed, m.unit, entry.id)
            relation = f"within {tolerance} of {constant.value:g}"
        label = f"{_source(c.source, c.kind, c.ref)}: {name} {relation}"
        for combo in c.combinations():
            mark(
                {**combo, **side.at},
                constant.value,
                err,
                "_" if op in CLAIM_OPS else KIND_MARKERS[c.kind],
                label,
                c.kind,
            )
    pl._x_axis(ax, x, xunit, cats, xs_of, bool(entry.plot.get("logx")))
    if entry.plot.get("logy"):
        ax.set_yscale("log")
    ylabel = m.label or m.name
    ax.set_ylabel(f"{ylabel} ({m.unit})" if m.unit else ylabel)
    n = int(d["n"].max()) if len(d) else 0
    theirs = ""
    if kinds:
        what = "the paper's values" if kinds <= set(PAPER_KINDS) else "expected values (kinds in the legend)"
        theirs = f"; open markers{' and bars' if '_' in drawn else ''}: {what}"
    ours = "markers" if cats else "lines"
    ax.set_title(f"{entry.id}: {m.name} — {ours}: ours (mean, 95% CI, {n} seeds){theirs}", fontsize=8)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, title=", ".join(by) if by else None, title_fontsize=7)
    ax.grid(True, alpha=0.3)
    return pl.save(fig, out_dir / f"{pl._safe(name)}")[0]


def _one_point_figure(entry: Entry, pstats: pd.DataFrame, out_dir: Path) -> Path:
    """An entry without a grid (one point): every value and constant it
    compares a metric with, as ours ÷ that value, one column per check, so
    metrics of any unit share an axis (`checks.png`)."""
    from phblab import plot as pl

    fig, ax = pl.plt.subplots(figsize=(6.4, 4.4))
    names: list[str] = []
    shown: set = set()

    def column(name: str, reference: float, err: float, marker: str, label: str, tick: str = "") -> None:
        if reference == 0 or name not in entry.metrics:
            return  # a bound of 0 has no ratio; the check's table shows it
        row = pstats[pstats.metric == name].iloc[0]
        i = len(names)
        names.append(tick or name)
        ours = [row["mean"] / reference, row["ci_low"] / reference, row["ci_high"] / reference]
        low, high = min(ours[1:]), max(ours[1:])
        ax.errorbar(
            [i],
            [ours[0]],
            yerr=[[ours[0] - low], [high - ours[0]]],
            marker="o",
            color="C0",
            capsize=4,
            linestyle="none",
            label=None if "ours" in shown else "ours",
        )
        shown.add("ours")
        ax.errorbar(
            [i + 0.12],
            [1.0],
            yerr=[[err], [err]] if math.isfinite(err) else None,
            marker=marker,
            markersize=14 if marker == "_" else 6,
            mfc="none",
            color="C1",
            capsize=3,
            linestyle="none",
            label=None if label in shown else label,
        )
        shown.add(label)

    for e in entry.expect:
        for p in e.points:
            value = float(p["value"])
            err, _ = expected_tolerance(e, p, entry.metrics[e.metric].unit, entry.id)
            column(
                e.metric,
                value,
                err / abs(value) if value else math.nan,
                KIND_MARKERS[e.kind],
                f"{_source(e.source, e.kind, '')} ± tolerance",
            )
    for c in entry.claims:
        bounded = _bounded(c)
        if bounded is None:
            continue
        side, op, constant = bounded
        err = math.nan
        if op == WITHIN and constant.value:
            err = absolute(c.tolerance, constant.value, constant.printed, "", entry.id)[0] / abs(constant.value)
        column(
            side.metric,
            constant.value,
            err,
            "_" if op in CLAIM_OPS else KIND_MARKERS[c.kind],
            f"{_source(c.source, c.kind, '')}: {'a bound of a claim' if op in CLAIM_OPS else '± tolerance'}",
            f"{side.metric} {op}" if op in CLAIM_OPS else "",
        )
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("ours ÷ the value it is compared with")
    ax.axhline(1.0, color="grey", linewidth=0.5)
    n = int(pstats["n"].max()) if len(pstats) else 0
    ax.set_title(
        f"{entry.id}: every check against one value — markers: ours (mean, 95% CI, {n} seeds) ÷ the value; "
        "open markers and bars: the value (1)",
        fontsize=7,
    )
    ax.legend(fontsize=7, loc="best")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return pl.save(fig, out_dir / "checks")[0]
