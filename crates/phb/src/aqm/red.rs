//! Random Early Detection.
//!
//! Floyd & Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1(4), 1993, with the refinements of ns-2's
//! `queue/red.cc`, which the papers reproduced here used:
//!
//! - **Average** (Floyd & Jacobson §4): on every arrival
//!   `avg ← (1 − w_q)·avg + w_q·q`, where `q` is the backlog the arrival finds
//!   (packets, or bytes in byte mode). After an idle period of length `t` the
//!   average first decays as if `m = ⌊t / s⌋` empty-queue packets had arrived,
//!   `s` being a typical transmission time (`mean_pktsize` at the link rate):
//!   `avg ← (1 − w_q)^(m+1)·avg + w_q·q`.
//! - **Drop probability**: `p_b = max_p·(avg − min_th)/(max_th − min_th)` for
//!   `min_th ≤ avg < max_th`; with `gentle`, `p_b = max_p + (1 − max_p)·(avg −
//!   max_th)/max_th` for `max_th ≤ avg < 2·max_th`; above that every arrival is
//!   dropped (a *forced* drop).
//! - **Uniform spacing** (§7): with `count` arrivals since the last drop,
//!   `p_a = p_b / (1 − count·p_b)`; with the `wait` option (ns-2's default)
//!   `p_a = 0` while `count·p_b < 1` and `p_b / (2 − count·p_b)` while `< 2`,
//!   so drops are spaced roughly uniformly rather than geometrically.
//! - **Byte mode**: the average is over bytes, `min_th`/`max_th`/`limit` are
//!   given in packets and scaled by `mean_pktsize`, `count` counts bytes in
//!   units of `mean_pktsize`, and `p_a` is scaled by `size/mean_pktsize`.
//! - **Hard limit**: an arrival that finds `limit` packets (bytes) queued is
//!   dropped whatever the average (ns-2's `qlen >= qlim`); below the limit
//!   any arrival is admitted, so a byte limit may be overshot by less than
//!   one packet ([`LimitRule::Ns2`]).
//! - As in ns-2, no early drop happens while fewer than two packets are queued,
//!   and the first arrival after the average crosses `min_th` from below only
//!   starts the count. Every drop restarts the count (ns-2's default; with
//!   `ns1_compat`, only early drops do).
//!
//! The pieces are shared with the droppers built on RED (crate-private):
//! `Average` (the EWMA with idle decay), `Curve` (`p_b`, the forced
//! threshold, the spacing `p_a`, and where an arrival falls on the curve) and
//! `Precedence` (one drop count and RED's packet-mode decision), used by
//! WRED, RIO and, through [`Red`] itself, Adaptive RED.

use crate::aqm::{Limit, LimitRule};
use crate::packet::DropReason;
use crate::rng::Rng;
use crate::time::Time;

/// RED's parameters, named as Floyd & Jacobson and ns-2 name them.
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    /// Lower threshold of the average, in packets.
    pub min_th: f64,
    /// Upper threshold of the average, in packets.
    pub max_th: f64,
    /// Weight of the exponentially weighted moving average.
    pub w_q: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// Hard buffer limit.
    pub limit: Limit,
    /// Typical packet size in bytes: scales byte mode and sets the idle-time
    /// packet time `s`.
    pub mean_pktsize: u32,
    /// Gentle RED: the drop probability rises from `max_p` at `max_th` to 1 at
    /// `2·max_th` instead of jumping to 1.
    pub gentle: bool,
    /// ns-2's `wait_`: wait between drops (see the module docs).
    pub wait: bool,
    /// Average over bytes instead of packets (ns-2's `queue_in_bytes_` and
    /// `bytes_` together).
    pub byte_mode: bool,
    /// ns-2's `ns1_compat_`: forced and hard-limit drops leave the drop
    /// count alone, as in ns-1's RED and in the thesis' `Queue/PROBE`
    /// (Vukadinović 2004, Appendix D), so the first early-region arrival
    /// after a forced episode is likely dropped; `false` (ns-2's default)
    /// resets the count on every drop.
    pub ns1_compat: bool,
}

impl Default for RedParams {
    /// ns-2's defaults for `Queue/RED` (ns-2.35 `ns-default.tcl`), with the
    /// thresholds of the thesis' Section 7 experiments.
    fn default() -> Self {
        RedParams {
            min_th: 5.0,
            max_th: 15.0,
            w_q: 0.002,
            max_p: 0.1,
            limit: Limit::Packets(50),
            mean_pktsize: 500,
            gentle: true,
            wait: true,
            byte_mode: false,
            ns1_compat: false,
        }
    }
}

impl RedParams {
    /// Checks the relations the algorithm needs; the message names the parameter.
    pub fn validate(&self) -> Result<(), String> {
        validate_red(self.min_th, self.max_th, self.w_q, self.max_p, self.mean_pktsize, "")?;
        self.limit.validate_not_cells()
    }
}

/// Checks what every dropper on RED's average and curve needs: `0 ≤ min_th
/// < max_th` (finite), `w_q` and `max_p` in (0, 1], a positive mean packet
/// size; the message names the parameter, `unit` follows a threshold's
/// value (e.g. `" cells"`).
pub(crate) fn validate_red(
    min_th: f64,
    max_th: f64,
    w_q: f64,
    max_p: f64,
    mean_pktsize: u32,
    unit: &str,
) -> Result<(), String> {
    if min_th.is_nan() || min_th < 0.0 {
        return Err(format!("min_th must be >= 0{unit}, got {min_th}"));
    }
    if max_th.is_nan() || max_th <= min_th {
        return Err(format!("max_th ({max_th}) must be greater than min_th ({min_th})"));
    }
    if !max_th.is_finite() {
        return Err(format!("max_th must be finite, got {max_th}"));
    }
    if !(w_q > 0.0 && w_q <= 1.0) {
        return Err(format!("w_q must be in (0, 1], got {w_q}"));
    }
    if !(max_p > 0.0 && max_p <= 1.0) {
        return Err(format!("max_p must be in (0, 1], got {max_p}"));
    }
    if mean_pktsize == 0 {
        return Err("mean_pktsize must be positive".into());
    }
    Ok(())
}

/// The EWMA average of RED with ns-2's idle-time correction (Floyd &
/// Jacobson §4), shared by every dropper built on RED's average (WRED, RIO,
/// Adaptive RED).
#[derive(Clone, Debug)]
pub(crate) struct Average {
    avg: f64,
    /// Since when the backlog this average follows has been empty, if it is.
    idle_since: Option<Time>,
}

impl Average {
    /// A zero average over a buffer idle since time 0.
    pub(crate) fn new() -> Average {
        Average { avg: 0.0, idle_since: Some(Time::ZERO) }
    }

    #[inline]
    pub(crate) fn value(&self) -> f64 {
        self.avg
    }

    /// The followed backlog was found empty at `now`; an idle period that
    /// has already started keeps its start.
    #[inline]
    pub(crate) fn on_idle(&mut self, now: Time) {
        if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }

    /// The average restarts from zero (ns-2 DiffServ's `configQ`); the idle
    /// state stays, which a zero average makes irrelevant.
    #[inline]
    pub(crate) fn reset(&mut self) {
        self.avg = 0.0;
    }

    /// The followed backlog is empty from `now` on, whatever was known before.
    #[inline]
    pub(crate) fn restart_idle(&mut self, now: Time) {
        self.idle_since = Some(now);
    }

    /// The average at `now` without an arrival: decayed as
    /// `(1 − w_q)^m·avg` over an idle period in progress (`m` as in
    /// [`Average::update`]), else as it stands. Changes nothing.
    #[inline]
    pub(crate) fn peek(&self, w_q: f64, packets_per_sec: f64, now: Time) -> f64 {
        match self.idle_since {
            Some(since) => {
                let m = (now.saturating_sub(since).as_secs_f64() * packets_per_sec) as i32;
                self.avg * (1.0 - w_q).powi(m)
            }
            None => self.avg,
        }
    }

    /// One arrival finds backlog `q`: `avg ← (1 − w_q)^(m+1)·avg + w_q·q`,
    /// with `m = ⌊idle time · packets_per_sec⌋` after an idle period, else 0.
    #[inline]
    pub(crate) fn update(&mut self, q: f64, w_q: f64, packets_per_sec: f64, now: Time) -> f64 {
        let decay_steps = match self.idle_since.take() {
            Some(since) => (now.saturating_sub(since).as_secs_f64() * packets_per_sec) as i32,
            None => 0,
        };
        self.avg = self.avg * (1.0 - w_q).powi(decay_steps + 1) + w_q * q;
        self.avg
    }
}

/// RED's drop curve, in the unit of the average (packets, or bytes in byte
/// mode): thresholds, `max_p`, gentle and ns-2's wait.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Curve {
    pub(crate) min_th: f64,
    pub(crate) max_th: f64,
    pub(crate) max_p: f64,
    pub(crate) gentle: bool,
    pub(crate) wait: bool,
}

impl Curve {
    /// `p_b`, the unforced drop probability for an average, before spacing.
    pub(crate) fn p_b(&self, avg: f64) -> f64 {
        let p = if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            1.0
        };
        p.clamp(0.0, 1.0)
    }

    /// The average from which every arrival is dropped.
    #[inline]
    pub(crate) fn forced_from(&self) -> f64 {
        if self.gentle {
            2.0 * self.max_th
        } else {
            self.max_th
        }
    }

    /// `p_a`: `p_b` spread over the `count` arrivals since the last drop
    /// (Floyd & Jacobson §7; ns-2's `wait_`).
    pub(crate) fn p_a(&self, p_b: f64, count: f64) -> f64 {
        let p = if self.wait {
            if count * p_b < 1.0 {
                0.0
            } else if count * p_b < 2.0 {
                p_b / (2.0 - count * p_b)
            } else {
                1.0
            }
        } else if count * p_b < 1.0 {
            p_b / (1.0 - count * p_b)
        } else {
            1.0
        };
        p.min(1.0)
    }

    /// Where an arrival that finds `backlog` queued falls on the curve
    /// (ns-2's `drop_early` preamble); tracks whether the average was at or
    /// above `min_th` at the previous arrival in `above_min`.
    pub(crate) fn zone(&self, avg: f64, backlog: f64, above_min: &mut bool) -> Zone {
        if avg >= self.min_th && backlog > 1.0 {
            if avg >= self.forced_from() {
                Zone::Forced
            } else if !*above_min {
                *above_min = true;
                Zone::FirstCrossing
            } else {
                Zone::Early
            }
        } else {
            *above_min = false;
            Zone::Below
        }
    }
}

/// See [`Curve::zone`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Zone {
    /// Below `min_th`, or at most one packet queued: no early drop.
    Below,
    /// The first arrival after the average crossed `min_th`: starts the count.
    FirstCrossing,
    /// Between `min_th` and the forced threshold: an early drop with `p_a`.
    Early,
    /// At or above the forced threshold.
    Forced,
}

/// The drop count of one precedence level of a packet-mode RED-style dropper
/// (WRED, RIO): RED's decision for one arrival judged against one average.
#[derive(Clone, Debug, Default)]
pub(crate) struct Precedence {
    /// Arrivals since the last drop (ns-2's `count`).
    pub(crate) count: u64,
    pub(crate) above_min: bool,
}

impl Precedence {
    /// RED's decision, exactly as [`Red::on_arrival`] makes it in packet
    /// mode, for an arrival of this precedence judged with `curve` against
    /// `avg` while the buffer holds `pkts` packets and may admit it
    /// (`admits`). Any drop resets the count.
    pub(crate) fn judge(
        &mut self,
        curve: &Curve,
        avg: f64,
        pkts: u64,
        admits: bool,
        rng: &mut Rng,
    ) -> Option<DropReason> {
        self.count += 1;
        let mut verdict = None;
        match curve.zone(avg, pkts as f64, &mut self.above_min) {
            Zone::Below => {}
            Zone::Forced => verdict = Some(DropReason::ForcedDrop),
            Zone::FirstCrossing => self.count = 1,
            Zone::Early => {
                let p_a = curve.p_a(curve.p_b(avg), self.count as f64);
                if rng.uniform() <= p_a && p_a > 0.0 {
                    self.count = 0;
                    return Some(DropReason::EarlyDrop);
                }
            }
        }
        if !admits {
            verdict = Some(DropReason::Overflow);
        }
        if verdict.is_some() {
            self.count = 0;
        }
        verdict
    }
}

/// One RED instance: its parameters, its average and its drop count.
#[derive(Clone, Debug)]
pub struct Red {
    params: RedParams,
    /// The curve with thresholds in the unit of the average (packets, or
    /// bytes in byte mode).
    curve: Curve,
    /// Typical packets per second at the link rate (ns-2's `ptc_`).
    packets_per_sec: f64,
    average: Average,
    /// Arrivals since the last drop (ns-2's `count`, `count_bytes`).
    count: u64,
    count_bytes: u64,
    /// Whether the average was at or above `min_th` at the previous arrival.
    above_min: bool,
    rng: Rng,
}

impl Red {
    /// ns-2's hard-limit rule (`queue/red.cc`: `qlen >= qlim`), see [`LimitRule::Ns2`].
    pub const LIMIT_RULE: LimitRule = LimitRule::Ns2;

    /// A RED guarding a buffer drained at `link_rate_bps`.
    pub fn new(params: RedParams, link_rate_bps: u64, rng: Rng) -> Red {
        let unit = if params.byte_mode { params.mean_pktsize as f64 } else { 1.0 };
        Red {
            curve: Curve {
                min_th: params.min_th * unit,
                max_th: params.max_th * unit,
                max_p: params.max_p,
                gentle: params.gentle,
                wait: params.wait,
            },
            packets_per_sec: link_rate_bps as f64 / (8.0 * params.mean_pktsize as f64),
            average: Average::new(),
            count: 0,
            count_bytes: 0,
            above_min: false,
            rng,
            params,
        }
    }

    pub fn params(&self) -> &RedParams {
        &self.params
    }

    /// The current average, in packets (bytes in byte mode).
    pub fn avg(&self) -> f64 {
        self.average.value()
    }

    /// Changes `max_p` (Adaptive RED's adaptation).
    pub(crate) fn set_max_p(&mut self, max_p: f64) {
        self.params.max_p = max_p;
        self.curve.max_p = max_p;
    }

    /// The buffer found itself empty when the link asked for a packet at `now`.
    #[inline]
    pub fn on_idle(&mut self, now: Time) {
        self.average.on_idle(now);
    }

    /// Whether the current average is at or above `max_th` (in the
    /// average's unit): RED's forced-drop region without gentle, the gentle
    /// band or beyond with it.
    pub fn avg_at_or_above_max_th(&self) -> bool {
        self.average.value() >= self.curve.max_th
    }

    /// The unforced drop probability `p_b` for an average, before spacing.
    pub fn drop_probability(&self, avg: f64) -> f64 {
        self.curve.p_b(avg)
    }

    /// The drop probability at `now` as a buffer coupled to this RED reads
    /// it (BEDS' forced loss ratio, [`crate::aqm::loss_ratio`]), changing
    /// nothing: the average as it stands, decayed over an idle period in
    /// progress by `(1 − w_q)^m` as the next arrival would decay it; 0 below
    /// `min_th` and 1 at or above the forced threshold; between them `p_b`
    /// (`spaced = false`), or `p_a`, the probability the next arrival would
    /// be dropped with (`spaced = true`: `p_b` spread by the count that
    /// arrival would have, 0 while the count only starts after the average
    /// crossed `min_th`; in byte mode, for a packet of `mean_pktsize`).
    pub fn coupled_probability(&self, now: Time, spaced: bool) -> f64 {
        let avg = self.average.peek(self.params.w_q, self.packets_per_sec, now);
        if avg < self.curve.min_th {
            return 0.0;
        }
        if avg >= self.curve.forced_from() {
            return 1.0;
        }
        let p_b = self.curve.p_b(avg);
        if !spaced {
            return p_b;
        }
        if !self.above_min {
            return 0.0;
        }
        let count = if self.params.byte_mode {
            let mean = self.params.mean_pktsize as u64;
            ((self.count_bytes + mean) / mean) as f64
        } else {
            (self.count + 1) as f64
        };
        self.curve.p_a(p_b, count)
    }

    /// `p_a`: `p_b` spread over the arrivals since the last drop.
    fn spaced_probability(&self, p_b: f64, size: u32) -> f64 {
        let mean = self.params.mean_pktsize as f64;
        let count = if self.params.byte_mode { (self.count_bytes as f64 / mean).floor() } else { self.count as f64 };
        let mut p = self.curve.p_a(p_b, count);
        if self.params.byte_mode && p < 1.0 {
            p = p * size as f64 / mean;
        }
        p.min(1.0)
    }

    /// A packet of `size` bytes arrives at a buffer holding `pkts` packets of
    /// `bytes` bytes. Returns why it must be dropped, or `None` to admit it.
    pub fn on_arrival(&mut self, pkts: u64, bytes: u64, size: u32, now: Time) -> Option<DropReason> {
        let backlog = if self.params.byte_mode { bytes as f64 } else { pkts as f64 };
        let avg = self.average.update(backlog, self.params.w_q, self.packets_per_sec, now);
        self.count += 1;
        self.count_bytes += size as u64;

        let mut verdict = None;
        match self.curve.zone(avg, backlog, &mut self.above_min) {
            Zone::Below => {}
            Zone::Forced => verdict = Some(DropReason::ForcedDrop),
            Zone::FirstCrossing => {
                self.count = 1;
                self.count_bytes = size as u64;
            }
            Zone::Early => {
                let p_a = self.spaced_probability(self.curve.p_b(avg), size);
                if self.rng.uniform() <= p_a && p_a > 0.0 {
                    self.count = 0;
                    self.count_bytes = 0;
                    return Some(DropReason::EarlyDrop);
                }
            }
        }
        if !self.params.limit.admits(Self::LIMIT_RULE, pkts, bytes, size) {
            verdict = Some(DropReason::Overflow);
        }
        if verdict.is_some() && !self.params.ns1_compat {
            self.count = 0;
            self.count_bytes = 0;
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(params: RedParams) -> Red {
        Red::new(params, 10_000_000, Rng::derive(1, "red-test"))
    }

    fn thesis_params() -> RedParams {
        RedParams {
            min_th: 60.0,
            max_th: 180.0,
            w_q: 0.002,
            max_p: 0.1,
            limit: Limit::Packets(250),
            ..RedParams::default()
        }
    }

    #[test]
    fn average_follows_the_ewma() {
        let mut r = red(thesis_params());
        // The queue is idle at time 0, so the first arrival at time 0 decays nothing.
        r.on_arrival(10, 5000, 500, Time::ZERO);
        assert!((r.avg() - 0.002 * 10.0).abs() < 1e-12);
        r.on_arrival(20, 10000, 500, Time::ZERO);
        let expected = 0.02 * 0.998 + 0.002 * 20.0;
        assert!((r.avg() - expected).abs() < 1e-12);
    }

    #[test]
    fn idle_time_decays_the_average_as_m_empty_arrivals() {
        let mut r = red(thesis_params());
        for _ in 0..1000 {
            r.on_arrival(50, 25_000, 500, Time::ZERO);
        }
        let before = r.avg();
        r.on_idle(Time::from_millis(10));
        // 500-byte packets at 10 Mb/s: s = 400 us, so 4 ms idle is m = 10.
        r.on_arrival(0, 0, 500, Time::from_millis(14));
        let expected = before * 0.998f64.powi(11);
        assert!((r.avg() - expected).abs() < 1e-9, "{} vs {}", r.avg(), expected);
    }

    #[test]
    fn drop_probability_is_linear_then_gentle() {
        let r = red(thesis_params());
        assert_eq!(r.drop_probability(50.0), 0.0);
        assert!((r.drop_probability(120.0) - 0.05).abs() < 1e-12);
        assert!((r.drop_probability(180.0) - 0.1).abs() < 1e-12);
        // gentle: halfway between max_th and 2 max_th is 0.1 + 0.9/2
        assert!((r.drop_probability(270.0) - 0.55).abs() < 1e-12);
        assert_eq!(r.drop_probability(400.0), 1.0);
        let not_gentle = red(RedParams { gentle: false, ..thesis_params() });
        assert_eq!(not_gentle.drop_probability(180.0), 1.0);
    }

    #[test]
    fn wait_option_spaces_drops() {
        let mut r = red(thesis_params());
        let p_b = 0.05;
        r.count = 10; // count * p_b = 0.5 < 1: no drop yet
        assert_eq!(r.spaced_probability(p_b, 500), 0.0);
        r.count = 30; // 1.5: p_b / (2 - 1.5)
        assert!((r.spaced_probability(p_b, 500) - 0.1).abs() < 1e-12);
        r.count = 40; // 2.0: certain
        assert_eq!(r.spaced_probability(p_b, 500), 1.0);
        let mut no_wait = red(RedParams { wait: false, ..thesis_params() });
        no_wait.count = 10; // p_b / (1 - 0.5)
        assert!((no_wait.spaced_probability(p_b, 500) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn byte_mode_scales_probability_by_size() {
        let mut r = red(RedParams { byte_mode: true, wait: false, ..thesis_params() });
        r.count_bytes = 0;
        let small = r.spaced_probability(0.05, 250);
        let mean = r.spaced_probability(0.05, 500);
        assert!((mean - 0.05).abs() < 1e-12);
        assert!((small - 0.025).abs() < 1e-12);
    }

    #[test]
    fn hard_limit_drops_and_resets_count() {
        let mut r = red(thesis_params());
        assert_eq!(r.on_arrival(250, 125_000, 500, Time::ZERO), Some(DropReason::Overflow));
        assert_eq!(r.count, 0);
    }

    /// ns-2's rule for a byte limit (`queue/red.cc`: `qlen >= qlim` with
    /// `qlen` the bytes queued): 24,000 bytes queued under a 25,000-byte
    /// limit admit a 1,500-byte arrival (the buffer then holds 25,500);
    /// 25,000 bytes queued do not admit even a 40-byte one.
    #[test]
    fn byte_limit_drops_only_once_reached_as_in_ns2() {
        let params = RedParams { limit: Limit::Bytes(25_000), ..thesis_params() };
        let mut r = red(params.clone());
        assert_eq!(r.on_arrival(16, 24_000, 1500, Time::ZERO), None);
        let mut r = red(params);
        assert_eq!(r.on_arrival(17, 25_000, 40, Time::ZERO), Some(DropReason::Overflow));
    }

    /// What a coupled buffer reads, thresholds 60/180, max_p 0.1, w_q = 1
    /// (the average is the backlog the last arrival found). Average 120:
    /// p_b = 0.05. After the crossing arrival (count 1) and 29 more (count
    /// 30), the next arrival has count 31: with wait, 31·0.05 = 1.55 ≥ 1,
    /// p_a = 0.05/(2 − 1.55) = 1/9; without, 31·0.05 ≥ 1, p_a = 1. At count
    /// 10 (next 11, with wait): 0. Below min_th: 0; at 2·max_th (gentle): 1.
    #[test]
    fn coupled_probability_reads_the_curve_or_the_spaced_probability() {
        for (wait, next_at_31) in [(true, 1.0 / 9.0), (false, 1.0)] {
            let mut r = red(RedParams { w_q: 1.0, wait, limit: Limit::Packets(1000), ..thesis_params() });
            assert_eq!(r.coupled_probability(Time::ZERO, false), 0.0, "empty");
            assert_eq!(r.on_arrival(120, 60_000, 500, Time::ZERO), None, "the crossing starts the count");
            assert!((r.coupled_probability(Time::ZERO, false) - 0.05).abs() < 1e-12);
            r.count = 30;
            let p = r.coupled_probability(Time::ZERO, true);
            assert!((p - next_at_31).abs() < 1e-12, "wait {wait}: {p}");
            r.count = 10;
            if wait {
                assert_eq!(r.coupled_probability(Time::ZERO, true), 0.0);
            }
            assert_eq!(r.count, 10, "reading changes nothing");
        }
        let mut r = red(RedParams { w_q: 1.0, limit: Limit::Packets(1000), ..thesis_params() });
        r.on_arrival(50, 25_000, 500, Time::ZERO);
        assert_eq!(r.coupled_probability(Time::ZERO, true), 0.0);
        r.on_arrival(360, 180_000, 500, Time::ZERO);
        assert_eq!(r.coupled_probability(Time::ZERO, false), 1.0);
        assert_eq!(r.coupled_probability(Time::ZERO, true), 1.0);
    }

    /// An idle buffer's average decays as the next arrival would see it:
    /// average 150 (p_b = 0.075), idle from 10 ms; at 14 ms (m = 10 packet
    /// times of 400 µs) the reading uses 150·0.998^10.
    #[test]
    fn coupled_probability_decays_over_idle_time() {
        let mut r = red(RedParams { w_q: 1.0, limit: Limit::Packets(1000), ..thesis_params() });
        r.on_arrival(150, 75_000, 500, Time::ZERO);
        r.params.w_q = 0.002;
        r.on_idle(Time::from_millis(10));
        let avg = 150.0 * 0.998f64.powi(10);
        let p = r.coupled_probability(Time::from_millis(14), false);
        assert!((p - 0.1 * (avg - 60.0) / 120.0).abs() < 1e-12, "{p}");
        assert_eq!(r.avg(), 150.0, "reading changes nothing");
    }

    #[test]
    fn average_above_twice_max_th_forces_drops() {
        let mut r = red(RedParams { w_q: 1.0, limit: Limit::Packets(1000), ..thesis_params() });
        assert_eq!(r.on_arrival(100, 50_000, 500, Time::ZERO), None, "first crossing only starts the count");
        assert_eq!(r.on_arrival(400, 200_000, 500, Time::ZERO), Some(DropReason::ForcedDrop));
        assert_eq!(r.count, 0);
        let mut abrupt = red(RedParams { w_q: 1.0, gentle: false, ..thesis_params() });
        assert_eq!(abrupt.on_arrival(180, 90_000, 500, Time::ZERO), Some(DropReason::ForcedDrop));
    }

    /// ns-2's default resets the count on a forced or hard-limit drop
    /// (Philip Liu's fix); `ns1_compat` (ns-1, the thesis' `Queue/PROBE`)
    /// keeps counting: after 3 admitted and 2 forced arrivals the count is
    /// 5, and a hard-limit drop leaves it 6.
    #[test]
    fn ns1_compat_keeps_the_count_through_forced_drops() {
        let base = RedParams { w_q: 1.0, gentle: false, limit: Limit::Packets(300), ..thesis_params() };
        for (ns1_compat, after_forced, after_overflow) in [(false, 0, 0), (true, 5, 6)] {
            let mut r = red(RedParams { ns1_compat, ..base.clone() });
            assert_eq!(r.on_arrival(10, 5000, 500, Time::ZERO), None);
            assert_eq!(r.on_arrival(10, 5000, 500, Time::ZERO), None);
            assert_eq!(r.on_arrival(10, 5000, 500, Time::ZERO), None);
            assert_eq!(r.on_arrival(200, 100_000, 500, Time::ZERO), Some(DropReason::ForcedDrop));
            assert_eq!(r.on_arrival(200, 100_000, 500, Time::ZERO), Some(DropReason::ForcedDrop));
            assert_eq!((r.count, r.count_bytes), (after_forced, after_forced * 500));
            assert_eq!(r.on_arrival(300, 150_000, 500, Time::ZERO), Some(DropReason::Overflow));
            assert_eq!(r.count, after_overflow);
        }
    }

    #[test]
    fn no_early_drop_below_min_th_or_with_one_packet_queued() {
        let mut r = red(RedParams { w_q: 1.0, ..thesis_params() });
        for _ in 0..1000 {
            assert_eq!(r.on_arrival(59, 29_500, 500, Time::ZERO), None);
        }
        let mut one = red(RedParams { w_q: 1.0, min_th: 0.5, max_th: 1.0, ..thesis_params() });
        for _ in 0..1000 {
            assert_eq!(one.on_arrival(1, 500, 500, Time::ZERO), None);
        }
    }

    #[test]
    fn early_drop_rate_matches_the_spaced_probability() {
        // Hold the average at 120 packets (p_b = 0.05) with w_q = 1: with
        // wait, drops come between 1/p_b and 2/p_b arrivals apart.
        let mut r = red(RedParams { w_q: 1.0, ..thesis_params() });
        let n = 300_000;
        let drops = (0..n).filter(|_| r.on_arrival(120, 60_000, 500, Time::ZERO).is_some()).count();
        let rate = drops as f64 / n as f64;
        // Expected arrivals per drop: sum over c of P(no drop at counts < c).
        let (mut survive, mut expected_gap) = (1.0, 0.0);
        for c in 1..=40 {
            expected_gap += survive;
            let p_a: f64 = if c < 20 { 0.0 } else { 0.05 / (2.0 - c as f64 * 0.05) };
            survive *= 1.0 - p_a.min(1.0);
        }
        let expected = 1.0 / expected_gap;
        assert!((rate - expected).abs() < 0.02 * expected, "early drop rate {rate}, expected {expected}");
    }
}
