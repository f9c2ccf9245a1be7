"""Why BPR's per-packet delay ratio falls with the UDP load in the thesis'
Section 7.2 network while its per-interval ratio does not: measures, for
BPR (δ = 8) at each UDP load, with Pareto ON/OFF or Poisson UDP sources,

- the estimators: the per-packet ratio and the mean of the interval ratios
  on 10, 100, 1,000 and 10,000 packet times (run.delay_ratios);
- how often each queue is empty, and the mean backlogs (time series of
  r1 -> r2 sampled every --interval);
- TCP's service rate: measured, eq. (10) applied to the mean backlogs, and
  eq. (10) applied to the backlogs at each sample and averaged over time
  (the two differ by Jensen's inequality: the rate is a concave function
  of the backlogs);
- the delay ratio Little's law predicts from eq. (10)'s instantaneous
  rates: (q̄_TCP / E[r_TCP]) / (q̄_UDP / E[r_UDP]);
- the burst correlation: the UDP backlog that TCP's and UDP's departures
  see on average against its time average, and the TCP/UDP ratio within
  each quartile of the UDP backlog (intervals grouped by the backlog at
  their end), against the pooled per-packet ratio.

    python scripts/bpr_delay_ratio.py [--seeds 2] [--loads 1,2,4,6,8,10,12]
        [--sources pareto,poisson] [--scheme bpr] [--interval 4ms] [--duration 200s]

Backlogs are in packets (every packet is 500 bytes); rates in Mb/s.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

import phblab

THESIS = Path(__file__).resolve().parents[1] / "scenarios" / "vukadinovic-2004"
SCENARIOS = {
    # UDP load (Mb/s, mean of all 10 sources) -> the sources' rate key
    "pareto": (THESIS / "section-7.toml", lambda load: f"{load / 5:g}Mbps"),  # rate while ON, half the time
    "poisson": (THESIS / "section-7-udp-load-poisson.toml", lambda load: f"{load / 10:g}Mbps"),
}
C_MBPS = 10.0
PACKET_BITS = 500 * 8
TIMESCALES = {0.004: "10", 0.04: "100", 0.4: "1000", 4.0: "10000"}


def measure(source: str, load: float, seed: int, scheme: str, interval: str, duration: str, delta: float) -> dict:
    path, rate = SCENARIOS[source]
    res = phblab.run(
        path,
        seed=seed,
        overrides={
            "links[1].qdisc_forward": scheme,
            "traffic[1].rate": rate(load),
            "run.duration": duration,
            "run.sample_interval": interval,
            "run.sample_scopes": ["r1->r2"],
        },
    )
    warmup = res.summary["warmup_s"]
    c = res.classes[res.classes.scope == "r1->r2"].set_index("class")
    out = {
        "source": source,
        "load": load,
        "seed": seed,
        "tcp_mbps": c.throughput_bps["tcp"] / 1e6,
        "udp_mbps": c.throughput_bps["udp"] / 1e6,
        "per_packet": c.delay_mean_s["tcp"] / c.delay_mean_s["udp"],
    }
    for _, r in res.delay_ratios.iterrows():
        out[f"interval_{TIMESCALES[round(r.timescale_s, 6)]}"] = r.interval_mean
    ts = res.timeseries
    ts = ts[(ts.scope == "r1->r2") & (ts.time_s > warmup + 1e-9) & (ts["class"] != "")]
    wide = ts.pivot_table(index="time_s", columns=["metric", "class"], values="value")
    q_tcp, q_udp = wide[("backlog_pkts", "tcp")].to_numpy(), wide[("backlog_pkts", "udp")].to_numpy()
    dt = float(np.median(np.diff(wide.index.to_numpy())))
    n_tcp = wide[("throughput_bps", "tcp")].fillna(0).to_numpy() * dt / PACKET_BITS
    n_udp = wide[("throughput_bps", "udp")].fillna(0).to_numpy() * dt / PACKET_BITS
    d_tcp = wide[("delay_mean_s", "tcp")].to_numpy()
    d_udp = wide[("delay_mean_s", "udp")].to_numpy()
    weight = q_tcp + delta * q_udp
    with np.errstate(invalid="ignore", divide="ignore"):
        r_tcp = np.where(weight > 0, C_MBPS * q_tcp / weight, 0.0)
        r_udp = np.where(weight > 0, C_MBPS * delta * q_udp / weight, 0.0)
    mean_tcp, mean_udp = q_tcp.mean(), q_udp.mean()
    out.update(
        udp_empty=float((q_udp == 0).mean()),
        tcp_empty=float((q_tcp == 0).mean()),
        q_tcp=mean_tcp,
        q_udp=mean_udp,
        eq10_mean_backlogs=C_MBPS * mean_tcp / (mean_tcp + delta * mean_udp),
        eq10_instantaneous=float(r_tcp.mean()),
        little_eq10=(mean_tcp / r_tcp.mean()) / (mean_udp / r_udp.mean()),
        udp_backlog_seen_by_tcp=float((q_udp * n_tcp).sum() / n_tcp.sum()),
        udp_backlog_seen_by_udp=float((q_udp * n_udp).sum() / n_udp.sum()),
    )
    # The ratio within each quartile of the UDP backlog, pooled over its intervals.
    edges = np.quantile(q_udp, [0.25, 0.5, 0.75])
    quartile = np.searchsorted(edges, q_udp, side="right")
    ok_t, ok_u = np.isfinite(d_tcp) & (n_tcp > 0), np.isfinite(d_udp) & (n_udp > 0)
    for k in range(4):
        sel_t, sel_u = ok_t & (quartile == k), ok_u & (quartile == k)
        mean_t = (d_tcp[sel_t] * n_tcp[sel_t]).sum() / n_tcp[sel_t].sum() if sel_t.any() else np.nan
        mean_u = (d_udp[sel_u] * n_udp[sel_u]).sum() / n_udp[sel_u].sum() if sel_u.any() else np.nan
        out[f"q{k + 1}_ratio"] = mean_t / mean_u if mean_u else np.nan
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--loads", default="1,2,4,6,8,10,12")
    ap.add_argument("--sources", default="pareto,poisson")
    ap.add_argument("--scheme", default="bpr")
    ap.add_argument("--delta", type=float, default=8.0, help="the scheme's δ in the scenario (not changed)")
    ap.add_argument("--interval", default="4ms")
    ap.add_argument("--duration", default="200s")
    ap.add_argument("--csv", help="also write every run's figures here")
    args = ap.parse_args()
    rows = [
        measure(source, float(load), seed, args.scheme, args.interval, args.duration, args.delta)
        for source in args.sources.split(",")
        for load in args.loads.split(",")
        for seed in range(1, args.seeds + 1)
    ]
    df = pd.DataFrame(rows)
    if args.csv:
        df.to_csv(args.csv, index=False)
    means = df.drop(columns="seed").groupby(["source", "load"], sort=False).mean()
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 40)
    print(f"{args.scheme}, δ = {args.delta:g}; means over seeds 1..{args.seeds}; time series every {args.interval}")
    groups = {
        "estimators": ["per_packet", "interval_10", "interval_100", "interval_1000", "interval_10000"],
        "queues and eq. (10)": [
            "udp_empty",
            "tcp_empty",
            "q_tcp",
            "q_udp",
            "tcp_mbps",
            "eq10_mean_backlogs",
            "eq10_instantaneous",
            "little_eq10",
        ],
        "burst correlation": [
            "udp_backlog_seen_by_tcp",
            "udp_backlog_seen_by_udp",
            "q_udp",
            "q1_ratio",
            "q2_ratio",
            "q3_ratio",
            "q4_ratio",
            "per_packet",
        ],
    }
    for title, cols in groups.items():
        print(f"\n{title}:")
        print(means[cols].round(3).to_string())


if __name__ == "__main__":
    main()
