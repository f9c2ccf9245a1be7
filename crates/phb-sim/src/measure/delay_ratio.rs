//! The delay ratio of two classes, estimated two ways.
//!
//! - **Per packet**: the numerator class's mean queueing delay over the
//!   denominator class's, both over every packet that left in the measured
//!   period (the ratio of the `classes` table's `delay_mean_s`).
//! - **Per interval** (Vukadinović 2004, Section 5.3.4, Fig. 16): the
//!   measured period is cut into intervals of a stated timescale; in each
//!   interval where both classes had departures (and the denominator's mean
//!   is positive) the ratio of the two classes' mean delays over the packets
//!   that left in it is taken; the estimator is the mean of those ratios
//!   (the thesis' "achieved delay ratios averaged over the entire simulation
//!   run"), and their percentiles show the spread (Fig. 16).
//!
//! The two differ when the classes' delays and departure rates vary
//! together: a class that sends most when its queue is short pulls its run
//! mean down, which the per-packet ratio weighs and the per-interval ratio,
//! which gives every interval the same weight, does not.
//!
//! Intervals start at the end of the warm-up: `[start + kT, start +
//! (k+1)T)`. A trailing interval shorter than the timescale (when the
//! measured period is not a multiple of it) is left out.
//!
//! The meter never sees a packet. It reads the two classes' cumulative
//! delay sums and counts ([`Totals`]) when the measured period begins, at
//! every interval boundary (the simulator schedules a timer event there)
//! and at the end of the run, and takes differences: the hot path of a run
//! is the same whether it measures delay ratios or not, and a run that
//! does not ask for them (`run.delay_ratios`) schedules no event. A packet
//! that leaves at the very instant of a boundary counts in the interval
//! that the event order gives it (events at one instant run in the order
//! they were scheduled).

use phb::Time;

use crate::measure::ClassStats;

/// The two classes' delay sums (nanoseconds) and packet counts, numerator
/// first, since some origin (cumulative figures of the simulator's
/// counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub sum_ns: [u128; 2],
    pub count: [u64; 2],
}

impl Totals {
    /// The two classes' queueing-delay figures at a link direction, from its
    /// per-class counters (`stats`), numerator class first.
    pub fn at_link(stats: &[ClassStats], classes: [usize; 2]) -> Totals {
        let mut totals = Totals::default();
        for (side, &c) in classes.iter().enumerate() {
            totals.sum_ns[side] = stats[c].delays.sum();
            totals.count[side] = stats[c].delays.count();
        }
        totals
    }

    /// The figures accumulated between `earlier` and these.
    fn since(&self, earlier: &Totals) -> Totals {
        Totals {
            sum_ns: [self.sum_ns[0] - earlier.sum_ns[0], self.sum_ns[1] - earlier.sum_ns[1]],
            count: [self.count[0] - earlier.count[0], self.count[1] - earlier.count[1]],
        }
    }

    /// Numerator mean over denominator mean, if both classes had
    /// departures and the denominator's mean is positive.
    fn ratio(&self) -> Option<f64> {
        if self.count[0] == 0 || self.count[1] == 0 || self.sum_ns[1] == 0 {
            return None;
        }
        let mean = |i: usize| self.sum_ns[i] as f64 / self.count[i] as f64;
        Some(mean(0) / mean(1))
    }
}

/// The per-interval ratios at one timescale.
#[derive(Clone, Debug)]
struct Timescale {
    length: Time,
    /// Whole intervals in the measured period.
    whole: u64,
    /// Intervals closed so far.
    closed: u64,
    /// The totals at the last boundary.
    last: Totals,
    ratios: Vec<f64>,
}

impl Timescale {
    /// Closes the interval that ends now, whose totals are `now`.
    fn close(&mut self, now: Totals) {
        if self.closed < self.whole {
            if let Some(r) = now.since(&self.last).ratio() {
                self.ratios.push(r);
            }
        }
        self.closed += 1;
        self.last = now;
    }
}

/// One row of the `delay_ratios` table: the ratio at one timescale.
#[derive(Clone, Debug, PartialEq)]
pub struct RatioSummary {
    pub timescale: Time,
    /// Whole intervals in the measured period.
    pub intervals: u64,
    /// Intervals that gave a ratio (both classes left, denominator mean > 0).
    pub intervals_used: u64,
    /// Mean of the per-interval ratios; NaN if none.
    pub interval_mean: f64,
    /// 5th, 25th, 50th, 75th and 95th percentiles of the per-interval ratios
    /// (linear interpolation between order statistics, numpy's default); NaN
    /// if none.
    pub interval_percentiles: [f64; 5],
    /// The per-packet ratio over the whole measured period; NaN if a class
    /// had no departure or the denominator's mean is 0.
    pub per_packet: f64,
}

/// The percentiles [`RatioSummary::interval_percentiles`] reports.
pub const PERCENTILES: [f64; 5] = [5.0, 25.0, 50.0, 75.0, 95.0];

/// The `q`-th percentile (0–100) of sorted `values`, interpolated linearly
/// between order statistics (numpy's default); NaN if `values` is empty.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let position = q / 100.0 * (n - 1) as f64;
            let low = position.floor() as usize;
            let high = (low + 1).min(n - 1);
            sorted[low] + (position - low as f64) * (sorted[high] - sorted[low])
        }
    }
}

/// Measures the delay ratio of two classes at one scope, per packet and
/// per interval of each timescale, from the classes' cumulative [`Totals`].
///
/// Calls: [`begin`](Self::begin) when the measured period starts (at its
/// `start`), [`tick`](Self::tick) for timescale `j` at `start + T_j`,
/// `start + 2·T_j`, … before the end, and [`finish`](Self::finish) at the
/// end (it closes a last interval that ends exactly at the end, where no
/// event runs).
#[derive(Clone, Debug)]
pub struct DelayRatioMeter {
    start: Totals,
    timescales: Vec<Timescale>,
}

impl DelayRatioMeter {
    /// A meter for the measured period `[start, end)`, with intervals of each
    /// of `timescales` (each positive).
    pub fn new(timescales: &[Time], start: Time, end: Time) -> DelayRatioMeter {
        let period = (end - start).as_nanos();
        let timescales = timescales
            .iter()
            .map(|&length| {
                assert!(length > Time::ZERO, "a timescale is positive");
                Timescale {
                    length,
                    whole: period / length.as_nanos(),
                    closed: 0,
                    last: Totals::default(),
                    ratios: Vec::new(),
                }
            })
            .collect();
        DelayRatioMeter { start: Totals::default(), timescales }
    }

    /// The interval lengths, in the order given.
    pub fn timescales(&self) -> impl Iterator<Item = Time> + '_ {
        self.timescales.iter().map(|t| t.length)
    }

    /// The measured period begins; `totals` are the classes' figures now.
    pub fn begin(&mut self, totals: Totals) {
        self.start = totals;
        for ts in &mut self.timescales {
            ts.last = totals;
        }
    }

    /// The next boundary of timescale `j` is reached; `totals` are the
    /// classes' figures now.
    pub fn tick(&mut self, j: usize, totals: Totals) {
        self.timescales[j].close(totals);
    }

    /// The run ends with `totals`: closes the last whole interval of each
    /// timescale if its boundary is the end, and summarizes, one row per
    /// timescale in the order given.
    pub fn finish(&mut self, totals: Totals) -> Vec<RatioSummary> {
        let per_packet = totals.since(&self.start).ratio().unwrap_or(f64::NAN);
        self.timescales
            .iter_mut()
            .map(|ts| {
                while ts.closed < ts.whole {
                    ts.close(totals);
                }
                let mut sorted = ts.ratios.clone();
                sorted.sort_by(f64::total_cmp);
                let n = sorted.len();
                RatioSummary {
                    timescale: ts.length,
                    intervals: ts.whole,
                    intervals_used: n as u64,
                    interval_mean: if n > 0 { sorted.iter().sum::<f64>() / n as f64 } else { f64::NAN },
                    interval_percentiles: PERCENTILES.map(|q| percentile(&sorted, q)),
                    per_packet,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TS: usize = 0;
    const DS: usize = 1;
    const OTHER: usize = 2;

    fn ns(t: u64) -> Time {
        Time::from_nanos(t)
    }

    /// Plays departures `(time, class, delay)` through cumulative counters
    /// as the simulator does: the measured period begins at `start`, each
    /// timescale ticks at its boundaries before `end` (before a departure
    /// at the same instant), and the run ends at `end`; departures before
    /// `start` count in the totals but not in the measurement.
    fn play(timescales: &[Time], start: Time, end: Time, trace: &[(u64, usize, u64)]) -> Vec<RatioSummary> {
        let mut m = DelayRatioMeter::new(timescales, start, end);
        let mut totals = Totals::default();
        let mut next: Vec<Time> = timescales.iter().map(|&t| start + t).collect();
        let mut begun = false;
        let mut catch_up = |m: &mut DelayRatioMeter, upto: Time, totals: Totals, begun: &mut bool| {
            if !*begun && start <= upto {
                m.begin(totals);
                *begun = true;
            }
            for (j, t) in next.iter_mut().enumerate() {
                while *begun && *t <= upto && *t < end {
                    m.tick(j, totals);
                    *t += timescales[j];
                }
            }
        };
        for &(t, class, delay) in trace {
            catch_up(&mut m, ns(t), totals, &mut begun);
            if class < 2 {
                totals.sum_ns[class] += delay as u128;
                totals.count[class] += 1;
            }
        }
        catch_up(&mut m, end, totals, &mut begun);
        m.finish(totals)
    }

    /// A hand-made trace whose per-packet and per-interval ratios differ.
    ///
    /// Measured period [100, 145) ns (warm-up ends at 100), timescale 10 ns:
    /// four whole intervals, [100, 110) … [130, 140), and a partial one,
    /// [140, 145), which is left out. A departure before 100 is not
    /// measured.
    ///
    /// | interval | TS delays | DS delays | ratio |
    /// |---|---|---|---|
    /// | before 100 | 50 | 1 | not measured |
    /// | [100, 110) | 6, 6 | 1 | 6 / 1 = 6 |
    /// | [110, 120) | 2 | 2, 2, 2, 2, 2 | 2 / 2 = 1 |
    /// | [120, 130) | 9 | — | none (no DS departure) |
    /// | [130, 140) | — | — | none |
    /// | [140, 145) | 30 | 3 | partial: left out |
    ///
    /// Per interval: mean (6 + 1) / 2 = 3.5; median 3.5; 5th percentile
    /// 1 + 0.05·(6 − 1) = 1.25; 95th 1 + 0.95·5 = 5.75.
    /// Per packet: TS (6 + 6 + 2 + 9 + 30) / 5 = 53/5, DS (1 + 5·2 + 3) / 7
    /// = 14/7 = 2, ratio 53/10 = 5.3.
    #[test]
    fn hand_made_trace_per_packet_and_per_interval_differ() {
        let trace: &[(u64, usize, u64)] = &[
            (90, TS, 50),
            (95, DS, 1),
            (100, TS, 6),
            (103, DS, 1),
            (104, OTHER, 1000),
            (109, TS, 6),
            (110, TS, 2),
            (111, DS, 2),
            (112, DS, 2),
            (113, DS, 2),
            (114, DS, 2),
            (119, DS, 2),
            (125, TS, 9),
            (140, TS, 30),
            (144, DS, 3),
        ];
        let [s] = play(&[ns(10)], ns(100), ns(145), trace).try_into().unwrap();
        assert_eq!(s.timescale, ns(10));
        assert_eq!((s.intervals, s.intervals_used), (4, 2));
        assert!((s.interval_mean - 3.5).abs() < 1e-12, "{s:?}");
        let want = [1.25, 2.25, 3.5, 4.75, 5.75];
        for (got, want) in s.interval_percentiles.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{s:?}");
        }
        assert!((s.per_packet - 5.3).abs() < 1e-12, "{s:?}");
    }

    /// The same shape on other timescales: one longer than the period (no
    /// whole interval, no interval ratio; per packet unchanged), one of 1 ns
    /// (every departure alone in its interval, none with both classes), and
    /// one whose only interval ends exactly at the end of the run, where no
    /// tick runs: `finish` closes it.
    #[test]
    fn timescales_are_independent_and_the_last_interval_closes_at_the_end() {
        let trace = [(100, TS, 6), (103, DS, 1), (144, DS, 3)];
        let s = play(&[ns(50), ns(1), ns(45)], ns(100), ns(145), &trace);
        assert_eq!((s[0].intervals, s[0].intervals_used), (0, 0));
        assert!(s[0].interval_mean.is_nan() && s[0].interval_percentiles.iter().all(|p| p.is_nan()));
        assert_eq!((s[1].intervals, s[1].intervals_used), (45, 0));
        // One whole interval of 45 ns: TS 6 over DS (1 + 3) / 2 = 2 → 3, as per packet.
        assert_eq!((s[2].intervals, s[2].intervals_used), (1, 1));
        assert!((s[2].interval_mean - 3.0).abs() < 1e-12 && (s[2].per_packet - 3.0).abs() < 1e-12);
    }

    #[test]
    fn a_zero_denominator_leaves_the_interval_out() {
        let trace = [(0, TS, 5), (1, DS, 0), (10, TS, 4), (11, DS, 2)];
        let [s] = play(&[ns(10)], Time::ZERO, ns(20), &trace).try_into().unwrap();
        assert_eq!(s.intervals_used, 1);
        assert_eq!(s.interval_mean, 2.0);
        assert_eq!(s.per_packet, 9.0 / 2.0 / 1.0);
    }

    #[test]
    fn percentiles_interpolate_like_numpy() {
        let v = [1.0, 2.0, 4.0, 8.0];
        // numpy.percentile([1, 2, 4, 8], [0, 5, 50, 95, 100]) = 1, 1.15, 3, 7.4, 8
        for (q, want) in [(0.0, 1.0), (5.0, 1.15), (50.0, 3.0), (95.0, 7.4), (100.0, 8.0)] {
            assert!((percentile(&v, q) - want).abs() < 1e-12, "{q}");
        }
        assert!(percentile(&[], 50.0).is_nan());
        assert_eq!(percentile(&[3.0], 95.0), 3.0);
    }
}
