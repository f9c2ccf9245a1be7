//! Meters, markers and policers: what an edge does to traffic before it
//! reaches a queue.
//!
//! A [`Meter`] measures a packet stream against a traffic profile and gives
//! each packet a colour; an [`Action`] per colour (see [`ColourActions`]) then
//! marks (sets the codepoint and colour), drops (a policer) or passes the
//! packet.
//!
//! ## Map
//!
//! - [`token_bucket`] — single-rate, two-colour token bucket (RFC 3290
//!   §5.1.3, strict conformance): in profile Green, out of profile Red.
//! - [`srtcm`] — Single Rate Three Color Marker (RFC 2697): CIR, CBS, EBS.
//! - [`trtcm`] — Two Rate Three Color Marker (RFC 2698): PIR, PBS, CIR, CBS.
//! - [`tsw`] — Time Sliding Window rate estimator and the TSW2CM / TSW3CM
//!   probabilistic markers (RFC 2859; TSW2CM after Clark & Fang 1998).
//! - [`fgcra`] — the frame-aware Generic Cell Rate Algorithm (ITU-T I.371's
//!   GCRA per AAL5 frame; Tufail, Jennes & Leduc 1999): a frame whose first
//!   cell does not conform is out of profile whole. Counts cells, so it
//!   needs a link with AAL5 framing.
//! - [`twam`] — the TCP-Window-Aware Marker (Bouras & Sevasti 2008,
//!   Section 4): per member of an LSP, in with probability `p_i` (eq. 9)
//!   recomputed every `α·RTT_LSP` from the members' windows, which come in
//!   from outside ([`Twam::observe_window`]).
//! - [`passive_window`] — a window estimate from the packets a marker saw
//!   in the last `RTT_LSP`, for TWAM where the senders' windows cannot be
//!   read.
//!
//! [`AnyMeter`] dispatches statically over the meters of a conditioner rule; it
//! is what a scenario's `[conditioners]` build. TWAM is not one of them: it
//! marks the members of an LSP together, on a timer, from inputs that are not
//! in the packets (the simulator drives it, see `phb-sim`'s LSPs).
//!
//! ## Conventions
//!
//! - Rates (CIR, PIR, CTR, PTR, a token bucket's rate) are in **bits per
//!   second**, as everywhere else in this crate; the RFCs state CIR and PIR in
//!   bytes of IP packets per second, so an RFC rate `r` B/s is `8·r` here.
//!   Burst sizes are in bytes, as in the RFCs.
//! - Packet sizes are IP packet sizes in bytes, headers included.
//! - Token buckets are exact: tokens are counted in units of 1/(8·10⁹) byte,
//!   so a rate of `r` bit/s adds exactly `r` units per nanosecond and no
//!   rounding ever happens (see [`TOKEN_UNITS_PER_BYTE`]).
//! - `now` must not go backwards; an earlier `now` than the previous call adds
//!   no tokens (and for TSW counts as zero elapsed time).
//! - Two-colour meters return only Green (in profile) and Red (out of profile).

pub mod fgcra;
pub mod passive_window;
pub mod srtcm;
pub mod token_bucket;
pub mod trtcm;
pub mod tsw;
pub mod twam;

pub use fgcra::{Fgcra, FgcraParams};
pub use passive_window::PassiveWindow;
pub use srtcm::{Srtcm, SrtcmParams};
pub use token_bucket::{TokenBucket, TokenBucketParams};
pub use trtcm::{Trtcm, TrtcmParams};
pub use tsw::{Tsw2cm, Tsw2cmParams, Tsw3cm, Tsw3cmParams, TswEstimator};
pub use twam::{Twam, TwamParams, WindowSum};

use crate::packet::Colour;
use crate::time::Time;

/// A meter: measures each packet against a profile and returns its colour.
pub trait Meter {
    /// A packet of `size` bytes arriving at `now` with colour `colour` (a
    /// colour-blind meter ignores it; a colour-aware one never improves it).
    fn meter(&mut self, size: u32, colour: Colour, now: Time) -> Colour;
}

/// What an edge does with a packet of a given colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Forward unchanged.
    Pass,
    /// Set the codepoint and colour.
    Mark { codepoint: u8, colour: Colour },
    /// Drop (reason `Policer`).
    Drop,
}

/// One [`Action`] per colour: the marker (or policer) behind a meter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColourActions {
    pub green: Action,
    pub yellow: Action,
    pub red: Action,
}

impl ColourActions {
    /// A policer: pass Green and Yellow, drop Red (out of profile).
    pub const fn policer() -> ColourActions {
        ColourActions { green: Action::Pass, yellow: Action::Pass, red: Action::Drop }
    }

    /// A marker: set each colour and its codepoint, drop nothing.
    pub const fn marker(green: u8, yellow: u8, red: u8) -> ColourActions {
        ColourActions {
            green: Action::Mark { codepoint: green, colour: Colour::Green },
            yellow: Action::Mark { codepoint: yellow, colour: Colour::Yellow },
            red: Action::Mark { codepoint: red, colour: Colour::Red },
        }
    }

    /// The action for a packet the meter coloured `colour`.
    pub const fn action(&self, colour: Colour) -> Action {
        match colour {
            Colour::Green => self.green,
            Colour::Yellow => self.yellow,
            Colour::Red => self.red,
        }
    }
}

/// Whether a meter looks at the colour a packet arrives with (RFC 2697 §3,
/// RFC 2698 §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColourMode {
    /// Every packet is treated as if it arrived Green.
    #[default]
    Blind,
    /// The arriving colour is a ceiling: a Yellow packet is never made Green,
    /// a Red one stays Red.
    Aware,
}

/// Token units per byte: 8 bits × 10⁹ ns/s, so that a rate of `r` bit/s adds
/// exactly `r` units each nanosecond.
pub const TOKEN_UNITS_PER_BYTE: u128 = 8_000_000_000;

/// Tokens (in [`TOKEN_UNITS_PER_BYTE`] units) that `rate_bps` adds between
/// `last` and `now`; zero if `now` is not after `last`.
#[inline]
pub(crate) fn accrued(rate_bps: u64, last: Time, now: Time) -> u128 {
    let dt = now.as_nanos().saturating_sub(last.as_nanos());
    (rate_bps as u128).saturating_mul(dt as u128)
}

/// Bytes as token units.
#[inline]
pub(crate) fn units(bytes: u64) -> u128 {
    bytes as u128 * TOKEN_UNITS_PER_BYTE
}

/// Static dispatch over the meters in this module.
#[derive(Clone, Debug)]
pub enum AnyMeter {
    TokenBucket(TokenBucket),
    Srtcm(Srtcm),
    Trtcm(Trtcm),
    Tsw2cm(Tsw2cm),
    Tsw3cm(Tsw3cm),
    Fgcra(Fgcra),
}

impl Meter for AnyMeter {
    #[inline]
    fn meter(&mut self, size: u32, colour: Colour, now: Time) -> Colour {
        match self {
            AnyMeter::TokenBucket(m) => m.meter(size, colour, now),
            AnyMeter::Srtcm(m) => m.meter(size, colour, now),
            AnyMeter::Trtcm(m) => m.meter(size, colour, now),
            AnyMeter::Tsw2cm(m) => m.meter(size, colour, now),
            AnyMeter::Tsw3cm(m) => m.meter(size, colour, now),
            AnyMeter::Fgcra(m) => m.meter(size, colour, now),
        }
    }
}

impl AnyMeter {
    /// Meters one packet (the same as [`Meter::meter`], without importing the trait).
    #[inline]
    pub fn meter(&mut self, size: u32, colour: Colour, now: Time) -> Colour {
        Meter::meter(self, size, colour, now)
    }
}

macro_rules! any_meter_from {
    ($($variant:ident),*) => {$(
        impl From<$variant> for AnyMeter {
            fn from(m: $variant) -> AnyMeter {
                AnyMeter::$variant(m)
            }
        }
    )*};
}
any_meter_from!(TokenBucket, Srtcm, Trtcm, Tsw2cm, Tsw3cm, Fgcra);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policer_drops_red_only_and_marker_sets_colour() {
        let p = ColourActions::policer();
        assert_eq!(p.action(Colour::Green), Action::Pass);
        assert_eq!(p.action(Colour::Yellow), Action::Pass);
        assert_eq!(p.action(Colour::Red), Action::Drop);
        let m = ColourActions::marker(10, 12, 14);
        assert_eq!(m.action(Colour::Yellow), Action::Mark { codepoint: 12, colour: Colour::Yellow });
    }

    #[test]
    fn any_meter_dispatches() {
        let tb = TokenBucket::new(TokenBucketParams { rate: 8_000, burst_size: 100 }).unwrap();
        let mut m = AnyMeter::from(tb);
        assert_eq!(m.meter(100, Colour::Green, Time::ZERO), Colour::Green);
        assert_eq!(m.meter(1, Colour::Green, Time::ZERO), Colour::Red);
    }

    #[test]
    fn accrual_is_exact_and_never_negative() {
        // 8000 bit/s for 1 ms = 1 byte exactly.
        assert_eq!(accrued(8_000, Time::ZERO, Time::from_millis(1)), units(1));
        assert_eq!(accrued(8_000, Time::from_millis(2), Time::from_millis(1)), 0);
        assert_eq!(accrued(u64::MAX, Time::ZERO, Time::MAX), u64::MAX as u128 * u64::MAX as u128);
    }
}
