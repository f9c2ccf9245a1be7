//! Weighted Interleaved Round Robin, with ns-2 dsRED's semantics.
//!
//! Follows `dsWIRR::DequeEvent` in ns-2's `diffserv/dsscheduler.cc` (the same
//! rule as `schedModeWIRR` in the older `diffserv/dsred.cc`): a *round* gives
//! each queue `queueWeight` credits (packets). The pointer advances one queue
//! per packet, so queues with credit left take turns one packet at a time
//! (the interleaving); a queue whose credit runs out, or that is empty when
//! the pointer reaches it, sits out the rest of the round (ns-2's
//! `wirrqDone`). When every queue sits out, a new round starts with fresh
//! credits (unused credit is not carried over). With weights 3, 1, 2 one
//! round is `0 1 2 0 2 0` — against WRR's `0 0 0 1 2 2`.
//!
//! Departures from ns-2, both start-up or corner cases:
//!
//! - ns-2 starts with `queuesDone = MAX_QUEUES`, so its very first packet is
//!   served before the first round's credits are set; here the first round
//!   starts at once, at queue 0.
//! - When every backlogged queue sits out but a queue that was empty when
//!   passed has not been marked yet, ns-2's scan marks it, starts a new round
//!   and returns "no packet" (the link idles until the next arrival). Here
//!   the new round starts and a packet is served: the scheduler is
//!   work-conserving.
//!
//! An eviction sends nothing: it uses no credit and moves no pointer; a
//! queue it empties sits out when the next scan passes it, as it would had
//! the packet never come.

use super::{check_heads, check_per_queue, Head, SchedError, Scheduler};
use crate::time::Time;

/// Weighted Interleaved Round Robin over `queue_weight.len()` queues.
#[derive(Clone, Debug)]
pub struct Wirr {
    /// `queueWeight`: packets per round, per queue.
    queue_weight: Vec<u32>,
    /// Credits left in this round (ns-2 `wirrTemp`).
    credit: Vec<u32>,
    /// Sits out the rest of the round (ns-2 `wirrqDone`).
    done: Vec<bool>,
    /// How many queues sit out (ns-2 `queuesDone`).
    done_count: usize,
    /// The last queue served (ns-2 `qToDq`).
    pos: usize,
}

impl Wirr {
    /// `queue_weight[i]`: packets queue `i` may send per round (≥ 1).
    pub fn new(queues: usize, queue_weight: Vec<u32>) -> Result<Wirr, SchedError> {
        let w: Vec<f64> = queue_weight.iter().map(|&w| w as f64).collect();
        check_per_queue("WIRR", "queue_weight", queues, &w)?;
        Ok(Wirr {
            credit: queue_weight.clone(),
            queue_weight,
            done: vec![false; queues],
            done_count: 0,
            pos: queues - 1,
        })
    }

    fn new_round(&mut self) {
        self.credit.copy_from_slice(&self.queue_weight);
        self.done.fill(false);
        self.done_count = 0;
    }

    fn sit_out(&mut self, q: usize) {
        if !self.done[q] {
            self.done[q] = true;
            self.done_count += 1;
        }
    }

    /// The next queue after `pos` that has not sat out, marking the empty
    /// ones passed on the way as sitting out.
    fn scan(&mut self, heads: &[Option<Head>]) -> Option<usize> {
        let n = self.queue_weight.len();
        for k in 1..=n {
            let j = (self.pos + k) % n;
            if self.done[j] {
                continue;
            }
            if heads[j].is_none() {
                self.sit_out(j);
                continue;
            }
            return Some(j);
        }
        None
    }
}

impl Scheduler for Wirr {
    fn on_enqueue(&mut self, queue: usize, _size: u32, _now: Time) {
        assert!(queue < self.queue_weight.len(), "WIRR: queue {queue} out of range");
    }

    fn select(&mut self, heads: &[Option<Head>], _now: Time) -> Option<usize> {
        check_heads("WIRR", heads, self.queue_weight.len());
        if let Some(q) = self.scan(heads) {
            return Some(q);
        }
        // Every queue sits out: a new round.
        self.new_round();
        if heads.iter().all(Option::is_none) {
            return None;
        }
        self.scan(heads)
    }

    fn on_dequeue(&mut self, queue: usize, _size: u32, _now: Time) {
        self.credit[queue] = self.credit[queue].saturating_sub(1);
        if self.credit[queue] == 0 {
            self.sit_out(queue);
        }
        self.pos = queue;
        if self.done_count >= self.queue_weight.len() {
            self.new_round();
        }
    }

    /// No credit used, pointer unmoved (see the module doc).
    fn on_evict(&mut self, queue: usize, _size: u32, _now: Time) {
        assert!(queue < self.queue_weight.len(), "WIRR: queue {queue} out of range");
    }
}

#[cfg(test)]
impl Wirr {
    pub(crate) fn check_state(&self, queues: &[std::collections::VecDeque<Head>]) -> Result<(), String> {
        use super::tests::same;
        same("WIRR", "queues", 0, self.queue_weight.len(), queues.len())?;
        same("WIRR", "queues sitting out", 0, self.done_count, self.done.iter().filter(|&&d| d).count())?;
        for (i, (&c, &w)) in self.credit.iter().zip(&self.queue_weight).enumerate() {
            if c > w {
                return Err(format!("WIRR: queue {i} has credit {c} above its weight {w}"));
            }
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
            Wirr::new(2, vec![0, 1]).unwrap_err().to_string(),
            "WIRR: `queue_weight` of queue 0 must be positive and finite, got 0"
        );
        assert!(matches!(Wirr::new(2, vec![1, 1, 1]), Err(SchedError::CountMismatch { .. })));
    }

    /// Weights 3, 1, 2, all backlogged. Round 1 from queue 0:
    /// 0 (credit 3→2), 1 (1→0, out), 2 (2→1), 0 (2→1), [1 out] 2 (1→0, out),
    /// 0 (1→0, out) → all out, new round, pointer on 0.
    /// Round 2 from queue 1: 1 (out), 2, 0, [1] 2 (out), 0, [1, 2] 0 (out).
    #[test]
    fn hand_checked_order() {
        let mut s = Wirr::new(3, vec![3, 1, 2]).unwrap();
        let order = serve_order(&mut s, &[vec![100; 9], vec![100; 3], vec![100; 6]], 12);
        assert_eq!(order, [0, 1, 2, 0, 2, 0, 1, 2, 0, 2, 0, 0]);
    }

    /// Only queue 0 backlogged (weight 1; queue 1 empty): ns-2 would return
    /// "no packet" every other time; here queue 0 is served every time.
    #[test]
    fn work_conserving_when_the_others_are_empty() {
        let mut s = Wirr::new(2, vec![1, 1]).unwrap();
        let order = serve_order(&mut s, &[vec![100; 5], vec![]], 5);
        assert_eq!(order, [0; 5]);
    }
}
