//! Weighted RED (WRED): one average, one RED curve per drop precedence.
//!
//! Source: ns-2's DiffServ module (`diffserv/dsredq.cc`, Nortel 2000), mode
//! `WRED`, after Cisco's WRED; the RED pieces are Floyd & Jacobson 1993 as
//! implemented in [`super::red`] (ns-2 `queue/red.cc`).
//!
//! - **One average over the whole buffer** (Floyd & Jacobson §4, dsRED's
//!   `calcAvg` in WRED mode): on every arrival, whatever its colour,
//!   `avg ← (1 − w_q)^(m+1)·avg + w_q·q` with `q` the packets in the buffer
//!   and `m` the idle-time correction of RED (`m = ⌊t_idle·C/(8·mean_pktsize)⌋`).
//! - **A curve per colour** `c` with its own `(min_th_c, max_th_c, max_p_c)`:
//!   the arrival is judged against the common average with its colour's
//!   curve, `p_b = max_p_c·(avg − min_th_c)/(max_th_c − min_th_c)` for
//!   `min_th_c ≤ avg < max_th_c`, a forced drop at `avg ≥ max_th_c` (or,
//!   with `gentle`, the gentle slope up to `2·max_th_c`).
//! - **A count per colour** (dsRED's `edv_.count` per precedence): arrivals of
//!   that colour since its last drop, spacing drops as
//!   `p_a = p_b/(1 − count·p_b)` (or ns-2 RED's `wait` rule).
//!
//! Departures from dsRED, all to share RED's code: the decision is
//! [`super::red`]'s (`avg ≥ min_th` rather than `>`; the first arrival after
//! the average crosses `min_th` only starts the count where dsRED sets the
//! count to −1 below `min_th`; no early drop while at most one packet is
//! queued); `count·p_b ≥ 1` gives `p_a = 1` where dsRED's formula turns
//! negative; the hard limit is judged after the average is updated (dsRED
//! drops before). `gentle` and `wait`, which dsRED lacks, default to off.
//! Packet mode only.

use crate::aqm::red::{Average, Curve, Precedence};
use crate::aqm::{Backlog, Limit, LimitRule, Thresholds, COLOURS};
use crate::packet::{Colour, DropReason};
use crate::rng::Rng;
use crate::time::Time;

/// WRED's parameters, named as ns-2 (dsRED, RED) names them.
#[derive(Clone, Debug, PartialEq)]
pub struct WredParams {
    /// The curve of each colour, indexed by `Colour as usize`.
    pub thresholds: [Thresholds; 3],
    /// Weight of the common average.
    pub w_q: f64,
    /// Hard buffer limit.
    pub limit: Limit,
    /// Typical packet size in bytes: sets the idle-time packet time.
    pub mean_pktsize: u32,
    /// Gentle slope above each colour's `max_th` (not in dsRED).
    pub gentle: bool,
    /// ns-2 RED's `wait_` spacing (not in dsRED).
    pub wait: bool,
}

impl Default for WredParams {
    /// Illustrative thresholds, not a source's default: green (40, 70, 0.02)
    /// and red (10, 30, 0.2) in the style of Clark & Fang's RIO examples,
    /// yellow between them; dsRED's default `w_q` 0.002.
    fn default() -> Self {
        WredParams {
            thresholds: [
                Thresholds::new(40.0, 70.0, 0.02),
                Thresholds::new(25.0, 50.0, 0.1),
                Thresholds::new(10.0, 30.0, 0.2),
            ],
            w_q: 0.002,
            limit: Limit::Packets(100),
            mean_pktsize: 500,
            gentle: false,
            wait: false,
        }
    }
}

impl WredParams {
    /// Checks each colour's curve and the shared parameters.
    pub fn validate(&self) -> Result<(), String> {
        for (colour, name) in COLOURS {
            self.thresholds[colour as usize].validate(name)?;
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(format!("w_q must be in (0, 1], got {}", self.w_q));
        }
        if self.mean_pktsize == 0 {
            return Err("mean_pktsize must be positive".into());
        }
        self.limit.validate_not_cells()
    }
}

/// One WRED instance.
#[derive(Clone, Debug)]
pub struct Wred {
    params: WredParams,
    curves: [Curve; 3],
    packets_per_sec: f64,
    average: Average,
    precedence: [Precedence; 3],
    rng: Rng,
}

impl Wred {
    /// dsRED's hard-limit rule (`q_->length() > qlim-1`), extended to a
    /// byte limit as ns-2's RED does, see [`LimitRule::Ns2`].
    pub const LIMIT_RULE: LimitRule = LimitRule::Ns2;

    /// A WRED guarding a buffer drained at `link_rate_bps`.
    pub fn new(params: WredParams, link_rate_bps: u64, rng: Rng) -> Wred {
        let curve = |t: Thresholds| Curve {
            min_th: t.min_th,
            max_th: t.max_th,
            max_p: t.max_p,
            gentle: params.gentle,
            wait: params.wait,
        };
        Wred {
            curves: params.thresholds.map(curve),
            packets_per_sec: link_rate_bps as f64 / (8.0 * params.mean_pktsize as f64),
            average: Average::new(),
            precedence: Default::default(),
            rng,
            params,
        }
    }

    pub fn params(&self) -> &WredParams {
        &self.params
    }

    /// The common average, in packets.
    pub fn avg(&self) -> f64 {
        self.average.value()
    }

    /// `p_b` for an arrival of `colour` when the average is `avg`, before spacing.
    pub fn drop_probability(&self, colour: Colour, avg: f64) -> f64 {
        self.curves[colour as usize].p_b(avg)
    }

    /// The link found the buffer empty at `now`.
    #[inline]
    pub fn on_idle(&mut self, now: Time) {
        self.average.on_idle(now);
    }

    /// A packet of `size` bytes and `colour` arrives at a buffer holding
    /// `backlog`. Returns why it must be dropped, or `None` to admit it.
    pub fn on_arrival(&mut self, backlog: &Backlog, size: u32, colour: Colour, now: Time) -> Option<DropReason> {
        let avg = self.average.update(backlog.pkts as f64, self.params.w_q, self.packets_per_sec, now);
        let admits = self.params.limit.admits(Self::LIMIT_RULE, backlog.pkts, backlog.bytes, size);
        let c = colour as usize;
        self.precedence[c].judge(&self.curves[c], avg, backlog.pkts, admits, &mut self.rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wred(params: WredParams) -> Wred {
        Wred::new(params, 10_000_000, Rng::derive(1, "wred-test"))
    }

    fn backlog(green: u64, yellow: u64, red: u64) -> Backlog {
        Backlog::of_packets([green, yellow, red], 500)
    }

    #[test]
    fn drop_probability_per_colour_matches_hand_computation() {
        let w = wred(WredParams::default());
        // avg = 20: green (40, 70): below min_th -> 0
        //           yellow (25, 50): below -> 0
        //           red (10, 30, 0.2): 0.2·(20 − 10)/(30 − 10) = 0.1
        assert_eq!(w.drop_probability(Colour::Green, 20.0), 0.0);
        assert_eq!(w.drop_probability(Colour::Yellow, 20.0), 0.0);
        assert!((w.drop_probability(Colour::Red, 20.0) - 0.1).abs() < 1e-12);
        // avg = 45: green 0.02·(45 − 40)/30 = 0.003333..
        //           yellow 0.1·(45 − 25)/25 = 0.08
        //           red: 45 ≥ max_th 30, not gentle -> 1
        assert!((w.drop_probability(Colour::Green, 45.0) - 0.02 * 5.0 / 30.0).abs() < 1e-12);
        assert!((w.drop_probability(Colour::Yellow, 45.0) - 0.08).abs() < 1e-12);
        assert_eq!(w.drop_probability(Colour::Red, 45.0), 1.0);
        // gentle, avg = 45: red 0.2 + 0.8·(45 − 30)/30 = 0.6
        let g = wred(WredParams { gentle: true, ..WredParams::default() });
        assert!((g.drop_probability(Colour::Red, 45.0) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn one_average_over_the_whole_buffer_whatever_the_colour() {
        let mut w = wred(WredParams::default());
        // w_q = 0.002; arrivals at time 0 find the buffer idle since 0: no decay.
        w.on_arrival(&backlog(10, 0, 0), 500, Colour::Green, Time::ZERO);
        assert!((w.avg() - 0.002 * 10.0).abs() < 1e-12);
        // A red arrival updates the same average with all 30 packets queued.
        w.on_arrival(&backlog(10, 10, 10), 500, Colour::Red, Time::ZERO);
        assert!((w.avg() - (0.02 * 0.998 + 0.002 * 30.0)).abs() < 1e-12);
    }

    #[test]
    fn colours_are_judged_on_their_own_curves_against_the_common_average() {
        // w_q = 1 so that the average is the backlog. At 35 packets red is
        // forced (≥ max_th 30), yellow early-drops with p_b = 0.1·10/25 = 0.04
        // spaced by its own count, green (min_th 40) never.
        let mut w = wred(WredParams { w_q: 1.0, ..WredParams::default() });
        let b = backlog(20, 10, 5);
        let n = 100_000;
        let mut drops = [0u32; 3];
        for i in 0..3 * n {
            let colour = COLOURS[i % 3].0;
            if w.on_arrival(&b, 500, colour, Time::ZERO).is_some() {
                drops[colour as usize] += 1;
            }
        }
        assert_eq!(drops[Colour::Green as usize], 0);
        assert_eq!(drops[Colour::Red as usize], n as u32);
        // Without wait, with p_b = 0.04 per-colour count spacing gives a drop
        // every E[gap] arrivals; E[gap] = Σ_c Π_{k<c} (1 − p_b/(1 − k·p_b)),
        // here 12.5 (computed below: without wait the gap is uniform on
        // 1..=25), so yellow loses 1/12.5 = 8% of its packets.
        let (mut survive, mut gap) = (1.0f64, 0.0);
        for k in 1..=25 {
            gap += survive;
            let p_a: f64 = if (k as f64) * 0.04 < 1.0 { 0.04 / (1.0 - k as f64 * 0.04) } else { 1.0 };
            survive *= 1.0 - p_a.min(1.0);
        }
        let rate = drops[Colour::Yellow as usize] as f64 / n as f64;
        assert!((rate - 1.0 / gap).abs() < 0.03 / gap, "yellow drop rate {rate}, expected {}", 1.0 / gap);
    }

    #[test]
    fn validate_names_the_bad_parameter() {
        let mut p = WredParams::default();
        assert_eq!(p.validate(), Ok(()));
        p.thresholds[1] = Thresholds::new(30.0, 20.0, 0.1);
        assert_eq!(p.validate(), Err("yellow: max_th (20) must be greater than min_th (30)".into()));
        let p = WredParams { w_q: 0.0, ..WredParams::default() };
        assert!(p.validate().unwrap_err().contains("w_q"));
        let p = WredParams { limit: Limit::Packets(0), ..WredParams::default() };
        assert_eq!(p.validate(), Err("limit must be positive".into()));
    }
}
