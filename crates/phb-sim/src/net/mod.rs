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

/// What a packet is, for the host that receives it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    #[default]
    Udp,
    /// A TCP data segment: bytes `[seq, seq + len)`.
    Data,
    /// A TCP acknowledgement: `ack` and SACK blocks.
    Ack,
}

/// What the simulator adds to a packet beyond what the qdiscs see: routing
/// state and the transport header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// Index of the route in [`Routes`].
    pub route: u32,
    /// Ports already crossed.
    pub hop: u32,
    pub kind: Kind,
    /// SACK blocks in use.
    pub sack_len: u8,
    /// TCP ACK: ECN-Echo; TCP data: Congestion Window Reduced (RFC 3168 §6.1).
    pub ece: bool,
    pub cwr: bool,
    /// Payload bytes (TCP data).
    pub len: u32,
    /// UDP: per-flow packet number; TCP data: first byte; TCP ACK: the
    /// echoed timestamp (RFC 7323 `TSecr`) in nanoseconds.
    pub seq: u64,
    /// TCP ACK: next byte expected.
    pub ack: u64,
    /// TCP ACK: SACK blocks as offsets above `ack`, to keep packets small.
    pub sack: [(u32, u32); 3],
}

impl Meta {
    /// The SACK blocks as absolute byte ranges.
    pub fn sack_blocks(&self, out: &mut [(u64, u64); 3]) -> usize {
        for (slot, &(start, end)) in out.iter_mut().zip(&self.sack[..self.sack_len as usize]) {
            *slot = (self.ack + start as u64, self.ack + end as u64);
        }
        self.sack_len as usize
    }
}

/// A packet as the simulator moves it.
pub type SimPacket = phb::Packet<Meta>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The ECN field and the ECE and CWR flags fit in padding: a simulated
    /// packet stays 88 bytes, as before they were added.
    #[test]
    fn ecn_fields_cost_no_space() {
        assert_eq!(std::mem::size_of::<Meta>(), 56);
        assert_eq!(std::mem::size_of::<SimPacket>(), 88);
    }
}
