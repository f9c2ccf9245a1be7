//! A tournament tree over queue indices: the queue with the smallest key,
//! ties to the lower index, in O(1), after an O(log n) update of one
//! queue's key (for at most eight queues, a scan of the keys, which costs
//! less than keeping any tree).
//!
//! The timestamp schedulers (WFQ, WF²Q+, SCFQ) choose the smallest tag
//! among their queues' heads; scanning every queue on every packet costs
//! O(n) (about 150 ns a packet at 16 classes). Each queue has one head, so
//! a complete binary tree whose leaves are the queues, each inner node
//! holding the winner of its two children, answers in O(1) and changes in
//! O(log n) when one head changes. Each node holds its winner's key, as an
//! integer ordered as the float is, and index, so an update climbs from
//! the leaf to the root comparing the new winner with one sibling a level
//! (no look-up through the indices). Nothing in an update depends on which
//! way a comparison of tags goes, which a processor cannot predict: the
//! minimum a level, and the scan of a few leaves, are conditional moves of
//! the two words ([`std::hint::select_unpredictable`]), and the climb
//! always goes to the root, a fixed number of levels. Mispredictions were
//! most of the cost of WFQ at 64 queues while the minimum was a branch (a
//! mask built from the comparison, which the compiler turned back into
//! one) and the climb stopped at the first node that kept its winner
//! (qdisc_bench, wfq/64: 178 ns a packet then, 103 ns now). The winner is the smallest (key, index)
//! pair, exactly what a scan in queue order with a strict `<` gives (the
//! property tests below check it against [`smallest`](super::smallest)),
//! so results are unchanged to the last tie. The tree is allocated once,
//! at construction.

use std::hint::select_unpredictable;

/// The tree (see the module doc). Keys are finite `f64` tags; a queue
/// without a key takes no part.
#[derive(Clone, Debug)]
pub struct Tournament {
    /// Node `i`'s winner: inner nodes `1..leaves` (the root at 1, node
    /// `i`'s children `2i` and `2i + 1`), then the leaves, queue `q` at
    /// `leaves + q` (the padding beyond the last queue never has a key).
    /// Up to [`SCAN_LIMIT`] queues the inner nodes are not kept: `min`
    /// scans the leaves.
    nodes: Vec<Entry>,
    leaves: usize,
}

/// Up to this many queues, `min` scans the leaves instead of keeping the
/// inner nodes: cheaper than any tree for so few.
const SCAN_LIMIT: usize = 8;

/// A queue and its key, ordered as (key, queue): the key's bits mapped so
/// that integers order as the floats do (the largest, infinity's, is
/// below `u64::MAX`). The smaller of two entries is then integer
/// comparisons, ties going to the lower queue.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    queue: u64,
}

impl Entry {
    #[inline]
    fn new(key: f64, queue: usize) -> Entry {
        // `+ 0.0` makes -0 into +0, which `<` holds equal to it.
        let bits = (key + 0.0).to_bits();
        Entry { key: if bits >> 63 == 1 { !bits } else { bits | 1 << 63 }, queue: queue as u64 }
    }

    /// The key as a float.
    #[inline]
    fn key(self) -> f64 {
        f64::from_bits(if self.key >> 63 == 1 { self.key & !(1 << 63) } else { !self.key })
    }

    /// `b` if `take_b`, else `a`, without a branch.
    #[inline(always)]
    fn pick(take_b: bool, b: Entry, a: Entry) -> Entry {
        Entry { key: select_unpredictable(take_b, b.key, a.key), queue: select_unpredictable(take_b, b.queue, a.queue) }
    }

    /// The smaller of two entries, without a branch.
    #[inline(always)]
    fn smaller(a: Entry, b: Entry) -> Entry {
        Entry::pick((b.key, b.queue) < (a.key, a.queue), b, a)
    }
}

/// The key of a queue that takes no part.
const ABSENT: f64 = f64::INFINITY;

impl Tournament {
    /// A tree over `queues` queues, none with a key.
    pub fn new(queues: usize) -> Tournament {
        let leaves = queues.next_power_of_two().max(2);
        let mut nodes = vec![Entry::new(ABSENT, 0); 2 * leaves];
        for q in 0..leaves {
            nodes[leaves + q] = Entry::new(ABSENT, q);
        }
        for i in (1..leaves).rev() {
            nodes[i] = Entry::smaller(nodes[2 * i], nodes[2 * i + 1]);
        }
        Tournament { nodes, leaves }
    }

    /// The queue with the smallest key (ties: the lower index) and its key.
    #[inline]
    pub fn min(&self) -> Option<(f64, usize)> {
        let best = if self.leaves <= SCAN_LIMIT {
            // The leaves in queue order: a strictly smaller key wins.
            let leaves = &self.nodes[self.leaves..];
            let mut best = leaves[0];
            for &leaf in &leaves[1..] {
                best = Entry::pick(leaf.key < best.key, leaf, best);
            }
            best
        } else {
            self.nodes[1]
        };
        let key = best.key();
        (key != ABSENT).then_some((key, best.queue as usize))
    }

    /// Sets `queue`'s key (`None`: takes no part).
    #[inline]
    pub fn set(&mut self, queue: usize, key: Option<f64>) {
        let key = key.unwrap_or(ABSENT);
        debug_assert!(key.is_finite() || key == ABSENT, "a tag must be finite: {key}");
        let mut i = self.leaves + queue;
        let mut winner = Entry::new(key, queue);
        self.nodes[i] = winner;
        if self.leaves <= SCAN_LIMIT {
            return;
        }
        while i > 1 {
            // Every queue under a left child is lower than every queue
            // under its sibling: a right child's winner yields to an equal
            // key on the left, a left child's only to a smaller one.
            let sibling = self.nodes[i ^ 1];
            winner = Entry::pick(sibling.key < winner.key + (i & 1) as u64, sibling, winner);
            i /= 2;
            self.nodes[i] = winner;
        }
    }

    /// `queue`'s key.
    #[inline]
    pub fn key(&self, queue: usize) -> Option<f64> {
        let key = self.nodes[self.leaves + queue].key();
        (key != ABSENT).then_some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::smallest;
    use proptest::prelude::*;

    #[test]
    fn ties_go_to_the_lower_queue() {
        let mut t = Tournament::new(5);
        assert_eq!(t.min(), None);
        t.set(3, Some(2.0));
        t.set(1, Some(2.0));
        t.set(4, Some(1.0));
        assert_eq!(t.min(), Some((1.0, 4)));
        t.set(4, None);
        assert_eq!(t.min(), Some((2.0, 1)));
        assert_eq!(t.key(3), Some(2.0));
        let mut one = Tournament::new(1);
        one.set(0, Some(7.0));
        assert_eq!(one.min(), Some((7.0, 0)));
    }

    proptest! {
        /// Through any sequence of key changes (with many equal keys), the
        /// tree picks what a scan in queue order picks, and keeps every key.
        #[test]
        fn picks_what_a_linear_scan_picks(
            queues in 1usize..70,
            changes in proptest::collection::vec((0usize..70, proptest::option::of(0u8..7)), 1..400),
        ) {
            let mut tree = Tournament::new(queues);
            let mut keys: Vec<Option<f64>> = vec![None; queues];
            for (queue, key) in changes {
                let queue = queue % queues;
                // Negative keys and -0 (equal to +0) too.
                let key = key.map(|k| if k == 6 { -0.0 } else { (k as f64 - 2.0) * 0.5 });
                tree.set(queue, key);
                keys[queue] = key;
                let scan = smallest(keys.iter().enumerate().filter_map(|(i, k)| k.map(|k| (i, k))));
                prop_assert_eq!(tree.min().map(|(_, q)| q), scan);
                prop_assert_eq!(tree.min().map(|(k, _)| k), scan.and_then(|q| keys[q]));
                for (q, &k) in keys.iter().enumerate() {
                    prop_assert_eq!(tree.key(q), k);
                }
            }
        }
    }
}
