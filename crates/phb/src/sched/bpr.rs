//! BPR — Backlog-Proportional Rate scheduler for proportional delay
//! differentiation.
//!
//! C. Dovrolis, D. Stiliadis, P. Ramanathan, "Proportional differentiated
//! services: delay differentiation and packet scheduling", ACM SIGCOMM 1999
//! (the thesis' ref. 12); V. Vukadinović, "Delay and throughput
//! differentiation mechanisms for non-elevated services", 2004 — Section 5.1,
//! eq. (10); packetized as in Section 5.2.1, eqs. (23)–(27), and the ns-2
//! `PROBEQueue::deque` of Appendix D.
//!
//! ## Fluid rates (eq. 10)
//!
//! Each backlogged queue `i` is served at a rate proportional to its backlog
//! `q_i` (bytes) and its scheduler differentiation parameter `s_i`:
//!
//! ```text
//! r_i = C · s_i q_i / Σ_{j backlogged} s_j q_j
//! ```
//!
//! so that `r_i / r_j = (s_i q_i)/(s_j q_j)` and, by Little's law, average
//! delays approach `d_i / d_j = s_j / s_i`. The thesis' two-class form,
//! `r_TS / r_DS = (1/δ) q_TS / q_DS`, is `s = [1, δ]` with queue 0 the
//! throughput-sensitive (TS) and queue 1 the delay-sensitive (DS) class
//! ([`Bpr::with_delta`]). Larger `s_i` → lower delay.
//!
//! ## Packetization (virtual service functions, eqs. 23–27)
//!
//! Each queue has a virtual service function `V_i`: the service the fluid
//! server would have given it since its backlog began, minus the bytes it
//! actually sent. When the link is free at `t` (`t^d` the previous decision):
//!
//! - if one queue is backlogged it is served and every `V` is reset to 0;
//! - otherwise, for each backlogged queue, `V_i = 0` if its head arrived at or
//!   after `t^d`, else `V_i += r_i (t − t^d)`; the queue with the smallest
//!   `L_i − V_i` (`L_i` its head's size) is served (eq. 27);
//! - the served queue's `V` drops by the packet's size (eqs. 25–26).
//!
//! BPR's rates are recomputed after every departure from the backlogs left
//! (as in Appendix D) and hold until the next one.
//!
//! ## Departures from the thesis' code, and assumptions
//!
//! - N classes (the thesis has two); rates from eq. (10) generalized as above.
//! - Appendix D keeps the previous rates when one queue is empty after a
//!   departure (stale until both are backlogged again); here rates are always
//!   those of eq. (10) for the backlogs left (an empty queue's rate is 0, a
//!   lone backlogged queue gets `C`).
//! - Ties in `L_i − V_i` go to the lower queue index (the thesis' code gives
//!   them to DS, queue 1).
//! - Units: bytes and nanoseconds (`C` in bytes/ns); the ns-2 code uses bits
//!   and seconds, which gives the same decisions.

use std::collections::VecDeque;

use super::{check_heads, check_per_queue, Head, SchedError, Scheduler};
use crate::time::Time;

/// The virtual service functions `V_i` of Section 5.2.1, shared by BPR and
/// BPR+: which queue to serve given per-queue rates over the last interval.
#[derive(Clone, Debug)]
pub(crate) struct VirtualService {
    /// `V_i`, bytes.
    v: Vec<f64>,
    /// `t^d`, the previous decision (departure).
    last: Time,
}

impl VirtualService {
    pub(crate) fn new(queues: usize) -> VirtualService {
        VirtualService { v: vec![0.0; queues], last: Time::ZERO }
    }

    /// Eqs. (23), (24) and (27): updates `V` with `rates` (bytes/ns, in force
    /// since `t^d`) and picks the backlogged queue with the smallest
    /// `L_i − V_i`. `backlogged` is the number of non-empty heads.
    pub(crate) fn choose(
        &mut self,
        heads: &[Option<Head>],
        rates: &[f64],
        backlogged: usize,
        now: Time,
    ) -> Option<usize> {
        if backlogged == 0 {
            return None;
        }
        if backlogged == 1 {
            self.v.iter_mut().for_each(|v| *v = 0.0);
            return heads.iter().position(Option::is_some);
        }
        let dt = now.saturating_sub(self.last).as_nanos() as f64;
        let mut best: Option<(usize, f64)> = None;
        for (i, h) in heads.iter().enumerate() {
            let Some(h) = h else { continue };
            if h.enqueued >= self.last {
                self.v[i] = 0.0;
            } else {
                self.v[i] += rates[i] * dt;
            }
            let key = h.size as f64 - self.v[i];
            if best.is_none_or(|(_, b)| key < b) {
                best = Some((i, key));
            }
        }
        // Later selects before the dequeue see the same state.
        self.last = now;
        best.map(|(i, _)| i)
    }

    /// Eqs. (25)–(26): `queue` sent `size` bytes at `now`.
    pub(crate) fn served(&mut self, queue: usize, size: u32, now: Time) {
        self.v[queue] -= size as f64;
        self.last = now;
    }

    /// `V_i`, bytes.
    pub(crate) fn values(&self) -> &[f64] {
        &self.v
    }
}

/// BPR over `s.len()` queues on a link of `link_rate_bps`.
#[derive(Clone, Debug)]
pub struct Bpr {
    /// `s_i`, scheduler differentiation parameters.
    s: Vec<f64>,
    /// `C`, bytes per nanosecond.
    capacity: f64,
    /// `q_i`, backlog in bytes.
    backlog: Vec<u64>,
    /// `r_i`, bytes per nanosecond, in force since the last departure.
    rates: Vec<f64>,
    vs: VirtualService,
}

impl Bpr {
    /// `s[i]`: scheduler differentiation parameter of queue `i` (> 0; the
    /// delay ratio `d_i/d_j` approaches `s_j/s_i`); `link_rate_bps`: `C`,
    /// the rate of the served link (bits/s, > 0).
    pub fn new(queues: usize, s: Vec<f64>, link_rate_bps: u64) -> Result<Bpr, SchedError> {
        check_per_queue("BPR", "s", queues, &s)?;
        if link_rate_bps == 0 {
            return Err(SchedError::Zero { scheduler: "BPR", param: "link_rate_bps", value: 0.0 });
        }
        Ok(Bpr {
            s,
            capacity: link_rate_bps as f64 / 8e9,
            backlog: vec![0; queues],
            rates: vec![0.0; queues],
            vs: VirtualService::new(queues),
        })
    }

    /// The thesis' two classes: queue 0 throughput-sensitive (TS), queue 1
    /// delay-sensitive (DS), `d_TS / d_DS → δ` (`delta` > 0; the thesis
    /// takes δ ≥ 1). Same as `new(2, vec![1.0, delta], link_rate_bps)`.
    pub fn with_delta(delta: f64, link_rate_bps: u64) -> Result<Bpr, SchedError> {
        if !(delta.is_finite() && delta > 0.0) {
            return Err(SchedError::Zero { scheduler: "BPR", param: "delta", value: delta });
        }
        Bpr::new(2, vec![1.0, delta], link_rate_bps)
    }

    /// Eq. (10): `r_i = C s_i q_i / Σ_j s_j q_j` for the current backlogs.
    fn update_rates(&mut self) {
        let sum: f64 = self.backlog.iter().zip(&self.s).map(|(&q, s)| q as f64 * s).sum();
        for ((r, &q), s) in self.rates.iter_mut().zip(&self.backlog).zip(&self.s) {
            *r = if sum > 0.0 { self.capacity * s * q as f64 / sum } else { 0.0 };
        }
    }

    /// Eq. (10)'s rates, bits/s, for the current backlogs.
    pub fn rates_bps(&self) -> Vec<f64> {
        let mut b = self.clone();
        b.update_rates();
        b.rates.iter().map(|r| r * 8e9).collect()
    }

    /// `V_i`, bytes.
    pub fn virtual_service(&self) -> &[f64] {
        self.vs.values()
    }
}

impl Scheduler for Bpr {
    fn on_enqueue(&mut self, queue: usize, size: u32, _now: Time) {
        self.backlog[queue] += size as u64;
    }

    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize> {
        check_heads("BPR", heads, self.s.len());
        let backlogged = heads.iter().filter(|h| h.is_some()).count();
        self.vs.choose(heads, &self.rates, backlogged, now)
    }

    fn on_dequeue(&mut self, queue: usize, size: u32, now: Time) {
        self.backlog[queue] = self.backlog[queue]
            .checked_sub(size as u64)
            .unwrap_or_else(|| panic!("BPR: dequeue of {size} B from queue {queue} holding less"));
        self.vs.served(queue, size, now);
        self.update_rates();
    }
}

/// Per-queue FIFO of arrival times, fed by `on_enqueue`, drained by
/// `on_dequeue`; shared by the measurement-based schedulers.
#[derive(Clone, Debug)]
pub(crate) struct Arrivals {
    pub(crate) times: Vec<VecDeque<Time>>,
}

impl Arrivals {
    pub(crate) fn new(queues: usize) -> Arrivals {
        Arrivals { times: vec![VecDeque::new(); queues] }
    }

    pub(crate) fn push(&mut self, queue: usize, now: Time) {
        self.times[queue].push_back(now);
    }

    /// The arrival time of `queue`'s head, removed.
    pub(crate) fn pop(&mut self, scheduler: &'static str, queue: usize) -> Time {
        self.times[queue]
            .pop_front()
            .unwrap_or_else(|| panic!("{scheduler}: dequeue from empty queue {queue}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(size: u32, at: u64) -> Option<Head> {
        Some(Head { size, enqueued: Time::from_micros(at) })
    }

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            Bpr::new(2, vec![1.0, 0.0], 1).unwrap_err().to_string(),
            "BPR: `s` of queue 1 must be positive and finite, got 0"
        );
        assert!(Bpr::new(2, vec![1.0, 4.0], 0).is_err());
        assert!(Bpr::new(0, vec![], 1).is_err());
        assert!(Bpr::with_delta(-1.0, 1).is_err());
        assert!(Bpr::with_delta(f64::INFINITY, 1).is_err());
    }

    /// Eq. (10), δ = 4, C = 10 Mb/s, q_TS = 3000 B, q_DS = 500 B:
    /// r_DS = C·δ·q_DS/(q_TS + δ·q_DS) = 10·2000/5000 = 4 Mb/s, r_TS = 6 Mb/s;
    /// check r_TS/r_DS = 1.5 = (1/4)(3000/500).
    /// Three classes s = (1, 2, 4), q = (1000, 1000, 500): s·q = 1000, 2000,
    /// 2000 of 5000 → 2, 4, 4 Mb/s.
    #[test]
    fn hand_checked_rates() {
        let mut b = Bpr::with_delta(4.0, 10_000_000).unwrap();
        b.on_enqueue(0, 1500, Time::ZERO);
        b.on_enqueue(0, 1500, Time::ZERO);
        b.on_enqueue(1, 500, Time::ZERO);
        let r = b.rates_bps();
        assert!((r[0] - 6e6).abs() < 1e-6 && (r[1] - 4e6).abs() < 1e-6, "{r:?}");

        let mut b = Bpr::new(3, vec![1.0, 2.0, 4.0], 10_000_000).unwrap();
        b.on_enqueue(0, 1000, Time::ZERO);
        b.on_enqueue(1, 1000, Time::ZERO);
        b.on_enqueue(2, 500, Time::ZERO);
        let r = b.rates_bps();
        for (got, want) in r.iter().zip([2e6, 4e6, 4e6]) {
            assert!((got - want).abs() < 1e-6, "{r:?}");
        }
    }

    /// δ = 4, C = 8 Mb/s = 1 B/µs. t = 0: TS holds 1000 + 1000 B, DS 500 B.
    /// First decision: both heads arrived at ≥ t^d = 0, so V = 0; L − V:
    /// TS 1000, DS 500 → DS. After it, q = (2000, 0): r = (C, 0); V_DS = −500.
    /// t = 500 µs: TS alone → TS, V reset; V_TS = −1000 after. Rates
    /// q = (1000, 0) → (C, 0). A DS packet of 200 B arrived at 600 µs.
    /// t = 1500 µs: V_TS = −1000 + 1·1000 = 0 (head arrived before t^d =
    /// 500); DS head arrived after t^d → V_DS = 0. L − V: TS 1000, DS 200 →
    /// DS.
    #[test]
    fn hand_checked_choices() {
        let mut b = Bpr::with_delta(4.0, 8_000_000).unwrap();
        b.on_enqueue(0, 1000, Time::ZERO);
        b.on_enqueue(0, 1000, Time::ZERO);
        b.on_enqueue(1, 500, Time::ZERO);
        assert_eq!(b.select(&[h(1000, 0), h(500, 0)], Time::ZERO), Some(1));
        b.on_dequeue(1, 500, Time::ZERO);
        assert_eq!(b.virtual_service(), &[0.0, -500.0]);
        let t1 = Time::from_micros(500);
        assert_eq!(b.select(&[h(1000, 0), None], t1), Some(0));
        b.on_dequeue(0, 1000, t1);
        assert_eq!(b.virtual_service(), &[-1000.0, 0.0]);
        b.on_enqueue(1, 200, Time::from_micros(600));
        let t2 = Time::from_micros(1500);
        assert_eq!(b.select(&[h(1000, 0), h(200, 600)], t2), Some(1));
        let v = b.virtual_service();
        assert!(v[0].abs() < 1e-9 && v[1] == 0.0, "{v:?}");
    }
}
