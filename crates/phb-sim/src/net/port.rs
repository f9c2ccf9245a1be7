//! One direction of a link: an optional edge conditioner and random-loss
//! element, an output qdisc, a transmitter and the wire.
//!
//! The transmitter sends one packet at a time at the link rate; the wire
//! delays each by the propagation delay. Packets on the wire arrive in the
//! order they left (the delay is fixed), so they wait in a FIFO and events
//! only name the port, keeping events small.

use std::collections::VecDeque;

use phb::classify::{Conditioner, ConditionerCounts};
use phb::queue::Counter;
use phb::{Framing, Qdisc, Rng, Time};

use super::{Meta, SimPacket};
use crate::measure::ClassStats;

pub struct Port {
    /// Node this port sends from, and node at the far end.
    pub from: usize,
    pub to: usize,
    pub rate_bps: u64,
    pub delay: Time,
    /// How the link carries packets: AAL5 frames of cells, or as they are.
    pub framing: Framing,
    pub qdisc: Qdisc<Meta>,
    /// The edge conditioner at this port's ingress, if any (boxed: most
    /// ports have none).
    pub conditioner: Option<Box<Conditioner>>,
    /// Some LSP's ingress is this port: its TWAM marks and its passive
    /// estimator counts the members' packets entering here.
    pub lsp_ingress: bool,
    /// Probability that the loss element drops an arriving packet.
    pub loss: f64,
    pub loss_rng: Rng,
    /// A packet is being serialised.
    pub busy: bool,
    /// A wake-up event is scheduled for a qdisc that held packets back.
    pub wake_pending: bool,
    /// Packets serialised or being serialised, not yet at the far end.
    pub wire: VecDeque<SimPacket>,
    /// Per class (index into the scenario's classes): queueing statistics.
    pub stats: Vec<ClassStats>,
    /// The conditioner's counts when the warm-up ended (`None` before).
    pub conditioner_at_warmup: Option<ConditionerCounts>,
    /// The qdisc's own counters when the warm-up ended (empty before).
    pub counters_at_warmup: Vec<Counter>,
}

impl Port {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        from: usize,
        to: usize,
        rate_bps: u64,
        delay: Time,
        qdisc: Qdisc<Meta>,
        loss: f64,
        loss_rng: Rng,
        classes: usize,
    ) -> Port {
        Port {
            from,
            to,
            rate_bps,
            delay,
            framing: Framing::None,
            qdisc,
            conditioner: None,
            lsp_ingress: false,
            loss,
            loss_rng,
            busy: false,
            wake_pending: false,
            wire: VecDeque::new(),
            stats: vec![ClassStats::default(); classes],
            conditioner_at_warmup: None,
            counters_at_warmup: Vec::new(),
        }
    }

    /// The time to serialise a packet of `size` bytes (its frame's cells on
    /// an ATM link).
    #[inline]
    pub fn transmission(&self, size: u32) -> Time {
        Time::transmission(self.framing.wire_bytes(size), self.rate_bps)
    }

    /// Packets in the qdisc, by the per-class counters.
    pub fn counted_backlog(&self) -> u64 {
        self.stats.iter().map(ClassStats::backlog).sum()
    }
}
