//! Tests of [`super::load`]: a complete file into the exact model, one test
//! per class of error (key, line and column), overrides, and a property test
//! that no input makes `load` panic.

use phb::aqm::red::RedParams;
use phb::aqm::Limit;
use phb::queue::{BufferConfig, BufferPolicy, QdiscConfig, QueueConfig, SchedulerKind};
use phb::Time;
use proptest::prelude::*;

use super::*;

const FULL: &str = r#"
name = "full"

[run]
duration = "100s"
warmup = "10s"
seed = 7
sample_interval = "100ms"

[classes]
be = 0
ef = 46

[nodes]
hosts = ["s1", "s2", "d1"]
routers = ["r1", "r2"]

[qdiscs.bottleneck]
kind = "red"
limit = "250pkt"
min_th = 60
max_th = 180
max_p = 0.05
mode = "bytes"
ns1_compat = true

[qdiscs.edge]
kind = "fifo"
limit = "64KB"

[qdiscs.prio]
kind = "classful"
scheduler = "priority"

[[qdiscs.prio.buffers]]
name = "shared"
policy = "red"
limit = "100pkt"
min_th = 10
max_th = 30
w_q = 0.01
gentle = false

[[qdiscs.prio.buffers]]
name = "small"
policy = "droptail"
limit = "10pkt"

[[qdiscs.prio.queues]]
name = "voice"
classes = ["ef"]
buffer = "small"

[[qdiscs.prio.queues]]
name = "data"
classes = ["be"]
buffer = "shared"

[[links]]
between = ["s1", "r1"]
rate = "100Mbps"
delay = "1ms"

[[links]]
between = ["s2", "r1"]
rate = "100Mbps"
delay = "0ms"
qdisc = "edge"

[[links]]
between = ["r1", "r2"]
rate = "10Mbps"
delay = "10ms"
qdisc = "bottleneck"
qdisc_forward = "prio"

[[links]]
between = ["r2", "d1"]
rate = "1.5Mb/s"
delay = "500us"
qdisc_reverse = "edge"

[[traffic]]
name = "voip"
kind = "exp_onoff"
from = "s1"
to = "d1"
class = "ef"
count = 10
packet_size = "82B"
interval = "30ms"
on_mean = "3s"
off_mean = "6s"
path = ["s1", "r1", "r2", "d1"]

[[traffic]]
name = "bulk"
kind = "pareto_onoff"
from = "s2"
to = "d1"
class = "be"
packet_size = "500B"
rate = "1Mbps"
on_mean = "50ms"
off_mean = "50ms"
start = "1s"
stop = "90s"

[[traffic]]
name = "stream"
kind = "cbr"
from = "s2"
to = "d1"
class = "be"
packet_size = "1000B"
rate = "2Mbps"
"#;

fn load_full(overrides: &[&str]) -> Result<Scenario, ScenarioError> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    load(FULL, "dir/full.toml", &overrides)
}

/// Loads `FULL` with `from` replaced by `to` and returns the error.
fn error_after(from: &str, to: &str) -> ScenarioError {
    assert!(FULL.contains(from), "{from:?} is not in the test scenario");
    load(&FULL.replacen(from, to, 1), "full.toml", &[]).expect_err("the edited scenario should be rejected")
}

/// `(key, line, column)` of an `Invalid` error, and its message.
fn invalid(error: ScenarioError) -> ((String, usize, usize), String) {
    match error {
        ScenarioError::Invalid { key, line, column, message, .. } => ((key, line, column), message),
        other => panic!("expected an Invalid error, got {other:?}"),
    }
}

/// 1-based line and column of the last occurrence of `needle` in `text`.
fn at(text: &str, needle: &str) -> (usize, usize) {
    let offset = text.rfind(needle).unwrap_or_else(|| panic!("{needle:?} not found"));
    location::line_column(text, offset)
}

fn expect_at(error: ScenarioError, key: &str, text: &str, needle: &str, message_part: &str) {
    let ((k, line, column), message) = invalid(error);
    assert_eq!((k.as_str(), (line, column)), (key, at(text, needle)), "message: {message}");
    assert!(message.contains(message_part), "{message:?} should contain {message_part:?}");
}

#[test]
fn a_full_scenario_parses_into_the_exact_model() {
    let red = RedParams {
        min_th: 60.0,
        max_th: 180.0,
        max_p: 0.05,
        limit: Limit::Packets(250),
        byte_mode: true,
        ns1_compat: true,
        ..RedParams::default()
    };
    let edge = QdiscConfig::fifo(Limit::Bytes(64_000));
    let default = QdiscConfig::fifo(Limit::Packets(50));
    let prio = QdiscConfig {
        queues: vec![QueueConfig { name: "voice".into(), buffer: 1 }, QueueConfig { name: "data".into(), buffer: 0 }],
        buffers: vec![
            BufferConfig {
                name: "shared".into(),
                ..BufferPolicy::Red(RedParams {
                    min_th: 10.0,
                    max_th: 30.0,
                    w_q: 0.01,
                    limit: Limit::Packets(100),
                    gentle: false,
                    ..RedParams::default()
                })
                .into()
            },
            BufferConfig { name: "small".into(), ..BufferPolicy::DropTail { limit: Limit::Packets(10) }.into() },
        ],
        classify: vec![(46, 0), (0, 1)],
        default_queue: 1,
        scheduler: SchedulerKind::StrictPriority,
    };
    let host = |name: &str| NodeDef { name: name.into(), kind: NodeKind::Host };
    let router = |name: &str| NodeDef { name: name.into(), kind: NodeKind::Router };
    let expected = Scenario {
        name: "full".into(),
        run: RunConfig {
            duration: Time::from_secs(100),
            warmup: Time::from_secs(10),
            seed: 7,
            sample_interval: Some(Time::from_millis(100)),
            sample_scopes: None,
            delay_ratios: Vec::new(),
        },
        classes: vec![ClassDef { name: "be".into(), codepoint: 0 }, ClassDef { name: "ef".into(), codepoint: 46 }],
        nodes: vec![host("s1"), host("s2"), host("d1"), router("r1"), router("r2")],
        links: vec![
            LinkDef {
                a: 0,
                b: 3,
                rate_bps: 100_000_000,
                delay: Time::from_millis(1),
                framing: phb::Framing::None,
                qdisc_ab: default.clone(),
                qdisc_ba: default.clone(),
                conditioner_ab: None,
                conditioner_ba: None,
                loss_ab: 0.0,
                loss_ba: 0.0,
            },
            LinkDef {
                a: 1,
                b: 3,
                rate_bps: 100_000_000,
                delay: Time::ZERO,
                framing: phb::Framing::None,
                qdisc_ab: edge.clone(),
                qdisc_ba: edge.clone(),
                conditioner_ab: None,
                conditioner_ba: None,
                loss_ab: 0.0,
                loss_ba: 0.0,
            },
            LinkDef {
                a: 3,
                b: 4,
                rate_bps: 10_000_000,
                delay: Time::from_millis(10),
                framing: phb::Framing::None,
                qdisc_ab: prio,
                qdisc_ba: QdiscConfig::red(red),
                conditioner_ab: None,
                conditioner_ba: None,
                loss_ab: 0.0,
                loss_ba: 0.0,
            },
            LinkDef {
                a: 4,
                b: 2,
                rate_bps: 1_500_000,
                delay: Time::from_micros(500),
                framing: phb::Framing::None,
                qdisc_ab: default,
                qdisc_ba: edge,
                conditioner_ab: None,
                conditioner_ba: None,
                loss_ab: 0.0,
                loss_ba: 0.0,
            },
        ],
        groups: vec![
            TrafficGroup {
                name: "voip".into(),
                generator: String::new(),
                count: 10,
                src: 0,
                dst: 2,
                class: 1,
                path: Some(vec![0, 3, 4, 2]),
                start: Time::ZERO,
                start_jitter: Time::ZERO,
                stop: Time::from_secs(100),
                windows: None,
                // 82 bytes every 30 ms: 656 bits / 0.03 s = 21 866.67 bit/s.
                transport: Transport::Udp(SourceModel::ExpOnOff {
                    packet_size: 82,
                    rate_bps: 21_867,
                    on_mean: Time::from_secs(3),
                    off_mean: Time::from_secs(6),
                }),
            },
            TrafficGroup {
                name: "bulk".into(),
                generator: String::new(),
                count: 1,
                src: 1,
                dst: 2,
                class: 0,
                path: None,
                start: Time::from_secs(1),
                start_jitter: Time::ZERO,
                stop: Time::from_secs(90),
                windows: None,
                transport: Transport::Udp(SourceModel::ParetoOnOff {
                    packet_size: 500,
                    rate_bps: 1_000_000,
                    on_mean: Time::from_millis(50),
                    off_mean: Time::from_millis(50),
                    shape: 1.5,
                }),
            },
            TrafficGroup {
                name: "stream".into(),
                generator: String::new(),
                count: 1,
                src: 1,
                dst: 2,
                class: 0,
                path: None,
                start: Time::ZERO,
                start_jitter: Time::ZERO,
                stop: Time::from_secs(100),
                windows: None,
                transport: Transport::Udp(SourceModel::Cbr { packet_size: 1000, interval: Time::from_millis(4) }),
            },
        ],
        lsps: Vec::new(),
        commands: Vec::new(),
        trace: None,
    };
    assert_eq!(load_full(&[]), Ok(expected));
}

#[test]
fn the_name_defaults_to_the_file_stem() {
    let text = FULL.replacen("name = \"full\"", "", 1);
    assert_eq!(load(&text, "some/dir/dumbbell.toml", &[]).unwrap().name, "dumbbell");
    assert_eq!(load(&text, "C:\\x\\y.toml", &[]).unwrap().name, "y");
    assert_eq!(load(&text, "runs/my run (2).toml", &[]).unwrap().name, "my_run__2_");
    assert_eq!(load(&text, "../..hidden.toml", &[]).unwrap().name, "hidden");
    assert_eq!(load(&text, "dir/.toml", &[]).unwrap().name, "scenario");
}

/// `-x.toml` gave `-x`, which an explicit name may not be; names cut at
/// 100 bytes let two long file names share one results directory.
#[test]
fn default_names_are_valid_and_distinct() {
    let text = FULL.replacen("name = \"full\"", "", 1);
    assert_eq!(load(&text, "-x.toml", &[]).unwrap().name, "_x");
    let long = |end: &str| load(&text, &format!("{}{end}.toml", "a".repeat(120)), &[]).unwrap().name;
    let (one, two) = (long("1"), long("2"));
    assert_ne!(one, two);
    assert!(one.len() == 100 && one.starts_with(&"a".repeat(91)), "{one}");
}

/// Control characters reached the terminal raw; zero-width characters and
/// NUL were accepted; `é` in NFC and NFD made two classes shown alike.
#[test]
fn names_are_printable_and_have_one_spelling() {
    for (from, to, key, part) in [
        ("hosts = [\"s1\"", "hosts = [\"s\\u001b[31m1\"", "nodes.hosts[0]", "U+001B"),
        ("hosts = [\"s1\"", "hosts = [\"s\\u0000\"", "nodes.hosts[0]", "a control character, U+0000"),
        ("hosts = [\"s1\"", "hosts = [\"s\\u200b1\"", "nodes.hosts[0]", "prints as nothing, U+200B"),
        ("name = \"voip\"", "name = \"vo\\u0007ip\"", "traffic[0].name", "U+0007"),
        ("be = 0", "\"e\\u0301\" = 0", "classes.\"e\u{301}\"", "composed form (NFC), \"\u{e9}\""),
    ] {
        let ((k, _, _), message) = invalid(error_after(from, to));
        assert_eq!(k, key, "{message}");
        assert!(message.contains(part), "{message:?} should contain {part:?}");
        assert!(!message.contains('\u{1b}') && !message.contains('\0'), "{message:?}");
    }
    // a composed é is a name like any other
    assert!(load(&FULL.replacen("be = 0", "\"\u{e9}\" = 0", 1).replace("\"be\"", "\"\u{e9}\""), "s.toml", &[]).is_ok());
    // a very long name is refused, and not echoed whole
    let ((_, _, _), message) =
        invalid(error_after("hosts = [\"s1\"", &format!("hosts = [\"{}\"", "x".repeat(100_000))));
    assert!(message.len() < 300 && message.contains("at most 200 bytes"), "{}", message.len());
}

/// Accepted before, though surely mistakes (issue 23, item 15).
#[test]
fn likely_mistakes_are_refused() {
    let ((key, _, _), message) = invalid(error_after("max_th = 30", "max_th = 300"));
    assert_eq!(key, "qdiscs.prio.buffers[0].max_th");
    assert!(message.contains("above the buffer's limit (100 packets)"), "{message}");
    let ((key, _, _), message) = invalid(error_after("start = \"1s\"", "start = \"1s\"\nstart_jitter = \"95s\""));
    assert_eq!(key, "traffic[1].start_jitter");
    assert!(message.contains("longer than the time from start to stop"), "{message}");
}

#[test]
fn a_name_is_one_plain_path_component() {
    let with_name = |toml_string: &str| FULL.replacen("name = \"full\"", &format!("name = {toml_string}"), 1);
    let long = format!("\"{}\"", "n".repeat(101));
    for bad in [
        r#""/tmp/victim""#,
        r#""../../x""#,
        r#"".""#,
        r#""..""#,
        r#""a/b""#,
        r#""a\\b""#,
        r#"".hidden""#,
        r#""x\u0000y""#,
        r#""""#,
        r#"" ""#,
        r#""caf\u00e9""#,
        r#""a b""#,
        &long,
    ] {
        let err = load(&with_name(bad), "full.toml", &[]).unwrap_err();
        assert_eq!(invalid(err).0 .0, "name", "{bad}");
    }
    for good in ["fig-3", "table_2.v2", "_x", "A1"] {
        assert_eq!(load(&with_name(&format!("{good:?}")), "full.toml", &[]).unwrap().name, good);
    }
}

#[test]
fn the_example_scenarios_load() {
    for (name, text) in [
        ("dumbbell-red", include_str!("../../../../scenarios/examples/dumbbell-red.toml")),
        ("dumbbell-fifo", include_str!("../../../../scenarios/examples/dumbbell-fifo.toml")),
    ] {
        let scenario = load(text, &format!("{name}.toml"), &[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(scenario.name, name);
    }
}

#[test]
fn the_documented_example_loads() {
    let doc = include_str!("../../../../docs/scenario-format.md");
    let start = doc.find("```toml\n").expect("docs/scenario-format.md has a TOML example") + "```toml\n".len();
    let example = &doc[start..start + doc[start..].find("```").expect("the example is closed")];
    let scenario = load(example, "docs/dumbbell-prio.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((scenario.name.as_str(), scenario.groups.len()), ("dumbbell-prio", 3));
}

#[test]
fn syntax_errors_give_a_position() {
    let error = error_after("seed = 7", "seed = = 7");
    let ScenarioError::Syntax { line, source_name, .. } = error else { panic!("expected Syntax, got {error:?}") };
    assert_eq!((source_name.as_str(), line), ("full.toml", at(FULL, "seed = 7").0));
}

#[test]
fn an_unknown_key_is_named_with_its_position() {
    let text = FULL.replacen("duration = ", "durration = ", 1);
    let error = load(&text, "full.toml", &[]).unwrap_err();
    assert!(error
        .to_string()
        .starts_with(&format!("full.toml:{}:1: run.durration: unknown field", at(&text, "durration").0)));
    expect_at(error, "run.durration", &text, "durration", "unknown field `durration`");
}

#[test]
fn a_missing_key_points_at_its_table() {
    let text = FULL.replacen("rate = \"10Mbps\"\n", "", 1);
    let error = load(&text, "full.toml", &[]).unwrap_err();
    // The third [[links]] header.
    let header = text.match_indices("[[links]]").nth(2).unwrap().0;
    let ((key, line, column), message) = invalid(error);
    assert_eq!((key.as_str(), line, column), ("links[2].rate", location::line_column(&text, header).0, 1));
    assert_eq!(message, "missing field `rate`");
}

#[test]
fn wrong_types_and_unknown_words_are_named() {
    let text = FULL.replacen("max_th = 180", "max_th = \"lots\"", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "qdiscs.bottleneck.max_th",
        &text,
        "max_th = \"lots\"",
        "expected f64",
    );
    let text = FULL.replacen("kind = \"fifo\"", "kind = \"fifi\"", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "qdiscs.edge.kind",
        &text,
        "kind = \"fifi\"",
        "unknown variant `fifi`",
    );
}

#[test]
fn max_th_below_min_th_is_reported_at_max_th() {
    let text = FULL.replacen("max_th = 180", "max_th = 50", 1);
    let error = load(&text, "full.toml", &[]).unwrap_err();
    expect_at(error, "qdiscs.bottleneck.max_th", &text, "max_th = 50", "max_th (50) must be greater than min_th (60)");
}

#[test]
fn a_zero_or_misspelt_rate_is_reported() {
    let text = FULL.replacen("\"10Mbps\"", "\"0Mbps\"", 1);
    expect_at(load(&text, "f", &[]).unwrap_err(), "links[2].rate", &text, "rate = \"0Mbps\"", "must be positive");
    let text = FULL.replacen("\"10Mbps\"", "\"10Mbs\"", 1);
    let ((key, ..), message) = invalid(load(&text, "f", &[]).unwrap_err());
    assert_eq!(key, "links[2].rate");
    assert_eq!(message, "\"10Mbs\" is not a rate; expected a number and a unit such as 10Mbps, 64kbps, 1Gbps");
    let text = FULL.replacen("delay = \"10ms\"", "delay = 10", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "links[2].delay",
        &text,
        "delay = 10",
        "has no unit; expected a time",
    );
}

#[test]
fn a_flow_between_unconnected_hosts_is_reported_at_to() {
    let text = FULL
        .replacen("hosts = [\"s1\", \"s2\", \"d1\"]", "hosts = [\"s1\", \"s2\", \"d1\", \"d9\"]", 1)
        .replacen("to = \"d1\"\nclass = \"be\"", "to = \"d9\"\nclass = \"be\"", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "traffic[1].to",
        &text,
        "to = \"d9\"",
        "d9 cannot be reached from s2",
    );
    let text = FULL.replacen("to = \"d1\"\nclass = \"be\"", "to = \"d9\"\nclass = \"be\"", 1);
    let ((key, ..), message) = invalid(load(&text, "f", &[]).unwrap_err());
    assert_eq!((key.as_str(), message.as_str()), ("traffic[1].to", "d9 is not a node; nodes are s1, s2, d1, r1, r2"));
}

/// Scopes are named "a->b", so a node name must not contain `->`.
#[test]
fn node_names_must_not_contain_an_arrow() {
    let text = FULL.replacen("routers = [\"r1\", \"r2\"]", "routers = [\"r1\", \"r2\", \"x->y\"]", 1);
    expect_at(load(&text, "f", &[]).unwrap_err(), "nodes.routers[2]", &text, "\"x->y\"", "must not contain `->`");
}

/// Hosts do not forward: a host in the middle of a pinned path is refused,
/// and a host reachable only through another host is unreachable.
#[test]
fn hosts_do_not_forward() {
    let extra_link = "[[links]]\nbetween = [\"s2\", \"s1\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\n[[traffic]]";
    let text = FULL.replacen("[[traffic]]", extra_link, 1).replacen(
        "start = \"1s\"",
        "start = \"1s\"\npath = [\"s2\", \"s1\", \"r1\", \"r2\", \"d1\"]",
        1,
    );
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "traffic[1].path[1]",
        &text,
        "\"s1\", \"r1\", \"r2\", \"d1\"]",
        "s1 is a host; hosts do not forward",
    );
    let beyond_a_host = "[[links]]\nbetween = [\"d1\", \"d9\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\n[[traffic]]";
    let text = FULL
        .replacen("hosts = [\"s1\", \"s2\", \"d1\"]", "hosts = [\"s1\", \"s2\", \"d1\", \"d9\"]", 1)
        .replacen("[[traffic]]", beyond_a_host, 1)
        .replacen("to = \"d1\"\nclass = \"be\"", "to = \"d9\"\nclass = \"be\"", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "traffic[1].to",
        &text,
        "to = \"d9\"",
        "d9 cannot be reached from s2 through routers (hosts do not forward)",
    );
    // A link straight between two hosts needs no forwarding.
    let text = FULL.replacen("[[traffic]]", beyond_a_host, 1).replacen(
        "hosts = [\"s1\", \"s2\", \"d1\"]",
        "hosts = [\"s1\", \"s2\", \"d1\", \"d9\"]",
        1,
    );
    let text = text.replacen("from = \"s2\"\nto = \"d1\"", "from = \"d9\"\nto = \"d1\"", 1);
    load(&text, "f", &[]).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn an_unknown_class_is_reported() {
    let text = FULL.replacen("class = \"ef\"", "class = \"af11\"", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "traffic[0].class",
        &text,
        "class = \"af11\"",
        "af11 is not a class; classes are be, ef",
    );
    let text = FULL.replacen("classes = [\"ef\"]", "classes = [\"ef\", \"be\"]", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "qdiscs.prio.queues[1].classes[0]",
        &text,
        "\"be\"]\nbuffer = \"shared\"",
        "already in queue voice",
    );
}

#[test]
fn a_pinned_path_must_follow_links() {
    let text = FULL.replacen("path = [\"s1\", \"r1\", \"r2\", \"d1\"]", "path = [\"s1\", \"r1\", \"d1\"]", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "traffic[0].path[2]",
        &text,
        "\"d1\"]",
        "r1 and d1 are not joined by a link",
    );
    let text = FULL.replacen("path = [\"s1\", \"r1\", \"r2\", \"d1\"]", "path = [\"s1\", \"r1\", \"r2\"]", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "traffic[0].path[2]",
        &text,
        "\"r2\"]",
        "must end at the destination d1",
    );
}

#[test]
fn keys_of_another_kind_are_rejected() {
    let text = FULL.replacen("limit = \"64KB\"", "limit = \"64KB\"\nmin_th = 3", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "qdiscs.edge.min_th",
        &text,
        "min_th = 3",
        "does not apply to a fifo qdisc, which takes: limit",
    );
    let text = FULL.replacen("rate = \"2Mbps\"", "rate = \"2Mbps\"\ninterval = \"1ms\"", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "traffic[2].interval",
        &text,
        "interval = \"1ms\"",
        "either rate or interval",
    );
}

#[test]
fn other_invalid_values_are_reported() {
    // (text replaced, replacement, key, where the error points, message).
    let cases = [
        ("warmup = \"10s\"", "warmup = \"200s\"", "run.warmup", "warmup", "shorter than the duration"),
        ("ef = 46", "ef = 0", "classes.ef", "ef = 0", "already used by class be"),
        ("ef = 46", "ef = 64", "classes.ef", "ef = 64", "out of range"),
        ("routers = [\"r1\", \"r2\"]", "routers = [\"r1\", \"s1\"]", "nodes.routers[1]", "\"s1\"]", "already a node"),
        (
            "qdisc = \"edge\"",
            "qdisc = \"egde\"",
            "links[1].qdisc",
            "qdisc = \"egde\"",
            "egde is not a qdisc; qdiscs defined under [qdiscs] are bottleneck, edge, prio",
        ),
        (
            "between = [\"r2\", \"d1\"]",
            "between = [\"r1\", \"s1\"]",
            "links[3].between",
            "between = [\"r1\", \"s1\"]",
            "already joined by links[0]",
        ),
        (
            "between = [\"r2\", \"d1\"]",
            "between = [\"d1\"]",
            "links[3].between",
            "between = [\"d1\"]",
            "exactly two nodes",
        ),
        (
            "between = [\"r2\", \"d1\"]",
            "between = [\"r2\", \"r2\"]",
            "links[3].between[1]",
            "\"r2\"]",
            "two different nodes",
        ),
        ("from = \"s1\"", "from = \"r1\"", "traffic[0].from", "from = \"r1\"", "r1 is a router"),
        ("count = 10", "count = 0", "traffic[0].count", "count = 0", "at least 1"),
        (
            "packet_size = \"82B\"",
            "packet_size = \"70KB\"",
            "traffic[0].packet_size",
            "packet_size = \"70KB\"",
            "between 1 B and 65535 B",
        ),
        ("stop = \"90s\"", "stop = \"1s\"", "traffic[1].stop", "stop = \"1s\"", "must be before stop"),
        (
            "name = \"bulk\"",
            "name = \"voip\"",
            "traffic[1].name",
            "name = \"voip\"\nkind = \"pareto",
            "already the name of traffic[0]",
        ),
        (
            "buffer = \"small\"",
            "buffer = \"tiny\"",
            "qdiscs.prio.queues[0].buffer",
            "buffer = \"tiny\"",
            "tiny is not a buffer of this qdisc; buffers are shared, small",
        ),
        (
            "limit = \"10pkt\"",
            "limit = \"0pkt\"",
            "qdiscs.prio.buffers[1].limit",
            "limit = \"0pkt\"",
            "must be positive",
        ),
        ("w_q = 0.01", "w_q = 2", "qdiscs.prio.buffers[0].w_q", "w_q = 2", "w_q must be in (0, 1]"),
        ("off_mean = \"6s\"", "off_mean = \"0s\"", "traffic[0].off_mean", "off_mean = \"0s\"", "must be positive"),
    ];
    for (from, to, key, needle, message_part) in cases {
        let text = FULL.replacen(from, to, 1);
        expect_at(load(&text, "f", &[]).expect_err(to), key, &text, needle, message_part);
    }
    let text = FULL.replacen("off_mean = \"50ms\"", "off_mean = \"50ms\"\nshape = 1", 1);
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "traffic[1].shape",
        &text,
        "shape = 1",
        "shape must be greater than 1",
    );
}

#[test]
fn a_missing_kind_specific_key_is_named() {
    let text = FULL.replacen("on_mean = \"50ms\"\n", "", 1);
    let ((key, ..), message) = invalid(load(&text, "f", &[]).unwrap_err());
    assert_eq!((key.as_str(), message.as_str()), ("traffic[1].on_mean", "a pareto_onoff source needs `on_mean`"));
    let text = FULL.replacen("min_th = 60\n", "", 1);
    let ((key, ..), _) = invalid(load(&text, "f", &[]).unwrap_err());
    assert_eq!(key, "qdiscs.bottleneck.min_th");
}

#[test]
fn overrides_change_values() {
    let scenario =
        load_full(&["qdiscs.bottleneck.max_p=0.2", "links[0].rate=5Mbps", "links.1.delay = \"2ms\"", "run.seed=3"])
            .unwrap();
    let BufferPolicy::Red(red) = &scenario.links[2].qdisc_ba.buffers[0].policy else { panic!("not RED") };
    assert_eq!(red.max_p, 0.2);
    assert_eq!(scenario.links[0].rate_bps, 5_000_000);
    assert_eq!(scenario.links[1].delay, Time::from_millis(2));
    assert_eq!(scenario.run.seed, 3);
    // A new key in an existing table is validated like the file.
    assert_eq!(load_full(&["traffic[2].count=4"]).unwrap().groups[2].count, 4);
    let ((key, ..), message) = invalid(load_full(&["run.durration=5s"]).unwrap_err());
    assert_eq!(key, "run.durration");
    assert!(message.starts_with("unknown field `durration`"), "{message}");
}

/// `~path` removes a key, so its default applies; a removed key the
/// scenario needs is reported as missing.
#[test]
fn a_tilde_override_removes_a_key() {
    let scenario = load_full(&["~run.warmup", "~run.seed"]).unwrap();
    assert_eq!((scenario.run.warmup, scenario.run.seed), (Time::ZERO, 1)); // the file: 10 s, seed 7
    assert!(load_full(&["~run.duration"]).is_err());
    match load_full(&["~run.nothing"]) {
        Err(ScenarioError::Override { assignment, message }) => {
            assert_eq!(assignment, "~run.nothing");
            assert!(message.contains("`run` has no key `nothing` to remove"), "{message}");
        }
        other => panic!("expected an Override error, got {other:?}"),
    }
}

#[test]
fn an_invalid_override_value_says_it_came_from_the_command_line() {
    let ((key, line, _), message) = invalid(load_full(&["links[2].rate=10Mbs"]).unwrap_err());
    assert_eq!((key.as_str(), line), ("links[2].rate", at(FULL, "rate = \"10Mbps\"").0));
    assert!(message.ends_with("(value set by --set)"), "{message}");
}

#[test]
fn bad_override_paths_are_override_errors() {
    for (assignment, message_part) in [
        ("links[9].rate=1Mbps", "past its end"),
        ("nothing.here=1", "not create tables"),
        ("run.seed.x=1", "not a table"),
        ("run=1", "is a table"),
        ("links[x].rate=1", "bad path"),
        ("links[0].rate", "expected path=value"),
    ] {
        match load_full(&[assignment]) {
            Err(ScenarioError::Override { assignment: a, message }) => {
                assert_eq!(a, assignment);
                assert!(message.contains(message_part), "{assignment}: {message}");
            }
            other => panic!("{assignment}: expected an Override error, got {other:?}"),
        }
    }
}

proptest! {
    /// No text, and no override, makes `load` panic.
    #[test]
    fn load_never_panics(text in "\\PC*", assignment in "\\PC*|[a-z_.0-9\\[\\]]{1,24}=[a-zA-Z0-9\". \\[\\]]{0,8}") {
        let _ = load(&text, "p.toml", &[]);
        let _ = load(FULL, "p.toml", &[assignment]);
    }

    /// Mutations of a valid file (a character replaced) never panic either.
    #[test]
    fn mutated_scenarios_never_panic(position in 0..FULL.len(), replacement in "[\\[\\]\"=.,0-9a-z_ \n-]{0,3}") {
        let mut text = FULL.to_owned();
        if text.is_char_boundary(position) && text.is_char_boundary(position + 1) {
            text.replace_range(position..position + 1, &replacement);
        }
        let _ = load(&text, "p.toml", &[]);
    }
}

/// `FULL` with one more traffic group appended.
fn with_traffic(extra: &str) -> String {
    format!("{FULL}\n[[traffic]]\nname = \"extra\"\nfrom = \"s1\"\nto = \"d1\"\nclass = \"be\"\n{extra}")
}

#[test]
fn a_tcp_group_takes_its_profile_and_overrides() {
    let text = with_traffic(
        "kind = \"tcp\"\ncount = 4\nstart_jitter = \"1s\"\nprofile = \"ns2\"\nvariant = \"sack\"\nwindow = 100\n\
         delayed_ack = true\nmin_rto = \"1s\"\napp = \"files\"\nfile_size = \"100KB\"\nfile_size_dist = \"pareto\"\nshape = 1.2\n\
         think_time = \"500ms\"\ntrace = true",
    );
    let scenario = load(&text, "f", &[]).unwrap();
    let group = scenario.groups.last().unwrap();
    assert_eq!((group.count, group.start_jitter), (4, Time::from_secs(1)));
    let Transport::Tcp(tcp) = &group.transport else { panic!("not TCP") };
    let expected = crate::tcp::TcpConfig {
        variant: crate::tcp::Variant::Sack,
        window: 100,
        delayed_ack: true,
        min_rto: Time::from_secs(1),
        ..crate::tcp::TcpConfig::ns2()
    };
    assert_eq!(tcp.config, expected);
    assert!(tcp.trace);
    assert_eq!(
        tcp.app,
        crate::apps::AppModel::Files {
            size: crate::apps::SizeDist::Pareto { mean: 100_000, shape: 1.2 },
            think: Some(Time::from_millis(500)),
            new_connection: false,
        }
    );
}

/// `ns2_2004` is ns-2's TCP with the defaults of 2001–2004: the packet,
/// window and Limited Transmit defaults of `ns2`, RTO bounds 1 s and
/// 100000 s, initial RTO 6 s, the window halved to whole segments; keys
/// still override it.
#[test]
fn the_ns2_2004_profile_has_that_era_s_timers() {
    let scenario = load(&with_traffic("kind = \"tcp\"\nprofile = \"ns2_2004\"\nmss = \"460B\""), "f", &[]).unwrap();
    let Transport::Tcp(tcp) = &scenario.groups.last().unwrap().transport else { panic!("not TCP") };
    let expected = crate::tcp::TcpConfig {
        mss: 460,
        min_rto: Time::from_secs(1),
        initial_rto: Time::from_secs(6),
        max_rto: Time::from_secs(100_000),
        whole_segment_halving: true,
        ..crate::tcp::TcpConfig::ns2()
    };
    assert_eq!(tcp.config, expected);
    assert_eq!(crate::tcp::TcpConfig::profile("ns2_2004"), Some(crate::tcp::TcpConfig { mss: 1000, ..expected }));
}

/// `ns3` is ns-3's `TcpSocketBase` with `TcpNewReno` and its default
/// attributes (not an alias of `linux`); its window is the 128 KiB socket
/// buffers in segments of whatever `mss` the group sets, unless `window`
/// is set too.
#[test]
fn the_ns3_profile_is_ns3_s_defaults_with_a_window_of_128_kib() {
    use crate::tcp::{PartialAckTimer, Rules, TcpConfig, Variant};
    let ns3 = TcpConfig::ns3();
    let expected = TcpConfig {
        variant: Variant::NewReno,
        mss: 536,
        header: 52,
        initial_window: 10,
        initial_ssthresh: None,
        window: 244,
        dupthresh: 3,
        min_rto: Time::from_secs(1),
        max_rto: Time::from_secs(60),
        initial_rto: Time::from_secs(1),
        granularity: Time::from_millis(1),
        delayed_ack: true,
        delack_timeout: Time::from_millis(200),
        rules: Rules::Ns3,
        partial_ack_timer: PartialAckTimer::Impatient,
        limited_transmit: true,
        whole_segment_halving: false,
        timestamps: true,
        ack_ends_backoff: false,
        slow_start_restart: false,
        byte_counting: false,
        ecn: false,
    };
    assert_eq!(ns3, expected);
    assert_eq!(TcpConfig::profile("ns3"), Some(expected.clone()));
    assert_ne!(TcpConfig::profile("ns3"), TcpConfig::profile("linux"));
    let config = |extra: &str| {
        let scenario = load(&with_traffic(&format!("kind = \"tcp\"\nprofile = \"ns3\"\n{extra}")), "f", &[]).unwrap();
        let Transport::Tcp(tcp) = &scenario.groups.last().unwrap().transport else { panic!("not TCP") };
        tcp.config.clone()
    };
    assert_eq!(config(""), expected);
    assert_eq!(config("mss = \"1448B\"").window, 131_072 / 1448);
    assert_eq!(config("mss = \"1448B\"\nwindow = 500").window, 500);
}

/// `limited_transmit` (RFC 3042) is on in `ns2`, `ns2_2004` and `ns3`, off
/// in `linux` and `stcp`; `whole_segment_halving` (ns-2's `precisionReduce_
/// false`) on in `ns2_2004` only. A group may set either; the second only
/// under ns-2's rules, where a sender reads it.
#[test]
fn limited_transmit_and_whole_segment_halving_are_tcp_keys() {
    use crate::tcp::TcpConfig;
    for (name, limited, halving) in [
        ("ns2", true, false),
        ("ns2_2004", true, true),
        ("linux", false, false),
        ("ns3", true, false),
        ("stcp", false, false),
    ] {
        let profile = TcpConfig::profile(name).unwrap();
        assert_eq!((profile.limited_transmit, profile.whole_segment_halving), (limited, halving), "{name}");
    }
    let config = |extra: &str| {
        let scenario = load(&with_traffic(&format!("kind = \"tcp\"\n{extra}")), "f", &[]).unwrap();
        let Transport::Tcp(tcp) = &scenario.groups.last().unwrap().transport else { panic!("not TCP") };
        tcp.config.clone()
    };
    let set = config("profile = \"ns2_2004\"\nlimited_transmit = false\nwhole_segment_halving = false");
    assert_eq!(set, TcpConfig { limited_transmit: false, whole_segment_halving: false, ..TcpConfig::ns2_2004() });
    assert!(config("profile = \"linux\"\nlimited_transmit = true").limited_transmit);
    assert!(config("whole_segment_halving = true").whole_segment_halving);
    let err =
        load(&with_traffic("kind = \"tcp\"\nprofile = \"ns3\"\nwhole_segment_halving = true"), "f", &[]).unwrap_err();
    assert!(err.to_string().contains("whole_segment_halving") && err.to_string().contains("ns-2's rules"), "{err}");
    let err = load(
        &with_traffic("kind = \"cbr\"\npacket_size = \"100B\"\nrate = \"1Mbps\"\nlimited_transmit = true"),
        "f",
        &[],
    )
    .unwrap_err();
    assert!(err.to_string().contains("only to kind = \"tcp\""), "{err}");
}

/// `slow_start_restart` (RFC 5681 §4.1, ns-2's `slow_start_restart_`) is off
/// in every profile and on when a group asks.
#[test]
fn slow_start_restart_is_a_tcp_key() {
    use crate::tcp::TcpConfig;
    for name in ["ns2", "ns2_2004", "linux", "ns3"] {
        assert!(!TcpConfig::profile(name).unwrap().slow_start_restart, "{name}");
    }
    let scenario = load(&with_traffic("kind = \"tcp\"\nslow_start_restart = true"), "f", &[]).unwrap();
    let Transport::Tcp(tcp) = &scenario.groups.last().unwrap().transport else { panic!("not TCP") };
    assert!(tcp.config.slow_start_restart);
    let err = load(
        &with_traffic("kind = \"cbr\"\npacket_size = \"100B\"\nrate = \"1Mbps\"\nslow_start_restart = true"),
        "f",
        &[],
    )
    .unwrap_err();
    assert!(err.to_string().contains("only to kind = \"tcp\""), "{err}");
}

/// `new_connection` belongs to the files application: off unless asked,
/// refused with a bulk application, naming the key.
#[test]
fn new_connection_is_a_files_key() {
    let files = "kind = \"tcp\"\napp = \"files\"\nfile_size = \"10KB\"";
    let scenario = load(&with_traffic(&format!("{files}\nnew_connection = true")), "f", &[]).unwrap();
    let Transport::Tcp(tcp) = &scenario.groups.last().unwrap().transport else { panic!("not TCP") };
    assert!(matches!(tcp.app, crate::apps::AppModel::Files { new_connection: true, .. }));
    let scenario = load(&with_traffic(files), "f", &[]).unwrap();
    let Transport::Tcp(tcp) = &scenario.groups.last().unwrap().transport else { panic!("not TCP") };
    assert!(matches!(tcp.app, crate::apps::AppModel::Files { new_connection: false, .. }));
    let err = load(&with_traffic("kind = \"tcp\"\nnew_connection = true"), "f", &[]).unwrap_err();
    assert!(err.to_string().contains("new_connection"), "{err}");
}

#[test]
fn tcp_phases_parse_in_order() {
    let text = with_traffic(
        "kind = \"tcp\"\napp = \"phases\"\nphases = [{ from = \"0s\", mode = \"greedy\" }, \
         { from = \"10s\", mode = \"chunks\", chunk = \"8KB\", pause = \"175ms\" }]",
    );
    let scenario = load(&text, "f", &[]).unwrap();
    let Transport::Tcp(tcp) = &scenario.groups.last().unwrap().transport else { panic!() };
    assert_eq!(
        tcp.app,
        crate::apps::AppModel::Phases(vec![
            (Time::ZERO, crate::apps::PhaseMode::Greedy),
            (Time::from_secs(10), crate::apps::PhaseMode::Chunks { chunk: 8000, pause: Time::from_millis(175) }),
        ])
    );
    let text = with_traffic(
        "kind = \"tcp\"\napp = \"phases\"\nphases = [{ from = \"0s\", mode = \"greedy\" }, { from = \"0s\", mode = \"greedy\" }]",
    );
    assert!(invalid(load(&text, "f", &[]).unwrap_err()).1.contains("increasing order"));
}

#[test]
fn tcp_and_udp_keys_do_not_mix() {
    let text = with_traffic("kind = \"tcp\"\npacket_size = \"1000B\"");
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "traffic[3].packet_size",
        &text,
        "packet_size = \"1000B\"",
        "mss + header",
    );
    let text = with_traffic("kind = \"cbr\"\npacket_size = \"100B\"\nrate = \"1Mbps\"\nwindow = 20");
    expect_at(load(&text, "f", &[]).unwrap_err(), "traffic[3].window", &text, "window = 20", "only to kind = \"tcp\"");
    let text = with_traffic("kind = \"tcp\"\nfile_size = \"10KB\"");
    expect_at(
        load(&text, "f", &[]).unwrap_err(),
        "traffic[3].file_size",
        &text,
        "file_size = \"10KB\"",
        "bulk application",
    );
    let text = with_traffic("kind = \"tcp\"\nwindow = 0");
    expect_at(load(&text, "f", &[]).unwrap_err(), "traffic[3].window", &text, "window = 0", "at least 1 segment");
}

#[test]
fn loss_elements_and_extra_delay_on_links() {
    let text = FULL.replacen("rate = \"10Mbps\"", "rate = \"10Mbps\"\nloss_forward = 0.01\nextra_delay = \"5ms\"", 1);
    let scenario = load(&text, "f", &[]).unwrap();
    let link = &scenario.links[2];
    assert_eq!((link.loss_ab, link.loss_ba, link.delay), (0.01, 0.0, Time::from_millis(15)));
    let text = FULL.replacen("rate = \"10Mbps\"", "rate = \"10Mbps\"\nloss_reverse = 1.5", 1);
    expect_at(load(&text, "f", &[]).unwrap_err(), "links[2].loss_reverse", &text, "loss_reverse = 1.5", "[0, 1)");
}

/// `FULL` with one more qdisc appended (it need not be used by a link).
fn with_qdisc(extra: &str) -> Result<Scenario, ScenarioError> {
    load(&format!("{FULL}\n[qdiscs.extra]\n{extra}"), "f", &[])
}

#[test]
fn every_dropper_is_a_qdisc_kind_and_a_buffer_policy() {
    for (kind, keys) in [
        ("wred", "limit = \"100pkt\"\ngreen = { min_th = 40, max_th = 70, max_p = 0.02 }\nyellow = { min_th = 25, max_th = 50, max_p = 0.1 }\nred = { min_th = 10, max_th = 30, max_p = 0.2 }"),
        ("rio_c", "limit = \"100pkt\"\ngreen = { min_th = 40, max_th = 70, max_p = 0.02 }\nyellow = { min_th = 25, max_th = 50, max_p = 0.1 }\nred = { min_th = 10, max_th = 30, max_p = 0.2 }\nw_q = 0.01"),
        ("adaptive_red", "limit = \"100pkt\"\nmin_th = 20\nmax_th = 60\ninterval = \"500ms\""),
        ("codel", "target = \"5ms\"\ninterval = \"100ms\"\ncount_reuse = \"ns2\""),
        ("pie", "target = \"15ms\"\nt_update = \"15ms\"\nalpha = 0.125\nbeta = 1.25"),
    ] {
        with_qdisc(&format!("kind = \"{kind}\"\n{keys}")).unwrap_or_else(|e| panic!("{kind}: {e}"));
        with_qdisc(&format!("kind = \"classful\"\n[[qdiscs.extra.buffers]]\nname = \"b\"\npolicy = \"{kind}\"\n{}\n[[qdiscs.extra.queues]]\nname = \"q\"\nbuffer = \"b\"", keys))
            .unwrap_or_else(|e| panic!("{kind} buffer: {e}"));
    }
    let err = with_qdisc("kind = \"codel\"\nmin_th = 3").unwrap_err();
    assert!(invalid(err).1.contains("does not apply to a codel qdisc"));
    let err = with_qdisc("kind = \"wred\"\nlimit = \"100pkt\"\ngreen = { min_th = 40, max_th = 70, max_p = 0.02 }")
        .unwrap_err();
    assert!(invalid(err).1.contains("needs `yellow`"));
    let err = with_qdisc("kind = \"codel\"\ntarget = \"200ms\"").unwrap_err();
    assert!(invalid(err).1.contains("interval"), "CoDel's interval must exceed its target");
}

#[test]
fn schedulers_take_their_per_queue_parameters() {
    let two_queues = |scheduler: &str, q0: &str, q1: &str| {
        format!(
            "kind = \"classful\"\n{scheduler}\n[[qdiscs.extra.buffers]]\nname = \"b\"\npolicy = \"droptail\"\nlimit = \"50pkt\"\n\
             [[qdiscs.extra.queues]]\nname = \"ef\"\nclasses = [\"ef\"]\nbuffer = \"b\"\n{q0}\n\
             [[qdiscs.extra.queues]]\nname = \"be\"\nbuffer = \"b\"\n{q1}"
        )
    };
    let use_it = |text: String| -> Result<QdiscConfig, ScenarioError> {
        let full = format!("{FULL}\n[qdiscs.extra]\n{text}").replacen(
            "qdisc_forward = \"prio\"",
            "qdisc_forward = \"extra\"",
            1,
        );
        load(&full, "f", &[]).map(|s| s.links[2].qdisc_ab.clone())
    };
    let wfq = use_it(two_queues("scheduler = \"wfq\"", "weight = 3", "weight = 1")).unwrap();
    assert_eq!(wfq.scheduler, SchedulerKind::Wfq { weights: vec![3.0, 1.0] });
    let drr = use_it(two_queues("scheduler = \"drr\"", "quantum = \"1500B\"", "quantum = \"500B\"")).unwrap();
    assert_eq!(drr.scheduler, SchedulerKind::Drr { quanta: vec![1500, 500] });
    let vc = use_it(two_queues("scheduler = \"virtual_clock\"", "rate = \"2Mbps\"", "rate = \"8Mbps\"")).unwrap();
    assert_eq!(vc.scheduler, SchedulerKind::VirtualClock { rates: vec![2_000_000, 8_000_000] });
    let capped =
        use_it(two_queues("scheduler = \"capped_priority\"\ncap_rate = \"1Mbps\"\ncap_depth = \"3000B\"", "", ""))
            .unwrap();
    assert_eq!(capped.scheduler, SchedulerKind::CappedPriority { rate_bps: 1_000_000, depth: 3000 });
    let err = use_it(two_queues("scheduler = \"wrr\"", "weight = 1.5", "weight = 1")).unwrap_err();
    assert!(invalid(err).1.contains("whole number"));
    let err = use_it(two_queues("scheduler = \"wfq\"", "weight = 1", "")).unwrap_err();
    assert!(invalid(err).1.contains("needs `weight` on every queue"));
    let err = use_it(two_queues("scheduler = \"priority\"", "quantum = \"1B\"", "")).unwrap_err();
    assert!(invalid(err).1.contains("does not apply to the priority scheduler"));
}

/// A weight or `s` that is not positive and finite is reported at the key
/// written (`queues[1].weight`), not at the qdisc as "`phi` of queue 1".
#[test]
fn per_queue_weights_are_reported_where_written() {
    let two_queues = |scheduler: &str, q0: &str, q1: &str| {
        shared_buffer(&format!("scheduler = \"{scheduler}\""), "policy = \"droptail\"\nlimit = \"50pkt\"", q0, q1)
    };
    for (scheduler, key, q1) in [
        ("wfq", "weight", "weight = inf"),
        ("wf2q_plus", "weight", "weight = nan"),
        ("scfq", "weight", "weight = 0"),
        ("bpr", "s", "s = inf"),
        ("dwfq", "s", "s = -1"),
    ] {
        let text = two_queues(scheduler, &format!("{key} = 1"), q1);
        let ((at, _, _), message) = invalid(load(&text, "f", &[]).unwrap_err());
        assert_eq!(at, format!("qdiscs.extra.queues[1].{key}"), "{scheduler}: {message}");
        let value = q1.split(" = ").nth(1).unwrap();
        assert_eq!(message, format!("{key} must be positive and finite, got {value}"), "{scheduler}");
    }
}

/// Values in messages are in the scenario's units, never Rust's debug form
/// (`Time(10000000000)`, `Window(0)`).
#[test]
fn messages_give_values_in_scenario_units() {
    let text = with_traffic("kind = \"tcp\"\nmin_rto = \"10s\"\nmax_rto = \"1.5s\"");
    let ((key, _, _), message) = invalid(load(&text, "f", &[]).unwrap_err());
    assert_eq!((key.as_str(), message.as_str()), ("traffic[3].min_rto", "min_rto (10s) exceeds max_rto (1.5s)"));
    let err = load(
        &shared_buffer("", "policy = \"droptail\"\nlimit = \"50pkt\"\nplr = 0", "sigma = 1", "sigma = 1"),
        "f",
        &[],
    )
    .unwrap_err();
    let message = invalid(err).1;
    assert!(message.ends_with("got 0"), "{message}");
    let err = with_qdisc("kind = \"codel\"\ntarget = \"200ms\"").unwrap_err();
    assert_eq!(invalid(err).1, "interval (100ms) must be greater than target (200ms)");
    let text = FULL.replacen("warmup = \"10s\"", "warmup = \"100.5s\"", 1);
    let message = invalid(load(&text, "f", &[]).unwrap_err()).1;
    assert_eq!(message, "the warmup (100.5s) must be shorter than the duration (100s)");
}

/// Inputs that would exhaust memory are refused at validation, at the key
/// responsible, with the estimate and the limit (issue 11).
#[test]
fn runs_that_would_exhaust_memory_are_refused() {
    let refused = |text: &str, key: &str, part: &str| {
        let ((at, _, _), message) = invalid(load(text, "f", &[]).unwrap_err());
        assert_eq!(at, key, "{message}");
        assert!(message.contains(part) && message.contains("run.memory_limit (4GiB)"), "{message}");
    };
    // A sample every nanosecond for 100 s: 10^11 samples.
    let text = FULL.replacen("sample_interval = \"100ms\"", "sample_interval = \"1ns\"", 1);
    refused(&text, "run.sample_interval", "100000000000 samples");
    // A time series the memory could hold, but 10^8 samples are events too.
    let text = FULL.replacen("sample_interval = \"100ms\"", "sample_interval = \"100us\"\nsample_scopes = []", 1);
    load(&text, "f", &[]).unwrap_or_else(|e| panic!("{e}"));
    let text = FULL.replacen("sample_interval = \"100ms\"", "sample_interval = \"100ns\"\nsample_scopes = []", 1);
    let ((at, _, _), message) = invalid(load(&text, "f", &[]).unwrap_err());
    assert_eq!(at, "run.sample_interval");
    assert!(message.contains("1000000000 samples, more than the 100000000 a run may take"), "{message}");
    // A TCP window of 2^32 − 1 segments sent at once.
    let tcp = "kind = \"tcp\"\ninitial_window = 4294967295\nwindow = 4294967295";
    refused(&with_traffic(tcp), "traffic[3].initial_window", "4294967295 segments");
    // The same initial window under ns-2's window of 20 segments is harmless.
    load(&with_traffic("kind = \"tcp\"\ninitial_window = 4294967295"), "f", &[]).unwrap_or_else(|e| panic!("{e}"));
    // Ten million flows.
    let udp = "kind = \"cbr\"\npacket_size = \"100B\"\nrate = \"1kbps\"\ncount = 10_000_000";
    refused(&with_traffic(udp), "traffic[3].count", "10000000 flows");
    // The limit is the user's to raise.
    let raised = with_traffic(udp).replacen("seed = 7", "seed = 7\nmemory_limit = \"16GiB\"", 1);
    load(&raised, "f", &[]).unwrap_or_else(|e| panic!("{e}"));
    let zero = FULL.replacen("seed = 7", "seed = 7\nmemory_limit = \"0B\"", 1);
    let ((at, _, _), message) = invalid(load(&zero, "f", &[]).unwrap_err());
    assert_eq!((at.as_str(), message.as_str()), ("run.memory_limit", "the memory limit must be positive"));
}

#[test]
fn sample_scopes_name_existing_scopes() {
    let with = |scopes: &str| {
        load(
            &FULL.replace(
                "sample_interval = \"100ms\"",
                &format!("sample_interval = \"100ms\"\nsample_scopes = {scopes}"),
            ),
            "f",
            &[],
        )
    };
    let run = with("[\"end-to-end\", \"r1->r2\"]").unwrap().run;
    assert!(run.samples("r1->r2") && run.samples("end-to-end") && !run.samples("r2->r1"));
    let ((key, _, _), message) = invalid(with("[\"r1->r2\", \"r2->s9\"]").unwrap_err());
    assert_eq!(key, "run.sample_scopes[1]");
    assert!(message.contains("neither"), "{message}");
    let no_interval =
        load(&FULL.replace("sample_interval = \"100ms\"", "sample_scopes = [\"r1->r2\"]"), "f", &[]).unwrap_err();
    assert!(invalid(no_interval).1.contains("set run.sample_interval too"));
}

#[test]
fn poisson_sources_take_a_mean_rate_and_nothing_else() {
    let stream =
        "kind = \"cbr\"\nfrom = \"s2\"\nto = \"d1\"\nclass = \"be\"\npacket_size = \"1000B\"\nrate = \"2Mbps\"";
    assert!(FULL.contains(stream));
    let poisson = stream.replace("\"cbr\"", "\"poisson\"");
    let s = load(&FULL.replace(stream, &poisson), "f", &[]).unwrap();
    assert_eq!(s.groups[2].transport, Transport::Udp(SourceModel::Poisson { packet_size: 1000, rate_bps: 2_000_000 }));
    let err = load(&FULL.replace(stream, &format!("{poisson}\non_mean = \"1s\"")), "f", &[]).unwrap_err();
    assert!(invalid(err).1.contains("`on_mean` does not apply to a poisson source"));
    let err = load(&FULL.replace(stream, &poisson.replace("\nrate = \"2Mbps\"", "")), "f", &[]).unwrap_err();
    assert!(invalid(err).1.contains("a poisson source needs `rate`"));
}

#[test]
fn delay_ratios_name_a_scope_two_classes_and_timescales() {
    let with = |ratios: &str| load(&FULL.replace("seed = 7", &format!("seed = 7\ndelay_ratios = {ratios}")), "f", &[]);
    let run = with(
        r#"[{ scope = "r1->r2", numerator = "be", denominator = "ef", timescales = ["4ms", "0.4s"] },
            { scope = "end-to-end", numerator = "ef", denominator = "be", timescales = ["90s"] }]"#,
    )
    .unwrap()
    .run;
    let r1r2 = DelayRatioDef {
        scope: "r1->r2".into(),
        direction: Some((3, 4)),
        numerator: 0,
        denominator: 1,
        timescales: vec![Time::from_millis(4), Time::from_millis(400)],
    };
    let e2e = DelayRatioDef {
        scope: "end-to-end".into(),
        direction: None,
        numerator: 1,
        denominator: 0,
        timescales: vec![Time::from_secs(90)],
    };
    assert_eq!(run.delay_ratios, vec![r1r2, e2e]);
    // The reverse direction of a link is a scope too.
    assert_eq!(
        with(r#"[{ scope = "r2->r1", numerator = "be", denominator = "ef", timescales = ["1s"] }]"#)
            .unwrap()
            .run
            .delay_ratios[0]
            .direction,
        Some((4, 3))
    );
    let cases = [
        (
            r#"[{ scope = "r1->d1", numerator = "be", denominator = "ef", timescales = ["1s"] }]"#,
            "run.delay_ratios[0].scope",
            "neither",
        ),
        (
            r#"[{ scope = "r1->r2", numerator = "af", denominator = "ef", timescales = ["1s"] }]"#,
            "run.delay_ratios[0].numerator",
            "not a class; classes: be, ef",
        ),
        (
            r#"[{ scope = "r1->r2", numerator = "ef", denominator = "ef", timescales = ["1s"] }]"#,
            "run.delay_ratios[0].denominator",
            "same class",
        ),
        (
            r#"[{ scope = "r1->r2", numerator = "be", denominator = "ef", timescales = [] }]"#,
            "run.delay_ratios[0].timescales",
            "at least one",
        ),
        (
            r#"[{ scope = "r1->r2", numerator = "be", denominator = "ef", timescales = ["1s", "0s"] }]"#,
            "run.delay_ratios[0].timescales[1]",
            "must be positive",
        ),
        (
            r#"[{ scope = "r1->r2", numerator = "be", denominator = "ef", timescales = ["91s"] }]"#,
            "run.delay_ratios[0].timescales[0]",
            "longer than the measured period",
        ),
        (
            r#"[{ scope = "r1->r2", numerator = "be", denominator = "ef", timescales = ["1s", "1000ms"] }]"#,
            "run.delay_ratios[0].timescales[1]",
            "listed twice",
        ),
        (
            r#"[{ scope = "r1->r2", numerator = "be", denominator = "ef", timescales = ["1s"] }, { scope = "r1->r2", numerator = "be", denominator = "ef", timescales = ["2s"] }]"#,
            "run.delay_ratios[1]",
            "run.delay_ratios[0] already measures",
        ),
    ];
    for (ratios, key, needle) in cases {
        let ((got, line, _), message) = invalid(with(ratios).unwrap_err());
        assert_eq!(got, key, "{ratios}: {message}");
        assert!(line > 0, "{key} is located");
        assert!(message.contains(needle), "{key}: {message}");
    }
    let unknown =
        with(r#"[{ scope = "r1->r2", numerator = "be", denominator = "ef", timescale = ["1s"] }]"#).unwrap_err();
    assert!(invalid(unknown).1.contains("unknown field `timescale`"));
}

/// A classful qdisc "extra" on r1->r2 with a shared buffer "b" (extra keys
/// `buffer_keys`) holding queues tcp and udp (extra keys `q0`, `q1`).
fn shared_buffer(qdisc_keys: &str, buffer_keys: &str, q0: &str, q1: &str) -> String {
    format!(
        "{FULL}\n[qdiscs.extra]\nkind = \"classful\"\n{qdisc_keys}\n[[qdiscs.extra.buffers]]\nname = \"b\"\n{buffer_keys}\n\
         [[qdiscs.extra.queues]]\nname = \"tcp\"\nbuffer = \"b\"\n{q0}\n\
         [[qdiscs.extra.queues]]\nname = \"udp\"\nclasses = [\"ef\"]\nbuffer = \"b\"\n{q1}"
    )
    .replacen("qdisc_forward = \"prio\"", "qdisc_forward = \"extra\"", 1)
}

#[test]
fn buffers_choose_their_victims_with_plr_or_plc() {
    use phb::aqm::plc::PlcParams;
    use phb::aqm::plr::PlrMemory;
    use phb::queue::Victim;
    let red = "policy = \"red\"\nlimit = \"250pkt\"\nmin_th = 60\nmax_th = 180";
    let victim = |text: String| load(&text, "f", &[]).map(|s| s.links[2].qdisc_ab.buffers[0].victim.clone());
    let plc = victim(shared_buffer("scheduler = \"bpr\"\ndelta = 8", &format!("{red}\nplc = true"), "", "")).unwrap();
    assert_eq!(plc, Victim::Plc { x: PlcParams::DEFAULT_X });
    let plc =
        victim(shared_buffer("scheduler = \"bpr_plus\"\ndelta = 8", &format!("{red}\nplc = true\nplc_x = 2"), "", ""))
            .unwrap();
    assert_eq!(plc, Victim::Plc { x: 2.0 });
    let plr = victim(shared_buffer(
        "scheduler = \"wtp\"\ndelta = 4",
        &format!("{red}\nplr = 1000"),
        "sigma = 1",
        "sigma = 4",
    ))
    .unwrap();
    assert_eq!(plr, Victim::Plr { sigma: vec![1.0, 4.0], memory: PlrMemory::Window(1000) });
    let plr = victim(shared_buffer(
        "",
        "policy = \"droptail\"\nlimit = \"50pkt\"\nplr = \"infinite\"",
        "sigma = 2",
        "sigma = 1",
    ))
    .unwrap();
    assert_eq!(plr, Victim::Plr { sigma: vec![2.0, 1.0], memory: PlrMemory::Infinite });
    assert_eq!(victim(shared_buffer("", red, "", "")).unwrap(), Victim::Arrival);

    for (qdisc_keys, buffer_keys, q0, key, message) in [
        ("scheduler = \"wtp\"\ndelta = 8", format!("{red}\nplc = true"), "", "buffers[0].plc", "bpr"),
        (
            "scheduler = \"bpr\"\ndelta = 8",
            "policy = \"droptail\"\nlimit = \"50pkt\"\nplc = true".to_string(),
            "",
            "buffers[0].plc",
            "red",
        ),
        ("scheduler = \"bpr\"\ndelta = 8", format!("{red}\nplc_x = 2"), "", "buffers[0].plc_x", "plc = true"),
        (
            "scheduler = \"bpr\"\ndelta = 8",
            format!("{red}\nplc = true\nplc_x = -1"),
            "",
            "buffers[0].plc_x",
            "positive",
        ),
        ("scheduler = \"bpr\"\ndelta = 8", format!("{red}\nplc = true\nplr = 10"), "", "buffers[0].plr", "not both"),
        ("", format!("{red}\nplr = 0"), "sigma = 1", "buffers[0].plr", "M >= 1"),
        ("", format!("{red}\nplr = \"forever\""), "sigma = 1", "buffers[0].plr", "infinite"),
        ("", format!("{red}\nplr = 10"), "sigma = 1", "queues[1]", "give `sigma`"),
        ("", format!("{red}\nplr = 10"), "sigma = 0", "queues[0].sigma", "positive"),
        ("", red.to_string(), "sigma = 1", "queues[0].sigma", "applies to the queues of a buffer with `plr`"),
        ("", "policy = \"codel\"\nplr = 10".to_string(), "sigma = 1", "buffers[0].plr", "CoDel drops at dequeue"),
    ] {
        let err = victim(shared_buffer(qdisc_keys, &buffer_keys, q0, "")).unwrap_err();
        let ((at, _, _), text) = invalid(err);
        assert!(at.ends_with(key) && text.contains(message), "{buffer_keys}: {at}: {text}");
    }
    // PLC's δ is s of the UDP queue over s of the TCP queue, at least 1.
    let err =
        victim(shared_buffer("scheduler = \"bpr\"", &format!("{red}\nplc = true"), "s = 4", "s = 1")).unwrap_err();
    assert!(invalid(err).1.contains("delta must be finite and >= 1"));
}

#[test]
fn proportional_delay_schedulers_take_s_or_delta() {
    let two_queues = |qdisc_keys: &str, q0: &str, q1: &str| {
        shared_buffer(qdisc_keys, "policy = \"droptail\"\nlimit = \"50pkt\"", q0, q1)
    };
    let scheduler = |text: String| load(&text, "f", &[]).map(|s| s.links[2].qdisc_ab.scheduler.clone());
    for (word, kind) in [
        ("bpr", SchedulerKind::Bpr { s: vec![1.0, 8.0] }),
        (
            "bpr_plus",
            SchedulerKind::BprPlus { s: vec![1.0, 8.0], residual: phb::sched::ResidualBacklog::WithOwnPacket },
        ),
        ("bpr_plus_fluid", SchedulerKind::BprPlusFluid { s: vec![1.0, 8.0] }),
        ("wtp", SchedulerKind::Wtp { s: vec![1.0, 8.0] }),
        ("pad", SchedulerKind::Pad { s: vec![1.0, 8.0] }),
        ("mdp", SchedulerKind::Mdp { s: vec![1.0, 8.0] }),
        ("dwfq", SchedulerKind::Dwfq { s: vec![1.0, 8.0] }),
        ("beds", SchedulerKind::Beds { s: vec![1.0, 8.0], unit: phb::sched::BacklogUnit::Bytes }),
    ] {
        let by_delta = scheduler(two_queues(&format!("scheduler = \"{word}\"\ndelta = 8"), "", "")).unwrap();
        assert_eq!(by_delta, kind, "{word} with delta");
        let by_s = scheduler(two_queues(&format!("scheduler = \"{word}\""), "s = 1", "s = 8")).unwrap();
        assert_eq!(by_s, kind, "{word} with s");
    }
    let err = scheduler(two_queues("scheduler = \"bpr\"\ndelta = 8", "s = 1", "")).unwrap_err();
    assert!(invalid(err).1.contains("when the qdisc gives `delta`"));
    let err = scheduler(two_queues("scheduler = \"wtp\"", "s = 1", "")).unwrap_err();
    assert!(invalid(err).1.contains("needs `s` on every queue"));
    let err = scheduler(two_queues("scheduler = \"wfq\"\ndelta = 8", "weight = 1", "weight = 1")).unwrap_err();
    assert!(invalid(err).1.contains("`delta` does not apply to the wfq scheduler"));
    let err = scheduler(two_queues("scheduler = \"pad\"\ndelta = 0", "", "")).unwrap_err();
    let ((key, _, _), message) = invalid(err);
    assert!(key.ends_with("extra.delta") && message.contains("positive"), "{key}: {message}");
    let err = scheduler(two_queues("scheduler = \"mdp\"", "s = 1", "s = -2")).unwrap_err();
    assert!(invalid(err).1.contains("must be positive"));
    let three = two_queues("scheduler = \"bpr\"\ndelta = 4", "", "").replace(
        "[[qdiscs.extra.queues]]\nname = \"udp\"",
        "[[qdiscs.extra.queues]]\nname = \"x\"\nbuffer = \"b\"\n[[qdiscs.extra.queues]]\nname = \"udp\"",
    );
    assert!(invalid(scheduler(three).unwrap_err()).1.contains("exactly two queues"));
    // Fluid BPR⁺ is defined for two queues, with `s` as well as `delta`;
    // `residual_backlog` is the heuristic's.
    let three_s = two_queues("scheduler = \"bpr_plus_fluid\"", "s = 1", "s = 4").replace(
        "[[qdiscs.extra.queues]]\nname = \"udp\"",
        "[[qdiscs.extra.queues]]\nname = \"x\"\nbuffer = \"b\"\ns = 2\n[[qdiscs.extra.queues]]\nname = \"udp\"",
    );
    let ((key, _, _), message) = invalid(scheduler(three_s).unwrap_err());
    assert!(
        key.ends_with("extra.queues") && message.contains("bpr_plus_fluid scheduler is defined for two queues"),
        "{key}: {message}"
    );
    let err =
        scheduler(two_queues("scheduler = \"bpr_plus_fluid\"\ndelta = 8\nresidual_backlog = \"bytes_ahead\"", "", ""))
            .unwrap_err();
    assert!(invalid(err).1.contains("only to scheduler = \"bpr_plus\", not bpr_plus_fluid"));
}

/// BPR⁺'s `residual_backlog` (what eq. 19's q_k counts): the default, the
/// other reading, and every mistake named at its key.
#[test]
fn bpr_plus_takes_its_reading_of_the_residual_term() {
    use phb::sched::ResidualBacklog;
    let scheduler = |qdisc_keys: &str| {
        let text = shared_buffer(qdisc_keys, "policy = \"droptail\"\nlimit = \"50pkt\"", "", "");
        load(&text, "f", &[]).map(|s| s.links[2].qdisc_ab.scheduler.clone())
    };
    for (key, residual) in [
        ("", ResidualBacklog::WithOwnPacket),
        ("residual_backlog = \"with_own_packet\"", ResidualBacklog::WithOwnPacket),
        ("residual_backlog = \"bytes_ahead\"", ResidualBacklog::BytesAhead),
    ] {
        let kind = scheduler(&format!("scheduler = \"bpr_plus\"\ndelta = 8\n{key}")).unwrap();
        assert_eq!(kind, SchedulerKind::BprPlus { s: vec![1.0, 8.0], residual }, "{key}");
    }
    for (qdisc_keys, message) in [
        (
            "scheduler = \"bpr\"\ndelta = 8\nresidual_backlog = \"bytes_ahead\"",
            "only to scheduler = \"bpr_plus\", not bpr",
        ),
        ("scheduler = \"bpr_plus\"\ndelta = 8\nresidual_backlog = \"ahead\"", "unknown variant `ahead`"),
    ] {
        let ((key, _, _), got) = invalid(scheduler(qdisc_keys).unwrap_err());
        assert!(key.ends_with("extra.residual_backlog") && got.contains(message), "{key}: {got}");
    }
}

#[test]
fn conditioners_are_validated_with_their_meters() {
    let conditioner = |meter: &str, green: &str| {
        format!(
            "{FULL}\n[conditioners.edge]\n[[conditioners.edge.rules]]\nname = \"c\"\nmatch = {{ src = [\"s1\"], protocol = \"udp\" }}\n{meter}\n{green}\n"
        )
        .replacen("qdisc = \"edge\"", "qdisc = \"edge\"\nconditioner_forward = \"edge\"", 1)
    };
    let ok = conditioner(
        "meter = { kind = \"trtcm\", cir = \"1Mbps\", cbs = \"3KB\", pir = \"2Mbps\", pbs = \"6KB\" }",
        "green = \"EF\"\nyellow = \"pass\"\nred = \"drop\"",
    );
    let scenario = load(&ok, "f", &[]).unwrap();
    assert!(scenario.links.iter().any(|l| l.conditioner_ab.is_some()));
    let text =
        conditioner("meter = { kind = \"trtcm\", cir = \"2Mbps\", cbs = \"3KB\", pir = \"1Mbps\", pbs = \"6KB\" }", "");
    let ((key, _, _), message) = invalid(load(&text, "f", &[]).unwrap_err());
    assert!(key.ends_with("rules[0].meter.pir"), "{key}");
    assert!(message.contains("PIR") && message.contains("CIR"), "{message}");
    let text = conditioner("", "green = \"AF21\"");
    assert!(invalid(load(&text, "f", &[]).unwrap_err()).1.contains("not the codepoint of a class"));
    let text = conditioner("", "green = \"AF99\"");
    assert!(invalid(load(&text, "f", &[]).unwrap_err()).1.contains("AF11"), "the message lists valid names");
}

/// BEDS (Firoiu, Zhang & Guo 2001): the backlog-weighted WFQ with its unit,
/// and a UDP buffer coupled to the TCP buffer's RED by `policy =
/// "loss_ratio"`; every mistake named at its key.
#[test]
fn beds_schedules_by_backlog_and_couples_a_buffer_to_a_red() {
    use phb::aqm::loss_ratio::{LossRatioParams, Reading};
    use phb::sched::BacklogUnit;
    let red = "policy = \"red\"\nlimit = \"3000pkt\"\nmin_th = 50\nmax_th = 2000\nmax_p = 0.03";
    let two_buffers = |qdisc_keys: &str, udp_keys: &str| {
        shared_buffer(qdisc_keys, red, "", "")
            .replace(
                "[[qdiscs.extra.queues]]\nname = \"tcp\"",
                &format!("[[qdiscs.extra.buffers]]\nname = \"u\"\n{udp_keys}\n[[qdiscs.extra.queues]]\nname = \"tcp\""),
            )
            .replace(
                "name = \"udp\"\nclasses = [\"ef\"]\nbuffer = \"b\"",
                "name = \"udp\"\nclasses = [\"ef\"]\nbuffer = \"u\"",
            )
    };
    let qdisc = |text: String| load(&text, "f", &[]).map(|s| s.links[2].qdisc_ab.clone());
    let coupled = "policy = \"loss_ratio\"\nreads = \"b\"\nlambda = 4\nlimit = \"200pkt\"";
    let q = qdisc(two_buffers("scheduler = \"beds\"\ndelta = 2\nbacklog_unit = \"packets\"", coupled)).unwrap();
    assert_eq!(q.scheduler, SchedulerKind::Beds { s: vec![1.0, 2.0], unit: BacklogUnit::Packets });
    assert_eq!(
        q.buffers[1].policy,
        BufferPolicy::LossRatio(LossRatioParams {
            lambda: 4.0,
            reads: 0,
            limit: Limit::Packets(200),
            reading: Reading::Spaced
        })
    );
    let q = qdisc(two_buffers("", &format!("{coupled}\nreading = \"curve\""))).unwrap();
    assert!(matches!(&q.buffers[1].policy, BufferPolicy::LossRatio(p) if p.reading == Reading::Curve));
    assert_eq!(q.scheduler, SchedulerKind::StrictPriority);

    for (qdisc_keys, udp_keys, key, message) in [
        (
            "scheduler = \"wfq\"\nbacklog_unit = \"bytes\"",
            "policy = \"droptail\"\nlimit = \"10pkt\"",
            "extra.backlog_unit",
            "only to scheduler = \"beds\"",
        ),
        (
            "scheduler = \"beds\"\ndelta = 2\nbacklog_unit = \"frames\"",
            "policy = \"droptail\"\nlimit = \"10pkt\"",
            "extra.backlog_unit",
            "unknown variant `frames`",
        ),
        ("scheduler = \"beds\"", "policy = \"droptail\"\nlimit = \"10pkt\"", "queues[0]", "needs `s` on every queue"),
        (
            "",
            "policy = \"loss_ratio\"\nreads = \"x\"\nlambda = 2\nlimit = \"10pkt\"",
            "buffers[1].reads",
            "x is not a buffer of this qdisc; buffers are b, u",
        ),
        (
            "",
            "policy = \"loss_ratio\"\nreads = \"u\"\nlambda = 2\nlimit = \"10pkt\"",
            "buffers[1].reads",
            "cannot read itself",
        ),
        (
            "",
            "policy = \"loss_ratio\"\nreads = \"b\"\nlambda = -2\nlimit = \"10pkt\"",
            "buffers[1].lambda",
            "finite and >= 0",
        ),
        ("", "policy = \"loss_ratio\"\nreads = \"b\"\nlimit = \"10pkt\"", "buffers[1].lambda", "needs `lambda`"),
        ("", "policy = \"loss_ratio\"\nreads = \"b\"\nlambda = 2", "buffers[1].limit", "needs `limit`"),
        ("", "policy = \"loss_ratio\"\nlambda = 2\nlimit = \"10pkt\"", "buffers[1].reads", "needs `reads`"),
        (
            "",
            "policy = \"loss_ratio\"\nreads = \"b\"\nlambda = 2\nlimit = \"10pkt\"\nmin_th = 3",
            "buffers[1].min_th",
            "does not apply to a loss_ratio buffer",
        ),
        (
            "",
            "policy = \"droptail\"\nlimit = \"10pkt\"\nlambda = 2",
            "buffers[1].lambda",
            "only to `policy = \"loss_ratio\"`",
        ),
        (
            "",
            "policy = \"loss_ratio\"\nreads = \"b\"\nlambda = 2\nlimit = \"10pkt\"\nreading = \"mean\"",
            "buffers[1].reading",
            "unknown variant `mean`",
        ),
    ] {
        let err = qdisc(two_buffers(qdisc_keys, udp_keys)).unwrap_err();
        let (at, text) = match err {
            ScenarioError::Invalid { key, message, .. } => (key, message),
            other => (String::new(), other.to_string()),
        };
        assert!((at.is_empty() || at.ends_with(key)) && text.contains(message), "{udp_keys}: {at}: {text}");
    }
    // A loss_ratio cannot read a buffer RED does not manage.
    let text = shared_buffer("", "policy = \"droptail\"\nlimit = \"50pkt\"", "", "").replace(
        "[[qdiscs.extra.queues]]\nname = \"tcp\"",
        "[[qdiscs.extra.buffers]]\nname = \"u\"\npolicy = \"loss_ratio\"\nreads = \"b\"\nlambda = 2\nlimit = \"10pkt\"\n[[qdiscs.extra.queues]]\nname = \"tcp\"",
    );
    let ((at, _, _), message) = invalid(load(&text, "f", &[]).unwrap_err());
    assert!(at.ends_with("buffers[1].reads") && message.contains("not managed by RED"), "{at}: {message}");
}

/// The VoIP source: the paper's G.723.1 frames (82 bytes with Ethernet, 64
/// without) every 30 ms, ON 3 s, OFF 6 s by default.
#[test]
fn voip_sources_carry_their_codec_frames() {
    let source = |keys: &str| {
        load(&with_traffic(&format!("kind = \"voip\"\n{keys}")), "f", &[])
            .map(|s| s.groups.last().unwrap().transport.clone())
    };
    assert_eq!(
        source("").unwrap(),
        Transport::Udp(SourceModel::Voip {
            packet_size: 82,
            interval: Time::from_millis(30),
            on_mean: Time::from_secs(3),
            off_mean: Time::from_secs(6)
        })
    );
    assert_eq!(
        source("codec = \"g711\"\nlink_layer = \"none\"\non_mean = \"1s\"").unwrap(),
        Transport::Udp(SourceModel::Voip {
            packet_size: 200,
            interval: Time::from_millis(20),
            on_mean: Time::from_secs(1),
            off_mean: Time::from_secs(6)
        })
    );
    for (keys, key, message) in [
        ("packet_size = \"100B\"", "traffic[3].packet_size", "does not apply to a voip source"),
        ("rate = \"64kbps\"", "traffic[3].rate", "does not apply to a voip source"),
        ("burst = 3", "traffic[3].burst", "does not apply to a voip source"),
        ("off = \"1s\"", "traffic[3].off", "does not apply to a voip source"),
        ("codec = \"g722\"", "traffic[3].codec", "unknown variant `g722`"),
        ("off_mean = \"0s\"", "traffic[3].off_mean", "must be positive"),
        ("window = 20", "traffic[3].window", "only to kind = \"tcp\""),
    ] {
        let err = source(keys).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(key) && text.contains(message), "{keys}: {text}");
    }
    let err =
        load(&with_traffic("kind = \"cbr\"\npacket_size = \"82B\"\nrate = \"1Mbps\"\ncodec = \"g711\""), "f", &[])
            .unwrap_err();
    assert!(err.to_string().contains("`codec` does not apply to a cbr source"), "{err}");
    let err = load(&with_traffic("kind = \"tcp\"\nlink_layer = \"none\""), "f", &[]).unwrap_err();
    assert!(err.to_string().contains("`link_layer` applies only to UDP sources"), "{err}");
    let err = load(&with_traffic("kind = \"voip\"\ncount = 3\nschedule = [{ at = \"0s\", count = 2 }]"), "f", &[])
        .unwrap_err();
    assert!(err.to_string().contains("traffic[3].count") && err.to_string().contains("exclude each other"), "{err}");
}

/// A small ATM network: an F-GCRA conditioner on the edge link and F-RED
/// under Ex-VC on the backbone, both on AAL5 links.
const ATM: &str = r#"
name = "atm"
[run]
duration = "10s"
[classes]
af1 = 10
af4 = 34
af1_out = 14
[nodes]
hosts = ["s", "d"]
routers = ["r", "sw"]
[conditioners.sla]
[[conditioners.sla.rules]]
name = "af1"
match = { classes = ["af1"] }
meter = { kind = "fgcra", rate = "5Mbps", tau = "10ms" }
red = "AF13"
[qdiscs.phb]
kind = "classful"
scheduler = "exvc"
regulate_every = 2
default_queue = "af1"
buffers = [{ name = "head", policy = "fred", limit = "2000cells", min_th = 400, max_th = 950 }]
queues = [{ name = "af1", classes = ["af1", "af1_out"], buffer = "head", q = 1 }, { name = "af4", classes = ["af4"], buffer = "head", q = 4 }]
[[links]]
between = ["s", "r"]
rate = "100Mbps"
delay = "1ms"
[[links]]
between = ["r", "sw"]
rate = "100Mbps"
delay = "1ms"
framing = "aal5"
conditioner_forward = "sla"
[[links]]
between = ["sw", "d"]
rate = "10Mbps"
delay = "5ms"
framing = "aal5"
qdisc = "phb"
[[traffic]]
name = "t"
kind = "tcp"
from = "s"
to = "d"
class = "af1"
profile = "stcp"
"#;

#[test]
fn an_atm_scenario_parses_into_framing_exvc_fred_and_fgcra() {
    let s = load(ATM, "atm.toml", &[]).unwrap();
    assert_eq!(
        (s.links[0].framing, s.links[1].framing, s.links[2].framing),
        (phb::Framing::None, phb::Framing::AAL5, phb::Framing::AAL5)
    );
    let q = &s.links[2].qdisc_ab;
    assert_eq!(q.scheduler, SchedulerKind::ExVc { q: vec![1.0, 4.0], k: 2 });
    let BufferPolicy::FRed(fred) = &q.buffers[0].policy else { panic!("not F-RED") };
    assert_eq!(
        (fred.min_th, fred.max_th, fred.limit, fred.max_p, fred.w_q),
        (400.0, 950.0, Limit::Cells(2000), 0.02, 0.002)
    );
    let conditioner = s.links[1].conditioner_ab.as_ref().expect("a conditioner");
    assert!(conditioner.counts_cells());
    let Transport::Tcp(tcp) = &s.groups[0].transport else { panic!("not TCP") };
    assert_eq!((tcp.config.window, tcp.config.mss, tcp.config.granularity), (44, 1460, Time::from_millis(50)));
}

#[test]
fn atm_mistakes_are_reported_at_their_keys() {
    // (text replaced, replacement, the key the error names (a prefix), message).
    let cases = [
        (
            "delay = \"5ms\"\nframing = \"aal5\"",
            "delay = \"5ms\"",
            "links[2].qdisc",
            "set framing = \"aal5\" on this link",
        ),
        ("delay = \"1ms\"\nframing = \"aal5\"", "delay = \"1ms\"", "links[1].conditioner_forward", "counts ATM cells"),
        ("regulate_every = 2", "regulate_every = 0", "qdiscs.phb.regulate_every", "at least 1"),
        ("buffer = \"head\", q = 4", "buffer = \"head\"", "qdiscs.phb.queues[1]", "`q`"),
        ("max_th = 950", "max_th = 300", "qdiscs.phb.buffers[0]", "max_th (300) must be greater than min_th (400)"),
        ("tau = \"10ms\"", "tau = \"10\"", "conditioners.sla.rules[0].meter.tau", "no unit"),
        ("limit = \"2000cells\"", "limit = \"2000.5cells\"", "qdiscs.phb.buffers[0].limit", "whole number of cells"),
    ];
    for (from, to, key, message_part) in cases {
        assert!(ATM.contains(from), "{from:?}");
        let text = ATM.replacen(from, to, 1);
        let ((k, ..), message) = invalid(load(&text, "f", &[]).expect_err(to));
        assert!(k.starts_with(key), "{to}: key {k}, message {message}");
        assert!(message.contains(message_part), "{to}: {message:?} should contain {message_part:?}");
    }
}

const TWAM_DWRED: &str = include_str!("../../../../scenarios/examples/twam-dwred.toml");

/// `TWAM_DWRED` with `from` replaced by `to`, and its error.
fn twam_error(from: &str, to: &str) -> (String, ScenarioError) {
    assert!(TWAM_DWRED.contains(from), "{from:?} is not in the example");
    let text = TWAM_DWRED.replacen(from, to, 1);
    let err = load(&text, "twam-dwred.toml", &[]).expect_err("the edited scenario should be rejected");
    (text, err)
}

#[test]
fn an_lsp_parses_into_its_twam_and_the_dwred_channel() {
    use phb::mark::WindowSum;
    let s = load(TWAM_DWRED, "twam-dwred.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    let [lsp] = &s.lsps[..] else { panic!("one LSP expected") };
    assert_eq!((lsp.name.as_str(), lsp.twam.alpha, lsp.twam.packet_size), ("af", 2, 1000));
    assert_eq!(lsp.twam.rtt_lsp, Time::from_millis(100));
    assert_eq!(lsp.twam.r, vec![1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    assert_eq!((lsp.window, lsp.marker, lsp.twam.window_sum), (WindowInput::Cwnd, LspMarker::Twam, WindowSum::Cwnd));
    assert_eq!(lsp.marks, (10, 14));
    assert_eq!(lsp.members, vec![vec![0], vec![1], vec![2], vec![3]]);
    let BufferPolicy::Dwred(d) = &s.links[1].qdisc_ab.buffers[0].policy else { panic!("a dwred buffer") };
    assert_eq!(
        (d.channel, d.b, d.thresholds.max_th, d.thresholds.min_th, d.thresholds.max_p),
        (Some(0), 0.15, 125.0, 18.75, 0.1)
    );
    let passive =
        load(TWAM_DWRED, "t.toml", &["lsps.af.window=\"passive\"".into(), "lsps.af.marker=\"tsw2cm\"".into()]).unwrap();
    assert_eq!(passive.lsps[0].window, WindowInput::Passive);
    assert_eq!(passive.lsps[0].marker, LspMarker::Tsw2cm { win_length: Time::from_secs(1) });
    assert_eq!(d.average_on_signal, phb::aqm::dwred::AverageOnSignal::Keep);
    let reset = load(TWAM_DWRED, "t.toml", &["qdiscs.af.buffers[0].average_on_signal=\"reset\"".into()]).unwrap();
    let BufferPolicy::Dwred(d) = &reset.links[1].qdisc_ab.buffers[0].policy else { panic!("a dwred buffer") };
    assert_eq!(d.average_on_signal, phb::aqm::dwred::AverageOnSignal::Reset);
}

#[test]
fn lsp_errors_are_reported_at_their_key() {
    let (t, e) = twam_error("lsp = \"af\"", "lsp = \"ab\"");
    expect_at(e, "qdiscs.af.buffers[0].lsp", &t, "lsp = \"ab\"", "ab is not an LSP");
    let (t, e) = twam_error("lsp = \"af\"", "lsp = \"af\", average_on_signal = \"zero\"");
    expect_at(
        e,
        "qdiscs.af.buffers[0].average_on_signal",
        &t,
        "average_on_signal = \"zero\"",
        "unknown variant `zero`, expected `keep` or `reset`",
    );
    let (t, e) = twam_error("ingress = \"r1->r2\"", "ingress = \"r2->d\"");
    expect_at(e, "lsps.af.ingress", &t, "ingress = \"r2->d\"", "not a link direction");
    let (t, e) = twam_error("ingress = \"r1->r2\"", "ingress = \"r2->r1\"");
    expect_at(e, "lsps.af.members[0].groups[0]", &t, "\"r1\"], r = \"1Mbps\"", "does not cross the LSP's ingress");
    let (t, e) = twam_error("alpha = 2", "alpha = 0");
    expect_at(e, "lsps.af.alpha", &t, "alpha = 0", "at least 1");
    let (t, e) = twam_error("rtt = \"100ms\"", "rtt = \"0ms\"");
    expect_at(e, "lsps.af.rtt", &t, "rtt = \"0ms\"", "");
    let (t, e) = twam_error("{ groups = [\"r2\"], r = \"2Mbps\" }", "{ groups = [\"r2\"] }");
    expect_at(e, "lsps.af.members[1].r", &t, "{ groups = [\"r2\"] }", "contracted rate");
    let (t, e) = twam_error("groups = [\"r3\"]", "groups = [\"r1\"]");
    expect_at(e, "lsps.af.members[2].groups[0]", &t, "\"r1\"], r = \"3Mbps\"", "already a member");
    let (t, e) = twam_error("groups = [\"r3\"]", "groups = [\"r9\"]");
    expect_at(e, "lsps.af.members[2].groups[0]", &t, "\"r9\"", "r9 is not a traffic group");
    let (t, e) = twam_error("alpha = 2", "alpha = 2\nwindow = \"passive\"\nw_lsp = \"ssthresh\"");
    expect_at(e, "lsps.af.w_lsp", &t, "w_lsp = \"ssthresh\"", "passive");
    let (t, e) = twam_error("alpha = 2", "alpha = 2\nwin_length = \"1s\"");
    expect_at(e, "lsps.af.win_length", &t, "win_length = \"1s\"", "TSW2CM");
    let (t, e) = twam_error("alpha = 2", "alpha = 2\nin = \"AF21\"");
    expect_at(e, "lsps.af.in", &t, "in = \"AF21\"", "not the codepoint of a class");
    let (t, e) = twam_error("max_th = 125,", "max_th = 125, b = 1.5,");
    let ((key, _, _), message) = invalid(e);
    assert!(
        key.starts_with("qdiscs.af.buffers[0]") && message.contains("b must be in (0, 1)"),
        "{key}: {message} ({})",
        t.len()
    );
}

/// Messages that named neither the key nor what it takes (issue 23,
/// item 14).
#[test]
fn messages_name_the_key_and_what_it_takes() {
    let run = "[run]\nduration = \"100s\"\nwarmup = \"10s\"\nseed = 7\nsample_interval = \"100ms\"";
    let ((key, _, _), message) =
        invalid(load(&FULL.replacen(run, "run = [{ duration = \"1s\" }]", 1), "s.toml", &[]).unwrap_err());
    assert_eq!(key, "run");
    assert!(message.contains("[run]"), "{message}");
    let syntax = |text: &str| match load(text, "s.toml", &[]).unwrap_err() {
        ScenarioError::Syntax { message, .. } => message,
        other => panic!("{other:?}"),
    };
    assert!(syntax(&FULL.replacen("seed = 7", "seed = 7\nseed = 8", 1)).contains("duplicate key `seed`"));
    assert!(syntax(&FULL.replacen("[classes]", "[classes]\nbe = 0\n[classes]", 1)).contains("duplicate key `classes`"));
    assert!(syntax(&format!("{}a = 1\n", "a.".repeat(200))).contains("nest deeper than the parser allows"));
    let ((key, _, _), message) =
        invalid(error_after("qdisc_reverse = \"edge\"", "qdisc_reverse = \"edge\"\nframing = true"));
    assert_eq!(key, "links[3].framing");
    assert!(message.contains("expected a string, one of `none`, `aal5`"), "{message}");
}
