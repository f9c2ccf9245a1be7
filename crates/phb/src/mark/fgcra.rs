//! F-GCRA: the frame-aware Generic Cell Rate Algorithm, as an edge marker
//! or policer of AAL5 frames.
//!
//! - **GCRA(T, τ)**, the *virtual scheduling* form (ITU-T I.371 Annex A;
//!   ATM Forum TM 4.0 §4.5): a theoretical arrival time `TAT` (0 at first)
//!   and, for a cell arriving at `t_a`: if `t_a < TAT − τ` the cell is
//!   non-conforming and `TAT` is left alone; otherwise it conforms and
//!   `TAT ← max(t_a, TAT) + T`. `T` (the *increment*, I.371's `I`) is the
//!   cell period of the policed rate, `τ` (the *limit*, `L`) the tolerance.
//! - **Frame-aware** (M. Tufail, G. Jennes, G. Leduc, "Attaining per flow
//!   QoS with class-based differentiated services", SPIE Broadband
//!   Networks, 1999, Section 3.2 and footnote ††; the frame rule is the one
//!   of the ATM Forum's GFR conformance definition, TM 4.1): the first cell
//!   of an AAL5 frame decides for the whole frame. A frame whose first cell
//!   does not conform is out of profile — every one of its cells is tagged
//!   (CLP1: colour Red) and none moves `TAT`; a frame whose first cell
//!   conforms is in profile whole, and each of its cells advances `TAT` by
//!   `T` without any later cell changing the verdict.
//!
//! **Rates and cells.** `rate` is the policed rate in bits per second of
//! 53-byte cells, so `T = 424 bits / rate` (5 Mb/s: 84.8 µs per cell); an
//! SLA of 50 Mb/s fills a 50 Mb/s ATM link. A packet of `L` bytes is
//! `n = ⌈(L + 8)/48⌉` cells ([`crate::framing`]; the link's framing, so
//! LLC/SNAP counts when the link uses it).
//!
//! **Cell times.** Phblab hands the marker whole packets at one instant,
//! `now`, the arrival of the frame's first cell. The later cells of a frame
//! arrive back to back at the line's cell rate; they need not be timed,
//! because for any policed rate not above the line rate (`T ≥` the line's
//! cell time `c`) the first cell leaves `TAT ≥ now + T ≥ now + c`, after
//! the second cell's arrival, and so on: every later cell finds `TAT` ahead
//! of it and adds exactly `T`. An in-profile frame of `n` cells therefore
//! sets `TAT ← max(now, TAT) + n·T`, which is what this meter computes (a
//! test checks it against the cell-by-cell algorithm).
//!
//! **Exact arithmetic.** Times are kept in units of 1/`rate` nanosecond,
//! so `T` is exactly `424·10⁹` units and `now`, `τ` are exact integers; no
//! rounding ever happens, whatever the rate.
//!
//! **Colour.** Colour-blind by default. Colour-aware ([`ColourMode::Aware`]):
//! a frame that arrives already tagged (not Green) stays Red and does not
//! count, as GFR's F-GCRA counts only CLP0 frames.

use super::{ColourMode, Meter};
use crate::framing::{Framing, CELL_BYTES};
use crate::packet::Colour;
use crate::time::Time;

/// Bits of one cell on the wire.
const CELL_BITS: u128 = 8 * CELL_BYTES as u128;

/// F-GCRA's parameters, named as the paper and I.371 name them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FgcraParams {
    /// The policed rate, bits per second of cells: the increment is
    /// `T = 424 bits / rate`.
    pub rate: u64,
    /// The limit τ: how far ahead of its theoretical arrival time a frame's
    /// first cell may come and still conform.
    pub tau: Time,
    pub mode: ColourMode,
}

impl FgcraParams {
    pub fn validate(&self) -> Result<(), String> {
        if self.rate == 0 {
            return Err("rate must be positive (bits per second of cells)".into());
        }
        Ok(())
    }

    /// The increment `T`, the cell period of `rate`, rounded to the
    /// nanosecond (the meter itself never rounds).
    pub fn increment(&self) -> Time {
        Time::from_nanos(((CELL_BITS * 1_000_000_000 + self.rate as u128 / 2) / self.rate as u128) as u64)
    }
}

/// A frame-aware GCRA meter on a link with `framing` (which counts the
/// cells of a frame).
#[derive(Clone, Debug)]
pub struct Fgcra {
    params: FgcraParams,
    framing: Framing,
    /// `TAT`, in units of 1/`rate` ns.
    tat: u128,
    /// `T`, in the same units: `424·10⁹`.
    increment: u128,
    /// `τ`, in the same units.
    tau: u128,
}

impl Fgcra {
    /// A meter with `TAT = 0`, or why the parameters are unusable.
    pub fn new(params: FgcraParams, framing: Framing) -> Result<Fgcra, String> {
        params.validate()?;
        if !framing.has_cells() {
            return Err("F-GCRA counts the cells of AAL5 frames: its link needs AAL5 framing".into());
        }
        let rate = params.rate as u128;
        Ok(Fgcra {
            increment: CELL_BITS * 1_000_000_000,
            tau: params.tau.as_nanos() as u128 * rate,
            tat: 0,
            framing,
            params,
        })
    }

    pub fn params(&self) -> &FgcraParams {
        &self.params
    }

    /// `TAT` as a time (rounded down to the nanosecond), for inspection.
    pub fn tat(&self) -> Time {
        Time::from_nanos((self.tat / self.params.rate as u128) as u64)
    }

    /// Whether a cell arriving at `now` (in the meter's units) conforms.
    #[inline]
    fn conforms(&self, now: u128) -> bool {
        now + self.tau >= self.tat
    }
}

impl Meter for Fgcra {
    /// A frame of `size` bytes (IP) whose first cell arrives at `now`.
    fn meter(&mut self, size: u32, colour: Colour, now: Time) -> Colour {
        if self.params.mode == ColourMode::Aware && colour != Colour::Green {
            return Colour::Red;
        }
        let t = now.as_nanos() as u128 * self.params.rate as u128;
        if !self.conforms(t) {
            return Colour::Red;
        }
        let cells = self.framing.cells(size) as u128;
        self.tat = self.tat.max(t) + cells * self.increment;
        Colour::Green
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Colour::*;

    /// 5.3 Mb/s of cells: T = 424 bits / 5.3 Mb/s = 80 µs exactly.
    fn meter(tau_us: u64) -> Fgcra {
        let params = FgcraParams { rate: 5_300_000, tau: Time::from_micros(tau_us), mode: ColourMode::Blind };
        Fgcra::new(params, Framing::AAL5).unwrap()
    }

    fn us(t: u64) -> Time {
        Time::from_micros(t)
    }

    /// Hand-computed cell timings, T = 80 µs, τ = 100 µs.
    ///
    /// - t = 0: a 1500-byte frame (32 cells). TAT 0 ≤ 0 + τ: in profile;
    ///   TAT = 0 + 32·80 = 2560 µs.
    /// - t = 2000: 2000 + 100 < 2560: out (Red), TAT unchanged.
    /// - t = 2460: 2460 + 100 = 2560 ≥ TAT: in; a 40-byte frame (1 cell):
    ///   TAT = 2560 + 80 = 2640.
    /// - t = 2539: 2639 < 2640: out. t = 2540: in, a 88-byte frame (2
    ///   cells): TAT = 2640 + 160 = 2800.
    /// - t = 5000 (idle): TAT = max(5000, 2800) + 80 = 5080: no credit kept
    ///   for idle time beyond τ.
    #[test]
    fn hand_computed_frame_conformance() {
        let mut m = meter(100);
        assert_eq!(m.meter(1500, Green, us(0)), Green);
        assert_eq!(m.tat(), us(2560));
        assert_eq!(m.meter(1500, Green, us(2000)), Red);
        assert_eq!(m.tat(), us(2560));
        assert_eq!(m.meter(40, Green, us(2460)), Green);
        assert_eq!(m.tat(), us(2640));
        assert_eq!(m.meter(40, Green, us(2539)), Red);
        assert_eq!(m.meter(88, Green, us(2540)), Green);
        assert_eq!(m.tat(), us(2800));
        assert_eq!(m.meter(40, Green, us(5000)), Green);
        assert_eq!(m.tat(), us(5080));
    }

    /// A frame is judged by its first cell only: a 3000-byte frame
    /// (⌈3008/48⌉ = 63 cells) conforming at its start is in profile whole,
    /// with τ = 0, though its later cells all come ahead of their TAT; the
    /// next frame pays for them.
    #[test]
    fn later_cells_never_change_a_conforming_frame() {
        let mut m = meter(0);
        assert_eq!(m.meter(3000, Green, us(0)), Green);
        assert_eq!(m.tat(), us(63 * 80));
        assert_eq!(m.meter(40, Green, us(63 * 80 - 1)), Red);
        assert_eq!(m.meter(40, Green, us(63 * 80)), Green);
    }

    /// The cell-by-cell GCRA of I.371 with the frame rule (the first cell
    /// decides; a tagged frame's cells do not count), cells of a frame
    /// arriving back to back every `c` ns from the frame's start. Returns
    /// each frame's verdict.
    fn cell_by_cell(t_ns: u128, tau_ns: u128, c_ns: u128, frames: &[(u64, u32)]) -> Vec<bool> {
        // Work in ns × 1000 so that T = 80 µs, c and τ are exact.
        let mut tat: u128 = 0;
        let mut out = Vec::new();
        for &(start, size) in frames {
            let n = Framing::AAL5.cells(size) as u128;
            let t0 = start as u128 * 1000;
            let in_profile = t0 + tau_ns * 1000 >= tat;
            if in_profile {
                for k in 0..n {
                    let t = t0 + k * c_ns * 1000;
                    tat = tat.max(t) + t_ns * 1000;
                }
            }
            out.push(in_profile);
        }
        out
    }

    /// The meter's closed form against the cell-by-cell algorithm with
    /// cells at a 155 Mb/s line rate (2.735 µs apart, rounded up to 2736
    /// ns), over random frames: the same verdicts.
    #[test]
    fn the_closed_form_matches_cells_at_the_line_rate() {
        let mut rng = crate::Rng::derive(7, "fgcra");
        for tau_us in [0u64, 50, 500, 5000] {
            let mut t = 0u64;
            let frames: Vec<(u64, u32)> = (0..5000)
                .map(|_| {
                    t += (rng.exponential(3000.0)) as u64;
                    let size = if rng.uniform() < 0.3 { 40 } else { 1500 };
                    (t, size)
                })
                .collect();
            let reference = cell_by_cell(80_000, tau_us as u128 * 1000, 2736, &frames);
            let mut m = meter(tau_us);
            let ours: Vec<bool> =
                frames.iter().map(|&(at, size)| m.meter(size, Green, Time::from_nanos(at)) == Green).collect();
            assert_eq!(ours, reference, "tau {tau_us} µs");
            assert!(ours.iter().any(|&g| !g) || tau_us == 5000);
        }
    }

    /// Over a long run the in-profile cells are at most the policed rate
    /// plus the burst τ allows: 1500-byte frames offered at twice 5.3 Mb/s
    /// for 10 s, τ = 1 ms; in-profile cells ≤ 10 s / 80 µs + 1 frame + τ/T.
    #[test]
    fn in_profile_cells_keep_to_the_rate() {
        let mut m = meter(1000);
        let gap = 32 * 80 / 2; // frames of 32 cells every 1280 µs carry twice the rate
        let mut green_cells = 0u64;
        for k in 0..(10_000_000 / gap) {
            if m.meter(1500, Green, us(k * gap)) == Green {
                green_cells += 32;
            }
        }
        let bound = 10_000_000 / 80 + 32 + 1000 / 80;
        assert!(green_cells <= bound && green_cells >= 10_000_000 / 80 - 64, "{green_cells} vs {bound}");
    }

    #[test]
    fn colour_aware_keeps_tagged_frames_out_of_the_count() {
        let params = FgcraParams { rate: 5_300_000, tau: Time::ZERO, mode: ColourMode::Aware };
        let mut m = Fgcra::new(params, Framing::AAL5).unwrap();
        assert_eq!(m.meter(1500, Red, us(0)), Red);
        assert_eq!(m.tat(), Time::ZERO);
        assert_eq!(m.meter(1500, Green, us(0)), Green);
    }

    #[test]
    fn parameters_and_framing_are_checked() {
        let p = FgcraParams { rate: 0, tau: Time::ZERO, mode: ColourMode::Blind };
        assert!(Fgcra::new(p, Framing::AAL5).unwrap_err().contains("rate"));
        let p = FgcraParams { rate: 5_000_000, tau: Time::ZERO, mode: ColourMode::Blind };
        assert!(Fgcra::new(p.clone(), Framing::None).unwrap_err().contains("AAL5"));
        assert_eq!(p.increment(), Time::from_nanos(84_800));
    }
}
