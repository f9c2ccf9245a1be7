//! The per-packet cost of each qdisc family and of the meters, in
//! nanoseconds, on the simulator's own packets (`phb_sim::net::SimPacket`).
//!
//! ```text
//! cargo run --profile dist --example qdisc_bench [-- --packets 2000000 --repeat 3 --only NAME]
//! ```
//!
//! Each qdisc sits on a 1 Gb/s link with a steady backlog (`BACKLOG`
//! packets per class, filled first): an arriving packet (its class, and so
//! its queue, drawn uniformly; 64, 576 or 1500 bytes; green, yellow or red)
//! is enqueued, then packets are dequeued until the backlog is back at its
//! level, the clock advancing by each one's transmission time. The figure
//! is the thread's CPU time in that loop (`/proc/thread-self/schedstat`,
//! which a busy machine does not inflate; the wall time where there is
//! none) over the packets offered, enqueue and dequeue together (the
//! packets dropped included), the best of `--repeat`. A meter meters each
//! packet, the clock advancing by the packet's time at 1 Gb/s.

use std::time::Instant;

/// A clock of the thread's own CPU time, in nanoseconds (Linux); the wall
/// time elsewhere.
struct CpuClock(Instant);

impl CpuClock {
    fn start() -> CpuClock {
        CpuClock(Instant::now())
    }

    fn thread_ns() -> Option<u64> {
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        text.split_whitespace().next()?.parse().ok()
    }

    /// Nanoseconds since `start` (`cpu_at_start`: [`CpuClock::thread_ns`] then).
    fn elapsed(&self, cpu_at_start: Option<u64>) -> f64 {
        match (cpu_at_start, Self::thread_ns()) {
            (Some(a), Some(b)) => (b - a) as f64,
            _ => self.0.elapsed().as_nanos() as f64,
        }
    }
}

use phb::aqm::codel::CoDelParams;
use phb::aqm::pie::PieParams;
use phb::aqm::red::RedParams;
use phb::aqm::rio::RioParams;
use phb::aqm::wred::WredParams;
use phb::aqm::Limit;
use phb::mark::{
    AnyMeter, Fgcra, FgcraParams, Srtcm, SrtcmParams, TokenBucket, TokenBucketParams, Trtcm, TrtcmParams, Tsw2cm,
    Tsw2cmParams,
};
use phb::queue::{BufferConfig, BufferPolicy, JobsClass, JobsParams, QdiscConfig, QueueConfig, SchedulerKind};
use phb::sched::BacklogUnit;
use phb::{Colour, Framing, Qdisc, Rng, Time};
use phb_sim::net::{Meta, SimPacket};

const RATE_BPS: u64 = 1_000_000_000;
/// Packets queued per class while measuring.
const BACKLOG: usize = 16;
const SIZES: [u32; 3] = [64, 576, 1500];
const COLOURS: [Colour; 3] = [Colour::Green, Colour::Yellow, Colour::Red];

/// `n` queues, each in a buffer of its own with `policy`, codepoint `i` to
/// queue `i`, served by `scheduler`.
fn classful(n: usize, policy: BufferPolicy, scheduler: SchedulerKind) -> QdiscConfig {
    QdiscConfig {
        queues: (0..n).map(|i| QueueConfig { name: format!("q{i}"), buffer: i }).collect(),
        buffers: (0..n).map(|_| BufferConfig::from(policy.clone())).collect(),
        classify: (0..n).map(|i| (i as u8, i)).collect(),
        default_queue: 0,
        scheduler,
    }
}

/// `n` queues sharing one buffer with `policy`.
fn shared(n: usize, policy: BufferPolicy, scheduler: SchedulerKind) -> QdiscConfig {
    QdiscConfig {
        queues: (0..n).map(|i| QueueConfig { name: format!("q{i}"), buffer: 0 }).collect(),
        buffers: vec![policy.into()],
        classify: (0..n).map(|i| (i as u8, i)).collect(),
        default_queue: 0,
        scheduler,
    }
}

fn drop_tail() -> BufferPolicy {
    BufferPolicy::DropTail { limit: Limit::Packets(10_000) }
}

/// The qdiscs measured: (name, classes, configuration).
fn qdiscs() -> Vec<(String, usize, QdiscConfig)> {
    let ramp = |n: usize| (1..=n).map(|i| i as f64).collect::<Vec<_>>();
    let red = RedParams { min_th: 40.0, max_th: 120.0, limit: Limit::Packets(10_000), ..RedParams::default() };
    let mut out: Vec<(String, usize, QdiscConfig)> = vec![
        ("fifo".into(), 1, QdiscConfig::fifo(Limit::Packets(10_000))),
        ("red".into(), 1, QdiscConfig::red(red.clone())),
        ("wred".into(), 1, QdiscConfig::single(BufferPolicy::Wred(WredParams::default()))),
        ("rio".into(), 1, QdiscConfig::single(BufferPolicy::Rio(RioParams::default()))),
        ("codel".into(), 1, QdiscConfig::single(BufferPolicy::CoDel(CoDelParams::default()))),
        ("pie".into(), 1, QdiscConfig::single(BufferPolicy::Pie(PieParams::default()))),
        ("priority".into(), 4, classful(4, drop_tail(), SchedulerKind::StrictPriority)),
        ("drr".into(), 4, classful(4, drop_tail(), SchedulerKind::Drr { quanta: vec![1500; 4] })),
    ];
    for n in [4, 16, 64] {
        out.push((format!("wfq/{n}"), n, classful(n, drop_tail(), SchedulerKind::Wfq { weights: ramp(n) })));
        out.push((format!("wf2q+/{n}"), n, classful(n, drop_tail(), SchedulerKind::Wf2qPlus { weights: ramp(n) })));
    }
    out.push(("scfq/4".into(), 4, classful(4, drop_tail(), SchedulerKind::Scfq { weights: ramp(4) })));
    out.push(("bpr".into(), 4, classful(4, drop_tail(), SchedulerKind::Bpr { s: vec![1.0, 2.0, 4.0, 8.0] })));
    out.push(("wtp".into(), 4, classful(4, drop_tail(), SchedulerKind::Wtp { s: vec![1.0, 2.0, 4.0, 8.0] })));
    let jobs = JobsParams {
        classes: (0..4)
            .map(|i| JobsClass {
                d: None,
                l: None,
                mu: None,
                k: (i < 3).then_some(2.0),
                k_prime: (i < 3).then_some(2.0),
            })
            .collect(),
        gain: JobsParams::DEFAULT_GAIN,
    };
    out.push(("jobs".into(), 4, shared(4, drop_tail(), SchedulerKind::Jobs(jobs))));
    let beds = SchedulerKind::Beds { s: vec![1.0, 4.0], unit: BacklogUnit::Bytes };
    out.push(("beds".into(), 2, classful(2, BufferPolicy::Red(red), beds)));
    out.push(("exvc".into(), 4, classful(4, drop_tail(), SchedulerKind::ExVc { q: ramp(4), k: 1 })));
    out
}

/// What the loop offers: class, size and colour of each packet.
fn arrivals(classes: usize, n: usize) -> Vec<(u8, u32, Colour)> {
    let mut rng = Rng::derive(1, "qdisc_bench");
    (0..n)
        .map(|_| {
            let r = rng.next_u64();
            ((r % classes as u64) as u8, SIZES[(r >> 8) as usize % 3], COLOURS[(r >> 16) as usize % 3])
        })
        .collect()
}

fn packet(flow: u32, (class, size, colour): (u8, u32, Colour), now: Time) -> SimPacket {
    SimPacket { flow, class, colour, ecn: phb::Ecn::NotEct, size, created: now, enqueued: now, meta: Meta::default() }
}

/// Nanoseconds per packet offered to `config`'s qdisc.
fn measure_qdisc(config: &QdiscConfig, classes: usize, offered: &[(u8, u32, Colour)]) -> f64 {
    let mut q: Qdisc<Meta> = Qdisc::new(config, RATE_BPS, Rng::derive(1, "q"));
    let mut dropped = Vec::new();
    let mut now = Time::ZERO;
    let level = (BACKLOG * classes) as u64;
    for (i, &a) in offered.iter().cycle().take(level as usize * 4).enumerate() {
        if q.len_packets() < level {
            q.enqueue(packet(i as u32, a, now), now, &mut dropped);
        }
    }
    dropped.clear();
    let (clock, cpu) = (CpuClock::start(), CpuClock::thread_ns());
    for (i, &a) in offered.iter().enumerate() {
        q.enqueue(packet(i as u32, a, now), now, &mut dropped);
        while q.len_packets() > level {
            match q.dequeue(now, &mut dropped) {
                Some(departure) => now += Time::transmission(departure.pkt.size, RATE_BPS),
                None => now = q.next_wakeup(now).unwrap_or(now + Time::from_micros(1)),
            }
        }
        dropped.clear();
    }
    clock.elapsed(cpu) / offered.len() as f64
}

fn meters() -> Vec<(&'static str, AnyMeter)> {
    let rng = || Rng::derive(1, "meter");
    let tsw = Tsw2cmParams { ctr: 500_000_000, win_length: Time::from_millis(100) };
    vec![
        ("token_bucket", TokenBucket::new(TokenBucketParams { rate: 500_000_000, burst_size: 30_000 }).unwrap().into()),
        (
            "srtcm",
            Srtcm::new(SrtcmParams { cir: 500_000_000, cbs: 30_000, ebs: 30_000, mode: Default::default() })
                .unwrap()
                .into(),
        ),
        (
            "trtcm",
            Trtcm::new(TrtcmParams {
                pir: 800_000_000,
                pbs: 30_000,
                cir: 500_000_000,
                cbs: 30_000,
                mode: Default::default(),
            })
            .unwrap()
            .into(),
        ),
        ("tsw2cm", Tsw2cm::new(tsw, rng()).unwrap().into()),
        (
            "fgcra",
            Fgcra::new(
                FgcraParams { rate: 500_000_000, tau: Time::from_micros(100), mode: Default::default() },
                Framing::AAL5,
            )
            .unwrap()
            .into(),
        ),
    ]
}

fn measure_meter(meter: &mut AnyMeter, offered: &[(u8, u32, Colour)]) -> f64 {
    let mut now = Time::ZERO;
    let mut greens = 0u64;
    let (clock, cpu) = (CpuClock::start(), CpuClock::thread_ns());
    for &(_, size, colour) in offered {
        greens += u64::from(meter.meter(size, colour, now) == Colour::Green);
        now += Time::transmission(size, RATE_BPS);
    }
    let ns = clock.elapsed(cpu) / offered.len() as f64;
    std::hint::black_box(greens);
    ns
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut packets, mut repeat, mut only) = (2_000_000usize, 3usize, None);
    while let Some(arg) = args.next() {
        let value = args.next();
        match (arg.as_str(), value.as_deref().map(str::parse::<usize>)) {
            ("--packets", Some(Ok(n))) => packets = n,
            ("--repeat", Some(Ok(n))) => repeat = n,
            ("--only", Some(_)) => only = value,
            _ => {
                eprintln!("usage: qdisc_bench [--packets N] [--repeat N] [--only NAME]");
                std::process::exit(2);
            }
        }
    }
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    println!("{:<14} {:>8} {:>12}", "qdisc", "classes", "ns/packet");
    for (name, classes, config) in qdiscs().into_iter().filter(|(name, _, _)| wanted(name)) {
        config.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        let offered = arrivals(classes, packets);
        let best = (0..repeat).map(|_| measure_qdisc(&config, classes, &offered)).fold(f64::INFINITY, f64::min);
        println!("{name:<14} {classes:>8} {best:>12.1}");
    }
    println!("{:<14} {:>8} {:>12}", "meter", "", "ns/packet");
    let offered = arrivals(1, packets);
    for (name, meter) in meters().into_iter().filter(|(name, _)| wanted(name)) {
        let best = (0..repeat).map(|_| measure_meter(&mut meter.clone(), &offered)).fold(f64::INFINITY, f64::min);
        println!("{name:<14} {:>8} {best:>12.1}", "");
    }
}
