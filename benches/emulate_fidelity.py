"""The emulator's fidelity (`make bench-emu`, needs root): how far phb-emu's
packet timing is from the ideal one, and how many packets it forwards.

Each measurement emulates a one-router path a -> r -> b (two links) with one
UDP CBR flow:

- scheduling error: a FIFO link at 10 and at 100 Mb/s loaded to 95% with
  1500-byte packets; the lateness of every delivery (a packet handed to the
  next link or written to the destination's TUN device) against its ideal
  time (end of serialisation plus propagation), median and p99;
- added latency per hop: 1 Mb/s of 200-byte packets over 100 Mb/s links;
  the mean one-way delay the router measures (read from the source's device
  to written to the destination's) less the ideal (serialisation and
  propagation on both links), per link;
- packets per second: 64-byte packets offered at up to 1 Gb/s over 10 Gb/s
  links; packets delivered per second of the measured period (the sending
  agent, one thread pacing every packet, may be the limit: its offered rate
  is printed beside it), and packets per second of the router's own CPU time
  (each packet read, passed through two links and written), the rate one
  core could carry.

Run: python benches/emulate_fidelity.py [--duration 5s]
"""

from __future__ import annotations

import argparse
import sys

from phblab import emulate

SCENARIO = """
name = "{name}"

[run]
duration = "{duration}"
warmup = "1s"

[classes]
be = 0

[nodes]
hosts = ["a", "b"]
routers = ["r"]

[qdiscs.fifo]
kind = "fifo"
limit = "1000pkt"

[[links]]
between = ["a", "r"]
rate = "{rate}"
delay = "1ms"
qdisc = "fifo"

[[links]]
between = ["r", "b"]
rate = "{rate}"
delay = "1ms"
qdisc = "fifo"

[[traffic]]
name = "load"
kind = "cbr"
from = "a"
to = "b"
class = "be"
packet_size = "{size}B"
rate = "{load}"
"""


def _run(name: str, rate: str, load: str, size: int, duration: str):
    text = SCENARIO.format(name=name, rate=rate, load=load, size=size, duration=duration)
    return emulate.emulate(text, f"<{name}>")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", default="5s", help="emulated time of each measurement (default 5s)")
    args = parser.parse_args()
    rows = []
    for rate_mbps in (10, 100):
        load = f"{rate_mbps * 0.95:g}Mbps"
        r = _run(f"sched-{rate_mbps}", f"{rate_mbps}Mbps", load, 1500, args.duration)
        e = r.summary["emulation"]
        rows.append(
            (
                f"scheduling error at {rate_mbps} Mb/s (95% load)",
                f"median {e['lateness_p50_s'] * 1e6:.1f} us, p99 {e['lateness_p99_s'] * 1e6:.1f} us",
            )
        )
    r = _run("latency", "100Mbps", "1Mbps", 200, args.duration)
    flow = r.flows.iloc[0]
    ideal = 2 * (200 * 8 / 100e6 + 1e-3)
    rows.append(("added latency per hop (low load)", f"{(flow.delay_mean_s - ideal) / 2 * 1e6:.1f} us"))
    r = _run("pps", "10Gbps", "1Gbps", 64, args.duration)
    flow = r.flows.iloc[0]
    measured_s = r.summary["duration_s"] - r.summary["warmup_s"]
    e = r.summary["emulation"]
    per_core = e["forwarded"] / 2 / e["router_cpu_s"] if e["router_cpu_s"] > 0 else float("nan")
    rows.append(
        (
            "packets/s through one FIFO link (64 B)",
            f"{flow.received_pkts / measured_s:,.0f} delivered, {flow.sent_pkts / measured_s:,.0f} offered; "
            f"{per_core:,.0f} per second of router CPU",
        )
    )
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
