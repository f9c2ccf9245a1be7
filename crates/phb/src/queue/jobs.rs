//! JoBS — Joint Buffer Management and Scheduling, the algorithm of the
//! Quantitative Assured Forwarding service (N. Christin, J. Liebeherr and
//! T. F. Abdelzaher, "A Quantitative Assured Forwarding Service", Technical
//! Report CS-2001-21, University of Virginia, 2001; Sections 2–5).
//!
//! N classes share one buffer of `B` (eq. 63); class 1 (index 0 here) is
//! the best. Each class may have any of five guarantees, all optional
//! ([`JobsClass`]): an absolute delay bound `d_i` (ADC, eq. 6), an absolute
//! loss-rate bound `L_i` (ALC, eq. 7), an absolute rate guarantee `μ_i`
//! (ARC, eq. 8), proportional delay `D_{i+1} = k_i·D_i` (RDC, eq. 9) and
//! proportional loss `p_{i+1} = k'_i·p_i` (RLC, eq. 10). JoBS decides drops,
//! service rates and the order of transmission as one algorithm, at every
//! arrival (the paper's events):
//!
//! 1. **Busy period.** Every quantity is kept over the current busy period
//!    (Section 2.1): an arrival that finds no packet queued resets the
//!    arrival curve `A_i` (eq. 1), the input curve `R_in_i` (eq. 2), the
//!    output curve `R_out_i` (eq. 3), the bytes sent `Xmit_i` and the rates.
//!    The loss rate is `p_i = (A_i − R_in_i)/A_i` (eq. 5), in bytes; the
//!    delay `D_i` is the waiting time of the class's oldest queued packet
//!    (the horizontal distance of eq. 4 at the head of a FIFO class queue);
//!    the backlog `B_i` is the class's queued bytes.
//! 2. **Drops** (Section 4, run twice as Section 5.1 says): first while the
//!    buffer holds more than `B` (eq. 63), then while the minimum rates of
//!    eq. (12) add up to more than the link rate `C` (eq. 64). Traffic is
//!    dropped from the tail of a class queue, from classes in the order of
//!    Section 4 — classes without proportional loss guarantees first (the
//!    paper's Section 6.3: "always drop first from Class 1, until the loss
//!    bound L1 has been reached"), then by decreasing error
//!    `e'_i = p̄* − p*_i` of the weighted loss rates — each only as far as its
//!    bound `l*_i = A_i·L_i − (A_i − R_in_i)` (eq. 16 and the formula after
//!    it) allows. When every class of the first pass would break its loss
//!    bound, the one that breaks it least pays (the buffer must not
//!    overflow); when no class may lose more for the second pass, condition
//!    (64) is relaxed: absolute loss guarantees come first (Section 5).
//! 3. **Rates** (Section 3): the minimum rate of each backlogged class
//!    `r_min_i = max(B_i/(d_i − D_i), μ_i)` (eq. 12) is met first, taking
//!    service from the classes with some to spare (the absolute delay and
//!    rate guarantees come before the proportional ones); then, in each group
//!    of classes joined by `k_i` (the remark closing Section 3.4), the delay
//!    feedback loop adds `Δr_i = K(n)·e_i(n)` (eq. 24) with `e_i` the error
//!    of the weighted delay (eqs. 18, 22) and `K(n)` within the stability
//!    condition (59) and the saturation condition (61); if no gain satisfies
//!    both, (59) is ignored (Section 5.1). The rates of a group add up to
//!    what they were (eq. 25).
//! 4. **Dequeue** (Section 5.2): serve the backlogged class furthest behind
//!    its output curve, `argmax_i R_out_i(t) − Xmit_i(t)`.
//!
//! The paper leaves some choices open; where ALTQ's JoBS (the C
//! implementation in the BSDs, `altq_jobs.c`) answers them we follow it,
//! and where we depart from either we say why (`docs/mechanisms/jobs.md`
//! lists them all, with measurements):
//!
//! - `K(n)`: the paper gives its range, not its value. We take
//!   `K(n) = −2·gain·min_i B_i/(Π_{j≠i} m_j·D_i²)`, `gain` = 1/2 by default:
//!   the middle of (59), which puts the root of the linearised loop of the
//!   class that bounds `K` at `z = 0`; then clamp it into (61). (ALTQ uses a
//!   bound of its own.)
//! - Anti-windup (ours): a class already at its minimum rate whose error
//!   would lower it further sits the step out, and the set point is the
//!   mean over the others. Otherwise (61) holds the common `K(n)` at 0 for
//!   every class as long as one class is saturated, and a class left at
//!   rate 0 can starve for seconds.
//! - When the set of backlogged classes changes, the rates restart from
//!   equal shares of `C` (ALTQ's `enforce_wc`; the paper only says a class
//!   without backlog has rate 0 and that `Σ r_i(0) = C`). ALTQ also restarts
//!   them when a backlogged class has rate 0; we do not (with the paper's
//!   gain, (61) leaves classes at exactly their minimum at a third of the
//!   arrivals, and restarting then undoes the loop).
//! - The minimum rates are met by ALTQ's greedy reallocation, the better
//!   classes first, from the worst classes first (the paper's eq. 61 alone
//!   cannot raise a class outside every RDC group, whose error is always 0).
//!   The drops of the second pass, as in ALTQ, come only from classes with a
//!   delay bound, the only ones a tail drop helps.
//! - The output curve never passes the input curve (`R_out_i ≤ R_in_i`: a
//!   fluid queue cannot send what has not arrived), so a class that empties
//!   carries no credit; ALTQ lets it grow.
//!
//! Everything here is `f64` (the paper's kernel used fixed point); rates are
//! bits per second, curves bytes, times seconds.

use std::collections::VecDeque;

use crate::aqm::Limit;
use crate::packet::{DropReason, Packet};
use crate::queue::{Counter, Dropped};
use crate::time::Time;

/// One class's service guarantees: the columns of the paper's Tables 1
/// and 4. Every guarantee is optional; a class with none is best effort.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobsClass {
    /// `d_i`, the absolute delay bound (ADC, eq. 6): no queued packet should
    /// wait longer.
    pub d: Option<Time>,
    /// `L_i`, the absolute loss-rate bound (ALC, eq. 7): the fraction of the
    /// bytes that arrive in a busy period that may be dropped, in [0, 1).
    pub l: Option<f64>,
    /// `μ_i`, the absolute rate guarantee (ARC, eq. 8), bit/s, while the
    /// class is backlogged.
    pub mu: Option<u64>,
    /// `k_i`, proportional delay differentiation with the next class (RDC,
    /// eq. 9): `D_{i+1} = k_i·D_i`. Classes joined by `k` form one group with
    /// its own feedback loop (Section 3.4's closing remark).
    pub k: Option<f64>,
    /// `k'_i`, proportional loss differentiation with the next class (RLC,
    /// eq. 10): `p_{i+1} = k'_i·p_i`.
    pub k_prime: Option<f64>,
}

/// The parameters of a JoBS qdisc beyond its classes' queues and buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct JobsParams {
    /// One entry per class, best first (the qdisc's queues, in order).
    pub classes: Vec<JobsClass>,
    /// The delay loop's gain as a fraction of the stability limit (59):
    /// `K(n) = −2·gain·min_i B_i/(Π_{j≠i} m_j·D_i²)`, in (0, 1]. 1 is the edge
    /// of stability (a root at `z = −1`).
    pub gain: f64,
}

impl JobsParams {
    /// The middle of the stability interval (59).
    pub const DEFAULT_GAIN: f64 = 0.5;

    /// Checks the guarantees of `queues` classes; the message names the
    /// class (1-based, as the paper counts) and the guarantee.
    pub fn validate(&self, queues: usize) -> Result<(), String> {
        if self.classes.len() != queues {
            return Err(format!("{} JoBS classes for {queues} queues (one per queue)", self.classes.len()));
        }
        if !(self.gain > 0.0 && self.gain <= 1.0) {
            return Err(format!(
                "gain must be in (0, 1] (a fraction of the stability limit, eq. 59), got {}",
                self.gain
            ));
        }
        let last = queues.saturating_sub(1);
        for (i, c) in self.classes.iter().enumerate() {
            let n = i + 1;
            if c.d == Some(Time::ZERO) {
                return Err(format!("class {n}: d must be positive"));
            }
            if let Some(l) = c.l {
                if !(0.0..1.0).contains(&l) {
                    return Err(format!("class {n}: L must be in [0, 1), got {l}"));
                }
            }
            if c.mu == Some(0) {
                return Err(format!("class {n}: mu must be positive"));
            }
            for (name, v) in [("k", c.k), ("k_prime", c.k_prime)] {
                let Some(v) = v else { continue };
                if !(v.is_finite() && v > 0.0) {
                    return Err(format!("class {n}: {name} must be positive and finite, got {v}"));
                }
                if i == last {
                    return Err(format!(
                        "class {n}: {name} relates a class to the next one (D_i+1 = k_i·D_i), and class {n} is the last"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Qdisc-wide counts of JoBS' decisions, since the qdisc was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobsCounters {
    /// Busy periods begun (arrivals that found no packet queued).
    pub busy_periods: u64,
    /// Arrivals at which the set of backlogged classes had changed, so the
    /// rates restarted from equal shares.
    pub rate_resets: u64,
    /// Arrivals at which the minimum rates (eq. 12) moved service from one
    /// class to another: absolute guarantees taking precedence.
    pub min_rate_moves: u64,
    /// Delay-loop updates whose gain the saturation condition (61) held
    /// below the stability choice (within (59)).
    pub gain_saturated: u64,
    /// Delay-loop updates where no gain met both (59) and (61), so (59) was
    /// ignored, or where no gain met (61) and the loop held still:
    /// proportional delay relaxed for absolute delay and rate (Section 5).
    pub relax_proportional: u64,
    /// Arrivals after which condition (64) still failed because no class
    /// with a delay bound could lose more without breaking its loss bound:
    /// absolute delay or rate guarantees relaxed for loss.
    pub relax_delay: u64,
    /// Overflow drops that broke an absolute loss bound because every
    /// choice did.
    pub relax_loss: u64,
}

/// Per-class counts, since the qdisc was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobsClassCounters {
    /// Packets sent after waiting longer than `d_i` (0 without a bound).
    pub delay_violations: u64,
    /// Of those, the packets that waited through an arrival after which
    /// condition (64) was left violated for the loss bounds (`relax_delay`):
    /// late because the loss guarantee took precedence (Section 5).
    pub late_for_loss: u64,
    /// Drops that left the class's busy-period loss rate above `L_i`.
    pub loss_bound_drops: u64,
}

/// Which guarantee the last arrival had to give up, the most severe first
/// in the paper's precedence (Section 5): loss bounds hold longest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Relaxation {
    #[default]
    None,
    /// Proportional delay (eq. 59 ignored or the loop held).
    Proportional,
    /// Absolute delay or rate (eq. 64 left violated).
    Delay,
    /// An absolute loss bound (eq. 7) broken by an overflow.
    Loss,
}

/// No group.
const NONE: u8 = u8::MAX;

#[derive(Debug)]
struct Class<M> {
    packets: VecDeque<Packet<M>>,
    /// `B_i`: bytes queued.
    bytes: u64,
    // The guarantees, in working units.
    /// `d_i` in seconds (∞ without a bound).
    d: f64,
    /// `L_i` (1 without a bound: every drop is allowed).
    l: f64,
    has_l: bool,
    /// `μ_i`, bit/s (0 without a guarantee).
    mu: f64,
    /// `m_i = Π_{j<i in its RDC group} k_j` (1 for a group's first class,
    /// and outside every group).
    m: f64,
    /// The RLC group and `m'_i`.
    loss_group: u8,
    m_prime: f64,
    // The busy period's curves, bytes.
    /// `A_i` (eq. 1).
    arrived: u64,
    /// `A_i − R_in_i`.
    dropped: u64,
    /// `Xmit_i`.
    sent: u64,
    /// `R_out_i` (eq. 3), the fluid output curve up to `Jobs::t_last`.
    out: f64,
    /// `r_i`, bit/s.
    rate: f64,
    /// Scratch: `r_min_i` (eq. 12) capped at `C`, and the uncapped term of
    /// eq. (64).
    r_min: f64,
    need: f64,
    /// Scratch: the normalised delay `D_i/m_i` of the delay loop, and
    /// whether the class takes part in this step.
    x: f64,
    active: bool,
    counters: JobsClassCounters,
}

impl<M> Class<M> {
    /// `R_in_i`, bytes.
    fn admitted(&self) -> u64 {
        self.arrived - self.dropped
    }

    /// `D_i` at `now`, seconds: how long the oldest queued packet has waited.
    fn delay(&self, now: Time) -> f64 {
        self.packets.front().map_or(0.0, |p| now.saturating_sub(p.enqueued).as_secs_f64())
    }

    /// `p_i` (eq. 5).
    fn loss_rate(&self) -> f64 {
        if self.arrived == 0 {
            0.0
        } else {
            self.dropped as f64 / self.arrived as f64
        }
    }

    /// Whether dropping `size` more bytes keeps `p_i ≤ L_i`: `size ≤ l*_i`.
    fn may_lose(&self, size: u32) -> bool {
        !self.has_l || (self.dropped + size as u64) as f64 <= self.l * self.arrived as f64
    }
}

/// A contiguous range of classes joined by `k` (or `k'`).
#[derive(Clone, Copy, Debug)]
struct Group {
    first: usize,
    end: usize,
}

/// The JoBS qdisc (see the module docs).
#[derive(Debug)]
pub struct Jobs<M> {
    queue_of_codepoint: [u8; 64],
    classes: Vec<Class<M>>,
    delay_groups: Vec<Group>,
    loss_groups: Vec<Group>,
    limit: Limit,
    /// `C`, bit/s.
    link_bps: f64,
    gain: f64,
    pkts: u64,
    bytes: u64,
    /// When the output curves were last advanced.
    t_last: Time,
    /// The backlogged classes when rates were last set (bit i: class i).
    rate_mask: u64,
    counters: JobsCounters,
    relaxation: Relaxation,
    /// The last arrival after which (64) was relaxed for the loss bounds.
    last_relax_delay: Option<Time>,
}

/// Groups of contiguous classes joined by `link(i)` (class i with i + 1),
/// and each class's group and product `m`.
fn groups(links: &[Option<f64>]) -> (Vec<Group>, Vec<(u8, f64)>) {
    let n = links.len();
    let mut out = Vec::new();
    let mut member = vec![(NONE, 1.0); n];
    let mut i = 0;
    while i < n {
        if links[i].is_none() {
            i += 1;
            continue;
        }
        let (g, first) = (out.len() as u8, i);
        let mut m = 1.0;
        member[i] = (g, m);
        while let (true, Some(k)) = (i + 1 < n, links[i]) {
            m *= k;
            i += 1;
            member[i] = (g, m);
        }
        out.push(Group { first, end: i + 1 });
        i += 1;
    }
    (out, member)
}

/// `r_min` of eq. (12) for a class with `bytes` queued whose oldest packet
/// has waited `delay` of its bound `d` (seconds; ∞ without a bound), with a
/// rate guarantee of `mu` bit/s (0 without one): the rate that sends the
/// whole backlog before the oldest packet's deadline, and at least `μ_i`.
/// Infinite once the deadline has passed.
pub fn min_rate(bytes: u64, delay: f64, d: f64, mu: f64) -> f64 {
    if bytes == 0 {
        return 0.0;
    }
    let need = if d.is_finite() {
        let slack = d - delay;
        if slack > 0.0 {
            bytes as f64 * 8.0 / slack
        } else {
            f64::INFINITY
        }
    } else {
        0.0
    };
    need.max(mu)
}

impl<M> Jobs<M> {
    /// Builds JoBS for `params` on a link of `link_rate_bps`: queues and
    /// classification as `queue_of_codepoint` says, one shared buffer of
    /// `limit` (the `B` of eq. 63). `params` must have passed
    /// [`JobsParams::validate`].
    pub fn new(params: &JobsParams, queue_of_codepoint: [u8; 64], limit: Limit, link_rate_bps: u64) -> Jobs<M> {
        let n = params.classes.len();
        assert!((1..=64).contains(&n), "JoBS has 1 to 64 classes");
        let (delay_groups, delay_member) = groups(&params.classes.iter().map(|c| c.k).collect::<Vec<_>>());
        let (loss_groups, loss_member) = groups(&params.classes.iter().map(|c| c.k_prime).collect::<Vec<_>>());
        let classes = params
            .classes
            .iter()
            .enumerate()
            .map(|(i, c)| Class {
                packets: VecDeque::new(),
                bytes: 0,
                d: c.d.map_or(f64::INFINITY, |d| d.as_secs_f64()),
                l: c.l.unwrap_or(1.0),
                has_l: c.l.is_some(),
                mu: c.mu.map_or(0.0, |mu| mu as f64),
                m: delay_member[i].1,
                loss_group: loss_member[i].0,
                m_prime: loss_member[i].1,
                arrived: 0,
                dropped: 0,
                sent: 0,
                out: 0.0,
                rate: 0.0,
                r_min: 0.0,
                need: 0.0,
                x: 0.0,
                active: false,
                counters: JobsClassCounters::default(),
            })
            .collect();
        Jobs {
            queue_of_codepoint,
            classes,
            delay_groups,
            loss_groups,
            limit,
            link_bps: link_rate_bps as f64,
            gain: params.gain,
            pkts: 0,
            bytes: 0,
            t_last: Time::ZERO,
            rate_mask: 0,
            counters: JobsCounters::default(),
            relaxation: Relaxation::None,
            last_relax_delay: None,
        }
    }

    /// The class a codepoint is classified into.
    #[inline]
    pub fn classify(&self, codepoint: u8) -> usize {
        self.queue_of_codepoint[(codepoint & 63) as usize] as usize
    }

    /// An arrival at `now` (the paper's event `n`): the two dropping passes
    /// of Section 4, then the rates of Section 3. Dropped packets (the
    /// arrival, or queued packets from the tail of their class) go onto
    /// `dropped`.
    pub fn enqueue(&mut self, mut pkt: Packet<M>, now: Time, dropped: &mut Dropped<M>) {
        let c = self.classify(pkt.class);
        if self.pkts == 0 {
            self.start_busy_period(now);
        }
        self.advance(now);
        self.relaxation = Relaxation::None;
        let size = pkt.size as u64;
        pkt.enqueued = now;
        let class = &mut self.classes[c];
        class.arrived += size;
        class.bytes += size;
        class.packets.push_back(pkt);
        self.pkts += 1;
        self.bytes += size;
        // First pass: the buffer (eq. 63).
        let mut arrival_queued = true;
        while self.over_limit() {
            let (victim, breaks) = match self.victim(|_| true) {
                Some(v) => (v, false),
                None => (self.least_breaking(), true),
            };
            if breaks {
                self.counters.relax_loss += 1;
                self.relaxation = Relaxation::Loss;
            }
            let reason = if victim == c && arrival_queued {
                arrival_queued = false;
                DropReason::Overflow
            } else {
                DropReason::Eviction
            };
            self.drop_tail(victim, reason, dropped);
        }
        // Second pass: the delay bounds and rate guarantees (eq. 64).
        while self.min_rates(now) > self.link_bps * (1.0 + 1e-12) {
            let classes = &self.classes;
            let helps = |i: usize| classes[i].need > classes[i].mu;
            match self.victim(helps) {
                Some(victim) => self.drop_tail(victim, DropReason::Deadline, dropped),
                None => {
                    self.counters.relax_delay += 1;
                    self.relaxation = self.relaxation.max(Relaxation::Delay);
                    self.last_relax_delay = Some(now);
                    break;
                }
            }
        }
        self.allocate(now);
    }

    /// The link is free at `now`: the head of the backlogged class furthest
    /// behind its output curve (Section 5.2); ties go to the better class.
    pub fn dequeue(&mut self, now: Time) -> Option<Packet<M>> {
        if self.pkts == 0 {
            return None;
        }
        self.advance(now);
        let mut best = usize::MAX;
        let mut best_lag = f64::NEG_INFINITY;
        for (i, class) in self.classes.iter().enumerate() {
            if class.bytes > 0 {
                let lag = class.out - class.sent as f64;
                if lag > best_lag {
                    best = i;
                    best_lag = lag;
                }
            }
        }
        let class = &mut self.classes[best];
        let pkt = class.packets.pop_front().expect("a backlogged class has a head");
        let size = pkt.size as u64;
        class.bytes -= size;
        class.sent += size;
        if now.saturating_sub(pkt.enqueued).as_secs_f64() > class.d {
            class.counters.delay_violations += 1;
            if self.last_relax_delay.is_some_and(|t| t >= pkt.enqueued) {
                class.counters.late_for_loss += 1;
            }
        }
        self.pkts -= 1;
        self.bytes -= size;
        Some(pkt)
    }

    /// Resets the busy period's curves and rates (Section 2.1).
    fn start_busy_period(&mut self, now: Time) {
        for class in &mut self.classes {
            class.arrived = 0;
            class.dropped = 0;
            class.sent = 0;
            class.out = 0.0;
            class.rate = 0.0;
        }
        self.rate_mask = 0;
        self.t_last = now;
        self.counters.busy_periods += 1;
    }

    /// Moves the output curves to `now` (eq. 3), each no further than its
    /// input curve.
    #[inline]
    fn advance(&mut self, now: Time) {
        let dt = now.saturating_sub(self.t_last).as_secs_f64();
        for class in &mut self.classes {
            class.out = (class.out + class.rate * dt / 8.0).min(class.admitted() as f64);
        }
        self.t_last = now;
    }

    fn over_limit(&self) -> bool {
        match self.limit {
            Limit::Packets(n) => self.pkts > n,
            Limit::Bytes(n) => self.bytes > n,
            Limit::Cells(_) => unreachable!("validated: a JoBS buffer is counted in packets or bytes"),
        }
    }

    /// The class that loses its tail next, among the backlogged classes
    /// `eligible` accepts whose loss bound allows it (Section 4): first the
    /// classes without proportional loss guarantees (the worst first), then
    /// by decreasing error of the weighted loss rate. `None` if no eligible
    /// class may lose its tail.
    fn victim(&self, eligible: impl Fn(usize) -> bool) -> Option<usize> {
        // Per loss group, the mean of p_i/m'_i over its backlogged classes:
        // the set point p̄* divided by the group's Π m'_j, so that the errors
        // of different groups compare (within a group the order is the
        // paper's).
        let mut means = [0.0f64; 64];
        for (g, group) in self.loss_groups.iter().enumerate() {
            let (mut sum, mut count) = (0.0, 0);
            for class in &self.classes[group.first..group.end] {
                if class.bytes > 0 {
                    sum += class.loss_rate() / class.m_prime;
                    count += 1;
                }
            }
            means[g] = if count > 0 { sum / count as f64 } else { 0.0 };
        }
        let mut best: Option<(usize, bool, f64)> = None;
        for (i, class) in self.classes.iter().enumerate() {
            let Some(tail) = class.packets.back() else { continue };
            if !eligible(i) || !class.may_lose(tail.size) {
                continue;
            }
            let in_group = class.loss_group != NONE;
            let error =
                if in_group { means[class.loss_group as usize] - class.loss_rate() / class.m_prime } else { 0.0 };
            // Later (worse) classes win ties.
            let better = match best {
                None => true,
                Some((_, best_in_group, best_error)) => match (in_group, best_in_group) {
                    (false, true) => true,
                    (true, false) => false,
                    (false, false) => true,
                    (true, true) => error >= best_error,
                },
            };
            if better {
                best = Some((i, in_group, error));
            }
        }
        best.map(|(i, ..)| i)
    }

    /// When every backlogged class would break its loss bound: the class
    /// whose loss rate would exceed `L_i` by the least (the worse on a tie).
    fn least_breaking(&self) -> usize {
        let mut best = (usize::MAX, f64::INFINITY);
        for (i, class) in self.classes.iter().enumerate() {
            let Some(tail) = class.packets.back() else { continue };
            let excess = (class.dropped + tail.size as u64) as f64 / class.arrived as f64 - class.l;
            if excess <= best.1 {
                best = (i, excess);
            }
        }
        best.0
    }

    fn drop_tail(&mut self, i: usize, reason: DropReason, dropped: &mut Dropped<M>) {
        let class = &mut self.classes[i];
        let pkt = class.packets.pop_back().expect("only a backlogged class loses its tail");
        let size = pkt.size as u64;
        class.bytes -= size;
        class.dropped += size;
        class.out = class.out.min(class.admitted() as f64);
        if class.has_l && class.dropped as f64 > class.l * class.arrived as f64 {
            class.counters.loss_bound_drops += 1;
        }
        self.pkts -= 1;
        self.bytes -= size;
        dropped.push((pkt, reason));
    }

    /// Sets each class's `r_min` (eq. 12, capped at `C`) and `need` (its
    /// uncapped term of eq. 64) at `now`; returns the sum of the terms, the
    /// right-hand side of (64).
    fn min_rates(&mut self, now: Time) -> f64 {
        let c = self.link_bps;
        let mut sum = 0.0;
        for class in &mut self.classes {
            let need = min_rate(class.bytes, class.delay(now), class.d, 0.0);
            class.need = need;
            let term = if class.bytes > 0 { need.max(class.mu) } else { 0.0 };
            class.r_min = term.min(c);
            sum += term;
        }
        sum
    }

    /// The rates of Section 3 (the `r_min` of the last `min_rates` call are
    /// current).
    fn allocate(&mut self, now: Time) {
        let mask = self.classes.iter().enumerate().fold(0u64, |m, (i, c)| m | (u64::from(c.bytes > 0) << i));
        if mask != self.rate_mask {
            // A class started or ended its backlog: equal shares (ALTQ's
            // `enforce_wc`; the paper only says an idle class has rate 0).
            let share = self.link_bps / mask.count_ones().max(1) as f64;
            for (i, class) in self.classes.iter_mut().enumerate() {
                class.rate = if mask >> i & 1 == 1 { share } else { 0.0 };
            }
            self.rate_mask = mask;
            self.counters.rate_resets += 1;
        }
        if self.raise_to_minimum() {
            self.counters.min_rate_moves += 1;
        }
        for g in 0..self.delay_groups.len() {
            self.delay_loop(self.delay_groups[g], now);
        }
    }

    /// Absolute delay and rate guarantees first (eq. 12): raises every
    /// backlogged class below its `r_min`, the better classes first, taking
    /// the difference from the classes with service to spare, the worst
    /// first (ALTQ's greedy reallocation). Whether anything moved.
    fn raise_to_minimum(&mut self) -> bool {
        let eps = self.link_bps * 1e-12;
        let n = self.classes.len();
        let mut moved = false;
        for i in 0..n {
            let mut short = self.classes[i].r_min - self.classes[i].rate;
            if self.classes[i].bytes == 0 || short <= eps {
                continue;
            }
            for j in (0..n).rev() {
                if j == i {
                    continue;
                }
                let donor = &mut self.classes[j];
                let spare = donor.rate - donor.r_min;
                if donor.bytes == 0 || spare <= eps {
                    continue;
                }
                let take = spare.min(short);
                donor.rate -= take;
                short -= take;
                moved = true;
                if short <= eps {
                    break;
                }
            }
            let class = &mut self.classes[i];
            class.rate = class.r_min - short.max(0.0);
        }
        moved
    }

    /// One step of a group's delay feedback loop (Sections 3.2–3.4).
    fn delay_loop(&mut self, group: Group, now: Time) {
        let eps = self.link_bps * 1e-12;
        let members = &mut self.classes[group.first..group.end];
        // Normalised delays x_i = D_i/m_i: the weighted delay of eq. (18)
        // divided by the group's Π m_j, the same for every class.
        for class in members.iter_mut() {
            class.active = class.bytes > 0;
            if class.active {
                class.x = class.delay(now) / class.m;
            }
        }
        // Classes held at their minimum rate whose error would lower it
        // further sit this step out, and the set point is the mean over the
        // others (else one saturated class would hold K(n) at 0 for all).
        let mean = loop {
            let (mut sum, mut count) = (0.0, 0);
            for class in members.iter().filter(|c| c.active) {
                sum += class.x;
                count += 1;
            }
            if count < 2 {
                return;
            }
            let mean = sum / count as f64;
            let mut changed = false;
            for class in members.iter_mut().filter(|c| c.active) {
                if mean > class.x && class.rate <= class.r_min + eps {
                    class.active = false;
                    changed = true;
                }
            }
            if !changed {
                break mean;
            }
        };
        // M = min_i B_i·m_i/D_i² (bits/s²): eq. (59)'s bound on K(n), times Π m_j.
        let mut bound = f64::INFINITY;
        for class in members.iter().filter(|c| c.active) {
            let delay = class.x * class.m;
            if delay > 0.0 {
                bound = bound.min(class.bytes as f64 * 8.0 * class.m / (delay * delay));
            }
        }
        if !bound.is_finite() {
            return;
        }
        // The gain κ = K(n)·Π m_j, so that Δr_i = κ·(x̄ − x_i) = K(n)·e_i.
        let (lo59, hi59) = (-2.0 * bound, 0.0);
        let preferred = -2.0 * self.gain * bound;
        // (61) for every class of the group, whatever the sign of its error:
        // r_i + κ·e_i ≥ r_min_i.
        let (mut lo61, mut hi61, mut feasible) = (f64::NEG_INFINITY, f64::INFINITY, true);
        for class in members.iter().filter(|c| c.active) {
            let error = mean - class.x;
            let gap = class.r_min - class.rate;
            if error > 0.0 {
                lo61 = lo61.max(gap / error);
            } else if error < 0.0 {
                hi61 = hi61.min(gap / error);
            } else if gap > 0.0 {
                feasible = false;
            }
        }
        let kappa = if feasible && lo61 <= hi61 {
            let (lo, hi) = (lo61.max(lo59), hi61.min(hi59));
            if lo <= hi {
                let k = preferred.clamp(lo, hi);
                if k != preferred {
                    self.counters.gain_saturated += 1;
                }
                k
            } else {
                self.counters.relax_proportional += 1;
                self.relaxation = self.relaxation.max(Relaxation::Proportional);
                preferred.clamp(lo61, hi61)
            }
        } else {
            self.counters.relax_proportional += 1;
            self.relaxation = self.relaxation.max(Relaxation::Proportional);
            0.0
        };
        if kappa == 0.0 {
            return;
        }
        for class in &mut self.classes[group.first..group.end] {
            if class.active {
                class.rate = (class.rate + kappa * (mean - class.x)).max(0.0);
            }
        }
    }

    /// Packets waiting (not counting one in transmission).
    pub fn len_packets(&self) -> u64 {
        self.pkts
    }

    /// Bytes waiting.
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    /// Every packet waiting, class by class.
    pub fn queued(&self) -> impl Iterator<Item = &Packet<M>> {
        self.classes.iter().flat_map(|c| c.packets.iter())
    }

    /// Packets waiting in class `i`.
    pub fn class_len(&self, i: usize) -> usize {
        self.classes[i].packets.len()
    }

    /// The qdisc-wide counters.
    pub fn counters(&self) -> JobsCounters {
        self.counters
    }

    /// Class `i`'s counters.
    pub fn class_counters(&self, i: usize) -> JobsClassCounters {
        self.classes[i].counters
    }

    /// What the last arrival had to relax.
    pub fn relaxation(&self) -> Relaxation {
        self.relaxation
    }

    /// `r_i`, bit/s, as the last arrival set it.
    pub fn rate(&self, i: usize) -> f64 {
        self.classes[i].rate
    }

    /// `p_i` over the current busy period (eq. 5).
    pub fn loss_rate(&self, i: usize) -> f64 {
        self.classes[i].loss_rate()
    }

    /// Every class's `p_i` (eq. 5), best class first: over the current busy
    /// period, or the last one while the queue is empty (the curves reset at
    /// the next arrival). What ALTQ's kernel report gives per class, and its
    /// `altqstat` prints as `p_i`.
    pub fn loss_rates(&self) -> impl Iterator<Item = f64> + '_ {
        self.classes.iter().map(Class::loss_rate)
    }

    /// Every counter, for the result tables: the qdisc's (`queue: None`)
    /// then each class's.
    pub fn report(&self, out: &mut Vec<Counter>) {
        let c = self.counters;
        for (name, value) in [
            ("busy_periods", c.busy_periods),
            ("rate_resets", c.rate_resets),
            ("min_rate_moves", c.min_rate_moves),
            ("gain_saturated", c.gain_saturated),
            ("relax_proportional", c.relax_proportional),
            ("relax_delay", c.relax_delay),
            ("relax_loss", c.relax_loss),
        ] {
            out.push(Counter { queue: None, name, value });
        }
        for (i, class) in self.classes.iter().enumerate() {
            out.push(Counter { queue: Some(i), name: "delay_violations", value: class.counters.delay_violations });
            out.push(Counter { queue: Some(i), name: "late_for_loss", value: class.counters.late_for_loss });
            out.push(Counter { queue: Some(i), name: "loss_bound_drops", value: class.counters.loss_bound_drops });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: f64 = 1e-3;

    fn pkt(class: u8, size: u32, flow: u32) -> Packet<()> {
        Packet::for_test(class, size, flow)
    }

    /// Classes 0..n take codepoints 0..n.
    fn jobs(classes: Vec<JobsClass>, limit: Limit, link_bps: u64) -> Jobs<()> {
        let params = JobsParams { classes, gain: JobsParams::DEFAULT_GAIN };
        params.validate(params.classes.len()).unwrap();
        let mut table = [0u8; 64];
        for (i, slot) in table.iter_mut().enumerate().take(params.classes.len()) {
            *slot = i as u8;
        }
        Jobs::new(&params, table, limit, link_bps)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Eq. (12) by hand: 10,000 bytes queued, the oldest packet has waited
    /// 1 ms of a 3 ms bound: 80,000 bits in the 2 ms left, 40 Mb/s; with a
    /// 50 Mb/s guarantee, 50 Mb/s. Past the deadline: infinite. No backlog,
    /// no guarantee in force: 0. No delay bound: μ alone.
    #[test]
    fn minimum_rate_by_hand() {
        assert!(close(min_rate(10_000, 1.0 * MS, 3.0 * MS, 0.0), 40e6));
        assert!(close(min_rate(10_000, 1.0 * MS, 3.0 * MS, 50e6), 50e6));
        assert_eq!(min_rate(10_000, 3.0 * MS, 3.0 * MS, 0.0), f64::INFINITY);
        assert_eq!(min_rate(0, 0.0, 3.0 * MS, 50e6), 0.0);
        assert!(close(min_rate(10_000, 7.0, f64::INFINITY, 35e6), 35e6));
    }

    /// The same through the qdisc: class 1 (d = 3 ms) and class 2 (no
    /// guarantee) on a 100 Mb/s link, equal shares of 50 Mb/s once both are
    /// backlogged. Ten 1000-byte class-1 packets at 0 need 80,000/0.003 =
    /// 26.7 Mb/s, eleven at 1 ms 88,000/0.002 = 44 Mb/s: the share covers
    /// both. Twelve at 1.5 ms need 96,000/0.0015 = 64 Mb/s and thirteen
    /// 69.3 Mb/s: class 2 gives the difference, twice.
    #[test]
    fn the_minimum_rate_is_taken_from_the_others() {
        let mut q = jobs(
            vec![JobsClass { d: Some(Time::from_millis(3)), ..JobsClass::default() }, JobsClass::default()],
            Limit::Packets(100),
            100_000_000,
        );
        let mut dropped = Vec::new();
        q.enqueue(pkt(1, 1000, 0), Time::ZERO, &mut dropped);
        for f in 1..=10 {
            q.enqueue(pkt(0, 1000, f), Time::ZERO, &mut dropped);
        }
        q.enqueue(pkt(0, 1000, 11), Time::from_millis(1), &mut dropped);
        assert!(close(q.rate(0), 50e6) && close(q.rate(1), 50e6), "{} {}", q.rate(0), q.rate(1));
        assert_eq!(q.counters().min_rate_moves, 0);
        q.enqueue(pkt(0, 1000, 12), Time::from_micros(1500), &mut dropped);
        assert!(close(q.rate(0), 64e6), "{}", q.rate(0));
        q.enqueue(pkt(0, 1000, 13), Time::from_micros(1500), &mut dropped);
        let need = 13_000.0 * 8.0 / 0.0015;
        assert!(close(q.rate(0), need), "{} vs {need}", q.rate(0));
        assert!(close(q.rate(1), 100e6 - need));
        assert_eq!(q.counters().min_rate_moves, 2);
        assert!(dropped.is_empty());
    }

    /// One step of the delay loop, by hand. Classes 1–3 with k_1 = k_2 = 2
    /// (m = 1, 2, 4) on a 10 Mb/s link; one 1000-byte packet each at 0
    /// (rates C/3 each, every delay 0: no step), then a second class-3
    /// packet at 4 ms. D = (4, 4, 4) ms; x = D/m = (4, 2, 1) ms, mean 7/3 ms,
    /// errors e = (−5/3, 1/3, 4/3) ms. Eq. (59)'s bound: min B·m/D² =
    /// min(8000·1, 8000·2, 16000·4)/(0.004²) = 5·10⁸ bit/s²; the gain at the
    /// middle of (59) is −5·10⁸, inside (61) (no rate would go below 0). So
    /// Δr = (+833,333, −166,667, −666,667) bit/s, summing to 0 (eq. 25).
    #[test]
    fn one_step_of_the_delay_loop_by_hand() {
        let k2 = JobsClass { k: Some(2.0), ..JobsClass::default() };
        let mut q = jobs(vec![k2.clone(), k2, JobsClass::default()], Limit::Packets(100), 10_000_000);
        let mut dropped = Vec::new();
        for c in 0..3 {
            q.enqueue(pkt(c, 1000, c as u32), Time::ZERO, &mut dropped);
        }
        let third = 10e6 / 3.0;
        for c in 0..3 {
            assert!(close(q.rate(c), third));
        }
        q.enqueue(pkt(2, 1000, 9), Time::from_millis(4), &mut dropped);
        let expected = [third + 5e8 * 5.0 / 3.0 * MS, third - 5e8 / 3.0 * MS, third - 5e8 * 4.0 / 3.0 * MS];
        for (c, want) in expected.into_iter().enumerate() {
            assert!(close(q.rate(c), want), "class {}: {} vs {want}", c + 1, q.rate(c));
        }
        let c = q.counters();
        assert_eq!((c.gain_saturated, c.relax_proportional), (0, 0));
    }

    /// The saturation condition (61): with a rate guarantee on class 2 close
    /// to its share, the loop may lower it only down to μ. Same set-up as
    /// above but class 2 has μ = 3.3 Mb/s: class 2's error is positive, so
    /// κ ≥ (3.3e6 − C/3)/(1/3 ms) = −1.0·10⁸, tighter than the preferred
    /// −5·10⁸: κ = −10⁸, class 2 ends exactly at μ.
    #[test]
    fn the_saturation_condition_limits_the_gain() {
        let mut q = jobs(
            vec![
                JobsClass { k: Some(2.0), ..JobsClass::default() },
                JobsClass { k: Some(2.0), mu: Some(3_300_000), ..JobsClass::default() },
                JobsClass::default(),
            ],
            Limit::Packets(100),
            10_000_000,
        );
        let mut dropped = Vec::new();
        for c in 0..3 {
            q.enqueue(pkt(c, 1000, c as u32), Time::ZERO, &mut dropped);
        }
        q.enqueue(pkt(2, 1000, 9), Time::from_millis(4), &mut dropped);
        let third = 10e6 / 3.0;
        let kappa = (3.3e6 - third) / (MS / 3.0);
        assert!(close(q.rate(1), 3.3e6), "{}", q.rate(1));
        assert!(close(q.rate(0), third - kappa * 5.0 / 3.0 * MS));
        assert!(close(q.rate(2), third + kappa * 4.0 / 3.0 * MS));
        assert_eq!(q.counters().gain_saturated, 1);
    }

    /// Anti-windup: a class at its minimum whose error would lower it sits
    /// the step out. Classes 1–3 with k = 2 on 10 Mb/s; one 1000-byte
    /// packet of classes 1 and 2 at 0, of class 3 at 4 ms; then the rates
    /// are set by hand to (5, 5, 0) Mb/s and the loop steps at 4 ms: class
    /// 3's head is fresh (D = 0), so its error is positive and (61) would
    /// hold κ at 0 for all. It sits out instead; classes 1–2 step alone:
    /// D = (4, 4) ms, x = (4, 2) ms, mean 3 ms, e = (−1, +1) ms; bound
    /// min(8000·1, 8000·2)/0.004² = 5·10⁸, κ = −5·10⁸: Δr = (+0.5, −0.5) Mb/s.
    #[test]
    fn a_saturated_class_sits_the_step_out() {
        let k2 = JobsClass { k: Some(2.0), ..JobsClass::default() };
        let mut q = jobs(vec![k2.clone(), k2, JobsClass::default()], Limit::Packets(100), 10_000_000);
        let mut dropped = Vec::new();
        for c in 0..2 {
            q.enqueue(pkt(c, 1000, c as u32), Time::ZERO, &mut dropped);
        }
        q.enqueue(pkt(2, 1000, 2), Time::from_millis(4), &mut dropped);
        // The arrival at 4 ms changed the backlogged set (equal shares), and
        // stepped once; set the rates by hand and step again with class 3's
        // fresh head.
        q.classes[0].rate = 5e6;
        q.classes[1].rate = 5e6;
        q.classes[2].rate = 0.0;
        q.classes[2].r_min = 0.0;
        q.delay_loop(q.delay_groups[0], Time::from_millis(4));
        assert!(close(q.rate(0), 5.5e6), "{}", q.rate(0));
        assert!(close(q.rate(1), 4.5e6), "{}", q.rate(1));
        assert_eq!(q.rate(2), 0.0);
    }

    /// Sets class `i`'s busy-period loss: `arrived` and `dropped` bytes, and
    /// one queued packet of `tail` bytes.
    fn set_loss(q: &mut Jobs<()>, i: usize, arrived: u64, dropped: u64, tail: u32) {
        let class = &mut q.classes[i];
        class.arrived = arrived;
        class.dropped = dropped;
        class.packets.push_back(pkt(i as u8, tail, 0));
        class.bytes = tail as u64;
    }

    /// The victim of Section 4 for given loss rates. Class 1: L = 1%, no
    /// proportional guarantee; classes 2–4: k' = 2 (m' = 1, 2, 4).
    /// - Class 1 has budget (0.5% lost, a 100-byte tail keeps it at 0.6%):
    ///   it pays first, whatever the others' errors (the paper's Sec. 6.3).
    /// - Class 1 at its bound (1%): p = (1%, 1%, 4%) for classes 2–4, p/m' =
    ///   (1%, 0.5%, 1%), mean 0.833%, errors (−0.17, +0.33, −0.17)%: class 3.
    /// - All at zero: the errors tie, the worst class pays.
    /// - Class 3 with L = 0.5% at its bound: the next in the order, a tie
    ///   between classes 2 and 4, goes to class 4.
    #[test]
    fn the_victim_follows_the_loss_order() {
        let rlc = JobsClass { k_prime: Some(2.0), ..JobsClass::default() };
        let classes = vec![JobsClass { l: Some(0.01), ..JobsClass::default() }, rlc.clone(), rlc, JobsClass::default()];
        let mut q = jobs(classes.clone(), Limit::Packets(100), 1_000_000);
        set_loss(&mut q, 0, 100_000, 500, 100);
        set_loss(&mut q, 1, 100_000, 1000, 100);
        set_loss(&mut q, 2, 100_000, 1000, 100);
        set_loss(&mut q, 3, 100_000, 4000, 100);
        assert_eq!(q.victim(|_| true), Some(0));
        q.classes[0].dropped = 1000;
        assert_eq!(q.victim(|_| true), Some(2));

        let mut q = jobs(classes.clone(), Limit::Packets(100), 1_000_000);
        for i in 1..4 {
            set_loss(&mut q, i, 10_000, 0, 100);
        }
        assert_eq!(q.victim(|_| true), Some(3));

        let mut classes = classes;
        classes[2].l = Some(0.005);
        let mut q = jobs(classes, Limit::Packets(100), 1_000_000);
        set_loss(&mut q, 0, 100_000, 1000, 100);
        set_loss(&mut q, 1, 100_000, 1000, 100);
        set_loss(&mut q, 2, 100_000, 500, 100);
        set_loss(&mut q, 3, 100_000, 4000, 100);
        assert_eq!(q.victim(|_| true), Some(3));
        assert_eq!(q.victim(|i| i != 3), Some(1));
    }

    /// When d_1 and L_1 conflict, the loss bound wins (Section 5): class 1
    /// (d = 1 ms, L = 50%) on a 1 Mb/s link. Its first 1000-byte packet
    /// needs 8000 bits in 1 ms, 8 Mb/s > C: dropping it would lose 100% of
    /// the busy period's bytes, so (64) is relaxed and it stays. The second
    /// needs 16 Mb/s: it may go (1000 of 2000 bytes, 50%), and is dropped
    /// for the deadline; the first still needs 8 Mb/s and may not go:
    /// relaxed again. A 1-packet buffer and L = 0 for class 2: its arrivals
    /// can only overflow by breaking its bound — the buffer wins.
    #[test]
    fn the_loss_bound_outranks_the_delay_bound() {
        let mut q = jobs(
            vec![
                JobsClass { d: Some(Time::from_millis(1)), l: Some(0.5), ..JobsClass::default() },
                JobsClass::default(),
            ],
            Limit::Packets(100),
            1_000_000,
        );
        let mut dropped = Vec::new();
        q.enqueue(pkt(0, 1000, 1), Time::ZERO, &mut dropped);
        assert!(dropped.is_empty());
        assert_eq!((q.counters().relax_delay, q.relaxation()), (1, Relaxation::Delay));
        q.enqueue(pkt(0, 1000, 2), Time::ZERO, &mut dropped);
        assert_eq!(dropped.iter().map(|(p, r)| (p.flow, *r)).collect::<Vec<_>>(), vec![(2, DropReason::Deadline)]);
        assert_eq!(q.counters().relax_delay, 2);
        assert_eq!(q.class_len(0), 1);
        assert!(close(q.loss_rate(0), 0.5));
        // The link sends it 8 ms later: a violation of d_1, counted, and
        // one the loss bound caused.
        assert_eq!(q.dequeue(Time::from_millis(8)).map(|p| p.flow), Some(1));
        assert_eq!(q.class_counters(0).delay_violations, 1);
        assert_eq!(q.class_counters(0).late_for_loss, 1);

        let mut q = jobs(
            vec![JobsClass { l: Some(0.0), ..JobsClass::default() }, JobsClass::default()],
            Limit::Packets(1),
            1_000_000,
        );
        let mut dropped = Vec::new();
        q.enqueue(pkt(0, 1000, 1), Time::ZERO, &mut dropped);
        q.enqueue(pkt(0, 1000, 2), Time::ZERO, &mut dropped);
        assert_eq!(dropped.iter().map(|(p, r)| (p.flow, *r)).collect::<Vec<_>>(), vec![(2, DropReason::Overflow)]);
        assert_eq!((q.counters().relax_loss, q.class_counters(0).loss_bound_drops), (1, 1));
        assert_eq!(q.relaxation(), Relaxation::Loss);
        // A class-2 arrival: class 2 has no bound, it pays (its own arrival),
        // and class 1 keeps its packet.
        q.enqueue(pkt(1, 1000, 3), Time::ZERO, &mut dropped);
        assert_eq!(dropped.last().map(|(p, r)| (p.flow, *r)), Some((3, DropReason::Overflow)));
        assert_eq!(q.counters().relax_loss, 1);
    }

    /// An overflow may push out another class's tail: class 2 (no loss
    /// guarantee, outside every group) pays before class 1 (k' with nobody:
    /// no group) — the worst class without proportional guarantees first.
    #[test]
    fn an_overflow_pushes_out_the_victims_tail() {
        let mut q = jobs(vec![JobsClass::default(), JobsClass::default()], Limit::Packets(3), 1_000_000);
        let mut dropped = Vec::new();
        for (class, flow) in [(1, 1), (1, 2), (0, 3), (0, 4)] {
            q.enqueue(pkt(class, 1000, flow), Time::ZERO, &mut dropped);
        }
        assert_eq!(dropped.iter().map(|(p, r)| (p.flow, *r)).collect::<Vec<_>>(), vec![(2, DropReason::Eviction)]);
        assert_eq!((q.class_len(0), q.class_len(1), q.len_packets(), q.len_bytes()), (2, 1, 3, 3000));
    }

    /// The dequeue serves the class furthest behind its output curve. Two
    /// classes without guarantees on a 1 Mb/s link, two 1000-byte packets
    /// each at 0: equal rates of 0.5 Mb/s. At 0 both curves are at 0: the
    /// tie goes to class 1. At 8 ms each curve has reached 500 bytes: class
    /// 1 is 500 ahead (it sent 1000), class 2 500 behind: class 2. At 16 ms
    /// both are level again: class 1.
    #[test]
    fn dequeue_serves_the_class_furthest_behind() {
        let mut q = jobs(vec![JobsClass::default(), JobsClass::default()], Limit::Packets(10), 1_000_000);
        let mut dropped = Vec::new();
        for (class, flow) in [(0, 1), (0, 2), (1, 3), (1, 4)] {
            q.enqueue(pkt(class, 1000, flow), Time::ZERO, &mut dropped);
        }
        let order: Vec<u32> = [0, 8, 16, 24].iter().map(|&ms| q.dequeue(Time::from_millis(ms)).unwrap().flow).collect();
        assert_eq!(order, vec![1, 3, 2, 4]);
        assert_eq!(q.dequeue(Time::from_millis(32)).map(|p| p.flow), None);
    }

    /// Everything the loss rates count restarts with a busy period: class 1
    /// (L = 50%) lost half its bytes; the rate reported while the queue is
    /// empty is still that busy period's (as ALTQ's report gives it); once
    /// the queue has emptied, the next arrival starts from p = 0.
    #[test]
    fn a_busy_period_resets_the_curves() {
        let mut q = jobs(
            vec![JobsClass { l: Some(0.5), ..JobsClass::default() }, JobsClass::default()],
            Limit::Packets(1),
            1_000_000,
        );
        let mut dropped = Vec::new();
        q.enqueue(pkt(0, 1000, 1), Time::ZERO, &mut dropped);
        q.enqueue(pkt(0, 1000, 2), Time::ZERO, &mut dropped);
        assert!(close(q.loss_rate(0), 0.5));
        assert!(q.dequeue(Time::ZERO).is_some());
        assert_eq!(q.loss_rates().collect::<Vec<_>>(), vec![0.5, 0.0]);
        q.enqueue(pkt(0, 1000, 3), Time::from_millis(10), &mut dropped);
        assert_eq!(q.loss_rate(0), 0.0);
        assert_eq!(q.loss_rates().collect::<Vec<_>>(), vec![0.0, 0.0]);
        assert_eq!(q.counters().busy_periods, 2);
        assert!(close(q.rate(0), 1e6));
    }

    #[test]
    fn groups_follow_the_links() {
        let (g, member) = groups(&[Some(2.0), Some(3.0), None, None, Some(2.0), None]);
        assert_eq!(g.iter().map(|g| (g.first, g.end)).collect::<Vec<_>>(), vec![(0, 3), (4, 6)]);
        assert_eq!(member, vec![(0, 1.0), (0, 2.0), (0, 6.0), (NONE, 1.0), (1, 1.0), (1, 2.0)]);
    }

    #[test]
    fn validation_names_class_and_guarantee() {
        let check = |classes: Vec<JobsClass>, gain: f64| JobsParams { classes, gain }.validate(2).unwrap_err();
        let c = JobsClass::default;
        assert!(check(vec![c()], 0.5).contains("1 JoBS classes for 2 queues"));
        assert!(check(vec![c(), c()], 0.0).contains("gain"));
        assert!(check(vec![c(), JobsClass { k: Some(2.0), ..c() }], 0.5).contains("class 2: k relates"));
        assert!(check(vec![JobsClass { l: Some(1.0), ..c() }, c()], 0.5).contains("class 1: L must be in [0, 1)"));
        assert!(check(vec![JobsClass { k_prime: Some(-1.0), ..c() }, c()], 0.5).contains("class 1: k_prime"));
        assert!(check(vec![c(), JobsClass { d: Some(Time::ZERO), ..c() }], 0.5).contains("class 2: d"));
        assert!(check(vec![JobsClass { mu: Some(0), ..c() }, c()], 0.5).contains("class 1: mu"));
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::packet::{Colour, Ecn};
    use proptest::prelude::{prop_assert, prop_assert_eq, prop_oneof, proptest, Just, Strategy};

    #[derive(Clone, Debug)]
    enum Op {
        Offer { class: u8, size: u32 },
        Take,
        Wait(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u8..4, 40u32..1500).prop_map(|(class, size)| Op::Offer { class, size }),
            2 => Just(Op::Take),
            1 => (1u64..3000).prop_map(Op::Wait),
        ]
    }

    /// Four classes with the guarantees of the paper's Table 4 (or, by
    /// `set`, Sets 2–4 of Section 6.5), loss bounds tightened so that they
    /// bind: class 1 d = 2 ms, L = 1%; class 2 μ = 3.5 Mb/s; k = k' = 2.
    fn config(set: u8) -> Vec<JobsClass> {
        let abs = set == 1 || set == 3;
        let prop = set == 1 || set == 2;
        let pk = |v: f64| if prop { Some(v) } else { None };
        vec![
            JobsClass { d: abs.then(|| Time::from_millis(2)), l: abs.then_some(0.01), ..JobsClass::default() },
            JobsClass { mu: abs.then_some(3_500_000), k: pk(2.0), k_prime: pk(2.0), ..JobsClass::default() },
            JobsClass { k: pk(2.0), k_prime: pk(2.0), l: abs.then_some(0.2), ..JobsClass::default() },
            JobsClass::default(),
        ]
    }

    proptest! {
        /// Every offered packet is sent, dropped or still queued; classes
        /// leave in FIFO order; the buffer never holds more than B once an
        /// arrival is handled; the arrival is the only packet dropped as an
        /// overflow; each class's curves agree with its queue (A − drops −
        /// Xmit = B_i, R_out ≤ R_in); the rates of the backlogged classes
        /// add up to C and idle classes have none; and a loss bound is broken
        /// only by an overflow at which every backlogged class would have
        /// broken its own.
        #[test]
        fn jobs_conserves_packets_and_keeps_loss_bounds(ops in proptest::collection::vec(op(), 0..500), set in 1u8..5, byte_limit: bool) {
            let params = JobsParams { classes: config(set), gain: JobsParams::DEFAULT_GAIN };
            let mut table = [3u8; 64];
            for (c, slot) in table.iter_mut().enumerate().take(4) { *slot = c as u8; }
            let limit = if byte_limit { Limit::Bytes(12_000) } else { Limit::Packets(12) };
            let mut q: Jobs<u32> = Jobs::new(&params, table, limit, 10_000_000);
            let mut dropped = Vec::new();
            let (mut offered, mut taken, mut seq) = (0u64, 0u64, 0u32);
            let mut last_seen = [None::<u32>; 4];
            let mut now = Time::ZERO;
            for op in ops {
                match op {
                    Op::Wait(us) => now += Time::from_micros(us),
                    Op::Take => {
                        if let Some(p) = q.dequeue(now) {
                            taken += 1;
                            let c = p.class as usize;
                            prop_assert!(last_seen[c].is_none_or(|s| s < p.meta), "out of order");
                            last_seen[c] = Some(p.meta);
                        }
                    }
                    Op::Offer { class, size } => {
                        offered += 1;
                        seq += 1;
                        let c = class as usize;
                        // Could some backlogged class lose its tail (with
                        // this arrival counted) within its bound?
                        let budget = q.classes.iter().enumerate().any(|(i, cl)| {
                            let arrived = cl.arrived * u64::from(q.pkts > 0) + if i == c { size as u64 } else { 0 };
                            let dropped_bytes = cl.dropped * u64::from(q.pkts > 0);
                            let tail = if i == c { Some(size) } else { cl.packets.back().map(|p| p.size) };
                            tail.is_some_and(|t| !cl.has_l || (dropped_bytes + t as u64) as f64 <= cl.l * arrived as f64)
                        });
                        let before = (q.counters().relax_loss, dropped.len());
                        let pkt = Packet { flow: 0, class, colour: Colour::Green, ecn: Ecn::NotEct, size, created: now, enqueued: now, meta: seq };
                        q.enqueue(pkt, now, &mut dropped);
                        for (p, r) in &dropped[before.1..] {
                            prop_assert!(matches!(r, DropReason::Overflow | DropReason::Eviction | DropReason::Deadline));
                            prop_assert!((*r == DropReason::Overflow) <= (p.meta == seq), "only the arrival overflows");
                        }
                        if !byte_limit && budget {
                            prop_assert_eq!(q.counters().relax_loss, before.0, "a loss bound broken while a class had budget");
                        }
                        match limit {
                            Limit::Packets(n) => prop_assert!(q.len_packets() <= n),
                            Limit::Bytes(n) => prop_assert!(q.len_bytes() <= n),
                            Limit::Cells(_) => unreachable!("the strategy draws packets or bytes"),
                        }
                        let backlogged: Vec<_> = q.classes.iter().filter(|c| c.bytes > 0).collect();
                        if !backlogged.is_empty() {
                            let sum: f64 = backlogged.iter().map(|c| c.rate).sum();
                            prop_assert!((sum - 10e6).abs() < 1e-6 * 10e6, "rates add up to {sum}");
                        }
                        prop_assert!(q.classes.iter().all(|c| c.bytes > 0 || c.rate == 0.0 && c.rate >= 0.0));
                        prop_assert!(q.classes.iter().all(|c| c.rate >= 0.0));
                    }
                }
                let loss_breaks: u64 = (0..4).map(|i| q.class_counters(i).loss_bound_drops).sum();
                prop_assert_eq!(loss_breaks, q.counters().relax_loss);
                for c in &q.classes {
                    prop_assert_eq!(c.arrived - c.dropped - c.sent, c.bytes);
                    prop_assert_eq!(c.bytes, c.packets.iter().map(|p| p.size as u64).sum::<u64>());
                    prop_assert!(c.out <= c.admitted() as f64 + 1e-6);
                    prop_assert!(!c.has_l || c.dropped as f64 <= c.l * c.arrived as f64 || c.counters.loss_bound_drops > 0);
                }
                let queued: u64 = q.classes.iter().map(|c| c.packets.len() as u64).sum();
                prop_assert_eq!(queued, q.len_packets());
                prop_assert_eq!(offered, taken + dropped.len() as u64 + queued);
            }
        }
    }
}
