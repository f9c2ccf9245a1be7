//! The validated scenario: what the engine accepts.
//!
//! Everything here has been checked (units converted, names resolved to
//! indices, impossible values rejected), so building and running a network
//! from it cannot fail on bad input. The raw, file-shaped form lives in
//! [`super::raw`]; [`super::load`] turns one into the other.

use phb::classify::ConditionerConfig;
use phb::mark::TwamParams;
use phb::queue::QdiscConfig;
use phb::{Framing, Rng, Time};

use crate::apps::AppModel;
pub use crate::scenario::raw::Congestion;
use crate::tcp::TcpConfig;
use crate::traffic::{Burst, Cbr, OnOff, Period, Poisson, Source};

/// A complete, validated scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// A name for results (the file stem, unless the file sets one).
    pub name: String,
    pub run: RunConfig,
    /// Traffic classes, in declaration order; a packet's class index is its
    /// position here.
    pub classes: Vec<ClassDef>,
    pub nodes: Vec<NodeDef>,
    pub links: Vec<LinkDef>,
    pub groups: Vec<TrafficGroup>,
    /// AF LSPs with their TWAM (Bouras & Sevasti 2008), in the order of
    /// their names; an LSP's index is the signalling channel its DWRED
    /// queues listen on. Empty for most scenarios.
    pub lsps: Vec<LspDef>,
    /// Programs run in hosts' namespaces (`kind = "command"` traffic
    /// entries, emulation only), in file order. They are not in `groups`,
    /// which holds the other entries in file order:
    /// [`Scenario::traffic_index`] maps a group back to its entry.
    pub commands: Vec<CommandDef>,
    /// The packets to record (`[trace]`); `None` records none.
    pub trace: Option<TraceDef>,
}

/// `[trace]`, validated: which link directions, classes, flows, time window
/// and events the event log records (`crate::trace`).
#[derive(Clone, Debug, PartialEq)]
pub struct TraceDef {
    /// The traced link directions as port indices (link `p / 2`, from `a`
    /// towards `b` for an even `p`: [`Scenario::port_qdisc`]'s numbering),
    /// in the order the file names them.
    pub ports: Vec<usize>,
    /// Per class (index into [`Scenario::classes`]): traced.
    pub classes: Vec<bool>,
    /// Per traffic group (index into [`Scenario::groups`]): its flows traced.
    pub groups: Vec<bool>,
    /// The packets of no flow (an emulation's commands' and shell's
    /// programs) are traced: `trace.flows` is not given.
    pub programs: bool,
    /// Events at times in `[start, end)` are recorded.
    pub start: Time,
    pub end: Time,
    /// Per [`crate::trace::TraceEvent`] (by its value): recorded.
    pub events: [bool; crate::trace::TraceEvent::ALL.len()],
    /// The packets the traced directions transmit are also written to a
    /// pcapng file (`crate::trace::pcap`).
    pub pcap: bool,
}

impl Scenario {
    /// The position in the file's `traffic` list (the `i` of `traffic[i]`)
    /// of group `g`: `g` plus the commands written before it.
    pub fn traffic_index(&self, g: usize) -> usize {
        traffic_index(&self.commands, g)
    }

    /// The qdisc of port `p`: link `p / 2`, from `a` towards `b` for an
    /// even `p` (the simulator's and the emulator's port numbering).
    pub fn port_qdisc(&self, p: usize) -> &QdiscConfig {
        let link = &self.links[p / 2];
        if p.is_multiple_of(2) {
            &link.qdisc_ab
        } else {
            &link.qdisc_ba
        }
    }
}

/// An AF LSP (Bouras & Sevasti 2008, Sections 3–5): the TWAM at its
/// ingress, the window input that feeds it, and the channel on which it
/// signals `W_LSP^cwnd` to the DWRED queues that name it.
#[derive(Clone, Debug, PartialEq)]
pub struct LspDef {
    pub name: String,
    /// The link direction `(from, to)` at whose entry TWAM marks (and the
    /// passive estimator counts): the LSP's first hop.
    pub ingress: (usize, usize),
    /// TWAM's parameters; `r` has one rate per member (all 1 bit/s when
    /// the LSP does not mark: only `W_LSP^cwnd` is used then). TWAM always
    /// runs its operating intervals: its `W_LSP^cwnd` goes to the DWRED
    /// queues that name the LSP, whatever marks the packets.
    pub twam: TwamParams,
    /// Where the members' windows come from.
    pub window: WindowInput,
    /// What marks the members' packets at the ingress.
    pub marker: LspMarker,
    /// The codepoints of in and out packets (unused without a marker).
    pub marks: (u8, u8),
    /// Each member's traffic groups (indices into [`Scenario::groups`]).
    pub members: Vec<Vec<usize>>,
}

/// The marker at an LSP's ingress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LspMarker {
    /// None: packets pass unchanged.
    None,
    /// TWAM (`phb::mark::twam`): in with probability `p_i` (eq. 9).
    Twam,
    /// TSW2CM (`phb::mark::tsw`) per member, its CTR the member's `r_i`: the
    /// marker Bouras & Sevasti compare TWAM with.
    Tsw2cm { win_length: Time },
}

/// The source of TWAM's `W_i^cwnd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowInput {
    /// The senders' congestion windows, read by the simulator at each
    /// update (an oracle: ns-2's `cwnd_`, without fast recovery's
    /// inflation); with eq. (8), their `ssthresh` too.
    Cwnd,
    /// The member's packets seen at the ingress in the last `RTT_LSP`
    /// (`phb::mark::passive_window`).
    Passive,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// Simulated time to run.
    pub duration: Time,
    /// Statistics count only from this time on.
    pub warmup: Time,
    /// The seed used when the command line gives none.
    pub seed: u64,
    /// Interval of the optional time series; `None` records none.
    pub sample_interval: Option<Time>,
    /// The scopes the time series covers (`"end-to-end"` or a link
    /// direction `"A->B"`, each checked to exist); `None`: every scope.
    pub sample_scopes: Option<Vec<String>>,
    /// Delay ratios to measure per packet and per interval (the
    /// `delay_ratios` table); empty: none, at no cost.
    pub delay_ratios: Vec<DelayRatioDef>,
}

/// A delay ratio to measure: class `numerator`'s queueing delay over class
/// `denominator`'s (indices into [`Scenario::classes`]) at one scope, per
/// packet and averaged over intervals of each timescale
/// (`measure::delay_ratio`).
#[derive(Clone, Debug, PartialEq)]
pub struct DelayRatioDef {
    /// `"end-to-end"` or a link direction `"A->B"`, as in results.
    pub scope: String,
    /// The link direction's (from, to) nodes; `None` for end to end.
    pub direction: Option<(usize, usize)>,
    pub numerator: usize,
    pub denominator: usize,
    /// Interval lengths, each positive and at most the measured period.
    pub timescales: Vec<Time>,
}

impl RunConfig {
    /// Whether the time series records `scope`.
    pub fn samples(&self, scope: &str) -> bool {
        self.sample_scopes.as_ref().is_none_or(|scopes| scopes.iter().any(|s| s == scope))
    }
}

/// A traffic class: a name and the DSCP-like codepoint its packets carry.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassDef {
    pub name: String,
    pub codepoint: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// Sources and sinks live on hosts.
    Host,
    /// Routers only forward.
    Router,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeDef {
    pub name: String,
    pub kind: NodeKind,
}

/// A full-duplex point-to-point link between nodes `a` and `b` (indices
/// into [`Scenario::nodes`]), with one output qdisc per direction.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkDef {
    pub a: usize,
    pub b: usize,
    /// Bits per second, the same in both directions.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Time,
    /// How both directions carry packets: as they are, or as AAL5 frames
    /// of 53-byte cells (serialisation, throughput on the wire and the
    /// buffers' cell counts follow).
    pub framing: Framing,
    /// The qdisc on `a`'s output towards `b`.
    pub qdisc_ab: QdiscConfig,
    /// The qdisc on `b`'s output towards `a`.
    pub qdisc_ba: QdiscConfig,
    /// Edge traffic conditioners at the ingress of each direction (before
    /// the loss element and the qdisc): classify, meter, then mark, drop or
    /// pass. Match fields refer to group, node and codepoint numbers.
    pub conditioner_ab: Option<ConditionerConfig>,
    pub conditioner_ba: Option<ConditionerConfig>,
    /// Random-loss elements in front of each direction's qdisc: each
    /// arriving packet is dropped with this probability (reason
    /// `loss_module`), for model validation. 0 for none.
    pub loss_ab: f64,
    pub loss_ba: f64,
}

/// The position in the file's `traffic` list of group `g`, given the
/// `commands` (in file order) that are not groups.
pub fn traffic_index(commands: &[CommandDef], g: usize) -> usize {
    let mut i = g;
    for command in commands {
        if command.index <= i {
            i += 1;
        }
    }
    i
}

/// The host names an argument refers to as `{addr:NAME}` (the emulator
/// puts the host's address there), or a message for an unclosed reference.
pub fn address_references(arg: &str) -> impl Iterator<Item = std::result::Result<&str, String>> {
    arg.match_indices(ADDRESS_REFERENCE).map(move |(at, _)| {
        let rest = &arg[at + ADDRESS_REFERENCE.len()..];
        rest.find('}').map(|end| &rest[..end]).ok_or_else(|| format!("{arg:?}: `{ADDRESS_REFERENCE}` without its `}}`"))
    })
}

/// How an argument of a command refers to a host's address: `{addr:NAME}`.
pub const ADDRESS_REFERENCE: &str = "{addr:";

/// A program run in a host's network namespace while an emulation runs
/// (`kind = "command"`): started at `start` in a process group of its own,
/// stopped (SIGTERM, then SIGKILL) at `stop`. Its packets are forwarded by
/// the emulator's router like the flows', counted in its class's link rows.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandDef {
    pub name: String,
    /// Its position in the file's `traffic` list (`traffic[index]`).
    pub index: usize,
    /// The host node it runs in.
    pub host: usize,
    /// The program and its arguments (no shell: `argv[0]` is looked up on
    /// `PATH` unless it holds a `/`); `{addr:NAME}` in an argument stands
    /// for host NAME's address ([`address_references`]).
    pub argv: Vec<String>,
    /// Variables added to the emulation's environment, and the working
    /// directory (`None`: the emulation's).
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
    /// The class its packets are counted in and carry the codepoint of
    /// (index into [`Scenario::classes`]); `None`: the codepoint the
    /// program sets decides.
    pub class: Option<usize>,
    pub start: Time,
    pub stop: Time,
}

/// N identical flows declared once. Flow `i` of group `g` is named
/// `"{g.name}.{i}"` (or just `g.name` when `count == 1`).
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficGroup {
    pub name: String,
    /// The generator and template that made the group (`"<generator
    /// name>.<template key>"`, e.g. `"wide.traffic"`); empty for a group
    /// the file wrote. Results carry it, so that a generated family of
    /// groups can be summed as one.
    pub generator: String,
    pub count: u32,
    /// Source and destination hosts (indices into [`Scenario::nodes`]).
    pub src: usize,
    pub dst: usize,
    /// Index into [`Scenario::classes`].
    pub class: usize,
    /// A pinned path (node indices from `src` to `dst`, each consecutive pair
    /// joined by a link); `None` follows shortest-path routing.
    pub path: Option<Vec<usize>>,
    /// Flows start at `start` plus a uniform random jitter in
    /// `[0, start_jitter)`, and stop sending at `stop`.
    pub start: Time,
    pub start_jitter: Time,
    pub stop: Time,
    /// A flow-count schedule: each flow's own `(start, stop)` (its start
    /// before the jitter), one per flow, replacing `start` and `stop`.
    pub windows: Option<Vec<(Time, Time)>>,
    pub transport: Transport,
}

/// What the flows of a group send.
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    /// UDP packets timed by a source model.
    Udp(SourceModel),
    /// A TCP connection from `src` to `dst` carrying an application's data;
    /// ACKs return along the reverse path.
    Tcp(TcpFlow),
}

#[derive(Clone, Debug, PartialEq)]
pub struct TcpFlow {
    pub config: TcpConfig,
    pub app: AppModel,
    /// Record cwnd, ssthresh and smoothed RTT at every sample interval.
    pub trace: bool,
    /// The congestion control the group asks for (`congestion`; `None`:
    /// not given). The simulator models reno only and refuses the others
    /// ([`super::backend`]); `phblab emulate` asks the kernel for it
    /// (`TCP_CONGESTION`).
    pub congestion: Option<Congestion>,
    /// The TCP keys the group's entry sets itself (the others take the
    /// profile's values): `phblab emulate` refuses a key set to a value the
    /// kernel cannot honour ([`super::backend`]).
    pub explicit: Vec<&'static str>,
}

/// How a UDP source emits packets.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceModel {
    /// Constant bit rate: one packet of `packet_size` bytes every `interval`.
    Cbr { packet_size: u32, interval: Time },
    /// ns-2's `Application/Traffic/Pareto`: during ON periods packets of
    /// `packet_size` bytes at `rate_bps`; ON and OFF durations Pareto
    /// distributed with means `on_mean`, `off_mean` and shape `shape`.
    ParetoOnOff { packet_size: u32, rate_bps: u64, on_mean: Time, off_mean: Time, shape: f64 },
    /// ns-2's `Application/Traffic/Exponential`: as above with exponential
    /// ON and OFF durations (e.g. VoIP: 82-byte packets every 30 ms, ON 3 s,
    /// OFF 6 s).
    ExpOnOff { packet_size: u32, rate_bps: u64, on_mean: Time, off_mean: Time },
    /// Bursts of `burst` packets at `rate_bps` (the line rate of the
    /// source's link when `None`), then `off` without any (the JoBS paper's
    /// on-off UDP sources).
    Burst { packet_size: u32, rate_bps: Option<u64>, burst: u32, off: Time },
    /// Poisson arrivals: exponential gaps, `rate_bps` on average.
    Poisson { packet_size: u32, rate_bps: u64 },
    /// Voice (`crate::traffic::voip`): one `packet_size`-byte frame every
    /// `interval` during exponential talk spurts of mean `on_mean`, separated
    /// by exponential silences of mean `off_mean` (the ON/OFF process of
    /// `ExpOnOff` with the codec's exact frame interval).
    Voip { packet_size: u32, interval: Time, on_mean: Time, off_mean: Time },
}

impl SourceModel {
    /// The IP packet size in bytes.
    pub fn packet_size(&self) -> u32 {
        match *self {
            SourceModel::Cbr { packet_size, .. }
            | SourceModel::ParetoOnOff { packet_size, .. }
            | SourceModel::ExpOnOff { packet_size, .. }
            | SourceModel::Poisson { packet_size, .. }
            | SourceModel::Burst { packet_size, .. }
            | SourceModel::Voip { packet_size, .. } => packet_size,
        }
    }

    /// The source this model describes, drawing from `rng`;
    /// `line_rate_bps` is the rate of the first link of the flow's route.
    pub fn source(&self, line_rate_bps: u64, rng: Rng) -> Source {
        match *self {
            SourceModel::Burst { packet_size, rate_bps, burst, off } => Source::Burst(Burst::new(
                Time::transmission(packet_size, rate_bps.unwrap_or(line_rate_bps)),
                burst,
                off,
            )),
            SourceModel::Cbr { interval, .. } => Source::Cbr(Cbr::new(interval)),
            SourceModel::ParetoOnOff { packet_size, rate_bps, on_mean, off_mean, shape } => Source::OnOff(OnOff::new(
                Time::transmission(packet_size, rate_bps),
                on_mean,
                off_mean,
                Period::Pareto { shape },
                rng,
            )),
            SourceModel::ExpOnOff { packet_size, rate_bps, on_mean, off_mean } => Source::OnOff(OnOff::new(
                Time::transmission(packet_size, rate_bps),
                on_mean,
                off_mean,
                Period::Exponential,
                rng,
            )),
            SourceModel::Poisson { packet_size, rate_bps } => {
                Source::Poisson(Poisson::new(Time::transmission(packet_size, rate_bps), rng))
            }
            SourceModel::Voip { interval, on_mean, off_mean, .. } => {
                Source::OnOff(OnOff::new(interval, on_mean, off_mean, Period::Exponential, rng))
            }
        }
    }
}
