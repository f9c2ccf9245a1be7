"""Sweeps: the dataset, resumption after an interrupted sweep, the Dask
backend, statistics across seeds, the `phblab sweep` command."""

import concurrent.futures as cf
import json
import math
import re
import subprocess
import sys
import threading

import pandas as pd
import pytest

import phblab
from phblab import outdir, stats
from phblab.sweep import SweepError, make_plan, parse_grid_arg, render

GRID = {"qdiscs.bottleneck.max_p": [0.05, 0.2], "rate": [1, 2]}
SET = {"traffic[1].rate": "{rate}Mbps"}


def tables(directory):
    """The dataset of a sweep directory, without the one column that measures
    the machine rather than the run (wall_time_s)."""
    return {
        "classes": pd.read_parquet(directory / "classes.parquet"),
        "flows": pd.read_parquet(directory / "flows.parquet"),
        "runs": pd.read_parquet(directory / "runs.parquet").drop(columns="wall_time_s"),
        "summary": pd.read_parquet(directory / "summary.parquet"),
    }


def assert_same(a, b):
    assert a.keys() == b.keys()
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name], check_exact=True, obj=name)


def test_dataset_has_one_row_per_run_and_row(scenario_file, tmp_path):
    sw = phblab.sweep(scenario_file, grid=GRID, set=SET, seeds=2, jobs=1, out=tmp_path / "sw")
    assert len(sw.runs) == 2 * 2 * 2 and sw.ran == 8
    assert list(sw.classes.columns[:4]) == ["qdiscs.bottleneck.max_p", "rate", "seed", "run"]
    assert not sw.classes.duplicated(["run", "scope", "class"]).any()
    assert not sw.flows.duplicated(["run", "flow"]).any()
    # plan order: grid points as given, then seeds
    assert list(sw.runs.seed) == [1, 2] * 4
    assert list(sw.runs.rate) == [1, 1, 2, 2] * 2
    # the derived override reached the scenario: 10 sources at 2 Mb/s while ON offer more
    e2e = sw.classes[(sw.classes.scope == "end-to-end") & (sw.classes["class"] == "be")]
    assert e2e[e2e.rate == 2].arrivals.mean() > 1.5 * e2e[e2e.rate == 1].arrivals.mean()
    # a run equals the same run made directly
    direct = phblab.run(scenario_file, seed=2, overrides={"qdiscs.bottleneck.max_p": 0.2, "traffic[1].rate": "2Mbps"})
    mine = sw.classes[(sw.classes["qdiscs.bottleneck.max_p"] == 0.2) & (sw.classes.rate == 2) & (sw.classes.seed == 2)]
    pd.testing.assert_frame_equal(mine.iloc[:, 4:].reset_index(drop=True), direct.classes)
    manifest = json.loads((sw.dir / "sweep.json").read_text())
    assert manifest["grid"] == GRID and manifest["seeds"] == [1, 2]


class Interrupted(Exception):
    pass


class DyingExecutor(cf.ThreadPoolExecutor):
    """Runs the first `n` submissions; every later one fails, as if the
    sweep had been killed after n runs."""

    def __init__(self, n):
        super().__init__(max_workers=2)
        self.n = n
        self.lock = threading.Lock()

    def submit(self, fn, *args, **kwargs):
        with self.lock:
            self.n -= 1
            dead = self.n < 0

        def die(*_):
            raise Interrupted("killed")

        return super().submit(die if dead else fn, *args, **kwargs)


def test_interrupted_sweep_resumes_to_the_same_dataset(scenario_file, tmp_path):
    whole = phblab.sweep(scenario_file, grid=GRID, set=SET, seeds=2, jobs=1, out=tmp_path / "whole")

    out = tmp_path / "resumed"
    with DyingExecutor(3) as ex, pytest.raises(SweepError, match="rerun to resume"):
        phblab.sweep(scenario_file, grid=GRID, set=SET, seeds=2, out=out, client=ex)
    runs = out / "runs"
    assert len([p for p in runs.iterdir() if (p / "summary.json").is_file()]) == 3
    assert not (out / "classes.parquet").exists()  # no dataset from an incomplete sweep
    # what a kill during a write leaves behind: a run directory marked as being
    # written, with a half-written file in its staging directory
    plan = make_plan(scenario_file, GRID, 2, set=SET)
    half = runs / plan.runs[-2].key
    with outdir.lock(half):
        (half / f"{outdir.STAGING_PREFIX}12345").mkdir()
        (half / f"{outdir.STAGING_PREFIX}12345" / "classes.parquet").write_text("half")

    resumed = phblab.sweep(scenario_file, grid=GRID, set=SET, seeds=2, jobs=2, out=out)
    assert resumed.ran == 8 - 3
    assert_same(tables(whole.dir), tables(out))
    assert sorted(p.name for p in runs.iterdir()) == sorted(r.key for r in plan.runs)
    # a rerun of a complete sweep runs nothing and writes the same dataset
    again = phblab.sweep(scenario_file, grid=GRID, set=SET, seeds=2, jobs=2, out=out)
    assert again.ran == 0
    assert_same(tables(whole.dir), tables(out))


def test_more_seeds_reuse_the_runs_of_fewer(scenario_file, tmp_path):
    out = tmp_path / "sw"
    phblab.sweep(scenario_file, grid={"qdiscs.bottleneck.max_p": [0.1]}, seeds=2, jobs=1, out=out)
    sw = phblab.sweep(scenario_file, grid={"qdiscs.bottleneck.max_p": [0.1]}, seeds=3, jobs=1, out=out)
    assert sw.ran == 1 and list(sw.runs.seed) == [1, 2, 3]


def test_dask_local_cluster_gives_the_local_results(scenario_file, tmp_path):
    distributed = pytest.importorskip("distributed")
    local = phblab.sweep(scenario_file, grid=GRID, set=SET, seeds=2, jobs=2, out=tmp_path / "local")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        dask = phblab.sweep(scenario_file, grid=GRID, set=SET, seeds=2, out=tmp_path / "dask", client=client)
    assert dask.ran == 8
    assert_same(tables(local.dir), tables(dask.dir))


def test_summary_mean_and_confidence_interval():
    df = pd.DataFrame({"x": [1, 1, 1, 2], "seed": [1, 2, 3, 1], "v": [1.0, 2.0, 3.0, 5.0]})
    s = stats.summarize(df, by=["x"])
    assert list(s.metric) == ["v", "v"]
    one = s.iloc[0]
    assert one.n == 3 and one["mean"] == 2.0 and one["std"] == 1.0
    assert one.ci_half == pytest.approx(4.302653 / math.sqrt(3), rel=1e-5)  # t(0.975, 2)
    assert s.iloc[1].n == 1 and math.isnan(s.iloc[1].ci_half)


def test_sweep_summary_covers_every_numeric_metric(scenario_file, tmp_path):
    sw = phblab.sweep(scenario_file, grid={"qdiscs.bottleneck.max_p": [0.1]}, seeds=3, jobs=1, out=tmp_path / "sw")
    s = pd.read_parquet(sw.dir / "summary.parquet")
    assert {"delay_mean_s", "throughput_bps", "loss_rate", "arrivals"} <= set(s.metric)
    assert "seed" not in set(s.metric)
    row = s[(s.scope == "end-to-end") & (s["class"] == "be") & (s.metric == "throughput_bps")].iloc[0]
    values = sw.classes[(sw.classes.scope == "end-to-end") & (sw.classes["class"] == "be")].throughput_bps
    assert row["mean"] == pytest.approx(values.mean()) and row.n == 3
    assert row.ci_low < row["mean"] < row.ci_high
    groups = pd.read_parquet(sw.dir / "group_summary.parquet")
    assert {"onoff", "cbr"} == set(groups.group)


def test_grid_arguments_and_templates():
    assert parse_grid_arg("qdiscs.red.max_p=0.1,0.2") == ("qdiscs.red.max_p", [0.1, 0.2])
    assert parse_grid_arg("links[1].delay=10ms, 20ms") == ("links[1].delay", ["10ms", "20ms"])
    assert parse_grid_arg('traffic[0].path=["a", "b"],["a", "c", "b"]') == (
        "traffic[0].path",
        [["a", "b"], ["a", "c", "b"]],
    )
    with pytest.raises(ValueError, match="KEY=V1"):
        parse_grid_arg("max_p")
    assert render("{R_ms/2 - 1}ms", {"R_ms": 20}) == "9ms"
    assert render("{R_ms/2 - 1}ms", {"R_ms": 25}) == "11.5ms"
    assert render("{p_pct/100}", {"p_pct": 0.5}) == 0.005
    assert render("{q}", {"q": "red"}) == "red"
    with pytest.raises(ValueError, match="unknown parameter"):
        render("{x}", {"R_ms": 1})
    with pytest.raises(ValueError, match="unsupported"):
        render("{__import__('os')}", {})


def test_run_keys_depend_on_what_determines_a_run(scenario_file):
    a = make_plan(scenario_file, {"qdiscs.bottleneck.max_p": [0.1, 0.2]}, 2)
    keys = [r.key for r in a.runs]
    assert len(set(keys)) == 4
    assert keys == [r.key for r in make_plan(scenario_file, {"qdiscs.bottleneck.max_p": [0.1, 0.2]}, 2).runs]
    b = make_plan(scenario_file, {"qdiscs.bottleneck.max_p": [0.1, 0.2]}, 2, overrides={"run.duration": "4s"})
    assert not set(keys) & {r.key for r in b.runs}


def test_bad_grid_value_is_a_scenario_error(scenario_file, tmp_path):
    with pytest.raises(phblab.ScenarioError, match="max_p"):
        phblab.sweep(scenario_file, grid={"qdiscs.bottleneck.max_p": [0.1, 7]}, jobs=1, out=tmp_path / "sw")


def test_sweep_command(scenario_file, tmp_path):
    out = tmp_path / "sw"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "phblab",
            "sweep",
            scenario_file,
            "--grid",
            "qdiscs.bottleneck.max_p=0.05,0.2",
            "--seeds",
            "2",
            "--jobs",
            "2",
            "--out",
            out,
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert re.search(r"4 runs: all run now, in [0-9.]+ s, [0-9.]+ runs/s\n", r.stdout), r.stdout
    assert "± " in r.stdout and f"sweep written to {out}/" in r.stdout
    assert len(pd.read_parquet(out / "runs.parquet")) == 4
    again = [sys.executable, "-m", "phblab", "sweep", scenario_file, "--out", out, "--seeds", "2"]
    r = subprocess.run([*again, "--grid", "qdiscs.bottleneck.max_p=0.05,0.2"], capture_output=True, text=True)
    assert re.search(r"4 runs: all reused, summarised in [0-9.]+ s\n", r.stdout), r.stdout
    r = subprocess.run([*again, "--grid", "qdiscs.bottleneck.max_p=0.2,0.3"], capture_output=True, text=True)
    assert re.search(r"4 runs: 2 run now, 2 reused, in [0-9.]+ s, [0-9.]+ runs/s\n", r.stdout), r.stdout
    assert f"note: {out}/runs/ also keeps 2 runs of other grid values or seeds, left out of this dataset" in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "phblab", "sweep", scenario_file, "--grid", "max_p=1"], capture_output=True, text=True
    )
    assert r.returncode == 2 and "not a scenario path" in r.stderr


def test_a_grid_over_a_generator_s_count_regenerates_the_network(tmp_path):
    """Grid keys are overrides, applied before generators expand: a grid over
    `generators[0].count` sweeps the size of the generated network."""
    star = {
        "run": {"duration": "1s"},
        "classes": {"be": 0},
        "nodes": {"hosts": ["srv"]},
        "links": [{"between": ["hub", "srv"], "rate": "10Mbps", "delay": "1ms"}],
        "generators": [
            {
                "kind": "star",
                "name": "st",
                "count": 1,
                "hub": "hub",
                "leaf_links": {"rate": "10Mbps", "delay": {"uniform": ["1ms", "5ms"]}},
                "traffic": {"kind": "cbr", "class": "be", "to": "srv", "packet_size": "500B", "rate": "1Mbps"},
            }
        ],
    }
    sw = phblab.sweep(star, grid={"generators[0].count": [1, 3]}, jobs=1, out=tmp_path / "sw")
    flows = sw.flows.groupby("generators[0].count").flow.apply(sorted)
    assert flows.to_dict() == {1: ["st.0"], 3: ["st.0", "st.1", "st.2"]}
    with pytest.raises(phblab.ScenarioError, match=r"generators\[0\]\.count: count must be at least 1"):
        phblab.sweep(star, grid={"generators[0].count": [0]}, jobs=1, out=tmp_path / "bad")


def test_plots_of_a_replaced_dataset_are_removed(scenario_file, tmp_path):
    """The figures `phblab plot` drew into a sweep's plots/ go when the
    dataset is rewritten with other data (another grid); a file the user
    put there, and a figure edited since, stay. The same holds for a run."""
    from phblab import plot

    out = tmp_path / "sw"
    phblab.sweep(scenario_file, grid={"qdiscs.bottleneck.max_p": [0.1, 0.2]}, jobs=1, out=out)
    drawn = plot.plot_metric(out)
    second = plot.plot_metric(out, y="loss_rate")
    notes = out / "plots" / "notes.txt"
    notes.write_text("mine")
    phblab.sweep(scenario_file, grid={"qdiscs.bottleneck.max_p": [0.1, 0.2]}, jobs=1, out=out)
    assert all(p.is_file() for p in drawn + second)  # the same data: the plots still match it
    second[0].write_bytes(b"edited")
    phblab.sweep(scenario_file, grid={"qdiscs.bottleneck.max_p": [0.1, 0.3]}, jobs=1, out=out)
    assert not any(p.exists() for p in drawn + second[1:])
    assert second[0].read_bytes() == b"edited" and notes.read_text() == "mine"
    assert not (out / "plots" / "manifest.json").exists()

    run = tmp_path / "run"
    phblab.run(scenario_file, out=run)
    cdf = plot.plot_delay_cdf(run)
    phblab.run(scenario_file, out=run)  # the same tables (a new summary.json): kept
    assert all(p.is_file() for p in cdf)
    phblab.run(scenario_file, seed=2, out=run)
    assert not any(p.exists() for p in cdf) and not (run / "plots").exists()


def test_the_progress_bar_s_time_left_is_at_the_average_pace():
    """Runs end in bursts on parallel workers; the time left is what the
    average pace since the start gives, not a moving average of the gaps."""
    import io

    from phblab.sweep import progress_bar

    clock = [100.0]
    bar = progress_bar("x", total=30, done=10)
    bar.fp = io.StringIO()
    bar._time = lambda: clock[0]
    bar.start_t = bar.last_print_t = 100.0
    for t in [0.1, 0.2, 5.0, 5.05, 30.0]:  # a burst, a long gap, a burst, a slow one
        clock[0] = 100.0 + t
        bar.update(1)
    left = bar.format_dict
    assert left["rate"] is None  # no moving average: tqdm takes (n - initial) / elapsed
    shown = bar.format_meter(**left)
    bar.close()
    assert shown.endswith("00:30<01:30"), shown  # 15 runs left at 5 runs per 30 s
