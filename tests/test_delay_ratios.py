"""The delay-ratio measurement from Python: the `delay_ratios` table of a
run, its agreement with the time-series estimator, and catalog metrics that
read it (templated `where`, grid points that share runs, the point table)."""

import json
import re
import tomllib

import numpy as np
import pandas as pd
import pytest

import phblab
from phblab import catalog
from phblab.report import write_report
from test_catalog import TWO_CLASSES

RATIO = '{ scope = "r->sink", numerator = "ts", denominator = "ds", timescales = ["4ms", "40ms"] }'


def with_ratios(text: str, ratios: str = RATIO) -> str:
    return text.replace("seed = 1\n", f"seed = 1\ndelay_ratios = [{ratios}]\n", 1)


def run(text: str) -> phblab.Results:
    return phblab.run(tomllib.loads(text))


def test_a_run_returns_and_writes_its_delay_ratios(tmp_path):
    res = run(with_ratios(TWO_CLASSES))
    t = res.delay_ratios
    assert list(t.timescale_s) == [0.004, 0.04]
    assert list(t.intervals) == [500, 50]  # 2 s measured
    c = res.classes[res.classes.scope == "r->sink"].set_index("class").delay_mean_s
    assert t.per_packet.tolist() == pytest.approx([c["ts"] / c["ds"]] * 2, rel=1e-12)
    assert (t.interval_p05 <= t.interval_mean).all() and (t.interval_mean <= t.interval_p95).all()
    res.write(tmp_path / "run")
    back = pd.read_parquet(tmp_path / "run" / "delay_ratios.parquet")
    pd.testing.assert_frame_equal(back, t)
    # a scenario that asks for none gets an empty table with the same columns
    plain = run(TWO_CLASSES).delay_ratios
    assert plain.empty and list(plain.columns) == list(t.columns)


def test_the_core_estimator_equals_the_time_series_one():
    """Differential: intervals of 250 ms from the end of the warm-up (1 s)
    are the time series' sampling intervals when both are aligned; the run
    lasts 3.01 s so that the sample at 3 s is taken and both see 8 intervals."""
    text = with_ratios(TWO_CLASSES, RATIO.replace('"4ms", "40ms"', '"250ms"'))
    text = text.replace('duration = "3s"', 'duration = "3010ms"\nsample_interval = "250ms"')
    res = run(text)
    row = res.delay_ratios.iloc[0]
    ratios = catalog.interval_ratios(res.timeseries, "r->sink", "ts", "ds", warmup_s=1.0)
    assert row.intervals == 8 and row.intervals_used == len(ratios) >= 6
    assert row.interval_mean == pytest.approx(ratios.mean(), rel=1e-9)
    for q in (5, 25, 50, 75, 95):
        assert row[f"interval_p{q:02d}"] == pytest.approx(np.percentile(ratios, q), rel=1e-9)


ENTRY = """
[reproduce]
title = "delay ratios on two timescales"
assumptions = ["a test entry"]

[reproduce.sweep]
seeds = 2
grid = { load = [0.5, 0.9], timescale_pkts = [10, 100] }
set = { "traffic[0].rate" = "{load * 2}Mbps", "traffic[1].rate" = "{load * 2}Mbps" }

[reproduce.metrics.interval]
table = "delay_ratios"
column = "interval_mean"
where = { scope = "r->sink", numerator = "ts", denominator = "ds", timescale_s = "{timescale_pkts * 0.0004}" }

[reproduce.metrics.per_packet]
table = "delay_ratios"
column = "per_packet"
where = { scope = "r->sink", numerator = "ts", denominator = "ds", timescale_s = 0.004 }

[reproduce.metrics.ts_bytes]
table = "classes"
column = "departures"
where = { scope = "r->sink", class = "ts" }

[[reproduce.claims]]
text = "the low-priority class waits longer"
kind = "stated"
over = { load = [0.5, 0.9], timescale_pkts = [10, 100] }
left = { metric = "interval" }
op = ">"
right = { value = 1 }

[reproduce.table]
title = "both estimators"
metrics = ["per_packet", "interval"]
where = { load = 0.9 }
"""


@pytest.fixture(scope="module")
def ratio_outcome(tmp_path_factory):
    root = tmp_path_factory.mktemp("ratios")
    path = root / "catalog" / "p" / "ratios.toml"
    path.parent.mkdir(parents=True)
    path.write_text(with_ratios(TWO_CLASSES) + ENTRY)
    entry = catalog.load_entry(path, root / "catalog")
    return catalog.reproduce(entry, results=root / "res", jobs=1), root


def test_grid_points_that_change_nothing_share_runs_and_count_once(ratio_outcome):
    out, _ = ratio_outcome
    assert out.runs == 8 and out.ran == 4  # timescale_pkts is read by metrics only
    per_run = pd.read_csv(out.dir / "per_run.csv")
    sw = phblab.open_sweep(out.dir / "sweep")
    for _, r in per_run.iterrows():
        run_dir = out.dir / "sweep" / "runs" / r.run
        ratios = pd.read_parquet(run_dir / "delay_ratios.parquet").set_index("timescale_s")
        classes = pd.read_parquet(run_dir / "classes.parquet")
        # the row of the grid point's own timescale
        assert r.interval == pytest.approx(ratios.interval_mean[round(r.timescale_pkts * 0.0004, 12)])
        assert r.per_packet == pytest.approx(ratios.per_packet[0.004])
        # a sum over a run's rows is not multiplied by the grid points sharing the run
        want = classes[(classes.scope == "r->sink") & (classes["class"] == "ts")].departures.sum()
        assert r.ts_bytes == want
    assert len(sw.delay_ratios) == 8 * 2 and set(sw.delay_ratios.columns) >= {"load", "timescale_pkts", "seed"}


def test_the_point_table_reaches_comparison_json_the_text_and_the_report(ratio_outcome):
    out, root = ratio_outcome
    doc = json.loads((out.dir / "comparison.json").read_text())
    table = doc["table"]
    assert table["title"] == "both estimators" and table["keys"] == ["load", "timescale_pkts"]
    assert [m["name"] for m in table["metrics"]] == ["per_packet", "interval"]
    assert [(r["load"], r["timescale_pkts"]) for r in table["rows"]] == [(0.9, 10), (0.9, 100)]
    means = out.per_point.set_index(["metric", "load", "timescale_pkts"])["mean"]
    for r in table["rows"]:
        assert r["interval"] == pytest.approx(means[("interval", 0.9, r["timescale_pkts"])])
        assert r["interval_ci_low"] <= r["interval"] <= r["interval_ci_high"]
    # the per-packet ratio is the same at both timescales; the interval one is not
    assert table["rows"][0]["per_packet"] == table["rows"][1]["per_packet"]
    assert table["rows"][0]["interval"] != table["rows"][1]["interval"]
    text = catalog.format_outcome(out)
    assert "table: both estimators" in text and re.search(
        r"load=0.9, timescale_pkts=10: per_packet \S+, interval", text
    )
    page = write_report(root / "report", results=root / "res", entries=[out.entry]).read_text()
    assert "<b>both estimators</b>" in page and page.count("<tr>") >= 1 + 2


@pytest.mark.parametrize(
    "old, new, message",
    [
        (
            'timescale_s = "{timescale_pkts * 0.0004}"',
            'timescale_s = "{packets * 0.0004}"',
            "metrics.interval.where.timescale_s: template '{packets * 0.0004}': 'packets' is not a grid key",
        ),
        ('metrics = ["per_packet", "interval"]', 'metrics = ["nope"]', "table: metric 'nope' is not a per-point"),
        ("where = { load = 0.9 }", "where = { load = 0.7 }", "table.where: load = 0.7 is not in the grid"),
        ('title = "both estimators"', "colour = 1", "table: unknown key colour"),
        ('table = "classes"', 'table = "nosuch"', "table 'nosuch': 'classes', 'flows', 'delay_ratios'"),
    ],
)
def test_malformed_ratio_metrics_and_tables_fail_at_load(tmp_path, old, new, message):
    text = with_ratios(TWO_CLASSES) + ENTRY
    assert old in text, old
    path = tmp_path / "e.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(catalog.CatalogError, match=re.escape(message)):
        catalog.load_entry(path)


def test_a_delay_ratios_metric_needs_the_scenario_to_ask(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(TWO_CLASSES + ENTRY)
    with pytest.raises(catalog.CatalogError, match=re.escape('table = "delay_ratios" needs run.delay_ratios')):
        catalog.load_entry(path)
