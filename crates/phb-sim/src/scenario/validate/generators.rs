//! Generators: `[[generators]]` expanded into ordinary nodes, links and
//! traffic before the file is validated, and the way back from a generated
//! entry to the generator's key, so that messages point at what the user
//! wrote.
//!
//! Kinds (documented in `docs/scenario-format.md`):
//! - `dumbbell`: `count` pairs; sender `i` on the left router, receiver `i`
//!   on the right one, one bottleneck between them.
//! - `parking_lot`: `count` hops along routers `0..=count`; pair `j <
//!   count` crosses hop `j` only, pair `count` (the long pair) crosses them
//!   all.
//! - `star`: `count` leaves around one hub router, with traffic from every
//!   leaf to a host or from a host to every leaf.
//!
//! Generated entries follow the file's own: hosts after `nodes.hosts`,
//! routers after `nodes.routers`, links after `[[links]]`, groups after
//! `[[traffic]]`, generator by generator. A link template's `rate` and
//! `delay` take one value per item (pair, hop or leaf): the same for all, a
//! list taken in turn, or drawn uniformly from the stream
//! `generators/<name>/<template>.<key>` of the generator's `seed` (default
//! `run.seed`), so the same file gives the same network, and item `i`'s
//! value does not change with `count`.

use std::collections::HashMap;

use phb::Rng;

use super::{name_problem, Context, Present, Result};
use crate::scenario::location::{display, join, parse_path, Segment};
use crate::scenario::raw::{self, GeneratorKind, LinkTemplate, PerItem, Quantity};
use crate::scenario::units;

/// The templates links are made from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LinkPart {
    Bottleneck,
    HopLinks,
    SenderLinks,
    ReceiverLinks,
    LeafLinks,
}

impl LinkPart {
    fn key(self) -> &'static str {
        match self {
            LinkPart::Bottleneck => "bottleneck",
            LinkPart::HopLinks => "hop_links",
            LinkPart::SenderLinks => "sender_links",
            LinkPart::ReceiverLinks => "receiver_links",
            LinkPart::LeafLinks => "leaf_links",
        }
    }

    /// How many links of this template generator `g` makes.
    fn items(self, g: &raw::Generator) -> u64 {
        let n = u64::from(g.count);
        match (self, g.kind) {
            (LinkPart::Bottleneck, _) => 1,
            (LinkPart::SenderLinks | LinkPart::ReceiverLinks, GeneratorKind::ParkingLot) => n + 1,
            _ => n,
        }
    }

    fn template(self, g: &raw::Generator) -> Option<&LinkTemplate> {
        match self {
            LinkPart::Bottleneck => g.bottleneck.as_ref(),
            LinkPart::HopLinks => g.hop_links.as_ref(),
            LinkPart::SenderLinks => g.sender_links.as_ref(),
            LinkPart::ReceiverLinks => g.receiver_links.as_ref(),
            LinkPart::LeafLinks => g.leaf_links.as_ref(),
        }
    }
}

/// The templates traffic groups are made from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TrafficPart {
    Traffic,
    CrossTraffic,
    LongTraffic,
}

impl TrafficPart {
    fn key(self) -> &'static str {
        match self {
            TrafficPart::Traffic => "traffic",
            TrafficPart::CrossTraffic => "cross_traffic",
            TrafficPart::LongTraffic => "long_traffic",
        }
    }

    fn template(self, g: &raw::Generator) -> Option<&raw::Traffic> {
        match self {
            TrafficPart::Traffic => g.traffic.as_ref(),
            TrafficPart::CrossTraffic => g.cross_traffic.as_ref(),
            TrafficPart::LongTraffic => g.long_traffic.as_ref(),
        }
    }
}

/// A generated node: its generator and the key that named it.
struct NodeOrigin {
    generator: usize,
    key: &'static str,
}

/// A generated link: its generator, template and item.
struct LinkOrigin {
    generator: usize,
    part: LinkPart,
    item: u32,
}

/// A generated traffic group: its generator, template and item, and the
/// keys that named its ends (relative to the generator).
struct TrafficOrigin {
    generator: usize,
    part: TrafficPart,
    item: u32,
    from: &'static str,
    to: &'static str,
}

/// Where the entries of the expanded file came from. Entries the file
/// wrote come first; generated ones follow, in these lists' order.
#[derive(Default)]
pub(super) struct Origins {
    file_hosts: usize,
    file_routers: usize,
    file_links: usize,
    file_traffic: usize,
    hosts: Vec<NodeOrigin>,
    routers: Vec<NodeOrigin>,
    links: Vec<LinkOrigin>,
    traffic: Vec<TrafficOrigin>,
}

impl Origins {
    /// The generator's key behind the expanded file's `key`, if a generator
    /// made that entry: `links[7].delay` becomes
    /// `generators[0].sender_links.delay[1]` (a listed delay), `traffic[4].mss`
    /// `generators[0].traffic.mss`, `nodes.hosts[9]` `generators[0].senders`.
    pub(super) fn source_key(&self, generators: &[raw::Generator], key: &str) -> Option<String> {
        let segments = parse_path(key).ok()?;
        let generated = |list: &str, file: usize| match segments.as_slice() {
            [Segment::Key(k), Segment::Index(i), rest @ ..] if k == list => Some((i.checked_sub(file)?, rest)),
            _ => None,
        };
        if let Some((j, rest)) = generated("links", self.file_links) {
            let origin = self.links.get(j)?;
            let template = origin.part.template(&generators[origin.generator])?;
            let part = origin.part.key();
            let relative = match rest.first() {
                Some(Segment::Key(k)) if k == "rate" || k == "delay" => {
                    let value = if k == "rate" { &template.rate } else { &template.delay };
                    match value {
                        PerItem::List(list) => format!("{part}.{k}[{}]", origin.item as usize % list.len()),
                        _ => format!("{part}.{k}"),
                    }
                }
                Some(Segment::Key(k)) if k != "between" => format!("{part}.{}", display(rest)),
                // `between`: the names come from the generator's keys, the
                // link from the template.
                _ => part.to_owned(),
            };
            return Some(format!("generators[{}].{relative}", origin.generator));
        }
        if let Some((j, rest)) = generated("traffic", self.file_traffic) {
            let origin = self.traffic.get(j)?;
            let part = origin.part.key();
            let relative = match rest.first() {
                Some(Segment::Key(k)) if k == "from" => origin.from.to_owned(),
                Some(Segment::Key(k)) if k == "to" => origin.to.to_owned(),
                Some(_) => format!("{part}.{}", display(rest)),
                None => part.to_owned(),
            };
            return Some(format!("generators[{}].{relative}", origin.generator));
        }
        let origin = match segments.as_slice() {
            [Segment::Key(n), Segment::Key(list), Segment::Index(i)] if n == "nodes" && list == "hosts" => {
                self.hosts.get(i.checked_sub(self.file_hosts)?)?
            }
            [Segment::Key(n), Segment::Key(list), Segment::Index(i)] if n == "nodes" && list == "routers" => {
                self.routers.get(i.checked_sub(self.file_routers)?)?
            }
            _ => return None,
        };
        Some(format!("generators[{}].{}", origin.generator, origin.key))
    }

    /// Traffic group `j` as messages name it: `traffic[3]`, or the template
    /// and item that made it.
    pub(super) fn group(&self, generators: &[raw::Generator], j: usize) -> String {
        match j.checked_sub(self.file_traffic).and_then(|k| self.traffic.get(k)) {
            Some(o) if o.part == TrafficPart::LongTraffic => format!("generators[{}].long_traffic", o.generator),
            Some(o) => format!(
                "generators[{}].{} ({} {})",
                o.generator,
                o.part.key(),
                item_noun(generators[o.generator].kind),
                o.item
            ),
            None => format!("traffic[{j}]"),
        }
    }

    /// The generator that made traffic group `j`, if one did, and the key
    /// of its template.
    pub(super) fn group_source(&self, j: usize) -> Option<(usize, &'static str)> {
        let o = self.traffic.get(j.checked_sub(self.file_traffic)?)?;
        Some((o.generator, o.part.key()))
    }

    /// Links the file wrote, and per generator the links it made.
    pub(super) fn links_by_source(&self, generators: usize) -> (usize, Vec<usize>) {
        let mut made = vec![0; generators];
        for o in &self.links {
            made[o.generator] += 1;
        }
        (self.file_links, made)
    }
}

/// The links generator `g` makes (before anything is expanded, to refuse
/// a `count` that would exhaust memory).
pub(super) fn links_made(g: &raw::Generator) -> u64 {
    let n = u64::from(g.count);
    match g.kind {
        GeneratorKind::Dumbbell => 2 * n + 1,
        GeneratorKind::ParkingLot => n + 2 * (n + 1),
        GeneratorKind::Star => n,
    }
}

/// Names with the item's number in place of `{i}`, or (`after` being
/// `None`) one plain name.
struct Pattern {
    before: String,
    after: Option<String>,
}

impl Pattern {
    fn name(&self, i: u32) -> String {
        match &self.after {
            Some(after) => format!("{}{i}{after}", self.before),
            None => self.before.clone(),
        }
    }
}

/// Values per item of a template's `rate` or `delay`, asked for in item
/// order.
enum Values<'a> {
    One(&'a Quantity),
    List(&'a [Quantity]),
    Drawn { rng: Rng, low: u64, high: u64, unit: &'static str },
}

impl Values<'_> {
    fn at(&mut self, item: u32) -> Quantity {
        match self {
            Values::One(q) => (*q).clone(),
            Values::List(list) => list[item as usize % list.len()].clone(),
            Values::Drawn { rng, low, high, unit } => Quantity(format!("{}{unit}", uniform_between(rng, *low, *high))),
        }
    }
}

/// Uniform on `low..=high`, exactly: a draw below `2^64 mod n` is rejected,
/// so that the remainder is unbiased.
fn uniform_between(rng: &mut Rng, low: u64, high: u64) -> u64 {
    let Some(n) = (high - low).checked_add(1) else { return rng.next_u64() };
    let threshold = n.wrapping_neg() % n;
    loop {
        let x = rng.next_u64();
        if x >= threshold {
            return low + x % n;
        }
    }
}

impl Context<'_> {
    /// Expands `generators` into `file`'s nodes, links and traffic, after
    /// the file's own, checking the generators' keys; returns where each
    /// generated entry came from.
    pub(super) fn expand(&self, generators: &[raw::Generator], file: &mut raw::File) -> Result<Origins> {
        let mut origins = Origins {
            file_hosts: file.nodes.hosts.len(),
            file_routers: file.nodes.routers.len(),
            file_links: file.links.len(),
            file_traffic: file.traffic.len(),
            ..Origins::default()
        };
        self.generated_links(&file.run, file.links.len(), generators)?;
        let mut names: HashMap<&str, usize> = HashMap::with_capacity(generators.len());
        for (g, gen) in generators.iter().enumerate() {
            let path = format!("generators[{g}]");
            let what = format!("a {} generator", kind_name(gen.kind));
            if let Some(problem) = name_problem(&gen.name) {
                return Err(self.err(&join(&path, "name"), format!("{:?}: {problem}", gen.name)));
            }
            if let Some(other) = names.insert(&gen.name, g) {
                return Err(self.err(
                    &join(&path, "name"),
                    format!("{} is already the name of generators[{other}]; names must be unique", gen.name),
                ));
            }
            if gen.count == 0 {
                return Err(self.err(&join(&path, "count"), "count must be at least 1"));
            }
            let present: &Present = &[
                ("senders", gen.senders.is_some()),
                ("receivers", gen.receivers.is_some()),
                ("left", gen.left.is_some()),
                ("right", gen.right.is_some()),
                ("routers", gen.routers.is_some()),
                ("hub", gen.hub.is_some()),
                ("leaves", gen.leaves.is_some()),
                ("bottleneck", gen.bottleneck.is_some()),
                ("hop_links", gen.hop_links.is_some()),
                ("sender_links", gen.sender_links.is_some()),
                ("receiver_links", gen.receiver_links.is_some()),
                ("leaf_links", gen.leaf_links.is_some()),
                ("traffic", gen.traffic.is_some()),
                ("cross_traffic", gen.cross_traffic.is_some()),
                ("long_traffic", gen.long_traffic.is_some()),
            ];
            let allowed: &[&str] = match gen.kind {
                GeneratorKind::Dumbbell => &[
                    "senders",
                    "receivers",
                    "left",
                    "right",
                    "bottleneck",
                    "sender_links",
                    "receiver_links",
                    "traffic",
                ],
                GeneratorKind::ParkingLot => &[
                    "routers",
                    "senders",
                    "receivers",
                    "hop_links",
                    "sender_links",
                    "receiver_links",
                    "cross_traffic",
                    "long_traffic",
                ],
                GeneratorKind::Star => &["hub", "leaves", "leaf_links", "traffic"],
            };
            self.only(&path, &what, present, allowed)?;
            let seed = gen.seed.or(file.run.seed).unwrap_or(1);
            let mut builder = Builder { cx: self, g, gen, path, seed, file, origins: &mut origins };
            match gen.kind {
                GeneratorKind::Dumbbell => builder.dumbbell()?,
                GeneratorKind::ParkingLot => builder.parking_lot()?,
                GeneratorKind::Star => builder.star()?,
            }
        }
        Ok(origins)
    }
}

/// Writes one generator's entries into the file.
struct Builder<'c, 'f> {
    cx: &'c Context<'c>,
    g: usize,
    gen: &'c raw::Generator,
    path: String,
    seed: u64,
    file: &'f mut raw::File,
    origins: &'f mut Origins,
}

impl<'c> Builder<'c, '_> {
    /// The path of the generator's `key` (bare or dotted, `traffic.name`).
    fn key(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    /// The names `pattern` gives (default `<name>.<default>`), `{i}` being
    /// the item's number.
    fn pattern(&self, key: &str, pattern: &Option<String>, default: &str, item: &str) -> Result<Pattern> {
        let text = pattern.clone().unwrap_or_else(|| format!("{}.{default}", self.gen.name));
        let Some((before, after)) = text.split_once("{i}") else {
            return Err(self.cx.err(
                &self.key(key),
                format!("{text:?} is a pattern and needs `{{i}}`, which becomes the {item}'s number (0, 1, …)"),
            ));
        };
        if before.contains(['{', '}']) || after.contains(['{', '}']) {
            return Err(self
                .cx
                .err(&self.key(key), format!("{text:?}: a pattern has one `{{i}}` and no other braces")));
        }
        Ok(Pattern { before: before.to_owned(), after: Some(after.to_owned()) })
    }

    /// `name`, by default `<name>.<default>`.
    fn plain(&self, name: &Option<String>, default: &str) -> String {
        name.clone().unwrap_or_else(|| format!("{}.{default}", self.gen.name))
    }

    fn host(&mut self, name: String, key: &'static str) {
        self.file.nodes.hosts.push(name);
        self.origins.hosts.push(NodeOrigin { generator: self.g, key });
    }

    fn router(&mut self, name: String, key: &'static str) {
        self.file.nodes.routers.push(name);
        self.origins.routers.push(NodeOrigin { generator: self.g, key });
    }

    /// The links of template `part`, whose values are drawn in item order.
    fn maker(&self, part: LinkPart) -> Result<Maker<'c>> {
        let template = part.template(self.gen).ok_or_else(|| {
            let what = kind_name(self.gen.kind);
            self.cx.err(&self.key(part.key()), format!("a {what} generator needs `{}`", part.key()))
        })?;
        let rates = self.values(part, "rate", &template.rate)?;
        let delays = self.values(part, "delay", &template.delay)?;
        Ok(Maker { part, template, rates, delays })
    }

    /// The values of `key` (`rate` or `delay`) of template `part`.
    fn values(&self, part: LinkPart, key: &str, value: &'c PerItem) -> Result<Values<'c>> {
        let at = format!("{}.{key}", self.key(part.key()));
        let parse = |q: &Quantity, at: &str| -> Result<u64> {
            if key == "rate" {
                units::parse_rate(&q.0).map_err(|m| self.cx.err(at, m))
            } else {
                units::parse_time(&q.0).map(|t| t.as_nanos()).map_err(|m| self.cx.err(at, m))
            }
        };
        Ok(match value {
            PerItem::One(q) => Values::One(q),
            PerItem::List(list) if list.is_empty() => {
                return Err(self.cx.err(&at, "a list of values needs at least one; the items take them in turn"))
            }
            PerItem::List(list) if list.len() as u64 > part.items(self.gen) => {
                let items = part.items(self.gen);
                return Err(self.cx.err(
                    &at,
                    format!(
                        "{} values for {items} link{}: the items take them in turn, so the last {} would never be used",
                        list.len(),
                        if items == 1 { "" } else { "s" },
                        list.len() as u64 - items
                    ),
                ));
            }
            PerItem::List(list) => Values::List(list),
            PerItem::Drawn(draw) => {
                let [low, high] = draw.uniform.as_slice() else {
                    return Err(self.cx.err(
                        &format!("{at}.uniform"),
                        format!("uniform takes [min, max], two values; found {}", draw.uniform.len()),
                    ));
                };
                let low_value = parse(low, &format!("{at}.uniform[0]"))?;
                let high_value = parse(high, &format!("{at}.uniform[1]"))?;
                if low_value > high_value {
                    return Err(self.cx.err(
                        &format!("{at}.uniform[1]"),
                        format!("the maximum ({}) is below the minimum ({})", high.0.trim(), low.0.trim()),
                    ));
                }
                let stream = format!("generators/{}/{}.{key}", self.gen.name, part.key());
                let unit = if key == "rate" { "bps" } else { "ns" };
                Values::Drawn { rng: Rng::derive(self.seed, &stream), low: low_value, high: high_value, unit }
            }
        })
    }

    /// Item `item` of `maker`'s template: a link from `a` to `b` (its
    /// forward direction).
    fn link(&mut self, maker: &mut Maker, item: u32, a: String, b: String) {
        let t = maker.template;
        self.file.links.push(raw::Link {
            between: vec![a, b],
            rate: maker.rates.at(item),
            delay: maker.delays.at(item),
            qdisc: t.qdisc.clone(),
            qdisc_forward: t.qdisc_forward.clone(),
            qdisc_reverse: t.qdisc_reverse.clone(),
            conditioner_forward: t.conditioner_forward.clone(),
            conditioner_reverse: t.conditioner_reverse.clone(),
            loss_forward: t.loss_forward,
            loss_reverse: t.loss_reverse,
            extra_delay: t.extra_delay.clone(),
            framing: t.framing,
        });
        self.origins.links.push(LinkOrigin { generator: self.g, part: maker.part, item });
    }

    /// The template `part`, if given, checked (the generator sets `from`
    /// and `to`, a star one of them; routing sets the path), with the
    /// names of its groups.
    fn traffic(&self, part: TrafficPart) -> Result<Option<(&'c raw::Traffic, Pattern)>> {
        let Some(t) = part.template(self.gen) else { return Ok(None) };
        let at = |key: &str| join(&self.key(part.key()), key);
        if t.path.is_some() {
            return Err(self.cx.err(
                &at("path"),
                "generated groups take the shortest path; pin a path in a [[traffic]] entry of its own",
            ));
        }
        if self.gen.kind == GeneratorKind::Star {
            if t.from.is_some() == t.to.is_some() {
                let key = if t.to.is_some() { at("to") } else { self.key(part.key()) };
                return Err(self.cx.err(
                    &key,
                    "a star's traffic needs `to` (every leaf sends to this host) or `from` (this host sends to every \
                     leaf), one of them",
                ));
            }
        } else if let Some(key) = [("from", &t.from), ("to", &t.to)].iter().find_map(|(k, v)| v.as_ref().map(|_| *k)) {
            return Err(self.cx.err(
                &at(key),
                format!(
                    "the {} sets `from` and `to`: each pair's group goes from its sender to its receiver",
                    kind_name(self.gen.kind)
                ),
            ));
        }
        let names = match part {
            TrafficPart::LongTraffic => Pattern { before: self.plain(&t.name, "long"), after: None },
            _ => self.pattern(&join(part.key(), "name"), &t.name, "{i}", item_noun(self.gen.kind))?,
        };
        Ok(Some((t, names)))
    }

    /// One group from `template`, from `from` to `to`.
    fn group(&mut self, template: &raw::Traffic, origin: TrafficOrigin, name: String, from: String, to: String) {
        let mut t = template.clone();
        t.name = Some(name);
        t.from = Some(from);
        t.to = Some(to);
        self.file.traffic.push(t);
        self.origins.traffic.push(origin);
    }

    fn origin(&self, part: TrafficPart, item: u32, from: &'static str, to: &'static str) -> TrafficOrigin {
        TrafficOrigin { generator: self.g, part, item, from, to }
    }

    /// `count` pairs: sender `i` — left router — bottleneck — right router
    /// — receiver `i`.
    fn dumbbell(&mut self) -> Result<()> {
        let gen = self.gen;
        let n = gen.count;
        let senders = self.pattern("senders", &gen.senders, "s{i}", "pair")?;
        let receivers = self.pattern("receivers", &gen.receivers, "d{i}", "pair")?;
        let (left, right) = (self.plain(&gen.left, "left"), self.plain(&gen.right, "right"));
        let mut bottleneck = self.maker(LinkPart::Bottleneck)?;
        let mut sender_links = self.maker(LinkPart::SenderLinks)?;
        let mut receiver_links = self.maker(LinkPart::ReceiverLinks)?;
        let traffic = self.traffic(TrafficPart::Traffic)?;
        for i in 0..n {
            self.host(senders.name(i), "senders");
        }
        for i in 0..n {
            self.host(receivers.name(i), "receivers");
        }
        self.router(left.clone(), "left");
        self.router(right.clone(), "right");
        self.link(&mut bottleneck, 0, left.clone(), right.clone());
        for i in 0..n {
            self.link(&mut sender_links, i, senders.name(i), left.clone());
            self.link(&mut receiver_links, i, right.clone(), receivers.name(i));
        }
        if let Some((t, names)) = traffic {
            for i in 0..n {
                let origin = self.origin(TrafficPart::Traffic, i, "senders", "receivers");
                self.group(t, origin, names.name(i), senders.name(i), receivers.name(i));
            }
        }
        Ok(())
    }

    /// `count` hops along routers `0..=count`; pair `j < count` crosses hop
    /// `j` (sender on router `j`, receiver on router `j + 1`), pair `count`
    /// crosses every hop.
    fn parking_lot(&mut self) -> Result<()> {
        let gen = self.gen;
        let k = gen.count;
        let routers = self.pattern("routers", &gen.routers, "r{i}", "router")?;
        let senders = self.pattern("senders", &gen.senders, "s{i}", "pair")?;
        let receivers = self.pattern("receivers", &gen.receivers, "d{i}", "pair")?;
        let mut hop_links = self.maker(LinkPart::HopLinks)?;
        let mut sender_links = self.maker(LinkPart::SenderLinks)?;
        let mut receiver_links = self.maker(LinkPart::ReceiverLinks)?;
        let cross = self.traffic(TrafficPart::CrossTraffic)?;
        let long = self.traffic(TrafficPart::LongTraffic)?;
        for i in 0..=k {
            self.host(senders.name(i), "senders");
        }
        for i in 0..=k {
            self.host(receivers.name(i), "receivers");
        }
        for j in 0..=k {
            self.router(routers.name(j), "routers");
        }
        for j in 0..k {
            self.link(&mut hop_links, j, routers.name(j), routers.name(j + 1));
        }
        // Pair i < k enters at router i and leaves at router i + 1; the long
        // pair k enters at router 0 and leaves at router k.
        let ends = |i: u32| if i < k { (i, i + 1) } else { (0, k) };
        for i in 0..=k {
            let (entry, exit) = ends(i);
            self.link(&mut sender_links, i, senders.name(i), routers.name(entry));
            self.link(&mut receiver_links, i, routers.name(exit), receivers.name(i));
        }
        if let Some((t, names)) = cross {
            for i in 0..k {
                let origin = self.origin(TrafficPart::CrossTraffic, i, "senders", "receivers");
                self.group(t, origin, names.name(i), senders.name(i), receivers.name(i));
            }
        }
        if let Some((t, name)) = long {
            let origin = self.origin(TrafficPart::LongTraffic, k, "senders", "receivers");
            self.group(t, origin, name.name(k), senders.name(k), receivers.name(k));
        }
        Ok(())
    }

    /// `count` leaves around a hub router, with traffic from every leaf to
    /// the template's `to`, or from its `from` to every leaf.
    fn star(&mut self) -> Result<()> {
        let gen = self.gen;
        let n = gen.count;
        let hub = self.plain(&gen.hub, "hub");
        let leaves = self.pattern("leaves", &gen.leaves, "h{i}", "leaf")?;
        let mut leaf_links = self.maker(LinkPart::LeafLinks)?;
        let traffic = self.traffic(TrafficPart::Traffic)?;
        for i in 0..n {
            self.host(leaves.name(i), "leaves");
        }
        self.router(hub.clone(), "hub");
        for i in 0..n {
            self.link(&mut leaf_links, i, leaves.name(i), hub.clone());
        }
        let Some((t, names)) = traffic else { return Ok(()) };
        for i in 0..n {
            let (from, to, from_key, to_key) = match (&t.from, &t.to) {
                (Some(from), None) => (from.clone(), leaves.name(i), "traffic.from", "leaves"),
                (None, Some(to)) => (leaves.name(i), to.clone(), "leaves", "traffic.to"),
                _ => unreachable!("Builder::traffic lets a star's traffic through with one of from and to"),
            };
            let origin = self.origin(TrafficPart::Traffic, i, from_key, to_key);
            self.group(t, origin, names.name(i), from, to);
        }
        Ok(())
    }
}

/// A template's links and the values of their rates and delays.
struct Maker<'v> {
    part: LinkPart,
    template: &'v LinkTemplate,
    rates: Values<'v>,
    delays: Values<'v>,
}

/// What a generator's items are.
fn item_noun(kind: GeneratorKind) -> &'static str {
    match kind {
        GeneratorKind::Star => "leaf",
        _ => "pair",
    }
}

fn kind_name(kind: GeneratorKind) -> &'static str {
    match kind {
        GeneratorKind::Dumbbell => "dumbbell",
        GeneratorKind::ParkingLot => "parking lot",
        GeneratorKind::Star => "star",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_draws_cover_both_bounds_without_bias() {
        let mut rng = Rng::derive(1, "test");
        let mut seen = [0u32; 5];
        for _ in 0..50_000 {
            seen[(uniform_between(&mut rng, 10, 14) - 10) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (9_500..10_500).contains(&n)), "{seen:?}");
        assert_eq!(uniform_between(&mut rng, 7, 7), 7);
        // The whole range of u64 has no bound to reject against.
        let mut again = rng.clone();
        assert_eq!(uniform_between(&mut rng, 0, u64::MAX), again.next_u64());
        // A range just over half of u64 rejects about half the draws, and
        // every value it returns is in range.
        let high = u64::MAX / 2 + 1;
        assert!((0..1000).all(|_| uniform_between(&mut rng, 0, high) <= high));
    }
}
