//! Dynamic WRED (DWRED): a WRED on the AF queue that early-drops only *out*
//! packets and whose thresholds follow the LSP's congestion window.
//!
//! C. Bouras, A. Sevasti, "Performance analysis of relative service using
//! TCP-aware marking and dynamic WRED", John Wiley & Sons, 2008, Section 5
//! (`../shared/papers/bouras-2008-twam-dwred.md`); the RED pieces are Floyd &
//! Jacobson 1993 as implemented in [`super::red`].
//!
//! - **One average over in and out packets** (Section 5: "based on the
//!   occupancy of `Q_AF` by both in and out packets to estimate the value of
//!   `Q_avg`"): on every arrival, whatever its colour,
//!   `Q_avg ← (1 − w_q)^(m+1)·Q_avg + w_q·q` with `q` the packets in the
//!   buffer and `m` RED's idle-time correction.
//! - **One curve, for out packets only** (Section 5, eq. 10): an out packet
//!   arriving while `min_th ≤ Q_avg < max_th` is dropped with
//!   `p_b = max_p·(Q_avg − min_th)/(max_th − min_th)`, spaced by RED's count
//!   (`p_a = p_b/(1 − count·p_b)`); at `Q_avg ≥ max_th` it is dropped
//!   (RED: "the packet drop probability is equal to 1").
//! - **In packets are dropped only when the buffer is full** (Section 3.2:
//!   in-profile packets are to be delivered with very high probability; the
//!   paper reports zero in-packet loss). An in packet that finds `limit`
//!   packets queued is an overflow.
//! - **Dynamic thresholds** (eqs. 11–12): every operating interval
//!   `α·RTT_LSP` the ingress signals `W_LSP^cwnd` (eq. 7 or 8) and
//!   `max_th = W_LSP^cwnd` (eq. 11), `min_th = b·max_th`, `max_p = 0.1`
//!   (eq. 12, `b = 0.15` in the paper's experiments, "values in the interval
//!   (0.1, 0.2) as preferable"). [`Dwred::update_thresholds`] is that
//!   signal; the caller (the simulator's signalling channel, or a router's
//!   control plane) decides when it comes. Until the first signal, and for
//!   ever if none comes, the configured `min_th`/`max_th` hold: without a
//!   channel this is the static out-only WRED the paper compares with
//!   ("static WRED" of Sections 6.1–6.3).
//! - **The average across a signal** ([`AverageOnSignal`]): the paper does
//!   not say what a reconfiguration does to `Q_avg`. By default it is kept
//!   (`Keep`: only the thresholds move). `Reset` restarts it from zero at
//!   every signal that changes the thresholds, as ns-2's DiffServ queue does
//!   when a script reconfigures a precedence at run time (`$q configQ …`,
//!   `dsREDQueue::command` → `redQueue::config`: ns-2.35
//!   `diffserv/dsredq.cc` lines 57–76 set that precedence's `qlen = 0`,
//!   `edv_.v_ave = 0.0`, `idle_` and `idletime_ = now`). In ns-2's RIO-C
//!   mode (its default, line 48) that restarts the out packets' average
//!   whenever the out precedence is reconfigured; in its WRED mode only
//!   when precedence 0 is, since the one average is `calcAvg(0, …)`'s
//!   (lines 183–189), which starts from precedence 0's `v_ave` and copies
//!   the result to every precedence (lines 282–306). RED's count is not
//!   touched (`config` leaves `edv_.count`); RIO-C's zeroed `qlen` has no
//!   counterpart here (DWRED's average follows the whole buffer, as ns-2's
//!   WRED mode's does).
//!
//! Colours: Green is *in*; Yellow and Red are *out* (the paper has two
//! colours; a three-colour marker's Yellow is treated as out).
//!
//! Departures, all shared with [`super::wred`] because the decision is
//! RED's own code: no early drop while at most one packet is queued; the
//! first out arrival after the average crosses `min_th` only starts the
//! count; `count·p_b ≥ 1` is a certain drop. `gentle` and `wait` exist and
//! are off by default (the paper's eq. 10 and "equal to 1" above `max_th`).
//! A signal of `W_LSP^cwnd ≤ 0` (an interval in which no window was seen) or
//! a value that is not finite leaves the thresholds as they were. Packet
//! mode only.

use crate::aqm::red::{Average, Curve, Precedence};
use crate::aqm::{Backlog, Limit, LimitRule, Thresholds};
use crate::packet::{Colour, DropReason};
use crate::rng::Rng;
use crate::time::Time;

/// DWRED's parameters, named as Bouras & Sevasti (Section 5) name them.
#[derive(Clone, Debug, PartialEq)]
pub struct DwredParams {
    /// The out-packet curve before the first signal (for ever without a
    /// channel): `min_th`, `max_th` in packets of the average, `max_p`.
    /// `max_p` stays; the thresholds follow [`Dwred::update_thresholds`].
    pub thresholds: Thresholds,
    /// `b` of eq. (12): `min_th = b·max_th` after every signal; in (0, 1).
    pub b: f64,
    /// Weight of the average over in and out packets.
    pub w_q: f64,
    /// Hard buffer limit: in packets are dropped only here.
    pub limit: Limit,
    /// Typical packet size in bytes: sets the idle-time packet time.
    pub mean_pktsize: u32,
    /// Gentle slope above `max_th` (not in the paper).
    pub gentle: bool,
    /// ns-2 RED's `wait_` spacing (not in the paper).
    pub wait: bool,
    /// The signalling channel (in the simulator, an LSP's index) whose
    /// `W_LSP^cwnd` resets the thresholds; `None`: static thresholds.
    pub channel: Option<u32>,
    /// What a signal that changes the thresholds does to the average.
    pub average_on_signal: AverageOnSignal,
}

/// What a DWRED reconfiguration does to the average queue `Q_avg`; the
/// paper (Section 5) does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AverageOnSignal {
    /// The average runs on; only the thresholds move.
    #[default]
    Keep,
    /// The average restarts from zero, as ns-2's `redQueue::config` (a
    /// run-time `configQ`) sets `v_ave = 0` (`diffserv/dsredq.cc`).
    Reset,
}

impl DwredParams {
    /// `b` of eq. (12), the value of the paper's experiments (Section 5).
    pub const B: f64 = 0.15;
    /// `max_p` of eq. (12).
    pub const MAX_P: f64 = 0.1;

    /// DWRED as the paper configures it, listening on `channel`: `b = 0.15`,
    /// `max_p = 0.1`, starting from `max_th` (packets, e.g. the LSP's
    /// bandwidth-delay product of eq. 4) and `min_th = b·max_th`.
    pub fn paper(max_th: f64, limit: Limit, channel: Option<u32>) -> DwredParams {
        DwredParams {
            thresholds: Thresholds::new(Self::B * max_th, max_th, Self::MAX_P),
            b: Self::B,
            w_q: 0.002,
            limit,
            mean_pktsize: 500,
            gentle: false,
            wait: false,
            channel,
            average_on_signal: AverageOnSignal::Keep,
        }
    }

    /// Checks the curve, `b` and the shared parameters; the message names
    /// the parameter at fault.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.b > 0.0 && self.b < 1.0) {
            return Err(format!("b must be in (0, 1) (min_th = b·max_th, eq. 12), got {}", self.b));
        }
        let t = &self.thresholds;
        if t.min_th.is_nan() || t.min_th < 0.0 {
            return Err(format!("min_th must be >= 0, got {}", t.min_th));
        }
        if !(t.max_th.is_finite() && t.max_th > t.min_th) {
            return Err(format!("max_th ({}) must be greater than min_th ({})", t.max_th, t.min_th));
        }
        if !(t.max_p > 0.0 && t.max_p <= 1.0) {
            return Err(format!("max_p must be in (0, 1], got {}", t.max_p));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(format!("w_q must be in (0, 1], got {}", self.w_q));
        }
        if self.mean_pktsize == 0 {
            return Err("mean_pktsize must be positive".into());
        }
        self.limit.validate()
    }
}

/// One DWRED instance.
#[derive(Clone, Debug)]
pub struct Dwred {
    params: DwredParams,
    /// The out packets' curve, thresholds as last signalled.
    curve: Curve,
    packets_per_sec: f64,
    average: Average,
    /// RED's count for out packets.
    out: Precedence,
    /// Signals that changed the thresholds.
    updates: u64,
    rng: Rng,
}

impl Dwred {
    /// RED's hard-limit rule (drop once `limit` packets are queued), as
    /// WRED's; see [`LimitRule::Ns2`].
    pub const LIMIT_RULE: LimitRule = LimitRule::Ns2;

    /// A DWRED guarding a buffer drained at `link_rate_bps`.
    pub fn new(params: DwredParams, link_rate_bps: u64, rng: Rng) -> Dwred {
        let t = params.thresholds;
        Dwred {
            curve: Curve {
                min_th: t.min_th,
                max_th: t.max_th,
                max_p: t.max_p,
                gentle: params.gentle,
                wait: params.wait,
            },
            packets_per_sec: link_rate_bps as f64 / (8.0 * params.mean_pktsize as f64),
            average: Average::new(),
            out: Precedence::default(),
            updates: 0,
            rng,
            params,
        }
    }

    pub fn params(&self) -> &DwredParams {
        &self.params
    }

    /// The average over in and out packets, in packets.
    pub fn avg(&self) -> f64 {
        self.average.value()
    }

    /// The out curve now: `(min_th, max_th, max_p)`.
    pub fn thresholds(&self) -> Thresholds {
        Thresholds::new(self.curve.min_th, self.curve.max_th, self.curve.max_p)
    }

    /// How many signals have set the thresholds.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// The signal of an operating interval: `max_th = W_LSP^cwnd` (eq. 11)
    /// and `min_th = b·max_th` (eq. 12), in packets; `max_p` is unchanged;
    /// with [`AverageOnSignal::Reset`] the average restarts from zero.
    /// A value that is not finite and positive (no window was seen) leaves
    /// the thresholds (and the average) as they were; returns whether they
    /// changed.
    pub fn update_thresholds(&mut self, w_lsp_cwnd: f64) -> bool {
        if !(w_lsp_cwnd.is_finite() && w_lsp_cwnd > 0.0) {
            return false;
        }
        self.curve.max_th = w_lsp_cwnd;
        self.curve.min_th = self.params.b * w_lsp_cwnd;
        if self.params.average_on_signal == AverageOnSignal::Reset {
            self.average.reset();
        }
        self.updates += 1;
        true
    }

    /// `p_b` for an out packet when the average is `avg`, before spacing.
    pub fn drop_probability(&self, avg: f64) -> f64 {
        self.curve.p_b(avg)
    }

    /// The link found the buffer empty at `now`.
    #[inline]
    pub fn on_idle(&mut self, now: Time) {
        self.average.on_idle(now);
    }

    /// A packet of `size` bytes and `colour` (Green: in; otherwise out)
    /// arrives at a buffer holding `backlog`. Returns why it must be
    /// dropped, or `None` to admit it.
    #[inline]
    pub fn on_arrival(&mut self, backlog: &Backlog, size: u32, colour: Colour, now: Time) -> Option<DropReason> {
        let avg = self.average.update(backlog.pkts as f64, self.params.w_q, self.packets_per_sec, now);
        let admits = self.params.limit.admits(Self::LIMIT_RULE, backlog.pkts, backlog.bytes, size);
        if colour == Colour::Green {
            return (!admits).then_some(DropReason::Overflow);
        }
        self.out.judge(&self.curve, avg, backlog.pkts, admits, &mut self.rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dwred(params: DwredParams) -> Dwred {
        Dwred::new(params, 50_000_000, Rng::derive(1, "dwred-test"))
    }

    fn backlog(pkts: u64) -> Backlog {
        Backlog::of_packets([pkts, 0, 0], 512)
    }

    /// Eqs. (11)–(12) for the windows of Table I (W^cwnd 60, 120 and 150:
    /// Σ = 330 packets) and of Section 6.5 (W_LSP^cwnd = 2930 packets,
    /// "min_th = 0.15·max_th = 0.15·2930 = 440 packets").
    #[test]
    fn thresholds_follow_the_window_sum() {
        let mut d = dwred(DwredParams::paper(100.0, Limit::Packets(5000), Some(0)));
        assert_eq!(d.thresholds(), Thresholds::new(15.0, 100.0, 0.1));
        assert!(d.update_thresholds(60.0 + 120.0 + 150.0));
        let t = d.thresholds();
        assert_eq!(t.max_th, 330.0);
        assert!((t.min_th - 49.5).abs() < 1e-12, "{}", t.min_th);
        assert_eq!(t.max_p, 0.1);
        assert!(d.update_thresholds(2930.0));
        assert!((d.thresholds().min_th - 439.5).abs() < 1e-9);
        assert_eq!(d.thresholds().min_th.round(), 440.0);
        // eq. (10) halfway between the thresholds: max_p/2.
        let mid = (439.5 + 2930.0) / 2.0;
        assert!((d.drop_probability(mid) - 0.05).abs() < 1e-12);
        assert_eq!(d.updates(), 2);
        // An interval without a window leaves the thresholds alone.
        assert!(!d.update_thresholds(0.0));
        assert!(!d.update_thresholds(f64::NAN));
        assert_eq!(d.thresholds().max_th, 2930.0);
        assert_eq!(d.updates(), 2);
    }

    /// With the average held above max_th (w_q = 1), out packets are all
    /// dropped (forced) and in packets all admitted until the limit.
    #[test]
    fn out_packets_are_dropped_and_in_packets_only_at_the_limit() {
        let mut p = DwredParams::paper(10.0, Limit::Packets(50), Some(0));
        p.w_q = 1.0;
        let mut d = dwred(p);
        for q in 20..50 {
            assert_eq!(d.on_arrival(&backlog(q), 512, Colour::Red, Time::ZERO), Some(DropReason::ForcedDrop));
            assert_eq!(d.on_arrival(&backlog(q), 512, Colour::Yellow, Time::ZERO), Some(DropReason::ForcedDrop));
            assert_eq!(d.on_arrival(&backlog(q), 512, Colour::Green, Time::ZERO), None);
        }
        assert_eq!(d.on_arrival(&backlog(50), 512, Colour::Green, Time::ZERO), Some(DropReason::Overflow));
        // Below min_th (1.5) nobody is dropped.
        assert_eq!(d.on_arrival(&backlog(1), 512, Colour::Red, Time::ZERO), None);
    }

    /// Early drops of out packets between the thresholds: with the average
    /// held at the midpoint p_b = max_p/2 = 0.05, and RED's count spacing
    /// without wait, p_a = p_b/(1 − count·p_b), makes the gap between drops
    /// uniform on 1..=19 (P(gap > k) = (1 − (k+1)·p_b)/(1 − p_b)): mean 10,
    /// a drop rate of 1/10.
    #[test]
    fn out_packets_are_dropped_by_eq_10_between_the_thresholds() {
        let mut p = DwredParams::paper(200.0, Limit::Packets(1000), None);
        p.w_q = 1.0;
        let mut d = dwred(p);
        let mid = (30 + 200) / 2; // min_th = 30
        assert!((d.drop_probability(mid as f64) - 0.05).abs() < 1e-12);
        let n = 200_000u32;
        let drops = (0..n).filter(|_| d.on_arrival(&backlog(mid), 512, Colour::Red, Time::ZERO).is_some()).count();
        let rate = drops as f64 / n as f64;
        assert!((rate - 0.1).abs() < 0.002, "out drop rate {rate}");
        let in_drops = (0..n).filter(|_| d.on_arrival(&backlog(mid), 512, Colour::Green, Time::ZERO).is_some()).count();
        assert_eq!(in_drops, 0);
    }

    /// `Keep` leaves the average alone at a signal; `Reset` zeroes it (as
    /// ns-2's `configQ`), after which it grows again from `w_q·q`; a signal
    /// that changes nothing resets nothing.
    #[test]
    fn a_signal_keeps_or_resets_the_average() {
        let mut keep = dwred(DwredParams::paper(100.0, Limit::Packets(500), Some(0)));
        let mut reset = dwred(DwredParams {
            average_on_signal: AverageOnSignal::Reset,
            ..DwredParams::paper(100.0, Limit::Packets(500), Some(0))
        });
        for d in [&mut keep, &mut reset] {
            for _ in 0..100 {
                d.on_arrival(&backlog(200), 512, Colour::Green, Time::ZERO);
            }
        }
        let before = keep.avg();
        assert!(before > 30.0, "{before}");
        assert_eq!(reset.avg(), before);
        assert!(!reset.update_thresholds(0.0));
        assert_eq!(reset.avg(), before);
        assert!(keep.update_thresholds(300.0) && reset.update_thresholds(300.0));
        assert_eq!(keep.avg(), before);
        assert_eq!(reset.avg(), 0.0);
        assert_eq!(reset.thresholds(), keep.thresholds());
        reset.on_arrival(&backlog(200), 512, Colour::Red, Time::ZERO);
        assert!((reset.avg() - 0.002 * 200.0).abs() < 1e-12);
    }

    #[test]
    fn the_average_counts_in_and_out_packets() {
        let mut d = dwred(DwredParams::paper(100.0, Limit::Packets(500), None));
        d.on_arrival(&Backlog::of_packets([10, 0, 0], 512), 512, Colour::Green, Time::ZERO);
        assert!((d.avg() - 0.002 * 10.0).abs() < 1e-12);
        d.on_arrival(&Backlog::of_packets([10, 0, 20], 512), 512, Colour::Red, Time::ZERO);
        assert!((d.avg() - (0.02 * 0.998 + 0.002 * 30.0)).abs() < 1e-12);
    }

    #[test]
    fn validate_names_the_bad_parameter() {
        let ok = DwredParams::paper(100.0, Limit::Packets(500), Some(1));
        assert_eq!(ok.validate(), Ok(()));
        let p = DwredParams { b: 1.0, ..ok.clone() };
        assert!(p.validate().unwrap_err().starts_with("b must be in (0, 1)"));
        let p = DwredParams { thresholds: Thresholds::new(50.0, 40.0, 0.1), ..ok.clone() };
        assert_eq!(p.validate().unwrap_err(), "max_th (40) must be greater than min_th (50)");
        let p = DwredParams { thresholds: Thresholds::new(5.0, 40.0, 0.0), ..ok.clone() };
        assert!(p.validate().unwrap_err().starts_with("max_p"));
        let p = DwredParams { limit: Limit::Packets(0), ..ok };
        assert_eq!(p.validate().unwrap_err(), "limit must be positive");
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::{prop_assert, proptest};

    proptest! {
        /// An in (Green) packet is never dropped while the buffer holds
        /// fewer than `limit` packets, and always when it holds `limit`,
        /// whatever the thresholds, their updates, the average and what an
        /// update does to it.
        #[test]
        fn in_packets_are_dropped_only_when_the_buffer_is_full(
            limit in 1u64..300,
            w_q in 0.001f64..1.0,
            reset in proptest::bool::ANY,
            ops in proptest::collection::vec((0u64..320, 0u8..3, 0u32..2000, 0u64..5), 1..400),
        ) {
            let average_on_signal = if reset { AverageOnSignal::Reset } else { AverageOnSignal::Keep };
            let params = DwredParams { w_q, average_on_signal, ..DwredParams::paper(20.0, Limit::Packets(limit), Some(0)) };
            let mut d = Dwred::new(params, 10_000_000, Rng::derive(3, "p"));
            let mut now = Time::ZERO;
            for (q, colour, window, dt) in ops {
                now += Time::from_millis(dt);
                if window % 7 == 0 {
                    d.update_thresholds(window as f64 / 3.0);
                }
                let colour = [Colour::Green, Colour::Yellow, Colour::Red][colour as usize];
                let verdict = d.on_arrival(&Backlog::of_packets([q, 0, 0], 512), 512, colour, now);
                if colour == Colour::Green {
                    prop_assert!(verdict == (q >= limit).then_some(DropReason::Overflow), "in packet at {q}/{limit}: {verdict:?}");
                } else if q >= limit {
                    prop_assert!(verdict.is_some());
                }
            }
        }
    }
}
