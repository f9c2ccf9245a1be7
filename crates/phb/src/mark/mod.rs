//! Meters, markers and policers: what an edge does to traffic before it
//! reaches a queue.
//!
//! A [`Meter`] measures a packet stream against a traffic profile and gives
//! each packet a colour; an [`Action`] per colour then marks (sets the
//! codepoint and colour), drops (a policer) or passes the packet.

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
