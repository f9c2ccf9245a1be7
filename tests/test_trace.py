"""Packet traces through the front end: a scenario's `[trace]` writes
`events.parquet` beside the other tables wherever a run's results go
(`phblab run`, the Python API, each run of a sweep); validation for
`phblab emulate` takes it."""

import gc
import json
import subprocess
import sys
import tempfile

import pandas as pd
import pytest

import phblab
from conftest import SCENARIO

TRACE = '\n[trace]\nlinks = ["r1->r2"]\n'


def phblab_cli(*args):
    return subprocess.run([sys.executable, "-m", "phblab", *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def traced_file(tmp_path):
    path = tmp_path / "traced.toml"
    path.write_text(SCENARIO + TRACE)
    return path


def _check_events(events: pd.DataFrame, classes: pd.DataFrame) -> None:
    """The event log of r1->r2: every event kind, both classes, and at
    least as many arrivals per class as the classes table counts after the
    warm-up (the trace covers the whole run)."""
    assert set(events.scope.astype(str)) == {"r1->r2"}
    assert {"arrive", "enqueue", "dequeue", "deliver"} <= set(events.event.astype(str))
    arrivals = events[events.event == "arrive"].groupby("class", observed=True).size()
    counted = classes[classes.scope == "r1->r2"].set_index("class")["arrivals"]
    assert set(arrivals.index.astype(str)) == {"be", "ef"}
    for cls, n in counted.items():
        assert arrivals[cls] >= n > 0


def test_phblab_run_writes_the_event_log_with_the_tables(traced_file, tmp_path):
    out = tmp_path / "run"
    r = phblab_cli("run", traced_file, "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    events = pd.read_parquet(out / "events.parquet")
    _check_events(events, pd.read_parquet(out / "classes.parquet"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert "events.parquet" in manifest["files"]
    assert phblab.load(out).tables["events"].equals(events)


def test_an_untraced_run_writes_no_event_log(scenario_file, tmp_path):
    out = tmp_path / "run"
    assert phblab_cli("run", scenario_file, "--out", out, "--quiet").returncode == 0
    assert not (out / "events.parquet").exists()
    assert "events" not in phblab.load(out).tables


def test_the_api_returns_and_writes_the_event_log(traced_file, tmp_path):
    res = phblab.run(traced_file, out=tmp_path / "api")
    _check_events(res.tables["events"], res.classes)
    on_disk = pd.read_parquet(tmp_path / "api" / "events.parquet")
    assert on_disk.equals(res.tables["events"])
    # the results' copy of the trace outlives a second write and pickling
    res.write(tmp_path / "again")
    assert (tmp_path / "again" / "events.parquet").read_bytes() == (tmp_path / "api" / "events.parquet").read_bytes()


def test_only_a_traced_run_makes_a_scratch_directory_and_it_goes_with_the_results(
    traced_file, scenario_file, tmp_path, monkeypatch
):
    # A worker killed mid-run cannot clean up: so an untraced run makes no
    # directory at all, and a traced one's goes when its results do.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    phblab.run(scenario_file)
    assert list(scratch.iterdir()) == []
    res = phblab.run(traced_file)
    assert len(list(scratch.glob("phblab-trace-*"))) == 1
    del res
    gc.collect()
    assert list(scratch.iterdir()) == []


def test_an_interrupted_traced_run_removes_its_scratch_directory(traced_file, tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    def interrupt(fraction):
        if fraction > 0.5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        phblab.run(traced_file, progress=interrupt)
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_each_run_of_a_sweep_writes_its_own_event_log(traced_file, tmp_path, jobs):
    sw = phblab.sweep(traced_file, grid={"traffic[0].rate": ["1Mbps", "2Mbps"]}, out=tmp_path / "sw", jobs=jobs)
    logs = sorted((tmp_path / "sw" / "runs").glob("*/events.parquet"))
    assert len(logs) == 2 == len(sw.runs)
    cbr_bytes = [pd.read_parquet(p).query("flow == 'cbr' and event == 'arrive'").size_bytes.sum() for p in logs]
    assert cbr_bytes[0] != cbr_bytes[1]  # each run's own trace


def test_emulate_validates_a_trace_as_the_simulator_does(traced_file):
    """The emulator records traces too (tests/test_emulate_trace.py):
    validation for it takes a `[trace]` and refuses a bad key in one line
    naming it, as for the simulator."""
    r = phblab_cli("validate", traced_file, "--backend", "emulate")
    assert r.returncode == 0, r.stderr
    r = phblab_cli("validate", traced_file, "--backend", "emulate", "--set", 'trace.links=["r2->x"]')
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "trace.links[0]" in lines[0], r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "trace" in lines[0], r.stderr
