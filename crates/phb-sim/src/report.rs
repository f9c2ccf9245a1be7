//! Turns a finished run's counters into the result tables.
//!
//! - `classes`: one row per (scope, class): end to end, then each link
//!   direction that carried the class. Counts cover the measured period
//!   (after the warm-up); `queued_end` is what was still queued (per link)
//!   or still in the network (end to end) when the run stopped. Delays are
//!   queueing delays (arrival at the qdisc to start of transmission) per
//!   link, and one-way delays (creation to reception) end to end. Per link
//!   also the time-averaged backlog of the class (`backlog_mean_pkts`) and,
//!   on a link with AAL5 framing, the same counts in ATM cells (`*_cells`;
//!   0, or NaN for the mean, elsewhere and end to end).
//! - `flows`: one row per flow. "Packets" are UDP packets or TCP data
//!   segments (retransmissions included); `throughput_bps` counts the IP
//!   bytes of those received, `goodput_bps` the application bytes delivered
//!   in order (for UDP the two are equal).
//! - `transfers`: one row per completed TCP file transfer.
//! - `timeseries`: long form `(time_s, scope, class, metric, value)`:
//!   per link direction the queue (`queue_pkts`, `queue_bytes`, on an AAL5
//!   link `queue_cells`, `red_avg`, `dwred_max_th`) and per class its
//!   backlog (`backlog_pkts`, packets of the class in the qdisc at the
//!   sample; on an AAL5 link also `backlog_cells`), throughput and mean
//!   delay over the interval; under JoBS, per queue (labelled by its name)
//!   its loss rate over the current busy period at the sample
//!   (`busy_loss_rate`, eq. 5: what ALTQ's kernel report gives); end to end, per class throughput and mean
//!   delay; traced TCP flows appear with scope `flow/<name>`, LSPs with
//!   `lsp/<name>` (`w_lsp_segments`).
//! - `delay_ratios`: one row per ratio of `run.delay_ratios` and timescale:
//!   the per-packet ratio of the two classes' mean queueing delays and the
//!   mean and percentiles of the per-interval ratios (`measure::delay_ratio`).
//!   Queueing delays are waits in the qdisc per link, and one-way delay less
//!   the path's transmission and propagation times end to end. Empty unless
//!   the scenario asks; the meters read the counters at interval boundaries
//!   (timer events), never per packet.
//! - `counters`: long form `(scope, queue, counter, value)`: what a qdisc
//!   counts of its own decisions (JoBS), after the warm-up.
//! - `delay_histogram`: per (scope, class) of `classes`, the delays'
//!   distribution: the non-empty buckets of its histogram, 16 per power of
//!   two (`measure::histogram`), with their packets.
//! - `conditioners`: per edge conditioner, rule and colour, the packets the
//!   rule matched and metered so after the warm-up, and the colour's action
//!   ([`conditioners`]).

mod conditioners;

pub use conditioners::ConditionerRows;

use phb::queue::Counter;
use phb::{DropReason, Framing, Qdisc, QdiscConfig, Time};

use crate::apps::Transfer;
use crate::flow::{Flow, FlowCounts, FlowTransport, Tcp};
use crate::measure::delay_ratio::RatioSummary;
use crate::measure::histogram::DelayHistogram;
use crate::measure::ClassStats;
use crate::net::{Port, PortStats};
use crate::output::{Column, RunOutput, Table};
use crate::scenario::Scenario;
use crate::scope::{link_direction, END_TO_END};

/// The scope name of a link direction.
fn port_scope(scenario: &Scenario, port: &Port) -> String {
    link_direction(&scenario.nodes[port.from].name, &scenario.nodes[port.to].name)
}

/// The `class` label of `qdisc`'s buffer `b` in the time series: `""` when
/// the qdisc has one buffer (its series are the link's), else the buffer's
/// name (`bufferN` for an unnamed one).
fn buffer_label(qdisc: &QdiscConfig, b: usize, buffers: usize) -> String {
    match qdisc.buffers.get(b) {
        _ if buffers == 1 => String::new(),
        Some(buffer) if !buffer.name.is_empty() => buffer.name.clone(),
        _ => format!("buffer{b}"),
    }
}

/// Time-series rows, in long form.
#[derive(Default)]
pub struct TimeSeries {
    time_s: Vec<f64>,
    scope: Vec<String>,
    class: Vec<String>,
    metric: Vec<String>,
    value: Vec<f64>,
}

impl TimeSeries {
    /// Adds one row.
    pub fn push(&mut self, now: Time, scope: &str, class: &str, metric: &str, value: f64) {
        self.time_s.push(now.as_secs_f64());
        self.scope.push(scope.to_string());
        self.class.push(class.to_string());
        self.metric.push(metric.to_string());
        self.value.push(value);
    }

    /// Per-class throughput and mean delay over the last interval; at a
    /// link (`link`) also the offered load and the loss rate.
    fn record_classes(
        &mut self,
        scenario: &Scenario,
        now: Time,
        interval: Time,
        scope: &str,
        stats: &mut [ClassStats],
        link: bool,
    ) {
        let per_second = 8.0 / interval.as_secs_f64();
        for (class, s) in scenario.classes.iter().zip(stats) {
            if s.total.arrivals == 0 {
                continue;
            }
            let i = s.take_interval();
            self.push(now, scope, &class.name, "throughput_bps", i.departed_bytes as f64 * per_second);
            if i.departures > 0 {
                self.push(now, scope, &class.name, "delay_mean_s", i.delay_sum_ns as f64 * 1e-9 / i.departures as f64);
            }
            if link {
                self.push(now, scope, &class.name, "offered_bps", i.arrived_bytes as f64 * per_second);
                let resolved = i.departures + i.drops;
                if resolved > 0 {
                    self.push(now, scope, &class.name, "loss_rate", i.drops as f64 / resolved as f64);
                }
            }
        }
    }

    /// Queue length, AQM averages and per-class figures of a port that has
    /// carried traffic (port `p` of the scenario's numbering).
    pub fn record_port(
        &mut self,
        scenario: &Scenario,
        now: Time,
        interval: Time,
        p: usize,
        port: &Port,
        stats: &mut [ClassStats],
    ) {
        let scope = port_scope(scenario, port);
        let cells = port.framing.has_cells();
        let config = scenario.port_qdisc(p);
        self.record_link(scenario, now, interval, &scope, &port.qdisc, config, cells, stats);
    }

    /// Queue length, AQM averages (labelled by `labels`' buffer names) and
    /// per-class figures (`stats`) of the link direction `scope`, served by
    /// `qdisc`, if it has carried traffic; `cells` adds the counts in ATM
    /// cells of an AAL5 link. (The emulator, `phb-emu`, records its links
    /// with this too.)
    #[allow(clippy::too_many_arguments)]
    pub fn record_link<M>(
        &mut self,
        scenario: &Scenario,
        now: Time,
        interval: Time,
        scope: &str,
        qdisc: &Qdisc<M>,
        config: &QdiscConfig,
        cells: bool,
        stats: &mut [ClassStats],
    ) {
        if stats.iter().all(|s| s.total.arrivals == 0) || !scenario.run.samples(scope) {
            return;
        }
        self.push(now, scope, "", "queue_pkts", qdisc.len_packets() as f64);
        self.push(now, scope, "", "queue_bytes", qdisc.len_bytes() as f64);
        if cells {
            self.push(now, scope, "", "queue_cells", qdisc.len_cells() as f64);
        }
        let mut averages = Vec::new();
        qdisc.averages(&mut averages);
        let buffers = averages.len();
        for (buffer, avg) in averages.iter().enumerate() {
            if let Some(avg) = avg {
                self.push(now, scope, &buffer_label(config, buffer, buffers), "red_avg", *avg);
            }
        }
        qdisc.dwred_max_th(&mut averages);
        for (buffer, max_th) in averages.iter().enumerate() {
            if let Some(max_th) = max_th {
                self.push(now, scope, &buffer_label(config, buffer, buffers), "dwred_max_th", *max_th);
            }
        }
        let mut busy_loss = Vec::new();
        qdisc.busy_loss_rates(&mut busy_loss);
        for (queue, p) in config.queues.iter().zip(&busy_loss) {
            self.push(now, scope, &queue.name, "busy_loss_rate", *p);
        }
        self.record_classes(scenario, now, interval, scope, stats, true);
        for (class, s) in scenario.classes.iter().zip(stats.iter()) {
            if s.total.arrivals > 0 {
                self.push(now, scope, &class.name, "backlog_pkts", s.backlog() as f64);
                if cells {
                    self.push(now, scope, &class.name, "backlog_cells", s.backlog_cells() as f64);
                }
            }
        }
    }

    /// Congestion state of a traced TCP flow.
    pub fn record_tcp(&mut self, now: Time, name: &str, tcp: &Tcp) {
        let mss = tcp.sender.mss() as f64;
        let ssthresh = Some(tcp.sender.ssthresh_bytes() / mss);
        self.record_flow(now, name, tcp.sender.cwnd_bytes() / mss, ssthresh, tcp.sender.srtt());
    }

    /// A TCP flow's congestion window and slow-start threshold (segments,
    /// `None` while it has none) and smoothed RTT (`None` before the first
    /// measurement), at scope `flow/<name>` (the simulator's traced flows,
    /// the emulator's `TCP_INFO` samples).
    pub fn record_flow(&mut self, now: Time, name: &str, cwnd: f64, ssthresh: Option<f64>, srtt: Option<Time>) {
        let scope = format!("flow/{name}");
        self.push(now, &scope, "", "cwnd_segments", cwnd);
        if let Some(ssthresh) = ssthresh {
            self.push(now, &scope, "", "ssthresh_segments", ssthresh);
        }
        if let Some(srtt) = srtt {
            self.push(now, &scope, "", "srtt_s", srtt.as_secs_f64());
        }
    }

    /// The window an LSP's TWAM last computed (eq. 7 or 8).
    pub fn record_lsp(&mut self, now: Time, name: &str, twam: &phb::mark::Twam) {
        self.push(now, &format!("lsp/{name}"), "", "w_lsp_segments", twam.w_lsp());
    }

    pub fn record_end_to_end(&mut self, scenario: &Scenario, now: Time, interval: Time, stats: &mut [ClassStats]) {
        if !scenario.run.samples(END_TO_END) {
            return;
        }
        self.record_classes(scenario, now, interval, END_TO_END, stats, false);
    }

    pub fn into_table(self) -> Table {
        let mut t = Table::new("timeseries");
        t.push("time_s", Column::F64(self.time_s));
        t.push("scope", Column::Str(self.scope));
        t.push("class", Column::Str(self.class));
        t.push("metric", Column::Str(self.metric));
        t.push("value", Column::F64(self.value));
        t
    }
}

/// Columns of the `classes` table, filled row by row, and the rows of the
/// `delay_histogram` table of the same scopes and classes (also by the
/// emulator, `phb-emu`, so both write the same tables).
#[derive(Default)]
pub struct ClassRows {
    histogram: HistogramRows,
    scope: Vec<String>,
    class: Vec<String>,
    arrivals: Vec<u64>,
    departures: Vec<u64>,
    dropped: Vec<u64>,
    drops: Vec<Vec<u64>>,
    marked: Vec<u64>,
    loss_rate: Vec<f64>,
    delay: [Vec<f64>; 5],
    throughput_bps: Vec<f64>,
    queued_end: Vec<u64>,
    backlog_mean_pkts: Vec<f64>,
    cells: [Vec<u64>; 4],
    backlog_mean_cells: Vec<f64>,
}

/// One link direction as [`ClassRows::push_port`] reads it: its qdisc,
/// framing and per-class counters.
pub struct PortAt<'a, M> {
    pub qdisc: &'a Qdisc<M>,
    pub framing: Framing,
    pub stats: &'a [ClassStats],
}

/// What a link adds to a class's row: its framing and the occupancy, in
/// packet·ns and cell·ns of the measured period, of the class's packets
/// still queued at the end.
struct LinkRow {
    framing: Framing,
    queued_pkt_ns: u128,
    queued_cell_ns: u128,
}

impl ClassRows {
    /// Adds the row of `class` at `scope` from its counters; `measured_s`
    /// is the length of the measured period. (The backlog means of a link's
    /// row need its occupancy: they are NaN here.)
    pub fn push(&mut self, scope: &str, class: &str, stats: &ClassStats, measured_s: f64, queued_end: u64) {
        self.push_row(scope, class, stats, measured_s, queued_end, None);
    }

    /// Adds the rows of link direction `scope` at the run's end `end`
    /// (`measured_s` after the warm-up): one per class that arrived there,
    /// with the backlog means, which count the packets still in the qdisc
    /// up to `end` (`class_of_codepoint`: a DSCP's class index). The
    /// simulator's and the emulator's links both go through here.
    pub fn push_port<M>(
        &mut self,
        scenario: &Scenario,
        scope: &str,
        port: PortAt<'_, M>,
        class_of_codepoint: impl Fn(usize) -> usize,
        (end, measured_s): (Time, f64),
    ) {
        let warmup = scenario.run.warmup;
        let mut queued: Vec<(u128, u128)> = vec![(0, 0); scenario.classes.len()];
        for pkt in port.qdisc.queued() {
            let c = class_of_codepoint(usize::from(pkt.class & 63));
            let waited = end.saturating_sub(pkt.enqueued.max(warmup)).as_nanos() as u128;
            queued[c].0 += waited;
            queued[c].1 += waited * port.framing.cells(pkt.size) as u128;
        }
        for (c, class) in scenario.classes.iter().enumerate() {
            let stats = &port.stats[c];
            if stats.total.arrivals > 0 {
                let link = LinkRow { framing: port.framing, queued_pkt_ns: queued[c].0, queued_cell_ns: queued[c].1 };
                self.push_row(scope, &class.name, stats, measured_s, stats.backlog(), Some(&link));
            }
        }
    }

    fn push_row(
        &mut self,
        scope: &str,
        class: &str,
        stats: &ClassStats,
        measured_s: f64,
        queued_end: u64,
        link: Option<&LinkRow>,
    ) {
        let counts = stats.measured();
        self.scope.push(scope.to_string());
        self.class.push(class.to_string());
        self.arrivals.push(counts.arrivals);
        self.departures.push(counts.departures);
        self.dropped.push(counts.dropped());
        self.drops.resize(DropReason::ALL.len(), Vec::new());
        for (column, n) in self.drops.iter_mut().zip(counts.drops) {
            column.push(n);
        }
        self.marked.push(counts.marks);
        let resolved = counts.departures + counts.dropped();
        self.loss_rate.push(if resolved > 0 { counts.dropped() as f64 / resolved as f64 } else { f64::NAN });
        let h = &stats.delays;
        let ns = |v: Option<f64>| v.map_or(f64::NAN, |v| v * 1e-9);
        let values = [
            ns(h.mean()),
            ns(h.quantile(0.5)),
            ns(h.quantile(0.95)),
            ns(h.quantile(0.99)),
            ns(h.max().map(|m| m as f64)),
        ];
        for (column, v) in self.delay.iter_mut().zip(values) {
            column.push(v);
        }
        self.histogram.push(scope, class, h);
        self.throughput_bps.push(counts.departed_bytes as f64 * 8.0 / measured_s);
        self.queued_end.push(queued_end);
        let measured_ns = measured_s * 1e9;
        let (mean_pkts, mean_cells) = match link {
            Some(l) => (
                (stats.occupancy_ns + l.queued_pkt_ns) as f64 / measured_ns,
                if l.framing.has_cells() {
                    (stats.occupancy_cell_ns + l.queued_cell_ns) as f64 / measured_ns
                } else {
                    f64::NAN
                },
            ),
            None => (f64::NAN, f64::NAN),
        };
        self.backlog_mean_pkts.push(mean_pkts);
        self.backlog_mean_cells.push(mean_cells);
        let cells = [counts.arrival_cells, counts.departed_cells, counts.dropped_cells, stats.backlog_cells()];
        for (column, n) in self.cells.iter_mut().zip(cells) {
            column.push(n);
        }
    }

    /// The `classes` and `delay_histogram` tables.
    pub fn into_tables(self) -> [Table; 2] {
        let histogram = self.histogram.into_table();
        let mut t = Table::new("classes");
        t.push("scope", Column::Str(self.scope));
        t.push("class", Column::Str(self.class));
        t.push("arrivals", Column::U64(self.arrivals));
        t.push("departures", Column::U64(self.departures));
        t.push("dropped", Column::U64(self.dropped));
        let rows = t.rows();
        let mut drops = self.drops;
        drops.resize(DropReason::ALL.len(), Vec::new());
        for (reason, column) in DropReason::ALL.iter().zip(drops) {
            let column = if column.len() == rows { column } else { vec![0; rows] };
            t.push(&format!("drop_{}", reason.name()), Column::U64(column));
        }
        let marked = if self.marked.len() == rows { self.marked } else { vec![0; rows] };
        t.push("marked", Column::U64(marked));
        t.push("loss_rate", Column::F64(self.loss_rate));
        for (name, column) in
            ["delay_mean_s", "delay_p50_s", "delay_p95_s", "delay_p99_s", "delay_max_s"].iter().zip(self.delay)
        {
            t.push(name, Column::F64(column));
        }
        t.push("throughput_bps", Column::F64(self.throughput_bps));
        t.push("queued_end", Column::U64(self.queued_end));
        t.push("backlog_mean_pkts", Column::F64(self.backlog_mean_pkts));
        let [arrivals, departures, dropped, queued_end] = self.cells;
        t.push("arrivals_cells", Column::U64(arrivals));
        t.push("departures_cells", Column::U64(departures));
        t.push("dropped_cells", Column::U64(dropped));
        t.push("queued_end_cells", Column::U64(queued_end));
        t.push("backlog_mean_cells", Column::F64(self.backlog_mean_cells));
        [t, histogram]
    }
}

/// Rows of the `delay_histogram` table: per scope and class, the non-empty
/// buckets of its delay histogram (`DelayHistogram::coarse_buckets`).
#[derive(Default)]
struct HistogramRows {
    scope: Vec<String>,
    class: Vec<String>,
    lower_s: Vec<f64>,
    upper_s: Vec<f64>,
    packets: Vec<u64>,
}

impl HistogramRows {
    fn push(&mut self, scope: &str, class: &str, histogram: &DelayHistogram) {
        for (lower, upper, count) in histogram.coarse_buckets() {
            self.scope.push(scope.to_owned());
            self.class.push(class.to_owned());
            self.lower_s.push(lower as f64 * 1e-9);
            self.upper_s.push(upper as f64 * 1e-9);
            self.packets.push(count);
        }
    }

    fn into_table(self) -> Table {
        let mut t = Table::new("delay_histogram");
        t.push("scope", Column::Str(self.scope));
        t.push("class", Column::Str(self.class));
        t.push("lower_s", Column::F64(self.lower_s));
        t.push("upper_s", Column::F64(self.upper_s));
        t.push("packets", Column::U64(self.packets));
        t
    }
}

/// Each flow's time-average congestion window over the measured period
/// while it ran (0 for UDP, or a TCP flow that did not run in it: a NaN
/// would make equal runs compare unequal).
fn cwnd_means(flows: &mut [Flow], end: Time) -> Vec<f64> {
    flows
        .iter_mut()
        .map(|f| match &mut f.transport {
            FlowTransport::Tcp(tcp) => {
                let now = tcp.sender.cwnd_integral(end);
                let seconds = now.seconds - tcp.cwnd_at_warmup.seconds;
                let byte_seconds = now.byte_seconds - tcp.cwnd_at_warmup.byte_seconds;
                if seconds > 0.0 {
                    byte_seconds / seconds / tcp.sender.mss() as f64
                } else {
                    0.0
                }
            }
            FlowTransport::Udp { .. } => 0.0,
        })
        .collect()
}

/// What the `flows` table says of a flow beside its counts.
pub struct FlowFacts<'a> {
    pub name: &'a str,
    pub group: usize,
    pub class: usize,
    pub tcp: bool,
    pub start: Time,
}

/// A TCP sender's figures over the measured period (0 and NaN for UDP).
#[derive(Clone, Copy, Debug)]
pub struct SenderFigures {
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub ecn_reductions: u64,
    /// Timeouts that began a sequence of consecutive timeouts, and their
    /// summed duration in seconds (NaN where not measured: the emulator).
    pub first_timeouts: u64,
    pub first_timeouts_s: f64,
    pub cwnd_mean_segments: f64,
}

impl SenderFigures {
    /// A flow without a TCP sender.
    pub const NONE: SenderFigures = SenderFigures {
        retransmissions: 0,
        fast_retransmits: 0,
        timeouts: 0,
        ecn_reductions: 0,
        first_timeouts: 0,
        first_timeouts_s: 0.0,
        cwnd_mean_segments: f64::NAN,
    };
}

/// The `flows` table: per flow its facts, its counts over the measured
/// period (`measured_s` long) and its sender's figures (also the
/// emulator's).
pub fn flows_table(
    scenario: &Scenario,
    facts: &[FlowFacts],
    counts: &[FlowCounts],
    senders: &[SenderFigures],
    measured_s: f64,
) -> Table {
    let mut t = Table::new("flows");
    let strings = |get: &dyn Fn(&FlowFacts) -> String| Column::Str(facts.iter().map(get).collect());
    let numbers = |get: &dyn Fn(&FlowCounts) -> u64| Column::U64(counts.iter().map(get).collect());
    let ratio = |num: &dyn Fn(&FlowCounts) -> f64, den: &dyn Fn(&FlowCounts) -> u64| {
        Column::F64(counts.iter().map(|c| if den(c) > 0 { num(c) / den(c) as f64 } else { f64::NAN }).collect())
    };
    let sender = |get: &dyn Fn(&SenderFigures) -> u64| Column::U64(senders.iter().map(get).collect());
    t.push("flow", strings(&|f| f.name.to_owned()));
    t.push("group", strings(&|f| scenario.groups[f.group].name.clone()));
    t.push("generator", strings(&|f| scenario.groups[f.group].generator.clone()));
    t.push("transport", strings(&|f| if f.tcp { "tcp" } else { "udp" }.to_owned()));
    t.push("class", strings(&|f| scenario.classes[f.class].name.clone()));
    t.push("src", strings(&|f| scenario.nodes[scenario.groups[f.group].src].name.clone()));
    t.push("dst", strings(&|f| scenario.nodes[scenario.groups[f.group].dst].name.clone()));
    t.push("start_s", Column::F64(facts.iter().map(|f| f.start.as_secs_f64()).collect()));
    t.push("sent_pkts", numbers(&|c| c.sent));
    t.push("sent_bytes", numbers(&|c| c.sent_bytes));
    t.push("received_pkts", numbers(&|c| c.received));
    t.push("received_bytes", numbers(&|c| c.received_bytes));
    t.push("lost_pkts", numbers(&|c| c.lost));
    t.push("loss_rate", ratio(&|c| c.lost as f64, &|c| c.received + c.lost));
    t.push("marked_pkts", numbers(&|c| c.marked));
    t.push("delay_mean_s", ratio(&|c| c.delay_sum_ns as f64 * 1e-9, &|c| c.received));
    t.push("queueing_delay_mean_s", ratio(&|c| c.queueing_sum_ns as f64 * 1e-9, &|c| c.received));
    t.push("throughput_bps", Column::F64(counts.iter().map(|c| c.received_bytes as f64 * 8.0 / measured_s).collect()));
    t.push("goodput_bps", Column::F64(counts.iter().map(|c| c.delivered_bytes as f64 * 8.0 / measured_s).collect()));
    t.push("acks_sent", numbers(&|c| c.acks_sent));
    t.push("acks_lost", numbers(&|c| c.acks_lost));
    t.push("retransmissions", sender(&|s| s.retransmissions));
    t.push("fast_retransmits", sender(&|s| s.fast_retransmits));
    t.push("timeouts", sender(&|s| s.timeouts));
    t.push("ecn_reductions", sender(&|s| s.ecn_reductions));
    t.push("first_timeouts", sender(&|s| s.first_timeouts));
    t.push("first_timeouts_s", Column::F64(senders.iter().map(|s| s.first_timeouts_s).collect()));
    t.push("cwnd_mean_segments", Column::F64(senders.iter().map(|s| s.cwnd_mean_segments).collect()));
    t
}

/// The simulated flows' rows of the `flows` table; `cwnd_mean` is each
/// flow's mean congestion window (NaN for UDP).
fn sim_flows_table(scenario: &Scenario, flows: &[Flow], measured_s: f64, cwnd_mean: Vec<f64>) -> Table {
    let facts: Vec<FlowFacts> = flows
        .iter()
        .map(|f| FlowFacts {
            name: &f.name,
            group: f.group,
            class: f.class,
            tcp: matches!(f.transport, FlowTransport::Tcp(_)),
            start: f.start,
        })
        .collect();
    let counts: Vec<FlowCounts> = flows.iter().map(|f| f.total.since(&f.at_warmup)).collect();
    let senders: Vec<SenderFigures> = flows
        .iter()
        .zip(cwnd_mean)
        .map(|(f, cwnd_mean_segments)| match f.tcp() {
            Some(tcp) => {
                let (now, then) = (&tcp.sender.stats, &tcp.stats_at_warmup);
                SenderFigures {
                    retransmissions: now.retransmissions - then.retransmissions,
                    fast_retransmits: now.fast_retransmits - then.fast_retransmits,
                    timeouts: now.timeouts - then.timeouts,
                    ecn_reductions: now.ecn_reductions - then.ecn_reductions,
                    first_timeouts: now.first_timeouts - then.first_timeouts,
                    first_timeouts_s: (now.first_timeouts_ns - then.first_timeouts_ns) as f64 * 1e-9,
                    cwnd_mean_segments,
                }
            }
            None => SenderFigures { cwnd_mean_segments, ..SenderFigures::NONE },
        })
        .collect();
    flows_table(scenario, &facts, &counts, &senders, measured_s)
}

/// Rows of the `counters` table: the qdiscs' own counters (JoBS'
/// relaxations and the like), per link direction, counted after the
/// warm-up (also the emulator's).
#[derive(Default)]
pub struct CounterRows {
    scope: Vec<String>,
    queue: Vec<String>,
    counter: Vec<String>,
    value: Vec<u64>,
}

impl CounterRows {
    /// Adds the counters of the qdisc at link direction `scope`: `now`, less
    /// `at_warmup` (the same counters in the same order, or empty if the
    /// warm-up has not ended); `queue_name` names the qdisc's queues.
    pub fn push_link<'a>(
        &mut self,
        scope: &str,
        queue_name: impl Fn(usize) -> &'a str,
        now: &[Counter],
        at_warmup: &[Counter],
    ) {
        for (i, c) in now.iter().enumerate() {
            let before = at_warmup.get(i).map_or(0, |b| {
                debug_assert_eq!((b.queue, b.name), (c.queue, c.name));
                b.value
            });
            self.scope.push(scope.to_owned());
            self.queue.push(c.queue.map_or(String::new(), |q| queue_name(q).to_owned()));
            self.counter.push(c.name.to_string());
            self.value.push(c.value - before);
        }
    }

    pub fn into_table(self) -> Table {
        let mut t = Table::new("counters");
        t.push("scope", Column::Str(self.scope));
        t.push("queue", Column::Str(self.queue));
        t.push("counter", Column::Str(self.counter));
        t.push("value", Column::U64(self.value));
        t
    }
}

fn counters_table(scenario: &Scenario, ports: &[Port]) -> Table {
    let mut rows = CounterRows::default();
    let mut now = Vec::new();
    for (p, port) in ports.iter().enumerate() {
        port.qdisc.counters(&mut now);
        let queues = &scenario.port_qdisc(p).queues;
        rows.push_link(&port_scope(scenario, port), |q| &queues[q].name, &now, &port.counters_at_warmup);
    }
    rows.into_table()
}

fn conditioners_table(scenario: &Scenario, ports: &[Port]) -> Table {
    let mut rows = ConditionerRows::default();
    for port in ports {
        if let Some(conditioner) = &port.conditioner {
            let scope = port_scope(scenario, port);
            rows.push_port(scenario, &scope, conditioner, port.conditioner_at_warmup.as_ref());
        }
    }
    rows.into_table()
}

/// The `transfers` table: each completed transfer with the name of its
/// flow (also the emulator's).
pub fn transfers_table<'a>(transfers: impl Iterator<Item = (&'a str, &'a Transfer)>) -> Table {
    let (mut flow, mut size, mut start, mut end) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (name, transfer) in transfers {
        flow.push(name.to_owned());
        size.push(transfer.size);
        start.push(transfer.start.as_secs_f64());
        end.push(transfer.end.as_secs_f64());
    }
    let completion = start.iter().zip(&end).map(|(s, e)| e - s).collect();
    let mut t = Table::new("transfers");
    t.push("flow", Column::Str(flow));
    t.push("size_bytes", Column::U64(size));
    t.push("start_s", Column::F64(start));
    t.push("end_s", Column::F64(end));
    t.push("completion_s", Column::F64(completion));
    t
}

/// The `delay_ratios` table from each meter's summaries, in the order of
/// `run.delay_ratios` (also the emulator's).
pub fn delay_ratios_table(scenario: &Scenario, meters: Vec<Vec<RatioSummary>>) -> Table {
    let mut t = Table::new("delay_ratios");
    let (mut scope, mut numerator, mut denominator) = (Vec::new(), Vec::new(), Vec::new());
    let (mut timescale, mut intervals, mut used, mut mean, mut per_packet) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut percentiles: [Vec<f64>; 5] = Default::default();
    for (def, summaries) in scenario.run.delay_ratios.iter().zip(meters) {
        for s in summaries {
            scope.push(def.scope.clone());
            numerator.push(scenario.classes[def.numerator].name.clone());
            denominator.push(scenario.classes[def.denominator].name.clone());
            timescale.push(s.timescale.as_secs_f64());
            intervals.push(s.intervals);
            used.push(s.intervals_used);
            mean.push(s.interval_mean);
            for (column, p) in percentiles.iter_mut().zip(s.interval_percentiles) {
                column.push(p);
            }
            per_packet.push(s.per_packet);
        }
    }
    t.push("scope", Column::Str(scope));
    t.push("numerator", Column::Str(numerator));
    t.push("denominator", Column::Str(denominator));
    t.push("timescale_s", Column::F64(timescale));
    t.push("intervals", Column::U64(intervals));
    t.push("intervals_used", Column::U64(used));
    t.push("per_packet", Column::F64(per_packet));
    t.push("interval_mean", Column::F64(mean));
    for (name, column) in
        ["interval_p05", "interval_p25", "interval_p50", "interval_p75", "interval_p95"].iter().zip(percentiles)
    {
        t.push(name, Column::F64(column));
    }
    t
}

/// What a finished run leaves for its tables: the simulator fills it once
/// the run has ended and its packets are accounted for, and the report
/// reads nothing else of it.
pub(crate) struct FinishedRun<'a> {
    pub scenario: &'a Scenario,
    pub seed: u64,
    /// When the run stopped.
    pub end: Time,
    /// Per class, its end-to-end counters (UDP packets and TCP data).
    pub end_to_end: &'a [ClassStats],
    pub ports: &'a [Port],
    pub port_stats: &'a PortStats,
    pub flows: &'a mut [Flow],
    /// Per codepoint (its six bits), its class.
    pub class_of_codepoint: &'a [u8; 64],
    /// The time series sampled during the run.
    pub series: TimeSeries,
    /// Each delay-ratio meter's summaries, in the order of `run.delay_ratios`.
    pub ratios: Vec<Vec<RatioSummary>>,
    pub events: u64,
    pub warnings: Vec<String>,
}

/// Builds the result tables of a finished, conservation-checked run.
pub(crate) fn collect(run: FinishedRun) -> RunOutput {
    let FinishedRun {
        scenario,
        seed,
        end,
        end_to_end,
        ports,
        port_stats,
        flows,
        class_of_codepoint,
        series,
        ratios,
        events,
        warnings,
    } = run;
    let measured_s = (end - scenario.run.warmup).as_secs_f64();
    let mut rows = ClassRows::default();
    for (c, class) in scenario.classes.iter().enumerate() {
        let stats = &end_to_end[c];
        if stats.total.arrivals > 0 {
            rows.push(END_TO_END, &class.name, stats, measured_s, stats.backlog());
        }
    }
    for (p, port) in ports.iter().enumerate() {
        let at = PortAt { qdisc: &port.qdisc, framing: port.framing, stats: port_stats.of(p) };
        rows.push_port(
            scenario,
            &port_scope(scenario, port),
            at,
            |cp| class_of_codepoint[cp] as usize,
            (end, measured_s),
        );
    }
    let cwnd_mean = cwnd_means(flows, end);
    let flows_rows = sim_flows_table(scenario, flows, measured_s, cwnd_mean);
    let transfers = transfers_table(
        flows
            .iter()
            .filter_map(|f| f.tcp().map(|t| (f, t)))
            .flat_map(|(f, t)| t.app.transfers.iter().map(|tr| (f.name.as_str(), tr))),
    );
    let counters = counters_table(scenario, ports);
    let conditioners = conditioners_table(scenario, ports);
    let series = series.into_table();
    let ratios = delay_ratios_table(scenario, ratios);
    let [classes, delay_histogram] = rows.into_tables();
    RunOutput {
        scenario: scenario.name.clone(),
        seed,
        duration_s: scenario.run.duration.as_secs_f64(),
        warmup_s: scenario.run.warmup.as_secs_f64(),
        events,
        packet_hops: port_stats.all().iter().map(|s| s.total.arrivals).sum(),
        tables: vec![classes, flows_rows, transfers, series, ratios, counters, delay_histogram, conditioners],
        warnings,
    }
}
