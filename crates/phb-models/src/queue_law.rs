//! The queue law of TCP traffic and its operating point under RED.
//!
//! Firoiu, Zhang, Guo, "Best Effort Differentiated Services", ICT 2001,
//! Section II (after Firoiu & Borden, INFOCOM 2000): `n` identical TCP
//! flows with round-trip propagation delay `R_0` share a link of capacity
//! `c`; each gets `c/n`, so (eq. 1) `T(p, R_0 + q/c) = c/n` and the average
//! queue is the *queue law*
//!
//! ```text
//! q = G(p) = c·(T⁻¹(p, c/n) − R_0)        (eq. 3)
//! ```
//!
//! with `T` the PFTK throughput (eq. 8) and `T⁻¹` its inverse in `R`
//! ([`crate::tcp_throughput::pftk_rtt`]). With `m` UDP flows of average
//! rate `U` beside them (Section II.C), `n·T(p, R_0 + q/c) + m(1 − p)·U =
//! c`: the same law with the TCP flows' share `(c − m(1 − p)U)/n`, i.e.
//! that of a link whose rate is reduced by the UDP throughput, the
//! queueing delay `q/c` being the same in both.
//!
//! RED closes the loop with `p = H(q)` (eq. 4); the *operating point* is
//! the intersection of `G` and `H`, unique because `H(G(p))` falls as `p`
//! grows. [`QueueLaw::operating_point`] finds it by bisection on
//! `f(p) = p − H(G(p))`, which is strictly increasing.
//!
//! Units: bits, bits per second and seconds; the queue that `H` reads is in
//! packets (RED's packet mode), by Little's law from the queueing delay and
//! the packet arrival rate ([`QueueLaw::queue_packets`]).

use crate::red_control::RedControl;
use crate::tcp_throughput::{pftk_rtt, PftkParams};

/// A bottleneck shared by `n` TCP flows and, optionally, `m` UDP flows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueLaw {
    /// `n`, TCP flows (> 0).
    pub n: f64,
    /// `c`, the link's capacity, bit/s.
    pub c_bps: f64,
    /// `R_0`, the round-trip propagation (and transmission) delay, s.
    pub r0: f64,
    /// `M`, the TCP packet size, bits.
    pub m_bits: f64,
    /// PFTK's `b`, `W_max`, `T_0`.
    pub pftk: PftkParams,
    /// `m`, UDP flows (0 for TCP alone).
    pub m: f64,
    /// `U`, each UDP flow's average sending rate, bit/s.
    pub u_bps: f64,
    /// The UDP packet size, bits (for the queue in packets).
    pub udp_packet_bits: f64,
}

/// Where `G` and `H` meet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OperatingPoint {
    /// The drop probability (RED's drop rate `H(q)`).
    pub p: f64,
    /// The mean queueing delay `q/c`, s.
    pub delay: f64,
    /// The mean queue, packets.
    pub queue_packets: f64,
}

impl QueueLaw {
    /// `n` TCP flows alone.
    pub fn tcp(n: f64, c_bps: f64, r0: f64, m_bits: f64, pftk: PftkParams) -> QueueLaw {
        QueueLaw { n, c_bps, r0, m_bits, pftk, m: 0.0, u_bps: 0.0, udp_packet_bits: 1.0 }
    }

    /// The same with `m` UDP flows of `u_bps` each in packets of
    /// `udp_packet_bits` (Section II.C).
    pub fn with_udp(self, m: f64, u_bps: f64, udp_packet_bits: f64) -> QueueLaw {
        QueueLaw { m, u_bps, udp_packet_bits, ..self }
    }

    /// Each TCP flow's throughput at loss `p`: `(c − m(1 − p)U)/n`.
    pub fn tcp_share(&self, p: f64) -> f64 {
        (self.c_bps - self.m * (1.0 - p) * self.u_bps) / self.n
    }

    /// `T⁻¹(p, share)`: the round-trip time at which the flows take their
    /// share; infinite when UDP alone fills the link.
    pub fn rtt(&self, p: f64) -> f64 {
        let share = self.tcp_share(p);
        if share <= 0.0 {
            return f64::INFINITY;
        }
        pftk_rtt(self.m_bits, share, p, self.pftk)
    }

    /// The mean queueing delay `q/c = T⁻¹ − R_0` at loss `p`, s; 0 where
    /// the flows take their share without a queue (`T⁻¹ ≤ R_0`: the
    /// link is then not the bottleneck the law assumes).
    pub fn delay(&self, p: f64) -> f64 {
        (self.rtt(p) - self.r0).max(0.0)
    }

    /// `G(p) = c·(T⁻¹(p, c/n) − R_0)`, bits.
    pub fn queue_bits(&self, p: f64) -> f64 {
        self.c_bps * self.delay(p)
    }

    /// The mean queue in packets at loss `p`: the delay times the packet
    /// arrival rate (TCP's `(c − m(1 − p)U)/M` plus UDP's `m·U/L`).
    pub fn queue_packets(&self, p: f64) -> f64 {
        let tcp = self.n * self.tcp_share(p) / self.m_bits;
        let udp = if self.m > 0.0 { self.m * self.u_bps / self.udp_packet_bits } else { 0.0 };
        self.delay(p) * (tcp + udp)
    }

    /// The intersection with RED's control function `H` (its drop rate,
    /// [`RedControl::h`]).
    pub fn operating_point(&self, red: &RedControl) -> OperatingPoint {
        let f = |p: f64| p - red.h(self.queue_packets(p));
        let p = bisect(f, 1e-9, 1.0 - 1e-9);
        OperatingPoint { p, delay: self.delay(p), queue_packets: self.queue_packets(p) }
    }
}

/// The root of a non-decreasing `f` in `[lo, hi]` by bisection (on a log
/// scale while the bracket spans decades, so small roots are found to full
/// relative precision): `lo` if `f(lo) ≥ 0`, `hi` if `f(hi) ≤ 0`. A
/// bracketing method: it cannot leave the interval or fail to converge,
/// whatever kinks `f` has (RED's curve has two).
pub fn bisect(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
    assert!(lo > 0.0 && hi > lo, "bisect needs 0 < lo < hi, got [{lo}, {hi}]");
    if f(lo) >= 0.0 {
        return lo;
    }
    if f(hi) <= 0.0 {
        return hi;
    }
    for _ in 0..200 {
        let mid = if hi / lo > 4.0 { (lo * hi).sqrt() } else { 0.5 * (lo + hi) };
        if mid <= lo || mid >= hi {
            break;
        }
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::red_control::Spacing;
    use crate::tcp_throughput::{pftk, Timeout};

    /// The BEDS paper's Fig. 4 network: 80 flows, 9 Mb/s, 1000-byte
    /// packets, b = 1, W_max = 20, T_0 = 5R, R_0 = 40 ms.
    fn fig4() -> QueueLaw {
        QueueLaw::tcp(
            80.0,
            9e6,
            0.04,
            8000.0,
            PftkParams { b: 1.0, w_max: 20.0, t0: Timeout::Rtts(5.0), timeout_probability: None },
        )
    }

    /// T_0 = 5R makes T ∝ 1/R: at p = 1%, A = 99 + W/2 + Q, B = W/2 + 1,
    /// D = Q·F/0.99 (W = 17.27882, Q = 0.210479, F = 1.010204):
    /// R = 8000·A/(112 500·(B + 5D)) = 0.7160 s; G = 9e6·(R − 0.04).
    #[test]
    fn the_queue_law_by_hand() {
        let law = fig4();
        let (w, q, f) = (17.278_820_596_1, 0.210_479_074_55, 1.010_204_081_63);
        let r = 8000.0 * (99.0 + w / 2.0 + q) / (112_500.0 * (w / 2.0 + 1.0 + 5.0 * q * f / 0.99));
        assert!((law.rtt(0.01) - r).abs() < 1e-9, "{} vs {r}", law.rtt(0.01));
        assert!((law.rtt(0.01) - 0.716).abs() < 1e-3);
        assert!((law.queue_bits(0.01) - 9e6 * (r - 0.04)).abs() < 1e-3);
        assert!((law.queue_packets(0.01) - 9e6 * (r - 0.04) / 8000.0).abs() < 1e-6);
        // Each flow's throughput at that RTT is its share c/n.
        assert!((pftk(8000.0, r, 0.01, law.pftk) - 112_500.0).abs() < 1e-6);
        // G falls with p.
        let g: Vec<f64> = [0.005, 0.01, 0.02, 0.04, 0.08, 0.16].iter().map(|&p| law.queue_bits(p)).collect();
        assert!(g.windows(2).all(|w| w[1] < w[0]), "{g:?}");
    }

    /// Section II.C: 80 TCP flows and UDP of 0.8 Mb/s on 10 Mb/s have the
    /// queueing delay of 80 flows alone on 10 − 0.8·(1 − p) Mb/s.
    #[test]
    fn mixed_traffic_is_tcp_on_a_link_reduced_by_udp() {
        let mixed = QueueLaw { c_bps: 10e6, ..fig4() }.with_udp(110.0, 800e3 / 110.0, 82.0 * 8.0);
        for p in [0.01, 0.04] {
            let reduced = QueueLaw { c_bps: 10e6 - 800e3 * (1.0 - p), ..fig4() };
            assert!((mixed.delay(p) - reduced.delay(p)).abs() < 1e-12);
            // Packets: TCP's c'·d/M plus UDP's 0.8 Mb/s·d/656.
            let expected = mixed.delay(p) * ((10e6 - 800e3 * (1.0 - p)) / 8000.0 + 800e3 / 656.0);
            assert!((mixed.queue_packets(p) - expected).abs() < 1e-9);
        }
        let flooded = QueueLaw { c_bps: 1e6, ..fig4() }.with_udp(200.0, 10e3, 656.0);
        assert_eq!(flooded.delay(0.01), f64::INFINITY);
    }

    /// The operating point satisfies both equations, for a drop-
    /// conservative and a delay-conservative RED; a stricter RED moves it
    /// along G to more loss and less delay.
    #[test]
    fn the_operating_point_lies_on_both_curves() {
        let law = fig4();
        let mut points = Vec::new();
        for (min_th, max_th, max_p) in [(50.0, 2000.0, 0.03), (50.0, 500.0, 0.1), (10.0, 100.0, 0.2)] {
            let red = RedControl { min_th, max_th, max_p, gentle: false, spacing: Spacing::Wait };
            let op = law.operating_point(&red);
            assert!((op.p - red.h(op.queue_packets)).abs() < 1e-9, "{op:?}");
            assert!((op.queue_packets - law.queue_packets(op.p)).abs() < 1e-9);
            assert!((op.delay - law.delay(op.p)).abs() < 1e-12);
            points.push(op);
        }
        assert!(points.windows(2).all(|w| w[1].p > w[0].p && w[1].delay < w[0].delay), "{points:?}");
    }

    #[test]
    fn bisection_finds_roots_and_clamps_to_the_bracket() {
        let r = bisect(|x| x * x - 2.0, 1e-9, 10.0);
        assert!((r - 2f64.sqrt()).abs() < 1e-12, "{r}");
        let small = bisect(|x| x - 3e-8, 1e-9, 1.0);
        assert!((small / 3e-8 - 1.0).abs() < 1e-12, "{small}");
        assert_eq!(bisect(|x| x + 1.0, 1e-9, 1.0), 1e-9);
        assert_eq!(bisect(|x| x - 5.0, 1e-9, 1.0), 1.0);
        // A step: the root is the step.
        let step = bisect(|x| if x < 0.3 { -1.0 } else { 1.0 }, 1e-9, 1.0);
        assert!((step - 0.3).abs() < 1e-12);
    }
}
