//! Strict priority.
//!
//! The link always serves the first non-empty queue; queue 0 has the highest
//! priority. This is ns-2 dsRED's `PRI` scheduler (`diffserv/dsscheduler.cc`,
//! `dsPQ`) without its optional per-queue maximum rate (for a rate cap see
//! [`super::capped_priority`]), and the textbook head-of-line priority
//! discipline (Kleinrock, *Queueing Systems* vol. II, §3.6). Non-preemptive,
//! as every scheduler here: a packet in transmission is never interrupted.
//! Lower queues starve while a higher one stays backlogged.

use super::{check_heads, Head, SchedError, Scheduler};
use crate::time::Time;

/// Strict priority over `queues` queues.
#[derive(Clone, Debug)]
pub struct Priority {
    queues: usize,
}

impl Priority {
    pub fn new(queues: usize) -> Result<Priority, SchedError> {
        if queues == 0 {
            return Err(SchedError::NoQueues { scheduler: "priority" });
        }
        Ok(Priority { queues })
    }
}

impl Scheduler for Priority {
    fn on_enqueue(&mut self, _queue: usize, _size: u32, _now: Time) {}

    fn select(&mut self, heads: &[Option<Head>], _now: Time) -> Option<usize> {
        check_heads("priority", heads, self.queues);
        heads.iter().position(Option::is_some)
    }

    fn on_dequeue(&mut self, _queue: usize, _size: u32, _now: Time) {}

    /// Stateless: nothing to update.
    fn on_evict(&mut self, queue: usize, _size: u32, _now: Time) {
        assert!(queue < self.queues, "priority: queue {queue} out of range");
    }
}

#[cfg(test)]
impl Priority {
    pub(crate) fn check_state(&self, queues: &[std::collections::VecDeque<Head>]) -> Result<(), String> {
        super::tests::same("priority", "queues", 0, self.queues, queues.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(size: u32) -> Option<Head> {
        Some(Head { size, enqueued: Time::ZERO })
    }

    #[test]
    fn rejects_zero_queues() {
        let e = Priority::new(0).unwrap_err();
        assert_eq!(e.to_string(), "priority: needs at least one queue");
    }

    #[test]
    fn serves_the_highest_non_empty_queue() {
        let mut s = Priority::new(3).unwrap();
        assert_eq!(s.select(&[None, h(100), h(50)], Time::ZERO), Some(1));
        assert_eq!(s.select(&[h(1500), h(100), h(50)], Time::ZERO), Some(0));
        assert_eq!(s.select(&[None, None, h(50)], Time::ZERO), Some(2));
        assert_eq!(s.select(&[None, None, None], Time::ZERO), None);
        assert_eq!(s.next_eligible(Time::ZERO), None);
    }
}
