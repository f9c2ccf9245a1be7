"""Plots are written (PNG and SVG, non-empty); the HTML report parses and
every image and link in it resolves to a file."""

from html.parser import HTMLParser

import pytest

import phblab
from conftest import SCENARIO
from phblab import catalog, plot, report
from test_catalog import expected_values, write_entry


def assert_written(paths):
    assert [p.suffix for p in paths] == [".png", ".svg"]
    png, svg = paths
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert "<svg" in svg.read_text()[:2000] and svg.stat().st_size > 5000


@pytest.fixture
def sampled(tmp_path):
    path = tmp_path / "sampled.toml"
    path.write_text(SCENARIO.replace("seed = 1", 'seed = 1\nsample_interval = "100ms"', 1))
    return path


def test_metric_against_a_swept_key(sampled, tmp_path):
    sw = phblab.sweep(
        sampled,
        grid={"links[1].rate": ["5Mbps", "10Mbps"], "qdiscs.bottleneck.max_p": [0.1, 0.2]},
        seeds=2,
        jobs=1,
        out=tmp_path / "sw",
    )
    assert_written(plot.plot_metric(sw.dir, x="links[1].rate", y="delay_mean_s", by="class"))
    assert_written(plot.plot_metric(sw, y="throughput_bps", scope="r1->r2", out=tmp_path / "p" / "thr.png"))
    assert (tmp_path / "p" / "thr.svg").is_file()
    assert_written(plot.plot_metric(sw, y="goodput_bps", table="groups", by="group", out=tmp_path / "g"))
    with pytest.raises(ValueError, match="not a swept key"):
        plot.plot_metric(sw, x="delta", y="delay_mean_s")
    with pytest.raises(ValueError, match="no column 'nope'"):
        plot.plot_metric(sw, y="nope")


def test_run_time_series_and_delay_cdf(sampled, tmp_path):
    res = phblab.run(sampled, out=tmp_path / "run")
    assert_written(plot.plot_timeseries(tmp_path / "run"))
    assert_written(plot.plot_delay_cdf(res, scope="r1->r2", out=tmp_path / "cdf"))
    plain = phblab.run(SCENARIO_DICT(), out=tmp_path / "plain")
    with pytest.raises(ValueError, match="sample_interval"):
        plot.plot_timeseries(plain)


def SCENARIO_DICT():
    import tomllib

    return tomllib.loads(SCENARIO)


def test_plot_command(sampled, tmp_path):
    import subprocess
    import sys

    phblab.run(sampled, out=tmp_path / "run")
    r = subprocess.run([sys.executable, "-m", "phblab", "plot", tmp_path / "run"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("wrote ") == 4
    r = subprocess.run([sys.executable, "-m", "phblab", "plot", tmp_path], capture_output=True, text=True)
    assert r.returncode == 2 and "neither a sweep directory" in r.stderr


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.refs.append(a["src"])
        if tag == "a" and not a.get("href", "").startswith("#"):
            self.refs.append(a["href"])


def test_report_parses_and_every_reference_resolves(tmp_path):
    be, share = expected_values()
    root = tmp_path / "catalog"
    write_entry(root, be, share)
    write_entry(root, be * 2, share, name="wrong")
    write_entry(root, be, share, name="not-run")
    results = tmp_path / "res"
    for entry in catalog.find_entries(["tiny", "wrong"], root):
        catalog.reproduce(entry, results=results, jobs=1)
    page = report.write_report(out=tmp_path / "report", results=results, catalog=root)
    text = page.read_text()
    parser = Links()
    parser.feed(text)
    parser.close()
    imgs = [r for r in parser.refs if r.endswith(".png")]
    assert len(imgs) >= 2
    for ref in parser.refs:
        assert not ref.startswith(("/", "http")), ref
        target = page.parent / ref
        assert target.is_file() and target.stat().st_size > 0, ref
    assert "PASS" in text and "FAIL" in text and "NOT RUN" in text
    assert "a test entry" in text and f"phblab {phblab.__version__}" in text
    # a second report replaces the first; a foreign directory is never replaced
    report.write_report(out=tmp_path / "report", results=results, catalog=root)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(FileExistsError):
        report.write_report(out=tmp_path / "mine", results=results, catalog=root)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"
    # the command can restrict the report to some entries
    from phblab import cli

    assert (
        cli.main(["report", "tiny", "--catalog", str(root), "--results", str(results), "--out", str(tmp_path / "some")])
        == 0
    )
    some = (tmp_path / "some" / "index.html").read_text()
    assert "test-paper/tiny" in some and "test-paper/wrong" not in some and "NOT RUN" not in some


def test_report_shows_claims(tmp_path):
    from test_catalog import write_claims_entry

    root = tmp_path / "catalog"
    write_claims_entry(root)
    results = tmp_path / "res"
    (entry,) = catalog.find_entries(["claims"], root)
    outcome = catalog.reproduce(entry, results=results, jobs=1)
    page = report.write_report(out=tmp_path / "report", results=results, catalog=root)
    text = page.read_text()
    section = text[text.index('<h2 id="test-paper__claims">') :]
    assert "FAIL: printed 0/1 · stated 5/5 · measured 1/1" in section
    assert "<b>Claims</b>" in section and "the interval delay ratio stays below 1" in section
    failing = next(c for c in outcome.checks if c.check == "claim" and not c.passed)
    row = failing.row()
    low, high = row["left_ci_low"], row["left_ci_high"]
    relation = f"ratio_p95[timescale_ms=100] {row['left_mean']:.4g} [{low:.4g}, {high:.4g}] &lt; 1"
    cells = section[section.index("the interval delay ratio stays below 1") :].split("</tr>")[0]
    assert "Fig. 16" in cells and "load=0.9" in cells and relation in cells and '<td class="fail">FAIL</td>' in cells
    assert "1.1 × d_ds " in section  # a scaled side
    # the plots of the metrics the claims compare (no expected values for them)
    assert "img/test-paper__claims__d_ts.png" in section and "img/test-paper__claims__ratio_p95.png" in section
    parser = Links()
    parser.feed(text)
    for ref in parser.refs:
        assert (page.parent / ref).is_file(), ref
