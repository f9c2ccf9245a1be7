//! WF²Q+ (Worst-case Fair Weighted Fair Queueing, plus).
//!
//! J. C. R. Bennett, H. Zhang, "Hierarchical Packet Fair Queueing
//! Algorithms", IEEE/ACM ToN 5(5), 1997, the definition of WF²Q+ (its
//! virtual-time function and tag equations, restated here):
//!
//! - System virtual time, updated as packets are served:
//!   `V(t + τ) = max(V(t) + W(t, t + τ), min_{i∈B̂(t+τ)} S_i)`,
//!   `W` the work (bytes) done in between, `B̂` the backlogged queues, `S_i`
//!   the start tag of queue `i`'s head.
//! - Head tags: a packet reaching the head of an empty queue gets
//!   `S_i = max(F_i, V(a))`; a packet reaching the head after its
//!   predecessor leaves gets `S_i = F_i`; then `F_i = S_i + L/r_i`. A queue
//!   being FIFO, both are known when the packet arrives (`S = F_prev` if
//!   the queue is not empty), so tags are computed in `on_enqueue` and kept
//!   in a per-queue FIFO.
//! - Smallest Eligible virtual Finish time First: among heads with
//!   `S_i ≤ V`, serve the smallest `F_i` (ties to the lower index).
//!
//! `r_i` is the guaranteed rate `φ_i/Σφ_j · C`; with `V` in bytes (the work
//! unit of `W`) the tag increment `L/r_i` becomes `L·Σφ_j/φ_i`.
//!
//! `W(t, t + τ)` is the work *done* in between: the bytes of the packet in
//! transmission count as they leave the link, at its rate `C`, not all at
//! once when the packet starts. A packet arriving mid-transmission to an
//! empty queue therefore gets `S = max(F_i, V(a))` with `V(a)` short of the
//! bytes still to send; counting the whole packet at its start gave start
//! tags up to one packet too late, kept packets ineligible at the next
//! decision and broke the delay bound (issue 11). The link rate is hence a
//! parameter, and the scheduler must be asked (`select`, `on_dequeue`)
//! exactly when the link is free. If the next packet starts before the
//! previous one's bytes are all counted at `C` (a slower link than
//! declared), the rest is counted at once.
//!
//! The `min S` term: while a packet is sent, its session is backlogged with
//! it at its head (a packet is in the system until its last bit leaves),
//! and that packet was eligible (`S ≤ V`), so the term cannot raise `V`
//! until the transmission ends. `V` is therefore brought up to
//! `max(V, min S)` in `select` only, over the queued heads.
//!
//! A busy period starts with no queue ahead of `V`: when a packet arrives
//! with nothing queued and nothing in transmission, every `F_i > V` is
//! lowered to `V`. `V` stands still while the link is idle, so without this
//! a queue served ahead of `V` at the end of one busy period (eligible,
//! `S ≤ V < F`) would carry that lead across the idle time and wait for it
//! in the next, although the fluid reference, which finishes its work when
//! the packet system does (both work-conserving), owes it nothing. This is
//! what FreeBSD dummynet's WF²Q+ does (`dn_sched_wf2q.c`, `wf2qp_dequeue`:
//! with nothing queued, every idle flow's timestamps are invalidated and
//! `V` is reset); the random-arrival test below found the bound broken
//! without it.
//!
//! Delay bound (Bennett & Zhang 1997, the bound of WFQ): a packet leaves no
//! later than its finish under its queue's rate guarantee `r_i` alone plus
//! `L_max/C`; property-tested under random arrivals in `sched::tests`.
//!
//! Cost: the heads wait in two [`Tournament`] trees, the ineligible ones by
//! start tag and the eligible ones by finish tag; `select` moves those that
//! `V` has reached from the first to the second (`V` never decreases, so a
//! head once eligible stays so), O(log n) a packet instead of a scan.
//!
//! An evicted packet (a dropper's) did no work: `V` is not advanced. Its
//! tags leave the FIFO and the packets behind it keep theirs; if the
//! eviction empties the queue, `F_i` rolls back to the evicted packet's
//! `S_i`, so that a later arrival gets `S = max(F_i, V)` as if the evicted
//! packet had never come (`V` is non-decreasing).

use std::collections::VecDeque;

use super::tournament::Tournament;
use super::{check_heads, check_per_queue, Head, SchedError, Scheduler};
use crate::time::Time;

/// WF²Q+ over `phi.len()` queues on a link of `link_rate_bps`.
#[derive(Clone, Debug)]
pub struct Wf2qPlus {
    /// `φ_i`, the weights (guaranteed rate share `φ_i/Σφ`).
    phi: Vec<f64>,
    sum_phi: f64,
    /// `C`, bits per second.
    rate_bps: f64,
    /// `V` at `last`, bytes: the work done up to `last` (and the `min S`
    /// jumps).
    v: f64,
    last: Time,
    /// Bytes of the packet in transmission not yet sent at `last`.
    in_service: f64,
    /// Finish tag of each queue's latest arrival.
    last_finish: Vec<f64>,
    /// `(S, F)` of the packets each queue holds, FIFO.
    tags: Vec<VecDeque<(f64, f64)>>,
    /// Packets held over all queues (the sum of the FIFOs' lengths).
    queued: usize,
    /// The heads not yet eligible (`S > V` when last looked at), by `S`.
    waiting: Tournament,
    /// The eligible heads (`S ≤ V`), by `F`.
    eligible: Tournament,
}

impl Wf2qPlus {
    /// `phi[i]`: weight of queue `i` (> 0); `link_rate_bps`: `C`, the rate
    /// of the link the scheduler serves (bits/s, > 0).
    pub fn new(queues: usize, phi: Vec<f64>, link_rate_bps: u64) -> Result<Wf2qPlus, SchedError> {
        check_per_queue("WF2Q+", "phi", queues, &phi)?;
        if link_rate_bps == 0 {
            return Err(SchedError::Zero { scheduler: "WF2Q+", param: "link_rate_bps", value: 0.0 });
        }
        Ok(Wf2qPlus {
            sum_phi: phi.iter().sum(),
            phi,
            rate_bps: link_rate_bps as f64,
            v: 0.0,
            last: Time::ZERO,
            in_service: 0.0,
            last_finish: vec![0.0; queues],
            tags: vec![VecDeque::new(); queues],
            queued: 0,
            waiting: Tournament::new(queues),
            eligible: Tournament::new(queues),
        })
    }

    /// Queue `queue`'s head changed (or it emptied): it waits, or is
    /// eligible already.
    fn head_update(&mut self, queue: usize) {
        let head = self.tags[queue].front().copied();
        let eligible = head.is_some_and(|(s, _)| s <= self.v);
        // Only the trees whose key for the queue changes are touched.
        let (from, to) =
            if eligible { (&mut self.waiting, &mut self.eligible) } else { (&mut self.eligible, &mut self.waiting) };
        if from.key(queue).is_some() {
            from.set(queue, None);
        }
        let key = head.map(|(s, f)| if eligible { f } else { s });
        if key.is_some() || to.key(queue).is_some() {
            to.set(queue, key);
        }
    }

    /// Counts the bytes of the packet in transmission sent by `now`.
    fn advance(&mut self, now: Time) {
        if now <= self.last {
            return;
        }
        // ns · bit/s / 8e9: exact for whole-nanosecond byte times.
        let sent = (now - self.last).as_nanos() as f64 * self.rate_bps / 8e9;
        let done = sent.min(self.in_service);
        self.v += done;
        self.in_service -= done;
        self.last = now;
    }

    /// `V(now)` (bytes) as far as the work done goes; `select` may still
    /// raise it to the smallest queued start tag.
    pub fn virtual_time(&mut self, now: Time) -> f64 {
        self.advance(now);
        self.v
    }
}

impl Scheduler for Wf2qPlus {
    fn on_enqueue(&mut self, queue: usize, size: u32, now: Time) {
        self.advance(now);
        if self.queued == 0 && self.in_service == 0.0 {
            // A busy period starts: no queue carries a lead over V into it
            // (module doc).
            for f in &mut self.last_finish {
                *f = f.min(self.v);
            }
        }
        self.queued += 1;
        let s = if self.tags[queue].is_empty() { self.last_finish[queue].max(self.v) } else { self.last_finish[queue] };
        let f = s + size as f64 * self.sum_phi / self.phi[queue];
        self.last_finish[queue] = f;
        self.tags[queue].push_back((s, f));
        if self.tags[queue].len() == 1 {
            self.head_update(queue);
        }
    }

    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize> {
        check_heads("WF2Q+", heads, self.phi.len());
        self.advance(now);
        // V = max(V, min S): only when no head is eligible can min S exceed V.
        if self.eligible.min().is_none() {
            let (min_s, _) = self.waiting.min()?;
            self.v = self.v.max(min_s);
        }
        while let Some((_, q)) = self.waiting.min().filter(|&(s, _)| s <= self.v) {
            self.waiting.set(q, None);
            self.eligible.set(q, Some(self.tags[q][0].1));
        }
        let (_, q) = self.eligible.min()?;
        debug_assert!(heads[q].is_some(), "WF2Q+: queue {q} has a tag but no head");
        Some(q)
    }

    /// Pops the tag; the previous packet's bytes not yet counted are done
    /// (one packet at a time), this one's count from `now` on.
    fn on_dequeue(&mut self, queue: usize, size: u32, now: Time) {
        self.advance(now);
        self.tags[queue].pop_front();
        self.queued -= 1;
        self.v += self.in_service;
        self.in_service = size as f64;
        self.head_update(queue);
    }

    /// Tags popped, no work counted; an emptied queue's `F_i` rolls back to
    /// the evicted `S_i` (see the module doc).
    fn on_evict(&mut self, queue: usize, _size: u32, _now: Time) {
        let (s, _) = self.tags[queue].pop_front().unwrap_or_else(|| panic!("WF2Q+: eviction from empty queue {queue}"));
        self.queued -= 1;
        if self.tags[queue].is_empty() {
            self.last_finish[queue] = s;
        }
        self.head_update(queue);
    }
}

#[cfg(test)]
impl Wf2qPlus {
    pub(crate) fn check_state(&self, queues: &[VecDeque<Head>]) -> Result<(), String> {
        let held: usize = queues.iter().map(VecDeque::len).sum();
        super::tests::same("WF2Q+", "packets held (all queues)", 0, self.queued, held)?;
        super::tests::check_tags("WF2Q+", &self.tags, |&(_, f)| f, &self.last_finish, queues)
    }

    /// What a scan of every queue picks after a `select`: the smallest
    /// finish tag among the heads with `S ≤ V` (ties to the lower queue),
    /// with what the eligible tree holds.
    pub(crate) fn scan_and_trees(&self) -> [(Option<usize>, Option<usize>); 1] {
        let eligible = self
            .tags
            .iter()
            .enumerate()
            .filter_map(|(q, t)| t.front().filter(|&&(s, _)| s <= self.v).map(|&(_, f)| (q, f)));
        [(super::smallest(eligible), self.eligible.min().map(|(_, q)| q))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{serve_order, simulate, Load};

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            Wf2qPlus::new(2, vec![0.0, 1.0], 1_000_000).unwrap_err().to_string(),
            "WF2Q+: `phi` of queue 0 must be positive and finite, got 0"
        );
        assert_eq!(
            Wf2qPlus::new(2, vec![1.0, 1.0], 0).unwrap_err().to_string(),
            "WF2Q+: `link_rate_bps` must be positive, got 0"
        );
        assert!(matches!(Wf2qPlus::new(3, vec![1.0], 1), Err(SchedError::CountMismatch { .. })));
        assert!(matches!(Wf2qPlus::new(0, vec![], 1), Err(SchedError::NoQueues { .. })));
    }

    /// φ = (1, 1), Σφ = 2; queue 2 (φ 1) holds a packet throughout, so no
    /// new busy period starts. Queue 0: 100 B (S 0, F 300), 100 B (S 300,
    /// F 600). Evicting the head leaves (300, 600) and V = 0; evicting that
    /// too rolls F_0 back to 300 (the first packet's finish, still charged);
    /// a new 100 B packet gets S = max(300, 0) = 300. Queue 1: 100 B (S 0,
    /// F 300) evicted: F_1 back to 0, and a new one gets (0, 300) again.
    /// With everything evicted, the next arrival starts a busy period:
    /// F_0 = 600 is lowered to V = 0, the packet gets (0, 300).
    #[test]
    fn eviction_does_no_work() {
        let mut s = Wf2qPlus::new(3, vec![1.0, 1.0, 1.0], 1_000_000_000).unwrap();
        s.on_enqueue(2, 100, Time::ZERO);
        s.on_enqueue(0, 100, Time::ZERO);
        s.on_enqueue(0, 100, Time::ZERO);
        s.on_evict(0, 100, Time::ZERO);
        assert_eq!(s.tags[0], [(300.0, 600.0)]);
        s.on_evict(0, 100, Time::ZERO);
        assert_eq!(s.last_finish[0], 300.0);
        s.on_enqueue(0, 100, Time::ZERO);
        assert_eq!(s.tags[0], [(300.0, 600.0)]);
        s.on_enqueue(1, 100, Time::ZERO);
        s.on_evict(1, 100, Time::ZERO);
        s.on_enqueue(1, 100, Time::ZERO);
        assert_eq!(s.tags[1], [(0.0, 300.0)]);
        assert_eq!(s.virtual_time(Time::ZERO), 0.0);
        for q in 0..3 {
            s.on_evict(q, 100, Time::ZERO);
        }
        s.on_enqueue(0, 100, Time::ZERO);
        assert_eq!(s.tags[0], [(0.0, 300.0)]);
    }

    /// V counts only the work done (issue 11's smallest case). φ = (1, 1,
    /// 4), Σφ = 6, 10 Mb/s (1.25 B/µs). 1.3 ms: 1500 B to queue 1, served
    /// 1.3–2.5 ms (S 0, F 9000). 1.7 ms: 1000 B to queue 2; 500 B of queue
    /// 1's packet are done, so V = 500: S 500, F 500 + 1000·6/4 = 2000.
    /// 1.8 ms: 500 B to queue 2: S 2000, F 2750. 2.5 ms: V = 1500; 1500 B
    /// to queue 0: S 1500, F 10 500. 2.5 ms: queue 2 (F 2000), V = 2500 at
    /// 3.3 ms; queue 2's 500 B (S 2000 ≤ V, F 2750) before queue 0
    /// (F 10 500): it leaves at 3.7 ms, within its bound (rate-guarantee
    /// finish 3.5 ms + L_max/C 1.2 ms = 4.7 ms). Counting the whole packet
    /// in transmission at its start gave queue 2 the tags (1500, 3000),
    /// (3000, 3750): ineligible at 3.3 ms (V 2500), so queue 0 went first
    /// and the 500 B left at 4.9 ms.
    #[test]
    fn virtual_time_counts_only_work_done() {
        let ms = |x: f64| Time::from_nanos((x * 1e6).round() as u64);
        let arrivals = [(ms(1.3), 1, 1500), (ms(1.7), 2, 1000), (ms(1.8), 2, 500), (ms(2.5), 0, 1500)];
        let greedy = vec![Vec::new(); 3];
        let load = Load { greedy: &greedy, backlog: 0, arrivals: &arrivals };
        let mut s = Wf2qPlus::new(3, vec![1.0, 1.0, 4.0], 10_000_000).unwrap();
        let log = simulate(&mut s, 10_000_000, &load, 4, Time::MAX);
        let got: Vec<(usize, Time)> = log.iter().map(|d| (d.queue, d.end)).collect();
        assert_eq!(got, [(1, ms(2.5)), (2, ms(3.3)), (2, ms(3.7)), (0, ms(4.9))]);
    }

    /// φ = (1, 1), 10 Mb/s (800 ns per byte). t = 0: 1000 B to queue 0 (S 0,
    /// F 2000), sent by 0.8 ms: V = 1000, queue 0 ahead of it. The link idles.
    /// 1 ms: 1200 B to queue 1 (S 1000, F 3400), then 1000 B to queue 0: a
    /// new busy period, so F_0 is lowered to V = 1000 and the packet gets
    /// (1000, 3000): queue 0 first. Carrying F_0 = 2000 over would have
    /// made it (2000, 4000), ineligible at V = 1000: queue 1 first.
    #[test]
    fn a_busy_period_starts_with_no_lead_carried_over() {
        let arrivals = [(Time::ZERO, 0, 1000), (Time::from_millis(1), 1, 1200), (Time::from_millis(1), 0, 1000)];
        let greedy = vec![Vec::new(); 2];
        let load = Load { greedy: &greedy, backlog: 0, arrivals: &arrivals };
        let mut s = Wf2qPlus::new(2, vec![1.0, 1.0], 10_000_000).unwrap();
        let log = simulate(&mut s, 10_000_000, &load, 3, Time::MAX);
        assert_eq!(log.iter().map(|d| d.queue).collect::<Vec<_>>(), [0, 0, 1]);
    }

    /// Bennett & Zhang's example (WF²Q, INFOCOM 1996): queue 0 has φ = 10
    /// and 11 packets, queues 1..=10 φ = 1 and one packet each, all 100 B at
    /// t=0; Σφ = 20. Tags: queue 0 S = 200(k−1), F = 200k; others S = 0,
    /// F = 2000. V starts at 0 and grows by 100 per packet sent:
    /// V=0: q0 (S 0) eligible, F 200 smallest → q0; V=100: q0's S=200 > V,
    /// q1 (S 0) → q1; V=200: q0 (S 200, F 400) → q0; … so queue 0 alternates
    /// with the others (WFQ instead sends ten of queue 0's first).
    #[test]
    fn hand_checked_order_alternates() {
        let mut phi = vec![10.0];
        phi.extend([1.0; 10]);
        let mut s = Wf2qPlus::new(11, phi, 1_000_000_000).unwrap();
        let mut contents = vec![vec![100; 11]];
        contents.extend(vec![vec![100]; 10]);
        let order = serve_order(&mut s, &contents, 21);
        let mut expected = Vec::new();
        for k in 1..=10 {
            expected.extend([0, k]);
        }
        expected.push(0);
        assert_eq!(order, expected);
        // 21 packets of 100 B (800 ns each at 1 Gb/s) sent by 16.8 µs, and
        // V never had to jump to a start tag.
        assert_eq!(s.virtual_time(Time::from_nanos(21 * 800)), 2100.0);
    }
}
