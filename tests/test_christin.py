"""Smoke versions of the JoBS paper's reproductions (Christin, Liebeherr &
Abdelzaher 2001; scenarios/christin-2001/): the catalog entries' scenarios,
run for 20–25 s with one seed, so that a change that breaks JoBS' delay or
loss loops, its absolute guarantees or its dropping order in a real network
shows here in seconds. The bands are the entries' targets, loosened where a
short run is noisier; the full entries (`phblab reproduce`) hold the
paper's numbers.
"""

from pathlib import Path

import pandas as pd
import pytest

import phblab
from phblab.catalog import interval_ratios, interval_values

PAPER = Path(__file__).resolve().parents[1] / "scenarios" / "christin-2001"


def at(res: phblab.Results, scope: str) -> pd.DataFrame:
    c = res.classes
    return c[c.scope == scope].set_index("class")


def counter(res: phblab.Results, scope: str, queue: str, name: str) -> int:
    k = res.counters
    return int(k[(k.scope == scope) & (k.queue == queue) & (k.counter == name)].value.sum())


def window_ratios(res: phblab.Results, scope: str, metric: str = "delay_mean_s", **kw) -> dict:
    ts, warmup = res.timeseries, res.summary["warmup_s"]
    return {(a, b): interval_ratios(ts, scope, a, b, metric, warmup, **kw) for a, b in (("c4", "c3"), ("c3", "c2"))}


def check_router(res: phblab.Results, scope: str, d_ms: float, loss_bound: float, during=()):
    t = at(res, scope)
    for pair, r in window_ratios(res, scope, during=during).items():
        assert len(r) >= 15, pair
        share = ((r >= 1.5) & (r <= 2.5)).mean()
        assert share >= 0.8, f"{scope} D{pair}: {share:.2f} of the windows within ±25% of 2 (median {r.median():.2f})"
    loss = t.loss_rate
    for a, b in (("c4", "c3"), ("c3", "c2")):
        assert 1.5 <= loss[a] / loss[b] <= 2.5, f"{scope} L{a}/L{b} = {loss[a] / loss[b]:.2f}"
    late = counter(res, scope, "c1", "delay_violations") / t.departures["c1"]
    assert late < 0.01, f"{scope}: {late:.2%} of class 1 later than {d_ms} ms"
    assert counter(res, scope, "c1", "loss_bound_drops") == 0
    assert loss["c1"] <= loss_bound * 1.02
    # the rate the kernel reports every 0.5 s (eq. 5, over the busy period)
    # never exceeds the bound
    reported = interval_values(res.timeseries, scope, "c1", "busy_loss_rate", res.summary["warmup_s"])
    assert len(reported) >= 15 and reported.max() <= loss_bound, reported.max()
    thr = interval_values(res.timeseries, scope, ["c1", "c2", "c3", "c4"], "throughput_bps", 1.0, during=during)
    assert thr.min() >= 98e6, f"{scope}: a window carried {thr.min() / 1e6:.1f} Mb/s"


def test_experiment_1_single_bottleneck():
    res = phblab.run(PAPER / "experiment-1.toml", overrides={"run.duration": "20s"})
    check_router(res, "r1->r2", 3, 0.001)
    t = at(res, "r1->r2")
    assert t.delay_max_s["c1"] <= 0.004
    assert t.throughput_bps["c2"] >= 35e6
    # delays grow class by class (k = 2 each): c2 < c3 < c4
    assert t.delay_mean_s["c2"] < t.delay_mean_s["c3"] < t.delay_mean_s["c4"]


def test_experiment_3_two_bottlenecks():
    res = phblab.run(PAPER / "experiment-3.toml", overrides={"run.duration": "20s"})
    for scope in ("r1->r2", "r2->r3"):
        check_router(res, scope, 8, 0.01)
        assert at(res, scope).delay_max_s["c1"] <= 0.010


def test_experiment_2_follows_the_load_phases():
    """Greedy in [0, 10) and [20, 25) s, 8 KB chunks in between: the
    differentiation holds while overloaded, and the chunk phase offers far
    less than the link."""
    res = phblab.run(PAPER / "experiment-2.toml", overrides={"run.duration": "25s"})
    check_router(res, "r1->r2", 3, 0.001, during=[(1, 10), (20, 25)])
    offered = interval_values(res.timeseries, "r1->r2", ["c1", "c2", "c3", "c4"], "offered_bps", 1.0)
    assert offered[(offered.index > 12) & (offered.index <= 20)].max() < 50e6
    assert offered[(offered.index > 2) & (offered.index <= 10)].mean() > 99e6


@pytest.mark.parametrize("gone", ["k", "k_prime"])
def test_without_proportional_guarantees_there_is_no_such_differentiation(gone):
    """The same network with k (or k') removed: the ratio JoBS no longer
    controls is no longer 2 — so the checks above can fail."""
    overrides = {"run.duration": "20s"}
    text = (PAPER / "experiment-1.toml").read_text().split("\n[reproduce]")[0]
    text = text.replace(f"\n{gone} = 2\n", "\n")
    res = phblab.run(phblab_toml(text), overrides=overrides)
    t = at(res, "r1->r2")
    if gone == "k":
        r = window_ratios(res, "r1->r2")[("c3", "c2")]
        assert not 1.5 <= r.median() <= 2.5, r.median()
    else:
        # classes without proportional loss guarantees lose the worst first
        l2, l3 = t.loss_rate["c2"], t.loss_rate["c3"]
        assert not 1.5 * l2 <= l3 <= 2.5 * l2, (l2, l3)


def phblab_toml(text: str) -> dict:
    import tomllib

    return tomllib.loads(text)
