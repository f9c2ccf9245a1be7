//! The network: nodes joined by full-duplex links, each direction an output
//! [`port`] with its qdisc, and [`routing`] that gives every flow the list
//! of ports its packets cross.
//!
//! A packet carries its route's index and how many hops it has made
//! ([`Meta`]), so forwarding is one array look-up: no per-packet hashing.
//! An ACK's SACK blocks wait in [`SackBlocks`], keeping packets small.

pub mod port;
pub mod routing;
pub mod wires;

pub use port::{Port, PortStats};
pub use routing::Routes;
pub use wires::Wires;

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
/// state and the transport header, in 32 bytes (a whole packet in 64: it is
/// copied into and out of every queue and wire it crosses). An ACK's SACK
/// blocks wait apart, in [`SackBlocks`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// UDP: per-flow packet number; TCP data: first byte; TCP ACK: the
    /// echoed timestamp (RFC 7323 `TSecr`) in nanoseconds.
    pub seq: u64,
    /// TCP ACK: next byte expected.
    pub ack: u64,
    /// Index of the route in [`Routes`].
    pub route: u32,
    /// Ports already crossed.
    pub hop: u32,
    /// TCP data: the payload bytes; a TCP ACK with SACK blocks: their slot
    /// in [`SackBlocks`].
    word: u32,
    pub kind: Kind,
    /// SACK blocks the ACK carries.
    pub sack_len: u8,
    /// TCP ACK: ECN-Echo; TCP data: Congestion Window Reduced (RFC 3168 §6.1).
    pub ece: bool,
    pub cwr: bool,
}

impl Meta {
    /// A UDP packet, number `seq` of its flow, on `route`.
    pub fn udp(route: u32, seq: u64) -> Meta {
        Meta { route, seq, ..Meta::default() }
    }

    /// TCP data `[seq, seq + len)` on `route`.
    pub fn data(route: u32, seq: u64, len: u32) -> Meta {
        Meta { route, seq, word: len, kind: Kind::Data, ..Meta::default() }
    }

    /// A TCP ACK of `ack` echoing `ts_echo` (ns) on `route`, with
    /// `sack_len` SACK blocks kept at `slot` of [`SackBlocks`] (any slot
    /// without blocks).
    pub fn ack(route: u32, ack: u64, ts_echo: u64, sack_len: u8, slot: u32) -> Meta {
        Meta { route, ack, seq: ts_echo, word: slot, kind: Kind::Ack, sack_len, ..Meta::default() }
    }

    /// TCP data's payload bytes.
    #[inline]
    pub fn payload_len(&self) -> u32 {
        debug_assert_eq!(self.kind, Kind::Data);
        self.word
    }

    /// Where a TCP ACK's SACK blocks are, if it has any.
    #[inline]
    pub fn sack_slot(&self) -> Option<u32> {
        (self.kind == Kind::Ack && self.sack_len > 0).then_some(self.word)
    }
}

/// The SACK blocks of the ACKs in flight, as offsets above each ACK's
/// `ack`, by slot; a slot is reused once its ACK is delivered or dropped.
#[derive(Debug, Default)]
pub struct SackBlocks {
    blocks: Vec<[(u32, u32); 3]>,
    free: Vec<u32>,
}

impl SackBlocks {
    /// Keeps `blocks` (absolute byte ranges above `ack`); their slot.
    pub fn put(&mut self, ack: u64, blocks: &[(u64, u64)]) -> u32 {
        let mut offsets = [(0, 0); 3];
        for (slot, &(start, end)) in offsets.iter_mut().zip(blocks) {
            *slot = ((start - ack) as u32, (end - ack) as u32);
        }
        match self.free.pop() {
            Some(slot) => {
                self.blocks[slot as usize] = offsets;
                slot
            }
            None => {
                self.blocks.push(offsets);
                (self.blocks.len() - 1) as u32
            }
        }
    }

    /// The blocks of the ACK `meta`, as absolute byte ranges, written to
    /// `out`; their number. Frees the slot.
    pub fn take(&mut self, meta: &Meta, out: &mut [(u64, u64); 3]) -> usize {
        let blocks = self.peek(meta, out);
        if let Some(slot) = meta.sack_slot() {
            self.free.push(slot);
        }
        blocks
    }

    /// [`SackBlocks::take`] without freeing the slot: the ACK is still
    /// on its way.
    pub fn peek(&self, meta: &Meta, out: &mut [(u64, u64); 3]) -> usize {
        let Some(slot) = meta.sack_slot() else { return 0 };
        let offsets = &self.blocks[slot as usize];
        for (o, &(start, end)) in out.iter_mut().zip(&offsets[..meta.sack_len as usize]) {
            *o = (meta.ack + start as u64, meta.ack + end as u64);
        }
        meta.sack_len as usize
    }

    /// Frees the slot of an ACK that was dropped.
    pub fn forget(&mut self, meta: &Meta) {
        if let Some(slot) = meta.sack_slot() {
            self.free.push(slot);
        }
    }
}

/// A packet as the simulator moves it.
pub type SimPacket = phb::Packet<Meta>;

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulated packet is 64 bytes (one cache line; the metadata 32),
    /// the ECN field and the ECE and CWR flags included: they fit in padding.
    #[test]
    fn a_packet_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Meta>(), 32);
        assert_eq!(std::mem::size_of::<SimPacket>(), 64);
    }
}
