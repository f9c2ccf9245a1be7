//! The memory and event budget of a run, estimated before it starts. A
//! sample every nanosecond, a TCP window of 2³² segments or ten million
//! flows used to be accepted and then exhausted the machine (issue 11); now
//! validation refuses them, naming the key responsible and the estimate,
//! when the total exceeds `run.memory_limit` (default [`DEFAULT_LIMIT`]).
//!
//! What grows with the input, and what each item costs. The costs were
//! measured as the simulator's peak resident memory (`examples/bench`) over
//! runs that vary one input at a time, and rounded up:
//!
//! - a link: [`LINK_BYTES`] (its two ports, qdiscs and counters, the delay
//!   histograms they fill as the run goes on, their result rows, and its
//!   share of the parsed file);
//! - a flow: [`UDP_FLOW_BYTES`] or [`TCP_FLOW_BYTES`] (its state, counters
//!   and result rows);
//!
//!   the link and TCP flow costs were re-measured on the scale benchmark's
//!   dumbbell (`benches/scale/dumbbell.toml`, a pair being two links and a
//!   NewReno flow) in 2 s runs of 1,000 and 10,000 pairs, whose peak
//!   resident memory was 24.2 and 23.5 KB a pair: a link's share (heap
//!   profile) about 7.6 KB — delay histograms 2.9 KB, result rows 2.4 KB,
//!   queues 0.9 KB, ports 0.8 KB — and a flow's about 3.5 KB, rounded up
//!   to cover the allocator's overhead;
//! - a TCP flow's first burst, `min(initial_window, window)` segments sent
//!   at once, [`SEGMENT_BYTES`] each while outstanding (later, ACKs clock
//!   the window open no faster than the network carries the data);
//! - a time-series row, [`ROW_BYTES`]. Each sample writes, for every
//!   sampled link direction on a route some traffic takes, its queue (2
//!   rows), each RED-family buffer's average (and each DWRED buffer's
//!   `max_th`) and each class's throughput, mean delay, offered load and
//!   loss rate; each class's throughput and mean delay end to end (if
//!   sampled); 3 rows per traced TCP flow; and one per LSP (its
//!   `W_LSP^cwnd`).
//!
//! Samples are events as well, which cost time rather than memory: a run
//! takes at most [`MAX_SAMPLES`], and at most [`MAX_TIMER_EVENTS`] events
//! of all its periodic timers together (samples, delay-ratio boundaries,
//! LSP updates). A flow-count schedule is budgeted from its steps before
//! it is expanded, and `run.memory_limit` is at most [`MAX_LIMIT`]. Packets in queues are bounded by the
//! qdiscs' limits and not counted. The estimate is the simulator's own; the
//! Python front end's copy of the result tables comes on top.

use std::collections::{BTreeMap, HashSet};

use phb::queue::{BufferPolicy, QdiscConfig};

use super::generators::links_made;
use super::{Context, Links, Nodes, Result};
use crate::net::routing::{Topology, Wanted};
use crate::scenario::location::join;
use crate::scenario::model::{traffic_index, CommandDef, LspDef, NodeKind, RunConfig, TrafficGroup, Transport};
use crate::scenario::raw;
use crate::scope::{split_link_direction, END_TO_END};

/// `run.memory_limit` when the file gives none.
pub(super) const DEFAULT_LIMIT: u64 = 4 << 30;
const DEFAULT_LIMIT_TEXT: &str = "4GiB";
pub(super) const LINK_BYTES: u128 = 10 << 10;
pub(super) const UDP_FLOW_BYTES: u128 = 1 << 10;
pub(super) const TCP_FLOW_BYTES: u128 = 4 << 10;
pub(super) const SEGMENT_BYTES: u128 = 32;
pub(super) const ROW_BYTES: u128 = 160;
/// Samples a run may take (`run.duration / run.sample_interval`).
pub(super) const MAX_SAMPLES: u64 = 100_000_000;
/// Periodic timer events a run may take: samples, delay-ratio interval
/// boundaries and LSP updates together. At about 30 ns each (measured on
/// a 1 ns delay-ratio timescale: 1.5·10⁹ events in 41 s) this is a few
/// seconds of the run's time on timers alone.
pub(super) const MAX_TIMER_EVENTS: u128 = 100_000_000;
/// The largest `run.memory_limit` accepted: above it, a limit no longer
/// protects any machine (the estimate is for a machine that has it).
pub(super) const MAX_LIMIT: u64 = 1 << 40;
const MAX_LIMIT_TEXT: &str = "1024GiB";

/// One input's share of the estimate.
struct Part {
    /// The key to name when this part is the largest.
    key: String,
    bytes: u128,
    /// What it is, for the message: "10000000 flows of traffic[3]".
    what: String,
    /// How to make it smaller.
    hint: &'static str,
}

/// The flows a generator's traffic template made: all alike.
struct TemplateFlows {
    count: u128,
    per_flow: u128,
    /// The first burst's segments per flow and the key that sets them.
    burst: Option<(u32, &'static str)>,
}

impl Context<'_> {
    /// `run.memory_limit` in bytes, and as written for messages.
    fn memory_limit<'r>(&self, raw_run: &'r raw::Run) -> Result<(u64, &'r str)> {
        match &raw_run.memory_limit {
            Some(q) => match self.size("run.memory_limit", q)? {
                0 => Err(self.err("run.memory_limit", "the memory limit must be positive")),
                bytes if bytes > MAX_LIMIT => Err(self.err(
                    "run.memory_limit",
                    format!("{} is more than the largest limit, {MAX_LIMIT_TEXT}", shown(q.0.trim())),
                )),
                bytes => Ok((bytes, q.0.trim())),
            },
            None => Ok((DEFAULT_LIMIT, DEFAULT_LIMIT_TEXT)),
        }
    }

    /// The links' parts: the file's own, and each generator's at its
    /// `count`.
    fn link_parts(file_links: usize, made: impl IntoIterator<Item = u128>) -> Vec<Part> {
        let mut parts = vec![Part {
            key: "links".into(),
            bytes: file_links as u128 * LINK_BYTES,
            what: format!("{file_links} links"),
            hint: "simulate a smaller network",
        }];
        for (g, links) in made.into_iter().enumerate() {
            parts.push(Part {
                key: format!("generators[{g}].count"),
                bytes: links * LINK_BYTES,
                what: format!("the {links} links of generators[{g}]"),
                hint: "generate a smaller network",
            });
        }
        parts
    }

    /// Refuses generators whose links alone would exceed
    /// `run.memory_limit`, before they are expanded (a `count` of 10⁹ would
    /// otherwise exhaust memory while expanding).
    pub(super) fn generated_links(
        &self,
        raw_run: &raw::Run,
        file_links: usize,
        generators: &[raw::Generator],
    ) -> Result<()> {
        let (limit, limit_text) = self.memory_limit(raw_run)?;
        let parts = Self::link_parts(file_links, generators.iter().map(|g| u128::from(links_made(g))));
        self.refuse_over(&parts, limit, limit_text)
    }

    /// Refuses a run whose estimated memory exceeds `run.memory_limit`, at
    /// the key of its largest part, or whose samples exceed [`MAX_SAMPLES`].
    /// The flows of generated groups count at their generator's `count`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn budget(
        &self,
        raw_run: &raw::Run,
        run: &RunConfig,
        classes: usize,
        nodes: &Nodes,
        links: &Links,
        groups: &[TrafficGroup],
        commands: &[CommandDef],
        lsps: usize,
    ) -> Result<()> {
        let (limit, limit_text) = self.memory_limit(raw_run)?;
        let (file_links, made) = self.origins.links_by_source(self.generators.len());
        let mut parts = Self::link_parts(file_links, made.into_iter().map(|n| n as u128));
        let mut generated: BTreeMap<(usize, &str), TemplateFlows> = BTreeMap::new();
        for (g, group) in groups.iter().enumerate() {
            let i = traffic_index(commands, g);
            let count = group.count as u128;
            let (per_flow, burst) = match &group.transport {
                Transport::Udp(_) => (UDP_FLOW_BYTES, None),
                Transport::Tcp(tcp) => {
                    let c = &tcp.config;
                    let (segments, key) = if c.initial_window <= c.window {
                        (c.initial_window, "initial_window")
                    } else {
                        (c.window, "window")
                    };
                    (TCP_FLOW_BYTES, Some((segments, key)))
                }
            };
            if let Some(source) = self.origins.group_source(i) {
                generated.entry(source).or_insert(TemplateFlows { count: 0, per_flow, burst }).count += count;
                continue;
            }
            parts.push(Part {
                key: format!("traffic[{i}].count"),
                bytes: count * per_flow,
                what: format!("{} of traffic[{i}]", flows(count)),
                hint: "run fewer flows",
            });
            if let Some((segments, key)) = burst {
                parts.push(Part {
                    key: format!("traffic[{i}].{key}"),
                    bytes: count * segments as u128 * SEGMENT_BYTES,
                    what: format!("the first burst of traffic[{i}] ({} × {segments} segments)", flows(count)),
                    hint: "give TCP a smaller window",
                });
            }
        }
        for ((g, template), TemplateFlows { count, per_flow, burst }) in generated {
            parts.push(Part {
                key: format!("generators[{g}].count"),
                bytes: count * per_flow,
                what: format!("{} of generators[{g}].{template}", flows(count)),
                hint: "run fewer flows",
            });
            if let Some((segments, key)) = burst {
                parts.push(Part {
                    key: format!("generators[{g}].{template}.{key}"),
                    bytes: count * segments as u128 * SEGMENT_BYTES,
                    what: format!(
                        "the first burst of generators[{g}].{template} ({} × {segments} segments)",
                        flows(count)
                    ),
                    hint: "give TCP a smaller window",
                });
            }
        }
        let samples = match run.sample_interval {
            Some(interval) => run.duration.as_nanos() / interval.as_nanos(),
            None => 0,
        };
        if samples > 0 {
            let rows = sample_rows(run, classes, nodes, links, groups) + lsps as u128;
            parts.push(Part {
                key: "run.sample_interval".into(),
                bytes: samples as u128 * rows * ROW_BYTES,
                what: format!("{samples} samples of the time series × {rows} rows"),
                hint: "sample less often or name fewer run.sample_scopes",
            });
        }
        self.refuse_over(&parts, limit, limit_text)?;
        if samples > MAX_SAMPLES {
            return Err(self.err(
                "run.sample_interval",
                format!(
                    "{samples} samples, more than the {MAX_SAMPLES} a run may take (each is an event that visits \
                     every sampled scope); sample less often"
                ),
            ));
        }
        Ok(())
    }

    /// Refuses a schedule's `flows` (counted from its steps before any is
    /// expanded; `key` is the step that makes the most) if they alone would
    /// exceed `run.memory_limit`.
    pub(super) fn scheduled_flows(&self, raw_run: &raw::Run, key: &str, flows: u128) -> Result<()> {
        let (limit, limit_text) = self.memory_limit(raw_run)?;
        let part = Part {
            key: key.to_owned(),
            bytes: flows * UDP_FLOW_BYTES,
            what: format!("the {} its schedule starts", self::flows(flows)),
            hint: "run fewer flows",
        };
        self.refuse_over(&[part], limit, limit_text)
    }

    /// Refuses a run whose periodic timers (time-series samples,
    /// delay-ratio interval boundaries, LSP updates every `α·rtt`) would
    /// fire more than [`MAX_TIMER_EVENTS`] times, at the key of the timer
    /// that fires most.
    pub(super) fn timer_events(&self, run: &RunConfig, lsps: &[LspDef]) -> Result<()> {
        let measured = u128::from((run.duration - run.warmup).as_nanos());
        let every = |interval_ns: u128, span: u128| span / interval_ns.max(1);
        let mut timers: Vec<(String, u128)> = Vec::new();
        if let Some(interval) = run.sample_interval {
            timers.push((
                "run.sample_interval".into(),
                every(interval.as_nanos().into(), run.duration.as_nanos().into()),
            ));
        }
        for (i, ratio) in run.delay_ratios.iter().enumerate() {
            for (j, &t) in ratio.timescales.iter().enumerate() {
                timers.push((format!("run.delay_ratios[{i}].timescales[{j}]"), every(t.as_nanos().into(), measured)));
            }
        }
        for lsp in lsps {
            let interval = u128::from(lsp.twam.rtt_lsp.as_nanos()) * u128::from(lsp.twam.alpha);
            timers.push((join(&join("lsps", &lsp.name), "rtt"), every(interval, run.duration.as_nanos().into())));
        }
        let total: u128 = timers.iter().map(|(_, n)| n).sum();
        match timers.iter().max_by_key(|(_, n)| *n) {
            Some((key, most)) if total > MAX_TIMER_EVENTS => Err(self.err(
                key,
                format!(
                    "the run's timers would fire {total} times, more than the {MAX_TIMER_EVENTS} a run may take, \
                     {most} of them here; choose a longer interval (or a shorter run)"
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Refuses `parts` if their total exceeds `limit`, at the key of the
    /// largest.
    fn refuse_over(&self, parts: &[Part], limit: u64, limit_text: &str) -> Result<()> {
        let total: u128 = parts.iter().map(|p| p.bytes).sum();
        if total <= limit as u128 {
            return Ok(());
        }
        let largest = parts.iter().max_by_key(|p| p.bytes).expect("there is always the links' part");
        Err(self.err(
            &largest.key,
            format!(
                "the run would need about {} of memory, more than run.memory_limit ({limit_text}), {} of it for {}; \
                 {}, or raise run.memory_limit",
                bytes(total),
                bytes(largest.bytes),
                largest.what,
                largest.hint
            ),
        ))
    }
}

/// Time-series rows one sample writes at most (see the module doc).
fn sample_rows(run: &RunConfig, classes: usize, nodes: &Nodes, links: &Links, groups: &[TrafficGroup]) -> u128 {
    let classes = classes as u128;
    let qdisc = |port: usize| -> &QdiscConfig {
        let link = &links.defs[port / 2];
        if port.is_multiple_of(2) {
            &link.qdisc_ab
        } else {
            &link.qdisc_ba
        }
    };
    let port_rows = |port: usize| -> u128 {
        let buffers = &qdisc(port).buffers;
        let averages = buffers
            .iter()
            .filter(|b| {
                matches!(
                    b.policy,
                    BufferPolicy::Red(_)
                        | BufferPolicy::Wred(_)
                        | BufferPolicy::Dwred(_)
                        | BufferPolicy::AdaptiveRed(_)
                )
            })
            .count() as u128;
        let dwred = buffers.iter().filter(|b| matches!(b.policy, BufferPolicy::Dwred(_))).count() as u128;
        2 + averages + dwred + 4 * classes
    };
    let ports: Vec<usize> = match &run.sample_scopes {
        Some(scopes) => scopes.iter().filter_map(|scope| port_of_scope(scope, nodes, links)).collect(),
        None => ports_on_routes(nodes, links, groups),
    };
    let end_to_end = if run.samples(END_TO_END) { 2 * classes } else { 0 };
    let traced: u128 = groups
        .iter()
        .filter(|g| matches!(&g.transport, Transport::Tcp(tcp) if tcp.trace))
        .map(|g| g.count as u128)
        .sum();
    ports.into_iter().map(port_rows).sum::<u128>() + end_to_end + 3 * traced
}

/// The port of a link-direction scope `"a->b"` (validated to exist), or
/// `None` for `"end-to-end"`.
fn port_of_scope(scope: &str, nodes: &Nodes, links: &Links) -> Option<usize> {
    let (from, to) = split_link_direction(scope)?;
    let (from, to) = (nodes.index(from).ok()?, nodes.index(to).ok()?);
    let link = links.between(from, to)?;
    Some(if links.defs[link].a == from { 2 * link } else { 2 * link + 1 })
}

/// The ports some flow's packets (or a TCP flow's ACKs) cross, routed as
/// the simulator routes them.
fn ports_on_routes(nodes: &Nodes, links: &Links, groups: &[TrafficGroup]) -> Vec<usize> {
    let topology = Topology::new(
        nodes.defs.iter().map(|n| n.kind == NodeKind::Router).collect(),
        links.defs.iter().map(|l| (l.a, l.b, l.delay)),
    );
    let mut wanted = Vec::with_capacity(2 * groups.len());
    let mut routed = HashSet::new();
    for group in groups {
        let tcp = matches!(group.transport, Transport::Tcp(_));
        for reversed in [false, true].into_iter().take(1 + usize::from(tcp)) {
            let (src, dst) = if reversed { (group.dst, group.src) } else { (group.src, group.dst) };
            match &group.path {
                Some(nodes) => wanted.push(Wanted::Pinned { nodes, reversed }),
                None if routed.insert((src, dst)) => wanted.push(Wanted::Shortest { src, dst }),
                None => {}
            }
        }
    }
    let mut used = vec![false; 2 * links.defs.len()];
    for port in topology.route_all(&wanted).into_iter().flatten().flatten() {
        used[port] = true;
    }
    (0..used.len()).filter(|&p| used[p]).collect()
}

/// A value from the file for a message: quoted, cut after 40 characters.
fn shown(value: &str) -> String {
    let mut chars = value.chars();
    let head: String = chars.by_ref().take(40).collect();
    if chars.next().is_some() {
        format!("{head:?}…")
    } else {
        format!("{head:?}")
    }
}

/// `1 flow`, `10 flows`.
fn flows(count: u128) -> String {
    if count == 1 {
        "1 flow".to_owned()
    } else {
        format!("{count} flows")
    }
}

/// Bytes for messages: `512 B`, `64 KiB`, `9.5 GiB`.
pub(super) fn bytes(n: u128) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value >= 100.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_run(run: &str, extra: &str) -> std::result::Result<crate::scenario::Scenario, String> {
        let text = format!(
            "[run]\n{run}\n[classes]\nbe = 0\nef = 46\n[nodes]\nhosts = [\"a\", \"b\"]\n\
             [[links]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n\
             [[traffic]]\nname = \"u\"\nkind = \"cbr\"\nfrom = \"a\"\nto = \"b\"\nclass = \"be\"\n\
             packet_size = \"100B\"\nrate = \"1Mbps\"\n{extra}\n"
        );
        crate::scenario::load(&text, "s.toml", &[]).map_err(|e| e.to_string())
    }

    /// A limit that protects no machine is refused; with it, a huge count
    /// reached the simulator's set-up and aborted the run.
    #[test]
    fn the_memory_limit_has_a_ceiling() {
        let err =
            with_run("duration = \"2s\"\nmemory_limit = \"18446744073709551615B\"", "count = 4294967295").unwrap_err();
        assert!(err.contains("run.memory_limit") && err.contains("more than the largest limit, 1024GiB"), "{err}");
        assert!(with_run("duration = \"2s\"\nmemory_limit = \"1024GiB\"", "").is_ok());
    }

    /// A 1 ns delay-ratio timescale made a 2 s run take 41 s (1.5·10⁹
    /// timer events); timers are budgeted like memory, naming the key.
    #[test]
    fn timer_events_are_budgeted() {
        let ratio = |t: &str| {
            format!(
                "duration = \"2s\"\ndelay_ratios = [{{ scope = \"a->b\", numerator = \"ef\", denominator = \"be\", \
                 timescales = [\"1s\", \"{t}\"] }}]"
            )
        };
        let err = with_run(&ratio("1ns"), "").unwrap_err();
        assert!(err.contains("run.delay_ratios[0].timescales[1]") && err.contains("timers would fire"), "{err}");
        assert!(with_run(&ratio("1us"), "").is_ok()); // 2·10⁶ boundaries
        let err = with_run("duration = \"200s\"\nsample_interval = \"1us\"", "").unwrap_err();
        assert!(err.contains("run.sample_interval"), "{err}");
    }

    #[test]
    fn byte_counts_read_as_binary_units() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(64 << 10), "64.0 KiB");
        assert_eq!(bytes(9_500_000_000), "8.8 GiB");
        assert_eq!(bytes(300 << 30), "300 GiB");
    }
}
