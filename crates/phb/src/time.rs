//! Time in integer nanoseconds.
//!
//! One type serves for instants (since the start of a run) and durations, as
//! in the papers' ns-2 runs, where both are seconds on one clock. Integer time
//! keeps runs deterministic and event ordering exact.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Nanoseconds since the start of the run, or a duration in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Time {
        Time(ns)
    }
    pub const fn from_micros(us: u64) -> Time {
        Time(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Time {
        Time(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative or NaN input gives zero.
    pub fn from_secs_f64(s: f64) -> Time {
        if s.is_nan() || s <= 0.0 {
            Time(0)
        } else {
            Time((s * 1e9).round() as u64)
        }
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time to serialise `bytes` onto a link of `rate_bps` bits per second,
    /// rounded up to a whole nanosecond so that a link never exceeds its rate.
    pub fn transmission(bytes: u32, rate_bps: u64) -> Time {
        // bytes · 8·10⁹ fits 64 bits (any packet: up to 2.3·10⁹ bytes), a
        // cheaper division than 128 bits.
        match (bytes as u64).checked_mul(8_000_000_000) {
            Some(bits) => Time(bits.div_ceil(rate_bps)),
            None => Time((bytes as u128 * 8_000_000_000).div_ceil(rate_bps as u128) as u64),
        }
    }
    pub fn saturating_sub(self, other: Time) -> Time {
        Time(self.0.saturating_sub(other.0))
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time(self.0 + rhs.0)
    }
}

impl AddAssign for Time {
    fn add_assign(&mut self, rhs: Time) {
        self.0 += rhs.0;
    }
}

impl Sub for Time {
    type Output = Time;
    fn sub(self, rhs: Time) -> Time {
        Time(self.0 - rhs.0)
    }
}

/// In the units scenario files use, exactly: the largest of `s`, `ms`, `us`
/// and `ns` that the value reaches, with the decimals it needs (`10s`,
/// `1.5s`, `100ms`, `250ns`, `0s`). Messages print times this way, so a user
/// reads back what they could have written.
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        let (unit, per, digits) = match ns {
            0 | 1_000_000_000.. => ("s", 1_000_000_000, 9),
            1_000_000.. => ("ms", 1_000_000, 6),
            1_000.. => ("us", 1_000, 3),
            _ => ("ns", 1, 0),
        };
        let (whole, fraction) = (ns / per, ns % per);
        if fraction == 0 {
            write!(f, "{whole}{unit}")
        } else {
            let decimals = format!("{fraction:0digits$}");
            write!(f, "{whole}.{}{unit}", decimals.trim_end_matches('0'))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmission_time_of_a_500_byte_packet_at_10_mbps_is_400_us() {
        assert_eq!(Time::transmission(500, 10_000_000), Time::from_micros(400));
    }

    #[test]
    fn transmission_time_rounds_up() {
        // 1 byte at 3 bit/s = 2.666.. s
        assert_eq!(Time::transmission(1, 3), Time(2_666_666_667));
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(Time::from_secs_f64(0.0125), Time::from_micros(12_500));
        assert_eq!(Time::from_millis(1500).as_secs_f64(), 1.5);
        assert_eq!(Time::from_secs_f64(-1.0), Time::ZERO);
    }

    #[test]
    fn display_uses_scenario_units_exactly() {
        let shown = |ns: u64| Time(ns).to_string();
        assert_eq!(shown(0), "0s");
        assert_eq!(shown(10_000_000_000), "10s");
        assert_eq!(shown(1_500_000_000), "1.5s");
        assert_eq!(shown(1_234_567_891), "1.234567891s");
        assert_eq!(shown(100_000_000), "100ms");
        assert_eq!(shown(1_500_000), "1.5ms");
        assert_eq!(shown(10_000), "10us");
        assert_eq!(shown(1_001), "1.001us");
        assert_eq!(shown(250), "250ns");
        assert_eq!(shown(u64::MAX), "18446744073.709551615s");
    }
}
