//! What an emulation runs, decided before anything is created: the
//! scenario (already validated by `phb_sim::load`) checked for what a real
//! stack can carry, each flow's ports and routes, and the hosts' addresses.
//!
//! **Addresses.** Host node `n` is `10.77.x.y` with `x.y` = `n + 1` (a
//! /16 on the TUN device of its own namespace, where nothing else lives, so
//! the prefix cannot clash with the machine's networks).
//!
//! **Flows on the wire.** Flow `f` (in the simulator's order: groups in file
//! order, `count` flows each) sends from source port [`BASE_PORT`]` + f` to
//! [`SINK_PORT`] of its destination: the router reads the flow from the
//! source port of data packets and the destination port of the reverse
//! direction (TCP ACKs), so a five-tuple names one flow of the scenario.

use phb::{Rng, Time};
use phb_sim::net::routing::{adjacency, pinned_path, shortest_path, Routes};
use phb_sim::scenario::{Congestion, NodeKind, Scenario, Transport};
use phb_sim::tcp::{Rules, Variant};

/// Flow `f`'s sender binds source port `BASE_PORT + f`.
pub const BASE_PORT: u16 = 20000;
/// The port every host's sink listens on (TCP) and receives on (UDP).
pub const SINK_PORT: u16 = 5001;
/// The most flows the port numbering leaves room for.
pub const MAX_FLOWS: usize = (u16::MAX - BASE_PORT) as usize;

/// The congestion controls a sender may ask the kernel for (`TCP_CONGESTION`).
pub const CONGESTION_CONTROLS: [&str; 3] = ["reno", "cubic", "bbr"];

/// Host node `node`'s address.
pub fn host_addr(node: usize) -> [u8; 4] {
    let n = node as u32 + 1;
    [10, 77, (n >> 8) as u8, n as u8]
}

/// The node whose address is `addr`, if it is one of [`host_addr`]'s.
pub fn node_of_addr(addr: [u8; 4]) -> Option<usize> {
    if addr[0] != 10 || addr[1] != 77 {
        return None;
    }
    let n = (usize::from(addr[2]) << 8) | usize::from(addr[3]);
    n.checked_sub(1)
}

/// One flow as the emulator runs it.
#[derive(Clone, Debug)]
pub struct FlowPlan {
    /// `group` or `group.i`, as the simulator names it.
    pub name: String,
    pub group: usize,
    pub src: usize,
    pub dst: usize,
    pub class: usize,
    pub tcp: bool,
    /// The congestion control its group asks for (`None`: the run's, the
    /// command line's `--congestion`).
    pub congestion: Option<Congestion>,
    /// When it starts (start plus the simulator's jitter) and stops sending,
    /// from the run's start.
    pub start: Time,
    pub stop: Time,
    /// Route of its data (source to destination) and of the reverse direction.
    pub route_fwd: u32,
    pub route_rev: u32,
}

/// Everything the router and the agents need beyond the scenario.
#[derive(Debug)]
pub struct Plan {
    pub flows: Vec<FlowPlan>,
    pub routes: Routes,
    /// Node indices of the hosts, in node order.
    pub hosts: Vec<usize>,
    /// Per host node: whether its TCP negotiates SACK (`net.ipv4.tcp_sack`).
    pub sack: Vec<bool>,
}

/// A scenario feature the emulator cannot run: the key and why.
fn refuse(key: String, why: &str) -> String {
    format!("{key}: {why}")
}

/// Checks that `scenario` can be emulated and plans its flows; the error
/// names the key that cannot be.
pub fn plan(scenario: &Scenario, seed: u64) -> Result<Plan, String> {
    if !scenario.lsps.is_empty() {
        return Err(refuse(
            "lsps".into(),
            "TWAM's LSPs are not emulated (their windows come from the simulator's senders)",
        ));
    }
    if let Some(l) = scenario.links.iter().position(|l| l.framing != phb::Framing::None) {
        return Err(refuse(format!("links[{l}].framing"), "ATM cell framing is not emulated"));
    }
    let nodes = scenario.nodes.len();
    if nodes >= 0xffff {
        return Err(refuse("nodes".into(), "emulate addresses at most 65534 nodes"));
    }
    let forwards: Vec<bool> = scenario.nodes.iter().map(|n| n.kind == NodeKind::Router).collect();
    let adj = adjacency(nodes, &scenario.links);
    let mut routes = Routes::default();
    let mut flows = Vec::new();
    let mut sack: Vec<Option<(bool, usize)>> = vec![None; nodes];
    for (g, group) in scenario.groups.iter().enumerate() {
        let key = |k: &str| format!("traffic[{g}].{k}");
        if group.windows.is_some() {
            return Err(refuse(key("schedule"), "flow-count schedules are not emulated yet"));
        }
        let congestion = match &group.transport {
            Transport::Tcp(t) => t.congestion,
            Transport::Udp(_) => None,
        };
        let tcp = match &group.transport {
            Transport::Udp(model) => {
                if model.packet_size() < crate::agent::UDP_HEADERS {
                    return Err(refuse(key("packet_size"), "a UDP packet is at least 28 B (its IP and UDP headers)"));
                }
                false
            }
            Transport::Tcp(t) => {
                if t.config.rules != Rules::Rfc {
                    return Err(refuse(
                        key("profile"),
                        "this TCP profile follows a simulator's rules (ns-2, ns-3), which a real stack cannot; use profile = \"linux\"",
                    ));
                }
                if matches!(t.app, phb_sim::apps::AppModel::Phases(_)) {
                    return Err(refuse(
                        key("app"),
                        "phases withdraw data not yet sent, which a real socket's buffer cannot; bulk and files are emulated",
                    ));
                }
                let with_sack = match t.config.variant {
                    Variant::Sack => true,
                    Variant::NewReno => false,
                    Variant::Reno => {
                        return Err(refuse(
                            key("variant"),
                            "Linux has no Reno loss recovery; use \"newreno\" (SACK off) or \"sack\"",
                        ))
                    }
                };
                for host in [group.src, group.dst] {
                    match sack[host] {
                        Some((other, h)) if other != with_sack => {
                            return Err(refuse(
                                key("variant"),
                                &format!(
                                    "SACK is set per host namespace, and traffic[{h}] at the same host uses the other setting"
                                ),
                            ))
                        }
                        _ => sack[host] = Some((with_sack, g)),
                    }
                }
                true
            }
        };
        let path = |from: usize, to: usize, pinned: Option<Vec<usize>>| match pinned {
            Some(nodes) => pinned_path(&adj, &nodes),
            None => shortest_path(&adj, &forwards, from, to),
        };
        let fwd = path(group.src, group.dst, group.path.clone()).ok_or_else(|| refuse(key("to"), "unreachable"))?;
        let rev = path(group.dst, group.src, group.path.as_ref().map(|p| p.iter().rev().copied().collect()))
            .ok_or_else(|| refuse(key("from"), "unreachable from the destination"))?;
        let (route_fwd, route_rev) = (routes.add(&fwd), routes.add(&rev));
        for i in 0..group.count {
            let name = if group.count == 1 { group.name.clone() } else { format!("{}.{}", group.name, i) };
            let jitter = if group.start_jitter > Time::ZERO {
                let mut rng = Rng::derive(seed, &format!("jitter/{name}"));
                Time::from_secs_f64(rng.uniform() * group.start_jitter.as_secs_f64())
            } else {
                Time::ZERO
            };
            flows.push(FlowPlan {
                name,
                group: g,
                src: group.src,
                dst: group.dst,
                class: group.class,
                tcp,
                congestion,
                start: group.start + jitter,
                stop: group.stop,
                route_fwd,
                route_rev,
            });
        }
        if flows.len() > MAX_FLOWS {
            return Err(refuse(key("count"), &format!("emulate runs at most {MAX_FLOWS} flows")));
        }
    }
    let hosts = (0..nodes).filter(|&n| !forwards[n]).collect();
    let sack = sack.iter().map(|s| s.is_none_or(|(on, _)| on)).collect();
    Ok(Plan { flows, routes, hosts, sack })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip() {
        for node in [0, 1, 254, 255, 256, 65533] {
            assert_eq!(node_of_addr(host_addr(node)), Some(node));
        }
        assert_eq!(node_of_addr([192, 168, 0, 1]), None);
        assert_eq!(node_of_addr([10, 77, 0, 0]), None);
    }
}
