"""What a catalog check says about itself: its kind (printed, stated,
derived, model), two-sided `within` claims, tolerances from the precision
the paper prints, statements left unchecked, metric definitions and
sensitivity rows, and the causes of failing checks."""

import json
import re

import pytest

from phblab import catalog
from phblab.catalog.tolerance import printed_precision
from test_catalog import TWO_CLASSES

SECTION = """
[reproduce]
title = "checks: kinds, within, printed, causes"
assumptions = ["a test entry"]

[reproduce.sweep]
seeds = 2
grid = { load = [0.5, 0.9] }
set = { "traffic[0].rate" = "{load * 2}Mbps", "traffic[1].rate" = "{load * 2}Mbps" }

[reproduce.metrics.d_ts]
table = "classes"
column = "delay_mean_s"
where = { scope = "r->sink", class = "ts" }
scale = 1e3
unit = "ms"
definition = "'the mean queueing delay of the low-priority class' (Sec. 1)"
measured_at = "r->sink, per packet that left the queue, after the warm-up"

[reproduce.metrics.d_ts_median]
table = "classes"
column = "delay_p50_s"
where = { scope = "r->sink", class = "ts" }
scale = 1e3
unit = "ms"
sensitivity_of = "d_ts"
definition = "the paper is silent on mean or median: the median as the alternative"

[reproduce.metrics.d_ds]
table = "classes"
column = "delay_mean_s"
where = { scope = "r->sink", class = "ds" }
scale = 1e3
unit = "ms"

[[reproduce.expect]]
metric = "d_ts"
kind = "printed"
ref = "Table 1"
tolerance = "printed"
points = [{ load = 0.5, value = "1000.0" }, { load = 0.9, value = "1000.0", cause = "model-difference", why = "no such delay in a 10 Mb/s queue" }]

[[reproduce.claims]]
text = "the low-priority class waits within 1000% of the other"
ref = "Sec. 2"
kind = "stated"
over = { load = [0.5, 0.9] }
left = { metric = "d_ts" }
op = "within"
right = { metric = "d_ds" }
tolerance = "1000%"

[[reproduce.claims]]
text = "the low-priority class waits about twice as long"
ref = "Sec. 3"
kind = "derived"
over = { load = [0.5, 0.9] }
left = { metric = "d_ts" }
op = "within"
right = { metric = "d_ds", scale = "2" }
tolerance = "printed"

[[reproduce.claims]]
text = "the delay is about 1000 ms"
ref = "Fig. 2"
kind = "model"
over = { load = 0.9 }
left = { metric = "d_ts" }
op = "within"
right = { value = "1000" }
tolerance = "printed"
cause = "paper-inconsistent"
why = "its Table 1 says otherwise"

[[reproduce.claims]]
text = "the low-priority class waits at least as long"
ref = "Sec. 2"
kind = "stated"
over = { load = [0.5, 0.9] }
left = { metric = "d_ts" }
op = ">="
right = { metric = "d_ds" }
cause = "unstated-assumption"
why = "kept as a note when it passes"

[[reproduce.unchecked]]
text = "the delays are stable over time"
ref = "Fig. 3"
why = "the figure's axis has no scale"
"""


def write(tmp_path, section=SECTION, name="checks"):
    path = tmp_path / "test-paper" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TWO_CLASSES + section)
    return path


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    root = tmp_path_factory.mktemp("checks")
    entry = catalog.load_entry(write(root / "catalog"), root / "catalog")
    return catalog.reproduce(entry, results=root / "res", jobs=1)


def test_printed_precision_is_half_a_unit_of_the_last_digit():
    assert printed_precision("2") == 0.5
    assert printed_precision("0.50") == pytest.approx(0.005)
    assert printed_precision("12.4") == pytest.approx(0.05)
    assert printed_precision("-0.25") == pytest.approx(0.005)
    assert printed_precision("1.5e3") == pytest.approx(50)
    assert printed_precision("120") == 0.5
    for bad in ("1/2", "12%", "about 2", ""):
        with pytest.raises(ValueError):
            printed_precision(bad)


def test_kinds_within_and_printed_tolerances(outcome):
    checks = outcome.checks
    assert [c.check for c in checks] == ["value"] * 2 + ["claim"] * 7
    assert [c.kind for c in checks] == ["printed"] * 2 + ["stated"] * 2 + ["derived"] * 2 + ["model"] + ["stated"] * 2
    # an expected value printed as "1000.0": ±0.05
    value = checks[0]
    assert value.tol_abs == pytest.approx(0.05) and value.tolerance == "printed ±0.05 ms"
    assert not value.passed and value.cause == "" and value.failure == "unexplained"
    # a cause given on one point only
    assert checks[1].cause == "model-difference" and checks[1].failure == "model-difference"
    # within, relative to the right side: two-sided
    for c in checks[2:4]:
        assert c.tol_abs == pytest.approx(10 * c.right.value)
        assert c.passed == (abs(c.left.value - c.right.value) <= c.tol_abs)
        assert " within ±" in c.message() and "(tolerance 1000%)" in c.message()
    # "≈ 2 ×": the printed 2 allows ±0.5 on the ratio, i.e. ±0.25 of the right side
    for c in checks[4:6]:
        assert c.right.value == pytest.approx(2 * c.right.mean)
        assert c.tol_abs == pytest.approx(0.5 * c.right.mean)
        assert c.passed == (abs(c.left.mean / c.right.mean - 2) <= 0.5 * (1 + 1e-9))
    # "about 1000": ±0.5
    model = checks[6]
    assert model.tol_abs == pytest.approx(0.5) and not model.passed and model.failure == "paper-inconsistent"
    assert catalog.tally(checks).startswith("printed 0/2 · stated ")


def test_the_outcome_records_kinds_unchecked_definitions_and_sensitivity(outcome):
    doc = json.loads((outcome.dir / "comparison.json").read_text())
    rows = doc["checks"]
    assert [r["check"] for r in rows][:3] == ["value", "value", "claim"]
    assert rows[1]["cause"] == "model-difference" and rows[1]["why"] == "no such delay in a 10 Mb/s queue"
    assert rows[2]["op"] == "within" and rows[2]["tolerance"] == "1000%"
    assert doc["unchecked"] == [
        {"text": "the delays are stable over time", "ref": "Fig. 3", "why": "the figure's axis has no scale"}
    ]
    assert doc["metrics"]["d_ts"]["measured_at"].startswith("r->sink")
    assert doc["metrics"]["d_ts_median"]["sensitivity_of"] == "d_ts"
    assert doc["claims"][1]["right"] == {"metric": "d_ds", "at": {}, "scale": 2.0, "printed": "2"}
    (sens,) = doc["sensitivity"]
    assert sens["metric"] == "d_ts_median" and sens["of"] == "d_ts"
    assert [r["at"] for r in sens["rows"]] == [{"load": 0.5}, {"load": 0.9}]
    means = outcome.per_point.set_index(["metric", "load"])["mean"]
    assert sens["rows"][1]["headline"]["mean"] == pytest.approx(means[("d_ts", 0.9)])
    assert sens["rows"][1]["sensitivity"]["mean"] == pytest.approx(means[("d_ts_median", 0.9)])
    # the saved rows rebuild the same verdicts
    rebuilt = [catalog.from_row(r) for r in rows]
    assert json.dumps([c.row() for c in rebuilt], default=str) == json.dumps(rows, default=str)
    text = catalog.format_outcome(outcome)
    assert "not checked (Fig. 3): the delays are stable over time: the figure's axis has no scale" in text
    assert "sensitivity: d_ts_median beside d_ts (shown, not checked)" in text
    assert "d_ts (ms): 'the mean queueing delay of the low-priority class' (Sec. 1) — measured at: r->sink" in text


def test_failing_checks_carry_their_cause_or_are_unexplained(outcome):
    checks = outcome.checks
    assert [c.failure for c in checks if not c.passed][:2] == ["unexplained", "model-difference"]
    assert catalog.failures(checks)["unexplained"] == sum(not c.passed and not c.cause for c in checks)
    assert list(catalog.failures(checks))[0] == "unexplained"
    text = catalog.format_outcome(outcome)
    lines = text.splitlines()
    first = lines.index(f"  {checks[0].message()}")
    assert lines[first + 1] == "    cause: unexplained"
    assert lines[first + 3] == "    cause: model-difference: no such delay in a 10 Mb/s queue"
    assert "    cause: paper-inconsistent: its Table 1 says otherwise" in lines
    noted = [c for c in checks if c.passed and c.cause]
    assert noted and all(c.explanation() == "note (unstated-assumption): kept as a note when it passes" for c in noted)
    assert re.search(r"; failing: \d+ unexplained, 1 paper-inconsistent, 1 model-difference$", lines[-1])


def test_the_report_lists_unexplained_failures_first(outcome, tmp_path):
    from phblab.report import write_report

    page = write_report(tmp_path / "report", results=outcome.dir.parents[1], entries=[outcome.entry]).read_text()
    failing = page.index("<h2>Failing checks</h2>")
    assert failing < page.index("<h2>Entries</h2>") < page.index('<h2 id="test-paper__checks">')
    unexplained = page[failing : page.index("<h2>Entries</h2>")]
    rows = unexplained.count("<tr>") - 1
    assert rows == sum(not c.passed and not c.cause for c in outcome.checks)
    assert "load=0.5" in unexplained and "no such delay" not in unexplained
    assert '<td class="l fail">unexplained</td>' in page
    assert 'model-difference<br><span class="small">no such delay in a 10 Mb/s queue</span>' in page
    assert "<i>note:</i> unstated-assumption" in page


def test_a_row_written_before_checks_had_kinds_is_read():
    old = {"kind": "claim", "text": "t", "op": "<", "left_metric": "", "left_mean": 1.0, "right_mean": 2.0}
    c = catalog.from_row({**old, "passed": True})
    assert c.check == "claim" and c.kind == "unlabelled" and c.passed


def test_the_report_shows_kinds_unchecked_definitions_and_sensitivity(outcome, tmp_path):
    from phblab.report import write_report

    page = write_report(tmp_path / "report", results=outcome.dir.parents[1], entries=[outcome.entry]).read_text()
    assert '<th class="l">kind</th>' in page and '<td class="l">derived</td>' in page
    assert "<b>Not checked</b>" in page and "the figure&#x27;s axis has no scale" in page
    assert "the paper's definition" in page and "r-&gt;sink, per packet" in page
    assert "Sensitivity: <code>d_ts_median</code> beside <code>d_ts</code>" in page


@pytest.mark.parametrize(
    "old, new, message",
    [
        ('kind = "derived"', 'kind = "guessed"', "claims[1].kind: 'guessed': one of \"printed\""),
        ('tolerance = "1000%"', "", 'claims[0]: op = "within" needs tolerance'),
        ('op = ">="', 'op = ">="\ntolerance = "5%"', 'claims[3]: tolerance belongs to op = "within"'),
        (
            'right = { metric = "d_ds", scale = "2" }',
            'right = { metric = "d_ds", scale = 2 }',
            'claims[1]: tolerance = "printed" needs the number',
        ),
        (
            'right = { value = "1000" }',
            'right = { value = "about 1000" }',
            "claims[2].right.value: 'about 1000' is not a number",
        ),
        (
            'value = "1000.0" }, { load = 0.9',
            "value = 1000.0 }, { load = 0.9",
            'expect[0].points[0]: tolerance = "printed" needs the value',
        ),
        (
            'cause = "paper-inconsistent"',
            'cause = "bad luck"',
            "claims[2].cause: 'bad luck': one of paper-inconsistent",
        ),
        (
            'why = "its Table 1 says otherwise"\n',
            "",
            "claims[2]: cause = 'paper-inconsistent' needs why: the arithmetic",
        ),
        ('cause = "paper-inconsistent"\n', "", "claims[2]: why explains a cause: give cause too"),
        ('why = "the figure\'s axis has no scale"\n', "", "unchecked[0]: why (a string) is required"),
        (
            'sensitivity_of = "d_ts"',
            'sensitivity_of = "d_x"',
            "metrics.d_ts_median.sensitivity_of: 'd_x' is not a metric",
        ),
        ('sensitivity_of = "d_ts"', 'sensitivity_of = "d_ts_median"', "sensitivity_of: names the metric itself"),
        (
            'metric = "d_ts"\nkind = "printed"',
            'metric = "d_ts_median"\nkind = "printed"',
            "expect: metric 'd_ts_median' is a sensitivity row of 'd_ts'",
        ),
        (
            'measured_at = "r->sink, per packet that left the queue, after the warm-up"',
            'measured_at = " "',
            "metrics.d_ts: measured_at: a non-empty string",
        ),
    ],
)
def test_malformed_kinds_causes_and_tolerances_fail_at_load(tmp_path, old, new, message):
    assert old in SECTION, old
    with pytest.raises(catalog.CatalogError, match=re.escape(message)):
        catalog.load_entry(write(tmp_path, SECTION.replace(old, new, 1)))


def test_a_measured_value_is_of_kind_measured(tmp_path):
    section = SECTION.replace('kind = "printed"\nref = "Table 1"', 'source = "measured"\nref = "phblab 0.1"', 1)
    entry = catalog.load_entry(write(tmp_path, section))
    assert entry.expect[0].kind == "measured"
    bad = section.replace('source = "measured"', 'source = "measured"\nkind = "printed"', 1)
    with pytest.raises(catalog.CatalogError, match='is of kind "measured"'):
        catalog.load_entry(write(tmp_path, bad))


def test_a_check_without_a_kind_is_refused(tmp_path):
    section = SECTION.replace('kind = "derived"\n', "", 1)
    with pytest.raises(catalog.CatalogError, match=re.escape('claims[1]: kind is required: "printed" (a number')):
        catalog.load_entry(write(tmp_path, section))


def test_the_outcome_is_stamped_and_rendered_in_markdown(outcome, tmp_path):
    from phblab.catalog import markdown

    doc = json.loads((outcome.dir / "comparison.json").read_text())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["date"])
    assert doc["commit"] is None or re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", doc["commit"])
    text = markdown.render([outcome.entry], outcome.dir.parents[1], "9.9.9")
    assert text.startswith(markdown.MARKER + "\n") and "Rendered by phblab 9.9.9" in text
    failing, entries = text.index("## Failing checks"), text.index("## Entries")
    assert failing < entries < text.index("### `test-paper/checks`")
    assert text[failing:entries].count("| `test-paper/checks` |") == sum(
        not c.passed and not c.cause for c in outcome.checks
    )
    assert f"{doc['date']}" in text and "| `d_ts` | load=0.9 | 1000 (Table 1) |" in text
    assert "| printed ±0.05 ms | **FAIL** | printed | model-difference: no such delay in a 10 Mb/s queue |" in text
    assert "- the delays are stable over time (Fig. 3): the figure's axis has no scale" in text
    assert "Sensitivity row `d_ts_median` beside `d_ts` (ms)" in text
    # written only over a file it generated, never through a symlink
    out = tmp_path / "outcome.md"
    assert markdown.write(out, text).read_text() == text
    markdown.write(out, text.replace("9.9.9", "9.9.10"))
    assert "9.9.10" in out.read_text() and sorted(p.name for p in tmp_path.iterdir()) == ["outcome.md"]
    mine = tmp_path / "mine.md"
    mine.write_text("# my notes\n")
    with pytest.raises(FileExistsError, match="was not written by `phblab report --format markdown`"):
        markdown.write(mine, text)
    assert mine.read_text() == "# my notes\n"
    (tmp_path / "link.md").symlink_to(out)
    with pytest.raises(FileExistsError, match="not a regular file"):
        markdown.write(tmp_path / "link.md", text)


def test_the_report_command_writes_markdown(outcome, tmp_path):
    import subprocess
    import sys

    base = [sys.executable, "-m", "phblab", "report", "--format", "markdown", "--results", outcome.dir.parents[1]]
    catalog_root = outcome.entry.path.parents[1]
    r = subprocess.run([*base, "--catalog", catalog_root], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("<!-- generated by `phblab report --format markdown`")
    mine = tmp_path / "mine.md"
    mine.write_text("notes\n")
    r = subprocess.run([*base, "--catalog", catalog_root, "--out", mine], capture_output=True, text=True)
    assert r.returncode == 2 and "was not written by" in r.stderr and mine.read_text() == "notes\n"


def test_the_source_commit_is_read_from_a_checkout_of_phblab_only(tmp_path):
    import subprocess

    from phblab.catalog.provenance import source_commit

    assert source_commit(tmp_path) is None  # not a checkout of phblab
    (tmp_path / "python" / "phblab" / "catalog").mkdir(parents=True)
    assert source_commit(tmp_path) is None  # not a git checkout
    (tmp_path / "f.txt").write_text("one\n")

    def git(*args):
        return subprocess.run(
            ["git", "-C", tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", *args],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    git("init", "-q")
    git("add", "f.txt")
    git("commit", "-q", "-m", "one")
    head = git("rev-parse", "HEAD")
    assert source_commit(tmp_path) == head
    (tmp_path / "f.txt").write_text("two\n")
    assert source_commit(tmp_path) == head + "+dirty"
    (tmp_path / "python" / "phblab" / "catalog" / "new.py").write_text("")  # untracked: not dirty
    (tmp_path / "f.txt").write_text("one\n")
    assert source_commit(tmp_path) == head
