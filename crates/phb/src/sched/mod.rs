//! Schedulers: which class queue the link serves next.
//!
//! A [`Scheduler`] sees only the heads of the queues (size and enqueue
//! time), never the packets, so one implementation serves the simulator and
//! the router. Hooks fire in this order: [`Scheduler::on_enqueue`] after a
//! packet joins a queue, [`Scheduler::select`] when the link is free, and
//! [`Scheduler::on_dequeue`] after the selected queue's head was taken.
//! [`Scheduler::on_evict`] says that a dropper (PLC's eviction, PLR's
//! victim) removed the HEAD — the oldest packet — of a non-empty queue
//! without sending it; it may come between any two other calls. A `select`
//! answer holds only until the next eviction: the caller selects again
//! before dequeuing. [`Scheduler::service_rates_bps`] may be read at any
//! time (PLC reads BPR's rates at every arrival).
//!
//! ## Evictions
//!
//! An evicted packet is gone as if it had never been queued as far as the
//! queue contents go (backlogs, per-queue FIFOs of tags or arrival times,
//! packet counts, DRR's active list, round-robin state), but it was not
//! served: nothing is charged for it (no token, no deficit, no round
//! credit), BPR's virtual service `V_i` does not drop by its size (ns-2's
//! `getDS()`, thesis Appendix D, leaves `v_ds` alone), and PAD / MDP do
//! not count it as a departure. Timestamp schedulers pop its tag; the
//! packets left keep theirs (a tag is fixed at arrival), so while the
//! queue stays backlogged the evicted bytes still count against it. When
//! the eviction empties the queue, its tag chain (`F_prev`, `auxVC`) rolls
//! back to the evicted packet's start tag, which gives later arrivals the
//! tags they would have had without it (the virtual time being
//! non-decreasing, `max(S_e, V) = max(F_prev, V)`); in WFQ this also takes
//! the queue out of the GPS backlogged set at once, unless GPS still owes it
//! earlier (already sent) packets. Each module says what its `on_evict`
//! does.
//!
//! ## Map
//!
//! Rate-unaware, packet-count based:
//!
//! - [`priority`] — strict priority, queue 0 highest.
//! - [`capped_priority`] — priority for an EF-like queue 0 capped by a token
//!   bucket (RFC 3246 EF with a policing shaper), non-work-conserving for
//!   queue 0.
//! - [`wrr`] — Weighted Round Robin, ns-2 dsRED `WRR` semantics.
//! - [`wirr`] — Weighted Interleaved Round Robin, ns-2 dsRED `WIRR` semantics.
//!
//! Byte-fair:
//!
//! - [`drr`] — Deficit Round Robin (Shreedhar & Varghese 1995).
//! - [`wfq`] — WFQ / PGPS with GPS virtual time (Parekh & Gallager 1993;
//!   Demers, Keshav & Shenker 1989).
//! - [`wf2q_plus`] — WF²Q+ (Bennett & Zhang 1997).
//! - [`scfq`] — Self-Clocked Fair Queueing (Golestani 1994).
//! - [`virtual_clock`] — VirtualClock (Zhang 1990/1991).
//! - [`exvc`] — Extended VirtualClock (Tufail, Jennes & Leduc 1999): stamps
//!   from rates self-regulated by backlog × quality index `q_i`; also its
//!   single sorted head-queue form.
//!
//! Proportional delay differentiation (Vukadinović 2004, Sections 3–5;
//! Dovrolis, Stiliadis & Ramanathan 1999). Each takes per-queue parameters
//! `s_i` (larger → lower delay, target `d̄_i/d̄_j = s_j/s_i`; the thesis'
//! TS/DS pair with ratio δ is `s = [1, δ]`, also via `with_delta`):
//!
//! - [`bpr`] — Backlog-Proportional Rate, eq. (10), packetized with virtual
//!   service functions (eqs. 23–27).
//! - [`bpr_plus`] — BPR⁺: per-packet timestamps, rates from the quadratic (22).
//! - [`bpr_plus_fluid`] — fluid BPR⁺ (eqs. 12–17), the server the heuristic
//!   approximates, packetized as BPR; two classes only.
//! - [`wtp`] — Waiting-Time Priority, eq. (7).
//! - [`pad`] — Proportional Average Delay.
//! - [`mdp`] — Mean-Delay Proportional (rule assumed, see the module).
//! - [`dwfq`] — Dynamic WFQ (weight rule assumed, see the module).
//!
//! Best Effort Differentiated Services (Firoiu, Zhang, Guo 2001):
//!
//! - [`beds`] — WFQ whose weights follow the backlogs, eq. (5): the forced
//!   delay ratio `d_TCP/d_UDP → δ` (`s = [1, δ]`, queue 0 the reference).
//!
//! [`AnySched`] dispatches statically over all of them. Constructors
//! validate their parameters and return a [`SchedError`].
//!
//! ## Conventions
//!
//! - Queues are numbered `0..n`; every constructor takes `n` (`queues`) and
//!   checks that per-queue parameters have exactly `n` entries.
//! - Ties (equal tags, equal priority) go to the lower queue index.
//! - Timestamp schedulers keep, per queue, a FIFO of the tags of the packets
//!   it holds, fed by `on_enqueue` / `on_dequeue`; packets within a queue
//!   leave in FIFO order. Virtual times are `f64` (deterministic: the same
//!   operations in the same order), VirtualClock's stamps are integer [`Time`].
//! - Rates are bits per second, sizes bytes, as in the rest of the crate.
//! - `select` may update internal state (round pointers, virtual time), but a
//!   second `select` before the `on_dequeue` returns the same queue.

pub mod beds;
pub mod bpr;
pub mod bpr_plus;
pub mod bpr_plus_fluid;
pub mod capped_priority;
pub mod drr;
pub mod dwfq;
pub mod exvc;
pub mod mdp;
pub mod pad;
pub mod priority;
pub mod scfq;
pub mod tournament;
pub mod virtual_clock;
pub mod wf2q_plus;
pub mod wfq;
pub mod wirr;
pub mod wrr;
pub mod wtp;

#[cfg(test)]
mod tests;

pub use beds::{BacklogUnit, Beds};
pub use bpr::Bpr;
pub use bpr_plus::{BprPlus, ResidualBacklog};
pub use bpr_plus_fluid::BprPlusFluid;
pub use capped_priority::CappedPriority;
pub use drr::Drr;
pub use dwfq::Dwfq;
pub use exvc::{ExVc, ExVcHeadQueue};
pub use mdp::Mdp;
pub use pad::Pad;
pub use priority::Priority;
pub use scfq::Scfq;
pub use virtual_clock::VirtualClock;
pub use wf2q_plus::Wf2qPlus;
pub use wfq::Wfq;
pub use wirr::Wirr;
pub use wrr::Wrr;
pub use wtp::Wtp;

use std::collections::VecDeque;

use crate::time::Time;

/// The head packet of a non-empty queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// Size in bytes.
    pub size: u32,
    /// When it joined its queue.
    pub enqueued: Time,
}

/// A packet scheduler over a fixed number of class queues.
pub trait Scheduler {
    /// A packet of `size` bytes joined `queue` at `now`.
    fn on_enqueue(&mut self, queue: usize, size: u32, now: Time);
    /// The link is free at `now`: the queue to serve, given each queue's
    /// head (`None` for an empty queue). `None` when nothing may be sent now
    /// (all queues empty, or — for a non-work-conserving scheduler — not
    /// yet allowed; then [`Scheduler::next_eligible`] says when).
    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize>;
    /// The head of `queue`, `size` bytes, was taken at `now`.
    fn on_dequeue(&mut self, queue: usize, size: u32, now: Time);
    /// The head of `queue`, `size` bytes, was removed at `now` without being
    /// sent (pushed out by a dropper: PLC's eviction, PLR's victim).
    fn on_evict(&mut self, queue: usize, size: u32, now: Time);
    /// For schedulers that may hold back a backlogged queue: the earliest
    /// time a packet may become eligible. Work-conserving ones return `None`.
    fn next_eligible(&self, _now: Time) -> Option<Time> {
        None
    }
    /// The service rates (bits/s, one per queue) a rate-assigning scheduler
    /// has in force, for a dropper that needs them (PLC); `false` for others.
    ///
    /// A rate-assigning scheduler writes them to `out` (one entry per queue;
    /// a length mismatch panics) and returns `true`; the others leave `out`
    /// untouched and return `false`. Allocation-free: PLC calls it on every
    /// arrival.
    fn service_rates_bps(&self, _out: &mut [f64]) -> bool {
        false
    }
}

/// A scheduler's parameters were rejected by its constructor (fatal for the
/// scenario that asked for it).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SchedError {
    #[error("{scheduler}: needs at least one queue")]
    NoQueues { scheduler: &'static str },
    #[error("{scheduler}: `{param}` has {got} entries but there are {queues} queues (one entry per queue)")]
    CountMismatch { scheduler: &'static str, param: &'static str, got: usize, queues: usize },
    #[error("{scheduler}: `{param}` of queue {queue} must be positive and finite, got {value}")]
    NotPositive { scheduler: &'static str, param: &'static str, queue: usize, value: f64 },
    #[error("{scheduler}: `{param}` must be positive, got {value}")]
    Zero { scheduler: &'static str, param: &'static str, value: f64 },
    #[error(
        "{scheduler}: is defined for two queues (throughput-sensitive first, delay-sensitive second), this one has {queues}"
    )]
    TwoQueues { scheduler: &'static str, queues: usize },
}

/// Checks the queue count and that `values` has one positive, finite entry
/// per queue.
pub(crate) fn check_per_queue(
    scheduler: &'static str,
    param: &'static str,
    queues: usize,
    values: &[f64],
) -> Result<(), SchedError> {
    if queues == 0 {
        return Err(SchedError::NoQueues { scheduler });
    }
    if values.len() != queues {
        return Err(SchedError::CountMismatch { scheduler, param, got: values.len(), queues });
    }
    for (queue, &value) in values.iter().enumerate() {
        if !(value.is_finite() && value > 0.0) {
            return Err(SchedError::NotPositive { scheduler, param, queue, value });
        }
    }
    Ok(())
}

/// Panics (a broken invariant of the caller) unless there is one head per queue.
#[inline]
pub(crate) fn check_heads(scheduler: &'static str, heads: &[Option<Head>], queues: usize) {
    assert_eq!(heads.len(), queues, "{scheduler}: select got {} heads for {queues} queues", heads.len());
}

/// Eviction for the schedulers that tag packets from a per-queue last tag
/// (WFQ, SCFQ, DWFQ, VirtualClock): pops `queue`'s head tag and, when that
/// empties the queue, rolls its last finish tag back to the evicted packet's
/// start tag, so that the next arrival is tagged as if the evicted packet
/// had never come. With packets behind it, the queue keeps its tags.
pub(crate) fn evict_tag<T: Copy>(
    scheduler: &'static str,
    queue: usize,
    tags: &mut VecDeque<T>,
    last_finish: &mut T,
    last_start: T,
) {
    tags.pop_front().unwrap_or_else(|| panic!("{scheduler}: eviction from empty queue {queue}"));
    if tags.is_empty() {
        *last_finish = last_start;
    }
}

/// The queue with the smallest key, ties to the one listed first (the lower
/// index when `keys` is in queue order).
pub(crate) fn smallest<K: PartialOrd>(keys: impl Iterator<Item = (usize, K)>) -> Option<usize> {
    let mut best: Option<(usize, K)> = None;
    for (i, k) in keys {
        let better = match &best {
            None => true,
            Some((_, b)) => k < *b,
        };
        if better {
            best = Some((i, k));
        }
    }
    best.map(|(i, _)| i)
}

/// Static dispatch over every scheduler of this module.
#[derive(Clone, Debug)]
pub enum AnySched {
    Priority(Priority),
    CappedPriority(CappedPriority),
    Wrr(Wrr),
    Wirr(Wirr),
    Drr(Drr),
    Wfq(Wfq),
    Wf2qPlus(Wf2qPlus),
    Scfq(Scfq),
    VirtualClock(VirtualClock),
    Bpr(Bpr),
    BprPlus(BprPlus),
    BprPlusFluid(BprPlusFluid),
    Wtp(Wtp),
    Pad(Pad),
    Mdp(Mdp),
    Dwfq(Dwfq),
    Beds(Beds),
    ExVc(ExVc),
}

macro_rules! dispatch {
    ($self:expr, $s:ident => $body:expr) => {
        match $self {
            AnySched::Priority($s) => $body,
            AnySched::CappedPriority($s) => $body,
            AnySched::Wrr($s) => $body,
            AnySched::Wirr($s) => $body,
            AnySched::Drr($s) => $body,
            AnySched::Wfq($s) => $body,
            AnySched::Wf2qPlus($s) => $body,
            AnySched::Scfq($s) => $body,
            AnySched::VirtualClock($s) => $body,
            AnySched::Bpr($s) => $body,
            AnySched::BprPlus($s) => $body,
            AnySched::BprPlusFluid($s) => $body,
            AnySched::Wtp($s) => $body,
            AnySched::Pad($s) => $body,
            AnySched::Mdp($s) => $body,
            AnySched::Dwfq($s) => $body,
            AnySched::Beds($s) => $body,
            AnySched::ExVc($s) => $body,
        }
    };
}

impl Scheduler for AnySched {
    #[inline]
    fn on_enqueue(&mut self, queue: usize, size: u32, now: Time) {
        dispatch!(self, s => s.on_enqueue(queue, size, now))
    }
    #[inline]
    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize> {
        dispatch!(self, s => s.select(heads, now))
    }
    #[inline]
    fn on_dequeue(&mut self, queue: usize, size: u32, now: Time) {
        dispatch!(self, s => s.on_dequeue(queue, size, now))
    }
    #[inline]
    fn on_evict(&mut self, queue: usize, size: u32, now: Time) {
        dispatch!(self, s => s.on_evict(queue, size, now))
    }
    #[inline]
    fn next_eligible(&self, now: Time) -> Option<Time> {
        dispatch!(self, s => s.next_eligible(now))
    }
    #[inline]
    fn service_rates_bps(&self, out: &mut [f64]) -> bool {
        dispatch!(self, s => s.service_rates_bps(out))
    }
}

#[cfg(test)]
impl AnySched {
    /// Checks the scheduler's per-queue state (FIFOs of tags or arrival
    /// times, backlogs, counts, sums, DRR's active list) against the queues'
    /// contents (`queues[i]`: queue `i`'s packets, head first).
    pub(crate) fn check_state(&self, queues: &[std::collections::VecDeque<Head>]) -> Result<(), String> {
        dispatch!(self, s => s.check_state(queues))
    }
}

macro_rules! impl_from {
    ($($variant:ident),*) => {
        $(impl From<$variant> for AnySched {
            fn from(s: $variant) -> AnySched {
                AnySched::$variant(s)
            }
        })*
    };
}
impl_from!(Priority, CappedPriority, Wrr, Wirr, Drr, Wfq, Wf2qPlus, Scfq, VirtualClock);
impl_from!(Bpr, BprPlus, BprPlusFluid, Wtp, Pad, Mdp, Dwfq, Beds, ExVc);
