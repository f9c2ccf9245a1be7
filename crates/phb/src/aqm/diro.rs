//! DI-RO: Deterministic for In, RED for Out.
//!
//! M. Tufail, G. Jennes, G. Leduc, "Attaining per flow QoS with class-based
//! differentiated services", SPIE Broadband Networks, 1999, Section 2.2
//! item 2. The buffer is the head queue of an ATM switch port, counted in
//! cells; packets travel as AAL5 frames ([`crate::framing`]) and an edge
//! marker (F-GCRA, [`crate::mark::fgcra`]) has tagged the frames of an
//! aggregate that exceeded its SLA as out of profile (every cell CLP1).
//!
//! **Model.** When the first cell of a frame arrives (once per packet here):
//!
//! - **in profile** (colour Green, CLP0): the frame is accepted whole unless
//!   its cells do not fit in the buffer ("accepted ... except if the buffer
//!   overflows");
//! - **out of profile** (any other colour, CLP1): F-RED ([`super::fred`])
//!   decides on the average of the *total* buffer, in and out cells alike
//!   ("based on the total number of cells (regardless of their CLP
//!   values)"): accept below `min_th`, discard with a probability rising to
//!   `max_p` at `max_th` and on to 1 at `2·max_th`, always above; an accepted
//!   frame must still fit.
//!
//! The paper has the RED part compute the average "whenever the first
//! out-of-profile cell of an AAL5 frame arrives", so by default only
//! out-of-profile frames update it; `average_all` makes every frame update
//! it (RED's usual rule) for comparison. The paper's point against RIO
//! (Clark & Fang 1998, [`super::rio`]): RIO may discard in-profile packets
//! early while the buffer is not full, DI-RO never does; its RED part must
//! therefore be tuned so that the buffer does not overflow (the paper's
//! Phase 2: `min_th` 1,000, `max_th` 7,000 cells in a 20,000-cell buffer).

use crate::aqm::fred::{FRed, FRedParams};
use crate::aqm::{Amount, LimitRule};
use crate::framing::Framing;
use crate::packet::{Colour, DropReason};
use crate::rng::Rng;
use crate::time::Time;

/// DI-RO's parameters: the F-RED of its out-of-profile part.
#[derive(Clone, Debug, PartialEq)]
pub struct DiRoParams {
    /// The RED part, on the total backlog in cells; its `limit` is the
    /// buffer's, for in- and out-of-profile frames alike.
    pub red: FRedParams,
    /// Update the average at every frame, not only at out-of-profile ones.
    pub average_all: bool,
}

impl Default for DiRoParams {
    /// The paper's Phase 2 (Section 3): `min_th` 1,000 and `max_th` 7,000
    /// cells, `max_p` 0.02, `w_q` 0.002, 20,000 cells of buffer; the average
    /// updated at out-of-profile frames only, as the paper words it.
    fn default() -> Self {
        DiRoParams { red: FRedParams { min_th: 1000.0, max_th: 7000.0, ..FRedParams::default() }, average_all: false }
    }
}

impl DiRoParams {
    pub fn validate(&self) -> Result<(), String> {
        self.red.validate()
    }
}

/// One DI-RO guarding one buffer.
#[derive(Clone, Debug)]
pub struct DiRo {
    red: FRed,
    average_all: bool,
}

impl DiRo {
    /// Frames are never cut: the arrival must fit.
    pub const LIMIT_RULE: LimitRule = FRed::LIMIT_RULE;

    /// A DI-RO guarding a buffer drained at `link_rate_bps` on a link with `framing`.
    pub fn new(params: DiRoParams, link_rate_bps: u64, framing: Framing, rng: Rng) -> DiRo {
        DiRo { red: FRed::new(params.red, link_rate_bps, framing, rng), average_all: params.average_all }
    }

    /// The RED part's average, cells.
    pub fn avg(&self) -> f64 {
        self.red.avg()
    }

    pub fn params(&self) -> &FRedParams {
        self.red.params()
    }

    #[inline]
    pub fn on_idle(&mut self, now: Time) {
        self.red.on_idle(now);
    }

    /// A frame (`arrival`) of `colour` arrives at `now` at a buffer holding
    /// `held`: why it is discarded whole, or `None` to accept it whole.
    pub fn on_arrival(&mut self, held: Amount, arrival: Amount, colour: Colour, now: Time) -> Option<DropReason> {
        if colour == Colour::Green {
            if self.average_all {
                self.red.update_average(held.cells, now);
            }
            return self.red.overflow(held, arrival);
        }
        self.red.on_arrival(held, arrival, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::Limit;

    fn cells(n: u64) -> Amount {
        Amount { pkts: n / 32, bytes: n / 32 * 1500, cells: n }
    }

    const FRAME: Amount = Amount::packet(1500, 32);

    fn diro(average_all: bool) -> DiRo {
        let red = FRedParams { w_q: 1.0, ..DiRoParams::default().red };
        DiRo::new(DiRoParams { red, average_all }, 50_000_000, Framing::AAL5, Rng::derive(1, "diro"))
    }

    /// In-profile frames pass whatever the average, up to the last cell of
    /// the buffer: at 15,000 cells (far above 2·max_th = 14,000) every green
    /// frame is accepted and every red one discarded (forced); at 19,969
    /// cells a green frame of 32 cells no longer fits.
    #[test]
    fn in_profile_is_deterministic_out_of_profile_is_red() {
        let mut d = diro(false);
        for _ in 0..1000 {
            assert_eq!(d.on_arrival(cells(15_000), FRAME, Colour::Red, Time::ZERO), Some(DropReason::ForcedDrop));
            assert_eq!(d.on_arrival(cells(15_000), FRAME, Colour::Green, Time::ZERO), None);
        }
        assert_eq!(d.on_arrival(cells(19_968), FRAME, Colour::Green, Time::ZERO), None);
        assert_eq!(d.on_arrival(cells(19_969), FRAME, Colour::Green, Time::ZERO), Some(DropReason::Overflow));
        // Yellow counts as out of profile (CLP1) too.
        assert_eq!(d.on_arrival(cells(15_000), FRAME, Colour::Yellow, Time::ZERO), Some(DropReason::ForcedDrop));
        // Below min_th out-of-profile frames pass.
        assert_eq!(d.on_arrival(cells(900), FRAME, Colour::Red, Time::ZERO), None);
    }

    /// The average is over all cells, and by default only out-of-profile
    /// frames update it: green arrivals at 15,000 cells leave an average the
    /// last red arrival set at 500 cells (w_q = 1), so a red frame arriving
    /// then at 500 cells is accepted. With `average_all` the greens move it.
    #[test]
    fn the_average_moves_at_out_of_profile_frames_by_default() {
        let mut d = diro(false);
        d.on_arrival(cells(500), FRAME, Colour::Red, Time::ZERO);
        for _ in 0..10 {
            d.on_arrival(cells(15_000), FRAME, Colour::Green, Time::ZERO);
        }
        assert_eq!(d.avg(), 500.0);
        let mut all = diro(true);
        all.on_arrival(cells(500), FRAME, Colour::Red, Time::ZERO);
        all.on_arrival(cells(15_000), FRAME, Colour::Green, Time::ZERO);
        assert_eq!(all.avg(), 15_000.0);
    }

    /// Out-of-profile frames meet the F-RED curve of the total: held at
    /// 4,000 cells (p_b = 0.02·3000/6000 = 0.01), about 1% of them are
    /// discarded without spacing; none of the in-profile ones.
    #[test]
    fn out_of_profile_frames_meet_the_curve_of_the_total() {
        let red = FRedParams { w_q: 1.0, count: false, limit: Limit::Cells(20_000), ..DiRoParams::default().red };
        let mut d = DiRo::new(DiRoParams { red, average_all: false }, 50_000_000, Framing::AAL5, Rng::derive(2, "d"));
        let n = 200_000;
        let out = (0..n).filter(|_| d.on_arrival(cells(4000), FRAME, Colour::Red, Time::ZERO).is_some()).count();
        let rate = out as f64 / n as f64;
        assert!((rate - 0.01).abs() < 0.001, "{rate}");
        assert!((0..n).all(|_| d.on_arrival(cells(4000), FRAME, Colour::Green, Time::ZERO).is_none()));
    }
}
