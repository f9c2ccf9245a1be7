//! Per-class counters at one measurement point.

use phb::DropReason;

use super::histogram::DelayHistogram;

/// Counts of one class at one point, since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub arrivals: u64,
    pub departures: u64,
    pub departed_bytes: u64,
    /// Indexed by `DropReason as usize`.
    pub drops: [u64; DropReason::ALL.len()],
}

impl Counts {
    pub fn dropped(&self) -> u64 {
        self.drops.iter().sum()
    }

    /// Counts between an earlier snapshot and now.
    pub fn since(&self, earlier: &Counts) -> Counts {
        let mut drops = self.drops;
        for (d, e) in drops.iter_mut().zip(earlier.drops) {
            *d -= e;
        }
        Counts {
            arrivals: self.arrivals - earlier.arrivals,
            departures: self.departures - earlier.departures,
            departed_bytes: self.departed_bytes - earlier.departed_bytes,
            drops,
        }
    }
}

/// A class at one point: whole-run counts (for conservation), the counts at
/// the end of the warm-up, and the delays measured after it.
#[derive(Clone, Debug, Default)]
pub struct ClassStats {
    pub total: Counts,
    pub at_warmup: Counts,
    pub delays: DelayHistogram,
    /// Departures and departed bytes and delay sum since the last sample, for
    /// time series; and arrived bytes and drops.
    pub interval_departures: u64,
    pub interval_bytes: u64,
    pub interval_delay_sum: u64,
    pub interval_arrived_bytes: u64,
    pub interval_drops: u64,
}

/// What one class did in a sampling interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Interval {
    pub departures: u64,
    pub departed_bytes: u64,
    pub delay_sum_ns: u64,
    pub arrived_bytes: u64,
    pub drops: u64,
}

impl ClassStats {
    /// A packet of `bytes` arrives.
    #[inline]
    pub fn arrive(&mut self, bytes: u32) {
        self.total.arrivals += 1;
        self.interval_arrived_bytes += bytes as u64;
    }

    #[inline]
    pub fn drop(&mut self, reason: DropReason) {
        self.total.drops[reason as usize] += 1;
        self.interval_drops += 1;
    }

    /// A packet of `bytes` leaves after `delay_ns`; `measured` says whether
    /// the warm-up is over.
    #[inline]
    pub fn depart(&mut self, bytes: u32, delay_ns: u64, measured: bool) {
        self.total.departures += 1;
        self.total.departed_bytes += bytes as u64;
        self.interval_departures += 1;
        self.interval_bytes += bytes as u64;
        self.interval_delay_sum += delay_ns;
        if measured {
            self.delays.record(delay_ns);
        }
    }

    /// The warm-up ends: later reports count from here.
    pub fn end_warmup(&mut self) {
        self.at_warmup = self.total;
        self.delays.clear();
    }

    /// Counts over the measured period.
    pub fn measured(&self) -> Counts {
        self.total.since(&self.at_warmup)
    }

    /// Packets that arrived and neither left nor were dropped.
    pub fn backlog(&self) -> u64 {
        self.total.arrivals - self.total.departures - self.total.dropped()
    }

    /// The interval's counts, which restart for the next one.
    pub fn take_interval(&mut self) -> Interval {
        let out = Interval {
            departures: self.interval_departures,
            departed_bytes: self.interval_bytes,
            delay_sum_ns: self.interval_delay_sum,
            arrived_bytes: self.interval_arrived_bytes,
            drops: self.interval_drops,
        };
        self.interval_departures = 0;
        self.interval_bytes = 0;
        self.interval_delay_sum = 0;
        self.interval_arrived_bytes = 0;
        self.interval_drops = 0;
        out
    }
}
