//! Round-trip time estimation and the retransmission timeout (RFC 6298).
//!
//! `SRTT ← 7/8·SRTT + 1/8·R`, `RTTVAR ← 3/4·RTTVAR + 1/4·|SRTT − R|` (the
//! first sample sets `SRTT = R`, `RTTVAR = R/2`), and
//! `RTO = SRTT + max(G, 4·RTTVAR)` clamped to `[min_rto, max_rto]`, with
//! `G` the clock granularity. Samples are rounded up to the granularity, as a
//! coarse clock (ns-2's `tcpTick_`) measures them. Each timeout doubles the
//! RTO (up to `max_rto`); only a new sample ends the back-off (Karn's
//! algorithm: RFC 6298 §5, "once a new RTT measurement is obtained ... may
//! result in 'collapsing' RTO back down"; ns-2's `TcpAgent::newack` resets
//! `t_backoff_` only when the timed segment is acknowledged; Linux's
//! `tcp_ack_update_rtt` "only reset backoff on valid RTT measurement"), so
//! an ACK of new data that gives no sample (the timed segment was resent)
//! leaves the timer backed off. A profile may end it on every ACK of new
//! data instead ([`RttEstimator::end_backoff`]: the `linux` profile, for
//! the samples Linux's timestamps give).
//!
//! With `restart_after_backoff` (ns-2's `TcpAgent::rtt_backoff`, `tcp.cc`)
//! a back-off beyond 8 times the RTO clobbers the smoothed RTT: the next
//! sample starts the estimator afresh (`SRTT = R`, `RTTVAR = R/2`), while
//! the timer keeps the backed-off RTO until then.

use phb::Time;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<f64>,
    rttvar: f64,
    backoff: u32,
    min_rto: f64,
    max_rto: f64,
    initial_rto: f64,
    granularity: f64,
    /// ns-2's clobbering of SRTT after a back-off beyond 8 (module docs).
    restart_after_backoff: bool,
    /// The next sample starts the estimator afresh.
    restart: bool,
}

impl RttEstimator {
    pub fn new(
        min_rto: Time,
        max_rto: Time,
        initial_rto: Time,
        granularity: Time,
        restart_after_backoff: bool,
    ) -> RttEstimator {
        RttEstimator {
            srtt: None,
            rttvar: 0.0,
            backoff: 0,
            min_rto: min_rto.as_secs_f64(),
            max_rto: max_rto.as_secs_f64(),
            initial_rto: initial_rto.as_secs_f64(),
            granularity: granularity.as_secs_f64(),
            restart_after_backoff,
            restart: false,
        }
    }

    /// A measured round trip (Karn's rule is the caller's: never a
    /// retransmitted segment).
    pub fn sample(&mut self, rtt: Time) {
        let g = self.granularity;
        let r = if g > 0.0 { (rtt.as_secs_f64() / g).ceil().max(1.0) * g } else { rtt.as_secs_f64() };
        match self.srtt.filter(|_| !self.restart) {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
                self.restart = false;
            }
            Some(srtt) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (srtt - r).abs();
                self.srtt = Some(0.875 * srtt + 0.125 * r);
            }
        }
        self.backoff = 0;
    }

    /// A retransmission timeout fired: back off.
    pub fn on_timeout(&mut self) {
        self.backoff = (self.backoff + 1).min(16);
        if self.restart_after_backoff && self.backoff > 3 {
            self.restart = true;
        }
    }

    /// Ends the back-off without a sample (`TcpConfig::ack_ends_backoff`).
    pub fn end_backoff(&mut self) {
        self.backoff = 0;
    }

    /// Whether a timeout is backed off (the timer has fired since the last
    /// sample or [`RttEstimator::end_backoff`]).
    pub fn backed_off(&self) -> bool {
        self.backoff > 0
    }

    pub fn srtt(&self) -> Option<Time> {
        self.srtt.map(Time::from_secs_f64)
    }

    /// The current timeout, back-off included.
    pub fn rto(&self) -> Time {
        let base = match self.srtt {
            None => self.initial_rto,
            Some(srtt) => (srtt + self.granularity.max(4.0 * self.rttvar)).max(self.min_rto),
        };
        let backed_off = base * (1u64 << self.backoff) as f64;
        Time::from_secs_f64(backed_off.min(self.max_rto))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimator() -> RttEstimator {
        RttEstimator::new(Time::from_millis(200), Time::from_secs(60), Time::from_secs(3), Time::from_millis(10), false)
    }

    #[test]
    fn initial_rto_before_any_sample() {
        assert_eq!(estimator().rto(), Time::from_secs(3));
    }

    #[test]
    fn first_sample_sets_srtt_and_half_variance() {
        let mut e = estimator();
        e.sample(Time::from_millis(100));
        // RTO = 100 ms + 4·50 ms = 300 ms
        assert_eq!(e.rto(), Time::from_millis(300));
        e.sample(Time::from_millis(100));
        // RTTVAR = 0.75·50 = 37.5 ms; RTO = 100 + 150 = 250 ms
        assert_eq!(e.rto(), Time::from_millis(250));
    }

    #[test]
    fn samples_round_up_to_the_clock() {
        let mut e = estimator();
        e.sample(Time::from_millis(41));
        assert_eq!(e.srtt(), Some(Time::from_millis(50)));
    }

    #[test]
    fn timeouts_double_the_rto_and_a_sample_resets_it() {
        let mut e = estimator();
        e.sample(Time::from_millis(100));
        e.on_timeout();
        assert_eq!(e.rto(), Time::from_millis(600));
        e.on_timeout();
        assert_eq!(e.rto(), Time::from_millis(1200));
        e.sample(Time::from_millis(100));
        assert_eq!(e.rto(), Time::from_millis(250));
    }

    #[test]
    fn an_ack_without_a_sample_keeps_the_backoff() {
        let mut e = estimator();
        e.sample(Time::from_millis(100));
        e.on_timeout();
        assert!(e.backed_off());
        assert_eq!(e.rto(), Time::from_millis(600));
    }

    #[test]
    fn ns2_restarts_the_estimator_after_a_backoff_beyond_eight() {
        let close = |a: Time, b: f64| (a.as_secs_f64() - b).abs() < 1e-6;
        let mut e = RttEstimator::new(
            Time::from_millis(200),
            Time::from_secs(64),
            Time::from_secs(3),
            Time::from_millis(10),
            true,
        );
        e.sample(Time::from_millis(100));
        for _ in 0..3 {
            e.on_timeout();
        }
        // Backed off 8 times: the next sample is smoothed in (0.875·0.1 + 0.125·0.9).
        e.sample(Time::from_millis(900));
        assert!(close(e.srtt().unwrap(), 0.2));
        let base = e.rto().as_secs_f64();
        for _ in 0..4 {
            e.on_timeout();
        }
        // 16 times: the timer keeps the backed-off RTO until the next
        // sample, which starts the estimator afresh: 0.9 + 4·0.45.
        assert!(close(e.rto(), 16.0 * base));
        e.sample(Time::from_millis(900));
        assert!(close(e.srtt().unwrap(), 0.9));
        assert!(close(e.rto(), 2.7));
    }

    #[test]
    fn rto_is_clamped() {
        let mut e = estimator();
        e.sample(Time::from_millis(1));
        assert_eq!(e.rto(), Time::from_millis(200));
        for _ in 0..20 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), Time::from_secs(60));
    }
}
