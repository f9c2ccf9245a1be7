//! # phb-sim — the discrete-event packet simulator of phblab
//!
//! ## Map
//!
//! - [`scenario`] — TOML scenario files: raw form, units, validation, overrides.
//! - [`engine`] — the event list and the clock (integer nanoseconds).
//! - [`net`] — nodes, full-duplex links with an optional random-loss element
//!   and an output qdisc per direction, routing (shortest path or pinned).
//! - [`traffic`] — UDP sources: CBR, Pareto and exponential ON/OFF.
//! - [`tcp`] — TCP senders (Reno, NewReno, SACK) and receivers (SACK,
//!   delayed ACKs), as state machines free of the simulator.
//! - [`apps`] — what TCP carries: bulk transfers, files, phased on/off.
//! - [`measure`] — per-class counters and delay histograms.
//! - [`output`] — the tables a run returns.
//! - [`scope`] — scope names: end to end, a link direction.
//! - [`trace`] — packet traces: the event log of chosen link directions.
//! - [`trace_select`] — what a scenario's `[trace]` selects, for the
//!   simulator and the emulator's router alike.
//!
//! Start with [`run`]: it builds the network a [`scenario::Scenario`]
//! describes, runs it (`sim.rs`: the event loop and a packet's walk), checks
//! packet conservation and returns the result tables (`report.rs`).
//!
//! The modules form layers that depend one way, `scope` at the bottom and
//! `sim` at the top (`docs/architecture.md`, "The simulator's modules");
//! `tests/module_layers.rs` fails if a module uses one above it.

pub mod advice;
pub mod apps;
pub mod engine;
mod flow;
pub mod lsp;
pub mod measure;
pub mod net;
pub mod output;
mod report;
pub mod scenario;
pub mod scope;
mod sim;
pub mod tcp;
pub mod trace;
pub mod trace_select;
pub mod traffic;

pub use flow::FlowCounts;
pub use output::{Column, RunOutput, Table};
pub use report::{
    delay_ratios_table, flows_table, transfers_table, ClassRows, ConditionerRows, CounterRows, FlowFacts, PortAt,
    SenderFigures, TimeSeries,
};
pub use scenario::{load, load_for, Backend, Scenario, ScenarioError};
pub use scope::END_TO_END;
pub use sim::{run, run_traced, run_with, trace_arrivals, Arrival, RunError};
