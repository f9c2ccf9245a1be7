//! Two Rate Three Color Marker (trTCM).
//!
//! J. Heinanen, R. Guerin, "A Two Rate Three Color Marker", RFC 2698,
//! September 1999.
//!
//! - **Parameters** (§2): `pir` (Peak Information Rate), `pbs` (Peak Burst
//!   Size), `cir` (Committed Information Rate), `cbs` (Committed Burst Size).
//!   The RFC gives PIR and CIR in bytes of IP packets per second; here they
//!   are in **bits** per second (RFC value × 8). PIR must be at least CIR;
//!   PBS and CBS are bytes and must be positive (§2).
//! - **Token update** (§3): buckets P and C start full (`Tp(0) = PBS`,
//!   `Tc(0) = CBS`); Tp grows at PIR up to PBS and Tc at CIR up to CBS,
//!   independently.
//! - **Colour-blind metering** (§3): a packet of `B` bytes is Red if
//!   `Tp < B`; else Yellow if `Tc < B` (`Tp ← Tp − B`); else Green
//!   (`Tp ← Tp − B`, `Tc ← Tc − B`).
//! - **Colour-aware metering** (§3): Red if precoloured Red or `Tp < B`; else
//!   Yellow if precoloured Yellow or `Tc < B` (`Tp ← Tp − B`); else Green
//!   (both decremented).
//! - A packet larger than PBS is legal and always Red; one larger than CBS is
//!   never Green.
//!
//! Tokens are integers in units of 1/(8·10⁹) byte, so the update is exact.

use super::{accrued, units, ColourMode, Meter, TOKEN_UNITS_PER_BYTE};
use crate::packet::Colour;
use crate::time::Time;

/// trTCM parameters, named as RFC 2698 §2 names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrtcmParams {
    /// Peak Information Rate, bits per second (RFC 2698 states bytes per
    /// second: multiply by 8).
    pub pir: u64,
    /// Peak Burst Size, bytes: the depth of bucket P.
    pub pbs: u64,
    /// Committed Information Rate, bits per second.
    pub cir: u64,
    /// Committed Burst Size, bytes: the depth of bucket C.
    pub cbs: u64,
    /// Colour-blind or colour-aware (§3).
    pub mode: ColourMode,
}

impl TrtcmParams {
    /// Checks §2's requirements; the message names the parameter at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.cir == 0 {
            return Err("trTCM CIR must be positive (bits per second)".into());
        }
        if self.pir < self.cir {
            return Err(format!("trTCM PIR ({} bit/s) must be at least CIR ({} bit/s)", self.pir, self.cir));
        }
        if self.pbs == 0 {
            return Err("trTCM PBS must be positive (bytes; RFC 2698 §2)".into());
        }
        if self.cbs == 0 {
            return Err("trTCM CBS must be positive (bytes; RFC 2698 §2)".into());
        }
        Ok(())
    }
}

/// A Two Rate Three Color Marker.
#[derive(Clone, Debug)]
pub struct Trtcm {
    params: TrtcmParams,
    pbs: u128,
    cbs: u128,
    /// Token counts Tp and Tc, in `TOKEN_UNITS_PER_BYTE` units.
    tp: u128,
    tc: u128,
    last: Time,
}

impl Trtcm {
    /// A trTCM with both buckets full, or why the parameters are unusable.
    pub fn new(params: TrtcmParams) -> Result<Trtcm, String> {
        params.validate()?;
        let (pbs, cbs) = (units(params.pbs), units(params.cbs));
        Ok(Trtcm { params, pbs, cbs, tp: pbs, tc: cbs, last: Time::ZERO })
    }

    pub fn params(&self) -> &TrtcmParams {
        &self.params
    }

    /// Tp after the last update, in bytes (for inspection).
    pub fn tp(&self) -> f64 {
        self.tp as f64 / TOKEN_UNITS_PER_BYTE as f64
    }

    /// Tc after the last update, in bytes (for inspection).
    pub fn tc(&self) -> f64 {
        self.tc as f64 / TOKEN_UNITS_PER_BYTE as f64
    }

    fn refill(&mut self, now: Time) {
        let add_p = accrued(self.params.pir, self.last, now);
        let add_c = accrued(self.params.cir, self.last, now);
        self.last = self.last.max(now);
        self.tp = self.tp.saturating_add(add_p).min(self.pbs);
        self.tc = self.tc.saturating_add(add_c).min(self.cbs);
    }
}

impl Meter for Trtcm {
    fn meter(&mut self, size: u32, colour: Colour, now: Time) -> Colour {
        self.refill(now);
        let b = units(size as u64);
        let pre = match self.params.mode {
            ColourMode::Blind => Colour::Green,
            ColourMode::Aware => colour,
        };
        if pre == Colour::Red || self.tp < b {
            Colour::Red
        } else if pre == Colour::Yellow || self.tc < b {
            self.tp -= b;
            Colour::Yellow
        } else {
            self.tp -= b;
            self.tc -= b;
            Colour::Green
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use Colour::*;

    /// PIR 16000 bit/s = 2 bytes/ms, PBS 1500; CIR 8000 bit/s = 1 byte/ms, CBS 1000.
    fn trtcm(mode: ColourMode) -> Trtcm {
        Trtcm::new(TrtcmParams { pir: 16_000, pbs: 1_500, cir: 8_000, cbs: 1_000, mode }).unwrap()
    }

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    #[test]
    fn rejects_bad_parameters() {
        let p = |pir, pbs, cir, cbs| TrtcmParams { pir, pbs, cir, cbs, mode: ColourMode::Blind };
        assert_eq!(
            Trtcm::new(p(1_000_000, 1, 2_000_000, 1)).unwrap_err(),
            "trTCM PIR (1000000 bit/s) must be at least CIR (2000000 bit/s)"
        );
        assert!(Trtcm::new(p(1, 0, 1, 1)).unwrap_err().contains("PBS"));
        assert!(Trtcm::new(p(1, 1, 1, 0)).unwrap_err().contains("CBS"));
        assert!(Trtcm::new(p(1, 1, 0, 1)).unwrap_err().contains("CIR"));
        // PIR == CIR and PBS < CBS are legal.
        assert!(Trtcm::new(p(5, 10, 5, 20)).is_ok());
    }

    #[test]
    fn blind_burst_at_full_buckets_is_g_g_y_r() {
        let mut m = trtcm(ColourMode::Blind);
        let got: Vec<_> = (0..5).map(|_| m.meter(500, Green, ms(0))).collect();
        // (Tp, Tc): (1500, 1000) → G (1000, 500) → G (500, 0) [B == Tc] →
        // Y (0, 0) [B == Tp] → R, R with both exactly empty.
        assert_eq!(got, [Green, Green, Yellow, Red, Red]);
        assert_eq!((m.tp(), m.tc()), (0.0, 0.0));
    }

    #[test]
    fn blind_refill_at_both_rates() {
        let mut m = trtcm(ColourMode::Blind);
        for _ in 0..4 {
            m.meter(500, Green, ms(0));
        }
        // t = 250 ms: Tp = 500, Tc = 250: Yellow, Tp → 0.
        assert_eq!(m.meter(500, Green, ms(250)), Yellow);
        assert_eq!((m.tp(), m.tc()), (0.0, 250.0));
        // t = 500 ms: Tp = 500, Tc = 500: Green, both → 0.
        assert_eq!(m.meter(500, Green, ms(500)), Green);
        // t = 1000 ms: Tp = 1000, Tc = 500: Green, then Yellow, then Red.
        let got: Vec<_> = (0..3).map(|_| m.meter(500, Green, ms(1_000))).collect();
        assert_eq!(got, [Green, Yellow, Red]);
        // After 10 s both are capped: Tp = 1500, Tc = 1000.
        m.meter(0, Green, ms(11_000));
        assert_eq!((m.tp(), m.tc()), (1_500.0, 1_000.0));
    }

    #[test]
    fn fractional_tokens_are_exact() {
        let mut m = trtcm(ColourMode::Blind);
        for _ in 0..4 {
            m.meter(500, Green, ms(0));
        }
        // 499_999 ns: Tp = 0.999998 bytes: a 1-byte packet is Red.
        assert_eq!(m.meter(1, Green, Time::from_nanos(499_999)), Red);
        // 500 µs: Tp = 1, Tc = 0.5: Yellow.
        assert_eq!(m.meter(1, Green, Time::from_micros(500)), Yellow);
        // 1.5 ms: Tp = 2, Tc = 1.5: Green.
        assert_eq!(m.meter(1, Green, Time::from_micros(1_500)), Green);
        assert_eq!((m.tp(), m.tc()), (1.0, 0.5));
    }

    #[test]
    fn packet_larger_than_pbs_always_red_larger_than_cbs_never_green() {
        let mut m = trtcm(ColourMode::Blind);
        for s in 0..5 {
            assert_eq!(m.meter(1_600, Green, Time::from_secs(s)), Red);
        }
        assert_eq!((m.tp(), m.tc()), (1_500.0, 1_000.0));
        // 1200 > CBS, ≤ PBS: Yellow when P is full, never Green.
        for s in 0..5 {
            assert_eq!(m.meter(1_200, Green, Time::from_secs(10 + s)), Yellow);
        }
        assert_eq!(m.tc(), 1_000.0);
    }

    #[test]
    fn aware_sequence_respects_precolour() {
        let mut m = trtcm(ColourMode::Aware);
        let train = [
            (500, Yellow), // Tp 1500 → 1000: Yellow, C untouched
            (500, Red),    // Red, no tokens
            (500, Green),  // Tp 1000 → 500, Tc 1000 → 500: Green
            (500, Yellow), // Tp 500 → 0: Yellow
            (500, Green),  // Tp 0 < 500: Red although Tc = 500
        ];
        let got: Vec<_> = train.iter().map(|&(b, c)| m.meter(b, c, ms(0))).collect();
        assert_eq!(got, [Yellow, Red, Green, Yellow, Red]);
        assert_eq!((m.tp(), m.tc()), (0.0, 500.0));
    }

    #[test]
    fn aware_yellow_never_becomes_green_and_red_stays_red() {
        let mut m = trtcm(ColourMode::Aware);
        for k in 0..20 {
            assert_eq!(m.meter(100, Yellow, Time::from_secs(10 * k)), Yellow);
            assert_eq!(m.meter(100, Red, Time::from_secs(10 * k)), Red);
        }
        assert_eq!(m.tc(), 1_000.0);
    }

    #[test]
    fn blind_ignores_precolour() {
        let mut m = trtcm(ColourMode::Blind);
        assert_eq!(m.meter(500, Red, ms(0)), Green);
        assert_eq!(m.meter(500, Yellow, ms(0)), Green);
    }

    fn colour(i: u8) -> Colour {
        [Green, Yellow, Red][i as usize]
    }

    proptest! {
        /// In any interval [s, t] (and so in [0, t]) the Green bytes are at
        /// most CBS + CIR·(t − s), and Green + Yellow at most PBS + PIR·(t − s).
        #[test]
        fn green_bytes_obey_the_rate_bound(
            cir in 8_000u64..20_000_000,
            extra in 0u64..20_000_000,
            cbs in 1u64..3_000,
            pbs in 1u64..3_000,
            aware in any::<bool>(),
            arrivals in prop::collection::vec((0u64..5_000_000, 1u32..2_000, 0u8..3), 1..150),
        ) {
            let pir = cir + extra;
            let mode = if aware { ColourMode::Aware } else { ColourMode::Blind };
            let mut m = Trtcm::new(TrtcmParams { pir, pbs, cir, cbs, mode }).unwrap();
            let mut t = 0u64;
            let mut out = Vec::new();
            for &(gap, size, c) in &arrivals {
                t += gap;
                let got = m.meter(size, colour(c), Time(t));
                if aware {
                    prop_assert!(got >= colour(c), "colour-aware improved a colour");
                }
                out.push((t, size as u64, got));
            }
            for i in 0..out.len() {
                let (mut green, mut passed) = (0u64, 0u64);
                for &(tj, b, c) in &out[i..] {
                    let dt = (tj - out[i].0) as u128;
                    if c == Green { green += b; }
                    if c != Red { passed += b; }
                    prop_assert!(units(green) <= units(cbs) + cir as u128 * dt);
                    prop_assert!(units(passed) <= units(pbs) + pir as u128 * dt);
                }
            }
        }
    }
}
