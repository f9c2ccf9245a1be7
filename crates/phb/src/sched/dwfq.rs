//! DWFQ — Dynamic Weighted Fair Queueing for proportional delay
//! differentiation.
//!
//! Named after C. C. Li, S.-L. Tsao, M. C. Chen, Y. Sun, Y.-M. Huang,
//! "Proportional delay differentiation service based on weighted fair
//! queueing", IEEE ICCCN 2000 (the thesis' ref. 14), used in the thesis'
//! Section 5.4 (Figs. 18–19). Li et al. extend WFQ so that "the weight of
//! each class is adjusted dynamically" to hold the delay ratios; their exact
//! update rule could not be consulted here, so the rule below is an
//! **assumption**, taken from the thesis itself: the backlog-proportional
//! weights of BEDS with forced delay ratio (Firoiu & Zhang, ICT 2001; thesis
//! Section 3.2, eq. 5, `w_UDP / w_TCP = δ q_UDP / q_TCP⁺`), which are BPR's
//! rates (eq. 10) used as WFQ weights.
//!
//! - On each arrival, the weights are set from the backlogs `q_j` in bytes
//!   (the arrival included), as shares of the link:
//!   `φ_i = s_i q_i / Σ_j s_j q_j`. The arriving packet (`L` bytes, queue
//!   `i`) is tagged with the current weight, `F = max(F_prev, v̂) + L/φ_i`;
//!   queued packets keep their tags. Eq. (5)'s `q⁺ = max(q, 1)` is not
//!   needed: the arriving class holds at least the new packet.
//! - The virtual time is self-clocked (SCFQ, Golestani 1994): `v̂` is the tag
//!   of the packet in service, kept after a busy period as in
//!   [`super::scfq`]. A GPS virtual time is ill-defined when weights change
//!   at every arrival; SCFQ needs only the tags.
//! - The smallest head tag is served, ties to the lower queue index.
//!
//! `s_i` plays the role of `δ` in eq. (5): two classes TS/DS with
//! `s = [1, δ]` ([`Dwfq::with_delta`]), larger `s_i` → lower delay.
//!
//! An evicted packet (a dropper's) leaves the backlogs that set the next
//! weights and its tag leaves the FIFO; `v̂` stays (it never entered
//! service) and the packets behind it keep their tags. If the eviction
//! empties the queue, `F_prev` rolls back to the evicted packet's start
//! `max(F_prev, v̂(a))`, as in [`super::scfq`].

use std::collections::VecDeque;

use super::{check_heads, check_per_queue, evict_tag, smallest, Head, SchedError, Scheduler};
use crate::time::Time;

/// DWFQ over `s.len()` queues.
#[derive(Clone, Debug)]
pub struct Dwfq {
    /// `s_i`.
    s: Vec<f64>,
    /// `q_i`, bytes.
    backlog: Vec<u64>,
    /// `v̂`: tag of the packet in service (or last served).
    v: f64,
    /// Tag of each queue's latest arrival.
    last_finish: Vec<f64>,
    /// `max(F_prev, v̂(a))` of each queue's latest arrival.
    last_start: Vec<f64>,
    /// Tags of the packets each queue holds, FIFO.
    tags: Vec<VecDeque<f64>>,
}

impl Dwfq {
    /// `s[i]`: delay differentiation parameter of queue `i` (> 0; larger →
    /// lower delay).
    pub fn new(queues: usize, s: Vec<f64>) -> Result<Dwfq, SchedError> {
        check_per_queue("DWFQ", "s", queues, &s)?;
        Ok(Dwfq {
            s,
            backlog: vec![0; queues],
            v: 0.0,
            last_finish: vec![0.0; queues],
            last_start: vec![0.0; queues],
            tags: vec![VecDeque::new(); queues],
        })
    }

    /// Two classes, queue 0 TS and queue 1 DS, target ratio δ: `s = [1, δ]`.
    pub fn with_delta(delta: f64) -> Result<Dwfq, SchedError> {
        Dwfq::new(2, vec![1.0, delta])
    }

    /// The head tags, for inspection.
    pub fn head_tags(&self) -> Vec<Option<f64>> {
        self.tags.iter().map(|t| t.front().copied()).collect()
    }
}

impl Scheduler for Dwfq {
    fn on_enqueue(&mut self, queue: usize, size: u32, _now: Time) {
        self.backlog[queue] += size as u64;
        let sum: f64 = self.backlog.iter().zip(&self.s).map(|(&q, s)| q as f64 * s).sum();
        let phi = self.s[queue] * self.backlog[queue] as f64 / sum;
        let start = self.last_finish[queue].max(self.v);
        let f = start + size as f64 / phi;
        self.last_start[queue] = start;
        self.last_finish[queue] = f;
        self.tags[queue].push_back(f);
    }

    fn select(&mut self, heads: &[Option<Head>], _now: Time) -> Option<usize> {
        check_heads("DWFQ", heads, self.s.len());
        smallest(heads.iter().enumerate().filter(|(_, h)| h.is_some()).map(|(i, _)| {
            let f = *self.tags[i].front().unwrap_or_else(|| panic!("DWFQ: queue {i} has a head but no tag"));
            (i, f)
        }))
    }

    fn on_dequeue(&mut self, queue: usize, size: u32, _now: Time) {
        self.v = self.tags[queue].pop_front().unwrap_or_else(|| panic!("DWFQ: dequeue from empty queue {queue}"));
        self.backlog[queue] -= size as u64;
    }

    /// Backlog down, tag popped, `v̂` unchanged; an emptied queue's `F_prev`
    /// rolls back (see the module doc).
    fn on_evict(&mut self, queue: usize, size: u32, _now: Time) {
        self.backlog[queue] = self.backlog[queue]
            .checked_sub(size as u64)
            .unwrap_or_else(|| panic!("DWFQ: eviction of {size} B from queue {queue} holding less"));
        evict_tag("DWFQ", queue, &mut self.tags[queue], &mut self.last_finish[queue], self.last_start[queue]);
    }
}

#[cfg(test)]
impl Dwfq {
    pub(crate) fn check_state(&self, queues: &[VecDeque<Head>]) -> Result<(), String> {
        use super::tests::{bytes, check_tags, same};
        check_tags("DWFQ", &self.tags, |&f| f, &self.last_finish, queues)?;
        for (i, q) in queues.iter().enumerate() {
            same("DWFQ", "backlog", i, self.backlog[i], bytes(q))?;
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
        assert!(Dwfq::new(2, vec![0.0, 1.0]).is_err());
        assert!(Dwfq::with_delta(-4.0).is_err());
    }

    /// s = (1, 4), as below: TS three 1000 B (F 1000, 2000, 3000), DS 500 B
    /// (F 1250). TS's head is evicted: q = (2000, 500), v̂ = 0. A DS 400 B
    /// arrival: s·q = (2000, 3600), φ_DS = 9/14, F = 1250 + 400·14/9. (With
    /// TS's 1000 B still counted, φ_DS = 3600/6600 and F = 1250 + 400·66/36.)
    #[test]
    fn eviction_lowers_the_backlog_behind_the_weights() {
        let mut s = Dwfq::with_delta(4.0).unwrap();
        for _ in 0..3 {
            s.on_enqueue(0, 1000, Time::ZERO);
        }
        s.on_enqueue(1, 500, Time::ZERO);
        s.on_evict(0, 1000, Time::ZERO);
        assert_eq!(s.backlog, vec![2000, 500]);
        assert_eq!(s.head_tags(), vec![Some(2000.0), Some(1250.0)]);
        assert_eq!(s.v, 0.0);
        s.on_enqueue(1, 400, Time::ZERO);
        assert!((s.tags[1][1] - (1250.0 + 400.0 * 14.0 / 9.0)).abs() < 1e-9);
    }

    /// s = (1, 4). t = 0: TS gets three 1000 B packets, alone each time
    /// (φ_TS = 1): F = 1000, 2000, 3000. Then DS 500 B: q = (3000, 500),
    /// s·q = (3000, 2000), φ_DS = 0.4, F = 500/0.4 = 1250.
    /// Serve TS (1000; v̂ = 1000). DS 400 B arrives: q = (2000, 900),
    /// s·q = (2000, 3600), φ_DS = 9/14, F = max(1250, 1000) + 400·14/9
    /// = 1872.2. Order: TS, DS, DS, TS, TS. (Static weights 1:4 would tag
    /// TS 5000, 10000, 15000 and DS 625: DS first.)
    #[test]
    fn hand_checked_tags_and_order() {
        let mut s = Dwfq::with_delta(4.0).unwrap();
        for _ in 0..3 {
            s.on_enqueue(0, 1000, Time::ZERO);
        }
        s.on_enqueue(1, 500, Time::ZERO);
        assert_eq!(s.head_tags(), vec![Some(1000.0), Some(1250.0)]);
        let heads = [Some(Head { size: 1000, enqueued: Time::ZERO }); 2];
        assert_eq!(s.select(&heads, Time::ZERO), Some(0));
        s.on_dequeue(0, 1000, Time::ZERO);
        s.on_enqueue(1, 400, Time::ZERO);
        assert!((s.tags[1][1] - (1250.0 + 400.0 * 14.0 / 9.0)).abs() < 1e-9);
        let mut order = vec![0];
        for _ in 0..4 {
            let heads: Vec<Option<Head>> =
                s.tags.iter().map(|t| t.front().map(|_| Head { size: 1000, enqueued: Time::ZERO })).collect();
            let q = s.select(&heads, Time::ZERO).unwrap();
            s.on_dequeue(q, if q == 0 { 1000 } else { s.backlog[1].min(500) as u32 }, Time::ZERO);
            order.push(q);
        }
        assert_eq!(order, vec![0, 1, 1, 0, 0]);
        // Through the harness: the same first decision from a cold start.
        let mut fresh = Dwfq::with_delta(4.0).unwrap();
        assert_eq!(serve_order(&mut fresh, &[vec![1000; 3], vec![500]], 4), vec![0, 1, 0, 0]);
    }
}
