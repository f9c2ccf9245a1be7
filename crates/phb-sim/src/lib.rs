//! # phb-sim — the discrete-event packet simulator of phblab
//!
//! ## Map
//!
//! - [`scenario`] — TOML scenario files: raw form, units, validation, overrides.
//! - [`engine`] — the event list and the clock (integer nanoseconds).
//! - [`net`] — nodes, full-duplex links with an output qdisc per direction,
//!   routing (shortest path or pinned per flow).
//! - [`traffic`] — UDP sources: CBR, Pareto and exponential ON/OFF.
//! - [`measure`] — per-class, per-link and per-flow statistics, time series,
//!   and the packet-conservation check.
//! - [`output`] — the tables a run returns.
//!
//! Start with [`run`]: it builds the network a [`scenario::Scenario`]
//! describes, runs it, and returns the result tables.

pub mod engine;
pub mod measure;
pub mod net;
pub mod output;
pub mod scenario;
pub mod sim;
mod report;
pub mod traffic;

pub use output::{Column, RunOutput, Table};
pub use scenario::{load, Scenario, ScenarioError};
pub use sim::{run, RunError};
