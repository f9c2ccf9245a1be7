"""An entry's plots: ours (mean and 95% CI per grid point) beside the
expected values, one figure per metric."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from phblab.catalog.schema import Entry, same
from phblab.catalog.verdict import expected_tolerance


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
                v = float(p["value"])
                err, _ = expected_tolerance(e, p, m.unit, entry.id)
                key = tuple(p[k] for k in by)
                colour = next(
                    (c for k, c in colours.items() if all(same(a, b) for a, b in zip(k, key, strict=True))), "black"
                )
                label = f"{e.source}{' (' + e.ref + ')' if e.ref else ''} ± tolerance"
                xpos = xs_of[next(g for g in xs_of if same(g, p[x]))] + (0.12 if cats else 0.0)
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
