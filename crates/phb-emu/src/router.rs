//! The forwarding loop: real packets through the scenario's links and
//! qdiscs, in real time.
//!
//! One thread serves every port. Each turn of the loop it
//! 1. delivers the packets whose propagation ends by `now` (a wire is a
//!    FIFO: its delay is fixed) — to the next port of the packet's route,
//!    or, at its destination host, into that host's TUN device;
//! 2. starts transmissions on the ports whose transmitter is free;
//! 3. reads what the hosts sent (up to [`READ_BATCH`] packets per device);
//! 4. sleeps in `ppoll` until a device is readable or the earliest timer
//!    (a wire's next arrival, a transmitter becoming free, a qdisc's wake-up,
//!    the end of the warm-up or of the run, a time-series sample, a
//!    delay-ratio interval's end).
//!
//! The time series (`run.sample_interval`) and the delay-ratio meters
//! (`run.delay_ratios`) are the simulator's own ([`TimeSeries`],
//! [`DelayRatioMeter`]), fed at their nominal times (`k·interval`) from the
//! loop's timers.
//!
//! A transmission starts at the ideal time, not at the time the loop
//! noticed: `max(when the transmitter became free, when the packet
//! arrived)`, so a backlogged link sends at exactly its rate on average
//! whatever the wake-up latency; the latency shows as a lateness of the
//! deliveries, measured against their ideal times (`lateness`).
//!
//! Packets of no flow of the scenario between a program host and another
//! host (`plan.rs`'s module doc: a command's, a `--shell` program's) are
//! forwarded the same way as [`OTHER`] packets: their class is the one
//! their source's (else destination's) commands give, written into the
//! header, else their codepoint's; they are counted in the links' class
//! rows, not in the flows' or end-to-end rows, and in [`EmuStats`].
//!
//! Packets live in a pool of fixed buffers allocated at start: a packet in
//! a qdisc or on a wire is a [`Packet`] whose [`Meta`] names its buffer, so
//! the loop allocates nothing per packet (the qdiscs' and wires' queues grow
//! to their high-water mark once).
//!
//! A packet trace (`[trace]`, [`crate::trace`]) is fed where the simulator
//! feeds its own: arrival at a port (after its edge conditioner), enqueue,
//! each drop, the start of transmission and the end of propagation. Without
//! one, each of these places tests one `Option` of the router.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd};

use phb::classify::{Conditioner, ConditionerCounts, PacketKey, Protocol};
use phb::queue::{Counter, Dropped};
use phb::{Colour, DropReason, Framing, Packet, Qdisc, Rng, Time};
use phb_sim::lsp::Lsps;
use phb_sim::measure::histogram::DelayHistogram;
use phb_sim::measure::{ClassStats, DelayRatioMeter, RatioSummary, Totals};
use phb_sim::scenario::Scenario;
use phb_sim::trace::TraceEvent;
use phb_sim::{ClassRows, ConditionerRows, CounterRows, FlowCounts, PortAt, Table, TimeSeries};

use crate::ipv4;
use crate::plan::{node_of_addr, Plan, BASE_PORT};
use crate::sys;
use crate::trace::{Seen, Trace};

/// The flow number of programs' packets (no flow of the scenario).
pub const OTHER: u32 = u32::MAX;

/// Bytes per packet buffer: more than the TUN devices' MTU.
pub const BUFFER: usize = 2048;
/// The most packets read from one device per turn of the loop.
pub const READ_BATCH: usize = 64;

/// What the router keeps of a packet beside what the qdiscs see.
#[derive(Clone, Copy, Debug)]
pub struct Meta {
    /// Its buffer in the pool.
    slot: u32,
    /// Route index and the hop it is on.
    route: u32,
    hop: u16,
    /// The reverse direction of its flow (a TCP ACK or any packet sent by
    /// the flow's destination).
    reverse: bool,
    /// Its number among its flow's packets in its direction (the trace's
    /// `seq` of a UDP packet).
    number: u32,
    /// Time spent waiting in qdiscs so far.
    queueing: Time,
}

type EmuPacket = Packet<Meta>;

/// Fixed packet buffers and the list of free ones.
struct Pool {
    buffers: Vec<[u8; BUFFER]>,
    free: Vec<u32>,
}

impl Pool {
    fn new(slots: usize) -> Pool {
        Pool { buffers: vec![[0; BUFFER]; slots], free: (0..slots as u32).rev().collect() }
    }
}

/// One direction of a link.
struct Port {
    from: usize,
    to: usize,
    rate_bps: u64,
    delay: Time,
    /// How the link carries packets (AAL5 cells or as they are): the
    /// serialisation time and the cell counts of its buffers and rows.
    framing: Framing,
    qdisc: Qdisc<Meta>,
    conditioner: Option<Conditioner>,
    /// Some LSP's ingress is this port: its marker and passive estimator
    /// see the members' data entering here.
    lsp_ingress: bool,
    loss: f64,
    loss_rng: Rng,
    /// When the transmitter finishes the packet it is sending.
    free_at: Time,
    /// Packets serialised, with the time their propagation ends.
    wire: VecDeque<(Time, EmuPacket)>,
    stats: Vec<ClassStats>,
    /// The qdisc's own counters and the conditioner's when the warm-up
    /// ended (empty, `None`, before), for the `counters` and `conditioners`
    /// tables.
    counters_at_warmup: Vec<Counter>,
    conditioner_at_warmup: Option<ConditionerCounts>,
}

/// Counters of the emulator itself.
#[derive(Debug, Default)]
pub struct EmuStats {
    /// Deliveries' lateness against their ideal times (ns).
    pub lateness: DelayHistogram,
    /// Packets forwarded (each hop counted).
    pub forwarded: u64,
    /// Packets read that belong to no flow and go between no program host
    /// and another host (not forwarded).
    pub foreign: u64,
    /// Programs' packets read (forwarded), and delivered to their host.
    pub other_packets: u64,
    pub other_delivered: u64,
    /// Packets read while every buffer was in use (dropped).
    pub pool_exhausted: u64,
    /// Packets a host's TUN device refused.
    pub write_errors: u64,
    /// Turns of the loop.
    pub turns: u64,
}

/// Where a delay ratio is measured.
enum RatioScope {
    /// The two classes' waits in a port's qdisc.
    Port { port: usize, classes: [usize; 2] },
    /// The two classes' queueing delays over their paths.
    EndToEnd { classes: [usize; 2] },
}

/// One `run.delay_ratios` entry: its meter and each timescale's next
/// interval boundary.
struct Ratio {
    scope: RatioScope,
    meter: DelayRatioMeter,
    next: Vec<Time>,
}

/// The router: ports, routes, the hosts' devices and every counter.
pub struct Router<'s> {
    scenario: &'s Scenario,
    plan: &'s Plan,
    ports: Vec<Port>,
    /// Per node: its TUN device, for hosts.
    tun: Vec<Option<OwnedFd>>,
    pool: Pool,
    dropped: Dropped<Meta>,
    class_of_codepoint: [usize; 64],
    warm: bool,
    /// Per flow, as the router sees it (`delivered_bytes`: the transport
    /// payload received, TCP retransmissions included; `acks_received`: the
    /// reverse packets written to the source's device).
    pub flows: Vec<FlowCounts>,
    pub flows_at_warmup: Vec<FlowCounts>,
    pub end_to_end: Vec<ClassStats>,
    pub emu: EmuStats,
    /// The time series' next sample (`None` without `run.sample_interval`).
    next_sample: Option<Time>,
    pub series: TimeSeries,
    ratios: Vec<Ratio>,
    /// The LSPs' ingress machinery (the simulator's, [`Lsps`]), their
    /// members' windows the passive estimate.
    lsps: Lsps,
    /// Each delay ratio's summaries, once the run has ended.
    pub ratio_summaries: Vec<Vec<RatioSummary>>,
    /// How long before a timer the loop stops sleeping and polls ([`sys::wait`]).
    pub spin: Time,
    /// The packet trace, if the scenario asks for one.
    pub trace: Option<Box<Trace>>,
}

impl<'s> Router<'s> {
    /// A router for `scenario`, with `tun[n]` the device of host node `n`.
    pub fn new(scenario: &'s Scenario, plan: &'s Plan, seed: u64, tun: Vec<Option<OwnedFd>>, slots: usize) -> Self {
        let classes = scenario.classes.len();
        let mut ports = Vec::with_capacity(2 * scenario.links.len());
        for link in &scenario.links {
            let directions = [
                (link.a, link.b, &link.qdisc_ab, &link.conditioner_ab, link.loss_ab),
                (link.b, link.a, &link.qdisc_ba, &link.conditioner_ba, link.loss_ba),
            ];
            for (from, to, qdisc, conditioner, loss) in directions {
                let name = format!("{}->{}", scenario.nodes[from].name, scenario.nodes[to].name);
                ports.push(Port {
                    from,
                    to,
                    rate_bps: link.rate_bps,
                    delay: link.delay,
                    framing: link.framing,
                    qdisc: Qdisc::with_framing(
                        qdisc,
                        link.rate_bps,
                        link.framing,
                        Rng::derive(seed, &format!("port/{name}")),
                    ),
                    conditioner: conditioner
                        .as_ref()
                        .map(|c| c.build_on(link.framing, Rng::derive(seed, &format!("conditioner/{name}")))),
                    lsp_ingress: false,
                    loss,
                    loss_rng: Rng::derive(seed, &format!("loss/{name}")),
                    free_at: Time::ZERO,
                    wire: VecDeque::with_capacity(1024),
                    stats: vec![ClassStats::default(); classes],
                    counters_at_warmup: Vec::new(),
                    conditioner_at_warmup: None,
                });
            }
        }
        let mut class_of_codepoint = [0; 64];
        for (index, class) in scenario.classes.iter().enumerate() {
            class_of_codepoint[class.codepoint as usize] = index;
        }
        let run = &scenario.run;
        let ratios = run
            .delay_ratios
            .iter()
            .map(|def| {
                let classes = [def.numerator, def.denominator];
                let scope = match def.direction {
                    Some(direction) => RatioScope::Port {
                        port: ports
                            .iter()
                            .position(|p| (p.from, p.to) == direction)
                            .expect("validation guarantees the link direction exists"),
                        classes,
                    },
                    None => RatioScope::EndToEnd { classes },
                };
                let meter = DelayRatioMeter::new(&def.timescales, run.warmup, run.duration);
                let next = def.timescales.iter().map(|&length| run.warmup + length).collect();
                Ratio { scope, meter, next }
            })
            .collect();
        let flow_groups: Vec<usize> = plan.flows.iter().map(|f| f.group).collect();
        let directions: Vec<(usize, usize)> = ports.iter().map(|p| (p.from, p.to)).collect();
        let lsps = Lsps::new(scenario, seed, &flow_groups, &directions, |p, l| ports[p].qdisc.listens(l));
        for (p, port) in ports.iter_mut().enumerate() {
            port.lsp_ingress = lsps.is_ingress(p);
        }
        Router {
            scenario,
            plan,
            ports,
            tun,
            pool: Pool::new(slots),
            dropped: Vec::with_capacity(64),
            class_of_codepoint,
            warm: false,
            flows: vec![FlowCounts::default(); plan.flows.len()],
            flows_at_warmup: vec![FlowCounts::default(); plan.flows.len()],
            end_to_end: vec![ClassStats::default(); classes],
            emu: EmuStats::default(),
            next_sample: run.sample_interval,
            series: TimeSeries::default(),
            ratios,
            lsps,
            ratio_summaries: Vec::new(),
            spin: Time::ZERO,
            trace: None,
        }
    }

    /// Runs from `epoch` (the monotonic time of the run's time 0) until
    /// run time `until` or the run's duration has passed, SIGINT/SIGTERM
    /// arrives or a child process ends; returns the time reached.
    pub fn run(&mut self, epoch: Time, until: Time) -> Time {
        let end = self.scenario.run.duration;
        let warmup = self.scenario.run.warmup;
        let hosts: Vec<usize> = (0..self.tun.len()).filter(|&n| self.tun[n].is_some()).collect();
        let mut pollfds: Vec<libc::pollfd> = hosts
            .iter()
            .map(|&n| libc::pollfd {
                fd: self.tun[n].as_ref().expect("a host").as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        loop {
            let now = sys::monotonic().saturating_sub(epoch);
            if sys::stop_requested() || sys::child_ended() {
                return now.min(end);
            }
            if now >= end {
                self.finish_ratios();
                return end;
            }
            if now >= until {
                return now;
            }
            self.emu.turns += 1;
            if !self.warm && now >= warmup {
                self.end_warmup();
            }
            self.run_timers(now);
            // Transmitters whose packet ended while the router slept take
            // their next packet from what was queued before any arrival of
            // this turn is enqueued: a later arrival chosen first (a higher
            // priority's) would start at its arrival, and the link would lose
            // the time since `free_at` for good (it never catches up while
            // backlogged).
            for p in 0..self.ports.len() {
                self.transmit(p, now);
            }
            for p in 0..self.ports.len() {
                self.service_port(p, now);
            }
            for (i, &host) in hosts.iter().enumerate() {
                if pollfds[i].revents & libc::POLLIN != 0 {
                    self.read_host(host, now);
                }
            }
            let mut deadline = if self.warm { end } else { warmup }.min(until);
            deadline = deadline.min(self.next_sample.unwrap_or(end));
            for ratio in &self.ratios {
                deadline = ratio.next.iter().fold(deadline, |d, &t| d.min(t));
            }
            for lsp in &self.lsps.lsps {
                deadline = deadline.min(lsp.twam.next_update());
            }
            for port in &self.ports {
                if let Some(&(arrive, _)) = port.wire.front() {
                    deadline = deadline.min(arrive);
                }
                if port.qdisc.len_packets() > 0 {
                    deadline = deadline.min(port.free_at.max(port.qdisc.next_wakeup(now).unwrap_or(now)));
                }
            }
            for fd in pollfds.iter_mut() {
                fd.revents = 0;
            }
            sys::wait(&mut pollfds, Some(epoch + deadline), self.spin);
        }
    }

    fn end_warmup(&mut self) {
        self.warm = true;
        self.flows_at_warmup.copy_from_slice(&self.flows);
        for stats in self.end_to_end.iter_mut().chain(self.ports.iter_mut().flat_map(|p| p.stats.iter_mut())) {
            stats.end_warmup();
        }
        for i in 0..self.ratios.len() {
            let totals = self.ratio_totals(i);
            self.ratios[i].meter.begin(totals);
        }
        for port in &mut self.ports {
            port.qdisc.counters(&mut port.counters_at_warmup);
            port.conditioner_at_warmup = port.conditioner.as_ref().map(|c| c.counts());
        }
    }

    /// Takes the time-series samples, closes the delay-ratio intervals and
    /// ends the LSPs' operating intervals whose nominal times have come.
    fn run_timers(&mut self, now: Time) {
        let end = self.scenario.run.duration;
        for l in 0..self.lsps.lsps.len() {
            loop {
                let at = self.lsps.lsps[l].twam.next_update();
                if at > now || at >= end {
                    break;
                }
                let senders = |_: &[usize]| unreachable!("validation refuses an LSP reading the senders' windows");
                if let Some(w_lsp) = self.lsps.tick(l, at, senders) {
                    for &p in self.lsps.listeners(l) {
                        self.ports[p].qdisc.signal(l as u32, w_lsp);
                    }
                }
            }
        }
        if let (Some(at), Some(interval)) = (self.next_sample, self.scenario.run.sample_interval) {
            if at <= now {
                self.sample(at, interval);
                self.next_sample = Some(at + interval).filter(|&t| t < end);
            }
        }
        for i in 0..self.ratios.len() {
            for j in 0..self.ratios[i].next.len() {
                while self.warm && self.ratios[i].next[j] <= now && self.ratios[i].next[j] < end {
                    let totals = self.ratio_totals(i);
                    let ratio = &mut self.ratios[i];
                    ratio.meter.tick(j, totals);
                    let length = ratio.meter.timescales().nth(j).expect("one per timescale");
                    ratio.next[j] += length;
                }
            }
        }
    }

    /// One time-series sample at time `at`: every link direction and end to end.
    fn sample(&mut self, at: Time, interval: Time) {
        let scenario = self.scenario;
        for (p, port) in self.ports.iter_mut().enumerate() {
            let scope = format!("{}->{}", scenario.nodes[port.from].name, scenario.nodes[port.to].name);
            let config = scenario.port_qdisc(p);
            let cells = port.framing.has_cells();
            self.series.record_link(scenario, at, interval, &scope, &port.qdisc, config, cells, &mut port.stats);
        }
        self.series.record_end_to_end(scenario, at, interval, &mut self.end_to_end);
        for (def, lsp) in scenario.lsps.iter().zip(&self.lsps.lsps) {
            self.series.record_lsp(at, &def.name, &lsp.twam);
        }
    }

    /// The two classes' cumulative queueing-delay figures of delay ratio `i`.
    fn ratio_totals(&self, i: usize) -> Totals {
        match self.ratios[i].scope {
            RatioScope::Port { port, classes } => Totals::at_link(&self.ports[port].stats, classes),
            RatioScope::EndToEnd { classes } => {
                let mut totals = Totals::default();
                for (counts, flow) in self.flows.iter().zip(&self.plan.flows) {
                    if let Some(side) = classes.iter().position(|&c| c == flow.class) {
                        totals.sum_ns[side] += counts.queueing_sum_ns;
                        totals.count[side] += counts.received;
                    }
                }
                totals
            }
        }
    }

    /// The run has reached its end: every delay ratio's summaries.
    fn finish_ratios(&mut self) {
        self.ratio_summaries = (0..self.ratios.len())
            .map(|i| {
                let totals = self.ratio_totals(i);
                self.ratios[i].meter.finish(totals)
            })
            .collect();
    }

    /// Delivers port `p`'s packets whose propagation has ended, then starts
    /// transmissions while its transmitter is free.
    fn service_port(&mut self, p: usize, now: Time) {
        while let Some(&(arrive, _)) = self.ports[p].wire.front() {
            if arrive > now {
                break;
            }
            let (_, pkt) = self.ports[p].wire.pop_front().expect("checked");
            self.emu.lateness.record((now - arrive).as_nanos());
            if let Some(scope) = self.traced(p) {
                self.record(scope, p, TraceEvent::Deliver, &pkt, arrive, None);
            }
            let to = self.ports[p].to;
            self.arrive(to, pkt, now);
        }
        self.transmit(p, now);
    }

    /// Starts transmissions on port `p` while its transmitter is free at `now`.
    fn transmit(&mut self, p: usize, now: Time) {
        while self.ports[p].free_at <= now {
            let port = &mut self.ports[p];
            let next = port.qdisc.dequeue(now, &mut self.dropped);
            self.count_drops(p, now);
            let Some(phb::queue::Departure { mut pkt, marked }) = next else {
                return;
            };
            let port = &mut self.ports[p];
            let start = port.free_at.max(pkt.enqueued).min(now);
            let wait = start.saturating_sub(pkt.enqueued);
            pkt.meta.queueing += wait;
            let class = self.class_of_codepoint[usize::from(pkt.class & 63)];
            let waited =
                if self.warm { start.saturating_sub(pkt.enqueued.max(self.scenario.run.warmup)) } else { Time::ZERO };
            let cells = port.framing.cells(pkt.size);
            port.stats[class].depart_link(pkt.size, cells, wait.as_nanos(), waited.as_nanos(), self.warm);
            let done = start + Time::transmission(port.framing.wire_bytes(pkt.size), port.rate_bps);
            port.free_at = done;
            let (flow, reverse, slot) = (pkt.flow, pkt.meta.reverse, pkt.meta.slot);
            if marked {
                self.mark(p, class, flow, reverse, slot);
            }
            if let Some(scope) = self.traced(p) {
                self.record(scope, p, TraceEvent::Dequeue, &pkt, start, None);
            }
            let port = &mut self.ports[p];
            port.wire.push_back((done + port.delay, pkt));
            self.emu.forwarded += 1;
        }
    }

    /// A packet reaches `node`: forwarded, or delivered at its host.
    fn arrive(&mut self, node: usize, mut pkt: EmuPacket, now: Time) {
        pkt.meta.hop += 1;
        match self.plan.routes.next_port(pkt.meta.route, u32::from(pkt.meta.hop)) {
            Some(p) => self.enqueue(p, pkt, now),
            None => self.deliver(node, pkt, now),
        }
    }

    fn deliver(&mut self, node: usize, pkt: EmuPacket, now: Time) {
        let slot = pkt.meta.slot as usize;
        let bytes = &self.pool.buffers[slot][..pkt.size as usize];
        let fd = self.tun[node].as_ref().expect("routes end at hosts").as_raw_fd();
        // SAFETY: `bytes` is a valid buffer of its length.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if written != bytes.len() as isize {
            self.emu.write_errors += 1;
        }
        if pkt.flow == OTHER {
            self.emu.other_delivered += 1;
            self.pool.free.push(pkt.meta.slot);
            return;
        }
        let tcp = self.plan.flows[pkt.flow as usize].tcp;
        let flow = &mut self.flows[pkt.flow as usize];
        if pkt.meta.reverse {
            flow.acks_received += u64::from(tcp);
        } else {
            let delay = now - pkt.created;
            flow.received += 1;
            flow.received_bytes += u64::from(pkt.size);
            flow.delivered_bytes += if tcp { payload_len(bytes) as u64 } else { u64::from(pkt.size) };
            flow.delay_sum_ns += u128::from(delay.as_nanos());
            flow.queueing_sum_ns += u128::from(pkt.meta.queueing.as_nanos());
            let class = self.plan.flows[pkt.flow as usize].class;
            self.end_to_end[class].depart(pkt.size, delay.as_nanos(), self.warm);
        }
        self.pool.free.push(pkt.meta.slot);
    }

    /// Reads what host `host` sent, up to a batch.
    fn read_host(&mut self, host: usize, now: Time) {
        let fd = self.tun[host].as_ref().expect("a host").as_raw_fd();
        for _ in 0..READ_BATCH {
            let Some(slot) = self.pool.free.pop() else {
                let mut scratch = [0u8; BUFFER];
                // SAFETY: reading into a local buffer of its length.
                if unsafe { libc::read(fd, scratch.as_mut_ptr().cast(), BUFFER) } > 0 {
                    self.emu.pool_exhausted += 1;
                    continue;
                }
                return;
            };
            let buffer = &mut self.pool.buffers[slot as usize];
            // SAFETY: reading into a pool buffer of its length.
            let n = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), BUFFER) };
            if n <= 0 {
                self.pool.free.push(slot);
                return;
            }
            match self.admit(host, slot, n as usize, now) {
                Some((p, pkt)) => self.enqueue(p, pkt, now),
                None => {
                    self.emu.foreign += 1;
                    self.pool.free.push(slot);
                }
            }
        }
    }

    /// The packet host `host` just sent in `slot`, with its first port, if
    /// it belongs to a flow of the scenario.
    fn admit(&mut self, host: usize, slot: u32, len: usize, now: Time) -> Option<(usize, EmuPacket)> {
        let header = ipv4::parse(&self.pool.buffers[slot as usize][..len])?;
        let flows = &self.plan.flows;
        let flow_at = |port: u16| port.checked_sub(BASE_PORT).map(usize::from).filter(|&f| f < flows.len());
        let src = node_of_addr(header.src)?;
        let dst = node_of_addr(header.dst)?;
        let (f, reverse) = match (flow_at(header.src_port), flow_at(header.dst_port)) {
            (Some(f), _) if flows[f].src == host && src == host && flows[f].dst == dst => (f, false),
            (_, Some(f)) if flows[f].dst == host && src == host && flows[f].src == dst => (f, true),
            _ => return self.admit_other(host, header, slot, len, now),
        };
        let plan = &flows[f];
        if header.protocol != (if plan.tcp { Protocol::Tcp } else { Protocol::Udp }) {
            return self.admit_other(host, header, slot, len, now);
        }
        let route = if reverse { plan.route_rev } else { plan.route_fwd };
        let first = self.plan.routes.next_port(route, 0)?;
        let size = len as u32;
        if let Some(trace) = self.trace.as_deref_mut() {
            trace.sent(f, reverse, &self.pool.buffers[slot as usize][..len]);
        }
        let counts = &mut self.flows[f];
        let number = if reverse { 0 } else { counts.sent as u32 };
        let is_ack = reverse && plan.tcp;
        if reverse {
            counts.acks_sent += u64::from(is_ack);
        } else {
            counts.sent += 1;
            counts.sent_bytes += u64::from(size);
            self.end_to_end[plan.class].arrive(size);
        }
        let meta = Meta { slot, route, hop: 0, reverse, number, queueing: Time::ZERO };
        let pkt = Packet {
            flow: f as u32,
            class: header.dscp,
            colour: Colour::Green,
            ecn: header.ecn,
            size,
            created: now,
            enqueued: now,
            meta,
        };
        Some((first, pkt))
    }

    /// A programs' packet with `header` that host `host` just sent in
    /// `slot`, with its first port, if it goes from `host` to another host
    /// and one of them is a program host (module doc). Its class's
    /// codepoint is written into it.
    fn admit_other(
        &mut self,
        host: usize,
        header: ipv4::Header,
        slot: u32,
        len: usize,
        now: Time,
    ) -> Option<(usize, EmuPacket)> {
        let (src, dst) = (node_of_addr(header.src)?, node_of_addr(header.dst)?);
        let programs = &self.plan.programs;
        let route = programs.route(src, dst).filter(|_| src == host)?;
        let first = self.plan.routes.next_port(route, 0)?;
        let class = match programs.codepoint(src, dst) {
            Some(codepoint) if codepoint != header.dscp => {
                ipv4::set_dscp(&mut self.pool.buffers[slot as usize], codepoint);
                codepoint
            }
            _ => header.dscp,
        };
        self.emu.other_packets += 1;
        let meta = Meta { slot, route, hop: 0, reverse: false, number: 0, queueing: Time::ZERO };
        let (size, ecn) = (len as u32, header.ecn);
        let pkt = Packet { flow: OTHER, class, colour: Colour::Green, ecn, size, created: now, enqueued: now, meta };
        Some((first, pkt))
    }

    /// Port `p`'s ingress: conditioner, loss element, qdisc; then the
    /// transmitter starts if it is free.
    fn enqueue(&mut self, p: usize, mut pkt: EmuPacket, now: Time) {
        pkt.enqueued = now;
        let arrived_with = pkt.class;
        if self.ports[p].conditioner.is_some() {
            let key = self.packet_key(&pkt);
            let conditioner = self.ports[p].conditioner.as_mut().expect("checked");
            let verdict = conditioner.condition(&key, pkt.colour, pkt.size, now);
            if let Err(reason) = verdict.apply(&mut pkt) {
                let class = self.class_of_codepoint[usize::from(pkt.class & 63)];
                let port = &mut self.ports[p];
                port.stats[class].arrive_at_link(pkt.size, port.framing.cells(pkt.size));
                if let Some(scope) = self.traced(p) {
                    self.record(scope, p, TraceEvent::Arrive, &pkt, now, None);
                }
                self.dropped.push((pkt, reason));
                self.count_drops(p, now);
                return;
            }
        }
        if self.ports[p].lsp_ingress && self.is_data(&pkt) {
            if let Some((codepoint, colour)) = self.lsps.ingress(p, pkt.flow, pkt.size, pkt.colour, now) {
                pkt.class = codepoint;
                pkt.colour = colour;
            }
        }
        if pkt.class != arrived_with {
            ipv4::set_dscp(&mut self.pool.buffers[pkt.meta.slot as usize], pkt.class);
        }
        let class = self.class_of_codepoint[usize::from(pkt.class & 63)];
        let traced = self.traced(p);
        if let Some(scope) = traced {
            self.record(scope, p, TraceEvent::Arrive, &pkt, now, None);
        }
        let copy = traced.map(|_| pkt.clone());
        let port = &mut self.ports[p];
        port.stats[class].arrive_at_link(pkt.size, port.framing.cells(pkt.size));
        if port.loss > 0.0 && port.loss_rng.uniform() < port.loss {
            self.dropped.push((pkt, DropReason::LossModule));
        } else {
            let (flow, reverse, slot) = (pkt.flow, pkt.meta.reverse, pkt.meta.slot);
            if port.qdisc.enqueue(pkt, now, &mut self.dropped) {
                self.mark(p, class, flow, reverse, slot);
            }
        }
        if let (Some(scope), Some(copy)) = (traced, copy) {
            if !self.dropped.iter().any(|(d, _)| d.meta.slot == copy.meta.slot) {
                self.record(scope, p, TraceEvent::Enqueue, &copy, now, None);
            }
        }
        self.count_drops(p, now);
        self.transmit(p, now);
    }

    /// Whether `pkt` is data of a flow of the scenario, as the simulator's
    /// LSP ingress counts it: a UDP packet, or a TCP segment in the flow's
    /// direction that carries payload (not the handshake's or a bare ACK).
    fn is_data(&self, pkt: &EmuPacket) -> bool {
        if pkt.meta.reverse || pkt.flow == OTHER {
            return false;
        }
        !self.plan.flows[pkt.flow as usize].tcp
            || payload_len(&self.pool.buffers[pkt.meta.slot as usize][..pkt.size as usize]) > 0
    }

    /// What an edge conditioner sees of a packet (as in the simulator:
    /// reverse packets are sent by the flow's destination).
    fn packet_key(&self, pkt: &EmuPacket) -> PacketKey {
        if pkt.flow == OTHER {
            // A programs' packet: its addresses and protocol, and no group.
            let bytes = &self.pool.buffers[pkt.meta.slot as usize][..pkt.size as usize];
            let header = ipv4::parse(bytes).expect("parsed when it was read");
            let node = |addr| node_of_addr(addr).map_or(u32::MAX, |n| n as u32);
            return PacketKey {
                flow: OTHER,
                group: u32::MAX,
                src: node(header.src),
                dst: node(header.dst),
                protocol: header.protocol,
                codepoint: pkt.class,
            };
        }
        let flow = &self.plan.flows[pkt.flow as usize];
        let (src, dst) = if pkt.meta.reverse { (flow.dst, flow.src) } else { (flow.src, flow.dst) };
        PacketKey {
            flow: pkt.flow,
            group: flow.group as u32,
            src: src as u32,
            dst: dst as u32,
            protocol: if flow.tcp { Protocol::Tcp } else { Protocol::Udp },
            codepoint: pkt.class,
        }
    }

    /// Port `p`'s qdisc CE-marked a packet of `class` and `flow` instead of
    /// dropping it (ECN; at its arrival or, CoDel and PIE, its departure):
    /// sets CE in the header in buffer `slot` and counts the mark where the
    /// simulator does (the port's class, and for data the flow and end to end).
    fn mark(&mut self, p: usize, class: usize, flow: u32, reverse: bool, slot: u32) {
        ipv4::set_ce(&mut self.pool.buffers[slot as usize]);
        self.ports[p].stats[class].mark();
        if !reverse && flow != OTHER {
            self.flows[flow as usize].marked += 1;
            self.end_to_end[self.plan.flows[flow as usize].class].mark();
        }
    }

    /// Counts (and frees the buffers of) the packets port `p` just dropped
    /// at `now`.
    fn count_drops(&mut self, p: usize, now: Time) {
        while let Some((lost, reason)) = self.dropped.pop() {
            if let Some(scope) = self.traced(p) {
                self.record(scope, p, TraceEvent::Drop, &lost, now, Some(reason));
            }
            let class = self.class_of_codepoint[usize::from(lost.class & 63)];
            let waited =
                if self.warm { now.saturating_sub(lost.enqueued.max(self.scenario.run.warmup)) } else { Time::ZERO };
            let port = &mut self.ports[p];
            port.stats[class].drop_at_link(reason, port.framing.cells(lost.size), waited.as_nanos());
            if lost.flow == OTHER {
                self.pool.free.push(lost.meta.slot);
                continue;
            }
            let flow = &mut self.flows[lost.flow as usize];
            if lost.meta.reverse {
                flow.acks_lost += 1;
            } else {
                flow.lost += 1;
                self.end_to_end[self.plan.flows[lost.flow as usize].class].drop(reason);
            }
            self.pool.free.push(lost.meta.slot);
        }
    }

    /// Port `p`'s index among the traced scopes, if the run has a trace
    /// and it records this port.
    #[inline]
    fn traced(&self, p: usize) -> Option<u32> {
        self.trace.as_deref()?.scope(p)
    }

    /// Records `event` of `pkt` at port `p` (the traced scope `scope`) at
    /// `at` in the trace (`reason`: why it was dropped).
    #[inline(never)]
    fn record(
        &mut self,
        scope: u32,
        p: usize,
        event: TraceEvent,
        pkt: &EmuPacket,
        at: Time,
        reason: Option<DropReason>,
    ) {
        let Some(trace) = self.trace.as_deref_mut() else { return };
        let seen = Seen {
            flow: (pkt.flow != OTHER).then_some(pkt.flow as usize),
            reverse: pkt.meta.reverse,
            class: self.class_of_codepoint[usize::from(pkt.class & 63)],
            codepoint: pkt.class,
            ecn: pkt.ecn,
            colour: pkt.colour,
            number: pkt.meta.number,
            bytes: &self.pool.buffers[pkt.meta.slot as usize][..pkt.size as usize],
            cells: self.ports[p].framing.cells(pkt.size),
        };
        trace.record(scope, event, at, &seen, &self.ports[p].qdisc, reason);
    }

    /// Adds each link direction's rows to the `classes` table, the run
    /// having ended at `end`, `measured_s` after the warm-up (the
    /// simulator's rows: [`ClassRows::push_port`]).
    pub fn push_port_rows(&self, rows: &mut ClassRows, end: Time, measured_s: f64) {
        for port in &self.ports {
            let scope = format!("{}->{}", self.scenario.nodes[port.from].name, self.scenario.nodes[port.to].name);
            let at = PortAt { qdisc: &port.qdisc, framing: port.framing, stats: &port.stats };
            rows.push_port(self.scenario, &scope, at, |cp| self.class_of_codepoint[cp], (end, measured_s));
        }
    }

    /// The `counters` table: each qdisc's own counters since the warm-up.
    pub fn counters_table(&self) -> Table {
        let mut rows = CounterRows::default();
        let mut now = Vec::new();
        for (p, port) in self.ports.iter().enumerate() {
            port.qdisc.counters(&mut now);
            let scope = format!("{}->{}", self.scenario.nodes[port.from].name, self.scenario.nodes[port.to].name);
            let queues = &self.scenario.port_qdisc(p).queues;
            rows.push_link(&scope, |q| &queues[q].name, &now, &port.counters_at_warmup);
        }
        rows.into_table()
    }

    /// The `conditioners` table: each edge conditioner's rules since the warm-up.
    pub fn conditioners_table(&self) -> Table {
        let mut rows = ConditionerRows::default();
        for port in &self.ports {
            if let Some(conditioner) = &port.conditioner {
                let scope = format!("{}->{}", self.scenario.nodes[port.from].name, self.scenario.nodes[port.to].name);
                rows.push_port(self.scenario, &scope, conditioner, port.conditioner_at_warmup.as_ref());
            }
        }
        rows.into_table()
    }
}

/// The transport payload length of an IPv4 packet (0 if its headers are cut).
pub(crate) fn payload_len(packet: &[u8]) -> usize {
    let ihl = usize::from(packet[0] & 0x0f) * 4;
    let transport = match packet[9] {
        6 => packet.get(ihl + 12).map_or(packet.len(), |b| usize::from(b >> 4) * 4),
        _ => 8,
    };
    packet.len().saturating_sub(ihl + transport)
}
