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
    from scipy.special import stdtrit

    return float(stdtrit(dof, 0.975))


def numeric_metrics(df: pd.DataFrame, by: Sequence[str]) -> list[str]:
    skip = set(by) | ID_COLUMNS
    return [
        c
        for c in df.columns
        if c not in skip and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
    ]


def t_quantiles_975(n: np.ndarray) -> np.ndarray:
    """`t_quantile_975(n - 1)` for every sample size in `n` (NaN below 2),
    with one quantile computed per distinct size."""
    n = np.asarray(n, dtype=np.int64)
    out = np.full(n.shape, math.nan)
    sizes = np.unique(n[n >= 2])
    if len(sizes):
        from scipy.special import stdtrit  # scipy.stats' t.ppf, without importing scipy.stats (1.5 s)

        table = stdtrit(sizes - 1, 0.975)
        has = n >= 2
        out[has] = table[np.searchsorted(sizes, n[has])]
    return out


def _repeated_names(names: Sequence[str], times: int) -> pd.Series:
    """`names` repeated `times` times, as a string column (built by Arrow:
    four times faster than from a Python list of a million strings)."""
    import pyarrow as pa

    indices = pa.array(np.tile(np.arange(len(names), dtype=np.int32), times))
    return pa.DictionaryArray.from_arrays(indices, pa.array(list(names), pa.string())).dictionary_decode().to_pandas()


def summarize(df: pd.DataFrame, by: Sequence[str], metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean and 95% CI of every numeric column (or `metrics`) per group of
    `by`, across the rows of each group (the seeds), counting only finite
    values. Groups keep the order of first appearance; metrics keep column
    order.

    Vectorised: group sums and squared deviations by `np.bincount` over the
    group numbers, and one t quantile per distinct sample size, so that
    the cost grows with the rows, not with groups × metrics."""
    by = [b for b in by if b in df.columns]
    metrics = list(metrics) if metrics is not None else numeric_metrics(df, by)
    if df.empty:
        return pd.DataFrame(columns=[*by, *STAT_COLUMNS])
    if by:
        codes = df.groupby(by, sort=False, dropna=False).ngroup().to_numpy()
        groups = int(codes.max()) + 1
        first = np.unique(codes, return_index=True)[1]
        keys = df[by].iloc[first].reset_index(drop=True)
    else:
        codes, groups, keys = np.zeros(len(df), dtype=np.int64), 1, pd.DataFrame(index=range(1))
    shape = (groups, len(metrics))
    n = np.zeros(shape, dtype=np.int64)
    mean, std = np.full(shape, math.nan), np.full(shape, math.nan)
    rows = np.bincount(codes, minlength=groups)
    for j, m in enumerate(metrics):
        v = df[m].to_numpy(dtype=float, na_value=math.nan)
        ok = np.isfinite(v)
        if ok.all():
            c, count = codes, rows
        else:
            c, v = codes[ok], v[ok]
            count = np.bincount(c, minlength=groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            mu = np.bincount(c, weights=v, minlength=groups) / count
            squares = np.bincount(c, weights=(v - mu[c]) ** 2, minlength=groups)
            std[:, j] = np.where(count >= 2, np.sqrt(squares / (count - 1)), math.nan)
        n[:, j], mean[:, j] = count, mu
    half = t_quantiles_975(n) * std / np.sqrt(np.maximum(n, 1))
    out = keys.loc[keys.index.repeat(len(metrics))].reset_index(drop=True)
    out["metric"] = _repeated_names(metrics, groups)
    for name, values in (("n", n), ("mean", mean), ("std", std), ("ci_half", half)):
        out[name] = values.ravel()
    out["ci_low"] = out["mean"] - out["ci_half"]
    out["ci_high"] = out["mean"] + out["ci_half"]
    return out


#: flow columns that add up over a group's flows; the others are averaged
_EXTENSIVE = (
    "_pkts",
    "_bytes",
    "_bps",
    "retransmissions",
    "fast_retransmits",
    "timeouts",
    "ecn_reductions",
    "first_timeouts_s",
    "acks_sent",
    "acks_lost",
)


#: what `flow_groups` totals flows by: the traffic group and what describes it
GROUP_KEYS = ("group", "generator", "class", "transport")


def flow_groups(flows: pd.DataFrame, by: Sequence[str], groups: Sequence[str] = GROUP_KEYS) -> pd.DataFrame:
    """Per-run totals of each traffic group (or of each value of `groups`,
    e.g. ["transport"] for all TCP and all UDP flows): counts, bytes and
    rates are summed over the flows, other columns (delay, start) averaged,
    and loss_rate recomputed as lost / sent packets. `by` names the run
    columns (grid keys, seed, run). A column of `groups` that the flows
    lack (`generator`, in results of an older phblab) is left out."""
    if flows.empty:
        return flows
    keys = [*[b for b in by if b in flows.columns], *[g for g in groups if g in flows.columns]]
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
