"""An entry's plots show every value it compares ours with: expected values
and claims' constants, even for metrics `[reproduce.plot]` leaves out, with
their kind in the legend; a categorical axis says its ours are markers."""

from pathlib import Path

import pandas as pd
import pytest

from phblab import catalog
from phblab import plot as pl
from phblab.catalog.plots import plot_entry, plotted_metrics
from test_catalog import TWO_CLASSES

SECTION = """
[reproduce]
title = "plots"
assumptions = ["a test entry"]

[reproduce.sweep]
grid = {{ mode = {modes} }}

[reproduce.metrics.d_ts]
table = "classes"
column = "delay_mean_s"
where = {{ scope = "r->sink", class = "ts" }}
unit = "ms"

[reproduce.metrics.d_ds]
table = "classes"
column = "delay_mean_s"
where = {{ scope = "r->sink", class = "ds" }}
unit = "ms"

[[reproduce.expect]]
metric = "d_ts"
kind = "printed"
ref = "Table 1"
tolerance = "10%"
points = [{{ mode = {first}, value = 2.0 }}]

[[reproduce.claims]]
text = "the delay stays above 0.5 ms"
ref = "Sec. 2"
kind = "stated"
over = {{ mode = {modes} }}
left = {{ metric = "d_ds" }}
op = ">"
right = {{ value = 0.5 }}

[[reproduce.claims]]
text = "the delay is about 1 ms"
ref = "Sec. 3"
kind = "derived"
over = {{ mode = {first} }}
left = {{ metric = "d_ds" }}
op = "within"
right = {{ value = "1" }}
tolerance = "printed"

[reproduce.plot]
metrics = ["d_ts"]
"""


def entry(tmp_path: Path, modes: str, first: str):
    path = tmp_path / "e.toml"
    path.write_text(TWO_CLASSES + SECTION.format(modes=modes, first=first))
    return catalog.load_entry(path)


def pstats(e, modes) -> pd.DataFrame:
    rows = [
        {"mode": m, "metric": name, "mean": 1.0 + i, "ci_low": 0.9 + i, "ci_high": 1.1 + i, "n": 3}
        for i, m in enumerate(modes)
        for name in ("d_ts", "d_ds")
    ]
    return pd.DataFrame(rows)


@pytest.fixture
def figures(monkeypatch):
    """The title, legend labels and tick labels of every figure saved."""
    seen = []
    save = pl.save

    def record(fig, out):
        ax = fig.axes[0]
        seen.append(
            {
                "name": Path(out).name,
                "title": ax.get_title(),
                "legend": ax.get_legend_handles_labels()[1],
                "ticks": [t.get_text() for t in ax.get_xticklabels()],
            }
        )
        return save(fig, out)

    monkeypatch.setattr(pl, "save", record)
    return seen


def test_every_metric_with_a_value_of_the_paper_is_plotted_beside_it(tmp_path, figures):
    e = entry(tmp_path, '["x", "y"]', '"x"')
    assert plotted_metrics(e) == ["d_ts", "d_ds"]  # d_ds: not listed, but bounded by claims' constants
    pngs = plot_entry(e, pstats(e, ["x", "y"]), tmp_path / "out")
    assert [p.name for p in pngs] == ["d_ts.png", "d_ds.png"] and all(p.stat().st_size for p in pngs)
    d_ts, d_ds = figures
    # a categorical axis: ours are markers, not lines
    assert "— markers: ours (mean, 95% CI, 3 seeds); open markers: the paper's values" in d_ts["title"]
    assert d_ts["legend"] == ["ours", "paper, printed (Table 1) ± tolerance"]
    assert "open markers and bars: expected values (kinds in the legend)" in d_ds["title"]
    assert d_ds["legend"] == [
        "ours",
        "paper, stated (Sec. 2): d_ds > 0.5",
        "paper, derived (Sec. 3): d_ds within printed ±0.5 ms of 1",
    ]


def test_a_numeric_axis_draws_ours_as_lines(tmp_path, figures):
    e = entry(tmp_path, "[1, 2]", "1")
    plot_entry(e, pstats(e, [1, 2]), tmp_path / "out")
    assert "— lines: ours" in figures[0]["title"]


def test_an_entry_without_a_grid_plots_every_check_against_its_value(tmp_path, figures):
    section = SECTION.format(modes='["x"]', first='"x"')
    section = section.replace('grid = { mode = ["x"] }', "").replace('mode = "x", ', "")
    section = section.replace('over = { mode = ["x"] }\n', "").replace('over = { mode = "x" }\n', "")
    path = tmp_path / "e.toml"
    path.write_text(TWO_CLASSES + section)
    e = catalog.load_entry(path)
    assert not e.grid
    stats = pd.DataFrame([{"metric": n, "mean": 1.0, "ci_low": 0.9, "ci_high": 1.1, "n": 3} for n in ("d_ts", "d_ds")])
    (png,) = plot_entry(e, stats, tmp_path / "out")
    assert png.name == "checks.png"
    (fig,) = figures
    assert fig["ticks"] == ["d_ts", "d_ds >", "d_ds"]
    assert "every check against one value" in fig["title"]
