"""The emulator's fidelity (`make bench-emu`, needs root): how far phb-emu's
packet timing is from the ideal one, and how many packets it forwards.

Each measurement emulates a one-router path a -> r -> b (two links) with
UDP CBR traffic:

- scheduling error: a FIFO link at 10 and at 100 Mb/s loaded to 95% with
  1500-byte packets; the lateness of every delivery (a packet handed to the
  next link or written to the destination's TUN device) against its ideal
  time (end of serialisation plus propagation), median and p99;
- added latency per hop: 1 Mb/s of 200-byte packets over 100 Mb/s links;
  the median and mean one-way delay the router measures (read from the
  source's device to written to the destination's) less the ideal
  (serialisation and propagation on both links), per link;
- both of these with the router sleeping until each timer (`--spin-us 0`,
  the default) and polling in the last 50 µs before it (`--spin-us 50`);
- packets per second: 64- and 1500-byte packets offered at up to 1 Gb/s
  over 10 Gb/s links, through a FIFO and through DRR (two queues, two
  flows); packets delivered per second of the measured period (the sending
  agent, one thread pacing every packet, may be the limit: its offered rate
  is printed beside it), and packets per second of the router's own CPU
  time (each packet read, passed through two links and written), the rate
  one core could carry.

Run: python benches/emulate_fidelity.py [--duration 5s]
"""

from __future__ import annotations

import argparse
import sys

from phblab import emulate

FIFO = """
[qdiscs.q]
kind = "fifo"
limit = "1000pkt"
"""

DRR = """
[qdiscs.q]
kind = "classful"
scheduler = "drr"
default_queue = "be"
buffers = [{ name = "shared", policy = "droptail", limit = "1000pkt" }]
queues = [{ name = "be", buffer = "shared", quantum = "1500B" }, { name = "af", classes = ["af"], buffer = "shared", quantum = "1500B" }]
"""

SCENARIO = """
name = "{name}"

[run]
duration = "{duration}"
warmup = "1s"

[classes]
be = 0
af = 10

[nodes]
hosts = ["a", "b"]
routers = ["r"]
{qdisc}
[[links]]
between = ["a", "r"]
rate = "{rate}"
delay = "1ms"
qdisc = "q"

[[links]]
between = ["r", "b"]
rate = "{rate}"
delay = "1ms"
qdisc = "q"
"""

FLOW = """
[[traffic]]
name = "{name}"
kind = "cbr"
from = "a"
to = "b"
class = "{cls}"
packet_size = "{size}B"
rate = "{load}"
"""


def _run(name: str, rate: str, load_bps: float, size: int, duration: str, *, drr: bool = False, spin_us: int = 0):
    text = SCENARIO.format(name=name, rate=rate, duration=duration, qdisc=DRR if drr else FIFO)
    classes = ("be", "af") if drr else ("be",)
    for cls in classes:
        share = f"{load_bps / len(classes) / 1e6:g}Mbps"
        text += FLOW.format(name=f"load-{cls}", cls=cls, size=size, load=share)
    return emulate.emulate(text, f"<{name}>", spin_us=spin_us)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", default="5s", help="emulated time of each measurement (default 5s)")
    args = parser.parse_args()
    rows = []
    for spin_us in (0, 50):
        mode = f"spin {spin_us} us"
        for rate_mbps in (10, 100):
            r = _run(f"sched-{rate_mbps}", f"{rate_mbps}Mbps", rate_mbps * 0.95e6, 1500, args.duration, spin_us=spin_us)
            e = r.summary["emulation"]
            rows.append(
                (
                    f"scheduling error at {rate_mbps} Mb/s (95% load), {mode}",
                    f"median {e['lateness_p50_s'] * 1e6:.1f} us, p99 {e['lateness_p99_s'] * 1e6:.1f} us",
                )
            )
        r = _run("latency", "100Mbps", 1e6, 200, args.duration, spin_us=spin_us)
        end_to_end = r.classes[r.classes.scope == "end-to-end"].iloc[0]
        ideal = 2 * (200 * 8 / 100e6 + 1e-3)
        rows.append(
            (
                f"added latency per hop (low load), {mode}",
                f"median {(end_to_end.delay_p50_s - ideal) / 2 * 1e6:.1f} us, "
                f"mean {(end_to_end.delay_mean_s - ideal) / 2 * 1e6:.1f} us",
            )
        )
    for drr in (False, True):
        for size in (64, 1500):
            r = _run("pps", "10Gbps", 1e9, size, args.duration, drr=drr)
            measured_s = r.summary["duration_s"] - r.summary["warmup_s"]
            e = r.summary["emulation"]
            per_core = e["forwarded"] / 2 / e["router_cpu_s"] if e["router_cpu_s"] > 0 else float("nan")
            rows.append(
                (
                    f"packets/s through one {'DRR' if drr else 'FIFO'} link ({size} B)",
                    f"{r.flows.received_pkts.sum() / measured_s:,.0f} delivered, "
                    f"{r.flows.sent_pkts.sum() / measured_s:,.0f} offered; "
                    f"{per_core:,.0f} per second of router CPU",
                )
            )
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
