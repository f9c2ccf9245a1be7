"""The BEDS paper's models (Firoiu, Zhang, Guo, ICT 2001) with the values the
catalog entries in scenarios/firoiu-2001/ use, and its Fig. 11.

    python scripts/firoiu_2001.py                 # the entries' predicted values
    python scripts/firoiu_2001.py --fig11 out.png # Fig. 11: R against delay and loss
    python scripts/firoiu_2001.py --transfers     # Figs. 8-10: transfer times by the models
    python scripts/firoiu_2001.py --measured-t0 results/reproduce/firoiu-2001/fig-4
                                                  # G(p) with the runs' T_0 and Q (or fig-4-red:
                                                  # the operating points; fig-7, fig-7-red alike)

The predictions come from `phblab.models` with the entries' assumptions
(docs/reproductions.md, BEDS): 1000-byte packets (M = 8000 bits), b = 1 (ns-2's
TCPSink acknowledges every packet), W_max = 20 (ns-2's window_), T_0 = 5R (the
paper's "typically 5R"), R_0 = 41 ms (20 ms of propagation each way plus the
transmission times), RED's drop rate with ns-2's wait (H of phblab.models).
Fig. 7 (the test bed, Linux TCP) differs: no window limit, R_0 = 1 ms (link
delays negligible: the transmission times), and b = 1 because Linux grows
its window by the segments each ACK acknowledges (one segment a round trip
whatever the ACK frequency), which is what PFTK's b stands for.
The entries hold the numbers this prints; rerun it after changing an
assumption, never after seeing a simulation's result.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from phblab import models

#: The model's parameters for every entry but Fig. 7's.
PFTK = {"M": 8000.0, "b": 1.0, "W_max": 20.0, "T_0_rtts": 5.0}
R_0 = 0.041
#: One VoIP flow: 82 bytes every 30 ms for a third of the time.
VOIP_BPS = 82 * 8 / 0.030 / 3
VOIP_BITS = 82 * 8

#: Fig. 7's test bed (fig-7.toml): Linux TCP without a window limit, link
#: delays negligible (R_0: the transmission times of a packet and its ACK),
#: 80 TCP and 60 VoIP flows on 10 Mb/s.
FIG7_PFTK = {"M": 8000.0, "b": 1.0, "W_max": float("inf"), "T_0_rtts": 5.0}
FIG7_R_0 = 0.001
FIG7_P_PCT = [0.5, 1, 2, 4, 8, 12, 16, 20]


@dataclass(frozen=True)
class Setting:
    """One entry's network for the model: TCP flows `n`, VoIP flows `m`,
    line rate `c` (bit/s), R_0 (s) and PFTK's parameters."""

    n: int
    m: int
    c: float
    r_0: float
    pftk: dict

    def queue_law(self, p: float, **pftk: float | None) -> models.QueueLawPoint:
        args = {**self.pftk, **pftk}
        return models.queue_law(p, self.n, self.c, self.r_0, m=self.m, U=VOIP_BPS, udp_packet_bits=VOIP_BITS, **args)

    def operating_point(self, policy: str, **pftk: float | None) -> models.OperatingPoint:
        args = {**self.pftk, **pftk}
        red = RED_POLICIES[policy]
        return models.operating_point(
            self.n, self.c, self.r_0, *red, m=self.m, U=VOIP_BPS, udp_packet_bits=VOIP_BITS, **args
        )


#: The settings of the entries --measured-t0 reads, by scenario file.
SETTINGS = {
    "fig-4.toml": Setting(80, 0, 9e6, R_0, PFTK),
    "fig-7.toml": Setting(80, 60, 10e6, FIG7_R_0, FIG7_PFTK),
}

#: Fig. 4's loss probabilities (%), and RED's three control policies.
FIG4_P_PCT = [0.5, 1, 2, 4, 6, 8, 12, 16, 20]
RED_POLICIES = {
    "drop_conservative": (50, 2000, 0.03),
    "moderate": (50, 500, 0.1),
    "delay_conservative": (10, 100, 0.2),
}


def queue_law_delay(p: float, n: float, c: float, m: float = 0, u: float = 0.0) -> float:
    return models.queue_law(p, n, c, R_0, m=m, U=u, udp_packet_bits=VOIP_BITS, **PFTK).delay


def operating_point(policy: str, n: float, c: float, m: float = 0) -> models.OperatingPoint:
    min_th, max_th, max_p = RED_POLICIES[policy]
    return models.operating_point(n, c, R_0, min_th, max_th, max_p, m=m, U=VOIP_BPS, udp_packet_bits=VOIP_BITS, **PFTK)


def predictions() -> None:
    print("Fig. 4: queue law G(p) as queueing delay, 80 flows at 9 Mb/s (ms)")
    for p in FIG4_P_PCT:
        print(f"  p = {p:>4}%: {1000 * queue_law_delay(p / 100, 80, 9e6):8.1f}")
    print("Fig. 4: RED operating points, 80 flows at 9 Mb/s")
    for name, red in RED_POLICIES.items():
        op = operating_point(name, 80, 9e6)
        print(f"  {name:20} {red}: p = {100 * op.p:.3f}%, delay {1000 * op.delay:.1f} ms, {op.queue_packets:.0f} pkts")
    print("Fig. 5: 80 TCP + 110 VoIP (0.80 Mb/s) at 10 Mb/s against 80 TCP at 9 Mb/s (ms)")
    for p in FIG4_P_PCT:
        mixed = queue_law_delay(p / 100, 80, 10e6, 110, VOIP_BPS)
        alone = queue_law_delay(p / 100, 80, 9e6)
        print(f"  p = {p:>4}%: mixed {1000 * mixed:8.1f}, TCP alone {1000 * alone:8.1f}, ratio {mixed / alone:.3f}")
    print("Table 1 mixes at 10 Mb/s under the drop-conservative RED (TCP; UDP beside it)")
    for n, m in [(80, 60), (80, 120), (160, 120), (160, 60)]:
        op = operating_point("drop_conservative", n, 10e6, m)
        print(f"  {n} TCP + {m} VoIP: p = {100 * op.p:.3f}%, delay {1000 * op.delay:.1f} ms")
    print(
        "Fig. 14: TCP (80 flows) under the drop-conservative RED, separated (WFQ: 10 Mb/s less the VoIP offered) and in one queue"
    )
    for m in [60, 137]:
        sep = operating_point("drop_conservative", 80, 10e6 - m * VOIP_BPS)
        one = operating_point("drop_conservative", 80, 10e6, m)
        print(
            f"  {m} VoIP ({m * VOIP_BPS / 1e6:.3f} Mb/s): separated p = {100 * sep.p:.3f}%, delay {1000 * sep.delay:.1f} ms;"
            f" one queue p = {100 * one.p:.3f}%, delay {1000 * one.delay:.1f} ms"
        )
    fig7 = SETTINGS["fig-7.toml"]
    print("Fig. 7: queue law G(p) as queueing delay, 80 TCP (Linux, b = 1) + 60 VoIP at 10 Mb/s, R_0 = 1 ms (ms)")
    for p in FIG7_P_PCT:
        print(
            f"  p = {p:>4}%: {1000 * fig7.queue_law(p / 100).delay:8.1f} (b = 2: {1000 * fig7.queue_law(p / 100, b=2.0).delay:.1f})"
        )
    print("Fig. 7: RED operating points, the same traffic")
    for name, red in RED_POLICIES.items():
        op = fig7.operating_point(name)
        print(f"  {name:20} {red}: p = {100 * op.p:.3f}%, delay {1000 * op.delay:.1f} ms, {op.queue_packets:.0f} pkts")
    print("E-model (G.107): R at zero delay and loss")
    for codec in models.CODECS:
        print(f"  {codec:12} R = {models.emodel_r(0, 0, codec):.2f}")
    print(f"  G.723.1 at 100 ms and 4%: R = {models.emodel_r(0.1, 0.04, 'g723.1'):.2f}")


def measured_t0(entry_results: str) -> None:
    """The model with PFTK's T_0 = 5R and Q̂ (as the entries), with the T_0
    the simulated flows used (the entries' `t0` metric), and with that T_0
    and the share of losses they detected by a timeout (`q`), beside our
    values: the sensitivity of the gaps of fig-4 (G(p) against the delay)
    and fig-4-red (the operating points) to the model's 'typically 5R' and
    to Q̂ (issue 25, item 7). `entry_results` holds either entry's results."""
    import pandas as pd

    runs = pd.read_csv(f"{entry_results}/per_run.csv")
    scenario = json.loads(open(f"{entry_results}/comparison.json").read())["scenario"]
    setting = SETTINGS[scenario.rsplit("/", 1)[-1]]
    figure = "Fig. " + scenario.rsplit("fig-", 1)[-1].removesuffix(".toml")
    red = "policy" in runs.columns
    runs = runs.groupby("policy" if red else "p_pct", sort=False)[["delay", "loss", "t0", "q"]].mean()
    pftks = {"5R, Q̂": lambda row: {}}
    pftks["T_0"] = lambda row: {"T_0_rtts": None, "T_0": row.t0 / 1000}
    pftks["T_0, Q"] = lambda row: {**pftks["T_0"](row), "Q": row.q}
    if red:
        print(f"{figure}, RED: the operating point (delay ms, loss %) against the model's with T_0 = 5R and Q̂")
        print("(as the entry), with the measured T_0, and with the measured T_0 and Q")
    else:
        print(f"{figure}: queueing delay at R1 -> R2 (ms) against G(p) with T_0 = 5R and Q̂ (as the entry),")
        print("with the measured T_0, and with the measured T_0 and Q; the gap is ours / model - 1")
    header = ["policy" if red else "p (%)", "ours", "T_0 (ms)", "Q"]
    for name in pftks:
        header += [f"{name}", "gap"] if not red else [f"{name}", "loss", "gap"]
    print("  " + " ".join(f"{h:>18}" if i == 0 else f"{h:>9}" for i, h in enumerate(header)))
    for key, row in runs.iterrows():
        cells = [f"{key}", f"{row.delay:.1f}", f"{row.t0:.0f}", f"{row.q:.2f}"]
        if red:
            cells[1] += f" {row.loss:.2f}%"
        for pftk in pftks.values():
            if red:
                op = setting.operating_point(key, **pftk(row))
                cells += [f"{1000 * op.delay:.1f}", f"{100 * op.p:.2f}%", f"{row.delay / (1000 * op.delay) - 1:+.1%}"]
            else:
                g = 1000 * setting.queue_law(key / 100, **pftk(row)).delay
                cells += [f"{g:.1f}", f"{row.delay / g - 1:+.1%}"]
        print("  " + " ".join(f"{c:>18}" if i == 0 else f"{c:>9}" for i, c in enumerate(cells)))


#: Figs. 8-10: the file sizes (KB), the loss probabilities (%), the TCP
#: segment (bytes) and receiver window (packets) of fig-8-10.toml, and its
#: bulk flows on the 10 Mb/s link.
TRANSFER_KB = [5, 10, 100]
TRANSFER_P_PCT = [0.5, 1, 4, 8, 16]
TRANSFER_MSS = 960
TRANSFER_FLOWS, TRANSFER_LINK = 80, 10e6


def slow_start_rounds(packets: int, window: int = 20) -> int:
    """Round trips a file of `packets` takes in slow start from a window of
    one, one ACK per packet, the window capped at `window`, without loss."""
    rounds, sent, cwnd = 0, 0, 1
    while sent < packets:
        sent, cwnd, rounds = sent + cwnd, min(2 * cwnd, window), rounds + 1
    return rounds


def transfers() -> None:
    """Figs. 8-10 by the paper's own models (issue 25, item 8): a file that
    starts in slow start ("TCP timeouts are more likely to happen during
    small file transfers because the TCP congestion window is smaller at the
    beginning of a transmission", Section III.A) takes k round trips of
    R(p) = R_0 + G(p)/c, the queue law's round trip; each of its expected
    S·p/(1 − p) lost packets costs at most PFTK's timeout sequence,
    T_0·f(p)/(1 − p) with T_0 = 5R. The first is an estimate from below,
    the sum one from above (a loss may also cost the rounds of a new slow
    start). The claim 'almost independent of the loss' is checked as
    within 25% of the mean at p = 1%."""
    print("Figs. 8-10 by the models: k·R(p) (no loss) and k·R(p) + S·p/(1-p)·T_0·f(p)/(1-p), seconds,")
    print(
        f"for {TRANSFER_FLOWS} bulk flows on {TRANSFER_LINK / 1e6:g} Mb/s; 'below 75%': the second under 0.75 × the first at 1%"
    )
    for size_kb in TRANSFER_KB:
        packets = -(-size_kb * 1000 // TRANSFER_MSS)
        rounds = slow_start_rounds(packets, int(PFTK["W_max"]))
        low_at_1 = None
        print(f"  {size_kb} KB ({packets} packets, {rounds} rounds in slow start):")
        for p_pct in TRANSFER_P_PCT:
            p = p_pct / 100
            rtt = models.queue_law(p, TRANSFER_FLOWS, TRANSFER_LINK, R_0, **PFTK).rtt
            backoff = 1 + sum(2 ** (i - 1) * p**i for i in range(1, 7))  # PFTK's f(p), eq. (11)
            low = rounds * rtt
            high = low + packets * p / (1 - p) * PFTK["T_0_rtts"] * rtt * backoff / (1 - p)
            if p_pct == 1:
                low_at_1 = low
            below = low_at_1 is not None and p_pct > 1 and high < 0.75 * low_at_1
            print(
                f"    p = {p_pct:>4}%: R {rtt:.3f} s, from {low:.2f} to {high:.2f} s"
                + ("  (below 75% of 1%)" if below else "")
            )


def fig11(out: str) -> None:
    """R against one-way delay, one line per loss, G.711 and G.723.1 (Fig. 11)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    delays = [d / 1000 for d in range(0, 401, 5)]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, codec, title in zip(axes, ["g711", "g723.1"], ["G.711 (with PLC)", "G.723.1 (6.3 kb/s)"], strict=True):
        for loss in [0, 0.01, 0.02, 0.04, 0.08]:
            ax.plot([1000 * d for d in delays], [models.emodel_r(d, loss, codec) for d in delays], label=f"{loss:.0%}")
        ax.axhline(60, color="grey", linestyle=":", linewidth=1)
        ax.set_title(title)
        ax.set_xlabel("one-way delay (ms)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("R (ITU-T G.107)")
    axes[1].legend(title="packet loss")
    fig.tight_layout()
    fig.savefig(out)
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fig11", metavar="FILE", help="draw Fig. 11 into FILE (PNG or SVG)")
    parser.add_argument("--transfers", action="store_true", help="Figs. 8-10's transfer times by the paper's models")
    parser.add_argument(
        "--measured-t0",
        metavar="DIR",
        help="the model with the T_0 and Q of the runs of firoiu-2001/fig-4, fig-4-red, fig-7 or fig-7-red in DIR",
    )
    args = parser.parse_args()
    if args.fig11:
        fig11(args.fig11)
    elif args.transfers:
        transfers()
    elif args.measured_t0:
        measured_t0(args.measured_t0)
    else:
        predictions()


if __name__ == "__main__":
    main()
