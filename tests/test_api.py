"""The Python API: phblab.run / phblab.validate with files, dicts and overrides."""

import hashlib
import json
import pickle
import subprocess
import sys
import tomllib

import pandas as pd
import pyarrow.parquet as pq
import pytest

import phblab
from conftest import SCENARIO, TABLES
from phblab.scenario import to_toml

CLASS_COLUMNS = [
    "scope",
    "class",
    "arrivals",
    "departures",
    "dropped",
    "drop_overflow",
    "drop_early",
    "drop_forced",
    "loss_rate",
    "delay_mean_s",
    "delay_p50_s",
    "delay_p95_s",
    "delay_p99_s",
    "delay_max_s",
    "throughput_bps",
    "queued_end",
]


def scenario_dict() -> dict:
    doc = tomllib.loads(SCENARIO)
    doc["name"] = "small"
    return doc


def e2e(res: phblab.Results, cls: str) -> pd.Series:
    c = res.classes
    return c[(c.scope == "end-to-end") & (c["class"] == cls)].iloc[0]


def test_exports():
    assert isinstance(phblab.__version__, str) and phblab.__version__
    assert issubclass(phblab.ScenarioError, ValueError)
    assert issubclass(phblab.RunError, RuntimeError)


def test_to_toml_round_trips():
    doc = scenario_dict()
    doc["odd key"] = {'quote"d': "a\nb", "list": [1, 2.5, True, "x"], "t": {"u": -1}}
    assert tomllib.loads(to_toml(doc)) == doc


def test_validate_file_and_dict(scenario_file):
    d = phblab.validate(scenario_file)
    assert d["name"] == "small"
    assert (d["nodes"], d["links"], d["flows"]) == (4, 3, 11)
    assert d["classes"] == ["be", "ef"]
    assert d["duration_s"] == pytest.approx(5.0) and d["warmup_s"] == pytest.approx(1.0)
    assert d["seed"] == 1
    assert phblab.validate(scenario_dict()) == d
    assert phblab.validate(scenario_dict(), {"run.duration": "7s"})["duration_s"] == pytest.approx(7.0)


def test_scenario_error_names_the_key(scenario_file):
    doc = scenario_dict()
    doc["run"]["durration"] = doc["run"].pop("duration")
    with pytest.raises(phblab.ScenarioError, match="durration"):
        phblab.validate(doc)
    with pytest.raises(ValueError, match="links\\[1\\].rate"):
        phblab.run(scenario_file, overrides=["links[1].rate=fast"])


def test_run_file_tables_and_columns(scenario_file):
    res = phblab.run(scenario_file)
    assert res.summary["scenario"] == "small" and res.summary["seed"] == 1
    assert res.summary["events"] > 0
    for name in TABLES:
        assert isinstance(res.tables[name], pd.DataFrame)
    assert res.classes is res.tables["classes"]
    assert set(CLASS_COLUMNS) <= set(res.classes.columns)
    assert {"flow", "class", "throughput_bps"} <= set(res.flows.columns)
    assert len(res.flows) == 11
    assert {"time_s", "scope", "class", "metric", "value"} <= set(res.timeseries.columns)
    assert set(res.classes.scope) >= {"end-to-end", "r1->r2"}


def test_cbr_gets_its_rate(scenario_file):
    res = phblab.run(scenario_file)
    cbr = e2e(res, "ef")
    assert cbr.throughput_bps == pytest.approx(2e6, rel=0.02)
    assert cbr.loss_rate < 0.02
    # The minimum one-way delay is propagation (12 ms) plus three transmissions.
    assert cbr.delay_p50_s > 0.012


def test_dict_scenario_equals_file(scenario_file):
    from_file = phblab.run(scenario_file, seed=4)
    from_dict = phblab.run(scenario_dict(), seed=4)
    for name in TABLES:
        pd.testing.assert_frame_equal(from_file.tables[name], from_dict.tables[name])


def test_overrides_dict_or_list(scenario_file):
    base = phblab.run(scenario_file)
    as_dict = phblab.run(scenario_file, overrides={"links[1].rate": "3Mbps", "qdiscs.bottleneck.max_p": 0.2})
    as_list = phblab.run(scenario_file, overrides=["links[1].rate=3Mbps", "qdiscs.bottleneck.max_p=0.2"])
    pd.testing.assert_frame_equal(as_dict.classes, as_list.classes)
    assert as_dict.summary["overrides"] == ['links[1].rate="3Mbps"', "qdiscs.bottleneck.max_p=0.2"]
    total = lambda r: e2e(r, "be").throughput_bps + e2e(r, "ef").throughput_bps  # noqa: E731
    assert total(as_dict) < 3.1e6 < total(base)


def test_same_seed_same_results_other_seed_differs(scenario_file):
    a, b, c = (phblab.run(scenario_file, seed=s) for s in (11, 11, 12))
    for name in TABLES:
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name])
    assert not a.classes.equals(c.classes)
    assert c.summary["seed"] == 12


def test_progress_callback(scenario_file):
    seen = []
    phblab.run(scenario_file, progress=seen.append)
    assert seen and all(0.0 <= f <= 1.0 for f in seen)
    assert seen[-1] == 1.0
    assert seen == sorted(seen)


def test_progress_callback_errors_propagate(scenario_file):
    def boom(fraction):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        phblab.run(scenario_file, progress=boom)


def test_write_and_out(scenario_file, tmp_path):
    out = tmp_path / "deep" / "res"
    res = phblab.run(scenario_file, out=out, overrides={"run.seed": 5})
    assert res.summary["seed"] == 5
    for name in TABLES:
        back = pd.read_parquet(out / f"{name}.parquet")
        assert list(back.columns) == list(res.tables[name].columns)
        assert len(back) == len(res.tables[name])
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["classes"]) == len(res.classes)
    assert summary["overrides"] == ["run.seed=5"]
    res.write(out)  # replacing a previous result
    assert sorted(p.name for p in out.parent.iterdir()) == ["res"]


def test_load_gives_back_what_run_returned(scenario_file, tmp_path):
    res = phblab.run(scenario_file, out=tmp_path / "r")
    back = phblab.load(tmp_path / "r")
    assert back.summary == {
        k: v for k, v in json.loads((tmp_path / "r" / "summary.json").read_text()).items() if k != "classes"
    }
    for name in ["classes", "flows", "timeseries", "transfers"]:
        pd.testing.assert_frame_equal(back.tables[name], res.tables[name])
    assert back.scenario_text == (tmp_path / "r" / "scenario.toml").read_text() == scenario_file.read_text()
    assert back.summary["scenario_sha256"] == hashlib.sha256(scenario_file.read_bytes()).hexdigest()
    (tmp_path / "r" / "flows.parquet").write_bytes(b"changed")
    with pytest.raises(ValueError, match="flows.parquet does not match its manifest"):
        phblab.load(tmp_path / "r")


def test_every_column_carries_its_description_and_unit(scenario_file, tmp_path):
    phblab.run(scenario_file, out=tmp_path / "r")
    schema = pq.read_schema(tmp_path / "r" / "classes.parquet")
    meta = schema.field("loss_rate").metadata
    assert meta[b"unit"] == b"fraction" and b"dropped" in meta[b"description"]
    assert schema.field("delay_p99_s").metadata[b"unit"] == b"s"
    assert pq.read_metadata(tmp_path / "r" / "flows.parquet").metadata[b"phblab_version"] == phblab.__version__.encode()
    for name in ["classes", "flows", "timeseries", "transfers"]:
        for field in pq.read_schema(tmp_path / "r" / f"{name}.parquet"):
            assert field.metadata and field.metadata[b"description"], f"{name}.{field.name}"


def test_results_survive_pickling(scenario_file):
    res = phblab.run(scenario_file)
    back = pickle.loads(pickle.dumps(res))
    pd.testing.assert_frame_equal(back.flows, res.flows)


LEAN = """
import sys
from phblab.cli import main
try:
    status = main(sys.argv[1:])
except SystemExit as e:  # --version
    status = e.code
heavy = sorted(m for m in ("pandas", "pyarrow", "matplotlib", "numpy", "scipy") if m in sys.modules)
print("heavy:", ",".join(heavy))
sys.exit(status)
"""


def test_the_command_loads_no_heavy_library_to_run(scenario_file, tmp_path):
    for args in (
        ["--version"],
        ["validate", str(scenario_file)],
        ["run", str(scenario_file), "-q", "--out", str(tmp_path / "r")],
    ):
        r = subprocess.run([sys.executable, "-c", LEAN, *args], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "heavy: \n" in r.stdout, (args, r.stdout)
    r = subprocess.run(
        [sys.executable, "-c", "import phblab, sys; print('pandas' in sys.modules)"], capture_output=True, text=True
    )
    assert r.stdout.strip() == "False"


def test_the_printed_summary_says_what_its_counts_cover(scenario_file, tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "phblab", "run", str(scenario_file), "--out", str(tmp_path / "r")],
        capture_output=True,
        text=True,
    )
    assert "counts as received only" in r.stdout
