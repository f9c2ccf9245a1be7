//! Single-rate, two-colour token bucket meter.
//!
//! RFC 3290 ("An Informal Management Model for Diffserv Routers") §5.1.3,
//! the two-parameter token bucket meter, with the *strict* conformance of its
//! Appendix A; also RFC 2475 §2.3.3.1 (meters) and the token bucket that
//! RFC 2697 §1 calls the degenerate srTCM with EBS = 0.
//!
//! - **Parameters**: `rate` (RFC 3290's average rate; bits per second here)
//!   and `burst_size` (bytes), the bucket depth.
//! - **Token update**: the bucket starts full (`T = burst_size`) and gains
//!   `rate` tokens per second continuously, never exceeding `burst_size`.
//! - **Metering**: a packet of `B` bytes conforms if `T ≥ B`: it is Green and
//!   `T ← T − B`. Otherwise it is Red and `T` is unchanged (strict
//!   conformance: a packet never drives the bucket negative). A packet larger
//!   than `burst_size` is legal and always Red.
//! - Colour-blind only: no RFC defines a colour-aware single-rate two-colour
//!   meter, so the arriving colour is ignored.
//!
//! Used as a policer with [`ColourActions::policer`](super::ColourActions::policer)
//! (drop Red) or as a marker with any other [`ColourActions`](super::ColourActions).
//!
//! Tokens are integers in units of 1/(8·10⁹) byte, so refilling is exact.

use super::{accrued, units, Meter};
use crate::packet::Colour;
use crate::time::Time;

/// A token bucket's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucketParams {
    /// Token (fill) rate, bits per second.
    pub rate: u64,
    /// Bucket depth, bytes.
    pub burst_size: u64,
}

impl TokenBucketParams {
    /// Checks the parameters; the message names the one at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.rate == 0 {
            return Err("token bucket rate must be positive (bits per second)".into());
        }
        if self.burst_size == 0 {
            return Err("token bucket burst_size must be positive (bytes)".into());
        }
        Ok(())
    }
}

/// A single-rate two-colour token bucket.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    params: TokenBucketParams,
    depth: u128,
    /// Tokens, in `TOKEN_UNITS_PER_BYTE` units.
    tokens: u128,
    last: Time,
}

impl TokenBucket {
    /// A full bucket, or the reason the parameters are unusable.
    pub fn new(params: TokenBucketParams) -> Result<TokenBucket, String> {
        params.validate()?;
        let depth = units(params.burst_size);
        Ok(TokenBucket { params, depth, tokens: depth, last: Time::ZERO })
    }

    pub fn params(&self) -> &TokenBucketParams {
        &self.params
    }

    /// Tokens in the bucket after the last update, in bytes (for inspection).
    pub fn tokens(&self) -> f64 {
        self.tokens as f64 / super::TOKEN_UNITS_PER_BYTE as f64
    }

    fn refill(&mut self, now: Time) {
        let add = accrued(self.params.rate, self.last, now);
        self.tokens = self.tokens.saturating_add(add).min(self.depth);
        self.last = self.last.max(now);
    }
}

impl Meter for TokenBucket {
    fn meter(&mut self, size: u32, _colour: Colour, now: Time) -> Colour {
        self.refill(now);
        let b = units(size as u64);
        if self.tokens >= b {
            self.tokens -= b;
            Colour::Green
        } else {
            Colour::Red
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mark::{Action, ColourActions};
    use Colour::*;

    /// 8000 bit/s = exactly one byte per millisecond; depth 1000 bytes.
    fn tb() -> TokenBucket {
        TokenBucket::new(TokenBucketParams { rate: 8_000, burst_size: 1_000 }).unwrap()
    }

    #[test]
    fn rejects_zero_rate_and_zero_depth() {
        let e = TokenBucket::new(TokenBucketParams { rate: 0, burst_size: 1 }).unwrap_err();
        assert!(e.contains("rate"), "{e}");
        let e = TokenBucket::new(TokenBucketParams { rate: 1, burst_size: 0 }).unwrap_err();
        assert!(e.contains("burst_size"), "{e}");
    }

    #[test]
    fn burst_of_exactly_the_depth_then_the_rate_conforms() {
        let mut m = tb();
        // Ten 100-byte packets at t = 0 use exactly the 1000-byte bucket.
        for _ in 0..10 {
            assert_eq!(m.meter(100, Green, Time::ZERO), Green);
        }
        assert_eq!(m.tokens(), 0.0);
        // The eleventh finds it exactly empty.
        assert_eq!(m.meter(100, Green, Time::ZERO), Red);
        // 1 ns short of 100 ms there are 99.999999 bytes: not enough.
        assert_eq!(m.meter(100, Green, Time::from_nanos(99_999_999)), Red);
        // Then 100 bytes every 100 ms (exactly the rate) all conform.
        for k in 1..=100u64 {
            assert_eq!(m.meter(100, Green, Time::from_millis(100 * k)), Green, "packet {k}");
            assert_eq!(m.tokens(), 0.0);
        }
        // One byte more than the rate is out of profile.
        assert_eq!(m.meter(101, Green, Time::from_millis(10_100)), Red);
        assert_eq!(m.meter(100, Green, Time::from_millis(10_100)), Green);
    }

    #[test]
    fn bucket_never_exceeds_its_depth() {
        let mut m = tb();
        // After an hour idle the bucket holds 1000 bytes, not 3.6 MB.
        assert_eq!(m.meter(1_000, Green, Time::from_secs(3_600)), Green);
        assert_eq!(m.meter(1, Green, Time::from_secs(3_600)), Red);
    }

    #[test]
    fn packet_larger_than_the_bucket_is_always_red_and_costs_nothing() {
        let mut m = tb();
        for s in 0..5 {
            assert_eq!(m.meter(1_001, Green, Time::from_secs(s)), Red);
        }
        assert_eq!(m.tokens(), 1_000.0);
    }

    #[test]
    fn colour_blind_and_usable_as_policer() {
        let mut m = tb();
        assert_eq!(m.meter(1_000, Red, Time::ZERO), Green);
        let c = m.meter(1, Green, Time::ZERO);
        assert_eq!(ColourActions::policer().action(c), Action::Drop);
    }
}
