//! A quick look at a run without the Python front end: for each seed, the
//! events processed, each group's throughput, timeouts and fast
//! retransmits, the drops of each link direction that dropped anything, and
//! (when flows are traced) the largest `cwnd` and `ssthresh` sampled.
//!
//! ```text
//! cargo run --release --example summary -- SCENARIO.toml [--seeds 1-3] [--set key=value]...
//! ```
//!
//! `--set` takes the overrides of `phblab run --set` (e.g.
//! `traffic[0].variant=sack`).

use phb_sim::{Column, RunOutput, Table};

fn strings<'t>(t: &'t Table, name: &str) -> &'t [String] {
    match t.column(name) {
        Some(Column::Str(v)) => v,
        _ => panic!("{}: no string column {name}", t.name),
    }
}

fn numbers(t: &Table, name: &str) -> Vec<f64> {
    match t.column(name) {
        Some(Column::F64(v)) => v.clone(),
        Some(Column::U64(v)) => v.iter().map(|&x| x as f64).collect(),
        _ => panic!("{}: no numeric column {name}", t.name),
    }
}

fn report(out: &RunOutput) {
    let flows = out.table("flows").expect("flows table");
    let groups = strings(flows, "group");
    let (tput, timeouts, fast) =
        (numbers(flows, "throughput_bps"), numbers(flows, "timeouts"), numbers(flows, "fast_retransmits"));
    let mut names: Vec<&String> = groups.iter().collect();
    names.dedup();
    if names.len() > 4 {
        // Many groups (one flow each, say): one line for all of them.
        names.clear();
    }
    let sum = |g: Option<&String>, v: &[f64]| -> f64 {
        groups.iter().zip(v).filter(|(n, _)| g.is_none_or(|g| *n == g)).map(|(_, x)| x).sum()
    };
    print!("seed {} events {}", out.seed, out.events);
    let all = if names.is_empty() { vec![None] } else { names.into_iter().map(Some).collect() };
    for g in all {
        print!(
            " | {}: {:.3} Mb/s, {} timeouts, {} fast retransmits",
            g.map_or("all flows", |g| g.as_str()),
            sum(g, &tput) / 1e6,
            sum(g, &timeouts),
            sum(g, &fast)
        );
    }
    println!();
    let classes = out.table("classes").expect("classes table");
    let (scope, class, dropped) = (strings(classes, "scope"), strings(classes, "class"), numbers(classes, "dropped"));
    for i in 0..scope.len() {
        if scope[i] != "end-to-end" && dropped[i] > 0.0 {
            println!("    drops {:<10} {:<6} {}", scope[i], class[i], dropped[i]);
        }
    }
    if let Some(series) = out.table("timeseries").filter(|t| t.rows() > 0) {
        let (metric, value) = (strings(series, "metric"), numbers(series, "value"));
        for m in ["cwnd_segments", "ssthresh_segments"] {
            let max = metric
                .iter()
                .zip(&value)
                .filter(|(n, v)| *n == m && v.is_finite())
                .map(|(_, v)| *v)
                .fold(f64::NAN, f64::max);
            if max.is_finite() {
                println!("    max {m} {max:.1}");
            }
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut seeds = (1, 1);
    let mut sets = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seeds" => {
                let s = args.next().expect("--seeds takes A-B or N");
                seeds = match s.split_once('-') {
                    Some((a, b)) => (a.parse().expect("seed"), b.parse().expect("seed")),
                    None => {
                        let n = s.parse().expect("seed");
                        (n, n)
                    }
                };
            }
            "--set" => sets.push(args.next().expect("--set takes key=value")),
            _ => path = Some(a),
        }
    }
    let path = path.expect("usage: summary SCENARIO.toml [--seeds A-B] [--set key=value]...");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let scenario = phb_sim::load(&text, &path, &sets).unwrap_or_else(|e| panic!("{e}"));
    for seed in seeds.0..=seeds.1 {
        let out = phb_sim::run(&scenario, Some(seed), &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
        report(&out);
    }
}
