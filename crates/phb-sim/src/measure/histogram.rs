//! A log-linear delay histogram.
//!
//! Values (nanoseconds) below 128 have a bucket each; above, each power-of-two
//! range is split into 128 equal buckets, so a reported percentile lies within
//! 1/128 (0.8%) of the true sample. Storage is allocated only where values
//! fall, a chunk of 16 buckets (128 bytes) at a time, found through an
//! index of two bytes per chunk up to the largest value, so memory follows
//! the spread of the delays, not the number of samples (a range touched by
//! one value costs a chunk, not its 128 buckets), and a record is two
//! array look-ups. A value of 0 (a packet that found its queue empty and
//! its transmitter free: most packets at a lightly loaded port) is counted
//! in the histogram itself, not in its chunk, so recording it reads no
//! other memory (at 100,000 pairs the index and the chunk were two cache
//! misses per packet at every access link). Mean (from an exact sum) and
//! maximum are exact.
//!
//! [`DelayHistogram::coarse_buckets`] gives the distribution itself, with
//! eight buckets merged into one (16 per power of two: 6.25% wide), for the
//! `delay_histogram` table.

const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;
/// Buckets merged into one by [`DelayHistogram::coarse_buckets`].
const MERGED: usize = 8;
/// Buckets allocated together (a multiple of `MERGED`).
const CHUNK: usize = 16;
/// Chunks in a range.
const CHUNKS: usize = SUB / CHUNK;

#[derive(Clone, Debug, Default)]
pub struct DelayHistogram {
    /// Values of 0: bucket 0, which `chunks` (and `index`) leave out.
    zeros: u64,
    /// Per chunk of `CHUNK` buckets, in ascending order of value (chunk `c`
    /// of range `k` at `k·CHUNKS + c`; range `k ≥ 1` counts values in
    /// `[2^(k+6), 2^(k+7))`, range 0 the values below 128 directly): 0 if
    /// no value fell in it, else one more than its place in `chunks`.
    index: Vec<u16>,
    /// The chunks' bucket counts, in the order they were first needed.
    chunks: Vec<[u64; CHUNK]>,
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
        self.count += 1;
        if value == 0 {
            self.zeros += 1;
            return;
        }
        let (range, sub) = Self::locate(value);
        let slot = range * CHUNKS + sub / CHUNK;
        if slot >= self.index.len() {
            self.index.resize(slot + 1, 0);
        }
        if self.index[slot] == 0 {
            // Grown one chunk at a time: a histogram keeps no spare chunks.
            self.chunks.reserve_exact(1);
            self.chunks.push([0; CHUNK]);
            self.index[slot] = self.chunks.len() as u16;
        }
        self.chunks[self.index[slot] as usize - 1][sub % CHUNK] += 1;
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
        for (range, first, buckets) in self.counted_chunks() {
            for (j, &n) in buckets.iter().enumerate() {
                seen += n;
                if seen >= rank {
                    return Some(Self::representative(range, first + j).min(self.max as f64));
                }
            }
        }
        Some(self.max as f64)
    }

    /// The chunks that count values, in ascending order of value: `(range,
    /// first bucket, counts)`, the zeros in the first chunk's bucket 0.
    /// Buckets of absent chunks count nothing.
    fn counted_chunks(&self) -> impl Iterator<Item = (usize, usize, [u64; CHUNK])> + '_ {
        let first_allocated = self.index.first().is_some_and(|&at| at > 0);
        let zeros_alone = (self.zeros > 0 && !first_allocated).then_some((0, 0, [0; CHUNK]));
        zeros_alone
            .into_iter()
            .chain(
                self.index
                    .iter()
                    .enumerate()
                    .filter(|(_, &at)| at > 0)
                    .map(|(slot, &at)| (slot / CHUNKS, slot % CHUNKS * CHUNK, self.chunks[at as usize - 1])),
            )
            .map(|(range, first, mut buckets)| {
                if (range, first) == (0, 0) {
                    buckets[0] += self.zeros;
                }
                (range, first, buckets)
            })
    }

    pub fn clear(&mut self) {
        *self = DelayHistogram::default();
    }

    /// The non-empty buckets, eight merged into one, in ascending order:
    /// `(lower, upper, count)`, every counted value in `[lower, upper)`
    /// nanoseconds. Below 128 ns the buckets are 8 ns wide; above, each
    /// power-of-two range `[2^k, 2^(k+1))` has 16 of width `2^k / 16`.
    pub fn coarse_buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counted_chunks().flat_map(|(range, start, buckets)| {
            (0..CHUNK / MERGED).filter_map(move |c| {
                let count: u64 = buckets[c * MERGED..(c + 1) * MERGED].iter().sum();
                let first = (start + c * MERGED) as u64;
                let (lower, upper) = match range {
                    0 => (first, first + MERGED as u64),
                    _ => {
                        let shift = range as u32 - 1;
                        ((SUB as u64 + first) << shift, (SUB as u64 + first + MERGED as u64) << shift)
                    }
                };
                (count > 0).then_some((lower, upper, count))
            })
        })
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

    #[test]
    fn coarse_buckets_of_small_and_large_values() {
        let mut h = DelayHistogram::default();
        for v in [0, 7, 8, 1000, 1010, 1_000_000] {
            h.record(v);
        }
        // 1000 and 1010 lie in [512, 1024): 16 buckets of 32 ns; [992, 1024) holds both.
        let buckets: Vec<_> = h.coarse_buckets().collect();
        assert_eq!(buckets, vec![(0, 8, 2), (8, 16, 1), (992, 1024, 2), (983_040, 1_015_808, 1)]);
    }

    #[test]
    fn zeros_count_in_the_first_bucket() {
        let mut h = DelayHistogram::default();
        for v in [0, 0, 0, 5] {
            h.record(v);
        }
        assert_eq!(h.coarse_buckets().collect::<Vec<_>>(), vec![(0, 8, 4)]);
        assert_eq!((h.quantile(0.75), h.quantile(1.0), h.mean()), (Some(0.0), Some(5.0), Some(1.25)));
        let mut only_zeros = DelayHistogram::default();
        only_zeros.record(0);
        only_zeros.record(0);
        assert_eq!(only_zeros.coarse_buckets().collect::<Vec<_>>(), vec![(0, 8, 2)]);
        assert_eq!((only_zeros.quantile(0.5), only_zeros.max()), (Some(0.0), Some(0)));
    }

    /// Delays up to 10 s, half of them 0 (counted apart from the chunks).
    fn delays(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u64>> {
        proptest::collection::vec(prop_oneof![Just(0u64), 0u64..10_000_000_000], len)
    }

    proptest! {
        #[test]
        fn coarse_buckets_hold_every_value_once(values in delays(1..300)) {
            let mut h = DelayHistogram::default();
            for &v in &values {
                h.record(v);
            }
            let buckets: Vec<_> = h.coarse_buckets().collect();
            prop_assert_eq!(buckets.iter().map(|b| b.2).sum::<u64>(), values.len() as u64);
            for w in buckets.windows(2) {
                prop_assert!(w[0].1 <= w[1].0, "buckets overlap or are out of order: {:?}", w);
            }
            for (lower, upper, count) in &buckets {
                let inside = values.iter().filter(|&&v| *lower <= v && v < *upper).count() as u64;
                prop_assert_eq!(inside, *count, "bucket [{}, {})", lower, upper);
                prop_assert!((upper - lower) as f64 <= (*lower).max(128) as f64 / 16.0, "[{}, {}) is wider than 1/16", lower, upper);
            }
        }

        #[test]
        fn quantiles_are_within_a_bucket_of_the_exact_rank(mut values in delays(1..500), q in 0.0f64..1.0) {
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
