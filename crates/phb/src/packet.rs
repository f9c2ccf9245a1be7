//! What a queue sees of a packet.
//!
//! A [`Packet`] carries the header fields per-hop behaviours act on (flow,
//! class codepoint, colour, ECN field, size) and the time stamps measurement
//! needs. The
//! transport's own header (TCP sequence numbers and the like) rides in `meta`,
//! opaque to every mechanism here.

use crate::time::Time;

/// Drop precedence, as set by a meter/marker (RFC 2597's three levels).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Colour {
    #[default]
    Green = 0,
    Yellow = 1,
    Red = 2,
}

/// The ECN field of the IP header (RFC 3168 §5): the two bits beside the
/// DSCP, with their codepoints' values. A transport that speaks ECN sends
/// ECT(0); a router's AQM that would drop an ECT packet early may set CE
/// instead (see [`crate::queue::classful`]). ECT(1) is carried but no
/// mechanism here tells it from ECT(0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// Not-ECT: the transport does not speak ECN; congestion means a drop.
    #[default]
    NotEct = 0b00,
    /// ECT(1).
    Ect1 = 0b01,
    /// ECT(0), what an ECN-capable TCP sends (RFC 3168 §6.1.1).
    Ect0 = 0b10,
    /// CE, Congestion Experienced: set by a router instead of a drop.
    Ce = 0b11,
}

impl Ecn {
    /// ECT(0) or ECT(1): a router may mark the packet instead of dropping it.
    #[inline]
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// A packet as it waits in a queue.
#[derive(Clone, Debug)]
pub struct Packet<M> {
    /// The flow it belongs to (an index the simulator assigns).
    pub flow: u32,
    /// DSCP-like codepoint (0..=63) that classifiers map to a class queue.
    pub class: u8,
    /// Drop precedence.
    pub colour: Colour,
    /// The IP header's ECN field.
    pub ecn: Ecn,
    /// IP packet size in bytes, headers included.
    pub size: u32,
    /// When the source created it.
    pub created: Time,
    /// When it entered its current queue.
    pub enqueued: Time,
    /// Transport data the mechanisms never look at.
    pub meta: M,
}

#[cfg(test)]
impl Packet<()> {
    /// A green, not-ECT packet of `size` bytes of `flow` with codepoint
    /// `class`, created and queued at time zero: the queues' tests' packet.
    pub(crate) fn for_test(class: u8, size: u32, flow: u32) -> Packet<()> {
        Packet {
            flow,
            class,
            colour: Colour::Green,
            ecn: Ecn::NotEct,
            size,
            created: Time::ZERO,
            enqueued: Time::ZERO,
            meta: (),
        }
    }
}

/// Why a packet was dropped. Every drop has one, and each is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// The buffer (or its hard limit) was full.
    Overflow = 0,
    /// An AQM dropped it early, with a probability below one
    /// (RED's "unforced" drop between min_th and max_th).
    EarlyDrop = 1,
    /// An AQM dropped it with certainty (RED above max_th, or 2·max_th when gentle).
    ForcedDrop = 2,
    /// A policer found it out of profile.
    Policer = 3,
    /// It was pushed out of the queue to make room for another packet.
    Eviction = 4,
    /// A loss element on a link dropped it (model validation).
    LossModule = 5,
    /// Dropped so that absolute delay bounds stay feasible: JoBS' second
    /// dropping pass (Christin et al. 2001, eq. 64).
    Deadline = 6,
}

impl DropReason {
    pub const ALL: [DropReason; 7] = [
        DropReason::Overflow,
        DropReason::EarlyDrop,
        DropReason::ForcedDrop,
        DropReason::Policer,
        DropReason::Eviction,
        DropReason::LossModule,
        DropReason::Deadline,
    ];

    /// The name used in result tables.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::EarlyDrop => "early",
            DropReason::ForcedDrop => "forced",
            DropReason::Policer => "policer",
            DropReason::Eviction => "eviction",
            DropReason::LossModule => "loss_module",
            DropReason::Deadline => "deadline",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ECN field fits in the padding: a packet is as small as before
    /// it was added (32 bytes without transport data).
    #[test]
    fn the_ecn_field_costs_no_space() {
        assert_eq!(std::mem::size_of::<Ecn>(), 1);
        assert_eq!(std::mem::size_of::<Packet<()>>(), 32);
    }
}
