//! MDP — Mean-Delay Proportional scheduler.
//!
//! Named after S. Bodamer, "A new scheduling mechanism to provide relative
//! differentiation for real-time IP traffic", IEEE GLOBECOM 2000 (the
//! thesis' ref. 13), as used in the thesis' Section 5.4 (Figs. 18–19), which
//! does not restate the rule. Bodamer's paper could not be consulted here;
//! the rule below is an **assumption**, stated so it can be checked and
//! replaced:
//!
//! MDP measures each class's mean queueing delay and serves the backlogged
//! class whose mean delay, normalized by its differentiation parameter, is
//! the largest — the same selection principle as PAD
//! (Dovrolis et al., SIGCOMM 1999), but with the mean taken over *every*
//! packet of the class seen so far: those that have left count with their
//! queueing delay, those still queued with the time they have waited up to
//! now. For class `i` at `t`, with `D_i` the summed delays of its `n_i`
//! departed packets and `a_k` the arrival times of its `N_i` queued ones,
//!
//! ```text
//! m_i(t) = (D_i + Σ_k (t − a_k)) / (n_i + N_i),   priority m_i(t) · s_i
//! ```
//!
//! (`s_i = 1/δ_i`; `m_i/m_j → s_j/s_i` is the target). Counting the queued
//! packets makes the estimate react to a growing backlog before its packets
//! leave, unlike PAD, and removes PAD's undefined start. `Σ_k (t − a_k)`
//! is `N_i t − Σ_k a_k`, kept in O(1). Ties go to the lower queue index.
//!
//! A packet evicted by a dropper leaves the mean altogether: it is no
//! longer queued (out of `N_i` and `Σ_k a_k`) and not a departure (not in
//! `D_i`, `n_i`).

use super::bpr::Arrivals;
use super::wtp::largest;
use super::{check_heads, check_per_queue, Head, SchedError, Scheduler};
use crate::time::Time;

/// MDP over `s.len()` queues.
#[derive(Clone, Debug)]
pub struct Mdp {
    /// `s_i = 1/δ_i`.
    s: Vec<f64>,
    /// `D_i`, ns.
    delay_sum: Vec<u128>,
    /// `n_i`.
    departed: Vec<u64>,
    /// `Σ_k a_k` over the queued packets, ns.
    sum_arrival: Vec<u128>,
    arrivals: Arrivals,
}

impl Mdp {
    /// `s[i]`: delay differentiation parameter of queue `i` (> 0; larger →
    /// lower delay, `m_i/m_j → s_j/s_i`).
    pub fn new(queues: usize, s: Vec<f64>) -> Result<Mdp, SchedError> {
        check_per_queue("MDP", "s", queues, &s)?;
        Ok(Mdp {
            s,
            delay_sum: vec![0; queues],
            departed: vec![0; queues],
            sum_arrival: vec![0; queues],
            arrivals: Arrivals::new(queues),
        })
    }

    /// Two classes, queue 0 TS and queue 1 DS, target ratio δ: `s = [1, δ]`.
    pub fn with_delta(delta: f64) -> Result<Mdp, SchedError> {
        Mdp::new(2, vec![1.0, delta])
    }

    /// `m_i(now)`, ns (None for a class that has seen no packet). `now` is
    /// not before any queued arrival; if it were, the queued packets would
    /// count as having waited 0.
    pub fn mean_delay(&self, queue: usize, now: Time) -> Option<f64> {
        let queued = self.arrivals.times[queue].len() as u128;
        let n = self.departed[queue] as u128 + queued;
        let waited = (queued * now.as_nanos() as u128).saturating_sub(self.sum_arrival[queue]);
        (n > 0).then(|| (self.delay_sum[queue] + waited) as f64 / n as f64)
    }
}

impl Scheduler for Mdp {
    fn on_enqueue(&mut self, queue: usize, _size: u32, now: Time) {
        self.arrivals.push(queue, now);
        self.sum_arrival[queue] += now.as_nanos() as u128;
    }

    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize> {
        check_heads("MDP", heads, self.s.len());
        largest(heads.iter().enumerate().filter(|(_, h)| h.is_some()).map(|(i, _)| {
            let m = self.mean_delay(i, now).unwrap_or_else(|| panic!("MDP: queue {i} has a head but no arrival"));
            (i, m * self.s[i])
        }))
    }

    fn on_dequeue(&mut self, queue: usize, _size: u32, now: Time) {
        let arrived = self.arrivals.pop("MDP", queue);
        self.sum_arrival[queue] -= arrived.as_nanos() as u128;
        self.delay_sum[queue] += now.saturating_sub(arrived).as_nanos() as u128;
        self.departed[queue] += 1;
    }

    /// Out of the queued sums, not a departure (see the module doc).
    fn on_evict(&mut self, queue: usize, _size: u32, _now: Time) {
        let arrived = self.arrivals.pop("MDP", queue);
        self.sum_arrival[queue] -= arrived.as_nanos() as u128;
    }
}

#[cfg(test)]
impl Mdp {
    pub(crate) fn check_state(&self, queues: &[std::collections::VecDeque<Head>]) -> Result<(), String> {
        use super::tests::{same, times};
        self.arrivals.check("MDP", queues)?;
        for (i, q) in queues.iter().enumerate() {
            let t: u128 = times(q).iter().map(|t| t.as_nanos() as u128).sum();
            same("MDP", "Σ a_k", i, self.sum_arrival[i], t)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(at_ms: u64) -> Option<Head> {
        Some(Head { size: 500, enqueued: Time::from_millis(at_ms) })
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(Mdp::new(2, vec![1.0, -1.0]).is_err());
        assert!(Mdp::new(1, vec![1.0, 1.0]).is_err());
    }

    /// TS: one packet left with delay 2 ms; queued: arrived 4 and 8 ms. The
    /// one from 4 ms is evicted at 5 ms. At 10 ms: m = (2 + 2)/2 = 2 ms
    /// (counted as a departure it would be (2 + 1 + 2)/3).
    #[test]
    fn an_evicted_packet_leaves_the_mean() {
        let mut s = Mdp::with_delta(4.0).unwrap();
        s.on_enqueue(0, 500, Time::ZERO);
        s.on_dequeue(0, 500, Time::from_millis(2));
        s.on_enqueue(0, 500, Time::from_millis(4));
        s.on_enqueue(0, 500, Time::from_millis(8));
        s.on_evict(0, 500, Time::from_millis(5));
        assert_eq!(s.mean_delay(0, Time::from_millis(10)), Some(2e6));
        s.on_evict(0, 500, Time::from_millis(10));
        assert_eq!(s.mean_delay(0, Time::from_millis(10)), Some(2e6));
        assert_eq!(s.sum_arrival[0], 0);
    }

    /// s = (1, 4), decision at t = 10 ms.
    /// TS: one packet left with delay 2 ms; queued: arrived 4 and 8 ms
    /// (waited 6 and 2). m_TS = (2 + 6 + 2)/3 = 10/3 ≈ 3.33 ms → 3.33.
    /// DS: two left with delays 0.5 and 0.5 ms; queued: arrived 9 ms
    /// (waited 1). m_DS = (0.5 + 0.5 + 1)/3 = 2/3 ms → ×4 = 2.67 < 3.33 → TS.
    /// PAD (departed only) would rank TS 2 vs DS 0.5·4 = 2, a tie → TS too;
    /// with the DS packet at 7 ms instead (waited 3): m_DS = 4/3 → 5.33 → DS,
    /// where PAD still ties.
    #[test]
    fn hand_checked_choices() {
        let mut s = Mdp::with_delta(4.0).unwrap();
        s.on_enqueue(0, 500, Time::ZERO);
        s.on_dequeue(0, 500, Time::from_millis(2));
        s.on_enqueue(0, 500, Time::from_millis(4));
        s.on_enqueue(0, 500, Time::from_millis(8));
        s.on_enqueue(1, 500, Time::from_micros(2000));
        s.on_dequeue(1, 500, Time::from_micros(2500));
        s.on_enqueue(1, 500, Time::from_micros(3000));
        s.on_dequeue(1, 500, Time::from_micros(3500));
        let mut t = s.clone();
        s.on_enqueue(1, 500, Time::from_millis(9));
        let now = Time::from_millis(10);
        assert!((s.mean_delay(0, now).unwrap() - 1e7 / 3.0).abs() < 1e-6);
        assert!((s.mean_delay(1, now).unwrap() - 2e6 / 3.0).abs() < 1e-6);
        assert_eq!(s.select(&[h(4), h(9)], now), Some(0));
        t.on_enqueue(1, 500, Time::from_millis(7));
        assert!((t.mean_delay(1, now).unwrap() - 4e6 / 3.0).abs() < 1e-6);
        assert_eq!(t.select(&[h(4), h(7)], now), Some(1));
    }
}
