//! The scenario file as written: serde structs mirroring the TOML.
//!
//! Nothing here is checked beyond TOML types: unknown keys are rejected
//! (`deny_unknown_fields`) and enumerated words (`kind`, `policy`, …) must be
//! one of their values, but units are still text ([`Quantity`]), names are
//! unresolved and the keys that only apply to some `kind` are all optional.
//! Validation (`validate.rs`) turns this into [`super::model`].
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
#[derive(Debug, Deserialize)]
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
    /// DWRED: `min_th = b·max_th` (eq. 12).
    pub b: Option<f64>,
    /// DWRED: the LSP whose window sets the thresholds.
    pub lsp: Option<String>,
    pub scheduler: Option<Scheduler>,
    /// The proportional-delay schedulers' two-queue shorthand: `s = [1, delta]`.
    pub delta: Option<f64>,
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
    Wtp,
    Pad,
    Mdp,
    Dwfq,
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
    /// DWRED: `min_th = b·max_th` (eq. 12).
    pub b: Option<f64>,
    /// DWRED: the LSP whose window sets the thresholds.
    pub lsp: Option<String>,
    /// The Packet Loss Controller on this (RED) buffer.
    pub plc: Option<bool>,
    /// PLC's `x = a/b`.
    pub plc_x: Option<f64>,
    /// A PLR dropper: its memory, a number of arrivals or `"infinite"`.
    pub plr: Option<PlrMemory>,
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
}

/// A colour's RED curve in WRED and RIO: `{ min_th = 40, max_th = 70, max_p = 0.02 }`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ColourCurve {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
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
    /// A PLR buffer's loss differentiation parameter `σ_i`.
    pub sigma: Option<f64>,
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
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MeterKind {
    TokenBucket,
    Srtcm,
    Trtcm,
    Tsw2cm,
    Tsw3cm,
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
}

/// `[[traffic]]`: the union of the keys of every kind.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Traffic {
    pub name: String,
    pub kind: TrafficKind,
    pub from: String,
    pub to: String,
    pub class: String,
    pub count: Option<u32>,
    pub packet_size: Option<Quantity>,
    pub rate: Option<Quantity>,
    pub interval: Option<Quantity>,
    pub on_mean: Option<Quantity>,
    pub off_mean: Option<Quantity>,
    pub shape: Option<f64>,
    pub start: Option<Quantity>,
    pub start_jitter: Option<Quantity>,
    pub stop: Option<Quantity>,
    pub path: Option<Vec<String>>,
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
    pub trace: Option<bool>,
    pub app: Option<AppKind>,
    pub file_size: Option<Quantity>,
    pub file_size_dist: Option<SizeDistKind>,
    pub think_time: Option<Quantity>,
    pub phases: Option<Vec<Phase>>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TrafficKind {
    Cbr,
    ParetoOnoff,
    ExpOnoff,
    Poisson,
    Tcp,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TcpProfile {
    Ns2,
    #[serde(rename = "ns2_2004")]
    Ns2Of2004,
    Ns3,
    Linux,
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
#[derive(Debug, Deserialize)]
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
