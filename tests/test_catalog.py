"""The reproduction catalog: [reproduce] sections, `reproduce` pass and
fail, the catalog's own entries, the command."""

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
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
kind = "printed"
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
    assert msg.startswith("FAIL [printed] be_mbps at max_p=0.05")
    assert "gap -" in msg and "(-33.3%)" in msg and "tolerance 1%" in msg
    text = catalog.format_outcome(bad)
    assert "FAIL: printed 0/2 · measured 1/1" in text and "a test entry" in text


def test_an_entry_may_sweep_a_shared_scenario(tiny_catalog, tmp_path):
    """`scenario = "tiny.toml"`: the entry file holds only [reproduce] and
    sweeps the named file (itself an entry), with the same results."""
    be, share = expected_values()
    shared = tiny_catalog / "test-paper" / "shared.toml"
    shared.write_text(
        SECTION.format(be=be, share=share).replace("[reproduce]\n", '[reproduce]\nscenario = "tiny.toml"\n', 1)
    )
    entry = catalog.load_entry(shared, tiny_catalog)
    assert entry.scenario == (tiny_catalog / "test-paper" / "tiny.toml").resolve()
    assert entry.scenario_path == entry.scenario and entry.path == shared
    ok = catalog.reproduce(entry, results=tmp_path / "res", jobs=1)
    assert ok.passed, catalog.format_outcome(ok)
    doc = json.loads((tmp_path / "res" / "test-paper" / "shared" / "comparison.json").read_text())
    assert doc["scenario"].endswith("tiny.toml") and doc["entry"].endswith("shared.toml")

    def load_with(prefix: str, name: str = "tiny.toml"):
        bad = tiny_catalog / "test-paper" / "bad.toml"
        bad.write_text(
            prefix
            + SECTION.format(be=be, share=share).replace("[reproduce]\n", f'[reproduce]\nscenario = "{name}"\n', 1)
        )
        with pytest.raises(catalog.CatalogError) as e:
            catalog.load_entry(bad, tiny_catalog)
        return str(e.value)

    assert "holds only [reproduce]; found name" in load_with('name = "x"\n')
    assert "does not exist" in load_with("", "missing.toml")
    assert "names the entry's own file" in load_with("", "bad.toml")
    with pytest.raises(ValueError, match="catalog entry that sweeps tiny.toml"):
        phblab.validate(shared)


def test_reproduce_command_exit_status(tiny_catalog, tmp_path):
    def cli(*args):
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "phblab",
                "reproduce",
                "--catalog",
                tiny_catalog,
                "--results",
                tmp_path / "r",
                "--quiet",
                "--jobs",
                "1",
                *args,
            ],
            capture_output=True,
            text=True,
        )

    r = cli("--list")
    assert r.returncode == 0 and "test-paper/tiny" in r.stdout and "test-paper/wrong" in r.stdout
    r = cli("tiny")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS: printed 2/2 · measured 1/1" in r.stdout
    r = cli("test-paper/tiny", "wrong")
    assert r.returncode == 3
    assert "FAIL [printed] be_mbps at max_p=0.05" in r.stdout and "1/2 entries pass" in r.stdout
    assert "2 failing checks without a cause (unexplained), in test-paper/wrong" in r.stdout
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
    and every grid point validates (without running); one that runs commands, for the emulator."""
    if "[reproduce" not in path.read_text():
        phblab.validate(path, backend="emulate" if 'kind = "command"' in path.read_text() else "simulate")
        return
    entry = catalog.load_entry(path, ROOT / "scenarios")
    phblab.validate(entry.scenario_path)
    assert (entry.expect or entry.claims) and entry.assumptions
    from phblab.sweep import make_plan

    make_plan(entry.scenario_path, entry.grid, 1, entry.sweep.get("overrides"), entry.sweep.get("set"))


def test_the_catalog_lists_the_first_entries():
    ids = [e.id for e in catalog.load_catalog(ROOT / "scenarios")]
    assert "vukadinovic-2004/appendix-b" in ids and "regression/fifo-vs-red" in ids


# ------------------------------------------- expr metrics, time series, claims

TWO_CLASSES = """\
[run]
duration = "3s"
warmup = "1s"
seed = 1

[classes]
ts = 0
ds = 46

[nodes]
hosts = ["src", "sink"]
routers = ["r"]

[qdiscs.sched]                  # strict priority: ds before ts
kind = "classful"
scheduler = "priority"

[[qdiscs.sched.buffers]]
name = "ds"
policy = "droptail"
limit = "100pkt"

[[qdiscs.sched.buffers]]
name = "ts"
policy = "droptail"
limit = "100pkt"

[[qdiscs.sched.queues]]
name = "ds"
classes = ["ds"]
buffer = "ds"

[[qdiscs.sched.queues]]
name = "ts"
classes = ["ts"]
buffer = "ts"

[[links]]
between = ["src", "r"]
rate = "100Mbps"
delay = "1ms"

[[links]]
between = ["r", "sink"]
rate = "10Mbps"
delay = "1ms"
qdisc_forward = "sched"

[[traffic]]
name = "bulk"
kind = "pareto_onoff"
from = "src"
to = "sink"
class = "ts"
count = 5
packet_size = "500B"
rate = "1Mbps"
on_mean = "50ms"
off_mean = "50ms"
shape = 1.5

[[traffic]]
name = "voice"
kind = "pareto_onoff"
from = "src"
to = "sink"
class = "ds"
count = 5
packet_size = "500B"
rate = "1Mbps"
on_mean = "50ms"
off_mean = "50ms"
shape = 1.5
"""

CLAIMS_SECTION = """
[reproduce]
title = "tiny: two classes behind strict priority"
assumptions = ["a test entry with claims"]

[reproduce.sweep]
seeds = 2
grid = { load = [0.5, 0.9], timescale_ms = [100, 250] }
set = { "traffic[0].rate" = "{load * 2}Mbps", "traffic[1].rate" = "{load * 2}Mbps", "run.sample_interval" = "{timescale_ms}ms" }

[reproduce.metrics.d_ts]
table = "classes"
column = "delay_mean_s"
where = { scope = "r->sink", class = "ts" }
agg = "mean"
scale = 1e3
unit = "ms"

[reproduce.metrics.d_ds]
table = "classes"
column = "delay_mean_s"
where = { scope = "r->sink", class = "ds" }
agg = "mean"
scale = 1e3
unit = "ms"

[reproduce.metrics.gap]         # an expr of an expr defined below it
expr = "err + load"

[reproduce.metrics.err]
expr = "abs(ratio / (10 * L) - 1)"
params = { L = "load" }

[reproduce.metrics.ratio]
ratio = ["d_ts", "d_ds"]

[reproduce.metrics.ratio_p50]
table = "timeseries"
interval_ratio = { scope = "r->sink", numerator = "ts", denominator = "ds" }
percentile = 50

[reproduce.metrics.ratio_p95]
table = "timeseries"
interval_ratio = { scope = "r->sink", numerator = "ts", denominator = "ds", metric = "delay_mean_s" }
percentile = 95

[reproduce.metrics.share_within]
interval_ratio = { scope = "r->sink", numerator = "ts", denominator = "ds", metric = "throughput_bps" }
within = [0.5, 2]
during = [[1, 2.5]]

[reproduce.metrics.total_min]
interval_value = { scope = "r->sink", class = ["ts", "ds"], metric = "throughput_bps" }
when = { class = "ts", metric = "offered_bps", op = ">", value = 0 }
percentile = 0
scale = 1e-6

[[reproduce.expect]]
metric = "ratio"
source = "measured"
tolerance = 1000.0
points = [{ load = 0.9, timescale_ms = 100, value = 1.0 }]

[[reproduce.claims]]
text = "the low-priority class waits longer"
ref = "Fig. 1"
kind = "stated"
over = { load = [0.5, 0.9], timescale_ms = [100, 250] }
left = { metric = "d_ts" }
op = ">"
right = { metric = "d_ds", scale = 1.1 }

[[reproduce.claims]]
text = "more load, longer waits"
ref = "Sec. 2"
kind = "stated"
over = { timescale_ms = 100 }
left = { metric = "d_ts", at = { load = 0.9 } }
op = ">="
right = { metric = "d_ts", at = { load = 0.5 } }

[[reproduce.claims]]
text = "the interval delay ratio stays below 1"
ref = "Fig. 16"
kind = "printed"
over = { load = 0.9 }
left = { metric = "ratio_p95", at = { timescale_ms = 100 } }
op = "<"
right = { value = 1.0 }
"""


def write_claims_entry(root: Path, name="claims") -> Path:
    path = root / "test-paper" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TWO_CLASSES + CLAIMS_SECTION)
    return path


@pytest.fixture(scope="module")
def claims_outcome(tmp_path_factory):
    root = tmp_path_factory.mktemp("claims")
    entry = catalog.load_entry(write_claims_entry(root / "catalog"), root / "catalog")
    return catalog.reproduce(entry, results=root / "res", jobs=1)


def test_claims_expand_over_pass_and_fail_with_their_message(claims_outcome):
    out = claims_outcome
    claims = [c for c in out.checks if c.check == "claim"]
    assert [c.check for c in out.checks] == ["value"] + ["claim"] * 6
    assert [c.kind for c in out.checks] == ["measured"] + ["stated"] * 5 + ["printed"]
    # over: one check per combination, in order; the coordinates apply to both sides
    assert [c.coords for c in claims[:4]] == [
        {"load": 0.5, "timescale_ms": 100},
        {"load": 0.5, "timescale_ms": 250},
        {"load": 0.9, "timescale_ms": 100},
        {"load": 0.9, "timescale_ms": 250},
    ]
    means = out.per_point.set_index(["metric", "load", "timescale_ms"])["mean"]
    for c in claims[:4]:
        at = (c.coords["load"], c.coords["timescale_ms"])
        assert c.left.mean == pytest.approx(means[("d_ts", *at)])
        assert c.right.mean == pytest.approx(means[("d_ds", *at)])
        assert c.right.value == pytest.approx(1.1 * c.right.mean)  # scale
        assert c.passed == (c.left.mean > 1.1 * c.right.mean)
    assert all(c.passed for c in claims[:4]), [c.message() for c in claims[:4]]
    assert claims[0].message() == (
        f"PASS [stated] claim (Fig. 1) at load=0.5, timescale_ms=100: the low-priority class waits longer: "
        f"ours d_ts {claims[0].left.mean:.4g} > 1.1 × d_ds {claims[0].right.mean:.4g} = {claims[0].right.value:.4g} ms"
    )
    more = claims[4]
    assert more.passed and more.coords == {"timescale_ms": 100}
    assert more.left.mean == pytest.approx(means[("d_ts", 0.9, 100)])
    assert more.right.mean == pytest.approx(means[("d_ts", 0.5, 100)])
    assert "ours d_ts[load=0.9] " in more.message() and " >= d_ts[load=0.5] " in more.message()
    below = claims[5]
    assert not below.passed and below.left.mean > 1
    assert below.message() == (
        f"FAIL [printed] claim (Fig. 16) at load=0.9: the interval delay ratio stays below 1: "
        f"ours ratio_p95[timescale_ms=100] {below.left.mean:.4g} < 1"
    )
    text = catalog.format_outcome(out)
    assert below.message() in text and "FAIL: printed 0/1 · stated 5/5 · measured 1/1" in text
    assert not out.passed
    # comparison files: claim rows beside value rows, each with its own columns
    doc = json.loads((out.dir / "comparison.json").read_text())
    rows = doc["checks"]
    assert [r["check"] for r in rows] == ["value"] + ["claim"] * 6
    assert [r["kind"] for r in rows] == ["measured"] + ["stated"] * 5 + ["printed"]
    assert rows[0]["expected"] == 1.0 and "text" not in rows[0]
    assert rows[6]["text"] == "the interval delay ratio stays below 1" and rows[6]["right"] == 1.0
    assert rows[1]["right_scale"] == 1.1 and rows[1]["margin"] == pytest.approx(claims[0].margin)
    assert doc["claims"][0]["over"] == {"load": [0.5, 0.9], "timescale_ms": [100, 250]}
    csv = pd.read_csv(out.dir / "comparison.csv")
    assert {
        "check",
        "kind",
        "metric",
        "expected",
        "tolerance",
        "text",
        "op",
        "left",
        "right",
        "left_mean",
        "passed",
    } <= set(csv.columns)
    assert list(csv.passed) == [True, True, True, True, True, True, False]


def test_expr_metrics_follow_their_dependencies(claims_outcome):
    per_run = pd.read_csv(claims_outcome.dir / "per_run.csv")
    classes = phblab.open_sweep(claims_outcome.dir / "sweep").classes
    rows = classes[classes.scope == "r->sink"].set_index(["run", "class"]).delay_mean_s
    assert len(per_run) == 8
    for _, r in per_run.iterrows():
        ratio = rows[(r.run, "ts")] / rows[(r.run, "ds")]
        err = abs(ratio / (10 * r.load) - 1)
        assert r.ratio == pytest.approx(ratio)
        assert r.err == pytest.approx(err)
        assert r.gap == pytest.approx(err + r.load)


def _hand_percentile(values, q):
    """Linear interpolation between order statistics, by hand."""
    v = sorted(values)
    pos = q / 100 * (len(v) - 1)
    lo = int(pos)
    return v[lo] + (pos - lo) * (v[min(lo + 1, len(v) - 1)] - v[lo])


def test_interval_ratio_percentile_end_to_end(claims_outcome):
    per_run = pd.read_csv(claims_outcome.dir / "per_run.csv")
    runs_dir = claims_outcome.dir / "sweep" / "runs"
    for _, r in per_run.iterrows():
        ts = pd.read_parquet(runs_dir / r.run / "timeseries.parquet")
        warmup = json.loads((runs_dir / r.run / "summary.json").read_text())["warmup_s"]
        by_time = {}
        for t, scope, cls, metric, v in ts[["time_s", "scope", "class", "metric", "value"]].itertuples(index=False):
            if scope == "r->sink" and metric == "delay_mean_s" and t > warmup:
                by_time.setdefault(t, {})[cls] = v
        # sampling follows the grid's timescale
        assert sorted(by_time)[:2] == pytest.approx([1 + r.timescale_ms / 1000, 1 + 2 * r.timescale_ms / 1000])
        ratios = [d["ts"] / d["ds"] for d in by_time.values() if "ts" in d and "ds" in d and d["ds"] != 0]
        assert len(ratios) >= 5
        assert r.ratio_p50 == pytest.approx(_hand_percentile(ratios, 50))
        assert r.ratio_p95 == pytest.approx(_hand_percentile(ratios, 95))


def test_interval_ratios_on_a_synthetic_series():
    rows = [
        (0.5, "r->s", "ts", "delay_mean_s", 9.0),
        (0.5, "r->s", "ds", "delay_mean_s", 1.0),  # before the warm-up
        (1.0, "r->s", "ts", "delay_mean_s", 9.0),
        (1.0, "r->s", "ds", "delay_mean_s", 1.0),  # at its end: skipped
        (1.5, "r->s", "ts", "delay_mean_s", 4.0),
        (1.5, "r->s", "ds", "delay_mean_s", 1.0),  # 4
        (2.0, "r->s", "ts", "delay_mean_s", 3.0),  # no ds departure
        (2.5, "r->s", "ts", "delay_mean_s", 2.0),
        (2.5, "r->s", "ds", "delay_mean_s", 0.0),  # denominator 0
        (3.0, "r->s", "ts", "delay_mean_s", 1.0),
        (3.0, "r->s", "ds", "delay_mean_s", 2.0),  # 0.5
        (3.5, "r->s", "ts", "delay_mean_s", 6.0),
        (3.5, "r->s", "ds", "delay_mean_s", 2.0),  # 3
        (3.5, "r->s", "be", "delay_mean_s", 100.0),
        (3.5, "r->s", "", "queue_pkts", 7.0),
        (3.5, "end-to-end", "ts", "delay_mean_s", 50.0),
        (3.5, "end-to-end", "ds", "delay_mean_s", 1.0),
        (3.5, "r->s", "ts", "throughput_bps", 8e6),
        (3.5, "r->s", "ds", "throughput_bps", 2e6),
    ]
    ts = pd.DataFrame(rows, columns=["time_s", "scope", "class", "metric", "value"])
    kw = dict(scope="r->s", numerator="ts", denominator="ds", warmup_s=1.0)
    assert catalog.interval_ratios(ts, **kw).to_dict() == {1.5: 4.0, 3.0: 0.5, 3.5: 3.0}
    # sorted 0.5, 3, 4: linear interpolation between order statistics
    assert catalog.interval_ratio_percentile(ts, 50, **kw) == pytest.approx(3.0)
    assert catalog.interval_ratio_percentile(ts, 5, **kw) == pytest.approx(0.5 + 0.1 * 2.5)
    assert catalog.interval_ratio_percentile(ts, 95, **kw) == pytest.approx(3.0 + 0.9 * 1.0)
    assert catalog.interval_ratio_percentile(ts, 50, **{**kw, "warmup_s": 0.0}) == pytest.approx(4.0)  # 0.5, 3, 4, 9, 9
    assert catalog.interval_ratio_percentile(ts, 50, **{**kw, "metric": "throughput_bps"}) == pytest.approx(4.0)
    assert math.isnan(catalog.interval_ratio_percentile(ts, 50, **{**kw, "scope": "x->y"}))
    assert math.isnan(catalog.interval_ratio_percentile(ts, 50, **{**kw, "warmup_s": 10.0}))


def test_within_during_and_when_end_to_end(claims_outcome):
    """The per-run values of the `within`/`during` and `interval_value`
    metrics, recomputed by hand from each run's time series."""
    per_run = pd.read_csv(claims_outcome.dir / "per_run.csv")
    runs_dir = claims_outcome.dir / "sweep" / "runs"
    for _, r in per_run.iterrows():
        ts = pd.read_parquet(runs_dir / r.run / "timeseries.parquet")
        ts = ts[(ts.scope == "r->sink") & (ts.time_s > 1 + 1e-9)]
        wide = ts.pivot_table(index="time_s", columns=["metric", "class"], values="value")
        thr = wide["throughput_bps"]
        inside = thr[(thr.index <= 2.5 + 1e-9) & (thr.ds != 0)].dropna()
        shares = inside.ts / inside.ds
        assert r.share_within == pytest.approx(((shares >= 0.5) & (shares <= 2)).mean())
        sending = wide["offered_bps"]["ts"] > 0
        total = thr.fillna(0).sum(axis=1)[sending.reindex(thr.index, fill_value=False)]
        assert r.total_min == pytest.approx(total.min() * 1e-6)


def test_interval_values_within_during_when_on_a_synthetic_series():
    rows = []
    for t, (a, b, off_a) in {
        0.5: (9, 9, 1),  # before the warm-up
        1.0: (5, 1, 1),
        1.5: (4, 2, 0),
        2.0: (1, 3, 1),
        2.5: (2, 2, 1),
    }.items():
        rows += [(t, "r->s", "a", "throughput_bps", a), (t, "r->s", "b", "throughput_bps", b)]
        rows += [(t, "r->s", "a", "offered_bps", off_a)]
    rows.append((3.0, "r->s", "a", "throughput_bps", 7))  # b has no value here
    ts = pd.DataFrame(rows, columns=["time_s", "scope", "class", "metric", "value"])
    kw = dict(scope="r->s", metric="throughput_bps", warmup_s=0.5)
    # one class, then the sum of two (a missing value counts as 0)
    assert catalog.interval_values(ts, classes="a", **kw).to_dict() == {1.0: 5, 1.5: 4, 2.0: 1, 2.5: 2, 3.0: 7}
    assert catalog.interval_values(ts, classes=["a", "b"], **kw).to_dict() == {
        1.0: 6,
        1.5: 6,
        2.0: 4,
        2.5: 4,
        3.0: 7,
    }
    # during keeps intervals ending in (t0, t1]; when needs the condition's value
    assert list(catalog.interval_values(ts, classes="a", during=[(1.0, 2.0)], **kw).index) == [1.5, 2.0]
    when = [{"class": "a", "metric": "offered_bps", "op": ">", "value": 0}]
    assert list(catalog.interval_values(ts, classes="a", when=when, **kw).index) == [1.0, 2.0, 2.5]
    r = catalog.interval_ratios(ts, "r->s", "a", "b", **{k: v for k, v in kw.items() if k != "scope"})
    assert r.to_dict() == {1.0: 5.0, 1.5: 2.0, 2.0: 1 / 3, 2.5: 1.0}
    assert catalog.reduce_intervals(r, within=(1.0, 2.0)) == pytest.approx(0.5)
    assert catalog.reduce_intervals(r, percentile=100) == pytest.approx(5.0)
    assert math.isnan(catalog.reduce_intervals(r.iloc[:0], within=(0, 1)))


def test_list_counts_claims(tmp_path):
    write_claims_entry(tmp_path)
    text = catalog.list_entries(catalog.load_catalog(tmp_path))
    assert "[1 measured values, 3 claims (6 checks); 4 points × 2 seeds]" in text


def test_a_sensitivity_entry_says_so_in_the_list_and_the_report(tmp_path):
    path = write_claims_entry(tmp_path)
    path.write_text(
        path.read_text().replace('title = "tiny: two classes', 'kind = "sensitivity"\ntitle = "tiny: two classes')
    )
    entry = catalog.load_entry(path, tmp_path)
    assert entry.kind == "sensitivity"
    assert "(sensitivity)  [" in catalog.list_entries([entry])
    from phblab.report import write_report

    page = write_report(tmp_path / "report", results=tmp_path / "none", entries=[entry]).read_text()
    assert "A sensitivity study, not a reproduction" in page and "<i>(sensitivity)</i>" in page
    path.write_text(path.read_text().replace('kind = "sensitivity"', 'kind = "study"'))
    with pytest.raises(
        catalog.CatalogError, match=re.escape("[reproduce].kind: 'study': one of reproduction, sensitivity")
    ):
        catalog.load_entry(path)


@pytest.mark.parametrize(
    "old, new, message",
    [
        # claims
        ('left = { metric = "d_ts" }', 'left = { metric = "nope" }', "claims[0].left: metric 'nope' is not defined"),
        (
            "over = { load = [0.5, 0.9], timescale_ms = [100, 250] }",
            "over = { load = [0.5, 0.9] }",
            "claims[0].left: at and over together must give every grid key; missing: timescale_ms",
        ),
        ("at = { load = 0.9 } }", "at = { load = 0.7 } }", "claims[1].left.at: load = 0.7 is not in the grid"),
        ("at = { load = 0.9 } }", "at = { load = 0.9, colour = 1 } }", "claims[1].left.at: 'colour' is not a grid key"),
        ("over = { load = 0.9 }", "over = { load = 0.8 }", "claims[2].over: load = 0.8 is not in the grid"),
        ('op = ">="', 'op = "=>"', "claims[1]: op '=>': one of <, <=, >, >="),
        ("right = { value = 1.0 }", 'right = { value = 1.0, metric = "d_ts" }', "claims[2].right: value is a constant"),
        (
            'left = { metric = "ratio_p95", at = { timescale_ms = 100 } }',
            "left = { value = 2 }",
            "claims[2]: both sides are constant values",
        ),
        ('text = "more load, longer waits"\n', "", "claims[1]: text (the paper's statement) is required"),
        # expr metrics
        (
            'expr = "abs(ratio / (10 * L) - 1)"',
            'expr = "abs(ratio / (10 * L) - 1) + gap"',
            "metrics: metrics gap → err → gap depend on each other in a cycle",
        ),
        ('expr = "err + load"', 'expr = "err + gap"', "metrics.gap: expr 'err + gap' reads the metric itself"),
        ('expr = "err + load"', 'expr = "err + delta"', "metrics.gap: expr 'err + delta': unknown name 'delta'"),
        (
            'expr = "err + load"',
            'expr = "err if load else 0"',
            "metrics.gap: expr 'err if load else 0': unsupported expression",
        ),
        ('expr = "err + load"', 'expr = "err +"', "metrics.gap: expr 'err \\+': invalid syntax"),
        (
            'params = { L = "load" }',
            'params = { L = "qdiscs.sched.delta" }',
            "metrics.err.params: L = 'qdiscs.sched.delta': not a grid key",
        ),
        (
            'params = { L = "load" }',
            'params = { load = "load" }',
            "metrics.err.params: 'load' is already the name of a grid key",
        ),
        ('expr = "err + load"', 'expr = "err + load"\ncolumn = "x"', "metrics.gap: column and expr exclude each other"),
        (
            "grid = { load = [0.5, 0.9]",
            'grid = { load = [0.5, "high"]',
            "grid key 'load' has values that are not numbers",
        ),
        # time-series metrics
        (
            'numerator = "ts", denominator = "ds" }',
            'numerator = "af", denominator = "ds" }',
            "metrics.ratio_p50.interval_ratio: numerator 'af' is not a class of the scenario",
        ),
        (
            'interval_ratio = { scope = "r->sink", numerator = "ts", denominator = "ds" }',
            'interval_ratio = { scope = "sink->src", numerator = "ts", denominator = "ds" }',
            "scope 'sink->src'",
        ),
        ('metric = "delay_mean_s" }', 'metric = "queue_pkts" }', "metric 'queue_pkts': a per-class time series"),
        ("percentile = 50", "percentile = 150", "metrics.ratio_p50: percentile 150: a number from 0 to 100"),
        (
            ', "run.sample_interval" = "{timescale_ms}ms" }',
            " }",
            "metrics.ratio_p50: a time-series metric needs run.sample_interval",
        ),
        (
            'table = "timeseries"\ninterval_ratio = { scope = "r->sink", numerator = "ts", denominator = "ds" }',
            'table = "classes"\ninterval_ratio = { scope = "r->sink", numerator = "ts", denominator = "ds" }',
            'interval_ratio needs table = "timeseries"',
        ),
        ("within = [0.5, 2]", "within = [2, 0.5]", "metrics.share_within.within: [2, 0.5]: [lo, hi]"),
        ("within = [0.5, 2]", "within = [0.5, 2]\npercentile = 5", "either percentile = P or within = [lo, hi]"),
        ("during = [[1, 2.5]]", "during = [[2.5, 1]]", "metrics.share_within.during"),
        ('op = ">", value = 0 }', 'op = "!=", value = 0 }', "metrics.total_min.when[0]: op '!='"),
        (
            'class = ["ts", "ds"], metric = "throughput_bps"',
            'class = ["ts", "ds"], metric = "delay_mean_s"',
            "adds their values up",
        ),
        (
            'class = "ts", metric = "offered_bps"',
            'class = "af", metric = "offered_bps"',
            "when[0]: class 'af' is not a class",
        ),
        ("percentile = 0\nscale = 1e-6", "scale = 1e-6", "metrics.total_min: a time-series metric reduces"),
        ("within = [0.5, 2]", "within = [0.5, 2]\nwhere = {}", "unknown key where"),
    ],
)
def test_malformed_claims_and_new_metrics_fail_at_load(tmp_path, old, new, message):
    text = TWO_CLASSES + CLAIMS_SECTION
    assert old in text, old
    path = tmp_path / "e.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(catalog.CatalogError, match=re.escape(message) if "\\" not in message else message):
        catalog.load_entry(path)


def test_time_series_scopes_may_name_generated_links(tmp_path):
    """A scope is checked against the links the core builds, so a link a
    generator made counts (the file's [[links]] alone do not list it)."""
    star = (
        '\n[[generators]]\nkind = "star"\nname = "edge"\ncount = 2\nhub = "hub"\nleaves = "x{i}"\n'
        'leaf_links = { rate = "10Mbps", delay = "1ms" }\n'
    )
    scope = 'interval_ratio = { scope = "r->sink", numerator = "ts", denominator = "ds" }'
    path = tmp_path / "e.toml"
    path.write_text((TWO_CLASSES + star + CLAIMS_SECTION).replace(scope, scope.replace("r->sink", "x1->hub")))
    assert catalog.load_entry(path).metrics["ratio_p50"].interval_ratio["scope"] == "x1->hub"
    path.write_text((TWO_CLASSES + star + CLAIMS_SECTION).replace(scope, scope.replace("r->sink", "x2->hub")))
    with pytest.raises(catalog.CatalogError, match="scope 'x2->hub'"):
        catalog.load_entry(path)


# ------------------------------------------------- transfers and percentiles

PERCENTILES = """
[reproduce]
title = "percentiles"
[reproduce.sweep]
grid = { max_p = [0.1] }
set = { "qdiscs.bottleneck.max_p" = "{max_p}" }
[reproduce.metrics.t90]
table = "transfers"
column = "completion_s"
agg = "p90"
[reproduce.metrics.t_mean]
table = "transfers"
column = "completion_s"
agg = "mean"
[reproduce.metrics.n]
table = "transfers"
column = "completion_s"
agg = "count"
[reproduce.metrics.delay_p50]
table = "classes"
column = "delay_mean_s"
agg = "p50"
"""


def test_transfer_metrics_take_percentiles_of_the_measured_transfers(tmp_path):
    """`table = "transfers"` reads each run's transfers.parquet and keeps
    those started after the warm-up; `agg = "pNN"` interpolates linearly
    between order statistics (numpy's default), on any table."""
    path = tmp_path / "e.toml"
    path.write_text(SCENARIO + PERCENTILES)
    entry = catalog.load_entry(path)
    runs_dir = tmp_path / "runs"
    for run, times in (("a", [9.0, 1.0, 2.0, 3.0, 4.0, 5.0]), ("b", [7.0])):
        (runs_dir / run).mkdir(parents=True)
        starts = [0.5] + [2.0] * (len(times) - 1) if run == "a" else [3.0]
        pd.DataFrame({"flow": "f", "size_bytes": 1000, "start_s": starts, "completion_s": times}).to_parquet(
            runs_dir / run / "transfers.parquet"
        )
    runs = pd.DataFrame({"max_p": [0.1, 0.1], "seed": [1, 2], "run": ["a", "b"], "warmup_s": [1.0, 1.0]})
    classes = pd.DataFrame({"run": ["a", "a", "a", "b"], "delay_mean_s": [1.0, 2.0, 4.0, 3.0]})
    out = catalog.per_run_values(entry, {"runs": runs, "classes": classes, "flows": pd.DataFrame()}, runs_dir)
    # Run a: the 9 s transfer started in the warm-up and is left out; 1..5 s
    # remain: p90 = 4 + 0.6·(5 − 4) = 4.6, mean 3. Run b: its one transfer.
    assert out.t90.tolist() == pytest.approx([4.6, 7.0])
    assert out.t_mean.tolist() == pytest.approx([3.0, 7.0])
    assert out.n.tolist() == [5, 1]
    assert out.delay_p50.tolist() == pytest.approx([2.0, 3.0])


@pytest.mark.parametrize(
    "agg, message",
    [("p101", "agg 'p101'"), ("median", "agg 'median': one of count, max, mean, min, sum or a percentile")],
)
def test_bad_aggregates_fail_at_load(tmp_path, agg, message):
    path = tmp_path / "e.toml"
    path.write_text(SCENARIO + PERCENTILES.replace('agg = "p90"', f'agg = "{agg}"'))
    with pytest.raises(catalog.CatalogError, match=re.escape(message)):
        catalog.load_entry(path)
