//! Deterministic random streams.
//!
//! Every random consumer (a source, a RED queue, a TCP flow's start jitter)
//! owns one [`Rng`], derived from the run's seed and the consumer's stable
//! name, so that adding a component never perturbs the streams of the others
//! and the same seed always gives the same run.
//!
//! The generator is xoshiro256++ (Blackman & Vigna 2018), seeded through
//! SplitMix64 from a 64-bit FNV-1a hash of the name mixed with the seed. Both
//! are fixed here, independent of any crate's version, so results stay
//! byte-identical across builds.

/// A xoshiro256++ stream.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 64-bit FNV-1a: a stable, portable name hash, fed piece by piece (the
/// hash of a name written in parts is that of the whole).
struct Fnv1a64(u64);

impl Fnv1a64 {
    fn new() -> Fnv1a64 {
        Fnv1a64(0xCBF2_9CE4_8422_2325)
    }
}

impl std::fmt::Write for Fnv1a64 {
    fn write_str(&mut self, part: &str) -> std::fmt::Result {
        for &b in part.as_bytes() {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01B3);
        }
        Ok(())
    }
}

impl Rng {
    /// The stream for component `name` in a run seeded with `seed`.
    pub fn derive(seed: u64, name: &str) -> Rng {
        Rng::derive_fmt(seed, format_args!("{name}"))
    }

    /// [`Rng::derive`] for the name `name` formats to, without building
    /// the string (set-up derives one stream per port and per flow).
    pub fn derive_fmt(seed: u64, name: std::fmt::Arguments) -> Rng {
        let mut hash = Fnv1a64::new();
        std::fmt::Write::write_fmt(&mut hash, name).expect("hashing cannot fail");
        let mut state = seed ^ hash.0.rotate_left(17);
        let mut s = [0u64; 4];
        for word in &mut s {
            *word = splitmix64(&mut state);
        }
        Rng { s }
    }

    /// The next 64 uniformly distributed bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = (self.s[0].wrapping_add(self.s[3])).rotate_left(23).wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform on [0, 1), with 53 bits of precision.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on (0, 1]: safe to take the logarithm of.
    #[inline]
    pub fn uniform_open0(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// Exponentially distributed with the given mean.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.uniform_open0().ln()
    }

    /// Pareto distributed with the given mean and shape (> 1), as ns-2's
    /// `Random::pareto(scale, shape)` with scale = mean·(shape−1)/shape.
    #[inline]
    pub fn pareto(&mut self, mean: f64, shape: f64) -> f64 {
        let scale = mean * (shape - 1.0) / shape;
        scale / self.uniform_open0().powf(1.0 / shape)
    }

    /// Uniform on [low, high).
    #[inline]
    pub fn uniform_range(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.uniform()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_name_give_the_same_stream() {
        let mut a = Rng::derive(7, "source/voip.3");
        let mut b = Rng::derive(7, "source/voip.3");
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    /// The streams are fixed: seed 7 and `port/r1->r2` (FNV-1a, SplitMix64,
    /// xoshiro256++, computed apart) give this first word, however the
    /// name is written.
    #[test]
    fn streams_are_pinned_and_names_may_be_formatted() {
        const FIRST: u64 = 0x82ff_a92c_12fe_cd2d;
        assert_eq!(Rng::derive(7, "port/r1->r2").next_u64(), FIRST);
        let (a, b) = ("r1", "r2");
        assert_eq!(Rng::derive_fmt(7, format_args!("port/{a}->{b}")).next_u64(), FIRST);
    }

    #[test]
    fn names_and_seeds_separate_streams() {
        let a = Rng::derive(7, "a").next_u64();
        assert_ne!(a, Rng::derive(7, "b").next_u64());
        assert_ne!(a, Rng::derive(8, "a").next_u64());
    }

    #[test]
    fn sample_means_match_their_distributions() {
        let mut rng = Rng::derive(1, "means");
        let n = 200_000;
        let u: f64 = (0..n).map(|_| rng.uniform()).sum::<f64>() / n as f64;
        let e: f64 = (0..n).map(|_| rng.exponential(3.0)).sum::<f64>() / n as f64;
        let p: f64 = (0..n).map(|_| rng.pareto(0.05, 2.5)).sum::<f64>() / n as f64;
        assert!((u - 0.5).abs() < 0.005, "uniform mean {u}");
        assert!((e - 3.0).abs() < 0.03, "exponential mean {e}");
        assert!((p - 0.05).abs() < 0.002, "pareto mean {p}");
    }

    #[test]
    fn uniform_stays_in_range() {
        let mut rng = Rng::derive(3, "range");
        for _ in 0..10_000 {
            let x = rng.uniform();
            assert!((0.0..1.0).contains(&x));
            let y = rng.uniform_open0();
            assert!(y > 0.0 && y <= 1.0);
        }
    }
}
