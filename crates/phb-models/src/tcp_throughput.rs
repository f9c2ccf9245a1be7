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
//!   performance", ToN 8(2), 2000, as summarised in BEDS (Firoiu & Zhang
//!   2001) Appendix A, eqs. (8)–(11), with timeouts and a receiver window
//!   limit `w_max`. In the window-limited branch the term is
//!   `(1 − p)/(p·W_max)`, as in PFTK's eq. (31); the BEDS text can be read
//!   as `(1 − p)/p·W_max`, which does not reduce to `W_max·M/R` at low loss.
//! - [`EmpiricalModel`]: the thesis' `T ∝ 1/(R^a·p^b)` (eq. 30, fitted in
//!   Appendix B, eq. 60) with its published `a = 0.9007`, `b = 0.7260`.

/// The square-root law: `(M/R)·sqrt(3/(2·b·p))`, `b` packets acknowledged
/// per ACK.
pub fn square_root(m_bits: f64, r: f64, p: f64, b: f64) -> f64 {
    m_bits / r * (3.0 / (2.0 * b * p)).sqrt()
}

/// PFTK's parameters besides `M`, `R` and `p`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PftkParams {
    /// Packets acknowledged per ACK (2 with delayed ACKs).
    pub b: f64,
    /// Receiver's advertised window, packets.
    pub w_max: f64,
    /// Base (not backed-off) retransmission timeout, seconds.
    pub t0: f64,
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

/// PFTK throughput, BEDS eq. (8).
pub fn pftk(m_bits: f64, r: f64, p: f64, params: PftkParams) -> f64 {
    let PftkParams { b, w_max, t0 } = params;
    let w = pftk_window(p, b);
    let f = pftk_backoff(p);
    if w < w_max {
        let q = pftk_timeout_probability(p, w);
        m_bits * ((1.0 - p) / p + w / 2.0 + q) / (r * (b / 2.0 * w + 1.0) + q * f * t0 / (1.0 - p))
    } else {
        let q = pftk_timeout_probability(p, w_max);
        m_bits * ((1.0 - p) / p + w_max / 2.0 + q)
            / (r * (b / 8.0 * w_max + (1.0 - p) / (p * w_max) + 2.0) + q * f * t0 / (1.0 - p))
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

    #[test]
    fn pftk_approaches_the_square_root_law_at_low_loss() {
        let params = PftkParams { b: 2.0, w_max: 1e9, t0: 0.5 };
        let ratio = pftk(MSS_BITS, 0.1, 1e-5, params) / square_root(MSS_BITS, 0.1, 1e-5, 2.0);
        assert!((ratio - 1.0).abs() < 0.02, "ratio {ratio}");
    }

    #[test]
    fn pftk_is_limited_by_the_receiver_window() {
        // A 10-packet window at 100 ms caps throughput near 10·M/R.
        let params = PftkParams { b: 2.0, w_max: 10.0, t0: 0.5 };
        let t = pftk(MSS_BITS, 0.1, 1e-4, params);
        assert!(t < 10.0 * MSS_BITS / 0.1 && t > 0.8 * 10.0 * MSS_BITS / 0.1, "t {t}");
    }

    #[test]
    fn pftk_timeouts_dominate_at_high_loss() {
        let params = PftkParams { b: 2.0, w_max: 1e9, t0: 1.0 };
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
