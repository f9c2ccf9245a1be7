//! The event list: the simulator's clock and agenda.
//!
//! Events are kept in a binary heap keyed by `(time, insertion sequence)`, so
//! events due at the same nanosecond leave in the order they were scheduled
//! and runs are deterministic. [`EventList`] is the small interface the
//! simulator uses, so that another structure (a calendar queue) can be
//! measured against the heap later.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use phb::Time;

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

    #[test]
    fn same_time_events_leave_in_scheduling_order() {
        let mut list = HeapEventList::default();
        list.push(Time(5), 'a');
        list.push(Time(1), 'b');
        list.push(Time(5), 'c');
        list.push(Time(1), 'd');
        let order: Vec<char> = std::iter::from_fn(|| list.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
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
    }
}
