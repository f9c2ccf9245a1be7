//! The speed benchmark: runs each scenario file given on the command line
//! (`make bench` passes `benches/scenarios/*.toml`) `--repeat` times and
//! reports events, the fastest wall time, events per second and the
//! process's peak resident memory.
//!
//! Wall time covers the simulation only (building the network and running
//! it), not parsing; peak memory is the process's high-water mark
//! (`VmHWM`), read after all runs of a scenario, so run one scenario per
//! process for a per-scenario figure (`make bench` does).

use std::time::Instant;

fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut repeat = 3;
    if let Some(i) = args.iter().position(|a| a == "--repeat") {
        repeat = args.get(i + 1).and_then(|n| n.parse().ok()).expect("--repeat takes a number");
        args.drain(i..i + 2);
    }
    if args.is_empty() {
        eprintln!("usage: bench [--repeat N] SCENARIO.toml...");
        std::process::exit(2);
    }
    println!("{:<16} {:>12} {:>9} {:>10} {:>8}", "scenario", "events", "wall s", "Mevents/s", "peak MB");
    for path in args {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let scenario = phb_sim::load(&text, &path, &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut best = f64::INFINITY;
        let mut events = 0;
        for _ in 0..repeat {
            let start = Instant::now();
            let out = phb_sim::run(&scenario, None, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
            best = best.min(start.elapsed().as_secs_f64());
            events = out.events;
        }
        let peak = peak_rss_mb().map_or("?".to_string(), |mb| format!("{mb:.1}"));
        println!("{:<16} {:>12} {:>9.3} {:>10.2} {:>8}", scenario.name, events, best, events as f64 / best / 1e6, peak);
    }
}
