//! Priority with a token-bucket rate cap on queue 0 (an EF-like class).
//!
//! RFC 3246 (Expedited Forwarding PHB) §2.2 requires EF to be served at no
//! less than a configured rate `R`; RFC 2598 (the EF definition 3246
//! replaced), in its example mechanisms, implements EF as a priority queue
//! with a rate policer that bounds how much it can starve other traffic, and
//! RFC 3247 §5.1.1 analyses the strict non-preemptive priority queue. Here:
//!
//! - A token bucket of rate `rate` (bits/s) and depth `depth` (bytes), full
//!   at time 0, refills continuously: `tokens ← min(depth, tokens + rate·Δt)`
//!   (the bucket of RFC 2697 §3 / RFC 3290 §5.1.3, with one bucket).
//! - When the link is free, queue 0 is served if it is backlogged and the
//!   bucket holds its head's size; the size is then removed from the bucket.
//!   Otherwise the first non-empty queue among `1..n` is served (strict
//!   priority among them).
//! - Non-preemptive: a lower-priority packet in transmission finishes even if
//!   queue 0 becomes eligible meanwhile.
//! - Not work-conserving for queue 0: if only queue 0 is backlogged and the
//!   bucket is short, [`Scheduler::select`] returns `None` and
//!   [`Scheduler::next_eligible`] gives the instant the tokens suffice. So
//!   queue 0 never sends more than `depth + rate·τ/8` bytes in any interval of
//!   length `τ` (measured at dequeue instants).
//!
//! Departures from the sources:
//!
//! - ns-2 dsRED's `PRI` mode with `addQueueRate` (`diffserv/dsscheduler.cc`,
//!   `dsPQ`) caps a queue with a TSW rate *estimate* and still serves it when
//!   no other queue is backlogged; it is work-conserving and the cap is only
//!   on average. This scheduler caps with a token bucket and is strict.
//! - A queue-0 packet larger than `depth` could never be sent; it is sent
//!   when the bucket is full and leaves the bucket in debt (negative), so the
//!   long-run rate still holds but the burst bound becomes `max(depth, L)`.
//!
//! Tokens are counted exactly, in units of 1/(8·10⁹) byte: `rate` bit/s adds
//! exactly `rate` units per nanosecond (the convention of [`crate::mark`]).
//!
//! A packet evicted from queue 0 (by a dropper) leaves the size FIFO behind
//! `next_eligible` but takes no tokens: nothing was sent.

use std::collections::VecDeque;

use super::{check_heads, Head, SchedError, Scheduler};
use crate::time::Time;

/// Token units per byte: 8 bits × 10⁹ ns/s.
const UNITS_PER_BYTE: i128 = 8_000_000_000;

/// Strict priority with queue 0 capped by a token bucket.
#[derive(Clone, Debug)]
pub struct CappedPriority {
    queues: usize,
    /// Token rate `rate`, bits per second.
    rate: u64,
    /// Bucket depth `depth`, bytes.
    depth: u32,
    /// Tokens, in units of 1/(8·10⁹) byte; negative only after an oversized packet.
    tokens: i128,
    /// When `tokens` was last brought up to date.
    last: Time,
    /// Sizes of the packets in queue 0, FIFO (for `next_eligible`).
    q0: VecDeque<u32>,
}

impl CappedPriority {
    /// `queues` ≥ 1 queues; queue 0 is capped at `rate` bits/s with a bucket
    /// of `depth` bytes.
    pub fn new(queues: usize, rate: u64, depth: u32) -> Result<CappedPriority, SchedError> {
        const S: &str = "capped priority";
        if queues == 0 {
            return Err(SchedError::NoQueues { scheduler: S });
        }
        if rate == 0 {
            return Err(SchedError::Zero { scheduler: S, param: "rate", value: 0.0 });
        }
        if depth == 0 {
            return Err(SchedError::Zero { scheduler: S, param: "depth", value: 0.0 });
        }
        Ok(CappedPriority {
            queues,
            rate,
            depth,
            tokens: depth as i128 * UNITS_PER_BYTE,
            last: Time::ZERO,
            q0: VecDeque::new(),
        })
    }

    fn depth_units(&self) -> i128 {
        self.depth as i128 * UNITS_PER_BYTE
    }

    /// Tokens at `now` (no change for a `now` before the last update).
    fn tokens_at(&self, now: Time) -> i128 {
        let dt = now.saturating_sub(self.last).as_nanos() as i128;
        (self.tokens + dt * self.rate as i128).min(self.depth_units())
    }

    fn refill(&mut self, now: Time) {
        if now > self.last {
            self.tokens = self.tokens_at(now);
            self.last = now;
        }
    }

    /// Tokens a queue-0 packet of `size` bytes needs before it may leave.
    fn needed(&self, size: u32) -> i128 {
        size.min(self.depth) as i128 * UNITS_PER_BYTE
    }

    /// Bytes in the bucket at `now` (rounded down).
    pub fn tokens_bytes(&self, now: Time) -> i64 {
        self.tokens_at(now).div_euclid(UNITS_PER_BYTE) as i64
    }
}

impl Scheduler for CappedPriority {
    fn on_enqueue(&mut self, queue: usize, size: u32, _now: Time) {
        assert!(queue < self.queues, "capped priority: queue {queue} out of range");
        if queue == 0 {
            self.q0.push_back(size);
        }
    }

    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize> {
        check_heads("capped priority", heads, self.queues);
        self.refill(now);
        if let Some(h) = heads[0] {
            if self.tokens >= self.needed(h.size) {
                return Some(0);
            }
        }
        heads.iter().skip(1).position(Option::is_some).map(|i| i + 1)
    }

    fn on_dequeue(&mut self, queue: usize, size: u32, now: Time) {
        self.refill(now);
        if queue == 0 {
            self.tokens -= size as i128 * UNITS_PER_BYTE;
            self.q0.pop_front();
        }
    }

    /// Queue 0's head leaves the size FIFO; the bucket is not charged.
    fn on_evict(&mut self, queue: usize, size: u32, _now: Time) {
        assert!(queue < self.queues, "capped priority: queue {queue} out of range");
        if queue == 0 {
            let head = self.q0.pop_front();
            assert_eq!(head, Some(size), "capped priority: evicted {size} B but queue 0's head is {head:?}");
        }
    }

    /// When queue 0's head will have enough tokens (`now` if it has them
    /// already); `None` when queue 0 is empty.
    fn next_eligible(&self, now: Time) -> Option<Time> {
        let &size = self.q0.front()?;
        let now = now.max(self.last);
        let short = self.needed(size) - self.tokens_at(now);
        if short <= 0 {
            return Some(now);
        }
        let wait = (short as u128).div_ceil(self.rate as u128) as u64;
        Some(now + Time::from_nanos(wait))
    }
}

#[cfg(test)]
impl CappedPriority {
    pub(crate) fn check_state(&self, queues: &[VecDeque<Head>]) -> Result<(), String> {
        use super::tests::{same, sizes};
        same("capped priority", "queues", 0, self.queues, queues.len())?;
        same("capped priority", "sizes", 0, self.q0.iter().copied().collect::<Vec<_>>(), sizes(&queues[0]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(size: u32) -> Option<Head> {
        Some(Head { size, enqueued: Time::ZERO })
    }

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            CappedPriority::new(2, 0, 1500).unwrap_err().to_string(),
            "capped priority: `rate` must be positive, got 0"
        );
        assert_eq!(
            CappedPriority::new(2, 1_000_000, 0).unwrap_err().to_string(),
            "capped priority: `depth` must be positive, got 0"
        );
        assert!(matches!(CappedPriority::new(0, 1, 1), Err(SchedError::NoQueues { .. })));
    }

    /// rate 8000 bit/s = 1000 B/s, depth 1000 B, queue-0 packets of 600 B.
    /// t=0: bucket 1000 → send (400 left). t=0 again: 400 < 600 → queue 1 if
    /// backlogged, else nothing until 200 B more have come: t = 0.2 s.
    #[test]
    fn hand_checked_bucket() {
        let mut s = CappedPriority::new(2, 8_000, 1_000).unwrap();
        for _ in 0..3 {
            s.on_enqueue(0, 600, Time::ZERO);
        }
        s.on_enqueue(1, 1500, Time::ZERO);
        assert_eq!(s.select(&[h(600), h(1500)], Time::ZERO), Some(0));
        s.on_dequeue(0, 600, Time::ZERO);
        assert_eq!(s.tokens_bytes(Time::ZERO), 400);
        assert_eq!(s.select(&[h(600), h(1500)], Time::ZERO), Some(1));
        s.on_dequeue(1, 1500, Time::ZERO);
        // Only queue 0 left, short of tokens: hold it back.
        assert_eq!(s.select(&[h(600), None], Time::from_millis(100)), None);
        assert_eq!(s.next_eligible(Time::from_millis(100)), Some(Time::from_millis(200)));
        assert_eq!(s.select(&[h(600), None], Time::from_nanos(199_999_999)), None);
        assert_eq!(s.select(&[h(600), None], Time::from_millis(200)), Some(0));
        s.on_dequeue(0, 600, Time::from_millis(200));
        // Bucket empty now; the third packet waits 0.6 s.
        assert_eq!(s.next_eligible(Time::from_millis(200)), Some(Time::from_millis(800)));
        // The bucket never holds more than depth.
        assert_eq!(s.tokens_bytes(Time::from_secs(100)), 1000);
        s.on_dequeue(0, 600, Time::from_secs(100));
        assert_eq!(s.next_eligible(Time::from_secs(100)), None);
    }

    /// rate 1000 B/s, depth 1000 B: after one 600 B packet, 400 B left.
    /// Evicting the second 600 B packet takes no tokens; a third must wait
    /// for 200 B more, as if the second had never come.
    #[test]
    fn eviction_takes_no_tokens() {
        let mut s = CappedPriority::new(1, 8_000, 1_000).unwrap();
        s.on_enqueue(0, 600, Time::ZERO);
        s.on_enqueue(0, 600, Time::ZERO);
        assert_eq!(s.select(&[h(600)], Time::ZERO), Some(0));
        s.on_dequeue(0, 600, Time::ZERO);
        s.on_evict(0, 600, Time::from_millis(50));
        assert_eq!(s.tokens_bytes(Time::from_millis(50)), 450);
        assert_eq!(s.next_eligible(Time::from_millis(50)), None);
        s.on_enqueue(0, 600, Time::from_millis(50));
        assert_eq!(s.next_eligible(Time::from_millis(50)), Some(Time::from_millis(200)));
    }

    #[test]
    fn oversized_packet_waits_for_a_full_bucket_and_leaves_debt() {
        let mut s = CappedPriority::new(1, 8_000, 1_000).unwrap();
        s.on_enqueue(0, 1500, Time::ZERO);
        s.on_enqueue(0, 1500, Time::ZERO);
        assert_eq!(s.select(&[h(1500)], Time::ZERO), Some(0));
        s.on_dequeue(0, 1500, Time::ZERO);
        assert_eq!(s.tokens_bytes(Time::ZERO), -500);
        assert_eq!(s.select(&[h(1500)], Time::ZERO), None);
        // -500 → 1000 takes 1.5 s at 1000 B/s.
        assert_eq!(s.next_eligible(Time::ZERO), Some(Time::from_millis(1500)));
    }
}
