"""The packet trace's pcapng file (`trace.pcap = true`), opened with an
independent reader (dpkt): one interface per traced direction with
nanosecond timestamps, one packet per departure of the link in the event
log's order, valid IPv4 and TCP/UDP headers that carry each class's DSCP
and each segment's real sequence and acknowledgement numbers; the event
log's conservation per class; and `phblab plot --flow`, the time–sequence
graph drawn from the event log."""

import struct
import subprocess
import sys
from pathlib import Path

import dpkt
import pandas as pd
import pytest

import phblab

EXAMPLE = Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "traced-bottleneck.toml"
LINKTYPE_IPV4 = 228


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """scenarios/examples/traced-bottleneck.toml cut to 4 s."""
    out = tmp_path_factory.mktemp("traced") / "run"
    phblab.run(EXAMPLE, overrides={"run.duration": "4s"}, out=out)
    return out


def blocks(path: Path):
    """The pcapng file's blocks as dpkt parses them (little-endian, as phblab writes them)."""
    data = path.read_bytes()
    at = 0
    while at < len(data):
        kind, length = struct.unpack_from("<II", data, at)
        buf = data[at : at + length]
        at += length
        if kind == dpkt.pcapng.PCAPNG_BT_SHB:
            yield dpkt.pcapng.SectionHeaderBlockLE(buf)
        elif kind == dpkt.pcapng.PCAPNG_BT_IDB:
            yield dpkt.pcapng.InterfaceDescriptionBlockLE(buf)
        elif kind == dpkt.pcapng.PCAPNG_BT_EPB:
            yield dpkt.pcapng.EnhancedPacketBlockLE(buf)
        else:
            raise AssertionError(f"unexpected block type {kind:#x}")


def checksum_ok(data: bytes) -> bool:
    """The Internet checksum over `data`, its checksum field included, verifies."""
    return dpkt.in_cksum(data) == 0


def test_the_pcap_is_read_by_an_independent_reader(run_dir):
    path = run_dir / "trace.pcapng"
    # dpkt's own reader takes the file: the first interface's packets and nanosecond times
    with path.open("rb") as f:
        reader = dpkt.pcapng.Reader(f)
        assert reader.datalink() == LINKTYPE_IPV4
        first_ts, first = next(iter(reader))
    events = pd.read_parquet(run_dir / "events.parquet")
    dequeued = events[events.event == "dequeue"]
    assert first_ts == pytest.approx(dequeued.time_ns.iloc[0] / 1e9, abs=1e-9)
    assert dpkt.ip.IP(first).v == 4


def test_each_traced_direction_is_an_interface_with_one_packet_per_departure(run_dir):
    all_blocks = list(blocks(run_dir / "trace.pcapng"))
    interfaces = [b for b in all_blocks if isinstance(b, dpkt.pcapng.InterfaceDescriptionBlockLE)]
    packets = [b for b in all_blocks if isinstance(b, dpkt.pcapng.EnhancedPacketBlockLE)]
    names = []
    for idb in interfaces:
        opts = {o.code: o.data for o in idb.opts}
        assert idb.linktype == LINKTYPE_IPV4
        assert opts[dpkt.pcapng.PCAPNG_OPT_IF_TSRESOL] == b"\x09"  # nanoseconds
        names.append(opts[dpkt.pcapng.PCAPNG_OPT_IF_NAME].decode())
    assert names == ["r1->r2", "r2->r1"]
    events = pd.read_parquet(run_dir / "events.parquet")
    classes = pd.read_parquet(run_dir / "classes.parquet")
    for i, scope in enumerate(names):
        mine = [p for p in packets if p.iface_id == i]
        dequeued = events[(events.event == "dequeue") & (events.scope == scope)]
        departures = classes[classes.scope == scope].departures.sum()
        assert len(mine) == len(dequeued) == departures > 1000, scope
        # in the event log's order, at its times, each packet as the log describes it
        for p, row in zip(mine, dequeued.itertuples(), strict=True):
            assert (p.ts_high << 32 | p.ts_low) == row.time_ns
            check_packet(p, row)


def check_packet(p, row) -> None:
    """Packet `p` (an Enhanced Packet Block) against its event-log row."""
    ip = dpkt.ip.IP(p.pkt_data)
    header = p.pkt_data[: ip.hl * 4]
    assert checksum_ok(header), "IPv4 header checksum"
    assert ip.tos >> 2 == row.dscp and ip.tos & 3 == row.ecn
    assert p.caplen == len(p.pkt_data) <= p.pkt_len == ip.len
    assert (p.caplen < p.pkt_len) == (row.kind != "ack")  # a payload is cut off
    segment = p.pkt_data[ip.hl * 4 :]
    pseudo = ip.src + ip.dst + struct.pack(">BBH", 0, ip.p, ip.len - ip.hl * 4)
    # the payload is zeros: it adds nothing to the transport checksum
    assert checksum_ok(pseudo + segment), f"{row.kind} checksum"
    if row.kind == "udp":
        assert ip.p == dpkt.ip.IP_PROTO_UDP and ip.len == row.size_bytes
        assert dpkt.udp.UDP(segment).ulen == row.size_bytes - 20
        return
    assert ip.p == dpkt.ip.IP_PROTO_TCP
    tcp = dpkt.tcp.TCP(segment)
    assert tcp.flags & dpkt.tcp.TH_ACK
    if row.kind == "data":
        assert ip.len == row.size_bytes and tcp.seq == row.seq % 2**32
    else:
        assert tcp.ack == row.ack % 2**32 and tcp.seq == 0
        sack = [o for o in dpkt.tcp.parse_opts(tcp.opts) if o[0] == dpkt.tcp.TCP_OPT_SACK]
        # the simulator counts an ACK at its header bytes, SACK blocks or not
        assert ip.len == row.size_bytes + (4 + len(sack[0][1]) if sack else 0)


def tcp_packets(run_dir: Path, iface: int):
    for p in blocks(run_dir / "trace.pcapng"):
        if isinstance(p, dpkt.pcapng.EnhancedPacketBlockLE) and p.iface_id == iface:
            ip = dpkt.ip.IP(p.pkt_data)
            if ip.p == dpkt.ip.IP_PROTO_TCP:
                yield ip, dpkt.tcp.TCP(p.pkt_data[ip.hl * 4 :])


def test_the_classes_keep_their_dscp_and_a_flow_its_sequence(run_dir):
    dscp = {}
    for p in blocks(run_dir / "trace.pcapng"):
        if isinstance(p, dpkt.pcapng.EnhancedPacketBlockLE) and p.iface_id == 0:
            ip = dpkt.ip.IP(p.pkt_data)
            dscp.setdefault(ip.p, set()).add(ip.tos >> 2)
    assert dscp == {dpkt.ip.IP_PROTO_TCP: {0}, dpkt.ip.IP_PROTO_UDP: {46}}  # be TCP, ef UDP
    # flow bulk.0 (the first flow: source port 1024) at r1->r2: full-sized
    # segments whose first bytes, with those the event log says were dropped
    # there, leave no gap; the drops made it retransmit some
    seqs, retransmitted = [], 0
    for ip, tcp in tcp_packets(run_dir, 0):
        if tcp.sport == 1024:
            assert ip.len - ip.hl * 4 - tcp.off * 4 == 1448
            retransmitted += bool(seqs) and tcp.seq < max(seqs)  # a hole filled
            seqs.append(tcp.seq)
    events = pd.read_parquet(run_dir / "events.parquet")
    dropped = events[(events.flow == "bulk.0") & (events.event == "drop") & (events.scope == "r1->r2")]
    assert len(seqs) > 100 and len(dropped) > 0 and retransmitted > 0
    starts = sorted(set(seqs) | set(dropped.seq))
    assert starts == list(range(0, starts[-1] + 1, 1448))
    # its ACKs at r2->r1 never go back, and carry SACK blocks above them after a loss
    last_ack, sacked = 0, 0
    for _, tcp in tcp_packets(run_dir, 1):
        if tcp.dport != 1024:
            continue
        assert tcp.ack >= last_ack
        last_ack = tcp.ack
        for kind, data in dpkt.tcp.parse_opts(tcp.opts):
            if kind == dpkt.tcp.TCP_OPT_SACK:
                left = struct.unpack(">I", data[:4])[0]
                assert left > tcp.ack
                sacked += 1
    assert last_ack > 0 and sacked > 0


def test_the_event_log_conserves_each_class(run_dir):
    """Per class at the bottleneck: arrivals = departures + drops + left in queue."""
    events = pd.read_parquet(run_dir / "events.parquet")
    classes = pd.read_parquet(run_dir / "classes.parquet").set_index(["scope", "class"])
    at = events[events.scope == "r1->r2"]
    counts = at.groupby(["class", "event"], observed=True).size()
    for cls in ["be", "ef"]:
        arrive, dequeue = counts[cls, "arrive"], counts[cls, "dequeue"]
        drop = counts.get((cls, "drop"), 0)
        assert arrive == dequeue + drop + classes.loc[("r1->r2", cls), "queued_end"], cls
    assert counts.get(("be", "drop"), 0) > 0


def test_the_same_seed_writes_the_same_pcap(run_dir, tmp_path):
    again = tmp_path / "again"
    phblab.run(EXAMPLE, overrides={"run.duration": "4s"}, out=again)
    assert (again / "trace.pcapng").read_bytes() == (run_dir / "trace.pcapng").read_bytes()
    assert phblab.load(again).files["trace.pcapng"] == again / "trace.pcapng"


def phblab_cli(*args):
    return subprocess.run([sys.executable, "-m", "phblab", *map(str, args)], capture_output=True, text=True)


def test_plot_draws_a_traced_flow_s_time_sequence_graph(run_dir, tmp_path):
    r = phblab_cli("plot", run_dir, "--flow", "bulk.0")
    assert r.returncode == 0, r.stderr
    for suffix in ("png", "svg"):
        drawn = run_dir / "plots" / f"time-sequence-bulk.0.{suffix}"
        assert drawn.stat().st_size > 10_000 and f"wrote {drawn}" in r.stdout
    out = tmp_path / "acks"
    r = phblab_cli("plot", run_dir, "--flow", "bulk.1", "--scope", "r1->r2", "--out", out)
    assert r.returncode == 0 and (tmp_path / "acks.png").is_file(), r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--flow", "nope"], "flow 'nope' is not in the packet trace; the traced flows: bulk.0, "),
        (["--flow", "voice"], "flow 'voice' is not a TCP flow"),
        (["--flow", "bulk.0", "--scope", "r2->r1"], "flow 'bulk.0' has no data segments traced at 'r2->r1'"),
        (["--flow", "bulk.0", "--cdf"], "--cdf does not apply to --flow"),
    ],
)
def test_plot_refuses_a_flow_it_cannot_draw_in_one_line(run_dir, args, message):
    r = phblab_cli("plot", run_dir, *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, r.stderr


def test_plot_names_the_flow_of_an_untraced_run(tmp_path):
    text = EXAMPLE.read_text().split("[trace]")[0]
    (tmp_path / "untraced.toml").write_text(text)
    phblab.run(tmp_path / "untraced.toml", overrides={"run.duration": "1s"}, out=tmp_path / "run")
    r = phblab_cli("plot", tmp_path / "run", "--flow", "bulk.0")
    assert r.returncode == 2 and "flow 'bulk.0': the run has no packet trace" in r.stderr, r.stderr
