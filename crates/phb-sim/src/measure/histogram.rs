//! A log-linear delay histogram.
//!
//! Values (nanoseconds) below 128 have a bucket each; above, each power-of-two
//! range is split into 128 equal buckets, so a reported percentile lies within
//! 1/128 (0.8%) of the true sample. Ranges are allocated only when a value
//! falls in them, so memory follows the spread of the delays, not the number
//! of samples. Mean (from an exact sum) and maximum are exact.

const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;

#[derive(Clone, Debug, Default)]
pub struct DelayHistogram {
    /// `ranges[k]` counts values in `[2^(k+6), 2^(k+7))` for k ≥ 1, and
    /// `ranges[0]` the values below 128 directly.
    ranges: Vec<Option<Box<[u64; SUB]>>>,
    count: u64,
    sum: u128,
    max: u64,
}

impl DelayHistogram {
    #[inline]
    fn locate(value: u64) -> (usize, usize) {
        if value < SUB as u64 {
            return (0, value as usize);
        }
        let msb = 63 - value.leading_zeros(); // >= SUB_BITS
        let shift = msb - SUB_BITS;
        let range = (shift + 1) as usize;
        let sub = ((value >> shift) as usize) & (SUB - 1);
        (range, sub)
    }

    /// The middle of a bucket, as a representative value.
    fn representative(range: usize, sub: usize) -> f64 {
        if range == 0 {
            return sub as f64;
        }
        let shift = (range - 1) as u32;
        let low = ((SUB + sub) as u64) << shift;
        low as f64 + ((1u64 << shift) as f64 - 1.0) / 2.0
    }

    #[inline]
    pub fn record(&mut self, value: u64) {
        let (range, sub) = Self::locate(value);
        if range >= self.ranges.len() {
            self.ranges.resize_with(range + 1, || None);
        }
        self.ranges[range].get_or_insert_with(|| Box::new([0; SUB]))[sub] += 1;
        self.count += 1;
        self.sum += value as u128;
        self.max = self.max.max(value);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The exact sum of the recorded values.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// The smallest recorded value with at least `q` of the samples at or
    /// below it (nearest-rank), to within the bucket width.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (range, buckets) in self.ranges.iter().enumerate() {
            let Some(buckets) = buckets else { continue };
            for (sub, &n) in buckets.iter().enumerate() {
                seen += n;
                if seen >= rank {
                    return Some(Self::representative(range, sub).min(self.max as f64));
                }
            }
        }
        Some(self.max as f64)
    }

    pub fn clear(&mut self) {
        *self = DelayHistogram::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_values_are_exact() {
        let mut h = DelayHistogram::default();
        for v in [0, 1, 2, 3, 100] {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(2.0));
        assert_eq!(h.quantile(1.0), Some(100.0));
        assert_eq!(h.mean(), Some(21.2));
        assert_eq!(h.max(), Some(100));
    }

    #[test]
    fn empty_histogram_has_no_statistics() {
        let h = DelayHistogram::default();
        assert_eq!((h.mean(), h.quantile(0.5), h.max()), (None, None, None));
    }

    proptest! {
        #[test]
        fn quantiles_are_within_a_bucket_of_the_exact_rank(mut values in proptest::collection::vec(0u64..10_000_000_000, 1..500), q in 0.0f64..1.0) {
            let mut h = DelayHistogram::default();
            for &v in &values {
                h.record(v);
            }
            values.sort();
            let rank = ((q * values.len() as f64).ceil() as usize).max(1);
            let exact = values[rank - 1] as f64;
            let got = h.quantile(q).unwrap();
            prop_assert!((got - exact).abs() <= exact / 128.0 + 0.5, "q {} exact {} got {}", q, exact, got);
        }
    }
}
