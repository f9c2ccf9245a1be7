//! WTP — Waiting-Time Priority scheduler.
//!
//! C. Dovrolis, D. Stiliadis, P. Ramanathan, "Proportional differentiated
//! services: delay differentiation and packet scheduling", ACM SIGCOMM 1999
//! (and IEEE/ACM ToN 10(1), 2002), where WTP is taken from Kleinrock's
//! time-dependent priorities; V. Vukadinović, thesis 2004, Section 3.3,
//! eqs. (7)–(8).
//!
//! The head-of-line packet of queue `i` has at `t` the priority
//!
//! ```text
//! p_i(t) = w_i(t) · s_i          (eq. 7)
//! ```
//!
//! `w_i(t)` its waiting time so far and `s_i` the queue's delay
//! (scheduler) differentiation parameter. The link serves the head with the
//! highest priority; ties go to the lower queue index. Under heavy load the
//! average delays approach `d̄_i / d̄_j = s_j / s_i` (eq. 8). The thesis' TS/DS
//! pair with delay ratio δ is `s = [1, δ]` ([`Wtp::with_delta`]).
//!
//! Stateless apart from `s`: the heads' enqueue times are all it needs.

use super::{check_heads, check_per_queue, Head, SchedError, Scheduler};
use crate::time::Time;

/// WTP over `s.len()` queues.
#[derive(Clone, Debug)]
pub struct Wtp {
    /// `s_i`, delay differentiation parameters.
    s: Vec<f64>,
}

impl Wtp {
    /// `s[i]`: delay differentiation parameter of queue `i` (> 0; larger →
    /// lower delay, `d̄_i/d̄_j → s_j/s_i`).
    pub fn new(queues: usize, s: Vec<f64>) -> Result<Wtp, SchedError> {
        check_per_queue("WTP", "s", queues, &s)?;
        Ok(Wtp { s })
    }

    /// Two classes, queue 0 TS and queue 1 DS, `d̄_TS/d̄_DS → δ`: `s = [1, δ]`.
    pub fn with_delta(delta: f64) -> Result<Wtp, SchedError> {
        Wtp::new(2, vec![1.0, delta])
    }
}

/// The backlogged queue with the largest `key`, ties to the lower index.
pub(crate) fn largest(keys: impl Iterator<Item = (usize, f64)>) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, k) in keys {
        if best.is_none_or(|(_, b)| k > b) {
            best = Some((i, k));
        }
    }
    best.map(|(i, _)| i)
}

impl Scheduler for Wtp {
    fn on_enqueue(&mut self, _queue: usize, _size: u32, _now: Time) {}

    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize> {
        check_heads("WTP", heads, self.s.len());
        largest(
            heads
                .iter()
                .enumerate()
                .filter_map(|(i, h)| h.map(|h| (i, now.saturating_sub(h.enqueued).as_nanos() as f64 * self.s[i]))),
        )
    }

    fn on_dequeue(&mut self, _queue: usize, _size: u32, _now: Time) {}

    /// Stateless: the next `select` sees the new head's enqueue time.
    fn on_evict(&mut self, queue: usize, _size: u32, _now: Time) {
        assert!(queue < self.s.len(), "WTP: queue {queue} out of range");
    }
}

#[cfg(test)]
impl Wtp {
    pub(crate) fn check_state(&self, queues: &[std::collections::VecDeque<Head>]) -> Result<(), String> {
        super::tests::same("WTP", "queues", 0, self.s.len(), queues.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(at_us: u64) -> Option<Head> {
        Some(Head { size: 500, enqueued: Time::from_micros(at_us) })
    }

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            Wtp::new(2, vec![1.0, -2.0]).unwrap_err().to_string(),
            "WTP: `s` of queue 1 must be positive and finite, got -2"
        );
        assert!(Wtp::with_delta(0.0).is_err());
        assert!(Wtp::new(3, vec![1.0, 2.0]).is_err());
    }

    /// s = (1, 4), now = 10 ms. TS head waited 7 ms → p = 7; DS head waited
    /// 2 ms → p = 8: DS. With the DS head at 1.5 ms → p = 6 < 7: TS.
    /// Equal priorities (TS 8 ms, DS 2 ms: 8 = 8) → lower index, TS.
    /// Three classes s = (1, 2, 4), waits 9, 5, 2 ms → p = 9, 10, 8: queue 1.
    #[test]
    fn hand_checked_choices() {
        let now = Time::from_millis(10);
        let mut s = Wtp::with_delta(4.0).unwrap();
        assert_eq!(s.select(&[h(3000), h(8000)], now), Some(1));
        assert_eq!(s.select(&[h(3000), h(8500)], now), Some(0));
        assert_eq!(s.select(&[h(2000), h(8000)], now), Some(0));
        assert_eq!(s.select(&[None, h(9999)], now), Some(1));
        assert_eq!(s.select(&[None, None], now), None);
        let mut s = Wtp::new(3, vec![1.0, 2.0, 4.0]).unwrap();
        assert_eq!(s.select(&[h(1000), h(5000), h(8000)], now), Some(1));
    }
}
