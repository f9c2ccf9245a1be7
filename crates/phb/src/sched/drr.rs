//! Deficit Round Robin.
//!
//! M. Shreedhar, G. Varghese, "Efficient Fair Queuing using Deficit Round
//! Robin", SIGCOMM 1995 (and IEEE/ACM ToN 4(3), 1996), Figure 3 / §3.1:
//!
//! - Each queue `i` has a `Quantum_i` (bytes) and a `DeficitCounter_i`.
//! - Backlogged queues sit on the `ActiveList` in round-robin order; a queue
//!   becoming backlogged joins its tail with `DeficitCounter_i = 0`.
//! - When a queue comes to the head of the list, `DeficitCounter_i +=
//!   Quantum_i`; it then sends head packets while the head's size ≤
//!   `DeficitCounter_i`, subtracting each size. If the queue empties, its
//!   deficit resets to 0 and it leaves the list; otherwise it moves to the
//!   tail keeping its deficit.
//!
//! Long-run byte shares are the quanta's shares whatever the packet sizes
//! (Lemma 2 of the paper: over `k` rounds a backlogged queue sends
//! `k·Quantum_i ± Max` bytes). The paper's O(1) condition `Quantum_i ≥ Max`
//! is not required: a smaller quantum only makes a queue wait several rounds.

use std::collections::VecDeque;

use super::{check_heads, check_per_queue, Head, SchedError, Scheduler};
use crate::time::Time;

/// Deficit Round Robin over `quantum.len()` queues.
#[derive(Clone, Debug)]
pub struct Drr {
    /// `Quantum_i`, bytes.
    quantum: Vec<u32>,
    /// `DeficitCounter_i`, bytes.
    deficit: Vec<u64>,
    /// `ActiveList`: the backlogged queues, head first.
    active: VecDeque<usize>,
    /// The head of `active` has received its quantum for this visit.
    granted: bool,
    /// Packets in each queue.
    count: Vec<usize>,
}

impl Drr {
    /// `quantum[i]`: bytes queue `i` may send per round (≥ 1).
    pub fn new(queues: usize, quantum: Vec<u32>) -> Result<Drr, SchedError> {
        let q: Vec<f64> = quantum.iter().map(|&q| q as f64).collect();
        check_per_queue("DRR", "quantum", queues, &q)?;
        Ok(Drr {
            quantum,
            deficit: vec![0; queues],
            active: VecDeque::with_capacity(queues),
            granted: false,
            count: vec![0; queues],
        })
    }

    /// `DeficitCounter_i` in bytes.
    pub fn deficit(&self, queue: usize) -> u64 {
        self.deficit[queue]
    }
}

impl Scheduler for Drr {
    fn on_enqueue(&mut self, queue: usize, _size: u32, _now: Time) {
        self.count[queue] += 1;
        if self.count[queue] == 1 {
            self.deficit[queue] = 0;
            self.active.push_back(queue);
        }
    }

    fn select(&mut self, heads: &[Option<Head>], _now: Time) -> Option<usize> {
        check_heads("DRR", heads, self.quantum.len());
        loop {
            let &i = self.active.front()?;
            if !self.granted {
                self.deficit[i] += self.quantum[i] as u64;
                self.granted = true;
            }
            let head = heads[i].unwrap_or_else(|| panic!("DRR: active queue {i} has no head"));
            if head.size as u64 <= self.deficit[i] {
                return Some(i);
            }
            // Not enough deficit: to the tail, keeping it.
            self.active.rotate_left(1);
            self.granted = false;
        }
    }

    fn on_dequeue(&mut self, queue: usize, size: u32, _now: Time) {
        assert_eq!(self.active.front(), Some(&queue), "DRR: dequeue from a queue not selected");
        self.deficit[queue] = self.deficit[queue].saturating_sub(size as u64);
        self.count[queue] -= 1;
        if self.count[queue] == 0 {
            self.deficit[queue] = 0;
            self.active.pop_front();
            self.granted = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::serve_order;

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            Drr::new(2, vec![500, 0]).unwrap_err().to_string(),
            "DRR: `quantum` of queue 1 must be positive and finite, got 0"
        );
        assert_eq!(
            Drr::new(2, vec![500]).unwrap_err().to_string(),
            "DRR: `quantum` has 1 entries but there are 2 queues (one entry per queue)"
        );
    }

    /// Quanta 500 / 1000, packets 600 (queue 0) / 300 (queue 1), both
    /// backlogged, queue 0 first on the active list. Deficits (q0, q1):
    ///
    /// - round 1: q0 500 < 600 → skip; q1 1000 → 300 ×3 (100 left)
    /// - round 2: q0 1000 → 600 (400); q1 1100 → ×3 (200)
    /// - round 3: q0 900 → 600 (300); q1 1200 → ×4 (0)
    /// - round 4: q0 800 → 600 (200); q1 1000 → ×3 (100)
    /// - round 5: q0 700 → 600 (100); q1 1100 → ×3 (200)
    /// - round 6: q0 600 → 600 (0);   q1 1200 → ×4 (0)
    ///
    /// After 6 rounds both deficits are 0 again: q0 sent 5×600 = 6×500,
    /// q1 20×300 = 6×1000 bytes.
    #[test]
    fn hand_checked_order() {
        let mut s = Drr::new(2, vec![500, 1000]).unwrap();
        let order = serve_order(&mut s, &[vec![600; 10], vec![300; 40]], 25);
        #[rustfmt::skip]
        let expected = [
            1, 1, 1,
            0, 1, 1, 1,
            0, 1, 1, 1, 1,
            0, 1, 1, 1,
            0, 1, 1, 1,
            0, 1, 1, 1, 1,
        ];
        assert_eq!(order, expected);
        assert_eq!((s.deficit(0), s.deficit(1)), (0, 0));
    }

    #[test]
    fn an_emptied_queue_forgets_its_deficit() {
        let mut s = Drr::new(2, vec![1000, 1000]).unwrap();
        let order = serve_order(&mut s, &[vec![100], vec![100; 3]], 2);
        assert_eq!(order, [0, 1]);
        // Queue 0 emptied with 900 left over: reset, off the list.
        assert_eq!(s.deficit(0), 0);
    }
}
