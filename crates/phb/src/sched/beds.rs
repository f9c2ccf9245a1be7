//! BEDS scheduling with forced delay ratio: WFQ whose weights follow the
//! backlogs.
//!
//! V. Firoiu, X. Zhang, Y. Guo, "Best Effort Differentiated Services:
//! Trade-off Service Differentiation for Elastic Applications", IEEE ICT
//! 2001 — Section V.A, eq. (5) (and eq. (6) of Section V.C, the same rule).
//! The paper calls the rule "similar to Backlog-Proportional Rate"
//! (Dovrolis, Stiliadis, Ramanathan, SIGCOMM 1999; [`super::bpr`]).
//!
//! Two queues, TCP's (the reference, queue 0) and UDP's (queue 1), share a
//! WFQ whose weights are set at each packet arrival so that
//!
//! ```text
//! w_UDP / w_TCP = δ · q_UDP / q⁺_TCP,   w_UDP + w_TCP = 1,   q⁺_TCP = max(q_TCP, 1)   (eq. 5)
//! ```
//!
//! `q` being the queue lengths. By Little's law the delays then approach
//! `d_TCP / d_UDP = δ`, provided the backlogs are counted in the unit the
//! WFQ serves (see [`BacklogUnit`]). The rule generalizes to `n` queues with
//! one parameter `s_i` each, queue 0 the reference:
//! `w_i / w_0 = s_i q_i / (s_0 q⁺_0)` for `i ≥ 1`, `Σ w_i = 1`; the paper's
//! pair is `s = [1, δ]` ([`Beds::with_delta`]).
//!
//! ## The WFQ and when the weights change
//!
//! - A packet of `L` (bytes) arriving to queue `i` is tagged
//!   `F = max(F_prev, v̂) + L / w_i` with the weights in force at its
//!   arrival, computed from the backlogs *including* it (so the arriving
//!   queue's weight is positive). Queued packets keep their tags: a WFQ
//!   fixes a tag at arrival.
//! - The virtual time is self-clocked (Golestani's SCFQ, INFOCOM 1994):
//!   `v̂` is the tag of the packet in service, kept after a busy period as in
//!   [`super::scfq`]. A GPS reference system is not defined for packets
//!   tagged under weights that have since changed, and a router's WFQ (the
//!   paper's was Nortel's) approximates GPS without simulating it.
//! - The link serves the smallest head tag, ties to the lower queue index.
//!
//! "At each packet arrival" (Section V.A): the weights matter only when a
//! packet is tagged, so they are recomputed at each arrival that joins a
//! queue; an arrival its buffer drops changes nothing (the backlogs are
//! those of the last admitted arrival or departure) and is not seen here.
//!
//! ## Evictions
//!
//! An evicted head leaves the backlogs behind the next weights and its tag
//! leaves the FIFO; `v̂` stays (it never entered service). If the eviction
//! empties the queue, `F_prev` rolls back to the evicted packet's start
//! `max(F_prev, v̂(a))`, as in [`super::scfq`].
//!
//! ## Relation to DWFQ
//!
//! [`super::dwfq`] borrowed this rule (as an assumption for Li et al.'s
//! DWFQ) with byte backlogs and without the floor `q⁺`; `Beds` is the
//! paper's rule as written, with the unit a parameter.

use std::collections::VecDeque;

use super::{check_heads, check_per_queue, evict_tag, smallest, Head, SchedError, Scheduler};
use crate::time::Time;

/// What the queue lengths `q` of eq. (5) count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BacklogUnit {
    /// Bytes: the unit the WFQ serves, so Little's law gives
    /// `d_TCP/d_UDP → δ` whatever the packet sizes. The default.
    #[default]
    Bytes,
    /// Packets: `q⁺ = max(q, 1)` reads most naturally as a packet count, but
    /// with a byte-serving WFQ a small UDP packet then weighs as much as a
    /// large TCP one and the ratio overshoots δ when the sizes differ (up
    /// to `δ·L_TCP/L_UDP`): with 1000-byte TCP and 82-byte UDP packets at
    /// 95 % load, 19.2 for δ = 4 (`sched::tests`), not the δ the paper's
    /// Fig. 15 shows.
    Packets,
}

impl BacklogUnit {
    /// The scenario word for it.
    pub fn name(self) -> &'static str {
        match self {
            BacklogUnit::Bytes => "bytes",
            BacklogUnit::Packets => "packets",
        }
    }
}

/// BEDS' backlog-weighted WFQ over `s.len()` queues (queue 0 the reference).
#[derive(Clone, Debug)]
pub struct Beds {
    /// `s_i`: `[1, δ]` for the paper's TCP/UDP pair.
    s: Vec<f64>,
    unit: BacklogUnit,
    /// Backlog of each queue, bytes.
    bytes: Vec<u64>,
    /// Backlog of each queue, packets.
    pkts: Vec<u64>,
    /// The weights in force (set at the last arrival), summing to 1.
    weights: Vec<f64>,
    /// `v̂`: tag of the packet in service (or last served).
    v: f64,
    /// Tag of each queue's latest arrival.
    last_finish: Vec<f64>,
    /// `max(F_prev, v̂(a))` of each queue's latest arrival.
    last_start: Vec<f64>,
    /// Tags of the packets each queue holds, FIFO.
    tags: Vec<VecDeque<f64>>,
}

impl Beds {
    /// `s[i]`: queue `i`'s parameter (> 0, finite); queue 0 is the reference
    /// whose backlog is floored at one unit. Before any arrival queue 0 has
    /// all the weight.
    pub fn new(queues: usize, s: Vec<f64>, unit: BacklogUnit) -> Result<Beds, SchedError> {
        check_per_queue("BEDS", "s", queues, &s)?;
        let mut weights = vec![0.0; queues];
        weights[0] = 1.0;
        Ok(Beds {
            s,
            unit,
            bytes: vec![0; queues],
            pkts: vec![0; queues],
            weights,
            v: 0.0,
            last_finish: vec![0.0; queues],
            last_start: vec![0.0; queues],
            tags: vec![VecDeque::new(); queues],
        })
    }

    /// The paper's pair: queue 0 TCP, queue 1 UDP, `d_TCP/d_UDP → δ`
    /// (`delta` > 0, finite). Same as `new(2, vec![1.0, delta], unit)`.
    pub fn with_delta(delta: f64, unit: BacklogUnit) -> Result<Beds, SchedError> {
        if !(delta.is_finite() && delta > 0.0) {
            return Err(SchedError::Zero { scheduler: "BEDS", param: "delta", value: delta });
        }
        Beds::new(2, vec![1.0, delta], unit)
    }

    /// The weights in force, one per queue, summing to 1.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The head tags, for inspection.
    pub fn head_tags(&self) -> Vec<Option<f64>> {
        self.tags.iter().map(|t| t.front().copied()).collect()
    }

    /// `q_i` in the configured unit.
    #[inline]
    fn backlog(&self, i: usize) -> f64 {
        match self.unit {
            BacklogUnit::Bytes => self.bytes[i] as f64,
            BacklogUnit::Packets => self.pkts[i] as f64,
        }
    }

    /// Eq. (5) for the current backlogs: `w_i ∝ s_i q_i` for `i ≥ 1`,
    /// `w_0 ∝ s_0 max(q_0, 1)`, normalized to sum 1.
    fn update_weights(&mut self) {
        let mut sum = 0.0;
        for i in 0..self.s.len() {
            let q = if i == 0 { self.backlog(0).max(1.0) } else { self.backlog(i) };
            let w = self.s[i] * q;
            self.weights[i] = w;
            sum += w;
        }
        for w in &mut self.weights {
            *w /= sum;
        }
    }
}

impl Scheduler for Beds {
    fn on_enqueue(&mut self, queue: usize, size: u32, _now: Time) {
        self.bytes[queue] += size as u64;
        self.pkts[queue] += 1;
        self.update_weights();
        let start = self.last_finish[queue].max(self.v);
        let f = start + size as f64 / self.weights[queue];
        self.last_start[queue] = start;
        self.last_finish[queue] = f;
        self.tags[queue].push_back(f);
    }

    fn select(&mut self, heads: &[Option<Head>], _now: Time) -> Option<usize> {
        check_heads("BEDS", heads, self.s.len());
        smallest(heads.iter().enumerate().filter(|(_, h)| h.is_some()).map(|(i, _)| {
            let f = *self.tags[i].front().unwrap_or_else(|| panic!("BEDS: queue {i} has a head but no tag"));
            (i, f)
        }))
    }

    fn on_dequeue(&mut self, queue: usize, size: u32, _now: Time) {
        self.v = self.tags[queue].pop_front().unwrap_or_else(|| panic!("BEDS: dequeue from empty queue {queue}"));
        self.remove(queue, size, "dequeue");
    }

    /// Backlog down, tag popped, `v̂` unchanged; an emptied queue's `F_prev`
    /// rolls back (see the module doc).
    fn on_evict(&mut self, queue: usize, size: u32, _now: Time) {
        self.remove(queue, size, "eviction");
        evict_tag("BEDS", queue, &mut self.tags[queue], &mut self.last_finish[queue], self.last_start[queue]);
    }
}

impl Beds {
    fn remove(&mut self, queue: usize, size: u32, what: &str) {
        self.bytes[queue] = self.bytes[queue]
            .checked_sub(size as u64)
            .unwrap_or_else(|| panic!("BEDS: {what} of {size} B from queue {queue} holding less"));
        self.pkts[queue] -= 1;
    }
}

#[cfg(test)]
impl Beds {
    pub(crate) fn check_state(&self, queues: &[VecDeque<Head>]) -> Result<(), String> {
        use super::tests::{bytes, check_tags, same};
        check_tags("BEDS", &self.tags, |&f| f, &self.last_finish, queues)?;
        for (i, q) in queues.iter().enumerate() {
            same("BEDS", "backlog", i, self.bytes[i], bytes(q))?;
            same("BEDS", "packets", i, self.pkts[i], q.len() as u64)?;
        }
        let sum: f64 = self.weights.iter().sum();
        if (sum - 1.0).abs() > 1e-9 || self.weights.iter().any(|w| w.is_nan() || *w < 0.0) {
            return Err(format!("BEDS: weights {:?} are not shares summing to 1", self.weights));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::serve_order;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(Beds::with_delta(0.0, BacklogUnit::Bytes).is_err());
        assert!(Beds::with_delta(f64::INFINITY, BacklogUnit::Bytes).is_err());
        assert_eq!(
            Beds::new(2, vec![1.0, -2.0], BacklogUnit::Bytes).unwrap_err().to_string(),
            "BEDS: `s` of queue 1 must be positive and finite, got -2"
        );
    }

    /// Eq. (5) by hand, δ = 20. Bytes: TCP holds 9 × 1000 B, a UDP arrival
    /// of 82 B makes q = (9000, 82): w_UDP/w_TCP = 20·82/9000 = 0.18222,
    /// w_UDP = 1640/10640 = 0.154135, w_TCP = 9000/10640. Packets: the same
    /// queues are (9, 1): w_UDP/w_TCP = 20/9, w_UDP = 20/29.
    #[test]
    fn weights_for_given_backlogs() {
        for (unit, w_udp) in [(BacklogUnit::Bytes, 1640.0 / 10640.0), (BacklogUnit::Packets, 20.0 / 29.0)] {
            let mut s = Beds::with_delta(20.0, unit).unwrap();
            for _ in 0..9 {
                s.on_enqueue(0, 1000, Time::ZERO);
            }
            assert_eq!(s.weights(), [1.0, 0.0], "{unit:?}: UDP empty, TCP has everything");
            s.on_enqueue(1, 82, Time::ZERO);
            let w = s.weights();
            assert!(close(w[1], w_udp) && close(w[0], 1.0 - w_udp), "{unit:?}: {w:?}");
            let ratio = w[1] / w[0];
            let expected = if unit == BacklogUnit::Bytes { 20.0 * 82.0 / 9000.0 } else { 20.0 / 9.0 };
            assert!(close(ratio, expected), "{unit:?}: ratio {ratio}");
        }
    }

    /// q⁺_TCP = max(q_TCP, 1): with the TCP queue empty a UDP arrival of
    /// 100 B (bytes) gives w_UDP/w_TCP = 20·100/1, w_UDP = 2000/2001; in
    /// packets 20·1/1, w_UDP = 20/21. Without the floor TCP's weight would
    /// be 0 and the ratio undefined.
    #[test]
    fn the_tcp_backlog_is_floored_at_one_unit() {
        let mut s = Beds::with_delta(20.0, BacklogUnit::Bytes).unwrap();
        s.on_enqueue(1, 100, Time::ZERO);
        assert!(close(s.weights()[1], 2000.0 / 2001.0));
        assert!(close(s.head_tags()[1].unwrap(), 100.0 * 2001.0 / 2000.0));
        let mut s = Beds::with_delta(20.0, BacklogUnit::Packets).unwrap();
        s.on_enqueue(1, 100, Time::ZERO);
        assert!(close(s.weights()[1], 20.0 / 21.0));
    }

    /// δ = 4, bytes. TCP gets three 1000 B packets (w_TCP = 1 each time):
    /// F = 1000, 2000, 3000. UDP 500 B: q = (3000, 500), w_UDP = 2000/5000 =
    /// 0.4, F = 1250. TCP's head (F 1000) is served: v̂ = 1000, q = (2000,
    /// 500). UDP 400 B: q = (2000, 900), w_UDP = 3600/5600, F = max(1250,
    /// 1000) + 400·56/36 = 1872.2. Order from there: UDP (1250), UDP (1872),
    /// TCP (2000), TCP (3000).
    #[test]
    fn hand_checked_tags_and_order() {
        let mut s = Beds::with_delta(4.0, BacklogUnit::Bytes).unwrap();
        for _ in 0..3 {
            s.on_enqueue(0, 1000, Time::ZERO);
        }
        s.on_enqueue(1, 500, Time::ZERO);
        assert_eq!(s.head_tags(), vec![Some(1000.0), Some(1250.0)]);
        let both = [Some(Head { size: 1000, enqueued: Time::ZERO }), Some(Head { size: 500, enqueued: Time::ZERO })];
        assert_eq!(s.select(&both, Time::ZERO), Some(0));
        s.on_dequeue(0, 1000, Time::ZERO);
        s.on_enqueue(1, 400, Time::ZERO);
        assert!(close(s.weights()[1], 3600.0 / 5600.0));
        assert!(close(s.tags[1][1], 1250.0 + 400.0 * 5600.0 / 3600.0));
        // Through the harness, from a cold start: TCP, UDP, UDP... (the
        // first UDP packet meets q = (3000, 500) as above; the harness
        // enqueues every packet before serving).
        let mut fresh = Beds::with_delta(4.0, BacklogUnit::Bytes).unwrap();
        assert_eq!(serve_order(&mut fresh, &[vec![1000; 3], vec![500]], 4), vec![0, 1, 0, 0]);
    }

    /// An eviction lowers the backlog behind the next weights. δ = 4:
    /// TCP three 1000 B, UDP 500 B (F 1250); TCP's head evicted: q = (2000,
    /// 500), v̂ = 0. A UDP arrival of 400 B: q = (2000, 900), w_UDP =
    /// 3600/5600, F = 1250 + 400·5600/3600.
    #[test]
    fn eviction_lowers_the_backlog_behind_the_weights() {
        let mut s = Beds::with_delta(4.0, BacklogUnit::Bytes).unwrap();
        for _ in 0..3 {
            s.on_enqueue(0, 1000, Time::ZERO);
        }
        s.on_enqueue(1, 500, Time::ZERO);
        s.on_evict(0, 1000, Time::ZERO);
        assert_eq!((s.bytes.clone(), s.pkts.clone(), s.v), (vec![2000, 500], vec![2, 1], 0.0));
        s.on_enqueue(1, 400, Time::ZERO);
        assert!(close(s.tags[1][1], 1250.0 + 400.0 * 5600.0 / 3600.0));
    }

    /// Three queues, s = (1, 2, 4), bytes: w ∝ (q⁺_0, 2 q_1, 4 q_2).
    #[test]
    fn the_rule_generalizes_to_more_queues() {
        let mut s = Beds::new(3, vec![1.0, 2.0, 4.0], BacklogUnit::Bytes).unwrap();
        s.on_enqueue(0, 600, Time::ZERO);
        s.on_enqueue(1, 300, Time::ZERO);
        s.on_enqueue(2, 150, Time::ZERO);
        let w = s.weights();
        assert!(close(w[0], 1.0 / 3.0) && close(w[1], 1.0 / 3.0) && close(w[2], 1.0 / 3.0), "{w:?}");
    }
}
