"""Bad input gives one line and exit status 2, never a traceback; templates
are evaluated safely; sweeps refuse grids that would give wrong answers;
`phblab plot` refuses options that do not apply."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import phblab
from conftest import SCENARIO
from phblab import catalog, expr
from phblab.sweep import make_plan, render
from test_catalog import SECTION


def cli(*args, cwd=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "phblab", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def assert_one_line_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for needle in needles:
        assert needle in r.stderr, r.stderr


@pytest.mark.parametrize(
    "args, needle",
    [
        (["run", "{file}", "--seed=-1"], "a seed is an integer from 0 to 18446744073709551615"),
        (["run", "{file}", "--seed", "18446744073709551616"], "a seed is an integer"),
        (["sweep", "{file}", "--seed-list=-1,2"], "a seed is an integer"),
        (["sweep", "{file}", "--seed-list", "1,1"], "a seed is listed twice"),
        (["sweep", "{file}", "--seeds", "0"], "at least 1"),
        (["reproduce", "x", "--seeds", "0"], "at least 1"),
        (["sweep", "{file}", "--jobs", "0"], "at least 1"),
    ],
)
def test_bad_numbers_on_the_command_line(scenario_file, args, needle):
    r = cli(*[a.format(file=scenario_file) for a in args])
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_file_that_never_ends_is_refused(tmp_path):
    assert_one_line_error(cli("validate", "/dev/zero"), "/dev/zero: a character device, not a scenario file")
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (16 * 2**20 + 1))
    assert_one_line_error(cli("validate", big), "larger than 16 MiB")


@pytest.mark.parametrize("command", [["validate"], ["run"], ["sweep"], ["emulate"]])
def test_a_named_pipe_is_refused_not_waited_on(tmp_path, command):
    fifo = tmp_path / "s.toml"
    os.mkfifo(fifo)
    r = cli(*command, fifo, cwd=tmp_path, timeout=30)
    assert_one_line_error(r, f"{fifo}: a named pipe, not a scenario file")


def test_validate_refuses_what_the_backend_cannot_run_and_a_sweep_refuses_it_up_front(tmp_path):
    tcp = Path(__file__).parent / "emulate" / "dumbbell-tcp.toml"
    cubic = ["--set", 'traffic[0].congestion="cubic"']
    for backend in ([], ["--backend", "simulate"]):
        r = cli("validate", tcp, *backend, *cubic)
        assert_one_line_error(r, "traffic[0].congestion: the simulator's TCP is Reno", "(value set by --set)")
        assert re.search(rf"{tcp}:\d+:\d+: traffic", r.stderr), r.stderr  # the key's position
    assert cli("validate", tcp, "--backend", "emulate", *cubic).returncode == 0
    r = cli("validate", tcp, "--backend", "emulate", "--set", 'traffic[0].profile="ns2"')
    assert_one_line_error(r, "traffic[0].profile", "`phblab emulate` cannot run it")
    out = tmp_path / "sw"
    r = cli("sweep", tcp, "--grid", 'traffic[0].congestion="reno","cubic"', "--out", out, cwd=tmp_path)
    assert_one_line_error(r, "traffic[0].congestion")
    assert not out.exists()


def test_deeply_nested_toml_is_an_error_not_a_crash(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "[" * 2000 + "]" * 2000 + "\n")
    assert_one_line_error(cli("validate", path), str(path))


def test_sweep_onto_an_existing_file(scenario_file, tmp_path):
    target = tmp_path / "file"
    target.write_text("mine")
    r = cli("sweep", scenario_file, "--grid", "qdiscs.bottleneck.max_p=0.1", "--out", target)
    assert_one_line_error(r, "is not a directory")
    assert target.read_text() == "mine"


def test_a_full_disk_is_one_line(scenario_file, tmp_path, monkeypatch, capsys):
    import errno

    from phblab import cli as cli_module
    from phblab import outdir

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out" / "classes.parquet"))

    monkeypatch.setattr(outdir, "_commit", full)
    assert cli_module.main(["run", str(scenario_file), "--out", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "No space left on device" in err and len(err.strip().splitlines()) == 1


def test_the_api_refuses_a_seed_out_of_range(scenario_file):
    with pytest.raises(ValueError, match="a seed is an integer"):
        phblab.run(scenario_file, seed=-1)


# ------------------------------------------------------------------ templates


@pytest.mark.parametrize(
    "template, message",
    [
        ("{x.__class__}", "unsupported expression"),
        ("{'a'*3000000000}", "unsupported expression"),
        ("{10**10**10}", "too large"),
        ("{__import__('os')}", "unsupported expression"),
        ("{(lambda: 1)()}", "unsupported expression"),
        ("{1/x}", "division by zero"),
        ("{" + "(" * 5000 + "1" + ")" * 5000 + "}", "longer than"),
    ],
)
def test_templates_are_evaluated_safely(template, message):
    with pytest.raises(ValueError, match=message):
        render(template, {"x": 0})


def test_the_evaluator_computes_what_it_allows():
    assert expr.evaluate("min(a, 2) * 3 - b // 2 + 2**10", {"a": 5, "b": 7}) == 2 * 3 - 3 + 1024
    assert render("{R_ms/2 - 1}ms", {"R_ms": 20}) == "9ms"
    with pytest.raises(ZeroDivisionError):
        expr.evaluate("1 / (a - a)", {"a": 1.5})  # an expr metric makes this run's value NaN


def test_one_malformed_entry_does_not_hide_the_catalog(tmp_path):
    root = tmp_path / "catalog"
    (root / "p").mkdir(parents=True)
    (root / "p" / "good.toml").write_text(SCENARIO + SECTION.format(be=1.0, share=1.0))
    bad = SECTION.format(be=1.0, share=1.0).replace('"{max_p}"', '"{max_p.__class__}"')
    (root / "p" / "bad.toml").write_text(SCENARIO + bad)
    r = cli("reproduce", "--list", "--catalog", root)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "p/good" in r.stdout and "p/bad" not in r.stdout
    assert "bad.toml" in r.stderr and "unsupported expression" in r.stderr
    with pytest.raises(catalog.CatalogError, match="sweep.set.qdiscs.bottleneck.max_p"):
        catalog.load_catalog(root)


def test_an_entry_that_is_not_valid_toml_is_reported_not_skipped(tmp_path):
    root = tmp_path / "catalog"
    (root / "p").mkdir(parents=True)
    (root / "p" / "good.toml").write_text(SCENARIO + SECTION.format(be=1.0, share=1.0))
    twice = SECTION.format(be=1.0, share=1.0).replace("[reproduce]\n", "[reproduce]\ntitle = 5\n", 1)
    (root / "p" / "twice.toml").write_text(SCENARIO + twice)
    (root / "p" / "not-an-entry.toml").write_text("[run\n")
    r = cli("reproduce", "--list", "--catalog", root)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "p/good" in r.stdout
    assert "twice.toml: not valid TOML" in r.stderr and "line" in r.stderr
    assert "not-an-entry" not in r.stderr


# ---------------------------------------------------------------------- grids


def test_a_grid_value_given_twice_is_refused(scenario_file):
    with pytest.raises(ValueError, match="lists 0.1 twice"):
        make_plan(scenario_file, {"qdiscs.bottleneck.max_p": [0.1, 0.1]})
    with pytest.raises(ValueError, match="lists 1.0 twice"):
        make_plan(scenario_file, {"rate": [1, 1.0]})


def test_the_seed_is_not_a_grid_key(scenario_file):
    with pytest.raises(ValueError, match="give the seeds with seeds"):
        make_plan(scenario_file, {"run.seed": [1, 2]})


def test_a_grid_key_given_twice_is_refused(scenario_file):
    r = cli("sweep", scenario_file, "--grid", "qdiscs.bottleneck.max_p=0.1", "--grid", "qdiscs.bottleneck.max_p=0.2")
    assert_one_line_error(r, "--grid qdiscs.bottleneck.max_p is given twice")
    r = cli("sweep", scenario_file, "--grid", "qdiscs.bottleneck.max_p=0.1,0.1")
    assert_one_line_error(r, "lists 0.1 twice")


# ----------------------------------------------------------------------- plot


@pytest.fixture
def run_and_sweep(scenario_file, tmp_path):
    run = tmp_path / "run"
    assert cli("run", scenario_file, "--out", run, "-q").returncode == 0
    sweep = tmp_path / "sw"
    assert (
        cli("sweep", scenario_file, "--grid", "qdiscs.bottleneck.max_p=0.1,0.2", "--out", sweep, "-q").returncode == 0
    )
    return run, sweep


def test_plot_refuses_options_that_do_not_apply(run_and_sweep):
    run, sweep = run_and_sweep
    assert_one_line_error(cli("plot", sweep, "--cdf"), "--cdf does not apply to a sweep")
    assert_one_line_error(cli("plot", run, "--x", "max_p"), "--x does not apply to a run's results")
    assert_one_line_error(cli("plot", run, "--y", "loss_rate"), "--y does not apply")
    assert_one_line_error(cli("plot", sweep, "--by", "nosuch"), "by='nosuch'")


def test_plot_out_names_the_files_of_a_run(run_and_sweep, tmp_path):
    run, _ = run_and_sweep
    r = cli("plot", run, "--out", tmp_path / "fig")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "fig-delay-cdf.png").is_file() and (tmp_path / "fig-delay-cdf.svg").is_file()


def test_a_class_has_one_colour_in_every_figure(run_and_sweep):
    from phblab import plot

    run, sweep = run_and_sweep
    svg_colours = []
    for paths in (plot.plot_delay_cdf(run), plot.plot_metric(sweep, y="delay_mean_s")):
        svg_colours.append(paths[1].read_text())
    colours = plot.class_colours(["be", "ef"])
    for text in svg_colours:
        assert colours["be"] in text and colours["ef"] in text


def test_plot_refuses_a_run_whose_files_were_changed(run_and_sweep):
    run, _ = run_and_sweep
    (run / "classes.parquet").write_bytes(b"corrupt")
    assert_one_line_error(cli("plot", run), "classes.parquet does not match its manifest")
    assert json.loads((run / "manifest.json").read_text())["state"] == "complete"


def test_runs_that_would_abort_or_take_hours_are_refused_at_validation(tmp_path):
    """A schedule of 2³² − 1 flows aborted `validate` (an allocation
    failed); a limit of 2⁶⁴ − 1 bytes let a huge count reach the run; an
    LSP rtt of 1 ns made a 2 s run take a minute (issue 23, items 7-8)."""
    bouras = Path(__file__).resolve().parents[1] / "scenarios" / "bouras-2008" / "dumbbell.toml"
    r = cli("validate", bouras, "--set", 'lsps.tcp.rtt="1ns"')
    assert_one_line_error(r, "lsps.tcp.rtt", "timers would fire")
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    r = cli(
        "validate",
        path,
        "--set",
        'traffic[1].schedule=[{ at = "0s", count = 4294967295 }]',
        "--set",
        "traffic[1].count=1",
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr and "memory allocation" not in r.stderr, r.stderr
    r = cli("run", path, "--set", 'run.memory_limit="18446744073709551615B"', "--set", "traffic[1].count=4294967295")
    assert_one_line_error(r, "run.memory_limit", "largest limit")


def test_messages_never_carry_control_characters_or_whole_values(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    r = cli("run", path, "--set", 'traffic[0].from="\u001b[31mred\u0007"')
    assert_one_line_error(r, "traffic[0].from", "\\u{1b}[31mred\\u{7}")
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr
    r = cli("run", path, "--set", f"traffic[0].rate={'9' * 100_000}")
    assert_one_line_error(r, "traffic[0].rate", "…")
    assert len(r.stderr) < 1000


def test_lists_that_would_go_unused_and_marks_that_mark_nothing_are_refused():
    scenarios = Path(__file__).resolve().parents[1] / "scenarios"
    r = cli(
        "validate",
        scenarios / "examples" / "parking-lot.toml",
        "--set",
        'generators[0].hop_links.rate=["1Mbps","2Mbps","3Mbps","4Mbps"]',
    )
    assert_one_line_error(r, "generators[0].hop_links.rate", "4 values for 3 links", "last 1 would never be used")
    r = cli(
        "validate", scenarios / "examples" / "parking-lot.toml", "--set", 'generators[0].hop_links.delay=["1ms","2ms"]'
    )
    assert r.returncode == 0, r.stderr
    r = cli("validate", scenarios / "bouras-2008" / "path-ef.toml", "--set", 'lsps.af.in="AF13"')
    assert_one_line_error(r, "lsps.af.out", "the marker would mark nothing")
