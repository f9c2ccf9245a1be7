"""`phblab emulate` records the packet trace a `[trace]` section asks for,
as the simulator does: the event log (`events.parquet`) of the
bottleneck's direction of tests/emulate/dumbbell-tcp.toml and, with
`trace.pcap`, the real packets it transmits (`trace.pcapng`), read with an
independent reader (dpkt): one packet per departure of the classes table,
each class's DSCP, a TCP flow's sequence numbers without a gap that no
drop explains, the log's relative sequence numbers, and the log's
conservation per class. Needs the emulator's privileges (skips
otherwise); takes about 4 s."""

from __future__ import annotations

from pathlib import Path

import dpkt
import pandas as pd
import pytest

from phblab.cli import main
from test_emulate import DUMBBELL, _privileged
from test_pcap import LINKTYPE_IPV4, blocks

TRACE = """
[trace]
links = ["r1->r2"]
pcap = true
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """The dumbbell emulated for 2 s without warm-up (so that the classes
    table counts what the trace records), its bottleneck traced."""
    _privileged()
    tmp = tmp_path_factory.mktemp("emutrace")
    scenario = tmp / "traced.toml"
    scenario.write_text(DUMBBELL.read_text() + TRACE)
    out = tmp / "out"
    args = ["emulate", str(scenario), "--out", str(out), "--duration", "2s", "--quiet", "--set", 'run.warmup="0s"']
    assert main(args) == 0
    return out


def packets(run_dir: Path):
    """The pcapng file's packets: (interface, time ns, IPv4 packet as captured, original length)."""
    for b in blocks(run_dir / "trace.pcapng"):
        if isinstance(b, dpkt.pcapng.EnhancedPacketBlockLE):
            yield b.iface_id, b.ts_high << 32 | b.ts_low, dpkt.ip.IP(b.pkt_data), b.pkt_len


def test_one_interface_and_one_packet_per_departure(run_dir):
    interfaces = [b for b in blocks(run_dir / "trace.pcapng") if isinstance(b, dpkt.pcapng.InterfaceDescriptionBlockLE)]
    assert len(interfaces) == 1 and interfaces[0].linktype == LINKTYPE_IPV4
    opts = {o.code: o.data for o in interfaces[0].opts}
    assert opts[dpkt.pcapng.PCAPNG_OPT_IF_NAME] == b"r1->r2"
    assert opts[dpkt.pcapng.PCAPNG_OPT_IF_TSRESOL] == b"\x09"
    classes = pd.read_parquet(run_dir / "classes.parquet")
    departures = classes[classes.scope == "r1->r2"].departures.sum()
    events = pd.read_parquet(run_dir / "events.parquet")
    dequeued = events[events.event == "dequeue"]
    seen = list(packets(run_dir))
    assert len(seen) == len(dequeued) == departures > 1000
    # in the log's order, at its times, each as the log describes it
    for (_, ts, ip, length), row in zip(seen, dequeued.itertuples(), strict=True):
        assert ts == row.time_ns and length == ip.len == row.size_bytes
        assert ip.tos >> 2 == row.dscp and ip.tos & 3 == row.ecn
        assert len(bytes(ip)) <= 80  # cut at the simulator's snaplen
        assert dpkt.in_cksum(bytes(ip)[: ip.hl * 4]) == 0  # the kernel's header, DSCP rewritten or not


def test_each_class_has_its_dscp(run_dir):
    dscp = {}
    for _, _, ip, _ in packets(run_dir):
        dscp.setdefault(ip.p, set()).add(ip.tos >> 2)
    assert dscp == {dpkt.ip.IP_PROTO_TCP: {0}, dpkt.ip.IP_PROTO_UDP: {34}}  # data TCP, video UDP


def test_a_flow_s_sequence_is_continuous_and_relative_in_the_log(run_dir):
    """bulk.0 (source port 20000): the bytes its segments carry at r1->r2
    leave no gap but where the log says a segment was dropped there; the
    log's seq is the segment's sequence number less the SYN's and one."""
    events = pd.read_parquet(run_dir / "events.parquet")
    at = events[events.flow == "bulk.0"]
    dequeued = at[at.event == "dequeue"]
    dropped = set(at[at.event == "drop"].seq)
    segments = [(ip, ip.data) for _, _, ip, _ in packets(run_dir) if ip.p == 6 and ip.data.sport == 20000]
    assert len(segments) == len(dequeued) > 100
    syn = segments[0][1]
    assert syn.flags & dpkt.tcp.TH_SYN and dequeued.seq.iloc[0] == -1
    first = syn.seq + 1
    covered = 0
    for (ip, tcp), row in zip(segments, dequeued.itertuples(), strict=True):
        if tcp.flags & dpkt.tcp.TH_SYN:
            continue
        relative = (tcp.seq - first) % 2**32
        assert row.seq == relative
        payload = ip.len - ip.hl * 4 - tcp.off * 4
        if relative > covered:
            assert covered in dropped, f"bytes {covered}..{relative} never left and were not dropped"
        covered = max(covered, relative + payload)
    assert covered > 100_000


def test_the_event_log_conserves_each_class(run_dir):
    """Per class at the bottleneck: arrivals = departures + drops + left in queue."""
    events = pd.read_parquet(run_dir / "events.parquet")
    classes = pd.read_parquet(run_dir / "classes.parquet").set_index(["scope", "class"])
    counts = events.groupby(["class", "event"], observed=True).size()
    for cls in ["data", "video"]:
        row = classes.loc[("r1->r2", cls)]
        arrive, dequeue = counts[cls, "arrive"], counts[cls, "dequeue"]
        drop = counts.get((cls, "drop"), 0)
        assert arrive == row.arrivals and dequeue == row.departures and drop == row.dropped
        assert arrive == dequeue + drop + row.queued_end, cls


PRIORITY = """
[qdiscs.bottleneck]
kind = "classful"
scheduler = "priority"
default_queue = "data"
buffers = [{ name = "data", policy = "droptail", limit = "100pkt" }, { name = "video", policy = "droptail", limit = "100pkt" }]
queues = [{ name = "video", classes = ["video"], buffer = "video" }, { name = "data", buffer = "data" }]
"""


def test_a_late_router_loses_no_link_time(tmp_path):
    """The router wakes a little after each transmission ends (tens of µs);
    a video packet that arrived meanwhile must not go before a TCP packet
    that was already waiting when the link became free, or the link idles
    from the end of the last packet to the video packet's arrival, time a
    backlogged link never recovers (issue 28, item 4: EF's extra delay on
    diffserv-wfq). With strict priority for video, every gap in the log's
    departures must find the queue empty at the gap's start."""
    _privileged()
    fifo = '[qdiscs.bottleneck]\nkind = "fifo"\nlimit = "100pkt"\n'
    text = DUMBBELL.read_text()
    assert fifo in text
    scenario = tmp_path / "priority.toml"
    scenario.write_text(text.replace(fifo, PRIORITY) + '\n[trace]\nlinks = ["r1->r2"]\n')
    out = tmp_path / "out"
    args = ["emulate", str(scenario), "--out", str(out), "--duration", "3s", "--quiet", "--set", 'run.warmup="0s"']
    assert main(args) == 0
    events = pd.read_parquet(out / "events.parquet")
    events = events[events.scope == "r1->r2"].sort_values("time_ns", kind="stable")
    dequeued = events[events.event == "dequeue"]
    enqueued = events[events.event == "enqueue"].time_ns.to_numpy()
    # drop-tail queues: a packet is dropped on arrival or leaves, so the k-th
    # departure leaves the packets enqueued so far less k queued
    starts = dequeued.time_ns.to_numpy()
    ends = starts + dequeued.size_bytes.to_numpy() * 8 * 1e9 / 10e6
    gaps = 0
    for k in range(1, len(starts)):
        if starts[k] > ends[k - 1] + 1:
            gaps += 1
            waiting = (enqueued <= ends[k - 1]).sum() - k
            assert waiting == 0, (
                f"the link idled from {ends[k - 1]:.0f} ns to {starts[k]} ns with {waiting} packets queued"
            )
    assert len(starts) > 500 and gaps > 0
