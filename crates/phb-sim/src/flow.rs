//! A flow's state during a run: its counters and its transport — a UDP
//! source, or a TCP sender/receiver pair with the application feeding it.

use phb::{Rng, Time};

use crate::apps::App;
use crate::scenario::{TrafficGroup, Transport};
use crate::tcp::{CwndIntegral, Receiver, Segment, Sender, SenderStats, Variant};
use crate::traffic::Source;

/// Per-flow counts since the start of the run. "Packets" are the flow's
/// UDP packets or TCP data segments; ACKs are counted apart.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowCounts {
    pub sent: u64,
    pub sent_bytes: u64,
    pub received: u64,
    pub received_bytes: u64,
    pub lost: u64,
    /// Data packets (not ACKs) a qdisc CE-marked instead of dropping (ECN).
    pub marked: u64,
    pub delay_sum_ns: u128,
    /// The received packets' waits in qdiscs, summed over their hops: the
    /// one-way delay less the route's transmission and propagation times.
    pub queueing_sum_ns: u128,
    /// Application bytes delivered in order (UDP: every packet's bytes).
    pub delivered_bytes: u64,
    pub acks_sent: u64,
    pub acks_received: u64,
    pub acks_lost: u64,
}

impl FlowCounts {
    pub fn since(&self, earlier: &FlowCounts) -> FlowCounts {
        FlowCounts {
            sent: self.sent - earlier.sent,
            sent_bytes: self.sent_bytes - earlier.sent_bytes,
            received: self.received - earlier.received,
            received_bytes: self.received_bytes - earlier.received_bytes,
            lost: self.lost - earlier.lost,
            marked: self.marked - earlier.marked,
            delay_sum_ns: self.delay_sum_ns - earlier.delay_sum_ns,
            queueing_sum_ns: self.queueing_sum_ns - earlier.queueing_sum_ns,
            delivered_bytes: self.delivered_bytes - earlier.delivered_bytes,
            acks_sent: self.acks_sent - earlier.acks_sent,
            acks_received: self.acks_received - earlier.acks_received,
            acks_lost: self.acks_lost - earlier.acks_lost,
        }
    }
}

/// A TCP connection and its application.
pub struct Tcp {
    pub sender: Sender,
    pub receiver: Receiver,
    pub app: App,
    /// Route of the ACKs, from the destination back to the source.
    pub ack_route: u32,
    pub header: u32,
    /// ECN-capable (RFC 3168): data segments go out ECT(0).
    pub ecn: bool,
    pub trace: bool,
    /// Reused buffer of segments to transmit.
    pub out: Vec<Segment>,
    /// Times of the pending timer events (later ones are stale).
    pub rto_event: Option<Time>,
    pub delack_event: Option<Time>,
    /// The flow has reached its stop time: it sends nothing more.
    pub stopped: bool,
    /// The sender's counters when the warm-up ended.
    pub stats_at_warmup: SenderStats,
    /// The integral of its congestion window when the warm-up ended.
    pub cwnd_at_warmup: CwndIntegral,
}

pub enum FlowTransport {
    Udp { source: Source, packet_size: u32, next_seq: u64 },
    Tcp(Box<Tcp>),
}

pub struct Flow {
    pub name: String,
    pub group: usize,
    pub class: usize,
    pub codepoint: u8,
    pub route: u32,
    pub start: Time,
    pub stop: Time,
    pub transport: FlowTransport,
    pub total: FlowCounts,
    pub at_warmup: FlowCounts,
    /// `(size, latency)`: the route's transmission and propagation time for
    /// a packet of `size` bytes, for the last size delivered (sizes rarely
    /// change within a flow).
    pub latency_of_size: (u32, Time),
}

impl Flow {
    /// Flow `index` (named `name`) of `group`, its routes already resolved;
    /// the first link of `route` runs at `line_rate_bps`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        g: usize,
        index: u32,
        group: &TrafficGroup,
        codepoint: u8,
        route: u32,
        ack_route: u32,
        line_rate_bps: u64,
        seed: u64,
    ) -> Flow {
        let (start, stop) = match &group.windows {
            Some(windows) => windows[index as usize],
            None => (group.start, group.stop),
        };
        let jitter = if group.start_jitter > Time::ZERO {
            let mut rng = Rng::derive_fmt(seed, format_args!("jitter/{name}"));
            Time::from_secs_f64(rng.uniform() * group.start_jitter.as_secs_f64())
        } else {
            Time::ZERO
        };
        let transport = match &group.transport {
            Transport::Udp(model) => FlowTransport::Udp {
                source: model.source(line_rate_bps, Rng::derive_fmt(seed, format_args!("flow/{name}"))),
                packet_size: model.packet_size(),
                next_seq: 0,
            },
            Transport::Tcp(tcp) => {
                let cfg = &tcp.config;
                FlowTransport::Tcp(Box::new(Tcp {
                    receiver: Receiver::new(cfg.mss, cfg.variant == Variant::Sack, cfg.delayed_ack, cfg.delack_timeout),
                    sender: Sender::new(cfg.clone()),
                    app: App::new(&tcp.app, Rng::derive_fmt(seed, format_args!("app/{name}"))),
                    ack_route,
                    header: cfg.header,
                    ecn: cfg.ecn,
                    trace: tcp.trace,
                    out: Vec::new(),
                    rto_event: None,
                    delack_event: None,
                    stopped: false,
                    stats_at_warmup: SenderStats::default(),
                    cwnd_at_warmup: CwndIntegral::default(),
                }))
            }
        };
        Flow {
            name,
            group: g,
            class: group.class,
            codepoint,
            route,
            start: start + jitter,
            stop,
            transport,
            total: FlowCounts::default(),
            at_warmup: FlowCounts::default(),
            latency_of_size: (0, Time::ZERO),
        }
    }

    pub fn tcp(&self) -> Option<&Tcp> {
        match &self.transport {
            FlowTransport::Tcp(t) => Some(t),
            FlowTransport::Udp { .. } => None,
        }
    }
}
