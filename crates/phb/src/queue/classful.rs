//! Classifier → per-class queues with a buffer policy → scheduler.
//!
//! The composition most per-hop behaviours share (ARCHITECTURE.md, "A
//! qdisc"):
//!
//! 1. **Classify**: the packet's codepoint picks a class queue through a
//!    64-entry table (unlisted codepoints go to the default queue).
//! 2. **Admit**: each queue belongs to one *buffer*, whose policy decides on
//!    the backlog of all the queues it holds (in total and by colour). A
//!    buffer with one queue is the usual per-class buffer; a buffer with
//!    several is a shared buffer with one average, as BEDS, PLC and RIO-style
//!    designs need. Policies: drop-tail, [`Red`], [`Wred`], [`Dwred`], [`Rio`] (coupled
//!    or decoupled), [`AdaptiveRed`], [`Pie`], [`FRed`] and [`DiRo`] —
//!    decided at arrival — and [`CoDel`], which drops at the head when
//!    packets leave.
//!    A policy may also couple its buffer to another: [`LossRatio`] (BEDS'
//!    forced loss ratio) drops with `λ` times the probability the RED of
//!    the buffer it names computes.
//! 3. **Choose the victim**: when an arrival-time policy decides to drop, the
//!    buffer's [`Victim`] rule says which packet pays: the arrival itself
//!    (every policy's own behaviour), or — for a buffer shared by several
//!    queues — the queue PLR picks by normalized loss rate ([`Plr`]), or the
//!    UDP bytes PLC evicts to rescue a TCP arrival ([`Plc`]). A queued packet
//!    that pays leaves from the head of its queue, with reason
//!    [`DropReason::Eviction`], and the scheduler hears of it
//!    ([`Scheduler::on_evict`]).
//! 4. **Schedule**: the link takes the next packet from the queue the
//!    scheduler ([`AnySched`]: strict or rate-capped priority, WRR, WIRR,
//!    DRR, WFQ, WF²Q+, SCFQ, VirtualClock, the proportional delay
//!    schedulers BPR, BPR⁺, WTP, PAD, MDP, DWFQ, and BEDS' backlog-weighted
//!    WFQ) selects. A rate-capped
//!    scheduler may hold packets back; [`Classful::next_wakeup`] then says
//!    when to ask again.
//!
//! Time stamps: a packet's `enqueued` is set when it is admitted.
//!
//! **ECN marking** (RFC 3168 §5, §7). A buffer with `ecn` on marks where it
//! would drop early: when its policy decides an early drop
//! ([`DropReason::EarlyDrop`]) of an ECN-capable packet (ECT(0) or ECT(1)),
//! the packet's ECN field becomes CE and it joins the queue instead,
//! provided the buffer's hard limit admits it (else it is an overflow
//! drop, as ns-2's RED drops a marked packet the full queue cannot take).
//! The policy's own state moves as for the drop (RED's count restarts,
//! PIE's `accu_prob` too), as in ns-2's `REDQueue::drop_early` and Linux's
//! red, pie and codel. What stays a drop: a not-ECT packet; an overflow;
//! a forced drop ([`DropReason::ForcedDrop`], RED's average above `max_th`,
//! or `2·max_th` when gentle) — RFC 3168 §7 lets a router drop rather than
//! mark under high congestion, and ns-2's RED (`setbit_` only in
//! `drop_early`) does; Linux's red marks there too unless `harddrop` is
//! set, which this does not follow. PIE marks only while its drop
//! probability is at most [`Pie::MARK_ECNTH`] (RFC 8033 §5.1, Linux's
//! pie: 10%); above it, it drops. CoDel marks at dequeue the packet it
//! would drop (RFC 8289 §5, Linux's codel `ecn`): the packet leaves marked
//! and CoDel schedules its next drop as after a drop
//! ([`CoDel::on_marked`]). Policies that mark: RED, WRED, DWRED, RIO,
//! Adaptive RED, CoDel and PIE; a buffer whose victim is chosen by PLR or
//! PLC does not mark (they decide which packet leaves, not whether one is
//! signalled).
//!
//! **Framing.** The qdisc knows its link's [`Framing`]. On an ATM link
//! (AAL5) every buffer also counts the cells of what it holds
//! ([`Backlog::cells`]), which is what F-RED, DI-RO and a limit in cells
//! judge, and the scheduler sees each packet's size as the bytes it takes on
//! the wire (its cells × 53), the cost of sending it on that link. Without
//! framing the cell count is 0 and the scheduler sees the IP size, at the
//! cost of one branch per call.

use std::collections::VecDeque;

use crate::aqm::adaptive_red::{AdaptiveRed, AdaptiveRedParams};
use crate::aqm::codel::{CoDel, CoDelParams};
use crate::aqm::diro::{DiRo, DiRoParams};
use crate::aqm::dwred::{Dwred, DwredParams};
use crate::aqm::fred::{FRed, FRedParams};
use crate::aqm::loss_ratio::{LossRatio, LossRatioParams, Reading};
use crate::aqm::pie::{Pie, PieParams};
use crate::aqm::plc::{Plc, PlcArrival, PlcClass, PlcDecision, PlcParams, RedVerdict};
use crate::aqm::plr::{Plr, PlrMemory};
use crate::aqm::red::{Red, RedParams};
use crate::aqm::rio::{Rio, RioParams};
use crate::aqm::wred::{Wred, WredParams};
use crate::aqm::{Amount, Backlog, Limit, LimitRule};
use crate::framing::Framing;
use crate::packet::{DropReason, Ecn, Packet};
use crate::queue::jobs::JobsParams;
use crate::queue::{Departure, Dropped};
use crate::rng::Rng;
use crate::sched::{
    AnySched, BacklogUnit, Beds, Bpr, BprPlus, BprPlusFluid, CappedPriority, Drr, Dwfq, ExVc, Head, Mdp, Pad, Priority,
    ResidualBacklog, Scfq, Scheduler, VirtualClock, Wf2qPlus, Wfq, Wirr, Wrr, Wtp,
};
use crate::time::Time;

/// How a buffer admits packets.
#[derive(Clone, Debug, PartialEq)]
pub enum BufferPolicy {
    /// Drop an arrival that does not fit.
    DropTail { limit: Limit },
    /// Random Early Detection on the buffer's total backlog.
    Red(RedParams),
    /// Weighted RED: one average, a curve per colour.
    Wred(WredParams),
    /// Dynamic WRED: out packets on RED's curve, in packets only at the
    /// limit; thresholds signalled on a channel.
    Dwred(DwredParams),
    /// RIO, coupled or decoupled averages per colour.
    Rio(RioParams),
    /// Adaptive RED (max_p tuned to keep the average in a band).
    AdaptiveRed(AdaptiveRedParams),
    /// CoDel: drops at dequeue when the sojourn time stays above target.
    CoDel(CoDelParams),
    /// PIE: drop probability driven by the queueing delay.
    Pie(PieParams),
    /// BEDS' forced loss ratio: drops with `λ` times the probability the RED
    /// of buffer `reads` computes ([`crate::aqm::loss_ratio`]).
    LossRatio(LossRatioParams),
    /// F-RED: RED per AAL5 frame on the cells of the buffer (Tufail et al.
    /// 1999), on a link with cell framing.
    FRed(FRedParams),
    /// DI-RO: in-profile frames unless overflow, out-of-profile ones through
    /// F-RED on the whole buffer (Tufail et al. 1999).
    DiRo(DiRoParams),
}

impl BufferPolicy {
    /// The buffer's hard limit.
    pub fn limit(&self) -> Limit {
        match self {
            BufferPolicy::DropTail { limit } => *limit,
            BufferPolicy::Red(p) => p.limit,
            BufferPolicy::Wred(p) => p.limit,
            BufferPolicy::Dwred(p) => p.limit,
            BufferPolicy::Rio(p) => p.limit,
            BufferPolicy::AdaptiveRed(p) => p.limit,
            BufferPolicy::CoDel(p) => p.limit,
            BufferPolicy::Pie(p) => p.limit,
            BufferPolicy::LossRatio(p) => p.limit,
            BufferPolicy::FRed(p) => p.limit,
            BufferPolicy::DiRo(p) => p.red.limit,
        }
    }

    /// Whether the policy counts cells (F-RED, DI-RO, or a limit in cells):
    /// it needs a link with cell framing.
    pub fn counts_cells(&self) -> bool {
        matches!(self, BufferPolicy::FRed(_) | BufferPolicy::DiRo(_)) || self.limit().is_cells()
    }

    /// How the policy judges an arrival against the hard limit: ns-2's rule
    /// for the RED family, "the arrival must fit" for drop-tail, CoDel and
    /// PIE (see [`LimitRule`]). PLR and PLC make room by the same rule.
    pub fn limit_rule(&self) -> LimitRule {
        match self {
            BufferPolicy::DropTail { .. } => LimitRule::Fits,
            BufferPolicy::Red(_) | BufferPolicy::AdaptiveRed(_) => Red::LIMIT_RULE,
            BufferPolicy::Wred(_) => Wred::LIMIT_RULE,
            BufferPolicy::Dwred(_) => Dwred::LIMIT_RULE,
            BufferPolicy::Rio(_) => Rio::LIMIT_RULE,
            BufferPolicy::CoDel(_) => CoDel::LIMIT_RULE,
            BufferPolicy::Pie(_) => Pie::LIMIT_RULE,
            BufferPolicy::LossRatio(_) => LossRatio::LIMIT_RULE,
            BufferPolicy::FRed(_) => FRed::LIMIT_RULE,
            BufferPolicy::DiRo(_) => DiRo::LIMIT_RULE,
        }
    }

    /// Whether the policy can mark ECN-capable packets instead of dropping
    /// them early (see the module docs).
    pub fn marks_ecn(&self) -> bool {
        matches!(
            self,
            BufferPolicy::Red(_)
                | BufferPolicy::Wred(_)
                | BufferPolicy::Dwred(_)
                | BufferPolicy::Rio(_)
                | BufferPolicy::AdaptiveRed(_)
                | BufferPolicy::CoDel(_)
                | BufferPolicy::Pie(_)
        )
    }

    fn validate(&self) -> Result<(), String> {
        match self {
            BufferPolicy::DropTail { limit } => limit.validate(),
            BufferPolicy::Red(p) => p.validate(),
            BufferPolicy::Wred(p) => p.validate(),
            BufferPolicy::Dwred(p) => p.validate(),
            BufferPolicy::Rio(p) => p.validate(),
            BufferPolicy::AdaptiveRed(p) => p.validate(),
            BufferPolicy::CoDel(p) => p.validate(),
            BufferPolicy::Pie(p) => p.validate(),
            BufferPolicy::LossRatio(p) => p.validate(),
            BufferPolicy::FRed(p) => p.validate(),
            BufferPolicy::DiRo(p) => p.validate(),
        }
    }
}

/// Which packet pays when a buffer's arrival-time policy decides to drop.
#[derive(Clone, Debug, PartialEq)]
pub enum Victim {
    /// The arriving packet (every policy's own behaviour).
    Arrival,
    /// A Proportional Loss Rate dropper ([`crate::aqm::plr`]) over the
    /// buffer's queues: the backlogged queue with the smallest `l_i/σ_i`
    /// pays — the arrival if it is the arrival's queue, else that queue's
    /// head. `sigma` has one entry per queue of the buffer, in queue order.
    /// When one head does not make room (a byte limit), further heads are
    /// pushed out, PLR choosing among the other queues each time, until the
    /// buffer admits the arrival by its policy's [`LimitRule`]; an arrival
    /// that would not be admitted even with every other queue emptied pays
    /// itself. Not with CoDel, whose drops at dequeue
    /// PLR would not see.
    Plr { sigma: Vec<f64>, memory: PlrMemory },
    /// The Packet Loss Controller ([`crate::aqm::plc`]) on a RED buffer
    /// holding exactly two queues, the throughput-sensitive (TCP) one first
    /// and the delay-sensitive (UDP) one second, served by BPR or BPR⁺ (whose
    /// rates it reads; δ is the ratio of the two queues' `s`). `x = a/b` of
    /// the empirical TCP model ([`PlcParams::DEFAULT_X`] by default).
    Plc { x: f64 },
}

/// A buffer: a name for results, the policy that admits packets, who pays
/// when it drops, and whether it marks ECN-capable packets instead of
/// dropping them early.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferConfig {
    /// The scenario's name of the buffer (labels its AQM average in time
    /// series); empty for a buffer built from a policy alone.
    pub name: String,
    pub policy: BufferPolicy,
    pub victim: Victim,
    /// ECN marking (module docs); off by default, as Linux's `ecn` flag.
    pub ecn: bool,
}

impl From<BufferPolicy> for BufferConfig {
    /// An unnamed buffer that drops the arrival, as its policy says, and never marks.
    fn from(policy: BufferPolicy) -> BufferConfig {
        BufferConfig { name: String::new(), policy, victim: Victim::Arrival, ecn: false }
    }
}

/// One class queue: a name for results, and the buffer it belongs to.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueConfig {
    pub name: String,
    /// Index into [`QdiscConfig::buffers`].
    pub buffer: usize,
}

/// The scheduler and its per-queue parameters (one entry per queue, in
/// queue order).
#[derive(Clone, Debug, PartialEq)]
pub enum SchedulerKind {
    /// Serve the first non-empty queue in declaration order. With one queue
    /// this is FIFO.
    StrictPriority,
    /// Priority, with queue 0 limited to `rate_bps` by a token bucket of
    /// `depth` bytes (an EF-like class).
    CappedPriority {
        rate_bps: u64,
        depth: u32,
    },
    Wrr {
        weights: Vec<u32>,
    },
    Wirr {
        weights: Vec<u32>,
    },
    Drr {
        quanta: Vec<u32>,
    },
    Wfq {
        weights: Vec<f64>,
    },
    Wf2qPlus {
        weights: Vec<f64>,
    },
    Scfq {
        weights: Vec<f64>,
    },
    /// Reserved rates, bits per second.
    VirtualClock {
        rates: Vec<u64>,
    },
    /// Proportional delay differentiation (Vukadinović 2004, Sections 3–5):
    /// `s` holds each queue's delay differentiation parameter `s_i`
    /// (`d̄_i/d̄_j → s_j/s_i`); the thesis' TS/DS pair is `s = [1, δ]`.
    Bpr {
        s: Vec<f64>,
    },
    /// BPR⁺ (thesis Section 5.2.1): `s` as for BPR; `residual`, what
    /// eq. (19)'s `q_k` counts.
    BprPlus {
        s: Vec<f64>,
        residual: ResidualBacklog,
    },
    /// Fluid BPR⁺ (thesis Section 5.2, eqs. 12–17), packetized as BPR:
    /// `s = [s_TS, s_DS]`, two queues.
    BprPlusFluid {
        s: Vec<f64>,
    },
    Wtp {
        s: Vec<f64>,
    },
    Pad {
        s: Vec<f64>,
    },
    Mdp {
        s: Vec<f64>,
    },
    Dwfq {
        s: Vec<f64>,
    },
    /// BEDS' forced delay ratio (Firoiu, Zhang & Guo 2001, eq. 5): WFQ whose
    /// weights follow the backlogs counted in `unit`; `s = [1, δ]` for the
    /// paper's TCP/UDP pair, queue 0 the reference.
    Beds {
        s: Vec<f64>,
        unit: BacklogUnit,
    },
    /// JoBS (Christin, Liebeherr & Abdelzaher 2001): not a scheduler the
    /// classful qdisc drives but a qdisc of its own ([`crate::queue::Jobs`]),
    /// which decides drops, rates and the order of service together. The
    /// configuration must have one drop-tail buffer holding every queue: its
    /// limit is the paper's `B` (eq. 63).
    Jobs(JobsParams),
    /// Extended VirtualClock (Tufail, Jennes & Leduc 1999, Section 2.1):
    /// `q` holds each queue's quality index `q_i` (larger: lower delay);
    /// rates are self-regulated every `k`-th arrival of a queue.
    ExVc {
        q: Vec<f64>,
        k: u32,
    },
}

impl SchedulerKind {
    /// The scheduler for `queues` queues on a link of `link_rate_bps`.
    pub fn build(&self, queues: usize, link_rate_bps: u64) -> Result<AnySched, String> {
        let built: Result<AnySched, _> = match self {
            SchedulerKind::StrictPriority => Priority::new(queues).map(Into::into),
            SchedulerKind::CappedPriority { rate_bps, depth } => {
                CappedPriority::new(queues, *rate_bps, *depth).map(Into::into)
            }
            SchedulerKind::Wrr { weights } => Wrr::new(queues, weights.clone()).map(Into::into),
            SchedulerKind::Wirr { weights } => Wirr::new(queues, weights.clone()).map(Into::into),
            SchedulerKind::Drr { quanta } => Drr::new(queues, quanta.clone()).map(Into::into),
            SchedulerKind::Wfq { weights } => Wfq::new(queues, weights.clone(), link_rate_bps).map(Into::into),
            SchedulerKind::Wf2qPlus { weights } => {
                Wf2qPlus::new(queues, weights.clone(), link_rate_bps).map(Into::into)
            }
            SchedulerKind::Scfq { weights } => Scfq::new(queues, weights.clone()).map(Into::into),
            SchedulerKind::VirtualClock { rates } => VirtualClock::new(queues, rates.clone()).map(Into::into),
            SchedulerKind::Bpr { s } => Bpr::new(queues, s.clone(), link_rate_bps).map(Into::into),
            SchedulerKind::BprPlus { s, residual } => {
                BprPlus::with_residual(queues, s.clone(), link_rate_bps, *residual).map(Into::into)
            }
            SchedulerKind::BprPlusFluid { s } => BprPlusFluid::new(queues, s.clone(), link_rate_bps).map(Into::into),
            SchedulerKind::Wtp { s } => Wtp::new(queues, s.clone()).map(Into::into),
            SchedulerKind::Pad { s } => Pad::new(queues, s.clone()).map(Into::into),
            SchedulerKind::Mdp { s } => Mdp::new(queues, s.clone()).map(Into::into),
            SchedulerKind::Dwfq { s } => Dwfq::new(queues, s.clone()).map(Into::into),
            SchedulerKind::Beds { s, unit } => Beds::new(queues, s.clone(), *unit).map(Into::into),
            SchedulerKind::Jobs(_) => return Err("JoBS is a qdisc of its own, built by Qdisc::new".into()),
            SchedulerKind::ExVc { q, k } => ExVc::new(queues, q.clone(), link_rate_bps, *k).map(Into::into),
        };
        built.map_err(|e| e.to_string())
    }
}

/// A validated description of a classful discipline.
#[derive(Clone, Debug, PartialEq)]
pub struct QdiscConfig {
    pub queues: Vec<QueueConfig>,
    pub buffers: Vec<BufferConfig>,
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

    /// One FIFO queue managed by `policy`.
    pub fn single(policy: BufferPolicy) -> QdiscConfig {
        QdiscConfig {
            queues: vec![QueueConfig { name: "fifo".into(), buffer: 0 }],
            buffers: vec![policy.into()],
            classify: Vec::new(),
            default_queue: 0,
            scheduler: SchedulerKind::StrictPriority,
        }
    }

    /// The limit of a configuration that is [`QdiscConfig::fifo`]'s (one
    /// queue in one drop-tail buffer whose arrivals pay, served by priority):
    /// what [`crate::queue::Fifo`] runs.
    pub fn as_fifo(&self) -> Option<Limit> {
        match (self.queues.as_slice(), self.buffers.as_slice(), &self.scheduler) {
            (
                [_],
                [BufferConfig { policy: BufferPolicy::DropTail { limit }, victim: Victim::Arrival, .. }],
                SchedulerKind::StrictPriority,
            ) => Some(*limit),
            _ => None,
        }
    }

    /// Checks indices and parameters; the message says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.queues.is_empty() {
            return Err("a qdisc needs at least one queue".into());
        }
        if self.queues.len() > 64 {
            return Err(format!("a qdisc has at most 64 queues, got {}", self.queues.len()));
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
        for (b, buffer) in self.buffers.iter().enumerate() {
            buffer.policy.validate()?;
            if buffer.ecn && !buffer.policy.marks_ecn() {
                return Err(format!(
                    "ecn: buffer {b}'s policy does not mark; ECN marking is for red, wred, dwred, rio_c, rio_d, \
                     adaptive_red, codel and pie"
                ));
            }
            if buffer.ecn && buffer.victim != Victim::Arrival {
                return Err(format!(
                    "ecn: buffer {b} chooses its victims with PLR or PLC, which decide which packet is dropped; \
                     marking needs the arrival to be the victim"
                ));
            }
            if let BufferPolicy::LossRatio(p) = &buffer.policy {
                let reference = self.buffers.get(p.reads).map(|r| &r.policy);
                if p.reads == b {
                    return Err(format!("the loss ratio of buffer {b} reads itself; it reads another buffer's RED"));
                }
                if !matches!(reference, Some(BufferPolicy::Red(_) | BufferPolicy::AdaptiveRed(_))) {
                    return Err(format!(
                        "the loss ratio of buffer {b} reads buffer {}, which is not managed by RED or Adaptive RED",
                        p.reads
                    ));
                }
            }
        }
        if let SchedulerKind::Jobs(params) = &self.scheduler {
            return self.validate_jobs(params);
        }
        self.scheduler.build(self.queues.len(), 1_000_000_000)?;
        for b in 0..self.buffers.len() {
            self.victim_state(b)?;
        }
        Ok(())
    }

    /// JoBS' own rules: one shared drop-tail buffer whose arrivals JoBS
    /// alone drops, and one set of guarantees per queue.
    fn validate_jobs(&self, params: &JobsParams) -> Result<(), String> {
        let [buffer] = self.buffers.as_slice() else {
            return Err(format!(
                "the jobs scheduler manages one shared buffer (the B of eq. 63); this qdisc has {}",
                self.buffers.len()
            ));
        };
        if !matches!(buffer.policy, BufferPolicy::DropTail { .. }) {
            return Err("the jobs scheduler drops by its own loss feedback loop: its buffer's policy must be droptail (only the limit is used)".into());
        }
        if buffer.victim != Victim::Arrival {
            return Err("the jobs scheduler chooses its own victims: no plr or plc on its buffer".into());
        }
        if matches!(buffer.policy.limit(), Limit::Cells(_)) {
            return Err("the jobs scheduler counts its buffer in packets or bytes, not cells".into());
        }
        params.validate(self.queues.len())
    }

    /// The queue of each codepoint (unlisted ones: the default queue).
    pub fn codepoint_table(&self) -> [u8; 64] {
        let mut table = [self.default_queue as u8; 64];
        for &(codepoint, queue) in &self.classify {
            table[codepoint as usize] = queue as u8;
        }
        table
    }

    /// Whether some buffer counts cells (F-RED, DI-RO, a limit in cells):
    /// the qdisc then needs a link with cell framing.
    pub fn counts_cells(&self) -> bool {
        self.buffers.iter().any(|b| b.policy.counts_cells())
    }

    /// [`QdiscConfig::validate`], and that a qdisc counting cells is on a
    /// link whose `framing` carries cells.
    pub fn validate_for(&self, framing: Framing) -> Result<(), String> {
        self.validate()?;
        if self.counts_cells() && !framing.has_cells() {
            return Err(
                "this qdisc counts ATM cells (F-RED, DI-RO or a limit in cells): its link needs AAL5 framing".into()
            );
        }
        Ok(())
    }

    /// The queues of buffer `b`, in queue order.
    fn queues_of(&self, b: usize) -> Vec<usize> {
        (0..self.queues.len()).filter(|&q| self.queues[q].buffer == b).collect()
    }

    /// The run-time state of buffer `b`'s victim rule, or why the rule does
    /// not fit the buffer.
    fn victim_state(&self, b: usize) -> Result<VictimState, String> {
        let queues = self.queues_of(b);
        match &self.buffers[b].victim {
            Victim::Arrival => Ok(VictimState::Arrival),
            Victim::Plr { sigma, memory } => {
                if self.buffers[b].policy.limit().is_cells() {
                    return Err("PLR makes room in packets or bytes; this buffer's limit is in cells".into());
                }
                if sigma.len() != queues.len() {
                    return Err(format!(
                        "PLR on buffer {b}: {} sigma values for the {} queues of the buffer (one per queue)",
                        sigma.len(),
                        queues.len()
                    ));
                }
                if matches!(self.buffers[b].policy, BufferPolicy::CoDel(_)) {
                    return Err("PLR chooses victims for drops decided at arrival; CoDel drops at dequeue".into());
                }
                let plr = Plr::new(sigma.clone(), *memory).map_err(|e| format!("PLR on buffer {b}: {e}"))?;
                Ok(VictimState::Plr { plr: Box::new(plr), backlogged: vec![false; queues.len()], queues })
            }
            Victim::Plc { x } => {
                let BufferPolicy::Red(red) = &self.buffers[b].policy else {
                    return Err("PLC works with a RED buffer (its sigma is derived for RED's drop curve)".into());
                };
                let &[tcp, udp] = queues.as_slice() else {
                    return Err(format!(
                        "PLC needs a buffer holding exactly two queues (TCP first, UDP second); buffer {b} holds {}",
                        queues.len()
                    ));
                };
                let (SchedulerKind::Bpr { s } | SchedulerKind::BprPlus { s, .. }) = &self.scheduler else {
                    return Err("PLC needs the bpr or bpr_plus scheduler, whose service rates it reads".into());
                };
                let delta = s[udp] / s[tcp];
                let params = PlcParams { delta, x: *x, xi: PlcParams::xi(red.min_th, red.max_th, red.max_p) };
                params.validate().map_err(|e| {
                    format!("{e} (delta is s of the UDP queue over s of the TCP queue, the TCP queue listed first)")
                })?;
                Ok(VictimState::Plc { plc: Box::new(Plc::new(params)), tcp, udp, rates: vec![0.0; self.queues.len()] })
            }
        }
    }
}

#[derive(Debug)]
enum Admission {
    DropTail(Limit),
    Red(Box<Red>),
    Wred(Box<Wred>),
    Dwred(Box<Dwred>),
    Rio(Box<Rio>),
    AdaptiveRed(Box<AdaptiveRed>),
    CoDel(Box<CoDel>),
    Pie(Box<Pie>),
    LossRatio(Box<LossRatio>),
    FRed(Box<FRed>),
    DiRo(Box<DiRo>),
}

impl Admission {
    /// The drop probability a buffer coupled to this one reads at `now`
    /// (validation guarantees a RED or Adaptive RED).
    #[inline]
    fn coupled_probability(&self, reading: Reading, now: Time) -> f64 {
        let spaced = reading == Reading::Spaced;
        match self {
            Admission::Red(red) => red.coupled_probability(now, spaced),
            Admission::AdaptiveRed(ared) => ared.red().coupled_probability(now, spaced),
            _ => unreachable!("a loss ratio reads a RED buffer"),
        }
    }
}

/// A buffer's victim rule with its state.
#[derive(Debug)]
enum VictimState {
    Arrival,
    Plr {
        plr: Box<Plr>,
        /// The buffer's queues; PLR's class `i` is `queues[i]`.
        queues: Vec<usize>,
        /// Scratch: which of them may pay.
        backlogged: Vec<bool>,
    },
    Plc {
        plc: Box<Plc>,
        tcp: usize,
        udp: usize,
        /// Scratch: the scheduler's rates, one per queue of the qdisc.
        rates: Vec<f64>,
    },
}

#[derive(Debug)]
struct Buffer {
    admission: Admission,
    backlog: Backlog,
    limit: Limit,
    /// The policy's rule for `limit`.
    rule: LimitRule,
    victim: VictimState,
    /// Marks ECN-capable packets instead of dropping them early.
    ecn: bool,
}

impl Buffer {
    /// Whether the policy marks (rather than drops) now, an early drop
    /// being decided: PIE only at low drop probability (RFC 8033 §5.1).
    #[inline]
    fn marks_now(&self) -> bool {
        match &self.admission {
            Admission::Pie(pie) => pie.drop_prob() <= Pie::MARK_ECNTH,
            _ => true,
        }
    }

    #[inline]
    fn add(&mut self, size: u32, cells: u32, colour: usize) {
        let b = &mut self.backlog;
        b.pkts += 1;
        b.bytes += size as u64;
        b.cells += cells as u64;
        b.pkts_by_colour[colour] += 1;
        b.bytes_by_colour[colour] += size as u64;
    }

    #[inline]
    fn remove(&mut self, size: u32, cells: u32, colour: usize) {
        let b = &mut self.backlog;
        b.pkts -= 1;
        b.bytes -= size as u64;
        b.cells -= cells as u64;
        b.pkts_by_colour[colour] -= 1;
        b.bytes_by_colour[colour] -= size as u64;
    }
}

#[derive(Debug)]
struct ClassQueue<M> {
    packets: VecDeque<Packet<M>>,
    bytes: u64,
    buffer: usize,
}

/// The classful discipline (see the module docs).
#[derive(Debug)]
pub struct Classful<M> {
    queue_of_codepoint: [u8; 64],
    queues: Vec<ClassQueue<M>>,
    buffers: Vec<Buffer>,
    scheduler: AnySched,
    /// Each queue's head as the scheduler sees it, kept as the queues
    /// change (O(1) a packet, not a pass over every queue).
    heads: Vec<Option<Head>>,
    /// The buffers whose policy hears when the link finds them empty
    /// ([`Classful::dequeue`]); the others (drop-tail, loss ratio) do not.
    idle_aware: Vec<usize>,
    pkts: u64,
    bytes: u64,
    cells: u64,
    /// The link's framing: cells per packet, and the size schedulers see.
    framing: Framing,
}

impl<M> Classful<M> {
    /// Builds the discipline for a link without framing; `config` must
    /// have passed [`QdiscConfig::validate`].
    pub fn new(config: &QdiscConfig, link_rate_bps: u64, rng: Rng) -> Classful<M> {
        Classful::with_framing(config, link_rate_bps, Framing::None, rng)
    }

    /// Builds the discipline for a link of `link_rate_bps` with `framing`;
    /// `config` must have passed [`QdiscConfig::validate_for`] that framing.
    pub fn with_framing(config: &QdiscConfig, link_rate_bps: u64, framing: Framing, rng: Rng) -> Classful<M> {
        config.validate_for(framing).expect("qdisc configuration must be validated before use");
        assert!(!matches!(config.scheduler, SchedulerKind::Jobs(_)), "JoBS is built by Qdisc::new");
        let queue_of_codepoint = config.codepoint_table();
        let mut seeds = rng;
        let buffers = config
            .buffers
            .iter()
            .enumerate()
            .map(|(b, BufferConfig { policy, ecn, .. })| {
                let mut stream = || Rng::derive(seeds.next_u64(), "buffer");
                let admission = match policy {
                    BufferPolicy::DropTail { limit } => Admission::DropTail(*limit),
                    BufferPolicy::Red(p) => Admission::Red(Box::new(Red::new(p.clone(), link_rate_bps, stream()))),
                    BufferPolicy::Wred(p) => Admission::Wred(Box::new(Wred::new(p.clone(), link_rate_bps, stream()))),
                    BufferPolicy::Dwred(p) => {
                        Admission::Dwred(Box::new(Dwred::new(p.clone(), link_rate_bps, stream())))
                    }
                    BufferPolicy::Rio(p) => Admission::Rio(Box::new(Rio::new(p.clone(), link_rate_bps, stream()))),
                    BufferPolicy::AdaptiveRed(p) => {
                        Admission::AdaptiveRed(Box::new(AdaptiveRed::new(p.clone(), link_rate_bps, stream())))
                    }
                    BufferPolicy::CoDel(p) => Admission::CoDel(Box::new(CoDel::new(p.clone()))),
                    BufferPolicy::Pie(p) => Admission::Pie(Box::new(Pie::new(p.clone(), stream()))),
                    BufferPolicy::LossRatio(p) => Admission::LossRatio(Box::new(LossRatio::new(p.clone(), stream()))),
                    BufferPolicy::FRed(p) => {
                        Admission::FRed(Box::new(FRed::new(p.clone(), link_rate_bps, framing, stream())))
                    }
                    BufferPolicy::DiRo(p) => {
                        Admission::DiRo(Box::new(DiRo::new(p.clone(), link_rate_bps, framing, stream())))
                    }
                };
                let victim = config.victim_state(b).expect("validated victim rule");
                Buffer {
                    admission,
                    backlog: Backlog::default(),
                    limit: policy.limit(),
                    rule: policy.limit_rule(),
                    victim,
                    ecn: *ecn,
                }
            })
            .collect();
        let queues =
            config.queues.iter().map(|q| ClassQueue { packets: VecDeque::new(), bytes: 0, buffer: q.buffer }).collect();
        let scheduler = config.scheduler.build(config.queues.len(), link_rate_bps).expect("validated scheduler");
        let idle_aware = (0..config.buffers.len())
            .filter(|&b| {
                !matches!(config.buffers[b].policy, BufferPolicy::DropTail { .. } | BufferPolicy::LossRatio(_))
            })
            .collect();
        Classful {
            queue_of_codepoint,
            queues,
            buffers,
            scheduler,
            heads: vec![None; config.queues.len()],
            idle_aware,
            pkts: 0,
            bytes: 0,
            cells: 0,
            framing,
        }
    }

    /// The queue a codepoint is classified into.
    #[inline]
    pub fn classify(&self, codepoint: u8) -> usize {
        self.queue_of_codepoint[(codepoint & 63) as usize] as usize
    }

    /// Offers an arriving packet at `now`: it joins its queue, or it (or
    /// packets a victim rule pushes out) goes onto `dropped` with the
    /// reason. `true` when the buffer admitted it with a CE mark it set
    /// instead of an early drop (see the module docs).
    pub fn enqueue(&mut self, mut pkt: Packet<M>, now: Time, dropped: &mut Dropped<M>) -> bool {
        let q = self.classify(pkt.class);
        let b = self.queues[q].buffer;
        // A coupled buffer reads the probability of the one it follows first.
        let p_ref = match &self.buffers[b].admission {
            Admission::LossRatio(lr) => self.buffers[lr.reads()].admission.coupled_probability(lr.reading(), now),
            _ => 0.0,
        };
        let buffer = &mut self.buffers[b];
        let backlog = &buffer.backlog;
        let (size, colour) = (pkt.size, pkt.colour);
        let cells = self.framing.cells(size);
        let verdict = match &mut buffer.admission {
            Admission::DropTail(limit) => {
                (!limit.admits_in(LimitRule::Fits, backlog.held(), Amount::packet(size, cells)))
                    .then_some(DropReason::Overflow)
            }
            Admission::Red(red) => red.on_arrival(backlog.pkts, backlog.bytes, size, now),
            Admission::Wred(wred) => wred.on_arrival(backlog, size, colour, now),
            Admission::Dwred(dwred) => dwred.on_arrival(backlog, size, colour, now),
            Admission::Rio(rio) => rio.on_arrival(backlog, size, colour, now),
            Admission::AdaptiveRed(ared) => ared.on_arrival(backlog, size, colour, now),
            Admission::CoDel(codel) => codel.on_arrival(backlog, size, now),
            Admission::Pie(pie) => pie.on_arrival(backlog, size, now),
            Admission::LossRatio(lr) => lr.on_arrival(p_ref, backlog.pkts, backlog.bytes, size),
            Admission::FRed(fred) => fred.on_arrival(backlog.held(), Amount::packet(size, cells), now),
            Admission::DiRo(diro) => diro.on_arrival(backlog.held(), Amount::packet(size, cells), colour, now),
        };
        let mut verdict = match buffer.victim {
            VictimState::Arrival => verdict,
            VictimState::Plr { .. } => self.plr_victim(q, size, verdict, now, dropped),
            VictimState::Plc { .. } => self.plc_victim(q, size, verdict, now, dropped),
        };
        let buffer = &self.buffers[b];
        let marked = verdict == Some(DropReason::EarlyDrop) && buffer.ecn && pkt.ecn.is_ect() && buffer.marks_now();
        if marked {
            verdict = (!buffer.limit.admits_in(buffer.rule, buffer.backlog.held(), Amount::packet(size, cells)))
                .then_some(DropReason::Overflow);
        }
        if let Some(reason) = verdict {
            dropped.push((pkt, reason));
            return false;
        }
        if marked {
            pkt.ecn = Ecn::Ce;
        }
        self.buffers[b].add(size, cells, colour as usize);
        self.pkts += 1;
        self.bytes += size as u64;
        self.cells += cells as u64;
        pkt.enqueued = now;
        let queue = &mut self.queues[q];
        queue.bytes += size as u64;
        queue.packets.push_back(pkt);
        let wire = self.framing.wire_bytes(size);
        if queue.packets.len() == 1 {
            self.heads[q] = Some(Head { size: wire, enqueued: now });
        }
        self.scheduler.on_enqueue(q, wire, now);
        marked
    }

    /// Queue `q`'s head changed (or it emptied): what the scheduler sees.
    #[inline]
    fn head_changed(&mut self, q: usize) {
        let framing = self.framing;
        self.heads[q] =
            self.queues[q].packets.front().map(|p| Head { size: framing.wire_bytes(p.size), enqueued: p.enqueued });
    }

    /// Pushes out the head of queue `q` at `now` (it was not sent); its size.
    fn evict_head(&mut self, q: usize, now: Time, dropped: &mut Dropped<M>) -> u32 {
        let queue = &mut self.queues[q];
        let pkt = queue.packets.pop_front().expect("only a backlogged queue loses its head");
        queue.bytes -= pkt.size as u64;
        self.head_changed(q);
        let queue = &self.queues[q];
        let size = pkt.size;
        let cells = self.framing.cells(size);
        self.buffers[queue.buffer].remove(size, cells, pkt.colour as usize);
        self.pkts -= 1;
        self.bytes -= size as u64;
        self.cells -= cells as u64;
        self.scheduler.on_evict(q, self.framing.wire_bytes(size), now);
        dropped.push((pkt, DropReason::Eviction));
        size
    }

    /// PLR's choice for an arrival of `size` bytes to queue `q` that its
    /// buffer's policy judged `verdict`: `Some(reason)` drops the arrival,
    /// `None` admits it after pushing out the heads PLR chose (see
    /// [`Victim::Plr`]).
    fn plr_victim(
        &mut self,
        q: usize,
        size: u32,
        verdict: Option<DropReason>,
        now: Time,
        dropped: &mut Dropped<M>,
    ) -> Option<DropReason> {
        let b = self.queues[q].buffer;
        let own = (self.queues[q].packets.len() as u64, self.queues[q].bytes);
        let buffer = &mut self.buffers[b];
        let VictimState::Plr { plr, queues, .. } = &mut buffer.victim else { unreachable!("a PLR buffer") };
        let slot = queues.iter().position(|&x| x == q).expect("the queue belongs to its buffer");
        plr.on_arrival(slot);
        let reason = verdict?;
        if !buffer.limit.admits(buffer.rule, own.0, own.1, size) {
            plr.on_drop(slot);
            return Some(reason);
        }
        let mut first = true;
        loop {
            let VictimState::Plr { plr, queues, backlogged } = &mut self.buffers[b].victim else { unreachable!() };
            for (flag, &x) in backlogged.iter_mut().zip(queues.iter()) {
                *flag = if x == q { first } else { !self.queues[x].packets.is_empty() };
            }
            let victim = plr.choose_victim(backlogged).expect("the other queues hold what the arrival needs");
            plr.on_drop(victim);
            let victim_queue = queues[victim];
            if victim_queue == q {
                return Some(reason);
            }
            self.evict_head(victim_queue, now, dropped);
            let buffer = &self.buffers[b];
            if buffer.limit.admits(buffer.rule, buffer.backlog.pkts, buffer.backlog.bytes, size) {
                return None;
            }
            first = false;
        }
    }

    /// PLC's choice for an arrival of `size` bytes to queue `q` that RED
    /// judged `verdict` (see [`Plc::decide`]).
    fn plc_victim(
        &mut self,
        q: usize,
        size: u32,
        verdict: Option<DropReason>,
        now: Time,
        dropped: &mut Dropped<M>,
    ) -> Option<DropReason> {
        verdict?;
        let b = self.queues[q].buffer;
        let buffer = &mut self.buffers[b];
        let Admission::Red(red) = &buffer.admission else { unreachable!("PLC guards a RED buffer") };
        let red_verdict = RedVerdict::from_red(verdict, red);
        let VictimState::Plc { plc, tcp, udp, rates } = &mut buffer.victim else { unreachable!("a PLC buffer") };
        let (tcp, udp) = (*tcp, *udp);
        if !self.scheduler.service_rates_bps(rates) {
            unreachable!("PLC's scheduler assigns rates");
        }
        // RED judges an early drop before the hard limit: an arrival at
        // the limit is an overflow whatever RED said (ns-2's PROBE sets
        // DTYPE_FORCED when qlen >= qlim, after drop_early). A rescue must
        // bring the buffer below the limit: one packet, or the bytes over it.
        let backlog = &buffer.backlog;
        let (red_verdict, must_free_bytes) = match buffer.limit.excess(buffer.rule, backlog.pkts, backlog.bytes, size) {
            0 => (red_verdict, 0),
            excess => match buffer.limit {
                Limit::Packets(_) => (RedVerdict::Overflow, 1),
                Limit::Bytes(_) => (RedVerdict::Overflow, excess),
                Limit::Cells(_) => unreachable!("PLC guards a RED buffer, whose limit is not in cells"),
            },
        };
        let decision = plc.decide(PlcArrival {
            class: if q == tcp { PlcClass::Tcp } else { PlcClass::Udp },
            size,
            red: red_verdict,
            r_tcp: rates[tcp],
            r_udp: rates[udp],
            udp_backlog_bytes: self.queues[udp].bytes,
            must_free_bytes,
        });
        match decision {
            PlcDecision::Admit => None,
            PlcDecision::Drop(reason) => Some(reason),
            PlcDecision::AdmitAndEvict { udp_bytes } => {
                let (mut pkts, mut bytes) = (0, 0);
                while bytes < udp_bytes {
                    bytes += self.evict_head(udp, now, dropped) as u64;
                    pkts += 1;
                }
                let VictimState::Plc { plc, .. } = &mut self.buffers[b].victim else { unreachable!() };
                plc.on_evicted(pkts, bytes);
                None
            }
        }
    }

    /// Tells the idle-aware policies which buffers the link found empty.
    fn mark_idle_buffers(&mut self, now: Time) {
        for &b in &self.idle_aware {
            let buffer = &mut self.buffers[b];
            if buffer.backlog.pkts > 0 {
                continue;
            }
            match &mut buffer.admission {
                Admission::DropTail(_) | Admission::LossRatio(_) => {}
                Admission::Red(red) => red.on_idle(now),
                Admission::Wred(wred) => wred.on_idle(now),
                Admission::Dwred(dwred) => dwred.on_idle(now),
                Admission::Rio(rio) => rio.on_idle(now),
                Admission::AdaptiveRed(ared) => ared.on_idle(now),
                Admission::CoDel(codel) => codel.on_idle(now),
                Admission::Pie(pie) => pie.on_idle(now),
                Admission::FRed(fred) => fred.on_idle(now),
                Admission::DiRo(diro) => diro.on_idle(now),
            }
        }
    }

    /// The link is free at `now`: the next packet to send, if the scheduler
    /// allows one. Packets a dequeue-time policy (CoDel) drops on the way
    /// are pushed onto `dropped`; one it marks instead leaves CE-marked.
    pub fn dequeue(&mut self, now: Time, dropped: &mut Dropped<M>) -> Option<Departure<M>> {
        self.mark_idle_buffers(now);
        loop {
            let framing = self.framing;
            let q = self.scheduler.select(&self.heads, now)?;
            let pkt = self.queues[q].packets.pop_front().expect("schedulers select non-empty queues");
            self.queues[q].bytes -= pkt.size as u64;
            self.head_changed(q);
            let b = self.queues[q].buffer;
            let buffer = &mut self.buffers[b];
            let cells = framing.cells(pkt.size);
            buffer.remove(pkt.size, cells, pkt.colour as usize);
            self.pkts -= 1;
            self.bytes -= pkt.size as u64;
            self.cells -= cells as u64;
            self.scheduler.on_dequeue(q, framing.wire_bytes(pkt.size), now);
            let sojourn = now.saturating_sub(pkt.enqueued);
            let drop = match &mut buffer.admission {
                Admission::CoDel(codel) => codel.on_dequeue(sojourn, buffer.backlog.bytes, now),
                Admission::Pie(pie) => {
                    pie.on_dequeue(sojourn, pkt.size, now);
                    false
                }
                Admission::Rio(rio) => {
                    rio.on_dequeue(&buffer.backlog, now);
                    false
                }
                _ => false,
            };
            if !drop {
                return Some(Departure { pkt, marked: false });
            }
            if buffer.ecn && pkt.ecn.is_ect() {
                if let Admission::CoDel(codel) = &mut buffer.admission {
                    codel.on_marked(now);
                }
                let mut pkt = pkt;
                pkt.ecn = Ecn::Ce;
                return Some(Departure { pkt, marked: true });
            }
            dropped.push((pkt, DropReason::EarlyDrop));
            if self.buffers[b].backlog.pkts == 0 {
                if let Admission::CoDel(codel) = &mut self.buffers[b].admission {
                    codel.on_idle(now);
                }
            }
        }
    }

    /// When a scheduler that held packets back will allow one.
    pub fn next_wakeup(&self, now: Time) -> Option<Time> {
        if self.pkts == 0 {
            return None;
        }
        self.scheduler.next_eligible(now)
    }

    pub fn len_packets(&self) -> u64 {
        self.pkts
    }

    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    /// Cells waiting (0 on a link without cell framing).
    pub fn len_cells(&self) -> u64 {
        self.cells
    }

    /// The link's framing.
    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// Every packet waiting, queue by queue, head first (for end-of-run
    /// accounting; not a hot path).
    pub fn queued(&self) -> impl Iterator<Item = &Packet<M>> {
        self.queues.iter().flat_map(|q| q.packets.iter())
    }

    pub fn averages(&self, out: &mut Vec<Option<f64>>) {
        out.clear();
        out.extend(self.buffers.iter().map(|b| match &b.admission {
            Admission::Red(red) => Some(red.avg()),
            Admission::Wred(wred) => Some(wred.avg()),
            Admission::Dwred(dwred) => Some(dwred.avg()),
            Admission::AdaptiveRed(ared) => Some(ared.avg()),
            Admission::FRed(fred) => Some(fred.avg()),
            Admission::DiRo(diro) => Some(diro.avg()),
            _ => None,
        }));
    }

    /// Whether a DWRED buffer listens on signalling channel `channel`.
    pub fn listens(&self, channel: u32) -> bool {
        self.buffers.iter().any(|b| matches!(&b.admission, Admission::Dwred(d) if d.params().channel == Some(channel)))
    }

    /// The signal of an operating interval on `channel`: every DWRED buffer
    /// listening on it sets its thresholds from `w_lsp_cwnd`
    /// ([`Dwred::update_thresholds`]). Not on the packet path.
    pub fn signal(&mut self, channel: u32, w_lsp_cwnd: f64) {
        for buffer in &mut self.buffers {
            if let Admission::Dwred(d) = &mut buffer.admission {
                if d.params().channel == Some(channel) {
                    d.update_thresholds(w_lsp_cwnd);
                }
            }
        }
    }

    /// The current `max_th` of each DWRED buffer (`None` for other
    /// policies), for time series.
    pub fn dwred_max_th(&self, out: &mut Vec<Option<f64>>) {
        out.clear();
        out.extend(self.buffers.iter().map(|b| match &b.admission {
            Admission::Dwred(d) => Some(d.thresholds().max_th),
            _ => None,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(class: u8, size: u32, flow: u32) -> Packet<()> {
        Packet::for_test(class, size, flow)
    }

    #[test]
    fn fifo_drop_tail_keeps_order_and_limit() {
        let mut q: Classful<()> = Classful::new(&QdiscConfig::fifo(Limit::Packets(3)), 10_000_000, Rng::derive(0, "q"));
        let mut dropped = Vec::new();
        for flow in 0..5 {
            q.enqueue(pkt(0, 500, flow), Time::from_micros(flow as u64), &mut dropped);
        }
        assert_eq!(
            dropped.iter().map(|(p, r)| (p.flow, *r)).collect::<Vec<_>>(),
            vec![(3, DropReason::Overflow), (4, DropReason::Overflow)]
        );
        let order: Vec<u32> =
            std::iter::from_fn(|| q.dequeue(Time::ZERO, &mut Vec::new())).map(|d| d.pkt.flow).collect();
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
        assert_eq!(q.dequeue(Time::from_millis(9), &mut Vec::new()).unwrap().pkt.enqueued, Time::from_millis(7));
    }

    fn two_class_shared(policy: BufferPolicy) -> QdiscConfig {
        QdiscConfig {
            queues: vec![QueueConfig { name: "udp".into(), buffer: 0 }, QueueConfig { name: "tcp".into(), buffer: 0 }],
            buffers: vec![policy.into()],
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
        let order: Vec<u32> =
            std::iter::from_fn(|| q.dequeue(Time::ZERO, &mut Vec::new())).map(|d| d.pkt.flow).collect();
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
        let params =
            RedParams { min_th: 100.0, max_th: 200.0, w_q: 1.0, limit: Limit::Packets(1000), ..RedParams::default() };
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

    fn flows(dropped: &Dropped<()>) -> Vec<(u32, DropReason)> {
        dropped.iter().map(|(p, r)| (p.flow, *r)).collect()
    }

    fn contents(q: &Classful<()>, queue: usize) -> Vec<u32> {
        q.queues[queue].packets.iter().map(|p| p.flow).collect()
    }

    /// Queue 0 (codepoint 0) and queue 1 (codepoint 46) in one drop-tail
    /// buffer of `limit` whose victims PLR(∞) with `sigma` chooses.
    fn plr_qdisc(limit: Limit, sigma: Vec<f64>) -> Classful<()> {
        let mut cfg = two_class_shared(BufferPolicy::DropTail { limit });
        cfg.classify = vec![(0, 0), (46, 1)];
        cfg.buffers[0].victim = Victim::Plr { sigma, memory: PlrMemory::Infinite };
        Classful::new(&cfg, 1_000_000, Rng::derive(0, "q"))
    }

    /// PLR(∞), σ = (1, 2), a shared drop-tail buffer of 3 packets. Flows
    /// number the packets; queue 0 takes codepoint 0, queue 1 codepoint 46.
    /// a1, b1, a2 fill it (arrivals A = (2, 1)). b2: A = (2, 2), l = (0, 0),
    /// tie → queue 0 pays its head a1 (D = (1, 0)), b2 admitted. b3: A₁ = 3,
    /// l/σ = (0.5, 0) → queue 1, the arrival's: b3 dropped (D₁ = 1). a3:
    /// A₀ = 3, l/σ = (1/3, 1/6) → queue 1 pays its head b1, a3 admitted.
    #[test]
    fn plr_picks_the_queue_with_the_smallest_normalized_loss() {
        let mut q = plr_qdisc(Limit::Packets(3), vec![1.0, 2.0]);
        let mut dropped = Vec::new();
        let (a, b) = (0, 46);
        for (flow, class) in [(1, a), (11, b), (2, a), (12, b), (13, b), (3, a)] {
            q.enqueue(pkt(class, 100, flow), Time::ZERO, &mut dropped);
        }
        assert_eq!(
            flows(&dropped),
            vec![(1, DropReason::Eviction), (13, DropReason::Overflow), (11, DropReason::Eviction)]
        );
        assert_eq!((contents(&q, 0), contents(&q, 1)), (vec![2, 3], vec![12]));
        assert_eq!((q.len_packets(), q.len_bytes(), q.queues[1].bytes), (3, 300, 100));
    }

    /// PLR on a 10,000-byte drop-tail buffer, σ = (1, 1). Queue 0 holds nine
    /// 1000-byte packets. An 11,000-byte arrival to queue 1 could not fit
    /// even with queue 0 emptied: it pays itself, nothing is pushed out. A
    /// 2500-byte arrival to queue 1: l = (0, 1/2) → queue 0 pays, with two
    /// heads (one does not make room), PLR asked again among the other
    /// queues only.
    #[test]
    fn plr_pushes_out_only_what_lets_the_arrival_in() {
        let mut q = plr_qdisc(Limit::Bytes(10_000), vec![1.0, 1.0]);
        let mut dropped = Vec::new();
        for flow in 1..=9 {
            q.enqueue(pkt(0, 1000, flow), Time::ZERO, &mut dropped);
        }
        q.enqueue(pkt(46, 11_000, 20), Time::ZERO, &mut dropped);
        assert_eq!(flows(&dropped), vec![(20, DropReason::Overflow)]);
        q.enqueue(pkt(46, 2500, 21), Time::ZERO, &mut dropped);
        assert_eq!(flows(&dropped)[1..], [(1, DropReason::Eviction), (2, DropReason::Eviction)]);
        assert_eq!((contents(&q, 1), q.len_bytes()), (vec![21], 9500));
    }

    /// PLR on a RED buffer of 10,000 bytes (thresholds far above: only the
    /// hard limit drops), σ = (1, 1). Queue 0 holds ten 1000-byte packets:
    /// the limit is reached, so a 2500-byte arrival to queue 1 overflows
    /// and PLR makes queue 0 pay. RED's limit is ns-2's (drop once reached):
    /// one head pushed out brings the buffer below it (9000 bytes), and the
    /// arrival is admitted (11,500 bytes). Drop-tail's rule (the arrival
    /// must fit) pushes out three.
    #[test]
    fn plr_makes_room_by_the_policys_limit_rule() {
        let red = RedParams { min_th: 100.0, max_th: 200.0, limit: Limit::Bytes(10_000), ..RedParams::default() };
        for (policy, evicted, bytes) in
            [(BufferPolicy::Red(red), 1, 11_500), (BufferPolicy::DropTail { limit: Limit::Bytes(10_000) }, 3, 9500)]
        {
            let mut cfg = two_class_shared(policy);
            cfg.classify = vec![(0, 0), (46, 1)];
            cfg.buffers[0].victim = Victim::Plr { sigma: vec![1.0, 1.0], memory: PlrMemory::Infinite };
            let mut q: Classful<()> = Classful::new(&cfg, 1_000_000, Rng::derive(0, "q"));
            let mut dropped = Vec::new();
            for flow in 1..=10 {
                q.enqueue(pkt(0, 1000, flow), Time::ZERO, &mut dropped);
            }
            assert!(dropped.is_empty());
            q.enqueue(pkt(46, 2500, 21), Time::ZERO, &mut dropped);
            let expected: Vec<_> = (1..=evicted).map(|f| (f, DropReason::Eviction)).collect();
            assert_eq!(flows(&dropped), expected);
            assert_eq!((contents(&q, 1), q.len_bytes()), (vec![21], bytes));
        }
    }

    /// BPR (δ = 8) and PLC (x = 2) on a RED buffer whose average is the
    /// instantaneous backlog (w_q = 1), min_th 3.5, max_th 4: arrivals that
    /// find 4 packets are forced drops. TCP t1, t2 and UDP u1, u2 arrive;
    /// the link sends u1 (a tie in L − V goes to UDP, eq. 27) and BPR sets
    /// its rates for the bytes left, q = (1000, 500): r_TCP =
    /// C·1000/(1000 + 8·500) = C/5, r_UDP = 4C/5. u3 arrives (3 queued:
    /// admitted). t3 and t4 find 4: forced, σ = η² = (1/5 + 4/40)² = 0.09
    /// (eq. 59, x = 2), each adds (1 − σ)·500 = 455 B of credit. t3: 455 <
    /// 500 → dropped. t4: 910 → rescued, u2 (500 B) evicted from the head
    /// of the UDP queue.
    #[test]
    fn plc_rescues_tcp_and_evicts_the_udp_head() {
        let red = RedParams {
            min_th: 3.5,
            max_th: 4.0,
            w_q: 1.0,
            gentle: false,
            limit: Limit::Packets(100),
            ..RedParams::default()
        };
        let mut cfg = two_class_shared(BufferPolicy::Red(red));
        cfg.queues.swap(0, 1);
        cfg.classify = vec![(0, 0), (46, 1)];
        cfg.scheduler = SchedulerKind::Bpr { s: vec![1.0, 8.0] };
        cfg.buffers[0].victim = Victim::Plc { x: 2.0 };
        let mut q: Classful<()> = Classful::new(&cfg, 10_000_000, Rng::derive(0, "q"));
        let mut dropped = Vec::new();
        let (tcp, udp) = (0, 46);
        for (flow, class) in [(1, tcp), (2, tcp), (11, udp), (12, udp)] {
            q.enqueue(pkt(class, 500, flow), Time::ZERO, &mut dropped);
        }
        assert_eq!(q.dequeue(Time::ZERO, &mut dropped).map(|d| d.pkt.flow), Some(11));
        for (flow, class) in [(13, udp), (3, tcp), (4, tcp)] {
            q.enqueue(pkt(class, 500, flow), Time::ZERO, &mut dropped);
        }
        assert_eq!(flows(&dropped), vec![(3, DropReason::ForcedDrop), (12, DropReason::Eviction)]);
        assert_eq!((contents(&q, 0), contents(&q, 1)), (vec![1, 2, 4], vec![13]));
        let VictimState::Plc { plc, .. } = &q.buffers[0].victim else { panic!("a PLC buffer") };
        assert!((plc.last_sigma() - 0.09).abs() < 1e-12, "{}", plc.last_sigma());
        let s = plc.stats();
        assert_eq!((s.tcp_marked, s.tcp_rescued, s.evicted, s.evicted_bytes), (2, 1, 1, 500));
        assert_eq!((q.len_packets(), q.len_bytes()), (4, 2000));
    }

    /// BEDS with forced loss ratio (Section V.B): TCP queue first in a RED
    /// buffer (min_th 2, max_th 6, max_p 0.2, w_q = 1: the average is the
    /// backlog the last TCP arrival found), UDP queue in a buffer coupled
    /// to it with λ = 2, reading RED's curve. The TCP average is 4: p_b =
    /// 0.1, so a UDP arrival is dropped with p = 0.2 (about 20 000 of
    /// 100 000, an early drop each). With the TCP average at 5, p_b = 0.15
    /// and p = 0.3; at 1 (below min_th), nothing is dropped.
    #[test]
    fn a_coupled_buffer_drops_lambda_times_the_red_it_reads() {
        let tcp = RedParams {
            min_th: 2.0,
            max_th: 6.0,
            max_p: 0.2,
            w_q: 1.0,
            limit: Limit::Packets(1000),
            ..RedParams::default()
        };
        let coupled =
            LossRatioParams { lambda: 2.0, reads: 0, limit: Limit::Packets(1_000_000), reading: Reading::Curve };
        let cfg = QdiscConfig {
            queues: vec![QueueConfig { name: "tcp".into(), buffer: 0 }, QueueConfig { name: "udp".into(), buffer: 1 }],
            buffers: vec![BufferPolicy::Red(tcp).into(), BufferPolicy::LossRatio(coupled).into()],
            classify: vec![(46, 1)],
            default_queue: 0,
            scheduler: SchedulerKind::StrictPriority,
        };
        let n = 100_000u32;
        for (tcp_queued, expected) in [(4, 0.2), (5, 0.3), (1, 0.0)] {
            let mut q: Classful<()> = Classful::new(&cfg, 10_000_000, Rng::derive(0, "q"));
            let mut dropped = Vec::new();
            for flow in 0..=tcp_queued {
                q.enqueue(pkt(0, 1000, flow), Time::ZERO, &mut dropped);
            }
            assert!(dropped.is_empty(), "TCP below its thresholds");
            for flow in 0..n {
                q.enqueue(pkt(46, 82, 100 + flow), Time::ZERO, &mut dropped);
            }
            let rate = dropped.len() as f64 / n as f64;
            let sd = (expected * (1.0 - expected) / n as f64).sqrt();
            assert!((rate - expected).abs() <= 4.0 * sd + 1e-12, "TCP backlog {tcp_queued}: rate {rate}");
            assert!(dropped.iter().all(|(p, r)| p.class == 46 && *r == DropReason::EarlyDrop));
        }
    }

    #[test]
    fn a_loss_ratio_reads_another_red_buffer() {
        let coupled = |reads| {
            BufferPolicy::LossRatio(LossRatioParams {
                lambda: 2.0,
                reads,
                limit: Limit::Packets(10),
                reading: Reading::Spaced,
            })
        };
        let mut cfg = QdiscConfig {
            queues: vec![QueueConfig { name: "tcp".into(), buffer: 0 }, QueueConfig { name: "udp".into(), buffer: 1 }],
            buffers: vec![BufferPolicy::DropTail { limit: Limit::Packets(10) }.into(), coupled(0).into()],
            classify: vec![(46, 1)],
            default_queue: 0,
            scheduler: SchedulerKind::StrictPriority,
        };
        assert!(cfg.validate().unwrap_err().contains("not managed by RED"));
        cfg.buffers[1] = coupled(1).into();
        assert!(cfg.validate().unwrap_err().contains("reads itself"));
        cfg.buffers[1] = coupled(5).into();
        assert!(cfg.validate().unwrap_err().contains("reads buffer 5"));
        cfg.buffers[1] = coupled(0).into();
        cfg.buffers[0] = BufferPolicy::Red(RedParams::default()).into();
        assert_eq!(cfg.validate(), Ok(()));
    }

    #[test]
    fn victim_rules_must_fit_their_buffer() {
        let red = BufferPolicy::Red(RedParams {
            min_th: 5.0,
            max_th: 15.0,
            limit: Limit::Packets(50),
            ..RedParams::default()
        });
        let mut cfg = two_class_shared(red.clone());
        cfg.buffers[0].victim = Victim::Plc { x: 2.0 };
        assert!(cfg.validate().unwrap_err().contains("bpr or bpr_plus"));
        cfg.scheduler = SchedulerKind::Bpr { s: vec![4.0, 1.0] };
        assert!(cfg.validate().unwrap_err().contains("delta must be finite and >= 1"));
        cfg.scheduler = SchedulerKind::Bpr { s: vec![1.0, 4.0] };
        assert_eq!(cfg.validate(), Ok(()));
        cfg.buffers[0].policy = BufferPolicy::DropTail { limit: Limit::Packets(5) };
        assert!(cfg.validate().unwrap_err().contains("RED buffer"));
        let mut cfg = two_class_shared(red);
        cfg.buffers[0].victim = Victim::Plr { sigma: vec![1.0], memory: PlrMemory::Window(10) };
        assert!(cfg.validate().unwrap_err().contains("1 sigma values for the 2 queues"));
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
mod framed {
    use super::*;
    use crate::packet::{Colour, Ecn};

    fn pkt(class: u8, size: u32, flow: u32, colour: Colour) -> Packet<()> {
        Packet { flow, class, colour, ecn: Ecn::NotEct, size, created: Time::ZERO, enqueued: Time::ZERO, meta: () }
    }

    fn framed(cfg: &QdiscConfig) -> Classful<()> {
        Classful::with_framing(cfg, 50_000_000, Framing::AAL5, Rng::derive(0, "framed"))
    }

    /// A drop-tail buffer of 64 cells on an AAL5 link: two 1500-byte
    /// packets (32 cells each) fill it; a 40-byte one (1 cell) no longer fits.
    #[test]
    fn a_cell_limit_counts_cells() {
        let mut q = framed(&QdiscConfig::fifo(Limit::Cells(64)));
        let mut dropped = Vec::new();
        for (flow, size) in [(1, 1500), (2, 1500), (3, 40)] {
            q.enqueue(pkt(0, size, flow, Colour::Green), Time::ZERO, &mut dropped);
        }
        assert_eq!(dropped.iter().map(|(p, r)| (p.flow, *r)).collect::<Vec<_>>(), vec![(3, DropReason::Overflow)]);
        assert_eq!((q.len_packets(), q.len_bytes(), q.len_cells()), (2, 3000, 64));
        q.dequeue(Time::ZERO, &mut dropped);
        assert_eq!(q.len_cells(), 32);
    }

    /// Schedulers see the wire size: 40 bytes and 30 bytes are both one
    /// cell (53 bytes) on an AAL5 link, so VirtualClock's stamps tie and
    /// queue 0's 40-byte packet goes first; without framing the 30-byte
    /// packet of queue 1 has the earlier stamp.
    #[test]
    fn schedulers_see_the_bytes_on_the_wire() {
        let cfg = QdiscConfig {
            queues: vec![QueueConfig { name: "a".into(), buffer: 0 }, QueueConfig { name: "b".into(), buffer: 0 }],
            buffers: vec![BufferPolicy::DropTail { limit: Limit::Packets(10) }.into()],
            classify: vec![(0, 0), (8, 1)],
            default_queue: 0,
            scheduler: SchedulerKind::VirtualClock { rates: vec![1_000_000, 1_000_000] },
        };
        for (framing, first) in [(Framing::AAL5, 1), (Framing::None, 2)] {
            let mut q: Classful<()> = Classful::with_framing(&cfg, 50_000_000, framing, Rng::derive(0, "q"));
            q.enqueue(pkt(0, 40, 1, Colour::Green), Time::ZERO, &mut Vec::new());
            q.enqueue(pkt(8, 30, 2, Colour::Green), Time::ZERO, &mut Vec::new());
            assert_eq!(q.dequeue(Time::ZERO, &mut Vec::new()).unwrap().pkt.flow, first, "{framing:?}");
        }
    }

    /// DI-RO on a shared buffer under Ex-VC: red frames are refused above
    /// 2·max_th of cells while green ones still come in.
    #[test]
    fn diro_on_a_shared_buffer_under_exvc() {
        let red = crate::aqm::fred::FRedParams {
            min_th: 64.0,
            max_th: 128.0,
            w_q: 1.0,
            limit: Limit::Cells(1000),
            ..Default::default()
        };
        let cfg = QdiscConfig {
            queues: vec![QueueConfig { name: "af1".into(), buffer: 0 }, QueueConfig { name: "af4".into(), buffer: 0 }],
            buffers: vec![BufferPolicy::DiRo(DiRoParams { red, average_all: true }).into()],
            classify: vec![(10, 0), (12, 0), (34, 1)],
            default_queue: 0,
            scheduler: SchedulerKind::ExVc { q: vec![1.0, 4.0], k: 1 },
        };
        let mut q = framed(&cfg);
        let mut dropped = Vec::new();
        for flow in 0..9 {
            q.enqueue(pkt(34, 1500, flow, Colour::Green), Time::ZERO, &mut dropped);
        }
        assert!(dropped.is_empty());
        assert_eq!(q.len_cells(), 288);
        q.enqueue(pkt(12, 1500, 100, Colour::Red), Time::ZERO, &mut dropped);
        q.enqueue(pkt(10, 1500, 101, Colour::Green), Time::ZERO, &mut dropped);
        assert_eq!(dropped.iter().map(|(p, r)| (p.flow, *r)).collect::<Vec<_>>(), vec![(100, DropReason::ForcedDrop)]);
        let mut averages = Vec::new();
        q.averages(&mut averages);
        assert_eq!(averages, vec![Some(288.0)]);
    }

    #[test]
    fn a_qdisc_counting_cells_needs_cell_framing() {
        let cfg = QdiscConfig::single(BufferPolicy::FRed(Default::default()));
        assert!(cfg.validate_for(Framing::None).unwrap_err().contains("AAL5"));
        assert_eq!(cfg.validate_for(Framing::AAL5), Ok(()));
        assert!(QdiscConfig::fifo(Limit::Cells(10)).counts_cells());
        assert!(!QdiscConfig::fifo(Limit::Packets(10)).counts_cells());
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::packet::{Colour, Ecn};
    use proptest::prelude::{any, prop_assert, prop_assert_eq, prop_oneof, proptest, Just, Strategy};

    /// An operation on a two-queue qdisc: offer a packet of a class and
    /// size, or let the link take one.
    #[derive(Clone, Debug)]
    enum Op {
        Offer { udp: bool, size: u32 },
        Take,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![(any::<bool>(), 40u32..1500).prop_map(|(udp, size)| Op::Offer { udp, size }), Just(Op::Take),]
    }

    /// Two queues, "udp" (codepoint 46) first and "tcp" second, in one
    /// shared buffer or two; `victim` 0: the arrival pays, 1: PLR (shared
    /// buffer) under WTP, 2: PLC (shared RED buffer) under BPR with the TCP
    /// queue first, 3: BEDS with forced delay and loss ratio (the TCP queue
    /// first in a RED buffer, the UDP queue in a buffer coupled to it with
    /// λ = 3, `red` choosing the reading, under BEDS' WFQ with δ = 4,
    /// `shared` choosing the backlog unit). RED holds 12 packets or 6000
    /// bytes (`byte_limit`), the drop-tail buffer 6000 bytes.
    fn config(shared: bool, red: bool, byte_limit: bool, victim: u8) -> QdiscConfig {
        let policy = if red || victim == 2 {
            let limit = if byte_limit { Limit::Bytes(6000) } else { Limit::Packets(12) };
            BufferPolicy::Red(RedParams { min_th: 3.0, max_th: 9.0, w_q: 0.2, limit, ..RedParams::default() })
        } else {
            BufferPolicy::DropTail { limit: Limit::Bytes(6000) }
        };
        if victim == 3 {
            let limit = if byte_limit { Limit::Bytes(6000) } else { Limit::Packets(12) };
            let tcp = RedParams { min_th: 3.0, max_th: 9.0, w_q: 0.2, limit, ..RedParams::default() };
            let reading = if red { Reading::Spaced } else { Reading::Curve };
            let unit = if shared { BacklogUnit::Packets } else { BacklogUnit::Bytes };
            return QdiscConfig {
                queues: vec![
                    QueueConfig { name: "tcp".into(), buffer: 0 },
                    QueueConfig { name: "udp".into(), buffer: 1 },
                ],
                buffers: vec![
                    BufferPolicy::Red(tcp).into(),
                    BufferPolicy::LossRatio(LossRatioParams { lambda: 3.0, reads: 0, limit, reading }).into(),
                ],
                classify: vec![(46, 1)],
                default_queue: 0,
                scheduler: SchedulerKind::Beds { s: vec![1.0, 4.0], unit },
            };
        }
        let shared = shared || victim > 0;
        let mut cfg = QdiscConfig {
            queues: vec![
                QueueConfig { name: "udp".into(), buffer: 0 },
                QueueConfig { name: "tcp".into(), buffer: if shared { 0 } else { 1 } },
            ],
            buffers: if shared { vec![policy.into()] } else { vec![policy.clone().into(), policy.into()] },
            classify: vec![(46, 0)],
            default_queue: 1,
            scheduler: SchedulerKind::StrictPriority,
        };
        match victim {
            0 => {}
            1 => {
                cfg.buffers[0].victim = Victim::Plr { sigma: vec![2.0, 1.0], memory: PlrMemory::Window(16) };
                cfg.scheduler = SchedulerKind::Wtp { s: vec![4.0, 1.0] };
            }
            _ => {
                cfg.queues.swap(0, 1);
                cfg.classify = vec![(46, 1)];
                cfg.default_queue = 0;
                cfg.buffers[0].victim = Victim::Plc { x: 1.5 };
                cfg.scheduler = SchedulerKind::Bpr { s: vec![1.0, 8.0] };
            }
        }
        cfg
    }

    proptest! {
        /// On an AAL5 link under Ex-VC with random colours: every packet is
        /// dropped, taken or queued; the buffer's cells are the sum of its
        /// packets' cells and never above its limit (frames are never cut);
        /// each queue leaves in FIFO order.
        #[test]
        fn framed_buffers_count_cells(ops in proptest::collection::vec((op(), 0u8..3), 0..400), policy in 0u8..3) {
            let limit = Limit::Cells(300);
            let red = crate::aqm::fred::FRedParams { min_th: 50.0, max_th: 100.0, w_q: 0.2, limit, ..Default::default() };
            let policy = match policy {
                0 => BufferPolicy::DropTail { limit },
                1 => BufferPolicy::FRed(red),
                _ => BufferPolicy::DiRo(crate::aqm::diro::DiRoParams { red, average_all: false }),
            };
            let cfg = QdiscConfig {
                queues: vec![QueueConfig { name: "a".into(), buffer: 0 }, QueueConfig { name: "b".into(), buffer: 0 }],
                buffers: vec![policy.into()],
                classify: vec![(46, 0)],
                default_queue: 1,
                scheduler: SchedulerKind::ExVc { q: vec![1.0, 3.0], k: 2 },
            };
            let framing = Framing::AAL5;
            let mut q: Classful<u32> = Classful::with_framing(&cfg, 10_000_000, framing, Rng::derive(5, "prop"));
            let mut dropped = Vec::new();
            let (mut offered, mut taken, mut seq) = (0u64, 0u64, 0u32);
            let mut last_seen = [None::<u32>; 2];
            for (step, (op, colour)) in ops.into_iter().enumerate() {
                let now = Time::from_micros(step as u64 * 100);
                match op {
                    Op::Offer { udp, size } => {
                        offered += 1;
                        seq += 1;
                        let colour = [Colour::Green, Colour::Yellow, Colour::Red][colour as usize];
                        let class = if udp { 46 } else { 0 };
                        q.enqueue(Packet { flow: 0, class, colour, ecn: Ecn::NotEct, size, created: now, enqueued: now, meta: seq }, now, &mut dropped);
                    }
                    Op::Take => {
                        if let Some(Departure { pkt: p, .. }) = q.dequeue(now, &mut dropped) {
                            taken += 1;
                            let queue = usize::from(p.class != 46);
                            prop_assert!(last_seen[queue].is_none_or(|s| s < p.meta), "out of order");
                            last_seen[queue] = Some(p.meta);
                        }
                    }
                }
                let cells: u64 = q.queues.iter().flat_map(|c| &c.packets).map(|p| framing.cells(p.size) as u64).sum();
                prop_assert_eq!(cells, q.len_cells());
                prop_assert_eq!(cells, q.buffers[0].backlog.cells);
                prop_assert!(cells <= 300, "{} cells", cells);
                let queued: u64 = q.queues.iter().map(|c| c.packets.len() as u64).sum();
                prop_assert_eq!(offered, taken + dropped.len() as u64 + queued);
            }
        }
    }

    proptest! {
        /// Every offered packet is either dropped, taken or still queued;
        /// lengths agree with the contents; each class leaves in FIFO order;
        /// a buffer coupled to a RED (BEDS) drops exactly as `λ·p_TCP` says
        /// when it is 0 or at least 1, and only early otherwise;
        /// under strict priority the higher-priority queue is never passed
        /// over; only PLR and PLC push queued packets out; no buffer ever
        /// holds more than its limit allows (see [`LimitRule`]).
        #[test]
        fn packets_are_conserved_and_ordered(ops in proptest::collection::vec(op(), 0..400), shared: bool, red: bool, byte_limit: bool, victim in 0u8..4) {
            let cfg = config(shared, red, byte_limit, victim);
            let udp_queue = cfg.classify[0].1;
            let mut q: Classful<u32> = Classful::new(&cfg, 10_000_000, Rng::derive(5, "prop"));
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
                        // BEDS' coupled UDP buffer: what λ·p_TCP says before the arrival.
                        let coupled = (victim == 3 && udp).then(|| {
                            let Admission::LossRatio(lr) = &q.buffers[1].admission else { unreachable!() };
                            let p = 3.0 * q.buffers[0].admission.coupled_probability(lr.reading(), now);
                            let b = &q.buffers[1].backlog;
                            (p, lr.params().limit.admits(LossRatio::LIMIT_RULE, b.pkts, b.bytes, size))
                        });
                        let before = dropped.len();
                        q.enqueue(Packet { flow: 0, class, colour: Colour::Green, ecn: Ecn::NotEct, size, created: now, enqueued: now, meta: seq }, now, &mut dropped);
                        if let Some((p, fits)) = coupled {
                            let verdict = dropped.get(before).map(|(_, r)| *r);
                            let expected = match (fits, p) {
                                (false, _) => Some(Some(DropReason::Overflow)),
                                (true, p) if p >= 1.0 => Some(Some(DropReason::ForcedDrop)),
                                (true, 0.0) => Some(None),
                                _ => None, // a coin: admitted or an early drop
                            };
                            match expected {
                                Some(e) => prop_assert_eq!(verdict, e, "λ·p_TCP = {}, fits {}", p, fits),
                                None => prop_assert!(verdict.is_none() || verdict == Some(DropReason::EarlyDrop)),
                            }
                        }
                    }
                    Op::Take => {
                        let udp_waiting = !q.queues[udp_queue].packets.is_empty();
                        if let Some(Departure { pkt: p, .. }) = q.dequeue(now, &mut dropped) {
                            taken += 1;
                            let queue = usize::from(p.class != 46);
                            if victim == 0 {
                                prop_assert!(queue == 0 || !udp_waiting, "tcp served while udp waited");
                            }
                            prop_assert!(last_seen[queue].is_none_or(|s| s < p.meta), "out of order");
                            last_seen[queue] = Some(p.meta);
                        }
                    }
                }
                let queued: u64 = q.queues.iter().map(|c| c.packets.len() as u64).sum();
                let bytes: u64 = q.queues.iter().flat_map(|c| &c.packets).map(|p| p.size as u64).sum();
                prop_assert_eq!(queued, q.len_packets());
                prop_assert_eq!(bytes, q.len_bytes());
                for c in &q.queues {
                    prop_assert_eq!(c.bytes, c.packets.iter().map(|p| p.size as u64).sum::<u64>());
                }
                for (buffer, config) in q.buffers.iter().zip(&cfg.buffers) {
                    // ns-2's rule admits below a byte limit whatever the
                    // size: over it by less than one packet (< 1500 B here).
                    let within = match (config.policy.limit(), config.policy.limit_rule()) {
                        (Limit::Packets(n), _) => buffer.backlog.pkts <= n,
                        (Limit::Bytes(n), LimitRule::Fits) => buffer.backlog.bytes <= n,
                        (Limit::Bytes(n), LimitRule::Ns2) => buffer.backlog.bytes < n + 1500,
                        (Limit::Cells(n), _) => buffer.backlog.cells <= n,
                    };
                    prop_assert!(within, "buffer over its limit: {:?}", buffer.backlog);
                }
                prop_assert!(dropped.iter().all(|(p, r)| *r != DropReason::Eviction || (victim == 1 || victim == 2 && p.class == 46)),
                    "only PLR evicts, and PLC evicts only UDP");

                prop_assert_eq!(offered, taken + dropped.len() as u64 + queued);
            }
        }
    }
}

/// ECN marking (RFC 3168 §5 and §7, RFC 8289's and RFC 8033's ECN rules).
#[cfg(test)]
mod ecn {
    use super::*;
    use crate::aqm::Thresholds;
    use crate::packet::{Colour, Ecn};

    fn pkt(ecn: Ecn, flow: u32) -> Packet<()> {
        Packet {
            flow,
            class: 0,
            colour: Colour::Green,
            ecn,
            size: 1000,
            created: Time::ZERO,
            enqueued: Time::ZERO,
            meta: (),
        }
    }

    fn with_ecn(policy: BufferPolicy, ecn: bool) -> Classful<()> {
        let mut config = QdiscConfig::single(policy);
        config.buffers[0].ecn = ecn;
        Classful::new(&config, 10_000_000, Rng::derive(7, "ecn"))
    }

    fn red(min_th: f64, max_th: f64, max_p: f64, limit: u64) -> BufferPolicy {
        let limit = Limit::Packets(limit);
        BufferPolicy::Red(RedParams { min_th, max_th, max_p, w_q: 1.0, limit, gentle: false, ..RedParams::default() })
    }

    /// Offers not-ECT packets until `n` are queued (both twins alike: ECN
    /// changes nothing for them).
    fn fill(q: &mut Classful<()>, n: u64) {
        let mut dropped = Vec::new();
        for flow in 0..100_000 {
            if q.len_packets() == n {
                return;
            }
            assert!(!q.enqueue(pkt(Ecn::NotEct, flow), Time::ZERO, &mut dropped), "a not-ECT packet is never marked");
            assert!(dropped.iter().all(|(p, _)| p.ecn == Ecn::NotEct));
            dropped.clear();
        }
        panic!("could not fill the queue to {n}");
    }

    /// RED with `ecn` marks an ECT arrival exactly where the same RED
    /// without it drops one early: the backlog held at 5 packets (between
    /// `min_th` and `max_th`, the average equal to it with `w_q = 1`), the
    /// two twins see the same averages and draw the same numbers, so the
    /// marked arrivals are the dropped ones, and the marked ones join the
    /// queue carrying CE.
    #[test]
    fn red_marks_where_it_would_drop_early() {
        let mut marking = with_ecn(red(3.0, 8.0, 0.1, 100), true);
        let mut dropping = with_ecn(red(3.0, 8.0, 0.1, 100), false);
        fill(&mut marking, 5);
        fill(&mut dropping, 5);
        let (mut marks, mut drops) = (Vec::new(), Vec::new());
        let mut dropped = Vec::new();
        for flow in 1_000_000..1_002_000 {
            let now = Time::from_micros(flow as u64);
            if marking.enqueue(pkt(Ecn::Ect0, flow), now, &mut dropped) {
                marks.push(flow);
            }
            assert!(dropped.is_empty(), "an ECT packet marked early is not dropped");
            if marking.len_packets() > 5 {
                let d = marking.dequeue(now, &mut dropped).expect("backlogged");
                assert!(!d.marked, "RED marks on arrival");
                assert_eq!(d.pkt.ecn == Ecn::Ce, marks.contains(&d.pkt.flow));
            }
            dropping.enqueue(pkt(Ecn::Ect0, flow), now, &mut dropped);
            for (p, reason) in dropped.drain(..) {
                assert_eq!(reason, DropReason::EarlyDrop);
                drops.push(p.flow);
            }
            if dropping.len_packets() > 5 {
                dropping.dequeue(now, &mut dropped);
            }
        }
        assert!(marks.len() > 50, "{} marks", marks.len());
        assert_eq!(marks, drops);
    }

    /// RFC 3168 §7 and ns-2's RED: above `max_th` (not gentle) an ECT
    /// arrival is still a forced drop, and one the full buffer cannot hold
    /// is an overflow even when RED decided an early drop; a not-ECT arrival
    /// is dropped early as without ECN.
    #[test]
    fn forced_drops_overflows_and_not_ect_packets_are_still_dropped() {
        let mut q = with_ecn(red(3.0, 8.0, 0.1, 100), true);
        fill(&mut q, 8);
        let mut dropped = Vec::new();
        for flow in 0..50 {
            assert!(!q.enqueue(pkt(Ecn::Ect0, flow), Time::ZERO, &mut dropped));
        }
        assert!(dropped.iter().all(|(_, r)| *r == DropReason::ForcedDrop) && dropped.len() == 50);

        let mut full = with_ecn(red(2.0, 50.0, 1.0, 5), true);
        fill(&mut full, 5);
        dropped.clear();
        for flow in 0..200 {
            assert!(!full.enqueue(pkt(Ecn::Ect1, flow), Time::ZERO, &mut dropped));
        }
        assert!(dropped.iter().all(|(_, r)| *r == DropReason::Overflow) && dropped.len() == 200);

        let mut q = with_ecn(red(3.0, 8.0, 0.1, 100), true);
        fill(&mut q, 5);
        dropped.clear();
        for flow in 0..500 {
            assert!(!q.enqueue(pkt(Ecn::NotEct, flow), Time::ZERO, &mut dropped));
            q.dequeue(Time::ZERO, &mut Vec::new());
        }
        assert!(dropped.iter().any(|(_, r)| *r == DropReason::EarlyDrop));
    }

    /// The DiffServ droppers mark the same way (WRED, RIO: one curve per
    /// colour; here the red colour's).
    #[test]
    fn wred_and_rio_mark_too() {
        let curves =
            [Thresholds::new(30.0, 60.0, 0.02), Thresholds::new(20.0, 40.0, 0.05), Thresholds::new(2.0, 8.0, 0.2)];
        let policies = [
            BufferPolicy::Wred(WredParams {
                thresholds: curves,
                w_q: 1.0,
                limit: Limit::Packets(100),
                ..WredParams::default()
            }),
            BufferPolicy::Rio(RioParams {
                thresholds: curves,
                w_q: [1.0; 3],
                limit: Limit::Packets(100),
                ..RioParams::default()
            }),
        ];
        for policy in policies {
            let mut q = with_ecn(policy.clone(), true);
            let (mut marks, mut dropped) = (0, Vec::new());
            for flow in 0..2000 {
                let mut p = pkt(Ecn::Ect0, flow);
                p.colour = Colour::Red;
                marks += u32::from(q.enqueue(p, Time::ZERO, &mut dropped));
                if q.len_packets() > 5 {
                    q.dequeue(Time::ZERO, &mut dropped);
                }
            }
            assert!(marks > 50 && dropped.is_empty(), "{policy:?}: {marks} marks, {} drops", dropped.len());
        }
    }

    /// CoDel with `ecn` (RFC 8289 §5, Linux's codel): a standing queue of
    /// ECT packets is signalled with marks at dequeue — the packet CoDel
    /// would drop leaves CE-marked and nothing is dropped — at the pace of
    /// the control law: the first mark where the twin without ECN drops
    /// first, the later ones INTERVAL/√count apart.
    #[test]
    fn codel_marks_at_dequeue_on_the_control_law() {
        let run = |ecn: bool, mark: Ecn| {
            let mut q = with_ecn(BufferPolicy::CoDel(CoDelParams::default()), ecn);
            let (mut signals, mut dropped) = (Vec::new(), Vec::new());
            // 1000-byte packets every 1 ms, served every 1.1 ms: the queue grows.
            let mut flow = 0;
            for tick in 0..6000u64 {
                let now = Time::from_micros(tick * 100);
                if tick % 10 == 0 {
                    q.enqueue(pkt(mark, flow), now, &mut dropped);
                    flow += 1;
                }
                if tick % 11 == 0 {
                    if let Some(d) = q.dequeue(now, &mut dropped) {
                        if d.marked {
                            assert_eq!(d.pkt.ecn, Ecn::Ce);
                            signals.push(now);
                        }
                    }
                }
                signals.extend(dropped.drain(..).map(|(_, r)| {
                    assert_eq!(r, DropReason::EarlyDrop);
                    now
                }));
            }
            signals
        };
        let marks = run(true, Ecn::Ect0);
        let drops = run(false, Ecn::Ect0);
        assert!(marks.len() >= 3, "{marks:?}");
        assert_eq!(marks[0], drops[0]);
        // Entering the state, count = 1: the next signal INTERVAL later;
        // then count = 2: INTERVAL/√2 after that (each at the next dequeue
        // on the 1.1 ms grid).
        let within =
            |gap: Time, law_us: u64| gap >= Time::from_micros(law_us) && gap < Time::from_micros(law_us + 1100);
        assert!(within(marks[1] - marks[0], 100_000), "{marks:?}");
        assert!(within(marks[2] - marks[1], 70_711), "{marks:?}");
        assert_eq!(run(true, Ecn::NotEct), drops, "a not-ECT packet is dropped as without ECN");
    }

    /// PIE with `ecn` (RFC 8033 §5.1, Linux's pie): an ECT arrival PIE would
    /// drop is marked while `drop_prob ≤ mark_ecnth` (10%) and dropped
    /// above it.
    #[test]
    fn pie_marks_only_at_low_drop_probability() {
        let mut q = with_ecn(BufferPolicy::Pie(PieParams { max_burst: Time::ZERO, ..PieParams::default() }), true);
        let prob = |q: &Classful<()>| match &q.buffers[0].admission {
            Admission::Pie(pie) => pie.drop_prob(),
            _ => unreachable!(),
        };
        let (mut marked_at, mut dropped_at, mut dropped) = (Vec::new(), Vec::new(), Vec::new());
        // Arrivals every 0.5 ms, departures every 1 ms: the delay, and PIE's
        // probability, keep growing.
        for tick in 0..8000u64 {
            let now = Time::from_micros(tick * 500);
            if q.enqueue(pkt(Ecn::Ect0, tick as u32), now, &mut dropped) {
                marked_at.push(prob(&q));
            }
            for (_, reason) in dropped.drain(..) {
                if reason == DropReason::EarlyDrop {
                    dropped_at.push(prob(&q));
                }
            }
            if tick % 2 == 0 {
                q.dequeue(now, &mut dropped);
            }
        }
        assert!(marked_at.len() > 10 && dropped_at.len() > 10, "{} marks, {} drops", marked_at.len(), dropped_at.len());
        assert!(marked_at.iter().all(|&p| p <= Pie::MARK_ECNTH));
        assert!(dropped_at.iter().all(|&p| p > Pie::MARK_ECNTH));
    }

    /// `ecn` is for the policies that drop early, with the arrival as victim.
    #[test]
    fn only_early_droppers_whose_arrival_pays_mark() {
        let mut config = QdiscConfig::fifo(Limit::Packets(10));
        config.buffers[0].ecn = true;
        assert!(config.validate().unwrap_err().contains("does not mark"));
        let mut plr = QdiscConfig {
            queues: vec![QueueConfig { name: "a".into(), buffer: 0 }, QueueConfig { name: "b".into(), buffer: 0 }],
            buffers: vec![BufferConfig {
                name: String::new(),
                policy: red(3.0, 8.0, 0.1, 100),
                victim: Victim::Plr { sigma: vec![1.0, 2.0], memory: PlrMemory::Infinite },
                ecn: false,
            }],
            classify: vec![(0, 0), (1, 1)],
            default_queue: 1,
            scheduler: SchedulerKind::StrictPriority,
        };
        assert!(plr.validate().is_ok());
        plr.buffers[0].ecn = true;
        assert!(plr.validate().unwrap_err().contains("PLR or PLC"));
    }
}
