//! # phb — per-hop behaviours
//!
//! The mechanisms a router uses to give classes of traffic different service,
//! free of any simulator: time comes in as an argument ([`Time`]), randomness
//! from a stream the caller owns ([`Rng`]), and every mechanism returns what it
//! decided instead of acting on the world.
//!
//! ## Map
//!
//! - [`time`] — integer-nanosecond instants and durations.
//! - [`rng`] — deterministic random streams derived from a seed and a name.
//! - [`packet`] — what a queue sees of a packet: flow, class, colour, size, stamps.
//! - [`framing`] — link framing: AAL5 over ATM cells (cells per packet,
//!   bytes on the wire), what a buffer counting cells sees of a packet.
//! - [`aqm`] — active queue management: RED (ns-2 semantics), WRED, RIO-C/D,
//!   Adaptive RED, CoDel, PIE, F-RED and DI-RO (cells, per AAL5 frame); the PLR droppers and the Packet Loss
//!   Controller, which choose who pays for a drop.
//! - [`mark`] — meters, markers and policers for the edge (token buckets,
//!   srTCM, trTCM, TSW, the frame-aware GCRA).
//! - [`classify`] — classifiers, the DSCP behaviour-aggregate table and the edge conditioner.
//! - [`sched`] — schedulers choosing the next class queue to serve.
//! - [`queue`] — queueing disciplines built from the parts above:
//!   [`queue::classful`] (classifier → per-class queues with a buffer policy
//!   and victim rule → scheduler), whose one-queue forms are the FIFO
//!   drop-tail and RED queues.
//!
//! Start with [`queue::Qdisc`]: the simulator (and later the router) talks to
//! every discipline through it.

pub mod aqm;
pub mod classify;
pub mod framing;
pub mod mark;
pub mod packet;
pub mod queue;
pub mod rng;
pub mod sched;
pub mod time;

pub use framing::Framing;
pub use packet::{Colour, DropReason, Ecn, Packet};
pub use queue::{Qdisc, QdiscConfig};
pub use rng::Rng;
pub use time::Time;
