//! Round-trip time estimation and the retransmission timeout (RFC 6298).
//!
//! `SRTT ← 7/8·SRTT + 1/8·R`, `RTTVAR ← 3/4·RTTVAR + 1/4·|SRTT − R|` (the
//! first sample sets `SRTT = R`, `RTTVAR = R/2`), and
//! `RTO = SRTT + max(G, 4·RTTVAR)` clamped to `[min_rto, max_rto]`, with
//! `G` the clock granularity. Samples are rounded up to the granularity, as a
//! coarse clock (ns-2's `tcpTick_`) measures them. Each timeout doubles the
//! RTO (up to `max_rto`); a new sample ends the back-off.

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
}

impl RttEstimator {
    pub fn new(min_rto: Time, max_rto: Time, initial_rto: Time, granularity: Time) -> RttEstimator {
        RttEstimator {
            srtt: None,
            rttvar: 0.0,
            backoff: 0,
            min_rto: min_rto.as_secs_f64(),
            max_rto: max_rto.as_secs_f64(),
            initial_rto: initial_rto.as_secs_f64(),
            granularity: granularity.as_secs_f64(),
        }
    }

    /// A measured round trip (Karn's rule is the caller's: never a
    /// retransmitted segment).
    pub fn sample(&mut self, rtt: Time) {
        let g = self.granularity;
        let r = if g > 0.0 { (rtt.as_secs_f64() / g).ceil().max(1.0) * g } else { rtt.as_secs_f64() };
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
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
    }

    /// New data was acknowledged: RFC 6298 §5.7 lets the back-off end.
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    /// Whether a timeout is backed off (the timer has fired since the last
    /// sample or [`RttEstimator::reset_backoff`]).
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
        RttEstimator::new(Time::from_millis(200), Time::from_secs(60), Time::from_secs(3), Time::from_millis(10))
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
