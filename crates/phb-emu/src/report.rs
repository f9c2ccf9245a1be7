//! An emulation's results: the `classes`, `flows`, `timeseries`,
//! `transfers`, `counters`, `delay_ratios`, `delay_histogram` and
//! `conditioners` tables, built by the simulator's own builders
//! ([`ClassRows`], [`phb_sim::flows_table`], [`TimeSeries`],
//! [`transfers_table`], [`phb_sim::CounterRows`], [`delay_ratios_table`],
//! [`phb_sim::ConditionerRows`]), and `emulation.json`, the run's facts and the
//! emulator's fidelity.
//!
//! Differences from the simulator's tables, by nature of a real stack:
//! a flow's packets are counted as the router sees them (sent: read from
//! the source's TUN device; received: written to the destination's); the
//! one-way delay runs from the first to the last device, without the
//! hosts' stacks; `goodput_bps` counts the TCP payload bytes received,
//! retransmitted bytes included. A TCP flow's `retransmissions`
//! (`tcpi_total_retrans`), `timeouts` (`tcpi_total_rto`, Linux 6.7 and
//! later) and `cwnd_mean_segments` (the mean of the samples after the
//! warm-up) come from the agents' `TCP_INFO` samples ([`crate::tcp_info`]);
//! the kernel does not count fast retransmits per socket, so
//! `fast_retransmits` is 0. A traced TCP group's (`trace = true`) samples
//! at the time series' instants appear in `timeseries` as the simulator's
//! (`flow/<name>`: `cwnd_segments`, `ssthresh_segments`, `srtt_s`), with
//! `retransmissions` (cumulative) beside them. The `flows` table ends with
//! the emulator's own `kernel_*` columns: what the kernel used for each
//! TCP flow (segment size, initial window, first RTO, options, congestion
//! control, the receiver's window).

use std::fmt::Write as _;
use std::path::Path;

use phb::Time;
use phb_sim::output::parquet_file::to_parquet;
use phb_sim::scenario::Scenario;
use phb_sim::scenario::Transport;
use phb_sim::{
    delay_ratios_table, transfers_table, ClassRows, Column, FlowCounts, FlowFacts, SenderFigures, Table, TimeSeries,
    END_TO_END,
};

use crate::commands::Outcome;
use crate::plan::Plan;
use crate::router::Router;
use crate::tcp_info::{self, FlowSummary, Opening, Reports, Sample};

/// The `classes` and `delay_histogram` tables.
fn classes_tables(scenario: &Scenario, router: &Router, reached_s: f64, measured_s: f64) -> [Table; 2] {
    let mut rows = ClassRows::default();
    for (c, class) in scenario.classes.iter().enumerate() {
        let stats = &router.end_to_end[c];
        if stats.total.arrivals > 0 {
            rows.push(END_TO_END, &class.name, stats, measured_s, stats.backlog());
        }
    }
    router.push_port_rows(&mut rows, Time::from_secs_f64(reached_s), measured_s);
    rows.into_tables()
}

fn flows_table(scenario: &Scenario, plan: &Plan, router: &Router, summaries: &[FlowSummary], measured_s: f64) -> Table {
    let facts: Vec<FlowFacts> = plan
        .flows
        .iter()
        .map(|f| FlowFacts { name: &f.name, group: f.group, class: f.class, tcp: f.tcp, start: f.start })
        .collect();
    let counts: Vec<FlowCounts> =
        router.flows.iter().zip(&router.flows_at_warmup).map(|(now, then)| now.since(then)).collect();
    let senders: Vec<SenderFigures> = summaries
        .iter()
        .zip(&plan.flows)
        .map(|(s, f)| {
            if !f.tcp {
                return SenderFigures::NONE;
            }
            let (retransmissions, timeouts, cwnd_mean_segments) = (s.retransmissions, s.timeouts, s.cwnd_mean_segments);
            SenderFigures {
                retransmissions,
                fast_retransmits: 0,
                timeouts,
                first_timeouts: 0,
                first_timeouts_s: f64::NAN,
                ecn_reductions: 0,
                cwnd_mean_segments,
            }
        })
        .collect();
    phb_sim::flows_table(scenario, &facts, &counts, &senders, measured_s)
}

/// Adds the `kernel_*` columns to the `flows` table: what the kernel used
/// for each TCP flow, from its opening ([`tcp_info::Opening`]) and its
/// last sample; "" and NaN for UDP flows and a TCP flow that never
/// connected.
fn add_kernel_columns(table: &mut Table, plan: &Plan, reports: &Reports, summaries: &[FlowSummary]) {
    let opening = |f: usize| reports.openings.iter().find(|(flow, _)| *flow == f).map(|(_, o)| o);
    let flows = 0..plan.flows.len();
    let text = |get: fn(&Opening) -> String| {
        Column::Str(flows.clone().map(|f| opening(f).map_or_else(String::new, get)).collect())
    };
    let number =
        |get: fn(&Opening) -> f64| Column::F64(flows.clone().map(|f| opening(f).map_or(f64::NAN, get)).collect());
    table.push("kernel_congestion", text(|o| o.congestion.clone()));
    table.push("kernel_options", text(Opening::option_names));
    table.push("kernel_snd_mss_bytes", number(|o| f64::from(o.snd_mss)));
    table.push("kernel_initial_cwnd_segments", number(|o| f64::from(o.cwnd)));
    table.push("kernel_rto_s", number(|o| o.rto.as_secs_f64()));
    table.push("kernel_snd_wscale", number(|o| if o.options & 4 != 0 { f64::from(o.snd_wscale) } else { f64::NAN }));
    table.push("kernel_peer_window_bytes", Column::F64(summaries.iter().map(|s| s.peer_window_bytes).collect()));
}

/// The router's time series with the traced TCP flows' samples taken at
/// its instants (`k·interval`).
fn timeseries_table(scenario: &Scenario, plan: &Plan, mut series: TimeSeries, samples: &[Sample]) -> Table {
    if let Some(interval) = scenario.run.sample_interval {
        let traced =
            |f: usize| matches!(&scenario.groups[plan.flows[f].group].transport, Transport::Tcp(tcp) if tcp.trace);
        let on_grid =
            |s: &Sample| s.time.as_nanos().is_multiple_of(interval.as_nanos()) && s.time < scenario.run.duration;
        for s in samples.iter().filter(|s| on_grid(s) && traced(s.flow)) {
            let name = &plan.flows[s.flow].name;
            let ssthresh = s.ssthresh_segments.map(f64::from);
            series.record_flow(s.time, name, f64::from(s.cwnd_segments), ssthresh, s.srtt);
            series.push(s.time, &format!("flow/{name}"), "", "retransmissions", f64::from(s.total_retrans));
        }
    }
    series.into_table()
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).expect("a String"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON number, `null` for NaN or infinities.
fn json_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".to_owned()
    }
}

/// Facts the command line turns into summary.json.
pub struct Facts<'a> {
    pub seed: u64,
    pub congestion: &'a str,
    /// Time the run reached (the duration, unless it was stopped).
    pub reached_s: f64,
    /// CPU time the router used during the run (user and system).
    pub cpu_s: f64,
    /// What became of the scenario's commands.
    pub commands: &'a [Outcome<'a>],
}

/// The `commands` list of `emulation.json`: per command, its entry, name,
/// host, when it started and was stopped, how it ended and its exit code
/// or signal.
fn commands_json(scenario: &Scenario, outcomes: &[Outcome]) -> String {
    let seconds = |t: Option<phb::Time>| t.map_or("null".to_owned(), |t| json_number(t.as_secs_f64()));
    let number = |n: Option<i32>| n.map_or("null".to_owned(), |n| n.to_string());
    let items: Vec<String> = outcomes
        .iter()
        .map(|o| {
            use std::os::unix::process::ExitStatusExt;
            format!(
                "{{\"traffic\": {}, \"name\": {}, \"host\": {}, \"started_s\": {}, \"stopped_s\": {}, \
                 \"ended\": {}, \"exit_code\": {}, \"signal\": {}}}",
                o.def.index,
                json_string(&o.def.name),
                json_string(&scenario.nodes[o.def.host].name),
                seconds(o.started),
                seconds(o.stopped),
                json_string(o.how),
                number(o.status.and_then(|s| s.code())),
                number(o.status.and_then(|s| s.signal())),
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// Writes `classes.parquet`, `flows.parquet`, `timeseries.parquet`,
/// `transfers.parquet`, `counters.parquet`, `delay_ratios.parquet`,
/// `delay_histogram.parquet`, `conditioners.parquet` and `emulation.json`
/// into `dir`; `reports` are the agents' `TCP_INFO` samples and transfers.
pub fn write(
    dir: &Path,
    scenario: &Scenario,
    plan: &Plan,
    router: &mut Router,
    reports: &Reports,
    facts: &Facts,
) -> std::io::Result<()> {
    let samples = &reports.samples;
    let transfers = reports.transfers.iter().map(|(f, t)| (plan.flows[*f].name.as_str(), t));
    let measured_s = (facts.reached_s - scenario.run.warmup.as_secs_f64()).max(1e-9);
    let metadata = [("phblab_version", env!("CARGO_PKG_VERSION")), ("backend", "emulate")];
    let [classes, delay_histogram] = classes_tables(scenario, router, facts.reached_s, measured_s);
    let summaries = tcp_info::summarize(samples, plan.flows.len(), scenario.run.warmup);
    let tables = [
        classes,
        {
            let mut flows = flows_table(scenario, plan, router, &summaries, measured_s);
            add_kernel_columns(&mut flows, plan, reports, &summaries);
            flows
        },
        timeseries_table(scenario, plan, std::mem::take(&mut router.series), samples),
        transfers_table(transfers),
        router.counters_table(),
        delay_ratios_table(scenario, std::mem::take(&mut router.ratio_summaries)),
        delay_histogram,
        router.conditioners_table(),
    ];
    for table in tables {
        let bytes = to_parquet(&table, &metadata).map_err(std::io::Error::other)?;
        crate::sys::write_new_file(&dir.join(format!("{}.parquet", table.name)), &bytes)?;
    }
    let emu = &router.emu;
    let quantile = |q: f64| json_number(emu.lateness.quantile(q).map_or(f64::NAN, |ns| ns * 1e-9));
    let json = format!(
        "{{\n  \"scenario\": {},\n  \"seed\": {},\n  \"duration_s\": {},\n  \"warmup_s\": {},\n  \"reached_s\": {},\n  \
         \"congestion_control\": {},\n  \"forwarded\": {},\n  \"lateness_p50_s\": {},\n  \
         \"lateness_p99_s\": {},\n  \"lateness_max_s\": {},\n  \"foreign_packets\": {},\n  \"pool_exhausted\": {},\n  \
         \"write_errors\": {},\n  \"loop_turns\": {},\n  \"router_cpu_s\": {},\n  \"ecn_flows\": {},\n  \
         \"delivered_ce\": {},\n  \"other_packets\": {},\n  \"other_delivered\": {},\n  \"commands\": {}\n}}\n",
        json_string(&scenario.name),
        facts.seed,
        json_number(scenario.run.duration.as_secs_f64()),
        json_number(scenario.run.warmup.as_secs_f64()),
        json_number(facts.reached_s),
        json_string(facts.congestion),
        emu.forwarded,
        quantile(0.5),
        quantile(0.99),
        json_number(emu.lateness.max().map_or(f64::NAN, |ns| ns as f64 * 1e-9)),
        emu.foreign,
        emu.pool_exhausted,
        emu.write_errors,
        emu.turns,
        json_number(facts.cpu_s),
        summaries.iter().filter(|s| s.ecn).count(),
        summaries.iter().map(|s| s.delivered_ce).sum::<u64>(),
        emu.other_packets,
        emu.other_delivered,
        commands_json(scenario, facts.commands),
    );
    crate::sys::write_new_file(&dir.join("emulation.json"), json.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_and_numbers_are_escaped() {
        assert_eq!(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
        assert_eq!(json_number(f64::NAN), "null");
        assert_eq!(json_number(0.25), "0.25");
    }
}
