//! Packet Loss Controller (PLC).
//!
//! Source: V. Vukadinović, "Delay and throughput differentiation mechanisms
//! for non-elevated services", thesis, 2004 — Section 6 (eqs. 29–59) and
//! Appendix D (the ns-2 `Queue/PROBE` code, read for semantics, not copied).
//!
//! PLC sits behind a RED whose average is over the *total* backlog of a
//! throughput-sensitive (TCP) queue and a delay-sensitive (UDP) queue served
//! by BPR. BPR lengthens TCP's queueing delay (and so its round-trip time);
//! PLC compensates by lowering TCP's loss probability to `p_tcp = σ·p`
//! (eq. 29), `p` being RED's, and drops queued UDP bytes instead, so that the
//! buffer drops as much as it would without PLC.
//!
//! This module is the decision and its bookkeeping only; the buffer that
//! holds the two queues asks it once per arrival, after RED has judged the
//! arrival against the total average.
//!
//! # σ (the loss differentiation parameter)
//!
//! With `C = r_tcp + r_udp` (BPR is work-conserving, eq. 31) and
//!
//! - `η = (r_tcp + r_udp/δ)/C` (eq. 41),
//! - `ξ = p_max·q_min/(q_max − q_min)` (eq. 50), `γ = p/(p + ξ)` (after eq. 51),
//! - `x = a/b` (after eq. 36), `a`, `b` the exponents of the empirical TCP
//!   model `T ∼ 1/(R^a·p^b)` (eq. 30), fitted in Appendix B (eq. 60) as
//!   `a = 0.9007`, `b = 0.7260`, so `x = 1.2406` by default,
//!
//! PLC uses, by RED's operating region (Sections 6.1–6.3):
//!
//! - no-loss region (RED admits): `σ` is irrelevant (Section 6.1);
//! - early-drop region: `σ₀ = (1 + (1 + γx)·r_tcp/r_udp) / (η^−x + (1 + γx)·r_tcp/r_udp)` (eq. 56);
//! - forced-drop region: `σ₀ = η^x` (eq. 59).
//!
//! With `r_udp = 0` (no UDP backlog, nothing to evict) `σ = 1`, as in the
//! ns-2 code.
//!
//! # Decision and credits
//!
//! For an arrival RED admits, PLC admits. For a UDP arrival RED drops, PLC
//! drops. For a TCP arrival of `s` bytes RED drops (early, forced or on
//! overflow) — "drops the packet with probability σ; otherwise … it is admitted
//! to the TCP queue … and a packet from the UDP queue is dropped instead"
//! (Section 6) — PLC replaces the coin by a deterministic credit, as the
//! ns-2 code does:
//!
//! 1. `credit ← credit + (1 − σ)·s` (bytes; ns-2 counts `1 − σ` in packets);
//! 2. if `credit ≥ s` and the UDP queue holds at least the bytes to evict
//!    (below), the TCP packet is *rescued*: `credit ← credit − s`, and PLC
//!    answers [`PlcDecision::AdmitAndEvict`]; otherwise it is dropped with
//!    RED's reason (and the credit is kept: "if UDP queue is empty, the TCP
//!    packet has to be dropped").
//!
//! Over many marked TCP arrivals the rescued bytes are `(1 − σ)` of the
//! marked ones, so TCP's byte loss is `σ·p`.
//!
//! **Eviction.** The buffer evicts whole UDP packets (ns-2: from the head of
//! the UDP queue) until at least `udp_bytes` are gone, drops them with reason
//! [`DropReason::Eviction`], and reports the bytes with [`Plc::on_evicted`].
//! PLC asks for `udp_bytes = s − surplus`, `surplus = evicted − rescued ≥ 0`
//! being the bytes earlier evictions overshot; so at any time
//! `0 ≤ evicted − rescued < ` one UDP packet (see `must_free_bytes` in
//! [`PlcArrival`] for the one exception: a rescue at the hard limit must
//! free room, and may add to the surplus), and the bytes dropped equal
//! those RED would have dropped without PLC up to less than one UDP packet —
//! exactly, in bytes and in packets, when all packets have one size (the
//! thesis' experiments: 500 bytes). The thesis states the invariant in
//! packets ("total number of dropped packets remains the same", Section 6);
//! ns-2 evicts bytes.
//!
//! # Departures and readings (see also `docs/mechanisms/plc.md`)
//!
//! - ns-2's code sets `x = 2` (it squares `η` and uses `1 + 2γ`), the
//!   square-root law's `a/b = 1/0.5`, as does Appendix C's proof of the
//!   bound (53) (eqs. 63–64), where the text derives `x = a/b` from the
//!   empirical model; we follow the text and make `x` a parameter.
//! - ns-2 evaluates eq. (56) with `p = 1` for forced drops; the text says
//!   eq. (59), which we follow.
//! - ns-2 also runs the credit for UDP arrivals RED drops (and would then
//!   enqueue the UDP packet in the TCP queue); the text applies PLC to TCP
//!   packets (eq. 29), which we follow: marked UDP arrivals are dropped and
//!   leave the credit alone.
//! - Overflow drops (the hard limit) are in the forced region, as in ns-2
//!   (`droptype = DTYPE_FORCED` when `qlen >= qlim`); a rescue there evicts
//!   at least what brings the buffer below the limit (`must_free_bytes`).
//! - With gentle RED the band `max_th ≤ avg < 2·max_th` gives probabilistic
//!   drops. The thesis' RED (eq. 34) is not gentle and names its regions by
//!   the average, so an average at or above `q_max` is its forced-drop
//!   region: [`RedVerdict::from_red`] passes those drops as
//!   [`RedVerdict::GentleDrop`], σ is eq. (59)'s, and the drop, if PLC makes
//!   it, keeps RED's early reason.
//! - ns-2 charges `⌊evicted/s⌋` packets of credit per rescue and can evict
//!   UDP packets yet drop the TCP packet when the UDP queue runs dry; here
//!   the credit pays exactly `s` per rescue, the overshoot is carried as
//!   surplus, and nothing is evicted unless the rescue succeeds.

use crate::aqm::red::Red;
use crate::packet::DropReason;

/// The thesis' fitted exponent of the round-trip time, `a` (Appendix B,
/// eq. 60; 95% CI [0.8874, 0.9140]). Same value as `phb_models`'
/// `EmpiricalModel::THESIS`.
pub const THESIS_A: f64 = 0.9007;
/// The thesis' fitted exponent of the loss probability, `b` (Appendix B,
/// eq. 60; 95% CI [0.7145, 0.7375]).
pub const THESIS_B: f64 = 0.7260;

/// Which of PLC's two queues a packet belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlcClass {
    /// Throughput-sensitive (TCP): PLC lowers its loss.
    Tcp,
    /// Delay-sensitive (UDP): its queued bytes pay for rescued TCP packets.
    Udp,
}

/// RED's judgement of an arrival against the total average.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RedVerdict {
    /// No drop (the no-loss region, or RED's coin said admit).
    Admit,
    /// A probabilistic drop below `max_th` (the thesis' early-drop region);
    /// `p` is RED's drop probability `H(q̄)` at the current average, before
    /// count spacing (`p_b`), as ns-2 passes it.
    EarlyDrop { p: f64 },
    /// A probabilistic drop of gentle RED's band `max_th ≤ q̄ < 2·max_th`:
    /// dropped for RED's early reason, but the average is in the thesis'
    /// forced-drop region (`q̄ ≥ q_max`, Section 6.3).
    GentleDrop,
    /// A drop at or above the forced threshold.
    ForcedDrop,
    /// A drop at the hard limit.
    Overflow,
}

impl RedVerdict {
    /// From [`Red::on_arrival`]'s answer and `red` after that arrival (its
    /// average and `p_b` there).
    ///
    /// Panics on a reason RED never gives.
    pub fn from_red(verdict: Option<DropReason>, red: &Red) -> RedVerdict {
        match verdict {
            None => RedVerdict::Admit,
            Some(DropReason::EarlyDrop) if red.avg_at_or_above_max_th() => RedVerdict::GentleDrop,
            Some(DropReason::EarlyDrop) => RedVerdict::EarlyDrop { p: red.drop_probability(red.avg()) },
            Some(DropReason::ForcedDrop) => RedVerdict::ForcedDrop,
            Some(DropReason::Overflow) => RedVerdict::Overflow,
            Some(other) => panic!("PLC: RED does not drop for {other:?}"),
        }
    }

    /// The reason RED would drop for, if it would.
    pub fn reason(self) -> Option<DropReason> {
        match self {
            RedVerdict::Admit => None,
            RedVerdict::EarlyDrop { .. } | RedVerdict::GentleDrop => Some(DropReason::EarlyDrop),
            RedVerdict::ForcedDrop => Some(DropReason::ForcedDrop),
            RedVerdict::Overflow => Some(DropReason::Overflow),
        }
    }
}

/// PLC's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlcParams {
    /// BPR's delay differentiation parameter `δ ≥ 1` (eq. 31).
    pub delta: f64,
    /// `x = a/b` of the empirical TCP model (eq. 36).
    pub x: f64,
    /// `ξ = p_max·q_min/(q_max − q_min)` of the RED in front (eq. 50).
    pub xi: f64,
}

impl PlcParams {
    /// The thesis' `x = a/b = 0.9007/0.7260 = 1.2406`.
    pub const DEFAULT_X: f64 = THESIS_A / THESIS_B;

    /// Parameters for a RED with thresholds `min_th < max_th` and `max_p`
    /// (the `q_min`, `q_max`, `p_max` of eq. 34; the unit cancels), with the
    /// default `x`.
    pub fn for_red(delta: f64, min_th: f64, max_th: f64, max_p: f64) -> PlcParams {
        PlcParams { delta, x: Self::DEFAULT_X, xi: Self::xi(min_th, max_th, max_p) }
    }

    /// `ξ = p_max·q_min/(q_max − q_min)` (eq. 50). With an Adaptive RED,
    /// recompute it when `max_p` changes (ns-2 uses `cur_max_p`).
    pub fn xi(min_th: f64, max_th: f64, max_p: f64) -> f64 {
        max_p * min_th / (max_th - min_th)
    }

    /// Checks `δ ≥ 1`, `x > 0`, `ξ ≥ 0`, all finite.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.delta >= 1.0 && self.delta.is_finite()) {
            return Err(format!("PLC: delta must be finite and >= 1, got {}", self.delta));
        }
        if !(self.x > 0.0 && self.x.is_finite()) {
            return Err(format!("PLC: x = a/b must be finite and > 0, got {}", self.x));
        }
        if !(self.xi >= 0.0 && self.xi.is_finite()) {
            return Err(format!("PLC: xi must be finite and >= 0, got {}", self.xi));
        }
        Ok(())
    }
}

/// What PLC is told about one arrival.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlcArrival {
    pub class: PlcClass,
    /// Size of the arriving packet, bytes.
    pub size: u32,
    /// RED's judgement against the total average.
    pub red: RedVerdict,
    /// BPR's current service rates (any one unit, e.g. bit/s), `≥ 0`.
    pub r_tcp: f64,
    pub r_udp: f64,
    /// Bytes queued in the UDP queue, all evictable.
    pub udp_backlog_bytes: u64,
    /// Bytes the buffer must free to admit the arrival: 0 when RED's
    /// verdict is not [`RedVerdict::Overflow`]; at the hard limit (the
    /// buffer already holds it, ns-2's rule, [`crate::aqm::LimitRule::Ns2`])
    /// with a byte limit `bytes − limit + 1`, with a packet limit 1 (any
    /// evicted packet frees a slot). A rescue evicts at least this much even
    /// when the surplus would cover the arrival.
    pub must_free_bytes: u64,
}

/// PLC's answer for one arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlcDecision {
    /// Enqueue the arrival.
    Admit,
    /// Drop the arrival, for RED's reason.
    Drop(DropReason),
    /// A TCP arrival RED wanted to drop is rescued: enqueue it, and first
    /// evict whole UDP packets until at least `udp_bytes` are gone (0 when
    /// earlier evictions overshot enough), then report them with
    /// [`Plc::on_evicted`].
    AdmitAndEvict { udp_bytes: u64 },
}

/// PLC's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlcStats {
    /// TCP arrivals RED wanted to drop, and their bytes.
    pub tcp_marked: u64,
    pub tcp_marked_bytes: u64,
    /// Of those, rescued, and their bytes.
    pub tcp_rescued: u64,
    pub tcp_rescued_bytes: u64,
    /// UDP arrivals RED dropped (PLC passed the drop on).
    pub udp_marked: u64,
    pub udp_marked_bytes: u64,
    /// UDP packets and bytes evicted to pay for rescues.
    pub evicted: u64,
    pub evicted_bytes: u64,
}

/// The Packet Loss Controller of one RED buffer.
#[derive(Clone, Debug)]
pub struct Plc {
    params: PlcParams,
    /// Rescue budget, bytes.
    credit: f64,
    /// Bytes an answered eviction still has to report.
    pending: Option<u64>,
    /// The σ of the last marked TCP arrival (for tracing).
    last_sigma: f64,
    stats: PlcStats,
}

impl Plc {
    /// Panics if the parameters do not validate (check them first).
    pub fn new(params: PlcParams) -> Plc {
        if let Err(e) = params.validate() {
            panic!("{e}");
        }
        Plc { params, credit: 0.0, pending: None, last_sigma: 1.0, stats: PlcStats::default() }
    }

    pub fn params(&self) -> &PlcParams {
        &self.params
    }

    pub fn stats(&self) -> &PlcStats {
        &self.stats
    }

    /// The rescue budget, bytes.
    pub fn credit(&self) -> f64 {
        self.credit
    }

    /// The σ used for the last TCP arrival RED wanted to drop.
    pub fn last_sigma(&self) -> f64 {
        self.last_sigma
    }

    /// `evicted − rescued` bytes so far (`≥ 0`, below one UDP packet).
    pub fn surplus_bytes(&self) -> u64 {
        self.stats.evicted_bytes - self.stats.tcp_rescued_bytes.min(self.stats.evicted_bytes)
    }

    /// `η = (r_tcp + r_udp/δ)/C`, `C = r_tcp + r_udp` (eq. 41).
    pub fn eta(&self, r_tcp: f64, r_udp: f64) -> f64 {
        (r_tcp + r_udp / self.params.delta) / (r_tcp + r_udp)
    }

    /// σ for RED's verdict and BPR's rates: eq. (56) for early drops, eq.
    /// (59) for gentle-band, forced and overflow drops (the average at or
    /// above `q_max`), 1 when RED admits (Section 6.1) or `r_udp = 0`.
    pub fn sigma(&self, red: RedVerdict, r_tcp: f64, r_udp: f64) -> f64 {
        assert!(
            r_tcp >= 0.0 && r_udp >= 0.0 && r_tcp.is_finite() && r_udp.is_finite(),
            "PLC: rates must be finite and >= 0, got r_tcp = {r_tcp}, r_udp = {r_udp}"
        );
        if r_udp <= 0.0 {
            return 1.0;
        }
        let x = self.params.x;
        let eta_x = self.eta(r_tcp, r_udp).powf(x);
        let sigma = match red {
            RedVerdict::Admit => 1.0,
            RedVerdict::EarlyDrop { p } => {
                let gamma = if p > 0.0 { p / (p + self.params.xi) } else { 0.0 };
                let k = (1.0 + gamma * x) * r_tcp / r_udp;
                (1.0 + k) / (1.0 / eta_x + k)
            }
            RedVerdict::GentleDrop | RedVerdict::ForcedDrop | RedVerdict::Overflow => eta_x,
        };
        sigma.clamp(0.0, 1.0)
    }

    /// PLC's decision for one arrival (see the module docs). After an
    /// [`PlcDecision::AdmitAndEvict`], call [`Plc::on_evicted`] before the
    /// next arrival.
    pub fn decide(&mut self, a: PlcArrival) -> PlcDecision {
        assert!(self.pending.is_none(), "PLC: the last eviction was not reported");
        let Some(reason) = a.red.reason() else {
            return PlcDecision::Admit;
        };
        let size = a.size as u64;
        if a.class == PlcClass::Udp {
            self.stats.udp_marked += 1;
            self.stats.udp_marked_bytes += size;
            return PlcDecision::Drop(reason);
        }
        self.stats.tcp_marked += 1;
        self.stats.tcp_marked_bytes += size;
        let sigma = self.sigma(a.red, a.r_tcp, a.r_udp);
        self.last_sigma = sigma;
        self.credit += (1.0 - sigma) * a.size as f64;
        if self.credit < a.size as f64 {
            return PlcDecision::Drop(reason);
        }
        let need = size.saturating_sub(self.surplus_bytes()).max(a.must_free_bytes);
        if a.udp_backlog_bytes < need {
            return PlcDecision::Drop(reason);
        }
        self.credit -= a.size as f64;
        self.stats.tcp_rescued += 1;
        self.stats.tcp_rescued_bytes += size;
        // With `need = 0` (paid by an earlier overshoot) no report is due;
        // reporting `(0, 0)` is harmless.
        self.pending = (need > 0).then_some(need);
        PlcDecision::AdmitAndEvict { udp_bytes: need }
    }

    /// The buffer evicted `pkts` UDP packets of `bytes` bytes in all for the
    /// last [`PlcDecision::AdmitAndEvict`]; `bytes` must reach what was asked.
    pub fn on_evicted(&mut self, pkts: u64, bytes: u64) {
        let asked = self.pending.take().unwrap_or(0);
        assert!(bytes >= asked, "PLC: asked to evict {asked} bytes, {bytes} evicted");
        self.stats.evicted += pkts;
        self.stats.evicted_bytes += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::VecDeque;

    /// The thesis' Section 7 RED: q_min 60, q_max 180, p_max 0.1 → ξ = 0.05.
    fn thesis(delta: f64, x: f64) -> Plc {
        Plc::new(PlcParams { x, ..PlcParams::for_red(delta, 60.0, 180.0, 0.1) })
    }

    #[test]
    fn default_x_and_xi() {
        assert!((PlcParams::DEFAULT_X - 1.240_633_608_8).abs() < 1e-9);
        assert!((PlcParams::xi(60.0, 180.0, 0.1) - 0.05).abs() < 1e-15);
        // The rule of thumb q_max = 3·q_min gives ξ = p_max/2 (after eq. 51).
        assert!((PlcParams::xi(5.0, 15.0, 0.1) - 0.05).abs() < 1e-15);
    }

    #[test]
    fn sigma_by_hand_in_both_regions() {
        // r_tcp = 6, r_udp = 4 (Mb/s), δ = 8: C = 10,
        // η = (6 + 4/8)/10 = 0.65 (eq. 41); r_tcp/r_udp = 1.5.
        // Early drop at avg = 120 packets: p = 0.1·60/120 = 0.05,
        // γ = 0.05/(0.05 + 0.05) = 0.5.
        let early = RedVerdict::EarlyDrop { p: 0.05 };
        let (rt, ru) = (6e6, 4e6);

        // x = 2 (ns-2's value), all by hand:
        //   η^x = 0.4225, η^−x = 2.366864, (1 + γx)·1.5 = 3,
        //   σ₀ = (1 + 3)/(2.366864 + 3) = 0.745314 (eq. 56);
        //   forced: σ₀ = η^x = 0.4225 (eq. 59).
        let plc = thesis(8.0, 2.0);
        assert!((plc.eta(rt, ru) - 0.65).abs() < 1e-12);
        assert!((plc.sigma(early, rt, ru) - 4.0 / (1.0 / 0.4225 + 3.0)).abs() < 1e-12);
        assert!((plc.sigma(early, rt, ru) - 0.745_314).abs() < 1e-6);
        assert!((plc.sigma(RedVerdict::ForcedDrop, rt, ru) - 0.4225).abs() < 1e-12);

        // x = a/b = 1.240634 (default):
        //   η^x = exp(1.240634·ln 0.65) = exp(−0.534442) = 0.585995,
        //   η^−x = 1.706499, (1 + 0.5·1.240634)·1.5 = 2.430475,
        //   σ₀ = 3.430475/(1.706499 + 2.430475) = 0.829223 (eq. 56);
        //   forced: σ₀ = η^x = 0.585995 (eq. 59).
        let plc = thesis(8.0, PlcParams::DEFAULT_X);
        assert!((plc.sigma(early, rt, ru) - 0.829_223).abs() < 1e-6);
        assert!((plc.sigma(RedVerdict::ForcedDrop, rt, ru) - 0.585_995).abs() < 1e-6);
        assert_eq!(plc.sigma(RedVerdict::Overflow, rt, ru), plc.sigma(RedVerdict::ForcedDrop, rt, ru));

        // (56) is the exact root of the linearised (55):
        // σ = (1 + (r_tcp/r_udp)(1 + γx)(1 − σ))·η^x.
        let s = plc.sigma(early, rt, ru);
        let rhs = (1.0 + 1.5 * (1.0 + 0.5 * PlcParams::DEFAULT_X) * (1.0 - s)) * 0.65f64.powf(PlcParams::DEFAULT_X);
        assert!((s - rhs).abs() < 1e-12);
    }

    /// The region is the average's (Sections 6.2–6.3): a gentle RED's
    /// early drop at avg = 200 ≥ q_max = 180 is in the forced-drop region,
    /// σ = η^x (eq. 59), and keeps RED's early reason.
    #[test]
    fn gentle_band_drops_take_the_forced_region_sigma() {
        use crate::aqm::red::RedParams;
        use crate::aqm::Limit;
        use crate::time::Time;
        let params = RedParams {
            min_th: 60.0,
            max_th: 180.0,
            w_q: 1.0,
            max_p: 0.1,
            gentle: true,
            limit: Limit::Packets(1000),
            ..RedParams::default()
        };
        let mut red = Red::new(params, 10_000_000, Rng::derive(0, "red"));
        red.on_arrival(200, 100_000, 500, Time::ZERO);
        let gentle = RedVerdict::from_red(Some(DropReason::EarlyDrop), &red);
        assert_eq!(gentle, RedVerdict::GentleDrop);
        assert_eq!(gentle.reason(), Some(DropReason::EarlyDrop));
        let plc = thesis(8.0, PlcParams::DEFAULT_X);
        assert_eq!(plc.sigma(gentle, 6e6, 4e6), plc.sigma(RedVerdict::ForcedDrop, 6e6, 4e6));
    }

    #[test]
    fn sigma_limits() {
        let plc = thesis(8.0, PlcParams::DEFAULT_X);
        // δ = 1: η = 1, no delay differentiation, no compensation.
        let flat = thesis(1.0, PlcParams::DEFAULT_X);
        assert!((flat.sigma(RedVerdict::EarlyDrop { p: 0.05 }, 6.0, 4.0) - 1.0).abs() < 1e-12);
        assert!((flat.sigma(RedVerdict::ForcedDrop, 6.0, 4.0) - 1.0).abs() < 1e-12);
        // No UDP service: nothing to evict, σ = 1 (as ns-2).
        assert_eq!(plc.sigma(RedVerdict::ForcedDrop, 10.0, 0.0), 1.0);
        // The no-loss region: σ irrelevant, reported as 1.
        assert_eq!(plc.sigma(RedVerdict::Admit, 6.0, 4.0), 1.0);
        // p → 0 in the early region: γ = 0, σ₀ = (1 + ρ)/(η^−x + ρ) ≥ η^x.
        let s0 = plc.sigma(RedVerdict::EarlyDrop { p: 0.0 }, 6.0, 4.0);
        assert!((s0 - 2.5 / (0.65f64.powf(-PlcParams::DEFAULT_X) + 1.5)).abs() < 1e-12);
        assert!(s0 > plc.sigma(RedVerdict::ForcedDrop, 6.0, 4.0));
    }

    #[test]
    fn admits_what_red_admits_and_drops_marked_udp() {
        let mut plc = thesis(8.0, 2.0);
        let base = PlcArrival {
            class: PlcClass::Tcp,
            size: 500,
            red: RedVerdict::Admit,
            r_tcp: 6.0,
            r_udp: 4.0,
            udp_backlog_bytes: 10_000,
            must_free_bytes: 0,
        };
        assert_eq!(plc.decide(base), PlcDecision::Admit);
        assert_eq!(plc.decide(PlcArrival { class: PlcClass::Udp, ..base }), PlcDecision::Admit);
        let udp_forced = PlcArrival { class: PlcClass::Udp, red: RedVerdict::ForcedDrop, ..base };
        assert_eq!(plc.decide(udp_forced), PlcDecision::Drop(DropReason::ForcedDrop));
        assert_eq!(plc.credit(), 0.0, "marked UDP arrivals leave the credit alone");
        assert_eq!(plc.stats().udp_marked, 1);
    }

    #[test]
    fn credits_rescue_tcp_and_evict_udp() {
        // Forced region, x = 2, δ = 8, rates 6/4: σ = 0.4225, so each marked
        // 500-byte TCP packet adds 0.5775·500 = 288.75 bytes of credit.
        let mut plc = thesis(8.0, 2.0);
        let tcp = PlcArrival {
            class: PlcClass::Tcp,
            size: 500,
            red: RedVerdict::ForcedDrop,
            r_tcp: 6.0,
            r_udp: 4.0,
            udp_backlog_bytes: 5_000,
            must_free_bytes: 0,
        };
        // 1st: credit 288.75 < 500: dropped.
        assert_eq!(plc.decide(tcp), PlcDecision::Drop(DropReason::ForcedDrop));
        // 2nd: 577.5 ≥ 500: rescued, evict 500 UDP bytes; credit 77.5.
        assert_eq!(plc.decide(tcp), PlcDecision::AdmitAndEvict { udp_bytes: 500 });
        plc.on_evicted(1, 500);
        assert!((plc.credit() - 77.5).abs() < 1e-9);
        // 3rd: 366.25: dropped. 4th: 655: rescued, but the UDP queue holds
        // only 400 bytes: dropped, credit kept.
        assert_eq!(plc.decide(tcp), PlcDecision::Drop(DropReason::ForcedDrop));
        let short = PlcArrival { udp_backlog_bytes: 400, ..tcp };
        assert_eq!(plc.decide(short), PlcDecision::Drop(DropReason::ForcedDrop));
        assert!((plc.credit() - 655.0).abs() < 1e-9);
        // 5th: 943.75, UDP backlog again: rescued; the buffer evicts a
        // 1200-byte UDP packet (700 bytes of overshoot); credit 443.75.
        assert_eq!(plc.decide(tcp), PlcDecision::AdmitAndEvict { udp_bytes: 500 });
        plc.on_evicted(1, 1200);
        assert_eq!(plc.surplus_bytes(), 700);
        // 6th: 732.5: rescued, paid by the surplus: evict nothing.
        assert_eq!(plc.decide(tcp), PlcDecision::AdmitAndEvict { udp_bytes: 0 });
        assert_eq!(plc.surplus_bytes(), 200);
        // 7th: 521.25: rescued, evict 500 − 200 = 300 bytes.
        assert_eq!(plc.decide(tcp), PlcDecision::AdmitAndEvict { udp_bytes: 300 });
        plc.on_evicted(1, 500);
        assert_eq!(plc.surplus_bytes(), 200);
        let s = plc.stats();
        assert_eq!((s.tcp_marked, s.tcp_rescued, s.evicted), (7, 4, 3));
        assert_eq!((s.tcp_rescued_bytes, s.evicted_bytes), (2000, 2200));
        // 8th: 310, dropped. 9th: 598.75, rescued at the hard limit of a
        // full byte buffer: the surplus (200) would leave 300 to evict, but
        // 500 bytes of room are needed.
        assert_eq!(plc.decide(tcp), PlcDecision::Drop(DropReason::ForcedDrop));
        let full = PlcArrival { red: RedVerdict::Overflow, must_free_bytes: 500, ..tcp };
        assert_eq!(plc.decide(full), PlcDecision::AdmitAndEvict { udp_bytes: 500 });
        plc.on_evicted(1, 500);
        assert_eq!(plc.surplus_bytes(), 200);
    }

    #[test]
    #[should_panic(expected = "not reported")]
    fn an_unreported_eviction_is_a_broken_invariant() {
        let mut plc = thesis(8.0, 2.0);
        let tcp = PlcArrival {
            class: PlcClass::Tcp,
            size: 500,
            red: RedVerdict::ForcedDrop,
            r_tcp: 6.0,
            r_udp: 4.0,
            udp_backlog_bytes: 5_000,
            must_free_bytes: 0,
        };
        plc.decide(tcp);
        plc.decide(tcp); // rescue: an eviction is due
        plc.decide(tcp);
    }

    /// A synthetic buffer: TCP (share 60%) and UDP arrivals; RED's verdict
    /// is drawn independently of the buffer (early with p = 0.05 w.p. 0.06,
    /// forced w.p. 0.01, else admit), BPR's rates are fixed at 6/4, the link
    /// serves one packet per arrival on average. Returns (dropped bytes,
    /// dropped packets) with PLC, the same without PLC (every marked arrival
    /// dropped), TCP marked/dropped counts and PLC's stats.
    struct Run {
        with: (u64, u64),
        without: (u64, u64),
        tcp_marked: u64,
        tcp_dropped: u64,
        stats: PlcStats,
    }

    fn run(sizes_udp: &[u32], n: usize) -> Run {
        let mut plc = thesis(8.0, PlcParams::DEFAULT_X);
        let mut rng = Rng::derive(5, "plc-synthetic");
        let mut udp: VecDeque<u32> = VecDeque::new();
        let mut udp_bytes = 0u64;
        let (mut with, mut without) = ((0u64, 0u64), (0u64, 0u64));
        let (mut tcp_marked, mut tcp_dropped) = (0, 0);
        for i in 0..n {
            let class = if rng.uniform() < 0.6 { PlcClass::Tcp } else { PlcClass::Udp };
            let size = match class {
                PlcClass::Tcp => 500,
                PlcClass::Udp => sizes_udp[i % sizes_udp.len()],
            };
            let u = rng.uniform();
            let red = if u < 0.06 {
                RedVerdict::EarlyDrop { p: 0.05 }
            } else if u < 0.07 {
                RedVerdict::ForcedDrop
            } else {
                RedVerdict::Admit
            };
            if red != RedVerdict::Admit {
                without.0 += size as u64;
                without.1 += 1;
                if class == PlcClass::Tcp {
                    tcp_marked += 1;
                }
            }
            let arrival = PlcArrival {
                class,
                size,
                red,
                r_tcp: 6.0,
                r_udp: 4.0,
                udp_backlog_bytes: udp_bytes,
                must_free_bytes: 0,
            };
            match plc.decide(arrival) {
                PlcDecision::Admit => {
                    if class == PlcClass::Udp {
                        udp.push_back(size);
                        udp_bytes += size as u64;
                    }
                }
                PlcDecision::Drop(_) => {
                    with.0 += size as u64;
                    with.1 += 1;
                    if class == PlcClass::Tcp {
                        tcp_dropped += 1;
                    }
                }
                PlcDecision::AdmitAndEvict { udp_bytes: need } => {
                    assert_eq!(class, PlcClass::Tcp, "only TCP packets are rescued");
                    let (mut pkts, mut bytes) = (0, 0u64);
                    while bytes < need {
                        let s = udp.pop_front().expect("PLC checked the UDP backlog");
                        udp_bytes -= s as u64;
                        bytes += s as u64;
                        pkts += 1;
                    }
                    plc.on_evicted(pkts, bytes);
                    with.0 += bytes;
                    with.1 += pkts;
                }
            }
            // Service: the head UDP packet leaves w.p. 0.4 (TCP's queue is
            // not modelled: PLC never looks at it).
            if rng.uniform() < 0.4 {
                if let Some(s) = udp.pop_front() {
                    udp_bytes -= s as u64;
                }
            }
            assert!(plc.surplus_bytes() < 1500, "surplus below one UDP packet");
        }
        Run { with, without, tcp_marked, tcp_dropped, stats: *plc.stats() }
    }

    #[test]
    fn equal_sizes_keep_drops_exactly_and_lower_tcp_loss_to_sigma() {
        // All packets 500 bytes: drops with PLC equal drops without, in
        // bytes and in packets. Early σ at p = 0.05 is 0.829223, forced σ is
        // 0.585995; with 6 early per forced marked arrival the expected
        // rescued fraction of marked TCP is 1 − (6·0.829223 + 0.585995)/7 =
        // 0.205524 (when UDP bytes are there to evict). Measured (seed 5,
        // 200,000 arrivals): 1703 of 8294 marked TCP packets rescued,
        // 0.205329, and 1703 UDP packets evicted; 13,930 packets dropped
        // with and without PLC.
        let r = run(&[500], 200_000);
        assert_eq!(r.with, r.without);
        assert!(r.stats.tcp_rescued > 1000, "{:?}", r.stats);
        assert_eq!(r.stats.evicted, r.stats.tcp_rescued);
        let rescued = 1.0 - r.tcp_dropped as f64 / r.tcp_marked as f64;
        let expected = 1.0 - (6.0 * 0.829_223 + 0.585_995) / 7.0;
        assert!((rescued - expected).abs() < 0.01, "rescued fraction {rescued}, expected {expected}");
    }

    #[test]
    fn mixed_sizes_keep_drops_within_one_udp_packet() {
        // UDP packets of 200, 500, 1500 bytes: bytes dropped with PLC exceed
        // those without by the surplus, less than one UDP packet. Measured
        // (seed 5): 1703 rescues paid by 1109 evicted UDP packets, 852,900
        // evicted bytes for 851,500 rescued: 1,400 bytes of surplus.
        let r = run(&[200, 500, 1500], 200_000);
        let excess = r.with.0 - r.without.0;
        assert_eq!(excess, r.stats.evicted_bytes - r.stats.tcp_rescued_bytes);
        assert!(excess < 1500, "excess {excess}");
        assert!(r.stats.tcp_rescued > 1000);
    }

    /// RED (w_q = 1) whose average is 96: p_b = 0.1·36/120 = 0.03.
    #[test]
    fn from_red_maps_reasons() {
        use crate::aqm::red::RedParams;
        use crate::aqm::Limit;
        use crate::time::Time;
        let params = RedParams {
            min_th: 60.0,
            max_th: 180.0,
            w_q: 1.0,
            max_p: 0.1,
            limit: Limit::Packets(250),
            ..RedParams::default()
        };
        let mut red = Red::new(params, 10_000_000, Rng::derive(0, "red"));
        red.on_arrival(96, 48_000, 500, Time::ZERO);
        assert_eq!(RedVerdict::from_red(None, &red), RedVerdict::Admit);
        let early = RedVerdict::from_red(Some(DropReason::EarlyDrop), &red);
        assert!(matches!(early, RedVerdict::EarlyDrop { p } if (p - 0.03).abs() < 1e-12), "{early:?}");
        assert_eq!(RedVerdict::from_red(Some(DropReason::ForcedDrop), &red), RedVerdict::ForcedDrop);
        assert_eq!(RedVerdict::from_red(Some(DropReason::Overflow), &red), RedVerdict::Overflow);
        assert!(PlcParams { delta: 0.5, ..PlcParams::for_red(1.0, 60.0, 180.0, 0.1) }.validate().is_err());
    }
}
