//! Warnings about a valid scenario that will not measure what it seems to:
//! found from the routes before the run, reported with its results (and by
//! `phblab validate`), never refused.
//!
//! - **A conditioner rule that matches nothing.** For every link direction
//!   with an edge conditioner, the packets that can reach it are known: the
//!   data of the traffic groups routed through it and the ACKs of the TCP
//!   groups routed back through it, with the group's codepoint or one an
//!   earlier conditioner (or an LSP's marker) on the way may set. A rule that
//!   is the first match (RFC 3290 §4.2.2) for none of them never meters or
//!   marks anything: its classes, groups or hosts are not those of the
//!   traffic there, or an earlier rule takes all of it.
//! - **A TCP window too small for the link.** A bulk TCP flow sends at most
//!   `window` segments per round trip, so with a base RTT (the propagation
//!   delays there and back) it cannot exceed `window · (mss + header) · 8 /
//!   RTT`. When that is under half of its share of a link on its path (the
//!   link's rate over the TCP flows routed through it), the window, not the
//!   network, sets its throughput: the ns2 profile's default of 20
//!   segments carries 8 Mb/s at 20 ms, far below a 100 Mb/s link's. A path
//!   with random loss elements (`loss_forward`) limits a flow anyway, to
//!   about `(mss + header) · 8 / RTT · √(3 / 2p)` (Mathis, Semke, Mahdavi &
//!   Ott 1997, eq. 3, with the path's loss probability `p`); no warning then
//!   unless the window is under half that too.
//! - **Flows that start after the run's end.** A group's `start`, or a step
//!   of its flow-count `schedule`, at or after `run.duration` makes flows
//!   that never send.
//! - **JoBS rate guarantees above the link's rate.** The absolute rate
//!   guarantees `μ_i` of a JoBS qdisc (Christin, Liebeherr & Abdelzaher
//!   2001, eq. 8) cannot all hold when they sum to more than the link
//!   carries; JoBS then relaxes them (Section 3; its precedence order,
//!   Section 4.3: loss before delay and rate before proportional
//!   guarantees), but such a sum is more likely a typing mistake than an
//!   experiment.

use std::collections::BTreeSet;

use phb::classify::{Match, PacketKey, Protocol};
use phb::mark::Action;
use phb::queue::SchedulerKind;

use crate::apps::AppModel;
use crate::scenario::{GroupRoute, Scenario, Transport};
use crate::scope::link_direction;

/// The warnings about `scenario`, whose traffic group `g` is routed over
/// `routes[g]` (`scenario::group_routes`).
pub fn warnings(scenario: &Scenario, routes: &[GroupRoute]) -> Vec<String> {
    let mut out = unmatched_rules(scenario, routes);
    out.extend(small_windows(scenario, routes));
    out.extend(late_flows(scenario));
    out.extend(jobs_rates_above_links(scenario));
    out
}

fn port_name(scenario: &Scenario, port: usize) -> String {
    let link = &scenario.links[port / 2];
    let (from, to) = if port.is_multiple_of(2) { (link.a, link.b) } else { (link.b, link.a) };
    link_direction(&scenario.nodes[from].name, &scenario.nodes[to].name)
}

fn conditioner_of(scenario: &Scenario, port: usize) -> Option<&phb::classify::ConditionerConfig> {
    let link = &scenario.links[port / 2];
    if port.is_multiple_of(2) {
        link.conditioner_ab.as_ref()
    } else {
        link.conditioner_ba.as_ref()
    }
}

/// The codepoints a conditioner's rules may mark.
fn marked_codepoints(scenario: &Scenario, port: usize) -> impl Iterator<Item = u8> + '_ {
    conditioner_of(scenario, port).into_iter().flat_map(|c| {
        c.rules.iter().flat_map(|r| {
            [r.actions.green, r.actions.yellow, r.actions.red].into_iter().filter_map(|a| match a {
                Action::Mark { codepoint, .. } => Some(codepoint),
                _ => None,
            })
        })
    })
}

fn unmatched_rules(scenario: &Scenario, routes: &[GroupRoute]) -> Vec<String> {
    let ports = 2 * scenario.links.len();
    let conditioned: Vec<bool> = (0..ports).map(|p| conditioner_of(scenario, p).is_some()).collect();
    if !conditioned.contains(&true) {
        return Vec::new();
    }
    let lsp_marks: Vec<u8> = scenario.lsps.iter().flat_map(|l| [l.marks.0, l.marks.1]).collect();
    // The packet keys that reach each conditioned port, as (group, src, dst, protocol, codepoints).
    let mut reaching: Vec<Vec<(PacketKey, BTreeSet<u8>)>> = vec![Vec::new(); ports];
    for (g, (group, route)) in scenario.groups.iter().zip(routes).enumerate() {
        let codepoint = scenario.classes[group.class].codepoint;
        let key = |src: usize, dst: usize, protocol| PacketKey {
            flow: 0,
            group: g as u32,
            src: src as u32,
            dst: dst as u32,
            protocol,
            codepoint,
        };
        let protocol = if route.acks.is_some() { Protocol::Tcp } else { Protocol::Udp };
        let directions = [(Some(&route.data), group.src, group.dst), (route.acks.as_ref(), group.dst, group.src)];
        for (ports, src, dst) in directions {
            let mut codepoints: BTreeSet<u8> = [codepoint].into_iter().chain(lsp_marks.iter().copied()).collect();
            for &p in ports.into_iter().flatten() {
                if conditioned[p] {
                    reaching[p].push((key(src, dst, protocol), codepoints.clone()));
                    codepoints.extend(marked_codepoints(scenario, p));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (p, keys) in reaching.iter().enumerate() {
        let Some(conditioner) = conditioner_of(scenario, p) else { continue };
        let filters: Vec<&Match> = conditioner.rules.iter().map(|r| &r.matches).collect();
        let mut used = vec![false; filters.len()];
        for (key, codepoints) in keys {
            for &codepoint in codepoints {
                let key = PacketKey { codepoint, ..*key };
                if let Some(first) = filters.iter().position(|m| m.matches(&key)) {
                    used[first] = true;
                }
            }
        }
        for (i, rule) in conditioner.rules.iter().enumerate().filter(|(i, _)| !used[*i]) {
            let what = if rule.meter.is_some() { "its meter never runs" } else { "it never marks" };
            out.push(format!(
                "the conditioner at {port}: rule {i} ({name:?}) matches no packet that crosses {port} \
                 (none of the traffic there has its classes, groups, hosts and protocol, or an earlier rule takes it): {what}",
                port = port_name(scenario, p),
                name = rule.name,
            ));
        }
    }
    out
}

fn small_windows(scenario: &Scenario, routes: &[GroupRoute]) -> Vec<String> {
    let mut tcp_flows = vec![0u64; 2 * scenario.links.len()];
    for (group, route) in scenario.groups.iter().zip(routes) {
        if matches!(group.transport, Transport::Tcp(_)) {
            for &p in &route.data {
                tcp_flows[p] += group.count as u64;
            }
        }
    }
    let mut out = Vec::new();
    for (group, route) in scenario.groups.iter().zip(routes) {
        let path = &route.data;
        let Transport::Tcp(tcp) = &group.transport else { continue };
        if tcp.app != AppModel::Bulk || path.is_empty() {
            continue;
        }
        let one_way = |ports: &[usize]| ports.iter().map(|&p| scenario.links[p / 2].delay.as_secs_f64()).sum::<f64>();
        let rtt_s = one_way(path) + route.acks.as_deref().map_or(0.0, one_way);
        let c = &tcp.config;
        let segment_bits = (c.mss + c.header) as f64 * 8.0;
        let Some(cap_bps) = (rtt_s > 0.0).then(|| c.window as f64 * segment_bits / rtt_s) else { continue };
        let (share_bps, at) = path
            .iter()
            .map(|&p| (scenario.links[p / 2].rate_bps as f64 / tcp_flows[p] as f64, p))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .expect("the path is not empty");
        let delivered: f64 = path.iter().map(|&p| 1.0 - loss_of(scenario, p)).product();
        let loss_bps = match 1.0 - delivered {
            p if p > 0.0 => segment_bits / rtt_s * (1.5 / p).sqrt(),
            _ => f64::INFINITY,
        };
        if cap_bps < share_bps.min(loss_bps) / 2.0 {
            let flows = tcp_flows[at];
            out.push(format!(
                "traffic {name:?}: a TCP window of {window} segments of {segment} B per round trip of at least \
                 {rtt:.1} ms carries at most {cap} per flow, under half its share of {link} ({share} for {flows} TCP \
                 flow{s} at {rate}): the window, not the network, sets its throughput; raise its `window` \
                 (docs/tcp.md, \"The window\")",
                name = group.name,
                window = c.window,
                segment = c.mss + c.header,
                rtt = rtt_s * 1e3,
                cap = rate(cap_bps),
                link = port_name(scenario, at),
                share = rate(share_bps),
                s = if flows == 1 { "" } else { "s" },
                rate = rate(scenario.links[at / 2].rate_bps as f64),
            ));
        }
    }
    out
}

fn late_flows(scenario: &Scenario) -> Vec<String> {
    let end = scenario.run.duration;
    let mut out = Vec::new();
    for group in &scenario.groups {
        let late = match &group.windows {
            Some(windows) => windows.iter().filter(|(start, _)| *start >= end).count(),
            None if group.start >= end => group.count as usize,
            None => 0,
        };
        if late > 0 {
            let what = if group.windows.is_some() { "steps of its `schedule`" } else { "its `start`" };
            out.push(format!(
                "traffic {name:?}: {late} flow{s} start at or after the run's end ({end}s): {what} \
                 lie beyond `run.duration`, so {they} never send",
                name = group.name,
                s = if late == 1 { "" } else { "s" },
                end = end.as_secs_f64(),
                they = if late == 1 { "it" } else { "they" },
            ));
        }
    }
    out
}

fn jobs_rates_above_links(scenario: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    for port in 0..2 * scenario.links.len() {
        let link = &scenario.links[port / 2];
        let qdisc = if port.is_multiple_of(2) { &link.qdisc_ab } else { &link.qdisc_ba };
        let SchedulerKind::Jobs(params) = &qdisc.scheduler else { continue };
        let guaranteed: u64 = params.classes.iter().filter_map(|c| c.mu).sum();
        if guaranteed > link.rate_bps {
            out.push(format!(
                "the JoBS qdisc at {port}: its classes' rate guarantees (`mu`) sum to {sum}, above the link's \
                 {rate}: they cannot all hold, and JoBS will relax them",
                port = port_name(scenario, port),
                sum = rate(guaranteed as f64),
                rate = rate(link.rate_bps as f64),
            ));
        }
    }
    out
}

/// The random-loss probability in front of `port`'s qdisc.
fn loss_of(scenario: &Scenario, port: usize) -> f64 {
    let link = &scenario.links[port / 2];
    if port.is_multiple_of(2) {
        link.loss_ab
    } else {
        link.loss_ba
    }
}

/// A rate in Gb/s, Mb/s or kb/s, three significant digits.
fn rate(bps: f64) -> String {
    let (value, unit) = match bps {
        b if b >= 1e9 => (b / 1e9, "Gb/s"),
        b if b >= 1e6 => (b / 1e6, "Mb/s"),
        b => (b / 1e3, "kb/s"),
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::group_routes;

    fn warnings_of(text: &str) -> Vec<String> {
        let scenario = crate::load(text, "t.toml", &[]).unwrap();
        warnings(&scenario, &group_routes(&scenario))
    }

    const DUMBBELL: &str = r#"
[run]
duration = "1s"
[classes]
be = 0
af11 = 10
af12 = 12
[nodes]
hosts = ["a", "b", "d"]
routers = ["r1", "r2"]
[conditioners.edge]
[[conditioners.edge.rules]]
name = "from-a"
match = { src = ["a"] }
meter = { kind = "token_bucket", rate = "1Mbps", burst_size = "10KB" }
green = "af11"
red = "af12"
[[conditioners.edge.rules]]
name = "af-only"
match = { classes = ["af11"] }
meter = { kind = "token_bucket", rate = "1Mbps", burst_size = "10KB" }
[[links]]
between = ["a", "r1"]
rate = "100Mbps"
delay = "1ms"
[[links]]
between = ["b", "r1"]
rate = "100Mbps"
delay = "1ms"
[[links]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "10ms"
conditioner_forward = "edge"
[[links]]
between = ["r2", "d"]
rate = "100Mbps"
delay = "1ms"
[[traffic]]
name = "bulk"
kind = "tcp"
from = "a"
to = "d"
class = "be"
[[traffic]]
name = "udp"
kind = "cbr"
from = "b"
to = "d"
class = "be"
packet_size = "500B"
rate = "1Mbps"
"#;

    #[test]
    fn flows_that_start_after_the_run_s_end_are_named() {
        let late = DUMBBELL.replace("packet_size = \"500B\"", "packet_size = \"500B\"\nstart = \"1s\"\nstop = \"2s\"");
        let w = warnings_of(&late);
        assert!(
            w.iter().any(|w| w.starts_with("traffic \"udp\": 1 flow start at or after the run's end (1s)")),
            "{w:#?}"
        );
        let scheduled = DUMBBELL.replace(
            "packet_size = \"500B\"",
            "packet_size = \"500B\"\nschedule = [{ at = \"0s\", count = 2 }, { at = \"2s\", count = 5 }]",
        );
        let w = warnings_of(&scheduled);
        assert!(w.iter().any(|w| w.contains("3 flows start at or after") && w.contains("`schedule`")), "{w:#?}");
        assert!(warnings_of(DUMBBELL).iter().all(|w| !w.contains("run's end")));
    }

    #[test]
    fn jobs_rate_guarantees_above_the_link_s_rate_are_named() {
        let jobs = |mu: &str| {
            DUMBBELL.replace("conditioner_forward = \"edge\"", "conditioner_forward = \"edge\"\nqdisc = \"jobs\"")
                + &format!(
                    "[qdiscs.jobs]\nkind = \"classful\"\nscheduler = \"jobs\"\n\
                     buffers = [{{ name = \"shared\", policy = \"droptail\", limit = \"200pkt\" }}]\n\
                     [[qdiscs.jobs.queues]]\nname = \"gold\"\nclasses = [\"af11\"]\nbuffer = \"shared\"\nmu = \"{mu}\"\n\
                     [[qdiscs.jobs.queues]]\nname = \"rest\"\nclasses = [\"be\", \"af12\"]\nbuffer = \"shared\"\nmu = \"40Mbps\"\n"
                )
        };
        let w = warnings_of(&jobs("70Mbps"));
        assert!(w.iter().any(|w| w.starts_with("the JoBS qdisc at r1->r2: its classes' rate guarantees (`mu`) sum to 110 Mb/s, above the link's 100 Mb/s")), "{w:#?}");
        assert!(warnings_of(&jobs("50Mbps")).iter().all(|w| !w.contains("JoBS")));
    }

    #[test]
    fn a_rule_no_traffic_reaches_is_named() {
        let w = warnings_of(DUMBBELL);
        assert_eq!(w.len(), 2, "{w:#?}");
        assert!(w[0].starts_with("the conditioner at r1->r2: rule 1 (\"af-only\") matches no packet"), "{}", w[0]);
        assert!(w[0].ends_with("its meter never runs"));
        // One NewReno flow (ns2 profile: 20 segments of 1000 + 40 B) over a 24 ms round trip: 6.9 Mb/s of 100.
        assert!(w[1].starts_with("traffic \"bulk\": a TCP window of 20 segments of 1040 B"), "{}", w[1]);
        assert!(w[1].contains("carries at most 6.93 Mb/s per flow, under half its share of a->r1 (100 Mb/s for 1 TCP flow at 100 Mb/s)"), "{}", w[1]);
    }

    #[test]
    fn traffic_of_the_rule_s_class_or_a_large_window_gives_no_warning() {
        let text = DUMBBELL.replace("class = \"be\"\npacket_size", "class = \"af11\"\npacket_size");
        let text = text.replace("class = \"be\"\n", "class = \"be\"\nwindow = 1000\n");
        assert_eq!(warnings_of(&text), Vec::<String>::new());
    }

    #[test]
    fn random_loss_that_limits_a_flow_more_than_its_window_gives_no_warning() {
        // Mathis at 1% loss and a 24 ms round trip: 1040 B · 8 / 24 ms · √150 = 4.2 Mb/s, under
        // twice the window's 6.93 Mb/s; at 0.01% loss, 42 Mb/s: the window still caps the flow.
        let lossy =
            |p: &str| DUMBBELL.replace("delay = \"10ms\"\n", &format!("delay = \"10ms\"\nloss_forward = {p}\n"));
        assert!(warnings_of(&lossy("0.01")).iter().all(|w| !w.contains("TCP window")));
        assert!(warnings_of(&lossy("0.0001")).iter().any(|w| w.contains("TCP window")));
    }

    #[test]
    fn a_codepoint_an_earlier_conditioner_marks_reaches_the_rule() {
        // The UDP group is be; a conditioner on b->r1 marks it af11, which the edge's second rule then meters.
        let text = DUMBBELL.replace(
            "[[links]]\nbetween = [\"b\", \"r1\"]\nrate = \"100Mbps\"\ndelay = \"1ms\"\n",
            "[[links]]\nbetween = [\"b\", \"r1\"]\nrate = \"100Mbps\"\ndelay = \"1ms\"\nconditioner_forward = \"mark\"\n",
        ) + "[conditioners.mark]\n[[conditioners.mark.rules]]\nname = \"all\"\ngreen = \"af11\"\n";
        let w = warnings_of(&text);
        assert!(w.iter().all(|w| !w.contains("af-only")), "{w:#?}");
    }
}
