//! RED's control function `p = H(q)`: the drop probability as a function of
//! the average queue (Floyd & Jacobson 1993; BEDS, Firoiu, Zhang & Guo 2001,
//! eq. 2 and Fig. 1; Firoiu & Borden, INFOCOM 2000).
//!
//! - [`RedControl::p_b`]: RED's curve, `max_p·(q − min_th)/(max_th −
//!   min_th)` between the thresholds; with `gentle`, `max_p + (1 − max_p)·(q
//!   − max_th)/max_th` up to `2·max_th`; 0 below `min_th`, 1 beyond.
//! - [`RedControl::h`]: the fraction of arrivals RED actually drops while
//!   its average stays at `q`. RED does not drop each arrival with `p_b`:
//!   it spreads drops by the count of arrivals since the last one
//!   ([`Spacing`]), and the drop rate is `1/E[gap]`, `E[gap]` the mean
//!   number of arrivals from one drop to the next. With ns-2's `wait` the
//!   gap is uniform on about `[1/p_b, 2/p_b]`, a rate near `(2/3)·p_b`;
//!   without it, uniform on `[1, 1/p_b]`, near `2·p_b`. The operating point
//!   of a RED queue (eq. 4) lies on `h`, which is what a simulation measures
//!   as the loss rate; `p_b` is what a RED configuration states.
//!
//! `q` is in packets (RED's packet mode), as in phblab's RED
//! (`phb::aqm::red`), whose count, spacing and thresholds these follow.

/// How RED spreads its drops over arrivals (`phb::aqm::red`'s `p_a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spacing {
    /// ns-2's `wait_` (its default): `p_a = 0` while `count·p_b < 1`, then
    /// `p_b/(2 − count·p_b)`.
    Wait,
    /// Floyd & Jacobson's `p_a = p_b/(1 − count·p_b)`.
    Uniform,
    /// Every arrival dropped with `p_b` (no count): the rate is `p_b`.
    None,
}

/// A RED configuration seen as a control function.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedControl {
    /// Lower threshold of the average, packets.
    pub min_th: f64,
    /// Upper threshold, packets.
    pub max_th: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// Gentle RED (ns-2's `gentle_`).
    pub gentle: bool,
    pub spacing: Spacing,
}

impl RedControl {
    /// Checks `0 ≤ min_th < max_th` and `0 < max_p ≤ 1`.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.min_th >= 0.0 && self.min_th.is_finite()) {
            return Err(format!("min_th must be >= 0, got {}", self.min_th));
        }
        if !(self.max_th > self.min_th && self.max_th.is_finite()) {
            return Err(format!("max_th ({}) must be greater than min_th ({})", self.max_th, self.min_th));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(format!("max_p must be in (0, 1], got {}", self.max_p));
        }
        Ok(())
    }

    /// The average from which every arrival is dropped.
    pub fn forced_from(&self) -> f64 {
        if self.gentle {
            2.0 * self.max_th
        } else {
            self.max_th
        }
    }

    /// RED's curve `p_b(q)`.
    pub fn p_b(&self, q: f64) -> f64 {
        if q < self.min_th {
            0.0
        } else if q >= self.forced_from() {
            1.0
        } else if q < self.max_th {
            self.max_p * (q - self.min_th) / (self.max_th - self.min_th)
        } else {
            self.max_p + (1.0 - self.max_p) * (q - self.max_th) / self.max_th
        }
    }

    /// `H(q)`: the fraction of arrivals dropped while the average stays at
    /// `q`, `1/E[gap]` for RED's spacing (see the module docs).
    pub fn h(&self, q: f64) -> f64 {
        let p_b = self.p_b(q);
        if p_b <= 0.0 || p_b >= 1.0 {
            return p_b;
        }
        match self.spacing {
            Spacing::None => p_b,
            Spacing::Wait | Spacing::Uniform => 1.0 / mean_gap(p_b, self.spacing),
        }
    }
}

/// The mean number of arrivals from one drop to the next (the next drop
/// included) at a constant `p_b`: `Σ_{c ≥ 1} P(gap ≥ c)`, with the
/// hazard `p_a(c)` at the `c`-th arrival after a drop (count `c`), summed
/// exactly (at most `2/p_b` terms); below `p_b = 10⁻⁵` the sums'
/// limits `1.5/p_b − 0.5` (wait) and `1/(2·p_b)` (uniform) instead.
fn mean_gap(p_b: f64, spacing: Spacing) -> f64 {
    if p_b < 1e-5 {
        return match spacing {
            Spacing::Wait => 1.5 / p_b - 0.5,
            _ => 0.5 / p_b,
        };
    }
    let mut survive = 1.0;
    let mut sum = 0.0;
    let mut c = 1.0f64;
    while survive > 0.0 {
        sum += survive;
        let x = c * p_b;
        let p_a = match spacing {
            Spacing::Wait if x < 1.0 => 0.0,
            Spacing::Wait if x < 2.0 => p_b / (2.0 - x),
            Spacing::Uniform if x < 1.0 => p_b / (1.0 - x),
            _ => 1.0,
        };
        survive *= 1.0 - p_a.min(1.0);
        c += 1.0;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(spacing: Spacing) -> RedControl {
        RedControl { min_th: 60.0, max_th: 180.0, max_p: 0.1, gentle: true, spacing }
    }

    #[test]
    fn the_curve_is_linear_then_gentle() {
        let r = red(Spacing::None);
        assert_eq!(r.p_b(59.0), 0.0);
        assert!((r.p_b(120.0) - 0.05).abs() < 1e-15);
        assert!((r.p_b(270.0) - 0.55).abs() < 1e-15);
        assert_eq!(r.p_b(360.0), 1.0);
        assert_eq!(RedControl { gentle: false, ..r }.p_b(180.0), 1.0);
        assert_eq!(r.h(120.0), 0.05);
    }

    /// p_b = 0.05 (n = 1/p_b = 20). With wait: no drop for counts 1–19,
    /// then p_a = 0.05/(2 − c/20) for c = 20..39, which makes the gap
    /// uniform on 20..=39 (P = 1/20 each): E[gap] = 29.5, H = 1/29.5.
    /// Uniform: p_a = 0.05/(1 − c/20) for c = 1..19 (1 at c = 19), so
    /// P(gap ≥ c) = (1 − c/20)/0.95 and the gap is uniform on 1..=19:
    /// E[gap] = 10, H = 1/10.
    #[test]
    fn the_drop_rate_follows_red_s_spacing() {
        assert!((red(Spacing::Wait).h(120.0) - 1.0 / 29.5).abs() < 1e-12, "{}", red(Spacing::Wait).h(120.0));
        assert!((red(Spacing::Uniform).h(120.0) - 0.1).abs() < 1e-12, "{}", red(Spacing::Uniform).h(120.0));
        // Small p_b: about (2/3)·p_b and 2·p_b; the limits agree with the
        // sums where they take over.
        for p_b in [0.001, 1.0001e-5] {
            let q = 60.0 + 120.0 * p_b / 0.1;
            assert!((red(Spacing::Wait).h(q) / p_b - 2.0 / 3.0).abs() < 1e-3);
            assert!((red(Spacing::Uniform).h(q) / p_b - 2.0).abs() < 3e-3);
        }
        let (below, above) = (mean_gap(0.999_999e-5, Spacing::Wait), mean_gap(1e-5, Spacing::Wait));
        assert!((below / above - 1.0).abs() < 1e-4, "{below} {above}");
        assert_eq!(red(Spacing::Wait).h(400.0), 1.0);
        assert_eq!(red(Spacing::Wait).h(10.0), 0.0);
    }

    #[test]
    fn validation_names_the_parameter() {
        assert!(red(Spacing::Wait).validate().is_ok());
        assert!(RedControl { max_th: 50.0, ..red(Spacing::Wait) }.validate().unwrap_err().starts_with("max_th"));
        assert!(RedControl { max_p: 0.0, ..red(Spacing::Wait) }.validate().unwrap_err().starts_with("max_p"));
        assert!(RedControl { min_th: -1.0, ..red(Spacing::Wait) }.validate().unwrap_err().starts_with("min_th"));
    }
}
