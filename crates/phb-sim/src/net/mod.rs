//! The network: nodes joined by full-duplex links, each direction an output
//! [`port`] with its qdisc, and [`routing`] that gives every flow the list
//! of ports its packets cross.
//!
//! A packet carries its route's index and how many hops it has made
//! ([`Meta`]), so forwarding is two array look-ups: no per-packet hashing.

pub mod port;
pub mod routing;

pub use port::Port;
pub use routing::Routes;

/// What the simulator adds to a packet beyond what the qdiscs see.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// Index of the route in [`Routes`].
    pub route: u32,
    /// Ports already crossed.
    pub hop: u32,
    /// Per-flow sequence number, from 0.
    pub seq: u64,
}

/// A packet as the simulator moves it.
pub type SimPacket = phb::Packet<Meta>;
