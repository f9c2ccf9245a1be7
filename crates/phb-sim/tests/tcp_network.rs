//! TCP over simulated networks: utilisation, the square-root law under
//! random loss, fairness through RED, and determinism.

use phb::aqm::red::RedParams;
use phb::aqm::Limit;
use phb::queue::QdiscConfig;
use phb::Time;
use phb_models::tcp_throughput::square_root;
use phb_sim::apps::AppModel;
use phb_sim::scenario::{ClassDef, LinkDef, NodeDef, NodeKind, RunConfig, Scenario, TcpFlow, TrafficGroup, Transport};
use phb_sim::tcp::{TcpConfig, Variant};
use phb_sim::{run, Column, RunOutput};

/// s (0) -- r1 (1) -- r2 (2) -- d (3); the bottleneck r1 -> r2 has `qdisc`
/// and may drop data at random with probability `loss`.
#[allow(clippy::too_many_arguments)]
fn dumbbell(
    bottleneck_bps: u64,
    bottleneck_delay: Time,
    access_bps: u64,
    qdisc: QdiscConfig,
    loss: f64,
    groups: Vec<TrafficGroup>,
    duration: Time,
    warmup: Time,
) -> Scenario {
    let fifo = QdiscConfig::fifo(Limit::Packets(10_000));
    let link = |a, b, rate_bps, delay, q: QdiscConfig, loss_ab| LinkDef {
        a,
        b,
        rate_bps,
        delay,
        framing: phb::Framing::None,
        qdisc_ab: q.clone(),
        qdisc_ba: q,
        conditioner_ab: None,
        conditioner_ba: None,
        loss_ab,
        loss_ba: 0.0,
    };
    Scenario {
        name: "tcp".into(),
        run: RunConfig {
            duration,
            warmup,
            seed: 1,
            sample_interval: None,
            sample_scopes: None,
            delay_ratios: Vec::new(),
        },
        classes: vec![ClassDef { name: "be".into(), codepoint: 0 }],
        nodes: ["s", "r1", "r2", "d"]
            .iter()
            .enumerate()
            .map(|(i, n)| NodeDef {
                name: n.to_string(),
                kind: if i == 0 || i == 3 { NodeKind::Host } else { NodeKind::Router },
            })
            .collect(),
        links: vec![
            link(0, 1, access_bps, Time::from_millis(1), fifo.clone(), 0.0),
            link(1, 2, bottleneck_bps, bottleneck_delay, qdisc, loss),
            link(2, 3, access_bps, Time::from_millis(1), fifo, 0.0),
        ],
        groups,
        lsps: Vec::new(),
        commands: Vec::new(),
        trace: None,
    }
}

fn tcp_group(count: u32, config: TcpConfig, jitter: Time) -> TrafficGroup {
    TrafficGroup {
        name: "tcp".into(),
        generator: String::new(),
        count,
        src: 0,
        dst: 3,
        class: 0,
        path: None,
        start: Time::ZERO,
        start_jitter: jitter,
        stop: Time::MAX,
        windows: None,
        transport: Transport::Tcp(TcpFlow {
            config,
            app: AppModel::Bulk,
            trace: false,
            congestion: None,
            explicit: Vec::new(),
        }),
    }
}

fn unlimited(variant: Variant) -> TcpConfig {
    TcpConfig { variant, window: 100_000, ..TcpConfig::ns2() }
}

fn column_f64(out: &RunOutput, table: &str, column: &str) -> Vec<f64> {
    match out.table(table).unwrap().column(column).unwrap() {
        Column::F64(v) => v.clone(),
        Column::U64(v) => v.iter().map(|&x| x as f64).collect(),
        Column::Str(_) => panic!(),
    }
}

fn link_throughput(out: &RunOutput, scope: &str) -> f64 {
    let t = out.table("classes").unwrap();
    let Some(Column::Str(scopes)) = t.column("scope") else { panic!() };
    let i = scopes.iter().position(|s| s == scope).unwrap();
    column_f64(out, "classes", "throughput_bps")[i]
}

#[test]
fn one_flow_fills_a_bottleneck_whose_buffer_holds_the_bandwidth_delay_product() {
    // RTT ≈ 24 ms at 10 Mb/s: BDP ≈ 30 packets of 1000 bytes; buffer 50.
    for variant in [Variant::Reno, Variant::NewReno, Variant::Sack] {
        let s = dumbbell(
            10_000_000,
            Time::from_millis(10),
            100_000_000,
            QdiscConfig::fifo(Limit::Packets(50)),
            0.0,
            vec![tcp_group(1, unlimited(variant), Time::ZERO)],
            Time::from_secs(40),
            Time::from_secs(5),
        );
        let out = run(&s, None, &mut |_| {}).unwrap();
        let utilisation = link_throughput(&out, "r1->r2") / 10e6;
        assert!(utilisation >= 0.95, "{variant:?}: utilisation {utilisation}");
    }
}

#[test]
fn newreno_under_random_loss_follows_the_square_root_law() {
    // 1 Gb/s links, no queueing: RTT = 2·(1 + 48 + 1) ms = 100 ms plus
    // microseconds of serialisation. Ten flows, losses on data only.
    let rtt = 0.100;
    for p in [0.001, 0.005, 0.01, 0.02] {
        let s = dumbbell(
            1_000_000_000,
            Time::from_millis(48),
            1_000_000_000,
            QdiscConfig::fifo(Limit::Packets(10_000)),
            p,
            vec![tcp_group(10, unlimited(Variant::NewReno), Time::from_secs(1))],
            Time::from_secs(300),
            Time::from_secs(20),
        );
        let out = run(&s, None, &mut |_| {}).unwrap();
        let goodput: f64 = column_f64(&out, "flows", "goodput_bps").iter().sum::<f64>() / 10.0;
        let model = square_root(1000.0 * 8.0, rtt, p, 1.0);
        let ratio = goodput / model;
        assert!((0.8..=1.2).contains(&ratio), "p {p}: goodput {goodput:.0} b/s vs model {model:.0}: ratio {ratio:.3}");
    }
}

#[test]
fn flows_with_equal_rtts_share_a_red_bottleneck_fairly() {
    let red = RedParams {
        min_th: 60.0,
        max_th: 180.0,
        limit: Limit::Packets(250),
        mean_pktsize: 1000,
        ..RedParams::default()
    };
    let s = dumbbell(
        10_000_000,
        Time::from_millis(10),
        100_000_000,
        QdiscConfig::red(red),
        0.0,
        vec![tcp_group(10, unlimited(Variant::NewReno), Time::from_secs(1))],
        Time::from_secs(100),
        Time::from_secs(20),
    );
    let out = run(&s, None, &mut |_| {}).unwrap();
    let x = column_f64(&out, "flows", "goodput_bps");
    let jain = x.iter().sum::<f64>().powi(2) / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>());
    assert!(jain >= 0.95, "Jain's index {jain}: {x:?}");
    assert!(link_throughput(&out, "r1->r2") > 0.95e7);
}

#[test]
fn tcp_runs_are_deterministic() {
    let s = dumbbell(
        10_000_000,
        Time::from_millis(10),
        100_000_000,
        QdiscConfig::fifo(Limit::Packets(30)),
        0.001,
        vec![tcp_group(5, TcpConfig::linux(), Time::from_secs(1))],
        Time::from_secs(10),
        Time::from_secs(1),
    );
    let a = run(&s, Some(3), &mut |_| {}).unwrap();
    let b = run(&s, Some(3), &mut |_| {}).unwrap();
    assert_eq!(a, b);
    let c = run(&s, Some(4), &mut |_| {}).unwrap();
    assert_ne!(a.tables, c.tables);
}
