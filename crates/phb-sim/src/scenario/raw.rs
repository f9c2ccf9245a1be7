//! The scenario file as written: serde structs mirroring the TOML.
//!
//! Nothing here is checked beyond TOML types: unknown keys are rejected
//! (`deny_unknown_fields`) and enumerated words (`kind`, `policy`, …) must be
//! one of their values, but units are still text ([`Quantity`]), names are
//! unresolved and the keys that only apply to some `kind` are all optional.
//! Validation (`validate/`) turns this into [`super::model`], after
//! expanding the `[[generators]]` into ordinary nodes, links and traffic.
//!
//! Tables of named entries (`[classes]`, `[qdiscs]`) are `BTreeMap`s because
//! the `toml` crate, as configured here, sorts keys; where declaration order
//! matters (classes) validation takes it from the document.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    pub name: Option<String>,
    pub run: Run,
    pub classes: BTreeMap<String, i64>,
    #[serde(default)]
    pub nodes: Nodes,
    #[serde(default)]
    pub qdiscs: BTreeMap<String, Qdisc>,
    #[serde(default)]
    pub conditioners: BTreeMap<String, Conditioner>,
    #[serde(default)]
    pub lsps: BTreeMap<String, Lsp>,
    #[serde(default)]
    pub links: Vec<Link>,
    #[serde(default)]
    pub traffic: Vec<Traffic>,
    #[serde(default)]
    pub generators: Vec<Generator>,
    pub trace: Option<Trace>,
}

/// `[trace]`: the packets to record (`crate::trace`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    pub links: Vec<String>,
    pub classes: Option<Vec<String>>,
    pub flows: Option<Vec<String>>,
    pub start: Option<Quantity>,
    pub end: Option<Quantity>,
    pub events: Option<Vec<String>>,
    pub max_size: Option<Quantity>,
    pub pcap: Option<bool>,
}

/// `[run]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    pub duration: Quantity,
    pub warmup: Option<Quantity>,
    pub seed: Option<u64>,
    pub sample_interval: Option<Quantity>,
    pub sample_scopes: Option<Vec<String>>,
    pub memory_limit: Option<Quantity>,
    pub delay_ratios: Option<Vec<DelayRatio>>,
}

/// `[[run.delay_ratios]]` (or `delay_ratios = [{ ... }]` under `[run]`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelayRatio {
    pub scope: String,
    pub numerator: String,
    pub denominator: String,
    pub timescales: Vec<Quantity>,
}

/// `[nodes]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nodes {
    #[serde(default)]
    pub hosts: Vec<String>,
    #[serde(default)]
    pub routers: Vec<String>,
}

/// `[qdiscs.NAME]`: the union of the keys of every kind.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Qdisc {
    pub kind: QdiscKind,
    pub limit: Option<Quantity>,
    pub min_th: Option<f64>,
    pub max_th: Option<f64>,
    pub w_q: Option<f64>,
    pub max_p: Option<f64>,
    pub mean_pktsize: Option<Quantity>,
    pub gentle: Option<bool>,
    pub wait: Option<bool>,
    pub ns1_compat: Option<bool>,
    pub mode: Option<RedMode>,
    pub green: Option<ColourCurve>,
    pub yellow: Option<ColourCurve>,
    pub red: Option<ColourCurve>,
    pub interval: Option<Quantity>,
    pub beta: Option<f64>,
    pub top: Option<f64>,
    pub bottom: Option<f64>,
    pub target: Option<Quantity>,
    pub maxpacket: Option<Quantity>,
    pub count_reuse: Option<CountReuse>,
    pub t_update: Option<Quantity>,
    pub alpha: Option<f64>,
    pub max_burst: Option<Quantity>,
    pub derandomize: Option<bool>,
    /// ECN marking instead of early drops (RFC 3168 §5).
    pub ecn: Option<bool>,
    pub count: Option<bool>,
    pub average_all: Option<bool>,
    /// DWRED: `min_th = b·max_th` (eq. 12).
    pub b: Option<f64>,
    /// DWRED: the LSP whose window sets the thresholds.
    pub lsp: Option<String>,
    /// DWRED: what a signal does to the average.
    pub average_on_signal: Option<AverageOnSignal>,
    pub scheduler: Option<Scheduler>,
    /// Ex-VC: self-regulate every `regulate_every`-th arrival of a queue.
    pub regulate_every: Option<u32>,
    /// The proportional-delay schedulers' two-queue shorthand: `s = [1, delta]`.
    pub delta: Option<f64>,
    /// BEDS: what the queue lengths of eq. (5) count.
    pub backlog_unit: Option<BacklogUnit>,
    /// BPR⁺: what eq. (19)'s `q_k` counts.
    pub residual_backlog: Option<ResidualBacklog>,
    /// JoBS: its delay loop's gain, a fraction of the stability limit (eq. 59).
    pub gain: Option<f64>,
    pub cap_rate: Option<Quantity>,
    pub cap_depth: Option<Quantity>,
    pub buffers: Option<Vec<Buffer>>,
    pub queues: Option<Vec<Queue>>,
    pub default_queue: Option<String>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QdiscKind {
    Fifo,
    Red,
    Wred,
    Dwred,
    RioC,
    RioD,
    AdaptiveRed,
    Codel,
    Pie,
    Fred,
    Diro,
    Classful,
}

/// RED's `mode`: what the average counts.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RedMode {
    Packets,
    Bytes,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scheduler {
    Priority,
    CappedPriority,
    Wrr,
    Wirr,
    Drr,
    Wfq,
    #[serde(rename = "wf2q_plus")]
    Wf2qPlus,
    Scfq,
    VirtualClock,
    Bpr,
    BprPlus,
    BprPlusFluid,
    Wtp,
    Pad,
    Mdp,
    Dwfq,
    Beds,
    Jobs,
    Exvc,
}

/// BEDS' `backlog_unit`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BacklogUnit {
    Bytes,
    Packets,
}

/// BPR⁺'s `residual_backlog`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ResidualBacklog {
    WithOwnPacket,
    BytesAhead,
}

/// A loss-ratio buffer's `reading` of the RED it follows.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    Spaced,
    Curve,
}

/// `[[qdiscs.NAME.buffers]]` of a classful qdisc: a drop-tail or RED policy
/// with the same keys as a `fifo` or `red` qdisc.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Buffer {
    pub name: String,
    pub policy: Policy,
    pub limit: Option<Quantity>,
    pub min_th: Option<f64>,
    pub max_th: Option<f64>,
    pub w_q: Option<f64>,
    pub max_p: Option<f64>,
    pub mean_pktsize: Option<Quantity>,
    pub gentle: Option<bool>,
    pub wait: Option<bool>,
    pub ns1_compat: Option<bool>,
    pub mode: Option<RedMode>,
    pub green: Option<ColourCurve>,
    pub yellow: Option<ColourCurve>,
    pub red: Option<ColourCurve>,
    pub interval: Option<Quantity>,
    pub beta: Option<f64>,
    pub top: Option<f64>,
    pub bottom: Option<f64>,
    pub target: Option<Quantity>,
    pub maxpacket: Option<Quantity>,
    pub count_reuse: Option<CountReuse>,
    pub t_update: Option<Quantity>,
    pub alpha: Option<f64>,
    pub max_burst: Option<Quantity>,
    pub derandomize: Option<bool>,
    /// ECN marking instead of early drops (RFC 3168 §5).
    pub ecn: Option<bool>,
    /// F-RED and DI-RO: Floyd & Jacobson's spacing of the discards.
    pub count: Option<bool>,
    /// DI-RO: every frame updates the average, not only out-of-profile ones.
    pub average_all: Option<bool>,
    /// DWRED: `min_th = b·max_th` (eq. 12).
    pub b: Option<f64>,
    /// DWRED: the LSP whose window sets the thresholds.
    pub lsp: Option<String>,
    /// DWRED: what a signal does to the average.
    pub average_on_signal: Option<AverageOnSignal>,
    /// The Packet Loss Controller on this (RED) buffer.
    pub plc: Option<bool>,
    /// PLC's `x = a/b`.
    pub plc_x: Option<f64>,
    /// A PLR dropper: its memory, a number of arrivals or `"infinite"`.
    pub plr: Option<PlrMemory>,
    /// `policy = "loss_ratio"`: the buffer whose RED it reads.
    pub reads: Option<String>,
    /// `policy = "loss_ratio"`: λ.
    pub lambda: Option<f64>,
    /// `policy = "loss_ratio"`: what it reads of that RED.
    pub reading: Option<Reading>,
}

/// `plr = 1000` (PLR(M), the last M arrivals) or `plr = "infinite"` (PLR(∞)).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum PlrMemory {
    Window(i64),
    Word(String),
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    Droptail,
    Red,
    Wred,
    Dwred,
    RioC,
    RioD,
    AdaptiveRed,
    Codel,
    Pie,
    LossRatio,
    Fred,
    Diro,
}

/// A colour's RED curve in WRED and RIO: `{ min_th = 40, max_th = 70, max_p = 0.02 }`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ColourCurve {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
}

/// DWRED: what a signal that changes the thresholds does to the average.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AverageOnSignal {
    Keep,
    Reset,
}

/// CoDel's rule for the count when the dropping state is re-entered.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CountReuse {
    Rfc,
    Ns2,
}

/// `[[qdiscs.NAME.queues]]` of a classful qdisc.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Queue {
    pub name: String,
    #[serde(default)]
    pub classes: Vec<String>,
    pub buffer: String,
    /// WRR, WIRR (integer), WFQ, WF2Q+, SCFQ: the queue's weight.
    pub weight: Option<f64>,
    /// DRR: bytes per round.
    pub quantum: Option<Quantity>,
    /// VirtualClock: the reserved rate.
    pub rate: Option<Quantity>,
    /// BPR, BPR+, WTP, PAD, MDP, DWFQ: the delay differentiation parameter `s_i`.
    pub s: Option<f64>,
    /// Ex-VC: the quality index `q_i`.
    pub q: Option<f64>,
    /// A PLR buffer's loss differentiation parameter `σ_i`.
    pub sigma: Option<f64>,
    /// JoBS: the absolute delay bound `d_i`.
    pub d: Option<Quantity>,
    /// JoBS: the absolute loss-rate bound `L_i`, a fraction.
    #[serde(rename = "L")]
    pub l: Option<f64>,
    /// JoBS: the absolute rate guarantee `μ_i`.
    pub mu: Option<Quantity>,
    /// JoBS: proportional delay with the next queue, `D_{i+1} = k_i·D_i`.
    pub k: Option<f64>,
    /// JoBS: proportional loss with the next queue, `p_{i+1} = k'_i·p_i`.
    pub k_prime: Option<f64>,
}

/// `[conditioners.NAME]`: an edge traffic conditioner.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conditioner {
    pub rules: Vec<Rule>,
}

/// `[[conditioners.NAME.rules]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub name: String,
    #[serde(rename = "match")]
    pub matches: Option<RuleMatch>,
    pub meter: Option<Meter>,
    pub green: Option<String>,
    pub yellow: Option<String>,
    pub red: Option<String>,
}

/// A rule's `match = { ... }`: every listed field must match.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleMatch {
    pub classes: Option<Vec<String>>,
    pub groups: Option<Vec<String>>,
    pub src: Option<Vec<String>>,
    pub dst: Option<Vec<String>>,
    pub protocol: Option<Protocol>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    Tcp,
    Udp,
}

/// A rule's `meter = { kind = "trtcm", ... }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meter {
    pub kind: MeterKind,
    pub rate: Option<Quantity>,
    pub burst_size: Option<Quantity>,
    pub cir: Option<Quantity>,
    pub cbs: Option<Quantity>,
    pub ebs: Option<Quantity>,
    pub pir: Option<Quantity>,
    pub pbs: Option<Quantity>,
    pub ctr: Option<Quantity>,
    pub ptr: Option<Quantity>,
    pub win_length: Option<Quantity>,
    pub mode: Option<MeterMode>,
    /// F-GCRA: the limit τ.
    pub tau: Option<Quantity>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MeterKind {
    TokenBucket,
    Srtcm,
    Trtcm,
    Tsw2cm,
    Tsw3cm,
    Fgcra,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MeterMode {
    Blind,
    Aware,
}

/// `[lsps.NAME]`: an AF LSP (Bouras & Sevasti 2008): its ingress, RTT,
/// packet size and operating interval, the TWAM marking its members and the
/// window input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lsp {
    /// The link direction `"A->B"` at whose entry TWAM marks.
    pub ingress: String,
    /// `RTT_LSP`.
    pub rtt: Quantity,
    /// `S`.
    pub packet_size: Quantity,
    /// `α`.
    pub alpha: Option<i64>,
    /// Where the members' windows come from.
    pub window: Option<LspWindow>,
    /// The estimate of `W_LSP^cwnd`: eq. (7) or (8).
    pub w_lsp: Option<LspEstimate>,
    /// The ingress marker: `"twam"`, `"tsw2cm"` (per member, CTR = `r`),
    /// or `"none"` (TWAM only computes `W_LSP^cwnd`, for DWRED).
    pub marker: Option<LspMarker>,
    /// TSW2CM's window (marker `"tsw2cm"`).
    pub win_length: Option<Quantity>,
    /// The codepoints of in and out packets.
    #[serde(rename = "in")]
    pub in_mark: Option<String>,
    #[serde(rename = "out")]
    pub out_mark: Option<String>,
    pub members: Vec<LspMember>,
}

/// `[[lsps.NAME.members]]`: a customer's flow or aggregate.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LspMember {
    /// Traffic groups whose flows form the member.
    pub groups: Vec<String>,
    /// `r_i`, the contracted rate.
    pub r: Option<Quantity>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LspWindow {
    Cwnd,
    Passive,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LspEstimate {
    Cwnd,
    Ssthresh,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LspMarker {
    Twam,
    Tsw2cm,
    None,
}

/// `[[links]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub between: Vec<String>,
    pub rate: Quantity,
    pub delay: Quantity,
    pub qdisc: Option<String>,
    pub qdisc_forward: Option<String>,
    pub qdisc_reverse: Option<String>,
    pub conditioner_forward: Option<String>,
    pub conditioner_reverse: Option<String>,
    pub loss_forward: Option<f64>,
    pub loss_reverse: Option<f64>,
    pub extra_delay: Option<Quantity>,
    pub framing: Option<FramingKind>,
}

/// A link's `framing`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FramingKind {
    None,
    Aal5,
    Aal5LlcSnap,
}

/// `[[traffic]]`: the union of the keys of every kind. Also a generator's
/// traffic template, which leaves `from` and `to` to the generator and may
/// give `name` as a pattern; so these three are optional here and required
/// by validation.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Traffic {
    pub name: Option<String>,
    pub kind: TrafficKind,
    pub from: Option<String>,
    pub to: Option<String>,
    /// Required by every kind but `command`, whose packets keep the DSCP
    /// their program sets when it has none.
    pub class: Option<String>,
    pub count: Option<u32>,
    pub packet_size: Option<Quantity>,
    pub rate: Option<Quantity>,
    pub interval: Option<Quantity>,
    pub on_mean: Option<Quantity>,
    pub off_mean: Option<Quantity>,
    pub shape: Option<f64>,
    /// Burst sources: packets per burst, and the OFF time after each.
    pub burst: Option<u32>,
    pub off: Option<Quantity>,
    pub start: Option<Quantity>,
    pub start_jitter: Option<Quantity>,
    pub stop: Option<Quantity>,
    /// The number of flows over time, instead of `count`, `start`, `stop`.
    pub schedule: Option<Vec<ScheduleStep>>,
    pub path: Option<Vec<String>>,
    // VoIP only.
    pub codec: Option<Codec>,
    pub link_layer: Option<LinkLayer>,
    // TCP only.
    pub profile: Option<TcpProfile>,
    pub variant: Option<TcpVariant>,
    pub mss: Option<Quantity>,
    pub header: Option<Quantity>,
    pub initial_window: Option<u32>,
    pub initial_ssthresh: Option<u32>,
    pub window: Option<u32>,
    pub dupthresh: Option<u32>,
    pub min_rto: Option<Quantity>,
    pub max_rto: Option<Quantity>,
    pub initial_rto: Option<Quantity>,
    pub granularity: Option<Quantity>,
    pub delayed_ack: Option<bool>,
    pub delack_timeout: Option<Quantity>,
    pub slow_start_restart: Option<bool>,
    pub byte_counting: Option<bool>,
    pub limited_transmit: Option<bool>,
    pub whole_segment_halving: Option<bool>,
    /// ECN-capable transport (RFC 3168 §6.1).
    pub ecn: Option<bool>,
    pub congestion: Option<Congestion>,
    pub trace: Option<bool>,
    pub app: Option<AppKind>,
    pub file_size: Option<Quantity>,
    pub file_size_dist: Option<SizeDistKind>,
    pub think_time: Option<Quantity>,
    pub new_connection: Option<bool>,
    pub phases: Option<Vec<Phase>>,
    // Command only (emulation: a program run in a host's namespace).
    pub host: Option<String>,
    pub argv: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub cwd: Option<String>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TrafficKind {
    Cbr,
    ParetoOnoff,
    ExpOnoff,
    Burst,
    Poisson,
    Voip,
    Tcp,
    Command,
}

/// One step of a traffic group's `schedule`: from `at` on, `count` flows.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleStep {
    pub at: Quantity,
    pub count: i64,
}

/// A VoIP source's codec.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub enum Codec {
    #[serde(rename = "g723.1")]
    G7231,
    #[serde(rename = "g711")]
    G711,
    #[serde(rename = "g729")]
    G729,
}

/// Which link-layer bytes a VoIP frame carries on the links.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LinkLayer {
    Ethernet,
    None,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TcpProfile {
    Ns2,
    #[serde(rename = "ns2_2004")]
    Ns2Of2004,
    Ns3,
    Linux,
    Stcp,
}

/// A TCP sender's congestion control (`TCP_CONGESTION` in emulation).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Congestion {
    #[default]
    Reno,
    Cubic,
    Bbr,
}

impl Congestion {
    /// The kernel's name of it.
    pub fn name(self) -> &'static str {
        match self {
            Congestion::Reno => "reno",
            Congestion::Cubic => "cubic",
            Congestion::Bbr => "bbr",
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TcpVariant {
    Reno,
    Newreno,
    Sack,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AppKind {
    Bulk,
    Files,
    Phases,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SizeDistKind {
    Fixed,
    Exponential,
    Pareto,
}

/// One entry of a TCP flow's `phases`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    pub from: Quantity,
    pub mode: PhaseKind,
    pub chunk: Option<Quantity>,
    pub pause: Option<Quantity>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PhaseKind {
    Greedy,
    Chunks,
}

/// `[[generators]]`: a topology written as a few keys and expanded into
/// nodes, links and traffic before validation (`validate/generators.rs`).
/// The union of the keys of every kind.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Generator {
    pub kind: GeneratorKind,
    pub name: String,
    /// Pairs (dumbbell), hops (parking lot) or leaves (star).
    pub count: u32,
    /// The seed of drawn values; default `run.seed`.
    pub seed: Option<u64>,
    // Node names: patterns with `{i}`, or plain names.
    pub senders: Option<String>,
    pub receivers: Option<String>,
    pub left: Option<String>,
    pub right: Option<String>,
    pub routers: Option<String>,
    pub hub: Option<String>,
    pub leaves: Option<String>,
    // Links.
    pub bottleneck: Option<LinkTemplate>,
    pub hop_links: Option<LinkTemplate>,
    pub sender_links: Option<LinkTemplate>,
    pub receiver_links: Option<LinkTemplate>,
    pub leaf_links: Option<LinkTemplate>,
    // Traffic.
    pub traffic: Option<Traffic>,
    pub cross_traffic: Option<Traffic>,
    pub long_traffic: Option<Traffic>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GeneratorKind {
    Dumbbell,
    ParkingLot,
    Star,
}

/// The links a generator makes from one template: the keys of `[[links]]`
/// but `between`, with a rate and a delay per item.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkTemplate {
    pub rate: PerItem,
    pub delay: PerItem,
    pub qdisc: Option<String>,
    pub qdisc_forward: Option<String>,
    pub qdisc_reverse: Option<String>,
    pub conditioner_forward: Option<String>,
    pub conditioner_reverse: Option<String>,
    pub loss_forward: Option<f64>,
    pub loss_reverse: Option<f64>,
    pub extra_delay: Option<Quantity>,
    pub framing: Option<FramingKind>,
}

/// A generator's value for each of its items (pairs, hops, leaves): one
/// quantity for all (`"1ms"`), a list taken in turn (`["1ms", "5ms"]`), or
/// drawn (`{ uniform = ["1ms", "50ms"] }`).
#[derive(Clone, Debug, PartialEq)]
pub enum PerItem {
    One(Quantity),
    List(Vec<Quantity>),
    Drawn(Draw),
}

/// How a [`PerItem`] value is drawn.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Draw {
    /// `[min, max]`: uniform on the whole numbers of the internal unit
    /// (nanoseconds, bit/s) from min to max, both included.
    pub uniform: Vec<Quantity>,
}

impl<'de> Deserialize<'de> for PerItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PerItemVisitor;

        impl<'de> Visitor<'de> for PerItemVisitor {
            type Value = PerItem;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a quantity such as \"1ms\", a list of them taken in turn, or a draw { uniform = [min, max] }",
                )
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<PerItem, E> {
                Ok(PerItem::One(Quantity(v.to_owned())))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PerItem, E> {
                Ok(PerItem::One(Quantity(v.to_string())))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PerItem, E> {
                Ok(PerItem::One(Quantity(v.to_string())))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<PerItem, E> {
                Ok(PerItem::One(Quantity(v.to_string())))
            }

            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<PerItem, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(PerItem::List)
            }

            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<PerItem, A::Error> {
                Draw::deserialize(de::value::MapAccessDeserializer::new(map)).map(PerItem::Drawn)
            }
        }

        deserializer.deserialize_any(PerItemVisitor)
    }
}

/// A value with a unit, as written (`"10Mbps"`). A bare TOML number is kept
/// as its text, so that the unit parsers can say which unit is missing
/// instead of serde reporting a type mismatch.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantity(pub String);

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct QuantityVisitor;

        impl Visitor<'_> for QuantityVisitor {
            type Value = Quantity;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number with a unit in a string, such as \"10Mbps\" or \"50ms\"")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
                Ok(Quantity(v.to_owned()))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
        }

        deserializer.deserialize_any(QuantityVisitor)
    }
}
