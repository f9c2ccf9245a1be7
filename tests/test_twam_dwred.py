"""TWAM and DWRED in the simulator (Bouras & Sevasti 2008): the marker's
window reaches the DWRED buffers of the LSP (the simulation-level channel),
in packets are never early-dropped, and the window inputs and markers
(oracle cwnd, passive estimate, eq. 8's ssthresh, TSW2CM) all run.
scenarios/examples/twam-dwred.toml is the network (two 10 Mb/s hops, four
TCP flows with r = 1..4 Mb/s, RTT_LSP = 100 ms, α = 2)."""

from pathlib import Path

import numpy as np
import pytest

import phblab

EXAMPLE = Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "twam-dwred.toml"
SAMPLED = {"run.duration": "30s", "run.warmup": "5s", "run.sample_interval": "200ms"}


def series(result, scope, metric):
    ts = result.timeseries
    rows = ts[(ts.scope == scope) & (ts.metric == metric)]
    return rows.set_index("time_s").value


@pytest.fixture(scope="module")
def oracle():
    return phblab.run(EXAMPLE, overrides=SAMPLED)


def test_the_lsp_window_reaches_every_dwred_buffer_of_the_path(oracle):
    """At every sample, each hop's max_th is the W_LSP^cwnd TWAM last
    computed (eq. 11), once it has computed one (before, the configured
    125)."""
    w_lsp = series(oracle, "lsp/af", "w_lsp_segments")
    assert len(w_lsp) > 100 and w_lsp.iloc[0] == 0 and (w_lsp.iloc[1:] > 0).all()
    assert (series(oracle, "r1->r2", "dwred_max_th").iloc[:1] == 125).all()
    w_lsp = w_lsp.iloc[1:]
    for hop in ("r1->r2", "r2->r3"):
        max_th = series(oracle, hop, "dwred_max_th")
        common = w_lsp.index.intersection(max_th.index)
        assert len(common) == len(w_lsp)
        np.testing.assert_allclose(max_th.loc[common], w_lsp.loc[common])


def test_in_packets_are_not_early_dropped_and_the_path_is_full(oracle):
    c = oracle.classes
    af11 = c[(c["class"] == "af11") & c.scope.isin(["r1->r2", "r2->r3"])]
    assert af11.dropped.sum() == 0
    e2e = c[(c.scope == "end-to-end")].throughput_bps.sum()
    assert e2e > 0.97 * 10e6


def test_the_flows_are_ordered_as_their_contracted_rates(oracle):
    f = oracle.flows.set_index("flow")
    assert list(f.loc[["r1", "r2", "r3", "r4"]].throughput_bps.rank()) == [1, 2, 3, 4]
    assert list(f.loc[["r1", "r2", "r3", "r4"]].cwnd_mean_segments.rank()) == [1, 2, 3, 4]


@pytest.mark.parametrize(
    "overrides",
    [
        {"lsps.af.window": "passive"},
        {"lsps.af.w_lsp": "ssthresh"},
        {"lsps.af.marker": "tsw2cm"},
        {"lsps.af.alpha": 1},
    ],
    ids=["passive", "ssthresh", "tsw2cm", "alpha-1"],
)
def test_window_inputs_and_markers_run(overrides):
    """Each window input and marker runs, TWAM computes W_LSP, and the flows
    carry most of the 10 Mb/s path. The ssthresh input sizes W_LSP below the
    windows and carries least: 8.68 Mb/s over these 25 s (14 timeouts),
    since the timer's back-off ends only on an RTT sample as in ns-2."""
    r = phblab.run(EXAMPLE, overrides={**SAMPLED, **overrides})
    w_lsp = series(r, "lsp/af", "w_lsp_segments")
    assert (w_lsp.iloc[10:] > 0).all()
    assert r.classes[r.classes.scope == "end-to-end"].throughput_bps.sum() > 0.8 * 10e6


def test_the_passive_estimate_is_near_the_path_s_window():
    """Counted over one RTT_LSP at the ingress, the members' packets sum to
    about the LSP's rate times RTT_LSP (eq. 3): 10 Mb/s·0.1 s/8000 bits =
    125 packets, whatever the queueing."""
    r = phblab.run(EXAMPLE, overrides={**SAMPLED, "lsps.af.window": "passive"})
    w_lsp = series(r, "lsp/af", "w_lsp_segments")
    assert abs(w_lsp[w_lsp.index >= 5].mean() - 125) < 5


def test_path_ef_is_path_plus_the_udp_source():
    """scenarios/bouras-2008/path-ef.toml (scenario #6) is path.toml plus the
    UDP hosts, their links and the EF sources: nothing else may differ."""
    import tomllib

    root = EXAMPLE.parents[1] / "bouras-2008"
    path = tomllib.loads((root / "path.toml").read_text())
    ef = tomllib.loads((root / "path-ef.toml").read_text())
    for key in ("run", "classes", "qdiscs", "lsps"):
        assert ef[key] == path[key], key
    assert ef["nodes"]["routers"] == path["nodes"]["routers"]
    assert ef["nodes"]["hosts"] == [*path["nodes"]["hosts"], "u_s", "u_d"]
    n = len(path["links"])
    assert ef["links"][:n] == path["links"]
    assert [link["between"] for link in ef["links"][n:]] == [["u_s", "r2"], ["r3", "u_d"]]
    m = len(path["traffic"])
    assert ef["traffic"][:m] == path["traffic"]
    assert {t["class"] for t in ef["traffic"][m:]} == {"ef"}
