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
//!
//! An evicted packet (a dropper's) was not sent, so its size is not taken
//! from the deficit. A queue the eviction empties leaves the `ActiveList`
//! wherever it stands in it, its deficit reset to 0 as for a queue emptied
//! by service; if it was at the head, the next queue starts a fresh visit.

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

    /// Deficit not charged; an emptied queue leaves the active list from
    /// any position (see the module doc).
    fn on_evict(&mut self, queue: usize, _size: u32, _now: Time) {
        assert!(self.count[queue] > 0, "DRR: eviction from empty queue {queue}");
        self.count[queue] -= 1;
        if self.count[queue] == 0 {
            self.deficit[queue] = 0;
            let pos = self
                .active
                .iter()
                .position(|&q| q == queue)
                .unwrap_or_else(|| panic!("DRR: backlogged queue {queue} not on the active list"));
            self.active.remove(pos);
            if pos == 0 {
                self.granted = false;
            }
        }
    }
}

#[cfg(test)]
impl Drr {
    pub(crate) fn check_state(&self, queues: &[VecDeque<Head>]) -> Result<(), String> {
        use super::tests::same;
        same("DRR", "queues", 0, self.count.len(), queues.len())?;
        for (i, q) in queues.iter().enumerate() {
            same("DRR", "packets", i, self.count[i], q.len())?;
            let on_list = self.active.iter().filter(|&&a| a == i).count();
            same("DRR", "times on the active list", i, on_list, usize::from(!q.is_empty()))?;
            if q.is_empty() {
                same("DRR", "deficit of an empty queue", i, self.deficit[i], 0)?;
            }
        }
        same("DRR", "active list length", 0, self.active.len(), queues.iter().filter(|q| !q.is_empty()).count())?;
        if self.active.is_empty() && self.granted {
            return Err("DRR: a quantum granted with an empty active list".into());
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

    /// Quanta 1000 each. Queue 0: 600, 600; queue 1: 300; queue 2: 400,
    /// 400; active list 0, 1, 2. Queue 0 gets 1000, sends 600 (400 left).
    /// Queue 1's only packet is evicted while queue 1 is second on the list:
    /// it leaves the list (a `select` reaching it would find no head).
    /// Queue 0's 600 > 400 → tail: list 2, 0; queue 2 gets 1000, sends 400
    /// (600 left). Queue 0's last packet is evicted from the list's tail:
    /// list 2, deficit 0. Queue 2 sends its second; all empty.
    #[test]
    fn eviction_empties_a_queue_behind_the_head_of_the_list() {
        let mut s = Drr::new(3, vec![1000; 3]).unwrap();
        let mut queues: Vec<VecDeque<Head>> = vec![VecDeque::new(); 3];
        for (q, size) in [(0, 600), (0, 600), (1, 300), (2, 400), (2, 400)] {
            queues[q].push_back(Head { size, enqueued: Time::ZERO });
            s.on_enqueue(q, size, Time::ZERO);
        }
        let heads =
            |queues: &Vec<VecDeque<Head>>| -> Vec<Option<Head>> { queues.iter().map(|q| q.front().copied()).collect() };
        let serve = |s: &mut Drr, queues: &mut Vec<VecDeque<Head>>| -> Option<usize> {
            let q = s.select(&heads(queues), Time::ZERO)?;
            let head = queues[q].pop_front().unwrap();
            s.on_dequeue(q, head.size, Time::ZERO);
            Some(q)
        };
        assert_eq!(serve(&mut s, &mut queues), Some(0));
        assert_eq!(s.deficit(0), 400);
        assert_eq!(s.active, [0, 1, 2]);

        queues[1].pop_front();
        s.on_evict(1, 300, Time::ZERO);
        assert_eq!(s.active, [0, 2]);
        assert_eq!(s.deficit(1), 0);
        s.check_state(&queues).unwrap();

        assert_eq!(serve(&mut s, &mut queues), Some(2));
        assert_eq!((s.deficit(0), s.deficit(2)), (400, 600));
        assert_eq!(s.active, [2, 0]);

        queues[0].pop_front();
        s.on_evict(0, 600, Time::ZERO);
        assert_eq!(s.active, [2]);
        assert_eq!(s.deficit(0), 0);
        s.check_state(&queues).unwrap();

        assert_eq!(serve(&mut s, &mut queues), Some(2));
        assert_eq!(serve(&mut s, &mut queues), None);
        s.check_state(&queues).unwrap();
    }

    /// Evicting the last packet of the queue at the head of the list, after
    /// its quantum was granted: the next queue gets a fresh quantum.
    #[test]
    fn eviction_empties_the_head_of_the_list() {
        let mut s = Drr::new(2, vec![1000, 500]).unwrap();
        s.on_enqueue(0, 600, Time::ZERO);
        s.on_enqueue(1, 300, Time::ZERO);
        s.on_enqueue(1, 300, Time::ZERO);
        let h = |size| Some(Head { size, enqueued: Time::ZERO });
        assert_eq!(s.select(&[h(600), h(300)], Time::ZERO), Some(0));
        s.on_evict(0, 600, Time::ZERO);
        assert_eq!((s.deficit(0), s.granted), (0, false));
        assert_eq!(s.select(&[None, h(300)], Time::ZERO), Some(1));
        s.on_dequeue(1, 300, Time::ZERO);
        assert_eq!(s.deficit(1), 200);
        // 300 > 200: to the tail (alone), a fresh 500.
        assert_eq!(s.select(&[None, h(300)], Time::ZERO), Some(1));
        s.on_dequeue(1, 300, Time::ZERO);
        assert_eq!(s.deficit(1), 0);
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
