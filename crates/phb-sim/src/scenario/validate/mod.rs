//! Validation: [`raw::File`] to [`Scenario`].
//!
//! First expands the file's `[[generators]]` into nodes, links and traffic
//! (`generators.rs`); messages about a generated entry name the generator's
//! key. Then converts units, resolves names to indices, applies defaults and rejects
//! impossible values, section by section (run, classes, nodes, qdiscs,
//! links, traffic), then checks the run's memory and event budget
//! (`budget.rs`). The first problem found is returned as
//! [`ScenarioError::Invalid`] naming the key and its position in the text.
//! Names are looked up in hash maps, so validation time grows linearly with
//! the scenario's size.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use phb::aqm::Limit;
use phb::classify::ConditionerConfig;
use phb::queue::{BufferConfig, BufferPolicy, QdiscConfig, QueueConfig};
use phb::{Framing, Time};
use toml_edit::Document;

use super::location::{join, position};
use super::model::*;
use super::raw::{self, Quantity};
use super::units;
use super::ScenarioError;
use crate::scope::{link_direction, split_link_direction, END_TO_END};

mod budget;
mod command;
mod conditioner;
mod coupling;
mod generators;
mod lsp;
mod policy;
mod sched;
mod schedule;
mod tcp;
mod trace;
mod victim;

use generators::Origins;
use policy::{policy_keys, PolicyKeys};

/// A link's qdisc when the file names none: a drop-tail FIFO of 50 packets,
/// ns-2's default `Queue` `limit_`.
const DEFAULT_QDISC_LIMIT: Limit = Limit::Packets(50);

type Result<T> = std::result::Result<T, ScenarioError>;

/// Validates `file`, which was deserialised from `doc`'s text, for `backend`.
pub(super) fn validate(
    mut file: raw::File,
    doc: &Document<&str>,
    source_name: &str,
    backend: super::Backend,
) -> Result<Scenario> {
    let generators = std::mem::take(&mut file.generators);
    let no_origins = Origins::default();
    let lsp_keys: Vec<String> = file.lsps.keys().cloned().collect();
    let lsp_names: Vec<&str> = lsp_keys.iter().map(String::as_str).collect();
    let cx = Context { doc, source_name, origins: &no_origins, generators: &[], lsp_names: &lsp_names };
    let name = match &file.name {
        Some(name) => match name_problem(name) {
            Some(problem) => return Err(cx.err("name", format!("{name:?}: {problem}"))),
            None => name.clone(),
        },
        None => default_name(source_name),
    };
    let mut run = cx.run(&file.run)?;
    let origins = cx.expand(&generators, &mut file)?;
    let cx = Context { doc, source_name, origins: &origins, generators: &generators, lsp_names: &lsp_names };
    let classes = cx.classes(&file.classes)?;
    let nodes = cx.nodes(&file.nodes)?;
    let qdiscs = file
        .qdiscs
        .iter()
        .map(|(name, q)| {
            cx.label(&join("qdiscs", name), name)?;
            Ok((name.as_str(), cx.qdisc(&join("qdiscs", name), q, &classes)?))
        })
        .collect::<Result<BTreeMap<_, _>>>()?;
    // The groups' names, in the groups' order (commands are not groups).
    let group_names: Vec<&str> =
        file.traffic.iter().filter(|t| t.kind != raw::TrafficKind::Command).filter_map(|t| t.name.as_deref()).collect();
    let conditioners = cx.conditioners(&file.conditioners, &classes, &nodes, &group_names)?;
    let links = cx.links(&file.links, &nodes, &qdiscs, &conditioners)?;
    let (groups, commands) = cx.traffic(&file.traffic, &file.run, &run, &classes, &nodes, &links)?;
    let lsps = cx.lsps(&file.lsps, &classes, &nodes, &links, &groups)?;
    cx.sample_scopes(&run, &nodes, &links)?;
    run.delay_ratios = cx.delay_ratios(&file.run, &run, &classes, &nodes, &links)?;
    cx.budget(&file.run, &run, classes.len(), &nodes, &links, &groups, &commands, lsps.len())?;
    cx.timer_events(&run, &lsps)?;
    let trace = match &file.trace {
        Some(t) => Some(cx.trace(t, &run, &classes, &nodes, &links, &groups)?),
        None => None,
    };
    let scenario = Scenario { name, run, classes, nodes: nodes.defs, links: links.defs, groups, lsps, commands, trace };
    match super::backend::unsupported(&scenario, backend) {
        Some((key, why)) => Err(cx.err(&key, why)),
        None => Ok(scenario),
    }
}

/// The longest scenario name, in bytes.
const NAME_MAX_LEN: usize = 100;

/// Why `name` cannot name a scenario, if it cannot. A name becomes a
/// directory under the results root (`results/<name>`), so it must be one
/// plain path component: ASCII letters, digits, `_`, `-` and `.`, starting
/// with a letter, digit or `_` (so never `.`, `..` or a hidden name), at
/// most [`NAME_MAX_LEN`] bytes.
fn name_problem(name: &str) -> Option<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    let rule =
        "a name is one path component: ASCII letters, digits, `_`, `-` and `.`, starting with a letter, digit or `_`";
    match name.chars().next() {
        None => Some("the name must not be empty".to_owned()),
        Some(first) if !(first.is_ascii_alphanumeric() || first == '_') => Some(rule.to_owned()),
        _ if name.len() > NAME_MAX_LEN => Some(format!("the name is longer than {NAME_MAX_LEN} bytes")),
        _ => name.chars().find(|&c| !allowed(c)).map(|c| format!("{c:?} is not allowed: {rule}")),
    }
}

/// The file stem of `source_name` made a valid name: `dir/dumbbell.toml`
/// gives `dumbbell`, `my run.toml` gives `my_run`; characters a name may not
/// hold become `_`, leading dots are dropped, a leading `-` becomes `_`
/// (`-x.toml` gives `_x`), and an empty stem gives `scenario`. A stem
/// longer than [`NAME_MAX_LEN`] is cut and ends in `-` and 8 hex digits of
/// its digest, so two long file names never share a results directory.
fn default_name(source_name: &str) -> String {
    let file = source_name.rsplit(['/', '\\']).next().unwrap_or(source_name);
    let stem = file.strip_suffix(".toml").unwrap_or(file).trim_start_matches('.');
    let mut name: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' }).collect();
    if name.starts_with('-') {
        name.replace_range(..1, "_");
    }
    if name.len() > NAME_MAX_LEN {
        let digest =
            stem.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        name.truncate(NAME_MAX_LEN - 9);
        name.push_str(&format!("-{:08x}", digest as u32));
    }
    if name.is_empty() {
        "scenario".to_owned()
    } else {
        name
    }
}

/// The longest name of a node, class, group, qdisc or LSP, in bytes.
const LABEL_MAX_LEN: usize = 200;

/// Characters that print as nothing (zero-width spaces and joiners, word
/// joiners, bidirectional controls, the byte-order mark, the soft hyphen):
/// two names differing only by them would look the same.
fn invisible(c: char) -> bool {
    matches!(c, '\u{ad}' | '\u{61c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}')
}

/// Why `name` cannot name a node, class, traffic group, qdisc or LSP, if
/// it cannot: names are printed in terminals, tables and file names, so
/// they hold printable characters only (no control characters such as NUL,
/// BEL or an escape, none that print as nothing), in Unicode's composed
/// form (NFC: `é` as one character, so that two spellings of one name are
/// never two names shown alike), at most [`LABEL_MAX_LEN`] bytes.
fn label_problem(name: &str) -> Option<String> {
    use unicode_normalization::UnicodeNormalization;
    if name.trim().is_empty() {
        return Some("a name must not be empty".into());
    }
    if name.len() > LABEL_MAX_LEN {
        return Some(format!("a name is at most {LABEL_MAX_LEN} bytes"));
    }
    if let Some(c) = name.chars().find(|&c| c.is_control() || invisible(c)) {
        let what = if c.is_control() { "a control character" } else { "a character that prints as nothing" };
        return Some(format!(
            "{what}, U+{:04X}, is not allowed in a name: names are printable characters only",
            c as u32
        ));
    }
    if !unicode_normalization::is_nfc(name) {
        let composed: String = name.nfc().collect();
        return Some(format!("write the name in composed form (NFC), {composed:?}, so that it has one spelling"));
    }
    None
}

/// A number as TOML writes it (`nan`, `inf`, `-inf`, `0.5`), for messages.
fn number(v: f64) -> String {
    if v.is_nan() {
        "nan".to_owned()
    } else {
        v.to_string()
    }
}

/// How many names [`list`] shows before it only counts the rest.
const LISTED: usize = 20;

/// `a, b, c`, or `none` for an empty list; past [`LISTED`] names, `…, and N
/// more` (a scenario may have 100 000 nodes).
fn list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names = names.into_iter();
    let shown: Vec<&str> = names.by_ref().take(LISTED).collect();
    let more = names.count();
    match (shown.is_empty(), more) {
        (true, _) => "none".to_owned(),
        (false, 0) => shown.join(", "),
        (false, more) => format!("{}, and {more} more", shown.join(", ")),
    }
}

/// The validated nodes, with an index of their names so that looking one up
/// takes constant time whatever the number of nodes.
struct Nodes {
    defs: Vec<NodeDef>,
    by_name: HashMap<String, usize>,
}

impl Nodes {
    /// The index of node `name`, or a message listing the nodes.
    fn index(&self, name: &str) -> std::result::Result<usize, String> {
        self.by_name.get(name).copied().ok_or_else(|| {
            format!(
                "{} is not a node; nodes are {}",
                super::shown(name, 40),
                list(self.defs.iter().map(|n| n.name.as_str()))
            )
        })
    }
}

/// The validated links, with an index of the node pairs they join (each
/// pair smaller index first) to the link's index.
struct Links {
    defs: Vec<LinkDef>,
    by_ends: HashMap<(usize, usize), usize>,
}

impl Links {
    /// The link joining `a` and `b`, either way round.
    fn between(&self, a: usize, b: usize) -> Option<usize> {
        self.by_ends.get(&(a.min(b), a.max(b))).copied()
    }
}

/// The keys that only some kinds of an entry accept, and whether each is set.
type Present = [(&'static str, bool)];

/// The keys of the UDP sources (`cbr`, `pareto_onoff`, `burst`, `voip`…)
/// that TCP does not take, and whether each is set. (`shape`, the Pareto
/// shape, is left out: TCP's web traffic takes it too.)
fn udp_source_keys(t: &raw::Traffic) -> [(&'static str, bool); 9] {
    [
        ("packet_size", t.packet_size.is_some()),
        ("rate", t.rate.is_some()),
        ("interval", t.interval.is_some()),
        ("on_mean", t.on_mean.is_some()),
        ("off_mean", t.off_mean.is_some()),
        ("codec", t.codec.is_some()),
        ("link_layer", t.link_layer.is_some()),
        ("burst", t.burst.is_some()),
        ("off", t.off.is_some()),
    ]
}

/// What validation needs besides the file: where keys are, for messages,
/// which generator made which entries, and the names of the LSPs (a DWRED
/// buffer names the one it listens to; its channel is the LSP's index in
/// this order).
struct Context<'a> {
    doc: &'a Document<&'a str>,
    source_name: &'a str,
    origins: &'a Origins,
    generators: &'a [raw::Generator],
    lsp_names: &'a [&'a str],
}

impl Context<'_> {
    /// Refuses `name` at `key` unless it may name a node, class, group,
    /// qdisc or LSP ([`label_problem`]).
    fn label(&self, key: &str, name: &str) -> Result<()> {
        match label_problem(name) {
            Some(problem) => Err(self.err(key, format!("{:?}: {problem}", super::shown(name, 40)))),
            None => Ok(()),
        }
    }

    /// The error at `key`; a key of a generated entry becomes the key of
    /// the generator that made it.
    fn err(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        let key = self.origins.source_key(self.generators, key).unwrap_or_else(|| key.to_owned());
        let (line, column) = position(self.doc, &key);
        ScenarioError::Invalid { source_name: self.source_name.to_owned(), key, line, column, message: message.into() }
    }

    fn time(&self, key: &str, q: &Quantity) -> Result<Time> {
        units::parse_time(&q.0).map_err(|m| self.err(key, m))
    }

    /// The time at `key`, or `default` when the key is absent.
    fn time_or(&self, key: &str, value: &Option<Quantity>, default: Time) -> Result<Time> {
        value.as_ref().map_or(Ok(default), |q| self.time(key, q))
    }

    fn positive_time(&self, key: &str, q: &Quantity) -> Result<Time> {
        match self.time(key, q)? {
            Time::ZERO => Err(self.err(key, format!("{:?} must be positive", q.0))),
            t => Ok(t),
        }
    }

    fn rate(&self, key: &str, q: &Quantity) -> Result<u64> {
        units::parse_rate(&q.0).map_err(|m| self.err(key, m))
    }

    fn size(&self, key: &str, q: &Quantity) -> Result<u64> {
        units::parse_size(&q.0).map_err(|m| self.err(key, m))
    }

    fn required<'v, T>(&self, path: &str, key: &str, value: &'v Option<T>, what: &str) -> Result<&'v T> {
        value.as_ref().ok_or_else(|| self.err(&join(path, key), format!("{what} needs `{key}`")))
    }

    /// Rejects the first key that is set but not in `allowed` for `what`.
    fn only(&self, path: &str, what: &str, present: &Present, allowed: &[&str]) -> Result<()> {
        match present.iter().find(|(key, set)| *set && !allowed.contains(key)) {
            Some((key, _)) => Err(self.err(
                &join(path, key),
                format!("`{key}` does not apply to {what}, which takes: {}", list(allowed.iter().copied())),
            )),
            None => Ok(()),
        }
    }

    fn run(&self, run: &raw::Run) -> Result<RunConfig> {
        let duration = self.positive_time("run.duration", &run.duration)?;
        let warmup = match &run.warmup {
            Some(q) => self.time("run.warmup", q)?,
            None => Time::ZERO,
        };
        if warmup >= duration {
            return Err(
                self.err("run.warmup", format!("the warmup ({warmup}) must be shorter than the duration ({duration})"))
            );
        }
        let sample_interval = match &run.sample_interval {
            Some(q) => {
                let interval = self.positive_time("run.sample_interval", q)?;
                if interval > duration {
                    return Err(self.err(
                        "run.sample_interval",
                        format!("the sample interval ({interval}) must not exceed the duration ({duration})"),
                    ));
                }
                Some(interval)
            }
            None => None,
        };
        if run.sample_scopes.is_some() && sample_interval.is_none() {
            return Err(self.err(
                "run.sample_scopes",
                "sample_scopes chooses what the time series records; set run.sample_interval too",
            ));
        }
        Ok(RunConfig {
            duration,
            warmup,
            seed: run.seed.unwrap_or(1),
            sample_interval,
            sample_scopes: run.sample_scopes.clone(),
            delay_ratios: Vec::new(), // checked once classes and links are known
        })
    }

    /// Classes in the order the document declares them (the `toml` crate
    /// sorts map keys, so the order comes from the document).
    fn classes(&self, classes: &BTreeMap<String, i64>) -> Result<Vec<ClassDef>> {
        let declared = self
            .doc
            .get("classes")
            .and_then(|item| item.as_table_like())
            .map(|t| t.iter().map(|(k, _)| k).collect::<Vec<_>>());
        let order = declared.expect("[classes] was deserialised, so the document has it");
        if order.is_empty() {
            return Err(self.err("classes", "at least one class is needed, e.g. `be = 0` under [classes]"));
        }
        let mut out: Vec<ClassDef> = Vec::with_capacity(order.len());
        for name in order {
            let key = join("classes", name);
            self.label(&key, name)?;
            let codepoint = classes[name];
            let codepoint = u8::try_from(codepoint).ok().filter(|&c| c <= 63).ok_or_else(|| {
                self.err(&key, format!("codepoint {codepoint} is out of range; codepoints are 0..=63"))
            })?;
            if let Some(other) = out.iter().find(|c| c.codepoint == codepoint) {
                return Err(self.err(
                    &key,
                    format!("codepoint {codepoint} is already used by class {}; codepoints must be unique", other.name),
                ));
            }
            out.push(ClassDef { name: name.to_owned(), codepoint });
        }
        Ok(out)
    }

    fn nodes(&self, nodes: &raw::Nodes) -> Result<Nodes> {
        let mut out = Nodes { defs: Vec::new(), by_name: HashMap::new() };
        let lists = [("hosts", &nodes.hosts, NodeKind::Host), ("routers", &nodes.routers, NodeKind::Router)];
        for (list_name, names, kind) in lists {
            for (i, name) in names.iter().enumerate() {
                let key = format!("nodes.{list_name}[{i}]");
                self.label(&key, name)?;
                if name.contains("->") {
                    return Err(self.err(
                        &key,
                        format!("{name:?}: a node name must not contain `->`, which names link directions (\"a->b\")"),
                    ));
                }
                if out.by_name.insert(name.clone(), out.defs.len()).is_some() {
                    return Err(self.err(
                        &key,
                        format!("{name} is already a node; node names must be unique across hosts and routers"),
                    ));
                }
                out.defs.push(NodeDef { name: name.clone(), kind });
            }
        }
        if out.defs.len() < 2 {
            return Err(self.err("nodes", format!("a scenario needs at least 2 nodes, found {}", out.defs.len())));
        }
        Ok(out)
    }

    /// Each of `run.sample_scopes` names the end-to-end scope or a link direction.
    fn sample_scopes(&self, run: &RunConfig, nodes: &Nodes, links: &Links) -> Result<()> {
        let Some(scopes) = &run.sample_scopes else { return Ok(()) };
        let directions: HashSet<String> = links
            .defs
            .iter()
            .flat_map(|l| [(l.a, l.b), (l.b, l.a)])
            .map(|(from, to)| link_direction(&nodes.defs[from].name, &nodes.defs[to].name))
            .collect();
        for (i, scope) in scopes.iter().enumerate() {
            if scope != END_TO_END && !directions.contains(scope) {
                let example = links
                    .defs
                    .first()
                    .map_or("A->B".to_owned(), |l| link_direction(&nodes.defs[l.a].name, &nodes.defs[l.b].name));
                return Err(self.err(
                    &format!("run.sample_scopes[{i}]"),
                    format!("{scope:?} is neither \"end-to-end\" nor a link direction such as {example:?}"),
                ));
            }
        }
        Ok(())
    }

    /// `run.delay_ratios`: each names an existing scope and two distinct
    /// classes, with timescales that fit the measured period at least once.
    fn delay_ratios(
        &self,
        raw: &raw::Run,
        run: &RunConfig,
        classes: &[ClassDef],
        nodes: &Nodes,
        links: &Links,
    ) -> Result<Vec<DelayRatioDef>> {
        let Some(ratios) = &raw.delay_ratios else { return Ok(Vec::new()) };
        let measured = run.duration - run.warmup;
        let class_names = || list(classes.iter().map(|c| c.name.as_str()));
        let mut out: Vec<DelayRatioDef> = Vec::with_capacity(ratios.len());
        for (i, r) in ratios.iter().enumerate() {
            let path = format!("run.delay_ratios[{i}]");
            let direction = if r.scope == END_TO_END {
                None
            } else {
                let found = split_link_direction(&r.scope).and_then(|(a, b)| {
                    let (a, b) = (nodes.index(a).ok()?, nodes.index(b).ok()?);
                    links.between(a, b).map(|_| (a, b))
                });
                let Some(found) = found else {
                    return Err(self.err(
                        &join(&path, "scope"),
                        format!(
                            "{:?} is neither \"end-to-end\" nor a link direction \"A->B\" of the scenario's links",
                            r.scope
                        ),
                    ));
                };
                Some(found)
            };
            let class = |key: &str, name: &str| -> Result<usize> {
                classes.iter().position(|c| c.name == name).ok_or_else(|| {
                    self.err(&join(&path, key), format!("{name:?} is not a class; classes: {}", class_names()))
                })
            };
            let numerator = class("numerator", &r.numerator)?;
            let denominator = class("denominator", &r.denominator)?;
            if numerator == denominator {
                return Err(self.err(&join(&path, "denominator"), "the numerator and denominator are the same class"));
            }
            if r.timescales.is_empty() {
                return Err(self.err(&join(&path, "timescales"), "give at least one timescale, e.g. [\"400ms\"]"));
            }
            let mut timescales: Vec<Time> = Vec::with_capacity(r.timescales.len());
            for (j, q) in r.timescales.iter().enumerate() {
                let key = format!("{path}.timescales[{j}]");
                let t = self.positive_time(&key, q)?;
                if t > measured {
                    return Err(self.err(
                        &key,
                        format!(
                            "the timescale ({}) is longer than the measured period (duration − warmup = {}): no interval would fit",
                            t,
                            measured
                        ),
                    ));
                }
                if timescales.contains(&t) {
                    return Err(self.err(&key, format!("the timescale {} is listed twice", t)));
                }
                timescales.push(t);
            }
            if let Some(k) =
                out.iter().position(|o| o.scope == r.scope && o.numerator == numerator && o.denominator == denominator)
            {
                return Err(self.err(
                    &path,
                    format!("run.delay_ratios[{k}] already measures this ratio; list all its timescales there"),
                ));
            }
            out.push(DelayRatioDef { scope: r.scope.clone(), direction, numerator, denominator, timescales });
        }
        Ok(out)
    }

    fn qdisc(&self, path: &str, q: &raw::Qdisc, classes: &[ClassDef]) -> Result<QdiscConfig> {
        let keys = policy_keys!(q);
        let classful_keys: &Present = &[
            ("scheduler", q.scheduler.is_some()),
            ("delta", q.delta.is_some()),
            ("backlog_unit", q.backlog_unit.is_some()),
            ("residual_backlog", q.residual_backlog.is_some()),
            ("gain", q.gain.is_some()),
            ("cap_rate", q.cap_rate.is_some()),
            ("cap_depth", q.cap_depth.is_some()),
            ("buffers", q.buffers.is_some()),
            ("queues", q.queues.is_some()),
            ("default_queue", q.default_queue.is_some()),
            ("regulate_every", q.regulate_every.is_some()),
        ];
        let single = |policy: raw::Policy, what: &str| -> Result<QdiscConfig> {
            self.only(path, what, classful_keys, &[])?;
            let mut config = QdiscConfig::single(self.policy(path, policy, &keys, what)?);
            config.buffers[0].ecn = keys.ecn.unwrap_or(false);
            Ok(config)
        };
        let config = match q.kind {
            raw::QdiscKind::Fifo => single(raw::Policy::Droptail, "a fifo qdisc")?,
            raw::QdiscKind::Red => single(raw::Policy::Red, "a red qdisc")?,
            raw::QdiscKind::Wred => single(raw::Policy::Wred, "a wred qdisc")?,
            raw::QdiscKind::Dwred => single(raw::Policy::Dwred, "a dwred qdisc")?,
            raw::QdiscKind::RioC => single(raw::Policy::RioC, "a rio_c qdisc")?,
            raw::QdiscKind::RioD => single(raw::Policy::RioD, "a rio_d qdisc")?,
            raw::QdiscKind::AdaptiveRed => single(raw::Policy::AdaptiveRed, "an adaptive_red qdisc")?,
            raw::QdiscKind::Codel => single(raw::Policy::Codel, "a codel qdisc")?,
            raw::QdiscKind::Pie => single(raw::Policy::Pie, "a pie qdisc")?,
            raw::QdiscKind::Fred => single(raw::Policy::Fred, "a fred qdisc")?,
            raw::QdiscKind::Diro => single(raw::Policy::Diro, "a diro qdisc")?,
            raw::QdiscKind::Classful => {
                let what = "a classful qdisc";
                match keys.present().iter().find(|(_, set)| *set) {
                    Some((key, _)) => {
                        return Err(self.err(
                            &join(path, key),
                            format!("`{key}` does not apply to {what}; set it on one of its [[buffers]]"),
                        ))
                    }
                    None => self.classful(path, q, classes)?,
                }
            }
        };
        config.validate().map_err(|m| self.err(path, m))?;
        Ok(config)
    }

    fn classful(&self, path: &str, q: &raw::Qdisc, classes: &[ClassDef]) -> Result<QdiscConfig> {
        let what = "a classful qdisc";
        let buffers_raw = self.required(path, "buffers", &q.buffers, what)?;
        let queues_raw = self.required(path, "queues", &q.queues, what)?;
        if buffers_raw.is_empty() {
            return Err(self.err(&join(path, "buffers"), "a classful qdisc needs at least one buffer"));
        }
        if queues_raw.is_empty() {
            return Err(self.err(&join(path, "queues"), "a classful qdisc needs at least one queue"));
        }
        let mut buffers = Vec::with_capacity(buffers_raw.len());
        for (i, b) in buffers_raw.iter().enumerate() {
            let bpath = format!("{}[{i}]", join(path, "buffers"));
            if buffers_raw[..i].iter().any(|other| other.name == b.name) {
                return Err(
                    self.err(&join(&bpath, "name"), format!("a buffer named {} already exists in this qdisc", b.name))
                );
            }
            buffers.push(self.buffer(&bpath, b, buffers_raw)?);
        }
        let buffer_names = || list(buffers_raw.iter().map(|b| b.name.as_str()));
        let mut queues = Vec::with_capacity(queues_raw.len());
        let mut classify: Vec<(u8, usize)> = Vec::new();
        let mut queue_of_class: BTreeMap<&str, &str> = BTreeMap::new();
        for (i, queue) in queues_raw.iter().enumerate() {
            let qpath = format!("{}[{i}]", join(path, "queues"));
            if queues_raw[..i].iter().any(|other| other.name == queue.name) {
                return Err(self
                    .err(&join(&qpath, "name"), format!("a queue named {} already exists in this qdisc", queue.name)));
            }
            let buffer = buffers_raw.iter().position(|b| b.name == queue.buffer).ok_or_else(|| {
                self.err(
                    &join(&qpath, "buffer"),
                    format!("{} is not a buffer of this qdisc; buffers are {}", queue.buffer, buffer_names()),
                )
            })?;
            for (j, class) in queue.classes.iter().enumerate() {
                let key = format!("{}[{j}]", join(&qpath, "classes"));
                let index = class_index(classes, class).map_err(|m| self.err(&key, m))?;
                if let Some(other) = queue_of_class.insert(class, &queue.name) {
                    return Err(
                        self.err(&key, format!("class {class} is already in queue {other}; a class goes to one queue"))
                    );
                }
                classify.push((classes[index].codepoint, i));
            }
            queues.push(QueueConfig { name: queue.name.clone(), buffer });
        }
        let default_queue = match &q.default_queue {
            Some(name) => queues_raw.iter().position(|queue| queue.name == *name).ok_or_else(|| {
                self.err(
                    &join(path, "default_queue"),
                    format!(
                        "{name} is not a queue of this qdisc; queues are {}",
                        list(queues_raw.iter().map(|q| q.name.as_str()))
                    ),
                )
            })?,
            None => queues.len() - 1,
        };
        let scheduler = self.scheduler(path, q, queues_raw)?;
        let queue_buffer: Vec<usize> = queues.iter().map(|queue| queue.buffer).collect();
        let buffers = buffers
            .into_iter()
            .enumerate()
            .map(|(b, policy)| {
                let bpath = format!("{}[{b}]", join(path, "buffers"));
                let victim = self.victim(path, &bpath, b, &buffers_raw[b], q.scheduler, queues_raw, &queue_buffer)?;
                Ok(BufferConfig {
                    name: buffers_raw[b].name.clone(),
                    policy,
                    victim,
                    ecn: buffers_raw[b].ecn.unwrap_or(false),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(QdiscConfig { queues, buffers, classify, default_queue, scheduler })
    }

    /// Buffer `b` at `path`, one of the qdisc's `buffers` (which a coupled
    /// policy may name).
    fn buffer(&self, path: &str, b: &raw::Buffer, buffers: &[raw::Buffer]) -> Result<BufferPolicy> {
        if b.policy == raw::Policy::LossRatio {
            return self.loss_ratio(path, b, buffers);
        }
        for (key, set) in
            [("reads", b.reads.is_some()), ("lambda", b.lambda.is_some()), ("reading", b.reading.is_some())]
        {
            if set {
                return Err(self.err(&join(path, key), format!("`{key}` applies only to `policy = \"loss_ratio\"`")));
            }
        }
        let what = match b.policy {
            raw::Policy::Droptail => "a droptail buffer",
            raw::Policy::Red => "a red buffer",
            raw::Policy::Wred => "a wred buffer",
            raw::Policy::Dwred => "a dwred buffer",
            raw::Policy::RioC => "a rio_c buffer",
            raw::Policy::RioD => "a rio_d buffer",
            raw::Policy::AdaptiveRed => "an adaptive_red buffer",
            raw::Policy::Codel => "a codel buffer",
            raw::Policy::Pie => "a pie buffer",
            raw::Policy::LossRatio => unreachable!("handled above"),
            raw::Policy::Fred => "a fred buffer",
            raw::Policy::Diro => "a diro buffer",
        };
        self.policy(path, b.policy, &policy_keys!(b), what)
    }

    fn links(
        &self,
        links: &[raw::Link],
        nodes: &Nodes,
        qdiscs: &BTreeMap<&str, QdiscConfig>,
        conditioners: &BTreeMap<String, phb::classify::ConditionerConfig>,
    ) -> Result<Links> {
        let mut out = Links { defs: Vec::with_capacity(links.len()), by_ends: HashMap::with_capacity(links.len()) };
        for (i, link) in links.iter().enumerate() {
            let path = format!("links[{i}]");
            let between = format!("{path}.between");
            let [a, b] = link.between.as_slice() else {
                return Err(self.err(
                    &between,
                    format!(
                        "a link joins exactly two nodes, e.g. between = [\"s1\", \"r1\"]; found {} names",
                        link.between.len()
                    ),
                ));
            };
            let a = nodes.index(a).map_err(|m| self.err(&format!("{between}[0]"), m))?;
            let b = nodes.index(b).map_err(|m| self.err(&format!("{between}[1]"), m))?;
            if a == b {
                return Err(self.err(
                    &format!("{between}[1]"),
                    format!("a link joins two different nodes; both ends are {}", nodes.defs[a].name),
                ));
            }
            if let Some(j) = out.between(a, b) {
                return Err(self.err(
                    &between,
                    // Generated links join nodes of their own generator, so
                    // links[j], the first, is one the file wrote.
                    format!("{} and {} are already joined by links[{j}]", nodes.defs[a].name, nodes.defs[b].name),
                ));
            }
            out.by_ends.insert((a.min(b), a.max(b)), i);
            let rate_bps = self.rate(&format!("{path}.rate"), &link.rate)?;
            let mut delay = self.time(&format!("{path}.delay"), &link.delay)?;
            if let Some(extra) = &link.extra_delay {
                delay += self.time(&format!("{path}.extra_delay"), extra)?;
            }
            let loss = |key: &str, value: Option<f64>| -> Result<f64> {
                match value {
                    None => Ok(0.0),
                    Some(p) if (0.0..1.0).contains(&p) => Ok(p),
                    Some(p) => Err(self.err(
                        &format!("{path}.{key}"),
                        format!("a loss probability must be in [0, 1), got {}", number(p)),
                    )),
                }
            };
            let conditioner = |key: &str, name: &Option<String>| -> Result<Option<phb::classify::ConditionerConfig>> {
                let Some(name) = name else { return Ok(None) };
                conditioners.get(name).cloned().map(Some).ok_or_else(|| {
                    self.err(
                        &format!("{path}.{key}"),
                        format!(
                            "{name} is not a conditioner; conditioners defined under [conditioners] are {}",
                            list(conditioners.keys().map(String::as_str))
                        ),
                    )
                })
            };
            let conditioner_ab = conditioner("conditioner_forward", &link.conditioner_forward)?;
            let conditioner_ba = conditioner("conditioner_reverse", &link.conditioner_reverse)?;
            let loss_ab = loss("loss_forward", link.loss_forward)?;
            let loss_ba = loss("loss_reverse", link.loss_reverse)?;
            let lookup = |key: &str, name: &Option<String>| -> Result<Option<QdiscConfig>> {
                let Some(name) = name else { return Ok(None) };
                match qdiscs.get(name.as_str()) {
                    Some(config) => Ok(Some(config.clone())),
                    None => Err(self.err(
                        &format!("{path}.{key}"),
                        format!(
                            "{name} is not a qdisc; qdiscs defined under [qdiscs] are {}",
                            list(qdiscs.keys().copied())
                        ),
                    )),
                }
            };
            let both = lookup("qdisc", &link.qdisc)?.unwrap_or_else(|| QdiscConfig::fifo(DEFAULT_QDISC_LIMIT));
            let qdisc_ab = lookup("qdisc_forward", &link.qdisc_forward)?.unwrap_or_else(|| both.clone());
            let qdisc_ba = lookup("qdisc_reverse", &link.qdisc_reverse)?.unwrap_or(both);
            let framing = match link.framing {
                None | Some(raw::FramingKind::None) => Framing::None,
                Some(raw::FramingKind::Aal5) => Framing::AAL5,
                Some(raw::FramingKind::Aal5LlcSnap) => Framing::Aal5 { llc_snap: true },
            };
            if !framing.has_cells() {
                // What counts cells needs a link that carries them; the
                // message names the key that put it there.
                let needs = |key: &str, name: Option<&String>| -> Result<()> {
                    match name {
                        Some(name) => Err(self.err(
                            &format!("{path}.{key}"),
                            format!("{name} counts ATM cells (F-RED, DI-RO, F-GCRA or a limit in cells): set framing = \"aal5\" on this link"),
                        )),
                        None => Ok(()),
                    }
                };
                if qdisc_ab.counts_cells() {
                    let key = if link.qdisc_forward.is_some() { "qdisc_forward" } else { "qdisc" };
                    needs(key, link.qdisc_forward.as_ref().or(link.qdisc.as_ref()))?;
                }
                if qdisc_ba.counts_cells() {
                    let key = if link.qdisc_reverse.is_some() { "qdisc_reverse" } else { "qdisc" };
                    needs(key, link.qdisc_reverse.as_ref().or(link.qdisc.as_ref()))?;
                }
                if conditioner_ab.as_ref().is_some_and(ConditionerConfig::counts_cells) {
                    needs("conditioner_forward", link.conditioner_forward.as_ref())?;
                }
                if conditioner_ba.as_ref().is_some_and(ConditionerConfig::counts_cells) {
                    needs("conditioner_reverse", link.conditioner_reverse.as_ref())?;
                }
            }
            out.defs.push(LinkDef {
                a,
                b,
                rate_bps,
                delay,
                framing,
                qdisc_ab,
                qdisc_ba,
                conditioner_ab,
                conditioner_ba,
                loss_ab,
                loss_ba,
            });
        }
        Ok(out)
    }

    fn traffic(
        &self,
        traffic: &[raw::Traffic],
        raw_run: &raw::Run,
        run: &RunConfig,
        classes: &[ClassDef],
        nodes: &Nodes,
        links: &Links,
    ) -> Result<(Vec<TrafficGroup>, Vec<CommandDef>)> {
        let reach = Reach::new(nodes, links);
        let mut out = Vec::with_capacity(traffic.len());
        let mut commands = Vec::new();
        let mut group_index: HashMap<&str, usize> = HashMap::with_capacity(traffic.len());
        for (i, t) in traffic.iter().enumerate() {
            let path = format!("traffic[{i}]");
            let key = |k: &str| format!("{path}.{k}");
            let what = "a traffic group";
            let name = self.required(&path, "name", &t.name, what)?;
            self.label(&key("name"), name)?;
            if let Some(j) = group_index.insert(name, i) {
                return Err(self.err(
                    &key("name"),
                    format!(
                        "{name} is already the name of {}; names must be unique",
                        self.origins.group(self.generators, j)
                    ),
                ));
            }
            if t.kind == raw::TrafficKind::Command {
                commands.push(self.command(i, name, t, run, classes, nodes)?);
                continue;
            }
            self.no_command_keys(&path, t)?;
            let (from, to) = (self.required(&path, "from", &t.from, what)?, self.required(&path, "to", &t.to, what)?);
            let src = self.host(nodes, &key("from"), from)?;
            let dst = self.host(nodes, &key("to"), to)?;
            if src == dst {
                return Err(
                    self.err(&key("to"), format!("traffic goes from one host to another; from and to are both {to}"))
                );
            }
            if !reach.reachable(src, dst) {
                return Err(self.err(
                    &key("to"),
                    format!("{to} cannot be reached from {from} through routers (hosts do not forward)"),
                ));
            }
            let class_name = self.required(&path, "class", &t.class, what)?;
            let class = class_index(classes, class_name).map_err(|m| self.err(&key("class"), m))?;
            if t.schedule.is_some() {
                for (k, set) in [("count", t.count.is_some()), ("start", t.start.is_some()), ("stop", t.stop.is_some())]
                {
                    if set {
                        return Err(self.err(
                            &key(k),
                            format!(
                                "`{k}` and `schedule` exclude each other: the schedule says when flows start and stop"
                            ),
                        ));
                    }
                }
            }
            let count = t.count.unwrap_or(1);
            if count == 0 {
                return Err(self.err(&key("count"), "count must be at least 1"));
            }
            let transport = match t.kind {
                raw::TrafficKind::Tcp => Transport::Tcp(self.tcp_flow(&path, t)?),
                raw::TrafficKind::Voip => {
                    self.no_tcp_keys(&path, t)?;
                    Transport::Udp(self.voip(&path, t)?)
                }
                _ => {
                    self.no_tcp_keys(&path, t)?;
                    let size_key = key("packet_size");
                    let quantity = self.required(&path, "packet_size", &t.packet_size, "a UDP source")?;
                    let size = self.size(&size_key, quantity)?;
                    let packet_size =
                        u32::try_from(size).ok().filter(|s| (1..=65535).contains(s)).ok_or_else(|| {
                            self.err(&size_key, format!("a packet size must be between 1 B and 65535 B, got {size} B"))
                        })?;
                    Transport::Udp(self.source(&path, t, packet_size)?)
                }
            };
            let start_jitter = match &t.start_jitter {
                Some(q) => self.time(&key("start_jitter"), q)?,
                None => Time::ZERO,
            };
            let start = match &t.start {
                Some(q) => self.time(&key("start"), q)?,
                None => Time::ZERO,
            };
            let stop = match &t.stop {
                Some(q) => self.time(&key("stop"), q)?,
                None => run.duration,
            };
            if start >= stop {
                let at = if t.stop.is_some() { "stop" } else { "start" };
                return Err(self.err(&key(at), format!("start ({start}) must be before stop ({stop})")));
            }
            if t.schedule.is_none() && start_jitter > stop - start {
                return Err(self.err(
                    &key("start_jitter"),
                    format!(
                        "the jitter ({start_jitter}) is longer than the time from start to stop ({}): \
                         some flows would start after they stop",
                        stop - start
                    ),
                ));
            }
            let windows = match &t.schedule {
                Some(steps) => Some(self.schedule(&key("schedule"), steps, run.duration, raw_run)?),
                None => None,
            };
            let count = windows.as_ref().map_or(count, |w| w.len() as u32);
            let pinned = match &t.path {
                Some(names) => Some(self.pinned_path(&key("path"), names, nodes, links, src, dst)?),
                None => None,
            };
            let generator = self
                .origins
                .group_source(i)
                .map_or(String::new(), |(g, template)| format!("{}.{template}", self.generators[g].name));
            out.push(TrafficGroup {
                name: name.clone(),
                generator,
                count,
                src,
                dst,
                class,
                path: pinned,
                start,
                start_jitter,
                stop,
                windows,
                transport,
            });
        }
        Ok((out, commands))
    }

    fn host(&self, nodes: &Nodes, key: &str, name: &str) -> Result<usize> {
        let index = nodes.index(name).map_err(|m| self.err(key, m))?;
        match nodes.defs[index].kind {
            NodeKind::Host => Ok(index),
            NodeKind::Router => Err(self.err(
                key,
                format!(
                    "{name} is a router; traffic runs between hosts, which are {}",
                    list(nodes.defs.iter().filter(|n| n.kind == NodeKind::Host).map(|n| n.name.as_str()))
                ),
            )),
        }
    }

    /// A `voip` source (`crate::traffic::voip`): the codec's frames, with or
    /// without Ethernet bytes, in exponential talk spurts (default ON 3 s,
    /// OFF 6 s: the BEDS paper's Section II.B).
    fn voip(&self, path: &str, t: &raw::Traffic) -> Result<SourceModel> {
        use crate::traffic::voip::{Codec, OFF_MEAN, ON_MEAN};
        let what = "a voip source";
        let present: Vec<_> = udp_source_keys(t).into_iter().chain([("shape", t.shape.is_some())]).collect();
        self.only(path, what, &present, &["on_mean", "off_mean", "codec", "link_layer"])?;
        let codec = match t.codec {
            Some(raw::Codec::G7231) | None => Codec::G7231,
            Some(raw::Codec::G711) => Codec::G711,
            Some(raw::Codec::G729) => Codec::G729,
        };
        let ethernet = t.link_layer != Some(raw::LinkLayer::None);
        let mean = |k: &str, value: &Option<Quantity>, default: Time| -> Result<Time> {
            value.as_ref().map_or(Ok(default), |q| self.positive_time(&join(path, k), q))
        };
        Ok(SourceModel::Voip {
            packet_size: codec.packet_size(ethernet),
            interval: codec.frame_interval(),
            on_mean: mean("on_mean", &t.on_mean, ON_MEAN)?,
            off_mean: mean("off_mean", &t.off_mean, OFF_MEAN)?,
        })
    }

    fn source(&self, path: &str, t: &raw::Traffic, packet_size: u32) -> Result<SourceModel> {
        // `packet_size` was taken by the caller, for every kind.
        let present: &Present = &udp_source_keys(t)
            .into_iter()
            .filter(|(key, _)| *key != "packet_size")
            .chain([("shape", t.shape.is_some())])
            .collect::<Vec<_>>();
        let key = |k: &str| join(path, k);
        let on_off = |what: &str| -> Result<(Time, Time)> {
            let on = self.required(path, "on_mean", &t.on_mean, what)?;
            let off = self.required(path, "off_mean", &t.off_mean, what)?;
            Ok((self.positive_time(&key("on_mean"), on)?, self.positive_time(&key("off_mean"), off)?))
        };
        Ok(match t.kind {
            raw::TrafficKind::Cbr => {
                let what = "a cbr source";
                self.only(path, what, present, &["rate", "interval"])?;
                let interval = match self.rate_or_interval(path, t, what)? {
                    RateOrInterval::Rate(rate) => Time::transmission(packet_size, rate),
                    RateOrInterval::Interval(interval) => interval,
                };
                SourceModel::Cbr { packet_size, interval }
            }
            raw::TrafficKind::ParetoOnoff => {
                let what = "a pareto_onoff source";
                self.only(path, what, present, &["rate", "on_mean", "off_mean", "shape"])?;
                let rate_bps = self.rate(&key("rate"), self.required(path, "rate", &t.rate, what)?)?;
                let (on_mean, off_mean) = on_off(what)?;
                let shape = t.shape.unwrap_or(1.5);
                if !(shape > 1.0 && shape.is_finite()) {
                    return Err(self.err(
                        &key("shape"),
                        format!(
                            "shape must be greater than 1 (the Pareto mean is infinite otherwise), got {}",
                            number(shape)
                        ),
                    ));
                }
                SourceModel::ParetoOnOff { packet_size, rate_bps, on_mean, off_mean, shape }
            }
            raw::TrafficKind::Poisson => {
                let what = "a poisson source";
                self.only(path, what, present, &["rate"])?;
                let rate_bps = self.rate(&key("rate"), self.required(path, "rate", &t.rate, what)?)?;
                SourceModel::Poisson { packet_size, rate_bps }
            }
            raw::TrafficKind::Tcp => unreachable!("TCP groups are validated by tcp_flow"),
            raw::TrafficKind::Voip => unreachable!("VoIP groups are validated by voip"),
            raw::TrafficKind::Command => unreachable!("commands are validated by command"),
            raw::TrafficKind::Burst => {
                let what = "a burst source";
                self.only(path, what, present, &["rate", "burst", "off"])?;
                let rate_bps = t.rate.as_ref().map(|r| self.rate(&key("rate"), r)).transpose()?;
                let burst = *self.required(path, "burst", &t.burst, what)?;
                if burst == 0 {
                    return Err(self.err(&key("burst"), "a burst has at least 1 packet"));
                }
                let off = self.time(&key("off"), self.required(path, "off", &t.off, what)?)?;
                SourceModel::Burst { packet_size, rate_bps, burst, off }
            }
            raw::TrafficKind::ExpOnoff => {
                let what = "an exp_onoff source";
                self.only(path, what, present, &["rate", "interval", "on_mean", "off_mean"])?;
                let rate_bps = match self.rate_or_interval(path, t, what)? {
                    RateOrInterval::Rate(rate) => rate,
                    RateOrInterval::Interval(interval) => {
                        let bits = u128::from(packet_size) * 8 * 1_000_000_000;
                        let ns = u128::from(interval.as_nanos());
                        let rate = u64::try_from((bits + ns / 2) / ns).unwrap_or(u64::MAX);
                        if rate == 0 {
                            return Err(self.err(
                                &key("interval"),
                                format!(
                                    "{:?} is so long that the rate is below 1 bit/s",
                                    t.interval.as_ref().map_or("", |q| &q.0)
                                ),
                            ));
                        }
                        rate
                    }
                };
                let (on_mean, off_mean) = on_off(what)?;
                SourceModel::ExpOnOff { packet_size, rate_bps, on_mean, off_mean }
            }
        })
    }

    /// Exactly one of `rate` and `interval`.
    fn rate_or_interval(&self, path: &str, t: &raw::Traffic, what: &str) -> Result<RateOrInterval> {
        match (&t.rate, &t.interval) {
            (Some(rate), None) => Ok(RateOrInterval::Rate(self.rate(&join(path, "rate"), rate)?)),
            (None, Some(interval)) => {
                Ok(RateOrInterval::Interval(self.positive_time(&join(path, "interval"), interval)?))
            }
            (Some(_), Some(_)) => {
                Err(self.err(&join(path, "interval"), format!("{what} takes either rate or interval, not both")))
            }
            (None, None) => {
                Err(self.err(path, format!("{what} needs `rate` (e.g. \"64kbps\") or `interval` (e.g. \"30ms\")")))
            }
        }
    }

    fn pinned_path(
        &self,
        key: &str,
        names: &[String],
        nodes: &Nodes,
        links: &Links,
        src: usize,
        dst: usize,
    ) -> Result<Vec<usize>> {
        let mut hops: Vec<usize> = Vec::with_capacity(names.len());
        let mut visited = HashSet::with_capacity(names.len());
        for (k, name) in names.iter().enumerate() {
            let at = format!("{key}[{k}]");
            let node = nodes.index(name).map_err(|m| self.err(&at, m))?;
            if k == 0 && node != src {
                return Err(
                    self.err(&at, format!("the path must start at the source {}, not {name}", nodes.defs[src].name))
                );
            }
            if !visited.insert(node) {
                return Err(self.err(&at, format!("{name} appears twice; a path visits each node once")));
            }
            if k > 0 && k + 1 < names.len() && nodes.defs[node].kind == NodeKind::Host {
                return Err(self.err(
                    &at,
                    format!("{name} is a host; hosts do not forward, so the nodes between a path's ends are routers"),
                ));
            }
            if let Some(&prev) = hops.last() {
                if links.between(prev, node).is_none() {
                    return Err(self.err(&at, format!("{} and {name} are not joined by a link", nodes.defs[prev].name)));
                }
            }
            hops.push(node);
        }
        match hops.last() {
            Some(&last) if last == dst => Ok(hops),
            Some(&last) => Err(self.err(
                &format!("{key}[{}]", hops.len() - 1),
                format!("the path must end at the destination {}, not {}", nodes.defs[dst].name, nodes.defs[last].name),
            )),
            None => Err(self.err(key, "a pinned path needs at least the source and the destination")),
        }
    }
}

enum RateOrInterval {
    Rate(u64),
    Interval(Time),
}

fn class_index(classes: &[ClassDef], name: &str) -> std::result::Result<usize, String> {
    classes
        .iter()
        .position(|c| c.name == name)
        .ok_or_else(|| format!("{name} is not a class; classes are {}", list(classes.iter().map(|c| c.name.as_str()))))
}

/// Which hosts reach which. Only routers forward, so a host reaches another
/// over a link between them, or through a router next to it that is
/// connected, over routers alone, to a router next to the other. The
/// routers' connected components are labelled once (a breadth-first search
/// over router-to-router links), so each question costs the two hosts'
/// numbers of links.
struct Reach<'a> {
    links: &'a Links,
    /// Per node, the routers it is linked to.
    routers_next_to: Vec<Vec<usize>>,
    /// Per router, its component; `usize::MAX` for hosts.
    component: Vec<usize>,
}

impl<'a> Reach<'a> {
    fn new(nodes: &Nodes, links: &'a Links) -> Reach<'a> {
        let is_router = |n: usize| nodes.defs[n].kind == NodeKind::Router;
        let mut routers_next_to = vec![Vec::new(); nodes.defs.len()];
        for link in &links.defs {
            if is_router(link.b) {
                routers_next_to[link.a].push(link.b);
            }
            if is_router(link.a) {
                routers_next_to[link.b].push(link.a);
            }
        }
        let mut component = vec![usize::MAX; nodes.defs.len()];
        for start in (0..nodes.defs.len()).filter(|&n| is_router(n)) {
            if component[start] != usize::MAX {
                continue;
            }
            component[start] = start;
            let mut frontier = VecDeque::from([start]);
            while let Some(router) = frontier.pop_front() {
                for &next in &routers_next_to[router] {
                    if component[next] == usize::MAX {
                        component[next] = start;
                        frontier.push_back(next);
                    }
                }
            }
        }
        Reach { links, routers_next_to, component }
    }

    fn reachable(&self, src: usize, dst: usize) -> bool {
        if self.links.between(src, dst).is_some() {
            return true;
        }
        let near_src: HashSet<usize> = self.routers_next_to[src].iter().map(|&r| self.component[r]).collect();
        self.routers_next_to[dst].iter().any(|&r| near_src.contains(&self.component[r]))
    }
}
