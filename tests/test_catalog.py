"""The reproduction catalog: [reproduce] sections, `reproduce` pass and
fail, the catalog's own entries, the command."""

import subprocess
import sys
from pathlib import Path

import pytest

import phblab
from conftest import SCENARIO
from phblab import catalog
from phblab.entry import split_reproduce

ROOT = Path(__file__).resolve().parents[1]

SECTION = """
[reproduce]
title = "tiny: RED dumbbell"
paper = "none (test)"
assumptions = ["a test entry"]

[reproduce.sweep]
seeds = 2
grid = {{ max_p = [0.05, 0.2] }}
set = {{ "qdiscs.bottleneck.max_p" = "{{max_p}}" }}
overrides = {{ "run.duration" = "3s" }}

[reproduce.metrics.be_mbps]
table = "classes"
column = "throughput_bps"
where = {{ scope = "end-to-end", class = "be" }}
agg = "mean"
scale = 1e-6
unit = "Mb/s"

[reproduce.metrics.ef_mbps]
table = "classes"
column = "throughput_bps"
where = {{ scope = "end-to-end", class = "ef" }}
scale = 1e-6
unit = "Mb/s"

[reproduce.metrics.share]
ratio = ["ef_mbps", "be_mbps"]

[[reproduce.expect]]
metric = "be_mbps"
source = "paper"
ref = "Fig. 0"
tolerance = "1%"
points = [{{ max_p = 0.05, value = {be} }}, {{ max_p = 0.2, value = {be} }}]

[[reproduce.expect]]
metric = "share"
source = "measured"
tolerance = 0.01
points = [{{ max_p = 0.2, value = {share} }}]
"""


def expected_values():
    """The entry's metrics computed directly with phblab.run (seeds 1, 2)."""
    be, share = [], []
    for seed in (1, 2):
        c = phblab.run(phblab_dict(), seed=seed, overrides={"run.duration": "3s"}).classes
        e2e = c[c.scope == "end-to-end"].set_index("class").throughput_bps / 1e6
        be.append(e2e["be"])
        share.append(e2e["ef"] / e2e["be"])
    return sum(be) / 2, sum(share) / 2


def phblab_dict():
    import tomllib

    return tomllib.loads(SCENARIO)


def write_entry(root: Path, be: float, share: float, name="tiny") -> Path:
    path = root / "test-paper" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SCENARIO + SECTION.format(be=be, share=share))
    return path


@pytest.fixture
def tiny_catalog(tmp_path):
    be, share = expected_values()
    root = tmp_path / "catalog"
    write_entry(root, be, share)
    write_entry(root, be * 1.5, share, name="wrong")
    return root


def test_reproduce_passes_and_a_wrong_value_fails_with_its_gap(tiny_catalog, tmp_path):
    entries = catalog.load_catalog(tiny_catalog)
    assert [e.id for e in entries] == ["test-paper/tiny", "test-paper/wrong"]
    ok = catalog.reproduce(entries[0], results=tmp_path / "res", jobs=1)
    assert ok.passed, catalog.format_outcome(ok)
    assert len(ok.checks) == 3 and ok.runs == 4
    assert (tmp_path / "res" / "test-paper" / "tiny" / "comparison.json").is_file()
    assert all(p.stat().st_size > 0 for p in ok.plots)

    bad = catalog.reproduce(entries[1], results=tmp_path / "res", jobs=1)
    assert not bad.passed
    failing = [c for c in bad.checks if not c.passed]
    assert len(failing) == 2 and all(c.metric == "be_mbps" for c in failing)
    msg = failing[0].message()
    assert msg.startswith("FAIL be_mbps at max_p=0.05")
    assert "gap -" in msg and "(-33.3%)" in msg and "tolerance 1%" in msg
    text = catalog.format_outcome(bad)
    assert "FAIL: 1/3 values within tolerance" in text and "a test entry" in text


def test_reproduce_command_exit_status(tiny_catalog, tmp_path):
    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "phblab", "reproduce", "--catalog", tiny_catalog, "--results", tmp_path / "r",
             "--quiet", "--jobs", "1", *args],
            capture_output=True, text=True,
        )

    r = cli("--list")
    assert r.returncode == 0 and "test-paper/tiny" in r.stdout and "test-paper/wrong" in r.stdout
    r = cli("tiny")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS: 3/3" in r.stdout
    r = cli("test-paper/tiny", "wrong")
    assert r.returncode == 3
    assert "FAIL be_mbps at max_p=0.05" in r.stdout and "1/2 entries pass" in r.stdout
    r = cli("nothing")
    assert r.returncode == 2 and "no catalog entry 'nothing'" in r.stderr


def test_malformed_sections_are_reported(tmp_path):
    base = SCENARIO + SECTION.format(be=1.0, share=1.0)
    for old, new, message in [
        ('tolerance = "1%"', 'tolerance = "one"', "tolerance 'one'"),
        ("{ max_p = 0.05, value", "{ max_p = 0.07, value", "max_p = 0.07 is not in the grid"),
        ('metric = "share"', 'metric = "nope"', "metric 'nope' is not defined"),
        ('agg = "mean"', 'agg = "median"', "agg 'median'"),
        ("[reproduce.sweep]", "colour = 1\n[reproduce.sweep]", "unknown key colour"),
    ]:
        path = tmp_path / "e.toml"
        path.write_text(base.replace(old, new, 1))
        with pytest.raises(catalog.CatalogError, match=message.replace("(", r"\(")):
            catalog.load_entry(path)


def test_reproduce_section_is_hidden_from_the_core_and_positions_kept(tmp_path):
    text = SCENARIO.replace('duration = "5s"', 'duration = "5x"', 1) + SECTION.format(be=1.0, share=1.0)
    stripped, section = split_reproduce(text)
    assert section["title"] == "tiny: RED dumbbell"
    assert "reproduce" not in stripped and stripped.count("\n") == text.count("\n")
    path = tmp_path / "e.toml"
    path.write_text(text)
    with pytest.raises(phblab.ScenarioError, match=r"e\.toml:2:1: run\.duration"):
        phblab.validate(path)
    path.write_text(SCENARIO + SECTION.format(be=1.0, share=1.0))
    assert phblab.validate(path)["flows"] == 11
    r = subprocess.run([sys.executable, "-m", "phblab", "validate", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("path", sorted(ROOT.glob("scenarios/*/*.toml")), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_catalog_file_is_valid(path):
    """Every scenario under scenarios/ validates; an entry's section parses
    and every grid point validates (without running)."""
    phblab.validate(path)
    if "[reproduce" in path.read_text():
        entry = catalog.load_entry(path, ROOT / "scenarios")
        assert entry.expect and entry.assumptions
        from phblab.sweep import make_plan

        make_plan(path, entry.grid, 1, entry.sweep.get("overrides"), entry.sweep.get("set"))


def test_the_catalog_lists_the_first_entries():
    ids = [e.id for e in catalog.load_catalog(ROOT / "scenarios")]
    assert "vukadinovic-2004/appendix-b" in ids and "regression/fifo-vs-red" in ids
