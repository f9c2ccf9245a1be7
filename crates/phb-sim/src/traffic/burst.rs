//! Periodic bursts: `burst` packets back to back at a peak rate (by
//! default the line rate of the source's link), then an OFF period of
//! `off`, again and again — the on-off UDP sources of the JoBS paper's
//! experiments (Christin, Liebeherr & Abdelzaher 2001, Tables 2 and 5:
//! bursts of 25 or 20 packets, 150 ms off).
//!
//! A burst's packets leave `interval = packet_size·8/rate` apart; the OFF
//! period starts when the last one has been sent (one interval after it
//! left), so a cycle lasts `burst·interval + off`. The first burst starts
//! at the flow's start. Nothing is random: start flows at different times
//! (`start_jitter`) to spread their bursts.

use phb::Time;

#[derive(Clone, Debug)]
pub struct Burst {
    interval: Time,
    burst: u32,
    off: Time,
    /// Packets sent in the current burst.
    sent: u32,
}

impl Burst {
    /// `burst` ≥ 1 packets every `interval`, then `off`.
    pub fn new(interval: Time, burst: u32, off: Time) -> Burst {
        assert!(burst >= 1, "a burst has at least one packet");
        Burst { interval, burst, off, sent: 0 }
    }

    /// The delay from the packet just sent to the next one.
    #[inline]
    pub fn next_gap(&mut self) -> Time {
        self.sent += 1;
        if self.sent == self.burst {
            self.sent = 0;
            self.interval + self.off
        } else {
            self.interval
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bursts of 3 packets 82 µs apart, then 150 ms off: gaps of 82 µs,
    /// 82 µs, then 150.082 ms; a cycle of 150.246 ms.
    #[test]
    fn bursts_then_off() {
        let mut b = Burst::new(Time::from_micros(82), 3, Time::from_millis(150));
        let gaps: Vec<u64> = (0..7).map(|_| b.next_gap().as_nanos() / 1000).collect();
        assert_eq!(gaps, vec![82, 82, 150_082, 82, 82, 150_082, 82]);
    }

    #[test]
    fn a_burst_of_one_is_periodic() {
        let mut b = Burst::new(Time::from_micros(10), 1, Time::from_millis(1));
        assert!((0..5).all(|_| b.next_gap() == Time::from_micros(1010)));
    }
}
