//! A synthetic standing queue for the droppers' tests: a FIFO of arrival
//! stamps fed at a constant interval `a` and served at a constant interval
//! `d` (one packet per service slot), the dropper consulted on every
//! arrival, departure and empty slot. Arrivals at the same instant as a slot
//! come first.

use std::collections::VecDeque;

use crate::aqm::Backlog;
use crate::time::Time;

/// A dropper's hooks as the test queue calls them.
pub(crate) trait Hooks {
    /// `true`: drop the arriving packet.
    fn arrival(&mut self, backlog: &Backlog, size: u32, now: Time) -> bool;
    /// The head packet leaves; `true`: drop it (the queue then serves the next).
    fn dequeue(&mut self, sojourn: Time, bytes_left: u64, size: u32, now: Time) -> bool;
    /// A slot found the queue empty.
    fn idle(&mut self, now: Time);
}

#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// (departure time, sojourn) of each delivered packet.
    pub delivered: Vec<(Time, Time)>,
    /// Times of the drops at dequeue.
    pub head_drops: Vec<Time>,
    /// Number of arrivals dropped.
    pub arrival_drops: u64,
    pub arrivals: u64,
}

impl Outcome {
    /// Mean sojourn of the packets delivered at or after `from`, in ms.
    pub fn mean_sojourn_ms(&self, from: Time) -> f64 {
        let s: Vec<f64> =
            self.delivered.iter().filter(|(t, _)| *t >= from).map(|(_, s)| s.as_secs_f64() * 1e3).collect();
        s.iter().sum::<f64>() / s.len() as f64
    }

    /// Median sojourn of the packets delivered at or after `from`, in ms.
    pub fn median_sojourn_ms(&self, from: Time) -> f64 {
        let mut s: Vec<f64> =
            self.delivered.iter().filter(|(t, _)| *t >= from).map(|(_, s)| s.as_secs_f64() * 1e3).collect();
        s.sort_by(|x, y| x.partial_cmp(y).unwrap());
        s[s.len() / 2]
    }
}

/// Runs the queue for `duration` with packets of `size` bytes.
pub(crate) fn run(h: &mut impl Hooks, a: Time, d: Time, size: u32, duration: Time) -> Outcome {
    let mut queue: VecDeque<Time> = VecDeque::new();
    let mut out = Outcome::default();
    let (mut next_arrival, mut next_slot) = (Time::ZERO, d);
    let backlog = |q: &VecDeque<Time>| {
        let pkts = q.len() as u64;
        let bytes = pkts * size as u64;
        Backlog { pkts, bytes, cells: 0, pkts_by_colour: [pkts, 0, 0], bytes_by_colour: [bytes, 0, 0] }
    };
    while next_arrival.min(next_slot) < duration {
        if next_arrival <= next_slot {
            let now = next_arrival;
            out.arrivals += 1;
            if h.arrival(&backlog(&queue), size, now) {
                out.arrival_drops += 1;
            } else {
                queue.push_back(now);
            }
            next_arrival += a;
        } else {
            let now = next_slot;
            loop {
                let Some(stamp) = queue.pop_front() else {
                    h.idle(now);
                    break;
                };
                let sojourn = now - stamp;
                if h.dequeue(sojourn, queue.len() as u64 * size as u64, size, now) {
                    out.head_drops.push(now);
                } else {
                    out.delivered.push((now, sojourn));
                    break;
                }
            }
            next_slot += d;
        }
    }
    out
}
