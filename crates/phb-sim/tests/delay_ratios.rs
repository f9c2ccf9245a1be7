//! The `delay_ratios` table in real runs: its per-packet ratio is the
//! `classes` table's, its intervals tile the measured period, measuring
//! leaves the simulation untouched (only timer events are added), and end
//! to end it uses queueing delays.

use phb_sim::{load, run, Column, RunOutput, Table};

/// Two bursty classes through one 10 Mb/s FIFO (r -> d), then a second,
/// faster hop; the ratio of `a` to `b` at `r->d` and end to end.
const SCENARIO: &str = r#"
[run]
duration = "30s"
warmup = "5s"
seed = 3

[classes]
a = 0
b = 46

[nodes]
hosts = ["s", "d2"]
routers = ["r", "d"]

[qdiscs.q]
kind = "fifo"
limit = "200pkt"

[[links]]
between = ["s", "r"]
rate = "100Mbps"
delay = "1ms"

[[links]]
between = ["r", "d"]
rate = "10Mbps"
delay = "1ms"
qdisc_forward = "q"

[[links]]
between = ["d", "d2"]
rate = "20Mbps"
delay = "2ms"
qdisc_forward = "q"

[[traffic]]
name = "a"
kind = "pareto_onoff"
from = "s"
to = "d2"
class = "a"
count = 5
packet_size = "500B"
rate = "2Mbps"
on_mean = "50ms"
off_mean = "50ms"
shape = 1.5

[[traffic]]
name = "b"
kind = "pareto_onoff"
from = "s"
to = "d2"
class = "b"
count = 5
packet_size = "300B"
rate = "1.8Mbps"
on_mean = "50ms"
off_mean = "50ms"
shape = 1.5
"#;

const RATIOS: &str = r#"delay_ratios = [
    { scope = "r->d", numerator = "a", denominator = "b", timescales = ["4ms", "400ms", "7s"] },
    { scope = "end-to-end", numerator = "a", denominator = "b", timescales = ["1s"] },
]
"#;

fn go(text: &str) -> RunOutput {
    let scenario = load(text, "ratios.toml", &[]).unwrap();
    run(&scenario, None, &mut |_| {}).unwrap()
}

fn with_ratios() -> String {
    SCENARIO.replace("seed = 3\n", &format!("seed = 3\n{RATIOS}"))
}

fn f64s<'t>(t: &'t Table, name: &str) -> &'t [f64] {
    match t.column(name) {
        Some(Column::F64(v)) => v,
        other => panic!("{name}: {other:?}"),
    }
}

fn u64s<'t>(t: &'t Table, name: &str) -> &'t [u64] {
    match t.column(name) {
        Some(Column::U64(v)) => v,
        other => panic!("{name}: {other:?}"),
    }
}

fn strs<'t>(t: &'t Table, name: &str) -> &'t [String] {
    match t.column(name) {
        Some(Column::Str(v)) => v,
        other => panic!("{name}: {other:?}"),
    }
}

/// `column` of the `classes` row at (scope, class).
fn class_value(out: &RunOutput, scope: &str, class: &str, column: &str) -> f64 {
    let t = out.table("classes").unwrap();
    let (scopes, classes) = (strs(t, "scope"), strs(t, "class"));
    let i = (0..scopes.len()).find(|&i| scopes[i] == scope && classes[i] == class).unwrap();
    f64s(t, column)[i]
}

#[test]
fn per_packet_ratio_is_the_classes_tables_and_intervals_tile_the_period() {
    let out = go(&with_ratios());
    let t = out.table("delay_ratios").unwrap();
    assert_eq!(t.rows(), 4);
    assert_eq!(strs(t, "scope"), ["r->d", "r->d", "r->d", "end-to-end"]);
    assert_eq!(strs(t, "numerator"), ["a"; 4]);
    assert_eq!(strs(t, "denominator"), ["b"; 4]);
    assert_eq!(f64s(t, "timescale_s"), [0.004, 0.4, 7.0, 1.0]);
    // 25 s measured: 6250, 62 and 3 whole intervals (the trailing 4 s of the
    // 7 s timescale are left out), and 25 of 1 s.
    assert_eq!(u64s(t, "intervals"), [6250, 62, 3, 25]);
    let used = u64s(t, "intervals_used");
    assert!(used[0] > 1000 && used[0] < 6250, "{used:?}");
    assert_eq!(&used[1..], [62, 3, 25]);
    let link = class_value(&out, "r->d", "a", "delay_mean_s") / class_value(&out, "r->d", "b", "delay_mean_s");
    let per_packet = f64s(t, "per_packet");
    for p in &per_packet[..3] {
        assert!((p - link).abs() < 1e-9 * link, "{p} vs {link}");
    }
    // The per-interval estimator is another number, and its percentiles
    // are ordered around it.
    let mean = f64s(t, "interval_mean");
    let names = ["interval_p05", "interval_p25", "interval_p50", "interval_p75", "interval_p95"];
    for row in 0..4 {
        let p: Vec<f64> = names.iter().map(|n| f64s(t, n)[row]).collect();
        assert!(p.windows(2).all(|w| w[0] <= w[1]), "row {row}: {p:?}");
        assert!(p[0] <= mean[row] && mean[row] <= p[4], "row {row}: {p:?} {}", mean[row]);
        assert!((mean[row] - per_packet[row]).abs() > 1e-6, "row {row}: the estimators coincide");
    }
}

#[test]
fn end_to_end_ratio_uses_queueing_delays_pooled_over_packets() {
    let out = go(&with_ratios());
    let flows = out.table("flows").unwrap();
    let (class, received, queueing) =
        (strs(flows, "class"), u64s(flows, "received_pkts"), f64s(flows, "queueing_delay_mean_s"));
    let pooled = |c: &str| {
        let rows: Vec<usize> = (0..class.len()).filter(|&i| class[i] == c).collect();
        let n: u64 = rows.iter().map(|&i| received[i]).sum();
        rows.iter().map(|&i| queueing[i] * received[i] as f64).sum::<f64>() / n as f64
    };
    let want = pooled("a") / pooled("b");
    let got = f64s(out.table("delay_ratios").unwrap(), "per_packet")[3];
    assert!((got - want).abs() < 1e-9 * want, "{got} vs {want}");
    // Not the one-way delays of the classes table.
    let one_way =
        class_value(&out, "end-to-end", "a", "delay_mean_s") / class_value(&out, "end-to-end", "b", "delay_mean_s");
    assert!((got - one_way).abs() > 1e-3, "{got} {one_way}");
}

#[test]
fn measuring_ratios_changes_no_other_result() {
    let plain = go(SCENARIO);
    let measured = go(&with_ratios());
    // The meters add only their boundary events, those strictly inside the
    // run: 6249 of 4 ms, 62 of 400 ms, 3 of 7 s, 24 of 1 s (the last 4 ms
    // and 1 s boundaries are the end of the run, where `finish` closes them).
    assert_eq!(measured.events - plain.events, 6249 + 62 + 3 + 24);
    for name in ["classes", "flows", "transfers", "timeseries"] {
        assert_eq!(plain.table(name), measured.table(name), "{name}");
    }
    let empty = plain.table("delay_ratios").unwrap();
    assert_eq!(empty.rows(), 0);
    assert_eq!(empty.columns.len(), measured.table("delay_ratios").unwrap().columns.len());
}
