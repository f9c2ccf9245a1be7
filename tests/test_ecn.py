"""ECN on a RED bottleneck (scenarios/examples/dumbbell-ecn.toml, 10 s):
with ECN-capable TCP and `ecn = true` on the qdisc, RED marks where it
dropped early, the senders halve their windows for the echoes, and the
bottleneck's drops fall while it stays full; with the keys off, the same
network drops and marks nothing."""

from pathlib import Path

import pytest

import phblab

EXAMPLE = Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "dumbbell-ecn.toml"
SHORT = {"run.duration": "10s", "run.warmup": "2s"}
ECN_OFF = {"qdiscs.bottleneck.ecn": False, "traffic[0].ecn": False, "traffic[1].ecn": False}


@pytest.fixture(scope="module")
def runs():
    return {ecn: phblab.run(EXAMPLE, overrides=SHORT | ({} if ecn else ECN_OFF)) for ecn in (True, False)}


def bottleneck(result):
    rows = result.classes[result.classes.scope == "r1->r2"]
    assert len(rows) == 1
    return rows.iloc[0]


def test_marks_replace_early_drops(runs):
    on, off = bottleneck(runs[True]), bottleneck(runs[False])
    assert off.marked == 0 and off.drop_early > 50
    assert on.marked > off.drop_early / 2
    # Early drops left are of not-ECT packets: retransmissions (RFC 3168
    # §6.1.5) of the losses of the first slow start.
    assert on.drop_early < off.drop_early / 20
    assert on.dropped < off.dropped / 20
    for rate in (on.throughput_bps, off.throughput_bps):
        assert rate > 9.5e6, "the bottleneck stays busy"


def test_senders_react_to_the_echoes_and_retransmit_less(runs):
    on, off = runs[True].flows, runs[False].flows
    assert on.marked_pkts.sum() == bottleneck(runs[True]).marked
    assert (on.ecn_reductions > 0).all()
    assert off.ecn_reductions.sum() == 0 and off.marked_pkts.sum() == 0
    assert on.retransmissions.sum() < off.retransmissions.sum() / 2


def test_end_to_end_counts_each_marked_packet_once(runs):
    classes = runs[True].classes
    end_to_end = classes[classes.scope == "end-to-end"].iloc[0]
    assert end_to_end.marked == bottleneck(runs[True]).marked
