//! The simulator's side of a trace: which ports are traced, and the rows
//! their packets' events make. `sim.rs` calls [`Sim::trace`] only for a port
//! the run's [`Tracing`] traces.

use std::path::Path;

use phb::DropReason;

use super::{RunError, Sim};
use crate::flow::Flow;
use crate::net::{Port, SimPacket};
use crate::scenario::model::TraceDef;
use crate::scenario::{Scenario, Transport};
use crate::trace::event_log::{EventLog, Row};
use crate::trace::pcap::{flow_port, host_address, FlowHeaders, PcapTrace, PCAP_FILE};
use crate::trace::TraceEvent;
use crate::trace_select::{open_event_log, queue_state, scope_names, Selection};

/// What a run does with the events of its ports: nothing ([`NoTrace`]) or
/// record them ([`Tracer`]). The simulator is generic over it, so with
/// [`NoTrace`] every hook is a constant `false` and the run's loop is the
/// untraced simulator's, with no test per packet.
pub(crate) trait Tracing {
    /// Port `p`'s events are recorded.
    fn traces(&self, p: usize) -> bool;
    /// The running trace, if any.
    fn tracer(&mut self) -> Option<&mut Tracer>;
}

/// No trace: the hooks compile away.
pub(crate) struct NoTrace;

impl Tracing for NoTrace {
    #[inline(always)]
    fn traces(&self, _: usize) -> bool {
        false
    }

    #[inline(always)]
    fn tracer(&mut self) -> Option<&mut Tracer> {
        None
    }
}

/// A running trace: its filters and its open files.
pub(crate) struct Tracer {
    select: Selection,
    log: EventLog,
    /// The pcapng file, when the trace asks for one.
    pcap: Option<PcapTrace>,
    /// Reused buffer for the qdisc's AQM averages.
    averages: Vec<Option<f64>>,
    /// The first error writing the files: the run ends with it.
    error: Option<String>,
}

impl Tracing for Tracer {
    #[inline]
    fn traces(&self, p: usize) -> bool {
        self.select.scope(p).is_some()
    }

    #[inline]
    fn tracer(&mut self) -> Option<&mut Tracer> {
        Some(self)
    }
}

impl Tracer {
    /// Opens the trace files of `def` (the scenario's `[trace]`) in `dir`,
    /// for a run of `scenario` with `seed` on `ports` and `flows`.
    pub(crate) fn open(
        scenario: &Scenario,
        def: &TraceDef,
        ports: &[Port],
        flows: &[Flow],
        dir: &Path,
        seed: u64,
        version: &str,
    ) -> Result<Tracer, RunError> {
        let scopes = scope_names(scenario, def);
        let pcap = match def.pcap {
            true => {
                let headers = flows.iter().enumerate().map(|(f, flow)| flow_headers(scenario, f, flow)).collect();
                let application = format!("phblab {version}");
                Some(PcapTrace::create(&dir.join(PCAP_FILE), &scopes, headers, &application).map_err(RunError::Trace)?)
            }
            false => None,
        };
        let names = flows.iter().map(|f| f.name.clone()).collect();
        let log = open_event_log(dir, scenario, scopes, names, seed, version).map_err(RunError::Trace)?;
        Ok(Tracer {
            select: Selection::new(def, ports.len(), flows.iter().map(|f| f.group)),
            log,
            pcap,
            averages: Vec::new(),
            error: None,
        })
    }
}

impl<T: Tracing> Sim<'_, T> {
    /// Records `event` of `pkt` at traced port `p` (`reason`: why it was
    /// dropped), if the trace's window, classes, flows and events take it;
    /// writes a dequeued packet to the pcapng file, if any, whatever the
    /// events recorded. The backlog is the qdisc's after the event.
    #[inline(never)]
    pub(crate) fn trace(&mut self, p: usize, event: TraceEvent, pkt: &SimPacket, reason: Option<DropReason>) {
        let class = self.class_of(pkt.class);
        let Some(tracer) = self.tracer.tracer() else { return };
        let now = self.now;
        if !tracer.select.takes(now, class, pkt.flow as usize) || tracer.error.is_some() {
            return;
        }
        let scope = tracer.select.scope(p).expect("a traced port");
        if let (TraceEvent::Dequeue, Some(pcap)) = (event, &mut tracer.pcap) {
            let mut sack = [(0, 0); 3];
            let blocks = self.sacks.peek(&pkt.meta, &mut sack);
            if let Err(e) = pcap.write(scope, now, pkt, &sack[..blocks]) {
                tracer.error = Some(e);
                return;
            }
        }
        if !tracer.select.records(event) {
            return;
        }
        let port = &self.ports[p];
        let (backlog_pkts, backlog_bytes, red_avg) = queue_state(&port.qdisc, &mut tracer.averages);
        let row = Row {
            time_ns: now.as_nanos(),
            event: event as u8,
            scope,
            class: class as u32,
            dscp: pkt.class,
            ecn: pkt.ecn as u8,
            colour: pkt.colour as u8,
            flow: pkt.flow,
            kind: pkt.meta.kind as u8,
            seq: match pkt.meta.kind {
                crate::net::Kind::Ack => 0,
                _ => pkt.meta.seq,
            },
            ack: pkt.meta.ack,
            size: pkt.size,
            cells: if port.framing.has_cells() { port.framing.cells(pkt.size) } else { 0 },
            reason: reason.map_or(0, |r| r as u8 + 1),
            backlog_pkts,
            backlog_bytes,
            red_avg,
        };
        if let Err(e) = tracer.log.push(&row) {
            tracer.error = Some(e);
        }
    }

    /// After traced port `p`'s loss element and qdisc were offered `pkt`
    /// (a copy): records its enqueue unless it is among the packets just
    /// dropped.
    pub(crate) fn trace_enqueued(&mut self, p: usize, pkt: &SimPacket) {
        let same = |d: &SimPacket| {
            (d.flow, d.meta.kind, d.meta.seq, d.meta.ack, d.created, d.size)
                == (pkt.flow, pkt.meta.kind, pkt.meta.seq, pkt.meta.ack, pkt.created, pkt.size)
        };
        if !self.dropped.iter().any(|(d, _)| same(d)) {
            self.trace(p, TraceEvent::Enqueue, pkt, None);
        }
    }

    /// Closes the trace files; the first error writing them, if any.
    pub(crate) fn finish_trace(&mut self) -> Result<(), RunError> {
        let Some(tracer) = self.tracer.tracer() else { return Ok(()) };
        if let Some(e) = tracer.error.take() {
            return Err(RunError::Trace(e));
        }
        if let Some(pcap) = &mut tracer.pcap {
            pcap.finish().map_err(RunError::Trace)?;
        }
        tracer.log.finish().map_err(RunError::Trace)
    }
}

/// The headers of flow `f` (`flow`) of `scenario` in the pcapng file.
fn flow_headers(scenario: &Scenario, f: usize, flow: &Flow) -> FlowHeaders {
    let group = &scenario.groups[flow.group];
    let tcp = match &group.transport {
        Transport::Tcp(tcp) => {
            let window = u64::from(tcp.config.window) * u64::from(tcp.config.mss);
            Some((window.min(u64::from(u32::MAX)) as u32, tcp.config.header))
        }
        Transport::Udp(_) => None,
    };
    FlowHeaders { source: host_address(group.src), destination: host_address(group.dst), port: flow_port(f), tcp }
}
