//! CoDel, Controlled Delay (RFC 8289, K. Nichols, V. Jacobson, A. McGregor,
//! J. Iyengar, 2018): a dropper that acts when packets leave the queue.
//!
//! Constants named as in RFC 8289 §4.2–4.4 and its pseudocode (§5):
//! `TARGET` (5 ms), `INTERVAL` (100 ms) and `maxpacket` (an MTU).
//!
//! - **Sojourn test** (`dodequeue`): for each head packet, with `sojourn` its
//!   time in the queue and `bytes` what remains queued behind it, the queue
//!   is *good* if `sojourn < TARGET` or `bytes ≤ maxpacket` (less than one
//!   MTU left), and then `first_above_time` is cleared. Otherwise, the first
//!   such packet sets `first_above_time = now + INTERVAL`, and a packet at
//!   `now ≥ first_above_time` is *ok to drop*: the sojourn has stayed above
//!   `TARGET` for a whole `INTERVAL`.
//! - **Dropping state**: a packet ok to drop, outside the dropping state,
//!   is dropped and the state entered, with `count = 1` — or, if the state
//!   was left recently (`now − drop_next < 16·INTERVAL`) and `delta =
//!   count − lastcount > 1` drops happened in the last cycle, `count =
//!   delta` (the RFC's pseudocode, Linux's variant); then `drop_next =
//!   now + INTERVAL/√count` and `lastcount = count`. The packet after it is
//!   delivered. `count_reuse` can select instead the rule of Nichols &
//!   Jacobson's ns-2 code (`count − 2` within `8·INTERVAL`), which holds the
//!   drop rate far better against unresponsive overload (see the tests).
//! - **In the dropping state**, a good packet leaves it. Otherwise, while
//!   `now ≥ drop_next`: drop the head, `count += 1`, look at the next one; if
//!   it is still not good, `drop_next ← drop_next + INTERVAL/√count` (the
//!   control law, from the previous `drop_next`, not from `now`).
//!
//! **Calling convention.** The caller dequeues the head packet at `now` and
//! calls [`CoDel::on_dequeue`] with its sojourn time and the bytes left in
//! the queue after removing it. `true` means drop it (count it as
//! [`DropReason::EarlyDrop`]); the caller then removes the next head and
//! calls again at the same `now`, or, if the queue is empty, calls
//! [`CoDel::on_idle`]. This splits the RFC's `dequeue` loop packet by packet
//! with the same decisions. If the caller breaks the convention (the next
//! call after a `true` comes at a later `now`), the queue is taken to have
//! emptied after the drop, as if `on_idle` had been called then.
//!
//! `first_above_time = 0` in the RFC means "unset"; here it is an `Option`,
//! so a time of 0 is not special. The buffer's own limit (tail drop) is not
//! CoDel's; [`CoDel::on_arrival`] only applies `limit`.

use crate::aqm::{Backlog, Limit, LimitRule};
use crate::packet::DropReason;
use crate::time::Time;

/// CoDel's parameters, named as RFC 8289 names them.
#[derive(Clone, Debug, PartialEq)]
pub struct CoDelParams {
    /// `TARGET`: the acceptable standing queue delay.
    pub target: Time,
    /// `INTERVAL`: the window over which the sojourn must stay above target.
    pub interval: Time,
    /// `maxpacket`: bytes of one MTU; no drop while at most this much is
    /// left queued.
    pub maxpacket: u32,
    /// The buffer's hard limit (tail drop on arrival).
    pub limit: Limit,
    /// How the count is carried over when the dropping state is re-entered.
    pub count_reuse: CountReuse,
}

/// How CoDel starts its count when it re-enters the dropping state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountReuse {
    /// RFC 8289's pseudocode (Linux's variant): `count = delta`, the drops of
    /// the last cycle, if `delta > 1` and `now − drop_next < 16·INTERVAL`;
    /// else 1.
    Rfc8289,
    /// Nichols & Jacobson's ns-2 code (`codel.cc`, `sfqcodel.cc`): `count − 2`
    /// if `count > 2` and `now − drop_next < 8·INTERVAL`; else 1.
    Ns2,
}

impl Default for CoDelParams {
    /// RFC 8289's `TARGET` 5 ms and `INTERVAL` 100 ms, a 1500-byte MTU,
    /// and Linux's default limit of 1000 packets.
    fn default() -> Self {
        CoDelParams {
            target: Time::from_millis(5),
            interval: Time::from_millis(100),
            maxpacket: 1500,
            limit: Limit::Packets(1000),
            count_reuse: CountReuse::Rfc8289,
        }
    }
}

impl CoDelParams {
    pub fn validate(&self) -> Result<(), String> {
        if self.target == Time::ZERO {
            return Err("target must be positive".into());
        }
        if self.interval <= self.target {
            return Err(format!("interval ({}) must be greater than target ({})", self.interval, self.target));
        }
        if self.maxpacket == 0 {
            return Err("maxpacket must be positive".into());
        }
        self.limit.validate_not_cells()
    }
}

/// What the previous `on_dequeue` left pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    /// Nothing: the next call is a fresh dequeue.
    None,
    /// The packet that entered the dropping state was dropped at `.0`; the
    /// next packet is delivered.
    AfterEntering(Time),
    /// A packet was dropped in the dropping state at `.0`; the next packet
    /// continues the RFC's `while` loop.
    InLoop(Time),
}

/// One CoDel instance.
#[derive(Clone, Debug)]
pub struct CoDel {
    params: CoDelParams,
    first_above_time: Option<Time>,
    drop_next: Time,
    count: u32,
    lastcount: u32,
    dropping: bool,
    pending: Pending,
}

impl CoDel {
    /// The hard limit admits only an arrival that fits ([`LimitRule::Fits`]):
    /// RFC 8289 leaves the buffer's size to the implementation.
    pub const LIMIT_RULE: LimitRule = LimitRule::Fits;

    pub fn new(params: CoDelParams) -> CoDel {
        CoDel {
            params,
            first_above_time: None,
            drop_next: Time::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
            pending: Pending::None,
        }
    }

    pub fn params(&self) -> &CoDelParams {
        &self.params
    }

    /// Whether CoDel is in its dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// Drops in the current (or last) dropping state, as the control law counts them.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// When the next drop is due, if dropping.
    pub fn drop_next(&self) -> Time {
        self.drop_next
    }

    /// The control law: `t + INTERVAL/√count`.
    fn control_law(&self, t: Time, count: u32) -> Time {
        let step = self.params.interval.as_nanos() as f64 / (count as f64).sqrt();
        Time(t.as_nanos() + step.round() as u64)
    }

    /// The RFC's `dodequeue` test for a head packet: ok to drop?
    fn ok_to_drop(&mut self, sojourn: Time, backlog_bytes: u64, now: Time) -> bool {
        if sojourn < self.params.target || backlog_bytes <= self.params.maxpacket as u64 {
            self.first_above_time = None;
            false
        } else {
            match self.first_above_time {
                None => {
                    self.first_above_time = Some(now + self.params.interval);
                    false
                }
                Some(t) => now >= t,
            }
        }
    }

    /// The queue was found empty at `now` (the RFC's `dodequeue` returning
    /// no packet): the sojourn cannot be above target, and the dropping
    /// state ends.
    pub fn on_idle(&mut self, _now: Time) {
        self.first_above_time = None;
        self.dropping = false;
        self.pending = Pending::None;
    }

    /// An arrival: only the buffer's hard limit applies.
    pub fn on_arrival(&mut self, backlog: &Backlog, size: u32, _now: Time) -> Option<DropReason> {
        (!self.params.limit.admits(Self::LIMIT_RULE, backlog.pkts, backlog.bytes, size)).then_some(DropReason::Overflow)
    }

    /// The head packet leaves at `now` after `sojourn` in the queue, leaving
    /// `backlog_bytes` behind it. `true`: drop it, then call again with the
    /// next head at the same `now` (or [`CoDel::on_idle`] if none).
    pub fn on_dequeue(&mut self, sojourn: Time, backlog_bytes: u64, now: Time) -> bool {
        match self.pending {
            Pending::AfterEntering(t) | Pending::InLoop(t) if t != now => self.on_idle(t),
            _ => {}
        }
        let ok = self.ok_to_drop(sojourn, backlog_bytes, now);
        match std::mem::replace(&mut self.pending, Pending::None) {
            Pending::AfterEntering(_) => false,
            Pending::InLoop(_) => {
                if !ok {
                    self.dropping = false;
                    return false;
                }
                self.drop_next = self.control_law(self.drop_next, self.count);
                self.drop_in_loop(now)
            }
            Pending::None if self.dropping => {
                if !ok {
                    self.dropping = false;
                    return false;
                }
                self.drop_in_loop(now)
            }
            Pending::None if ok => {
                self.dropping = true;
                let since_drop_next = now.saturating_sub(self.drop_next).as_nanos();
                let interval = self.params.interval.as_nanos();
                self.count = match self.params.count_reuse {
                    CountReuse::Rfc8289 => {
                        let delta = self.count.saturating_sub(self.lastcount);
                        if delta > 1 && since_drop_next < 16 * interval {
                            delta
                        } else {
                            1
                        }
                    }
                    CountReuse::Ns2 if self.count > 2 && since_drop_next < 8 * interval => self.count - 2,
                    CountReuse::Ns2 => 1,
                };
                self.drop_next = self.control_law(now, self.count);
                self.lastcount = self.count;
                self.pending = Pending::AfterEntering(now);
                true
            }
            Pending::None => false,
        }
    }

    /// The packet `on_dequeue` at `now` just said to drop was ECN-capable
    /// and leaves marked instead (RFC 8289 §5's ECN note; Linux's codel
    /// with `ecn`): the dequeue ends with it. Entering the dropping state,
    /// nothing more changes (`drop_next` is set); in the dropping state,
    /// the next drop is scheduled by the control law from `drop_next`, as
    /// Linux's `codel_dequeue` does before `goto end`, without looking at
    /// the packet behind.
    pub fn on_marked(&mut self, now: Time) {
        if let Pending::InLoop(t) = std::mem::replace(&mut self.pending, Pending::None) {
            debug_assert_eq!(t, now, "a mark follows the on_dequeue that asked for the drop");
            self.drop_next = self.control_law(self.drop_next, self.count);
        }
    }

    /// The `while (now >= drop_next && dropping)` test for the current head.
    fn drop_in_loop(&mut self, now: Time) -> bool {
        if now >= self.drop_next {
            self.count += 1;
            self.pending = Pending::InLoop(now);
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testbed::{self, Hooks};

    impl Hooks for CoDel {
        fn arrival(&mut self, backlog: &Backlog, size: u32, now: Time) -> bool {
            self.on_arrival(backlog, size, now).is_some()
        }
        fn dequeue(&mut self, sojourn: Time, bytes_left: u64, _size: u32, now: Time) -> bool {
            self.on_dequeue(sojourn, bytes_left, now)
        }
        fn idle(&mut self, now: Time) {
            self.on_idle(now);
        }
    }

    const MS: u64 = 1_000_000;

    /// Runs 1500-byte packets through a queue served every 1.2 ms (10 Mb/s)
    /// with arrivals every `a` ns for 60 s; returns (mean sojourn over the
    /// last 30 s, median after 2 s, min and max over the last 30 s, share of
    /// arrivals dropped), in ms.
    fn standing_queue(reuse: CountReuse, a: u64) -> (f64, f64, f64, f64, f64) {
        let params = CoDelParams { limit: Limit::Packets(100_000), count_reuse: reuse, ..CoDelParams::default() };
        let mut c = CoDel::new(params);
        let out = testbed::run(&mut c, Time(a), Time(1_200_000), 1500, Time::from_secs(60));
        let half = Time::from_secs(30);
        let late: Vec<f64> =
            out.delivered.iter().filter(|(t, _)| *t >= half).map(|(_, s)| s.as_secs_f64() * 1e3).collect();
        assert_eq!(late.len(), 25_000, "the link never idles: 30 s at one packet per 1.2 ms");
        let min = late.iter().cloned().fold(f64::MAX, f64::min);
        let max = late.iter().cloned().fold(0.0, f64::max);
        let share = out.head_drops.len() as f64 / out.arrivals as f64;
        (out.mean_sojourn_ms(half), out.median_sojourn_ms(Time::from_secs(2)), min, max, share)
    }

    #[test]
    fn standing_queue_at_1_2x_overload() {
        // Arrivals every 1 ms, 1.2× the service rate: CoDel must drop the
        // 1/6 excess. It cannot hold the sojourn at 5 ms against such
        // unresponsive traffic: each time one packet leaves below TARGET the
        // dropping state ends, and re-entering takes a whole INTERVAL above
        // TARGET, during which the delay grows by INTERVAL·(1.2 − 1) = 20 ms.
        // So the sojourn is a sawtooth from about 5 to about 25 ms at best.
        //
        // ns-2's count reuse (count − 2) keeps the drop rate from one cycle to
        // the next and reaches that sawtooth. Measured: mean over the last
        // half 13.11 ms, median after 2 s 13.80 ms, range 4.2–21.6 ms.
        let (mean, median, min, max, share) = standing_queue(CountReuse::Ns2, 1_000_000);
        println!("codel ns2 reuse, 1.2x: mean {mean:.2} median {median:.2} min {min:.1} max {max:.1} share {share:.4}");
        assert!((10.0..=16.0).contains(&mean), "mean sojourn {mean} ms");
        assert!(min >= 3.5 && max <= 25.0, "sawtooth {min}..{max} ms");
        assert!((share - 1.0 / 6.0).abs() < 0.005, "drop share {share}");
        // RFC 8289's reuse (count = drops of the last cycle) alternates
        // between long and short cycles and oscillates with a period of about
        // 4.5 s. Measured: mean over the last half 83.13 ms, median 98.80 ms,
        // range 4.8–127.8 ms. The brief's expected band, mean in [2.5, 10] ms,
        // does not hold at this load for either variant (see the 1.05× test).
        let (mean, median, min, max, share) = standing_queue(CountReuse::Rfc8289, 1_000_000);
        println!("codel rfc reuse, 1.2x: mean {mean:.2} median {median:.2} min {min:.1} max {max:.1} share {share:.4}");
        assert!((60.0..=110.0).contains(&mean), "mean sojourn {mean} ms");
        assert!(min >= 4.0 && max <= 140.0, "range {min}..{max} ms");
        assert!((share - 1.0 / 6.0).abs() < 0.01, "drop share {share}");
    }

    #[test]
    fn standing_queue_settles_near_target_at_mild_overload() {
        // Arrivals every 1.142857 ms, 1.05× the service rate: the sawtooth is
        // INTERVAL·0.05 = 5 ms high and the sojourn settles near TARGET.
        // Measured: RFC 8289 reuse mean 7.91 ms, median 8.23 ms;
        // ns-2 reuse mean 7.30 ms, median 7.26 ms.
        for reuse in [CountReuse::Rfc8289, CountReuse::Ns2] {
            let (mean, median, min, max, share) = standing_queue(reuse, 1_142_857);
            println!(
                "codel {reuse:?}, 1.05x: mean {mean:.2} median {median:.2} min {min:.1} max {max:.1} share {share:.4}"
            );
            assert!((2.5..=10.0).contains(&mean), "{reuse:?}: mean sojourn {mean} ms");
            assert!((3.0..=10.0).contains(&median), "{reuse:?}: median sojourn {median} ms");
            assert!((share - 0.05 / 1.05).abs() < 0.005, "drop share {share}");
        }
    }

    #[test]
    fn drop_spacing_follows_interval_over_sqrt_count() {
        // Arrivals at twice the service rate (every 0.6 ms, served every
        // 1.2 ms): the sojourn rises without bound, so the dropping state,
        // once entered, is never left in the first second.
        let d = 1_200_000u64;
        let mut c = CoDel::new(CoDelParams { limit: Limit::Packets(100_000), ..CoDelParams::default() });
        let out = testbed::run(&mut c, Time(600_000), Time(d), 1500, Time::from_secs(1));
        // The first departure with sojourn ≥ 5 ms and more than one MTU left
        // sets first_above_time = that time + 100 ms.
        let t_above = out.delivered.iter().find(|(_, s)| *s >= Time::from_millis(5)).unwrap().0;
        // Departures fall on multiples of d: a drop due at t happens at the
        // first slot at or after t.
        let slot = |t: u64| t.div_ceil(d) * d;
        let t1 = slot(t_above.as_nanos() + 100 * MS);
        // Entering: count = 1, drop_next = t1 + 100 ms. Then the control law
        // from the previous drop_next: + 100/√2 = 70.710678 ms (count 2),
        // + 100/√3 = 57.735027 ms (count 3), + 100/√4 = 50 ms (count 4),
        // + 100/√5 = 44.721360 ms (count 5).
        let mut drop_next = t1 + 100 * MS;
        let mut expected = vec![t1, slot(drop_next)];
        for step in [70_710_678u64, 57_735_027, 50_000_000, 44_721_360] {
            drop_next += step;
            expected.push(slot(drop_next));
        }
        let got: Vec<u64> = out.head_drops.iter().take(6).map(|t| t.as_nanos()).collect();
        assert_eq!(got, expected);
        // By hand: departure k (at 1.2k ms) serves the packet that arrived at
        // 0.6(k − 1) ms, sojourn 0.6k + 0.6 ms ≥ 5 ms first for k = 8: 9.6 ms.
        // The first drop: the first slot at or after 109.6 ms, 92·1.2 = 110.4 ms.
        assert_eq!(t_above, Time(8 * d));
        assert_eq!(t1, 92 * d);
    }

    #[test]
    fn reentering_soon_after_leaving_reuses_the_count() {
        let mut c = CoDel::new(CoDelParams::default());
        let big = 100_000; // bytes left: well above one MTU
        let bad = Time::from_millis(20);
        let ms = |m: u64| Time::from_millis(m);
        // Above target from 0 ms: ok to drop from 100 ms.
        assert!(!c.on_dequeue(bad, big, ms(0)));
        assert!(!c.on_dequeue(bad, big, ms(50)));
        assert!(c.on_dequeue(bad, big, ms(100)), "enters dropping: count 1");
        assert!(!c.on_dequeue(bad, big, ms(100)), "the packet after the entering drop is delivered");
        assert_eq!((c.count(), c.drop_next()), (1, ms(200)));
        // drop_next: 200, then + 100/√2 = 270.711, + 100/√3 = 328.446,
        // + 100/√4 = 378.446 ms; the drops come at the first calls at or
        // after them (every ms here): 200, 271, 329, 379 ms, count 2, 3, 4, 5.
        for (t, count) in [(200, 2), (271, 3), (329, 4), (379, 5)] {
            assert!(!c.on_dequeue(bad, big, ms(t - 1)));
            assert!(c.on_dequeue(bad, big, ms(t)), "drop at {t} ms");
            assert!(!c.on_dequeue(bad, big, ms(t)));
            assert_eq!(c.count(), count);
        }
        // drop_next = 378.446 + 100/√5 = 423.168 ms.
        assert!(c.dropping());
        // A good packet leaves the state.
        assert!(!c.on_dequeue(Time::from_millis(1), big, ms(400)));
        assert!(!c.dropping());
        // Above target again from 500 ms; ok at 600 ms: delta = 5 − 1 = 4 and
        // the state was left within 16 intervals, so count = 4 and the next
        // drop comes 100/√4 = 50 ms later.
        assert!(!c.on_dequeue(bad, big, ms(500)));
        assert!(c.on_dequeue(bad, big, ms(600)));
        assert!(!c.on_dequeue(bad, big, ms(600)));
        assert_eq!((c.count(), c.drop_next()), (4, ms(650)));
        // Two more drops in this cycle: 650 ms (count 5), then 650 + 100/√5
        // = 694.721 ms -> at 695 ms (count 6); drop_next = 694.721 + 100/√6
        // = 735.546 ms. Leave at 700 ms.
        assert!(c.on_dequeue(bad, big, ms(650)));
        assert!(!c.on_dequeue(bad, big, ms(650)));
        assert!(!c.on_dequeue(bad, big, ms(694)));
        assert!(c.on_dequeue(bad, big, ms(695)));
        assert!(!c.on_dequeue(bad, big, ms(695)));
        assert_eq!(c.count(), 6);
        assert!(!c.on_dequeue(Time::from_millis(1), big, ms(700)));
        // delta = 6 − 4 = 2 > 1, but re-entering at 3100 ms is 2364 ms after
        // drop_next, more than 16 intervals: the count restarts at 1.
        assert!(!c.on_dequeue(bad, big, ms(3000)));
        assert!(c.on_dequeue(bad, big, ms(3100)));
        assert_eq!((c.count(), c.drop_next()), (1, ms(3200)));
    }

    #[test]
    fn no_drop_with_less_than_one_mtu_queued_or_below_target() {
        let mut c = CoDel::new(CoDelParams::default());
        for t in 0..1000 {
            assert!(!c.on_dequeue(Time::from_millis(50), 1500, Time::from_millis(t)));
            assert!(!c.on_dequeue(Time::from_millis(4), 100_000, Time::from_millis(t)));
        }
    }

    #[test]
    fn validate_names_the_bad_parameter() {
        assert_eq!(CoDelParams::default().validate(), Ok(()));
        let p = CoDelParams { interval: Time::from_millis(5), ..Default::default() };
        assert_eq!(p.validate(), Err("interval (5ms) must be greater than target (5ms)".into()));
        let p = CoDelParams { maxpacket: 0, ..Default::default() };
        assert_eq!(p.validate(), Err("maxpacket must be positive".into()));
    }
}
