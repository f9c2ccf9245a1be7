//! RIO: RED with In and Out, coupled (RIO-C) or decoupled (RIO-D).
//!
//! Sources: D. Clark, W. Fang, "Explicit Allocation of Best-Effort Packet
//! Delivery Service", IEEE/ACM ToN 6(4), 1998 (RIO, two precedences); ns-2's
//! DiffServ module (`diffserv/dsredq.cc`, Nortel 2000), modes `RIO_C` and
//! `RIO_D`, for three precedences, which this file follows. Colour `Green`
//! is IN (precedence 0), `Yellow` precedence 1, `Red` OUT (precedence 2).
//!
//! Each colour `c` has its own RED parameters (`min_th_c`, `max_th_c`,
//! `max_p_c`, `w_q_c`), its own average `avg_c` and its own count. The
//! averages differ in the backlog they follow (`q_j` is the number of packets
//! of colour `j` in the buffer when the packet arrives):
//!
//! - **RIO-C (coupled)**: `avg_c` follows `Q_c = Σ_{j ≤ c} q_j` — green's
//!   counts green packets only, yellow's green and yellow, red's all. An
//!   arrival of colour `c` updates every `avg_i` with `i ≥ c` (dsRED's
//!   `calcAvg` loop): `avg_i ← (1 − w_q_i)^(m_i+1)·avg_i + w_q_i·Q_i`.
//! - **RIO-D (decoupled)**: `avg_c` follows `Q_c = q_c` only, and only
//!   arrivals of colour `c` update it.
//!
//! The arrival is then judged by RED with its colour's curve against
//! `avg_c` and its colour's count (Floyd & Jacobson §7 spacing:
//! `p_b = max_p_c·(avg_c − min_th_c)/(max_th_c − min_th_c)`,
//! `p_a = p_b/(1 − count_c·p_b)`; forced drop at `avg_c ≥ max_th_c`).
//!
//! **Idle periods** are per average, as in dsRED (`updateREDStateVar`):
//! `avg_i` starts an idle period when its `Q_i` falls to zero, and the next
//! update first decays it by `m_i = ⌊t_idle·C/(8·mean_pktsize)⌋` empty
//! arrivals. The caller reports departures with [`Rio::on_dequeue`] (the
//! backlog after the departure) and an empty buffer with [`Rio::on_idle`];
//! without `on_dequeue`, per-colour idle periods start only when the whole
//! buffer empties. An arrival that is dropped and leaves `Q_i = 0` restarts
//! `avg_i`'s idle period at its arrival time.
//!
//! Departures from dsRED, all to share RED's code ([`super::red`]): as
//! listed for [`super::wred`] (RED's `≥ min_th`, first-crossing and
//! `count·p_b ≥ 1` rules; hard limit judged after the averages are updated),
//! plus: the "at most one packet queued" guard counts the whole buffer; in
//! RIO-C `avg_i` weighs `Q_i` by its own `w_q_i` (dsRED weighs each `q_j` by
//! `w_q_j`; the same when all weights are equal). `gentle` and `wait` default
//! to off, as dsRED has neither. Packet mode only.

use crate::aqm::red::{Average, Curve, Precedence};
use crate::aqm::{Backlog, Limit, LimitRule, Thresholds, COLOURS};
use crate::packet::{Colour, DropReason};
use crate::rng::Rng;
use crate::time::Time;

/// Which backlog each colour's average follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RioMode {
    /// RIO-C: colour `c`'s average counts the packets of colours `≤ c`.
    Coupled,
    /// RIO-D: colour `c`'s average counts colour `c`'s packets only.
    Decoupled,
}

/// RIO's parameters, named as ns-2's dsRED names them.
#[derive(Clone, Debug, PartialEq)]
pub struct RioParams {
    pub mode: RioMode,
    /// Each colour's curve, indexed by `Colour as usize`.
    pub thresholds: [Thresholds; 3],
    /// Each colour's averaging weight (dsRED's per-precedence `q_w`).
    pub w_q: [f64; 3],
    /// Hard limit of the shared buffer.
    pub limit: Limit,
    /// Typical packet size in bytes: sets the idle-time packet time.
    pub mean_pktsize: u32,
    /// Gentle slope above each `max_th` (not in dsRED).
    pub gentle: bool,
    /// ns-2 RED's `wait_` spacing (not in dsRED).
    pub wait: bool,
}

impl Default for RioParams {
    /// RIO-C with the illustrative thresholds of [`super::wred::WredParams`]
    /// and dsRED's default `q_w` 0.002 for every colour.
    fn default() -> Self {
        RioParams {
            mode: RioMode::Coupled,
            thresholds: [
                Thresholds::new(40.0, 70.0, 0.02),
                Thresholds::new(25.0, 50.0, 0.1),
                Thresholds::new(10.0, 30.0, 0.2),
            ],
            w_q: [0.002; 3],
            limit: Limit::Packets(100),
            mean_pktsize: 500,
            gentle: false,
            wait: false,
        }
    }
}

impl RioParams {
    /// Checks each colour's curve and weight, and the shared parameters.
    pub fn validate(&self) -> Result<(), String> {
        for (colour, name) in COLOURS {
            self.thresholds[colour as usize].validate(name)?;
            let w = self.w_q[colour as usize];
            if !(w > 0.0 && w <= 1.0) {
                return Err(format!("{name}: w_q must be in (0, 1], got {w}"));
            }
        }
        if self.mean_pktsize == 0 {
            return Err("mean_pktsize must be positive".into());
        }
        self.limit.validate_not_cells()
    }
}

/// One RIO instance guarding one shared buffer.
#[derive(Clone, Debug)]
pub struct Rio {
    params: RioParams,
    curves: [Curve; 3],
    packets_per_sec: f64,
    averages: [Average; 3],
    precedence: [Precedence; 3],
    rng: Rng,
}

impl Rio {
    /// dsRED's hard-limit rule (`q_->length() > qlim-1`), extended to a
    /// byte limit as ns-2's RED does, see [`LimitRule::Ns2`].
    pub const LIMIT_RULE: LimitRule = LimitRule::Ns2;

    /// A RIO guarding a buffer drained at `link_rate_bps`.
    pub fn new(params: RioParams, link_rate_bps: u64, rng: Rng) -> Rio {
        let curve = |t: Thresholds| Curve {
            min_th: t.min_th,
            max_th: t.max_th,
            max_p: t.max_p,
            gentle: params.gentle,
            wait: params.wait,
        };
        Rio {
            curves: params.thresholds.map(curve),
            packets_per_sec: link_rate_bps as f64 / (8.0 * params.mean_pktsize as f64),
            averages: [Average::new(), Average::new(), Average::new()],
            precedence: Default::default(),
            rng,
            params,
        }
    }

    pub fn params(&self) -> &RioParams {
        &self.params
    }

    /// Colour `colour`'s average, in packets.
    pub fn avg(&self, colour: Colour) -> f64 {
        self.averages[colour as usize].value()
    }

    /// `p_b` for an arrival of `colour` when its average is `avg`, before spacing.
    pub fn drop_probability(&self, colour: Colour, avg: f64) -> f64 {
        self.curves[colour as usize].p_b(avg)
    }

    /// The backlog `Q_i` that average `i` follows.
    fn followed(&self, backlog: &Backlog, i: usize) -> u64 {
        match self.params.mode {
            RioMode::Coupled => backlog.pkts_by_colour[..=i].iter().sum(),
            RioMode::Decoupled => backlog.pkts_by_colour[i],
        }
    }

    /// The averages an arrival of colour index `c` updates.
    fn updated_by(&self, c: usize) -> std::ops::Range<usize> {
        match self.params.mode {
            RioMode::Coupled => c..3,
            RioMode::Decoupled => c..c + 1,
        }
    }

    /// The link found the whole buffer empty at `now`: every average idles.
    #[inline]
    pub fn on_idle(&mut self, now: Time) {
        for a in &mut self.averages {
            a.on_idle(now);
        }
    }

    /// A packet left at `now`, leaving `backlog`: the averages whose followed
    /// backlog is now empty start an idle period.
    pub fn on_dequeue(&mut self, backlog: &Backlog, now: Time) {
        for i in 0..3 {
            if self.followed(backlog, i) == 0 {
                self.averages[i].on_idle(now);
            }
        }
    }

    /// A packet of `size` bytes and `colour` arrives at a buffer holding
    /// `backlog`. Returns why it must be dropped, or `None` to admit it.
    pub fn on_arrival(&mut self, backlog: &Backlog, size: u32, colour: Colour, now: Time) -> Option<DropReason> {
        let c = colour as usize;
        for i in self.updated_by(c) {
            let q = self.followed(backlog, i) as f64;
            self.averages[i].update(q, self.params.w_q[i], self.packets_per_sec, now);
        }
        let avg = self.averages[c].value();
        let admits = self.params.limit.admits(Self::LIMIT_RULE, backlog.pkts, backlog.bytes, size);
        let verdict = self.precedence[c].judge(&self.curves[c], avg, backlog.pkts, admits, &mut self.rng);
        if verdict.is_some() {
            for i in self.updated_by(c) {
                if self.followed(backlog, i) == 0 {
                    self.averages[i].restart_idle(now);
                }
            }
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rio(params: RioParams) -> Rio {
        Rio::new(params, 10_000_000, Rng::derive(1, "rio-test"))
    }

    fn backlog(green: u64, yellow: u64, red: u64) -> Backlog {
        Backlog::of_packets([green, yellow, red], 500)
    }

    const G: Colour = Colour::Green;
    const Y: Colour = Colour::Yellow;
    const R: Colour = Colour::Red;

    #[test]
    fn drop_probability_per_colour_matches_hand_computation() {
        for mode in [RioMode::Coupled, RioMode::Decoupled] {
            let r = rio(RioParams { mode, ..RioParams::default() });
            // green (40, 70, 0.02) at avg_green = 55: 0.02·15/30 = 0.01
            assert!((r.drop_probability(G, 55.0) - 0.01).abs() < 1e-12);
            // yellow (25, 50, 0.1) at avg_yellow = 30: 0.1·5/25 = 0.02
            assert!((r.drop_probability(Y, 30.0) - 0.02).abs() < 1e-12);
            // red (10, 30, 0.2) at avg_red = 25: 0.2·15/20 = 0.15; at 30: forced
            assert!((r.drop_probability(R, 25.0) - 0.15).abs() < 1e-12);
            assert_eq!(r.drop_probability(R, 30.0), 1.0);
            assert_eq!(r.drop_probability(G, 39.9), 0.0);
        }
    }

    #[test]
    fn coupled_in_average_ignores_out_packets_and_out_average_counts_all() {
        let mut r = rio(RioParams::default());
        // Buffer: 10 green, 5 yellow, 30 red. Arrivals at time 0 (idle since
        // 0: no decay), w_q = 0.002.
        let b = backlog(10, 5, 30);
        // A green arrival updates all three: Q_g = 10, Q_y = 15, Q_r = 45.
        r.on_arrival(&b, 500, G, Time::ZERO);
        assert!((r.avg(G) - 0.002 * 10.0).abs() < 1e-12);
        assert!((r.avg(Y) - 0.002 * 15.0).abs() < 1e-12);
        assert!((r.avg(R) - 0.002 * 45.0).abs() < 1e-12);
        // A red arrival updates red's only: 0.09·0.998 + 0.002·45.
        r.on_arrival(&b, 500, R, Time::ZERO);
        assert!((r.avg(G) - 0.02).abs() < 1e-12);
        assert!((r.avg(R) - (0.09 * 0.998 + 0.09)).abs() < 1e-12);
        // With w_q = 1 the averages are the followed backlogs: IN sees 10
        // whatever the red backlog, OUT sees everything.
        let mut r = rio(RioParams { w_q: [1.0; 3], ..RioParams::default() });
        for red in [0, 30, 300] {
            r.on_arrival(&backlog(10, 5, red), 500, G, Time::ZERO);
            assert_eq!(r.avg(G), 10.0);
            assert_eq!(r.avg(Y), 15.0);
            assert_eq!(r.avg(R), 15.0 + red as f64);
        }
    }

    #[test]
    fn decoupled_averages_count_their_own_colour_only() {
        let mut r = rio(RioParams { mode: RioMode::Decoupled, w_q: [1.0; 3], ..RioParams::default() });
        let b = backlog(10, 5, 30);
        r.on_arrival(&b, 500, G, Time::ZERO);
        assert_eq!((r.avg(G), r.avg(Y), r.avg(R)), (10.0, 0.0, 0.0));
        r.on_arrival(&b, 500, Y, Time::ZERO);
        r.on_arrival(&b, 500, R, Time::ZERO);
        assert_eq!((r.avg(G), r.avg(Y), r.avg(R)), (10.0, 5.0, 30.0));
    }

    /// Drop fraction per colour when the buffer holds `n` packets, a third
    /// of each colour, with w_q = 1 (average = followed backlog).
    fn drop_fractions(mode: RioMode, n: u64) -> [f64; 3] {
        let mut r = rio(RioParams { mode, w_q: [1.0; 3], limit: Limit::Packets(1000), ..RioParams::default() });
        let b = backlog(n / 3, n / 3, n - 2 * (n / 3));
        let arrivals = 30_000;
        let mut drops = [0u32; 3];
        for i in 0..3 * arrivals {
            let (colour, _) = COLOURS[i % 3];
            if r.on_arrival(&b, 500, colour, Time::ZERO).is_some() {
                drops[colour as usize] += 1;
            }
        }
        drops.map(|d| d as f64 / arrivals as f64)
    }

    #[test]
    fn out_traffic_reaches_certain_drop_while_in_traffic_is_still_at_low_probability() {
        // RIO-C, a third of each colour: Q_red = n, Q_green = n/3.
        // n = 30: red forced (avg_red 30 ≥ max_th 30): all red dropped;
        //         green avg 10 < 40: none dropped.
        let f = drop_fractions(RioMode::Coupled, 30);
        assert_eq!(f[2], 1.0);
        assert_eq!(f[0], 0.0);
        // n = 150: green avg 50: p_b = 0.02·10/30 = 0.0067, spaced drops
        // about one in 1/p_b·(something ≤ 1): well under 2%; yellow avg 100 ≥
        // 50 and red are forced.
        let f = drop_fractions(RioMode::Coupled, 150);
        assert_eq!(f[2], 1.0);
        assert_eq!(f[1], 1.0);
        assert!(f[0] > 0.0 && f[0] < 0.02, "green drop fraction {}", f[0]);
        // RIO-D, n = 90 (30 of each): red's own 30 ≥ 30: forced; green's 30 < 40: none.
        let f = drop_fractions(RioMode::Decoupled, 90);
        assert_eq!(f[2], 1.0);
        assert_eq!(f[0], 0.0);
    }

    #[test]
    fn each_precedence_keeps_its_own_count() {
        // Yellow at p_b = 0.02 (avg_y 30) with counts of its own: red
        // arrivals in between (forced drops) do not reset yellow's count, so
        // yellow's drops stay spaced as if red were absent.
        let mut r = rio(RioParams { w_q: [1.0; 3], limit: Limit::Packets(1000), ..RioParams::default() });
        let b = backlog(20, 10, 5); // Q_y = 30, Q_r = 35 (forced)
        let mut yellow_alone = rio(RioParams { w_q: [1.0; 3], limit: Limit::Packets(1000), ..RioParams::default() });
        let (mut with_red, mut alone) = (0, 0);
        for _ in 0..50_000 {
            if r.on_arrival(&b, 500, Y, Time::ZERO).is_some() {
                with_red += 1;
            }
            assert_eq!(r.on_arrival(&b, 500, R, Time::ZERO), Some(DropReason::ForcedDrop));
            if yellow_alone.on_arrival(&b, 500, Y, Time::ZERO).is_some() {
                alone += 1;
            }
        }
        // Same RNG seed, and red's forced drops draw no random number: identical.
        assert_eq!(with_red, alone);
    }

    #[test]
    fn idle_decay_is_per_followed_backlog() {
        // RIO-D, w_q = 0.002, 10 Mb/s, 500 B: 400 us per packet.
        let mut r = rio(RioParams { mode: RioMode::Decoupled, ..RioParams::default() });
        for _ in 0..1000 {
            r.on_arrival(&backlog(10, 0, 20), 500, R, Time::ZERO);
            r.on_arrival(&backlog(10, 0, 20), 500, G, Time::ZERO);
        }
        let (green, red) = (r.avg(G), r.avg(R));
        // Red's virtual queue empties at 10 ms while green packets remain.
        r.on_dequeue(&backlog(10, 0, 0), Time::from_millis(10));
        // 4 ms later a red packet finds no red queued: m = 10, so
        // avg_red = red·0.998^11 + 0.002·0; green's average is untouched.
        r.on_arrival(&backlog(10, 0, 0), 500, R, Time::from_millis(14));
        assert!((r.avg(R) - red * 0.998f64.powi(11)).abs() < 1e-9);
        assert_eq!(r.avg(G), green);
        // A green arrival does not decay: green never idled.
        r.on_arrival(&backlog(10, 0, 1), 500, G, Time::from_millis(14));
        assert!((r.avg(G) - (green * 0.998 + 0.002 * 10.0)).abs() < 1e-12);
    }

    #[test]
    fn validate_names_the_bad_parameter() {
        assert_eq!(RioParams::default().validate(), Ok(()));
        let mut p = RioParams::default();
        p.w_q[2] = 1.5;
        assert_eq!(p.validate(), Err("red: w_q must be in (0, 1], got 1.5".into()));
        let mut p = RioParams::default();
        p.thresholds[0].max_p = 0.0;
        assert_eq!(p.validate(), Err("green: max_p must be in (0, 1], got 0".into()));
    }
}
