//! PAD — Proportional Average Delay scheduler.
//!
//! C. Dovrolis, D. Stiliadis, P. Ramanathan, "Proportional differentiated
//! services: delay differentiation and packet scheduling", ACM SIGCOMM 1999
//! and IEEE/ACM ToN 10(1), 2002 (the thesis' refs. 12 and 42); used in the
//! thesis' Section 5.4 (Figs. 18–19), which does not restate it.
//!
//! Let `S_i(t)` be the class-`i` packets that have left by `t` and `D_i(t)`
//! the sum of their queueing delays. The average delay of class `i` is
//! `d̄_i(t) = D_i(t)/|S_i(t)|`, and its normalized average delay
//! `d̃_i = d̄_i / δ_i = d̄_i · s_i` (`δ_i` the delay differentiation parameter
//! of the ToN paper, `s_i = 1/δ_i` the SIGCOMM paper's scheduler parameter).
//! When the link is free PAD serves the backlogged class with the largest
//! normalized average delay; ties go to the lower queue index. The long-run
//! average delays approach `d̄_i/d̄_j = s_j/s_i` whenever that is feasible.
//!
//! - Delay is measured from arrival to the start of transmission (the
//!   `on_dequeue` instant), over the whole run (no window), as published.
//! - Assumption: a class that has sent nothing yet has no average; it is
//!   ranked by its head's normalized waiting time `w_i · s_i`, which is what
//!   its average would be once that head left.
//! - A packet evicted by a dropper is not a departure: it leaves the
//!   arrival FIFO but not `S_i` or `D_i` (its delay was not a queueing
//!   delay to a transmission).

use super::bpr::Arrivals;
use super::wtp::largest;
use super::{check_heads, check_per_queue, Head, SchedError, Scheduler};
use crate::time::Time;

/// PAD over `s.len()` queues.
#[derive(Clone, Debug)]
pub struct Pad {
    /// `s_i = 1/δ_i`.
    s: Vec<f64>,
    /// `D_i`, ns.
    delay_sum: Vec<u128>,
    /// `|S_i|`.
    departed: Vec<u64>,
    arrivals: Arrivals,
}

impl Pad {
    /// `s[i]`: delay differentiation parameter of queue `i` (> 0; larger →
    /// lower delay, `d̄_i/d̄_j → s_j/s_i`).
    pub fn new(queues: usize, s: Vec<f64>) -> Result<Pad, SchedError> {
        check_per_queue("PAD", "s", queues, &s)?;
        Ok(Pad { s, delay_sum: vec![0; queues], departed: vec![0; queues], arrivals: Arrivals::new(queues) })
    }

    /// Two classes, queue 0 TS and queue 1 DS, `d̄_TS/d̄_DS → δ`: `s = [1, δ]`.
    pub fn with_delta(delta: f64) -> Result<Pad, SchedError> {
        Pad::new(2, vec![1.0, delta])
    }

    /// `d̄_i`, ns, over the packets `queue` has sent (None before the first).
    pub fn average_delay(&self, queue: usize) -> Option<f64> {
        let n = self.departed[queue];
        (n > 0).then(|| self.delay_sum[queue] as f64 / n as f64)
    }
}

impl Scheduler for Pad {
    fn on_enqueue(&mut self, queue: usize, _size: u32, now: Time) {
        self.arrivals.push(queue, now);
    }

    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize> {
        check_heads("PAD", heads, self.s.len());
        largest(heads.iter().enumerate().filter_map(|(i, h)| {
            h.map(|h| {
                let d = self.average_delay(i).unwrap_or_else(|| now.saturating_sub(h.enqueued).as_nanos() as f64);
                (i, d * self.s[i])
            })
        }))
    }

    fn on_dequeue(&mut self, queue: usize, _size: u32, now: Time) {
        let arrived = self.arrivals.pop("PAD", queue);
        self.delay_sum[queue] += now.saturating_sub(arrived).as_nanos() as u128;
        self.departed[queue] += 1;
    }

    /// Leaves the arrival FIFO; not a departure (see the module doc).
    fn on_evict(&mut self, queue: usize, _size: u32, _now: Time) {
        self.arrivals.pop("PAD", queue);
    }
}

#[cfg(test)]
impl Pad {
    pub(crate) fn check_state(&self, queues: &[std::collections::VecDeque<Head>]) -> Result<(), String> {
        self.arrivals.check("PAD", queues)
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
        assert!(Pad::new(2, vec![1.0, 0.0]).is_err());
        assert!(Pad::with_delta(f64::NAN).is_err());
    }

    /// s = (1, 4). History: TS sent two packets with delays 4 and 8 ms
    /// (d̄ = 6 ms → d̃ = 6 ms), DS one with 1 ms (d̃ = 4 ms). At t = 20 ms
    /// both are backlogged (TS head waited 1 ms, DS 8 ms): TS (6 > 4), where
    /// WTP would pick DS (1 < 32). TS's head leaves with delay 1 ms:
    /// d̄_TS = 13/3 ≈ 4.33 > 4 → TS again; that one (arrived at 20 ms) leaves
    /// with delay 0: d̄_TS = 13/4 = 3.25 < 4 → DS.
    #[test]
    fn hand_checked_choices() {
        let mut s = Pad::with_delta(4.0).unwrap();
        // TS: arrivals at 0 and 1 ms, leave at 4 and 9 ms (delays 4, 8).
        s.on_enqueue(0, 500, Time::ZERO);
        s.on_enqueue(0, 500, Time::from_millis(1));
        s.on_dequeue(0, 500, Time::from_millis(4));
        s.on_dequeue(0, 500, Time::from_millis(9));
        // DS: arrival at 9 ms, leaves at 10 ms (delay 1).
        s.on_enqueue(1, 500, Time::from_millis(9));
        s.on_dequeue(1, 500, Time::from_millis(10));
        assert_eq!(s.average_delay(0), Some(6e6));
        assert_eq!(s.average_delay(1), Some(1e6));
        s.on_enqueue(1, 500, Time::from_millis(12));
        s.on_enqueue(0, 500, Time::from_millis(19));
        let now = Time::from_millis(20);
        assert_eq!(s.select(&[h(19), h(12)], now), Some(0));
        s.on_dequeue(0, 500, now);
        s.on_enqueue(0, 500, now);
        assert_eq!(s.select(&[h(20), h(12)], now), Some(0));
        s.on_dequeue(0, 500, now);
        assert_eq!(s.average_delay(0), Some(3.25e6));
        s.on_enqueue(0, 500, now);
        assert_eq!(s.select(&[h(20), h(12)], now), Some(1));
    }

    /// TS: arrivals at 0 and 1 ms; the first is evicted at 4 ms (no
    /// departure: no average yet), the second leaves at 9 ms: d̄ = 8 ms.
    #[test]
    fn an_evicted_packet_is_not_a_departure() {
        let mut s = Pad::with_delta(4.0).unwrap();
        s.on_enqueue(0, 500, Time::ZERO);
        s.on_enqueue(0, 500, Time::from_millis(1));
        s.on_evict(0, 500, Time::from_millis(4));
        assert_eq!(s.average_delay(0), None);
        s.on_dequeue(0, 500, Time::from_millis(9));
        assert_eq!(s.average_delay(0), Some(8e6));
    }

    /// Before any departure the heads' normalized waits decide (like WTP).
    #[test]
    fn empty_history_falls_back_to_head_wait() {
        let mut s = Pad::with_delta(4.0).unwrap();
        s.on_enqueue(0, 500, Time::ZERO);
        s.on_enqueue(1, 500, Time::from_millis(7));
        // TS waited 10 (×1), DS 3 (×4 = 12): DS.
        assert_eq!(s.select(&[h(0), h(7)], Time::from_millis(10)), Some(1));
    }
}
