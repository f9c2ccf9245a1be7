//! Measurement: what the simulator counts while it runs.
//!
//! - [`histogram`] — a log-linear histogram of delays (bounded memory, ≤ 0.8%
//!   relative error on percentiles, exact mean and maximum).
//! - [`counters`] — per-class counters at one point of the network (a link
//!   direction, or end to end), with a snapshot taken at the end of the
//!   warm-up so that reported figures cover only the measured period.

pub mod counters;
pub mod histogram;

pub use counters::{ClassStats, Counts};
pub use histogram::DelayHistogram;
