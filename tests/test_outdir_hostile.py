"""Output directories turned against the user: manifests naming files
outside, symbolic links where phblab writes, one kind of results directory
given to another writer, foreign directories found only after a long run,
and corrupt runs inside a sweep (issue 23, items 1-5). Each test puts the
user's file beside the directory and checks it is untouched."""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import phblab
from conftest import SCENARIO
from phblab import outdir
from phblab.sweep import make_plan

ROOT = Path(__file__).resolve().parents[1]
GRID = "qdiscs.bottleneck.max_p=0.1,0.2"


def short_scenario():
    doc = tomllib.loads(SCENARIO)
    doc["run"]["duration"] = "2s"
    return doc


def phblab_cli(*args, cwd, env=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "phblab", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def victim(tmp_path):
    """A user's file outside every directory phblab is given."""
    d = tmp_path / "elsewhere"
    d.mkdir()
    notes = d / "notes.txt"
    notes.write_text("the user's notes")
    return notes


def _short_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace('duration = "5s"', 'duration = "2s"'))
    return path


def _one_line_error(r, *words):
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


# ------------------------------------------------------------ 1. manifests


@pytest.mark.parametrize("entry", ["../elsewhere/notes.txt", "ABSOLUTE", "a/../../elsewhere/notes.txt"])
def test_a_manifest_naming_a_file_outside_is_not_phblabs(tmp_path, victim, entry):
    scenario = _short_file(tmp_path)
    out = tmp_path / "out"
    assert phblab_cli("run", scenario, "--out", out, "-q", cwd=tmp_path).returncode == 0
    manifest = json.loads((out / "manifest.json").read_text())
    name = str(victim) if entry == "ABSOLUTE" else entry
    manifest["files"][name] = {"bytes": 16, "sha256": "0" * 64}
    (out / "manifest.json").write_text(json.dumps(manifest))
    r = phblab_cli("run", scenario, "--out", out, "-q", cwd=tmp_path)
    _one_line_error(r, "manifest.json names", "not a file inside the directory", "phblab did not write it")
    assert victim.read_text() == "the user's notes"


def test_a_sweep_run_whose_manifest_names_a_file_outside_is_rerun_without_touching_it(tmp_path, victim):
    scenario = _short_file(tmp_path)
    out = tmp_path / "sw"
    args = ["sweep", scenario, "--grid", GRID, "--out", out, "-q", "-j", "1"]
    assert phblab_cli(*args, cwd=tmp_path).returncode == 0
    key = json.loads((out / "sweep.json").read_text())["runs"][0]
    run = out / "runs" / key
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["files"]["../../../elsewhere/notes.txt"] = {"bytes": 1, "sha256": "0" * 64}
    (run / "manifest.json").write_text(json.dumps(manifest))
    r = phblab_cli(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"note: run {key}" in r.stderr and "rerun" in r.stderr
    assert victim.read_text() == "the user's notes"
    assert outdir.verify(run) is None


def test_manifest_entries_are_checked_for_shape():
    assert outdir._valid_name("classes.parquet") and outdir._valid_name("plots/a.png")
    for bad in ["", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a/.", "x\0y", "manifest.json", ".phblab.lock", 3]:
        assert not outdir._valid_name(bad), bad


# -------------------------------------------------------------- 2. symlinks


def test_a_lock_that_is_a_symbolic_link_is_refused_not_written_through(tmp_path, victim):
    scenario = _short_file(tmp_path)
    out = tmp_path / "out"
    assert phblab_cli("run", scenario, "--out", out, "-q", cwd=tmp_path).returncode == 0
    (out / outdir.LOCK).unlink()
    (out / outdir.LOCK).symlink_to(victim)
    r = phblab_cli("run", scenario, "--out", out, "-q", cwd=tmp_path)
    _one_line_error(r, ".phblab.lock is a symbolic link")
    assert victim.read_text() == "the user's notes"


def test_a_dangling_lock_link_creates_nothing_outside(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "elsewhere" / "created.txt"
    target.parent.mkdir()
    (out / outdir.LOCK).symlink_to(target)
    with pytest.raises(outdir.NotOurs, match="symbolic link"), outdir.lock(out):
        pass
    assert not target.exists()


def test_a_lock_that_is_a_fifo_or_a_hard_link_is_refused(tmp_path, victim):
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / outdir.LOCK)
    with pytest.raises(outdir.NotOurs, match="not a regular file"), outdir.lock(fifo):
        pass
    linked = tmp_path / "linked"
    linked.mkdir()
    os.link(victim, linked / outdir.LOCK)
    with pytest.raises(outdir.NotOurs, match="hard link"), outdir.lock(linked):
        pass
    assert victim.read_text() == "the user's notes"


def test_a_temporary_manifest_name_placed_in_advance_is_not_written_through(tmp_path, victim):
    out = tmp_path / "out"
    results = phblab.run(short_scenario())
    results.write(out)
    (out / f"manifest.json.tmp-{os.getpid()}").symlink_to(victim)
    results.write(out)
    assert victim.read_text() == "the user's notes"
    assert outdir.verify(out) is None


def test_a_symlinked_runs_directory_is_refused(tmp_path, victim):
    scenario = _short_file(tmp_path)
    out = tmp_path / "sw"
    args = ["sweep", scenario, "--grid", GRID, "--out", out, "-q", "-j", "1"]
    assert phblab_cli(*args, cwd=tmp_path).returncode == 0
    elsewhere = victim.parent
    for run in (out / "runs").iterdir():
        run.rename(elsewhere / run.name)
    (out / "runs").rmdir()
    (out / "runs").symlink_to(elsewhere)
    before = sorted(p.name for p in elsewhere.iterdir())
    r = phblab_cli(*args, cwd=tmp_path)
    _one_line_error(r, "runs", "symbolic link")
    assert sorted(p.name for p in elsewhere.iterdir()) == before
    assert victim.read_text() == "the user's notes"


def test_a_run_directory_in_a_sweep_that_is_a_link_is_refused(tmp_path, victim):
    scenario = _short_file(tmp_path)
    out = tmp_path / "sw"
    args = ["sweep", scenario, "--grid", GRID, "--out", out, "-q", "-j", "1"]
    assert phblab_cli(*args, cwd=tmp_path).returncode == 0
    key = json.loads((out / "sweep.json").read_text())["runs"][0]
    run = out / "runs" / key
    for f in run.iterdir():
        f.unlink()
    run.rmdir()
    run.symlink_to(victim.parent)
    _one_line_error(phblab_cli(*args, cwd=tmp_path), key, "symbolic link")
    assert sorted(p.name for p in victim.parent.iterdir()) == ["notes.txt"]


def test_a_symlinked_plots_directory_is_refused(tmp_path, victim):
    scenario = _short_file(tmp_path)
    out = tmp_path / "out"
    assert phblab_cli("run", scenario, "--out", out, "-q", cwd=tmp_path).returncode == 0
    (victim.parent / "delay-cdf-end-to-end.png").write_text("the user's figure")
    (out / "plots").symlink_to(victim.parent)
    r = phblab_cli("plot", out, "--cdf", cwd=tmp_path)
    _one_line_error(r, "plots", "symbolic link")
    assert (victim.parent / "delay-cdf-end-to-end.png").read_text() == "the user's figure"


def test_plot_replaces_its_own_figures_but_never_a_users_file(tmp_path):
    scenario = _short_file(tmp_path)
    out = tmp_path / "out"
    assert phblab_cli("run", scenario, "--out", out, "-q", cwd=tmp_path).returncode == 0
    (tmp_path / "fig.png").write_text("the user's figure")
    r = phblab_cli("plot", out, "--cdf", "--out", tmp_path / "fig", cwd=tmp_path)
    _one_line_error(r, "fig.png was not written by phblab")
    assert (tmp_path / "fig.png").read_text() == "the user's figure"
    assert not (tmp_path / "fig.svg").exists()
    # its own plots, at the default place or a chosen one, are replaced
    for _ in range(2):
        assert phblab_cli("plot", out, "--cdf", cwd=tmp_path).returncode == 0
        assert phblab_cli("plot", out, "--cdf", "--out", tmp_path / "mine", cwd=tmp_path).returncode == 0
    assert (tmp_path / "mine.png").read_bytes().startswith(b"\x89PNG")
    leftovers = [p.name for p in [*tmp_path.iterdir(), *(out / "plots").iterdir()] if "tmp" in p.name]
    assert leftovers == []


# ----------------------------------------------------------------- 3. kinds


def _emulated_run_dir(path):
    """A directory of an emulated run's results (as `phblab emulate`
    writes them), made without emulating."""
    results = phblab.run(short_scenario())
    summary = dict(results.summary, backend="emulate")
    phblab.Results(summary, results._parquet, scenario_text=results.scenario_text).write(path)
    assert outdir.kind_of(path) == "emulated-run"


def test_one_kind_of_results_directory_is_never_replaced_by_another(tmp_path):
    scenario = _short_file(tmp_path)
    sw, run, emulated = tmp_path / "sw", tmp_path / "run", tmp_path / "emulated"
    assert phblab_cli("sweep", scenario, "--grid", GRID, "--out", sw, "-q", "-j", "1", cwd=tmp_path).returncode == 0
    assert phblab_cli("run", scenario, "--out", run, "-q", cwd=tmp_path).returncode == 0
    _emulated_run_dir(emulated)
    listings = {d: sorted(p.name for p in d.iterdir()) for d in (sw, run, emulated)}

    _one_line_error(phblab_cli("run", scenario, "--out", sw, "-q", cwd=tmp_path), "holds a sweep", "a run's results")
    _one_line_error(phblab_cli("report", "--out", run, cwd=tmp_path), "holds a run's results", "with a report")
    _one_line_error(phblab_cli("run", scenario, "--out", emulated, "-q", cwd=tmp_path), "an emulated run's results")
    dumbbell = ROOT / "tests" / "emulate" / "dumbbell-tcp.toml"
    r = phblab_cli("emulate", dumbbell, "--out", run, cwd=tmp_path, env={"PHBLAB_EMU": "/nonexistent/phb-emu"})
    _one_line_error(r, "holds a run's results", "with an emulated run's results")
    r = phblab_cli("sweep", scenario, "--grid", GRID, "--out", run, "-q", cwd=tmp_path)
    _one_line_error(r, "holds a run's results", "with a sweep")

    assert {d: sorted(p.name for p in d.iterdir()) for d in (sw, run, emulated)} == listings
    assert outdir.verify(sw) is None and outdir.verify(run) is None and outdir.verify(emulated) is None
    assert [outdir.kind_of(d) for d in (sw, run, emulated)] == ["sweep", "run", "emulated-run"]


def test_a_manifest_of_an_earlier_version_keeps_its_kind(tmp_path):
    out = tmp_path / "old"
    phblab.run(short_scenario()).write(out)
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps(dict(manifest, kind="reproduce")))
    assert outdir.kind_of(out) == "reproduction"


# ----------------------------------------------------- 4. checked before running


def test_a_foreign_output_is_refused_before_anything_runs(tmp_path):
    scenario = _short_file(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "data.csv").write_text("1,2")
    # a run that would take hours is refused at once
    r = phblab_cli("run", scenario, "--out", mine, "--set", 'run.duration="100000s"', cwd=tmp_path, timeout=60)
    _one_line_error(r, "holds files phblab did not write (data.csv)")
    # the emulator is never started (it would record that it was)
    started = tmp_path / "started"
    fake = tmp_path / "phb-emu"
    fake.write_text(f"#!/bin/sh\ntouch {started}\nexit 1\n")
    fake.chmod(0o755)
    dumbbell = ROOT / "tests" / "emulate" / "dumbbell-tcp.toml"
    r = phblab_cli("emulate", dumbbell, "--out", mine, cwd=tmp_path, env={"PHBLAB_EMU": str(fake)})
    _one_line_error(r, "holds files phblab did not write (data.csv)")
    assert not started.exists()
    # the report's directory is checked before --run runs anything
    r = phblab_cli("report", "--run", "--out", mine, "--catalog", ROOT / "scenarios", cwd=tmp_path, timeout=60)
    _one_line_error(r, "holds files phblab did not write (data.csv)")
    assert not (tmp_path / "results").exists()
    assert sorted(p.name for p in mine.iterdir()) == ["data.csv"]


# -------------------------------------------------- 5. corrupt runs of a sweep


@pytest.mark.parametrize("damage", ["garbage manifest", "no manifest", "a file"])
def test_a_sweep_reruns_its_own_unreadable_runs(tmp_path, damage):
    scenario = _short_file(tmp_path)
    out = tmp_path / "sw"
    args = ["sweep", scenario, "--grid", GRID, "--out", out, "-q", "-j", "1"]
    assert phblab_cli(*args, cwd=tmp_path).returncode == 0
    plan = make_plan(scenario, {"qdiscs.bottleneck.max_p": [0.1, 0.2]})
    run = out / "runs" / plan.runs[0].key
    (run / "summary.json").unlink()
    if damage == "garbage manifest":
        (run / "manifest.json").write_text("{not json")
    elif damage == "no manifest":
        (run / "manifest.json").unlink()
    else:
        for f in run.iterdir():
            f.unlink()
        run.rmdir()
        run.write_text("not a directory")
    r = phblab_cli(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"note: run {plan.runs[0].key} (qdiscs.bottleneck.max_p=0.1, seed 1): " in r.stderr
    assert outdir.verify(run) is None


# ------------------------------------------------- messages about directories


def test_empty_and_missing_directories_are_refused(tmp_path):
    scenario = _short_file(tmp_path)
    _one_line_error(phblab_cli("run", scenario, "--out", "", cwd=tmp_path), "--out ''")
    assert not (tmp_path / "results").exists()
    _one_line_error(phblab_cli("report", "--results", tmp_path / "nonexistent", cwd=tmp_path), "not a directory")
    r = phblab_cli("reproduce", "--list", "--catalog", tmp_path / "nonexistent", cwd=tmp_path)
    _one_line_error(r, "--catalog", "not a directory")


def test_a_busy_directory_names_a_live_holder_only(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / outdir.LOCK).write_text("\x1b[31mphblab (pid 999999999)\x07 and 100 KB of junk" + "x" * 100_000)
    import fcntl

    with open(out / outdir.LOCK) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(outdir.Busy) as e, outdir.lock(out):
            pass
    assert str(e.value) == f"{out} is being written by another process; wait for it to finish or choose another output"


# ----------------------------------------------------------- 12. readers


@pytest.mark.parametrize("content", ["[1, 2]", '"a string"', "{not json", '{"seed": "one"}'])
def test_a_summary_of_the_wrong_shape_is_one_clear_line(tmp_path, content):
    out = tmp_path / "out"
    phblab.run(short_scenario()).write(out)
    (out / "manifest.json").unlink()  # as an older phblab wrote it: no digests to catch the edit
    (out / "summary.json").write_text(content)
    with pytest.raises(ValueError, match="summary.json"):
        phblab.load(out)
    r = phblab_cli("plot", out, cwd=tmp_path)
    _one_line_error(r, "summary.json")
    assert "bug in phblab" not in r.stderr


def test_a_sweep_description_of_the_wrong_shape_is_one_clear_line(tmp_path):
    scenario = _short_file(tmp_path)
    out = tmp_path / "sw"
    assert phblab_cli("sweep", scenario, "--grid", GRID, "--out", out, "-q", "-j", "1", cwd=tmp_path).returncode == 0
    (out / "manifest.json").unlink()
    (out / "sweep.json").write_text("[]")
    r = phblab_cli("plot", out, "--x", "qdiscs.bottleneck.max_p", cwd=tmp_path)
    _one_line_error(r, "sweep.json")
    assert "bug in phblab" not in r.stderr
