//! The packets on all wires, in one slab.
//!
//! A packet that has left a port's transmitter travels for the link's
//! propagation delay; its `Arrive` event names its slot here, which holds
//! the packet and the port it left. One slab for the whole network costs
//! what is in flight (72 bytes a packet on a wire), where a
//! queue per link direction would keep, in every one of them, the capacity
//! of its busiest moment: at 10,000 dumbbell pairs that was 37 MB, most of
//! it for access links that hold a packet or two. Freed slots are reused
//! last-in first-out, so the slots in use stay few and warm.

use super::SimPacket;

/// The packets in flight on the wires.
#[derive(Default)]
pub struct Wires {
    /// Slot `i`: the port a packet left and the packet (`None` when free).
    slots: Vec<Option<(u32, SimPacket)>>,
    free: Vec<u32>,
}

impl Wires {
    /// Puts `pkt`, which has left port `port`, on its wire: the slot its
    /// arrival names.
    #[inline]
    pub fn put(&mut self, port: u32, pkt: SimPacket) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some((port, pkt));
                slot
            }
            None => {
                self.slots.push(Some((port, pkt)));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Takes the packet in `slot` off its wire: the port it left, and the
    /// packet.
    #[inline]
    pub fn take(&mut self, slot: u32) -> (u32, SimPacket) {
        self.free.push(slot);
        self.slots[slot as usize].take().expect("an arrival's slot holds its packet")
    }

    /// Packets on the wires.
    pub fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_counted() {
        let mut wires = Wires::default();
        let pkt = |flow| SimPacket {
            flow,
            class: 0,
            colour: phb::Colour::Green,
            ecn: phb::Ecn::NotEct,
            size: 1500,
            created: phb::Time::ZERO,
            enqueued: phb::Time::ZERO,
            meta: super::super::Meta::default(),
        };
        let a = wires.put(3, pkt(1));
        let b = wires.put(4, pkt(2));
        assert_eq!(wires.in_flight(), 2);
        let (port, p) = wires.take(a);
        assert_eq!((port, p.flow), (3, 1));
        assert_eq!(wires.in_flight(), 1);
        // The freed slot is used again; nothing grows.
        assert_eq!(wires.put(5, pkt(3)), a);
        assert_eq!(wires.take(b).1.flow, 2);
        assert_eq!(wires.take(a).0, 5);
        assert_eq!(wires.in_flight(), 0);
    }
}
