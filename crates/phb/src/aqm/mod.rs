//! Active queue management: the policies that decide whether an arriving
//! packet may join a buffer.
//!
//! - [`red`] — Random Early Detection (Floyd & Jacobson 1993) with ns-2's
//!   refinements (gentle, wait, byte mode, idle-time correction). Start here:
//!   the others reuse its average, drop curve and count-based spacing.
//! - [`wred`] — Weighted RED: one average over the whole buffer, one
//!   (`min_th`, `max_th`, `max_p`) triple per colour (ns-2 dsRED's WRED mode).
//! - [`rio`] — RED with In and Out, coupled (RIO-C) or decoupled (RIO-D)
//!   averages per colour (Clark & Fang 1998; ns-2 dsRED's RIO_C / RIO_D).
//! - [`dwred`] — Dynamic WRED (Bouras & Sevasti 2008, Section 5): one
//!   average over in and out packets, RED's curve for out packets only, in
//!   packets dropped only when the buffer is full, and thresholds reset
//!   every operating interval to the LSP's window (`max_th = Σ W_i^cwnd`,
//!   `min_th = b·max_th`, eqs. 11–12).
//! - [`adaptive_red`] — Adaptive RED (Floyd, Gummadi & Shenker 2001): AIMD on
//!   `max_p` to hold the average in a target band; automatic `w_q`.
//! - [`codel`] — CoDel (RFC 8289): a dequeue-time dropper on sojourn time.
//! - [`pie`] — PIE (RFC 8033): a PI controller on queueing delay sets an
//!   arrival drop probability.
//! - [`plr`] — Proportional Loss Rate droppers PLR(M) and PLR(∞) (Dovrolis &
//!   Ramanathan 2000): given that an AQM drops one packet, choose the class
//!   that loses it so that loss rates stay proportional to `σ_i`.
//! - [`fred`] — F-RED (Tufail, Jennes & Leduc 1999, Section 2.2.1): RED
//!   on a head queue counted in ATM cells, deciding once per AAL5 frame,
//!   with the gentle region up to `2·max_th`. Not Lin & Morris' Flow RED.
//! - [`diro`] — DI-RO (the same paper, Section 2.2.2): in-profile frames
//!   admitted unless the buffer overflows, out-of-profile frames through
//!   F-RED on the average of the whole buffer.
//! - [`plc`] — the Packet Loss Controller (Vukadinović 2004, Section 6):
//!   behind a RED on the total backlog of a TCP and a UDP queue served by
//!   BPR, rescues TCP packets RED marks and evicts queued UDP bytes instead.
//! - [`loss_ratio`] — BEDS' forced loss ratio (Firoiu, Zhang & Guo 2001,
//!   Section V.B): a buffer that drops with `λ` times the probability
//!   another buffer's RED computes — a coupling that names the buffer it
//!   reads.
//!
//! Arrival-time droppers (`red`, `wred`, `dwred`, `rio`, `adaptive_red`, `pie`) answer
//! `on_arrival(.., now) -> Option<DropReason>` and want `on_idle(now)` when the
//! link finds the buffer empty; CoDel answers `on_dequeue(.., now) -> bool`.
//! Periodic updates (Adaptive RED, PIE) are made lazily, on the first hook call
//! at or after each due time, catching up every missed period in order, so no
//! timer is needed and the result equals a timer's.
//!
//! A policy sees the backlog of the buffer it guards, which may be one queue
//! or several class queues sharing one average (see [`crate::queue::classful`]).

pub mod adaptive_red;
pub mod codel;
pub mod diro;
pub mod dwred;
pub mod fred;
pub mod loss_ratio;
pub mod pie;
pub mod plc;
pub mod plr;
pub mod red;
pub mod rio;
pub mod wred;

#[cfg(test)]
pub(crate) mod testbed;

use crate::packet::Colour;

/// A buffer limit: in packets, in bytes, or in ATM cells (on a link with
/// AAL5 framing, [`crate::framing`]; F-RED, DI-RO and drop-tail buffers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
    Cells(u64),
}

/// How a mechanism judges an arrival against its buffer's [`Limit`]. The two
/// agree for a packet limit (admit while fewer than `n` packets are queued)
/// and differ for a byte limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitRule {
    /// ns-2's: drop when the buffer already holds the limit, admit below it
    /// whatever the arrival's size, so a byte limit may be overshot by less
    /// than one packet. ns-2 `queue/red.cc` (`qlen >= qlim` is a forced drop,
    /// `qlen` the bytes queued in byte mode) and `diffserv/dsredq.cc`
    /// (`q_->length() > qlim-1`). The RED family's rule: RED, Adaptive RED,
    /// WRED, RIO (and so PLC and PLR on their buffers).
    Ns2,
    /// The arrival must fit: `bytes + size ≤ n`; the buffer never holds more
    /// than the limit. Drop-tail's, CoDel's and PIE's rule.
    Fits,
}

impl Limit {
    /// Whether a buffer holding `pkts` packets of `bytes` bytes admits one
    /// more packet of `size` bytes under `rule` (a packet or byte limit;
    /// see [`Limit::excess`] for a cell limit).
    #[inline]
    pub fn admits(self, rule: LimitRule, pkts: u64, bytes: u64, size: u32) -> bool {
        self.excess(rule, pkts, bytes, size) == 0
    }

    /// What must leave the buffer (packets for a packet limit, bytes for a
    /// byte limit) before it admits the arrival under `rule`; 0 when it
    /// admits it now. A cell limit needs the cells too: this is
    /// [`Limit::excess_in`] with no cells held and none arriving.
    #[inline]
    pub fn excess(self, rule: LimitRule, pkts: u64, bytes: u64, size: u32) -> u64 {
        self.excess_in(rule, Amount { pkts, bytes, cells: 0 }, Amount { pkts: 1, bytes: size as u64, cells: 0 })
    }

    /// What must leave a buffer holding `held` (packets, bytes or cells, the
    /// limit's unit) before it admits `arrival` under `rule`; 0 when it
    /// admits it now.
    #[inline]
    pub fn excess_in(self, rule: LimitRule, held: Amount, arrival: Amount) -> u64 {
        match (self, rule) {
            (Limit::Packets(n), _) => (held.pkts + 1).saturating_sub(n),
            (Limit::Bytes(n), LimitRule::Ns2) => (held.bytes + 1).saturating_sub(n),
            (Limit::Bytes(n), LimitRule::Fits) => (held.bytes + arrival.bytes).saturating_sub(n),
            (Limit::Cells(n), LimitRule::Ns2) => (held.cells + 1).saturating_sub(n),
            (Limit::Cells(n), LimitRule::Fits) => (held.cells + arrival.cells).saturating_sub(n),
        }
    }

    /// Whether a buffer holding `held` admits `arrival` under `rule`.
    #[inline]
    pub fn admits_in(self, rule: LimitRule, held: Amount, arrival: Amount) -> bool {
        self.excess_in(rule, held, arrival) == 0
    }

    /// A limit must be positive.
    pub fn validate(self) -> Result<(), String> {
        match self {
            Limit::Packets(0) | Limit::Bytes(0) | Limit::Cells(0) => Err("limit must be positive".into()),
            _ => Ok(()),
        }
    }

    /// For the policies that count packets or bytes only (the RED family,
    /// CoDel, PIE): a limit in cells is refused, naming F-RED and DI-RO,
    /// the droppers that count cells.
    pub fn validate_not_cells(self) -> Result<(), String> {
        match self {
            Limit::Cells(_) => {
                Err("limit in cells: only droptail, fred and diro buffers count cells (on a link with AAL5 framing)"
                    .into())
            }
            other => other.validate(),
        }
    }

    /// Whether the limit counts cells.
    pub fn is_cells(self) -> bool {
        matches!(self, Limit::Cells(_))
    }
}

/// An amount in the three units a buffer may count: what a buffer holds,
/// or what one arriving packet adds (`pkts = 1`). `cells` is 0 on a link
/// without cell framing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Amount {
    pub pkts: u64,
    pub bytes: u64,
    pub cells: u64,
}

impl Amount {
    /// One packet of `size` bytes carried in `cells` cells.
    #[inline]
    pub const fn packet(size: u32, cells: u32) -> Amount {
        Amount { pkts: 1, bytes: size as u64, cells: cells as u64 }
    }
}

/// What a buffer holds when a packet arrives, in total and by colour
/// (indexed by `Colour as usize`), for policies that treat drop precedences
/// differently (WRED, RIO). `cells` is the total in ATM cells on a link
/// with AAL5 framing (0 otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub pkts: u64,
    pub bytes: u64,
    pub cells: u64,
    pub pkts_by_colour: [u64; 3],
    pub bytes_by_colour: [u64; 3],
}

impl Backlog {
    /// The totals, in the three units a limit may count.
    #[inline]
    pub fn held(&self) -> Amount {
        Amount { pkts: self.pkts, bytes: self.bytes, cells: self.cells }
    }

    /// A backlog of `pkts_by_colour` packets (green, yellow, red), all of
    /// `packet_size` bytes.
    pub fn of_packets(pkts_by_colour: [u64; 3], packet_size: u64) -> Backlog {
        Backlog {
            pkts: pkts_by_colour.iter().sum(),
            bytes: pkts_by_colour.iter().sum::<u64>() * packet_size,
            cells: 0,
            pkts_by_colour,
            bytes_by_colour: pkts_by_colour.map(|p| p * packet_size),
        }
    }
}

/// One drop precedence's RED curve, as the DiffServ droppers (WRED, RIO) and
/// ns-2's dsRED give it per colour: thresholds of the average in packets and
/// the drop probability at `max_th`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
}

impl Thresholds {
    pub const fn new(min_th: f64, max_th: f64, max_p: f64) -> Thresholds {
        Thresholds { min_th, max_th, max_p }
    }

    /// Checks `0 ≤ min_th < max_th` and `0 < max_p ≤ 1`; `what` names the
    /// triple in the message (e.g. `"yellow"`).
    pub fn validate(&self, what: &str) -> Result<(), String> {
        if self.min_th.is_nan() || self.min_th < 0.0 {
            return Err(format!("{what}: min_th must be >= 0, got {}", self.min_th));
        }
        if self.max_th.is_nan() || self.max_th <= self.min_th {
            return Err(format!("{what}: max_th ({}) must be greater than min_th ({})", self.max_th, self.min_th));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(format!("{what}: max_p must be in (0, 1], got {}", self.max_p));
        }
        Ok(())
    }
}

/// The colours in index order, with their names for messages.
pub(crate) const COLOURS: [(Colour, &str); 3] =
    [(Colour::Green, "green"), (Colour::Yellow, "yellow"), (Colour::Red, "red")];

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 11: `Limit::Bytes(25_000)`, 24,000 bytes queued, a 1,500-byte
    /// arrival: ns-2 admits it (the limit is not yet reached), the fitting
    /// rule does not (25,500 > 25,000). At 25,000 bytes queued both drop.
    #[test]
    fn byte_limit_rules() {
        let limit = Limit::Bytes(25_000);
        assert!(limit.admits(LimitRule::Ns2, 16, 24_000, 1500));
        assert!(!limit.admits(LimitRule::Fits, 16, 24_000, 1500));
        assert_eq!(limit.excess(LimitRule::Fits, 16, 24_000, 1500), 500);
        assert!(limit.admits(LimitRule::Ns2, 16, 24_999, 1500));
        assert!(!limit.admits(LimitRule::Ns2, 17, 25_000, 40));
        assert_eq!(limit.excess(LimitRule::Ns2, 17, 25_000, 40), 1);
        assert_eq!(limit.excess(LimitRule::Ns2, 17, 25_500, 40), 501);
        assert!(limit.admits(LimitRule::Fits, 16, 24_960, 40));
    }

    /// A cell limit of 20,000 cells: 19,990 held, a 32-cell frame fits under
    /// ns-2's rule (the limit is not reached) but not under the fitting
    /// rule (22 cells too many); 20,000 held refuse even a 1-cell frame.
    #[test]
    fn cell_limit_rules() {
        let limit = Limit::Cells(20_000);
        let held = Amount { pkts: 700, bytes: 1_000_000, cells: 19_990 };
        let frame = Amount::packet(1500, 32);
        assert!(limit.admits_in(LimitRule::Ns2, held, frame));
        assert_eq!(limit.excess_in(LimitRule::Fits, held, frame), 22);
        let full = Amount { cells: 20_000, ..held };
        assert_eq!(limit.excess_in(LimitRule::Ns2, full, Amount::packet(40, 1)), 1);
        assert!(!limit.admits_in(LimitRule::Fits, full, Amount::packet(40, 1)));
        assert!(limit.admits_in(LimitRule::Fits, Amount { cells: 19_968, ..held }, frame));
        assert!(Limit::Cells(0).validate().is_err());
        assert!(Limit::Cells(5).validate_not_cells().unwrap_err().contains("fred"));
    }

    /// A packet limit is the same under both rules.
    #[test]
    fn packet_limit_rules_agree() {
        for rule in [LimitRule::Ns2, LimitRule::Fits] {
            assert!(Limit::Packets(10).admits(rule, 9, 1_000_000, 1500));
            assert!(!Limit::Packets(10).admits(rule, 10, 0, 1));
            assert_eq!(Limit::Packets(10).excess(rule, 12, 0, 1), 3);
        }
    }
}
