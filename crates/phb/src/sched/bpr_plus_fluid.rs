//! Fluid BPR⁺ — the optimized Backlog-Proportional Rate server as the
//! thesis defines it on input and output curves, packetized as phblab
//! packetizes BPR.
//!
//! V. Vukadinović, "Delay and throughput differentiation mechanisms for
//! non-elevated services", thesis, 2004 — Section 5.2, eqs. (12)–(17) and
//! Figs. 8–9; V. Vukadinović, G. Petrović, Lj. Trajković, "BPR+: a packet
//! scheduling algorithm for proportional delay differentiation", YUINFO
//! 2004 (the thesis' ref. 38). [`super::bpr_plus`] is the heuristic of
//! Section 5.2.1 / Appendix A that approximates this server.
//!
//! ## The fluid server (eqs. 12–17)
//!
//! Two classes: queue 0 throughput-sensitive (TS), queue 1 delay-sensitive
//! (DS), the target `d̄_TS / d̄_DS = δ`. For class `i` at `τ`, with input
//! and output curves `R_i^in`, `R_i^out`:
//!
//! - `B_i(τ) = R_i^in(τ) − R_i^out(τ)`, the backlog;
//! - `τ'_i` with `R_i^in(τ'_i) = R_i^out(τ)`: when the bit now at the head
//!   of the backlog arrived;
//! - `I_i(τ) = ∫_{τ'_i}^{τ} (R_i^in(t) − R_i^out(τ)) dt`, the area between
//!   the input curve and the level already served;
//! - the experienced delay `d̄^E_i = I_i / B_i` (eq. 13), the residual delay
//!   at service rate `r_i`, `d̄^R_i = I_i / (r_i (τ − τ'_i))` (eq. 14), and
//!   `d̄_i = d̄^E_i + d̄^R_i` (eqs. 12, 15, 16).
//!
//! `d̄_TS = δ d̄_DS` with `r_TS + r_DS = C` is, with `Z = I_DS / I_TS` and
//! `A = 1/B_TS − δ Z / B_DS`,
//!
//! ```text
//! r_TS² + ((1/A)(1/(τ − τ'_TS) + δZ/(τ − τ'_DS)) − C) r_TS − (1/A) C/(τ − τ'_TS) = 0
//! ```
//!
//! This is eq. (17) as it follows from eqs. (15)–(16): the printed (17)
//! has `1/(B_TS − δ Z B_DS)` for `1/A` and `τ'_i` for `τ − τ'_i`, which
//! is not dimensionally a rate (bytes⁻¹·s⁻¹ where bytes/s is needed); the
//! derivation fixes both. Writing `D_i = I_i / B_i` and
//! `Q_i = I_i / (τ − τ'_i)` makes it eq. (22) of the heuristic term for
//! term, so the root is found by the heuristic's own
//! [`super::bpr_plus::quadratic_root`]. With the polynomial multiplied by
//! `A`, its value is `−C/(τ − τ'_TS) < 0` at `r = 0` and
//! `δ Z C/(τ − τ'_DS) > 0` at `r = C`: exactly one root lies in `(0, C)`,
//! the only one that gives both classes a rate ≥ 0; it is the root taken
//! ("the text implies": service rates that sum to `C`).
//!
//! ## From packets to curves (assumptions)
//!
//! The thesis' curves are fluid; a queue of packets gives them as
//! staircases. phblab assumes:
//!
//! - a packet enters its queue whole at its arrival instant `t_k`
//!   (`R^in` jumps by its size `L_k`), and leaves whole when its
//!   transmission starts (`R^out` jumps), the convention of BPR's backlog
//!   and the heuristic's sums; the packet being transmitted is no backlog;
//! - `τ'_i` is the arrival time of the queue's head packet (with a
//!   staircase `R^in`, `R^in(t) = R^out(τ)` holds on an interval ending
//!   there: its bits are the oldest in the backlog);
//! - hence `B_i = Σ_k L_k`, `I_i = Σ_k L_k (τ − t_k)` (each packet's bytes
//!   count from their arrival to `τ`), `d̄^E_i` the byte-weighted mean
//!   waiting time, and `I_i/(τ − τ'_i)` the backlog averaged over
//!   `[τ'_i, τ]` in time. For `τ = τ'_i` (every packet arrived at `τ`)
//!   `I_i/(τ − τ'_i)` takes its limit `B_i`; a queue of zero-byte packets
//!   has `d̄^E_i = τ − τ'_i`.
//!
//! Eq. (14) averages the residual delay over arrival *instants* in
//! `[τ'_i, τ]`, not over bits; the two agree when the backlog arrived at a
//! constant rate. For `N` packets of equal size arrived evenly over
//! `[τ'_i, τ]`, `I_i/(τ − τ'_i) = N L / 2`, between the heuristic's `Q_i`
//! with the packet's own bytes (`(N + 1) L / 2`) and without them
//! (`(N − 1) L / 2`, eq. 19's wording).
//!
//! ## Packetization (as BPR, [`super::bpr`])
//!
//! The rates drive the virtual service functions `V_i` of eqs. (23)–(27),
//! the very code BPR uses: `V_i` is the service the fluid server would have
//! given queue `i` since `t^d`, the previous decision, minus the bytes it
//! sent; the backlogged queue with the smallest `L_i − V_i` is served, a
//! tie going to DS, a head that arrived at or after `t^d` resets its `V`,
//! and a lone queue's departure leaves every `V` at 0. Only the rate rule
//! differs from BPR. Because eq. (17)'s rate depends on `τ` itself (`I_i`
//! and `τ − τ'_i` grow while nothing happens), the service added to `V_i`
//! over `[t^d, t]` is the integral `∫ r_i(τ) dτ` of the rate the fluid
//! server has at each instant for the packets then queued: the queues
//! change only at arrivals, departures and evictions, each of which closes
//! a piece, and on a piece the rate is a smooth function of `τ`,
//! integrated by three-point Gauss–Legendre quadrature on spans of at most
//! 50 µs (a test checks it against a fine trapezoid rule, to 10⁻⁶). BPR's eq. (10) rates
//! depend on the backlogs alone, so there the integral is the rate times
//! the time; BPR also keeps its rates through arrivals (Appendix D's
//! rule), which this server does not: an arrival changes the fluid rate
//! at once.
//!
//! A lone backlogged queue has rate `C`, none has 0.
//! [`Scheduler::service_rates_bps`] reports the rates at the latest
//! event (arrival, decision, departure or eviction).
//!
//! ## Evictions
//!
//! A packet evicted from a queue's head (PLR) leaves the backlog and the
//! curves as a departure would; the fluid service up to the eviction is
//! banked under the queues before it, `V` is not charged, and `t^d` stays.
//!
//! Parameters: `δ` (`s = [1, δ]`, or `s_TS`, `s_DS` with `δ = s_DS/s_TS`)
//! and `C`, the link's rate. The thesis defines the server for two
//! classes only; other queue counts are refused.

use super::bpr::{write_bps, Arrivals, VirtualService};
use super::bpr_plus::quadratic_root;
use super::{check_heads, check_per_queue, Head, SchedError, Scheduler};
use crate::time::Time;

/// Gauss–Legendre nodes on `[−1, 1]` and weights, three points.
const GAUSS_NODES: [f64; 3] = [-0.774_596_669_241_483_4, 0.0, 0.774_596_669_241_483_4];
const GAUSS_WEIGHTS: [f64; 3] = [5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0];
/// The longest span (ns) one three-point rule covers; a longer piece is
/// split into equal spans no longer than this.
const GAUSS_SPAN_NS: f64 = 50_000.0;

/// Fluid BPR⁺ over two queues (TS, DS) on a link of `link_rate_bps`.
#[derive(Clone, Debug)]
pub struct BprPlusFluid {
    /// `[s_TS, s_DS]`; `δ = s_DS / s_TS`.
    s: [f64; 2],
    /// `C`, bytes per nanosecond.
    capacity: f64,
    /// `B_i`, bytes queued.
    bytes: [u64; 2],
    /// `Σ_k L_k t_k` over the packets queued (bytes·ns).
    sum_size_arrival: [u128; 2],
    arrivals: Arrivals,
    /// Rates at the latest event, bytes per nanosecond.
    rates: [f64; 2],
    /// Until when the fluid service has been banked into `vs`.
    mark: Time,
    vs: VirtualService,
}

impl BprPlusFluid {
    /// `s = [s_TS, s_DS]` (each > 0; `d̄_TS/d̄_DS → s_DS/s_TS = δ`);
    /// `link_rate_bps`: `C` (bits/s, > 0). `queues` must be 2.
    pub fn new(queues: usize, s: Vec<f64>, link_rate_bps: u64) -> Result<BprPlusFluid, SchedError> {
        const NAME: &str = "fluid BPR+";
        check_per_queue(NAME, "s", queues, &s)?;
        if queues != 2 {
            return Err(SchedError::TwoQueues { scheduler: NAME, queues });
        }
        if link_rate_bps == 0 {
            return Err(SchedError::Zero { scheduler: NAME, param: "link_rate_bps", value: 0.0 });
        }
        Ok(BprPlusFluid {
            s: [s[0], s[1]],
            capacity: link_rate_bps as f64 / 8e9,
            bytes: [0; 2],
            sum_size_arrival: [0; 2],
            arrivals: Arrivals::new(2),
            rates: [0.0; 2],
            mark: Time::ZERO,
            vs: VirtualService::new(2),
        })
    }

    /// Queue 0 TS, queue 1 DS, `d̄_TS / d̄_DS → δ` (`delta` > 0).
    pub fn with_delta(delta: f64, link_rate_bps: u64) -> Result<BprPlusFluid, SchedError> {
        if !(delta.is_finite() && delta > 0.0) {
            return Err(SchedError::Zero { scheduler: "fluid BPR+", param: "delta", value: delta });
        }
        BprPlusFluid::new(2, vec![1.0, delta], link_rate_bps)
    }

    /// `τ'_i`, the arrival time of queue `i`'s head; `None` when empty.
    fn head_arrival(&self, i: usize) -> Option<Time> {
        self.arrivals.times[i].front().copied()
    }

    /// `I_i` at `mark` (bytes·ns), exact: `B_i · mark − Σ L_k t_k`.
    fn area_at_mark(&self, i: usize) -> f64 {
        (self.bytes[i] as u128 * self.mark.as_nanos() as u128 - self.sum_size_arrival[i]) as f64
    }

    /// `(D_i, Q_i)` at `mark + dt` (ns, bytes): `I_i/B_i` and
    /// `I_i/(τ − τ'_i)`, given `I_i` at `mark` and `τ'_i`.
    #[inline]
    fn d_q(&self, i: usize, area_at_mark: f64, head: Time, dt: f64) -> (f64, f64) {
        let b = self.bytes[i] as f64;
        let age = (self.mark.as_nanos() - head.as_nanos()) as f64 + dt;
        let area = area_at_mark + b * dt;
        let d = if b > 0.0 { area / b } else { age };
        let q = if age > 0.0 { area / age } else { b };
        (d, q)
    }

    /// `r_TS` (bytes/ns) at `mark + dt` for the packets queued, both
    /// queues backlogged: the root of eq. (17) in `[0, C]`.
    #[inline]
    fn rate_ts(&self, areas: [f64; 2], heads: [Time; 2], dt: f64) -> f64 {
        let (d_ts, q_ts) = self.d_q(0, areas[0], heads[0], dt);
        let (d_ds, q_ds) = self.d_q(1, areas[1], heads[1], dt);
        quadratic_root(d_ts, q_ts, d_ds, q_ds, self.s[1] / self.s[0], self.capacity)
    }

    /// Banks the fluid service `∫ r_i dτ` over `[mark, now]` for the
    /// packets queued (unchanged on that piece) and sets `rates` to those
    /// at `now`.
    fn advance(&mut self, now: Time) {
        let dt = now.saturating_sub(self.mark).as_nanos() as f64;
        let c = self.capacity;
        let service = match (self.head_arrival(0), self.head_arrival(1)) {
            (Some(h0), Some(h1)) => {
                let areas = [self.area_at_mark(0), self.area_at_mark(1)];
                let heads = [h0, h1];
                let pieces = (dt / GAUSS_SPAN_NS).ceil().max(1.0);
                let half = 0.5 * dt / pieces;
                let mut ts = 0.0;
                for k in 0..pieces as u64 {
                    let mid = (2 * k + 1) as f64 * half;
                    for (x, w) in GAUSS_NODES.iter().zip(GAUSS_WEIGHTS) {
                        ts += w * self.rate_ts(areas, heads, mid + half * x);
                    }
                }
                ts *= half;
                let r = self.rate_ts(areas, heads, dt);
                self.rates = [r, c - r];
                [ts, c * dt - ts]
            }
            (Some(_), None) => {
                self.rates = [c, 0.0];
                [c * dt, 0.0]
            }
            (None, Some(_)) => {
                self.rates = [0.0, c];
                [0.0, c * dt]
            }
            (None, None) => {
                self.rates = [0.0; 2];
                [0.0; 2]
            }
        };
        if dt > 0.0 {
            self.vs.bank_service(&service, now);
        }
        self.mark = self.mark.max(now);
    }

    /// The rates (bits/s) eq. (17) gives at `now` for the packets queued;
    /// advances the banked service to `now` as any event does.
    pub fn rates_bps(&mut self, now: Time) -> [f64; 2] {
        self.advance(now);
        [self.rates[0] * 8e9, self.rates[1] * 8e9]
    }

    /// `V_i`, bytes.
    pub fn virtual_service(&self) -> &[f64] {
        self.vs.values()
    }

    /// Takes the head of `queue`, `size` bytes, off the curves.
    fn remove_head(&mut self, queue: usize, size: u32) {
        let arrived = self.arrivals.pop("fluid BPR+", queue);
        self.bytes[queue] -= size as u64;
        self.sum_size_arrival[queue] -= size as u128 * arrived.as_nanos() as u128;
    }
}

impl Scheduler for BprPlusFluid {
    fn on_enqueue(&mut self, queue: usize, size: u32, now: Time) {
        self.advance(now);
        self.bytes[queue] += size as u64;
        self.sum_size_arrival[queue] += size as u128 * now.as_nanos() as u128;
        self.arrivals.push(queue, now);
    }

    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize> {
        check_heads("fluid BPR+", heads, 2);
        self.advance(now);
        let backlogged = heads.iter().filter(|h| h.is_some()).count();
        // The service up to `now` is banked: `choose` adds nothing more.
        self.vs.choose(heads, &[0.0; 2], &self.s, backlogged, now)
    }

    fn on_dequeue(&mut self, queue: usize, size: u32, now: Time) {
        self.advance(now);
        self.remove_head(queue, size);
        self.vs.served(queue, size, now);
        self.advance(now);
    }

    /// Service banked up to the eviction; the head leaves the curves; `V`
    /// is not charged.
    fn on_evict(&mut self, queue: usize, size: u32, now: Time) {
        self.advance(now);
        self.remove_head(queue, size);
        self.advance(now);
    }

    /// Eq. (17)'s rates at the latest event.
    fn service_rates_bps(&self, out: &mut [f64]) -> bool {
        write_bps("fluid BPR+", &self.rates, out);
        true
    }
}

#[cfg(test)]
impl BprPlusFluid {
    pub(crate) fn check_state(&self, queues: &[std::collections::VecDeque<Head>]) -> Result<(), String> {
        use super::tests::{bytes, same};
        self.arrivals.check("fluid BPR+", queues)?;
        for (i, q) in queues.iter().enumerate() {
            same("fluid BPR+", "bytes", i, self.bytes[i], bytes(q))?;
            let s: u128 = q.iter().map(|h| h.size as u128 * h.enqueued.as_nanos() as u128).sum();
            same("fluid BPR+", "Σ L_k t_k", i, self.sum_size_arrival[i], s)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    use proptest::prelude::*;

    fn h(size: u32, at_us: u64) -> Option<Head> {
        Some(Head { size, enqueued: Time::from_micros(at_us) })
    }

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            BprPlusFluid::new(3, vec![1.0, 2.0, 4.0], 1).unwrap_err().to_string(),
            "fluid BPR+: is defined for two queues (throughput-sensitive first, delay-sensitive second), this one has 3"
        );
        assert_eq!(
            BprPlusFluid::new(2, vec![1.0, -4.0], 1).unwrap_err().to_string(),
            "fluid BPR+: `s` of queue 1 must be positive and finite, got -4"
        );
        assert!(BprPlusFluid::new(2, vec![1.0, 4.0], 0).is_err());
        assert!(BprPlusFluid::new(0, vec![], 1).is_err());
        assert!(BprPlusFluid::with_delta(0.0, 1).is_err());
        assert!(BprPlusFluid::with_delta(f64::NAN, 1).is_err());
    }

    /// Eqs. (13)–(17) by hand. δ = 4, C = 8 Mb/s = 1 B/µs. TS: 500 B at
    /// t = 0 and 500 B at 2 ms; DS: 500 B at 3 ms; τ = 4 ms.
    /// B_TS = 1000 B, τ'_TS = 0, I_TS = 500·4 + 500·2 = 3000 B·ms;
    /// B_DS = 500 B, τ'_DS = 3 ms, I_DS = 500 B·ms. So d̄^E_TS = 3 ms,
    /// I_TS/(τ − τ'_TS) = 750 B, d̄^E_DS = 1 ms, I_DS/(τ − τ'_DS) = 500 B.
    /// In B and µs, eq. (17) times A: a = 3000 − 4·1000 = −1000,
    /// b = 750 + 4·500 + 1000 = 3750, c = −750, i.e.
    /// r² − 3.75 r + 0.75 = 0, r_TS = (3.75 − √11.0625)/2 ≈ 0.212 B/µs
    /// (the other root, 3.54, exceeds C). Eqs. (15)–(16) at these rates
    /// give the ratio δ.
    #[test]
    fn hand_checked_rates() {
        let mut f = BprPlusFluid::with_delta(4.0, 8_000_000).unwrap();
        f.on_enqueue(0, 500, Time::ZERO);
        f.on_enqueue(0, 500, Time::from_millis(2));
        f.on_enqueue(1, 500, Time::from_millis(3));
        let r = f.rates_bps(Time::from_millis(4));
        let want = (3.75 - 11.0625f64.sqrt()) / 2.0; // B/µs
        assert!((r[0] / 8e6 - want).abs() < 1e-12, "{r:?} vs {want}");
        assert!((r[0] + r[1] - 8e6).abs() < 1e-6);
        // Eqs. (15) and (16) with these rates (µs, B): ratio δ.
        let (r_ts, r_ds) = (r[0] / 8e6, r[1] / 8e6);
        let d_ts = (1.0 / 1000.0 + 1.0 / (r_ts * 4000.0)) * 3000e3;
        let d_ds = (1.0 / 500.0 + 1.0 / (r_ds * 1000.0)) * 500e3;
        assert!((d_ts / d_ds - 4.0).abs() < 1e-9, "{d_ts} {d_ds}");
    }

    /// The fluid `Q` lies between the heuristic's two readings of eq. (19):
    /// four 500 B packets arrived at 0, 1, 2, 3 ms, τ = 3 ms:
    /// I = 500·(3 + 2 + 1 + 0) = 3000 B·ms, I/(τ − τ') = 1000 B = N L/2,
    /// against (N + 1) L/2 = 1250 and (N − 1) L/2 = 750.
    #[test]
    fn residual_term_is_the_time_averaged_backlog() {
        let mut f = BprPlusFluid::with_delta(4.0, 8_000_000).unwrap();
        for k in 0..4 {
            f.on_enqueue(0, 500, Time::from_millis(k));
        }
        f.advance(Time::from_millis(3));
        let (d, q) = f.d_q(0, f.area_at_mark(0), Time::ZERO, 0.0);
        assert_eq!((d, q), (1.5e6, 1000.0));
        // All arrived at τ: the limit B.
        let mut g = BprPlusFluid::with_delta(4.0, 8_000_000).unwrap();
        g.on_enqueue(1, 300, Time::from_millis(1));
        g.on_enqueue(1, 200, Time::from_millis(1));
        g.advance(Time::from_millis(1));
        assert_eq!(g.d_q(1, g.area_at_mark(1), Time::from_millis(1), 0.0), (0.0, 500.0));
    }

    /// The banked service is ∫ r_TS dτ: against a trapezoid rule of 20 000
    /// steps over a 2 ms piece on which the rate moves, to 10⁻⁶ of it.
    #[test]
    fn banked_service_is_the_integral_of_the_rate() {
        let setup = || {
            let mut f = BprPlusFluid::with_delta(8.0, 10_000_000).unwrap();
            f.on_enqueue(0, 1500, Time::ZERO);
            f.on_enqueue(0, 500, Time::from_micros(700));
            f.on_enqueue(1, 200, Time::from_micros(900));
            f.on_enqueue(1, 1000, Time::from_micros(950));
            f
        };
        let mut f = setup();
        // First decision at 1 ms: heads arrived at ≥ t^d = 0, V = 0; DS's
        // 200 B head beats TS's 1500 B.
        let t1 = Time::from_millis(1);
        assert_eq!(f.select(&[h(1500, 0), h(200, 900)], t1), Some(1));
        f.on_dequeue(1, 200, t1);
        let t2 = Time::from_millis(3);
        f.select(&[h(1500, 0), h(1000, 950)], t2);
        let v = f.virtual_service().to_vec();
        // The reference: the same state, rates sampled finely.
        let g = {
            let mut g = setup();
            g.select(&[h(1500, 0), h(200, 900)], t1);
            g.on_dequeue(1, 200, t1);
            g
        };
        let steps = 20_000;
        let areas = [g.area_at_mark(0), g.area_at_mark(1)];
        let heads = [Time::ZERO, Time::from_micros(950)];
        let span = (t2 - t1).as_nanos() as f64;
        let mut ts = 0.0;
        for k in 0..=steps {
            let w = if k == 0 || k == steps { 0.5 } else { 1.0 };
            ts += w * g.rate_ts(areas, heads, span * k as f64 / steps as f64);
        }
        ts *= span / steps as f64;
        let ds = g.capacity * span - ts;
        assert!((v[0] - ts).abs() < 1e-6 * ts, "{} vs {ts}", v[0]);
        assert!((v[1] - (-200.0 + ds)).abs() < 1e-6 * ds, "{} vs {}", v[1], ds - 200.0);
        // And the rate did move on the piece.
        let (r0, r1) = (g.rate_ts(areas, heads, 0.0), g.rate_ts(areas, heads, span));
        assert!((r0 - r1).abs() > 1e-3 * g.capacity, "{r0} {r1}");
    }

    /// A constant backlog (both queues refilled as they are served) drives
    /// the achieved ratio of mean queueing delays towards δ.
    #[test]
    fn greedy_sources_get_delta() {
        for delta in [2.0, 4.0, 8.0] {
            let c = 10_000_000;
            let mut f = BprPlusFluid::with_delta(delta, c).unwrap();
            let mut queues: [VecDeque<Head>; 2] = [VecDeque::new(), VecDeque::new()];
            let mut now = Time::ZERO;
            let (mut sum, mut n) = ([0.0f64; 2], [0u64; 2]);
            for (q, queue) in queues.iter_mut().enumerate() {
                for _ in 0..50 {
                    f.on_enqueue(q, 500, now);
                    queue.push_back(Head { size: 500, enqueued: now });
                }
            }
            for _ in 0..40_000 {
                let heads = [queues[0].front().copied(), queues[1].front().copied()];
                let q = f.select(&heads, now).unwrap();
                let head = queues[q].pop_front().unwrap();
                f.on_dequeue(q, head.size, now);
                sum[q] += (now - head.enqueued).as_secs_f64();
                n[q] += 1;
                // Each departure is replaced in its own queue.
                f.on_enqueue(q, 500, now);
                queues[q].push_back(Head { size: 500, enqueued: now });
                now += Time::transmission(500, c);
            }
            let ratio = (sum[0] / n[0] as f64) / (sum[1] / n[1] as f64);
            assert!((ratio / delta - 1.0).abs() < 0.02, "δ = {delta}: {ratio}");
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Enqueue(usize, u32),
        Serve,
        Evict(usize),
        Wait(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..2usize, 0..=1500u32).prop_map(|(q, s)| Op::Enqueue(q, s)),
            3 => Just(Op::Serve),
            1 => (0..2usize).prop_map(Op::Evict),
            1 => (0..5_000_000u64).prop_map(Op::Wait),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Work conservation (a backlogged link always sends, only
        /// backlogged queues), rates in [0, C] summing to C while anything
        /// is queued (0 otherwise), the curves' sums matching the queues,
        /// and the same choices from a clone (determinism).
        #[test]
        fn invariants(ops in prop::collection::vec(op(), 0..300), delta in 1.0f64..32.0) {
            let c = 10_000_000u64;
            let mut f = BprPlusFluid::with_delta(delta, c).unwrap();
            let mut twin = f.clone();
            let mut queues: Vec<VecDeque<Head>> = vec![VecDeque::new(); 2];
            let mut now = Time::ZERO;
            for op in &ops {
                match *op {
                    Op::Enqueue(q, size) => {
                        f.on_enqueue(q, size, now);
                        twin.on_enqueue(q, size, now);
                        queues[q].push_back(Head { size, enqueued: now });
                    }
                    Op::Serve => {
                        let heads: Vec<_> = queues.iter().map(|q| q.front().copied()).collect();
                        let got = f.select(&heads, now);
                        prop_assert_eq!(got, twin.select(&heads, now));
                        match got {
                            Some(q) => {
                                let head = queues[q].pop_front();
                                prop_assert!(head.is_some(), "served empty queue {}", q);
                                let size = head.unwrap().size;
                                f.on_dequeue(q, size, now);
                                twin.on_dequeue(q, size, now);
                                now += Time::transmission(size, c);
                            }
                            None => prop_assert!(queues.iter().all(VecDeque::is_empty), "idle while backlogged"),
                        }
                    }
                    Op::Evict(k) => {
                        if let Some(q) = (0..2).map(|j| (k + j) % 2).find(|&j| !queues[j].is_empty()) {
                            let head = queues[q].pop_front().unwrap();
                            f.on_evict(q, head.size, now);
                            twin.on_evict(q, head.size, now);
                        }
                    }
                    Op::Wait(ns) => now += Time::from_nanos(ns),
                }
                f.check_state(&queues).map_err(TestCaseError::fail)?;
                let r = f.rates_bps(now);
                twin.rates_bps(now);
                prop_assert!(r.iter().all(|&x| x.is_finite() && (0.0..=c as f64 * (1.0 + 1e-12)).contains(&x)), "{:?}", r);
                let busy = queues.iter().any(|q| !q.is_empty());
                let want = if busy { c as f64 } else { 0.0 };
                prop_assert!((r[0] + r[1] - want).abs() < 1e-6 * c as f64, "{:?} busy {}", r, busy);
                prop_assert!(f.virtual_service().iter().all(|v| v.is_finite()));
            }
        }
    }
}
