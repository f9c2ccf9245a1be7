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
//! - if one queue is backlogged it is served and every `V` is 0 afterwards
//!   (Appendix A and D reset both functions after such a departure);
//! - otherwise, for each backlogged queue, `V_i = 0` if its head arrived at or
//!   after `t^d`, else `V_i += r_i (t − t^d)`; the queue with the smallest
//!   `L_i − V_i` (`L_i` its head's size) is served (eq. 27), and the served
//!   queue's `V` drops by the packet's size (eqs. 25–26);
//! - ties in `L_i − V_i` go to the queue with the larger `s_i`, then to the
//!   lower index: eq. (27) serves TS only when its `L − V` is strictly
//!   smaller, so a tie goes to DS (`s = [1, δ]`, δ ≥ 1), as in Appendices A
//!   and D. With fixed-size packets ties are frequent (both `V` are 0 when
//!   both heads arrived after `t^d`), so the rule matters.
//!
//! BPR's rates are recomputed after every departure from the backlogs left
//! (as in Appendix D), and after every eviction, and hold until the next
//! one; [`Scheduler::service_rates_bps`] reports them (PLC reads them).
//!
//! ## Evictions
//!
//! A packet evicted from the head of a queue (PLC, PLR) leaves its backlog
//! and the rates are recomputed for the backlogs left, as after a
//! departure, but it was not served: `V_i` does not drop by its size
//! (Appendix D's `getDS()` leaves `v_ds` alone) and `t^d` stays the last
//! decision. The rates in force change at the eviction, so the next
//! decision integrates the old rates up to it and the new ones after
//! (`VirtualService::bank`).
//!
//! ## Departures from the thesis' code, and assumptions
//!
//! - N classes (the thesis has two); rates from eq. (10) generalized as above.
//! - Appendix D keeps the previous rates when one queue is empty after a
//!   departure (stale until both are backlogged again); here rates are always
//!   those of eq. (10) for the backlogs left (an empty queue's rate is 0, a
//!   lone backlogged queue gets `C`).
//! - Appendix D's `getDS()` changes no rate: the rates of the last departure
//!   stay in force until the next one. Here an eviction recomputes them.
//! - Arrivals do not change the rates in force: they are all 0 before the
//!   first departure, and after a departure (or eviction) that leaves every
//!   queue empty, until the next departure or eviction (Appendix D keeps
//!   the last two-class rates instead).
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
    /// The latest decision found one queue backlogged: its departure leaves
    /// every `V` at 0 instead of charging the packet (Appendices A and D).
    lone: bool,
    /// `∫ r_i dt` from `t^d` to `mark` under rates that were replaced since
    /// (BPR's evictions), bytes; all 0 when the rates have not changed.
    banked: Vec<f64>,
    /// Since when the rates passed to `choose` have been in force (≥ `t^d`).
    mark: Time,
}

impl VirtualService {
    pub(crate) fn new(queues: usize) -> VirtualService {
        VirtualService {
            v: vec![0.0; queues],
            last: Time::ZERO,
            lone: false,
            banked: vec![0.0; queues],
            mark: Time::ZERO,
        }
    }

    /// Eqs. (23), (24) and (27): updates `V` with `rates` (bytes/ns, in force
    /// since `t^d`) and picks the backlogged queue with the smallest
    /// `L_i − V_i`, a tie going to the larger `s_i`, then the lower index.
    /// `backlogged` is the number of non-empty heads.
    pub(crate) fn choose(
        &mut self,
        heads: &[Option<Head>],
        rates: &[f64],
        s: &[f64],
        backlogged: usize,
        now: Time,
    ) -> Option<usize> {
        self.lone = backlogged == 1;
        if backlogged == 0 {
            return None;
        }
        if backlogged == 1 {
            self.v.iter_mut().for_each(|v| *v = 0.0);
            return heads.iter().position(Option::is_some);
        }
        let dt = now.saturating_sub(self.mark).as_nanos() as f64;
        let mut best: Option<(usize, f64)> = None;
        for (i, h) in heads.iter().enumerate() {
            let Some(h) = h else { continue };
            if h.enqueued >= self.last {
                self.v[i] = 0.0;
            } else {
                self.v[i] += self.banked[i] + rates[i] * dt;
            }
            let key = h.size as f64 - self.v[i];
            if best.is_none_or(|(j, b)| key < b || (key == b && s[i] > s[j])) {
                best = Some((i, key));
            }
        }
        // Later selects before the dequeue see the same state.
        self.restart(now);
        best.map(|(i, _)| i)
    }

    /// Eqs. (25)–(26): `queue` sent `size` bytes at `now`; after a lone
    /// queue's departure every `V` stays 0.
    pub(crate) fn served(&mut self, queue: usize, size: u32, now: Time) {
        if !std::mem::take(&mut self.lone) {
            self.v[queue] -= size as f64;
        }
        self.restart(now);
    }

    /// `now` is the new `t^d`: nothing banked, the rates count from `now`.
    fn restart(&mut self, now: Time) {
        self.last = now;
        self.mark = now;
        self.banked.iter_mut().for_each(|b| *b = 0.0);
    }

    /// The rates in force (`rates`, bytes/ns) are replaced at `now` between
    /// two decisions (BPR's eviction): banks their service since `mark` so
    /// that the next decision integrates the rates piecewise. `V` and `t^d`
    /// are left alone.
    pub(crate) fn bank(&mut self, rates: &[f64], now: Time) {
        let dt = now.saturating_sub(self.mark).as_nanos() as f64;
        for (b, r) in self.banked.iter_mut().zip(rates) {
            *b += r * dt;
        }
        self.mark = self.mark.max(now);
    }

    /// Banks `service` (bytes per queue, the fluid service since `mark`
    /// computed by the caller) and moves `mark` to `now`; `V` and `t^d`
    /// are left alone (fluid BPR⁺, whose rates vary between events).
    pub(crate) fn bank_service(&mut self, service: &[f64], now: Time) {
        for (b, s) in self.banked.iter_mut().zip(service) {
            *b += s;
        }
        self.mark = self.mark.max(now);
    }

    /// `V_i`, bytes.
    pub(crate) fn values(&self) -> &[f64] {
        &self.v
    }

    /// `t^d`.
    #[cfg(test)]
    pub(crate) fn last_decision(&self) -> Time {
        self.last
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

    /// `V_i`, bytes.
    pub fn virtual_service(&self) -> &[f64] {
        self.vs.values()
    }

    /// Takes `size` bytes off `queue`'s backlog (a departure or an eviction).
    fn remove(&mut self, queue: usize, size: u32, what: &str) {
        self.backlog[queue] = self.backlog[queue]
            .checked_sub(size as u64)
            .unwrap_or_else(|| panic!("BPR: {what} of {size} B from queue {queue} holding less"));
    }
}

/// Writes `rates` (bytes/ns) to `out` in bits/s; panics on a length mismatch.
pub(crate) fn write_bps(scheduler: &'static str, rates: &[f64], out: &mut [f64]) {
    assert_eq!(
        out.len(),
        rates.len(),
        "{scheduler}: service_rates_bps got room for {} rates for {} queues",
        out.len(),
        rates.len()
    );
    for (o, r) in out.iter_mut().zip(rates) {
        *o = r * 8e9;
    }
}

impl Scheduler for Bpr {
    fn on_enqueue(&mut self, queue: usize, size: u32, _now: Time) {
        self.backlog[queue] += size as u64;
    }

    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize> {
        check_heads("BPR", heads, self.s.len());
        let backlogged = heads.iter().filter(|h| h.is_some()).count();
        self.vs.choose(heads, &self.rates, &self.s, backlogged, now)
    }

    fn on_dequeue(&mut self, queue: usize, size: u32, now: Time) {
        self.remove(queue, size, "dequeue");
        self.vs.served(queue, size, now);
        self.update_rates();
    }

    /// Backlog down, rates recomputed as after a departure; `V` not charged.
    fn on_evict(&mut self, queue: usize, size: u32, now: Time) {
        self.remove(queue, size, "eviction");
        self.vs.bank(&self.rates, now);
        self.update_rates();
    }

    /// Eq. (10) for the backlogs left by the last departure or eviction.
    fn service_rates_bps(&self, out: &mut [f64]) -> bool {
        write_bps("BPR", &self.rates, out);
        true
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

    /// The arrival time of `queue`'s head, removed (it left or was evicted).
    pub(crate) fn pop(&mut self, scheduler: &'static str, queue: usize) -> Time {
        self.times[queue]
            .pop_front()
            .unwrap_or_else(|| panic!("{scheduler}: dequeue or eviction from empty queue {queue}"))
    }

    /// Checks the FIFOs against the queues' contents.
    #[cfg(test)]
    pub(crate) fn check(&self, name: &str, queues: &[VecDeque<Head>]) -> Result<(), String> {
        use super::tests::same;
        same(name, "queues", 0, self.times.len(), queues.len())?;
        for (i, (t, q)) in self.times.iter().zip(queues).enumerate() {
            same(name, "arrival times", i, t.iter().copied().collect::<Vec<_>>(), super::tests::times(q))?;
        }
        Ok(())
    }
}

#[cfg(test)]
impl Bpr {
    pub(crate) fn check_state(&self, queues: &[VecDeque<Head>]) -> Result<(), String> {
        use super::tests::{bytes, same};
        same("BPR", "queues", 0, self.backlog.len(), queues.len())?;
        for (i, q) in queues.iter().enumerate() {
            same("BPR", "backlog", i, self.backlog[i], bytes(q))?;
        }
        Ok(())
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

    fn rates(b: &Bpr) -> Vec<f64> {
        let mut r = vec![f64::NAN; b.s.len()];
        assert!(b.service_rates_bps(&mut r));
        r
    }

    fn assert_rates(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{got:?} != {want:?}");
        }
    }

    /// Eq. (10), δ = 4, C = 10 Mb/s, q_TS = 3000 B, q_DS = 500 B:
    /// r_DS = C·δ·q_DS/(q_TS + δ·q_DS) = 10·2000/5000 = 4 Mb/s, r_TS = 6 Mb/s;
    /// check r_TS/r_DS = 1.5 = (1/4)(3000/500). Rates are in force from a
    /// departure (or eviction) on; arrivals do not change them: 0 before.
    /// Three classes s = (1, 2, 4), q = (1000, 1000, 500) after a
    /// departure: s·q = 1000, 2000, 2000 of 5000 → 2, 4, 4 Mb/s.
    #[test]
    fn hand_checked_rates() {
        let mut b = Bpr::with_delta(4.0, 10_000_000).unwrap();
        b.on_enqueue(0, 1500, Time::ZERO);
        b.on_enqueue(0, 1500, Time::ZERO);
        b.on_enqueue(1, 500, Time::ZERO);
        b.on_enqueue(1, 500, Time::ZERO);
        assert_rates(&rates(&b), &[0.0, 0.0]);
        b.on_dequeue(1, 500, Time::ZERO);
        assert_rates(&rates(&b), &[6e6, 4e6]);

        let mut b = Bpr::new(3, vec![1.0, 2.0, 4.0], 10_000_000).unwrap();
        b.on_enqueue(0, 1000, Time::ZERO);
        b.on_enqueue(1, 1000, Time::ZERO);
        b.on_enqueue(2, 500, Time::ZERO);
        b.on_enqueue(2, 500, Time::ZERO);
        b.on_dequeue(2, 500, Time::ZERO);
        assert_rates(&rates(&b), &[2e6, 4e6, 4e6]);
        // Empty link: no rate.
        b.on_dequeue(0, 1000, Time::ZERO);
        b.on_dequeue(1, 1000, Time::ZERO);
        b.on_dequeue(2, 500, Time::ZERO);
        assert_rates(&rates(&b), &[0.0, 0.0, 0.0]);
    }

    #[test]
    #[should_panic(expected = "BPR: service_rates_bps got room for 1 rates for 2 queues")]
    fn service_rates_need_one_slot_per_queue() {
        Bpr::with_delta(4.0, 10_000_000).unwrap().service_rates_bps(&mut [0.0]);
    }

    /// δ = 4, C = 10 Mb/s = 0.00125 B/ns. t = 0: TS holds 1500 + 1500 B, DS
    /// 3 × 500 B. t = 10 µs: first decision, heads arrived at ≥ t^d = 0 →
    /// V = 0; L − V: DS 500 < TS 1500 → DS; V_DS = −500, t^d = 10 µs;
    /// q = (3000, 1000): r = C·(3/7, 4/7).
    /// t = 24 µs: DS's head (500 B) is evicted. q = (3000, 500) → r_DS =
    /// 4 Mb/s, r_TS = 6 Mb/s; V stays (0, −500). The old rates served
    /// 14 µs: 0.00125·(3/7, 4/7)·14000 = (7.5, 10) B banked.
    /// t = 124 µs: both heads arrived before t^d: V_TS = 7.5 + 0.00075·1e5
    /// = 82.5, V_DS = −500 + 10 + 0.0005·1e5 = −440; L − V: TS 1417.5, DS
    /// 940 → DS. (The new rates over all 114 µs would give 85.5, −443.)
    #[test]
    fn eviction_recomputes_rates_and_leaves_v() {
        let mut b = Bpr::with_delta(4.0, 10_000_000).unwrap();
        b.on_enqueue(0, 1500, Time::ZERO);
        b.on_enqueue(0, 1500, Time::ZERO);
        for _ in 0..3 {
            b.on_enqueue(1, 500, Time::ZERO);
        }
        let t1 = Time::from_micros(10);
        assert_eq!(b.select(&[h(1500, 0), h(500, 0)], t1), Some(1));
        b.on_dequeue(1, 500, t1);
        assert_rates(&rates(&b), &[10e6 * 3.0 / 7.0, 10e6 * 4.0 / 7.0]);
        assert_eq!(b.virtual_service(), &[0.0, -500.0]);

        b.on_evict(1, 500, Time::from_micros(24));
        assert_eq!(b.backlog, vec![3000, 500]);
        assert_rates(&rates(&b), &[6e6, 4e6]);
        assert_eq!(b.virtual_service(), &[0.0, -500.0]);

        assert_eq!(b.select(&[h(1500, 0), h(500, 0)], Time::from_micros(124)), Some(1));
        let v = b.virtual_service();
        assert!((v[0] - 82.5).abs() < 1e-9 && (v[1] + 440.0).abs() < 1e-9, "{v:?}");
    }

    /// Evicting a queue empty gives the other the whole link; evicting
    /// everything leaves no rate, and V is never charged.
    #[test]
    fn eviction_of_a_whole_queue() {
        let mut b = Bpr::with_delta(4.0, 8_000_000).unwrap();
        b.on_enqueue(0, 1000, Time::ZERO);
        b.on_enqueue(1, 200, Time::ZERO);
        b.on_evict(1, 200, Time::ZERO);
        assert_rates(&rates(&b), &[8e6, 0.0]);
        b.on_evict(0, 1000, Time::ZERO);
        assert_rates(&rates(&b), &[0.0, 0.0]);
        assert_eq!(b.virtual_service(), &[0.0, 0.0]);
    }

    /// δ = 4, C = 8 Mb/s = 1 B/µs. t = 0: TS holds 1000 + 1000 B, DS 500 B.
    /// First decision: both heads arrived at ≥ t^d = 0, so V = 0; L − V:
    /// TS 1000, DS 500 → DS. After it, q = (2000, 0): r = (C, 0); V_DS = −500.
    /// t = 500 µs: TS alone → TS, and every V is 0 after its departure
    /// (Appendices A and D). Rates q = (1000, 0) → (C, 0). A DS packet of
    /// 200 B arrived at 600 µs. t = 1500 µs: V_TS = 0 + 1·1000 = 1000 (head
    /// arrived before t^d = 500); DS head arrived after t^d → V_DS = 0.
    /// L − V: TS 0, DS 200 → TS.
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
        assert_eq!(b.virtual_service(), &[0.0, 0.0]);
        b.on_enqueue(1, 200, Time::from_micros(600));
        let t2 = Time::from_micros(1500);
        assert_eq!(b.select(&[h(1000, 0), h(200, 600)], t2), Some(0));
        let v = b.virtual_service();
        assert!((v[0] - 1000.0).abs() < 1e-9 && v[1] == 0.0, "{v:?}");
        b.on_dequeue(0, 1000, t2);
        assert!(b.virtual_service()[0].abs() < 1e-9);
    }

    /// Eq. (27) serves TS only when its `L − V` is strictly smaller: two
    /// 500 B heads that arrived after `t^d` (both `V` = 0) tie, and DS is
    /// served. With more queues a tie goes to the largest `s`, then to the
    /// lowest index.
    #[test]
    fn ties_go_to_the_lower_delay_queue() {
        let heads = [h(500, 0), h(500, 0), h(500, 0)];
        let mut b = Bpr::with_delta(4.0, 8_000_000).unwrap();
        assert_eq!(b.select(&heads[..2], Time::ZERO), Some(1));
        let mut b = Bpr::new(3, vec![1.0, 4.0, 2.0], 8_000_000).unwrap();
        assert_eq!(b.select(&heads, Time::ZERO), Some(1));
        let mut b = Bpr::new(3, vec![2.0, 1.0, 2.0], 8_000_000).unwrap();
        assert_eq!(b.select(&heads, Time::ZERO), Some(0));
    }
}
