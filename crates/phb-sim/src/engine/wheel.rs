//! A timing wheel of heaps: the event list the simulator runs.
//!
//! Time is cut into slots of 2¹⁶ ns (65.5 µs, about 55 packets of 1500
//! bytes at 10 Gb/s). The events of the
//! current slot wait in a small binary heap keyed by `(time, sequence)`;
//! those of the next [`SLOTS`] − 1 slots in an unsorted vector per slot
//! (a push is an append); those further ahead (a TCP retransmission timer,
//! a flow's stop) in an overflow heap. When the current slot is empty the
//! wheel turns to the next occupied slot (a bitmap finds it), whose
//! vector becomes the current heap in one pass, and the overflow events
//! that the wheel's span now reaches drop into their slots.
//!
//! Every event of a slot precedes every event of a later one, and within a
//! slot the heap orders by `(time, sequence)`, so events leave in exactly
//! the order of one heap ([`super::HeapEventList`]; property-tested). The
//! heaps stay small — one slot's events, and the far timers — which is the
//! point: one heap of a million entries costs a cache miss a level on
//! every push and pop.
//!
//! An event scheduled before the current slot (in the past: a deadline
//! that has already passed) joins the current slot's heap, where it is the
//! smallest, so it leaves next, as from one heap.

use std::collections::BinaryHeap;

use phb::Time;

use super::{Entry, EventList};

/// A slot spans 2^`SLOT_BITS` ns.
const SLOT_BITS: u32 = 16;
/// Slots on the wheel: it spans 4096 × 65.5 µs = 268 ms.
const SLOTS: usize = 4096;
const WORDS: usize = SLOTS / 64;
/// Vectors of at most this many entries are kept for reuse (4096 of them
/// hold at most 12 MiB).
const KEPT_CAPACITY: usize = 128;

/// The timing wheel (see the module doc).
pub struct WheelEventList<E> {
    /// The events of slot `current`.
    now: BinaryHeap<Entry<E>>,
    /// The slot being served (time >> `SLOT_BITS`).
    current: u64,
    /// Slot `s` (for `current < s < current + SLOTS`) at `s % SLOTS`.
    slots: Vec<Vec<Entry<E>>>,
    /// Which of `slots` hold events.
    occupied: [u64; WORDS],
    /// Events at `current + SLOTS` slots or beyond.
    far: BinaryHeap<Entry<E>>,
    /// Empty vectors of small capacity, for the slots to reuse.
    kept: Vec<Vec<Entry<E>>>,
    len: usize,
    next_seq: u64,
}

impl<E> Default for WheelEventList<E> {
    fn default() -> Self {
        WheelEventList {
            now: BinaryHeap::new(),
            current: 0,
            slots: (0..SLOTS).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
            far: BinaryHeap::new(),
            kept: Vec::new(),
            len: 0,
            next_seq: 0,
        }
    }
}

impl<E> WheelEventList<E> {
    /// Files `entry` by its slot.
    #[inline]
    fn file(&mut self, entry: Entry<E>) {
        let slot = entry.time.as_nanos() >> SLOT_BITS;
        if slot <= self.current {
            self.now.push(entry);
        } else if slot - self.current < SLOTS as u64 {
            let i = slot as usize % SLOTS;
            self.slots[i].push(entry);
            self.occupied[i / 64] |= 1 << (i % 64);
        } else {
            self.far.push(entry);
        }
    }

    /// The first occupied slot after `current` within the wheel's span.
    fn next_occupied(&self) -> Option<u64> {
        let start = (self.current as usize + 1) % SLOTS;
        // Scan from `start` round to `start` again, a word at a time.
        for k in 0..=WORDS {
            let word_index = (start / 64 + k) % WORDS;
            let mut word = self.occupied[word_index];
            if k == 0 {
                word &= !0u64 << (start % 64);
            } else if k == WORDS {
                word &= !(!0u64 << (start % 64));
            }
            if word != 0 {
                let i = word_index * 64 + word.trailing_zeros() as usize;
                let ahead = (i + SLOTS - self.current as usize % SLOTS) % SLOTS;
                return Some(self.current + ahead as u64);
            }
        }
        None
    }

    /// Turns the wheel to the next slot holding events: its vector becomes
    /// the current heap. `false` when no event is left.
    fn turn(&mut self) -> bool {
        let next = match (self.next_occupied(), self.far.peek()) {
            (Some(slot), _) => slot,
            (None, Some(e)) => e.time.as_nanos() >> SLOT_BITS,
            (None, None) => return false,
        };
        self.current = next;
        let i = next as usize % SLOTS;
        self.occupied[i / 64] &= !(1 << (i % 64));
        // The slot's events become the current heap. The old heap's
        // (empty) vector is kept for a later slot only if it is small, and
        // the slot takes a kept one: handed round the slots, vectors would
        // each come to the capacity of the busiest slot (4096 × the
        // largest slot: 100 MB at 10,000 flows), and a fresh vector for
        // every turn would cost a tenth of a small run's time.
        let fresh = self.kept.pop().unwrap_or_default();
        let mut events = std::mem::replace(&mut self.slots[i], fresh);
        // The far events the wheel now reaches.
        while let Some(e) = self.far.peek() {
            let slot = e.time.as_nanos() >> SLOT_BITS;
            if slot - self.current >= SLOTS as u64 {
                break;
            }
            let e = self.far.pop().expect("peeked");
            if slot == self.current {
                events.push(e);
            } else {
                self.file(e);
            }
        }
        let spare = std::mem::replace(&mut self.now, BinaryHeap::from(events)).into_vec();
        if spare.capacity() <= KEPT_CAPACITY {
            self.kept.push(spare);
        }
        true
    }
}

impl<E> EventList<E> for WheelEventList<E> {
    #[inline]
    fn push(&mut self, time: Time, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.len += 1;
        self.file(Entry { time, seq, event });
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<(Time, E)> {
        if self.now.is_empty() && !self.turn() {
            return None;
        }
        let e = self.now.pop().expect("the current slot holds an event");
        self.len -= 1;
        Some((e.time, e.event))
    }

    fn len(&self) -> usize {
        self.len
    }
}
