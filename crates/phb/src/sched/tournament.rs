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
//! O(log n) when one head changes. The winner is exactly what a scan in
//! queue order with a strict `<` gives (the property test below checks it
//! against [`smallest`](super::smallest)), so results are unchanged to the
//! last tie.

/// The tree (see the module doc). Keys are finite `f64` tags; a queue
/// without a key takes no part.
#[derive(Clone, Debug)]
pub struct Tournament {
    /// Each queue's key, infinite for a queue without one.
    keys: Vec<f64>,
    /// Above [`SCAN_LIMIT`] queues, the tree: inner nodes `1..leaves` (the
    /// root at 1), node `i`'s children `2i` and `2i + 1`, the leaves'
    /// parents reading `keys`; each node holds the winning queue of its
    /// subtree. Empty for a few queues, where a scan of `keys` is cheaper
    /// than keeping a tree.
    winners: Vec<u32>,
    leaves: usize,
}

/// The key of a queue that takes no part.
const ABSENT: f64 = f64::INFINITY;

/// Up to this many queues, `min` scans the keys instead of keeping a tree.
const SCAN_LIMIT: usize = 8;

impl Tournament {
    /// A tree over `queues` queues, none with a key.
    pub fn new(queues: usize) -> Tournament {
        let leaves = queues.next_power_of_two().max(2);
        let winners = if queues > SCAN_LIMIT {
            // Each inner node starts with the lowest queue of its subtree.
            (0..leaves).map(|i| lowest_leaf(i, leaves)).collect()
        } else {
            Vec::new()
        };
        Tournament { keys: vec![ABSENT; leaves], winners, leaves }
    }

    /// The queue with the smallest key (ties: the lower index) and its key.
    #[inline]
    pub fn min(&self) -> Option<(f64, usize)> {
        let q = if self.winners.is_empty() {
            let mut best = 0;
            for (q, &key) in self.keys.iter().enumerate().skip(1) {
                if key < self.keys[best] {
                    best = q;
                }
            }
            best
        } else {
            self.winners[1] as usize
        };
        let key = self.keys[q];
        (key != ABSENT).then_some((key, q))
    }

    /// Sets `queue`'s key (`None`: takes no part).
    #[inline]
    pub fn set(&mut self, queue: usize, key: Option<f64>) {
        let key = key.unwrap_or(ABSENT);
        debug_assert!(key.is_finite() || key == ABSENT, "a tag must be finite: {key}");
        self.keys[queue] = key;
        if self.winners.is_empty() {
            return;
        }
        let mut i = (self.leaves + queue) / 2;
        while i >= 1 {
            // A leaf's parent compares two queues' keys; a node above, the
            // winners of its two children.
            let (left, right) = if 2 * i >= self.leaves {
                (2 * i - self.leaves, 2 * i + 1 - self.leaves)
            } else {
                (self.winners[2 * i] as usize, self.winners[2 * i + 1] as usize)
            };
            let winner = self.better(left, right);
            if winner == self.winners[i] && winner as usize != queue {
                return; // the same winner with the same key: nothing above changes
            }
            self.winners[i] = winner;
            i /= 2;
        }
    }

    /// The winner of queues `left` < `right`: the left one on a tie.
    #[inline]
    fn better(&self, left: usize, right: usize) -> u32 {
        (if self.keys[right] < self.keys[left] { right } else { left }) as u32
    }

    /// `queue`'s key.
    #[inline]
    pub fn key(&self, queue: usize) -> Option<f64> {
        let key = self.keys[queue];
        (key != ABSENT).then_some(key)
    }
}

/// The lowest queue under inner node `node` of a tree with `leaves` leaves.
fn lowest_leaf(node: usize, leaves: usize) -> u32 {
    let mut n = node.max(1);
    while n < leaves {
        n *= 2;
    }
    (n - leaves) as u32
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
        /// tree (or, for a few queues, its scan) picks what a scan in queue
        /// order picks.
        #[test]
        fn picks_what_a_linear_scan_picks(
            queues in 1usize..70,
            changes in proptest::collection::vec((0usize..70, proptest::option::of(0u8..6)), 1..400),
        ) {
            let mut tree = Tournament::new(queues);
            let mut keys: Vec<Option<f64>> = vec![None; queues];
            for (queue, key) in changes {
                let queue = queue % queues;
                let key = key.map(|k| k as f64 * 0.5);
                tree.set(queue, key);
                keys[queue] = key;
                let scan = smallest(keys.iter().enumerate().filter_map(|(i, k)| k.map(|k| (i, k))));
                prop_assert_eq!(tree.min().map(|(_, q)| q), scan);
            }
        }
    }
}
