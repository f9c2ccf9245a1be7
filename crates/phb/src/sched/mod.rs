//! Schedulers: which class queue the link serves next.
//!
//! A [`Scheduler`] sees only the heads of the queues (size and enqueue
//! time), never the packets, so one implementation serves the simulator and
//! the router. Hooks fire in this order: [`Scheduler::on_enqueue`] after a
//! packet joins a queue, [`Scheduler::select`] when the link is free, and
//! [`Scheduler::on_dequeue`] after the selected queue's head was taken.

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
    /// For schedulers that may hold back a backlogged queue: the earliest
    /// time a packet may become eligible. Work-conserving ones return `None`.
    fn next_eligible(&self, _now: Time) -> Option<Time> {
        None
    }
}
