//! Runs a scenario: builds the network, starts the flows, processes events
//! until the end, checks packet conservation and collects the tables.
//!
//! ## A packet's walk
//!
//! A source (UDP) or a TCP sender emits a packet → its host forwards it to
//! the first port of its route → the port's loss element and qdisc admit or
//! drop it → when the transmitter is free the qdisc gives the next packet,
//! which is serialised (`TxDone` frees the transmitter) and propagates
//! (`Arrive` at the far node) → the next port, until the destination host
//! receives it: UDP and TCP data at the flow's destination (which answers
//! TCP data with ACKs along the reverse route), ACKs at the flow's source.
//!
//! TCP timers are events too. A connection keeps at most one pending event
//! per timer: when its deadline moves later, the pending event, on firing,
//! finds the deadline not yet due and does nothing; when it moves earlier,
//! a new event is scheduled and the old one becomes stale.
//!
//! The packet trace's hooks (which ports are traced, and the rows their
//! packets' events make) are in `sim/record.rs`.

use std::ops::ControlFlow;
use std::path::Path;

use phb::classify::{PacketKey, Protocol};
use phb::queue::Departure;
use phb::{DropReason, Qdisc, Rng, Time};

use crate::advice;
use crate::apps::Action;
use crate::engine::{EventList, WheelEventList};
use crate::flow::{Flow, FlowTransport};
use crate::lsp::Lsps;
use crate::measure::{ClassStats, DelayRatioMeter, RatioSummary, Totals};
use crate::net::routing::RoutesBuilder;
use crate::net::{Kind, Meta, Port, PortStats, Routes, SackBlocks, SimPacket, Wires};
use crate::output::RunOutput;
use crate::report;
use crate::scenario::{group_routes, Scenario};
use crate::scope::link_direction;
use crate::tcp::Ack;
use crate::trace::TraceEvent;
use record::{NoTrace, Tracer, Tracing};

mod record;

/// A run that started but did not finish. Always fatal to the run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RunError {
    /// Packets were created or lost without being counted: a simulator bug.
    #[error("packet conservation violated: {0}")]
    Conservation(String),
    /// The progress callback of [`run_with`] asked the run to stop (e.g. on
    /// Ctrl-C) at this simulated time, in seconds.
    #[error("stopped at {0} s of simulated time")]
    Stopped(f64),
    /// The scenario asks for something only a real stack runs
    /// ([`crate::scenario::backend`]).
    #[error("{0}")]
    NotSimulable(String),
    /// The packet trace could not be written (`crate::trace`).
    #[error("writing the trace: {0}")]
    Trace(String),
}

/// A packet offered to a qdisc: when, its codepoint and its size (what
/// [`trace_arrivals`] records).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub time: Time,
    pub codepoint: u8,
    pub size: u32,
}

/// How often (in events) a run reports its progress and may be stopped:
/// every 65,536 events, a few milliseconds of wall-clock time (a power of
/// two: the check is a mask).
const PROGRESS_EVERY_EVENTS: u64 = 1 << 16;

#[derive(Clone, Copy, Debug)]
enum Event {
    /// UDP flow `0` emits a packet.
    Emit(u32),
    /// TCP flow `0` starts (its application first writes).
    Start(u32),
    /// TCP flow `0` reaches its stop time.
    Stop(u32),
    /// TCP flow `0`'s retransmission timer may be due.
    Rto(u32),
    /// TCP flow `0`'s delayed-ACK timer may be due.
    DelAck(u32),
    /// TCP flow `0`'s application asked to be woken.
    AppWake(u32),
    /// Port `0` has finished serialising a packet.
    TxDone(u32),
    /// The packet in slot `0` of the wires reaches the far node.
    Arrive(u32),
    /// Port `0`'s qdisc held packets back (a rate cap) until now.
    PortWake(u32),
    /// Record a time-series sample.
    Sample,
    /// Delay-ratio boundary `0` (an index into `Sim::ratio_ticks`).
    RatioTick(u32),
    /// LSP `0`'s TWAM wants to update (every `α·RTT_LSP`).
    LspTick(u32),
    /// Statistics count from now on.
    WarmupEnd,
}

/// The state of a running simulation. `T` is what it does with the events
/// of traced ports: the simulator is generic over it so that an untraced
/// run ([`NoTrace`]) compiles without any trace code in its loop.
pub(crate) struct Sim<'s, T = NoTrace> {
    pub scenario: &'s Scenario,
    /// The scenario's warnings (`crate::advice`), found from its routes.
    pub warnings: Vec<String>,
    pub now: Time,
    pub end: Time,
    events: WheelEventList<Event>,
    pub ports: Vec<Port>,
    /// The ports' per-class statistics.
    pub port_stats: PortStats,
    routes: Routes,
    pub flows: Vec<Flow>,
    /// End-to-end statistics per class (UDP packets and TCP data).
    pub end_to_end: Vec<ClassStats>,
    class_of_codepoint: [u8; 64],
    /// Reused buffer for the packets a qdisc drops.
    pub(crate) dropped: Vec<(SimPacket, DropReason)>,
    /// The SACK blocks of the ACKs in flight.
    pub(crate) sacks: SackBlocks,
    /// The packets on the wires.
    wires: Wires,
    measuring: bool,
    pub events_processed: u64,
    pub series: report::TimeSeries,
    /// A port whose qdisc's arrivals are recorded, and the record.
    trace: Option<(usize, Vec<Arrival>)>,
    /// The delay ratios `run.delay_ratios` asks for, in its order.
    ratios: Vec<RatioMeter>,
    /// Per boundary series: (meter, timescale index, interval length).
    ratio_ticks: Vec<(usize, usize, Time)>,
    /// The LSPs' ingress machinery.
    pub lsps: Lsps,
    /// The packet trace (`crate::trace`).
    pub(crate) tracer: T,
}

/// A delay-ratio meter and the counters it reads.
struct RatioMeter {
    scope: RatioScope,
    meter: DelayRatioMeter,
}

/// Where a delay-ratio meter's two classes (numerator first) are counted.
enum RatioScope {
    /// Queueing delays at a port: its per-class delay histograms.
    Port { port: usize, classes: [usize; 2] },
    /// End-to-end queueing delays: the received packets of each class's flows.
    EndToEnd { flows: [Vec<usize>; 2] },
}

impl<'s, T: Tracing> Sim<'s, T> {
    /// The network of `scenario` ready to run with `seed`, its trace made
    /// by `tracer` from the ports and flows.
    fn new(
        scenario: &'s Scenario,
        seed: u64,
        tracer: impl FnOnce(&[Port], &[Flow]) -> Result<T, RunError>,
    ) -> Result<Sim<'s, T>, RunError> {
        let classes = scenario.classes.len();
        let mut ports = Vec::with_capacity(2 * scenario.links.len());
        for link in &scenario.links {
            let directions = [
                (link.a, link.b, &link.qdisc_ab, &link.conditioner_ab, link.loss_ab),
                (link.b, link.a, &link.qdisc_ba, &link.conditioner_ba, link.loss_ba),
            ];
            for (from, to, qdisc, conditioner, loss) in directions {
                let (a, b) = (&scenario.nodes[from].name, &scenario.nodes[to].name);
                let rng = Rng::derive_fmt(seed, format_args!("port/{a}->{b}"));
                let q = Qdisc::with_framing(qdisc, link.rate_bps, link.framing, rng);
                let loss_rng = Rng::derive_fmt(seed, format_args!("loss/{a}->{b}"));
                let mut port = Port::new(from, to, link.rate_bps, link.delay, q, loss, loss_rng);
                port.framing = link.framing;
                port.conditioner = conditioner.as_ref().map(|c| {
                    Box::new(c.build_on(link.framing, Rng::derive_fmt(seed, format_args!("conditioner/{a}->{b}"))))
                });
                ports.push(port);
            }
        }
        let group_routes = group_routes(scenario);
        let mut class_of_codepoint = [0u8; 64];
        for (index, class) in scenario.classes.iter().enumerate() {
            class_of_codepoint[class.codepoint as usize] = index as u8;
        }
        let mut routes = RoutesBuilder::default();
        let mut flows = Vec::with_capacity(scenario.groups.iter().map(|g| g.count as usize).sum());
        for (g, (group, path)) in scenario.groups.iter().zip(&group_routes).enumerate() {
            let line_rate_bps = path.data.first().map_or(0, |&port| ports[port].rate_bps);
            let route = routes.add(&path.data);
            let ack_route = match &path.acks {
                None => route,
                Some(back) => routes.add(back),
            };
            let codepoint = scenario.classes[group.class].codepoint;
            for i in 0..group.count {
                let name = if group.count == 1 { group.name.clone() } else { format!("{}.{}", group.name, i) };
                flows.push(Flow::new(name, g, i, group, codepoint, route, ack_route, line_rate_bps, seed));
            }
        }
        let ratios: Vec<RatioMeter> = scenario
            .run
            .delay_ratios
            .iter()
            .map(|def| {
                let classes = [def.numerator, def.denominator];
                let scope = match def.direction {
                    Some((from, to)) => RatioScope::Port {
                        port: ports
                            .iter()
                            .position(|p| (p.from, p.to) == (from, to))
                            .expect("validation guarantees the link direction exists"),
                        classes,
                    },
                    None => RatioScope::EndToEnd {
                        flows: classes.map(|c| (0..flows.len()).filter(|&f| flows[f].class == c).collect()),
                    },
                };
                let meter = DelayRatioMeter::new(&def.timescales, scenario.run.warmup, scenario.run.duration);
                RatioMeter { scope, meter }
            })
            .collect();
        let ratio_ticks = ratios
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.meter.timescales().enumerate().map(move |(j, t)| (i, j, t)))
            .collect();
        let flow_groups: Vec<usize> = flows.iter().map(|f| f.group).collect();
        let directions: Vec<(usize, usize)> = ports.iter().map(|p| (p.from, p.to)).collect();
        let lsps = Lsps::new(scenario, seed, &flow_groups, &directions, |p, l| ports[p].qdisc.listens(l));
        for (p, port) in ports.iter_mut().enumerate() {
            port.lsp_ingress = lsps.is_ingress(p);
        }
        let tracer = tracer(&ports, &flows)?;
        Ok(Sim {
            scenario,
            warnings: advice::warnings(scenario, &group_routes),
            now: Time::ZERO,
            end: scenario.run.duration,
            events: WheelEventList::default(),
            port_stats: PortStats::new(ports.len(), classes),
            ports,
            routes: routes.finish(),
            flows,
            end_to_end: vec![ClassStats::default(); classes],
            class_of_codepoint,
            dropped: Vec::new(),
            sacks: SackBlocks::default(),
            wires: Wires::default(),
            measuring: scenario.run.warmup == Time::ZERO,
            events_processed: 0,
            series: report::TimeSeries::default(),
            trace: None,
            ratios,
            ratio_ticks,
            lsps,
            tracer,
        })
    }

    fn schedule_start(&mut self) {
        for f in 0..self.flows.len() {
            let flow = &mut self.flows[f];
            let (start, stop) = (flow.start, flow.stop);
            match &mut flow.transport {
                FlowTransport::Udp { source, .. } => {
                    let first = start + source.first_gap();
                    if first < stop {
                        self.events.push(first, Event::Emit(f as u32));
                    }
                }
                FlowTransport::Tcp(_) => {
                    if start < stop {
                        self.events.push(start, Event::Start(f as u32));
                        if stop < self.end {
                            self.events.push(stop, Event::Stop(f as u32));
                        }
                    }
                }
            }
        }
        if self.scenario.run.warmup > Time::ZERO {
            self.events.push(self.scenario.run.warmup, Event::WarmupEnd);
        }
        if let Some(interval) = self.scenario.run.sample_interval {
            self.events.push(interval, Event::Sample);
        }
        let warmup = self.scenario.run.warmup;
        if warmup == Time::ZERO {
            self.begin_ratios();
        }
        for (k, &(_, _, length)) in self.ratio_ticks.iter().enumerate() {
            if warmup + length < self.end {
                self.events.push(warmup + length, Event::RatioTick(k as u32));
            }
        }
        for (l, lsp) in self.lsps.lsps.iter().enumerate() {
            let first = lsp.twam.next_update();
            if first < self.end {
                self.events.push(first, Event::LspTick(l as u32));
            }
        }
    }

    /// Runs to the end, or until `progress` breaks (the time it broke at).
    fn run(&mut self, progress: &mut dyn FnMut(f64) -> ControlFlow<()>) -> Result<(), RunError> {
        self.schedule_start();
        if progress(0.0).is_break() {
            return Err(RunError::Stopped(0.0));
        }
        while let Some((time, event)) = self.events.pop() {
            if time >= self.end {
                break;
            }
            self.now = time;
            self.events_processed += 1;
            if self.events_processed & (PROGRESS_EVERY_EVENTS - 1) == 0
                && progress(time.as_secs_f64() / self.end.as_secs_f64()).is_break()
            {
                return Err(RunError::Stopped(time.as_secs_f64()));
            }
            match event {
                Event::Emit(flow) => self.emit(flow as usize),
                Event::Start(flow) => self.tcp_start(flow as usize),
                Event::Stop(flow) => self.tcp_stop(flow as usize),
                Event::Rto(flow) => self.tcp_rto(flow as usize),
                Event::DelAck(flow) => self.tcp_delack(flow as usize),
                Event::AppWake(flow) => self.tcp_app_wake(flow as usize),
                Event::TxDone(port) => {
                    self.ports[port as usize].busy = false;
                    self.start_transmission(port as usize);
                }
                Event::PortWake(port) => {
                    let port = port as usize;
                    self.ports[port].wake_pending = false;
                    if !self.ports[port].busy {
                        self.start_transmission(port);
                    }
                }
                Event::Arrive(slot) => {
                    let (port, pkt) = self.wires.take(slot);
                    let node = self.ports[port as usize].to;
                    if self.tracer.traces(port as usize) {
                        self.trace(port as usize, TraceEvent::Deliver, &pkt, None);
                    }
                    self.forward(node, pkt);
                }
                Event::Sample => {
                    self.sample();
                    let interval = self.scenario.run.sample_interval.expect("sampling is on");
                    self.events.push(self.now + interval, Event::Sample);
                }
                Event::RatioTick(k) => self.ratio_tick(k as usize),
                Event::LspTick(l) => self.lsp_tick(l as usize),
                Event::WarmupEnd => self.end_warmup(),
            }
        }
        self.now = self.end;
        let _ = progress(1.0); // the run is done: nothing left to stop
        Ok(())
    }

    /// The class (index into the scenario's classes) of a codepoint.
    #[inline]
    pub(crate) fn class_of(&self, codepoint: u8) -> usize {
        self.class_of_codepoint[(codepoint & 63) as usize] as usize
    }

    fn packet(&self, f: usize, size: u32, meta: Meta) -> SimPacket {
        SimPacket {
            flow: f as u32,
            class: self.flows[f].codepoint,
            colour: phb::Colour::Green,
            ecn: phb::Ecn::NotEct,
            size,
            created: self.now,
            enqueued: self.now,
            meta,
        }
    }

    fn src_of(&self, f: usize) -> usize {
        self.scenario.groups[self.flows[f].group].src
    }

    fn dst_of(&self, f: usize) -> usize {
        self.scenario.groups[self.flows[f].group].dst
    }

    /// Counts a UDP packet or TCP data segment leaving its source.
    fn count_sent(&mut self, f: usize, size: u32) {
        let flow = &mut self.flows[f];
        flow.total.sent += 1;
        flow.total.sent_bytes += size as u64;
        self.end_to_end[flow.class].arrive(size);
    }

    fn emit(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        let FlowTransport::Udp { source, packet_size, next_seq } = &mut flow.transport else {
            unreachable!("only UDP flows emit")
        };
        let (size, seq) = (*packet_size, *next_seq);
        *next_seq += 1;
        let next = self.now + source.next_gap();
        if next < flow.stop {
            self.events.push(next, Event::Emit(f as u32));
        }
        let route = flow.route;
        let pkt = self.packet(f, size, Meta::udp(route, seq));
        self.count_sent(f, size);
        self.forward(self.src_of(f), pkt);
    }

    fn tcp_start(&mut self, f: usize) {
        let FlowTransport::Tcp(tcp) = &mut self.flows[f].transport else { unreachable!() };
        let action = tcp.app.start(self.now);
        self.tcp_apply(f, action);
    }

    fn tcp_stop(&mut self, f: usize) {
        let FlowTransport::Tcp(tcp) = &mut self.flows[f].transport else { unreachable!() };
        tcp.stopped = true;
        tcp.sender.stop_clock(self.now);
    }

    /// Carries out what the application asked, then sends what TCP allows.
    fn tcp_apply(&mut self, f: usize, action: Action) {
        let now = self.now;
        let FlowTransport::Tcp(tcp) = &mut self.flows[f].transport else { unreachable!() };
        if action.withdraw {
            tcp.sender.stop_writing();
        }
        if action.new_connection {
            tcp.sender.start_new_connection(now);
        }
        if action.push > 0 {
            tcp.sender.push(action.push, now, &mut tcp.out);
        }
        if let Some(wake) = action.wake {
            self.events.push(wake, Event::AppWake(f as u32));
        }
        self.tcp_send(f);
    }

    /// Transmits the segments the sender produced and keeps its timer event.
    fn tcp_send(&mut self, f: usize) {
        let route = self.flows[f].route;
        let FlowTransport::Tcp(tcp) = &mut self.flows[f].transport else { unreachable!() };
        let mut out = std::mem::take(&mut tcp.out);
        let (header, ecn) = (tcp.header, tcp.ecn);
        for seg in out.drain(..) {
            let size = seg.len + header;
            let mut meta = Meta::data(route, seg.seq, seg.len);
            meta.cwr = seg.cwr;
            let mut pkt = self.packet(f, size, meta);
            // RFC 3168 §6.1.5: retransmissions go out not-ECT.
            if ecn && !seg.retransmission {
                pkt.ecn = phb::Ecn::Ect0;
            }
            self.count_sent(f, size);
            self.forward(self.src_of(f), pkt);
        }
        let FlowTransport::Tcp(tcp) = &mut self.flows[f].transport else { unreachable!() };
        tcp.out = out;
        if let Some(deadline) = tcp.sender.rto_deadline() {
            if tcp.rto_event.is_none_or(|pending| deadline < pending) {
                tcp.rto_event = Some(deadline);
                self.events.push(deadline, Event::Rto(f as u32));
            }
        }
    }

    fn tcp_rto(&mut self, f: usize) {
        let now = self.now;
        let FlowTransport::Tcp(tcp) = &mut self.flows[f].transport else { unreachable!() };
        if tcp.rto_event != Some(now) {
            return;
        }
        tcp.rto_event = None;
        if tcp.stopped {
            return;
        }
        if tcp.sender.rto_deadline().is_some_and(|d| d <= now) {
            tcp.sender.on_timeout(now, &mut tcp.out);
        }
        self.tcp_send(f);
    }

    fn tcp_app_wake(&mut self, f: usize) {
        let now = self.now;
        let FlowTransport::Tcp(tcp) = &mut self.flows[f].transport else { unreachable!() };
        if tcp.stopped {
            return;
        }
        let action = tcp.app.on_wake(now, tcp.sender.snd_max());
        self.tcp_apply(f, action);
    }

    fn send_ack(&mut self, f: usize, ack: Ack) {
        let FlowTransport::Tcp(tcp) = &self.flows[f].transport else { unreachable!() };
        let slot = if ack.sack_len > 0 { self.sacks.put(ack.ack, ack.blocks()) } else { 0 };
        let mut meta = Meta::ack(tcp.ack_route, ack.ack, ack.ts_echo.as_nanos(), ack.sack_len, slot);
        meta.ece = ack.ece;
        let pkt = self.packet(f, tcp.header, meta);
        self.flows[f].total.acks_sent += 1;
        self.forward(self.dst_of(f), pkt);
    }

    fn tcp_delack(&mut self, f: usize) {
        let now = self.now;
        let FlowTransport::Tcp(tcp) = &mut self.flows[f].transport else { unreachable!() };
        if tcp.delack_event != Some(now) {
            return;
        }
        tcp.delack_event = None;
        match tcp.receiver.delack_deadline() {
            Some(deadline) if deadline <= now => {
                if let Some(ack) = tcp.receiver.on_delack_timeout() {
                    self.send_ack(f, ack);
                }
            }
            // The timer this event was for was cancelled by an ACK, and a
            // later segment started another: wait for that one (the
            // receiver schedules an event only when none is pending
            // earlier, so without this the segment would wait for the
            // next one, or for the sender's retransmission timeout).
            Some(deadline) => {
                tcp.delack_event = Some(deadline);
                self.events.push(deadline, Event::DelAck(f as u32));
            }
            None => {}
        }
    }

    /// TCP data reaches the destination host.
    fn tcp_receive(&mut self, pkt: &SimPacket) {
        let f = pkt.flow as usize;
        let now = self.now;
        let FlowTransport::Tcp(tcp) = &mut self.flows[f].transport else { unreachable!() };
        tcp.receiver.on_ecn(pkt.ecn == phb::Ecn::Ce, pkt.meta.cwr);
        let ack = tcp.receiver.on_segment(pkt.meta.seq, pkt.meta.payload_len(), pkt.created, now);
        let delivered = tcp.receiver.delivered;
        if let Some(deadline) = tcp.receiver.delack_deadline() {
            if tcp.delack_event.is_none_or(|pending| deadline < pending) {
                tcp.delack_event = Some(deadline);
                self.events.push(deadline, Event::DelAck(f as u32));
            }
        }
        self.flows[f].total.delivered_bytes = delivered;
        if let Some(ack) = ack {
            self.send_ack(f, ack);
        }
    }

    /// A TCP ACK reaches the source host.
    fn tcp_ack_arrives(&mut self, pkt: &SimPacket) {
        let f = pkt.flow as usize;
        let now = self.now;
        self.flows[f].total.acks_received += 1;
        let mut ack =
            Ack { ack: pkt.meta.ack, ts_echo: Time::from_nanos(pkt.meta.seq), ece: pkt.meta.ece, ..Ack::default() };
        ack.sack_len = self.sacks.take(&pkt.meta, &mut ack.sack) as u8;
        let FlowTransport::Tcp(tcp) = &mut self.flows[f].transport else { unreachable!() };
        if tcp.stopped {
            return;
        }
        tcp.sender.on_ack(&ack, now, &mut tcp.out);
        let action = tcp.app.on_acked(tcp.sender.snd_una(), now);
        self.tcp_apply(f, action);
    }

    /// `pkt` is at `node`: send it on its route's next port, or deliver it.
    #[inline]
    fn forward(&mut self, node: usize, mut pkt: SimPacket) {
        match self.routes.next_port(pkt.meta.route, pkt.meta.hop) {
            Some(port) => {
                debug_assert_eq!(self.ports[port].from, node);
                pkt.meta.hop += 1;
                self.enqueue(port, pkt);
            }
            None => self.deliver(pkt),
        }
    }

    /// What the edge conditioner of a port sees of a packet.
    fn packet_key(&self, pkt: &SimPacket) -> PacketKey {
        let f = pkt.flow as usize;
        let group = &self.scenario.groups[self.flows[f].group];
        let (src, dst) = if pkt.meta.kind == Kind::Ack { (group.dst, group.src) } else { (group.src, group.dst) };
        let protocol = if pkt.meta.kind == Kind::Udp { Protocol::Udp } else { Protocol::Tcp };
        PacketKey {
            flow: pkt.flow,
            group: self.flows[f].group as u32,
            src: src as u32,
            dst: dst as u32,
            protocol,
            codepoint: pkt.class,
        }
    }

    fn enqueue(&mut self, p: usize, mut pkt: SimPacket) {
        // The wait at this port counts from here (a packet dropped on arrival waits 0).
        pkt.enqueued = self.now;
        if self.ports[p].conditioner.is_some() {
            let key = self.packet_key(&pkt);
            let conditioner = self.ports[p].conditioner.as_mut().expect("checked");
            let verdict = conditioner.condition(&key, pkt.colour, pkt.size, self.now);
            if let Err(reason) = verdict.apply(&mut pkt) {
                let class = self.class_of_codepoint[(pkt.class & 63) as usize] as usize;
                if self.tracer.traces(p) {
                    self.trace(p, TraceEvent::Arrive, &pkt, None);
                }
                let cells = self.ports[p].framing.cells(pkt.size);
                self.port_stats.at(p, class).arrive_at_link(pkt.size, cells);
                self.dropped.push((pkt, reason));
                self.count_drops(p);
                return;
            }
        }
        if self.ports[p].lsp_ingress {
            self.lsp_ingress(p, &mut pkt);
        }
        let class = self.class_of_codepoint[(pkt.class & 63) as usize] as usize;
        if let Some((traced, arrivals)) = &mut self.trace {
            if *traced == p {
                arrivals.push(Arrival { time: self.now, codepoint: pkt.class, size: pkt.size });
            }
        }
        if self.tracer.traces(p) {
            self.trace(p, TraceEvent::Arrive, &pkt, None);
            let copy = pkt.clone();
            self.admit(p, pkt, class);
            self.trace_enqueued(p, &copy);
        } else {
            self.admit(p, pkt, class);
        }
        self.count_drops(p);
        if !self.ports[p].busy {
            self.start_transmission(p);
        }
    }

    /// Port `p`'s loss element and qdisc are offered `pkt` of `class`; what
    /// they drop waits in `self.dropped`.
    #[inline(always)]
    fn admit(&mut self, p: usize, pkt: SimPacket, class: usize) {
        let port = &mut self.ports[p];
        self.port_stats.at(p, class).arrive_at_link(pkt.size, port.framing.cells(pkt.size));
        if port.loss > 0.0 && port.loss_rng.uniform() < port.loss {
            self.dropped.push((pkt, DropReason::LossModule));
        } else {
            let (flow, kind) = (pkt.flow, pkt.meta.kind);
            if port.qdisc.enqueue(pkt, self.now, &mut self.dropped) {
                self.count_mark(p, class, flow, kind);
            }
        }
    }

    /// A packet enters port `p`, the ingress of some LSP: data of a member
    /// of an LSP whose ingress this is is counted and marked there
    /// ([`Lsps::ingress`]). Runs after the port's conditioner.
    #[inline]
    fn lsp_ingress(&mut self, p: usize, pkt: &mut SimPacket) {
        if pkt.meta.kind == Kind::Ack {
            return;
        }
        if let Some((codepoint, colour)) = self.lsps.ingress(p, pkt.flow, pkt.size, pkt.colour, self.now) {
            pkt.class = codepoint;
            pkt.colour = colour;
        }
    }

    /// LSP `l`'s operating interval ends: TWAM reads its members' windows
    /// (the senders' congestion windows — an oracle — or the passive
    /// estimate), recomputes its marking probabilities and its `W_LSP^cwnd`
    /// goes to the DWRED queues listening on the LSP.
    fn lsp_tick(&mut self, l: usize) {
        let now = self.now;
        let flows = &self.flows;
        let senders = |members: &[usize]| {
            let (mut w, mut s) = (0.0, 0.0);
            for &f in members {
                let flow = &flows[f];
                let Some(tcp) = flow.tcp() else { continue };
                if now < flow.start || tcp.stopped {
                    continue;
                }
                let mss = tcp.sender.mss() as f64;
                let cwnd = tcp.sender.cwnd_uninflated_bytes() / mss;
                let ss = tcp.sender.ssthresh_bytes() / mss;
                w += cwnd;
                s += if ss.is_finite() { ss } else { cwnd };
            }
            (w, s)
        };
        if let Some(w_lsp) = self.lsps.tick(l, now, senders) {
            for &p in self.lsps.listeners(l) {
                self.ports[p].qdisc.signal(l as u32, w_lsp);
            }
        }
        let next = self.lsps.lsps[l].twam.next_update();
        if next < self.end {
            self.events.push(next, Event::LspTick(l as u32));
        }
    }

    /// Counts the packets the qdisc of port `p` (or its loss element) just
    /// dropped.
    fn count_drops(&mut self, p: usize) {
        while let Some((lost, reason)) = self.dropped.pop() {
            if self.tracer.traces(p) {
                self.trace(p, TraceEvent::Drop, &lost, Some(reason));
            }
            let lost_class = self.class_of_codepoint[(lost.class & 63) as usize] as usize;
            let waited = self.waited_in_period(lost.enqueued);
            let cells = self.ports[p].framing.cells(lost.size);
            self.port_stats.at(p, lost_class).drop_at_link(reason, cells, waited);
            let flow = &mut self.flows[lost.flow as usize];
            if lost.meta.kind == Kind::Ack {
                self.sacks.forget(&lost.meta);
                flow.total.acks_lost += 1;
            } else {
                flow.total.lost += 1;
                self.end_to_end[flow.class].drop(reason);
            }
        }
    }

    /// Counts a packet of `class` and `flow` that the qdisc of port `p`
    /// CE-marked instead of dropping (ECN).
    fn count_mark(&mut self, p: usize, class: usize, flow: u32, kind: Kind) {
        self.port_stats.at(p, class).mark();
        let flow = &mut self.flows[flow as usize];
        if kind != Kind::Ack {
            flow.total.marked += 1;
            self.end_to_end[flow.class].mark();
        }
    }

    fn start_transmission(&mut self, p: usize) {
        let port = &mut self.ports[p];
        let next = port.qdisc.dequeue(self.now, &mut self.dropped);
        self.count_drops(p);
        if let Some(Departure { pkt, marked: true }) = &next {
            let class = self.class_of_codepoint[(pkt.class & 63) as usize] as usize;
            self.count_mark(p, class, pkt.flow, pkt.meta.kind);
        }
        let port = &mut self.ports[p];
        let Some(Departure { pkt, .. }) = next else {
            if let Some(wake) = port.qdisc.next_wakeup(self.now) {
                if !port.wake_pending {
                    port.wake_pending = true;
                    self.events.push(wake.max(self.now), Event::PortWake(p as u32));
                }
            }
            return;
        };
        let class = self.class_of_codepoint[(pkt.class & 63) as usize] as usize;
        let wait = (self.now - pkt.enqueued).as_nanos();
        let waited =
            if self.measuring { (self.now - pkt.enqueued.max(self.scenario.run.warmup)).as_nanos() } else { 0 };
        let cells = port.framing.cells(pkt.size);
        self.port_stats.at(p, class).depart_link(pkt.size, cells, wait, waited, self.measuring);
        if self.tracer.traces(p) {
            self.trace(p, TraceEvent::Dequeue, &pkt, None);
        }
        let port = &mut self.ports[p];
        let done = self.now + port.transmission(pkt.size);
        port.busy = true;
        let arrival = done + port.delay;
        let slot = self.wires.put(p as u32, pkt);
        self.events.push(done, Event::TxDone(p as u32));
        self.events.push(arrival, Event::Arrive(slot));
    }

    /// The part of the measured period since `enqueued` (0 during the warm-up).
    #[inline]
    fn waited_in_period(&self, enqueued: Time) -> u64 {
        if self.measuring {
            self.now.saturating_sub(enqueued.max(self.scenario.run.warmup)).as_nanos()
        } else {
            0
        }
    }

    /// The time a packet of `size` bytes spends on `route` besides waiting in
    /// qdiscs: each hop's transmission and propagation (the wire is a FIFO,
    /// so nothing else delays it).
    fn path_latency(&self, route: u32, size: u32) -> Time {
        self.routes
            .get(route)
            .iter()
            .map(|&p| {
                let port = &self.ports[p as usize];
                port.transmission(size) + port.delay
            })
            .fold(Time::ZERO, |sum, t| sum + t)
    }

    fn deliver(&mut self, pkt: SimPacket) {
        if pkt.meta.kind == Kind::Ack {
            self.tcp_ack_arrives(&pkt);
            return;
        }
        let f = pkt.flow as usize;
        if self.flows[f].latency_of_size.0 != pkt.size {
            self.flows[f].latency_of_size = (pkt.size, self.path_latency(pkt.meta.route, pkt.size));
        }
        let flow = &mut self.flows[f];
        let delay = (self.now - pkt.created).as_nanos();
        flow.total.received += 1;
        flow.total.received_bytes += pkt.size as u64;
        flow.total.delay_sum_ns += delay as u128;
        let latency = flow.latency_of_size.1.as_nanos();
        let queueing = delay.checked_sub(latency).expect("a packet's one-way delay includes its path's fixed latency");
        flow.total.queueing_sum_ns += queueing as u128;
        self.end_to_end[flow.class].depart(pkt.size, delay, self.measuring);
        match pkt.meta.kind {
            Kind::Data => self.tcp_receive(&pkt),
            _ => flow.total.delivered_bytes += pkt.size as u64,
        }
    }

    fn end_warmup(&mut self) {
        self.measuring = true;
        for stats in self.port_stats.all_mut().iter_mut().chain(self.end_to_end.iter_mut()) {
            stats.end_warmup();
        }
        for port in &mut self.ports {
            port.qdisc.counters(&mut port.counters_at_warmup);
            port.conditioner_at_warmup = port.conditioner.as_ref().map(|c| c.counts());
        }
        self.begin_ratios();
        let now = self.now;
        for flow in &mut self.flows {
            flow.at_warmup = flow.total;
            if let FlowTransport::Tcp(tcp) = &mut flow.transport {
                tcp.stats_at_warmup = tcp.sender.stats;
                tcp.cwnd_at_warmup = tcp.sender.cwnd_integral(now);
            }
        }
    }

    /// The two classes' cumulative delay figures of delay-ratio meter `i`.
    fn ratio_totals(&self, i: usize) -> Totals {
        match &self.ratios[i].scope {
            RatioScope::Port { port, classes } => Totals::at_link(self.port_stats.of(*port), *classes),
            RatioScope::EndToEnd { flows } => {
                let mut totals = Totals::default();
                for (side, flows) in flows.iter().enumerate() {
                    for &f in flows {
                        totals.sum_ns[side] += self.flows[f].total.queueing_sum_ns;
                        totals.count[side] += self.flows[f].total.received;
                    }
                }
                totals
            }
        }
    }

    /// The measured period begins for every delay-ratio meter.
    fn begin_ratios(&mut self) {
        for i in 0..self.ratios.len() {
            let totals = self.ratio_totals(i);
            self.ratios[i].meter.begin(totals);
        }
    }

    /// A delay-ratio interval ends: its meter takes the totals, and the
    /// next boundary of the series is scheduled.
    fn ratio_tick(&mut self, k: usize) {
        let (i, j, length) = self.ratio_ticks[k];
        let totals = self.ratio_totals(i);
        self.ratios[i].meter.tick(j, totals);
        if self.now + length < self.end {
            self.events.push(self.now + length, Event::RatioTick(k as u32));
        }
    }

    /// Every delay-ratio meter's summaries at the end of the run, in the
    /// order of `run.delay_ratios`.
    pub(crate) fn finish_ratios(&mut self) -> Vec<Vec<RatioSummary>> {
        (0..self.ratios.len())
            .map(|i| {
                let totals = self.ratio_totals(i);
                self.ratios[i].meter.finish(totals)
            })
            .collect()
    }

    fn sample(&mut self) {
        let interval = self.scenario.run.sample_interval.expect("sampling is on");
        let now = self.now;
        let scenario = self.scenario;
        for (p, port) in self.ports.iter().enumerate() {
            self.series.record_port(scenario, now, interval, p, port, self.port_stats.of_mut(p));
        }
        self.series.record_end_to_end(scenario, now, interval, &mut self.end_to_end);
        for flow in &self.flows {
            if let Some(tcp) = flow.tcp().filter(|t| t.trace) {
                self.series.record_tcp(now, &flow.name, tcp);
            }
        }
        for (def, lsp) in scenario.lsps.iter().zip(&self.lsps.lsps) {
            self.series.record_lsp(now, &def.name, &lsp.twam);
        }
    }

    /// Checks that every packet created is received, dropped, queued or on
    /// a wire, and that each port's per-class counts match its qdisc.
    fn check_conservation(&self) -> Result<(), RunError> {
        for (p, port) in self.ports.iter().enumerate() {
            let counted = self.port_stats.counted_backlog(p);
            let queued = port.qdisc.len_packets();
            if counted != queued {
                return Err(RunError::Conservation(format!(
                    "port {}->{}: counters say {counted} packets are queued, the qdisc holds {queued}",
                    self.scenario.nodes[port.from].name, self.scenario.nodes[port.to].name
                )));
            }
        }
        let total = |get: fn(&Flow) -> u64| -> u64 { self.flows.iter().map(get).sum() };
        let sent = total(|f| f.total.sent + f.total.acks_sent);
        let received = total(|f| f.total.received + f.total.acks_received);
        let lost = total(|f| f.total.lost + f.total.acks_lost);
        let dropped_at_ports: u64 = self.port_stats.all().iter().map(|s| s.total.dropped()).sum();
        let queued: u64 = self.ports.iter().map(|p| p.qdisc.len_packets()).sum();
        let on_wires = self.wires.in_flight() as u64;
        if lost != dropped_at_ports || sent != received + lost + queued + on_wires {
            return Err(RunError::Conservation(format!(
                "sent {sent} != received {received} + dropped {lost} (ports counted {dropped_at_ports}) + queued {queued} + on wires {on_wires}"
            )));
        }
        Ok(())
    }
}

/// Runs `scenario` with `seed` (the scenario's own seed when `None`),
/// calling `progress` with the fraction of simulated time done, now and then.
pub fn run(scenario: &Scenario, seed: Option<u64>, progress: &mut dyn FnMut(f64)) -> Result<RunOutput, RunError> {
    run_with(scenario, seed, &mut |fraction| {
        progress(fraction);
        ControlFlow::Continue(())
    })
}

/// [`run`], stopped with [`RunError::Stopped`] when `progress` returns
/// `ControlFlow::Break` (it is called once the network is built, with 0,
/// then every few milliseconds of wall-clock time, so a caller can poll for
/// Ctrl-C there).
pub fn run_with(
    scenario: &Scenario,
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> ControlFlow<()>,
) -> Result<RunOutput, RunError> {
    run_traced(scenario, seed, progress, None)
}

/// [`run_with`], writing the packet trace the scenario's `[trace]` asks for
/// (`crate::trace`) into the directory `trace` (an existing
/// `events.parquet` there is replaced); without a directory the trace
/// section is ignored. A traced run's results are those of the same run
/// untraced.
pub fn run_traced(
    scenario: &Scenario,
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> ControlFlow<()>,
    trace: Option<&Path>,
) -> Result<RunOutput, RunError> {
    if let Some((key, why)) = crate::scenario::backend::unsupported(scenario, crate::scenario::Backend::Simulate) {
        return Err(RunError::NotSimulable(format!("{key}: {why}")));
    }
    let seed = seed.unwrap_or(scenario.run.seed);
    match (trace, &scenario.trace) {
        (Some(dir), Some(def)) => {
            let open = |ports: &[Port], flows: &[Flow]| {
                Tracer::open(scenario, def, ports, flows, dir, seed, env!("CARGO_PKG_VERSION"))
            };
            simulate(Sim::new(scenario, seed, open)?, seed, progress)
        }
        _ => simulate(Sim::new(scenario, seed, |_, _| Ok(NoTrace))?, seed, progress),
    }
}

/// Runs `sim` to the end, closes its trace, checks conservation and
/// collects the tables.
fn simulate<T: Tracing>(
    mut sim: Sim<'_, T>,
    seed: u64,
    progress: &mut dyn FnMut(f64) -> ControlFlow<()>,
) -> Result<RunOutput, RunError> {
    sim.run(progress)?;
    sim.finish_trace()?;
    sim.check_conservation()?;
    let ratios = sim.finish_ratios();
    Ok(report::collect(report::FinishedRun {
        scenario: sim.scenario,
        seed,
        end: sim.end,
        end_to_end: &sim.end_to_end,
        ports: &sim.ports,
        port_stats: &sim.port_stats,
        flows: &mut sim.flows,
        class_of_codepoint: &sim.class_of_codepoint,
        series: std::mem::take(&mut sim.series),
        ratios,
        events: sim.events_processed,
        warnings: std::mem::take(&mut sim.warnings),
    }))
}

/// Runs `scenario` with `seed` and records every packet that arrives at
/// link direction `scope` (`"a->b"`) after its edge conditioner — what its
/// loss element, if any, and its qdisc are offered — in order — to replay a run's
/// real arrivals into a qdisc alone, as the JoBS benchmark does. `None` if
/// the scenario has no such link direction.
pub fn trace_arrivals(scenario: &Scenario, seed: Option<u64>, scope: &str) -> Result<Option<Vec<Arrival>>, RunError> {
    let seed = seed.unwrap_or(scenario.run.seed);
    let mut sim = Sim::new(scenario, seed, |_, _| Ok(NoTrace))?;
    let Some(port) = sim
        .ports
        .iter()
        .position(|p| link_direction(&scenario.nodes[p.from].name, &scenario.nodes[p.to].name) == scope)
    else {
        return Ok(None);
    };
    sim.trace = Some((port, Vec::new()));
    sim.run(&mut |_| ControlFlow::Continue(()))?;
    sim.check_conservation()?;
    Ok(sim.trace.take().map(|(_, arrivals)| arrivals))
}
