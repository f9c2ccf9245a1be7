//! The router's packet trace (`[trace]`, issue 29): the simulator's event
//! log (`events.parquet`, the same columns and dictionaries) and, with
//! `trace.pcap`, a pcapng file (`trace.pcapng`) of the real packets the
//! traced link directions transmit, both streamed to disk as the run goes.
//! What is traced is decided by the simulator's own [`Selection`].
//!
//! How the router's rows read (`docs/results.md` lists what differs from
//! the simulator's):
//! - times are the link model's: arrival, enqueue and drops when the
//!   router handled the packet, dequeue at the start of transmission the
//!   model gives it (when the transmitter became free or the packet
//!   arrived, never later than the router noticed), delivery when its
//!   propagation ends (the router hands it on up to its lateness after);
//! - `seq` and `ack` of a flow's TCP segments count bytes from the
//!   connection's first byte, as the simulator's byte offsets do: the
//!   sequence number less the sending side's initial sequence number and
//!   one (the SYN is at -1), the acknowledgement number less the other
//!   side's; read from the SYNs the router forwards, unwrapped past 2³²;
//! - a UDP packet's `seq` is its number in its flow (0, 1, ...), in the
//!   order the router read them, as the simulator numbers its sources';
//! - the packets of no flow (the commands' and a shell's programs) have
//!   the flow `""`, their headers' own numbers and the kind of their
//!   protocol: `data` or `ack` for TCP with or without payload, `udp` for
//!   anything else.
//!
//! The pcapng file has the simulator's layout (one interface per traced
//! direction, named as its scope, nanosecond timestamps, packets cut at
//! [`phb_sim::trace::pcap::SNAPLEN`] bytes),
//! and each packet as it starts its transmission, with the headers the
//! kernel wrote and the router changed (DSCP, CE).

use std::path::Path;

use phb::{Colour, DropReason, Ecn, Qdisc, Time};
use phb_sim::scenario::model::TraceDef;
use phb_sim::scenario::Scenario;
use phb_sim::trace::event_log::{EventLog, Row};
use phb_sim::trace::pcap::{PcapTrace, PCAP_FILE};
use phb_sim::trace::{TraceEvent, EVENT_LOG_FILE};
use phb_sim::trace_select::{open_event_log, queue_state, scope_names, Selection};

use crate::plan::Plan;

const PROTO_TCP: u8 = 6;
const TCP_SYN: u8 = 0x02;
const TCP_ACK: u8 = 0x10;

/// The event log's packet kinds (its `kind` dictionary).
const KIND_UDP: u8 = 0;
const KIND_DATA: u8 = 1;
const KIND_ACK: u8 = 2;

/// One side's sequence numbering of a connection.
#[derive(Clone, Copy, Debug, Default)]
struct Numbering {
    /// Its first byte's sequence number (the SYN's plus one).
    first: u32,
    /// The latest relative sequence number it sent: the reference for
    /// unwrapping the next.
    latest: i64,
}

impl Numbering {
    /// The relative number of `raw`, the one nearest [`Self::latest`].
    fn relative(&self, raw: u32) -> i64 {
        let step = raw.wrapping_sub(self.first).wrapping_sub(self.latest as u32) as i32;
        self.latest + i64::from(step)
    }
}

/// What a row says of a packet besides the router's state.
#[derive(Clone, Copy, Debug)]
pub struct Seen<'a> {
    /// Its flow (`None`: a programs' packet) and direction.
    pub flow: Option<usize>,
    pub reverse: bool,
    pub class: usize,
    pub codepoint: u8,
    pub ecn: Ecn,
    pub colour: Colour,
    /// A UDP packet's number in its flow.
    pub number: u32,
    /// The packet as it is now.
    pub bytes: &'a [u8],
    /// Its ATM cells at a link with AAL5 framing (0 elsewhere).
    pub cells: u32,
}

/// A running trace: what it selects, its files and the connections'
/// numbering.
pub struct Trace {
    select: Selection,
    log: EventLog,
    pcap: Option<PcapTrace>,
    /// Per flow: TCP or not, and each side's numbering (data, reverse).
    tcp: Vec<bool>,
    numbering: Vec<[Numbering; 2]>,
    /// The flow index of programs' packets (after the scenario's flows).
    programs: u32,
    averages: Vec<Option<f64>>,
    /// The first error writing the files: reported at the end.
    error: Option<String>,
}

impl Trace {
    /// Opens the trace files of `def` in `dir` (new files: an existing one
    /// is refused) for a run of `scenario` as `plan` emulates it.
    pub fn open(scenario: &Scenario, plan: &Plan, def: &TraceDef, dir: &Path, seed: u64) -> Result<Trace, String> {
        let version = env!("CARGO_PKG_VERSION");
        let reserve = |name: &str| {
            let path = dir.join(name);
            crate::sys::create_new_file(&path).map(drop).map_err(|e| format!("{}: {e}", path.display()))
        };
        let scopes = scope_names(scenario, def);
        let pcap = match def.pcap {
            true => {
                reserve(PCAP_FILE)?;
                let application = format!("phblab {version} (emulation)");
                Some(PcapTrace::create(&dir.join(PCAP_FILE), &scopes, Vec::new(), &application)?)
            }
            false => None,
        };
        reserve(EVENT_LOG_FILE)?;
        let flows = plan.flows.iter().map(|f| f.name.clone()).chain([String::new()]).collect();
        let log = open_event_log(dir, scenario, scopes, flows, seed, version)?;
        Ok(Trace {
            select: Selection::new(def, 2 * scenario.links.len(), plan.flows.iter().map(|f| f.group)),
            log,
            pcap,
            tcp: plan.flows.iter().map(|f| f.tcp).collect(),
            numbering: vec![[Numbering::default(); 2]; plan.flows.len()],
            programs: plan.flows.len() as u32,
            averages: Vec::new(),
            error: None,
        })
    }

    /// Port `p`'s index among the traced scopes, if it is traced.
    #[inline]
    pub fn scope(&self, p: usize) -> Option<u32> {
        self.select.scope(p)
    }

    /// Flow `flow`'s host sent `bytes` (`reverse`: its destination): a
    /// SYN starts that side's numbering, any other segment moves it on.
    pub fn sent(&mut self, flow: usize, reverse: bool, bytes: &[u8]) {
        if !self.tcp[flow] {
            return;
        }
        let Some((seq, _, flags)) = tcp_fields(bytes) else { return };
        let side = &mut self.numbering[flow][usize::from(reverse)];
        if flags & TCP_SYN != 0 {
            *side = Numbering { first: seq.wrapping_add(1), latest: -1 };
        } else {
            side.latest = side.relative(seq);
        }
    }

    /// Records `event` of packet `seen` at port scope `scope` at `at`, if
    /// the selection takes it (`reason`: why it was dropped; `qdisc`: the
    /// port's, after the event); a dequeued packet goes to the pcapng
    /// file, whatever the events recorded.
    pub fn record<M>(
        &mut self,
        scope: u32,
        event: TraceEvent,
        at: Time,
        seen: &Seen,
        qdisc: &Qdisc<M>,
        reason: Option<DropReason>,
    ) {
        let flow = seen.flow.map_or(self.programs, |f| f as u32);
        if !self.select.takes(at, seen.class, flow as usize) || self.error.is_some() {
            return;
        }
        if let (TraceEvent::Dequeue, Some(pcap)) = (event, &mut self.pcap) {
            if let Err(e) = pcap.write_packet(scope, at, seen.bytes) {
                self.error = Some(e);
                return;
            }
        }
        if !self.select.records(event) {
            return;
        }
        let (kind, seq, ack) = self.numbers(seen);
        let (backlog_pkts, backlog_bytes, red_avg) = queue_state(qdisc, &mut self.averages);
        let row = Row {
            time_ns: at.as_nanos(),
            event: event as u8,
            scope,
            class: seen.class as u32,
            dscp: seen.codepoint,
            ecn: seen.ecn as u8,
            colour: seen.colour as u8,
            flow,
            kind,
            // negative numbers (a SYN's -1) as the log's signed column holds them
            seq: seq as u64,
            ack: ack as u64,
            size: seen.bytes.len() as u32,
            cells: seen.cells,
            reason: reason.map_or(0, |r| r as u8 + 1),
            backlog_pkts,
            backlog_bytes,
            red_avg,
        };
        if let Err(e) = self.log.push(&row) {
            self.error = Some(e);
        }
    }

    /// A packet's kind, sequence and acknowledgement numbers (module doc).
    fn numbers(&self, seen: &Seen) -> (u8, i64, i64) {
        let tcp = tcp_fields(seen.bytes);
        let Some(f) = seen.flow else {
            return match tcp {
                Some((seq, ack, _)) => {
                    let kind = if crate::router::payload_len(seen.bytes) > 0 { KIND_DATA } else { KIND_ACK };
                    (kind, i64::from(seq), i64::from(ack))
                }
                None => (KIND_UDP, 0, 0),
            };
        };
        match tcp.filter(|_| self.tcp[f]) {
            None => (KIND_UDP, i64::from(seen.number), 0),
            Some((seq, ack, flags)) => {
                let [mine, theirs] = match seen.reverse {
                    false => self.numbering[f],
                    true => [self.numbering[f][1], self.numbering[f][0]],
                };
                let ack = if flags & TCP_ACK != 0 { theirs.relative(ack) } else { 0 };
                (if seen.reverse { KIND_ACK } else { KIND_DATA }, mine.relative(seq), ack)
            }
        }
    }

    /// Closes the files; the first error writing them, if any.
    pub fn finish(&mut self) -> Result<(), String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(pcap) = &mut self.pcap {
            pcap.finish()?;
        }
        self.log.finish()
    }
}

/// A TCP segment's sequence and acknowledgement numbers and flags, if
/// `packet` is one whose header is there.
fn tcp_fields(packet: &[u8]) -> Option<(u32, u32, u8)> {
    if packet.get(9) != Some(&PROTO_TCP) {
        return None;
    }
    let ihl = usize::from(packet[0] & 0x0f) * 4;
    let header = packet.get(ihl..ihl + 14)?;
    let word = |at: usize| u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
    Some((word(4), word(8), header[13]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative numbers count from the first byte and unwrap past 2³².
    #[test]
    fn sequence_numbers_are_relative_and_unwrapped() {
        let mut side = Numbering { first: u32::MAX - 9, latest: -1 };
        assert_eq!(side.relative(u32::MAX - 10), -1);
        assert_eq!(side.relative(u32::MAX - 9), 0);
        assert_eq!(side.relative(5), 15);
        side.latest = (1 << 32) - 100;
        assert_eq!(side.relative((u32::MAX - 9).wrapping_add(50)), (1 << 32) + 50);
        assert_eq!(side.relative((u32::MAX - 9).wrapping_sub(200)), (1 << 32) - 200);
    }

    #[test]
    fn tcp_fields_are_read_after_the_ip_header() {
        let mut packet = [0u8; 40];
        packet[0] = 0x45;
        packet[9] = PROTO_TCP;
        packet[24..28].copy_from_slice(&7u32.to_be_bytes());
        packet[28..32].copy_from_slice(&9u32.to_be_bytes());
        packet[33] = TCP_SYN | TCP_ACK;
        assert_eq!(tcp_fields(&packet), Some((7, 9, TCP_SYN | TCP_ACK)));
        packet[9] = 17;
        assert_eq!(tcp_fields(&packet), None);
        assert_eq!(tcp_fields(&[0x45; 30]), None);
    }
}
