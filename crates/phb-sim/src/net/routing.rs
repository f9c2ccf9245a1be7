//! Routing: the ports each flow's packets cross.
//!
//! Static shortest paths, by total propagation delay with the hop count
//! breaking ties (and then the lower node index, for determinism), through
//! forwarding nodes only (routers: hosts send and receive, never forward),
//! or a path pinned per flow group (as an LSP would pin it). Each distinct
//! path is stored once as a slice of port indices.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use phb::Time;

use crate::scenario::{LinkDef, NodeKind, Scenario, Transport};

/// Adjacency: for each node, `(neighbour, port index, delay)`.
pub type Adjacency = Vec<Vec<(usize, usize, Time)>>;

/// The adjacency of `nodes` nodes joined by `links`, link `i` giving port
/// `2i` (`a` towards `b`) and port `2i + 1` (`b` towards `a`), the order in
/// which the simulator builds its ports.
pub fn adjacency(nodes: usize, links: &[LinkDef]) -> Adjacency {
    let mut adjacency: Adjacency = vec![Vec::new(); nodes];
    for (i, link) in links.iter().enumerate() {
        adjacency[link.a].push((link.b, 2 * i, link.delay));
        adjacency[link.b].push((link.a, 2 * i + 1, link.delay));
    }
    adjacency
}

/// All routes, flattened.
#[derive(Debug, Default)]
pub struct Routes {
    ports: Vec<u32>,
    /// `(start, len)` into `ports`, per route.
    spans: Vec<(u32, u32)>,
}

impl Routes {
    /// Adds a route (a list of port indices) and returns its index.
    pub fn add(&mut self, ports: &[usize]) -> u32 {
        if let Some(existing) =
            (0..self.spans.len()).find(|&r| self.get(r as u32).iter().map(|&p| p as usize).eq(ports.iter().copied()))
        {
            return existing as u32;
        }
        let start = self.ports.len() as u32;
        self.ports.extend(ports.iter().map(|&p| p as u32));
        self.spans.push((start, ports.len() as u32));
        (self.spans.len() - 1) as u32
    }

    /// The ports of a route, in order.
    #[inline]
    pub fn get(&self, route: u32) -> &[u32] {
        let (start, len) = self.spans[route as usize];
        &self.ports[start as usize..(start + len) as usize]
    }

    /// The port of hop `hop` on `route`, or `None` at the destination.
    #[inline]
    pub fn next_port(&self, route: u32, hop: u32) -> Option<usize> {
        let (start, len) = self.spans[route as usize];
        (hop < len).then(|| self.ports[(start + hop) as usize] as usize)
    }
}

/// The shortest path from `src` to `dst` as port indices, passing only
/// through nodes that `forwards` (one entry per node); `None` if `dst` is
/// unreachable so.
pub fn shortest_path(adjacency: &Adjacency, forwards: &[bool], src: usize, dst: usize) -> Option<Vec<usize>> {
    let n = adjacency.len();
    let mut best: Vec<Option<(Time, u32)>> = vec![None; n];
    let mut via: Vec<Option<(usize, usize)>> = vec![None; n];
    let mut frontier = BinaryHeap::new();
    best[src] = Some((Time::ZERO, 0));
    frontier.push(Reverse((Time::ZERO, 0u32, src)));
    while let Some(Reverse((dist, hops, node))) = frontier.pop() {
        if best[node] != Some((dist, hops)) {
            continue;
        }
        if node == dst {
            break;
        }
        if node != src && !forwards[node] {
            continue;
        }
        for &(next, port, delay) in &adjacency[node] {
            let candidate = (dist + delay, hops + 1);
            if best[next].is_none_or(|b| candidate < b) {
                best[next] = Some(candidate);
                via[next] = Some((node, port));
                frontier.push(Reverse((candidate.0, candidate.1, next)));
            }
        }
    }
    best[dst]?;
    let mut ports = Vec::new();
    let mut node = dst;
    while node != src {
        let (prev, port) = via[node].expect("a reached node has a predecessor");
        ports.push(port);
        node = prev;
    }
    ports.reverse();
    Some(ports)
}

/// The ports a traffic group's packets cross: its data (its pinned path,
/// or the shortest), and a TCP group's ACKs back (`None` for UDP).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRoute {
    pub data: Vec<usize>,
    pub acks: Option<Vec<usize>>,
}

/// Every traffic group's route, in group order, over the ports of
/// [`adjacency`]'s numbering (validation guarantees that they exist).
pub fn group_routes(scenario: &Scenario) -> Vec<GroupRoute> {
    let adjacency = adjacency(scenario.nodes.len(), &scenario.links);
    let forwards: Vec<bool> = scenario.nodes.iter().map(|n| n.kind == NodeKind::Router).collect();
    let route = |nodes: Option<Vec<usize>>, src: usize, dst: usize| match nodes {
        Some(nodes) => pinned_path(&adjacency, &nodes),
        None => shortest_path(&adjacency, &forwards, src, dst),
    };
    scenario
        .groups
        .iter()
        .map(|group| GroupRoute {
            data: route(group.path.clone(), group.src, group.dst)
                .expect("validation guarantees a path between a flow's hosts"),
            acks: matches!(group.transport, Transport::Tcp(_)).then(|| {
                route(group.path.as_ref().map(|nodes| nodes.iter().rev().copied().collect()), group.dst, group.src)
                    .expect("links are full duplex")
            }),
        })
        .collect()
}

/// The ports along a pinned path of nodes; `None` if two consecutive nodes
/// are not joined by a link.
pub fn pinned_path(adjacency: &Adjacency, nodes: &[usize]) -> Option<Vec<usize>> {
    nodes
        .windows(2)
        .map(|pair| adjacency[pair[0]].iter().find(|(next, _, _)| *next == pair[1]).map(|&(_, port, _)| port))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0 -1ms- 1 -1ms- 3 and 0 -5ms- 2 -0ms- 3, plus 0 -3ms- 3 directly.
    fn diamond() -> Adjacency {
        let mut adj: Adjacency = vec![Vec::new(); 4];
        let mut port = 0;
        let mut link = |adj: &mut Adjacency, a: usize, b: usize, ms: u64| {
            adj[a].push((b, port, Time::from_millis(ms)));
            adj[b].push((a, port + 1, Time::from_millis(ms)));
            port += 2;
        };
        link(&mut adj, 0, 1, 1); // ports 0, 1
        link(&mut adj, 1, 3, 1); // ports 2, 3
        link(&mut adj, 0, 2, 5); // ports 4, 5
        link(&mut adj, 2, 3, 0); // ports 6, 7
        link(&mut adj, 0, 3, 3); // ports 8, 9
        adj
    }

    const ALL: [bool; 4] = [true; 4];

    #[test]
    fn shortest_path_minimises_delay() {
        let adj = diamond();
        assert_eq!(shortest_path(&adj, &ALL, 0, 3), Some(vec![0, 2]));
        assert_eq!(shortest_path(&adj, &ALL, 3, 0), Some(vec![3, 1]));
        assert_eq!(shortest_path(&adj, &ALL, 2, 2), Some(vec![]));
    }

    /// Node 1 does not forward: 0 → 3 takes the direct 3 ms link, not the
    /// 2 ms path through 1; with 2 not forwarding either, still the direct
    /// link, and without it 3 is unreachable.
    #[test]
    fn shortest_path_passes_only_forwarding_nodes() {
        let mut adj = diamond();
        assert_eq!(shortest_path(&adj, &[true, false, true, true], 0, 3), Some(vec![8]));
        assert_eq!(
            shortest_path(&adj, &[false, true, true, false], 0, 3),
            Some(vec![0, 2]),
            "the ends need not forward"
        );
        adj[0].retain(|e| e.1 != 8);
        assert_eq!(shortest_path(&adj, &[true, false, false, true], 0, 3), None);
    }

    #[test]
    fn equal_delay_prefers_fewer_hops() {
        let mut adj = diamond();
        // make the direct link 2 ms, equal to the two-hop path
        for list in &mut adj {
            for entry in list.iter_mut() {
                if entry.1 == 8 || entry.1 == 9 {
                    entry.2 = Time::from_millis(2);
                }
            }
        }
        assert_eq!(shortest_path(&adj, &ALL, 0, 3), Some(vec![8]));
    }

    #[test]
    fn unreachable_gives_none() {
        let adj: Adjacency = vec![Vec::new(); 2];
        assert_eq!(shortest_path(&adj, &[true; 2], 0, 1), None);
    }

    #[test]
    fn pinned_paths_follow_the_given_nodes() {
        let adj = diamond();
        assert_eq!(pinned_path(&adj, &[0, 2, 3]), Some(vec![4, 6]));
        assert_eq!(pinned_path(&adj, &[1, 2]), None);
    }

    #[test]
    fn identical_routes_are_stored_once() {
        let mut routes = Routes::default();
        let a = routes.add(&[4, 6]);
        let b = routes.add(&[0, 2]);
        assert_eq!(routes.add(&[4, 6]), a);
        assert_ne!(a, b);
        assert_eq!(routes.next_port(b, 1), Some(2));
        assert_eq!(routes.next_port(b, 2), None);
    }
}
