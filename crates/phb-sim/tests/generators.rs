//! Generators (`[[generators]]`, issue 12 section 4): what each kind
//! expands into, names and order included; values per item (listed, drawn);
//! messages at the generator's keys with their positions; overrides; the
//! wide-100 benchmark written with a dumbbell is the network its long file
//! listed.

use std::fmt::Write;

use phb::Time;
use phb_sim::scenario::{load, NodeKind, Scenario, ScenarioError};
use proptest::prelude::*;

const HEAD: &str = "[run]\nduration = \"10s\"\n\n[classes]\nbe = 0\n\n[qdiscs.red]\nkind = \"red\"\nlimit = \"100pkt\"\nmin_th = 10\nmax_th = 30\n";

/// A dumbbell of `count` pairs with TCP traffic; `extra` is added to the
/// generator's table.
fn dumbbell(count: u32, extra: &str) -> String {
    format!(
        "{HEAD}
[[generators]]
kind = \"dumbbell\"
name = \"db\"
count = {count}
bottleneck = {{ rate = \"10Mbps\", delay = \"10ms\", qdisc = \"red\" }}
sender_links = {{ rate = \"100Mbps\", delay = [\"1ms\", \"2ms\", \"5ms\"] }}
receiver_links = {{ rate = \"100Mbps\", delay = {{ uniform = [\"1ms\", \"50ms\"] }} }}
{extra}
[generators.traffic]
kind = \"tcp\"
class = \"be\"
"
    )
}

fn loaded(text: &str) -> Scenario {
    load(text, "g.toml", &[]).unwrap_or_else(|e| panic!("{e}"))
}

fn names(s: &Scenario, indices: impl IntoIterator<Item = usize>) -> Vec<&str> {
    indices.into_iter().map(|i| s.nodes[i].name.as_str()).collect()
}

/// Each link as `a-b`.
fn ends(s: &Scenario) -> Vec<String> {
    s.links.iter().map(|l| format!("{}-{}", s.nodes[l.a].name, s.nodes[l.b].name)).collect()
}

/// The error loading `text`: its key, line, column and message.
fn invalid(text: &str) -> (String, usize, usize, String) {
    match load(text, "g.toml", &[]) {
        Err(ScenarioError::Invalid { key, line, column, message, .. }) => (key, line, column, message),
        Err(other) => panic!("expected an invalid key, got {other}"),
        Ok(_) => panic!("expected an error, the scenario loaded"),
    }
}

/// 1-based line and column of the last `needle` in `text` (generators
/// come last).
fn at(text: &str, needle: &str) -> (usize, usize) {
    let offset = text.rfind(needle).unwrap_or_else(|| panic!("{needle:?} not in the text"));
    let before = &text[..offset];
    (before.matches('\n').count() + 1, before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1)
}

#[test]
fn a_dumbbell_expands_pair_by_pair_with_default_names() {
    let s = loaded(&dumbbell(3, ""));
    let hosts: Vec<usize> = (0..s.nodes.len()).filter(|&i| s.nodes[i].kind == NodeKind::Host).collect();
    assert_eq!(names(&s, hosts), ["db.s0", "db.s1", "db.s2", "db.d0", "db.d1", "db.d2"]);
    assert_eq!(names(&s, 6..8), ["db.left", "db.right"]);
    assert!(s.nodes[6..].iter().all(|n| n.kind == NodeKind::Router));
    // The bottleneck, then each pair's links, each in the direction data flows.
    assert_eq!(
        ends(&s),
        [
            "db.left-db.right",
            "db.s0-db.left",
            "db.right-db.d0",
            "db.s1-db.left",
            "db.right-db.d1",
            "db.s2-db.left",
            "db.right-db.d2"
        ]
    );
    assert_eq!(s.links[0].rate_bps, 10_000_000);
    let keys = "\nsender_links = { rate = \"100Mbps\", delay = \"1ms\", qdisc_reverse = \"red\", loss_forward = 0.01, extra_delay = \"2ms\" }";
    let with_keys = loaded(&dumbbell(3, "").replace("\nsender_links = ", &format!("{keys}\n# ")));
    let link = &with_keys.links[1];
    assert_eq!((link.loss_ab, link.loss_ba, link.delay), (0.01, 0.0, Time::from_millis(3)));
    assert_eq!((&link.qdisc_ba, &link.qdisc_ab), (&with_keys.links[0].qdisc_ab, &s.links[1].qdisc_ab));
    assert_ne!(s.links[0].qdisc_ab, s.links[1].qdisc_ab, "the bottleneck has its qdisc, access links the default");
    let groups: Vec<(&str, &str, &str)> = s
        .groups
        .iter()
        .map(|g| (g.name.as_str(), s.nodes[g.src].name.as_str(), s.nodes[g.dst].name.as_str()))
        .collect();
    assert_eq!(groups, [("db.0", "db.s0", "db.d0"), ("db.1", "db.s1", "db.d1"), ("db.2", "db.s2", "db.d2")]);
}

#[test]
fn listed_values_are_taken_in_turn_and_drawn_ones_are_uniform_and_stable() {
    let s = loaded(&dumbbell(200, ""));
    let sender_delays: Vec<Time> = s.links[1..].iter().step_by(2).map(|l| l.delay).collect();
    let receiver_delays: Vec<Time> = s.links[2..].iter().step_by(2).map(|l| l.delay).collect();
    assert_eq!(
        sender_delays[..4],
        [Time::from_millis(1), Time::from_millis(2), Time::from_millis(5), Time::from_millis(1)]
    );
    assert!(receiver_delays.iter().all(|&d| (Time::from_millis(1)..=Time::from_millis(50)).contains(&d)));
    let mean = receiver_delays.iter().map(|d| d.as_nanos()).sum::<u64>() / 200;
    assert!((22_000_000..29_000_000).contains(&mean), "mean {mean} ns of uniform draws in [1 ms, 50 ms]");
    // The same file gives the same draws; a longer dumbbell keeps the first
    // pairs' values; another seed draws others.
    assert_eq!(loaded(&dumbbell(200, "")), s);
    let longer = loaded(&dumbbell(300, ""));
    let longer_delays: Vec<Time> = longer.links[2..].iter().step_by(2).map(|l| l.delay).take(200).collect();
    assert_eq!(longer_delays, receiver_delays);
    for other_seed in [dumbbell(200, "seed = 2"), dumbbell(200, "").replace("duration", "seed = 5\nduration")] {
        let other = loaded(&other_seed);
        let other_delays: Vec<Time> = other.links[2..].iter().step_by(2).map(|l| l.delay).collect();
        assert_ne!(other_delays, receiver_delays);
        assert_eq!(other.links[1..].iter().step_by(2).map(|l| l.delay).collect::<Vec<_>>(), sender_delays);
    }
    // Each template key has its own stream: drawing the sender side's
    // rates leaves the receiver side's delays alone.
    let text = dumbbell(200, "")
        .replace("rate = \"100Mbps\", delay = [", "rate = { uniform = [\"10Mbps\", \"100Mbps\"] }, delay = [");
    let drawn_rates = loaded(&text);
    assert_eq!(drawn_rates.links[2..].iter().step_by(2).map(|l| l.delay).collect::<Vec<_>>(), receiver_delays);
    let rates: Vec<u64> = drawn_rates.links[1..].iter().step_by(2).map(|l| l.rate_bps).collect();
    assert!(rates.iter().all(|r| (10_000_000..=100_000_000).contains(r)) && rates.iter().any(|&r| r != rates[0]));
}

#[test]
fn a_parking_lot_has_one_cross_pair_per_hop_and_a_long_pair() {
    let text = format!(
        "{HEAD}
[[generators]]
kind = \"parking_lot\"
name = \"pl\"
count = 3
routers = \"r{{i}}\"
hop_links = {{ rate = [\"10Mbps\", \"5Mbps\", \"10Mbps\"], delay = \"5ms\", qdisc = \"red\" }}
sender_links = {{ rate = \"100Mbps\", delay = \"1ms\" }}
receiver_links = {{ rate = \"100Mbps\", delay = \"1ms\" }}
cross_traffic = {{ kind = \"cbr\", class = \"be\", packet_size = \"500B\", rate = \"1Mbps\", count = 2 }}
long_traffic = {{ kind = \"tcp\", class = \"be\" }}
"
    );
    let s = loaded(&text);
    assert_eq!(
        names(&s, 0..s.nodes.len()),
        ["pl.s0", "pl.s1", "pl.s2", "pl.s3", "pl.d0", "pl.d1", "pl.d2", "pl.d3", "r0", "r1", "r2", "r3"]
    );
    assert_eq!(
        ends(&s),
        [
            "r0-r1", "r1-r2", "r2-r3", "pl.s0-r0", "r1-pl.d0", "pl.s1-r1", "r2-pl.d1", "pl.s2-r2", "r3-pl.d2",
            "pl.s3-r0", "r3-pl.d3"
        ]
    );
    assert_eq!(s.links[1].rate_bps, 5_000_000, "hop 1 takes the second listed rate");
    let groups: Vec<(&str, u32, &str, &str)> = s
        .groups
        .iter()
        .map(|g| (g.name.as_str(), g.count, s.nodes[g.src].name.as_str(), s.nodes[g.dst].name.as_str()))
        .collect();
    assert_eq!(
        groups,
        [
            ("pl.0", 2, "pl.s0", "pl.d0"),
            ("pl.1", 2, "pl.s1", "pl.d1"),
            ("pl.2", 2, "pl.s2", "pl.d2"),
            ("pl.long", 1, "pl.s3", "pl.d3")
        ]
    );
}

fn star(traffic: &str) -> String {
    format!(
        "{HEAD}
[nodes]
hosts = [\"srv\"]

[[links]]
between = [\"hub\", \"srv\"]
rate = \"10Mbps\"
delay = \"1ms\"

[[generators]]
kind = \"star\"
name = \"st\"
count = 3
hub = \"hub\"
leaves = \"h{{i}}\"
leaf_links = {{ rate = \"100Mbps\", delay = {{ uniform = [\"1ms\", \"3ms\"] }} }}
traffic = {{ {traffic} }}
"
    )
}

#[test]
fn a_star_sends_from_every_leaf_or_to_every_leaf() {
    let s = loaded(&star("kind = \"tcp\", class = \"be\", to = \"srv\""));
    assert_eq!(names(&s, 0..s.nodes.len()), ["srv", "h0", "h1", "h2", "hub"]);
    assert_eq!(ends(&s), ["hub-srv", "h0-hub", "h1-hub", "h2-hub"]);
    let ends_of = |s: &Scenario| -> Vec<(String, String)> {
        s.groups.iter().map(|g| (s.nodes[g.src].name.clone(), s.nodes[g.dst].name.clone())).collect()
    };
    assert_eq!(ends_of(&s), [("h0", "srv"), ("h1", "srv"), ("h2", "srv")].map(|(a, b)| (a.into(), b.into())));
    let s = loaded(&star("name = \"get{i}\", kind = \"tcp\", class = \"be\", from = \"srv\""));
    assert_eq!(ends_of(&s), [("srv", "h0"), ("srv", "h1"), ("srv", "h2")].map(|(a, b)| (a.into(), b.into())));
    assert_eq!(s.groups.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(), ["get0", "get1", "get2"]);
}

/// Each bad input is reported at the generator's key, at its line and
/// column in the text (the header of the table lacking a missing key).
#[test]
fn bad_generator_input_is_reported_at_the_generator_s_keys() {
    let db = dumbbell(4, "");
    let cases: Vec<(String, &str, &str, &str)> = vec![
        // (text, key, where it is, part of the message)
        (db.replacen("\"10Mbps\"", "\"10Mbs\"", 1), "generators[0].bottleneck.rate", "rate = \"10Mbs\"", "not a rate"),
        (db.replace("\"5ms\"", "\"5\""), "generators[0].sender_links.delay[2]", "\"5\"", "unit"),
        (db.replace("\"50ms\"", "\"-50ms\""), "generators[0].receiver_links.delay.uniform[1]", "\"-50ms\"", ""),
        (
            db.replace("\"50ms\"", "\"0.5ms\""),
            "generators[0].receiver_links.delay.uniform[1]",
            "\"0.5ms\"",
            "the maximum (0.5ms) is below the minimum (1ms)",
        ),
        (
            db.replace("[\"1ms\", \"50ms\"]", "[\"1ms\"]"),
            "generators[0].receiver_links.delay.uniform",
            "uniform",
            "two values; found 1",
        ),
        (db.replace("[\"1ms\", \"2ms\", \"5ms\"]", "[]"), "generators[0].sender_links.delay", "delay = []", "at least one"),
        (db.replace("qdisc = \"red\"", "qdisc = \"rde\""), "generators[0].bottleneck.qdisc", "qdisc = \"rde\"", "rde is not a qdisc"),
        (db.replace("class = \"be\"", "class = \"ef\""), "generators[0].traffic.class", "class", "ef is not a class"),
        (db.replace("class = \"be\"", "class = \"be\"\nmss = \"0B\""), "generators[0].traffic.mss", "mss", ""),
        (db.replace("class = \"be\"", "class = \"be\"\nfrom = \"x\""), "generators[0].traffic.from", "from", "sets `from`"),
        (db.replace("class = \"be\"", "class = \"be\"\npath = []"), "generators[0].traffic.path", "path", "shortest"),
        (
            db.replace("kind = \"tcp\"", "kind = \"cbr\"\npacket_size = \"500B\""),
            "generators[0].traffic",
            "[generators.traffic]",
            "a cbr source needs `rate`",
        ),
        (
            db.replace("class = \"be\"", "class = \"be\"\napp = \"phases\"\nphases = [{ from = \"1s\", mode = \"greedy\" }]"),
            "generators[0].traffic.phases[0].from",
            "from = \"1s\"",
            "",
        ),
        (dumbbell(4, "senders = \"s\""), "generators[0].senders", "senders", "needs `{i}`"),
        (dumbbell(4, "senders = \"s{i}{j}\""), "generators[0].senders", "senders", "no other braces"),
        (dumbbell(4, "senders = \"s->{i}\""), "generators[0].senders", "senders", "\"s->0\": a node name must not contain"),
        (dumbbell(4, "left = \"\""), "generators[0].left", "left", "must not be empty"),
        (
            db.replace("[[generators]]", "[nodes]\nhosts = [\"db.s2\"]\n\n[[generators]]"),
            "generators[0].senders",
            "[[generators]]",
            "db.s2 is already a node",
        ),
        (
            db.replace("[[generators]]", "[nodes]\nrouters = [\"x\"]\n[[links]]\nbetween = [\"db.left\", \"db.right\"]\nrate = \"1Mbps\"\ndelay = \"0ms\"\n\n[[generators]]"),
            "generators[0].bottleneck",
            "bottleneck",
            "db.left and db.right are already joined by links[0]",
        ),
        (db.replace("name = \"db\"", "name = \"a b\""), "generators[0].name", "name = \"a b\"", "not allowed"),
        (db.replace("count = 4", "count = 0"), "generators[0].count", "count", "at least 1"),
        (dumbbell(4, "hub = \"h\""), "generators[0].hub", "hub", "does not apply to a dumbbell generator"),
        (db.replace("bottleneck = ", "# "), "generators[0].bottleneck", "[[generators]]", "needs `bottleneck`"),
        (db.replace("count = 4", "pairs = 4"), "generators[0].pairs", "pairs", "unknown field"),
        (db.replace("delay = \"10ms\"", "dealy = \"10ms\""), "generators[0].bottleneck.dealy", "dealy", "unknown field"),
        (db.replace("delay = \"10ms\"", "delay = true"), "generators[0].bottleneck.delay", "delay = true", "a draw { uniform"),
        (db.replace("kind = \"dumbbell\"", "kind = \"ring\""), "generators[0].kind", "kind = \"ring\"", "parking_lot"),
        (
            db.replace("kind = \"tcp\"", "name = \"web\"\nkind = \"tcp\"").replace("[run]", "[[traffic]]\nname = \"web\"\nkind = \"tcp\"\nfrom = \"db.s0\"\nto = \"db.d0\"\nclass = \"be\"\n\n[run]"),
            "generators[0].traffic.name",
            "name = \"web\"\nkind = \"tcp\"\nclass",
            "needs `{i}`",
        ),
        (
            db.replace("kind = \"tcp\"", "name = \"web{i}\"\nkind = \"tcp\"").replace("[run]", "[[traffic]]\nname = \"web2\"\nkind = \"tcp\"\nfrom = \"db.s0\"\nto = \"db.d0\"\nclass = \"be\"\n\n[run]"),
            "generators[0].traffic.name",
            "name = \"web{i}\"",
            "web2 is already the name of traffic[0]",
        ),
        (
            star("kind = \"tcp\", class = \"be\", to = \"nowhere\""),
            "generators[0].traffic.to",
            "to = \"nowhere\"",
            "nowhere is not a node",
        ),
        (star("kind = \"tcp\", class = \"be\", to = \"hub\""), "generators[0].traffic.to", "to = \"hub\"", "hub is a router"),
        (star("kind = \"tcp\", class = \"be\", to = \"h1\""), "generators[0].traffic.to", "to = \"h1\"", "both h1"),
        (star("kind = \"tcp\", class = \"be\""), "generators[0].traffic", "traffic = {", "needs `to`"),
        (star("kind = \"tcp\", class = \"be\", from = \"srv\", to = \"srv\""), "generators[0].traffic.to", "to = \"srv\"", "one of them"),
        (
            star("kind = \"tcp\", class = \"be\", to = \"srv\"").replace("[[links]]\nbetween = [\"hub\", \"srv\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n", ""),
            "generators[0].traffic.to",
            "to = \"srv\"",
            "srv cannot be reached from h0",
        ),
    ];
    for (text, key, needle, message) in cases {
        let (got_key, line, column, got) = invalid(&text);
        assert_eq!((got_key.as_str(), (line, column)), (key, at(&text, needle)), "{got}\n{text}");
        assert!(got.contains(message), "{key}: {got}");
    }
}

#[test]
fn two_generators_need_distinct_names_and_distinct_groups() {
    let text = dumbbell(3, "") + "\n[[generators]]\nkind = \"star\"\nname = \"db\"\ncount = 1\nleaf_links = { rate = \"1Mbps\", delay = \"1ms\" }\n";
    let (key, line, column, message) = invalid(&text);
    assert_eq!((key.as_str(), (line, column)), ("generators[1].name", at(&text, "name = \"db\"\ncount = 1")));
    assert!(message.contains("already the name of generators[0]"), "{message}");
    let text = dumbbell(3, "") + "\n[[generators]]\nkind = \"dumbbell\"\nname = \"db2\"\ncount = 1\nbottleneck = { rate = \"1Mbps\", delay = \"1ms\" }\nsender_links = { rate = \"1Mbps\", delay = \"1ms\" }\nreceiver_links = { rate = \"1Mbps\", delay = \"1ms\" }\ntraffic = { name = \"db.{i}\", kind = \"tcp\", class = \"be\" }\n";
    let (key, _, _, message) = invalid(&text);
    assert_eq!(key, "generators[1].traffic.name");
    assert!(
        message.ends_with("db.0 is already the name of generators[0].traffic (pair 0); names must be unique"),
        "{message}"
    );
    let parking_lot = |name: &str| {
        format!(
            "\n[[generators]]\nkind = \"parking_lot\"\nname = \"{name}\"\ncount = 1\nhop_links = {{ rate = \"1Mbps\", delay = \"1ms\" }}\nsender_links = {{ rate = \"1Mbps\", delay = \"1ms\" }}\nreceiver_links = {{ rate = \"1Mbps\", delay = \"1ms\" }}\nlong_traffic = {{ name = \"long\", kind = \"tcp\", class = \"be\" }}\n"
        )
    };
    let text = format!("{HEAD}{}{}", parking_lot("a"), parking_lot("b"));
    let (key, _, _, message) = invalid(&text);
    assert_eq!(key, "generators[1].long_traffic.name");
    assert!(message.starts_with("long is already the name of generators[0].long_traffic;"), "{message}");
}

#[test]
fn overrides_reach_generated_parts_through_the_generator_s_keys() {
    let text = dumbbell(4, "");
    let set = |overrides: &[&str]| load(&text, "g.toml", &overrides.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let s = set(&["generators[0].count=10", "generators[0].sender_links.delay=7ms", "generators.0.traffic.count=3"])
        .unwrap();
    assert_eq!(s.links.len(), 21);
    assert_eq!(s.links[1].delay, Time::from_millis(7));
    assert!(s.groups.iter().all(|g| g.count == 3));
    let s = set(&["generators[0].receiver_links.delay.uniform[1]=1ms"]).unwrap();
    assert!(s.links[2..].iter().step_by(2).all(|l| l.delay == Time::from_millis(1)));
    let error = set(&["generators[0].count=0"]).unwrap_err().to_string();
    assert!(error.ends_with("generators[0].count: count must be at least 1 (value set by --set)"), "{error}");
    let error = set(&["generators[0].sender_links.rate=fast"]).unwrap_err().to_string();
    assert!(error.contains("generators[0].sender_links.rate: ") && error.ends_with("(value set by --set)"), "{error}");
    // Generated links are not in the file: they are changed through their generator.
    assert!(matches!(set(&["links[1].rate=1Mbps"]), Err(ScenarioError::Override { .. })));
}

#[test]
fn a_count_that_would_exhaust_memory_is_refused_before_expanding() {
    let start = std::time::Instant::now();
    let (key, line, column, message) = invalid(&dumbbell(4_000_000_000, ""));
    assert!(start.elapsed().as_secs() < 5, "refused without expanding");
    assert_eq!((key.as_str(), (line, column)), ("generators[0].count", at(&dumbbell(4_000_000_000, ""), "count")));
    assert!(message.contains("for the 8000000001 links of generators[0]; generate a smaller network"), "{message}");
    // After expanding, the flows of a generator count at its count.
    let text = dumbbell(1000, "").replace("class = \"be\"", "class = \"be\"\ncount = 3000");
    let (key, _, _, message) = invalid(&text);
    assert_eq!(key, "generators[0].count");
    assert!(message.contains("for 3000000 flows of generators[0].traffic"), "{message}");
    let text =
        dumbbell(10, "").replace("class = \"be\"", "class = \"be\"\ninitial_window = 100000000\nwindow = 100000000");
    let (key, _, _, message) = invalid(&text);
    assert_eq!(key, "generators[0].traffic.initial_window");
    assert!(message.contains("the first burst of generators[0].traffic (10 flows × 100000000 segments)"), "{message}");
}

/// The wide-100 file as it was before generators: every host, link and
/// group written out (the same text, comments aside).
fn listed_wide_100() -> String {
    let mut s =
        String::from("name = \"wide-100\"\n\n[run]\nduration = \"30s\"\n\n[classes]\nbe = 0\n\n[nodes]\nhosts = [");
    let hosts: Vec<String> =
        (0..100).map(|i| format!("\"s{i}\"")).chain((0..100).map(|i| format!("\"d{i}\""))).collect();
    s.push_str(&hosts.join(", "));
    s.push_str("]\nrouters = [\"r1\", \"r2\"]\n\n[qdiscs.red]\nkind = \"red\"\nlimit = \"1000pkt\"\nmin_th = 100\nmax_th = 300\nmean_pktsize = \"1500B\"\n\n");
    s.push_str("[[links]]\nbetween = [\"r1\", \"r2\"]\nrate = \"100Mbps\"\ndelay = \"10ms\"\nqdisc = \"red\"\n\n");
    for i in 0..100 {
        let _ = write!(s, "[[links]]\nbetween = [\"s{i}\", \"r1\"]\nrate = \"100Mbps\"\ndelay = \"1ms\"\n\n");
        let _ = write!(s, "[[links]]\nbetween = [\"r2\", \"d{i}\"]\nrate = \"100Mbps\"\ndelay = \"1ms\"\n\n");
    }
    for i in 0..100 {
        let _ = write!(
            s,
            "[[traffic]]\nname = \"tcp{i}\"\nkind = \"tcp\"\nfrom = \"s{i}\"\nto = \"d{i}\"\nclass = \"be\"\nstart_jitter = \"1s\"\nmss = \"1460B\"\nwindow = 10000\n\n"
        );
    }
    s.truncate(s.len() - 1);
    s
}

/// The benchmark's dumbbell gives the very network the listed file gave:
/// the same nodes, links and groups in the same order, hence (the run being
/// a function of the scenario and the seed) the same results byte for byte.
#[test]
fn wide_100_is_the_network_its_long_file_listed() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../benches/scenarios/wide-100.toml");
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.lines().count() < 60, "the file is short");
    let mut listed = load(&listed_wide_100(), "wide-100.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    // Generated groups name their generator (results carry it); the rest is the same.
    listed.groups.iter_mut().for_each(|g| g.generator = "wide.traffic".into());
    assert_eq!((listed.nodes.len(), listed.links.len(), listed.groups.len()), (202, 201, 100));
    assert_eq!(loaded(&text), listed);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn mutated_generators_never_panic(position in 0..dumbbell(3, "").len(), replacement in "[\\[\\]{}\"=.,0-9a-z_ \n-]{0,3}") {
        let text = dumbbell(3, "");
        let mut mutated = text[..position].to_owned();
        mutated.push_str(&replacement);
        mutated.push_str(&text[position..]);
        let _ = load(&mutated, "g.toml", &[]);
    }
}

/// The example of docs/scenario-format.md loads into what the page says,
/// and the messages the page shows are the ones its mistakes give.
#[test]
fn the_documented_example_and_its_messages_are_true() {
    let doc = include_str!("../../../docs/scenario-format.md");
    let section = &doc[doc.find("### `[[generators]]`").expect("the page documents generators")..];
    let block = |after: &str| {
        let start = section.find(after).expect("a code block") + after.len();
        &section[start..start + section[start..].find("```").expect("the block is closed")]
    };
    let example = block("```toml\n");
    let s = load(example, "rtt-spread.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((s.nodes.len(), s.links.len(), s.groups.len()), (102, 101, 50));
    // Round trips of propagation from 24 to 222 ms: 2 × (sender delay + 10 ms + 1 ms).
    let senders = s.links[1..].iter().step_by(2).map(|l| l.delay);
    assert!(senders.clone().all(|d| (Time::from_millis(1)..=Time::from_millis(100)).contains(&d)));
    assert!(senders.clone().any(|d| d < Time::from_millis(10)) && senders.clone().any(|d| d > Time::from_millis(90)));
    let messages = block("(exit status 2):\n\n```\n");
    for (old, new) in [
        ("delay = \"1ms\" }", "delay = [\"1ms\", \"2ms\", \"5\"] }"),
        ("qdisc = \"red\" }", "qdisc = \"rde\" }"),
        ("class = \"be\"", "class = \"ef\""),
        ("\"100ms\"", "\"100\""),
    ] {
        let error = load(&example.replacen(old, new, 1), "rtt-spread.toml", &[]).unwrap_err().to_string();
        assert!(messages.lines().any(|l| l == error), "{error} is not on the page");
    }
    let error = load(example, "rtt-spread.toml", &["generators[0].count=0".into()]).unwrap_err().to_string();
    assert!(messages.lines().any(|l| l == error), "{error} is not on the page");
}
