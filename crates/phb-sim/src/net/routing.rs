//! Routing: the ports each flow's packets cross.
//!
//! Static shortest paths, by total propagation delay with the hop count
//! breaking ties, through forwarding nodes only (routers: hosts send and
//! receive, never forward), or a path pinned per flow group (as an LSP
//! would pin it). Each distinct path is stored once as a slice of port
//! indices ([`Routes`]); a packet carries its route's index and its hop,
//! so forwarding is one array look-up.
//!
//! ## Set-up linear in the network
//!
//! [`Topology::route_all`] grows one shortest-path tree per *root*, not
//! one search per flow group: a host with a single link (to a router) has
//! a default route, so every path from it is its access link followed by
//! the tree of that router, and the trees span routers only (hosts never
//! forward). A dumbbell of 100 000 pairs needs two trees (one per side, for
//! data and for ACKs), a star one. Only a host with several links, or one
//! whose link leads to another host, is a root of its own. Each tree is
//! dropped once its paths are read, so memory stays linear too.
//!
//! The paths are exactly those of a Dijkstra search from the source that
//! stops at the destination (the reference in the tests), ties included:
//! nodes leave the frontier in order of `(delay, hops, node index)`, and a
//! node keeps the predecessor that first offered its final label (between
//! parallel links, the one listed first). Restricting the search to
//! routers changes no choice, because a host other than the source never
//! relaxes anything; a destination host takes, among its neighbours, the
//! one the search would have expanded first.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use phb::Time;

/// For each node, `(neighbour, port index, delay)`, in the order of the
/// links.
type Adjacency = Vec<Vec<(usize, usize, Time)>>;

/// The adjacency of `nodes` nodes joined by `links` (each `(a, b, delay)`),
/// link `i` giving port `2i` (`a` towards `b`) and port `2i + 1` (`b`
/// towards `a`), the order in which the simulator builds its ports.
fn adjacency(nodes: usize, links: impl IntoIterator<Item = (usize, usize, Time)>) -> Adjacency {
    let mut adjacency: Adjacency = vec![Vec::new(); nodes];
    for (i, (a, b, delay)) in links.into_iter().enumerate() {
        adjacency[a].push((b, 2 * i, delay));
        adjacency[b].push((a, 2 * i + 1, delay));
    }
    adjacency
}

/// All routes, flattened into one array: a route's index is where it
/// starts, its length followed by its ports, so that a forwarding decision
/// reads one place in memory (at 100,000 flows a second array of spans
/// cost a cache miss per hop).
#[derive(Debug, Default)]
pub struct Routes {
    flat: Vec<u32>,
    count: usize,
}

impl Routes {
    /// The ports of a route, in order.
    #[inline]
    pub fn get(&self, route: u32) -> &[u32] {
        let start = route as usize;
        &self.flat[start + 1..start + 1 + self.flat[start] as usize]
    }

    /// The port of hop `hop` on `route`, or `None` at the destination.
    #[inline]
    pub fn next_port(&self, route: u32, hop: u32) -> Option<usize> {
        let start = route as usize;
        (hop < self.flat[start]).then(|| self.flat[start + 1 + hop as usize] as usize)
    }

    /// Routes held.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes the routes take (for the memory estimate's tests).
    pub fn heap_bytes(&self) -> usize {
        self.flat.capacity() * 4
    }
}

/// Collects [`Routes`], storing each distinct path once (a hash of the
/// paths while building; none is kept for the run).
#[derive(Debug, Default)]
pub struct RoutesBuilder {
    routes: Routes,
    index: HashMap<Vec<u32>, u32>,
}

impl RoutesBuilder {
    /// Adds a route (a list of port indices) and returns its index: that
    /// of the first identical route added, if any.
    pub fn add(&mut self, ports: &[usize]) -> u32 {
        let key: Vec<u32> = ports.iter().map(|&p| p as u32).collect();
        let routes = &mut self.routes;
        *self.index.entry(key).or_insert_with_key(|key| {
            let start = u32::try_from(routes.flat.len()).expect("routes fit 32-bit indices");
            routes.flat.push(key.len() as u32);
            routes.flat.extend_from_slice(key);
            routes.count += 1;
            start
        })
    }

    pub fn finish(mut self) -> Routes {
        self.routes.flat.shrink_to_fit();
        self.routes
    }
}

/// What path to find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted<'a> {
    /// The shortest path from `src` to `dst` through forwarding nodes.
    Shortest { src: usize, dst: usize },
    /// The path through these nodes, in order (`reversed`: from the last
    /// to the first).
    Pinned { nodes: &'a [usize], reversed: bool },
}

/// A neighbour's offer of a path to a destination host: the host's label
/// through it, the neighbour's own `(delay, hops, node)` (the order the
/// search expands nodes in) and the port from it.
type HostOffer = ((Time, u32), (Time, u32, usize), usize);

/// No node (for a dense router index).
const NONE: u32 = u32::MAX;

/// A network as routing sees it: who forwards, and the links.
pub struct Topology {
    adjacency: Adjacency,
    forwards: Vec<bool>,
    /// Per node, the links into it: `(from, port, delay)`, in link order.
    incoming: Adjacency,
    /// Per node, its index among the forwarding nodes (`NONE` for hosts).
    slot: Vec<u32>,
    /// Per forwarding node (by slot), its links to forwarding nodes,
    /// in link order: what a tree's search expands.
    router_links: Vec<Vec<(usize, usize, Time)>>,
}

/// A shortest-path tree over the forwarding nodes, from `root`.
struct Tree {
    root: usize,
    /// Per forwarding node (by slot): `(delay, hops)` from the root.
    label: Vec<Option<(Time, u32)>>,
    /// Per forwarding node (by slot): the previous node and the port from it.
    via: Vec<(u32, u32)>,
}

/// How a path from a source starts: at the root of a tree, after `prefix`
/// (a single-homed host's access port), which the root's labels exclude.
#[derive(Clone, Copy)]
struct Start {
    root: usize,
    prefix: Option<usize>,
}

impl Topology {
    /// `forwards[n]`: whether node `n` forwards (a router); `links`: each
    /// link's ends and delay, in order (see [`adjacency`]).
    pub fn new(forwards: Vec<bool>, links: impl IntoIterator<Item = (usize, usize, Time)>) -> Topology {
        let adjacency = adjacency(forwards.len(), links);
        let mut incoming: Adjacency = vec![Vec::new(); forwards.len()];
        for (a, list) in adjacency.iter().enumerate() {
            for &(b, port, delay) in list {
                incoming[b].push((a, port, delay));
            }
        }
        // `incoming[b]` was filled node by node; put it in link order.
        for list in &mut incoming {
            list.sort_by_key(|&(_, port, _)| port / 2);
        }
        let mut slot = vec![NONE; forwards.len()];
        let mut routers = 0;
        for (node, &f) in forwards.iter().enumerate() {
            if f {
                slot[node] = routers;
                routers += 1;
            }
        }
        let router_links = (0..forwards.len())
            .filter(|&n| forwards[n])
            .map(|n| adjacency[n].iter().copied().filter(|&(next, _, _)| forwards[next]).collect())
            .collect();
        Topology { adjacency, forwards, incoming, slot, router_links }
    }

    /// The paths `wanted` asks for, in its order, as port indices; `None`
    /// for a destination that cannot be reached (or a pinned path whose
    /// consecutive nodes share no link).
    pub fn route_all(&self, wanted: &[Wanted]) -> Vec<Option<Vec<usize>>> {
        let mut paths = vec![None; wanted.len()];
        let mut pinned_links = None;
        let mut shortest = Vec::new();
        for (i, w) in wanted.iter().enumerate() {
            match *w {
                Wanted::Pinned { nodes, reversed } => {
                    let links = pinned_links.get_or_insert_with(|| self.first_links());
                    paths[i] = pinned(links, nodes, reversed);
                }
                Wanted::Shortest { src, dst } => shortest.push((src, self.start(src), dst, i)),
            }
        }
        // One tree per root, each dropped once read.
        shortest.sort_by_key(|&(_, start, _, i)| (start.root, i));
        for same_root in shortest.chunk_by(|a, b| a.1.root == b.1.root) {
            let tree = self.grow(same_root[0].1.root);
            for &(src, start, dst, i) in same_root {
                paths[i] = self.read(&tree, src, start, dst);
            }
        }
        paths
    }

    /// The shortest path from `src` to `dst` (one search: for one path; use
    /// [`Topology::route_all`] for many).
    pub fn shortest(&self, src: usize, dst: usize) -> Option<Vec<usize>> {
        self.route_all(&[Wanted::Shortest { src, dst }]).pop().flatten()
    }

    /// Where the paths from `src` start: a host with one link to a router
    /// starts with that link, at that router's tree.
    fn start(&self, src: usize) -> Start {
        match self.adjacency[src].as_slice() {
            &[(next, port, _)] if !self.forwards[src] && self.forwards[next] => {
                Start { root: next, prefix: Some(port) }
            }
            _ => Start { root: src, prefix: None },
        }
    }

    /// Dijkstra from `root` over the forwarding nodes (the root expands
    /// whatever it is).
    fn grow(&self, root: usize) -> Tree {
        let routers = self.router_links.len();
        let mut tree = Tree { root, label: vec![None; routers], via: vec![(NONE, NONE); routers] };
        let mut frontier = BinaryHeap::new();
        let root_links: &[(usize, usize, Time)] = match self.slot[root] {
            NONE => &self.adjacency[root],
            s => {
                tree.label[s as usize] = Some((Time::ZERO, 0));
                &self.router_links[s as usize]
            }
        };
        let relax = |tree: &mut Tree, frontier: &mut BinaryHeap<_>, node, (dist, hops), links: &[_]| {
            for &(next, port, delay) in links {
                let s = self.slot[next];
                if s == NONE {
                    continue; // hosts never forward
                }
                let candidate = (dist + delay, hops + 1);
                if tree.label[s as usize].is_none_or(|b| candidate < b) {
                    tree.label[s as usize] = Some(candidate);
                    tree.via[s as usize] = (node as u32, port as u32);
                    frontier.push(Reverse((candidate.0, candidate.1, next)));
                }
            }
        };
        relax(&mut tree, &mut frontier, root, (Time::ZERO, 0), root_links);
        while let Some(Reverse((dist, hops, node))) = frontier.pop() {
            let s = self.slot[node] as usize;
            if tree.label[s] != Some((dist, hops)) {
                continue;
            }
            relax(&mut tree, &mut frontier, node, (dist, hops), &self.router_links[s]);
        }
        tree
    }

    /// `(delay, hops)` of `node` in `tree`: the root, or a reached router.
    fn label(&self, tree: &Tree, node: usize) -> Option<(Time, u32)> {
        if node == tree.root {
            return Some((Time::ZERO, 0));
        }
        match self.slot[node] {
            NONE => None,
            s => tree.label[s as usize],
        }
    }

    /// The path from `src` (which starts at `start`) to `dst` in `tree`.
    fn read(&self, tree: &Tree, src: usize, start: Start, dst: usize) -> Option<Vec<usize>> {
        if src == dst {
            return Some(Vec::new());
        }
        let mut ports = Vec::new();
        let mut node = dst;
        if !self.forwards[dst] && dst != tree.root {
            // A host: the neighbour the search expands first among those
            // offering its best label, the link listed first between them.
            let mut best: Option<HostOffer> = None;
            for &(from, port, delay) in &self.incoming[dst] {
                let Some((dist, hops)) = self.label(tree, from) else { continue };
                let offer = (dist + delay, hops + 1);
                let expanded = (dist, hops, from);
                if best.is_none_or(|(b, e, _)| offer < b || (offer == b && expanded < e)) {
                    best = Some((offer, expanded, port));
                }
            }
            let (_, (_, _, from), port) = best?;
            ports.push(port);
            node = from;
        }
        self.label(tree, node)?;
        while node != tree.root {
            let (prev, port) = tree.via[self.slot[node] as usize];
            ports.push(port as usize);
            node = prev as usize;
        }
        ports.extend(start.prefix);
        ports.reverse();
        Some(ports)
    }

    /// The first port from `a` towards `b` for every pair of neighbours:
    /// what a pinned path takes between two consecutive nodes.
    fn first_links(&self) -> HashMap<(usize, usize), usize> {
        let mut first = HashMap::new();
        for (a, list) in self.adjacency.iter().enumerate() {
            for &(b, port, _) in list {
                first.entry((a, b)).or_insert(port);
            }
        }
        first
    }
}

/// The ports along a pinned path of nodes; `None` if two consecutive
/// nodes are not joined by a link.
fn pinned(first: &HashMap<(usize, usize), usize>, nodes: &[usize], reversed: bool) -> Option<Vec<usize>> {
    let hop = |a: &usize, b: &usize| first.get(&(*a, *b)).copied();
    if reversed {
        nodes.windows(2).rev().map(|pair| hop(&pair[1], &pair[0])).collect()
    } else {
        nodes.windows(2).map(|pair| hop(&pair[0], &pair[1])).collect()
    }
}

#[cfg(test)]
mod tests;
