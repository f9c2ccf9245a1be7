//! `[trace]`: the link directions, classes, flows, time window and events
//! the packet trace records (`crate::trace`), and its size estimate.
//!
//! The trace is streamed to disk while the run goes, so it costs memory
//! only for a batch of rows; what it costs is disk. Validation estimates the
//! event log's size as if every traced direction were busy for the whole
//! window with the scenario's smallest data packets (UDP packets, TCP
//! segments of a full MSS), each making one row per recorded event at
//! [`EVENT_BYTES`], plus, with `trace.pcap`, one pcapng block of at most
//! [`PCAP_PACKET_BYTES`] per packet, and refuses, at `trace.links`, a trace
//! estimated above `trace.max_size` (default [`DEFAULT_MAX_SIZE`]). A
//! direction carrying mostly ACKs can exceed the estimate: ACKs are smaller.

use super::budget::bytes;
use super::{class_index, list, Context, Links, Nodes, Result};
use crate::scenario::model::{ClassDef, RunConfig, TraceDef, TrafficGroup, Transport};
use crate::scenario::raw;
use crate::scope::split_link_direction;
use crate::trace::{pcap, TraceEvent};

/// Parquet bytes per event row, compressed: 5 times the 7.9 measured on
/// benches/scenarios/wide-100.toml's bottleneck (every event), a margin for
/// traffic whose columns compress less.
pub(super) const EVENT_BYTES: u128 = 40;
/// pcapng bytes per packet, at most: a block and the most bytes captured.
pub(super) const PCAP_PACKET_BYTES: u128 = (pcap::BLOCK_BYTES + pcap::SNAPLEN) as u128;
/// `trace.max_size` when the file gives none.
const DEFAULT_MAX_SIZE: u64 = 1 << 30;
const DEFAULT_MAX_SIZE_TEXT: &str = "1GiB";

impl Context<'_> {
    /// `[trace]`, checked against the network, classes and traffic.
    pub(super) fn trace(
        &self,
        trace: &raw::Trace,
        run: &RunConfig,
        classes: &[ClassDef],
        nodes: &Nodes,
        links: &Links,
        groups: &[TrafficGroup],
    ) -> Result<TraceDef> {
        if trace.links.is_empty() {
            return Err(self.err("trace.links", "name at least one link direction to trace, such as \"A->B\""));
        }
        let mut ports = Vec::with_capacity(trace.links.len());
        for (i, scope) in trace.links.iter().enumerate() {
            let key = format!("trace.links[{i}]");
            let port = self.direction(scope, nodes, links).map_err(|m| self.err(&key, m))?;
            if ports.contains(&port) {
                return Err(self.err(&key, format!("{scope:?} is named twice")));
            }
            ports.push(port);
        }
        let class_mask = match &trace.classes {
            None => vec![true; classes.len()],
            Some(names) => {
                let mut mask = vec![false; classes.len()];
                for (i, name) in names.iter().enumerate() {
                    let c = class_index(classes, name).map_err(|m| self.err(&format!("trace.classes[{i}]"), m))?;
                    mask[c] = true;
                }
                mask
            }
        };
        let group_mask = match &trace.flows {
            None => vec![true; groups.len()],
            Some(names) => {
                let mut mask = vec![false; groups.len()];
                for (i, name) in names.iter().enumerate() {
                    let g = groups.iter().position(|g| &g.name == name).ok_or_else(|| {
                        self.err(
                            &format!("trace.flows[{i}]"),
                            format!(
                                "{name:?} is not a traffic group; the groups are {}",
                                list(groups.iter().map(|g| g.name.as_str()))
                            ),
                        )
                    })?;
                    mask[g] = true;
                }
                mask
            }
        };
        let start = self.time_or("trace.start", &trace.start, phb::Time::ZERO)?;
        let end = self.time_or("trace.end", &trace.end, run.duration)?;
        if end > run.duration {
            return Err(self.err("trace.end", "the trace cannot end after the run (run.duration)"));
        }
        if start >= end {
            return Err(self.err(
                if trace.end.is_some() { "trace.end" } else { "trace.start" },
                "the trace's window is empty: trace.start must come before trace.end",
            ));
        }
        let mut events = [trace.events.is_none(); TraceEvent::ALL.len()];
        for (i, name) in trace.events.iter().flatten().enumerate() {
            let event = TraceEvent::ALL.iter().find(|e| e.name() == name).ok_or_else(|| {
                self.err(
                    &format!("trace.events[{i}]"),
                    format!("{name:?} is not an event; the events are {}", list(TraceEvent::ALL.map(TraceEvent::name))),
                )
            })?;
            events[*event as usize] = true;
        }
        let pcap = trace.pcap.unwrap_or(false);
        let programs = trace.flows.is_none();
        let def = TraceDef { ports, classes: class_mask, groups: group_mask, programs, start, end, events, pcap };
        self.trace_size(trace, &def, links, groups)?;
        Ok(def)
    }

    /// The port index of link direction `scope` (`"A->B"`).
    fn direction(&self, scope: &str, nodes: &Nodes, links: &Links) -> std::result::Result<usize, String> {
        let (from, to) =
            split_link_direction(scope).ok_or_else(|| format!("{scope:?} is not a link direction such as \"A->B\""))?;
        let (a, b) = (nodes.index(from.trim())?, nodes.index(to.trim())?);
        let link = links.between(a, b).ok_or_else(|| format!("no link joins {from} and {to}"))?;
        Ok(2 * link + usize::from(links.defs[link].a != a))
    }

    /// Refuses a trace whose estimated event log exceeds `trace.max_size`.
    fn trace_size(&self, raw: &raw::Trace, def: &TraceDef, links: &Links, groups: &[TrafficGroup]) -> Result<()> {
        let (limit, limit_text) = match &raw.max_size {
            Some(q) => (self.size("trace.max_size", q)?, q.0.trim()),
            None => (DEFAULT_MAX_SIZE, DEFAULT_MAX_SIZE_TEXT),
        };
        let estimate = estimated_bytes(def, links, groups);
        if estimate <= limit as u128 {
            return Ok(());
        }
        Err(self.err(
            "trace.links",
            format!(
                "the trace could write about {} (its directions busy with the smallest data packets for \
                 the whole window), more than trace.max_size ({limit_text}); trace fewer links, classes or \
                 events, a shorter window (trace.start, trace.end), or raise trace.max_size",
                bytes(estimate)
            ),
        ))
    }
}

/// The trace's size (event log and pcapng file) if every traced direction
/// were busy for the whole window with the smallest data packet of `groups`.
fn estimated_bytes(def: &TraceDef, links: &Links, groups: &[TrafficGroup]) -> u128 {
    let smallest = groups
        .iter()
        .map(|g| match &g.transport {
            Transport::Udp(source) => source.packet_size(),
            Transport::Tcp(tcp) => tcp.config.mss + tcp.config.header,
        })
        .min()
        .unwrap_or(u32::MAX)
        .max(1) as u128;
    // Each packet: at most one row per recorded event (a dropped one has no
    // dequeue or delivery).
    let rows_per_packet = def.events.iter().filter(|&&on| on).count() as u128;
    let bytes_per_packet = rows_per_packet * EVENT_BYTES + if def.pcap { PCAP_PACKET_BYTES } else { 0 };
    let window_ns = u128::from((def.end - def.start).as_nanos());
    def.ports
        .iter()
        .map(|&p| {
            let rate = u128::from(links.defs[p / 2].rate_bps);
            let packets = rate * window_ns / (8 * smallest * 1_000_000_000);
            packets * bytes_per_packet
        })
        .sum()
}
