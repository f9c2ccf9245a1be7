//! Property test: whatever the network, load (UDP and TCP of every variant)
//! buffers (with PLC and PLR pushing queued packets out; F-RED and DI-RO
//! under Ex-VC on AAL5 links), framing and loss elements, every run ends
//! with packets conserved (the simulator checks it and fails the run
//! otherwise) and with counters that agree across tables, cells included.

use phb::aqm::diro::DiRoParams;
use phb::aqm::fred::FRedParams;
use phb::aqm::plr::PlrMemory;
use phb::aqm::red::RedParams;
use phb::aqm::Limit;
use phb::queue::{BufferConfig, BufferPolicy, QdiscConfig, QueueConfig, SchedulerKind, Victim};
use phb::sched::ResidualBacklog;
use phb::Time;
use phb_sim::apps::{AppModel, SizeDist};
use phb_sim::scenario::{
    ClassDef, LinkDef, NodeDef, NodeKind, RunConfig, Scenario, SourceModel, TcpFlow, TrafficGroup, Transport,
};
use phb_sim::tcp::{TcpConfig, Variant};
use phb_sim::{run, Column};
use proptest::prelude::*;

fn qdisc(kind: u8, limit: u64) -> QdiscConfig {
    let red = |limit: Limit| RedParams {
        min_th: limit_pkts(limit) / 4.0,
        max_th: limit_pkts(limit) / 2.0,
        limit,
        w_q: 0.02,
        ..RedParams::default()
    };
    match kind {
        0 => QdiscConfig::fifo(Limit::Packets(limit)),
        1 => QdiscConfig::fifo(Limit::Bytes(limit * 700)),
        2 => QdiscConfig::red(red(Limit::Packets(limit))),
        // Classes a (TCP-like, first) and b share one buffer whose victims
        // PLC (BPR, BPR+) or PLR (WTP) chooses: queued packets are evicted.
        // BPR+ reads eq. (19)'s q_k either way.
        3 => shared(
            BufferPolicy::Red(red(Limit::Packets(limit))),
            Victim::Plc { x: 2.0 },
            SchedulerKind::Bpr { s: vec![1.0, 8.0] },
        ),
        4 => shared(
            BufferPolicy::Red(red(Limit::Bytes(limit * 700))),
            Victim::Plc { x: 1.24 },
            SchedulerKind::BprPlus {
                s: vec![1.0, 4.0],
                residual: if limit.is_multiple_of(2) {
                    ResidualBacklog::WithOwnPacket
                } else {
                    ResidualBacklog::BytesAhead
                },
            },
        ),
        5 => shared(
            BufferPolicy::DropTail { limit: Limit::Bytes(limit * 700) },
            Victim::Plr { sigma: vec![1.0, 3.0], memory: PlrMemory::Window(20) },
            SchedulerKind::Wtp { s: vec![1.0, 4.0] },
        ),
        // On AAL5 links: F-RED on a FIFO, and DI-RO shared under Ex-VC,
        // thresholds in cells (about 15 cells a packet here).
        6 => QdiscConfig::single(BufferPolicy::FRed(fred(limit))),
        _ => shared(
            BufferPolicy::DiRo(DiRoParams { red: fred(limit), average_all: limit.is_multiple_of(2) }),
            Victim::Arrival,
            SchedulerKind::ExVc { q: vec![1.0, 3.0], k: 1 + (limit % 3) as u32 },
        ),
    }
}

/// F-RED over `limit` packets' worth of cells.
fn fred(limit: u64) -> FRedParams {
    let cells = limit * 15;
    FRedParams {
        min_th: cells as f64 / 4.0,
        max_th: cells as f64 / 2.0,
        w_q: 0.02,
        limit: Limit::Cells(cells),
        count: !limit.is_multiple_of(3),
        ..FRedParams::default()
    }
}

/// The packets a limit holds, 700-byte packets for a byte limit.
fn limit_pkts(limit: Limit) -> f64 {
    match limit {
        Limit::Packets(n) => n as f64,
        Limit::Bytes(n) => n as f64 / 700.0,
        Limit::Cells(n) => n as f64 / 15.0,
    }
}

/// Two queues (codepoint 0, codepoint 10) sharing one buffer.
fn shared(policy: BufferPolicy, victim: Victim, scheduler: SchedulerKind) -> QdiscConfig {
    QdiscConfig {
        queues: vec![QueueConfig { name: "a".into(), buffer: 0 }, QueueConfig { name: "b".into(), buffer: 0 }],
        buffers: vec![BufferConfig { name: "shared".into(), policy, victim, ecn: false }],
        classify: vec![(0, 0), (10, 1)],
        default_queue: 0,
        scheduler,
    }
}

/// A chain of `hops` routers between two hosts, every link of `rate_mbps`.
fn chain(
    hops: usize,
    rates_mbps: &[u64],
    kinds: &[u8],
    limits: &[u64],
    loads: &[(u8, u64)],
    warmup_ms: u64,
) -> Scenario {
    let mut nodes = vec![NodeDef { name: "s".into(), kind: NodeKind::Host }];
    for i in 0..hops {
        nodes.push(NodeDef { name: format!("r{i}"), kind: NodeKind::Router });
    }
    nodes.push(NodeDef { name: "d".into(), kind: NodeKind::Host });
    let links = (0..=hops)
        .map(|i| {
            let kind = kinds[i % kinds.len()];
            let q = qdisc(kind, limits[i % limits.len()]);
            let framing = if kind >= 6 || i % 2 == 1 { phb::Framing::AAL5 } else { phb::Framing::None };
            LinkDef {
                a: i,
                b: i + 1,
                rate_bps: rates_mbps[i % rates_mbps.len()] * 1_000_000,
                delay: Time::from_micros(500 * i as u64),
                framing,
                qdisc_ab: q.clone(),
                qdisc_ba: q,
                conditioner_ab: None,
                conditioner_ba: None,
                loss_ab: 0.0,
                loss_ba: 0.0,
            }
        })
        .collect();
    let groups = loads
        .iter()
        .enumerate()
        .map(|(g, &(kind, rate_mbps))| {
            let transport = match kind {
                0 => Transport::Udp(SourceModel::Cbr {
                    packet_size: 700,
                    interval: Time::transmission(700, rate_mbps * 1_000_000),
                }),
                1 => Transport::Udp(SourceModel::ParetoOnOff {
                    packet_size: 500,
                    rate_bps: rate_mbps * 1_000_000,
                    on_mean: Time::from_millis(20),
                    off_mean: Time::from_millis(20),
                    shape: 1.4,
                }),
                2 => Transport::Udp(SourceModel::ExpOnOff {
                    packet_size: 200,
                    rate_bps: rate_mbps * 1_000_000,
                    on_mean: Time::from_millis(30),
                    off_mean: Time::from_millis(10),
                }),
                _ => {
                    let variant = [Variant::Reno, Variant::NewReno, Variant::Sack][rate_mbps as usize % 3];
                    let config = TcpConfig { variant, delayed_ack: rate_mbps % 2 == 0, ..TcpConfig::ns2() };
                    let app = if rate_mbps % 2 == 0 {
                        AppModel::Bulk
                    } else {
                        AppModel::Files {
                            size: SizeDist::Fixed(20_000),
                            think: Some(Time::from_millis(10)),
                            new_connection: rate_mbps % 4 == 1,
                        }
                    };
                    Transport::Tcp(TcpFlow { config, app, trace: false, congestion: None, explicit: Vec::new() })
                }
            };
            TrafficGroup {
                name: format!("g{g}"),
                generator: String::new(),
                count: 3,
                src: 0,
                dst: hops + 1,
                class: g % 2,
                path: None,
                start: Time::from_millis(g as u64),
                start_jitter: Time::from_millis(50),
                stop: Time::from_millis(900),
                windows: None,
                transport,
            }
        })
        .collect();
    Scenario {
        name: "prop".into(),
        run: RunConfig {
            duration: Time::from_secs(1),
            warmup: Time::from_millis(warmup_ms),
            seed: 3,
            sample_interval: None,
            sample_scopes: None,
            delay_ratios: Vec::new(),
        },
        classes: vec![ClassDef { name: "a".into(), codepoint: 0 }, ClassDef { name: "b".into(), codepoint: 10 }],
        nodes,
        links,
        groups,
        lsps: Vec::new(),
        commands: Vec::new(),
        trace: None,
    }
}

fn sum_u64(table: &phb_sim::Table, column: &str) -> u64 {
    match table.column(column) {
        Some(Column::U64(v)) => v.iter().sum(),
        _ => panic!("no u64 column {column}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn every_run_conserves_packets(
        hops in 0usize..4,
        rates in proptest::collection::vec(1u64..20, 1..4),
        kinds in proptest::collection::vec(0u8..8, 1..4),
        limits in proptest::collection::vec(2u64..60, 1..4),
        loads in proptest::collection::vec((0u8..4, 1u64..8), 1..4),
        losses in proptest::collection::vec(0.0f64..0.05, 1..3),
        warmup_ms in 0u64..500,
    ) {
        let mut s = chain(hops, &rates, &kinds, &limits, &loads, warmup_ms);
        for (link, loss) in s.links.iter_mut().zip(&losses) {
            link.loss_ab = *loss;
            link.loss_ba = *loss / 2.0;
        }
        let out = run(&s, None, &mut |_| {}).expect("conservation holds");
        // With no warm-up, per-flow and end-to-end counts agree exactly.
        if warmup_ms == 0 {
            let flows = out.table("flows").unwrap();
            let classes = out.table("classes").unwrap();
            let (Some(Column::Str(scope)), Some(Column::U64(arrivals))) = (classes.column("scope"), classes.column("arrivals")) else { panic!() };
            let end_to_end: u64 = (0..scope.len()).filter(|&i| scope[i] == "end-to-end").map(|i| arrivals[i]).sum();
            prop_assert_eq!(end_to_end, sum_u64(flows, "sent_pkts"));
            // Every cell that arrived at a link left, was dropped or is queued.
            let cells = sum_u64(classes, "arrivals_cells");
            let accounted = sum_u64(classes, "departures_cells") + sum_u64(classes, "dropped_cells") + sum_u64(classes, "queued_end_cells");
            prop_assert_eq!(cells, accounted);
            prop_assert_eq!(cells > 0, s.links.iter().any(|l| l.framing.has_cells()));
        }
    }
}
