//! Measurement: what the simulator counts while it runs.
//!
//! - [`histogram`] — a log-linear histogram of delays (bounded memory, ≤ 0.8%
//!   relative error on percentiles, exact mean and maximum).
//! - [`counters`] — per-class counters at one point of the network (a link
//!   direction, or end to end), with a snapshot taken at the end of the
//!   warm-up so that reported figures cover only the measured period.
//! - [`delay_ratio`] — the delay ratio of two classes at one scope, per
//!   packet and averaged over intervals of stated timescales (opt-in:
//!   `run.delay_ratios`).

pub mod counters;
pub mod delay_ratio;
pub mod histogram;

pub use counters::{ClassStats, Counts};
pub use delay_ratio::{DelayRatioMeter, RatioSummary, Totals};
pub use histogram::DelayHistogram;
