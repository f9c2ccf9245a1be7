//! Routing against a reference: a Dijkstra search from the source to the
//! destination, as the simulator routed each flow group before the trees
//! (one search per group, quadratic in a dumbbell), on hand-made and
//! random networks; and the shapes the generators make.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use proptest::prelude::*;

use super::*;

/// The reference: Dijkstra from `src`, frontier ordered by `(delay, hops,
/// node)`, a node's predecessor the first to offer its final label,
/// stopping at `dst`; only `src` and forwarding nodes expand.
fn reference(adjacency: &Adjacency, forwards: &[bool], src: usize, dst: usize) -> Option<Vec<usize>> {
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

/// Links `(a, b, delay in ms)`.
fn topology(forwards: &[bool], links: &[(usize, usize, u64)]) -> Topology {
    Topology::new(forwards.to_vec(), links.iter().map(|&(a, b, ms)| (a, b, Time::from_millis(ms))))
}

fn shortest(t: &Topology, src: usize, dst: usize) -> Option<Vec<usize>> {
    t.shortest(src, dst)
}

/// 0 -1ms- 1 -1ms- 3 and 0 -5ms- 2 -0ms- 3, plus 0 -3ms- 3 directly.
const DIAMOND: [(usize, usize, u64); 5] = [(0, 1, 1), (1, 3, 1), (0, 2, 5), (2, 3, 0), (0, 3, 3)];

#[test]
fn shortest_path_minimises_delay() {
    let t = topology(&[true; 4], &DIAMOND);
    assert_eq!(shortest(&t, 0, 3), Some(vec![0, 2]));
    assert_eq!(shortest(&t, 3, 0), Some(vec![3, 1]));
    assert_eq!(shortest(&t, 2, 2), Some(vec![]));
}

/// Node 1 does not forward: 0 → 3 takes the direct 3 ms link, not the
/// 2 ms path through 1; with 2 not forwarding either, still the direct
/// link, and without it 3 is unreachable.
#[test]
fn shortest_path_passes_only_forwarding_nodes() {
    let t = topology(&[true, false, true, true], &DIAMOND);
    assert_eq!(shortest(&t, 0, 3), Some(vec![8]));
    let t = topology(&[false, true, true, false], &DIAMOND);
    assert_eq!(shortest(&t, 0, 3), Some(vec![0, 2]), "the ends need not forward");
    let t = topology(&[true, false, false, true], &DIAMOND[..4]);
    assert_eq!(shortest(&t, 0, 3), None);
}

#[test]
fn equal_delay_prefers_fewer_hops() {
    let mut links = DIAMOND;
    links[4].2 = 2; // the direct link as long as the two-hop path
    let t = topology(&[true; 4], &links);
    assert_eq!(shortest(&t, 0, 3), Some(vec![8]));
}

/// Two equal paths 0-1-3 and 0-2-3 (1 ms each link): the search expands 1
/// before 2, so 3 keeps 1 as its predecessor; from 3 to 0, likewise 1.
#[test]
fn equal_paths_go_through_the_lower_node() {
    let t = topology(&[true; 4], &[(0, 2, 1), (2, 3, 1), (0, 1, 1), (1, 3, 1)]);
    assert_eq!(shortest(&t, 0, 3), Some(vec![4, 6]));
    assert_eq!(shortest(&t, 3, 0), Some(vec![7, 5]));
}

/// Two parallel links of the same delay: the one listed first, both ways.
#[test]
fn parallel_links_take_the_first() {
    let t = topology(&[false, true, false], &[(0, 1, 1), (1, 2, 2), (2, 1, 2)]);
    assert_eq!(shortest(&t, 0, 2), Some(vec![0, 2]));
    assert_eq!(shortest(&t, 2, 0), Some(vec![3, 1]));
}

#[test]
fn unreachable_gives_none() {
    let t = topology(&[true; 2], &[]);
    assert_eq!(shortest(&t, 0, 1), None);
}

/// A host joined to another host directly, and a host with two links.
#[test]
fn hosts_joined_directly_and_multi_homed() {
    // 0 (host) - 1 (host) directly; 0 - 2 (router) - 1 as well, shorter.
    let t = topology(&[false, false, true], &[(0, 1, 5), (0, 2, 1), (2, 1, 1)]);
    assert_eq!(shortest(&t, 0, 1), Some(vec![2, 4]));
    assert_eq!(shortest(&t, 1, 0), Some(vec![5, 3]));
    let t = topology(&[false, false, true], &[(0, 1, 1), (0, 2, 1), (2, 1, 1)]);
    assert_eq!(shortest(&t, 0, 1), Some(vec![0]));
}

#[test]
fn pinned_paths_follow_the_given_nodes() {
    let t = topology(&[true; 4], &DIAMOND);
    let all = t.route_all(&[
        Wanted::Pinned { nodes: &[0, 2, 3], reversed: false },
        Wanted::Pinned { nodes: &[0, 2, 3], reversed: true },
        Wanted::Pinned { nodes: &[1, 2], reversed: false },
        Wanted::Shortest { src: 0, dst: 3 },
    ]);
    assert_eq!(all, vec![Some(vec![4, 6]), Some(vec![7, 5]), None, Some(vec![0, 2])]);
}

#[test]
fn identical_routes_are_stored_once() {
    let mut builder = RoutesBuilder::default();
    let a = builder.add(&[4, 6]);
    let b = builder.add(&[0, 2]);
    assert_eq!(builder.add(&[4, 6]), a);
    assert_ne!(a, b);
    let routes = builder.finish();
    assert_eq!(routes.len(), 2);
    assert_eq!(routes.next_port(b, 1), Some(2));
    assert_eq!(routes.next_port(b, 2), None);
    assert_eq!(routes.get(a), &[4, 6]);
}

/// Every pair of nodes, both ways, against the reference, through
/// `route_all` (trees shared) and one at a time.
fn check_all_pairs(forwards: &[bool], links: &[(usize, usize, u64)]) {
    let t = topology(forwards, links);
    let n = forwards.len();
    let pairs: Vec<(usize, usize)> = (0..n).flat_map(|s| (0..n).map(move |d| (s, d))).collect();
    let wanted: Vec<Wanted> = pairs.iter().map(|&(src, dst)| Wanted::Shortest { src, dst }).collect();
    let together = t.route_all(&wanted);
    let adjacency = adjacency(n, links.iter().map(|&(a, b, ms)| (a, b, Time::from_millis(ms))));
    for (&(src, dst), got) in pairs.iter().zip(&together) {
        let expected = reference(&adjacency, forwards, src, dst);
        assert_eq!(got, &expected, "{src} -> {dst}");
        assert_eq!(shortest(&t, src, dst), expected, "{src} -> {dst} alone");
    }
}

/// A dumbbell of 3 pairs (hosts s_i, d_i; routers l, r), a parking lot of
/// 3 hops with cross traffic hosts at each router, and a star of 4 leaves
/// around a router hub — as the generators lay them out.
#[test]
fn generated_shapes_match_the_reference() {
    // dumbbell: l = 0, r = 1, s_i = 2 + 2i, d_i = 3 + 2i
    let mut forwards = vec![true, true];
    let mut links = vec![(0, 1, 10)];
    for i in 0..3 {
        forwards.extend([false, false]);
        links.push((2 + 2 * i, 0, 1 + i as u64));
        links.push((1, 3 + 2 * i, 1));
    }
    check_all_pairs(&forwards, &links);
    // parking lot: routers 0..=3 in a chain, a host on each
    let mut forwards = vec![true; 4];
    let mut links: Vec<(usize, usize, u64)> = (0..3).map(|i| (i, i + 1, 2)).collect();
    for r in 0..4 {
        forwards.push(false);
        links.push((4 + r, r, 1));
    }
    check_all_pairs(&forwards, &links);
    // star: hub 0, leaves 1..=4 (hosts)
    let forwards = [true, false, false, false, false];
    let links: Vec<(usize, usize, u64)> = (1..5).map(|l| (0, l, l as u64)).collect();
    check_all_pairs(&forwards, &links);
}

/// A multi-hop path whose best route is the longer in hops, and a host
/// whose two routers offer equal paths.
#[test]
fn multi_hop_and_multi_homed_match_the_reference() {
    let forwards = [false, true, true, true, true, false];
    let links = [(0, 1, 1), (1, 2, 1), (2, 3, 1), (3, 4, 1), (1, 4, 5), (4, 5, 1), (0, 2, 1), (2, 4, 2)];
    check_all_pairs(&forwards, &links);
}

proptest! {
    /// Random networks (parallel links, zero and equal delays, hosts
    /// with one link, several or none, hosts joined to hosts): every path
    /// is the reference's.
    #[test]
    fn paths_match_the_reference(
        forwards in proptest::collection::vec(any::<bool>(), 2..12),
        raw_links in proptest::collection::vec((0usize..12, 0usize..12, 0u64..4), 0..30),
    ) {
        let n = forwards.len();
        let links: Vec<(usize, usize, u64)> =
            raw_links.into_iter().map(|(a, b, d)| (a % n, b % n, d)).filter(|(a, b, _)| a != b).collect();
        check_all_pairs(&forwards, &links);
    }
}

proptest! {
    /// Routes of any lengths (the empty one included) in one flat array:
    /// each reads back hop by hop and whole, an identical route gets the
    /// first one's index, and distinct routes distinct indices.
    #[test]
    fn flat_routes_read_back_as_added(
        paths in proptest::collection::vec(proptest::collection::vec(0usize..6, 0..5), 1..40),
    ) {
        let mut builder = RoutesBuilder::default();
        let ids: Vec<u32> = paths.iter().map(|p| builder.add(p)).collect();
        let routes = builder.finish();
        for (i, (path, &id)) in paths.iter().zip(&ids).enumerate() {
            let hops: Vec<usize> = (0..).map_while(|hop| routes.next_port(id, hop)).collect();
            prop_assert_eq!(&hops, path);
            prop_assert_eq!(routes.get(id).iter().map(|&p| p as usize).collect::<Vec<_>>(), path.clone());
            for (j, other) in paths.iter().enumerate().take(i) {
                prop_assert_eq!(ids[j] == id, other == path);
            }
        }
        let distinct: std::collections::HashSet<&Vec<usize>> = paths.iter().collect();
        prop_assert_eq!(routes.len(), distinct.len());
    }
}
