//! Integration tests that run real networks built directly from the
//! validated model (the TOML front end has its own tests), checking numbers
//! that follow from first principles: rates, delays, losses, conservation,
//! determinism and stream independence.

use phb::aqm::red::RedParams;
use phb::aqm::Limit;
use phb::queue::QdiscConfig;
use phb::Time;
use phb_sim::scenario::{
    ClassDef, LinkDef, NodeDef, NodeKind, RunConfig, Scenario, SourceModel, TrafficGroup, Transport,
};
use phb_sim::{run, Column, RunOutput};

fn node(name: &str, kind: NodeKind) -> NodeDef {
    NodeDef { name: name.into(), kind }
}

fn link(a: usize, b: usize, rate_bps: u64, delay: Time, qdisc: QdiscConfig) -> LinkDef {
    LinkDef {
        a,
        b,
        rate_bps,
        delay,
        framing: phb::Framing::None,
        qdisc_ab: qdisc.clone(),
        qdisc_ba: qdisc,
        conditioner_ab: None,
        conditioner_ba: None,
        loss_ab: 0.0,
        loss_ba: 0.0,
    }
}

/// s (0) -- r1 (1) -- r2 (2) -- d (3): access 100 Mb/s 1 ms, bottleneck
/// `bottleneck_bps` 10 ms with `qdisc` on r1's output.
fn dumbbell(
    bottleneck_bps: u64,
    qdisc: QdiscConfig,
    groups: Vec<TrafficGroup>,
    duration: Time,
    warmup: Time,
) -> Scenario {
    let fast = QdiscConfig::fifo(Limit::Packets(1000));
    Scenario {
        name: "test".into(),
        run: RunConfig {
            duration,
            warmup,
            seed: 1,
            sample_interval: None,
            sample_scopes: None,
            delay_ratios: Vec::new(),
        },
        classes: vec![ClassDef { name: "be".into(), codepoint: 0 }, ClassDef { name: "ef".into(), codepoint: 46 }],
        nodes: vec![
            node("s", NodeKind::Host),
            node("r1", NodeKind::Router),
            node("r2", NodeKind::Router),
            node("d", NodeKind::Host),
        ],
        links: vec![
            link(0, 1, 100_000_000, Time::from_millis(1), fast.clone()),
            link(1, 2, bottleneck_bps, Time::from_millis(10), qdisc),
            link(2, 3, 100_000_000, Time::from_millis(1), fast),
        ],
        groups,
        lsps: Vec::new(),
        commands: Vec::new(),
        trace: None,
    }
}

fn group(name: &str, class: usize, count: u32, source: SourceModel) -> TrafficGroup {
    TrafficGroup {
        name: name.into(),
        generator: String::new(),
        count,
        src: 0,
        dst: 3,
        class,
        path: None,
        start: Time::ZERO,
        start_jitter: Time::ZERO,
        stop: Time::MAX,
        windows: None,
        transport: Transport::Udp(source),
    }
}

fn cbr(packet_size: u32, rate_bps: u64) -> SourceModel {
    SourceModel::Cbr { packet_size, interval: Time::transmission(packet_size, rate_bps) }
}

fn pareto(rate_bps: u64) -> SourceModel {
    SourceModel::ParetoOnOff {
        packet_size: 500,
        rate_bps,
        on_mean: Time::from_millis(50),
        off_mean: Time::from_millis(50),
        shape: 1.5,
    }
}

fn value(out: &RunOutput, table: &str, key_column: &str, key: &str, column: &str) -> f64 {
    let t = out.table(table).unwrap();
    let Some(Column::Str(keys)) = t.column(key_column) else { panic!("no key column {key_column}") };
    let rows: Vec<usize> = keys.iter().enumerate().filter(|(_, k)| *k == key).map(|(i, _)| i).collect();
    assert!(!rows.is_empty(), "no row {key} in {table}");
    let i = rows[0];
    match t.column(column).unwrap_or_else(|| panic!("no column {column}")) {
        Column::F64(v) => v[i],
        Column::U64(v) => v[i] as f64,
        Column::Str(_) => panic!("{column} is a string column"),
    }
}

/// The row of `classes` for (scope, class).
fn class_value(out: &RunOutput, scope: &str, class: &str, column: &str) -> f64 {
    let t = out.table("classes").unwrap();
    let (Some(Column::Str(scopes)), Some(Column::Str(classes))) = (t.column("scope"), t.column("class")) else {
        panic!()
    };
    let i = (0..scopes.len())
        .find(|&i| scopes[i] == scope && classes[i] == class)
        .unwrap_or_else(|| panic!("no row {scope}/{class}"));
    match t.column(column).unwrap() {
        Column::F64(v) => v[i],
        Column::U64(v) => v[i] as f64,
        Column::Str(_) => panic!(),
    }
}

fn go(s: &Scenario) -> RunOutput {
    run(s, None, &mut |_| {}).expect("run succeeds")
}

#[test]
fn an_unloaded_path_gives_exact_delay_and_the_offered_rate() {
    // 500-byte packets at 1 Mb/s: 250 packets/s; over 10 s, 2500 packets.
    let s = dumbbell(
        10_000_000,
        QdiscConfig::fifo(Limit::Packets(50)),
        vec![group("cbr", 1, 1, cbr(500, 1_000_000))],
        Time::from_secs(10),
        Time::ZERO,
    );
    let out = go(&s);
    // Delay: three transmissions (40 + 400 + 40 us) and 12 ms of propagation.
    let one_way = 40e-6 + 400e-6 + 40e-6 + 12e-3;
    assert!((class_value(&out, "end-to-end", "ef", "delay_max_s") - one_way).abs() < 1e-6);
    assert!((class_value(&out, "end-to-end", "ef", "delay_mean_s") - one_way).abs() < 1e-9);
    assert_eq!(class_value(&out, "r1->r2", "ef", "delay_max_s"), 0.0);
    assert_eq!(value(&out, "flows", "flow", "cbr", "sent_pkts"), 2500.0);
    // The last packet sent before 10 s is still in flight at the end.
    let received = value(&out, "flows", "flow", "cbr", "received_pkts");
    assert!((2496.0..=2500.0).contains(&received), "received {received}");
    assert!((class_value(&out, "end-to-end", "ef", "throughput_bps") - 1e6).abs() < 0.003e6);
    assert_eq!(value(&out, "flows", "flow", "cbr", "queueing_delay_mean_s"), 0.0);
}

#[test]
fn a_flows_queueing_delay_is_its_waits_in_qdiscs() {
    // One Pareto flow alone at the bottleneck, no warm-up: its packets' waits
    // at r1->r2 are all the queueing they meet (the access links are faster
    // than the sources' peak rate, so they never queue). The flow's mean
    // queueing delay equals the link's mean delay up to the packets still
    // queued or on the wire at the end, and its one-way delay exceeds it by
    // exactly the path's fixed latency.
    let s = dumbbell(
        2_000_000,
        QdiscConfig::fifo(Limit::Packets(200)),
        vec![group("p", 1, 1, pareto(4_000_000))],
        Time::from_secs(30),
        Time::ZERO,
    );
    let out = go(&s);
    let queueing = value(&out, "flows", "flow", "p", "queueing_delay_mean_s");
    let at_link = class_value(&out, "r1->r2", "ef", "delay_mean_s");
    assert!(queueing > 0.01 && (queueing - at_link).abs() < 1e-3 * at_link, "flow {queueing}, link {at_link}");
    let fixed = 40e-6 + 2000e-6 + 40e-6 + 12e-3;
    let one_way = value(&out, "flows", "flow", "p", "delay_mean_s");
    assert!((one_way - queueing - fixed).abs() < 1e-9, "one way {one_way}, queueing {queueing}");
}

#[test]
fn an_overloaded_drop_tail_link_runs_at_its_rate_and_drops_the_excess() {
    // 20 Mb/s offered to 10 Mb/s: half is lost, the link is full.
    let s = dumbbell(
        10_000_000,
        QdiscConfig::fifo(Limit::Packets(50)),
        vec![group("cbr", 0, 2, cbr(1000, 10_000_000))],
        Time::from_secs(20),
        Time::from_secs(2),
    );
    let out = go(&s);
    let throughput = class_value(&out, "r1->r2", "be", "throughput_bps");
    assert!((throughput - 10e6).abs() < 0.001e6, "throughput {throughput}");
    let loss = class_value(&out, "r1->r2", "be", "loss_rate");
    assert!((loss - 0.5).abs() < 0.005, "loss {loss}");
    assert_eq!(class_value(&out, "r1->r2", "be", "dropped"), class_value(&out, "r1->r2", "be", "drop_overflow"));
    // A full 50-packet queue of 1000-byte packets at 10 Mb/s waits 40 ms.
    let p99 = class_value(&out, "r1->r2", "be", "delay_p99_s");
    assert!((p99 - 0.040).abs() < 0.001, "p99 {p99}");
}

fn red_params() -> RedParams {
    RedParams {
        min_th: 60.0,
        max_th: 180.0,
        w_q: 0.002,
        max_p: 0.1,
        limit: Limit::Packets(250),
        ..RedParams::default()
    }
}

/// Long-run fraction of arrivals RED drops when the average stays at `avg`,
/// with the wait option: one over the expected number of arrivals per drop.
fn spaced_drop_rate(p: &RedParams, avg: f64) -> f64 {
    let p_b = if avg < p.max_th {
        p.max_p * (avg - p.min_th) / (p.max_th - p.min_th)
    } else {
        p.max_p + (1.0 - p.max_p) * (avg - p.max_th) / p.max_th
    };
    let (mut survive, mut gap, mut count) = (1.0, 0.0, 1.0);
    while survive > 1e-12 {
        gap += survive;
        let p_a = if count * p_b < 1.0 {
            0.0
        } else if count * p_b < 2.0 {
            p_b / (2.0 - count * p_b)
        } else {
            1.0
        };
        survive *= 1.0 - p_a;
        count += 1.0;
    }
    1.0 / gap
}

/// The average at which RED's spaced drop rate equals `rate` (bisection).
fn average_for_drop_rate(p: &RedParams, rate: f64) -> f64 {
    let (mut low, mut high) = (p.min_th + 1e-9, 2.0 * p.max_th);
    for _ in 0..60 {
        let mid = 0.5 * (low + high);
        if spaced_drop_rate(p, mid) < rate {
            low = mid
        } else {
            high = mid
        }
    }
    0.5 * (low + high)
}

#[test]
fn red_settles_where_its_control_law_drops_the_excess() {
    let mut s = dumbbell(
        10_000_000,
        QdiscConfig::red(red_params()),
        vec![group("cbr", 0, 1, cbr(500, 11_000_000))],
        Time::from_secs(30),
        Time::from_secs(10),
    );
    s.run.sample_interval = Some(Time::from_millis(100));
    let out = go(&s);
    let t = out.table("timeseries").unwrap();
    let (Some(Column::Str(scope)), Some(Column::Str(metric)), Some(Column::F64(v)), Some(Column::F64(time))) =
        (t.column("scope"), t.column("metric"), t.column("value"), t.column("time_s"))
    else {
        panic!()
    };
    let averages: Vec<f64> = (0..v.len())
        .filter(|&i| scope[i] == "r1->r2" && metric[i] == "red_avg" && time[i] >= 10.0)
        .map(|i| v[i])
        .collect();
    assert!(averages.len() >= 190);
    let mean = averages.iter().sum::<f64>() / averages.len() as f64;
    // 10% overload: RED must drop 1/11 of the arrivals. With the wait
    // option, drops are 1/p_b .. 2/p_b arrivals apart, so the average must
    // settle where the spaced drop rate at p_b(avg) is 1/11 — in the gentle
    // region just above max_th.
    let expected = average_for_drop_rate(&red_params(), 1.0 / 11.0);
    assert!((175.0..200.0).contains(&expected), "expected operating point {expected}");
    assert!((mean - expected).abs() < 0.05 * expected, "mean average {mean}, expected {expected}");
    let early = class_value(&out, "r1->r2", "be", "drop_early");
    let overflow = class_value(&out, "r1->r2", "be", "drop_overflow");
    assert!(early > 0.0 && overflow == 0.0, "early {early} overflow {overflow}");
    let loss = class_value(&out, "r1->r2", "be", "loss_rate");
    assert!((loss - 1.0 / 11.0).abs() < 0.005, "loss {loss}");
}

#[test]
fn same_seed_gives_identical_results_and_another_seed_differs() {
    let s = dumbbell(
        10_000_000,
        QdiscConfig::fifo(Limit::Packets(100)),
        vec![group("onoff", 0, 20, pareto(1_000_000))],
        Time::from_secs(10),
        Time::from_secs(1),
    );
    let a = run(&s, Some(7), &mut |_| {}).unwrap();
    let b = run(&s, Some(7), &mut |_| {}).unwrap();
    let c = run(&s, Some(8), &mut |_| {}).unwrap();
    assert_eq!(a, b);
    assert_ne!(a.tables, c.tables);
}

#[test]
fn adding_a_flow_does_not_perturb_the_others_sources() {
    let one = dumbbell(
        100_000_000,
        QdiscConfig::fifo(Limit::Packets(1000)),
        vec![group("a", 0, 5, pareto(1_000_000))],
        Time::from_secs(10),
        Time::ZERO,
    );
    let mut two = one.clone();
    two.groups.push(group("b", 1, 5, pareto(1_000_000)));
    let (x, y) = (go(&one), go(&two));
    for i in 0..5 {
        let name = format!("a.{i}");
        assert_eq!(value(&x, "flows", "flow", &name, "sent_pkts"), value(&y, "flows", "flow", &name, "sent_pkts"));
    }
}

#[test]
fn warmup_excludes_early_packets_from_the_counts() {
    let s = dumbbell(
        10_000_000,
        QdiscConfig::fifo(Limit::Packets(50)),
        vec![group("cbr", 1, 1, cbr(500, 1_000_000))],
        Time::from_secs(10),
        Time::from_secs(2),
    );
    let out = go(&s);
    assert_eq!(value(&out, "flows", "flow", "cbr", "sent_pkts"), 2000.0);
    assert_eq!(class_value(&out, "end-to-end", "ef", "arrivals"), 2000.0);
}

#[test]
fn a_pinned_path_overrides_shortest_path_routing() {
    // Add a direct s-d link with 1 ms delay: shortest path takes it, unless pinned.
    let mut s = dumbbell(
        10_000_000,
        QdiscConfig::fifo(Limit::Packets(50)),
        vec![group("direct", 0, 1, cbr(500, 1_000_000))],
        Time::from_secs(2),
        Time::ZERO,
    );
    s.links.push(link(0, 3, 10_000_000, Time::from_millis(1), QdiscConfig::fifo(Limit::Packets(50))));
    let mut pinned = group("pinned", 1, 1, cbr(500, 1_000_000));
    pinned.path = Some(vec![0, 1, 2, 3]);
    s.groups.push(pinned);
    let out = go(&s);
    let scopes = |class: &str| -> Vec<String> {
        let t = out.table("classes").unwrap();
        let (Some(Column::Str(scope)), Some(Column::Str(cls))) = (t.column("scope"), t.column("class")) else {
            panic!()
        };
        (0..scope.len()).filter(|&i| cls[i] == class && scope[i] != "end-to-end").map(|i| scope[i].clone()).collect()
    };
    assert_eq!(scopes("be"), vec!["s->d"]);
    assert_eq!(scopes("ef"), vec!["s->r1", "r1->r2", "r2->d"]);
}

/// Hosts send and receive but never forward: a host h joined to both s and
/// d by fast links (0.2 ms in all against 12 ms through the routers) is not
/// a route between them.
#[test]
fn routes_never_pass_through_a_host() {
    let mut s = dumbbell(
        10_000_000,
        QdiscConfig::fifo(Limit::Packets(50)),
        vec![group("cbr", 0, 1, cbr(500, 1_000_000))],
        Time::from_secs(1),
        Time::ZERO,
    );
    s.nodes.push(node("h", NodeKind::Host));
    let fast = QdiscConfig::fifo(Limit::Packets(50));
    s.links.push(link(0, 4, 100_000_000, Time::from_micros(100), fast.clone()));
    s.links.push(link(4, 3, 100_000_000, Time::from_micros(100), fast));
    let out = go(&s);
    let t = out.table("classes").unwrap();
    let (Some(Column::Str(scope)), Some(Column::Str(class))) = (t.column("scope"), t.column("class")) else { panic!() };
    let hops: Vec<&str> =
        (0..scope.len()).filter(|&i| class[i] == "be" && scope[i] != "end-to-end").map(|i| scope[i].as_str()).collect();
    assert_eq!(hops, ["s->r1", "r1->r2", "r2->d"]);
}

#[test]
fn time_series_report_queue_and_throughput() {
    let mut s = dumbbell(
        10_000_000,
        QdiscConfig::fifo(Limit::Packets(50)),
        vec![group("cbr", 0, 1, cbr(500, 4_000_000))],
        Time::from_secs(2),
        Time::ZERO,
    );
    s.run.sample_interval = Some(Time::from_millis(500));
    let out = go(&s);
    let t = out.table("timeseries").unwrap();
    let (Some(Column::Str(scope)), Some(Column::Str(metric)), Some(Column::F64(v))) =
        (t.column("scope"), t.column("metric"), t.column("value"))
    else {
        panic!()
    };
    let throughputs: Vec<f64> =
        (0..v.len()).filter(|&i| scope[i] == "r1->r2" && metric[i] == "throughput_bps").map(|i| v[i]).collect();
    assert_eq!(throughputs.len(), 3, "samples at 0.5, 1.0, 1.5 s");
    for x in throughputs {
        assert!((x - 4e6).abs() < 0.01e6, "{x}");
    }
    assert!(scope.iter().any(|s| s == "end-to-end") && scope.iter().any(|s| s == "s->r1"));
    // With sample_scopes, only the chosen scopes are recorded, the same way.
    s.run.sample_scopes = Some(vec!["r1->r2".into()]);
    let only = go(&s);
    let t2 = only.table("timeseries").unwrap();
    let Some(Column::Str(scope2)) = t2.column("scope") else { panic!() };
    assert!(scope2.iter().all(|s| s == "r1->r2"));
    assert_eq!(scope2.len(), (0..scope.len()).filter(|&i| scope[i] == "r1->r2").count());
}

#[test]
fn time_series_report_each_class_backlog() {
    // Two classes overload a 10 Mb/s FIFO of 50 packets: the queue stays
    // full, shared by both, and their backlogs add up to it at every sample.
    let mut s = dumbbell(
        10_000_000,
        QdiscConfig::fifo(Limit::Packets(50)),
        vec![group("a", 0, 1, cbr(500, 6_000_000)), group("b", 1, 1, cbr(500, 6_000_000))],
        Time::from_secs(2),
        Time::ZERO,
    );
    s.run.sample_interval = Some(Time::from_millis(100));
    let out = go(&s);
    let t = out.table("timeseries").unwrap();
    let (Some(Column::Str(scope)), Some(Column::Str(class)), Some(Column::Str(metric)), Some(Column::F64(v))) =
        (t.column("scope"), t.column("class"), t.column("metric"), t.column("value"))
    else {
        panic!()
    };
    let at = |m: &str, c: &str| -> Vec<f64> {
        (0..v.len()).filter(|&i| scope[i] == "r1->r2" && metric[i] == m && class[i] == c).map(|i| v[i]).collect()
    };
    let (be, ef, total) = (at("backlog_pkts", "be"), at("backlog_pkts", "ef"), at("queue_pkts", ""));
    assert_eq!((be.len(), ef.len(), total.len()), (19, 19, 19));
    for k in 0..19 {
        assert_eq!(be[k] + ef[k], total[k], "sample {k}");
    }
    assert!(total[10..].iter().all(|&q| q >= 49.0), "{total:?}");
    assert!(be[10..].iter().all(|&q| q > 5.0) && ef[10..].iter().all(|&q| q > 5.0), "{be:?} {ef:?}");
}
