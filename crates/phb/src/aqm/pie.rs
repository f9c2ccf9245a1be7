//! PIE, Proportional Integral controller Enhanced (RFC 8033, R. Pan,
//! P. Natarajan, F. Baker, G. White, 2017): an arrival-time dropper whose
//! drop probability a PI controller on the queueing delay sets.
//!
//! Parameters named as in RFC 8033: `QDELAY_REF` (target, 15 ms),
//! `T_UPDATE` (15 ms), `alpha` (0.125 /s), `beta` (1.25 /s), `MAX_BURST`
//! (150 ms), `MEAN_PKTSIZE`.
//!
//! - **Drop probability** (§4.2), every `T_UPDATE`:
//!   `p = alpha·(qdelay − QDELAY_REF) + beta·(qdelay − qdelay_old)` (delays
//!   in seconds), scaled by the magnitude of the current `drop_prob` (the
//!   auto-tuning of alpha and beta): divided by 2048, 512, 128, 32, 8, 2
//!   when `drop_prob` is below 10⁻⁶, 10⁻⁵, 10⁻⁴, 10⁻³, 10⁻², 10⁻¹, and
//!   taken whole above. With `cap_drop_adjustment` (§5.5), `p` is at most
//!   0.02 once `drop_prob ≥ 0.1`. Then `drop_prob += p`; when `qdelay` and
//!   `qdelay_old` are both 0, `drop_prob *= 0.98`; `drop_prob` is bounded to
//!   [0, 1]; `qdelay_old = qdelay`.
//! - **Queueing delay** (§4.3): the timestamp method, which §4.3 allows in
//!   place of Little's law over the departure-rate estimate of §5.2:
//!   `qdelay` is the sojourn time of the last departed packet, and 0 once
//!   the link has found the queue empty ([`Pie::on_idle`]).
//! - **Burst allowance** (§4.4): starts at `MAX_BURST`, falls by `T_UPDATE`
//!   at each update, and no early drop happens while it is positive; it is
//!   reset to `MAX_BURST` when `drop_prob` is 0 and both `qdelay` and
//!   `qdelay_old` are below `QDELAY_REF/2` (as in the RFC's Appendix B and
//!   Linux).
//! - **Random drop** (§4.1): an arrival is not dropped early when
//!   `qdelay_old < QDELAY_REF/2` and `drop_prob < 0.2`, nor when at most
//!   `2·MEAN_PKTSIZE` bytes are queued; otherwise it is dropped with
//!   probability `drop_prob`. De-randomisation (§5.4, optional) is available
//!   with `derandomize` (off by default): `accu_prob` sums `drop_prob` over
//!   arrivals since the last drop, no drop below 0.85, certain drop at 8.5.
//! - An arrival that finds the buffer full is dropped (`Overflow`).
//!
//! **Lazy, timer-exact updates.** Updates are due at `T_UPDATE, 2·T_UPDATE,
//! …`; every hook (`on_arrival`, `on_dequeue`, `on_idle`) first runs the
//! updates due at or before its `now`, in order. Since `qdelay` changes only
//! in those hooks, this equals a timer whose tick at `t` runs before the
//! events at `t`. Once a step leaves the state unchanged (the idle fixed
//! point), the remaining missed steps are skipped.
//!
//! Not done: setting PIE active and inactive (§5.3; PIE is always active
//! here), ECN (§5.1), the departure-rate estimator (§5.2), packet-size
//! scaling of the drop probability.

use crate::aqm::{Backlog, Limit, LimitRule};
use crate::packet::DropReason;
use crate::rng::Rng;
use crate::time::Time;

/// PIE's parameters, named as RFC 8033 names them.
#[derive(Clone, Debug, PartialEq)]
pub struct PieParams {
    /// `QDELAY_REF`: the target queueing delay.
    pub qdelay_ref: Time,
    /// `T_UPDATE`: the period of the drop-probability update.
    pub t_update: Time,
    /// `alpha`, in 1/s: weight of the delay's deviation from target.
    pub alpha: f64,
    /// `beta`, in 1/s: weight of the delay's trend.
    pub beta: f64,
    /// `MAX_BURST`: the burst allowance.
    pub max_burst: Time,
    /// `MEAN_PKTSIZE`, bytes: no early drop while at most two are queued.
    pub mean_pktsize: u32,
    /// The buffer's hard limit (`TAIL_DROP`).
    pub limit: Limit,
    /// De-randomisation (§5.4).
    pub derandomize: bool,
    /// Cap drop adjustment (§5.5): `p ≤ 0.02` per update once `drop_prob ≥ 0.1`.
    pub cap_drop_adjustment: bool,
}

impl Default for PieParams {
    /// RFC 8033's defaults; a 1500-byte mean packet and Linux's limit of
    /// 1000 packets.
    fn default() -> Self {
        PieParams {
            qdelay_ref: Time::from_millis(15),
            t_update: Time::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Time::from_millis(150),
            mean_pktsize: 1500,
            limit: Limit::Packets(1000),
            derandomize: false,
            cap_drop_adjustment: true,
        }
    }
}

impl PieParams {
    pub fn validate(&self) -> Result<(), String> {
        if self.qdelay_ref == Time::ZERO {
            return Err("qdelay_ref must be positive".into());
        }
        if self.t_update == Time::ZERO {
            return Err("t_update must be positive".into());
        }
        if !(self.alpha > 0.0 && self.alpha.is_finite()) {
            return Err(format!("alpha must be positive, got {}", self.alpha));
        }
        if !(self.beta > 0.0 && self.beta.is_finite()) {
            return Err(format!("beta must be positive, got {}", self.beta));
        }
        if self.mean_pktsize == 0 {
            return Err("mean_pktsize must be positive".into());
        }
        self.limit.validate_not_cells()
    }
}

/// One PIE instance.
#[derive(Clone, Debug)]
pub struct Pie {
    params: PieParams,
    drop_prob: f64,
    accu_prob: f64,
    /// The latest queueing-delay sample (`current_qdelay`).
    qdelay: Time,
    qdelay_old: Time,
    burst_allowance: Time,
    next_update: Time,
    rng: Rng,
}

impl Pie {
    /// The hard limit (`TAIL_DROP`) admits only an arrival that fits
    /// ([`LimitRule::Fits`]): RFC 8033's `queue_.is_full()` leaves the rule open.
    pub const LIMIT_RULE: LimitRule = LimitRule::Fits;

    /// `mark_ecnth` (RFC 8033 §5.1): with ECN on, an ECN-capable packet is
    /// marked instead of dropped only while `drop_prob` is at most this;
    /// above it PIE drops (Linux's pie: `MAX_PROB / 10`).
    pub const MARK_ECNTH: f64 = 0.1;

    pub fn new(params: PieParams, rng: Rng) -> Pie {
        Pie {
            drop_prob: 0.0,
            accu_prob: 0.0,
            qdelay: Time::ZERO,
            qdelay_old: Time::ZERO,
            burst_allowance: params.max_burst,
            next_update: params.t_update,
            rng,
            params,
        }
    }

    pub fn params(&self) -> &PieParams {
        &self.params
    }

    /// The current drop probability.
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// The queueing delay used by the latest update.
    pub fn qdelay_old(&self) -> Time {
        self.qdelay_old
    }

    /// What remains of the burst allowance.
    pub fn burst_allowance(&self) -> Time {
        self.burst_allowance
    }

    /// One drop-probability update (§4.2, §4.4).
    fn update(&mut self) {
        let qdelay = self.qdelay.as_secs_f64();
        let old = self.qdelay_old.as_secs_f64();
        let reference = self.params.qdelay_ref.as_secs_f64();
        let mut p = self.params.alpha * (qdelay - reference) + self.params.beta * (qdelay - old);
        p /= match self.drop_prob {
            d if d < 1e-6 => 2048.0,
            d if d < 1e-5 => 512.0,
            d if d < 1e-4 => 128.0,
            d if d < 1e-3 => 32.0,
            d if d < 1e-2 => 8.0,
            d if d < 1e-1 => 2.0,
            _ => 1.0,
        };
        if self.params.cap_drop_adjustment && self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        if qdelay == 0.0 && old == 0.0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.burst_allowance = self.burst_allowance.saturating_sub(self.params.t_update);
        if self.drop_prob == 0.0 && qdelay < reference / 2.0 && old < reference / 2.0 {
            self.burst_allowance = self.params.max_burst;
        }
        self.qdelay_old = self.qdelay;
    }

    /// Runs the updates due at or before `now`, in order.
    fn catch_up(&mut self, now: Time) {
        if now < self.next_update {
            return;
        }
        let period = self.params.t_update.as_nanos();
        let due = (now - self.next_update).as_nanos() / period + 1;
        for _ in 0..due {
            let before = (self.drop_prob, self.qdelay_old, self.burst_allowance);
            self.update();
            if (self.drop_prob, self.qdelay_old, self.burst_allowance) == before {
                break;
            }
        }
        self.next_update = Time(self.next_update.as_nanos() + due * period);
    }

    /// The early-drop decision (§4.1, §5.4).
    fn drop_early(&mut self, backlog: &Backlog) -> bool {
        let half_ref = Time(self.params.qdelay_ref.as_nanos() / 2);
        if (self.qdelay_old < half_ref && self.drop_prob < 0.2) || backlog.bytes <= 2 * self.params.mean_pktsize as u64
        {
            return false;
        }
        if self.params.derandomize {
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        self.rng.uniform() < self.drop_prob
    }

    /// A packet of `size` bytes arrives at a buffer holding `backlog`.
    /// Returns why it must be dropped, or `None` to admit it.
    pub fn on_arrival(&mut self, backlog: &Backlog, size: u32, now: Time) -> Option<DropReason> {
        self.catch_up(now);
        let verdict = if !self.params.limit.admits(Self::LIMIT_RULE, backlog.pkts, backlog.bytes, size) {
            Some(DropReason::Overflow)
        } else if self.burst_allowance == Time::ZERO && self.drop_early(backlog) {
            Some(DropReason::EarlyDrop)
        } else {
            None
        };
        if verdict.is_some() {
            self.accu_prob = 0.0;
        }
        verdict
    }

    /// A packet of `size` bytes left at `now` after `sojourn` in the queue:
    /// its sojourn is the new queueing-delay sample (`size` would feed the
    /// departure-rate estimator, which is not implemented).
    pub fn on_dequeue(&mut self, sojourn: Time, _size: u32, now: Time) {
        self.catch_up(now);
        self.qdelay = sojourn;
    }

    /// The link found the queue empty at `now`: the queueing delay is 0.
    pub fn on_idle(&mut self, now: Time) {
        self.catch_up(now);
        self.qdelay = Time::ZERO;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testbed::{self, Hooks};

    impl Hooks for Pie {
        fn arrival(&mut self, backlog: &Backlog, size: u32, now: Time) -> bool {
            self.on_arrival(backlog, size, now).is_some()
        }
        fn dequeue(&mut self, sojourn: Time, _bytes_left: u64, size: u32, now: Time) -> bool {
            self.on_dequeue(sojourn, size, now);
            false
        }
        fn idle(&mut self, now: Time) {
            self.on_idle(now);
        }
    }

    fn pie(params: PieParams) -> Pie {
        Pie::new(params, Rng::derive(1, "pie-test"))
    }

    fn packets(n: u64) -> Backlog {
        Backlog { pkts: n, bytes: n * 1500, cells: 0, pkts_by_colour: [n, 0, 0], bytes_by_colour: [n * 1500, 0, 0] }
    }

    #[test]
    fn drop_probability_updates_match_hand_computation() {
        let mut p = pie(PieParams::default());
        let ms = Time::from_millis;
        // A constant 30 ms queueing delay from time 0.
        p.on_dequeue(ms(30), 1500, Time::ZERO);
        // Update at 15 ms: p = 0.125·(0.030 − 0.015) + 1.25·(0.030 − 0)
        // = 0.001875 + 0.0375 = 0.039375; drop_prob 0 < 1e-6: /2048
        // -> 1.922607e-5.
        p.on_dequeue(ms(30), 1500, ms(15));
        let p1 = 0.039375 / 2048.0;
        assert!((p.drop_prob() - p1).abs() < 1e-15);
        // Update at 30 ms: p = 0.125·0.015 + 1.25·0 = 0.001875; drop_prob
        // 1.9e-5 < 1e-4: /128 -> 1.464844e-5; drop_prob = 3.387451e-5.
        p.on_dequeue(ms(30), 1500, ms(30));
        let p2 = p1 + 0.001875 / 128.0;
        assert!((p.drop_prob() - p2).abs() < 1e-15);
        // Catching up: the next hook at 61 ms runs the updates due at 45 and
        // 60 ms: each + 0.001875/128 (drop_prob still < 1e-4).
        p.on_arrival(&packets(10), 1500, ms(61));
        let p4 = p2 + 2.0 * 0.001875 / 128.0;
        assert!((p.drop_prob() - p4).abs() < 1e-15);
        // Burst allowance: 150 ms − 4 updates of 15 ms = 90 ms.
        assert_eq!(p.burst_allowance(), ms(90));
        // With drop_prob ≥ 0.1 and the cap: at most + 0.02 per update.
        // A 100 ms sample at 74 ms; the update at 75 ms uses it:
        // p = 0.125·(0.100 − 0.015) + 1.25·(0.100 − 0.030) = 0.098125 > 0.02
        // -> 0.02, so 0.15 -> 0.17.
        p.drop_prob = 0.15;
        p.on_dequeue(ms(100), 1500, ms(74));
        p.on_arrival(&packets(10), 1500, ms(75));
        assert!((p.drop_prob() - 0.17).abs() < 1e-12);
    }

    #[test]
    fn drop_probability_rises_while_delay_is_above_target_and_decays_when_idle() {
        let mut p = pie(PieParams::default());
        let mut last = 0.0;
        // A 20 ms (> 15 ms target) sample before every update.
        p.on_dequeue(Time::from_millis(20), 1500, Time::ZERO);
        for k in 1..=400u64 {
            p.on_dequeue(Time::from_millis(20), 1500, Time::from_millis(15 * k));
            assert!(p.drop_prob() > last, "update {k}: {} after {last}", p.drop_prob());
            last = p.drop_prob();
        }
        // Idle: qdelay 0 twice in a row decays by 0.98 per update (plus
        // the negative alpha term).
        p.on_idle(Time::from_millis(6015));
        p.on_idle(Time::from_millis(6030));
        let before = p.drop_prob();
        p.on_idle(Time::from_millis(6045));
        // p = 0.125·(0 − 0.015) = −0.001875, scaled by drop_prob's magnitude,
        // then × 0.98.
        let scale = match before {
            d if d < 1e-2 => 8.0,
            d if d < 1e-1 => 2.0,
            _ => 1.0,
        };
        let expected = ((before - 0.001875 / scale) * 0.98).max(0.0);
        assert!((p.drop_prob() - expected).abs() < 1e-12, "{} vs {expected}", p.drop_prob());
    }

    #[test]
    fn no_early_drop_under_burst_allowance_or_low_delay_or_small_queue() {
        let mut p = pie(PieParams::default());
        p.drop_prob = 0.5;
        p.qdelay_old = Time::from_millis(30);
        // Burst allowance still 150 ms: nothing dropped.
        for _ in 0..100 {
            assert_eq!(p.on_arrival(&packets(50), 1500, Time::from_millis(1)), None);
        }
        p.burst_allowance = Time::ZERO;
        // At most 2·MEAN_PKTSIZE queued: nothing dropped.
        for _ in 0..100 {
            assert_eq!(p.on_arrival(&packets(2), 1500, Time::from_millis(1)), None);
        }
        // qdelay_old < 7.5 ms but drop_prob 0.5 ≥ 0.2: drops happen.
        p.qdelay_old = Time::from_millis(5);
        let drops = (0..10_000).filter(|_| p.on_arrival(&packets(50), 1500, Time::from_millis(1)).is_some()).count();
        assert!((drops as f64 / 10_000.0 - 0.5).abs() < 0.02, "drop share {drops}");
        // qdelay_old < 7.5 ms and drop_prob 0.15 < 0.2: none.
        p.drop_prob = 0.15;
        for _ in 0..1000 {
            assert_eq!(p.on_arrival(&packets(50), 1500, Time::from_millis(1)), None);
        }
        // A full buffer overflows whatever the state.
        assert_eq!(p.on_arrival(&packets(1000), 1500, Time::from_millis(1)), Some(DropReason::Overflow));
    }

    #[test]
    fn derandomization_spaces_drops() {
        // drop_prob 0.1: accu_prob reaches 0.85 on the 9th arrival since the
        // last drop; from then on each drops with probability 0.1, and the
        // 85th (accu 8.5) is certain — the 86th in floating point, where 85
        // additions of 0.1 give 8.499999999999982.
        let mut p = pie(PieParams { derandomize: true, ..PieParams::default() });
        p.drop_prob = 0.1;
        p.qdelay_old = Time::from_millis(30);
        p.burst_allowance = Time::ZERO;
        let mut since = 0;
        let mut gaps = Vec::new();
        for _ in 0..100_000 {
            since += 1;
            if p.on_arrival(&packets(50), 1500, Time::from_millis(1)).is_some() {
                gaps.push(since);
                since = 0;
            }
        }
        let bad: Vec<_> = gaps.iter().filter(|&&g| !(9..=86).contains(&g)).collect();
        assert!(bad.is_empty(), "gaps outside 9..=86: {bad:?}");
        assert_eq!(gaps.iter().min(), Some(&9));
    }

    #[test]
    fn standing_queue_holds_the_delay_near_target() {
        // 1500-byte packets served every 1.2 ms (10 Mb/s), arrivals every
        // 1 ms: 1.2× overload, 60 s. PIE must drop about 1/6 of arrivals.
        // Timestamp-based delay, no de-randomisation. Measured: mean
        // queueing delay over the last 30 s 14.93 ms (target 15 ms), drop
        // share 0.1665, final drop_prob 0.162.
        let mut p = pie(PieParams::default());
        let out = testbed::run(&mut p, Time(1_000_000), Time(1_200_000), 1500, Time::from_secs(60));
        let mean = out.mean_sojourn_ms(Time::from_secs(30));
        let share = out.arrival_drops as f64 / out.arrivals as f64;
        println!(
            "pie: mean queueing delay over the last half {mean:.3} ms, drop share {share:.4}, final drop_prob {:.4}",
            p.drop_prob()
        );
        assert!((7.5..=22.5).contains(&mean), "mean queueing delay {mean} ms");
        assert!((share - 1.0 / 6.0).abs() < 0.01, "drop share {share}");
    }

    #[test]
    fn drop_probability_rises_during_the_overload_ramp() {
        // The same overload, sampled at each update: while the delay used by
        // an update is above target and not falling, drop_prob rises.
        let mut p = pie(PieParams::default());
        let (mut prev_p, mut prev_q) = (0.0, Time::ZERO);
        let mut rises = 0;
        let mut q = std::collections::VecDeque::new();
        let d = 1_200_000u64;
        for ms in 1..=5_000u64 {
            let now = Time::from_millis(ms);
            let b = packets(q.len() as u64);
            if p.on_arrival(&b, 1500, now).is_none() {
                q.push_back(now);
            }
            if ms * 1_000_000 % d == 0 {
                if let Some(t) = q.pop_front() {
                    p.on_dequeue(now - t, 1500, now);
                }
            }
            if ms % 15 == 0 {
                let (pn, qn) = (p.drop_prob(), p.qdelay_old());
                if qn > Time::from_millis(15) && qn >= prev_q && pn < 1.0 {
                    assert!(pn > prev_p, "at {ms} ms: qdelay {qn:?}, drop_prob {prev_p} -> {pn}");
                    rises += 1;
                }
                (prev_p, prev_q) = (pn, qn);
            }
        }
        assert!(rises > 10, "only {rises} updates above target");
    }

    #[test]
    fn validate_names_the_bad_parameter() {
        assert_eq!(PieParams::default().validate(), Ok(()));
        let p = PieParams { alpha: -1.0, ..Default::default() };
        assert_eq!(p.validate(), Err("alpha must be positive, got -1".into()));
        let p = PieParams { t_update: Time::ZERO, ..Default::default() };
        assert_eq!(p.validate(), Err("t_update must be positive".into()));
    }
}
