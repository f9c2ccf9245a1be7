//! The TCP-Window-Aware Marker (TWAM).
//!
//! C. Bouras, A. Sevasti, "Performance analysis of relative service using
//! TCP-aware marking and dynamic WRED", John Wiley & Sons, 2008, Section 4
//! (`../shared/papers/bouras-2008-twam-dwred.md`).
//!
//! TWAM sits at the ingress router of an AF LSP and marks the packets of
//! each member (a customer's TCP flow or aggregate) *in* or *out* so that,
//! over an interval of `RTT_LSP`, the in packets share the LSP's window in
//! proportion to the members' contracted rates `r_i`:
//!
//! - **Reserved window** (eq. 1): `W_i^r = r_i·RTT_LSP/(8·S)` segments, `S`
//!   the packet size in bytes, `r_i` in bit/s.
//! - **The LSP's window** (eq. 7): `W_LSP^cwnd ≈ Σ_i W_i^cwnd`, the sum of
//!   the members' current congestion windows; or (eq. 8, "another
//!   alternative", which the paper leaves to future work)
//!   `W_LSP^cwnd ≈ Σ_i ssthresh_i`.
//! - **In probability** (eq. 9): `p_i = W_i^r·W_LSP^cwnd / (Σ_j W_j^r ·
//!   W_i^cwnd)` when that is below 1, else `p_i = 1`; so that in an interval
//!   the member sends `N_i^In = p_i·W_i^cwnd = W_i^r/Σ_j W_j^r · W_LSP^cwnd`
//!   in packets and the rest out (eqs. 2a–2b).
//! - **Operating interval** (Section 4): `p_i` is recomputed every
//!   `α·RTT_LSP`, `α ∈ {1, 2, 3, …}` (the paper's experiments use α = 2,
//!   Section 6.4), at `α·RTT_LSP, 2·α·RTT_LSP, …` after time 0; in between
//!   every arriving packet of member `i` is in with probability `p_i` (one
//!   uniform draw from the marker's own stream; none while `p_i = 1`).
//!
//! **Inputs.** TWAM reads nothing from packets but their member: the
//! windows come in through [`Twam::observe_window`] (and
//! [`Twam::observe_ssthresh`] for eq. 8), fed by whoever knows them — in the
//! simulator the senders themselves (an oracle, as the paper's ns-2 code
//! read `cwnd_`) or a passive estimate ([`super::passive_window`]); in a
//! router, signalling from the hosts (Section 7). The mechanism never reads
//! a TCP sender. It says when it next wants to be woken
//! ([`Twam::next_update`]); [`Twam::on_wakeup`] then recomputes `p_i` from
//! the latest inputs and returns `W_LSP^cwnd`, the value the core routers'
//! DWRED queues are to be signalled (eq. 11).
//!
//! **Choices where the paper is silent.** Before the first update every
//! packet is in (`p_i = 1`: nothing is known yet). A member whose latest
//! window is 0 (not started, stopped, or — passively — silent for the last
//! `RTT_LSP`) is left out of both sums of eq. (9), so the LSP's window is
//! shared among the members present; its `p_i` is 1. With eq. (8), a
//! member's `ssthresh` that is not finite (no loss yet: the sender has no
//! operating point) counts as its window. `W_LSP^cwnd` of an interval
//! without any window is 0.
//!
//! **Units and arithmetic.** Windows are in segments (packets of `S`
//! bytes), `f64`; the order of operations is fixed, so runs are
//! reproducible bit for bit.

use crate::packet::Colour;
use crate::rng::Rng;
use crate::time::Time;

/// Which estimate of the LSP's window `W_LSP^cwnd` TWAM uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WindowSum {
    /// Eq. (7): `Σ_i W_i^cwnd` (the paper's choice).
    #[default]
    Cwnd,
    /// Eq. (8): `Σ_i ssthresh_i`.
    Ssthresh,
}

/// TWAM's parameters, named as Bouras & Sevasti name them.
#[derive(Clone, Debug, PartialEq)]
pub struct TwamParams {
    /// `RTT_LSP`, the LSP's round-trip time (eq. 1 and the interval).
    pub rtt_lsp: Time,
    /// `S`, the packet size in bytes (eq. 1).
    pub packet_size: u32,
    /// `α`: `p_i` is recomputed every `α·RTT_LSP`; at least 1.
    pub alpha: u32,
    /// `r_i`, each member's contracted rate in bit/s, in member order.
    pub r: Vec<u64>,
    /// The estimate of `W_LSP^cwnd`: eq. (7) or (8).
    pub window_sum: WindowSum,
}

impl TwamParams {
    /// α of the paper's experiments (Section 6.4).
    pub const ALPHA: u32 = 2;

    /// Checks the parameters; the message names the one at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.rtt_lsp == Time::ZERO {
            return Err("rtt_lsp must be positive".into());
        }
        if self.packet_size == 0 {
            return Err("packet_size (S) must be positive".into());
        }
        if self.alpha == 0 {
            return Err("alpha must be a whole number of RTT_LSP, at least 1".into());
        }
        if self.r.is_empty() {
            return Err("r: TWAM needs at least one member".into());
        }
        if let Some(i) = self.r.iter().position(|&r| r == 0) {
            return Err(format!("r: member {i}'s contracted rate must be positive"));
        }
        Ok(())
    }

    /// The operating interval `α·RTT_LSP`.
    pub fn interval(&self) -> Time {
        Time::from_nanos(self.rtt_lsp.as_nanos().saturating_mul(self.alpha as u64))
    }
}

/// Eq. (1): the reserved window `W^r = r·RTT_LSP/(8·S)` in segments, for a
/// contracted rate `r_bps` (bit/s) and packets of `s` bytes.
pub fn reserved_window(r_bps: u64, rtt_lsp: Time, s: u32) -> f64 {
    r_bps as f64 * rtt_lsp.as_secs_f64() / (8.0 * s as f64)
}

/// Eq. (9): the in probability of a member with reserved window `w_r` and
/// window `w_cwnd`, given `Σ W^r` and the LSP's window `w_lsp`.
pub fn in_probability(w_r: f64, w_cwnd: f64, sum_w_r: f64, w_lsp: f64) -> f64 {
    let numerator = w_r * w_lsp;
    let denominator = sum_w_r * w_cwnd;
    if numerator < denominator {
        numerator / denominator
    } else {
        1.0
    }
}

/// One TWAM: the members of one LSP (see the module docs).
#[derive(Clone, Debug)]
pub struct Twam {
    params: TwamParams,
    /// `W_i^r` (eq. 1).
    w_r: Vec<f64>,
    /// The latest `W_i^cwnd` observed.
    w_cwnd: Vec<f64>,
    /// The latest `ssthresh_i` observed (eq. 8).
    ssthresh: Vec<f64>,
    /// `p_i` for the current interval (eq. 9).
    p: Vec<f64>,
    /// `W_LSP^cwnd` of the last update.
    w_lsp: f64,
    interval: Time,
    next_update: Time,
    updates: u64,
    rng: Rng,
}

impl Twam {
    /// A TWAM drawing its marks from `rng`, or why the parameters are unusable.
    pub fn new(params: TwamParams, rng: Rng) -> Result<Twam, String> {
        params.validate()?;
        let n = params.r.len();
        let w_r = params.r.iter().map(|&r| reserved_window(r, params.rtt_lsp, params.packet_size)).collect();
        let interval = params.interval();
        Ok(Twam {
            w_r,
            w_cwnd: vec![0.0; n],
            ssthresh: vec![f64::INFINITY; n],
            p: vec![1.0; n],
            w_lsp: 0.0,
            interval,
            next_update: interval,
            updates: 0,
            rng,
            params,
        })
    }

    pub fn params(&self) -> &TwamParams {
        &self.params
    }

    /// The number of members.
    pub fn members(&self) -> usize {
        self.w_r.len()
    }

    /// `W_i^r` of member `i` (eq. 1), segments.
    pub fn reserved_window(&self, i: usize) -> f64 {
        self.w_r[i]
    }

    /// `p_i` of the current interval (eq. 9).
    pub fn p(&self, i: usize) -> f64 {
        self.p[i]
    }

    /// The latest `W_i^cwnd` observed for member `i`.
    pub fn window(&self, i: usize) -> f64 {
        self.w_cwnd[i]
    }

    /// `W_LSP^cwnd` as of the last update (eq. 7 or 8), segments.
    pub fn w_lsp(&self) -> f64 {
        self.w_lsp
    }

    /// `α·RTT_LSP`.
    pub fn interval(&self) -> Time {
        self.interval
    }

    /// When TWAM next wants to be woken to update.
    pub fn next_update(&self) -> Time {
        self.next_update
    }

    /// Updates done so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// Member `i`'s congestion window is `w` segments (≥ 0) at `now`: the
    /// oracle's reading or a passive estimate. Kept until the next one.
    pub fn observe_window(&mut self, i: usize, w: f64, _now: Time) {
        debug_assert!(w >= 0.0 && w.is_finite(), "a window is finite and >= 0, got {w}");
        self.w_cwnd[i] = w;
    }

    /// Member `i`'s slow-start threshold is `ssthresh` segments at `now`
    /// (for eq. 8; `f64::INFINITY` before any loss).
    pub fn observe_ssthresh(&mut self, i: usize, ssthresh: f64, _now: Time) {
        self.ssthresh[i] = ssthresh;
    }

    /// Recomputes every `p_i` (eq. 9) from the latest windows and returns
    /// `W_LSP^cwnd` (eq. 7 or 8). The next update is due one interval after
    /// the one this update made (`α·RTT_LSP` multiples of time 0).
    pub fn update(&mut self, now: Time) -> f64 {
        let mut sum_w_r = 0.0;
        let mut w_lsp = 0.0;
        for i in 0..self.w_r.len() {
            let w = self.w_cwnd[i];
            if w > 0.0 {
                sum_w_r += self.w_r[i];
                w_lsp += match self.params.window_sum {
                    WindowSum::Cwnd => w,
                    WindowSum::Ssthresh if self.ssthresh[i].is_finite() => self.ssthresh[i],
                    WindowSum::Ssthresh => w,
                };
            }
        }
        for i in 0..self.w_r.len() {
            let w = self.w_cwnd[i];
            self.p[i] = if w > 0.0 { in_probability(self.w_r[i], w, sum_w_r, w_lsp) } else { 1.0 };
        }
        self.w_lsp = w_lsp;
        self.updates += 1;
        let step = self.interval.as_nanos();
        let due = self.next_update.as_nanos();
        // The first multiple of the interval after `now` (an update taken
        // late, or early by hand, keeps the grid).
        let next = if now.as_nanos() < due { due } else { (now.as_nanos() / step + 1) * step };
        self.next_update = Time::from_nanos(next);
        w_lsp
    }

    /// Woken at `now`: if an update is due, makes it and returns
    /// `W_LSP^cwnd`; otherwise `None`.
    pub fn on_wakeup(&mut self, now: Time) -> Option<f64> {
        (now >= self.next_update).then(|| self.update(now))
    }

    /// A packet of member `i` arrives at `now`: in (Green) with probability
    /// `p_i`, else out (Red).
    #[inline]
    pub fn mark(&mut self, i: usize, _now: Time) -> Colour {
        let p = self.p[i];
        if p >= 1.0 || self.rng.uniform() < p {
            Colour::Green
        } else {
            Colour::Red
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MBPS: u64 = 1_000_000;

    fn twam(r: Vec<u64>, rtt_ms: u64, s: u32, window_sum: WindowSum) -> Twam {
        let params = TwamParams { rtt_lsp: Time::from_millis(rtt_ms), packet_size: s, alpha: 1, r, window_sum };
        Twam::new(params, Rng::derive(1, "twam-test")).unwrap()
    }

    /// Table I: RTT 0.2 s, S = 1000 bytes; r = 2, 3, 10 Mb/s give W^r = 50,
    /// 75, 250 (eq. 1); with W^cwnd = 60, 120, 150 (Σ = 330, Σ W^r = 375)
    /// eq. (9) gives p = 50·330/(375·60) = 0.733, 75·330/(375·120) = 0.55
    /// and 250·330/(375·150) = 1.47 → 1.
    #[test]
    fn table_1_probabilities() {
        let mut t = twam(vec![2 * MBPS, 3 * MBPS, 10 * MBPS], 200, 1000, WindowSum::Cwnd);
        assert_eq!([0, 1, 2].map(|i| t.reserved_window(i)), [50.0, 75.0, 250.0]);
        for (i, w) in [60.0, 120.0, 150.0].into_iter().enumerate() {
            t.observe_window(i, w, Time::ZERO);
        }
        assert_eq!(t.on_wakeup(Time::from_millis(199)), None);
        assert_eq!(t.on_wakeup(Time::from_millis(200)), Some(330.0));
        assert!((t.p(0) - 16_500.0 / 22_500.0).abs() < 1e-15);
        assert_eq!((t.p(0) * 100.0).round() / 100.0, 0.73);
        assert!((t.p(1) - 0.55).abs() < 1e-15);
        assert_eq!(t.p(2), 1.0);
        // Eqs. (2a)-(2b): N_in = p·W^cwnd = W^r/ΣW^r·ΣW^cwnd exactly.
        let n_in: Vec<f64> = (0..3).map(|i| t.p(i) * t.window(i)).collect();
        assert!((n_in[0] - 44.0).abs() < 1e-12 && (n_in[1] - 66.0).abs() < 1e-12 && n_in[2] == 150.0, "{n_in:?}");
        assert!((60.0 - n_in[0] - 16.0).abs() < 1e-12 && (120.0 - n_in[1] - 54.0).abs() < 1e-12);
        assert!((n_in[0] - 50.0 / 375.0 * 330.0).abs() < 1e-12);
        assert_eq!(t.next_update(), Time::from_millis(400));
    }

    /// Table I's in/out counts as TWAM marks them: each flow sends its
    /// W^cwnd packets per interval; over 20,000 intervals the mean in count
    /// per interval is within 0.05 of 44, 66 and 150 (binomial standard
    /// error of the mean: sqrt(60·0.733·0.267)/sqrt(20 000) = 0.024 and
    /// 0.039), and flow 3, with p = 1, has no out packet at all.
    #[test]
    fn table_1_in_and_out_counts() {
        let mut t = twam(vec![2 * MBPS, 3 * MBPS, 10 * MBPS], 200, 1000, WindowSum::Cwnd);
        for (i, w) in [60.0, 120.0, 150.0].into_iter().enumerate() {
            t.observe_window(i, w, Time::ZERO);
        }
        t.update(Time::from_millis(200));
        let intervals = 20_000u32;
        let mut counts = [[0u64; 2]; 3];
        for _ in 0..intervals {
            for (i, w) in [60, 120, 150].into_iter().enumerate() {
                for _ in 0..w {
                    let c = t.mark(i, Time::from_millis(300));
                    counts[i][usize::from(c != Colour::Green)] += 1;
                }
            }
        }
        let mean = |i: usize, k: usize| counts[i][k] as f64 / intervals as f64;
        assert!((mean(0, 0) - 44.0).abs() < 0.05 && (mean(0, 1) - 16.0).abs() < 0.05, "{:?}", counts[0]);
        assert!((mean(1, 0) - 66.0).abs() < 0.05 && (mean(1, 1) - 54.0).abs() < 0.05, "{:?}", counts[1]);
        assert_eq!(counts[2], [150 * intervals as u64, 0]);
    }

    /// Eq. (1) for Table II: with RTT_LSP = 240 ms and S = 512 bytes (what
    /// Table II's reserved windows imply; docs/reproductions.md), r = 1, 2,
    /// 5, 10 Mb/s give 58.6, 117.2, 293.0 and 585.9 segments, which round to
    /// the table's 59, 117, 293 and 586; and the LSP's window at 50 Mb/s
    /// (eq. 4) is 2929.7, Section 6.5's 2930.
    #[test]
    fn table_2_reserved_windows() {
        let (rtt, s) = (Time::from_millis(240), 512);
        let table = [(1, 59.0), (2, 117.0), (5, 293.0), (10, 586.0)];
        for (r, w) in table {
            let exact = reserved_window(r * MBPS, rtt, s);
            assert_eq!(exact.round(), w, "r = {r} Mb/s: {exact}");
            assert!((exact - r as f64 * 58.59375).abs() < 1e-9);
        }
        assert_eq!(reserved_window(50 * MBPS, rtt, s).round(), 2930.0);
        // Σ W^r of the ten flows (1, 1, 1, 1, 2, 2, 2, 5, 5, 10 Mb/s = 30
        // Mb/s) is the LSP's window at C_AF = 30 Mb/s (eqs. 5, 13).
        let sum: f64 = [1, 1, 1, 1, 2, 2, 2, 5, 5, 10].map(|r| reserved_window(r * MBPS, rtt, s)).iter().sum();
        assert!((sum - reserved_window(30 * MBPS, rtt, s)).abs() < 1e-9);
    }

    /// Below its reserved window a flow is all in (case 1); members without
    /// a window are left out of the sums and marked in.
    #[test]
    fn members_without_a_window_are_left_out() {
        let mut t = twam(vec![MBPS, MBPS, 2 * MBPS], 240, 512, WindowSum::Cwnd);
        t.observe_window(0, 100.0, Time::ZERO);
        t.observe_window(1, 20.0, Time::ZERO);
        // member 2 not started: W = 0
        assert_eq!(t.update(Time::from_millis(240)), 120.0);
        // W^r = 58.59 each, Σ = 117.19 over members 0 and 1: p_0 = 58.59·120/(117.19·100) = 0.6.
        assert!((t.p(0) - 0.6).abs() < 1e-12, "{}", t.p(0));
        assert_eq!((t.p(1), t.p(2)), (1.0, 1.0));
        assert_eq!(t.mark(2, Time::ZERO), Colour::Green);
    }

    /// Eq. (8): Σ ssthresh replaces Σ W^cwnd; an infinite ssthresh counts
    /// as the window.
    #[test]
    fn ssthresh_sum() {
        let mut t = twam(vec![MBPS, MBPS], 240, 512, WindowSum::Ssthresh);
        t.observe_window(0, 100.0, Time::ZERO);
        t.observe_window(1, 50.0, Time::ZERO);
        t.observe_ssthresh(0, 60.0, Time::ZERO);
        assert_eq!(t.update(Time::from_millis(240)), 110.0);
        // p_0 = W^r·110/(2W^r·100) = 0.55; p_1 = 110/100 → 1.
        assert!((t.p(0) - 0.55).abs() < 1e-12);
        assert_eq!(t.p(1), 1.0);
    }

    /// Updates every α·RTT_LSP on the grid of time 0, from before the
    /// first: everything in.
    #[test]
    fn interval_and_initial_marking() {
        let params = TwamParams {
            rtt_lsp: Time::from_millis(240),
            packet_size: 512,
            alpha: 2,
            r: vec![MBPS],
            window_sum: WindowSum::Cwnd,
        };
        let mut t = Twam::new(params, Rng::derive(1, "x")).unwrap();
        assert_eq!(t.interval(), Time::from_millis(480));
        assert_eq!(t.next_update(), Time::from_millis(480));
        assert!((0..1000).all(|_| t.mark(0, Time::ZERO) == Colour::Green));
        t.observe_window(0, 10.0, Time::ZERO);
        assert_eq!(t.on_wakeup(Time::from_millis(480)), Some(10.0));
        assert_eq!(t.next_update(), Time::from_millis(960));
        // A late wake-up keeps the grid.
        t.on_wakeup(Time::from_millis(1500));
        assert_eq!(t.next_update(), Time::from_millis(1920));
        assert_eq!(t.updates(), 2);
    }

    #[test]
    fn same_seed_same_marks() {
        let run = || {
            let mut t = twam(vec![MBPS, 4 * MBPS], 240, 512, WindowSum::Cwnd);
            t.observe_window(0, 200.0, Time::ZERO);
            t.observe_window(1, 100.0, Time::ZERO);
            t.update(Time::from_millis(240));
            (0..2000).map(|k| t.mark(k % 2, Time::ZERO)).collect::<Vec<_>>()
        };
        let marks = run();
        assert_eq!(marks, run());
        assert!(marks.contains(&Colour::Red) && marks.contains(&Colour::Green));
    }

    #[test]
    fn rejects_bad_parameters() {
        let ok = TwamParams {
            rtt_lsp: Time::from_millis(240),
            packet_size: 512,
            alpha: 2,
            r: vec![MBPS],
            window_sum: WindowSum::Cwnd,
        };
        let rng = || Rng::derive(0, "x");
        assert!(Twam::new(ok.clone(), rng()).is_ok());
        let err = |p: TwamParams| Twam::new(p, rng()).unwrap_err();
        assert_eq!(err(TwamParams { rtt_lsp: Time::ZERO, ..ok.clone() }), "rtt_lsp must be positive");
        assert!(err(TwamParams { packet_size: 0, ..ok.clone() }).starts_with("packet_size"));
        assert!(err(TwamParams { alpha: 0, ..ok.clone() }).starts_with("alpha"));
        assert!(err(TwamParams { r: vec![], ..ok.clone() }).starts_with("r:"));
        assert_eq!(err(TwamParams { r: vec![MBPS, 0], ..ok }), "r: member 1's contracted rate must be positive");
    }
}
