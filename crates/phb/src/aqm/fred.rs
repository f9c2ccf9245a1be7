//! F-RED: Random Early Detection on a head queue counted in ATM cells,
//! deciding once per AAL5 frame.
//!
//! M. Tufail, G. Jennes, G. Leduc, "Attaining per flow QoS with class-based
//! differentiated services", SPIE Broadband Networks, 1999, Section 2.2
//! item 1, which names it F-RED; RED itself is S. Floyd, V. Jacobson,
//! "Random Early Detection Gateways for Congestion Avoidance", IEEE/ACM ToN
//! 1(4), 1993 (the paper's reference 11). **F-RED is not Lin & Morris'
//! Flow RED (FRED, SIGCOMM 1997)**, which keeps per-flow state: the "F" is
//! for *frame*.
//!
//! **Model.** The buffer is the head queue (the global buffer) of an ATM
//! switch port whose packets travel as AAL5 frames ([`crate::framing`]);
//! the average and the thresholds count cells of every class together.
//! When the first cell of a frame arrives — once per packet here — F-RED
//!
//! 1. updates the average over the cells queued, `q`:
//!    `avg ← (1 − w_q)^(m+1)·avg + w_q·q`, where `m` is the number of
//!    typical frames (`mean_pktsize`, on the wire) the link could have sent
//!    while the buffer was idle (Floyd & Jacobson §4; 0 when it was not);
//! 2. decides for the whole frame (the paper's Section 2.2: "accepting /
//!    discarding a cell means accepting / discarding the entire AAL5
//!    frame"):
//!    - `avg < min_th`: accept;
//!    - `min_th ≤ avg < max_th`: discard with `p_b = max_p·(avg −
//!      min_th)/(max_th − min_th)`, from 0 at `min_th` to `max_p` at `max_th`;
//!    - `max_th ≤ avg < 2·max_th` (the *gentle* region): discard with `p_b =
//!      max_p + (1 − max_p)·(avg − max_th)/max_th`, from `max_p` to 1;
//!    - `avg ≥ 2·max_th`: discard (a forced drop);
//! 3. accepts a frame it did not discard only if all its cells fit in the
//!    buffer (`limit`), so no frame is ever cut.
//!
//! With `count` (the default), the probability of step 2 is spaced as
//! Floyd & Jacobson's §7 spaces it, by the frames accepted since the last
//! discard: `p_a = p_b / (1 − count·p_b)` (1 once `count·p_b ≥ 1`), the count
//! restarting below `min_th` and at every discard; without it, each frame is
//! discarded with `p_b` independently. The paper states the probabilities
//! of step 2 and cites Floyd & Jacobson for RED, whose algorithm spaces
//! them; it says nothing of the spacing itself.
//!
//! **Departures from RED as ns-2 implements it** (`super::red`): decisions
//! per frame against an average of cells; no `wait` option, no "no drop
//! while one packet is queued" guard, no first-crossing rule; the hard limit
//! admits only frames that fit (the arrival must fit, [`LimitRule::Fits`]).
//!
//! **Compared with ATM-RED** (Rosolen, Bonaventure & Leduc 1999, which the
//! paper contrasts): ATM-RED decides at every cell and, once a frame is
//! partly accepted, drops the next frame instead; F-RED decides at the
//! frame's first cell only.

use crate::aqm::red::{validate_red, Average, Curve};
use crate::aqm::{Amount, Limit, LimitRule};
use crate::framing::Framing;
use crate::packet::DropReason;
use crate::rng::Rng;
use crate::time::Time;

/// F-RED's parameters, named as the paper (Section 3) names them.
#[derive(Clone, Debug, PartialEq)]
pub struct FRedParams {
    /// Lower threshold of the average, cells (the paper's Phase 1: 4,000).
    pub min_th: f64,
    /// Upper threshold, cells (Phase 1: 9,500); the gentle region ends at
    /// `2·max_th`.
    pub max_th: f64,
    /// Discard probability at `max_th` (0.02 in the paper).
    pub max_p: f64,
    /// Weight of the moving average, per frame arrival (0.002).
    pub w_q: f64,
    /// The buffer's size (20,000 cells in the paper): a frame is accepted
    /// only if all its cells fit.
    pub limit: Limit,
    /// Space the discards as Floyd & Jacobson §7 (`p_a = p_b/(1 − count·p_b)`).
    pub count: bool,
    /// A typical frame's IP size, bytes: the idle-time decay counts the
    /// frames of this size the link could have sent.
    pub mean_pktsize: u32,
}

impl Default for FRedParams {
    /// The paper's Phase 1 F-RED (Section 3): 4,000 and 9,500 cells, `max_p`
    /// 0.02, `w_q` 0.002, a buffer of 20,000 cells; Floyd & Jacobson's
    /// spacing; 1500-byte frames (the paper's TCP segments of 1460 bytes).
    fn default() -> Self {
        FRedParams {
            min_th: 4000.0,
            max_th: 9500.0,
            max_p: 0.02,
            w_q: 0.002,
            limit: Limit::Cells(20_000),
            count: true,
            mean_pktsize: 1500,
        }
    }
}

impl FRedParams {
    /// Checks the relations the algorithm needs; the message names the parameter.
    pub fn validate(&self) -> Result<(), String> {
        validate_red(self.min_th, self.max_th, self.w_q, self.max_p, self.mean_pktsize, " cells")?;
        self.limit.validate()
    }

    /// RED's curve with these thresholds, always gentle, without ns-2's wait.
    fn curve(&self) -> Curve {
        Curve { min_th: self.min_th, max_th: self.max_th, max_p: self.max_p, gentle: true, wait: false }
    }

    /// `p_b` for an average of `avg` cells: 0 below `min_th`, linear to
    /// `max_p` at `max_th`, then linear to 1 at `2·max_th` (the gentle
    /// region), 1 beyond.
    pub fn p_b(&self, avg: f64) -> f64 {
        self.curve().p_b(avg)
    }
}

/// One F-RED guarding one buffer.
#[derive(Clone, Debug)]
pub struct FRed {
    params: FRedParams,
    /// Typical frames per second at the link rate (for the idle decay).
    frames_per_sec: f64,
    average: Average,
    /// Frames since the last discard while `avg ≥ min_th` (Floyd &
    /// Jacobson's `count`; `None` is their −1: below `min_th`).
    count: Option<u64>,
    rng: Rng,
}

impl FRed {
    /// Frames are never cut: the arrival must fit.
    pub const LIMIT_RULE: LimitRule = LimitRule::Fits;

    /// An F-RED guarding a buffer drained at `link_rate_bps` on a link with
    /// `framing` (which sets the wire size of a typical frame).
    pub fn new(params: FRedParams, link_rate_bps: u64, framing: Framing, rng: Rng) -> FRed {
        let wire = framing.wire_bytes(params.mean_pktsize) as f64;
        FRed { frames_per_sec: link_rate_bps as f64 / (8.0 * wire), average: Average::new(), count: None, rng, params }
    }

    pub fn params(&self) -> &FRedParams {
        &self.params
    }

    /// The average, cells.
    pub fn avg(&self) -> f64 {
        self.average.value()
    }

    /// The buffer was found empty at `now`: an idle period starts (if one
    /// has not already).
    #[inline]
    pub fn on_idle(&mut self, now: Time) {
        self.average.on_idle(now);
    }

    /// Updates the average for a frame arriving at `now` to a buffer of
    /// `cells` cells (step 1); DI-RO's in-profile frames may do only this.
    #[inline]
    pub fn update_average(&mut self, cells: u64, now: Time) -> f64 {
        self.average.update(cells as f64, self.params.w_q, self.frames_per_sec, now)
    }

    /// Step 2 for a frame against the current average: why it is
    /// discarded, or `None`.
    fn judge(&mut self, avg: f64) -> Option<DropReason> {
        if avg < self.params.min_th {
            self.count = None;
            return None;
        }
        if avg >= 2.0 * self.params.max_th {
            self.count = Some(0);
            return Some(DropReason::ForcedDrop);
        }
        let curve = self.params.curve();
        let p_b = curve.p_b(avg);
        let count = self.count.map_or(0, |c| c + 1);
        let p_a = if self.params.count { curve.p_a(p_b, count as f64) } else { p_b };
        if p_a > 0.0 && self.rng.uniform() < p_a {
            self.count = Some(0);
            Some(DropReason::EarlyDrop)
        } else {
            self.count = Some(count);
            None
        }
    }

    /// A frame (`arrival`: one packet, its bytes and cells) arrives at `now`
    /// at a buffer holding `held`. Returns why it is discarded whole, or
    /// `None` to accept it whole.
    pub fn on_arrival(&mut self, held: Amount, arrival: Amount, now: Time) -> Option<DropReason> {
        let avg = self.update_average(held.cells, now);
        self.judge(avg).or_else(|| self.overflow(held, arrival))
    }

    /// Step 3: `Overflow` unless every cell of `arrival` fits beside `held`.
    #[inline]
    pub fn overflow(&self, held: Amount, arrival: Amount) -> Option<DropReason> {
        (!self.params.limit.admits_in(Self::LIMIT_RULE, held, arrival)).then_some(DropReason::Overflow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fred(params: FRedParams) -> FRed {
        FRed::new(params, 50_000_000, Framing::AAL5, Rng::derive(3, "fred-test"))
    }

    fn cells(n: u64) -> Amount {
        Amount { pkts: n / 32, bytes: n / 32 * 1500, cells: n }
    }

    const FRAME: Amount = Amount::packet(1500, 32);

    /// The paper's curve: 0 below 4,000 cells, 0.01 halfway to 9,500
    /// (6,750), 0.02 at 9,500; the gentle region from 0.02 at 9,500 to 1 at
    /// 19,000: at 14,250 (halfway) 0.02 + 0.98/2 = 0.51; 1 beyond.
    #[test]
    fn the_curve_has_its_gentle_region_up_to_twice_max_th() {
        let p = FRedParams::default();
        assert_eq!(p.p_b(3999.0), 0.0);
        assert_eq!(p.p_b(4000.0), 0.0);
        assert!((p.p_b(6750.0) - 0.01).abs() < 1e-12);
        assert!((p.p_b(9500.0) - 0.02).abs() < 1e-12);
        assert!((p.p_b(14_250.0) - 0.51).abs() < 1e-12);
        assert!((p.p_b(18_999.0) - (0.02 + 0.98 * 9499.0 / 9500.0)).abs() < 1e-12);
        assert_eq!(p.p_b(19_000.0), 1.0);
        assert_eq!(p.p_b(25_000.0), 1.0);
    }

    /// With w_q = 1 the average is the cells queued. Below min_th nothing
    /// is discarded; at or above 2·max_th every frame is (forced).
    #[test]
    fn below_min_th_accepts_above_twice_max_th_forces() {
        let mut f = fred(FRedParams { w_q: 1.0, limit: Limit::Cells(100_000), ..FRedParams::default() });
        for _ in 0..10_000 {
            assert_eq!(f.on_arrival(cells(3999), FRAME, Time::ZERO), None);
        }
        for _ in 0..100 {
            assert_eq!(f.on_arrival(cells(19_000), FRAME, Time::ZERO), Some(DropReason::ForcedDrop));
        }
    }

    /// Floyd & Jacobson's spaced discard rate for a constant `p_b`: after a
    /// discard the count restarts, the k-th frame after it meets `p_a(k) =
    /// p_b/(1 − k·p_b)` (1 once `k·p_b ≥ 1`), and the mean gap between
    /// discards is `Σ_{c ≥ 1} Π_{k < c} (1 − p_a(k))`.
    fn spaced_rate(p_b: f64) -> f64 {
        let (mut survive, mut gap) = (1.0, 0.0);
        for k in 1..=1_000 {
            gap += survive;
            let p_a: f64 = if (k as f64) * p_b < 1.0 { p_b / (1.0 - k as f64 * p_b) } else { 1.0 };
            survive *= 1.0 - p_a.min(1.0);
        }
        1.0 / gap
    }

    fn discard_rate(params: FRedParams, held_cells: u64) -> f64 {
        let mut f = fred(params);
        let n = 300_000;
        (0..n).filter(|_| f.on_arrival(cells(held_cells), FRAME, Time::ZERO).is_some()).count() as f64 / n as f64
    }

    /// In the gentle region the discard rate follows the gentle `p_b`: held
    /// at 11,400 cells (a fifth of the way from `max_th` to `2·max_th`),
    /// `p_b = 0.02 + 0.98·0.2 = 0.216`: without spacing a fraction 0.216 of
    /// the frames is discarded, with it one in `1/spaced_rate(0.216)`.
    #[test]
    fn the_gentle_region_discards_at_its_probability() {
        let base = FRedParams { w_q: 1.0, limit: Limit::Cells(100_000), ..FRedParams::default() };
        let p_b = base.p_b(11_400.0);
        assert!((p_b - 0.216).abs() < 1e-12);
        let plain = discard_rate(FRedParams { count: false, ..base.clone() }, 11_400);
        assert!((plain - 0.216).abs() < 0.004, "{plain}");
        let spaced = discard_rate(base, 11_400);
        assert!((spaced - spaced_rate(p_b)).abs() < 0.01 * spaced_rate(p_b), "{spaced} vs {}", spaced_rate(p_b));
    }

    /// Between min_th and max_th (p_b = 0.01 at 6,750 cells) with spacing:
    /// the gap between discards is spread as Floyd & Jacobson's §7 says.
    #[test]
    fn spacing_follows_floyd_and_jacobson() {
        let params = FRedParams { w_q: 1.0, limit: Limit::Cells(100_000), ..FRedParams::default() };
        let rate = discard_rate(params.clone(), 6750);
        assert!((rate - spaced_rate(0.01)).abs() < 0.03 * spaced_rate(0.01), "{rate} vs {}", spaced_rate(0.01));
        let plain = discard_rate(FRedParams { count: false, ..params }, 6750);
        assert!((plain - 0.01).abs() < 0.001, "{plain}");
    }

    /// A frame is accepted only if all its cells fit: 19,968 + 32 = 20,000
    /// fits, 19,969 does not (thresholds out of the way).
    #[test]
    fn frames_are_never_cut_by_the_limit() {
        let mut f = fred(FRedParams { min_th: 30_000.0, max_th: 40_000.0, ..FRedParams::default() });
        assert_eq!(f.on_arrival(cells(19_968), FRAME, Time::ZERO), None);
        assert_eq!(f.on_arrival(cells(19_969), FRAME, Time::ZERO), Some(DropReason::Overflow));
        assert_eq!(f.on_arrival(cells(19_999), Amount::packet(40, 1), Time::ZERO), None);
    }

    /// w_q = 0.002 per frame; after an idle second at 50 Mb/s, 1500-byte
    /// frames (1696 bytes of cells) give m = ⌊50e6/(8·1696)⌋ = 3685 frames of
    /// decay.
    #[test]
    fn the_average_decays_over_idle_time_in_frames() {
        let mut f = fred(FRedParams::default());
        f.update_average(10_000, Time::ZERO);
        assert!((f.avg() - 20.0).abs() < 1e-12);
        f.on_idle(Time::from_secs(1));
        f.update_average(0, Time::from_secs(2));
        let m = (50e6f64 / (8.0 * 1696.0)).floor() as i32;
        assert!((f.avg() - 20.0 * 0.998f64.powi(m + 1)).abs() < 1e-12, "{}", f.avg());
    }

    #[test]
    fn validation_names_the_parameter() {
        assert_eq!(FRedParams::default().validate(), Ok(()));
        let bad = FRedParams { max_th: 3000.0, ..FRedParams::default() };
        assert!(bad.validate().unwrap_err().starts_with("max_th"));
        let bad = FRedParams { w_q: 0.0, ..FRedParams::default() };
        assert!(bad.validate().unwrap_err().starts_with("w_q"));
        let bad = FRedParams { limit: Limit::Cells(0), ..FRedParams::default() };
        assert!(bad.validate().unwrap_err().contains("limit"));
    }
}
