"""`--backend emulate` for `phblab sweep`, `reproduce` and `report`.

The plumbing is tested with a stand-in for `phblab.emulate.emulate` (the
simulator, its summary marked as emulated), so it runs everywhere. One
test reproduces the entry of `tests/emulate/catalog/` on the real
emulator (two 2 s runs, about 6 s) when the privileges allow, and skips
with the reason otherwise."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

import phblab
from phblab import catalog, emulate
from phblab.cli import main

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "tests" / "emulate" / "catalog"
CBR = CATALOG / "backends" / "cbr.toml"
GRID = {"traffic[0].rate": ["1Mbps", "3Mbps"]}
SWEEP = importlib.import_module("phblab.sweep")  # the module (phblab.sweep is also a function)


@pytest.fixture
def fake_emulate(monkeypatch):
    """Replaces the emulator by the simulator; returns the calls made
    (seed, congestion control, overrides), in order."""
    calls = []

    def fake(text, source_name, *, seed=None, duration=None, congestion="reno", overrides=None):
        calls.append((seed, congestion, list(overrides or [])))
        results = SWEEP.run_one(text, source_name, seed, list(overrides or []))
        results.summary.update(backend="emulate", congestion_control=congestion, kernel="6.1.0-test")
        return results

    monkeypatch.setattr(emulate, "emulate", fake)
    monkeypatch.setattr(SWEEP, "emulator_build", lambda: "fake-phb-emu")
    return calls


@pytest.fixture
def cat(tmp_path):
    """A copy of the test catalog: one entry (backends/cbr) that allows emulate."""
    root = tmp_path / "catalog"
    shutil.copytree(CATALOG, root)
    return root


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ------------------------------------------------------------------- sweeps


def test_an_emulated_sweep_runs_each_point_and_records_its_backend(fake_emulate, tmp_path):
    sw = phblab.sweep(CBR, grid=GRID, seeds=2, out=tmp_path / "emu", backend="emulate", congestion="cubic")
    assert [(seed, cc) for seed, cc, _ in fake_emulate] == [(1, "cubic"), (2, "cubic")] * 2
    assert fake_emulate[2][2] == ['traffic[0].rate="3Mbps"']
    assert sw.backend == "emulate" and sw.congestion == "cubic" and sw.ran == 4
    description = json.loads((sw.dir / "sweep.json").read_text())
    assert description["backend"] == "emulate" and description["congestion_control"] == "cubic"
    assert set(sw.runs.backend) == {"emulate"}
    e2e = sw.classes[sw.classes.scope == "end-to-end"]
    assert e2e.groupby("traffic[0].rate").throughput_bps.mean().round(-5).to_dict() == {"1Mbps": 1e6, "3Mbps": 2e6}
    # a rerun reuses the runs; another congestion control, or the simulator, does not
    assert phblab.sweep(CBR, grid=GRID, seeds=2, out=sw.dir, backend="emulate", congestion="cubic").ran == 0
    reno = SWEEP.make_plan(CBR, GRID, 2, backend="emulate")
    simulated = SWEEP.make_plan(CBR, GRID, 2)
    keys = {r.key for r in SWEEP.make_plan(CBR, GRID, 2, backend="emulate", congestion="cubic").runs}
    assert reno.congestion == "reno" and not keys & {r.key for r in reno.runs}
    assert not keys & {r.key for r in simulated.runs}
    # the simulator's keys are those of before emulation (no backend in them)
    assert simulated.runs[0].key == SWEEP.run_key(simulated.text, simulated.runs[0].overrides, 1)
    # a simulated sweep (default directory) beside it
    sim = phblab.sweep(CBR, grid=GRID, seeds=2, out=tmp_path / "sim", jobs=1)
    assert sim.backend == "simulate" and set(sim.runs.backend) == {"simulate"}
    assert SWEEP.default_out("x", "emulate") == Path("results") / "x-emulate-sweep"


def test_a_sweep_emulates_a_file_the_emulator_refuses_once_its_set_changes_what_it_refuses(fake_emulate, tmp_path):
    """As `vukadinovic-2004/section-7-linux` does: the file's TCP follows
    ns-2 (refused by the emulator), the entry's `set` makes it Linux."""
    ns2 = tmp_path / "ns2.toml"
    ns2.write_text((ROOT / "tests" / "emulate" / "dumbbell-tcp.toml").read_text().replace('"linux"', '"ns2"', 1))
    with pytest.raises(ValueError, match="this TCP profile follows a simulator's rules"):
        phblab.sweep(ns2, out=tmp_path / "refused", backend="emulate")
    sw = phblab.sweep(
        ns2, set={"traffic[0].profile": "linux", "run.duration": "2s"}, out=tmp_path / "emu", backend="emulate"
    )
    assert sw.ran == 1 and fake_emulate[0][2] == ['traffic[0].profile="linux"', 'run.duration="2s"']


def test_a_directory_never_mixes_backends(fake_emulate, monkeypatch, tmp_path):
    sim = phblab.sweep(CBR, grid=GRID, out=tmp_path / "sim", jobs=1)
    with pytest.raises(ValueError, match="holds simulated results .*choose another output"):
        phblab.sweep(CBR, grid=GRID, out=sim.dir, backend="emulate")
    assert not fake_emulate
    emu = phblab.sweep(CBR, grid=GRID, out=tmp_path / "emu", backend="emulate")
    with pytest.raises(ValueError, match="holds emulated results"):
        phblab.sweep(CBR, grid=GRID, out=emu.dir, jobs=1)

    # an interrupted first emulated sweep (runs, no sweep.json) is recognised by its runs
    def failing(text, source_name, *, seed=None, duration=None, congestion="reno", overrides=None):
        if 'traffic[0].rate="3Mbps"' in overrides:
            raise emulate.EmulateError("the router stopped", bad_input=False)
        results = SWEEP.run_one(text, source_name, seed, overrides)
        results.summary["backend"] = "emulate"
        return results

    monkeypatch.setattr(emulate, "emulate", failing)
    half = tmp_path / "half"
    with pytest.raises(SWEEP.SweepError, match="the emulation failed: the router stopped; the 1 completed runs"):
        phblab.sweep(CBR, grid=GRID, out=half, backend="emulate")
    assert not (half / "sweep.json").exists() and len(list((half / "runs").iterdir())) == 1
    with pytest.raises(ValueError, match=r"holds emulated results \(.*summary.json\)"):
        phblab.sweep(CBR, grid=GRID, out=half, jobs=1)


def test_the_sweep_command_refuses_what_emulation_cannot_do(fake_emulate, tmp_path, capsys):
    base = ["sweep", str(CBR), "--grid", "traffic[0].rate=1Mbps,3Mbps", "--out", str(tmp_path / "sw"), "--quiet"]
    assert main([*base, "--backend", "emulate", "--jobs", "2"]) == 2
    assert "drop --jobs 2" in _one_error_line(capsys)
    assert main([*base, "--backend", "emulate", "--dask", "local"]) == 2
    assert "drop --dask" in _one_error_line(capsys)
    assert main([*base, "--congestion", "bbr"]) == 2
    assert "--congestion applies only to --backend emulate" in _one_error_line(capsys)
    assert not fake_emulate and not (tmp_path / "sw").exists()
    assert main([*base, "--backend", "emulate", "--congestion", "bbr", "--jobs", "1"]) == 0
    assert [cc for _, cc, _ in fake_emulate] == ["bbr", "bbr"]
    assert main(base) == 2
    assert "holds emulated results" in _one_error_line(capsys)


def test_an_emulation_refused_by_the_machine_stops_the_sweep_with_one_line(monkeypatch, tmp_path, capsys):
    calls = []

    def refused(text, source_name, **kwargs):
        calls.append(kwargs)
        raise emulate.EmulateError("needs CAP_NET_ADMIN and CAP_SYS_ADMIN (run as root)", bad_input=True)

    monkeypatch.setattr(emulate, "emulate", refused)
    monkeypatch.setattr(SWEEP, "emulator_build", lambda: "fake-phb-emu")
    argv = ["sweep", str(CBR), "--grid", "traffic[0].rate=1Mbps,3Mbps", "--out", str(tmp_path / "sw")]
    assert main([*argv, "--backend", "emulate", "--quiet"]) == 2
    assert _one_error_line(capsys) == "error: needs CAP_NET_ADMIN and CAP_SYS_ADMIN (run as root)"
    assert len(calls) == 1


# ---------------------------------------------------------------- catalog


def test_backends_key_is_validated_at_load(tmp_path):
    entry = catalog.load_entry(CBR, CATALOG)
    assert entry.id == "backends/cbr" and entry.backends == ("simulate", "emulate")
    text = CBR.read_text()
    plain = tmp_path / "plain.toml"
    plain.write_text(text.replace('backends = ["simulate", "emulate"]\n', ""))
    assert catalog.load_entry(plain).backends == ("simulate",)
    for value, message in [
        ('"emulate"', "a list of backends"),
        ("[]", "a list of backends"),
        ('["simulate", "teleport"]', "'teleport' is not a backend; known: simulate, emulate"),
        ('["emulate", "emulate"]', "'emulate' is listed twice"),
    ]:
        bad = tmp_path / "bad.toml"
        bad.write_text(text.replace('["simulate", "emulate"]', value, 1))
        with pytest.raises(catalog.CatalogError, match=r"\[reproduce\]\.backends: " + message.replace("[", r"\[")):
            catalog.load_entry(bad)


def _with_section(text: str, section: str) -> str:
    return text.replace("\n[reproduce.sweep]\n", f"\n{section}\n[reproduce.sweep]\n")


def test_a_backend_section_is_validated_at_load(tmp_path):
    text = CBR.read_text()
    ok = tmp_path / "ok.toml"
    ok.write_text(_with_section(text, '[reproduce.emulate]\nunset = ["links[*].qdisc", "run.warmup"]\nwhy = "w"\n'))
    settings = catalog.load_entry(ok).per_backend["emulate"]
    assert settings.unset == ("links[1].qdisc", "run.warmup") and settings.why == "w"
    assert settings.overrides() == ["~links[1].qdisc", "~run.warmup"]
    for section, message in [
        ('[reproduce.emulate]\nunset = ["run.warmup"]\nwhy = "w"\nset = 1\n', r"emulate: unknown key set"),
        ('[reproduce.emulate]\nunset = ["run.warmup"]\n', r"emulate\.why: say why"),
        ('[reproduce.emulate]\nunset = []\nwhy = "w"\n', r"emulate\.unset: a list of scenario key paths"),
        ('[reproduce.emulate]\nunset = ["links[*].ecn"]\nwhy = "w"\n', r"'links\[\*\]\.ecn' names no key"),
        ('[reproduce.emulate]\nunset = ["run"]\nwhy = "w"\n', r"'run' names no key"),
        ('[reproduce.emulate]\nunset = ["links[x].rate"]\nwhy = "w"\n', r"not a key path"),
        ('[reproduce.emulate]\nunset = ["run.warmup", "run.warmup"]\nwhy = "w"\n', r"run\.warmup is named twice"),
        ('[reproduce.simulate]\nunset = ["run.warmup"]\nwhy = "w"\n', None),
    ]:
        bad = tmp_path / "bad.toml"
        bad.write_text(_with_section(text, section))
        if message is None:  # a backend the entry lists: simulate
            assert catalog.load_entry(bad).per_backend["simulate"].unset == ("run.warmup",)
            bad.write_text(bad.read_text().replace('backends = ["simulate", "emulate"]\n', 'backends = ["emulate"]\n'))
            message = r"does not run on simulate"
        with pytest.raises(catalog.CatalogError, match=message):
            catalog.load_entry(bad)


def test_a_backend_section_unsets_keys_on_its_backend_only(fake_emulate, cat, tmp_path, capsys):
    """The emulated runs remove the keys (`~path` overrides, recorded in each
    run and in the outcome), the simulated ones keep them; a run's key
    covers them, so the removal is never mistaken for the file's values."""
    entry = cat / "backends" / "cbr.toml"
    entry.write_text(_with_section(entry.read_text(), '[reproduce.emulate]\nunset = ["links[*].qdisc"]\nwhy = "why"\n'))
    res = tmp_path / "res"
    base = ["reproduce", "--catalog", str(cat), "--results", str(res), "--quiet", "cbr"]
    assert main([*base, "--backend", "emulate"]) == 0
    assert "left unset on emulate: links[1].qdisc: why" in capsys.readouterr().out
    assert [c[2] for c in fake_emulate] == [
        ["~links[1].qdisc", 'traffic[0].rate="1Mbps"'],
        ["~links[1].qdisc", 'traffic[0].rate="3Mbps"'],
    ]
    emulated = json.loads((res / "backends" / "cbr-emulate" / "comparison.json").read_text())
    assert emulated["unset"] == ["links[1].qdisc"] and emulated["unset_why"] == "why" and emulated["passed"]
    summaries = [
        json.loads(p.read_text()) for p in (res / "backends" / "cbr-emulate" / "sweep" / "runs").glob("*/summary.json")
    ]
    assert all("~links[1].qdisc" in s["overrides"] for s in summaries)
    assert main(base) == 0
    assert "left unset" not in capsys.readouterr().out
    simulated = json.loads((res / "backends" / "cbr" / "comparison.json").read_text())
    assert "unset" not in simulated
    summaries = [
        json.loads(p.read_text()) for p in (res / "backends" / "cbr" / "sweep" / "runs").glob("*/summary.json")
    ]
    assert summaries and all(not any(o.startswith("~") for o in s["overrides"]) for s in summaries)
    # the report and the Markdown outcome say what the emulated runs left unset, under their block only
    assert main(["report", "--catalog", str(cat), "--results", str(res), "--out", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "index.html").read_text()
    shown = "<p><b>Left unset on this backend:</b> <code>links[1].qdisc</code>: why</p>"
    assert page.count(shown) == 1 and page.index(shown) > page.index('<h3 id="backends__cbr__emulate">')
    md = tmp_path / "outcome.md"
    assert main(["report", "--catalog", str(cat), "--results", str(res), "--format", "markdown", "--out", str(md)]) == 0
    text = md.read_text()
    assert text.count("Left unset on this backend: `links[1].qdisc`: why") == 1
    assert text.index("Left unset on this backend") > text.index("Emulated:")


def test_reproduce_and_report_with_both_backends(fake_emulate, cat, tmp_path, capsys):
    res = tmp_path / "res"
    base = ["reproduce", "--catalog", str(cat), "--results", str(res), "--quiet"]
    assert main([*base, "--list"]) == 0
    assert "[2 measured values; 2 points × 1 seeds; simulate and emulate]" in capsys.readouterr().out
    assert main([*base, "cbr", "--backend", "emulate", "--congestion", "cubic"]) == 0
    out = capsys.readouterr().out
    assert "2 runs emulated (TCP congestion control cubic, Linux 6.1.0-test)" in out and "PASS: measured 2/2" in out
    assert len(fake_emulate) == 2
    emulated = json.loads((res / "backends" / "cbr-emulate" / "comparison.json").read_text())
    assert emulated["backend"] == "emulate" and emulated["congestion_control"] == "cubic" and emulated["passed"]
    assert emulated["kernel"] == "6.1.0-test"
    assert not (res / "backends" / "cbr").exists()
    # the report before the simulated reproduction: simulated NOT RUN, emulated PASS
    assert main(["report", "--catalog", str(cat), "--results", str(res), "--out", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "index.html").read_text()
    assert '<td><span class="notrun">NOT RUN</span> · emulated: <span class="pass">PASS</span></td>' in page
    assert "phblab reproduce backends/cbr</code>" in page
    assert main([*base, "cbr"]) == 0
    simulated = json.loads((res / "backends" / "cbr" / "comparison.json").read_text())
    assert simulated["backend"] == "simulate" and "congestion_control" not in simulated and "kernel" not in simulated
    assert len(fake_emulate) == 2
    capsys.readouterr()
    assert main(["report", "--catalog", str(cat), "--results", str(res), "--out", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "index.html").read_text()
    section = page[page.index('<h2 id="backends__cbr">') :]
    sim_at = section.index('<h3 id="backends__cbr__simulate">Simulated')
    emu_at = section.index('<h3 id="backends__cbr__emulate">Emulated')
    assert sim_at < emu_at and "cubic congestion control" in section[emu_at:]
    assert 'src="img/backends__cbr__received_mbps.png"' in section[sim_at:emu_at]
    assert 'src="img/backends__cbr__emulate__received_mbps.png"' in section[emu_at:]
    assert 'href="data/backends__cbr__emulate.csv"' in section[emu_at:]
    assert '<td><span class="pass">PASS</span> · emulated: <span class="pass">PASS</span></td>' in page
    for name in ("backends__cbr__received_mbps.png", "backends__cbr__emulate__received_mbps.png"):
        assert (tmp_path / "rep" / "img" / name).stat().st_size > 0
    # the cross-check of the backends, in the page and in the Markdown outcome
    both = page[page.index("<h2>Both backends</h2>") : page.index('<h2 id="backends__cbr">')]
    assert "Emulated on Linux 6.1.0-test, cubic" in both and "0 of 2 verdicts differ" in both
    assert both.count("<td>1</td>") == 2  # the stand-in emulator is the simulator: ratio 1 for both checks
    md = tmp_path / "outcome.md"
    assert main(["report", "--catalog", str(cat), "--results", str(res), "--format", "markdown", "--out", str(md)]) == 0
    text = md.read_text()
    both = text[text.index("## Both backends") : text.index("## backends")]
    assert "### `backends/cbr` on both backends" in both and "Emulated on Linux 6.1.0-test, cubic" in both
    assert both.count("| 1 | PASS | PASS |") == 2


def test_an_entry_that_does_not_allow_emulate_is_refused(fake_emulate, cat, tmp_path, capsys):
    only = cat / "backends" / "simulated-only.toml"
    only.write_text(CBR.read_text().replace('backends = ["simulate", "emulate"]\n', ""))
    base = ["reproduce", "--catalog", str(cat), "--results", str(tmp_path / "res"), "--quiet"]
    assert main([*base, "simulated-only", "--backend", "emulate"]) == 2
    line = _one_error_line(capsys)
    assert "backends/simulated-only does not allow the emulate backend" in line
    assert '[reproduce].backends is ["simulate"]' in line
    assert main([*base, "cbr", "--backend", "emulate", "--jobs", "2"]) == 2
    assert "drop --jobs 2" in _one_error_line(capsys)
    assert not fake_emulate
    with pytest.raises(catalog.CatalogError, match="does not allow the emulate backend"):
        catalog.reproduce(catalog.load_entry(only, cat), results=tmp_path / "res", backend="emulate")
    # --all runs the entries that allow it and says which it left out
    assert main([*base, "--all", "--backend", "emulate"]) == 0
    captured = capsys.readouterr()
    assert "note: 1 entry without 'emulate' in [reproduce].backends left out (backends/simulated-only)" in captured.err
    assert "backends/cbr:" in captured.out and "backends/simulated-only:" not in captured.out
    assert (tmp_path / "res" / "backends" / "cbr-emulate").is_dir()
    assert not (tmp_path / "res" / "backends" / "simulated-only-emulate").exists()
    # the report's --backend applies to --run only
    assert main(["report", "--catalog", str(cat), "--backend", "emulate", "--out", str(tmp_path / "r")]) == 2
    assert "apply to --run" in _one_error_line(capsys)


# ------------------------------------------------------------ the real thing


def _privileged() -> None:
    try:
        exe = emulate.emulator()
    except emulate.EmulateError as e:
        pytest.skip(str(e))
    check = subprocess.run([str(exe), "check"], capture_output=True, text=True)
    if check.returncode != 0:
        pytest.skip(check.stderr.strip())


def test_an_emulated_reproduction_on_real_linux(cat, tmp_path, capsys):
    """Two 2 s emulations of a CBR stream: it passes whole at 1 Mb/s and
    fills the 2 Mb/s link at 3 Mb/s, as simulated."""
    _privileged()
    res = tmp_path / "res"
    start = time.monotonic()
    status = main(["reproduce", "--catalog", str(cat), "--results", str(res), "--quiet", "cbr", "--backend", "emulate"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert time.monotonic() - start > 4.0  # two runs of 2 s, in real time
    assert f"2 runs emulated (TCP congestion control reno, Linux {os.uname().release})" in out, out
    assert "PASS: measured 2/2" in out
    d = res / "backends" / "cbr-emulate"
    saved = json.loads((d / "comparison.json").read_text())
    assert saved["backend"] == "emulate" and saved["kernel"] == os.uname().release
    summaries = [json.loads(p.read_text()) for p in sorted((d / "sweep" / "runs").glob("*/summary.json"))]
    assert len(summaries) == 2 and all(s["backend"] == "emulate" for s in summaries)
    assert set(pd.read_parquet(d / "sweep" / "runs.parquet").backend) == {"emulate"}
