//! Steady-state TCP throughput models.
//!
//! All functions return bits per second and take the segment size `m_bits`
//! in bits (the papers' `M`), the round-trip time `r` in seconds and a loss
//! probability `p` in (0, 1).
//!
//! - [`square_root`]: `T = (M/R)·sqrt(3/(2·b·p))` — Mathis, Semke, Mahdavi,
//!   Ott, "The macroscopic behavior of the TCP congestion avoidance
//!   algorithm", CCR 27(3), 1997; the thesis' eq. (28) is the case `b = 1`,
//!   BEDS eq. (7) the general one.
//! - [`pftk`]: Padhye, Firoiu, Towsley, Kurose, "Modeling TCP Reno
//!   performance", ToN 8(2), 2000, as summarised in BEDS (Firoiu, Zhang &
//!   Guo 2001) Appendix A, eqs. (8)–(11), with timeouts and a receiver
//!   window limit `w_max`. In the window-limited branch the term is
//!   `(1 − p)/(p·W_max)`, as in PFTK's eq. (31); the BEDS text can be read
//!   as `(1 − p)/p·W_max`, which does not reduce to `W_max·M/R` at low loss.
//!   The base timeout `T_0` is a time or, as BEDS' Appendix says ("
//!   proportional to R, typically 5R"), a multiple of `R` ([`Timeout`]).
//! - [`pftk_rtt`], [`square_root_rtt`]: the inverses in `R`, `T⁻¹(p, t)`
//!   (BEDS Section II.A). Eq. (8) is `M·A(p)/(R·B(p) + D(p)·T_0)` with `A`,
//!   `B`, `D` functions of `p` alone (the branch depends on `p` only), so
//!   the inverse is closed-form.
//! - [`EmpiricalModel`]: the thesis' `T ∝ 1/(R^a·p^b)` (eq. 30, fitted in
//!   Appendix B, eq. 60) with its published `a = 0.9007`, `b = 0.7260`.

/// The square-root law: `(M/R)·sqrt(3/(2·b·p))`, `b` packets acknowledged
/// per ACK.
pub fn square_root(m_bits: f64, r: f64, p: f64, b: f64) -> f64 {
    m_bits / r * (3.0 / (2.0 * b * p)).sqrt()
}

/// The square-root law's inverse in `R`: the round-trip time at which a
/// flow gets `t` bit/s, `(M/t)·sqrt(3/(2·b·p))`.
pub fn square_root_rtt(m_bits: f64, t: f64, p: f64, b: f64) -> f64 {
    m_bits / t * (3.0 / (2.0 * b * p)).sqrt()
}

/// PFTK's base timeout `T_0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Timeout {
    /// A fixed time, seconds.
    Seconds(f64),
    /// A multiple of the round-trip time `R` (BEDS: "typically 5R").
    Rtts(f64),
}

impl Timeout {
    /// `T_0` for a round-trip time `r`.
    pub fn at(self, r: f64) -> f64 {
        match self {
            Timeout::Seconds(t0) => t0,
            Timeout::Rtts(k) => k * r,
        }
    }
}

/// PFTK's parameters besides `M`, `R` and `p`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PftkParams {
    /// Packets acknowledged per ACK (2 with delayed ACKs).
    pub b: f64,
    /// Receiver's advertised window, packets.
    pub w_max: f64,
    /// Base (not backed-off) retransmission timeout.
    pub t0: Timeout,
    /// The probability that a loss is detected by a timeout: `None` for
    /// PFTK's `Q̂(W)` (BEDS eq. 10), or a given value in (0, 1], e.g. one
    /// measured in a simulation (a sensitivity: `Q̂` assumes that the
    /// packets after a loss in its round are lost too).
    pub timeout_probability: Option<f64>,
}

/// Expected unconstrained window, BEDS eq. (9).
fn pftk_window(p: f64, b: f64) -> f64 {
    let k = (2.0 + b) / (3.0 * b);
    k + (8.0 * (1.0 - p) / (3.0 * b * p) + k * k).sqrt()
}

/// Probability that a loss in a window of `w` is detected by a timeout,
/// BEDS eq. (10) (PFTK's `Q̂`).
fn pftk_timeout_probability(p: f64, w: f64) -> f64 {
    let q = 1.0 - p;
    let numerator = (1.0 - q.powi(3)) * (1.0 + q.powi(3) * (1.0 - q.powf(w - 3.0)));
    (numerator / (1.0 - q.powf(w))).min(1.0)
}

/// Timeout back-off factor, BEDS eq. (11).
fn pftk_backoff(p: f64) -> f64 {
    1.0 + p + 2.0 * p.powi(2) + 4.0 * p.powi(3) + 8.0 * p.powi(4) + 16.0 * p.powi(5) + 32.0 * p.powi(6)
}

/// Eq. (8) as `A / (R·B + D·T_0)` (packets per second): `A` the packets
/// sent per cycle, `B` the rounds per cycle, `D` the expected timeout
/// back-off per cycle; the branch (window-limited or not) is chosen by `p`.
fn pftk_terms(p: f64, params: PftkParams) -> (f64, f64, f64) {
    let PftkParams { b, w_max, timeout_probability, .. } = params;
    let w = pftk_window(p, b);
    let f = pftk_backoff(p);
    let timeouts = |w: f64| timeout_probability.unwrap_or_else(|| pftk_timeout_probability(p, w));
    if w < w_max {
        let q = timeouts(w);
        ((1.0 - p) / p + w / 2.0 + q, b / 2.0 * w + 1.0, q * f / (1.0 - p))
    } else {
        let q = timeouts(w_max);
        ((1.0 - p) / p + w_max / 2.0 + q, b / 8.0 * w_max + (1.0 - p) / (p * w_max) + 2.0, q * f / (1.0 - p))
    }
}

/// PFTK throughput `T(p, R)`, BEDS eq. (8), bit/s; `p` in (0, 1).
pub fn pftk(m_bits: f64, r: f64, p: f64, params: PftkParams) -> f64 {
    let (a, rounds, backoff) = pftk_terms(p, params);
    m_bits * a / (r * rounds + backoff * params.t0.at(r))
}

/// PFTK's inverse in `R`, `T⁻¹(p, t)`: the round-trip time at which a flow
/// gets `t` bit/s at loss probability `p` (BEDS Section II.A). `T` falls
/// strictly with `R`, so the inverse is unique. With a fixed `T_0` it is
/// `(M·A/t − D·T_0)/B`, which is 0 or negative when even `R → 0` gives
/// less than `t` (timeouts alone cap the flow below `t`); with `T_0 = k·R`
/// it is `M·A/(t·(B + D·k))`, always positive.
pub fn pftk_rtt(m_bits: f64, t: f64, p: f64, params: PftkParams) -> f64 {
    let (a, rounds, backoff) = pftk_terms(p, params);
    match params.t0 {
        Timeout::Seconds(t0) => (m_bits * a / t - backoff * t0) / rounds,
        Timeout::Rtts(k) => m_bits * a / (t * (rounds + backoff * k)),
    }
}

/// The thesis' empirical model `T = c/(R^a·p^b)` (eqs. 30 and 60).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmpiricalModel {
    /// Exponent of the round-trip time.
    pub a: f64,
    /// Exponent of the loss probability.
    pub b: f64,
}

impl EmpiricalModel {
    /// The values fitted in the thesis' Appendix B: `a = 0.9007`
    /// (95% CI [0.8874, 0.9140]), `b = 0.7260` ([0.7145, 0.7375]).
    pub const THESIS: EmpiricalModel = EmpiricalModel { a: 0.9007, b: 0.7260 };

    /// Throughput relative to a reference point: `T(R, p)/T(R_ref, p_ref)`.
    pub fn ratio(&self, r: f64, p: f64, r_ref: f64, p_ref: f64) -> f64 {
        (r_ref / r).powf(self.a) * (p_ref / p).powf(self.b)
    }

    /// The loss probability that keeps throughput unchanged when the RTT
    /// grows from `r_ref` to `r`: `p = p_ref·(r_ref/r)^(a/b)` — the relation
    /// PLC uses with `x = a/b` (thesis Section 6).
    pub fn compensating_loss(&self, r: f64, r_ref: f64, p_ref: f64) -> f64 {
        p_ref * (r_ref / r).powf(self.a / self.b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS_BITS: f64 = 1460.0 * 8.0;

    #[test]
    fn square_root_law_by_hand() {
        // 1460-byte segments, 100 ms, p = 1%: 116800 bit/s · sqrt(150) = 1.43 Mb/s
        let t = square_root(MSS_BITS, 0.1, 0.01, 1.0);
        assert!((t - 116_800.0 * 150f64.sqrt()).abs() < 1e-6);
        assert!((t - 1.430_5e6).abs() < 1e3);
        // b = 2 divides by sqrt(2)
        assert!((square_root(MSS_BITS, 0.1, 0.01, 2.0) - t / 2f64.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn pftk_window_and_backoff_by_hand() {
        // p = 1%, b = 2: k = 2/3, W = 2/3 + sqrt(8·0.99/0.06 + 4/9) = 12.1225
        assert!((pftk_window(0.01, 2.0) - (2.0 / 3.0 + (132.0f64 + 4.0 / 9.0).sqrt())).abs() < 1e-12);
        assert!((pftk_backoff(0.5) - (1.0 + 0.5 + 0.5 + 0.5 + 0.5 + 0.5 + 0.5)).abs() < 1e-12);
        // p = 0.5, w = 4: 0.875·(1 + 0.125·0.5)/(1 − 0.0625) = 0.991666..
        assert!((pftk_timeout_probability(0.5, 4.0) - 0.875 * 1.0625 / 0.9375).abs() < 1e-12);
        // p = 0.5, w = 2: 0.875·0.875/0.75 > 1, capped
        assert_eq!(pftk_timeout_probability(0.5, 2.0), 1.0);
    }

    /// Eq. (8) by hand, first branch: p = 0.01, b = 1, R = 0.5 s, T_0 =
    /// 1 s, W_max = 20, M = 8000 bits. W = 1 + sqrt(264 + 1) = 17.27882 <
    /// 20. Q = (1 − 0.99³)(1 + 0.99³(1 − 0.99^14.27882))/(1 − 0.99^17.27882)
    /// = 0.029701·1.129714/0.159414 = 0.210479. F = 1.010204. T = 8000 ·
    /// (99 + 8.63941 + 0.210479)/(0.5·(8.63941 + 1) + 0.210479·1.010204/0.99)
    /// = 8000·107.84989/5.034478 = 171 378 bit/s.
    /// Second branch: p = 0.001, b = 2, W_max = 10 (W = 37.17), R = 0.1 s,
    /// T_0 = 0.4 s: Q = 0.303146, T = (999 + 5 + 0.303146)/(0.1·(2.5 + 99.9
    /// + 2) + 0.303146·1.001002·0.4/0.999) = 95.0909 packets/s.
    #[test]
    fn pftk_by_hand() {
        let t = pftk(
            8000.0,
            0.5,
            0.01,
            PftkParams { b: 1.0, w_max: 20.0, t0: Timeout::Seconds(1.0), timeout_probability: None },
        );
        assert!((t - 171_378.01).abs() < 0.01, "{t}");
        assert!((pftk_window(0.01, 1.0) - 17.278_820_596).abs() < 1e-9);
        assert!((pftk_timeout_probability(0.01, pftk_window(0.01, 1.0)) - 0.210_479_074_55).abs() < 1e-10);
        let t = pftk(
            8000.0,
            0.1,
            0.001,
            PftkParams { b: 2.0, w_max: 10.0, t0: Timeout::Seconds(0.4), timeout_probability: None },
        );
        assert!((t / 8000.0 - 95.090_944_8).abs() < 1e-6, "{t}");
        // T_0 = 2R at R = 0.5 s is the first case's T_0 = 1 s.
        let k = pftk(
            8000.0,
            0.5,
            0.01,
            PftkParams { b: 1.0, w_max: 20.0, t0: Timeout::Rtts(2.0), timeout_probability: None },
        );
        assert!((k - 171_378.01).abs() < 0.01, "{k}");
    }

    /// `T(p, T⁻¹(p, t)) = t` in both branches and both timeout forms, and
    /// `T⁻¹(p, T(p, R)) = R`.
    #[test]
    fn the_inverse_in_r_round_trips() {
        for t0 in [Timeout::Seconds(1.0), Timeout::Seconds(0.2), Timeout::Rtts(5.0)] {
            for (b, w_max) in [(1.0, 20.0), (2.0, 1e9), (2.0, 8.0)] {
                let params = PftkParams { b, w_max, t0, timeout_probability: None };
                for p in [0.001, 0.005, 0.01, 0.04, 0.1, 0.2] {
                    for r in [0.05, 0.2, 0.8, 2.0] {
                        let t = pftk(8000.0, r, p, params);
                        let back = pftk_rtt(8000.0, t, p, params);
                        assert!((back / r - 1.0).abs() < 1e-12, "{params:?} p {p} R {r}: {back}");
                    }
                }
            }
        }
        // Timeouts alone cap the flow: with T_0 = 1 s and p = 20%, even R → 0
        // gives 7.1/1.48 = 4.8 packets/s; 10 packets/s needs a negative R.
        let params = PftkParams { b: 1.0, w_max: 20.0, t0: Timeout::Seconds(1.0), timeout_probability: None };
        assert!(pftk_rtt(8000.0, 80_000.0, 0.2, params) < 0.0);
        let r = square_root_rtt(8000.0, 112_500.0, 0.01, 1.0);
        assert!((square_root(8000.0, r, 0.01, 1.0) - 112_500.0).abs() < 1e-6);
    }

    /// A given timeout probability replaces `Q̂` in both branches: `Q̂`'s own
    /// value gives the same throughput, and by hand (first case of
    /// `pftk_by_hand` with Q = 0.1): 8000·(99 + 8.63941 + 0.1)/(0.5·9.63941
    /// + 0.1·1.010204/0.99) = 8000·107.73941/4.921747 = 175 123 bit/s.
    #[test]
    fn a_given_timeout_probability_replaces_q_hat() {
        for (p, w_max) in [(0.01, 20.0), (0.001, 10.0)] {
            let params = PftkParams { b: 1.0, w_max, t0: Timeout::Seconds(1.0), timeout_probability: None };
            let q_hat = pftk_timeout_probability(p, pftk_window(p, 1.0).min(w_max));
            let given = PftkParams { timeout_probability: Some(q_hat), ..params };
            assert!((pftk(8000.0, 0.5, p, given) / pftk(8000.0, 0.5, p, params) - 1.0).abs() < 1e-12);
        }
        let params = PftkParams { b: 1.0, w_max: 20.0, t0: Timeout::Seconds(1.0), timeout_probability: Some(0.1) };
        let t = pftk(8000.0, 0.5, 0.01, params);
        assert!((t - 175_123.0).abs() < 1.0, "{t}");
    }

    #[test]
    fn pftk_approaches_the_square_root_law_at_low_loss() {
        let params = PftkParams { b: 2.0, w_max: 1e9, t0: Timeout::Seconds(0.5), timeout_probability: None };
        let ratio = pftk(MSS_BITS, 0.1, 1e-5, params) / square_root(MSS_BITS, 0.1, 1e-5, 2.0);
        assert!((ratio - 1.0).abs() < 0.02, "ratio {ratio}");
    }

    #[test]
    fn pftk_is_limited_by_the_receiver_window() {
        // A 10-packet window at 100 ms caps throughput near 10·M/R.
        let params = PftkParams { b: 2.0, w_max: 10.0, t0: Timeout::Seconds(0.5), timeout_probability: None };
        let t = pftk(MSS_BITS, 0.1, 1e-4, params);
        assert!(t < 10.0 * MSS_BITS / 0.1 && t > 0.8 * 10.0 * MSS_BITS / 0.1, "t {t}");
    }

    #[test]
    fn pftk_timeouts_dominate_at_high_loss() {
        let params = PftkParams { b: 2.0, w_max: 1e9, t0: Timeout::Seconds(1.0), timeout_probability: None };
        assert!(pftk(MSS_BITS, 0.1, 0.2, params) < 0.5 * square_root(MSS_BITS, 0.1, 0.2, 2.0));
    }

    #[test]
    fn empirical_model_compensates_rtt_with_loss() {
        let m = EmpiricalModel::THESIS;
        let p = m.compensating_loss(0.2, 0.1, 0.01);
        assert!((m.ratio(0.2, p, 0.1, 0.01) - 1.0).abs() < 1e-12);
        assert!((p - 0.01 * 0.5f64.powf(0.9007 / 0.7260)).abs() < 1e-15);
    }
}
