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


@pytest.fixture
def figures(monkeypatch):
    """The figures the plot functions draw, kept open for inspection (each
    is still written)."""
    drawn = []

    def keep(fig, out, *, in_results=False):
        drawn.append(fig)
        paths = plot._paths(out)
        paths[0].parent.mkdir(parents=True, exist_ok=True)
        for p in paths:
            fig.savefig(p)
        return paths

    monkeypatch.setattr(plot, "save", keep)
    yield drawn
    for fig in drawn:
        plot.plt.close(fig)


def legend_labels(ax) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


TWO_RED_BUFFERS = """
[qdiscs.two]
kind = "classful"
scheduler = "wfq"
buffers = [
    { name = "voice", policy = "red", limit = "100pkt", min_th = 5, max_th = 15 },
    { name = "data", policy = "red", limit = "250pkt", min_th = 30, max_th = 90 },
]
queues = [
    { name = "voice", classes = ["ef"], buffer = "voice", weight = 1 },
    { name = "data", classes = ["be"], buffer = "data", weight = 4 },
]
"""


def test_a_run_s_time_series_has_one_red_average_per_buffer_and_a_link_view(sampled, tmp_path, figures):
    """Item 5 and 6 of the first-time user's list: two RED buffers are two
    lines named after the buffers, and --scope draws that link's series."""
    path = tmp_path / "two.toml"
    path.write_text(sampled.read_text() + TWO_RED_BUFFERS)
    res = phblab.run(path, overrides={"links[1].qdisc": "two"}, out=tmp_path / "run")
    assert set(res.timeseries[res.timeseries.metric == "red_avg"]["class"]) == {"voice", "data"}
    plot.plot_timeseries(tmp_path / "run")
    top = figures[-1].axes[0]
    assert [lbl for lbl in legend_labels(top) if "average" in lbl] == [
        "r1->r2 buffer voice RED average",
        "r1->r2 buffer data RED average",
    ]
    assert figures[-1].axes[1].get_ylabel() == "mean one-way delay (ms)"
    plot.plot_timeseries(tmp_path / "run", scope="r1->r2")
    fig = figures[-1]
    assert "link r1->r2" in fig.axes[0].get_title()
    assert {"queue", "be backlog", "ef backlog"} <= set(legend_labels(fig.axes[0]))
    assert fig.axes[1].get_ylabel() == "mean queueing delay (ms)"
    assert {"be offered", "ef offered"} <= set(legend_labels(fig.axes[2]))
    with pytest.raises(ValueError, match=r"scope 's1->r9' has no time series; the link directions that have: .*r1->r2"):
        plot.plot_timeseries(tmp_path / "run", scope="s1->r9")


def test_the_delay_cdf_is_drawn_from_the_histogram(sampled, tmp_path, figures):
    res = phblab.run(sampled, out=tmp_path / "run")
    plot.plot_delay_cdf(tmp_path / "run", scope="r1->r2")
    ax = figures[-1].axes[0]
    assert ax.get_xlabel() == "queueing delay at r1->r2 (ms)"
    h = res.delay_histogram
    lines = [ln for ln in ax.get_lines() if ln.get_label() in ("be", "ef")]
    assert len(lines) == 2
    for line in lines:
        buckets = h[(h.scope == "r1->r2") & (h["class"] == line.get_label())]
        ys = line.get_ydata()
        assert len(ys) == len(buckets) + 1 and ys[0] == 0 and ys[-1] == pytest.approx(1)
        assert list(ys) == sorted(ys)


def test_axis_labels_name_the_key_s_owner_and_the_kind_of_delay():
    scenario = {"links": [{"between": ["s1", "r1"]}, {"between": ["r1", "r2"]}], "traffic": [{"name": "onoff"}]}
    assert plot.key_label("qdiscs.bottleneck.max_p") == "max_p of qdisc bottleneck"
    assert plot.key_label("links[1].rate", scenario) == "rate of link r1-r2"
    assert plot.key_label("links[7].rate", scenario) == "rate of links[7]"
    assert plot.key_label("traffic[0].count", scenario) == "count of traffic onoff"
    assert plot.key_label("R_ms") == "R_ms"
    assert plot.axis_label("delay_p99_s", at="end-to-end") == "99th-percentile one-way delay (ms)"
    assert plot.axis_label("delay_mean_s", at="r1->r2") == "mean queueing delay at r1->r2 (ms)"
    assert plot.axis_label("queueing_delay_mean_s", at="flows") == "mean queueing delay, summed over the hops (ms)"


def test_groups_plots_sum_generated_groups_and_cap_the_legend(tmp_path, figures):
    """A generated dumbbell of 20 pairs: by group, one line per generator
    (not 20); by transport, one line per transport; a legend of more than
    LEGEND_MAX lines says how many it leaves out."""
    dumbbell = {
        "run": {"duration": "2s"},
        "classes": {"be": 0, "ef": 46},
        "nodes": {"hosts": ["v", "w"]},
        "links": [
            {"between": ["v", "left"], "rate": "100Mbps", "delay": "1ms"},
            {"between": ["right", "w"], "rate": "100Mbps", "delay": "1ms"},
        ],
        "generators": [
            {
                "kind": "dumbbell",
                "name": "pairs",
                "count": 20,
                "left": "left",
                "right": "right",
                "bottleneck": {"rate": "10Mbps", "delay": "5ms"},
                "sender_links": {"rate": "100Mbps", "delay": "1ms"},
                "receiver_links": {"rate": "100Mbps", "delay": "1ms"},
                "traffic": {"kind": "cbr", "class": "be", "packet_size": "500B", "rate": "200kbps"},
            }
        ],
        "traffic": [
            {
                "name": "voice",
                "kind": "cbr",
                "from": "v",
                "to": "w",
                "class": "ef",
                "packet_size": "200B",
                "rate": "64kbps",
            }
        ],
    }
    sw = phblab.sweep(
        dumbbell, grid={"generators[0].bottleneck.rate": ["5Mbps", "10Mbps"]}, jobs=1, out=tmp_path / "sw"
    )
    assert set(sw.flows.generator) == {"", "pairs.traffic"}
    plot.plot_metric(sw, y="goodput_bps", table="groups", by="group")
    ax = figures[-1].axes[0]
    assert sorted(legend_labels(ax)) == ["pairs.traffic", "voice"]
    assert "generated groups summed per generator" in ax.get_title()
    plot.plot_metric(sw, y="goodput_bps", table="groups", by="transport")
    assert legend_labels(figures[-1].axes[0]) == ["udp"]
    plot.plot_metric(sw, y="goodput_bps", table="groups", by="generator")
    assert sorted(legend_labels(figures[-1].axes[0])) == ["(the file's groups)", "pairs.traffic"]
    fig, ax = plot.plt.subplots()
    for i in range(plot.LEGEND_MAX + 5):
        ax.plot([0, 1], [i, i], label=f"line {i}")
    plot.legend(ax)
    labels = legend_labels(ax)
    assert len(labels) == plot.LEGEND_MAX and labels[-1] == "... and 6 more lines"
    plot.plt.close(fig)


def test_a_column_neither_table_has_is_refused_with_both_tables_columns(sampled, tmp_path):
    sw = phblab.sweep(sampled, grid={"qdiscs.bottleneck.max_p": [0.1, 0.2]}, jobs=1, out=tmp_path / "sw")
    with pytest.raises(ValueError) as e:
        plot.plot_metric(sw, y="loss_pct")
    message = str(e.value)
    assert message.startswith("no column 'loss_pct' in the classes or the groups table; classes: ")
    assert "loss_rate" in message.split("; groups")[0] and "goodput_bps" in message.split("; groups")[1]


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
