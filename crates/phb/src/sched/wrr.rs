//! Weighted Round Robin, with ns-2 dsRED's semantics.
//!
//! Follows `dsWRR::DequeEvent` in ns-2's `diffserv/dsscheduler.cc` (the same
//! rule as `schedModeWRR` in the older `diffserv/dsred.cc`,
//! `selectQueueToDeque`): a pointer visits the queues cyclically; on a visit
//! a queue may send up to `queueWeight` packets back to back (a weight is a
//! packet count — ns-2 rounds a fractional weight up), then the pointer moves
//! on. A queue found empty gives up the rest of its visit (its credit is
//! zeroed) and the pointer moves to the next queue, which starts a fresh
//! visit. Packet sizes are ignored: with equal sizes the byte shares are the
//! weights' shares; with unequal sizes they are weight × size shares.
//!
//! Departure: ns-2 starts with the pointer on queue 0 holding no credit, so
//! its first packet comes from queue 1; here the first visit is queue 0's.
//! Otherwise the order is ns-2's.
//!
//! An eviction sends nothing, so it uses no credit and leaves the pointer;
//! the round state holds no per-queue contents (a visited queue that the
//! eviction empties is found empty by the next `select`, as it would be had
//! the packet never come).

use super::{check_heads, check_per_queue, Head, SchedError, Scheduler};
use crate::time::Time;

/// Weighted Round Robin over `queue_weight.len()` queues.
#[derive(Clone, Debug)]
pub struct Wrr {
    /// `queueWeight`: packets per visit, per queue.
    queue_weight: Vec<u32>,
    /// The queue being visited (ns-2 `qToDq`).
    cur: usize,
    /// Packets `cur` may still send in this visit after the ones it sent
    /// (ns-2 `wirrTemp[qToDq]`).
    credit: u32,
}

impl Wrr {
    /// `queue_weight[i]`: packets queue `i` may send per visit (≥ 1).
    pub fn new(queues: usize, queue_weight: Vec<u32>) -> Result<Wrr, SchedError> {
        let w: Vec<f64> = queue_weight.iter().map(|&w| w as f64).collect();
        check_per_queue("WRR", "queue_weight", queues, &w)?;
        Ok(Wrr { cur: queues - 1, credit: 0, queue_weight })
    }
}

impl Scheduler for Wrr {
    fn on_enqueue(&mut self, queue: usize, _size: u32, _now: Time) {
        assert!(queue < self.queue_weight.len(), "WRR: queue {queue} out of range");
    }

    fn select(&mut self, heads: &[Option<Head>], _now: Time) -> Option<usize> {
        let n = self.queue_weight.len();
        check_heads("WRR", heads, n);
        if self.credit > 0 && heads[self.cur].is_some() {
            return Some(self.cur);
        }
        // Next queue in cyclic order, `cur` itself last (a fresh visit).
        (1..=n).map(|k| (self.cur + k) % n).find(|&j| heads[j].is_some())
    }

    fn on_dequeue(&mut self, queue: usize, _size: u32, _now: Time) {
        if queue == self.cur && self.credit > 0 {
            self.credit -= 1;
        } else {
            self.cur = queue;
            self.credit = self.queue_weight[queue] - 1;
        }
    }

    /// No credit used, pointer unmoved (see the module doc).
    fn on_evict(&mut self, queue: usize, _size: u32, _now: Time) {
        assert!(queue < self.queue_weight.len(), "WRR: queue {queue} out of range");
    }
}

#[cfg(test)]
impl Wrr {
    pub(crate) fn check_state(&self, queues: &[std::collections::VecDeque<Head>]) -> Result<(), String> {
        use super::tests::same;
        same("WRR", "queues", 0, self.queue_weight.len(), queues.len())?;
        if self.credit >= self.queue_weight[self.cur] {
            return Err(format!("WRR: credit {} of queue {} reaches its weight", self.credit, self.cur));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::serve_order;

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            Wrr::new(3, vec![1, 0, 2]).unwrap_err().to_string(),
            "WRR: `queue_weight` of queue 1 must be positive and finite, got 0"
        );
        assert_eq!(
            Wrr::new(3, vec![1, 2]).unwrap_err().to_string(),
            "WRR: `queue_weight` has 2 entries but there are 3 queues (one entry per queue)"
        );
        assert!(matches!(Wrr::new(0, vec![]), Err(SchedError::NoQueues { .. })));
    }

    /// Weights 3, 1, 2, all backlogged: 0 0 0 1 2 2, repeated.
    #[test]
    fn hand_checked_order() {
        let mut s = Wrr::new(3, vec![3, 1, 2]).unwrap();
        let order = serve_order(&mut s, &[vec![100; 9], vec![100; 3], vec![100; 6]], 12);
        assert_eq!(order, [0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 2, 2]);
    }

    /// Queue 0 holds only 2 packets: its visit ends early when it empties;
    /// queue 1 empty throughout is skipped.
    #[test]
    fn empty_queue_ends_its_visit() {
        let mut s = Wrr::new(3, vec![3, 1, 2]).unwrap();
        let order = serve_order(&mut s, &[vec![100; 2], vec![], vec![100; 5]], 7);
        assert_eq!(order, [0, 0, 2, 2, 2, 2, 2]);
    }
}
