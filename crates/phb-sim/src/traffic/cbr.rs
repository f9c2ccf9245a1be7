//! Constant bit rate: one packet every `interval`, the first at the start.

use phb::Time;

#[derive(Clone, Debug)]
pub struct Cbr {
    interval: Time,
}

impl Cbr {
    pub fn new(interval: Time) -> Cbr {
        Cbr { interval }
    }

    #[inline]
    pub fn next_gap(&mut self) -> Time {
        self.interval
    }
}
