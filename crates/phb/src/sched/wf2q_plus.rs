//! WF²Q+ (Worst-case Fair Weighted Fair Queueing, plus).
//!
//! J. C. R. Bennett, H. Zhang, "Hierarchical Packet Fair Queueing
//! Algorithms", IEEE/ACM ToN 5(5), 1997, the definition of WF²Q+ (its
//! virtual-time function and tag equations, restated here):
//!
//! - System virtual time, updated as packets are served:
//!   `V(t + τ) = max(V(t) + W(t, t + τ), min_{i∈B̂(t+τ)} S_i)`,
//!   `W` the work (bytes) done in between, `B̂` the backlogged queues, `S_i`
//!   the start tag of queue `i`'s head.
//! - Head tags: a packet reaching the head of an empty queue gets
//!   `S_i = max(F_i, V(a))`; a packet reaching the head after its
//!   predecessor leaves gets `S_i = F_i`; then `F_i = S_i + L/r_i`. A queue
//!   being FIFO, both are known when the packet arrives (`S = F_prev` if
//!   the queue is not empty), so tags are computed in `on_enqueue` and kept
//!   in a per-queue FIFO.
//! - Smallest Eligible virtual Finish time First: among heads with
//!   `S_i ≤ V`, serve the smallest `F_i` (ties to the lower index).
//!
//! `r_i` is the guaranteed rate `φ_i/Σφ_j · r`; with `V` in bytes (the work
//! unit of `W`) the rate drops out: `L/r_i` becomes `L·Σφ_j/φ_i`. The link
//! rate is therefore not a parameter. `V` is brought up to
//! `max(V, min S)` in `select` and advanced by `L` in `on_dequeue`, which
//! is the `V` update evaluated at every packet boundary.
//!
//! An evicted packet (a dropper's) did no work: `V` is not advanced. Its
//! tags leave the FIFO and the packets behind it keep theirs; if the
//! eviction empties the queue, `F_i` rolls back to the evicted packet's
//! `S_i`, so that a later arrival gets `S = max(F_i, V)` as if the evicted
//! packet had never come (`V` is non-decreasing).

use std::collections::VecDeque;

use super::{check_heads, check_per_queue, smallest, Head, SchedError, Scheduler};
use crate::time::Time;

/// WF²Q+ over `phi.len()` queues.
#[derive(Clone, Debug)]
pub struct Wf2qPlus {
    /// `φ_i`, the weights (guaranteed rate share `φ_i/Σφ`).
    phi: Vec<f64>,
    sum_phi: f64,
    /// `V`, bytes.
    v: f64,
    /// Finish tag of each queue's latest arrival.
    last_finish: Vec<f64>,
    /// `(S, F)` of the packets each queue holds, FIFO.
    tags: Vec<VecDeque<(f64, f64)>>,
}

impl Wf2qPlus {
    /// `phi[i]`: weight of queue `i` (> 0).
    pub fn new(queues: usize, phi: Vec<f64>) -> Result<Wf2qPlus, SchedError> {
        check_per_queue("WF2Q+", "phi", queues, &phi)?;
        Ok(Wf2qPlus {
            sum_phi: phi.iter().sum(),
            phi,
            v: 0.0,
            last_finish: vec![0.0; queues],
            tags: vec![VecDeque::new(); queues],
        })
    }

    /// The system virtual time `V` (bytes).
    pub fn virtual_time(&self) -> f64 {
        self.v
    }
}

impl Scheduler for Wf2qPlus {
    fn on_enqueue(&mut self, queue: usize, size: u32, _now: Time) {
        let s = if self.tags[queue].is_empty() { self.last_finish[queue].max(self.v) } else { self.last_finish[queue] };
        let f = s + size as f64 * self.sum_phi / self.phi[queue];
        self.last_finish[queue] = f;
        self.tags[queue].push_back((s, f));
    }

    fn select(&mut self, heads: &[Option<Head>], _now: Time) -> Option<usize> {
        check_heads("WF2Q+", heads, self.phi.len());
        let head_tag = |i: usize| -> (f64, f64) {
            *self.tags[i].front().unwrap_or_else(|| panic!("WF2Q+: queue {i} has a head but no tag"))
        };
        let backlogged = || (0..heads.len()).filter(|&i| heads[i].is_some());
        let min_s = backlogged().map(|i| head_tag(i).0).reduce(f64::min)?;
        self.v = self.v.max(min_s);
        let v = self.v;
        smallest(backlogged().map(|i| (i, head_tag(i))).filter(|&(_, (s, _))| s <= v).map(|(i, (_, f))| (i, f)))
    }

    fn on_dequeue(&mut self, queue: usize, size: u32, _now: Time) {
        self.tags[queue].pop_front();
        self.v += size as f64;
    }

    /// Tags popped, `V` unchanged; an emptied queue's `F_i` rolls back to
    /// the evicted `S_i` (see the module doc).
    fn on_evict(&mut self, queue: usize, _size: u32, _now: Time) {
        let (s, _) = self.tags[queue].pop_front().unwrap_or_else(|| panic!("WF2Q+: eviction from empty queue {queue}"));
        if self.tags[queue].is_empty() {
            self.last_finish[queue] = s;
        }
    }
}

#[cfg(test)]
impl Wf2qPlus {
    pub(crate) fn check_state(&self, queues: &[VecDeque<Head>]) -> Result<(), String> {
        super::tests::check_tags("WF2Q+", &self.tags, |&(_, f)| f, &self.last_finish, queues)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::serve_order;

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            Wf2qPlus::new(2, vec![0.0, 1.0]).unwrap_err().to_string(),
            "WF2Q+: `phi` of queue 0 must be positive and finite, got 0"
        );
        assert!(matches!(Wf2qPlus::new(3, vec![1.0]), Err(SchedError::CountMismatch { .. })));
        assert!(matches!(Wf2qPlus::new(0, vec![]), Err(SchedError::NoQueues { .. })));
    }

    /// φ = (1, 1), Σφ = 2. Queue 0: 100 B (S 0, F 200), 100 B (S 200,
    /// F 400). Evicting the head leaves (200, 400) and V = 0; evicting that
    /// too rolls F_0 back to 200 (the first packet's finish, still charged);
    /// a new 100 B packet gets S = max(200, 0) = 200. Queue 1: 100 B (S 0,
    /// F 200) evicted: F_1 back to 0, and a new one gets (0, 200) again.
    #[test]
    fn eviction_does_no_work() {
        let mut s = Wf2qPlus::new(2, vec![1.0, 1.0]).unwrap();
        s.on_enqueue(0, 100, Time::ZERO);
        s.on_enqueue(0, 100, Time::ZERO);
        s.on_evict(0, 100, Time::ZERO);
        assert_eq!(s.tags[0], [(200.0, 400.0)]);
        s.on_evict(0, 100, Time::ZERO);
        assert_eq!(s.last_finish[0], 200.0);
        s.on_enqueue(0, 100, Time::ZERO);
        assert_eq!(s.tags[0], [(200.0, 400.0)]);
        s.on_enqueue(1, 100, Time::ZERO);
        s.on_evict(1, 100, Time::ZERO);
        s.on_enqueue(1, 100, Time::ZERO);
        assert_eq!(s.tags[1], [(0.0, 200.0)]);
        assert_eq!(s.virtual_time(), 0.0);
    }

    /// Bennett & Zhang's example (WF²Q, INFOCOM 1996): queue 0 has φ = 10
    /// and 11 packets, queues 1..=10 φ = 1 and one packet each, all 100 B at
    /// t=0; Σφ = 20. Tags: queue 0 S = 200(k−1), F = 200k; others S = 0,
    /// F = 2000. V starts at 0 and grows by 100 per packet:
    /// V=0: q0 (S 0) eligible, F 200 smallest → q0; V=100: q0's S=200 > V,
    /// q1 (S 0) → q1; V=200: q0 (S 200, F 400) → q0; … so queue 0 alternates
    /// with the others (WFQ instead sends ten of queue 0's first).
    #[test]
    fn hand_checked_order_alternates() {
        let mut phi = vec![10.0];
        phi.extend([1.0; 10]);
        let mut s = Wf2qPlus::new(11, phi).unwrap();
        let mut contents = vec![vec![100; 11]];
        contents.extend(vec![vec![100]; 10]);
        let order = serve_order(&mut s, &contents, 21);
        let mut expected = Vec::new();
        for k in 1..=10 {
            expected.extend([0, k]);
        }
        expected.push(0);
        assert_eq!(order, expected);
        // 21 packets of 100 B, and V never had to jump to a start tag.
        assert_eq!(s.virtual_time(), 2100.0);
    }
}
