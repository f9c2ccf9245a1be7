//! Weighted Fair Queueing: packet-by-packet GPS (PGPS).
//!
//! A. K. Parekh, R. G. Gallager, "A Generalized Processor Sharing Approach to
//! Flow Control in Integrated Services Networks: The Single-Node Case",
//! IEEE/ACM ToN 1(3), 1993 (GPS, PGPS and its virtual time); A. Demers,
//! S. Keshav, S. Shenker, "Analysis and Simulation of a Fair Queueing
//! Algorithm", SIGCOMM 1989 (the same rule, called WFQ).
//!
//! - The reference is the GPS fluid system serving each backlogged session
//!   `i` at rate `φ_i/Σ_{j∈B(t)} φ_j · r` (`r` the link rate, `B(t)` the
//!   sessions backlogged *in GPS*). Its virtual time advances at
//!   `dV/dt = r / Σ_{j∈B(t)} φ_j` and stands still while GPS is idle. It is computed exactly, event by event: a
//!   session leaves `B` when `V` reaches the finish tag of its last arrival.
//! - A packet of `L` bytes arriving at `a` to queue `i` gets the finish tag
//!   `F = max(F_prev, V(a)) + L/φ_i`, `F_prev` the tag of queue
//!   `i`'s previous arrival.
//! - When the link is free, the queue whose head has the smallest `F` is
//!   served (ties to the lower queue index).
//!
//! Units: `V` and tags in bytes per unit of weight (`r` in bytes/ns).
//!
//! Cost: the smallest head tag and the next GPS departure (the smallest
//! last tag of a GPS-backlogged queue) are kept in [`Tournament`] trees,
//! O(log n) a packet instead of a scan of every queue; `Σφ` over `B(t)`
//! is summed again, in queue order as a scan sums it, only when `B(t)`
//! changes.
//!
//! ## Evictions
//!
//! A packet evicted from the head of a queue (a dropper's) loses its tag;
//! the packets behind it keep theirs (PGPS fixes a tag at arrival), so
//! while the queue stays backlogged it stays in `B(t)` up to its last tag,
//! as if GPS still served the evicted bytes. If the eviction empties the
//! queue, the queue's `F_prev` rolls back to the evicted packet's start
//! tag `max(F_prev, V(a))`: GPS drops the packet too, so the queue leaves
//! `B(t)` at once unless GPS still owes it earlier packets (its weight no
//! longer slows `V` for the others), and a later arrival gets the tag it
//! would have had without the evicted packet. `V` itself is only brought
//! up to `now`.

use std::collections::VecDeque;

use super::tournament::Tournament;
use super::{check_heads, check_per_queue, evict_tag, Head, SchedError, Scheduler};
use crate::time::Time;

/// WFQ / PGPS over `phi.len()` queues on a link of `link_rate_bps`.
#[derive(Clone, Debug)]
pub struct Wfq {
    /// `φ_i`, the GPS weights.
    phi: Vec<f64>,
    /// `r`, bytes per nanosecond.
    rate: f64,
    /// `V(last)`.
    v: f64,
    last: Time,
    /// Finish tag of each queue's latest arrival; the queue is GPS-backlogged
    /// while it exceeds `v`.
    last_finish: Vec<f64>,
    /// Start tag `max(F_prev, V(a))` of each queue's latest arrival.
    last_start: Vec<f64>,
    /// Finish tags of the packets each queue holds, FIFO.
    tags: Vec<VecDeque<f64>>,
    /// The queues in `B(t)` by their last finish tag (a queue whose tag is
    /// no longer above `V` leaves it before `V` is next advanced).
    gps: Tournament,
    /// `Σ_{j∈B(t)} φ_j`.
    sum_phi: GpsSum,
    /// The non-empty queues by their head's finish tag.
    heads: Tournament,
}

impl Wfq {
    /// `phi[i]`: GPS weight of queue `i` (> 0); `link_rate_bps`: the rate of
    /// the link the scheduler serves (bits/s, > 0).
    pub fn new(queues: usize, phi: Vec<f64>, link_rate_bps: u64) -> Result<Wfq, SchedError> {
        check_per_queue("WFQ", "phi", queues, &phi)?;
        if link_rate_bps == 0 {
            return Err(SchedError::Zero { scheduler: "WFQ", param: "link_rate_bps", value: 0.0 });
        }
        Ok(Wfq {
            rate: link_rate_bps as f64 / 8e9,
            v: 0.0,
            last: Time::ZERO,
            last_finish: vec![0.0; queues],
            last_start: vec![0.0; queues],
            tags: vec![VecDeque::new(); queues],
            gps: Tournament::new(queues),
            sum_phi: if sums_are_exact(&phi) { GpsSum::Kept(0.0) } else { GpsSum::Summed(Some(0.0)) },
            phi,
            heads: Tournament::new(queues),
        })
    }

    /// Brings `V` to `now` by following the GPS system's departures.
    #[inline]
    fn advance(&mut self, now: Time) {
        // Most calls come at the time of the one before (a dequeue after an
        // arrival): nothing to follow, and no call.
        if now > self.last {
            self.follow_gps(now);
        }
    }

    /// [`Wfq::advance`] for `now` after `last`.
    fn follow_gps(&mut self, now: Time) {
        let mut left = (now - self.last).as_nanos() as f64;
        self.last = now;
        loop {
            let Some((next_f, q)) = self.gps.min() else {
                return; // GPS idle: V stands still.
            };
            if next_f <= self.v {
                // GPS has finished queue q: it leaves B(t).
                debug_assert_eq!(next_f, self.last_finish[q]);
                self.gps.set(q, None);
                self.sum_phi.leave(self.phi[q]);
                continue;
            }
            let sum_phi = self.sum_phi();
            let to_next = (next_f - self.v) * sum_phi / self.rate;
            if to_next <= left {
                self.v = next_f;
                left -= to_next;
            } else {
                self.v += left * self.rate / sum_phi;
                return;
            }
        }
    }

    /// `V(now)`, the GPS virtual time.
    pub fn virtual_time(&mut self, now: Time) -> f64 {
        self.advance(now);
        self.v
    }

    /// `Σφ` over `B(t)`, as a scan in queue order sums it.
    fn sum_phi(&mut self) -> f64 {
        match &mut self.sum_phi {
            GpsSum::Kept(sum) => *sum,
            GpsSum::Summed(sum) => *sum.get_or_insert_with(|| {
                let mut total = 0.0;
                for (q, phi) in self.phi.iter().enumerate() {
                    if self.gps.key(q).is_some() {
                        total += phi;
                    }
                }
                total
            }),
        }
    }

    /// Queue `queue`'s last finish tag changed: it is in `B(t)` while the
    /// tag exceeds `V`.
    fn gps_update(&mut self, queue: usize) {
        let f = self.last_finish[queue];
        let member = f > self.v;
        match (self.gps.key(queue).is_some(), member) {
            (false, true) => self.sum_phi.join(self.phi[queue]),
            (true, false) => self.sum_phi.leave(self.phi[queue]),
            _ => {}
        }
        self.gps.set(queue, member.then_some(f));
    }

    /// Queue `queue`'s head changed (or it emptied).
    fn head_update(&mut self, queue: usize) {
        self.heads.set(queue, self.tags[queue].front().copied());
    }
}

/// `Σ_{j∈B(t)} φ_j` as the GPS reference needs it: bit for bit what a scan
/// of the queues in order sums.
#[derive(Clone, Debug)]
enum GpsSum {
    /// Every sum of weights is exact in `f64` (see [`sums_are_exact`]), so
    /// the sum is kept as queues join and leave `B(t)`, in O(1).
    Kept(f64),
    /// Otherwise it is summed again, in queue order, after `B(t)` changed
    /// (`None` until then).
    Summed(Option<f64>),
}

impl GpsSum {
    fn join(&mut self, phi: f64) {
        match self {
            GpsSum::Kept(sum) => *sum += phi,
            GpsSum::Summed(sum) => *sum = None,
        }
    }

    fn leave(&mut self, phi: f64) {
        match self {
            GpsSum::Kept(sum) => *sum -= phi,
            GpsSum::Summed(sum) => *sum = None,
        }
    }
}

/// Whether every partial sum of `weights`, in any order, is exact in `f64`:
/// all are whole multiples of one power of two whose total stays below
/// 2⁵³ of them (weights 1, 2, 3 or 0.5, 0.25 are; 0.9 and 0.1 are not).
/// Adding and subtracting then give what a scan in queue order sums.
fn sums_are_exact(weights: &[f64]) -> bool {
    // Each weight as `m·2^e`, `m` odd.
    let parts: Vec<(u64, i32)> = weights
        .iter()
        .map(|&w| {
            let bits = w.to_bits();
            let (exponent, fraction) = (((bits >> 52) & 0x7ff) as i32, bits & ((1 << 52) - 1));
            let (m, e) = if exponent == 0 { (fraction, -1074) } else { (fraction | 1 << 52, exponent - 1075) };
            let zeros = m.trailing_zeros();
            (m >> zeros, e + zeros as i32)
        })
        .collect();
    let Some(lowest) = parts.iter().map(|&(_, e)| e).min() else { return true };
    let mut total: u128 = 0;
    for (m, e) in parts {
        let shift = (e - lowest) as u32;
        if shift >= 53 {
            return false;
        }
        total += (m as u128) << shift;
    }
    total < 1 << 53
}

impl Scheduler for Wfq {
    fn on_enqueue(&mut self, queue: usize, size: u32, now: Time) {
        self.advance(now);
        let s = self.last_finish[queue].max(self.v);
        let f = s + size as f64 / self.phi[queue];
        self.last_start[queue] = s;
        self.last_finish[queue] = f;
        self.tags[queue].push_back(f);
        self.gps_update(queue);
        if self.tags[queue].len() == 1 {
            self.head_update(queue);
        }
    }

    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize> {
        check_heads("WFQ", heads, self.phi.len());
        self.advance(now);
        let (_, q) = self.heads.min()?;
        debug_assert!(heads[q].is_some(), "WFQ: queue {q} has a tag but no head");
        Some(q)
    }

    fn on_dequeue(&mut self, queue: usize, _size: u32, now: Time) {
        self.advance(now);
        self.tags[queue].pop_front();
        self.head_update(queue);
    }

    /// Pops the head's tag; an emptied queue's `F_prev` rolls back to the
    /// evicted packet's start tag (see the module doc).
    fn on_evict(&mut self, queue: usize, _size: u32, now: Time) {
        self.advance(now);
        evict_tag("WFQ", queue, &mut self.tags[queue], &mut self.last_finish[queue], self.last_start[queue]);
        self.gps_update(queue);
        self.head_update(queue);
    }
}

#[cfg(test)]
impl Wfq {
    pub(crate) fn check_state(&self, queues: &[VecDeque<Head>]) -> Result<(), String> {
        super::tests::check_tags("WFQ", &self.tags, |&f| f, &self.last_finish, queues)
    }

    /// What a scan of every queue picks: the smallest head tag, and the
    /// next GPS departure (the smallest last tag of a queue in `B(t)`),
    /// ties to the lower queue; with what the trees hold. Panics unless
    /// `B(t)` holds each member at its last tag and every queue left out
    /// is done in GPS (its last tag not above `V`).
    pub(crate) fn scan_and_trees(&self) -> [(Option<usize>, Option<usize>); 2] {
        for (q, &f) in self.last_finish.iter().enumerate() {
            match self.gps.key(q) {
                Some(key) => assert_eq!(key, f, "WFQ: queue {q} in B(t) with a stale tag"),
                None => assert!(f <= self.v, "WFQ: queue {q} left out of B(t) with F {f} > V {}", self.v),
            }
        }
        let head = super::smallest(self.tags.iter().enumerate().filter_map(|(q, t)| t.front().map(|&f| (q, f))));
        let members = self.last_finish.iter().copied().enumerate().filter(|&(q, _)| self.gps.key(q).is_some());
        let gps = super::smallest(members);
        [(head, self.heads.min().map(|(_, q)| q)), (gps, self.gps.min().map(|(_, q)| q))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::serve_order;

    fn h(size: u32) -> Option<Head> {
        Some(Head { size, enqueued: Time::ZERO })
    }

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            Wfq::new(2, vec![1.0, -1.0], 1_000_000).unwrap_err().to_string(),
            "WFQ: `phi` of queue 1 must be positive and finite, got -1"
        );
        assert_eq!(
            Wfq::new(2, vec![1.0, 1.0], 0).unwrap_err().to_string(),
            "WFQ: `link_rate_bps` must be positive, got 0"
        );
        assert!(Wfq::new(2, vec![1.0, f64::NAN], 1).is_err());
        assert!(matches!(Wfq::new(1, vec![1.0, 1.0], 1), Err(SchedError::CountMismatch { .. })));
    }

    /// 1 Gb/s (8 ns per byte), φ = (1, 3).
    /// t=0: two 1000 B packets to queue 0: F = 1000, 2000; GPS serves
    /// queue 0 alone, dV/dt = 1/8 per ns.
    /// t=4000 ns: V = 500. A 300 B packet to queue 1: F = 500 + 300/3 = 600.
    /// GPS now serves both: dV/dt = 1/(8·4) per ns; V reaches 600 at
    /// t = 4000 + 100·32 = 7200 ns; then queue 0 alone again:
    /// V(8000) = 600 + 800/8 = 700.
    /// At t=8000 the link is free: heads F = 2000 (q0), 600 (q1) → queue 1.
    #[test]
    fn hand_checked_virtual_time() {
        let mut s = Wfq::new(2, vec![1.0, 3.0], 1_000_000_000).unwrap();
        s.on_enqueue(0, 1000, Time::ZERO);
        s.on_enqueue(0, 1000, Time::ZERO);
        assert_eq!(s.select(&[h(1000), None], Time::ZERO), Some(0));
        s.on_dequeue(0, 1000, Time::ZERO);
        assert_eq!(s.virtual_time(Time::from_nanos(4000)), 500.0);
        s.on_enqueue(1, 300, Time::from_nanos(4000));
        assert_eq!(s.virtual_time(Time::from_nanos(7200)), 600.0);
        assert_eq!(s.virtual_time(Time::from_nanos(8000)), 700.0);
        assert_eq!(s.select(&[h(1000), h(300)], Time::from_nanos(8000)), Some(1));
        // GPS finishes queue 0's second packet at V = 2000: t = 8000 + 1300·8.
        assert_eq!(s.virtual_time(Time::from_nanos(18_400)), 2000.0);
        assert_eq!(s.virtual_time(Time::from_nanos(30_000)), 2000.0);
    }

    /// 1 Gb/s (0.125 B/ns), φ = (1, 3). t = 0: 1000 B to queue 0 (S = 0,
    /// F = 1000), 300 B to queue 1 (F = 100). Both GPS-backlogged: dV/dt =
    /// 0.125/4; V(1600) = 50. Queue 0's packet is evicted at 1600 ns: its
    /// F_prev rolls back to S = 0 < V, so it leaves B: dV/dt = 0.125/3, V
    /// reaches 100 at 1600 + 50·3/0.125 = 2800 ns (3200 had it stayed). A
    /// 1000 B arrival to queue 0 then gets F = max(0, 100) + 1000 = 1100
    /// (not 2000).
    #[test]
    fn eviction_that_empties_a_queue_takes_it_out_of_gps() {
        let mut s = Wfq::new(2, vec![1.0, 3.0], 1_000_000_000).unwrap();
        s.on_enqueue(0, 1000, Time::ZERO);
        s.on_enqueue(1, 300, Time::ZERO);
        assert_eq!(s.virtual_time(Time::from_nanos(1600)), 50.0);
        s.on_evict(0, 1000, Time::from_nanos(1600));
        assert_eq!(s.virtual_time(Time::from_nanos(2800)), 100.0);
        s.on_enqueue(0, 1000, Time::from_nanos(2800));
        assert_eq!(s.tags[0].front(), Some(&1100.0));
        assert_eq!(s.select(&[h(1000), h(300)], Time::from_nanos(2800)), Some(1));
    }

    /// Evicting the head of a queue that stays backlogged: the others keep
    /// their tags and the queue stays in B up to its last tag.
    #[test]
    fn eviction_keeps_the_tags_behind() {
        let mut s = Wfq::new(1, vec![1.0], 1_000_000_000).unwrap();
        s.on_enqueue(0, 1000, Time::ZERO);
        s.on_enqueue(0, 1000, Time::ZERO);
        s.on_evict(0, 1000, Time::ZERO);
        assert_eq!(s.tags[0], [2000.0]);
        // GPS still serves 2000 units: V = 2000 at 16 µs.
        assert_eq!(s.virtual_time(Time::from_micros(16)), 2000.0);
        assert_eq!(s.virtual_time(Time::from_micros(20)), 2000.0);
    }

    #[test]
    fn sums_are_exact_for_whole_and_dyadic_weights_only() {
        assert!(sums_are_exact(&[1.0, 2.0, 3.0, 64.0]));
        assert!(sums_are_exact(&[0.5, 0.25, 1.5]));
        assert!(!sums_are_exact(&[0.9, 0.1]));
        assert!(!sums_are_exact(&[1.0, 1e-30]));
        assert!(!sums_are_exact(&[1.0, 2f64.powi(53)]));
        assert!(sums_are_exact(&[2f64.powi(52), 2f64.powi(52)]));
    }

    /// Bennett & Zhang's example (WF²Q, INFOCOM 1996): queue 0 has
    /// φ = 10 and 11 packets, queues 1..=10 φ = 1 and one packet each, all
    /// 100 B at t=0. Tags: queue 0 10, 20, …, 110; the others 100. WFQ sends
    /// ten of queue 0's packets back to back (the tenth ties at 100 and wins
    /// by index), then the ten others, then queue 0's last.
    #[test]
    fn hand_checked_burst_order() {
        let mut phi = vec![10.0];
        phi.extend([1.0; 10]);
        let mut s = Wfq::new(11, phi, 1_000_000_000).unwrap();
        let mut contents = vec![vec![100; 11]];
        contents.extend(vec![vec![100]; 10]);
        let order = serve_order(&mut s, &contents, 21);
        let mut expected = vec![0; 10];
        expected.extend(1..=10);
        expected.push(0);
        assert_eq!(order, expected);
    }
}
