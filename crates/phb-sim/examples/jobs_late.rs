//! Which events make JoBS send a delay-bounded class late (Christin,
//! Liebeherr & Abdelzaher 2001, Sections 5 and 6.1–6.2).
//!
//! ```text
//! cargo run --release --example jobs_late -- scenarios/christin-2001/experiment-2.toml [--scope r1->r2] [--seed N] [--over 4ms] [--without-loss-bound]
//! ```
//!
//! Runs the scenario once, records every packet offered to the JoBS qdisc
//! at `--scope` (Router 1's output by default), and replays those arrivals
//! into the same qdisc alone, dequeuing whenever the link is free (as the
//! simulator does: the replay's delays are the run's). For the best class
//! with a delay bound `d` it counts the packets sent later than `d`, and
//! those later than `--over` (default: `d` + 1 ms, the paper's "never above
//! 4 ms" for `d_1 = 3` ms), and says for each group:
//!
//! - how many waited through an arrival after which JoBS left condition
//!   (64) violated because the class could lose nothing more within its
//!   loss bound (`relax_delay`: the loss bound's precedence, Section 5);
//! - how many arrived while the class's loss budget of the busy period,
//!   `l* = A·L − (A − R_in)` (Section 4), was below one packet;
//! - how long the busy period had lasted when they arrived;
//! - the seconds of the run in which they left.
//!
//! `--without-loss-bound` replays the same arrivals with the class's loss
//! bound removed (its delay bound kept): the one change that tells whether
//! the loss bound's precedence makes the late packets.

use phb::queue::{Jobs, JobsParams, QdiscConfig};
use phb::{Qdisc, Time};
use phb_sim::net::Meta;
use phb_sim::{trace_arrivals, Arrival};

#[path = "common/jobs_link.rs"]
mod jobs_link;

use jobs_link::{jobs_link, packet, take, with_params};

/// One late packet: when it arrived and left, and what held it.
struct Late {
    arrived: Time,
    delay: Time,
    /// It waited through an arrival that relaxed (64) for the loss bound.
    relaxed: bool,
    /// Its class could not lose one more packet when it arrived.
    no_budget: bool,
    /// The busy period's age when it arrived.
    busy_age: Time,
}

fn jobs(q: &mut Qdisc<Meta>) -> &mut Jobs<Meta> {
    match q {
        Qdisc::Jobs(j) => j,
        _ => unreachable!("a JoBS configuration builds a JoBS qdisc"),
    }
}

/// Replays `arrivals`; returns class `class`'s departures and its late ones.
fn replay(
    config: &QdiscConfig,
    link_bps: u64,
    arrivals: &[Arrival],
    class: usize,
    d: Time,
    loss_bound: f64,
) -> (u64, Vec<Late>) {
    let mut q: Qdisc<Meta> = Qdisc::new(config, link_bps, phb::Rng::derive(0, "late"));
    let mut dropped = Vec::with_capacity(64);
    let mut free = Time::ZERO;
    let mut busy_since = Time::ZERO;
    // The class's bytes arrived and dropped in the busy period.
    let (mut arrived, mut lost) = (0u64, 0u64);
    let mut last_relax = None::<Time>;
    // Per queued packet of the class: (budget at arrival, busy period's age).
    let mut waiting = std::collections::VecDeque::new();
    let (mut sent, mut late) = (0u64, Vec::new());
    let mut send = |q: &mut Qdisc<Meta>,
                    at: Time,
                    waiting: &mut std::collections::VecDeque<(bool, Time)>,
                    last_relax: Option<Time>|
     -> Option<Time> {
        let dep = q.dequeue(at, &mut Vec::new())?;
        let pkt = &dep.pkt;
        if jobs(q).classify(pkt.class) == class {
            sent += 1;
            let (no_budget, busy_age) = waiting.pop_front().expect("a queued packet of the class");
            let delay = at - pkt.enqueued;
            if delay > d {
                late.push(Late {
                    arrived: pkt.enqueued,
                    delay,
                    relaxed: last_relax.is_some_and(|t| t >= pkt.enqueued),
                    no_budget,
                    busy_age,
                });
            }
        }
        Some(at + Time::transmission(pkt.size, link_bps))
    };
    for a in arrivals {
        while free <= a.time && q.len_packets() > 0 {
            free = send(&mut q, free, &mut waiting, last_relax).expect("a backlogged JoBS sends");
        }
        if q.len_packets() == 0 {
            busy_since = a.time;
            (arrived, lost) = (0, 0);
        }
        let c = jobs(&mut q).classify(a.codepoint);
        if c == class {
            arrived += a.size as u64;
            let budget = loss_bound * arrived as f64 - lost as f64;
            waiting.push_back((budget < a.size as f64, a.time - busy_since));
        }
        let relaxed_before = jobs(&mut q).counters().relax_delay;
        q.enqueue(packet(a), a.time, &mut dropped);
        if jobs(&mut q).counters().relax_delay > relaxed_before {
            last_relax = Some(a.time);
        }
        for (pkt, _) in dropped.drain(..) {
            if jobs(&mut q).classify(pkt.class) == class {
                lost += pkt.size as u64;
                // Drops leave from the tail: the class's latest arrivals.
                waiting.pop_back();
            }
        }
        if free <= a.time {
            if let Some(done) = send(&mut q, a.time, &mut waiting, last_relax) {
                free = done;
            }
        }
    }
    while q.len_packets() > 0 {
        free = send(&mut q, free, &mut waiting, last_relax).expect("a backlogged JoBS sends");
    }
    (sent, late)
}

fn summary(what: &str, late: &[&Late], sent: u64) {
    let n = late.len();
    let share = |k: usize| if n == 0 { 0.0 } else { 100.0 * k as f64 / n as f64 };
    let relaxed = late.iter().filter(|l| l.relaxed).count();
    let no_budget = late.iter().filter(|l| l.no_budget).count();
    let mut ages: Vec<f64> = late.iter().map(|l| l.busy_age.as_secs_f64() * 1e3).collect();
    ages.sort_by(f64::total_cmp);
    let max = late.iter().map(|l| l.delay).max().unwrap_or(Time::ZERO);
    println!(
        "{what}: {n} packets ({:.3}% of {sent} sent), largest {:.2} ms; waited through a relax_delay arrival: {relaxed} ({:.1}%); arrived without loss budget: {no_budget} ({:.1}%)",
        100.0 * n as f64 / sent.max(1) as f64,
        max.as_secs_f64() * 1e3,
        share(relaxed),
        share(no_budget),
    );
    if n > 0 {
        println!(
            "  busy period's age at their arrival, ms: min {:.1}, median {:.1}, max {:.1}",
            ages[0],
            ages[n / 2],
            ages[n - 1]
        );
        let mut seconds: Vec<u64> = late.iter().map(|l| l.arrived.as_secs_f64() as u64).collect();
        seconds.dedup();
        let list: Vec<String> = seconds.iter().map(u64::to_string).collect();
        println!("  seconds of the run in which they arrived: {}", list.join(" "));
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let scope = take(&mut args, "--scope").unwrap_or_else(|| "r1->r2".into());
    let seed: Option<u64> = take(&mut args, "--seed").map(|s| s.parse().expect("--seed takes a number"));
    let over = take(&mut args, "--over");
    let without_loss_bound = args.iter().position(|a| a == "--without-loss-bound").map(|i| args.remove(i)).is_some();
    let [path] = args.as_slice() else {
        eprintln!("usage: jobs_late [--scope A->B] [--seed N] [--over 4ms] [--without-loss-bound] SCENARIO.toml");
        std::process::exit(2);
    };
    let link = jobs_link(path, &scope);
    let (scenario, params) = (&link.scenario, &link.params);
    let class = params.classes.iter().position(|c| c.d.is_some()).expect("a class with a delay bound");
    let d = params.classes[class].d.expect("its bound");
    let over = over.map_or(d + Time::from_millis(1), |s| {
        Time::from_secs_f64(s.trim_end_matches("ms").parse::<f64>().expect("--over takes N ms") * 1e-3)
    });
    let loss_bound = params.classes[class].l.unwrap_or(1.0);
    let mut classes = params.classes.clone();
    if without_loss_bound {
        classes[class].l = None;
    }
    let config = with_params(&link.config, JobsParams { classes, gain: params.gain });
    let arrivals = trace_arrivals(scenario, seed, &scope).expect("the run").expect("the scope exists");
    let bound = if without_loss_bound { 1.0 } else { loss_bound };
    let (sent, late) = replay(&config, link.rate_bps, &arrivals, class, d, bound);
    println!(
        "{} seed {}, {scope}: class {} (d = {:.1} ms, L = {}{}), {} arrivals replayed",
        scenario.name,
        seed.unwrap_or(scenario.run.seed),
        class + 1,
        d.as_secs_f64() * 1e3,
        loss_bound,
        if without_loss_bound { ", removed for this replay" } else { "" },
        arrivals.len()
    );
    summary(&format!("later than d = {:.1} ms", d.as_secs_f64() * 1e3), &late.iter().collect::<Vec<_>>(), sent);
    let worst: Vec<&Late> = late.iter().filter(|l| l.delay > over).collect();
    summary(&format!("later than {:.1} ms", over.as_secs_f64() * 1e3), &worst, sent);
}
