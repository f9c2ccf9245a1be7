//! Classifier → per-class queues with a buffer policy → scheduler.
//!
//! The composition most per-hop behaviours share (ARCHITECTURE.md, "A
//! qdisc"):
//!
//! 1. **Classify**: the packet's codepoint picks a class queue through a
//!    64-entry table (unlisted codepoints go to the default queue).
//! 2. **Admit**: each queue belongs to one *buffer*, whose policy decides on
//!    the backlog of all the queues it holds. A buffer with one queue is the
//!    usual per-class buffer; a buffer with several is a shared buffer with
//!    one average, as BEDS, PLC and RIO-style designs need.
//!    Policies: drop-tail with a packet or byte limit, or [`Red`].
//! 3. **Schedule**: the link takes the next packet from the queues by the
//!    scheduler's rule — for now strict priority (queue order is priority
//!    order); a single queue is FIFO.
//!
//! Time stamps: a packet's `enqueued` is set when it is admitted.

use std::collections::VecDeque;

use crate::aqm::red::{Red, RedParams};
use crate::aqm::Limit;
use crate::packet::{DropReason, Packet};
use crate::queue::Dropped;
use crate::rng::Rng;
use crate::time::Time;

/// How a buffer admits packets.
#[derive(Clone, Debug, PartialEq)]
pub enum BufferPolicy {
    /// Drop an arrival that does not fit.
    DropTail { limit: Limit },
    /// Random Early Detection on the buffer's total backlog.
    Red(RedParams),
}

/// One class queue: a name for results, and the buffer it belongs to.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueConfig {
    pub name: String,
    /// Index into [`QdiscConfig::buffers`].
    pub buffer: usize,
}

/// The order in which the scheduler serves the queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedulerKind {
    /// Serve the first non-empty queue in declaration order. With one queue
    /// this is FIFO.
    StrictPriority,
}

/// A validated description of a classful discipline.
#[derive(Clone, Debug, PartialEq)]
pub struct QdiscConfig {
    pub queues: Vec<QueueConfig>,
    pub buffers: Vec<BufferPolicy>,
    /// `(codepoint, queue)` pairs; codepoints not listed go to `default_queue`.
    pub classify: Vec<(u8, usize)>,
    pub default_queue: usize,
    pub scheduler: SchedulerKind,
}

impl QdiscConfig {
    /// One FIFO queue with a drop-tail limit.
    pub fn fifo(limit: Limit) -> QdiscConfig {
        Self::single(BufferPolicy::DropTail { limit })
    }

    /// One FIFO queue managed by RED.
    pub fn red(params: RedParams) -> QdiscConfig {
        Self::single(BufferPolicy::Red(params))
    }

    fn single(policy: BufferPolicy) -> QdiscConfig {
        QdiscConfig {
            queues: vec![QueueConfig { name: "fifo".into(), buffer: 0 }],
            buffers: vec![policy],
            classify: Vec::new(),
            default_queue: 0,
            scheduler: SchedulerKind::StrictPriority,
        }
    }

    /// Checks indices and parameters; the message says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.queues.is_empty() {
            return Err("a qdisc needs at least one queue".into());
        }
        if self.default_queue >= self.queues.len() {
            return Err(format!("default queue {} does not exist", self.default_queue));
        }
        for q in &self.queues {
            if q.buffer >= self.buffers.len() {
                return Err(format!("queue '{}' refers to buffer {} which does not exist", q.name, q.buffer));
            }
        }
        for &(codepoint, queue) in &self.classify {
            if codepoint > 63 {
                return Err(format!("codepoint {codepoint} is out of range 0..=63"));
            }
            if queue >= self.queues.len() {
                return Err(format!("codepoint {codepoint} maps to queue {queue} which does not exist"));
            }
        }
        for policy in &self.buffers {
            match policy {
                BufferPolicy::DropTail { limit: Limit::Packets(0) | Limit::Bytes(0) } => {
                    return Err("a drop-tail limit must be positive".into())
                }
                BufferPolicy::DropTail { .. } => {}
                BufferPolicy::Red(p) => p.validate()?,
            }
        }
        Ok(())
    }
}

#[derive(Debug)]
enum Admission {
    DropTail(Limit),
    Red(Box<Red>),
}

#[derive(Debug)]
struct Buffer {
    admission: Admission,
    pkts: u64,
    bytes: u64,
}

#[derive(Debug)]
struct ClassQueue<M> {
    packets: VecDeque<Packet<M>>,
    buffer: usize,
}

/// The classful discipline (see the module docs).
#[derive(Debug)]
pub struct Classful<M> {
    queue_of_codepoint: [u8; 64],
    queues: Vec<ClassQueue<M>>,
    buffers: Vec<Buffer>,
    scheduler: SchedulerKind,
    pkts: u64,
    bytes: u64,
}

impl<M> Classful<M> {
    /// Builds the discipline; `config` must have passed [`QdiscConfig::validate`].
    pub fn new(config: &QdiscConfig, link_rate_bps: u64, rng: Rng) -> Classful<M> {
        config.validate().expect("qdisc configuration must be validated before use");
        let mut queue_of_codepoint = [config.default_queue as u8; 64];
        for &(codepoint, queue) in &config.classify {
            queue_of_codepoint[codepoint as usize] = queue as u8;
        }
        let mut seeds = rng;
        let buffers = config
            .buffers
            .iter()
            .map(|policy| Buffer {
                admission: match policy {
                    BufferPolicy::DropTail { limit } => Admission::DropTail(*limit),
                    BufferPolicy::Red(params) => {
                        let stream = Rng::derive(seeds.next_u64(), "red");
                        Admission::Red(Box::new(Red::new(params.clone(), link_rate_bps, stream)))
                    }
                },
                pkts: 0,
                bytes: 0,
            })
            .collect();
        let queues = config
            .queues
            .iter()
            .map(|q| ClassQueue { packets: VecDeque::new(), buffer: q.buffer })
            .collect();
        Classful { queue_of_codepoint, queues, buffers, scheduler: config.scheduler, pkts: 0, bytes: 0 }
    }

    /// The queue a codepoint is classified into.
    #[inline]
    pub fn classify(&self, codepoint: u8) -> usize {
        self.queue_of_codepoint[(codepoint & 63) as usize] as usize
    }

    pub fn enqueue(&mut self, mut pkt: Packet<M>, now: Time, dropped: &mut Dropped<M>) {
        let q = self.classify(pkt.class);
        let b = self.queues[q].buffer;
        let buffer = &mut self.buffers[b];
        let verdict = match &mut buffer.admission {
            Admission::DropTail(limit) => {
                (!limit.admits(buffer.pkts, buffer.bytes, pkt.size)).then_some(DropReason::Overflow)
            }
            Admission::Red(red) => red.on_arrival(buffer.pkts, buffer.bytes, pkt.size, now),
        };
        if let Some(reason) = verdict {
            dropped.push((pkt, reason));
            return;
        }
        buffer.pkts += 1;
        buffer.bytes += pkt.size as u64;
        self.pkts += 1;
        self.bytes += pkt.size as u64;
        pkt.enqueued = now;
        self.queues[q].packets.push_back(pkt);
    }

    pub fn dequeue(&mut self, now: Time) -> Option<Packet<M>> {
        for buffer in &mut self.buffers {
            if buffer.pkts == 0 {
                if let Admission::Red(red) = &mut buffer.admission {
                    red.on_idle(now);
                }
            }
        }
        let q = match self.scheduler {
            SchedulerKind::StrictPriority => self.queues.iter().position(|q| !q.packets.is_empty())?,
        };
        let pkt = self.queues[q].packets.pop_front()?;
        let buffer = &mut self.buffers[self.queues[q].buffer];
        buffer.pkts -= 1;
        buffer.bytes -= pkt.size as u64;
        self.pkts -= 1;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }

    pub fn len_packets(&self) -> u64 {
        self.pkts
    }

    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    pub fn averages(&self, out: &mut Vec<Option<f64>>) {
        out.clear();
        out.extend(self.buffers.iter().map(|b| match &b.admission {
            Admission::DropTail(_) => None,
            Admission::Red(red) => Some(red.avg()),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Colour;

    fn pkt(class: u8, size: u32, flow: u32) -> Packet<()> {
        Packet { flow, class, colour: Colour::Green, size, created: Time::ZERO, enqueued: Time::ZERO, meta: () }
    }

    #[test]
    fn fifo_drop_tail_keeps_order_and_limit() {
        let mut q: Classful<()> = Classful::new(&QdiscConfig::fifo(Limit::Packets(3)), 10_000_000, Rng::derive(0, "q"));
        let mut dropped = Vec::new();
        for flow in 0..5 {
            q.enqueue(pkt(0, 500, flow), Time::from_micros(flow as u64), &mut dropped);
        }
        assert_eq!(dropped.iter().map(|(p, r)| (p.flow, *r)).collect::<Vec<_>>(),
                   vec![(3, DropReason::Overflow), (4, DropReason::Overflow)]);
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(Time::ZERO)).map(|p| p.flow).collect();
        assert_eq!(order, vec![0, 1, 2]);
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
    }

    #[test]
    fn byte_limit_admits_exactly_what_fits() {
        let mut q: Classful<()> = Classful::new(&QdiscConfig::fifo(Limit::Bytes(1000)), 1_000_000, Rng::derive(0, "q"));
        let mut dropped = Vec::new();
        q.enqueue(pkt(0, 600, 0), Time::ZERO, &mut dropped);
        q.enqueue(pkt(0, 500, 1), Time::ZERO, &mut dropped);
        q.enqueue(pkt(0, 400, 2), Time::ZERO, &mut dropped);
        assert_eq!(dropped.len(), 1);
        assert_eq!(q.len_bytes(), 1000);
    }

    #[test]
    fn enqueue_stamps_the_time() {
        let mut q: Classful<()> = Classful::new(&QdiscConfig::fifo(Limit::Packets(3)), 1_000_000, Rng::derive(0, "q"));
        q.enqueue(pkt(0, 100, 0), Time::from_millis(7), &mut Vec::new());
        assert_eq!(q.dequeue(Time::from_millis(9)).unwrap().enqueued, Time::from_millis(7));
    }

    fn two_class_shared(policy: BufferPolicy) -> QdiscConfig {
        QdiscConfig {
            queues: vec![
                QueueConfig { name: "udp".into(), buffer: 0 },
                QueueConfig { name: "tcp".into(), buffer: 0 },
            ],
            buffers: vec![policy],
            classify: vec![(46, 0), (0, 1)],
            default_queue: 1,
            scheduler: SchedulerKind::StrictPriority,
        }
    }

    #[test]
    fn priority_serves_the_first_queue_first_and_classifies_by_codepoint() {
        let cfg = two_class_shared(BufferPolicy::DropTail { limit: Limit::Packets(10) });
        let mut q: Classful<()> = Classful::new(&cfg, 1_000_000, Rng::derive(0, "q"));
        let mut dropped = Vec::new();
        q.enqueue(pkt(0, 100, 1), Time::ZERO, &mut dropped);
        q.enqueue(pkt(46, 100, 2), Time::ZERO, &mut dropped);
        q.enqueue(pkt(12, 100, 3), Time::ZERO, &mut dropped); // unlisted: default (tcp)
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(Time::ZERO)).map(|p| p.flow).collect();
        assert_eq!(order, vec![2, 1, 3]);
    }

    #[test]
    fn a_shared_buffer_limits_the_total_of_its_queues() {
        let cfg = two_class_shared(BufferPolicy::DropTail { limit: Limit::Packets(4) });
        let mut q: Classful<()> = Classful::new(&cfg, 1_000_000, Rng::derive(0, "q"));
        let mut dropped = Vec::new();
        for i in 0..3 {
            q.enqueue(pkt(46, 100, i), Time::ZERO, &mut dropped);
            q.enqueue(pkt(0, 100, 10 + i), Time::ZERO, &mut dropped);
        }
        assert_eq!(q.len_packets(), 4);
        assert_eq!(dropped.iter().map(|(p, _)| p.flow).collect::<Vec<_>>(), vec![2, 12]);
    }

    #[test]
    fn a_shared_red_averages_the_total_backlog() {
        let params = RedParams { min_th: 100.0, max_th: 200.0, w_q: 1.0, limit: Limit::Packets(1000), ..RedParams::default() };
        let cfg = two_class_shared(BufferPolicy::Red(params));
        let mut q: Classful<()> = Classful::new(&cfg, 1_000_000, Rng::derive(0, "q"));
        let mut dropped = Vec::new();
        for i in 0..30 {
            q.enqueue(pkt(46, 100, i), Time::ZERO, &mut dropped);
            q.enqueue(pkt(0, 100, i), Time::ZERO, &mut dropped);
        }
        let mut avgs = Vec::new();
        q.averages(&mut avgs);
        // w_q = 1: the average is the backlog the last arrival found, 59.
        assert_eq!(avgs, vec![Some(59.0)]);
    }

    #[test]
    fn validation_names_the_problem() {
        let mut cfg = QdiscConfig::fifo(Limit::Packets(10));
        cfg.classify.push((70, 0));
        assert!(cfg.validate().unwrap_err().contains("codepoint 70"));
        let bad = QdiscConfig::red(RedParams { min_th: 10.0, max_th: 5.0, ..RedParams::default() });
        assert!(bad.validate().unwrap_err().contains("max_th"));
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::packet::Colour;
    use proptest::prelude::{any, prop_assert, prop_assert_eq, prop_oneof, proptest, Just, Strategy};

    /// An operation on a two-queue qdisc: offer a packet of a class and
    /// size, or let the link take one.
    #[derive(Clone, Debug)]
    enum Op {
        Offer { udp: bool, size: u32 },
        Take,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (any::<bool>(), 40u32..1500).prop_map(|(udp, size)| Op::Offer { udp, size }),
            Just(Op::Take),
        ]
    }

    fn config(shared: bool, red: bool) -> QdiscConfig {
        let policy = if red {
            BufferPolicy::Red(RedParams { min_th: 3.0, max_th: 9.0, w_q: 0.2, limit: Limit::Packets(12), ..RedParams::default() })
        } else {
            BufferPolicy::DropTail { limit: Limit::Bytes(6000) }
        };
        QdiscConfig {
            queues: vec![
                QueueConfig { name: "udp".into(), buffer: 0 },
                QueueConfig { name: "tcp".into(), buffer: if shared { 0 } else { 1 } },
            ],
            buffers: if shared { vec![policy] } else { vec![policy.clone(), policy] },
            classify: vec![(46, 0)],
            default_queue: 1,
            scheduler: SchedulerKind::StrictPriority,
        }
    }

    proptest! {
        /// Every offered packet is either dropped, taken or still queued;
        /// lengths agree with the contents; each class leaves in FIFO order;
        /// the higher-priority queue is never passed over.
        #[test]
        fn packets_are_conserved_and_ordered(ops in proptest::collection::vec(op(), 0..400), shared: bool, red: bool) {
            let mut q: Classful<u32> = Classful::new(&config(shared, red), 10_000_000, Rng::derive(5, "prop"));
            let mut dropped = Vec::new();
            let (mut offered, mut taken, mut seq) = (0u64, 0u64, 0u32);
            let mut last_seen = [None::<u32>; 2];
            for (step, op) in ops.into_iter().enumerate() {
                let now = Time::from_micros(step as u64 * 100);
                match op {
                    Op::Offer { udp, size } => {
                        offered += 1;
                        seq += 1;
                        let class = if udp { 46 } else { 0 };
                        q.enqueue(Packet { flow: 0, class, colour: Colour::Green, size, created: now, enqueued: now, meta: seq }, now, &mut dropped);
                    }
                    Op::Take => {
                        let udp_waiting = !q.queues[0].packets.is_empty();
                        if let Some(p) = q.dequeue(now) {
                            taken += 1;
                            let queue = usize::from(p.class != 46);
                            prop_assert!(queue == 0 || !udp_waiting, "tcp served while udp waited");
                            prop_assert!(last_seen[queue].is_none_or(|s| s < p.meta), "out of order");
                            last_seen[queue] = Some(p.meta);
                        }
                    }
                }
                let queued: u64 = q.queues.iter().map(|c| c.packets.len() as u64).sum();
                let bytes: u64 = q.queues.iter().flat_map(|c| &c.packets).map(|p| p.size as u64).sum();
                prop_assert_eq!(queued, q.len_packets());
                prop_assert_eq!(bytes, q.len_bytes());
                prop_assert_eq!(offered, taken + dropped.len() as u64 + queued);
            }
        }
    }
}
