//! What an emulation runs, decided before anything is created: the
//! scenario (already validated for the emulator by `phb_sim::load_for`,
//! which refuses what a real stack cannot carry), each flow's ports and
//! routes, and the hosts' addresses.
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
use phb_sim::net::routing::{Routes, RoutesBuilder, Topology, Wanted};
use phb_sim::scenario::{Congestion, NodeKind, Scenario, Transport};
use phb_sim::tcp::Variant;

/// Flow `f`'s sender binds source port `BASE_PORT + f`.
pub const BASE_PORT: u16 = 20000;
/// The port every host's sink listens on (TCP) and receives on (UDP).
pub const SINK_PORT: u16 = 5001;
/// The most flows the port numbering leaves room for (the validator
/// refuses more: `phb_sim::scenario::backend::EMULATE_MAX_FLOWS`).
pub const MAX_FLOWS: usize = (u16::MAX - BASE_PORT) as usize;
const _: () = assert!(MAX_FLOWS == phb_sim::scenario::backend::EMULATE_MAX_FLOWS);

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
    /// Per host node: whether its TCP asks for ECN when it connects
    /// (`net.ipv4.tcp_ecn = 1`: a TCP group with `ecn = true` sends from
    /// it), or only accepts it when the peer asks (`2`, Linux's default,
    /// which the simulator's `ecn = false` follows).
    pub ecn: Vec<bool>,
}

/// A scenario feature the emulator cannot run: the key and why.
fn refuse(key: String, why: &str) -> String {
    format!("{key}: {why}")
}

/// Plans the flows of `scenario`, which was validated for the emulator
/// (`phb_sim::load_for` with `Backend::Emulate`: what a real stack cannot
/// carry is refused there, with the key's position); the error names a
/// flow's key whose destination is unreachable.
pub fn plan(scenario: &Scenario, seed: u64) -> Result<Plan, String> {
    let nodes = scenario.nodes.len();
    let forwards: Vec<bool> = scenario.nodes.iter().map(|n| n.kind == NodeKind::Router).collect();
    let topology = Topology::new(forwards.clone(), scenario.links.iter().map(|l| (l.a, l.b, l.delay)));
    let mut routes = RoutesBuilder::default();
    let mut flows = Vec::new();
    // Per host: SACK unless a TCP group there asks for NewReno (the
    // validator refused groups of both kinds at one host).
    let mut sack = vec![true; nodes];
    // Per host: ECN asked for by its senders (the validator refused groups
    // of both settings sending from one host).
    let mut ecn = vec![false; nodes];
    for (g, group) in scenario.groups.iter().enumerate() {
        let key = |k: &str| format!("traffic[{g}].{k}");
        let (tcp, congestion) = match &group.transport {
            Transport::Udp(_) => (false, None),
            Transport::Tcp(t) => {
                if t.config.variant == Variant::NewReno {
                    sack[group.src] = false;
                    sack[group.dst] = false;
                }
                ecn[group.src] |= t.config.ecn;
                (true, t.congestion)
            }
        };
        let wanted = |reversed: bool| match &group.path {
            Some(nodes) => Wanted::Pinned { nodes, reversed },
            None if reversed => Wanted::Shortest { src: group.dst, dst: group.src },
            None => Wanted::Shortest { src: group.src, dst: group.dst },
        };
        let mut paths = topology.route_all(&[wanted(false), wanted(true)]).into_iter();
        let fwd = paths.next().flatten().ok_or_else(|| refuse(key("to"), "unreachable"))?;
        let rev = paths.next().flatten().ok_or_else(|| refuse(key("from"), "unreachable from the destination"))?;
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
    }
    let hosts = (0..nodes).filter(|&n| !forwards[n]).collect();
    Ok(Plan { flows, routes: routes.finish(), hosts, sack, ecn })
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
