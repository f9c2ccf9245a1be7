//! UDP traffic sources.
//!
//! A source decides when its flow's next packet leaves; the simulator
//! creates the packet. Models follow ns-2's traffic generators, which the
//! papers used:
//!
//! - [`cbr`] — constant bit rate.
//! - [`onoff`] — ON/OFF bursts with Pareto or exponential ON and OFF
//!   durations (`Application/Traffic/Pareto`, `…/Exponential`).
//! - [`burst`] — fixed bursts of packets at a peak rate, then a fixed OFF
//!   period (the JoBS paper's on-off UDP sources).
//! - [`poisson`] — Poisson arrivals at a mean rate.
//! - [`voip`] — voice: a codec's frames with their headers (the BEDS
//!   paper's G.723.1 in 82-byte frames every 30 ms), in exponential talk
//!   spurts and silences.

pub mod burst;
pub mod cbr;
pub mod onoff;
pub mod poisson;
pub mod voip;

use phb::Time;

pub use burst::Burst;
pub use cbr::Cbr;
pub use onoff::{OnOff, Period};
pub use poisson::Poisson;

/// A source's packet timing.
#[derive(Clone, Debug)]
pub enum Source {
    Cbr(Cbr),
    OnOff(OnOff),
    Burst(Burst),
    Poisson(Poisson),
}

impl Source {
    /// Delay from the source's start to its first packet.
    pub fn first_gap(&mut self) -> Time {
        match self {
            Source::Cbr(_) | Source::Burst(_) => Time::ZERO,
            Source::OnOff(s) => s.next_gap(),
            Source::Poisson(s) => s.next_gap(),
        }
    }

    /// Delay from the packet just sent to the next one.
    #[inline]
    pub fn next_gap(&mut self) -> Time {
        match self {
            Source::Cbr(s) => s.next_gap(),
            Source::OnOff(s) => s.next_gap(),
            Source::Burst(s) => s.next_gap(),
            Source::Poisson(s) => s.next_gap(),
        }
    }
}
