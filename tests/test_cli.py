"""The `phblab` command: validate, run, --set, --seed, result files."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import SCENARIO, TABLES
from phblab.cli import main
from phblab.results import TABLES as results_tables


def phblab(*args, cwd=None):
    """Runs the command in a subprocess (as a user would); returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "phblab", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def e2e(out: Path, cls: str) -> pd.Series:
    classes = pd.read_parquet(out / "classes.parquet")
    return classes[(classes.scope == "end-to-end") & (classes["class"] == cls)].iloc[0]


def test_version_and_help():
    r = phblab("--version")
    assert r.returncode == 0 and r.stdout.startswith("phblab ")
    for command in ([], ["run"], ["validate"]):
        r = phblab(*command, "--help")
        assert r.returncode == 0, r.stderr
        assert "example" in r.stdout
    assert "--set" in phblab("run", "--help").stdout


def test_a_reader_that_goes_away_ends_the_command_quietly():
    """`phblab reproduce --list | head -1`: the reader closes the pipe before
    the listing ends; phblab stops with a shell's SIGPIPE status, printing
    nothing on stderr (it printed "error: Broken pipe")."""
    listing = subprocess.Popen(
        [sys.executable, "-m", "phblab", "reproduce", "--list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    listing.stdout.close()  # the reader is gone before the first line
    stderr = listing.stderr.read()
    assert listing.wait() == 141
    assert stderr == ""


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "phblab"
    assert script.exists() or shutil.which("phblab")


def test_validate_ok(scenario_file):
    r = phblab("validate", scenario_file)
    assert r.returncode == 0, r.stderr
    assert f"{scenario_file}: ok" in r.stdout
    assert "4 nodes, 3 links, 11 flows" in r.stdout


def test_validate_names_a_misspelt_key(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(SCENARIO.replace('duration = "5s"', 'durration = "5s"'))
    r = phblab("validate", path)
    assert r.returncode == 2
    assert "durration" in r.stderr
    assert str(path) in r.stderr
    assert "Traceback" not in r.stderr
    assert r.stdout == ""


def test_validate_bad_override_and_missing_file(scenario_file, tmp_path):
    r = phblab("validate", scenario_file, "--set", "links[1].rate=10Mbs")
    assert r.returncode == 2 and "links[1].rate" in r.stderr and "Traceback" not in r.stderr
    r = phblab("validate", tmp_path / "nope.toml")
    assert r.returncode == 2 and "nope.toml" in r.stderr and "Traceback" not in r.stderr


def test_run_writes_results_and_prints_a_summary(scenario_file, tmp_path):
    out = tmp_path / "res"
    r = phblab("run", scenario_file, "--out", out)
    assert r.returncode == 0, r.stderr
    assert "end-to-end" in r.stdout and "ef" in r.stdout and "Mb/s" in r.stdout
    assert str(out) in r.stdout
    for name in TABLES:
        assert (out / f"{name}.parquet").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scenario"] == "small"
    assert summary["seed"] == 1
    assert summary["events"] > 0
    assert summary["duration_s"] == pytest.approx(5.0)
    assert summary["warmup_s"] == pytest.approx(1.0)
    assert summary["overrides"] == []
    assert {"phblab_version", "wall_time_s"} <= summary.keys()
    scopes = {row["scope"] for row in summary["classes"]}
    assert "end-to-end" in scopes and "r1->r2" in scopes
    # Nothing but the results directory is left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res", "small.toml"]


def test_quiet_prints_only_the_directory(scenario_file, tmp_path):
    r = phblab("run", scenario_file, "--out", tmp_path / "q", "--quiet")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"results written to {tmp_path / 'q'}/"
    assert r.stderr == ""


def test_default_output_directory(scenario_file, tmp_path):
    r = phblab("run", scenario_file, "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "results" / "small" / "summary.json").is_file()


def test_set_changes_the_result(scenario_file, tmp_path):
    assert main(["run", str(scenario_file), "--out", str(tmp_path / "a"), "--quiet"]) == 0
    slow = ["--set", "links[1].rate=3Mbps", "--set", "qdiscs.bottleneck.max_p=0.2"]
    assert main(["run", str(scenario_file), "--out", str(tmp_path / "b"), "--quiet", *slow]) == 0
    fast = e2e(tmp_path / "a", "be").throughput_bps + e2e(tmp_path / "a", "ef").throughput_bps
    slow_tp = e2e(tmp_path / "b", "be").throughput_bps + e2e(tmp_path / "b", "ef").throughput_bps
    assert slow_tp < 3.1e6 < fast
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["overrides"] == ['links[1].rate="3Mbps"', "qdiscs.bottleneck.max_p=0.2"]  # values as TOML


def test_set_error_exits_2(scenario_file, tmp_path, capsys):
    assert main(["run", str(scenario_file), "--out", str(tmp_path / "x"), "--set", "run.durration=2s"]) == 2
    err = capsys.readouterr().err
    assert "durration" in err and "--set" in err
    assert not (tmp_path / "x").exists()


def test_seed_is_reproducible_and_matters(scenario_file, tmp_path):
    for name, seed in [("s7a", 7), ("s7b", 7), ("s8", 8)]:
        assert main(["run", str(scenario_file), "--out", str(tmp_path / name), "--seed", str(seed), "-q"]) == 0
    for table in TABLES:
        a = (tmp_path / "s7a" / f"{table}.parquet").read_bytes()
        b = (tmp_path / "s7b" / f"{table}.parquet").read_bytes()
        assert a == b, f"{table}.parquet differs between two runs with the same seed"
    assert json.loads((tmp_path / "s8" / "summary.json").read_text())["seed"] == 8
    c7 = pd.read_parquet(tmp_path / "s7a" / "classes.parquet")
    c8 = pd.read_parquet(tmp_path / "s8" / "classes.parquet")
    assert not c7.equals(c8)


def test_rerun_replaces_what_phblab_wrote_and_keeps_the_rest(scenario_file, tmp_path):
    out = tmp_path / "res"
    assert main(["run", str(scenario_file), "--out", str(out), "-q"]) == 0
    (out / "notes.txt").write_text("mine")
    (out / "plots").mkdir()
    (out / "plots" / "fig.png").write_bytes(b"png")
    assert main(["run", str(scenario_file), "--out", str(out), "-q", "--seed", "3"]) == 0
    assert json.loads((out / "summary.json").read_text())["seed"] == 3
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "plots" / "fig.png").read_bytes() == b"png"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["state"] == "complete"
    tables = [f"{t}.parquet" for t in results_tables]
    assert sorted(manifest["files"]) == sorted([*tables, "summary.json", "scenario.toml"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res", "small.toml"]


def test_refuses_to_replace_a_directory_that_is_not_a_result(scenario_file, tmp_path, capsys):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("keep me")
    assert main(["run", str(scenario_file), "--out", str(precious), "-q"]) == 2
    assert (precious / "thesis.tex").read_text() == "keep me"
    assert "precious" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious", "small.toml"]
