//! The speed benchmark: runs each scenario file given on the command line
//! (`make bench` passes `benches/scenarios/*.toml`) `--repeat` times and
//! reports events, the fastest wall time, events per second and the
//! process's peak resident memory.
//!
//! Wall time covers the simulation only (building the network and running
//! it), not parsing; peak memory is the process's high-water mark
//! (`VmHWM`), read after all runs of a scenario, so run one scenario per
//! process for a per-scenario figure (`make bench` does).
//!
//! `--trace A->B DIR` adds a `[trace]` section recording every event at
//! link direction `A->B` (the scenario must have none), writes the trace to
//! `DIR` and reports the event log's rows and its bytes per row: the cost
//! of tracing (issue 29's target: at most 2× the wall time, 40 bytes per
//! event).

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
    let mut trace = None;
    if let Some(i) = args.iter().position(|a| a == "--trace") {
        let (link, dir) = match (args.get(i + 1), args.get(i + 2)) {
            (Some(link), Some(dir)) => (link.clone(), std::path::PathBuf::from(dir)),
            _ => panic!("--trace takes a link direction and a directory"),
        };
        args.drain(i..i + 3);
        trace = Some((link, dir));
    }
    if args.is_empty() {
        eprintln!("usage: bench [--repeat N] [--trace A->B DIR] SCENARIO.toml...");
        std::process::exit(2);
    }
    println!("{:<16} {:>12} {:>9} {:>10} {:>8}", "scenario", "events", "wall s", "Mevents/s", "peak MB");
    for path in args {
        let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        if let Some((link, _)) = &trace {
            text.push_str(&format!("\n[trace]\nlinks = [{link:?}]\nmax_size = \"100GB\"\n"));
        }
        let scenario = phb_sim::load(&text, &path, &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut best = f64::INFINITY;
        let mut events = 0;
        for _ in 0..repeat {
            let start = Instant::now();
            let dir = trace.as_ref().map(|(_, dir)| dir.as_path());
            let out = phb_sim::run_traced(&scenario, None, &mut |_| std::ops::ControlFlow::Continue(()), dir)
                .unwrap_or_else(|e| panic!("{e}"));
            best = best.min(start.elapsed().as_secs_f64());
            events = out.events;
        }
        let peak = peak_rss_mb().map_or("?".to_string(), |mb| format!("{mb:.1}"));
        println!("{:<16} {:>12} {:>9.3} {:>10.2} {:>8}", scenario.name, events, best, events as f64 / best / 1e6, peak);
        if let Some((link, dir)) = &trace {
            let log = dir.join(phb_sim::trace::EVENT_LOG_FILE);
            let bytes = std::fs::metadata(&log).unwrap_or_else(|e| panic!("{}: {e}", log.display())).len();
            let file = std::fs::File::open(&log).expect("opened above");
            let reader = parquet::file::serialized_reader::SerializedFileReader::new(file).expect("a Parquet file");
            let rows = parquet::file::reader::FileReader::metadata(&reader).file_metadata().num_rows();
            println!("  trace of {link}: {rows} events, {bytes} bytes, {:.1} bytes/event", bytes as f64 / rows as f64);
        }
    }
}
