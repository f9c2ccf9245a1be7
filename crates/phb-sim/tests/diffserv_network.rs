//! DiffServ parts in a network: an edge trTCM splits a customer's traffic
//! into AF11/AF12/AF13 at its committed and peak rates, and a rate-capped
//! EF queue never exceeds its cap, even when it is the only one backlogged
//! (the port sleeps until the token bucket allows the next packet).

use phb_sim::{load, run, Column, RunOutput};

const SCENARIO: &str = r#"
[run]
duration = "20s"
warmup = "2s"

[classes]
af11 = 10
af12 = 12
af13 = 14
ef = 46

[nodes]
hosts = ["c", "v", "d"]
routers = ["edge"]

[conditioners.meter]
[[conditioners.meter.rules]]
name = "customer"
match = { src = ["c"] }
meter = { kind = "trtcm", cir = "2Mbps", cbs = "10KB", pir = "3Mbps", pbs = "10KB" }
green = "AF11"
yellow = "AF12"
red = "AF13"

[qdiscs.out]
kind = "classful"
scheduler = "capped_priority"
cap_rate = "1Mbps"
cap_depth = "2KB"

[[qdiscs.out.buffers]]
name = "ef"
policy = "droptail"
limit = "100pkt"

[[qdiscs.out.buffers]]
name = "af"
policy = "droptail"
limit = "1000pkt"

[[qdiscs.out.queues]]
name = "ef"
classes = ["ef"]
buffer = "ef"

[[qdiscs.out.queues]]
name = "af"
classes = ["af11", "af12", "af13"]
buffer = "af"

[[links]]
between = ["c", "edge"]
rate = "100Mbps"
delay = "1ms"
conditioner_forward = "meter"

[[links]]
between = ["v", "edge"]
rate = "100Mbps"
delay = "1ms"

[[links]]
between = ["edge", "d"]
rate = "100Mbps"
delay = "1ms"
qdisc_forward = "out"

[[traffic]]
name = "customer"
kind = "cbr"
from = "c"
to = "d"
class = "af11"
packet_size = "1000B"
rate = "4Mbps"

[[traffic]]
name = "voice"
kind = "cbr"
from = "v"
to = "d"
class = "ef"
packet_size = "200B"
rate = "3Mbps"
"#;

fn throughput(out: &RunOutput, scope: &str, class: &str) -> f64 {
    let t = out.table("classes").unwrap();
    let (Some(Column::Str(scopes)), Some(Column::Str(classes)), Some(Column::F64(rate))) =
        (t.column("scope"), t.column("class"), t.column("throughput_bps"))
    else {
        panic!()
    };
    let i = (0..scopes.len())
        .find(|&i| scopes[i] == scope && classes[i] == class)
        .unwrap_or_else(|| panic!("{scope} {class}"));
    rate[i]
}

#[test]
fn a_trtcm_splits_a_customer_at_its_committed_and_peak_rates() {
    let out = run(&load(SCENARIO, "ds.toml", &[]).unwrap(), None, &mut |_| {}).unwrap();
    // 4 Mb/s offered: 2 Mb/s within CIR (AF11), 1 Mb/s more within PIR
    // (AF12), 1 Mb/s above it (AF13); the 100 Mb/s link carries all of it.
    for (class, expected) in [("af11", 2e6), ("af12", 1e6), ("af13", 1e6)] {
        let got = throughput(&out, "edge->d", class);
        assert!((got - expected).abs() < 0.01 * expected, "{class}: {got}");
    }
}

#[test]
fn a_rate_capped_ef_queue_keeps_to_its_cap_alone_or_with_others() {
    for overrides in [vec![], vec!["traffic[0].stop=1s".to_string()]] {
        let out = run(&load(SCENARIO, "ds.toml", &overrides).unwrap(), None, &mut |_| {}).unwrap();
        let ef = throughput(&out, "edge->d", "ef");
        // Over 18 s, the cap allows 1 Mb/s plus one 2 KB burst.
        assert!(ef <= 1e6 + 2000.0 * 8.0 / 18.0 + 1.0, "EF {ef} above its cap ({overrides:?})");
        assert!(ef > 0.99e6, "EF {ef} should use its whole cap ({overrides:?})");
    }
}

/// The `conditioners` table's rows of rule `rule` at `scope`: colour ->
/// (action, packets).
fn conditioner_rows(out: &RunOutput, scope: &str, rule: &str) -> Vec<(String, String, u64)> {
    let t = out.table("conditioners").unwrap();
    let (
        Some(Column::Str(scopes)),
        Some(Column::Str(rules)),
        Some(Column::Str(colours)),
        Some(Column::Str(actions)),
        Some(Column::U64(packets)),
    ) = (t.column("scope"), t.column("rule"), t.column("colour"), t.column("action"), t.column("packets"))
    else {
        panic!("the conditioners table's columns")
    };
    (0..scopes.len())
        .filter(|&i| scopes[i] == scope && rules[i] == rule)
        .map(|i| (colours[i].clone(), actions[i].clone(), packets[i]))
        .collect()
}

fn arrivals(out: &RunOutput, scope: &str, class: &str) -> u64 {
    let t = out.table("classes").unwrap();
    let (Some(Column::Str(scopes)), Some(Column::Str(classes)), Some(Column::U64(n))) =
        (t.column("scope"), t.column("class"), t.column("arrivals"))
    else {
        panic!()
    };
    (0..scopes.len()).find(|&i| scopes[i] == scope && classes[i] == class).map_or(0, |i| n[i])
}

#[test]
fn the_conditioners_table_counts_each_colour_and_its_marking() {
    let out = run(&load(SCENARIO, "ds.toml", &[]).unwrap(), None, &mut |_| {}).unwrap();
    let rows = conditioner_rows(&out, "c->edge", "customer");
    let actions: Vec<_> = rows.iter().map(|(c, a, _)| (c.as_str(), a.as_str())).collect();
    assert_eq!(actions, [("green", "mark af11"), ("yellow", "mark af12"), ("red", "mark af13")]);
    // 4 Mb/s of 1000-byte packets over the 18 s measured: 9000 packets, half
    // within CIR, a quarter more within PIR; and what each colour was marked
    // is what arrived at the link's qdisc as that class.
    let total: u64 = rows.iter().map(|r| r.2).sum();
    assert!((8990..=9010).contains(&total), "{rows:?}");
    for ((_, _, n), (class, share)) in rows.iter().zip([("af11", 0.5), ("af12", 0.25), ("af13", 0.25)]) {
        assert_eq!(*n, arrivals(&out, "c->edge", class), "{class}");
        assert!((*n as f64 / total as f64 - share).abs() < 0.01, "{class}: {n} of {total}");
    }
    assert_eq!(conditioner_rows(&out, "c->edge", ""), [(String::new(), "pass".to_owned(), 0)]);
}
