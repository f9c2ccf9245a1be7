//! Per-class counters at one measurement point.

use phb::DropReason;

use super::histogram::DelayHistogram;

/// Counts of one class at one point, since the start of the run. The cell
/// counts are those of a link with AAL5 framing (0 elsewhere and end to end).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub arrivals: u64,
    pub departures: u64,
    pub departed_bytes: u64,
    /// Indexed by `DropReason as usize`.
    pub drops: [u64; DropReason::ALL.len()],
    /// Packets CE-marked instead of dropped (ECN); they also depart.
    pub marks: u64,
    pub arrival_cells: u64,
    pub departed_cells: u64,
    pub dropped_cells: u64,
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
            marks: self.marks - earlier.marks,
            arrival_cells: self.arrival_cells - earlier.arrival_cells,
            departed_cells: self.departed_cells - earlier.departed_cells,
            dropped_cells: self.dropped_cells - earlier.dropped_cells,
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
    /// At a link: the time integral, over the measured period, of the
    /// class's packets (and cells) in the qdisc, packet·ns (cell·ns): each
    /// packet adds the part of its wait after the warm-up when it leaves the
    /// qdisc (sent or dropped), and those still queued at the end are added
    /// by the report.
    pub occupancy_ns: u128,
    pub occupancy_cell_ns: u128,
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

    /// A packet is CE-marked instead of dropped (ECN).
    #[inline]
    pub fn mark(&mut self) {
        self.total.marks += 1;
    }

    /// A packet of `bytes` and `cells` cells (0 without cell framing)
    /// arrives at a link.
    #[inline]
    pub fn arrive_at_link(&mut self, bytes: u32, cells: u32) {
        self.arrive(bytes);
        self.total.arrival_cells += cells as u64;
    }

    /// A packet of `cells` cells is dropped at a link for `reason`, after
    /// `waited_ns` of the measured period in its qdisc (0 for an arrival).
    #[inline]
    pub fn drop_at_link(&mut self, reason: DropReason, cells: u32, waited_ns: u64) {
        self.drop(reason);
        self.total.dropped_cells += cells as u64;
        self.occupancy_ns += waited_ns as u128;
        self.occupancy_cell_ns += waited_ns as u128 * cells as u128;
    }

    /// A packet of `bytes` and `cells` leaves a link's qdisc after
    /// `delay_ns`, `waited_ns` of it in the measured period.
    #[inline]
    pub fn depart_link(&mut self, bytes: u32, cells: u32, delay_ns: u64, waited_ns: u64, measured: bool) {
        self.total.departed_cells += cells as u64;
        self.occupancy_ns += waited_ns as u128;
        self.occupancy_cell_ns += waited_ns as u128 * cells as u128;
        self.depart(bytes, delay_ns, measured);
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

    /// Their cells (0 without cell framing).
    pub fn backlog_cells(&self) -> u64 {
        self.total.arrival_cells - self.total.departed_cells - self.total.dropped_cells
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
