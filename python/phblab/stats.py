"""Statistics across seeds: mean and 95% confidence interval.

The interval is Student's t: mean ± t(0.975, n−1)·s/√n, with s the sample
standard deviation of the n seeds' values (each seed's run is one
independent replication). With one seed there is no interval (NaN).

    summarize(df, by=["max_p", "scope", "class"])

gives one row per group and numeric column (long form): the `by` columns,
`metric`, `n`, `mean`, `std`, `ci_half`, `ci_low`, `ci_high`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

#: columns that identify a run rather than measure it
ID_COLUMNS = {"seed", "run"}
STAT_COLUMNS = ["metric", "n", "mean", "std", "ci_half", "ci_low", "ci_high"]


def t_quantile_975(dof: int) -> float:
    """Student's t 97.5% quantile (two-sided 95%) for `dof` degrees of freedom."""
    if dof < 1:
        return math.nan
    from scipy.stats import t

    return float(t.ppf(0.975, dof))


def mean_ci(values: Sequence[float]) -> tuple[int, float, float, float]:
    """(n, mean, std, ci_half) of the finite `values`."""
    v = np.asarray([x for x in values if x is not None], float)
    v = v[np.isfinite(v)]
    n = len(v)
    if n == 0:
        return 0, math.nan, math.nan, math.nan
    mean = float(v.mean())
    if n == 1:
        return 1, mean, math.nan, math.nan
    std = float(v.std(ddof=1))
    return n, mean, std, t_quantile_975(n - 1) * std / math.sqrt(n)


def numeric_metrics(df: pd.DataFrame, by: Sequence[str]) -> list[str]:
    skip = set(by) | ID_COLUMNS
    return [
        c
        for c in df.columns
        if c not in skip and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
    ]


def summarize(df: pd.DataFrame, by: Sequence[str], metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean and 95% CI of every numeric column (or `metrics`) per group of
    `by`, across the rows of each group (the seeds). Groups keep the order
    of first appearance; metrics keep column order."""
    by = [b for b in by if b in df.columns]
    metrics = list(metrics) if metrics is not None else numeric_metrics(df, by)
    rows = []
    if df.empty:
        return pd.DataFrame(columns=[*by, *STAT_COLUMNS])
    groups = df.groupby(by, sort=False, dropna=False) if by else [((), df)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            n, mean, std, half = mean_ci(g[m].tolist())
            rows.append((*key, m, n, mean, std, half, mean - half, mean + half))
    return pd.DataFrame(rows, columns=[*by, *STAT_COLUMNS])


#: flow columns that add up over a group's flows; the others are averaged
_EXTENSIVE = (
    "_pkts",
    "_bytes",
    "_bps",
    "retransmissions",
    "fast_retransmits",
    "timeouts",
    "ecn_reductions",
    "acks_sent",
    "acks_lost",
)


def flow_groups(flows: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Per-run totals of each traffic group: counts, bytes and rates are
    summed over the group's flows, other columns (delay, start) averaged,
    and loss_rate recomputed as lost / sent packets. `by` names the run
    columns (grid keys, seed, run)."""
    if flows.empty:
        return flows
    keys = [*[b for b in by if b in flows.columns], "group", "class", "transport"]
    numeric = numeric_metrics(flows, keys)
    agg = {c: ("sum" if c.endswith(_EXTENSIVE) else "mean") for c in numeric}
    out = flows.groupby(keys, sort=False, dropna=False).agg(agg).reset_index()
    out.insert(len(keys), "flows", flows.groupby(keys, sort=False, dropna=False).size().to_numpy())
    if "lost_pkts" in out and "sent_pkts" in out:
        out["loss_rate"] = np.where(
            out.sent_pkts > 0, out.lost_pkts / out.sent_pkts.where(out.sent_pkts > 0, 1), np.nan
        )
    return out


def format_summary(
    summary: pd.DataFrame, by: Sequence[str], metrics: Sequence[tuple[str, str, float]] | None = None
) -> str:
    """A readable table of a `summarize` result: one line per group, a
    `mean ± ci_half` cell per metric. `metrics` are (column, heading, scale)."""
    metrics = metrics or [
        ("throughput_bps", "Mb/s", 1e-6),
        ("loss_rate", "loss %", 100.0),
        ("delay_mean_s", "delay ms", 1e3),
        ("delay_p99_s", "p99 ms", 1e3),
    ]
    metrics = [m for m in metrics if m[0] in set(summary.metric)]
    by = [b for b in by if b in summary.columns]
    if summary.empty or not metrics:
        return "(no statistics)"
    wide = {}
    for _, r in summary[summary.metric.isin([m[0] for m in metrics])].iterrows():
        key = tuple(r[b] for b in by)
        wide.setdefault(key, {})[r.metric] = (r["mean"], r["ci_half"], r["n"])
    head = [*by, *[h for _, h, _ in metrics]]
    cells = [head]
    for key, vals in wide.items():
        row = [str(k) for k in key]
        for col, _, scale in metrics:
            mean, half, _ = vals.get(col, (math.nan, math.nan, 0))
            if not math.isfinite(mean):
                row.append("-")
            elif math.isfinite(half):
                row.append(f"{mean * scale:.3g} ± {half * scale:.2g}")
            else:
                row.append(f"{mean * scale:.3g}")
        cells.append(row)
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    lines = []
    nby = len(by)
    for r in cells:
        parts = [c.ljust(w) if i < nby else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        lines.append("  " + "  ".join(parts).rstrip())
    n = summary["n"].max()
    lines.append(f"  (mean ± half-width of the 95% confidence interval over {n} seed{'s' if n != 1 else ''})")
    return "\n".join(lines)
