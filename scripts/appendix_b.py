"""Reproduces the Vukadinović thesis' Appendix B: fits T ∝ 1/(R^a p^b) to
10 NewReno flows under random loss and compares a, b and Table 3.

    python scripts/appendix_b.py [--seeds N] [--duration 200s] [--quick]

Runs scenarios/vukadinovic-2004/appendix-b.toml on the grid R = 10, 20, 50,
100, 150, 200 ms × p = 0.1, 0.5, 1, 2, 4, 5 %, N seeds each (default 3),
fits by Levenberg–Marquardt (phblab.fit) and prints our a and b with 95%
confidence intervals beside the thesis' (a = 0.9007 [0.8874, 0.9140],
b = 0.7260 [0.7145, 0.7375]), then our throughput on the Table 3 grid
beside the thesis' ns-2 values. --quick runs a 4 × 4 grid, 1 seed, 60 s.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np

import phblab
from phblab.fit import fit_power_law

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "vukadinovic-2004" / "appendix-b.toml"

THESIS_A = (0.9007, (0.8874, 0.9140))
THESIS_B = (0.7260, (0.7145, 0.7375))
#: Table 3: (R ms, p %) -> ns-2 throughput, Mb/s (the 10 flows together)
THESIS_TABLE_3 = {
    (20, 0.5): 32.369,
    (20, 1): 20.974,
    (20, 2): 12.109,
    (20, 4): 6.062,
    (50, 0.5): 13.216,
    (50, 1): 8.863,
    (50, 2): 5.703,
    (50, 4): 3.029,
    (100, 0.5): 6.702,
    (100, 1): 4.511,
    (100, 2): 2.911,
    (100, 4): 1.771,
    (150, 0.5): 4.472,
    (150, 1): 3.000,
    (150, 2): 1.968,
    (150, 4): 1.414,
}


def throughput_mbps(rtt_ms: float, loss_pct: float, seed: int, duration: str) -> float:
    """T: the 10 flows' throughput through the loss module (IP bits received,
    retransmissions included), Mb/s, as the catalog entry measures it."""
    delay_ms = rtt_ms / 2 - 1
    result = phblab.run(
        SCENARIO,
        seed=seed,
        overrides={
            "links[1].delay": f"{delay_ms}ms",
            "links[0].loss_forward": loss_pct / 100,
            "run.duration": duration,
        },
    )
    return float(result.flows["throughput_bps"].sum()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--duration", default="200s")
    parser.add_argument("--quick", action="store_true", help="a 4 x 4 grid, one seed, 60 s")
    args = parser.parse_args()
    rtts = [10, 20, 50, 100, 150, 200]
    losses = [0.1, 0.5, 1, 2, 4, 5]
    seeds, duration = args.seeds, args.duration
    if args.quick:
        rtts, losses, seeds, duration = [20, 50, 100, 150], [0.5, 1, 2, 4], 1, "60s"

    points = {}
    for rtt, loss in itertools.product(rtts, losses):
        runs = [throughput_mbps(rtt, loss, seed, duration) for seed in range(1, seeds + 1)]
        points[(rtt, loss)] = float(np.mean(runs))
        print(f"R = {rtt:>3} ms  p = {loss:>4} %  T = {points[(rtt, loss)]:8.3f} Mb/s  ({seeds} seeds)", flush=True)

    keys = list(points)
    fit = fit_power_law([k[0] / 1000 for k in keys], [k[1] / 100 for k in keys], [points[k] for k in keys])
    print()
    print(f"{'':4} {'ours':>8} {'95% CI':>20}   {'thesis':>8} {'95% CI':>20}")
    for name, ours, ci, (theirs, their_ci) in [("a", fit.a, fit.a_ci, THESIS_A), ("b", fit.b, fit.b_ci, THESIS_B)]:
        print(f"{name:4} {ours:8.4f} [{ci[0]:.4f}, {ci[1]:.4f}]   {theirs:8.4f} [{their_ci[0]:.4f}, {their_ci[1]:.4f}]")
    print()
    print("Table 3 grid: T (Mb/s, 10 flows)")
    print(f"{'R ms':>5} {'p %':>5} {'thesis':>8} {'ours':>8} {'gap %':>7}")
    for (rtt, loss), theirs in THESIS_TABLE_3.items():
        ours = points.get((rtt, loss))
        if ours is None:
            ours = float(np.mean([throughput_mbps(rtt, loss, s, duration) for s in range(1, seeds + 1)]))
        print(f"{rtt:>5} {loss:>5} {theirs:8.3f} {ours:8.3f} {100 * (ours - theirs) / theirs:7.1f}")


if __name__ == "__main__":
    main()
