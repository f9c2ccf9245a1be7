//! ON/OFF sources, as ns-2's `POO_Traffic` (Pareto) and `EXPOO_Traffic`
//! (exponential) define them.
//!
//! During an ON period packets leave every `interval` (packet size at the
//! peak rate). At the start of each burst the burst length in packets is
//! drawn with mean `on_mean / interval` and rounded to the nearest integer
//! (at least one), and an OFF period with mean `off_mean` is added before the
//! burst's first packet. So the source starts with an OFF period, and its
//! long-run rate is `rate · on_mean / (on_mean + off_mean)`.
//!
//! Pareto draws use the scale `mean·(shape−1)/shape` (ns-2's convention),
//! so `shape` must exceed 1 for the mean to exist.

use phb::{Rng, Time};

/// The distribution of ON and OFF durations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Period {
    Pareto { shape: f64 },
    Exponential,
}

#[derive(Clone, Debug)]
pub struct OnOff {
    interval: Time,
    /// Mean burst length in packets.
    burst_mean: f64,
    off_mean_s: f64,
    period: Period,
    /// Packets left in the current burst.
    remaining: u64,
    rng: Rng,
}

impl OnOff {
    pub fn new(interval: Time, on_mean: Time, off_mean: Time, period: Period, rng: Rng) -> OnOff {
        OnOff {
            interval,
            burst_mean: on_mean.as_secs_f64() / interval.as_secs_f64(),
            off_mean_s: off_mean.as_secs_f64(),
            period,
            remaining: 0,
            rng,
        }
    }

    fn draw(&mut self, mean: f64) -> f64 {
        match self.period {
            Period::Pareto { shape } => self.rng.pareto(mean, shape),
            Period::Exponential => self.rng.exponential(mean),
        }
    }

    #[inline]
    pub fn next_gap(&mut self) -> Time {
        let mut gap = self.interval;
        if self.remaining == 0 {
            self.remaining = ((self.draw(self.burst_mean) + 0.5) as u64).max(1);
            gap += Time::from_secs_f64(self.draw(self.off_mean_s));
        }
        self.remaining -= 1;
        gap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long_run_rate(period: Period) -> f64 {
        // 500-byte packets at 1 Mb/s: interval 4 ms; ON 50 ms, OFF 50 ms.
        let mut s = OnOff::new(
            Time::from_millis(4),
            Time::from_millis(50),
            Time::from_millis(50),
            period,
            Rng::derive(9, "onoff"),
        );
        let mut t = Time::ZERO;
        let mut packets = 0u64;
        while t < Time::from_secs(20_000) {
            t += s.next_gap();
            packets += 1;
        }
        packets as f64 * 500.0 * 8.0 / t.as_secs_f64()
    }

    #[test]
    fn exponential_on_off_averages_half_the_peak_rate() {
        // Each burst also includes one interval per packet beyond ON, as in
        // ns-2: the mean gap per burst is off + n·interval with n ≈ on/interval.
        let rate = long_run_rate(Period::Exponential);
        assert!((rate - 500_000.0).abs() < 0.02 * 500_000.0, "rate {rate}");
    }

    #[test]
    fn pareto_on_off_averages_half_the_peak_rate() {
        // Heavy tails converge slowly: a looser bound.
        let rate = long_run_rate(Period::Pareto { shape: 1.5 });
        assert!((rate - 500_000.0).abs() < 0.08 * 500_000.0, "rate {rate}");
    }

    #[test]
    fn bursts_are_at_least_one_packet() {
        let mut s = OnOff::new(
            Time::from_millis(100),
            Time::from_millis(1),
            Time::from_millis(10),
            Period::Exponential,
            Rng::derive(1, "x"),
        );
        for _ in 0..100 {
            assert!(s.next_gap() >= Time::from_millis(100));
        }
    }
}
