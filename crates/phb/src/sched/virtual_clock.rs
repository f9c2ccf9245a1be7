//! VirtualClock.
//!
//! L. Zhang, "VirtualClock: A New Traffic Control Algorithm for Packet
//! Switching Networks", SIGCOMM 1990 (and ACM ToCS 9(2), 1991). Each queue
//! (Zhang's *flow*) `i` has a reserved average rate `r_i` (bits/s, Zhang's
//! `AR_i`, with `Vtick_i = L/r_i` the time one packet of `L` bytes is worth
//! at that rate). On each arrival
//!
//! `auxVC_i ← max(now, auxVC_i) + Vtick_i`
//!
//! and the packet is stamped with `auxVC_i`; the link serves the smallest
//! stamp (ties to the lower queue index). A queue sending at most `r_i` sees
//! its stamps track real time and is served on time; one sending faster
//! runs its clock ahead and only gets spare capacity.
//!
//! Stamps are integer [`Time`]: `Vtick` is `L` bytes' transmission time at
//! `r_i` rounded up to a nanosecond ([`Time::transmission`]), so a queue is
//! never credited more than its rate. Zhang's flow monitoring (`VirtualClock`
//! vs `auxVC` checks that warn or penalise a source) is not modelled: that is
//! a policing action, outside a scheduler.
//!
//! An evicted packet (a dropper's) loses its stamp; the packets behind it
//! keep theirs, so while the queue stays backlogged its clock stays charged
//! for the evicted packet. If the eviction empties the queue, `auxVC_i`
//! rolls back to `max(a, auxVC_i)` of the evicted packet's arrival `a`,
//! so that a later arrival is stamped as if it had never come.

use std::collections::VecDeque;

use super::{check_heads, check_per_queue, evict_tag, smallest, Head, SchedError, Scheduler};
use crate::time::Time;

/// VirtualClock over `rate.len()` queues.
#[derive(Clone, Debug)]
pub struct VirtualClock {
    /// `r_i`, the reserved rates, bits/s.
    rate: Vec<u64>,
    /// `auxVC_i`.
    aux_vc: Vec<Time>,
    /// `max(a, auxVC_i)` before the latest arrival's `Vtick`.
    last_start: Vec<Time>,
    /// Stamps of the packets each queue holds, FIFO.
    stamps: Vec<VecDeque<Time>>,
}

impl VirtualClock {
    /// `rate[i]`: reserved rate of queue `i`, bits/s (> 0).
    pub fn new(queues: usize, rate: Vec<u64>) -> Result<VirtualClock, SchedError> {
        let r: Vec<f64> = rate.iter().map(|&r| r as f64).collect();
        check_per_queue("VirtualClock", "rate", queues, &r)?;
        Ok(VirtualClock {
            rate,
            aux_vc: vec![Time::ZERO; queues],
            last_start: vec![Time::ZERO; queues],
            stamps: vec![VecDeque::new(); queues],
        })
    }

    /// `auxVC_i`.
    pub fn aux_vc(&self, queue: usize) -> Time {
        self.aux_vc[queue]
    }
}

impl Scheduler for VirtualClock {
    fn on_enqueue(&mut self, queue: usize, size: u32, now: Time) {
        let vtick = Time::transmission(size, self.rate[queue]);
        self.last_start[queue] = self.aux_vc[queue].max(now);
        self.aux_vc[queue] = self.last_start[queue] + vtick;
        self.stamps[queue].push_back(self.aux_vc[queue]);
    }

    fn select(&mut self, heads: &[Option<Head>], _now: Time) -> Option<usize> {
        check_heads("VirtualClock", heads, self.rate.len());
        smallest(heads.iter().enumerate().filter(|(_, h)| h.is_some()).map(|(i, _)| {
            let t =
                *self.stamps[i].front().unwrap_or_else(|| panic!("VirtualClock: queue {i} has a head but no stamp"));
            (i, t)
        }))
    }

    fn on_dequeue(&mut self, queue: usize, _size: u32, _now: Time) {
        self.stamps[queue].pop_front();
    }

    /// Stamp popped; an emptied queue's `auxVC` rolls back (see the module
    /// doc).
    fn on_evict(&mut self, queue: usize, _size: u32, _now: Time) {
        evict_tag("VirtualClock", queue, &mut self.stamps[queue], &mut self.aux_vc[queue], self.last_start[queue]);
    }
}

#[cfg(test)]
impl VirtualClock {
    pub(crate) fn check_state(&self, queues: &[VecDeque<Head>]) -> Result<(), String> {
        super::tests::check_tags("VirtualClock", &self.stamps, |&t| t, &self.aux_vc, queues)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::serve_order;

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            VirtualClock::new(2, vec![1_000_000, 0]).unwrap_err().to_string(),
            "VirtualClock: `rate` of queue 1 must be positive and finite, got 0"
        );
        assert!(matches!(VirtualClock::new(1, vec![1, 2]), Err(SchedError::CountMismatch { .. })));
    }

    /// r = (1 Mb/s, 2 Mb/s), 125 B (1000 bit) packets at t=0: Vtick 1 ms and
    /// 0.5 ms. Stamps: queue 0 1, 2, 3 ms; queue 1 0.5, 1, 1.5, 2 ms.
    /// Order by stamp, ties to queue 0: 1 (0.5), 0 (1), 1 (1), 1 (1.5),
    /// 0 (2), 1 (2), 0 (3).
    #[test]
    fn hand_checked_order() {
        let mut s = VirtualClock::new(2, vec![1_000_000, 2_000_000]).unwrap();
        let order = serve_order(&mut s, &[vec![125; 3], vec![125; 4]], 7);
        assert_eq!(order, [1, 0, 1, 1, 0, 1, 0]);
        assert_eq!(s.aux_vc(0), Time::from_millis(3));
    }

    /// r = 8 Mb/s (1 B/µs). 1000 B at 0 (stamp 1 ms), 1000 B at 0.2 ms
    /// (stamp 2 ms). Evicting the head keeps the second's stamp; evicting
    /// that too rolls auxVC back to 1 ms (the first stays charged). Alone:
    /// 1000 B at 0 evicted at 0.5 ms rolls auxVC back to 0, and 1000 B at
    /// 0.5 ms is stamped 1.5 ms, not 2 ms.
    #[test]
    fn eviction_rolls_back_an_emptied_clock() {
        let mut s = VirtualClock::new(2, vec![8_000_000; 2]).unwrap();
        s.on_enqueue(0, 1000, Time::ZERO);
        s.on_enqueue(0, 1000, Time::from_micros(200));
        s.on_evict(0, 1000, Time::from_micros(300));
        assert_eq!(s.stamps[0], [Time::from_millis(2)]);
        s.on_evict(0, 1000, Time::from_micros(400));
        assert_eq!(s.aux_vc(0), Time::from_millis(1));
        s.on_enqueue(1, 1000, Time::ZERO);
        s.on_evict(1, 1000, Time::from_micros(500));
        assert_eq!(s.aux_vc(1), Time::ZERO);
        s.on_enqueue(1, 1000, Time::from_micros(500));
        assert_eq!(s.aux_vc(1), Time::from_micros(1500));
    }

    /// An idle queue's clock restarts at `now`: no credit for idle time.
    #[test]
    fn idle_time_is_not_banked() {
        let mut s = VirtualClock::new(1, vec![8_000_000]).unwrap();
        s.on_enqueue(0, 1000, Time::ZERO);
        assert_eq!(s.aux_vc(0), Time::from_millis(1));
        s.on_enqueue(0, 1000, Time::from_secs(5));
        assert_eq!(s.aux_vc(0), Time::from_secs(5) + Time::from_millis(1));
    }
}
