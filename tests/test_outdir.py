"""Data safety of output directories: scenario names cannot leave the
results root, phblab replaces only what it wrote, one writer at a time, and
a sweep reuses a run only if its files match their manifest."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import tomllib

import pandas as pd
import pyarrow.parquet as pq
import pytest

import phblab
from conftest import SCENARIO
from phblab import outdir
from phblab.sweep import make_plan


def short_scenario():
    """The conftest scenario, 2 s long, as a dict."""
    doc = tomllib.loads(SCENARIO)
    doc["run"]["duration"] = "2s"
    return doc


def phblab_cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "phblab", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120
    )


@pytest.mark.parametrize("name", ["/tmp/victim", "../../x", ".", "..", "a/b", "x\\u0000y", ".hidden", ""])
def test_a_scenario_name_cannot_leave_the_results_root(tmp_path, name):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "summary.json").write_text("{}")
    (victim / "precious.txt").write_text("keep")
    work = tmp_path / "work"
    work.mkdir()
    text = SCENARIO.replace("[run]", f'name = "{name.replace("/tmp/victim", str(victim))}"\n\n[run]', 1)
    (work / "s.toml").write_text(text)
    r = phblab_cli("run", "s.toml", "-q", cwd=work)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "name" in r.stderr and "Traceback" not in r.stderr
    assert (victim / "precious.txt").read_text() == "keep"
    assert sorted(p.name for p in work.iterdir()) == ["s.toml"]


def test_a_directory_that_is_not_ours_is_refused_and_left_alone(tmp_path):
    results = phblab.run(short_scenario())
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "classes.parquet").write_bytes(b"a user's file")
    with pytest.raises(outdir.NotOurs, match="did not write"):
        results.write(mine)
    assert (mine / "classes.parquet").read_bytes() == b"a user's file"
    assert sorted(p.name for p in mine.iterdir()) == ["classes.parquet"]


def test_a_file_phblab_did_not_write_is_never_replaced(tmp_path):
    results = phblab.run(short_scenario())
    out = tmp_path / "out"
    results.write(out)
    # phblab's own summary.json is replaced, but a file in the way that
    # phblab did not record (here: a table name of a later version) is not
    (out / "extra.parquet").write_bytes(b"user")
    later = phblab.Results(results.summary, {**results._parquet, "extra": results._parquet["classes"]})
    with pytest.raises(outdir.NotOurs, match="extra.parquet was not written by phblab"):
        later.write(out)
    assert (out / "extra.parquet").read_bytes() == b"user"
    assert outdir.verify(out) is None  # the earlier write is untouched


def test_a_result_of_an_older_phblab_is_replaced_and_its_other_files_kept(tmp_path):
    out = tmp_path / "old"
    out.mkdir()
    (out / "summary.json").write_text('{"phblab_version": "0.0.1"}')
    (out / "classes.parquet").write_bytes(b"old")
    (out / "notes.txt").write_text("mine")
    phblab.run(short_scenario()).write(out)
    assert outdir.verify(out) is None
    assert pd.read_parquet(out / "classes.parquet").shape[0] > 0
    assert (out / "notes.txt").read_text() == "mine"


def test_an_interrupted_write_is_known_as_ours_and_incomplete(tmp_path):
    out = tmp_path / "out"
    results = phblab.run(short_scenario())

    class Boom(Exception):
        pass

    with pytest.raises(Boom), outdir.writing(out, "run") as staging:
        (staging / "summary.json").write_text("{}")
        raise Boom
    assert outdir.verify(out) == "its writing was interrupted"
    assert sorted(p.name for p in out.iterdir()) == [outdir.LOCK, outdir.MANIFEST]
    results.write(out)
    assert outdir.verify(out) is None


HOLD_LOCK = textwrap.dedent(
    """
    import sys, time
    from phblab import outdir
    with outdir.lock(sys.argv[1]):
        print("locked", flush=True)
        time.sleep(60)
    """
)


def test_a_second_writer_is_refused_and_the_lock_dies_with_its_holder(scenario_file, tmp_path):
    out = tmp_path / "sw"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        r = phblab_cli("sweep", scenario_file, "--grid", "qdiscs.bottleneck.max_p=0.1,0.2", "--out", out, cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        assert "is being written by phblab (pid" in r.stderr and "Traceback" not in r.stderr
        assert not (out / "runs").exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # the OS released the killed holder's lock: the sweep runs now
    sw = phblab.sweep(scenario_file, grid={"qdiscs.bottleneck.max_p": [0.1, 0.2]}, jobs=1, out=out)
    assert len(sw.runs) == 2


def _truncate(parquet, rows):
    table = pq.read_table(parquet)
    pq.write_table(table.slice(0, rows), parquet)


def test_resume_reruns_runs_whose_files_do_not_match_their_manifest(scenario_file, tmp_path):
    grid = {"qdiscs.bottleneck.max_p": [0.1, 0.2]}
    out = tmp_path / "sw"
    first = phblab.sweep(scenario_file, grid=grid, seeds=2, jobs=1, out=out)
    rows = len(first.classes)
    plan = make_plan(scenario_file, grid, 2)
    truncated, corrupt, intact = (out / "runs" / plan.runs[i].key for i in range(3))
    _truncate(truncated / "classes.parquet", 3)  # still a valid Parquet file
    (corrupt / "flows.parquet").write_bytes(b"not parquet")
    mtime = os.stat(intact / "classes.parquet").st_mtime_ns

    again = phblab.sweep(scenario_file, grid=grid, seeds=2, jobs=1, out=out)
    assert again.ran == 2
    assert {r.spec.key: r.reason for r in again.reruns} == {
        plan.runs[0].key: "classes.parquet does not match its manifest",
        plan.runs[1].key: "flows.parquet does not match its manifest",
    }
    assert len(again.classes) == rows
    pd.testing.assert_frame_equal(again.classes, first.classes)
    assert os.stat(intact / "classes.parquet").st_mtime_ns == mtime


def test_the_sweep_command_says_which_runs_it_reran(scenario_file, tmp_path):
    out = tmp_path / "sw"
    args = ["sweep", scenario_file, "--grid", "qdiscs.bottleneck.max_p=0.1,0.2", "--out", out, "-q", "-j", "1"]
    assert phblab_cli(*args, cwd=tmp_path).returncode == 0
    key = json.loads((out / "sweep.json").read_text())["runs"][1]
    (out / "runs" / key / "summary.json").unlink()
    r = phblab_cli(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"note: run {key} (qdiscs.bottleneck.max_p=0.2, seed 1): summary.json is missing; rerun" in r.stderr


def test_a_sweep_into_a_directory_that_is_not_ours_is_refused(scenario_file, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "data.csv").write_text("1,2")
    r = phblab_cli("sweep", scenario_file, "--grid", "qdiscs.bottleneck.max_p=0.1", "--out", mine, cwd=tmp_path)
    assert r.returncode == 2 and "did not write (data.csv)" in r.stderr
    assert sorted(p.name for p in mine.iterdir()) == ["data.csv"]


def test_the_report_keeps_files_it_did_not_write(tmp_path):
    from phblab import report

    out = tmp_path / "report"
    report.write_report(out=out, results=tmp_path / "none", entries=[])
    (out / "notes.txt").write_text("mine")
    report.write_report(out=out, results=tmp_path / "none", entries=[])
    assert (out / "notes.txt").read_text() == "mine"
    assert outdir.verify(out) is None
