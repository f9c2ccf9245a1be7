//! Queueing disciplines: what sits on a link's output and decides which
//! packets wait, which leave next, and which are dropped.
//!
//! [`Qdisc`] is the one type the simulator (and later the router) drives. It
//! is an enum, so calls dispatch statically on the hot path; mechanisms that
//! couple dropping and scheduling in their own way (BPR+PLC, JoBS, BEDS)
//! become further variants.
//!
//! - [`fifo`] — FIFO with drop-tail, the classful qdisc's one-queue
//!   drop-tail case ([`QdiscConfig::fifo`]) in a form of its own: the
//!   commonest qdisc (every host's access link), at a fraction of the
//!   classful machinery's memory and time.
//! - [`classful`] — the composition classifier → per-class queues with a
//!   buffer policy (drop-tail, RED, WRED, RIO, Adaptive RED, CoDel, PIE;
//!   possibly shared by several queues) → scheduler (any of [`crate::sched`]).
//!   A FIFO drop-tail queue and a single RED queue are its one-queue cases.
//!   A shared buffer may choose its victims with PLR or PLC (BPR with PLC is
//!   the Vukadinović thesis' architecture, Fig. 7).
//! - [`jobs`] — JoBS (Christin, Liebeherr & Abdelzaher 2001): absolute and
//!   proportional delay, loss and rate guarantees from one algorithm that
//!   drops, sets service rates and picks the next packet. A classful
//!   configuration with `scheduler = SchedulerKind::Jobs` (one shared
//!   drop-tail buffer, the `B` of its eq. 63) builds it.

pub mod classful;
pub mod fifo;
pub mod jobs;

use crate::framing::Framing;
use crate::packet::{DropReason, Packet};
use crate::rng::Rng;
use crate::time::Time;

pub use classful::{BufferConfig, BufferPolicy, Classful, QdiscConfig, QueueConfig, SchedulerKind, Victim};
pub use fifo::Fifo;
pub use jobs::{Jobs, JobsClass, JobsParams};

/// Where a discipline puts the packets it drops: the arriving one, or any it
/// pushes out. The caller owns it and drains it after each call, so the hot
/// path allocates nothing.
pub type Dropped<M> = Vec<(Packet<M>, DropReason)>;

/// A packet a discipline hands to its link, and whether the discipline set
/// its CE mark on the way out (CoDel's ECN marking at dequeue).
#[derive(Debug)]
pub struct Departure<M> {
    pub pkt: Packet<M>,
    pub marked: bool,
}

/// One of a discipline's own counts of its decisions (JoBS' relaxations,
/// for instance), for the result tables: qdisc-wide (`queue: None`) or of
/// one queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    pub queue: Option<usize>,
    pub name: &'static str,
    pub value: u64,
}

/// A queueing discipline on one output port.
///
/// The hooks, in the order the simulator (or the router) calls them:
/// [`Qdisc::enqueue`] when a packet reaches the port (after any edge
/// conditioner and loss element); [`Qdisc::dequeue`] whenever the link is
/// free, and again when it becomes free, until it gives nothing; then, if
/// packets wait, [`Qdisc::next_wakeup`] for a rate cap's next instant.
/// Every packet the discipline drops, on arrival or on the way out, goes
/// onto the caller's `dropped` with its [`DropReason`]. The rest are
/// queries for measurement and signals (`signal`, DWRED's channel), never
/// on the packet path. Large variants are boxed, so that a port holding
/// the common FIFO stays small.
#[derive(Debug)]
pub enum Qdisc<M> {
    Fifo(Fifo<M>),
    Classful(Box<Classful<M>>),
    Jobs(Box<Jobs<M>>),
}

impl<M> Qdisc<M> {
    /// Builds the discipline `config` describes for a link of `link_rate_bps`;
    /// random decisions draw from `rng`.
    pub fn new(config: &QdiscConfig, link_rate_bps: u64, rng: Rng) -> Qdisc<M> {
        Qdisc::with_framing(config, link_rate_bps, Framing::None, rng)
    }

    /// As [`Qdisc::new`] for a link with `framing`: on an ATM link (AAL5)
    /// the buffers also count cells and schedulers see wire sizes
    /// ([`crate::framing`]).
    pub fn with_framing(config: &QdiscConfig, link_rate_bps: u64, framing: Framing, rng: Rng) -> Qdisc<M> {
        if let Some(limit) = config.as_fifo() {
            config.validate_for(framing).expect("qdisc configuration must be validated before use");
            return Qdisc::Fifo(Fifo::new(limit, framing));
        }
        match &config.scheduler {
            SchedulerKind::Jobs(params) => {
                config.validate_for(framing).expect("qdisc configuration must be validated before use");
                Qdisc::Jobs(Box::new(Jobs::new(
                    params,
                    config.codepoint_table(),
                    config.buffers[0].policy.limit(),
                    link_rate_bps,
                )))
            }
            _ => Qdisc::Classful(Box::new(Classful::with_framing(config, link_rate_bps, framing, rng))),
        }
    }

    /// Offers an arriving packet at `now`. A packet it drops (this one or
    /// others) is pushed onto `dropped` with its reason. `true` when it
    /// admitted the packet with a CE mark it set instead of an early drop
    /// (ECN, [`classful`]).
    #[inline(always)]
    pub fn enqueue(&mut self, pkt: Packet<M>, now: Time, dropped: &mut Dropped<M>) -> bool {
        match self {
            Qdisc::Fifo(q) => {
                q.enqueue(pkt, now, dropped);
                false
            }
            Qdisc::Classful(q) => q.enqueue(pkt, now, dropped),
            Qdisc::Jobs(q) => {
                q.enqueue(pkt, now, dropped);
                false
            }
        }
    }

    /// The link is free at `now`: the packet to transmit next, if any.
    /// Packets dropped at dequeue (CoDel) are pushed onto `dropped`.
    #[inline(always)]
    pub fn dequeue(&mut self, now: Time, dropped: &mut Dropped<M>) -> Option<Departure<M>> {
        match self {
            Qdisc::Fifo(q) => q.dequeue().map(|pkt| Departure { pkt, marked: false }),
            Qdisc::Classful(q) => q.dequeue(now, dropped),
            Qdisc::Jobs(q) => q.dequeue(now).map(|pkt| Departure { pkt, marked: false }),
        }
    }

    /// After a `dequeue` that gave nothing while packets wait (a rate cap
    /// held them back): when to try again.
    pub fn next_wakeup(&self, now: Time) -> Option<Time> {
        match self {
            Qdisc::Classful(q) => q.next_wakeup(now),
            Qdisc::Fifo(_) | Qdisc::Jobs(_) => None,
        }
    }

    /// Packets waiting (not counting one in transmission).
    pub fn len_packets(&self) -> u64 {
        match self {
            Qdisc::Fifo(q) => q.len_packets(),
            Qdisc::Classful(q) => q.len_packets(),
            Qdisc::Jobs(q) => q.len_packets(),
        }
    }

    /// Bytes waiting.
    pub fn len_bytes(&self) -> u64 {
        match self {
            Qdisc::Fifo(q) => q.len_bytes(),
            Qdisc::Classful(q) => q.len_bytes(),
            Qdisc::Jobs(q) => q.len_bytes(),
        }
    }

    /// Cells waiting (0 on a link without cell framing).
    pub fn len_cells(&self) -> u64 {
        match self {
            Qdisc::Fifo(q) => q.len_cells(),
            Qdisc::Classful(q) => q.len_cells(),
            Qdisc::Jobs(_) => 0,
        }
    }

    /// Every packet waiting (end-of-run accounting, not a hot path: one
    /// boxed iterator per call).
    pub fn queued(&self) -> Box<dyn Iterator<Item = &Packet<M>> + '_> {
        match self {
            Qdisc::Fifo(q) => Box::new(q.queued()),
            Qdisc::Classful(q) => Box::new(q.queued()),
            Qdisc::Jobs(q) => Box::new(q.queued()),
        }
    }

    /// The AQM averages, one per buffer policy (`None` for drop-tail), for
    /// time series, in each policy's unit (F-RED and DI-RO: cells).
    pub fn averages(&self, out: &mut Vec<Option<f64>>) {
        match self {
            Qdisc::Fifo(_) => {
                out.clear();
                out.push(None);
            }
            Qdisc::Classful(q) => q.averages(out),
            Qdisc::Jobs(_) => out.clear(),
        }
    }

    /// JoBS' loss rate of each queue over its current busy period (eq. 5 of
    /// Christin, Liebeherr & Abdelzaher 2001), for time series; empty for the
    /// other disciplines, which keep no such rate.
    pub fn busy_loss_rates(&self, out: &mut Vec<f64>) {
        out.clear();
        if let Qdisc::Jobs(q) = self {
            out.extend(q.loss_rates());
        }
    }

    /// The discipline's own counters (none for a FIFO or a classful qdisc).
    pub fn counters(&self, out: &mut Vec<Counter>) {
        out.clear();
        match self {
            Qdisc::Fifo(_) | Qdisc::Classful(_) => {}
            Qdisc::Jobs(q) => q.report(out),
        }
    }

    /// Whether a buffer of this discipline (a DWRED) listens on signalling
    /// channel `channel`.
    pub fn listens(&self, channel: u32) -> bool {
        match self {
            Qdisc::Classful(q) => q.listens(channel),
            Qdisc::Fifo(_) | Qdisc::Jobs(_) => false,
        }
    }

    /// Delivers `W_LSP^cwnd` on `channel` to the buffers listening on it
    /// (DWRED's eqs. 11–12; Bouras & Sevasti 2008, Section 5).
    pub fn signal(&mut self, channel: u32, w_lsp_cwnd: f64) {
        match self {
            Qdisc::Classful(q) => q.signal(channel, w_lsp_cwnd),
            Qdisc::Fifo(_) | Qdisc::Jobs(_) => {}
        }
    }

    /// The current `max_th` of each buffer that is a DWRED (`None` for the
    /// others), for time series.
    pub fn dwred_max_th(&self, out: &mut Vec<Option<f64>>) {
        match self {
            Qdisc::Fifo(_) => {
                out.clear();
                out.push(None);
            }
            Qdisc::Classful(q) => q.dwred_max_th(out),
            Qdisc::Jobs(_) => out.clear(),
        }
    }
}
