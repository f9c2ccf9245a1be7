//! Active queue management: the policies that decide whether an arriving
//! packet may join a buffer.
//!
//! - [`red`] — Random Early Detection (Floyd & Jacobson 1993) with ns-2's
//!   refinements (gentle, wait, byte mode, idle-time correction).
//!
//! A policy sees the backlog of the buffer it guards, which may be one queue
//! or several class queues sharing one average (see [`crate::queue::classful`]).

pub mod red;

/// A buffer limit: in packets or in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

impl Limit {
    /// Whether a buffer holding `pkts` packets of `bytes` bytes can take one
    /// more packet of `size` bytes.
    #[inline]
    pub fn admits(self, pkts: u64, bytes: u64, size: u32) -> bool {
        match self {
            Limit::Packets(n) => pkts < n,
            Limit::Bytes(n) => bytes + size as u64 <= n,
        }
    }
}

/// What a buffer holds when a packet arrives, in total and by colour
/// (indexed by `Colour as usize`), for policies that treat drop precedences
/// differently (WRED, RIO).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub pkts: u64,
    pub bytes: u64,
    pub pkts_by_colour: [u64; 3],
    pub bytes_by_colour: [u64; 3],
}
