//! Packet traces (issue 29): what a scenario's `[trace]` section asks to
//! record of the packets at chosen link directions.
//!
//! - [`event`] — the events of a packet's passage through a direction.
//! - [`event_log`] — the event log, streamed to `events.parquet`.
//! - [`pcap`] — the packets transmitted, streamed to `trace.pcapng`.
//! - [`record`] — the simulator's hooks: a traced port's events become rows.
//! - [`select`] — what a `[trace]` selects and how its log is opened, the
//!   same for the simulator and the emulator's router.
//!
//! Tracing costs nothing when off: the simulator is generic over its
//! [`Tracing`], and an untraced run's ([`NoTrace`]) hooks are constant
//! `false`, so its loop holds no trace code and tests nothing per packet.

pub mod event;
pub mod event_log;
pub mod pcap;
mod record;
pub mod select;

pub use event::TraceEvent;
pub(crate) use record::{NoTrace, Tracer, Tracing};

/// The event log's file name in the trace directory.
pub const EVENT_LOG_FILE: &str = "events.parquet";
