//! What the JoBS examples (`jobs_bench`, `jobs_late`) share: the command
//! line's `--flag value` pairs, the JoBS qdisc of a scenario file's link
//! direction, and the packet of a recorded arrival.

use phb::queue::{JobsParams, QdiscConfig, SchedulerKind};
use phb::Colour;
use phb_sim::net::{Meta, SimPacket};
use phb_sim::{Arrival, Scenario};

/// Takes `flag` and the value after it out of `args`.
pub fn take(args: &mut Vec<String>, flag: &str) -> Option<String> {
    let i = args.iter().position(|a| a == flag)?;
    let v = args.get(i + 1).cloned().unwrap_or_else(|| panic!("{flag} takes a value"));
    args.drain(i..i + 2);
    Some(v)
}

/// A scenario and the JoBS qdisc at one of its link directions.
pub struct JobsLink {
    pub scenario: Scenario,
    pub config: QdiscConfig,
    pub params: JobsParams,
    pub rate_bps: u64,
}

/// Loads the scenario at `path` (a catalog entry's `[reproduce]` section
/// left out) and finds the JoBS qdisc at `scope` (`A->B`).
pub fn jobs_link(path: &str, scope: &str) -> JobsLink {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    // A catalog entry's [reproduce] section is not the core's.
    let text = text.split("\n[reproduce]").next().unwrap_or_default();
    let scenario = phb_sim::load(text, path, &[]).unwrap_or_else(|e| panic!("{e}"));
    let (from, to) = scope.split_once("->").expect("--scope is a link direction A->B");
    let node = |name: &str| scenario.nodes.iter().position(|n| n.name == name).expect("a node of the scenario");
    let (a, b) = (node(from), node(to));
    let link = scenario.links.iter().find(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a)).expect("a link");
    let config = if link.a == a { link.qdisc_ab.clone() } else { link.qdisc_ba.clone() };
    let SchedulerKind::Jobs(params) = &config.scheduler else { panic!("{scope} has no JoBS qdisc") };
    let (params, rate_bps) = (params.clone(), link.rate_bps);
    JobsLink { scenario, config, params, rate_bps }
}

/// The packet of a recorded arrival.
pub fn packet(a: &Arrival) -> SimPacket {
    SimPacket {
        flow: 0,
        class: a.codepoint,
        colour: Colour::Green,
        ecn: phb::Ecn::NotEct,
        size: a.size,
        created: a.time,
        enqueued: a.time,
        meta: Meta::default(),
    }
}

/// The same qdisc with other guarantees.
pub fn with_params(config: &QdiscConfig, params: JobsParams) -> QdiscConfig {
    QdiscConfig { scheduler: SchedulerKind::Jobs(params), ..config.clone() }
}
