//! The scale benchmark: one scenario at several sizes, each in a process of
//! its own (so that its peak memory is its own).
//!
//! ```text
//! cargo run --profile dist --example scale_bench -- benches/scale/dumbbell.toml [--pairs 1000,10000,100000] [--set KEY=VALUE]...
//! ```
//!
//! For each size it sets `--key` (default `generators[0].count`) and
//! prints: the flows; the time to read and validate the file; the set-up
//! time (building the network, routing and the flows, until the first
//! event); the events and the run's time (from the first event to the
//! tables); events and packet-hops per second of that time (a packet-hop:
//! a packet offered to a link direction); and the process's peak resident
//! memory, in total and per flow.

use std::process::Command;
use std::time::Instant;

fn peak_rss_kb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or("VmHWM: 0 kB");
    line.split_whitespace().nth(1).and_then(|kb| kb.parse().ok()).unwrap_or(0.0)
}

/// Runs one size and prints its row.
fn child(path: &str, sets: &[String]) {
    let start = Instant::now();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let scenario = phb_sim::load(&text, path, sets).unwrap_or_else(|e| panic!("{e}"));
    let validated = start.elapsed().as_secs_f64();
    let flows: u64 = scenario.groups.iter().map(|g| u64::from(g.count)).sum();
    let begin = Instant::now();
    let mut first_event = None;
    let out = phb_sim::run(&scenario, None, &mut |_| {
        first_event.get_or_insert_with(Instant::now);
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let first_event = first_event.expect("run reports its start");
    let setup = first_event.duration_since(begin).as_secs_f64();
    let run = first_event.elapsed().as_secs_f64();
    let peak_kb = peak_rss_kb();
    println!(
        "{:>8} {:>10.2} {:>9.2} {:>12} {:>9.2} {:>10.2} {:>9.2} {:>9.0} {:>8.2}",
        flows,
        validated,
        setup,
        out.events,
        run,
        out.events as f64 / run / 1e6,
        out.packet_hops as f64 / run / 1e6,
        peak_kb / 1024.0,
        peak_kb / flows as f64,
    );
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut take = |flag: &str| -> Vec<String> {
        let mut values = Vec::new();
        while let Some(i) = args.iter().position(|a| a == flag) {
            values.push(args.get(i + 1).unwrap_or_else(|| panic!("{flag} takes a value")).clone());
            args.drain(i..i + 2);
        }
        values
    };
    let sets = take("--set");
    let key = take("--key").pop().unwrap_or_else(|| "generators[0].count".into());
    let pairs = take("--pairs").pop().unwrap_or_else(|| "1000,10000,100000".into());
    let is_child = take("--child").pop();
    let [path] = args.as_slice() else {
        eprintln!("usage: scale_bench SCENARIO.toml [--pairs N,N,...] [--key KEY] [--set KEY=VALUE]...");
        std::process::exit(2);
    };
    if let Some(n) = is_child {
        let mut all = sets.clone();
        all.push(format!("{key}={n}"));
        child(path, &all);
        return;
    }
    println!(
        "{:>8} {:>10} {:>9} {:>12} {:>9} {:>10} {:>9} {:>9} {:>8}",
        "flows", "validate s", "set-up s", "events", "run s", "Mevents/s", "Mhops/s", "peak MB", "KB/flow"
    );
    let me = std::env::current_exe().expect("the benchmark's own path");
    for n in pairs.split(',') {
        let mut command = Command::new(&me);
        command.arg(path).args(["--key", &key, "--child", n]);
        for set in &sets {
            command.args(["--set", set]);
        }
        let status = command.status().expect("the benchmark runs itself");
        if !status.success() {
            eprintln!("{n}: {status}");
            std::process::exit(1);
        }
    }
}
