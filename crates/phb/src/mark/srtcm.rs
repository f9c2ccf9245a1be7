//! Single Rate Three Color Marker (srTCM).
//!
//! J. Heinanen, R. Guerin, "A Single Rate Three Color Marker", RFC 2697,
//! September 1999.
//!
//! - **Parameters** (§2): `cir` (Committed Information Rate), `cbs`
//!   (Committed Burst Size), `ebs` (Excess Burst Size). The RFC gives CIR in
//!   bytes of IP packets per second; here it is in **bits** per second (RFC
//!   value × 8), as all rates in this crate. CBS and EBS are bytes. At least
//!   one of CBS and EBS must be positive (§2); with EBS = 0 the marker is a
//!   two-colour token bucket.
//! - **Token update** (§3.2): buckets C and E start full (`Tc(0) = CBS`,
//!   `Te(0) = EBS`). Tokens arrive at CIR; each goes to C if `Tc < CBS`, else
//!   to E if `Te < EBS`, else is discarded. Between two arrivals this is done
//!   in one step: C is filled first, the overflow goes to E, the rest is lost.
//! - **Colour-blind metering** (§3.3): a packet of `B` bytes is Green if
//!   `Tc ≥ B` (`Tc ← Tc − B`), else Yellow if `Te ≥ B` (`Te ← Te − B`), else
//!   Red (no bucket changes).
//! - **Colour-aware metering** (§3.3): Green if precoloured Green and
//!   `Tc ≥ B`; else Yellow if precoloured Green or Yellow and `Te ≥ B`; else
//!   Red. A Red packet therefore takes no tokens and a Yellow one never takes
//!   C tokens.
//! - A packet larger than both CBS and EBS is legal and always Red; one larger
//!   than CBS is never Green.
//!
//! Tokens are integers in units of 1/(8·10⁹) byte, so the update is exact
//! (no rounding; the result depends only on the integer arrival times).

use super::{accrued, units, ColourMode, Meter, TOKEN_UNITS_PER_BYTE};
use crate::packet::Colour;
use crate::time::Time;

/// srTCM parameters, named as RFC 2697 §2 names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SrtcmParams {
    /// Committed Information Rate, bits per second (RFC 2697 states it in
    /// bytes per second: multiply by 8).
    pub cir: u64,
    /// Committed Burst Size, bytes: the depth of bucket C.
    pub cbs: u64,
    /// Excess Burst Size, bytes: the depth of bucket E.
    pub ebs: u64,
    /// Colour-blind or colour-aware (§3).
    pub mode: ColourMode,
}

impl SrtcmParams {
    /// Checks §2's requirements; the message names the parameter at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.cir == 0 {
            return Err("srTCM CIR must be positive (bits per second)".into());
        }
        if self.cbs == 0 && self.ebs == 0 {
            return Err("srTCM CBS and EBS are both 0: at least one must be positive \
                        (RFC 2697 §2)"
                .into());
        }
        Ok(())
    }
}

/// A Single Rate Three Color Marker.
#[derive(Clone, Debug)]
pub struct Srtcm {
    params: SrtcmParams,
    cbs: u128,
    ebs: u128,
    /// Token counts Tc and Te, in `TOKEN_UNITS_PER_BYTE` units.
    tc: u128,
    te: u128,
    last: Time,
}

impl Srtcm {
    /// An srTCM with both buckets full, or why the parameters are unusable.
    pub fn new(params: SrtcmParams) -> Result<Srtcm, String> {
        params.validate()?;
        let (cbs, ebs) = (units(params.cbs), units(params.ebs));
        Ok(Srtcm { params, cbs, ebs, tc: cbs, te: ebs, last: Time::ZERO })
    }

    pub fn params(&self) -> &SrtcmParams {
        &self.params
    }

    /// Tc after the last update, in bytes (for inspection).
    pub fn tc(&self) -> f64 {
        self.tc as f64 / TOKEN_UNITS_PER_BYTE as f64
    }

    /// Te after the last update, in bytes (for inspection).
    pub fn te(&self) -> f64 {
        self.te as f64 / TOKEN_UNITS_PER_BYTE as f64
    }

    /// §3.2: C first, overflow to E, the rest discarded.
    fn refill(&mut self, now: Time) {
        let add = accrued(self.params.cir, self.last, now);
        self.last = self.last.max(now);
        let room_c = self.cbs - self.tc;
        if add <= room_c {
            self.tc += add;
        } else {
            self.tc = self.cbs;
            self.te = self.te.saturating_add(add - room_c).min(self.ebs);
        }
    }
}

impl Meter for Srtcm {
    fn meter(&mut self, size: u32, colour: Colour, now: Time) -> Colour {
        self.refill(now);
        let b = units(size as u64);
        let pre = match self.params.mode {
            ColourMode::Blind => Colour::Green,
            ColourMode::Aware => colour,
        };
        if pre == Colour::Green && self.tc >= b {
            self.tc -= b;
            Colour::Green
        } else if pre != Colour::Red && self.te >= b {
            self.te -= b;
            Colour::Yellow
        } else {
            Colour::Red
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use Colour::*;

    /// CIR 8000 bit/s = exactly 1 byte per ms; CBS 1000, EBS 500.
    fn srtcm(mode: ColourMode) -> Srtcm {
        Srtcm::new(SrtcmParams { cir: 8_000, cbs: 1_000, ebs: 500, mode }).unwrap()
    }

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    #[test]
    fn rejects_bad_parameters() {
        let p = |cir, cbs, ebs| SrtcmParams { cir, cbs, ebs, mode: ColourMode::Blind };
        let e = Srtcm::new(p(0, 1, 1)).unwrap_err();
        assert!(e.contains("CIR"), "{e}");
        let e = Srtcm::new(p(1, 0, 0)).unwrap_err();
        assert!(e.contains("CBS and EBS"), "{e}");
        // One of them may be zero (§2).
        assert!(Srtcm::new(p(1, 1, 0)).is_ok());
        assert!(Srtcm::new(p(1, 0, 1)).is_ok());
    }

    #[test]
    fn blind_burst_at_full_buckets_is_g_g_y_r_r() {
        let mut m = srtcm(ColourMode::Blind);
        let got: Vec<_> = (0..5).map(|_| m.meter(500, Green, ms(0))).collect();
        // Tc 1000 → 500 → 0 (B == Tc is Green), then Te 500 → 0 (B == Te is
        // Yellow), then both exactly empty: Red, Red.
        assert_eq!(got, [Green, Green, Yellow, Red, Red]);
        assert_eq!((m.tc(), m.te()), (0.0, 0.0));
    }

    #[test]
    fn blind_refill_fills_c_first_then_e() {
        let mut m = srtcm(ColourMode::Blind);
        for _ in 0..4 {
            m.meter(500, Green, ms(0));
        }
        // t = 250 ms: Tc = 250 < 500, Te = 0: Red, nothing taken.
        assert_eq!(m.meter(500, Green, ms(250)), Red);
        assert_eq!(m.tc(), 250.0);
        // t = 500 ms: Tc = 500 exactly: Green.
        assert_eq!(m.meter(500, Green, ms(500)), Green);
        // t = 1500 ms: +1000 fills C exactly, nothing for E.
        assert_eq!(m.meter(0, Green, ms(1_500)), Green);
        assert_eq!((m.tc(), m.te()), (1_000.0, 0.0));
        // t = 2000 ms: +500 overflows C into E (Te = 500).
        assert_eq!(m.meter(0, Green, ms(2_000)), Green);
        assert_eq!((m.tc(), m.te()), (1_000.0, 500.0));
        // t = 10 s: nothing more (both capped).
        let got = [
            m.meter(1_000, Green, ms(10_000)),
            m.meter(600, Green, ms(10_000)),
            m.meter(500, Green, ms(10_000)),
            m.meter(1, Green, ms(10_000)),
        ];
        assert_eq!(got, [Green, Red, Yellow, Red]);
    }

    #[test]
    fn fractional_tokens_are_exact() {
        let mut m = srtcm(ColourMode::Blind);
        for _ in 0..4 {
            m.meter(500, Green, ms(0));
        }
        // 999_999 ns at 1 byte/ms is 0.999999 bytes: a 1-byte packet is Red.
        assert_eq!(m.meter(1, Green, Time::from_nanos(999_999)), Red);
        assert_eq!(m.meter(1, Green, ms(1)), Green);
        assert_eq!(m.tc(), 0.0);
    }

    #[test]
    fn packet_larger_than_cbs_is_never_green_larger_than_both_always_red() {
        let mut m = srtcm(ColourMode::Blind);
        // 1200 > CBS = 1000 and > EBS = 500: Red even with full buckets.
        for s in 0..5 {
            assert_eq!(m.meter(1_200, Green, Time::from_secs(s)), Red);
        }
        assert_eq!((m.tc(), m.te()), (1_000.0, 500.0));
        // CBS 1000, EBS 1500: a 1200-byte packet can only be Yellow or Red.
        let mut m = Srtcm::new(SrtcmParams { cir: 8_000, cbs: 1_000, ebs: 1_500, mode: ColourMode::Blind }).unwrap();
        let got: Vec<_> = (0..3).map(|_| m.meter(1_200, Green, ms(0))).collect();
        assert_eq!(got, [Yellow, Red, Red]);
        // 1.5 s later C is still full, so all 1500 new bytes went to E (capped at
        // EBS = 1500): Yellow again.
        assert_eq!(m.meter(1_200, Green, ms(1_500)), Yellow);
    }

    #[test]
    fn ebs_zero_is_a_two_colour_bucket() {
        let mut m = Srtcm::new(SrtcmParams { cir: 8_000, cbs: 1_000, ebs: 0, mode: ColourMode::Blind }).unwrap();
        let got: Vec<_> = (0..3).map(|_| m.meter(500, Green, ms(0))).collect();
        assert_eq!(got, [Green, Green, Red]);
        // Overflow from C is discarded, Te stays 0.
        m.meter(0, Green, ms(5_000));
        assert_eq!((m.tc(), m.te()), (1_000.0, 0.0));
    }

    #[test]
    fn aware_sequence_respects_precolour() {
        let mut m = srtcm(ColourMode::Aware);
        let train = [
            (500, Yellow), // Te 500 → 0: Yellow; C untouched
            (500, Yellow), // Te 0: Red, though Tc = 1000
            (500, Green),  // Tc 1000 → 500: Green
            (100, Red),    // Red, no tokens
            (500, Green),  // Tc 500 → 0: Green (B == Tc)
            (500, Green),  // Tc 0, Te 0: Red
        ];
        let got: Vec<_> = train.iter().map(|&(b, c)| m.meter(b, c, ms(0))).collect();
        assert_eq!(got, [Yellow, Red, Green, Red, Green, Red]);
        assert_eq!((m.tc(), m.te()), (0.0, 0.0));
    }

    #[test]
    fn aware_green_falls_back_to_e() {
        let mut m = srtcm(ColourMode::Aware);
        m.meter(1_000, Green, ms(0)); // Tc → 0
        assert_eq!(m.meter(500, Green, ms(0)), Yellow); // from E
        assert_eq!(m.meter(1, Green, ms(0)), Red);
    }

    #[test]
    fn aware_yellow_never_becomes_green_and_red_stays_red() {
        let mut m = srtcm(ColourMode::Aware);
        for k in 0..20 {
            // Buckets full every time (10 s apart).
            assert_eq!(m.meter(100, Yellow, Time::from_secs(10 * k)), Yellow);
            assert_eq!(m.meter(100, Red, Time::from_secs(10 * k)), Red);
        }
        assert_eq!(m.tc(), 1_000.0);
    }

    #[test]
    fn blind_ignores_precolour() {
        let mut m = srtcm(ColourMode::Blind);
        assert_eq!(m.meter(500, Red, ms(0)), Green);
        assert_eq!(m.meter(500, Yellow, ms(0)), Green);
    }

    /// Arrival gaps (ns), sizes, precolours.
    fn train() -> impl Strategy<Value = Vec<(u64, u32, u8)>> {
        prop::collection::vec((0u64..5_000_000, 1u32..2_000, 0u8..3), 1..150)
    }

    fn colour(i: u8) -> Colour {
        [Green, Yellow, Red][i as usize]
    }

    proptest! {
        /// In any interval [s, t] (and so in [0, t]) the Green bytes are at
        /// most CBS + CIR·(t − s), and Green + Yellow at most
        /// CBS + EBS + CIR·(t − s).
        #[test]
        fn green_bytes_obey_the_rate_bound(
            cir in 8_000u64..20_000_000,
            cbs in 0u64..3_000,
            ebs in 0u64..3_000,
            aware in any::<bool>(),
            arrivals in train(),
        ) {
            prop_assume!(cbs + ebs > 0);
            let mode = if aware { ColourMode::Aware } else { ColourMode::Blind };
            let mut m = Srtcm::new(SrtcmParams { cir, cbs, ebs, mode }).unwrap();
            let mut t = 0u64;
            let mut out = Vec::new();
            for &(gap, size, c) in &arrivals {
                t += gap;
                let got = m.meter(size, colour(c), Time(t));
                if aware {
                    prop_assert!(got >= colour(c), "colour-aware improved a colour");
                }
                out.push((t, size as u128, got));
            }
            for i in 0..out.len() {
                let (mut green, mut passed) = (0u128, 0u128);
                for &(tj, b, c) in &out[i..] {
                    let span = cir as u128 * (tj - out[i].0) as u128;
                    if c == Green { green += b; }
                    if c != Red { passed += b; }
                    prop_assert!(units(green as u64) <= units(cbs) + span);
                    prop_assert!(units(passed as u64) <= units(cbs + ebs) + span);
                }
            }
        }
    }
}
