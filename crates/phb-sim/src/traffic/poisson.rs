//! Poisson arrivals: independent, exponentially distributed gaps whose mean
//! is the transmission time of a packet at the mean rate, so that the
//! source's long-run rate is `rate`. The first packet follows the start by
//! such a gap too (the process is memoryless).
//!
//! ns-2 has no Poisson source of its own (an `Application/Traffic/
//! Exponential` with a zero `burst_time_` comes close); this one serves the
//! sensitivity studies that contrast smooth arrivals with Pareto bursts.

use phb::{Rng, Time};

#[derive(Clone, Debug)]
pub struct Poisson {
    mean_gap_s: f64,
    rng: Rng,
}

impl Poisson {
    /// A source whose gaps average `mean_gap`.
    pub fn new(mean_gap: Time, rng: Rng) -> Poisson {
        Poisson { mean_gap_s: mean_gap.as_secs_f64(), rng }
    }

    #[inline]
    pub fn next_gap(&mut self) -> Time {
        Time::from_secs_f64(self.rng.exponential(self.mean_gap_s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_exponential_with_the_mean_of_the_rate() {
        // 500-byte packets at 1 Mb/s on average: mean gap 4 ms.
        let mut s = Poisson::new(Time::from_millis(4), Rng::derive(5, "poisson"));
        let gaps: Vec<f64> = (0..200_000).map(|_| s.next_gap().as_secs_f64()).collect();
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
        assert!((mean - 0.004).abs() < 0.01 * 0.004, "mean {mean}");
        // An exponential's standard deviation equals its mean (a CBR's is 0,
        // an ON/OFF source's far larger).
        assert!((var.sqrt() / mean - 1.0).abs() < 0.02, "cv {}", var.sqrt() / mean);
        // P(gap > mean) = 1/e.
        let above = gaps.iter().filter(|&&g| g > 0.004).count() as f64 / n;
        assert!((above - (-1.0f64).exp()).abs() < 0.005, "{above}");
    }
}
