//! Cross-scheduler tests: a small link simulator, long-run shares, the
//! capped-priority envelope, WF²Q+'s lag behind GPS, VirtualClock's
//! reservation, property tests over random arrivals, and over random
//! arrivals, departures and evictions with every scheduler's per-queue state
//! checked against the queues' contents (the `check_state` helpers).
//!
//! Rates are chosen so that transmission times are whole nanoseconds
//! (1 Gb/s: 8 ns per byte; 10 Mb/s: 800 ns per byte), so the fluid
//! reference `share·C·t` is exact.

use std::collections::VecDeque;

use proptest::prelude::*;

use super::*;

/// One packet's transmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Departure {
    pub queue: usize,
    pub size: u32,
    pub start: Time,
    pub end: Time,
}

/// Traffic for [`simulate`].
pub(crate) struct Load<'a> {
    /// Per queue, a size pattern cycled forever: the queue is kept
    /// backlogged (`backlog` packets at t=0, one more each time one leaves).
    /// An empty pattern: the queue gets only `arrivals`.
    pub greedy: &'a [Vec<u32>],
    pub backlog: usize,
    /// Extra arrivals `(time, queue, size)`, sorted by time.
    pub arrivals: &'a [(Time, usize, u32)],
}

/// A link of `rate_bps` serving per-queue FIFOs by `s`, until `packets`
/// departures or `until`. Asserts on every decision that the scheduler
/// picked a non-empty queue, and that it only holds back (None) with a
/// backlog when `next_eligible` gives a later time.
pub(crate) fn simulate<S: Scheduler>(
    s: &mut S,
    rate_bps: u64,
    load: &Load,
    packets: usize,
    until: Time,
) -> Vec<Departure> {
    let n = load.greedy.len();
    let mut queues: Vec<VecDeque<Head>> = vec![VecDeque::new(); n];
    let mut cursor = vec![0usize; n];
    let mut log = Vec::with_capacity(packets.min(1 << 20));
    let enqueue = |s: &mut S, queues: &mut Vec<VecDeque<Head>>, q: usize, size: u32, t: Time| {
        queues[q].push_back(Head { size, enqueued: t });
        s.on_enqueue(q, size, t);
    };
    let refill = |cursor: &mut Vec<usize>, q: usize| -> Option<u32> {
        let p = &load.greedy[q];
        if p.is_empty() {
            return None;
        }
        let size = p[cursor[q] % p.len()];
        cursor[q] += 1;
        Some(size)
    };
    for _ in 0..load.backlog {
        for q in 0..n {
            if let Some(size) = refill(&mut cursor, q) {
                enqueue(s, &mut queues, q, size, Time::ZERO);
            }
        }
    }
    let mut next_arrival = 0;
    let mut now = Time::ZERO;
    while log.len() < packets && now < until {
        while next_arrival < load.arrivals.len() && load.arrivals[next_arrival].0 <= now {
            let (t, q, size) = load.arrivals[next_arrival];
            enqueue(s, &mut queues, q, size, t);
            next_arrival += 1;
        }
        let heads: Vec<Option<Head>> = queues.iter().map(|q| q.front().copied()).collect();
        match s.select(&heads, now) {
            Some(q) => {
                let head = queues[q].pop_front().expect("scheduler selected an empty queue");
                s.on_dequeue(q, head.size, now);
                if let Some(size) = refill(&mut cursor, q) {
                    enqueue(s, &mut queues, q, size, now);
                }
                let end = now + Time::transmission(head.size, rate_bps);
                log.push(Departure { queue: q, size: head.size, start: now, end });
                now = end;
            }
            None => {
                let eligible = s.next_eligible(now);
                if heads.iter().any(Option::is_some) {
                    let t = eligible.expect("held back a backlog without a next_eligible time");
                    assert!(t > now, "next_eligible {t:?} not after {now:?} though select said no");
                }
                let arrival = load.arrivals.get(next_arrival).map(|a| a.0);
                now = match (eligible.filter(|&t| t > now), arrival) {
                    (Some(a), Some(b)) => a.min(b),
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => break,
                };
            }
        }
    }
    log
}

/// Serves `count` packets from queues preloaded at t=0 with `contents`
/// (queue 0's packets enqueued first), at 1 Gb/s; the order of queues served.
pub(crate) fn serve_order<S: Scheduler>(s: &mut S, contents: &[Vec<u32>], count: usize) -> Vec<usize> {
    let mut arrivals = Vec::new();
    for (q, sizes) in contents.iter().enumerate() {
        arrivals.extend(sizes.iter().map(|&size| (Time::ZERO, q, size)));
    }
    let greedy = vec![Vec::new(); contents.len()];
    let load = Load { greedy: &greedy, backlog: 0, arrivals: &arrivals };
    let log = simulate(s, 1_000_000_000, &load, count, Time::MAX);
    assert_eq!(log.len(), count, "queues ran dry");
    log.iter().map(|d| d.queue).collect()
}

fn bytes_per_queue(log: &[Departure], n: usize) -> Vec<u64> {
    let mut b = vec![0u64; n];
    for d in log {
        b[d.queue] += d.size as u64;
    }
    b
}

// ---------------------------------------------------------------------------
// Helpers for the schedulers' `check_state` (cfg(test) methods beside each).

/// `Ok` if `got == want`, else an error naming the scheduler, what and queue.
pub(crate) fn same<T: PartialEq + std::fmt::Debug>(
    name: &str,
    what: &str,
    queue: usize,
    got: T,
    want: T,
) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{name}: queue {queue}: {what} is {got:?}, expected {want:?}"))
    }
}

/// Bytes in a queue.
pub(crate) fn bytes(q: &VecDeque<Head>) -> u64 {
    q.iter().map(|h| h.size as u64).sum()
}

/// Packet sizes, head first.
pub(crate) fn sizes(q: &VecDeque<Head>) -> Vec<u32> {
    q.iter().map(|h| h.size).collect()
}

/// Enqueue times, head first.
pub(crate) fn times(q: &VecDeque<Head>) -> Vec<Time> {
    q.iter().map(|h| h.enqueued).collect()
}

/// A timestamp scheduler's per-queue tag FIFOs: one tag per queued packet,
/// finish tags non-decreasing head to tail, the tail's equal to the
/// queue's `last` (`F_prev`, `auxVC`).
pub(crate) fn check_tags<T, F: PartialOrd + std::fmt::Debug + Copy>(
    name: &str,
    tags: &[VecDeque<T>],
    finish: impl Fn(&T) -> F,
    last: &[F],
    queues: &[VecDeque<Head>],
) -> Result<(), String> {
    same(name, "queues", 0, tags.len(), queues.len())?;
    for (i, (t, q)) in tags.iter().zip(queues).enumerate() {
        same(name, "tags", i, t.len(), q.len())?;
        let f: Vec<F> = t.iter().map(&finish).collect();
        if f.windows(2).any(|w| w[1] < w[0]) {
            return Err(format!("{name}: queue {i}: tags decrease: {f:?}"));
        }
        if let Some(&tail) = f.last() {
            same(name, "tail tag vs F_prev", i, tail, last[i])?;
        }
    }
    Ok(())
}

const GBPS: u64 = 1_000_000_000;
const PACKETS: usize = 100_000;

/// Mixed sizes: 1500; 64/1500; 576; 40/1000/1500.
fn mixed_sizes() -> Vec<Vec<u32>> {
    vec![vec![1500], vec![64, 1500], vec![576], vec![40, 1000, 1500]]
}

/// Runs `s` with every queue backlogged and checks each queue's byte share
/// against `weights`' share within 1 % (relative). Returns the worst
/// relative error.
fn assert_shares<S: Scheduler>(s: &mut S, sizes: &[Vec<u32>], weights: &[f64]) -> f64 {
    let load = Load { greedy: sizes, backlog: 50, arrivals: &[] };
    let log = simulate(s, GBPS, &load, PACKETS, Time::MAX);
    assert_eq!(log.len(), PACKETS);
    let bytes = bytes_per_queue(&log, sizes.len());
    let total: u64 = bytes.iter().sum();
    let sum_w: f64 = weights.iter().sum();
    let mut worst = 0.0f64;
    for (q, (&b, &w)) in bytes.iter().zip(weights).enumerate() {
        let share = b as f64 / total as f64;
        let expected = w / sum_w;
        let err = (share / expected - 1.0).abs();
        worst = worst.max(err);
        assert!(err < 0.01, "queue {q}: share {share:.5}, expected {expected:.5}");
    }
    worst
}

const W: [f64; 4] = [1.0, 2.0, 3.0, 4.0];

#[test]
fn wfq_long_run_shares_match_weights() {
    let worst = assert_shares(&mut Wfq::new(4, W.to_vec(), GBPS).unwrap(), &mixed_sizes(), &W);
    eprintln!("WFQ worst relative share error {worst:.2e}");
}

#[test]
fn wf2q_plus_long_run_shares_match_weights() {
    let worst = assert_shares(&mut Wf2qPlus::new(4, W.to_vec(), GBPS).unwrap(), &mixed_sizes(), &W);
    eprintln!("WF2Q+ worst relative share error {worst:.2e}");
}

#[test]
fn scfq_long_run_shares_match_weights() {
    let worst = assert_shares(&mut Scfq::new(4, W.to_vec()).unwrap(), &mixed_sizes(), &W);
    eprintln!("SCFQ worst relative share error {worst:.2e}");
}

#[test]
fn drr_long_run_shares_match_quanta() {
    let mut s = Drr::new(4, vec![500, 1000, 1500, 2000]).unwrap();
    let worst = assert_shares(&mut s, &mixed_sizes(), &W);
    eprintln!("DRR worst relative share error {worst:.2e}");
}

#[test]
fn virtual_clock_long_run_shares_match_rates() {
    let mut s = VirtualClock::new(4, vec![100_000_000, 200_000_000, 300_000_000, 400_000_000]).unwrap();
    let worst = assert_shares(&mut s, &mixed_sizes(), &W);
    eprintln!("VirtualClock worst relative share error {worst:.2e}");
}

#[test]
fn wrr_and_wirr_long_run_shares_match_weights_with_equal_sizes() {
    let sizes = vec![vec![1000]; 4];
    let worst = assert_shares(&mut Wrr::new(4, vec![1, 2, 3, 4]).unwrap(), &sizes, &W);
    eprintln!("WRR worst relative share error {worst:.2e}");
    let worst = assert_shares(&mut Wirr::new(4, vec![1, 2, 3, 4]).unwrap(), &sizes, &W);
    eprintln!("WIRR worst relative share error {worst:.2e}");
}

#[test]
fn strict_priority_starves_queue_1_while_queue_0_is_backlogged() {
    let sizes = vec![vec![1500], vec![64]];
    let load = Load { greedy: &sizes, backlog: 5, arrivals: &[] };
    let log = simulate(&mut Priority::new(2).unwrap(), GBPS, &load, 10_000, Time::MAX);
    assert_eq!(log.len(), 10_000);
    assert!(log.iter().all(|d| d.queue == 0));
}

/// Over every window `[t_j, t_k]` between two of queue 0's dequeue
/// instants, bytes dequeued ≤ depth + rate·(t_k − t_j)/8. Sliding check:
/// with prefix sums `P`, the worst window ending at `k` is
/// `P[k+1] − min_j (P[j] − rate·t_j/8)`, kept as a running maximum.
/// Exact: bytes are scaled by 8·10⁹ (units of bit·ns/s). Returns the
/// largest excess of the envelope's slack used, in bytes.
fn assert_envelope(log: &[Departure], rate_bps: u64, depth: u32) -> f64 {
    const U: i128 = 8_000_000_000;
    let mut prefix: i128 = 0; // bytes·U before departure k
    let mut best_start: i128 = i128::MIN; // max_j (rate·t_j − P[j])
    let mut worst: i128 = i128::MIN; // max over windows of (bytes − rate·τ)·U
    for d in log.iter().filter(|d| d.queue == 0) {
        let t = d.start.as_nanos() as i128;
        best_start = best_start.max(rate_bps as i128 * t - prefix);
        prefix += d.size as i128 * U;
        let excess = prefix - rate_bps as i128 * t + best_start;
        worst = worst.max(excess);
        assert!(excess <= depth as i128 * U, "queue 0 exceeded depth + rate·τ at {:?}", d.start);
    }
    worst as f64 / U as f64
}

#[test]
fn capped_priority_never_exceeds_its_envelope_and_uses_its_cap() {
    // 10 Mb/s link; EF 200 B packets capped at 3 Mb/s with a 3000 B bucket;
    // two greedy lower classes.
    let (link, rate, depth) = (10_000_000, 3_000_000, 3000);
    let sizes = vec![vec![200], vec![1500], vec![500]];
    let load = Load { greedy: &sizes, backlog: 20, arrivals: &[] };
    let mut s = CappedPriority::new(3, rate, depth).unwrap();
    let log = simulate(&mut s, link, &load, PACKETS, Time::MAX);
    let worst = assert_envelope(&log, rate, depth);
    let ef_bytes: u64 = log.iter().filter(|d| d.queue == 0).map(|d| d.size as u64).sum();
    let span = log.last().unwrap().end.as_secs_f64();
    let ef_rate = ef_bytes as f64 * 8.0 / span;
    eprintln!("capped EF: {ef_rate:.0} bit/s over {span:.2} s; worst window uses {worst} of {depth} B burst");
    assert!((ef_rate / rate as f64 - 1.0).abs() < 0.01, "EF rate {ef_rate}");
    // The greedy queue 1 takes the rest; queue 2 starves under it.
    assert!(log.iter().all(|d| d.queue != 2));
}

#[test]
fn capped_priority_alone_idles_the_link_to_hold_its_cap() {
    let (link, rate, depth) = (10_000_000, 3_000_000, 3000);
    let sizes = vec![vec![200], vec![]];
    let load = Load { greedy: &sizes, backlog: 20, arrivals: &[] };
    let mut s = CappedPriority::new(2, rate, depth).unwrap();
    let log = simulate(&mut s, link, &load, 20_000, Time::MAX);
    assert_eq!(log.len(), 20_000);
    assert_envelope(&log, rate, depth);
    // After the 15-packet burst, one 200 B packet every 200·8/3e6 s.
    let gaps: Vec<u64> = log.windows(2).skip(20).map(|w| (w[1].start - w[0].start).as_nanos()).collect();
    assert!(gaps.iter().all(|&g| g == 533_334 || g == 533_333), "{:?}", &gaps[..5]);
    let span = (log.last().unwrap().start - log[15].start).as_secs_f64();
    let sent = (log.len() - 16) as f64 * 200.0 * 8.0;
    assert!((sent / span / rate as f64 - 1.0).abs() < 1e-3);
}

/// Served bytes (continuous, so at packet boundaries the completed bytes)
/// minus the fluid share `φ_i/Σφ·C·t`, extremes over all boundaries.
/// Returns (max lag behind GPS, max lead over GPS) in bytes.
fn lag_and_lead(log: &[Departure], weights: &[f64], rate_bps: u64, horizon: Time) -> (f64, f64) {
    let sum: f64 = weights.iter().sum();
    let c = rate_bps as f64 / 8e9; // bytes per ns
    let mut served = vec![0.0f64; weights.len()];
    let (mut lag, mut lead) = (0.0f64, 0.0f64);
    for d in log.iter().take_while(|d| d.end <= horizon) {
        served[d.queue] += d.size as f64;
        let t = d.end.as_nanos() as f64;
        for (q, &w) in weights.iter().enumerate() {
            let diff = served[q] - w / sum * c * t;
            lag = lag.max(-diff);
            lead = lead.max(diff);
        }
    }
    (lag, lead)
}

#[test]
fn wf2q_plus_stays_within_one_packet_of_gps() {
    let sizes = mixed_sizes();
    let load = Load { greedy: &sizes, backlog: 50, arrivals: &[] };
    let log = simulate(&mut Wf2qPlus::new(4, W.to_vec(), GBPS).unwrap(), GBPS, &load, PACKETS, Time::MAX);
    let (lag, lead) = lag_and_lead(&log, &W, GBPS, Time::MAX);
    eprintln!("WF2Q+ vs GPS: max lag {lag} B, max lead {lead} B (L_max 1500)");
    assert!(lag <= 1500.0 && lead <= 1500.0);
    // WFQ, for comparison, also never lags by more than L_max (Parekh & Gallager).
    let log = simulate(&mut Wfq::new(4, W.to_vec(), GBPS).unwrap(), GBPS, &load, PACKETS, Time::MAX);
    let (lag, lead) = lag_and_lead(&log, &W, GBPS, Time::MAX);
    eprintln!("WFQ vs GPS: max lag {lag} B, max lead {lead} B");
    assert!(lag <= 1500.0);
}

/// Bennett & Zhang's example: queue 0 (φ 10, 11 packets) against ten queues
/// (φ 1, one packet each), 100 B packets at t=0. Until t = 2000 B-times GPS
/// serves every queue at its share, so the fluid reference is exact there.
/// WFQ runs queue 0 ahead by 500 B (ten packets by t = 1000 against 500 B of
/// fluid); WF²Q+ keeps it within one packet.
#[test]
fn wf2q_plus_does_not_run_ahead_where_wfq_does() {
    let mut phi = vec![10.0];
    phi.extend([1.0; 10]);
    let mut arrivals = vec![(Time::ZERO, 0, 100); 11];
    arrivals.extend((1..=10).map(|q| (Time::ZERO, q, 100)));
    let greedy = vec![Vec::new(); 11];
    let load = Load { greedy: &greedy, backlog: 0, arrivals: &arrivals };
    let horizon = Time::transmission(2000, GBPS);
    let log = simulate(&mut Wfq::new(11, phi.clone(), GBPS).unwrap(), GBPS, &load, 21, Time::MAX);
    let (_, wfq_lead) = lag_and_lead(&log, &phi, GBPS, horizon);
    let log = simulate(&mut Wf2qPlus::new(11, phi.clone(), GBPS).unwrap(), GBPS, &load, 21, Time::MAX);
    let (wf2q_lag, wf2q_lead) = lag_and_lead(&log, &phi, GBPS, horizon);
    assert_eq!(wfq_lead, 500.0);
    assert!(wf2q_lead <= 100.0 && wf2q_lag <= 100.0, "lead {wf2q_lead}, lag {wf2q_lag}");
}

// ---------------------------------------------------------------------------
// Per-packet delay bound of WFQ and WF²Q+ under arbitrary arrivals.

/// Each packet's finish time under its queue's rate guarantee alone: the
/// queue served by a dedicated server of rate `r_i = φ_i/Σφ·C`,
/// `GRC_j = max(a_j, GRC_{j−1}) + L_j/r_i` (Goyal, Lam & Vin, "Determining
/// End-to-End Delay Bounds in Heterogeneous Networks", Multimedia Systems
/// 5(3), 1997: the guaranteed-rate clock). In nanoseconds, `arrivals`' order.
fn rate_guarantee_finish(arrivals: &[(Time, usize, u32)], weights: &[f64], rate_bps: u64) -> Vec<f64> {
    let sum: f64 = weights.iter().sum();
    let mut clock = vec![0.0f64; weights.len()];
    arrivals
        .iter()
        .map(|&(a, q, size)| {
            let r_i = weights[q] / sum * rate_bps as f64;
            clock[q] = clock[q].max(a.as_nanos() as f64) + size as f64 * 8e9 / r_i;
            clock[q]
        })
        .collect()
}

/// The largest `end − (GRC + L_max/C)` over all packets of `log` (each
/// queue FIFO: its k-th departure is its k-th arrival), in nanoseconds.
fn worst_excess_over_bound(arrivals: &[(Time, usize, u32)], log: &[Departure], weights: &[f64], rate_bps: u64) -> f64 {
    let grc = rate_guarantee_finish(arrivals, weights, rate_bps);
    let l_max = arrivals.iter().map(|a| a.2).max().unwrap_or(0);
    let slack = l_max as f64 * 8e9 / rate_bps as f64;
    let mut per_queue: Vec<VecDeque<f64>> = vec![VecDeque::new(); weights.len()];
    for (&(_, q, _), &g) in arrivals.iter().zip(&grc) {
        per_queue[q].push_back(g);
    }
    log.iter()
        .map(|d| {
            d.end.as_nanos() as f64 - (per_queue[d.queue].pop_front().expect("more departures than arrivals") + slack)
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Random arrivals for [`delay_bound`]: 2–5 queues with weights 1–16, up to
/// 300 packets of 40–1500 B; gaps of zero (bursts) or up to one 1500 B
/// transmission time at 10 Mb/s (1.2 ms; the load is about 1, so queues
/// empty and refill while others are backlogged).
fn bound_case() -> impl Strategy<Value = (Vec<f64>, Vec<(Time, usize, u32)>)> {
    (2..=5usize).prop_flat_map(|n| {
        let weights = prop::collection::vec((1..=16u32).prop_map(f64::from), n);
        let gap = prop_oneof![1 => Just(0u64), 3 => 0..1_200_000u64];
        let packets = prop::collection::vec((gap, 0..n, 40..=1500u32), 1..300);
        (weights, packets).prop_map(|(weights, packets)| {
            let mut t = 0;
            let arrivals = packets
                .into_iter()
                .map(|(gap, q, size)| {
                    t += gap;
                    (Time::from_nanos(t), q, size)
                })
                .collect();
            (weights, arrivals)
        })
    })
}

/// Runs `s` over `arrivals` at 10 Mb/s (800 ns per byte: transmission times
/// exact) and returns the worst excess over the delay bound, in ns.
fn delay_bound<S: Scheduler>(s: &mut S, weights: &[f64], arrivals: &[(Time, usize, u32)]) -> f64 {
    let rate = 10_000_000;
    let greedy = vec![Vec::new(); weights.len()];
    let load = Load { greedy: &greedy, backlog: 0, arrivals };
    let log = simulate(s, rate, &load, arrivals.len(), Time::MAX);
    assert_eq!(log.len(), arrivals.len(), "not every packet left");
    worst_excess_over_bound(arrivals, &log, weights, rate)
}

/// Rounding allowed on the per-packet bound, ns: tags and the reference
/// are `f64`, transmission times exact.
const BOUND_TOLERANCE_NS: f64 = 1.0;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// WFQ (PGPS): a packet leaves no later than under GPS plus `L_max/C`
    /// (Parekh & Gallager 1993, Theorem 1), and GPS serves a backlogged
    /// queue at `φ_i/Σφ·C` or faster, so no later than its rate-guarantee
    /// finish plus `L_max/C`: the same bound as WF²Q+ (Goyal, Lam & Vin
    /// 1997 list both as guaranteed-rate servers with `β = L_max/C`).
    #[test]
    fn wfq_meets_the_per_packet_delay_bound((weights, arrivals) in bound_case()) {
        let mut s = Wfq::new(weights.len(), weights.clone(), 10_000_000).unwrap();
        let excess = delay_bound(&mut s, &weights, &arrivals);
        prop_assert!(excess <= BOUND_TOLERANCE_NS, "a packet left {excess} ns after its bound");
    }

    /// WF²Q+: finish ≤ rate-guarantee finish + `L_max/C` (Bennett & Zhang
    /// 1997: the delay bound of WFQ and WF²Q).
    #[test]
    fn wf2q_plus_meets_the_per_packet_delay_bound((weights, arrivals) in bound_case()) {
        let mut s = Wf2qPlus::new(weights.len(), weights.clone(), 10_000_000).unwrap();
        let excess = delay_bound(&mut s, &weights, &arrivals);
        prop_assert!(excess <= BOUND_TOLERANCE_NS, "a packet left {excess} ns after its bound");
    }
}

#[test]
fn virtual_clock_serves_a_queue_at_its_reserved_rate() {
    // 10 Mb/s link. Queue 0 reserves 2 Mb/s and sends exactly that: 250 B
    // every 1 ms. Queue 1 reserves 8 Mb/s but is greedy (1500 B packets).
    let (link, r0) = (10_000_000u64, 2_000_000u64);
    let arrivals: Vec<(Time, usize, u32)> = (0..2000).map(|k| (Time::from_millis(k), 0, 250)).collect();
    let greedy = vec![vec![], vec![1500]];
    let load = Load { greedy: &greedy, backlog: 10, arrivals: &arrivals };
    let mut s = VirtualClock::new(2, vec![r0, 8_000_000]).unwrap();
    let log = simulate(&mut s, link, &load, usize::MAX, Time::from_secs(2));
    let q0: Vec<&Departure> = log.iter().filter(|d| d.queue == 0).collect();
    assert_eq!(q0.len(), 2000, "queue 0 got all its reserved packets through");
    // Delay bound: stamp (arrival + Vtick) + L_max/C.
    let bound = Time::transmission(250, r0) + Time::transmission(1500, link);
    let worst = q0.iter().zip(&arrivals).map(|(d, a)| d.end - a.0).max().unwrap();
    eprintln!("VirtualClock: queue 0 worst delay {worst:?} (bound {bound:?})");
    assert!(worst <= bound);
    // Queue 1 gets the remaining 8 Mb/s.
    let q1_bytes: u64 = log.iter().filter(|d| d.queue == 1).map(|d| d.size as u64).sum();
    let q1_rate = q1_bytes as f64 * 8.0 / log.last().unwrap().end.as_secs_f64();
    assert!((q1_rate / 8e6 - 1.0).abs() < 0.01, "queue 1 {q1_rate}");
}

/// All schedulers over 4 queues, through [`AnySched`].
fn all_schedulers() -> Vec<(&'static str, AnySched)> {
    vec![
        ("priority", Priority::new(4).unwrap().into()),
        ("capped", CappedPriority::new(4, 2_000_000, 3000).unwrap().into()),
        ("wrr", Wrr::new(4, vec![1, 2, 3, 4]).unwrap().into()),
        ("wirr", Wirr::new(4, vec![1, 2, 3, 4]).unwrap().into()),
        ("drr", Drr::new(4, vec![300, 600, 1500, 40]).unwrap().into()),
        ("wfq", Wfq::new(4, W.to_vec(), 10_000_000).unwrap().into()),
        ("wf2q+", Wf2qPlus::new(4, W.to_vec(), 10_000_000).unwrap().into()),
        ("scfq", Scfq::new(4, W.to_vec()).unwrap().into()),
        ("virtual clock", VirtualClock::new(4, vec![1_000_000, 2_000_000, 3_000_000, 4_000_000]).unwrap().into()),
        ("ex-vc", ExVc::new(4, vec![1.0, 2.0, 3.0, 4.0], 10_000_000, 1).unwrap().into()),
        ("ex-vc k=3", ExVc::new(4, vec![1.0, 2.0, 3.0, 4.0], 10_000_000, 3).unwrap().into()),
    ]
}

#[test]
fn runs_are_deterministic() {
    let sizes = mixed_sizes();
    let load = Load { greedy: &sizes, backlog: 3, arrivals: &[] };
    for ((name, mut a), (_, mut b)) in all_schedulers().into_iter().zip(all_schedulers()) {
        let la = simulate(&mut a, 10_000_000, &load, 5000, Time::MAX);
        let lb = simulate(&mut b, 10_000_000, &load, 5000, Time::MAX);
        assert_eq!(la, lb, "{name}");
    }
}

#[derive(Clone, Debug)]
enum Op {
    Enqueue(usize, u32),
    Serve,
    Wait(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..4usize, 1..=1500u32).prop_map(|(q, s)| Op::Enqueue(q, s)),
        4 => Just(Op::Serve),
        1 => (0..5_000_000u64).prop_map(Op::Wait),
    ]
}

/// Applies `ops` to `s` at 10 Mb/s, checking every decision; then drains.
fn check_invariants(name: &str, s: &mut AnySched, ops: &[Op]) -> Result<(), TestCaseError> {
    let rate = 10_000_000;
    let mut queues: Vec<VecDeque<u32>> = vec![VecDeque::new(); 4];
    let mut now = Time::ZERO;
    let heads = |queues: &Vec<VecDeque<u32>>| -> Vec<Option<Head>> {
        queues.iter().map(|q| q.front().map(|&size| Head { size, enqueued: Time::ZERO })).collect()
    };
    // One decision; Ok(true) if a packet was sent.
    let serve = |s: &mut AnySched, queues: &mut Vec<VecDeque<u32>>, now: &mut Time| -> Result<bool, TestCaseError> {
        let h = heads(queues);
        match s.select(&h, *now) {
            Some(q) => {
                prop_assert!(h[q].is_some(), "{}: selected empty queue {}", name, q);
                let size = queues[q].pop_front().unwrap();
                s.on_dequeue(q, size, *now);
                *now += Time::transmission(size, rate);
                Ok(true)
            }
            None => {
                if h.iter().any(Option::is_some) {
                    // Only the capped class may be held back, and only alone.
                    prop_assert_eq!(name, "capped");
                    prop_assert!(h[1..].iter().all(Option::is_none), "capped held back with others backlogged");
                    let t = s.next_eligible(*now);
                    prop_assert!(t.is_some_and(|t| t > *now), "{}: no next_eligible", name);
                    *now = t.unwrap();
                }
                Ok(false)
            }
        }
    };
    for op in ops {
        match *op {
            Op::Enqueue(q, size) => {
                queues[q].push_back(size);
                s.on_enqueue(q, size, now);
            }
            Op::Serve => {
                serve(s, &mut queues, &mut now)?;
            }
            Op::Wait(ns) => now += Time::from_nanos(ns),
        }
    }
    let backlog: usize = queues.iter().map(VecDeque::len).sum();
    let mut sent = 0;
    for _ in 0..2 * backlog + 2 {
        if serve(s, &mut queues, &mut now)? {
            sent += 1;
        }
    }
    prop_assert_eq!(sent, backlog, "{}: did not drain", name);
    prop_assert_eq!(s.select(&heads(&queues), now), None);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn schedulers_select_only_non_empty_queues(ops in prop::collection::vec(op(), 0..300)) {
        for (name, mut s) in all_schedulers() {
            check_invariants(name, &mut s, &ops)?;
        }
    }
}

// ---------------------------------------------------------------------------
// Proportional delay differentiation (BPR, BPR+, WTP, PAD, MDP, DWFQ).

/// Two classes of 500 B packets with Poisson arrivals (exponential gaps from
/// `phb::Rng`), each offering `load/2` of a 10 Mb/s link, `per_class`
/// packets each; sorted by time (ties: class 0 first).
fn poisson_two_classes(seed: u64, load: f64, per_class: usize) -> Vec<(Time, usize, u32)> {
    const SIZE: u32 = 500;
    let tx = Time::transmission(SIZE, 10_000_000).as_nanos() as f64; // 400 µs
    let mean_gap = tx / (load / 2.0);
    let mut all = Vec::with_capacity(2 * per_class);
    for q in 0..2 {
        let mut rng = crate::Rng::derive(seed, &format!("pdd/class{q}"));
        let mut t = 0.0;
        for _ in 0..per_class {
            t += rng.exponential(mean_gap);
            all.push((Time::from_nanos(t.round() as u64), q, SIZE));
        }
    }
    all.sort_by_key(|&(t, q, _)| (t, q));
    all
}

/// Mean queueing delay (arrival to start of transmission) per class, in
/// seconds, matching each class's departures with its arrivals in order.
fn mean_delays(arrivals: &[(Time, usize, u32)], log: &[Departure]) -> [f64; 2] {
    let mut sum = [0.0f64; 2];
    let mut n = [0usize; 2];
    let mut arr: [Vec<Time>; 2] = [Vec::new(), Vec::new()];
    for &(t, q, _) in arrivals {
        arr[q].push(t);
    }
    for d in log {
        let a = arr[d.queue][n[d.queue]];
        sum[d.queue] += (d.start - a).as_secs_f64();
        n[d.queue] += 1;
    }
    [sum[0] / n[0] as f64, sum[1] / n[1] as f64]
}

/// Runs `s` over the two-class Poisson load; (delay ratio TS/DS, mean
/// delays in ms).
fn pdd_ratio<S: Scheduler>(s: &mut S, arrivals: &[(Time, usize, u32)]) -> (f64, [f64; 2]) {
    let greedy = vec![Vec::new(); 2];
    let load = Load { greedy: &greedy, backlog: 0, arrivals };
    let log = simulate(s, 10_000_000, &load, arrivals.len(), Time::MAX);
    assert_eq!(log.len(), arrivals.len());
    let d = mean_delays(arrivals, &log);
    (d[0] / d[1], [d[0] * 1e3, d[1] * 1e3])
}

const PDD_LOAD: f64 = 0.95;
const PDD_PACKETS: usize = 200_000;
const PDD_SEEDS: [u64; 3] = [1, 2, 3];

/// The delay-differentiation schedulers for two classes with `s = [1, δ]`.
fn pdd_schedulers(delta: f64) -> Vec<(&'static str, AnySched)> {
    let c = 10_000_000;
    vec![
        ("WTP", Wtp::with_delta(delta).unwrap().into()),
        ("BPR", Bpr::with_delta(delta, c).unwrap().into()),
        ("BPR+", BprPlus::with_delta(delta, c).unwrap().into()),
        ("BPR+ fluid", BprPlusFluid::with_delta(delta, c).unwrap().into()),
        ("PAD", Pad::with_delta(delta).unwrap().into()),
        ("MDP", Mdp::with_delta(delta).unwrap().into()),
        ("DWFQ", Dwfq::with_delta(delta).unwrap().into()),
        ("BEDS", Beds::with_delta(delta, BacklogUnit::Bytes).unwrap().into()),
    ]
}

/// Achieved delay ratios, per scheduler, averaged over the seeds.
fn pdd_measure(delta: f64) -> Vec<(&'static str, f64)> {
    let loads: Vec<_> = PDD_SEEDS.iter().map(|&seed| poisson_two_classes(seed, PDD_LOAD, PDD_PACKETS)).collect();
    let mut out = Vec::new();
    for (i, (name, _)) in pdd_schedulers(delta).into_iter().enumerate() {
        let mut ratios = Vec::new();
        for arrivals in &loads {
            let mut s = pdd_schedulers(delta).swap_remove(i).1;
            let (ratio, d) = pdd_ratio(&mut s, arrivals);
            eprintln!("δ={delta} {name}: ratio {ratio:.3} (TS {:.2} ms, DS {:.2} ms)", d[0], d[1]);
            ratios.push(ratio);
        }
        out.push((name, ratios.iter().sum::<f64>() / ratios.len() as f64));
    }
    out
}

/// Asserted bands around δ for the achieved TS/DS delay ratio at 95 % load,
/// as fractions of δ: (name, low, high). Measured means over seeds 1–3
/// (200 000 packets per class, 500 B, 10 Mb/s), δ = 2 / δ = 4:
/// WTP 1.906 / 3.481, BPR 1.804 / 3.099, BPR+ 2.062 / 4.051, fluid BPR+
/// 1.974 / 3.712,
/// PAD 2.000 / 4.001, MDP 2.001 / 4.001, DWFQ 1.865 / 3.272; seed-to-seed
/// spread ≤ 1 %.
///
/// - WTP reaches `s_j/s_i` only as the load tends to 1 (Dovrolis et al.
///   1999; thesis eq. 8); below that it falls short, more so for larger δ
///   (here 0.95δ and 0.87δ). Band [0.8δ, 1.02δ]: short of δ allowed, an
///   overshoot not. [`wtp_approaches_delta_as_load_grows`] checks the trend.
/// - BPR also falls short below 100 % load (thesis Fig. 12, Section 5.3.1:
///   "both perform better in a heavily congested network"); BPR+ overshoots
///   by 1–3 % here (it targets delays to the end of transmission, eq. 19,
///   while the harness measures to its start); fluid BPR+ (eq. 17, whose
///   residual term lies between the heuristic's two readings of eq. 19)
///   falls short by 1–7 %. DWFQ (BPR weights in SCFQ) lies between. Bands [0.7δ, 1.15δ]: a broken rate or V update drives the
///   ratio towards 1 (FIFO) or below.
/// - PAD and MDP equalize long-run normalized averages directly: ±2 %.
const PDD_BANDS: [(&str, f64, f64); 8] = [
    ("WTP", 0.8, 1.02),
    ("BPR", 0.7, 1.15),
    ("BPR+", 0.7, 1.15),
    ("BPR+ fluid", 0.7, 1.15),
    ("PAD", 0.98, 1.02),
    ("MDP", 0.98, 1.02),
    ("DWFQ", 0.7, 1.15),
    ("BEDS", 0.7, 1.15),
];

fn assert_pdd_bands(delta: f64) {
    for ((name, ratio), (band_name, low, high)) in pdd_measure(delta).into_iter().zip(PDD_BANDS) {
        assert_eq!(name, band_name);
        eprintln!("δ={delta} {name}: mean ratio {ratio:.3}");
        assert!(
            ratio >= low * delta && ratio <= high * delta,
            "{name}: ratio {ratio:.3} outside [{:.2}, {:.2}]",
            low * delta,
            high * delta
        );
    }
}

#[test]
fn pdd_schedulers_approach_delta_2_at_high_load() {
    assert_pdd_bands(2.0);
}

#[test]
fn pdd_schedulers_approach_delta_4_at_high_load() {
    assert_pdd_bands(4.0);
}

/// WTP, δ = 4, seed 1: the achieved ratio grows towards δ with the load.
/// Measured: 3.073 (90 %), 3.477 (95 %), 3.877 (99 %); seeds 2–3 within
/// 1 % of these (seed 1 also: 2.50 at 80 %, 3.76 at 98 %).
#[test]
fn wtp_approaches_delta_as_load_grows() {
    let ratios: Vec<f64> = [0.90, 0.95, 0.99]
        .iter()
        .map(|&load| {
            let arrivals = poisson_two_classes(1, load, PDD_PACKETS);
            let (r, _) = pdd_ratio(&mut Wtp::with_delta(4.0).unwrap(), &arrivals);
            eprintln!("WTP δ=4 at load {load}: ratio {r:.3}");
            r
        })
        .collect();
    assert!(ratios[0] < ratios[1] && ratios[1] < ratios[2], "{ratios:?}");
    assert!((ratios[2] / 4.0 - 1.0).abs() < 0.05, "{ratios:?}");
}

/// The delay-differentiation schedulers over 4 queues, through [`AnySched`] (BEDS in both units).
fn pdd_schedulers_4() -> Vec<(&'static str, AnySched)> {
    let s = vec![1.0, 2.0, 4.0, 8.0];
    vec![
        ("bpr", Bpr::new(4, s.clone(), 10_000_000).unwrap().into()),
        ("bpr+", BprPlus::new(4, s.clone(), 10_000_000).unwrap().into()),
        ("wtp", Wtp::new(4, s.clone()).unwrap().into()),
        ("pad", Pad::new(4, s.clone()).unwrap().into()),
        ("mdp", Mdp::new(4, s.clone()).unwrap().into()),
        ("dwfq", Dwfq::new(4, s.clone()).unwrap().into()),
        ("beds", Beds::new(4, s.clone(), BacklogUnit::Bytes).unwrap().into()),
        ("beds-packets", Beds::new(4, s, BacklogUnit::Packets).unwrap().into()),
    ]
}

#[test]
fn pdd_runs_are_deterministic() {
    let arrivals = poisson_two_classes(9, 0.95, 5000);
    let greedy = vec![Vec::new(); 2];
    let load = Load { greedy: &greedy, backlog: 0, arrivals: &arrivals };
    for ((name, mut a), (_, mut b)) in pdd_schedulers(4.0).into_iter().zip(pdd_schedulers(4.0)) {
        let la = simulate(&mut a, 10_000_000, &load, arrivals.len(), Time::MAX);
        let lb = simulate(&mut b, 10_000_000, &load, arrivals.len(), Time::MAX);
        assert_eq!(la, lb, "{name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn pdd_schedulers_select_only_non_empty_queues(ops in prop::collection::vec(op(), 0..300)) {
        let bytes_ahead = BprPlus::with_residual(4, vec![1.0, 2.0, 4.0, 8.0], 10_000_000, ResidualBacklog::BytesAhead);
        let bytes_ahead = ("bpr+ bytes ahead", bytes_ahead.unwrap().into());
        for (name, mut s) in pdd_schedulers_4().into_iter().chain([bytes_ahead]) {
            check_invariants(name, &mut s, &ops)?;
        }
    }
}

// ---------------------------------------------------------------------------
// Evictions (a dropper removing a queue's head without sending it) and the
// service rates a rate-assigning scheduler reports.

/// Every scheduler of [`AnySched`] over 4 queues.
fn every_scheduler() -> Vec<(&'static str, AnySched)> {
    let mut all = all_schedulers();
    all.extend(pdd_schedulers_4());
    all
}

/// The variant's position in [`AnySched`]; exhaustive, so a new variant
/// must be added here (and to [`every_scheduler`], checked below).
fn variant(s: &AnySched) -> usize {
    match s {
        AnySched::Priority(_) => 0,
        AnySched::CappedPriority(_) => 1,
        AnySched::Wrr(_) => 2,
        AnySched::Wirr(_) => 3,
        AnySched::Drr(_) => 4,
        AnySched::Wfq(_) => 5,
        AnySched::Wf2qPlus(_) => 6,
        AnySched::Scfq(_) => 7,
        AnySched::VirtualClock(_) => 8,
        AnySched::Bpr(_) => 9,
        AnySched::BprPlus(_) => 10,
        AnySched::BprPlusFluid(_) => 17,
        AnySched::Wtp(_) => 11,
        AnySched::Pad(_) => 12,
        AnySched::Mdp(_) => 13,
        AnySched::Dwfq(_) => 14,
        AnySched::Beds(_) => 15,
        AnySched::ExVc(_) => 16,
    }
}

#[test]
fn every_scheduler_covers_every_variant() {
    // Fluid BPR⁺ is defined for two queues only; its module tests it.
    let two_queues: AnySched = BprPlusFluid::with_delta(4.0, 10_000_000).unwrap().into();
    let mut seen: Vec<usize> =
        every_scheduler().iter().map(|(_, s)| variant(s)).chain([variant(&two_queues)]).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen, (0..18).collect::<Vec<_>>());
}

#[derive(Clone, Debug)]
enum EvOp {
    Enqueue(usize, u32),
    /// select, then dequeue the selected head.
    Serve,
    /// select only (the answer holds until the next eviction).
    Peek,
    /// Evict the head of the k-th non-empty queue (modulo their count).
    Evict(usize),
    Wait(u64),
}

fn ev_op() -> impl Strategy<Value = EvOp> {
    prop_oneof![
        4 => (0..4usize, 1..=1500u32).prop_map(|(q, s)| EvOp::Enqueue(q, s)),
        3 => Just(EvOp::Serve),
        1 => Just(EvOp::Peek),
        2 => (0..4usize).prop_map(EvOp::Evict),
        1 => (0..5_000_000u64).prop_map(EvOp::Wait),
    ]
}

const EV_RATE: u64 = 10_000_000;

/// Drives `s` over 4 queues holding real enqueue times, checking after
/// every operation that `select` picked a non-empty queue, that the
/// scheduler's per-queue state matches the queues, and that reported
/// service rates are sane; then drains (by service, or by evicting
/// everything when `drain_by_eviction`), checks that every per-queue
/// structure is empty, and that the scheduler still serves afterwards.
fn check_with_evictions(
    name: &str,
    s: &mut AnySched,
    ops: &[EvOp],
    drain_by_eviction: bool,
) -> Result<(), TestCaseError> {
    let mut queues: Vec<VecDeque<Head>> = vec![VecDeque::new(); 4];
    let mut now = Time::ZERO;
    let heads =
        |queues: &Vec<VecDeque<Head>>| -> Vec<Option<Head>> { queues.iter().map(|q| q.front().copied()).collect() };
    let check = |s: &AnySched, queues: &Vec<VecDeque<Head>>, op: &str| -> Result<(), TestCaseError> {
        s.check_state(queues).map_err(|e| TestCaseError::fail(format!("after {op}: {e}")))?;
        let mut r = [f64::NAN; 4];
        let rate_assigning = matches!(s, AnySched::Bpr(_) | AnySched::BprPlus(_));
        prop_assert_eq!(s.service_rates_bps(&mut r), rate_assigning, "{}", name);
        if rate_assigning {
            let c = EV_RATE as f64;
            prop_assert!(r.iter().all(|&x| x.is_finite() && x >= 0.0), "{}: rates {:?}", name, r);
            prop_assert!(r.iter().sum::<f64>() <= c * (1.0 + 1e-9), "{}: rates {:?} above C", name, r);
        } else {
            prop_assert!(r.iter().all(|x| x.is_nan()), "{}: wrote rates it does not have", name);
        }
        Ok(())
    };
    // One decision; Ok(true) if a packet was sent.
    let serve = |s: &mut AnySched, queues: &mut Vec<VecDeque<Head>>, now: &mut Time| -> Result<bool, TestCaseError> {
        let h = heads(queues);
        match s.select(&h, *now) {
            Some(q) => {
                prop_assert!(h[q].is_some(), "{}: selected empty queue {}", name, q);
                let head = queues[q].pop_front().unwrap();
                s.on_dequeue(q, head.size, *now);
                *now += Time::transmission(head.size, EV_RATE);
                Ok(true)
            }
            None => {
                if h.iter().any(Option::is_some) {
                    prop_assert_eq!(name, "capped");
                    prop_assert!(h[1..].iter().all(Option::is_none), "capped held back with others backlogged");
                    let t = s.next_eligible(*now);
                    prop_assert!(t.is_some_and(|t| t > *now), "{}: no next_eligible", name);
                    *now = t.unwrap();
                }
                Ok(false)
            }
        }
    };
    let evict = |s: &mut AnySched, queues: &mut Vec<VecDeque<Head>>, k: usize, now: Time| -> bool {
        let backlogged: Vec<usize> = (0..queues.len()).filter(|&i| !queues[i].is_empty()).collect();
        if backlogged.is_empty() {
            return false;
        }
        let q = backlogged[k % backlogged.len()];
        let head = queues[q].pop_front().unwrap();
        s.on_evict(q, head.size, now);
        true
    };
    check(s, &queues, "construction")?;
    for op in ops {
        match *op {
            EvOp::Enqueue(q, size) => {
                queues[q].push_back(Head { size, enqueued: now });
                s.on_enqueue(q, size, now);
            }
            EvOp::Serve => {
                serve(s, &mut queues, &mut now)?;
            }
            EvOp::Peek => {
                let h = heads(&queues);
                if let Some(q) = s.select(&h, now) {
                    prop_assert!(h[q].is_some(), "{}: selected empty queue {}", name, q);
                }
            }
            EvOp::Evict(k) => {
                evict(s, &mut queues, k, now);
            }
            EvOp::Wait(ns) => now += Time::from_nanos(ns),
        }
        check(s, &queues, &format!("{op:?}"))?;
    }
    let backlog: usize = queues.iter().map(VecDeque::len).sum();
    if drain_by_eviction {
        for k in 0..backlog {
            prop_assert!(evict(s, &mut queues, k, now));
            check(s, &queues, "draining eviction")?;
        }
    } else {
        let mut sent = 0;
        for _ in 0..2 * backlog + 2 {
            if serve(s, &mut queues, &mut now)? {
                sent += 1;
                check(s, &queues, "draining departure")?;
            }
        }
        prop_assert_eq!(sent, backlog, "{}: did not drain", name);
    }
    prop_assert!(queues.iter().all(VecDeque::is_empty));
    check(s, &queues, "drain")?;
    prop_assert_eq!(s.select(&heads(&queues), now), None, "{}", name);
    // Still usable: one packet per queue, all served.
    for (q, queue) in queues.iter_mut().enumerate() {
        queue.push_back(Head { size: 100, enqueued: now });
        s.on_enqueue(q, 100, now);
    }
    let mut sent = 0;
    for _ in 0..10 {
        if serve(s, &mut queues, &mut now)? {
            sent += 1;
        }
    }
    prop_assert_eq!(sent, 4, "{}: did not serve after the drain", name);
    check(s, &queues, "final drain")?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn schedulers_stay_consistent_under_evictions(
        ops in prop::collection::vec(ev_op(), 0..300),
        drain_by_eviction in any::<bool>(),
    ) {
        for (name, mut s) in every_scheduler() {
            check_with_evictions(name, &mut s, &ops, drain_by_eviction)?;
        }
    }
}

/// Evictions only: packets come and are all pushed out, none sent. Every
/// structure ends empty and a later packet is served normally.
#[test]
fn evicting_every_packet_leaves_every_scheduler_empty() {
    for (name, mut s) in every_scheduler() {
        let mut queues: Vec<VecDeque<Head>> = vec![VecDeque::new(); 4];
        for k in 0..40u64 {
            let (q, size) = ((k % 4) as usize, 100 + 37 * k as u32);
            let at = Time::from_micros(10 * k);
            queues[q].push_back(Head { size, enqueued: at });
            s.on_enqueue(q, size, at);
        }
        for k in 0..40usize {
            let q = (3 * k) % 4;
            let q = (0..4).map(|j| (q + j) % 4).find(|&j| !queues[j].is_empty()).unwrap();
            let head = queues[q].pop_front().unwrap();
            s.on_evict(q, head.size, Time::from_micros(500 + k as u64));
        }
        s.check_state(&queues).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.select(&[None; 4], Time::from_millis(1)), None, "{name}");
        s.on_enqueue(2, 500, Time::from_millis(1));
        let h = Some(Head { size: 500, enqueued: Time::from_millis(1) });
        assert_eq!(s.select(&[None, None, h, None], Time::from_millis(1)), Some(2), "{name}");
        s.on_dequeue(2, 500, Time::from_millis(1));
        s.check_state(&queues).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// `service_rates_bps` through [`AnySched`]: BPR and BPR+ report theirs,
/// the others nothing (and leave the buffer alone).
#[test]
fn only_rate_assigning_schedulers_report_service_rates() {
    for (name, mut s) in every_scheduler() {
        for q in 0..4 {
            s.on_enqueue(q, 1000, Time::ZERO);
        }
        let heads = [Some(Head { size: 1000, enqueued: Time::ZERO }); 4];
        let q = s.select(&heads, Time::ZERO).unwrap();
        s.on_dequeue(q, 1000, Time::ZERO);
        let mut r = [-1.0; 4];
        let has = s.service_rates_bps(&mut r);
        assert_eq!(has, matches!(name, "bpr" | "bpr+"), "{name}");
        if has {
            // Three queues backlogged, one empty: the rates share C.
            assert!((r.iter().sum::<f64>() - 1e7).abs() < 1e-3, "{name}: {r:?}");
            assert_eq!(r.iter().filter(|&&x| x > 0.0).count(), if name == "bpr" { 3 } else { 4 }, "{name}: {r:?}");
        } else {
            assert_eq!(r, [-1.0; 4], "{name}");
        }
    }
}

/// Poisson arrivals to two queues with their own packet sizes: `(share of
/// the 10 Mb/s link, size)` per queue.
fn poisson_sized(seed: u64, classes: [(f64, u32); 2], per_class: usize) -> Vec<(Time, usize, u32)> {
    let mut all = Vec::with_capacity(2 * per_class);
    for (q, (share, size)) in classes.into_iter().enumerate() {
        let tx = Time::transmission(size, 10_000_000).as_nanos() as f64;
        let mut rng = crate::Rng::derive(seed, &format!("sized/class{q}"));
        let mut t = 0.0;
        for _ in 0..per_class {
            t += rng.exponential(tx / share);
            all.push((Time::from_nanos(t.round() as u64), q, size));
        }
    }
    all.sort_by_key(|&(t, q, _)| (t, q));
    all
}

/// Eq. (5)'s queue lengths in BEDS: TCP 1000 B packets (85 % of the link)
/// and UDP 82 B packets (10 %), Poisson, δ = 4, seed 1, 20 000 TCP
/// packets. Backlogs in bytes, the unit the WFQ serves, give about δ
/// (measured 3.81; BPR-like rules fall a little short at 95 % load, see
/// [`PDD_BANDS`]); in packets a UDP packet counts as much as a TCP one
/// twelve times its size, and the ratio overshoots (measured 19.2).
#[test]
fn beds_counts_backlogs_in_the_unit_it_serves() {
    let tcp = 20_000;
    let udp_share = 0.10;
    let per_udp = (tcp as f64 * 1000.0 / 0.85 * udp_share / 82.0) as usize;
    let mut arrivals = poisson_sized(1, [(0.85, 1000), (udp_share, 82)], per_udp);
    // Keep the first `tcp` TCP packets' span: drop arrivals after it.
    let end = arrivals.iter().filter(|a| a.1 == 0).nth(tcp - 1).unwrap().0;
    arrivals.retain(|a| a.0 <= end);
    let mut ratio = [0.0; 2];
    for (k, unit) in [BacklogUnit::Bytes, BacklogUnit::Packets].into_iter().enumerate() {
        let (r, d) = pdd_ratio(&mut Beds::with_delta(4.0, unit).unwrap(), &arrivals);
        eprintln!("BEDS {unit:?}: ratio {r:.3} (TCP {:.2} ms, UDP {:.3} ms)", d[0], d[1]);
        ratio[k] = r;
    }
    assert!((0.7 * 4.0..1.15 * 4.0).contains(&ratio[0]), "bytes: {}", ratio[0]);
    assert!(ratio[1] > 3.0 * 4.0, "packets: {}", ratio[1]);
}

// ---------------------------------------------------------------------------
// The timestamp schedulers' trees against a scan of every queue.

/// WFQ, WF²Q+ and SCFQ over `n` queues with weights cycling through
/// `weights`, on a 10 Mb/s link.
fn timestamp_schedulers(n: usize, weights: &[f64]) -> Vec<(&'static str, AnySched)> {
    let phi: Vec<f64> = (0..n).map(|i| weights[i % weights.len()]).collect();
    vec![
        ("wfq", Wfq::new(n, phi.clone(), EV_RATE).unwrap().into()),
        ("wf2q+", Wf2qPlus::new(n, phi.clone(), EV_RATE).unwrap().into()),
        ("scfq", Scfq::new(n, phi).unwrap().into()),
    ]
}

/// After each `select`, what the trees answer is what a scan of every
/// queue in order picks (the selection before the trees), ties included.
fn trees_match_scan(s: &AnySched) -> Result<(), TestCaseError> {
    let pairs: Vec<(Option<usize>, Option<usize>)> = match s {
        AnySched::Wfq(s) => s.scan_and_trees().to_vec(),
        AnySched::Wf2qPlus(s) => s.scan_and_trees().to_vec(),
        AnySched::Scfq(s) => s.scan_and_trees().to_vec(),
        _ => unreachable!("a timestamp scheduler"),
    };
    for &(scan, tree) in &pairs {
        prop_assert_eq!(scan, tree, "{:?}", pairs);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Random arrivals, departures, evictions and waits over 1 to 70 queues
    /// (a scan up to eight, a tree of up to 128 leaves above), with few weights and sizes so
    /// that tags tie often: every `select` picks what a scan picks.
    #[test]
    fn timestamp_schedulers_select_what_a_scan_selects(
        n in 1usize..70,
        weights in prop::sample::select(vec![vec![1.0], vec![1.0, 2.0], vec![0.5, 1.0, 3.0], vec![0.9, 0.1]]),
        ops in prop::collection::vec((0u8..10, 0usize..70, prop::sample::select(vec![100u32, 200, 300])), 0..400),
    ) {
        for (name, mut s) in timestamp_schedulers(n, &weights) {
            let mut queues: Vec<VecDeque<u32>> = vec![VecDeque::new(); n];
            let mut now = Time::ZERO;
            for &(op, k, size) in &ops {
                match op {
                    0..=3 => {
                        queues[k % n].push_back(size);
                        s.on_enqueue(k % n, size, now);
                    }
                    4..=7 => {
                        let heads: Vec<Option<Head>> =
                            queues.iter().map(|q| q.front().map(|&size| Head { size, enqueued: Time::ZERO })).collect();
                        let picked = s.select(&heads, now);
                        trees_match_scan(&s).map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
                        if let Some(q) = picked {
                            let size = queues[q].pop_front().unwrap();
                            s.on_dequeue(q, size, now);
                            now += Time::transmission(size, EV_RATE);
                        }
                    }
                    8 => {
                        if let Some(q) = (0..n).map(|j| (k + j) % n).find(|&j| !queues[j].is_empty()) {
                            let size = queues[q].pop_front().unwrap();
                            s.on_evict(q, size, now);
                        }
                    }
                    _ => now += Time::from_nanos(k as u64 * 100_000),
                }
            }
        }
    }
}
