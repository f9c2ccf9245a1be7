//! Time Sliding Window rate estimator and markers (TSW2CM, TSW3CM).
//!
//! W. Fang, N. Seddigh, B. Nandy, "A Time Sliding Window Three Colour Marker
//! (TSWTCM)", RFC 2859, June 2000 (Experimental); the two-colour tagger is
//! D. Clark, W. Fang, "Explicit Allocation of Best-Effort Packet Delivery
//! Service", IEEE/ACM ToN 6(4), 1998, §3.3, as ns-2's `dsPolicy.cc`
//! (`TSW2CMPolicy`) implements it.
//!
//! - **Rate estimator** (RFC 2859 §3): state `avg_rate` (bytes per second),
//!   `t_front` (time of the last arrival) and the constant `win_length`.
//!   Initially `avg_rate = CTR`, `t_front = 0`. On each arrival of
//!   `pkt_size` bytes at `now`:
//!   `bytes_in_win = avg_rate·win_length`;
//!   `new_bytes = bytes_in_win + pkt_size`;
//!   `avg_rate = new_bytes / (now − t_front + win_length)`;
//!   `t_front = now`. The estimate is updated *before* the packet is marked.
//! - **TSW3CM marker** (RFC 2859 §4), parameters `ctr` (Committed Target
//!   Rate) and `ptr` (Peak Target Rate), `ptr ≥ ctr`:
//!   - `avg_rate ≤ CTR`: Green;
//!   - `CTR < avg_rate ≤ PTR`: Yellow with probability
//!     `P0 = (avg_rate − CTR)/avg_rate`, else Green;
//!   - `avg_rate > PTR`: Red with probability `P1 = (avg_rate − PTR)/avg_rate`,
//!     Yellow with probability `P2 = (PTR − CTR)/avg_rate`, else Green.
//! - **TSW2CM** (Clark & Fang §3.3): parameter `ctr` only; above CTR a packet
//!   is out of profile with probability `(avg_rate − CTR)/avg_rate`. As every
//!   two-colour meter here, out of profile is Red.
//!
//! One uniform draw `u ∈ [0, 1)` from the marker's own [`Rng`] decides a
//! packet: Red if `u < P1`, Yellow if `u < P1 + P2` (or `u < P0`), else Green.
//! No draw is taken while `avg_rate ≤ CTR`, so a conforming stream consumes no
//! randomness.
//!
//! **Units and arithmetic.** `ctr`, `ptr` are in bits per second, as every
//! rate in this crate (the RFC's estimator works in bytes per second, which
//! [`TswEstimator::avg_rate`] reports); `win_length` is a [`Time`]. The
//! estimator is real-valued by nature and uses `f64`; the sequence of
//! operations is fixed and involves no transcendental functions, so results
//! are bit-for-bit reproducible for a given seed.
//!
//! **Colour mode.** RFC 2859 defines a colour-blind marker only, so the
//! arriving colour is ignored.

use super::Meter;
use crate::packet::Colour;
use crate::rng::Rng;
use crate::time::Time;

/// The TSW rate estimator of RFC 2859 §3.
#[derive(Clone, Debug)]
pub struct TswEstimator {
    /// Window length, seconds.
    win_length: f64,
    /// Estimated rate, bytes per second.
    avg_rate: f64,
    /// Time of the last arrival.
    t_front: Time,
}

impl TswEstimator {
    /// An estimator with the given window, starting at `initial_rate` bytes
    /// per second (the RFC starts at CTR) with `t_front = 0`.
    pub fn new(win_length: Time, initial_rate: f64) -> Result<TswEstimator, String> {
        if win_length == Time::ZERO {
            return Err("TSW win_length must be positive".into());
        }
        if !(initial_rate.is_finite() && initial_rate >= 0.0) {
            return Err(format!("TSW initial rate must be finite and >= 0, got {initial_rate}"));
        }
        Ok(TswEstimator { win_length: win_length.as_secs_f64(), avg_rate: initial_rate, t_front: Time::ZERO })
    }

    /// Accounts for `pkt_size` bytes arriving at `now`; returns the new
    /// `avg_rate` (bytes per second).
    pub fn update(&mut self, pkt_size: u32, now: Time) -> f64 {
        let bytes_in_win = self.avg_rate * self.win_length;
        let new_bytes = bytes_in_win + pkt_size as f64;
        let elapsed = now.saturating_sub(self.t_front).as_secs_f64();
        self.avg_rate = new_bytes / (elapsed + self.win_length);
        self.t_front = self.t_front.max(now);
        self.avg_rate
    }

    /// The current estimate, bytes per second.
    pub fn avg_rate(&self) -> f64 {
        self.avg_rate
    }

    /// The time of the last arrival.
    pub fn t_front(&self) -> Time {
        self.t_front
    }
}

/// TSW2CM parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tsw2cmParams {
    /// Committed Target Rate, bits per second.
    pub ctr: u64,
    /// The estimator's window.
    pub win_length: Time,
}

impl Tsw2cmParams {
    /// Checks the parameters; the message names the one at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.ctr == 0 {
            return Err("TSW2CM CTR must be positive (bits per second)".into());
        }
        if self.win_length == Time::ZERO {
            return Err("TSW2CM win_length must be positive".into());
        }
        Ok(())
    }
}

/// TSW3CM parameters, named as RFC 2859 names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tsw3cmParams {
    /// Committed Target Rate, bits per second.
    pub ctr: u64,
    /// Peak Target Rate, bits per second (at least CTR).
    pub ptr: u64,
    /// The estimator's window.
    pub win_length: Time,
}

impl Tsw3cmParams {
    /// Checks the parameters; the message names the one at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.ctr == 0 {
            return Err("TSW3CM CTR must be positive (bits per second)".into());
        }
        if self.ptr < self.ctr {
            return Err(format!("TSW3CM PTR ({} bit/s) must be at least CTR ({} bit/s)", self.ptr, self.ctr));
        }
        if self.win_length == Time::ZERO {
            return Err("TSW3CM win_length must be positive".into());
        }
        Ok(())
    }
}

/// Time Sliding Window two-colour marker.
#[derive(Clone, Debug)]
pub struct Tsw2cm {
    params: Tsw2cmParams,
    /// CTR in bytes per second.
    ctr: f64,
    estimator: TswEstimator,
    rng: Rng,
}

impl Tsw2cm {
    /// A TSW2CM drawing from `rng`, or why the parameters are unusable.
    pub fn new(params: Tsw2cmParams, rng: Rng) -> Result<Tsw2cm, String> {
        params.validate()?;
        let ctr = params.ctr as f64 / 8.0;
        let estimator = TswEstimator::new(params.win_length, ctr)?;
        Ok(Tsw2cm { params, ctr, estimator, rng })
    }

    pub fn params(&self) -> &Tsw2cmParams {
        &self.params
    }

    pub fn estimator(&self) -> &TswEstimator {
        &self.estimator
    }
}

impl Meter for Tsw2cm {
    fn meter(&mut self, size: u32, _colour: Colour, now: Time) -> Colour {
        let avg = self.estimator.update(size, now);
        if avg <= self.ctr {
            return Colour::Green;
        }
        let p0 = (avg - self.ctr) / avg;
        if self.rng.uniform() < p0 {
            Colour::Red
        } else {
            Colour::Green
        }
    }
}

/// Time Sliding Window three-colour marker (RFC 2859).
#[derive(Clone, Debug)]
pub struct Tsw3cm {
    params: Tsw3cmParams,
    /// CTR and PTR in bytes per second.
    ctr: f64,
    ptr: f64,
    estimator: TswEstimator,
    rng: Rng,
}

impl Tsw3cm {
    /// A TSW3CM drawing from `rng`, or why the parameters are unusable.
    pub fn new(params: Tsw3cmParams, rng: Rng) -> Result<Tsw3cm, String> {
        params.validate()?;
        let (ctr, ptr) = (params.ctr as f64 / 8.0, params.ptr as f64 / 8.0);
        let estimator = TswEstimator::new(params.win_length, ctr)?;
        Ok(Tsw3cm { params, ctr, ptr, estimator, rng })
    }

    pub fn params(&self) -> &Tsw3cmParams {
        &self.params
    }

    pub fn estimator(&self) -> &TswEstimator {
        &self.estimator
    }
}

impl Meter for Tsw3cm {
    fn meter(&mut self, size: u32, _colour: Colour, now: Time) -> Colour {
        let avg = self.estimator.update(size, now);
        if avg <= self.ctr {
            return Colour::Green;
        }
        let u = self.rng.uniform();
        if avg <= self.ptr {
            let p0 = (avg - self.ctr) / avg;
            if u < p0 {
                Colour::Yellow
            } else {
                Colour::Green
            }
        } else {
            let p1 = (avg - self.ptr) / avg;
            let p2 = (self.ptr - self.ctr) / avg;
            if u < p1 {
                Colour::Red
            } else if u < p1 + p2 {
                Colour::Yellow
            } else {
                Colour::Green
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Colour::*;

    const MBPS: u64 = 1_000_000;

    /// Feeds `n` packets of `size` bytes at `rate_bps`, the first one gap
    /// after t = 0; returns the colour counts [green, yellow, red] of the
    /// packets after the first `skip`.
    fn cbr(m: &mut impl Meter, rate_bps: u64, size: u32, n: u64, skip: u64) -> [u64; 3] {
        let gap = Time::transmission(size, rate_bps).as_nanos();
        let mut counts = [0u64; 3];
        for k in 1..=n {
            let c = m.meter(size, Green, Time(k * gap));
            if k > skip {
                counts[c as usize] += 1;
            }
        }
        counts
    }

    fn tsw2(ctr: u64) -> Tsw2cm {
        Tsw2cm::new(Tsw2cmParams { ctr, win_length: Time::from_millis(100) }, Rng::derive(1, "tsw2")).unwrap()
    }

    fn tsw3(ctr: u64, ptr: u64) -> Tsw3cm {
        Tsw3cm::new(Tsw3cmParams { ctr, ptr, win_length: Time::from_millis(100) }, Rng::derive(1, "tsw3")).unwrap()
    }

    #[test]
    fn rejects_bad_parameters() {
        let rng = || Rng::derive(0, "x");
        let w = Time::from_millis(100);
        assert_eq!(
            Tsw3cm::new(Tsw3cmParams { ctr: 2_000, ptr: 1_000, win_length: w }, rng()).unwrap_err(),
            "TSW3CM PTR (1000 bit/s) must be at least CTR (2000 bit/s)"
        );
        assert!(Tsw3cm::new(Tsw3cmParams { ctr: 0, ptr: 1, win_length: w }, rng()).unwrap_err().contains("CTR"));
        assert!(Tsw3cm::new(Tsw3cmParams { ctr: 1, ptr: 1, win_length: Time::ZERO }, rng())
            .unwrap_err()
            .contains("win_length"));
        assert!(Tsw2cm::new(Tsw2cmParams { ctr: 0, win_length: w }, rng()).unwrap_err().contains("CTR"));
        assert!(Tsw2cm::new(Tsw2cmParams { ctr: 1, win_length: Time::ZERO }, rng())
            .unwrap_err()
            .contains("win_length"));
    }

    #[test]
    fn estimator_step_matches_the_rfc_formula() {
        // CTR 1 Mb/s = 125 000 B/s, win_length 0.1 s; 1000 bytes 4 ms later:
        // (125 000·0.1 + 1000)/(0.004 + 0.1) = 13 500/0.104 = 129 807.69… B/s.
        let mut e = TswEstimator::new(Time::from_millis(100), 125_000.0).unwrap();
        let r = e.update(1_000, Time::from_millis(4));
        assert!((r - 13_500.0 / 0.104).abs() < 1e-9, "{r}");
        assert_eq!(e.t_front(), Time::from_millis(4));
    }

    #[test]
    fn estimator_converges_geometrically_to_the_true_rate() {
        // A constant stream of rate R (B/s) with gap g is a fixed point
        // (avg = pkt/g = R), and the error shrinks by W/(W + g) per packet:
        // avg_n − R = (CTR − R)·(W/(W + g))^n.
        let (w, g, size) = (0.1f64, 0.004f64, 1_000u32);
        let (ctr, rate) = (125_000.0, 250_000.0);
        let mut e = TswEstimator::new(Time::from_millis(100), ctr).unwrap();
        for n in 1..=2_000u64 {
            let avg = e.update(size, Time::from_millis(4 * n));
            let expected = rate + (ctr - rate) * (w / (w + g)).powi(n as i32);
            assert!((avg - expected).abs() <= 1e-9 * rate, "n = {n}: {avg} vs {expected}");
        }
        assert!((e.avg_rate() - rate).abs() < 1e-6, "{}", e.avg_rate());
    }

    #[test]
    fn stream_at_half_ctr_is_all_green() {
        // 0.5 Mb/s against CTR 1 Mb/s: the estimate falls from CTR towards
        // 62 500 B/s and never exceeds CTR.
        let mut m = tsw2(MBPS);
        assert_eq!(cbr(&mut m, MBPS / 2, 1_000, 5_000, 0), [5_000, 0, 0]);
        let mut m = tsw3(MBPS, 3 * MBPS / 2);
        assert_eq!(cbr(&mut m, MBPS / 2, 1_000, 5_000, 0), [5_000, 0, 0]);
    }

    #[test]
    fn tsw2cm_at_twice_ctr_marks_half() {
        // Expected out-of-profile fraction (R − CTR)/R = (2 − 1)/2 = 0.5 once
        // the estimate has converged (skip the first 500 packets = 2 s = 20 W).
        let mut m = tsw2(MBPS);
        let [g, y, r] = cbr(&mut m, 2 * MBPS, 1_000, 40_500, 500);
        assert_eq!(y, 0);
        let frac = r as f64 / (g + r) as f64;
        assert!((frac - 0.5).abs() < 0.01, "red fraction {frac}");
        assert!((m.estimator().avg_rate() - 250_000.0).abs() < 1e-6);
    }

    #[test]
    fn tsw3cm_above_ptr_splits_three_ways() {
        // CTR 1, PTR 1.5, R 2 Mb/s: P1 = 0.5/2 = 0.25 red,
        // P2 = 0.5/2 = 0.25 yellow, 0.5 green.
        let mut m = tsw3(MBPS, 3 * MBPS / 2);
        let [g, y, r] = cbr(&mut m, 2 * MBPS, 1_000, 40_500, 500);
        let n = (g + y + r) as f64;
        assert!((r as f64 / n - 0.25).abs() < 0.01, "red {r}/{n}");
        assert!((y as f64 / n - 0.25).abs() < 0.01, "yellow {y}/{n}");
        assert!((g as f64 / n - 0.5).abs() < 0.01, "green {g}/{n}");
    }

    #[test]
    fn tsw3cm_between_ctr_and_ptr_marks_yellow_only() {
        // R = 1.25 Mb/s: P0 = 0.25/1.25 = 0.2 yellow, no red.
        let mut m = tsw3(MBPS, 3 * MBPS / 2);
        let [g, y, r] = cbr(&mut m, 5 * MBPS / 4, 1_000, 40_500, 500);
        assert_eq!(r, 0);
        let frac = y as f64 / (g + y) as f64;
        assert!((frac - 0.2).abs() < 0.01, "yellow fraction {frac}");
    }

    #[test]
    fn same_seed_same_colours() {
        let run = || {
            let mut m = tsw3(MBPS, 3 * MBPS / 2);
            (1..=2_000u64).map(|k| m.meter(1_000, Green, Time::from_millis(3 * k))).collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn colour_blind() {
        let mut m = tsw3(MBPS, 3 * MBPS / 2);
        assert_eq!(m.meter(1_000, Red, Time::from_millis(16)), Green);
    }
}
