//! Classification and edge conditioning: which packets get which treatment.
//!
//! - [`dscp`] — the behaviour-aggregate table: standard DSCP names ↔
//!   codepoints (RFC 2474, 2597, 3246, 5865, 8622) and the drop precedence an
//!   AF codepoint encodes.
//! - [`multifield`] — the multi-field classifier of RFC 2475 §2.3.1: a
//!   [`Match`] over codepoint, flow, flow group, source, destination and
//!   protocol, and its compiled form [`Matcher`].
//! - [`conditioner`] — the edge traffic conditioner of RFC 2475 §2.3.3 /
//!   RFC 3290: ordered rules (match → meter → per-colour action), first match
//!   wins, with per-rule statistics.
//!
//! Start with [`ConditionerConfig`]: a scenario validates it, the simulator
//! builds one [`Conditioner`] per node that runs it and calls
//! [`Conditioner::condition`] for each packet entering the DiffServ domain.

pub mod conditioner;
pub mod dscp;
pub mod multifield;

pub use conditioner::{
    Conditioner, ConditionerConfig, ConditionerCounts, Counts, MeterConfig, Rule, RuleConfig, RuleStats, Verdict,
};
pub use multifield::{Match, Matcher, PacketKey, Protocol};
