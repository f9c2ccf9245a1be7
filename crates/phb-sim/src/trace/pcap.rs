//! The packet trace as a pcapng file (`trace.pcap = true`): every packet a
//! traced link direction starts to transmit, with synthetic but valid IPv4
//! and TCP or UDP headers, so that Wireshark's TCP analysis and
//! tcptrace-style graphs read a simulated run.
//!
//! The file format is written by the `pcap-file` crate: one Interface
//! Description Block per traced direction (named `"A->B"`, nanosecond
//! timestamps, `if_tsresol` = 9, link type `LINKTYPE_IPV4`), then one
//! Enhanced Packet Block per packet, little-endian whatever the machine, so
//! that the same scenario and seed give the same bytes. Packets are written
//! to a buffered file as the run goes: memory stays constant.
//!
//! The headers (`docs/results.md` describes the conventions):
//! - addresses: node `n` (its place in the scenario's node list, counted
//!   from 0) is `10.0.0.0 + n + 1`, a flow's packets go from its group's
//!   source host to its destination host, its ACKs back;
//! - ports: flow `f` (its place in the event log's flow list) sends from
//!   port `1024 + f mod 64512` to port 5001;
//! - IPv4: DSCP the packet's codepoint, ECN its ECN field as the markers
//!   and qdiscs left it, total length the simulated size (an ACK's SACK
//!   option, which the simulator does not count, lengthens it), identification
//!   0 with Don't Fragment, TTL 64 less the hops made before the link;
//! - TCP: sequence numbers are byte offsets modulo 2³² (no SYN is modelled:
//!   the first byte is 0, and the receiver, which sends no data, stays at
//!   sequence 0, so data segments acknowledge 0); flags ACK, with CWR and
//!   ECE as the connection sets them; the window is the receiver's window
//!   in bytes, at most 65,535 (no window scaling); the header is the
//!   connection's `header` less the IPv4 header's 20 bytes: 20 bytes and,
//!   for a `header` above 40, options filling the rest (rounded down to 4
//!   bytes, at most 40) — the timestamp option where it fits (TSval the
//!   packet's creation time in µs, an ACK's TSecr the time it echoes), then
//!   no-ops; an ACK's SACK blocks follow as the SACK option (as many as
//!   the 40 bytes of options leave room for);
//! - UDP: length the simulated size less the IPv4 header;
//! - the payload is zeros, cut off: a packet's captured bytes are its
//!   headers (at most [`SNAPLEN`]); the checksums (IPv4, and TCP and UDP
//!   over their pseudo-header) are those of the whole packet.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, Endianness};
use phb::Time;

use crate::net::{Kind, SimPacket};

/// The pcapng file's name in the trace directory.
pub const PCAP_FILE: &str = "trace.pcapng";

/// The most bytes captured of a packet: an IPv4 header (20 bytes) and the
/// longest TCP header (60 bytes: timestamps and three SACK blocks fill it).
pub const SNAPLEN: u32 = 80;

/// Bytes of an Enhanced Packet Block besides the captured data.
pub const BLOCK_BYTES: u32 = 32;

/// The port every flow sends to.
pub const DESTINATION_PORT: u16 = 5001;

const IPV4_HEADER: usize = 20;
const TCP_HEADER: usize = 20;
/// TCP option bytes written besides SACK blocks, at most.
const MAX_OPTIONS: u32 = 40;
/// The timestamp option's bytes, with its two leading no-ops.
const TIMESTAMP_OPTION: usize = 12;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const INITIAL_TTL: u8 = 64;
const DONT_FRAGMENT: u16 = 0x4000;
const TCP_ACK: u8 = 0x10;
const TCP_ECE: u8 = 0x40;
const TCP_CWR: u8 = 0x80;
const OPT_NOP: u8 = 1;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMP: u8 = 8;

/// The address of node `n`: `10.0.0.0 + n + 1`.
pub fn host_address(n: usize) -> [u8; 4] {
    (0x0a00_0000 + n as u32 + 1).to_be_bytes()
}

/// The source port of flow `f`.
pub fn flow_port(f: usize) -> u16 {
    1024 + (f % 64512) as u16
}

/// What a flow's headers say besides each packet's own fields.
#[derive(Clone, Copy, Debug)]
pub struct FlowHeaders {
    /// The source and destination hosts' addresses.
    pub source: [u8; 4],
    pub destination: [u8; 4],
    pub port: u16,
    /// TCP: the receiver's window (bytes) and the connection's `header`
    /// (IPv4 and TCP header bytes the simulator counts).
    pub tcp: Option<(u32, u32)>,
}

/// The headers of `pkt` of a flow with `flow` headers, written to `out`
/// (cleared first), `sack` its SACK blocks (an ACK's); the packet's length
/// on the wire.
pub fn encode(out: &mut Vec<u8>, flow: &FlowHeaders, pkt: &SimPacket, sack: &[(u64, u64)]) -> u32 {
    out.clear();
    out.resize(IPV4_HEADER, 0);
    let ack = pkt.meta.kind == Kind::Ack;
    let (source, destination) = if ack { (flow.destination, flow.source) } else { (flow.source, flow.destination) };
    let (source_port, destination_port) =
        if ack { (DESTINATION_PORT, flow.port) } else { (flow.port, DESTINATION_PORT) };
    let protocol = match flow.tcp {
        Some((window, header)) => {
            tcp_header(out, pkt, (source_port, destination_port), window, header, sack);
            PROTO_TCP
        }
        None => {
            for field in [source_port, destination_port, 0, 0] {
                out.extend_from_slice(&field.to_be_bytes());
            }
            PROTO_UDP
        }
    };
    let total = (pkt.size as usize).max(out.len()).min(usize::from(u16::MAX));
    let transport_len = (total - IPV4_HEADER) as u16;
    if protocol == PROTO_UDP {
        out[IPV4_HEADER + 4..IPV4_HEADER + 6].copy_from_slice(&transport_len.to_be_bytes());
    }
    // The transport checksum: pseudo-header and header (the zero payload adds nothing).
    let mut sum = ones_sum(&source) + ones_sum(&destination) + u32::from(protocol) + u32::from(transport_len);
    sum += ones_sum(&out[IPV4_HEADER..]);
    let mut checksum = fold(sum);
    if protocol == PROTO_UDP && checksum == 0 {
        checksum = 0xffff; // RFC 768: zero means "no checksum"
    }
    let at = IPV4_HEADER + if protocol == PROTO_TCP { 16 } else { 6 };
    out[at..at + 2].copy_from_slice(&checksum.to_be_bytes());
    let ip = &mut out[..IPV4_HEADER];
    ip[0] = 0x45;
    ip[1] = (pkt.class & 63) << 2 | pkt.ecn as u8;
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    ip[6..8].copy_from_slice(&DONT_FRAGMENT.to_be_bytes());
    ip[8] = INITIAL_TTL.saturating_sub(pkt.meta.hop.min(63) as u8);
    ip[9] = protocol;
    ip[12..16].copy_from_slice(&source);
    ip[16..20].copy_from_slice(&destination);
    let checksum = fold(ones_sum(ip));
    ip[10..12].copy_from_slice(&checksum.to_be_bytes());
    total as u32
}

/// Appends the TCP header of `pkt` (checksum left zero) to `out`, for a
/// connection whose IPv4 and TCP headers are `header` bytes.
fn tcp_header(out: &mut Vec<u8>, pkt: &SimPacket, ports: (u16, u16), window: u32, header: u32, sack: &[(u64, u64)]) {
    let start = out.len();
    let meta = &pkt.meta;
    let (seq, ack, flag) = match meta.kind {
        Kind::Ack => (0, meta.ack, if meta.ece { TCP_ECE } else { 0 }),
        _ => (meta.seq, 0, if meta.cwr { TCP_CWR } else { 0 }),
    };
    out.extend_from_slice(&ports.0.to_be_bytes());
    out.extend_from_slice(&ports.1.to_be_bytes());
    out.extend_from_slice(&(seq as u32).to_be_bytes());
    out.extend_from_slice(&(ack as u32).to_be_bytes());
    out.extend_from_slice(&[0, TCP_ACK | flag]);
    out.extend_from_slice(&(window.min(u32::from(u16::MAX)) as u16).to_be_bytes());
    out.extend_from_slice(&[0; 4]); // checksum and urgent pointer
    let options = (header.saturating_sub((IPV4_HEADER + TCP_HEADER) as u32).min(MAX_OPTIONS) / 4 * 4) as usize;
    if options >= TIMESTAMP_OPTION {
        let micros = |t: u64| (t / 1_000) as u32;
        let echo = if meta.kind == Kind::Ack { micros(meta.seq) } else { 0 };
        out.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_TIMESTAMP, 10]);
        out.extend_from_slice(&micros(pkt.created.as_nanos()).to_be_bytes());
        out.extend_from_slice(&echo.to_be_bytes());
    }
    out.resize(start + TCP_HEADER + options, OPT_NOP);
    // as many SACK blocks as the 40 bytes of options leave room for
    let sack = &sack[..sack.len().min((MAX_OPTIONS as usize - options).saturating_sub(4) / 8)];
    if !sack.is_empty() {
        out.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK, 2 + 8 * sack.len() as u8]);
        for &(left, right) in sack {
            out.extend_from_slice(&(left as u32).to_be_bytes());
            out.extend_from_slice(&(right as u32).to_be_bytes());
        }
    }
    out[start + 12] = (((out.len() - start) / 4) as u8) << 4;
}

/// The 16-bit one's-complement sum of `bytes` (big-endian words, an odd
/// last byte padded with zero), not yet folded.
fn ones_sum(bytes: &[u8]) -> u32 {
    bytes.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]))).sum()
}

/// The Internet checksum (RFC 1071) of a sum from [`ones_sum`].
fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The pcapng file being written.
pub struct PcapTrace {
    writer: PcapNgWriter<BufWriter<File>>,
    /// Per flow, its headers.
    flows: Vec<FlowHeaders>,
    /// The packet being encoded.
    buffer: Vec<u8>,
    shown: String,
}

impl PcapTrace {
    /// Creates `path` (an existing file is replaced) with one interface per
    /// name of `interfaces`; `application` names the writer in the section
    /// header.
    pub fn create(
        path: &Path,
        interfaces: &[String],
        flows: Vec<FlowHeaders>,
        application: &str,
    ) -> Result<PcapTrace, String> {
        let shown = path.display().to_string();
        let error = |e: &dyn std::fmt::Display| format!("{shown}: {e}");
        let file = File::create(path).map_err(|e| error(&e))?;
        let section = SectionHeaderBlock {
            endianness: Endianness::Little,
            options: vec![SectionHeaderOption::UserApplication(Cow::Owned(application.to_owned()))],
            ..SectionHeaderBlock::default()
        };
        let mut writer = PcapNgWriter::with_section_header(BufWriter::new(file), section).map_err(|e| error(&e))?;
        for name in interfaces {
            let interface = InterfaceDescriptionBlock {
                linktype: DataLink::IPV4,
                snaplen: SNAPLEN,
                options: vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(name.clone())),
                    InterfaceDescriptionOption::IfTsResol(9),
                ],
            };
            writer.write_pcapng_block(interface).map_err(|e| error(&e))?;
        }
        Ok(PcapTrace { writer, flows, buffer: Vec::with_capacity(SNAPLEN as usize), shown })
    }

    /// Writes `pkt` (`sack`: its SACK blocks) seen at `time` on interface
    /// `interface`.
    pub fn write(&mut self, interface: u32, time: Time, pkt: &SimPacket, sack: &[(u64, u64)]) -> Result<(), String> {
        let length = encode(&mut self.buffer, &self.flows[pkt.flow as usize], pkt, sack);
        let block = EnhancedPacketBlock {
            interface_id: interface,
            timestamp: Duration::from_nanos(time.as_nanos()),
            original_len: length,
            data: Cow::Borrowed(&self.buffer),
            options: Vec::new(),
        };
        self.writer.write_pcapng_block(block).map(drop).map_err(|e| format!("{}: {e}", self.shown))
    }

    /// Writes a real packet, `packet` (IPv4, its headers first), seen at
    /// `time` on interface `interface`: its first [`SNAPLEN`] bytes, and
    /// its whole length as the original length (the emulator's router).
    pub fn write_packet(&mut self, interface: u32, time: Time, packet: &[u8]) -> Result<(), String> {
        let block = EnhancedPacketBlock {
            interface_id: interface,
            timestamp: Duration::from_nanos(time.as_nanos()),
            original_len: packet.len() as u32,
            data: Cow::Borrowed(&packet[..packet.len().min(SNAPLEN as usize)]),
            options: Vec::new(),
        };
        self.writer.write_pcapng_block(block).map(drop).map_err(|e| format!("{}: {e}", self.shown))
    }

    /// Writes what is buffered.
    pub fn finish(&mut self) -> Result<(), String> {
        self.writer.get_mut().flush().map_err(|e| format!("{}: {e}", self.shown))
    }
}

#[cfg(test)]
mod tests {
    use phb::{Colour, Ecn};

    use super::*;
    use crate::net::Meta;

    fn packet(size: u32, meta: Meta) -> SimPacket {
        SimPacket {
            flow: 0,
            class: 46,
            colour: Colour::Green,
            ecn: Ecn::Ect0,
            size,
            created: Time::from_nanos(3_000_000),
            enqueued: Time::ZERO,
            meta,
        }
    }

    const FLOW: FlowHeaders =
        FlowHeaders { source: [10, 0, 0, 1], destination: [10, 0, 0, 4], port: 1024, tcp: Some((65_535, 40)) };

    /// RFC 1071's worked example: the words 0x0001 0xf203 0xf4f5 0xf6f7
    /// sum to 0xddf2 (folded), whose complement is the checksum.
    #[test]
    fn the_checksum_is_rfc_1071s() {
        assert_eq!(fold(ones_sum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7])), !0xddf2);
        assert_eq!(fold(ones_sum(&[0xff])), !0xff00);
    }

    /// A well-known IPv4 header (from the Wikipedia article on the
    /// checksum) sums to 0xb861 with its checksum zero.
    #[test]
    fn a_known_ipv4_header_gets_its_checksum() {
        let header = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8,
            0x00, 0xc7,
        ];
        assert_eq!(fold(ones_sum(&header)), 0xb861);
    }

    /// A data segment: lengths, DSCP and ECN, ports, sequence number, and
    /// checksums that verify (the sum over a header with its checksum is
    /// all ones; the zero payload adds nothing).
    #[test]
    fn a_data_segment_is_a_valid_tcp_segment() {
        let mut out = Vec::new();
        let mut pkt = packet(1500, Meta::data(0, (1 << 32) + 1460, 1460));
        pkt.meta.hop = 2;
        let length = encode(&mut out, &FLOW, &pkt, &[]);
        assert_eq!((length, out.len()), (1500, 40));
        assert_eq!(u16::from_be_bytes([out[2], out[3]]), 1500);
        assert_eq!(out[1], 46 << 2 | 0b10);
        assert_eq!(out[8], 62);
        assert_eq!(fold(ones_sum(&out[..20])), 0);
        assert_eq!(&out[12..20], &[10, 0, 0, 1, 10, 0, 0, 4]);
        assert_eq!(u16::from_be_bytes([out[20], out[21]]), 1024);
        assert_eq!(u16::from_be_bytes([out[22], out[23]]), DESTINATION_PORT);
        assert_eq!(u32::from_be_bytes([out[24], out[25], out[26], out[27]]), 1460);
        assert_eq!((out[32] >> 4, out[33]), (5, TCP_ACK));
        let pseudo = ones_sum(&out[12..20]) + u32::from(PROTO_TCP) + 1480;
        assert_eq!(fold(pseudo + ones_sum(&out[20..])), 0);
    }

    /// An ACK goes the other way, with its timestamps and SACK blocks as
    /// options (and is longer than the simulator counted it).
    #[test]
    fn an_ack_carries_its_options() {
        let flow = FlowHeaders { tcp: Some((1 << 20, 52)), ..FLOW };
        let mut pkt = packet(52, Meta::ack(0, 5000, 7_000_000, 1, 0));
        pkt.meta.ece = true;
        let mut out = Vec::new();
        let length = encode(&mut out, &flow, &pkt, &[(6000, 9000)]);
        assert_eq!((length, out.len()), (20 + 20 + 12 + 12, 64));
        assert_eq!(&out[12..20], &[10, 0, 0, 4, 10, 0, 0, 1]);
        assert_eq!(u32::from_be_bytes([out[28], out[29], out[30], out[31]]), 5000);
        assert_eq!((out[32] >> 4, out[33]), (11, TCP_ACK | TCP_ECE));
        assert_eq!(u16::from_be_bytes([out[34], out[35]]), 65_535);
        assert_eq!(&out[40..44], &[OPT_NOP, OPT_NOP, OPT_TIMESTAMP, 10]);
        assert_eq!(u32::from_be_bytes([out[44], out[45], out[46], out[47]]), 3_000);
        assert_eq!(u32::from_be_bytes([out[48], out[49], out[50], out[51]]), 7_000);
        assert_eq!(&out[52..56], &[OPT_NOP, OPT_NOP, OPT_SACK, 10]);
        assert_eq!(u32::from_be_bytes([out[60], out[61], out[62], out[63]]), 9000);
        let pseudo = ones_sum(&out[12..20]) + u32::from(PROTO_TCP) + 44;
        assert_eq!(fold(pseudo + ones_sum(&out[20..])), 0);
    }

    /// Header bytes beyond 40 without room for timestamps are no-ops.
    #[test]
    fn short_options_are_no_ops() {
        let flow = FlowHeaders { tcp: Some((1000, 48)), ..FLOW };
        let mut out = Vec::new();
        assert_eq!(encode(&mut out, &flow, &packet(548, Meta::data(0, 0, 500)), &[]), 548);
        assert_eq!((out.len(), out[32] >> 4), (48, 7));
        assert_eq!(&out[40..], &[OPT_NOP; 8]);
    }

    /// A UDP packet's length field and checksum.
    #[test]
    fn a_udp_packet_is_valid() {
        let flow = FlowHeaders { tcp: None, ..FLOW };
        let mut out = Vec::new();
        assert_eq!(encode(&mut out, &flow, &packet(200, Meta::udp(0, 9)), &[]), 200);
        assert_eq!((out.len(), out[9]), (28, PROTO_UDP));
        assert_eq!(u16::from_be_bytes([out[24], out[25]]), 180);
        let pseudo = ones_sum(&out[12..20]) + u32::from(PROTO_UDP) + 180;
        assert_eq!(fold(pseudo + ones_sum(&out[20..])), 0);
    }

    /// A real packet is written cut at the snaplen, with its whole length
    /// and its time to the nanosecond, on its interface.
    #[test]
    fn a_real_packet_is_cut_at_the_snaplen() {
        let path = std::env::temp_dir().join(format!("phblab-pcap-test-{}.pcapng", std::process::id()));
        let names = ["a->b".to_owned(), "b->a".to_owned()];
        let mut trace = PcapTrace::create(&path, &names, Vec::new(), "test").unwrap();
        let packet: Vec<u8> = (0..200u8).collect();
        trace.write_packet(1, Time::from_nanos(1_234_567_891), &packet).unwrap();
        trace.write_packet(0, Time::from_nanos(5), &packet[..60]).unwrap();
        trace.finish().unwrap();
        drop(trace);
        let file = File::open(&path).unwrap();
        let mut reader = pcap_file::pcapng::PcapNgReader::new(file).unwrap();
        let mut seen = Vec::new();
        while let Some(block) = reader.next_block() {
            if let pcap_file::pcapng::Block::EnhancedPacket(b) = block.unwrap() {
                seen.push((b.interface_id, b.timestamp.as_nanos(), b.original_len, b.data.into_owned()));
            }
        }
        std::fs::remove_file(&path).unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!((seen[0].0, seen[0].1, seen[0].2), (1, 1_234_567_891, 200));
        assert_eq!(seen[0].3, packet[..SNAPLEN as usize]);
        assert_eq!((seen[1].0, seen[1].1, seen[1].2, seen[1].3.len()), (0, 5, 60, 60));
    }

    #[test]
    fn hosts_and_ports_follow_the_documented_scheme() {
        assert_eq!(host_address(0), [10, 0, 0, 1]);
        assert_eq!(host_address(300), [10, 0, 1, 45]);
        assert_eq!((flow_port(0), flow_port(64512)), (1024, 1024));
    }
}
