//! A passive estimate of a TCP sender's window: the packets a marker saw
//! from it in the last round-trip time.
//!
//! Beyond the paper. TWAM (Bouras & Sevasti 2008, Section 4, eq. 9) needs
//! each member's congestion window `W_i^cwnd`, which the paper reads from
//! the senders (its Section 7 asks the hosts to signal it). Where the
//! window cannot be read — real traffic, hosts that do not signal — the
//! ingress can count what it forwards: a window-limited sender puts about
//! `W_i^cwnd` segments into each round trip, so the packets of member `i`
//! seen in the last `RTT_LSP` estimate `W_i^cwnd·RTT_LSP/RTT`, `RTT` the
//! round trip the sender actually sees (`RTT_LSP` plus queueing). Summed
//! over the members this is exactly eq. (3), `W_LSP^cwnd = R_AF·RTT_LSP/
//! (8·S)`, with `R_AF` the LSP's rate over that interval.
//!
//! **Model.** Time is cut into bins `[k·RTT_LSP, (k+1)·RTT_LSP)` from time
//! 0. [`PassiveWindow::observe`] counts an arrival of member `i` in the bin
//! holding `now`; [`PassiveWindow::window`] at `now` is the count of the
//! last *complete* bin, `[now' − RTT_LSP, now')` with `now'` the start of
//! the bin holding `now` (0 before the first bin ends, or when the last
//! bin saw nothing). TWAM updates at multiples of `α·RTT_LSP`, which are bin
//! boundaries, so at an update it reads the packets of the `RTT_LSP` just
//! ended. Bins roll lazily when a member is touched: no timer. Every packet
//! counts, retransmissions included (the marker cannot tell them apart).
//! Counts are in packets, so the estimate is in segments when every
//! packet is `S` bytes.

use crate::time::Time;

/// One member's bins.
#[derive(Clone, Copy, Debug, Default)]
struct Bins {
    /// Start of the current bin.
    start: Time,
    /// Packets in the current bin.
    current: u64,
    /// Packets in the bin before it.
    last: u64,
}

/// Per-member counts of packets over the last `RTT_LSP`.
#[derive(Clone, Debug)]
pub struct PassiveWindow {
    rtt: Time,
    bins: Vec<Bins>,
}

impl PassiveWindow {
    /// An estimator for `members` members with bins of `rtt_lsp`.
    pub fn new(members: usize, rtt_lsp: Time) -> Result<PassiveWindow, String> {
        if rtt_lsp == Time::ZERO {
            return Err("rtt_lsp must be positive".into());
        }
        Ok(PassiveWindow { rtt: rtt_lsp, bins: vec![Bins::default(); members] })
    }

    /// Brings member `i`'s bins to the one holding `now`.
    #[inline]
    fn roll(&mut self, i: usize, now: Time) {
        let b = &mut self.bins[i];
        let step = self.rtt.as_nanos();
        let elapsed = now.as_nanos().saturating_sub(b.start.as_nanos());
        if elapsed >= step {
            let k = elapsed / step;
            b.last = if k == 1 { b.current } else { 0 };
            b.current = 0;
            b.start = Time::from_nanos(b.start.as_nanos() + k * step);
        }
    }

    /// A packet of member `i` passes at `now` (`now` never goes back).
    #[inline]
    pub fn observe(&mut self, i: usize, now: Time) {
        self.roll(i, now);
        self.bins[i].current += 1;
    }

    /// The packets of member `i` in the last complete `RTT_LSP` bin before
    /// `now`.
    pub fn window(&mut self, i: usize, now: Time) -> f64 {
        self.roll(i, now);
        self.bins[i].last as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_last_complete_bin() {
        let mut p = PassiveWindow::new(2, Time::from_millis(100)).unwrap();
        for k in 0..30 {
            p.observe(0, Time::from_millis(3 * k)); // 0..87 ms: 30 packets
        }
        assert_eq!(p.window(0, Time::from_millis(99)), 0.0, "the first bin is not complete");
        for k in 0..12 {
            p.observe(0, Time::from_millis(100 + 8 * k)); // 100..188 ms: 12 packets
        }
        assert_eq!(p.window(0, Time::from_millis(100)), 30.0);
        assert_eq!(p.window(0, Time::from_millis(199)), 30.0);
        // At 200 ms, a bin boundary, the bin [100, 200) is complete.
        assert_eq!(p.window(0, Time::from_millis(200)), 12.0);
        // A packet exactly at the boundary belongs to the new bin.
        p.observe(0, Time::from_millis(200));
        assert_eq!(p.window(0, Time::from_millis(300)), 1.0);
        // A silent bin: 0; two bins later, still 0.
        assert_eq!(p.window(0, Time::from_millis(400)), 0.0);
        assert_eq!(p.window(0, Time::from_millis(650)), 0.0);
        // Members are independent.
        assert_eq!(p.window(1, Time::from_millis(650)), 0.0);
    }

    /// A sender with a fixed window of W packets per round trip R, seen by
    /// bins of RTT_LSP ≤ R, gives about W·RTT_LSP/R.
    #[test]
    fn a_window_limited_stream_gives_its_window_scaled_by_the_rtts() {
        let (rtt_lsp, rtt) = (240u64, 300u64);
        let w = 100u64;
        let mut p = PassiveWindow::new(1, Time::from_millis(rtt_lsp)).unwrap();
        let gap = rtt * 1_000_000 / w; // ns between packets, evenly spread
        let mut seen = Vec::new();
        for n in 0..(w * 60) {
            let now = Time::from_nanos(n * gap);
            p.observe(0, now);
            if n % 37 == 0 {
                seen.push(p.window(0, now));
            }
        }
        let expected = (w * rtt_lsp / rtt) as f64; // 80
        assert!(seen[10..].iter().all(|&x| (x - expected).abs() <= 1.0), "{seen:?}");
    }

    #[test]
    fn rejects_a_zero_rtt() {
        assert!(PassiveWindow::new(1, Time::ZERO).is_err());
    }
}
