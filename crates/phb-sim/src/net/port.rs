//! One direction of a link: an optional edge conditioner and random-loss
//! element, an output qdisc, a transmitter and the wire.
//!
//! The transmitter sends one packet at a time at the link rate; the wire
//! delays each by the propagation delay. Packets on the wire wait in the
//! network's one slab ([`super::Wires`]), so that a port holds no buffer of
//! its own for them. Its per-class statistics lie in [`PortStats`], one
//! array for all the ports.

use phb::classify::{Conditioner, ConditionerCounts};
use phb::queue::Counter;
use phb::{Framing, Qdisc, Rng, Time};

use super::Meta;
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
}

/// Every port's per-class queueing statistics (classes indexed as the
/// scenario's), in one array, port after port. Where a port's counters lie
/// follows from its index alone, so reading them need not wait for the
/// port's own cache line: with a separate allocation per port, at 100,000
/// pairs, that wait was a cache miss on every packet at every hop.
#[derive(Debug, Default)]
pub struct PortStats {
    classes: usize,
    stats: Vec<ClassStats>,
}

impl PortStats {
    /// Zeroed statistics of `classes` classes at each of `ports` ports.
    pub fn new(ports: usize, classes: usize) -> PortStats {
        PortStats { classes, stats: vec![ClassStats::default(); ports * classes] }
    }

    /// Port `p`'s statistics, by class.
    #[inline]
    pub fn of(&self, p: usize) -> &[ClassStats] {
        &self.stats[p * self.classes..(p + 1) * self.classes]
    }

    #[inline]
    pub fn of_mut(&mut self, p: usize) -> &mut [ClassStats] {
        &mut self.stats[p * self.classes..(p + 1) * self.classes]
    }

    /// Port `p`'s statistics of `class`.
    #[inline]
    pub fn at(&mut self, p: usize, class: usize) -> &mut ClassStats {
        &mut self.stats[p * self.classes + class]
    }

    /// Every port's, port after port.
    pub fn all(&self) -> &[ClassStats] {
        &self.stats
    }

    pub fn all_mut(&mut self) -> &mut [ClassStats] {
        &mut self.stats
    }

    /// Packets in port `p`'s qdisc, by its counters.
    pub fn counted_backlog(&self, p: usize) -> u64 {
        self.of(p).iter().map(ClassStats::backlog).sum()
    }
}
