//! Forced loss ratio: a buffer whose drop probability is a multiple of the
//! one another buffer's RED computes.
//!
//! V. Firoiu, X. Zhang, Y. Guo, "Best Effort Differentiated Services:
//! Trade-off Service Differentiation for Elastic Applications", IEEE ICT
//! 2001 — Section V.B (BEDS scheduling with forced loss ratio) and V.C
//! (with forced delay and loss ratio): a TCP packet is dropped by the TCP
//! queue's RED; a UDP packet is dropped with probability
//!
//! ```text
//! p_UDP = λ · p_TCP
//! ```
//!
//! `p_TCP` being "the drop rate calculated from RED control function in TCP
//! queue" at that moment, `λ` the preset loss ratio. Scheduled with strict
//! priority to the UDP queue (V.B) or with BEDS' weights (V.C).
//!
//! This is a *coupling* between two buffers of a classful qdisc, not a BEDS
//! special case: the policy names the buffer it reads ([`LossRatioParams::reads`]),
//! which must be managed by RED or Adaptive RED, and is itself the buffer's
//! policy (what admits or drops an arrival to it).
//!
//! ## Which `p_TCP` ("current", [`Reading`])
//!
//! The reference buffer's state is read at the coupled arrival, without
//! changing it (its average moves only with its own arrivals):
//!
//! - the average as it stands, decayed over an idle period in progress as
//!   RED's next arrival would decay it (`(1 − w_q)^m`, [`crate::aqm::red`]);
//! - `p_TCP = 0` below `min_th` and 1 at or above the forced threshold
//!   (`max_th`, or `2·max_th` when gentle);
//! - between them, by [`Reading`]:
//!   - [`Reading::Spaced`] (the default): the probability RED would apply to
//!     its *next* arrival, `p_a = p_b/(2 − count·p_b)` with ns-2's `wait`
//!     (`p_b/(1 − count·p_b)` without): ns-2's `v_prob`, RED's own "drop
//!     probability" at that moment. Arrivals that sample RED's state at
//!     random instants see, on average, RED's actual drop rate, so the
//!     coupled loss rate is `λ` times the reference's loss rate;
//!   - [`Reading::Curve`]: `p_b = H(avg)`, the control function at the
//!     average, without RED's count spacing. RED's spacing makes its actual
//!     drop rate differ from `p_b` (with `wait`, drops come every 1/p_b to
//!     2/p_b arrivals: a rate of about `(2/3)·p_b`; without, about `2·p_b`),
//!     so this reading gives a loss ratio of about `1.5·λ` against a RED
//!     with `wait` (`0.5·λ` without).
//!
//! ## The decision
//!
//! An arrival that does not fit the buffer's `limit` is dropped
//! ([`crate::packet::DropReason::Overflow`]; drop-tail's rule, the arrival
//! must fit). Otherwise, with `p = min(1, λ·p_TCP)`: `p = 1` drops it
//! ([`crate::packet::DropReason::ForcedDrop`]), `0 < p < 1` drops it with
//! probability `p` ([`crate::packet::DropReason::EarlyDrop`]), one uniform
//! draw from the buffer's own random stream.

use crate::aqm::{Limit, LimitRule};
use crate::packet::DropReason;
use crate::rng::Rng;

/// What a coupled buffer reads of the RED it follows (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reading {
    /// RED's probability for its next arrival, count spacing included.
    #[default]
    Spaced,
    /// RED's control function `p_b = H(avg)`, without count spacing.
    Curve,
}

impl Reading {
    /// The scenario word for it.
    pub fn name(self) -> &'static str {
        match self {
            Reading::Spaced => "spaced",
            Reading::Curve => "curve",
        }
    }
}

/// The forced loss ratio's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct LossRatioParams {
    /// `λ`, the loss ratio: the coupled buffer drops with `λ` times the
    /// reference's probability (≥ 0, finite).
    pub lambda: f64,
    /// The buffer whose RED is read: an index into the qdisc's buffers
    /// (another buffer, managed by RED or Adaptive RED).
    pub reads: usize,
    /// Hard limit of the coupled buffer.
    pub limit: Limit,
    /// What is read of the reference RED.
    pub reading: Reading,
}

impl LossRatioParams {
    /// Checks `λ` and the limit; the message names the parameter. (`reads`
    /// is checked by the qdisc, which knows its buffers.)
    pub fn validate(&self) -> Result<(), String> {
        if !(self.lambda.is_finite() && self.lambda >= 0.0) {
            return Err(format!("lambda must be finite and >= 0, got {}", self.lambda));
        }
        self.limit.validate()
    }
}

/// A buffer coupled to another's RED (see the module docs).
#[derive(Clone, Debug)]
pub struct LossRatio {
    params: LossRatioParams,
    rng: Rng,
    /// `min(1, λ·p_TCP)` at the last arrival that fitted the buffer.
    last_p: f64,
}

impl LossRatio {
    /// Drop-tail's rule for the hard limit: the arrival must fit.
    pub const LIMIT_RULE: LimitRule = LimitRule::Fits;

    pub fn new(params: LossRatioParams, rng: Rng) -> LossRatio {
        LossRatio { params, rng, last_p: 0.0 }
    }

    pub fn params(&self) -> &LossRatioParams {
        &self.params
    }

    /// The buffer it reads.
    #[inline]
    pub fn reads(&self) -> usize {
        self.params.reads
    }

    /// What it reads.
    #[inline]
    pub fn reading(&self) -> Reading {
        self.params.reading
    }

    /// `min(1, λ·p_TCP)` at the last arrival that fitted the buffer.
    pub fn last_probability(&self) -> f64 {
        self.last_p
    }

    /// A packet of `size` bytes arrives at the coupled buffer, which holds
    /// `pkts` packets of `bytes` bytes, while the reference RED's
    /// probability is `p_ref` (read as [`Self::reading`] says). Returns why
    /// it must be dropped, or `None` to admit it.
    #[inline]
    pub fn on_arrival(&mut self, p_ref: f64, pkts: u64, bytes: u64, size: u32) -> Option<DropReason> {
        if !self.params.limit.admits(Self::LIMIT_RULE, pkts, bytes, size) {
            return Some(DropReason::Overflow);
        }
        let p = (self.params.lambda * p_ref).min(1.0);
        self.last_p = p;
        if p >= 1.0 {
            Some(DropReason::ForcedDrop)
        } else if p > 0.0 && self.rng.uniform() < p {
            Some(DropReason::EarlyDrop)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coupled(lambda: f64, limit: Limit) -> LossRatio {
        LossRatio::new(
            LossRatioParams { lambda, reads: 0, limit, reading: Reading::Spaced },
            Rng::derive(3, "loss-ratio-test"),
        )
    }

    #[test]
    fn validation_names_the_parameter() {
        let ok = LossRatioParams { lambda: 2.0, reads: 0, limit: Limit::Packets(10), reading: Reading::Spaced };
        assert_eq!(ok.validate(), Ok(()));
        assert!(LossRatioParams { lambda: -1.0, ..ok.clone() }.validate().unwrap_err().starts_with("lambda"));
        assert!(LossRatioParams { lambda: f64::NAN, ..ok.clone() }.validate().unwrap_err().starts_with("lambda"));
        assert!(LossRatioParams { limit: Limit::Bytes(0), ..ok }.validate().unwrap_err().contains("limit"));
    }

    /// λ = 2 and p_TCP = 0.01: 2% of 200 000 arrivals dropped (within 3
    /// standard deviations, 0.0003), all early drops. p_TCP = 0.5 or more:
    /// every arrival is a forced drop. p_TCP = 0: none, and no draw.
    #[test]
    fn drops_lambda_times_the_reference_probability() {
        let mut c = coupled(2.0, Limit::Packets(1000));
        let n = 200_000;
        let drops: Vec<_> = (0..n).filter_map(|_| c.on_arrival(0.01, 5, 410, 82)).collect();
        let rate = drops.len() as f64 / n as f64;
        assert!((rate - 0.02).abs() < 3.0 * (0.02f64 * 0.98 / n as f64).sqrt(), "rate {rate}");
        assert!(drops.iter().all(|&r| r == DropReason::EarlyDrop));
        assert_eq!(c.last_probability(), 0.02);
        assert_eq!(c.on_arrival(0.5, 5, 410, 82), Some(DropReason::ForcedDrop));
        assert_eq!(c.on_arrival(0.7, 5, 410, 82), Some(DropReason::ForcedDrop));
        let before = c.rng.clone().uniform();
        assert_eq!(c.on_arrival(0.0, 5, 410, 82), None);
        assert_eq!(c.rng.uniform(), before, "p = 0 draws nothing");
    }

    /// The limit first: a full buffer overflows whatever the probability.
    #[test]
    fn an_arrival_that_does_not_fit_overflows() {
        let mut c = coupled(0.0, Limit::Packets(3));
        assert_eq!(c.on_arrival(0.0, 2, 164, 82), None);
        assert_eq!(c.on_arrival(0.0, 3, 246, 82), Some(DropReason::Overflow));
        let mut c = coupled(1.0, Limit::Bytes(1000));
        assert_eq!(c.on_arrival(0.0, 12, 984, 82), Some(DropReason::Overflow));
        assert_eq!(c.on_arrival(0.0, 11, 918, 82), None, "918 + 82 = 1000 fits");
    }
}
