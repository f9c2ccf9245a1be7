//! The routes of a scenario's traffic groups: its network handed to
//! routing's path search ([`crate::net::routing`]), one request per
//! direction a group's packets travel.

use crate::net::routing::{Topology, Wanted};
use crate::scenario::{NodeKind, Scenario, Transport};

/// The ports a traffic group's packets cross: its data (its pinned path,
/// or the shortest), and a TCP group's ACKs back (`None` for UDP).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRoute {
    pub data: Vec<usize>,
    pub acks: Option<Vec<usize>>,
}

/// Every traffic group's route, in group order, over the ports of
/// [`Topology`]'s numbering (validation guarantees that they exist): one
/// shortest-path tree per root ([`Topology::route_all`]).
pub fn group_routes(scenario: &Scenario) -> Vec<GroupRoute> {
    let topology = Topology::new(
        scenario.nodes.iter().map(|n| n.kind == NodeKind::Router).collect(),
        scenario.links.iter().map(|l| (l.a, l.b, l.delay)),
    );
    let mut wanted = Vec::with_capacity(2 * scenario.groups.len());
    for group in &scenario.groups {
        let tcp = matches!(group.transport, Transport::Tcp(_));
        for reversed in [false, true].into_iter().take(1 + usize::from(tcp)) {
            wanted.push(match &group.path {
                Some(nodes) => Wanted::Pinned { nodes, reversed },
                None if reversed => Wanted::Shortest { src: group.dst, dst: group.src },
                None => Wanted::Shortest { src: group.src, dst: group.dst },
            });
        }
    }
    let mut paths = topology.route_all(&wanted).into_iter();
    let mut next = || paths.next().flatten().expect("validation guarantees a path between a flow's hosts");
    scenario
        .groups
        .iter()
        .map(|group| GroupRoute { data: next(), acks: matches!(group.transport, Transport::Tcp(_)).then(&mut next) })
        .collect()
}
