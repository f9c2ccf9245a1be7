//! BPR⁺ — optimized Backlog-Proportional Rate scheduler (heuristic,
//! packetized form).
//!
//! V. Vukadinović, G. Petrović, Lj. Trajković, "BPR+: a packet scheduling
//! algorithm for proportional delay differentiation", YUINFO 2004 (the
//! thesis' ref. 38); V. Vukadinović, thesis 2004, Section 5.2 (fluid server,
//! eqs. 12–17) and Section 5.2.1 (heuristic approximation, eqs. 18–27),
//! pseudocode in Appendix A.
//!
//! ## Rates (eqs. 18–22)
//!
//! Each packet carries its arrival time. For a backlogged queue `i` holding
//! `N_i` packets at `t`:
//!
//! - `D_i = t − (1/N_i) Σ_k t_k`, the average delay its packets have already
//!   experienced (eq. 18);
//! - `Q_i = (1/N_i) Σ_k q_k`, `q_k` the bytes of queue `i` to be served until
//!   packet `k` has left, itself included (Fig. 10; the departure update
//!   `Q −= N·L` of Appendix A), or, with [`ResidualBacklog::BytesAhead`],
//!   only the bytes ahead of it (below);
//! - served at `r_i`, its packets' expected average delay is
//!   `d̄_i = D_i + Q_i / r_i` (eqs. 20–21).
//!
//! Two classes, TS (queue 0) and DS (queue 1) with `d̄_TS / d̄_DS = δ` and
//! `r_TS + r_DS = C`, give the quadratic (22):
//!
//! ```text
//! r_TS² + ((Q_TS + δ Q_DS)/(D_TS − δ D_DS) − C) r_TS − Q_TS C/(D_TS − δ D_DS) = 0
//! ```
//!
//! i.e. `a r² + b r + c = 0` with `a = D_TS − δ D_DS`,
//! `b = Q_TS + δ Q_DS − a C`, `c = −Q_TS C`. `P(0) = c < 0 < P(C) = δ Q_DS C`,
//! so exactly one root lies in `(0, C)`; it is Appendix A's
//! `(−b + √(b² − 4ac)) / 2a` (`−c/b` when `a = 0`), computed in whichever
//! of that form and `2c / (−b − √(b² − 4ac))` does not cancel (the latter
//! for `b ≥ 0`).
//!
//! ## N classes (generalization, not in the thesis)
//!
//! With scheduler differentiation parameters `s_i` (`δ = s_DS / s_TS`), the
//! target is `s_i d̄_i = λ` for every backlogged `i` with `Σ r_i = C`:
//! `r_i = s_i Q_i / (λ − s_i D_i)`, and `Σ_i s_i Q_i / (λ − s_i D_i) = C` has
//! one root `λ > max_i s_i D_i` (the left side falls from +∞ to 0), found by
//! bisection. With two backlogged queues the quadratic above is used.
//!
//! ## Packet choice
//!
//! Rates are computed when the link is free (Appendix A) and drive the
//! virtual service functions of eqs. (23)–(27), shared with BPR (see
//! [`super::bpr`]): the backlogged queue with the smallest `L_i − V_i` is
//! served (a tie to the larger `s_i`: DS for the thesis' pair, as eq. 27
//! says), a lone backlogged queue is served and leaves every `V` at 0.
//!
//! [`Scheduler::service_rates_bps`] reports the rates of the latest
//! decision (`C` for a lone backlogged queue, all 0 when none is; between
//! decisions neither arrivals nor evictions change them).
//!
//! ## Evictions
//!
//! A packet evicted from the head of a queue (PLC, PLR) leaves the sums
//! exactly as a departure does (`N` and `Σ t_k` lose it, `Q −= N·L`: every
//! packet behind it has `L` fewer bytes to wait for), but it was not
//! served: `V_i` does not drop by its size (Appendix D's `getDS()`), `t^d`
//! stays the last decision, and the rates wait for the next decision.
//!
//! ## The residual term `q_k` (eq. 19)
//!
//! The thesis leaves open whether `q_k` counts packet `k` itself. Eq. (19)
//! calls it "the amount of traffic in TS queue that has to be served before
//! the k-th packet", which reads as the bytes ahead of it; Appendix A's
//! departure update `Q −= N·L` (with `N` counted before the departure)
//! holds only if it includes packet `k`. [`ResidualBacklog`] chooses:
//! [`ResidualBacklog::WithOwnPacket`] (the default, Appendix A's reading)
//! or [`ResidualBacklog::BytesAhead`] (eq. 19's wording). With packets of
//! sizes `L_k` the two sums differ by the queue's bytes, `Σ_k L_k`, so one
//! sum (with the packet) is kept and the other reading subtracts the bytes
//! held when the rates are computed.
//!
//! Assumptions: Appendix A's arrival update `QTS += length(pkt)` is read as
//! adding the new packet's `q_k` (the queue's bytes including it), which is
//! what eq. (19) and the departure update `Q −= N·L` require.

use super::bpr::{Arrivals, VirtualService};
use super::{check_heads, check_per_queue, Head, SchedError, Scheduler};
use crate::time::Time;

/// What eq. (19)'s `q_k`, the bytes packet `k` of a queue waits for, counts
/// (thesis Section 5.2.1; the module's "The residual term").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResidualBacklog {
    /// The bytes to be served until packet `k` has left, itself included:
    /// what Appendix A's departure update `Q −= N·L` needs. The default.
    #[default]
    WithOwnPacket,
    /// The bytes ahead of packet `k` only, "the amount of traffic ... that
    /// has to be served before the k-th packet" (eq. 19's wording): a lone
    /// packet has no residual term.
    BytesAhead,
}

/// BPR⁺ over `s.len()` queues on a link of `link_rate_bps`.
#[derive(Clone, Debug)]
pub struct BprPlus {
    /// `s_i`, scheduler differentiation parameters.
    s: Vec<f64>,
    /// What `q_k` counts (eq. 19).
    residual: ResidualBacklog,
    /// `C`, bytes per nanosecond.
    capacity: f64,
    /// Bytes held per queue.
    bytes: Vec<u64>,
    /// `Σ_k t_k` over the packets held (ns).
    sum_arrival: Vec<u128>,
    /// `Σ_k q_k` over the packets held (bytes), `q_k` including packet `k`
    /// whatever `residual` says.
    sum_q: Vec<u128>,
    arrivals: Arrivals,
    /// `r_i`, bytes per nanosecond, from the latest decision.
    rates: Vec<f64>,
    vs: VirtualService,
}

impl BprPlus {
    /// `s[i]`: scheduler differentiation parameter of queue `i` (> 0; the
    /// delay ratio `d_i/d_j` approaches `s_j/s_i`); `link_rate_bps`: `C`
    /// (bits/s, > 0). `q_k` includes packet `k`
    /// ([`ResidualBacklog::WithOwnPacket`]; see [`BprPlus::with_residual`]).
    pub fn new(queues: usize, s: Vec<f64>, link_rate_bps: u64) -> Result<BprPlus, SchedError> {
        BprPlus::with_residual(queues, s, link_rate_bps, ResidualBacklog::default())
    }

    /// As [`BprPlus::new`], with `residual` saying what eq. (19)'s `q_k`
    /// counts.
    pub fn with_residual(
        queues: usize,
        s: Vec<f64>,
        link_rate_bps: u64,
        residual: ResidualBacklog,
    ) -> Result<BprPlus, SchedError> {
        check_per_queue("BPR+", "s", queues, &s)?;
        if link_rate_bps == 0 {
            return Err(SchedError::Zero { scheduler: "BPR+", param: "link_rate_bps", value: 0.0 });
        }
        Ok(BprPlus {
            s,
            residual,
            capacity: link_rate_bps as f64 / 8e9,
            bytes: vec![0; queues],
            sum_arrival: vec![0; queues],
            sum_q: vec![0; queues],
            arrivals: Arrivals::new(queues),
            rates: vec![0.0; queues],
            vs: VirtualService::new(queues),
        })
    }

    /// The thesis' two classes: queue 0 TS, queue 1 DS, `d_TS / d_DS → δ`
    /// (`delta` > 0). Same as `new(2, vec![1.0, delta], link_rate_bps)`.
    pub fn with_delta(delta: f64, link_rate_bps: u64) -> Result<BprPlus, SchedError> {
        if !(delta.is_finite() && delta > 0.0) {
            return Err(SchedError::Zero { scheduler: "BPR+", param: "delta", value: delta });
        }
        BprPlus::new(2, vec![1.0, delta], link_rate_bps)
    }

    fn held(&self, i: usize) -> usize {
        self.arrivals.times[i].len()
    }

    /// `Σ_k q_k` of queue `i` as `residual` reads `q_k`: the bytes ahead of
    /// each packet sum to the sum with the packets less the bytes held.
    #[inline(always)]
    fn residual_sum(&self, i: usize) -> u128 {
        match self.residual {
            ResidualBacklog::WithOwnPacket => self.sum_q[i],
            ResidualBacklog::BytesAhead => self.sum_q[i] - self.bytes[i] as u128,
        }
    }

    /// `(D_i, Q_i)` in ns and bytes for a backlogged queue. Inlined into
    /// the rate computation as it was before `residual` existed (callgrind:
    /// as a call it cost BPR+ a third more instructions there).
    #[inline(always)]
    fn d_q(&self, i: usize, now: Time) -> (f64, f64) {
        let n = self.held(i) as f64;
        let d = now.as_nanos() as f64 - self.sum_arrival[i] as f64 / n;
        (d, self.residual_sum(i) as f64 / n)
    }

    /// Fills `self.rates` for the queues holding packets at `now`
    /// (eq. 22, or the N-class generalization); 0 for the others.
    fn update_rates(&mut self, now: Time) {
        let c = self.capacity;
        self.rates.iter_mut().for_each(|r| *r = 0.0);
        let n = self.s.len();
        let (mut count, mut i, mut j) = (0, 0, 0);
        for k in (0..n).filter(|&k| self.held(k) > 0) {
            match count {
                0 => i = k,
                1 => j = k,
                _ => {}
            }
            count += 1;
        }
        if count == 0 {
            return;
        }
        if count == 1 {
            self.rates[i] = c;
            return;
        }
        if count == 2 {
            // Eq. (22), queue i as TS, j as DS, δ = s_j / s_i.
            let delta = self.s[j] / self.s[i];
            let (d_ts, q_ts) = self.d_q(i, now);
            let (d_ds, q_ds) = self.d_q(j, now);
            let r_ts = quadratic_root(d_ts, q_ts, d_ds, q_ds, delta, c);
            self.rates[i] = r_ts;
            self.rates[j] = c - r_ts;
            return;
        }
        // N classes: Σ s_k Q_k / (λ − s_k D_k) = C, by bisection on λ.
        let (mut lo, mut sum_sq) = (f64::NEG_INFINITY, 0.0);
        for k in (0..n).filter(|&k| self.held(k) > 0) {
            let (d, q) = self.d_q(k, now);
            lo = lo.max(self.s[k] * d);
            sum_sq += self.s[k] * q;
        }
        if sum_sq <= 0.0 {
            // No residual bytes (zero-byte packets, or lone packets with
            // `BytesAhead`): no rate changes any expected delay.
            return;
        }
        let mut hi = lo + sum_sq / c; // there the left side is ≤ C
        let total = |lam: f64| -> f64 {
            (0..n)
                .filter(|&k| self.held(k) > 0)
                .map(|k| {
                    let (d, q) = self.d_q(k, now);
                    self.s[k] * q / (lam - self.s[k] * d)
                })
                .sum()
        };
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if total(mid) > c {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let mut sum = 0.0;
        for k in 0..n {
            if self.held(k) > 0 {
                let (d, q) = self.d_q(k, now);
                self.rates[k] = self.s[k] * q / (hi - self.s[k] * d);
                sum += self.rates[k];
            }
        }
        self.rates.iter_mut().for_each(|r| *r *= c / sum);
    }

    /// The rates BPR⁺ would assign at `now`, bits/s (recomputes them, so
    /// they also become the rates [`Scheduler::service_rates_bps`] reports).
    pub fn rates_bps(&mut self, now: Time) -> Vec<f64> {
        self.update_rates(now);
        self.rates.iter().map(|r| r * 8e9).collect()
    }

    /// `V_i`, bytes.
    pub fn virtual_service(&self) -> &[f64] {
        self.vs.values()
    }

    /// Takes the head of `queue`, `size` bytes, out of the sums (a departure
    /// or an eviction): `N −= 1`, `Σ t_k −= t_head`, `Σ q_k −= N·L`.
    fn remove_head(&mut self, queue: usize, size: u32) {
        let n = self.held(queue) as u128;
        let arrived = self.arrivals.pop("BPR+", queue);
        self.sum_q[queue] -= n * size as u128;
        self.sum_arrival[queue] -= arrived.as_nanos() as u128;
        self.bytes[queue] -= size as u64;
    }
}

/// The root in `(0, C)` of the quadratic (22): `a r² + b r + c = 0` with
/// `a = D_TS − δ D_DS`, `b = Q_TS + δ Q_DS − a C`, `c = −Q_TS C`.
///
/// `2c / (−b − √disc)` when `b ≥ 0` (this covers `a = 0`, where it is
/// `−c/b`), Appendix A's `(−b + √disc) / 2a` when `b < 0` (then `a > 0`):
/// neither subtracts nearly equal numbers.
///
/// `Q_TS = 0` (TS holds no bytes, or with [`ResidualBacklog::BytesAhead`]
/// one packet) makes `c = 0`: the roots are 0 and `−b/a`. For `b < 0`
/// (then `a > 0`: TS's packets have waited more than δ times DS's) Appendix
/// A's form gives `−b/a = C − δ Q_DS / a`, in `(0, C]`, the rate at which
/// DS's expected delay is `D_TS / δ`; otherwise 0, also Appendix A's value
/// (and no `0/0` when `b = 0`).
pub fn quadratic_root(d_ts: f64, q_ts: f64, d_ds: f64, q_ds: f64, delta: f64, cap: f64) -> f64 {
    let a = d_ts - delta * d_ds;
    let b = q_ts + delta * q_ds - a * cap;
    let c = -q_ts * cap;
    if q_ts <= 0.0 && b >= 0.0 {
        return 0.0;
    }
    let root_disc = (b * b - 4.0 * a * c).max(0.0).sqrt();
    let root = if b >= 0.0 { 2.0 * c / (-b - root_disc) } else { (-b + root_disc) / (2.0 * a) };
    root.clamp(0.0, cap)
}

impl Scheduler for BprPlus {
    fn on_enqueue(&mut self, queue: usize, size: u32, now: Time) {
        self.bytes[queue] += size as u64;
        self.sum_arrival[queue] += now.as_nanos() as u128;
        self.sum_q[queue] += self.bytes[queue] as u128;
        self.arrivals.push(queue, now);
    }

    fn select(&mut self, heads: &[Option<Head>], now: Time) -> Option<usize> {
        check_heads("BPR+", heads, self.s.len());
        let backlogged = heads.iter().filter(|h| h.is_some()).count();
        // With fewer than two backlogged queues the rates are trivial (C or
        // 0) and unused by `choose`; computed anyway for `service_rates_bps`.
        self.update_rates(now);
        self.vs.choose(heads, &self.rates, &self.s, backlogged, now)
    }

    fn on_dequeue(&mut self, queue: usize, size: u32, now: Time) {
        self.remove_head(queue, size);
        self.vs.served(queue, size, now);
    }

    /// The sums as after a departure; `V`, `t^d` and the rates untouched.
    fn on_evict(&mut self, queue: usize, size: u32, _now: Time) {
        self.remove_head(queue, size);
    }

    /// The rates of the latest decision.
    fn service_rates_bps(&self, out: &mut [f64]) -> bool {
        super::bpr::write_bps("BPR+", &self.rates, out);
        true
    }
}

#[cfg(test)]
impl BprPlus {
    pub(crate) fn check_state(&self, queues: &[std::collections::VecDeque<Head>]) -> Result<(), String> {
        use super::tests::{bytes, same, times};
        self.arrivals.check("BPR+", queues)?;
        for (i, q) in queues.iter().enumerate() {
            same("BPR+", "bytes", i, self.bytes[i], bytes(q))?;
            let t: u128 = times(q).iter().map(|t| t.as_nanos() as u128).sum();
            same("BPR+", "Σ t_k", i, self.sum_arrival[i], t)?;
            // q_k: the bytes up to and including packet k, head first, and
            // the bytes ahead of it alone.
            let (mut through, mut sum_with, mut sum_ahead) = (0u128, 0u128, 0u128);
            for h in q {
                sum_ahead += through;
                through += h.size as u128;
                sum_with += through;
            }
            same("BPR+", "Σ q_k", i, self.sum_q[i], sum_with)?;
            let reading = match self.residual {
                ResidualBacklog::WithOwnPacket => sum_with,
                ResidualBacklog::BytesAhead => sum_ahead,
            };
            same("BPR+", "Σ q_k as read", i, self.residual_sum(i), reading)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_parameters() {
        assert!(BprPlus::new(2, vec![1.0, f64::NAN], 1).is_err());
        assert!(BprPlus::new(2, vec![1.0, 2.0], 0).is_err());
        assert!(BprPlus::with_delta(0.0, 1).is_err());
    }

    /// δ = 4, C = 8 Mb/s = 10⁶ B/s. TS holds 500 B (arrived t = 0) and 500 B
    /// (t = 2.5 ms), DS 500 B (t = 3 ms); the link is free at t = 4 ms.
    /// D_TS = 4 − (0 + 2.5)/2 = 2.75 ms, Q_TS = (500 + 1000)/2 = 750 B;
    /// D_DS = 1 ms, Q_DS = 500 B.
    /// a = 2.75 − 4·1 = −1.25 ms, b = 750 + 4·500 + 1.25e-3·1e6 = 4000 B,
    /// c = −750·1e6. (22)·(−1/a): r² − 3.2e6 r + 6e11 = 0,
    /// disc = 1.024e13 − 2.4e12 = 7.84e12 = (2.8e6)², r = (3.2e6 ∓ 2.8e6)/2
    /// = 2e5 or 3e6 B/s; the root in (0, C) is r_TS = 2e5 B/s = 1.6 Mb/s,
    /// r_DS = 6.4 Mb/s. Check: d_TS = 2.75 + 750/2e5 s = 6.5 ms,
    /// d_DS = 1 + 500/8e5 s = 1.625 ms, ratio 4.
    #[test]
    fn hand_checked_quadratic_root() {
        let mut b = BprPlus::with_delta(4.0, 8_000_000).unwrap();
        b.on_enqueue(0, 500, Time::ZERO);
        b.on_enqueue(0, 500, Time::from_micros(2500));
        b.on_enqueue(1, 500, Time::from_micros(3000));
        let r = b.rates_bps(Time::from_micros(4000));
        assert!((r[0] - 1.6e6).abs() < 1e-3 && (r[1] - 6.4e6).abs() < 1e-3, "{r:?}");
        // Same root through the free function, in seconds and bytes/s.
        let r_ts = quadratic_root(2.75e-3, 750.0, 1e-3, 500.0, 4.0, 1e6);
        assert!((r_ts - 2e5).abs() < 1e-6, "{r_ts}");
        // a > 0 and a = 0 pick the root in (0, C) too:
        // a = 0: r = −c/b = Q_TS C/(Q_TS + δ Q_DS) = 750e6/2750.
        let r0 = quadratic_root(4e-3, 750.0, 1e-3, 500.0, 4.0, 1e6);
        assert!((r0 - 750e6 / 2750.0).abs() < 1e-6, "{r0}");
        // a > 0 with b = 2750 − 6000 < 0: Appendix A's form.
        let rp = quadratic_root(10e-3, 750.0, 1e-3, 500.0, 4.0, 1e6);
        let (dts, dds) = (10e-3 + 750.0 / rp, 1e-3 + 500.0 / (1e6 - rp));
        assert!(rp > 0.0 && rp < 1e6 && (dts / dds - 4.0).abs() < 1e-9);
        // A TS backlog that has waited very long (b ≪ 0): the delays still
        // come out in the ratio δ (to the rounding of 1e6 − r_TS ≈ 2 in the check).
        let rl = quadratic_root(1e3, 750.0, 1e-3, 500.0, 4.0, 1e6);
        let (dts, dds) = (1e3 + 750.0 / rl, 1e-3 + 500.0 / (1e6 - rl));
        assert!(rl > 0.0 && rl < 1e6 && (dts / dds / 4.0 - 1.0).abs() < 1e-6, "{rl} {}", dts / dds);
        // No TS bytes: no TS rate (and no 0/0).
        assert_eq!(quadratic_root(0.0, 0.0, 0.0, 0.0, 4.0, 1e6), 0.0);
        // No TS bytes (a lone TS packet, bytes ahead), TS has waited 10 ms,
        // DS 1 ms with 500 B: a = 6 ms, b = 2000 − 6000 = −4000 B < 0, the
        // root −b/a = 4000/6e-3 B/s leaves DS 1e6/3 B/s, d_DS = 1 + 1.5 =
        // 2.5 ms = D_TS / 4. Had TS waited only 3 ms (a = −1 ms), no rate.
        let rz = quadratic_root(10e-3, 0.0, 1e-3, 500.0, 4.0, 1e6);
        assert!((rz - 4000.0 / 6e-3).abs() < 1e-6, "{rz}");
        assert!((1e-3 + 500.0 / (1e6 - rz) - 2.5e-3).abs() < 1e-12);
        assert_eq!(quadratic_root(3e-3, 0.0, 1e-3, 500.0, 4.0, 1e6), 0.0);
    }

    /// Q bookkeeping across a departure: after TS's head (500 B) leaves, TS
    /// holds one 500 B packet: Q_TS = 500, D_TS = t − 2.5 ms.
    #[test]
    fn departure_updates_averages() {
        let mut b = BprPlus::with_delta(4.0, 8_000_000).unwrap();
        b.on_enqueue(0, 500, Time::ZERO);
        b.on_enqueue(0, 500, Time::from_micros(2500));
        b.on_enqueue(1, 500, Time::from_micros(3000));
        b.on_dequeue(0, 500, Time::from_micros(3500));
        let (d, q) = b.d_q(0, Time::from_micros(4000));
        assert_eq!((d, q), (1.5e6, 500.0));
    }

    /// TS holds 500 B (t = 0), 300 B (1 ms), 200 B (2 ms): q_k = 500, 800,
    /// 1000, Σ q_k = 2300; DS 100 B (2 ms). Decision at 3 ms: both heads
    /// arrived at ≥ t^d = 0, V = 0, L − V: DS 100 < TS 500 → DS; V_DS = −100.
    /// Evicting TS's head at 3.5 ms (N = 3, L = 500): Σ q_k −= 1500 → 800 =
    /// 300 + 500, the q_k of the two left; Σ t_k = 3 ms. At 4 ms:
    /// D_TS = 4 − 3/2 = 2.5 ms, Q_TS = 400 B. V, t^d and the rates of the
    /// decision are left alone.
    #[test]
    fn eviction_updates_averages_but_not_v() {
        let mut b = BprPlus::with_delta(4.0, 8_000_000).unwrap();
        b.on_enqueue(0, 500, Time::ZERO);
        b.on_enqueue(0, 300, Time::from_millis(1));
        b.on_enqueue(0, 200, Time::from_millis(2));
        b.on_enqueue(1, 100, Time::from_millis(2));
        assert_eq!(b.sum_q[0], 2300);
        let heads =
            [Some(Head { size: 500, enqueued: Time::ZERO }), Some(Head { size: 100, enqueued: Time::from_millis(2) })];
        let t = Time::from_millis(3);
        assert_eq!(b.select(&heads, t), Some(1));
        b.on_dequeue(1, 100, t);
        assert_eq!(b.virtual_service(), &[0.0, -100.0]);
        let mut rates = [0.0; 2];
        assert!(b.service_rates_bps(&mut rates));
        assert!(rates[0] > 0.0 && rates[1] > 0.0, "{rates:?}");

        b.on_evict(0, 500, Time::from_micros(3500));
        assert_eq!((b.held(0), b.bytes[0], b.sum_q[0]), (2, 500, 800));
        assert_eq!(b.d_q(0, Time::from_millis(4)), (2.5e6, 400.0));
        assert_eq!(b.virtual_service(), &[0.0, -100.0]);
        assert_eq!(b.vs.last_decision(), t);
        let mut after = [0.0; 2];
        assert!(b.service_rates_bps(&mut after));
        assert_eq!(after, rates);
        // Evicting the rest empties every sum.
        b.on_evict(0, 300, Time::from_millis(4));
        b.on_evict(0, 200, Time::from_millis(4));
        assert_eq!((b.held(0), b.bytes[0], b.sum_q[0], b.sum_arrival[0]), (0, 0, 0, 0));
    }

    /// The rates in force are those of the latest decision: 0 before any,
    /// the quadratic's with two backlogged queues (the hand-checked case
    /// above: 1.6 / 6.4 Mb/s; the decision is DS's, a tie at L − V = 500
    /// going to DS as eq. 27 says), unchanged by an eviction, C for a lone
    /// queue.
    #[test]
    fn service_rates_follow_decisions() {
        let mut b = BprPlus::with_delta(4.0, 8_000_000).unwrap();
        let mut r = [f64::NAN; 2];
        assert!(b.service_rates_bps(&mut r));
        assert_eq!(r, [0.0, 0.0]);
        b.on_enqueue(0, 500, Time::ZERO);
        b.on_enqueue(0, 500, Time::from_micros(2500));
        b.on_enqueue(1, 500, Time::from_micros(3000));
        let h = |at: u64| Some(Head { size: 500, enqueued: Time::from_micros(at) });
        let now = Time::from_micros(4000);
        assert_eq!(b.select(&[h(0), h(3000)], now), Some(1));
        assert!(b.service_rates_bps(&mut r));
        assert!((r[0] - 1.6e6).abs() < 1e-3 && (r[1] - 6.4e6).abs() < 1e-3, "{r:?}");
        b.on_evict(0, 500, now);
        assert!(b.service_rates_bps(&mut r));
        assert!((r[0] - 1.6e6).abs() < 1e-3 && (r[1] - 6.4e6).abs() < 1e-3, "{r:?}");
        b.on_dequeue(1, 500, now);
        assert_eq!(b.select(&[h(2500), None], now), Some(0));
        assert!(b.service_rates_bps(&mut r));
        assert_eq!(r, [8e6, 0.0]);
    }

    /// Eq. (19)'s two readings on one queue: TS holds 500 B, 300 B, 200 B,
    /// so `q_k` is 500, 800, 1000 with each packet (Q = 2300/3) and 0, 500,
    /// 800 with the bytes ahead alone (Q = 1300/3); after the head leaves,
    /// 300 and 500 against 0 and 300.
    #[test]
    fn residual_readings_count_or_skip_the_packet_itself() {
        for (residual, before, after) in
            [(ResidualBacklog::WithOwnPacket, 2300.0, 800.0), (ResidualBacklog::BytesAhead, 1300.0, 300.0)]
        {
            let mut b = BprPlus::with_residual(2, vec![1.0, 4.0], 8_000_000, residual).unwrap();
            b.on_enqueue(0, 500, Time::ZERO);
            b.on_enqueue(0, 300, Time::ZERO);
            b.on_enqueue(0, 200, Time::ZERO);
            assert_eq!(b.d_q(0, Time::ZERO).1, before / 3.0, "{residual:?}");
            b.on_dequeue(0, 500, Time::ZERO);
            assert_eq!(b.d_q(0, Time::ZERO).1, after / 2.0, "{residual:?}");
        }
    }

    /// The packet's own bytes change the choice. δ = 4, C = 10⁶ B/s =
    /// 1000 B/ms. At t = 0 TS receives one 500 B packet, DS two. Decision at
    /// 1 ms: both heads arrived at or after t^d = 0, V = 0, a tie at
    /// L − V = 500 goes to DS (eq. 27); V_DS = −500. Next decision at
    /// 1.5 ms, each queue holding one packet that arrived before t^d = 1 ms,
    /// D_TS = D_DS = 1.5 ms:
    ///
    /// - with the packet (Q_TS = Q_DS = 500 B): a = 1.5 − 4·1.5 = −4.5 ms,
    ///   b = 500 + 2000 + 4500 = 7000 B, c = −5·10⁵ B²/ms,
    ///   b² − 4ac = 4·10⁷, r_TS = 2c/(−b − √(b² − 4ac)) = 1000/(7 + 2√10)
    ///   ≈ 75.05 B/ms; V_TS = 0.5 r_TS ≈ 37.52 B,
    ///   V_DS = −500 + 0.5 (1000 − r_TS) = −V_TS: L − V is 462.48 for TS
    ///   against 537.52 for DS, and TS is served;
    /// - bytes ahead (Q_TS = Q_DS = 0): no TS rate (eq. 22 has no root
    ///   other than 0 with Q_TS = 0), r_DS = C; V_TS = 0,
    ///   V_DS = −500 + 500 = 0: a tie at 500 again, and DS is served
    ///   again while TS's lone packet waits.
    #[test]
    fn own_packet_bytes_decide_between_lone_packets() {
        let at = |ms: f64| Time::from_micros((ms * 1000.0) as u64);
        let head = Some(Head { size: 500, enqueued: Time::ZERO });
        let r_ts = 1000.0 / (7.0 + 2.0 * 10f64.sqrt()); // B/ms
        for (residual, served, rates_bps) in [
            (ResidualBacklog::WithOwnPacket, 0, [r_ts * 8e3, 8e6 - r_ts * 8e3]),
            (ResidualBacklog::BytesAhead, 1, [0.0, 8e6]),
        ] {
            let mut b = BprPlus::with_residual(2, vec![1.0, 4.0], 8_000_000, residual).unwrap();
            b.on_enqueue(0, 500, Time::ZERO);
            b.on_enqueue(1, 500, Time::ZERO);
            b.on_enqueue(1, 500, Time::ZERO);
            assert_eq!(b.select(&[head, head], at(1.0)), Some(1), "{residual:?}");
            b.on_dequeue(1, 500, at(1.0));
            assert_eq!(b.virtual_service(), &[0.0, -500.0]);
            assert_eq!(b.select(&[head, head], at(1.5)), Some(served), "{residual:?}");
            let mut r = [0.0; 2];
            assert!(b.service_rates_bps(&mut r));
            assert!((r[0] - rates_bps[0]).abs() < 1e-3 && (r[1] - rates_bps[1]).abs() < 1e-3, "{residual:?}: {r:?}");
            let v = b.virtual_service();
            let v_ts = 0.5 * rates_bps[0] / 8e3;
            assert!((v[0] - v_ts).abs() < 1e-6 && (v[1] + v_ts).abs() < 1e-6, "{residual:?}: {v:?}");
        }
    }

    /// The N-class solver gives equal `s_i d̄_i` and rates summing to C; with
    /// two classes it agrees with the quadratic.
    #[test]
    fn n_class_rates_equalize_normalized_delays() {
        let mut b = BprPlus::new(3, vec![1.0, 2.0, 4.0], 8_000_000).unwrap();
        b.on_enqueue(0, 1500, Time::ZERO);
        b.on_enqueue(0, 500, Time::from_micros(1000));
        b.on_enqueue(1, 1000, Time::from_micros(500));
        b.on_enqueue(2, 200, Time::from_micros(2000));
        let now = Time::from_micros(3000);
        let r = b.rates_bps(now);
        let sum: f64 = r.iter().sum();
        assert!((sum - 8e6).abs() < 1e-3);
        let norm: Vec<f64> = (0..3)
            .map(|i| {
                let (d, q) = b.d_q(i, now);
                b.s[i] * (d + q / (r[i] / 8e9))
            })
            .collect();
        assert!((norm[0] / norm[1] - 1.0).abs() < 1e-9 && (norm[0] / norm[2] - 1.0).abs() < 1e-9);
    }
}
