"""The cross-check of the backends (`phblab.catalog.crosscheck`): checks
pair by what and where they check, the ratio is emulated over simulated
(a claim's left sides), and a verdict that differs is counted."""

from __future__ import annotations

import json
import math

from phblab.catalog import crosscheck
from phblab.catalog.run import Saved, read_outcome
from phblab.catalog.verdict import Check, ClaimCheck, SideValue


def _value(metric: str, ours: float, delta: int = 8) -> Check:
    """A check of `metric` at delta against 8 ± 1.6."""
    return Check(metric, {"delta": delta}, "paper", "Fig. 22", 8.0, "20%", 1.6, ours, ours, ours, 1, "")


def _claim(left: float, right: float) -> ClaimCheck:
    return ClaimCheck(
        "BPR's delay is below FIFO's",
        "paper",
        "Fig. 23",
        {},
        "<",
        SideValue("delay", "scheduler=bpr", 1.0, left, unit="ms"),
        SideValue("delay", "scheduler=fifo", 1.0, right, unit="ms"),
    )


def test_checks_pair_by_what_and_where_and_the_ratio_is_emulated_over_simulated():
    simulated = Saved({}, [_value("ratio", 7.2), _value("ratio", 7.9, delta=4), _claim(8.0, 37.0)])
    emulated = Saved(
        {"kernel": "6.1.0-test", "congestion_control": "cubic"},
        [_claim(40.0, 38.0), _value("ratio", 7.2 * 1.5), _value("other", 1.0)],
    )
    pairs = crosscheck.pairs(simulated, emulated)
    assert [(p.what, p.where) for p in pairs] == [
        ("ratio", "delta=8"),
        ("ratio", "delta=4"),
        ("claim (Fig. 23): BPR's delay is below FIFO's", ""),
        ("other", "delta=8"),
    ]
    at8, at4, claim, other = pairs
    assert math.isclose(at8.ratio, 1.5) and at8.verdicts_differ  # 10.8 is outside 8 ± 1.6
    assert at4.emulated is None and math.isnan(at4.ratio) and not at4.verdicts_differ
    assert math.isclose(claim.ratio, 5.0) and claim.verdicts_differ  # 40 < 38 fails
    assert crosscheck.Pair.shown(claim.emulated) == "delay[scheduler=bpr] 40 < delay[scheduler=fifo] 38 ms"
    assert other.simulated is None and crosscheck.verdict_text(other.simulated) == "–"
    assert crosscheck.differing(pairs) == 2
    assert crosscheck.ran_with(emulated) == "Linux 6.1.0-test, cubic"
    assert crosscheck.ran_with(simulated) == "kernel not recorded, reno"


def test_an_emulated_outcome_says_how_late_its_worst_run_s_router_was(tmp_path):
    # the runs the outcome used (per_run.csv), not every run the directory holds
    (tmp_path / "comparison.json").write_text(
        json.dumps({"backend": "emulate", "kernel": "6.1.0-test", "checks": [], "plots": []})
    )
    (tmp_path / "per_run.csv").write_text("scheme,seed,run,delay\nfifo,1,aaa,1.0\nbpr,1,bbb,2.0\n")
    for key, late in (("aaa", 84e-6), ("bbb", 2.5e-3), ("old", 9.0)):
        (tmp_path / "sweep" / "runs" / key).mkdir(parents=True)
        summary = {"backend": "emulate", "emulation": {"lateness_p99_s": late}}
        (tmp_path / "sweep" / "runs" / key / "summary.json").write_text(json.dumps(summary))
    saved = read_outcome(tmp_path)
    assert saved.router_lateness_p99_s == 2.5e-3
    assert crosscheck.ran_with(saved) == "Linux 6.1.0-test, reno, router lateness p99 ≤ 2.5 ms"
    saved.router_lateness_p99_s = 84e-6
    assert crosscheck.ran_with(saved).endswith("router lateness p99 ≤ 84 µs")
