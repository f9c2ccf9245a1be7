//! Adaptive RED.
//!
//! S. Floyd, R. Gummadi, S. Shenker, "Adaptive RED: An Algorithm for
//! Increasing the Robustness of RED's Active Queue Management", ICSI
//! technical report, August 2001 (Figure 2 and §4–5). RED itself is
//! [`super::red`] (ns-2 semantics), run with `gentle` and a `max_p` that
//! this module adapts:
//!
//! - **Target band** for the average:
//!   `[min_th + 0.4·(max_th − min_th), min_th + 0.6·(max_th − min_th)]`.
//! - **AIMD on `max_p`, every `interval` (0.5 s)**: if `avg` is above the
//!   band and `max_p < top`, `max_p ← max_p + α` with
//!   `α = min(0.01, max_p/4)`; if `avg` is below the band and
//!   `max_p > bottom`, `max_p ← β·max_p` with `β = 0.9`. `max_p` is kept in
//!   `[bottom, top] = [0.01, 0.5]`: a step that would overshoot stops at the
//!   bound (the paper's pseudocode tests the bound before the step and can
//!   end slightly outside it).
//! - **Automatic `w_q = 1 − exp(−1/C)`** (§5), `C` the link capacity in
//!   packets per second of `mean_pktsize` bytes, so the average's time
//!   constant is about one second.
//!
//! **Lazy, timer-exact updates.** The paper runs the adaptation from a
//! timer. Here due times are the grid `interval, 2·interval, …` and the
//! updates due at or before `now` run at the start of the first arrival at
//! or after them, in order, each against the average as it stood at that
//! due time — the value computed at the previous arrival, since RED's
//! average only changes at arrivals. The result is the same as a timer's
//! whose tick at `t` runs before an arrival at `t`. A long gap with no
//! arrivals runs every missed step; once a step leaves `max_p` unchanged
//! (it sits at a bound, or the average is in the band) the rest are skipped,
//! as they would change nothing either.
//!
//! Not done: the paper's automatic thresholds (from a target delay); the
//! thresholds are parameters. Packet mode only.

use crate::aqm::red::{Red, RedParams};
use crate::aqm::{Backlog, Limit};
use crate::packet::{Colour, DropReason};
use crate::rng::Rng;
use crate::time::Time;

/// Adaptive RED's parameters, named as the paper and ns-2 name them.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveRedParams {
    /// Lower threshold of the average, in packets.
    pub min_th: f64,
    /// Upper threshold of the average, in packets.
    pub max_th: f64,
    /// EWMA weight; `None` for the automatic `1 − exp(−1/C)`.
    pub w_q: Option<f64>,
    /// Initial `max_p`.
    pub max_p: f64,
    /// Time between adaptations of `max_p`.
    pub interval: Time,
    /// Multiplicative decrease factor of `max_p`.
    pub beta: f64,
    /// Upper bound of `max_p` (ns-2's `top_`).
    pub top: f64,
    /// Lower bound of `max_p` (ns-2's `bottom_`).
    pub bottom: f64,
    /// Hard buffer limit.
    pub limit: Limit,
    /// Typical packet size in bytes: sets `C` and the idle-time packet time.
    pub mean_pktsize: u32,
    /// Gentle RED (the paper's recommendation).
    pub gentle: bool,
    /// ns-2's `wait_` spacing.
    pub wait: bool,
}

impl Default for AdaptiveRedParams {
    /// The paper's constants (interval 0.5 s, β 0.9, `max_p` in [0.01, 0.5],
    /// automatic `w_q`, gentle), ns-2's initial `max_p` 0.1 and `wait`, and
    /// the thresholds of [`RedParams::default`].
    fn default() -> Self {
        AdaptiveRedParams {
            min_th: 5.0,
            max_th: 15.0,
            w_q: None,
            max_p: 0.1,
            interval: Time::from_millis(500),
            beta: 0.9,
            top: 0.5,
            bottom: 0.01,
            limit: Limit::Packets(50),
            mean_pktsize: 500,
            gentle: true,
            wait: true,
        }
    }
}

impl AdaptiveRedParams {
    /// Checks the relations the algorithm needs; the message names the parameter.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.bottom > 0.0 && self.bottom < self.top && self.top <= 1.0) {
            return Err(format!("need 0 < bottom < top <= 1, got bottom = {}, top = {}", self.bottom, self.top));
        }
        if !(self.max_p >= self.bottom && self.max_p <= self.top) {
            return Err(format!("max_p ({}) must lie in [bottom, top] = [{}, {}]", self.max_p, self.bottom, self.top));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!("beta must be in (0, 1), got {}", self.beta));
        }
        if self.interval == Time::ZERO {
            return Err("interval must be positive".into());
        }
        if let Some(w) = self.w_q {
            if !(w > 0.0 && w <= 1.0) {
                return Err(format!("w_q must be in (0, 1], got {w}"));
            }
        }
        self.red_params(0.5).validate()
    }

    fn red_params(&self, w_q: f64) -> RedParams {
        RedParams {
            min_th: self.min_th,
            max_th: self.max_th,
            w_q,
            max_p: self.max_p,
            limit: self.limit,
            mean_pktsize: self.mean_pktsize,
            gentle: self.gentle,
            wait: self.wait,
            byte_mode: false,
            ns1_compat: false,
        }
    }
}

/// One Adaptive RED instance.
#[derive(Clone, Debug)]
pub struct AdaptiveRed {
    red: Red,
    interval: Time,
    beta: f64,
    top: f64,
    bottom: f64,
    /// The target band of the average.
    target: (f64, f64),
    /// The next due time of the adaptation.
    next_update: Time,
}

impl AdaptiveRed {
    /// An Adaptive RED guarding a buffer drained at `link_rate_bps`.
    pub fn new(params: AdaptiveRedParams, link_rate_bps: u64, rng: Rng) -> AdaptiveRed {
        let c = link_rate_bps as f64 / (8.0 * params.mean_pktsize as f64);
        let w_q = params.w_q.unwrap_or_else(|| automatic_w_q(c));
        let span = params.max_th - params.min_th;
        AdaptiveRed {
            red: Red::new(params.red_params(w_q), link_rate_bps, rng),
            interval: params.interval,
            beta: params.beta,
            top: params.top,
            bottom: params.bottom,
            target: (params.min_th + 0.4 * span, params.min_th + 0.6 * span),
            next_update: params.interval,
        }
    }

    /// The current average, in packets.
    /// The RED it adapts (with the current `max_p`).
    pub fn red(&self) -> &Red {
        &self.red
    }

    pub fn avg(&self) -> f64 {
        self.red.avg()
    }

    /// The current `max_p`.
    pub fn max_p(&self) -> f64 {
        self.red.params().max_p
    }

    /// The EWMA weight in use.
    pub fn w_q(&self) -> f64 {
        self.red.params().w_q
    }

    /// The target band of the average, in packets.
    pub fn target(&self) -> (f64, f64) {
        self.target
    }

    /// One AIMD step against the average `avg`.
    fn adapt(&mut self, avg: f64) {
        let max_p = self.max_p();
        if avg > self.target.1 && max_p < self.top {
            let alpha = (max_p / 4.0).min(0.01);
            self.red.set_max_p((max_p + alpha).min(self.top));
        } else if avg < self.target.0 && max_p > self.bottom {
            self.red.set_max_p((max_p * self.beta).max(self.bottom));
        }
    }

    /// Runs the adaptations due at or before `now`, in order.
    fn catch_up(&mut self, now: Time) {
        if now < self.next_update {
            return;
        }
        let due = (now - self.next_update).as_nanos() / self.interval.as_nanos() + 1;
        let avg = self.red.avg();
        for _ in 0..due {
            let before = self.max_p();
            self.adapt(avg);
            if self.max_p() == before {
                break;
            }
        }
        self.next_update = Time(self.next_update.as_nanos() + due * self.interval.as_nanos());
    }

    /// The link found the buffer empty at `now`.
    #[inline]
    pub fn on_idle(&mut self, now: Time) {
        self.red.on_idle(now);
    }

    /// A packet of `size` bytes arrives at a buffer holding `backlog`; its
    /// colour is ignored. Returns why it must be dropped, or `None`.
    pub fn on_arrival(&mut self, backlog: &Backlog, size: u32, _colour: Colour, now: Time) -> Option<DropReason> {
        self.catch_up(now);
        self.red.on_arrival(backlog.pkts, backlog.bytes, size, now)
    }
}

/// `w_q = 1 − exp(−1/C)` for a link of `c` packets per second (paper §5).
pub fn automatic_w_q(c: f64) -> f64 {
    -(-1.0 / c).exp_m1()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ared(params: AdaptiveRedParams) -> AdaptiveRed {
        AdaptiveRed::new(params, 10_000_000, Rng::derive(1, "ared-test"))
    }

    fn packets(n: u64) -> Backlog {
        Backlog { pkts: n, bytes: n * 500, cells: 0, pkts_by_colour: [n, 0, 0], bytes_by_colour: [n * 500, 0, 0] }
    }

    /// Thresholds 20..60: target band [36, 44]; w_q = 1 so the average is the backlog.
    fn params() -> AdaptiveRedParams {
        AdaptiveRedParams {
            min_th: 20.0,
            max_th: 60.0,
            w_q: Some(1.0),
            limit: Limit::Packets(1000),
            ..Default::default()
        }
    }

    #[test]
    fn automatic_w_q_follows_the_link_rate() {
        // 10 Mb/s, 500 B: C = 2500 pkt/s, w_q = 1 − e^(−1/2500) = 3.9992e-4.
        let a = ared(AdaptiveRedParams::default());
        assert!((a.w_q() - (1.0 - (-0.0004f64).exp())).abs() < 1e-15);
        assert!((a.w_q() - 3.99920e-4).abs() < 1e-8);
        assert_eq!(a.target(), (9.0, 11.0)); // 5 + 0.4·10, 5 + 0.6·10
    }

    #[test]
    fn max_p_rises_additively_above_the_band() {
        let mut a = ared(params());
        assert_eq!(a.target(), (36.0, 44.0));
        // The average is 50 (> 44) from time 0. No update before 0.5 s.
        a.on_arrival(&packets(50), 500, Colour::Green, Time::ZERO);
        a.on_arrival(&packets(50), 500, Colour::Green, Time::from_millis(499));
        assert_eq!(a.max_p(), 0.1);
        // At 0.5 s: α = min(0.01, 0.1/4) = 0.01 -> 0.11.
        a.on_arrival(&packets(50), 500, Colour::Green, Time::from_millis(500));
        assert!((a.max_p() - 0.11).abs() < 1e-12);
        // Next arrival at 1.7 s: due times 1.0 and 1.5 s -> 0.12, 0.13.
        a.on_arrival(&packets(50), 500, Colour::Green, Time::from_millis(1700));
        assert!((a.max_p() - 0.13).abs() < 1e-12);
        // Small max_p: α = max_p/4. From 0.02: 0.02·1.25 = 0.025.
        let mut s = ared(AdaptiveRedParams { max_p: 0.02, ..params() });
        s.on_arrival(&packets(50), 500, Colour::Green, Time::ZERO);
        s.on_arrival(&packets(50), 500, Colour::Green, Time::from_millis(500));
        assert!((s.max_p() - 0.025).abs() < 1e-12);
    }

    #[test]
    fn max_p_falls_multiplicatively_below_the_band_and_holds_inside_it() {
        let mut a = ared(params());
        a.on_arrival(&packets(30), 500, Colour::Green, Time::ZERO); // avg 30 < 36
        a.on_arrival(&packets(30), 500, Colour::Green, Time::from_millis(500));
        assert!((a.max_p() - 0.09).abs() < 1e-12); // 0.1·0.9
        a.on_arrival(&packets(30), 500, Colour::Green, Time::from_millis(1000));
        assert!((a.max_p() - 0.081).abs() < 1e-12); // 0.09·0.9
                                                    // In the band (avg 40): no change.
        a.on_arrival(&packets(40), 500, Colour::Green, Time::from_millis(1200));
        a.on_arrival(&packets(40), 500, Colour::Green, Time::from_millis(3000));
        assert!((a.max_p() - 0.081).abs() < 1e-12);
    }

    #[test]
    fn updates_use_the_average_as_it_stood_at_each_due_time() {
        // The arrival at 0.5 s brings the average from 50 to 30; the update
        // due at 0.5 s sees 50 (the average between arrivals) and raises max_p.
        let mut a = ared(params());
        a.on_arrival(&packets(50), 500, Colour::Green, Time::ZERO);
        a.on_arrival(&packets(30), 500, Colour::Green, Time::from_millis(500));
        assert!((a.max_p() - 0.11).abs() < 1e-12);
        a.on_arrival(&packets(30), 500, Colour::Green, Time::from_millis(1000));
        assert!((a.max_p() - 0.099).abs() < 1e-12);
    }

    #[test]
    fn max_p_stays_within_its_bounds() {
        let mut a = ared(params());
        a.on_arrival(&packets(100), 500, Colour::Green, Time::ZERO);
        // 0.1 + 40 steps of 0.01 = 0.5; a 100 s gap runs 200 due steps.
        a.on_arrival(&packets(100), 500, Colour::Green, Time::from_secs(100));
        assert_eq!(a.max_p(), 0.5);
        a.on_arrival(&packets(10), 500, Colour::Green, Time::from_millis(100_500));
        assert_eq!(a.max_p(), 0.5, "the step at 100.5 s saw the old average 100");
        // Then below the band for long: 0.5·0.9^k reaches 0.01 after 38 steps, clamped.
        a.on_arrival(&packets(10), 500, Colour::Green, Time::from_secs(200));
        assert_eq!(a.max_p(), 0.01);
        // Step by step near the top: 0.49 + 0.01 = 0.5, never above.
        let mut b = ared(AdaptiveRedParams { max_p: 0.495, ..params() });
        b.on_arrival(&packets(100), 500, Colour::Green, Time::ZERO);
        b.on_arrival(&packets(100), 500, Colour::Green, Time::from_millis(500));
        assert_eq!(b.max_p(), 0.5);
    }

    #[test]
    fn validate_names_the_bad_parameter() {
        assert_eq!(AdaptiveRedParams::default().validate(), Ok(()));
        let p = AdaptiveRedParams { max_p: 0.6, ..Default::default() };
        assert_eq!(p.validate(), Err("max_p (0.6) must lie in [bottom, top] = [0.01, 0.5]".into()));
        let p = AdaptiveRedParams { min_th: 20.0, ..Default::default() };
        assert_eq!(p.validate(), Err("max_th (15) must be greater than min_th (20)".into()));
        let p = AdaptiveRedParams { interval: Time::ZERO, ..Default::default() };
        assert_eq!(p.validate(), Err("interval must be positive".into()));
    }
}
