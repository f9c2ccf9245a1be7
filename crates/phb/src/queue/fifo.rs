//! FIFO with drop-tail: one queue, one limit.
//!
//! The classful qdisc's simplest case ([`QdiscConfig::fifo`]: one queue in
//! one drop-tail buffer, served by priority), kept as a discipline of its
//! own because it is the most common of all — every host's access link in
//! a generated network has one — and the classful machinery (a codepoint
//! table, buffers, a scheduler asked to choose among one queue) costs
//! memory and time for nothing there. It decides exactly as that classful
//! qdisc does: an arrival that does not fit the limit (packets, bytes, or
//! ATM cells on an AAL5 link: [`LimitRule::Fits`]) is dropped with
//! [`DropReason::Overflow`], the others leave in arrival order.
//!
//! [`QdiscConfig::fifo`]: crate::queue::QdiscConfig::fifo

use std::collections::VecDeque;

use crate::aqm::{Amount, Limit, LimitRule};
use crate::framing::Framing;
use crate::packet::{DropReason, Packet};
use crate::queue::Dropped;
use crate::time::Time;

/// A drop-tail FIFO (see the module doc).
#[derive(Debug)]
pub struct Fifo<M> {
    packets: VecDeque<Packet<M>>,
    limit: Limit,
    held: Amount,
    framing: Framing,
}

impl<M> Fifo<M> {
    /// A FIFO holding at most `limit` on a link with `framing`.
    pub fn new(limit: Limit, framing: Framing) -> Fifo<M> {
        Fifo { packets: VecDeque::new(), limit, held: Amount::default(), framing }
    }

    /// Offers an arrival at `now`: queued, or pushed onto `dropped` when it
    /// does not fit.
    #[inline]
    pub fn enqueue(&mut self, mut pkt: Packet<M>, now: Time, dropped: &mut Dropped<M>) {
        let arrival = Amount::packet(pkt.size, self.framing.cells(pkt.size));
        if !self.limit.admits_in(LimitRule::Fits, self.held, arrival) {
            dropped.push((pkt, DropReason::Overflow));
            return;
        }
        self.held.pkts += 1;
        self.held.bytes += arrival.bytes;
        self.held.cells += arrival.cells;
        pkt.enqueued = now;
        self.packets.push_back(pkt);
    }

    /// The oldest packet, if any.
    #[inline]
    pub fn dequeue(&mut self) -> Option<Packet<M>> {
        let pkt = self.packets.pop_front()?;
        self.held.pkts -= 1;
        self.held.bytes -= pkt.size as u64;
        self.held.cells -= self.framing.cells(pkt.size) as u64;
        Some(pkt)
    }

    pub fn len_packets(&self) -> u64 {
        self.held.pkts
    }

    pub fn len_bytes(&self) -> u64 {
        self.held.bytes
    }

    /// Cells waiting (0 on a link without cell framing).
    pub fn len_cells(&self) -> u64 {
        self.held.cells
    }

    /// Every packet waiting, head first.
    pub fn queued(&self) -> impl Iterator<Item = &Packet<M>> {
        self.packets.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{Classful, QdiscConfig};
    use crate::rng::Rng;
    use proptest::prelude::*;

    fn pkt(size: u32, flow: u32) -> Packet<()> {
        Packet::for_test(0, size, flow)
    }

    proptest! {
        /// Any sequence of arrivals (sizes, times) and departures gives the
        /// same drops, order and backlogs as the classful FIFO, for packet,
        /// byte and cell limits.
        #[test]
        fn decides_as_the_classful_fifo(
            ops in proptest::collection::vec((any::<bool>(), 40u32..1600), 1..300),
            limit in 1u64..20_000,
            unit in 0usize..3,
        ) {
            let (limit, framing) = match unit {
                0 => (Limit::Packets(limit % 40 + 1), Framing::None),
                1 => (Limit::Bytes(limit), Framing::None),
                _ => (Limit::Cells(limit % 400 + 1), Framing::AAL5),
            };
            let mut fifo: Fifo<()> = Fifo::new(limit, framing);
            let mut classful: Classful<()> =
                Classful::with_framing(&QdiscConfig::fifo(limit), 1_000_000, framing, Rng::derive(0, "q"));
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for (i, &(arrive, size)) in ops.iter().enumerate() {
                let now = Time::from_micros(i as u64);
                if arrive {
                    fifo.enqueue(pkt(size, i as u32), now, &mut a);
                    classful.enqueue(pkt(size, i as u32), now, &mut b);
                } else {
                    let got = fifo.dequeue().map(|p| (p.flow, p.enqueued));
                    let expected = classful.dequeue(now, &mut b).map(|d| (d.pkt.flow, d.pkt.enqueued));
                    prop_assert_eq!(got, expected);
                }
                let drops = |d: &Dropped<()>| d.iter().map(|(p, r)| (p.flow, *r)).collect::<Vec<_>>();
                prop_assert_eq!(drops(&a), drops(&b));
                prop_assert_eq!(
                    (fifo.len_packets(), fifo.len_bytes(), fifo.len_cells()),
                    (classful.len_packets(), classful.len_bytes(), classful.len_cells())
                );
            }
        }
    }
}
