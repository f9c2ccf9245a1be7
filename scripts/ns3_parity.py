"""Side by side: phblab's `ns3` TCP profile against ns-3 itself (issue 25,
item 12). Runs a scenario's network in ns-3.44 (scripts/ns3_dumbbell.cc,
compiled against the `ns3` wheel) and in phblab with `profile = "ns3"` and
no `window` (ns-3's 128 KiB buffers), and prints, per seed and on average,
the bottleneck's drops, mean queueing delay and throughput, and the TCP
flows' fast retransmits, timeouts and retransmissions.

    python scripts/ns3_parity.py --ns3 DIR [--scenario wide-100] [--seeds 1..3]
        [--duration 30s] [--set KEY=VALUE ...] [--ns3-arg --name=value ...]

Scenarios: `wide-100` (benches/scenarios/wide-100.toml: 100 flows, each with
its own access links, RED bottleneck), `thesis-7`
(benches/scenarios/thesis-7.toml: 10 TCP flows and 10 Pareto ON/OFF UDP
sources from one host to one host through a RED bottleneck, ns-3's RED with
the same min_th, max_th, max_p, w_q, mean packet size, gentle and wait) and
`thesis-7-droptail` (the same with a 250-packet FIFO bottleneck).

ns-3 is an optional dependency that `make setup` does not install: put it
in a virtual environment of its own (`python3 -m venv /tmp/ns3venv &&
/tmp/ns3venv/bin/pip install ns3==3.44.post0`) and give `--ns3` the wheel's
directory (`/tmp/ns3venv/lib/python3.11/site-packages/ns3`, which holds
`include/` and `lib64/`). The program is built with g++ into `--build`, where the results of its runs are kept: a run repeated
with the same arguments is read back.

How each measure is counted:
- drops: packets the bottleneck's qdisc dropped (phblab: `classes.dropped`
  at r1->r2; ns-3: the queue disc's `nTotalDroppedPackets`), and those of
  TCP (phblab: of the TCP flows' classes; ns-3: of IP protocol 6) and UDP
  (phblab: of the UDP flows' classes; ns-3: the rest);
- UDP packets offered: UDP packets the bottleneck sent or dropped (ns-3:
  its departures of IP protocol 17 and the UDP drops);
- queueing delay: the mean wait in the bottleneck's qdisc of the packets it
  sent (phblab: `delay_mean_s` at r1->r2; ns-3: the queue disc's
  `SojournTime`, which ends when the packet enters the one-packet device
  queue, up to one transmission time earlier);
- throughput: IP bits the bottleneck's qdisc sent per second;
- fast retransmits: entries into fast recovery (ns-3: `CongState` changes
  to `CA_RECOVERY`);
- timeouts: expiries of the retransmission timer with data outstanding
  (ns-3: changes of `RTO` to min(2·RTO, 60 s), which only `ReTxTimeout`
  makes);
- retransmissions: segments sent again (ns-3: the `Retransmission` trace).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import tomllib
from pathlib import Path

import phblab

ROOT = Path(__file__).resolve().parents[1]
SOURCE = Path(__file__).with_name("ns3_dumbbell.cc")
MODULES = ["core", "network", "internet", "point-to-point", "applications", "traffic-control", "stats", "bridge"]
MEASURES = [
    ("bottleneck_drops", "drops", "{:.0f}"),
    ("bottleneck_tcp_drops", "TCP drops", "{:.0f}"),
    ("bottleneck_udp_drops", "UDP drops", "{:.0f}"),
    ("udp_offered", "UDP packets offered", "{:.0f}"),
    ("queueing_delay_s", "queueing delay (ms)", "{:.3f}"),
    ("bottleneck_throughput_bps", "throughput (Mb/s)", "{:.2f}"),
    ("fast_retransmits", "fast retransmits", "{:.0f}"),
    ("timeouts", "timeouts", "{:.0f}"),
    ("retransmissions", "retransmissions", "{:.0f}"),
]
SCALE = {"queueing_delay_s": 1e3, "bottleneck_throughput_bps": 1e-6}


def red_args(red: dict) -> list[str]:
    """ns-3's RedQueueDisc for a phblab `red` qdisc given in packets, with
    phblab's defaults where the scenario leaves `max_p` (0.1) or `w_q`
    (0.002) out; gentle and wait are on in both."""
    return [
        "--qdisc=red",
        f"--limit={int(red['limit'].removesuffix('pkt'))}",
        f"--minTh={red['min_th']}",
        f"--maxTh={red['max_th']}",
        f"--maxP={red.get('max_p', 0.1)}",
        f"--wq={red.get('w_q', 0.002)}",
        f"--meanPktSize={int(red['mean_pktsize'].removesuffix('B'))}",
    ]


def wide_100(duration: str) -> tuple[dict, list[str], str]:
    """wide-100's network: the scenario for phblab, the arguments for ns-3."""
    scenario = tomllib.loads((ROOT / "benches/scenarios/wide-100.toml").read_text())
    scenario["run"]["duration"] = duration
    generator = scenario["generators"][0]
    traffic = generator["traffic"]
    del traffic["window"]
    traffic["profile"] = "ns3"
    args = [
        f"--flows={generator['count']}",
        *red_args(scenario["qdiscs"]["red"]),
        f"--bottleneckRate={generator['bottleneck']['rate']}",
        f"--bottleneckDelay={generator['bottleneck']['delay']}",
        f"--accessRate={generator['sender_links']['rate']}",
        f"--accessDelay={generator['sender_links']['delay']}",
        f"--mss={int(traffic['mss'].removesuffix('B'))}",
        f"--jitter={float(traffic['start_jitter'].removesuffix('s'))}",
    ]
    return scenario, args, "r1->r2"


def thesis_7(duration: str, droptail: bool) -> tuple[dict, list[str], str]:
    """thesis-7's network: its RED bottleneck, or (`droptail`) a 250-packet
    FIFO in its place (tests/tcp_large_window.rs's network)."""
    scenario = tomllib.loads((ROOT / "benches/scenarios/thesis-7.toml").read_text())
    scenario["run"]["duration"] = duration
    if droptail:
        scenario["qdiscs"] = {"fifo": {"kind": "fifo", "limit": "250pkt"}}
        scenario["links"][1]["qdisc"] = "fifo"
        bottleneck = ["--qdisc=fifo", "--limit=250"]
    else:
        bottleneck = red_args(scenario["qdiscs"]["red"])
    tcp, udp = scenario["traffic"]
    del tcp["window"]
    tcp["profile"] = "ns3"
    ip_size = int(udp["packet_size"].removesuffix("B"))
    payload = ip_size - 28
    args = [
        f"--flows={tcp['count']}",
        "--shared=true",
        *bottleneck,
        "--bottleneckRate=10Mbps",
        "--bottleneckDelay=10ms",
        "--accessRate=100Mbps",
        "--accessDelay=1ms",
        f"--mss={int(tcp['mss'].removesuffix('B'))}",
        "--jitter=1",
        f"--udpSources={udp['count']}",
        # ns-3's OnOffApplication counts the payload, phblab the IP packet
        f"--udpRate={float(udp['rate'].removesuffix('Mbps')) * payload / ip_size}Mbps",
        f"--udpPacket={payload}",
        f"--onMean={float(udp['on_mean'].removesuffix('ms')) / 1e3}",
        f"--offMean={float(udp['off_mean'].removesuffix('ms')) / 1e3}",
        f"--shape={udp['shape']}",
    ]
    return scenario, args, "r1->r2"


SCENARIOS = {
    "wide-100": wide_100,
    "thesis-7": lambda duration: thesis_7(duration, droptail=False),
    "thesis-7-droptail": lambda duration: thesis_7(duration, droptail=True),
}


def build(ns3: Path, build_dir: Path) -> Path:
    """Compiles scripts/ns3_dumbbell.cc unless the binary is newer."""
    binary = build_dir / "ns3_dumbbell"
    if binary.exists() and binary.stat().st_mtime > SOURCE.stat().st_mtime:
        return binary
    build_dir.mkdir(parents=True, exist_ok=True)
    libs = [f"-lns3.44-{m}" for m in MODULES if (ns3 / "lib64" / f"libns3.44-{m}.so").exists()]
    command = ["g++", "-O2", "-std=c++20", f"-I{ns3 / 'include'}", str(SOURCE), "-o", str(binary)]
    command += [f"-L{ns3 / 'lib64'}", *libs, f"-Wl,-rpath,{ns3 / 'lib64'}"]
    subprocess.run(command, check=True)
    return binary


def run_ns3(binary: Path, args: list[str], seed: int, duration: float) -> dict:
    """Runs ns-3, or reads the result of the same run from the build directory."""
    command = [str(binary), *args, f"--seed={seed}", f"--duration={duration}"]
    key = hashlib.sha256("\0".join([str(binary.stat().st_mtime), *command]).encode()).hexdigest()[:16]
    cached = binary.parent / f"run-{key}.json"
    if cached.exists():
        return with_udp(json.loads(cached.read_text()))
    out = subprocess.run(command, check=True, capture_output=True, text=True)
    cached.write_text(out.stdout.strip().splitlines()[-1])
    return with_udp(json.loads(cached.read_text()))


def with_udp(result: dict) -> dict:
    """ns-3's UDP drops (all drops but TCP's) and UDP packets offered to
    the bottleneck (its UDP departures and drops)."""
    udp_drops = result["bottleneck_drops"] - result["bottleneck_tcp_drops"]
    return result | {"bottleneck_udp_drops": udp_drops, "udp_offered": udp_drops + result["udp_departures"]}


def run_phblab(scenario: dict, seed: int, scope: str, overrides: list[str]) -> dict:
    results = phblab.run(scenario, seed=seed, overrides=overrides)
    link = results.classes[results.classes["scope"] == scope]
    flows = results.flows[results.flows["transport"] == "tcp"]
    departures = link["departures"].sum()
    udp = link[link["class"].isin(results.flows[results.flows["transport"] == "udp"]["class"])]
    return {
        "bottleneck_drops": float(link["dropped"].sum()),
        "bottleneck_tcp_drops": float(link[link["class"].isin(flows["class"])]["dropped"].sum()),
        "bottleneck_udp_drops": float(udp["dropped"].sum()),
        "udp_offered": float(udp["dropped"].sum() + udp["departures"].sum()),
        "queueing_delay_s": float((link["delay_mean_s"] * link["departures"]).sum() / departures),
        "bottleneck_throughput_bps": float(link["throughput_bps"].sum()),
        "fast_retransmits": float(flows["fast_retransmits"].sum()),
        "timeouts": float(flows["timeouts"].sum()),
        "retransmissions": float(flows["retransmissions"].sum()),
    }


def exponential_periods(scenario: dict) -> None:
    """The scenario's Pareto ON/OFF sources with exponential ON and OFF
    periods of the same means."""
    for traffic in scenario.get("traffic", []):
        if traffic["kind"] == "pareto_onoff":
            traffic["kind"] = "exp_onoff"
            del traffic["shape"]


def seeds(text: str) -> list[int]:
    first, _, last = text.partition("..")
    return list(range(int(first), int(last or first) + 1))


def table(rows: list[tuple[str, dict, dict]]) -> str:
    lines = [f"{'':22}" + "".join(f"{label:>26}" for label, _, _ in rows)]
    lines.append(f"{'':22}" + "".join(f"{'phblab':>9}{'ns-3':>9}{'diff':>8}" for _ in rows))
    for key, name, fmt in MEASURES:
        cells = []
        for _, ours, theirs in rows:
            a, b = ours[key] * SCALE.get(key, 1), theirs[key] * SCALE.get(key, 1)
            diff = f"{100 * (a - b) / b:+.0f}%" if b else "—"
            cells.append(f"{fmt.format(a):>9}{fmt.format(b):>9}{diff:>8}")
        lines.append(f"{name:22}" + "".join(cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ns3", type=Path, required=True, help="the ns3 wheel's directory (include/, lib64/)")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="wide-100")
    parser.add_argument("--seeds", default="1..3", help="seeds, N or A..B (default 1..3)")
    parser.add_argument("--duration", default="30s", help="simulated time (default 30s)")
    parser.add_argument(
        "--udp-periods",
        choices=["pareto", "exponential"],
        default="pareto",
        help="the ON/OFF sources' periods (default pareto, the scenario's; exponential: both sides' exponential)",
    )
    parser.add_argument("--set", action="append", default=[], dest="overrides", help="a phblab override")
    parser.add_argument("--ns3-arg", action="append", default=[], help="an extra argument to the ns-3 program")
    parser.add_argument("--build", type=Path, default=Path("/tmp/phblab-ns3-parity"), help="build directory")
    args = parser.parse_args()

    binary = build(args.ns3, args.build)
    scenario, ns3_args, scope = SCENARIOS[args.scenario](args.duration)
    if args.udp_periods == "exponential":
        exponential_periods(scenario)
        ns3_args.append("--periods=exponential")
    duration = float(args.duration.removesuffix("s"))
    rows = []
    for seed in seeds(args.seeds):
        ours = run_phblab(scenario, seed, scope, args.overrides)
        theirs = run_ns3(binary, ns3_args + args.ns3_arg, seed, duration)
        rows.append((f"seed {seed}", ours, theirs))
    if len(rows) > 1:
        mean = [{key: sum(row[i][key] for row in rows) / len(rows) for key, _, _ in MEASURES} for i in (1, 2)]
        rows.append(("mean", mean[0], mean[1]))
    print(
        f"{args.scenario}, {args.duration}, UDP periods {args.udp_periods}, "
        f"phblab with --set {args.overrides}, ns-3 with {args.ns3_arg}"
    )
    print(table(rows))


if __name__ == "__main__":
    main()
