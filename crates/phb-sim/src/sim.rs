//! Runs a scenario: builds the network, schedules the sources, processes
//! events until the end, checks packet conservation and collects the tables.
//!
//! ## A packet's walk
//!
//! A source emits (`Emit`) → its host forwards it to the first port of its
//! route → the port's qdisc admits or drops it → when the transmitter is
//! free the qdisc gives the next packet, which is serialised (`TxDone` frees
//! the transmitter) and propagates (`Arrive` at the far node) → the next
//! port, until the destination host receives it.

use phb::{DropReason, Qdisc, Rng, Time};

use crate::engine::{EventList, HeapEventList};
use crate::measure::ClassStats;
use crate::net::routing::{pinned_path, shortest_path, Adjacency};
use crate::net::{Meta, Port, Routes, SimPacket};
use crate::output::RunOutput;
use crate::report;
use crate::scenario::Scenario;
use crate::traffic::Source;

/// A run that started but could not finish correctly. Always fatal.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RunError {
    /// Packets were created or lost without being counted: a simulator bug.
    #[error("packet conservation violated: {0}")]
    Conservation(String),
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// Flow `0` emits a packet.
    Emit(u32),
    /// Port `0` has finished serialising a packet.
    TxDone(u32),
    /// The oldest packet on port `0`'s wire reaches the far node.
    Arrive(u32),
    /// Record a time-series sample.
    Sample,
    /// Statistics count from now on.
    WarmupEnd,
}

/// Per-flow counts since the start of the run.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FlowCounts {
    pub sent: u64,
    pub sent_bytes: u64,
    pub received: u64,
    pub received_bytes: u64,
    pub lost: u64,
    pub delay_sum_ns: u128,
}

impl FlowCounts {
    pub fn since(&self, earlier: &FlowCounts) -> FlowCounts {
        FlowCounts {
            sent: self.sent - earlier.sent,
            sent_bytes: self.sent_bytes - earlier.sent_bytes,
            received: self.received - earlier.received,
            received_bytes: self.received_bytes - earlier.received_bytes,
            lost: self.lost - earlier.lost,
            delay_sum_ns: self.delay_sum_ns - earlier.delay_sum_ns,
        }
    }
}

pub(crate) struct Flow {
    pub name: String,
    pub group: usize,
    pub class: usize,
    pub codepoint: u8,
    pub route: u32,
    pub packet_size: u32,
    pub start: Time,
    pub stop: Time,
    pub source: Source,
    pub next_seq: u64,
    pub total: FlowCounts,
    pub at_warmup: FlowCounts,
}

/// The state of a running simulation.
pub(crate) struct Sim<'s> {
    pub scenario: &'s Scenario,
    pub now: Time,
    pub end: Time,
    events: HeapEventList<Event>,
    pub ports: Vec<Port>,
    routes: Routes,
    pub flows: Vec<Flow>,
    /// End-to-end statistics per class.
    pub end_to_end: Vec<ClassStats>,
    class_of_codepoint: [u8; 64],
    /// Reused buffer for the packets a qdisc drops.
    dropped: Vec<(SimPacket, DropReason)>,
    measuring: bool,
    pub events_processed: u64,
    pub series: report::TimeSeries,
}

impl<'s> Sim<'s> {
    fn new(scenario: &'s Scenario, seed: u64) -> Sim<'s> {
        let classes = scenario.classes.len();
        let mut ports = Vec::with_capacity(2 * scenario.links.len());
        let mut adjacency: Adjacency = vec![Vec::new(); scenario.nodes.len()];
        for link in &scenario.links {
            for (from, to, qdisc) in [(link.a, link.b, &link.qdisc_ab), (link.b, link.a, &link.qdisc_ba)] {
                let index = ports.len();
                let name = format!("port/{}->{}", scenario.nodes[from].name, scenario.nodes[to].name);
                let q = Qdisc::new(qdisc, link.rate_bps, Rng::derive(seed, &name));
                ports.push(Port::new(from, to, link.rate_bps, link.delay, q, classes));
                adjacency[from].push((to, index, link.delay));
            }
        }
        let mut class_of_codepoint = [0u8; 64];
        for (index, class) in scenario.classes.iter().enumerate() {
            class_of_codepoint[class.codepoint as usize] = index as u8;
        }
        let mut routes = Routes::default();
        let mut flows = Vec::new();
        for (g, group) in scenario.groups.iter().enumerate() {
            let path = match &group.path {
                Some(nodes) => pinned_path(&adjacency, nodes),
                None => shortest_path(&adjacency, group.src, group.dst),
            }
            .expect("validation guarantees a path between a flow's hosts");
            let route = routes.add(&path);
            for i in 0..group.count {
                let name = if group.count == 1 { group.name.clone() } else { format!("{}.{}", group.name, i) };
                let source = Source::new(&group.source, Rng::derive(seed, &format!("flow/{name}")));
                flows.push(Flow {
                    name,
                    group: g,
                    class: group.class,
                    codepoint: scenario.classes[group.class].codepoint,
                    route,
                    packet_size: group.source.packet_size(),
                    start: group.start,
                    stop: group.stop,
                    source,
                    next_seq: 0,
                    total: FlowCounts::default(),
                    at_warmup: FlowCounts::default(),
                });
            }
        }
        Sim {
            scenario,
            now: Time::ZERO,
            end: scenario.run.duration,
            events: HeapEventList::default(),
            ports,
            routes,
            flows,
            end_to_end: vec![ClassStats::default(); classes],
            class_of_codepoint,
            dropped: Vec::new(),
            measuring: scenario.run.warmup == Time::ZERO,
            events_processed: 0,
            series: report::TimeSeries::default(),
        }
    }

    fn schedule_start(&mut self) {
        for f in 0..self.flows.len() {
            let flow = &mut self.flows[f];
            let first = flow.start + flow.source.first_gap();
            if first < flow.stop {
                self.events.push(first, Event::Emit(f as u32));
            }
        }
        if self.scenario.run.warmup > Time::ZERO {
            self.events.push(self.scenario.run.warmup, Event::WarmupEnd);
        }
        if let Some(interval) = self.scenario.run.sample_interval {
            self.events.push(interval, Event::Sample);
        }
    }

    fn run(&mut self, progress: &mut dyn FnMut(f64)) {
        self.schedule_start();
        while let Some((time, event)) = self.events.pop() {
            if time >= self.end {
                break;
            }
            self.now = time;
            self.events_processed += 1;
            if self.events_processed & 0xFFFF == 0 {
                progress(time.as_secs_f64() / self.end.as_secs_f64());
            }
            match event {
                Event::Emit(flow) => self.emit(flow as usize),
                Event::TxDone(port) => {
                    self.ports[port as usize].busy = false;
                    self.start_transmission(port as usize);
                }
                Event::Arrive(port) => {
                    let port = &mut self.ports[port as usize];
                    let pkt = port.wire.pop_front().expect("an arrival event has a packet on the wire");
                    let node = port.to;
                    self.forward(node, pkt);
                }
                Event::Sample => {
                    self.sample();
                    let interval = self.scenario.run.sample_interval.expect("sampling is on");
                    self.events.push(self.now + interval, Event::Sample);
                }
                Event::WarmupEnd => self.end_warmup(),
            }
        }
        self.now = self.end;
        progress(1.0);
    }

    fn emit(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        let pkt = SimPacket {
            flow: f as u32,
            class: flow.codepoint,
            colour: phb::Colour::Green,
            size: flow.packet_size,
            created: self.now,
            enqueued: self.now,
            meta: Meta { route: flow.route, hop: 0, seq: flow.next_seq },
        };
        flow.next_seq += 1;
        flow.total.sent += 1;
        flow.total.sent_bytes += pkt.size as u64;
        self.end_to_end[flow.class].arrive();
        let next = self.now + flow.source.next_gap();
        if next < flow.stop {
            self.events.push(next, Event::Emit(f as u32));
        }
        let src = self.scenario.groups[flow.group].src;
        self.forward(src, pkt);
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

    fn enqueue(&mut self, p: usize, pkt: SimPacket) {
        let class = self.class_of_codepoint[(pkt.class & 63) as usize] as usize;
        let port = &mut self.ports[p];
        port.stats[class].arrive();
        port.qdisc.enqueue(pkt, self.now, &mut self.dropped);
        while let Some((lost, reason)) = self.dropped.pop() {
            let lost_class = self.class_of_codepoint[(lost.class & 63) as usize] as usize;
            self.ports[p].stats[lost_class].drop(reason);
            let flow = &mut self.flows[lost.flow as usize];
            flow.total.lost += 1;
            self.end_to_end[flow.class].drop(reason);
        }
        if !self.ports[p].busy {
            self.start_transmission(p);
        }
    }

    fn start_transmission(&mut self, p: usize) {
        let port = &mut self.ports[p];
        let Some(pkt) = port.qdisc.dequeue(self.now) else { return };
        let class = self.class_of_codepoint[(pkt.class & 63) as usize] as usize;
        let wait = (self.now - pkt.enqueued).as_nanos();
        port.stats[class].depart(pkt.size, wait, self.measuring);
        let done = self.now + Time::transmission(pkt.size, port.rate_bps);
        port.busy = true;
        port.wire.push_back(pkt);
        let arrival = done + port.delay;
        self.events.push(done, Event::TxDone(p as u32));
        self.events.push(arrival, Event::Arrive(p as u32));
    }

    fn deliver(&mut self, pkt: SimPacket) {
        let flow = &mut self.flows[pkt.flow as usize];
        let delay = (self.now - pkt.created).as_nanos();
        flow.total.received += 1;
        flow.total.received_bytes += pkt.size as u64;
        flow.total.delay_sum_ns += delay as u128;
        self.end_to_end[flow.class].depart(pkt.size, delay, self.measuring);
    }

    fn end_warmup(&mut self) {
        self.measuring = true;
        for stats in self.ports.iter_mut().flat_map(|p| p.stats.iter_mut()).chain(self.end_to_end.iter_mut()) {
            stats.end_warmup();
        }
        for flow in &mut self.flows {
            flow.at_warmup = flow.total;
        }
    }

    fn sample(&mut self) {
        let interval = self.scenario.run.sample_interval.expect("sampling is on");
        let now = self.now;
        let scenario = self.scenario;
        for port in &mut self.ports {
            self.series.record_port(scenario, now, interval, port);
        }
        self.series.record_end_to_end(scenario, now, interval, &mut self.end_to_end);
    }

    /// Checks that every packet created is received, dropped, queued or on
    /// a wire, and that each port's per-class counts match its qdisc.
    fn check_conservation(&self) -> Result<(), RunError> {
        for port in &self.ports {
            let counted = port.counted_backlog();
            let queued = port.qdisc.len_packets();
            if counted != queued {
                return Err(RunError::Conservation(format!(
                    "port {}->{}: counters say {counted} packets are queued, the qdisc holds {queued}",
                    self.scenario.nodes[port.from].name, self.scenario.nodes[port.to].name
                )));
            }
        }
        let sent: u64 = self.flows.iter().map(|f| f.total.sent).sum();
        let received: u64 = self.flows.iter().map(|f| f.total.received).sum();
        let lost: u64 = self.flows.iter().map(|f| f.total.lost).sum();
        let dropped_at_ports: u64 = self.ports.iter().flat_map(|p| &p.stats).map(|s| s.total.dropped()).sum();
        let queued: u64 = self.ports.iter().map(|p| p.qdisc.len_packets()).sum();
        let on_wires: u64 = self.ports.iter().map(|p| p.wire.len() as u64).sum();
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
    let seed = seed.unwrap_or(scenario.run.seed);
    let mut sim = Sim::new(scenario, seed);
    sim.run(progress);
    sim.check_conservation()?;
    Ok(report::collect(&mut sim, seed))
}
