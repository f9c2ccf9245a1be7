//! Self-Clocked Fair Queueing.
//!
//! S. J. Golestani, "A Self-Clocked Fair Queueing Scheme for Broadband
//! Applications", IEEE INFOCOM 1994. WFQ's tags with the GPS simulation
//! replaced by the system's own progress:
//!
//! - A packet of `L` bytes arriving at `a` to queue `k` gets
//!   `F = max(F_prev, v̂(a)) + L/r_k` (`F_prev` the tag of queue `k`'s
//!   previous packet, `r_k` its weight, here `phi`).
//! - `v̂(t)` is the finish tag of the packet in service at `t`.
//! - The link serves the smallest tag (ties to the lower queue index).
//!
//! Golestani resets `v̂` and the tags to 0 at the end of each busy period.
//! Without a completion hook the scheduler cannot see that instant; it keeps
//! `v̂` at the tag of the last packet served instead. The order is the same:
//! served tags never decrease (a new tag exceeds `v̂`, and the one served is
//! the smallest present), so after a busy period every `F_prev ≤ v̂` and each
//! new tag is `v̂ + L/r_k`, the reset case shifted by `v̂`.
//!
//! The heads wait in a [`Tournament`] tree by tag: the smallest in O(1),
//! O(log n) a packet to keep, instead of a scan of every queue.
//!
//! An evicted packet (a dropper's) never enters service, so `v̂` stays. Its
//! tag leaves the FIFO and the packets behind it keep theirs; if the
//! eviction empties the queue, `F_prev` rolls back to the evicted packet's
//! start `max(F_prev, v̂(a))`, so that a later arrival is tagged as if the
//! evicted packet had never come (served tags never decrease, so neither
//! does `v̂`).

use std::collections::VecDeque;

use super::tournament::Tournament;
use super::{check_heads, check_per_queue, evict_tag, Head, SchedError, Scheduler};
use crate::time::Time;

/// Self-Clocked Fair Queueing over `phi.len()` queues.
#[derive(Clone, Debug)]
pub struct Scfq {
    /// `r_k`, the weights.
    phi: Vec<f64>,
    /// `v̂`: the tag of the packet in service (or last served).
    v: f64,
    /// Tag of each queue's latest arrival.
    last_finish: Vec<f64>,
    /// `max(F_prev, v̂(a))` of each queue's latest arrival.
    last_start: Vec<f64>,
    /// Tags of the packets each queue holds, FIFO.
    tags: Vec<VecDeque<f64>>,
    /// The non-empty queues by their head's tag.
    heads: Tournament,
}

impl Scfq {
    /// `phi[k]`: weight of queue `k` (> 0).
    pub fn new(queues: usize, phi: Vec<f64>) -> Result<Scfq, SchedError> {
        check_per_queue("SCFQ", "phi", queues, &phi)?;
        Ok(Scfq {
            phi,
            v: 0.0,
            last_finish: vec![0.0; queues],
            last_start: vec![0.0; queues],
            tags: vec![VecDeque::new(); queues],
            heads: Tournament::new(queues),
        })
    }

    /// Queue `queue`'s head changed (or it emptied).
    fn head_update(&mut self, queue: usize) {
        self.heads.set(queue, self.tags[queue].front().copied());
    }

    /// `v̂`, the tag of the packet in service.
    pub fn virtual_time(&self) -> f64 {
        self.v
    }
}

impl Scheduler for Scfq {
    fn on_enqueue(&mut self, queue: usize, size: u32, _now: Time) {
        let s = self.last_finish[queue].max(self.v);
        let f = s + size as f64 / self.phi[queue];
        self.last_start[queue] = s;
        self.last_finish[queue] = f;
        self.tags[queue].push_back(f);
        if self.tags[queue].len() == 1 {
            self.head_update(queue);
        }
    }

    fn select(&mut self, heads: &[Option<Head>], _now: Time) -> Option<usize> {
        check_heads("SCFQ", heads, self.phi.len());
        let (_, q) = self.heads.min()?;
        debug_assert!(heads[q].is_some(), "SCFQ: queue {q} has a tag but no head");
        Some(q)
    }

    fn on_dequeue(&mut self, queue: usize, _size: u32, _now: Time) {
        let f = self.tags[queue].pop_front().unwrap_or_else(|| panic!("SCFQ: dequeue from empty queue {queue}"));
        self.v = f;
        self.head_update(queue);
    }

    /// Tag popped, `v̂` unchanged; an emptied queue's `F_prev` rolls back
    /// (see the module doc).
    fn on_evict(&mut self, queue: usize, _size: u32, _now: Time) {
        evict_tag("SCFQ", queue, &mut self.tags[queue], &mut self.last_finish[queue], self.last_start[queue]);
        self.head_update(queue);
    }
}

#[cfg(test)]
impl Scfq {
    pub(crate) fn check_state(&self, queues: &[VecDeque<Head>]) -> Result<(), String> {
        super::tests::check_tags("SCFQ", &self.tags, |&f| f, &self.last_finish, queues)
    }

    /// What a scan of every queue's head tag picks (ties to the lower
    /// queue), with what the tree holds.
    pub(crate) fn scan_and_trees(&self) -> [(Option<usize>, Option<usize>); 1] {
        let head = super::smallest(self.tags.iter().enumerate().filter_map(|(q, t)| t.front().map(|&f| (q, f))));
        [(head, self.heads.min().map(|(_, q)| q))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(size: u32) -> Option<Head> {
        Some(Head { size, enqueued: Time::ZERO })
    }

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            Scfq::new(2, vec![1.0, f64::INFINITY]).unwrap_err().to_string(),
            "SCFQ: `phi` of queue 1 must be positive and finite, got inf"
        );
        assert!(matches!(Scfq::new(2, vec![1.0]), Err(SchedError::CountMismatch { .. })));
    }

    /// φ = (1, 1). Queue 0: 1000 B (F 1000) served (v̂ = 1000), then 500 B
    /// (F 1500) and 500 B (F 2000). Evicting the first 500 leaves [2000] and
    /// v̂ = 1000; evicting the other rolls F_prev back to 1500 (the first
    /// evicted packet stays charged). Queue 1: 200 B (F 1200) evicted: F_prev
    /// back to 1000, and a new 200 B packet gets 1200 again.
    #[test]
    fn eviction_does_not_move_the_self_clock() {
        let mut s = Scfq::new(2, vec![1.0, 1.0]).unwrap();
        s.on_enqueue(0, 1000, Time::ZERO);
        assert_eq!(s.select(&[h(1000), None], Time::ZERO), Some(0));
        s.on_dequeue(0, 1000, Time::ZERO);
        s.on_enqueue(0, 500, Time::ZERO);
        s.on_enqueue(0, 500, Time::ZERO);
        s.on_evict(0, 500, Time::ZERO);
        assert_eq!((s.tags[0].front(), s.virtual_time()), (Some(&2000.0), 1000.0));
        s.on_evict(0, 500, Time::ZERO);
        assert_eq!(s.last_finish[0], 1500.0);
        s.on_enqueue(1, 200, Time::ZERO);
        s.on_evict(1, 200, Time::ZERO);
        s.on_enqueue(1, 200, Time::ZERO);
        assert_eq!(s.tags[1], [1200.0]);
        assert_eq!(s.virtual_time(), 1000.0);
    }

    /// φ = (1, 1). t=0: two 1000 B packets to queue 0 (F = 1000, 2000).
    /// The first goes into service: v̂ = 1000. During it a 500 B packet
    /// reaches queue 1: F = max(0, 1000) + 500 = 1500 < 2000, so it is
    /// served next, making v̂ = 1500; then queue 0's second (v̂ = 2000).
    /// A 100 B packet to queue 1 after the busy period: F = 2000 + 100.
    #[test]
    fn hand_checked_self_clock() {
        let mut s = Scfq::new(2, vec![1.0, 1.0]).unwrap();
        s.on_enqueue(0, 1000, Time::ZERO);
        s.on_enqueue(0, 1000, Time::ZERO);
        assert_eq!(s.select(&[h(1000), None], Time::ZERO), Some(0));
        s.on_dequeue(0, 1000, Time::ZERO);
        assert_eq!(s.virtual_time(), 1000.0);
        s.on_enqueue(1, 500, Time::from_micros(1));
        assert_eq!(s.select(&[h(1000), h(500)], Time::from_micros(8)), Some(1));
        s.on_dequeue(1, 500, Time::from_micros(8));
        assert_eq!(s.virtual_time(), 1500.0);
        assert_eq!(s.select(&[h(1000), None], Time::from_micros(12)), Some(0));
        s.on_dequeue(0, 1000, Time::from_micros(12));
        assert_eq!(s.virtual_time(), 2000.0);
        s.on_enqueue(1, 100, Time::from_secs(1));
        assert_eq!(s.select(&[None, h(100)], Time::from_secs(1)), Some(1));
        s.on_dequeue(1, 100, Time::from_secs(1));
        assert_eq!(s.virtual_time(), 2100.0);
    }
}
