//! The event list: the simulator's clock and agenda.
//!
//! Events leave in the order of `(time, insertion sequence)`, so events due
//! at the same nanosecond leave in the order they were scheduled and runs
//! are deterministic. [`EventList`] is the small interface the simulator
//! uses; two structures implement it:
//!
//! - [`HeapEventList`], one binary heap: simple, the reference;
//! - [`WheelEventList`], a timing wheel of heaps: what the simulator runs,
//!   because one heap of many events (a TCP timer per flow, a packet on
//!   every wire) costs a cache miss a level on every push and pop; at
//!   10,000 flows the heap took a third of the run (`wheel.rs`).
//!
//! Both give the same order (property-tested), so the choice changes speed,
//! never results.

mod wheel;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use phb::Time;

pub use wheel::WheelEventList;

/// What an event list must offer.
pub trait EventList<E> {
    /// Schedules `event` at `time`.
    fn push(&mut self, time: Time, event: E);
    /// Removes the earliest event (ties in scheduling order).
    fn pop(&mut self) -> Option<(Time, E)>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An event with its place in the order.
struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so that the max-heap yields the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        other.time.cmp(&self.time).then_with(|| other.seq.cmp(&self.seq))
    }
}

/// A binary heap keyed by `(time, sequence)`.
pub struct HeapEventList<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for HeapEventList<E> {
    fn default() -> Self {
        HeapEventList { heap: BinaryHeap::with_capacity(1024), next_seq: 0 }
    }
}

impl<E> EventList<E> for HeapEventList<E> {
    #[inline]
    fn push(&mut self, time: Time, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }

    #[inline]
    fn pop(&mut self) -> Option<(Time, E)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same_time_events_leave_in_scheduling_order(list: &mut impl EventList<char>) {
        list.push(Time(5), 'a');
        list.push(Time(1), 'b');
        list.push(Time(5), 'c');
        list.push(Time(1), 'd');
        let order: Vec<char> = std::iter::from_fn(|| list.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    #[test]
    fn same_time_events_leave_in_scheduling_order_in_both() {
        same_time_events_leave_in_scheduling_order(&mut HeapEventList::default());
        same_time_events_leave_in_scheduling_order(&mut WheelEventList::default());
    }

    proptest! {
        #[test]
        fn pops_are_sorted_by_time_then_sequence(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut list = HeapEventList::default();
            for (i, &t) in times.iter().enumerate() {
                list.push(Time(t), i);
            }
            let mut expected: Vec<(u64, usize)> = times.iter().enumerate().map(|(i, &t)| (t, i)).collect();
            expected.sort();
            let got: Vec<(u64, usize)> = std::iter::from_fn(|| list.pop()).map(|(t, i)| (t.0, i)).collect();
            prop_assert_eq!(got, expected);
        }

        /// As a simulator uses it: pushes between pops at every distance
        /// from the last pop (the same nanosecond, the same slot, the
        /// wheel's span and far beyond, and in the past: a deadline already
        /// passed). The wheel pops what the heap pops.
        #[test]
        fn the_wheel_pops_what_the_heap_pops(
            steps in proptest::collection::vec((0usize..4, 0u32..8, 0u8..6), 1..400),
        ) {
            let mut heap = HeapEventList::default();
            let mut wheel = WheelEventList::default();
            let mut now = 0u64;
            let mut id = 0;
            for (pops, pushes, reach) in steps {
                for _ in 0..pushes {
                    if reach == 5 {
                        let back = (id as u64 * 7919) % (1 << 22);
                        heap.push(Time(now.saturating_sub(back)), id);
                        wheel.push(Time(now.saturating_sub(back)), id);
                        id += 1;
                        continue;
                    }
                    let ahead = match reach {
                        0 => 0,
                        1 => id as u64 % 7,
                        2 => (id as u64 * 7919) % (1 << 20),
                        3 => (id as u64 * 104_729) % (1 << 30),
                        _ => (id as u64 * 15_485_863) % (1 << 40),
                    };
                    heap.push(Time(now + ahead), id);
                    wheel.push(Time(now + ahead), id);
                    id += 1;
                }
                for _ in 0..pops {
                    let (a, b) = (heap.pop(), wheel.pop());
                    prop_assert_eq!(a.map(|(t, e)| (t.0, e)), b.map(|(t, e)| (t.0, e)));
                    if let Some((t, _)) = a {
                        now = t.0;
                    }
                    prop_assert_eq!(heap.len(), wheel.len());
                }
            }
            while let Some(a) = heap.pop() {
                prop_assert_eq!(Some((a.0 .0, a.1)), wheel.pop().map(|(t, e)| (t.0, e)));
            }
            prop_assert!(wheel.pop().is_none());
        }
    }
}
