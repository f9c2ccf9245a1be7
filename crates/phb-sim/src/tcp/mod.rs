//! TCP: the transport the papers' results are about.
//!
//! - [`config`] — parameters, the `ns2`, `ns2_2004`, `linux` and `ns3`
//!   profiles, and whose rules ([`Rules`]) a sender follows.
//! - [`rtt`] — RTT estimation and the retransmission timeout (RFC 6298).
//! - [`sender`] — congestion control and Reno / NewReno / SACK recovery.
//! - [`receiver`] — reassembly, cumulative and selective ACKs, delayed ACKs.
//!
//! The state machines know nothing of the simulator: they take `now` and
//! return the segments or ACKs to send, so they are tested event by event.

pub mod config;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use config::{PartialAckTimer, Rules, TcpConfig, Variant};
pub use receiver::{Ack, Receiver};
pub use sender::{CwndIntegral, Segment, Sender, SenderStats};
