//! JoBS in a network (`scenarios/examples/jobs.toml`): deterministic, its
//! counters reported for the measured period, its guarantees visible in the
//! classes table, and the arrival trace of the JoBS benchmark complete.

use phb_sim::{load, run, trace_arrivals, Column, RunOutput, Table};

const EXAMPLE: &str = include_str!("../../../scenarios/examples/jobs.toml");

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

/// The `column` of the classes row at `scope` for `class`.
fn class_value(out: &RunOutput, scope: &str, class: &str, column: &str) -> f64 {
    let t = out.table("classes").unwrap();
    let (scopes, classes, values) = (strings(t, "scope"), strings(t, "class"), numbers(t, column));
    (0..scopes.len()).find(|&i| scopes[i] == scope && classes[i] == class).map(|i| values[i]).unwrap()
}

#[test]
fn jobs_runs_deterministically_and_reports_its_counters() {
    let scenario = load(EXAMPLE, "jobs.toml", &["run.duration=\"10s\"".to_owned()]).unwrap();
    let out = run(&scenario, None, &mut |_| {}).unwrap();
    assert_eq!(out, run(&scenario, None, &mut |_| {}).unwrap());
    let counters = out.table("counters").unwrap();
    let (scopes, queues, names) =
        (strings(counters, "scope"), strings(counters, "queue"), strings(counters, "counter"));
    // Only the JoBS port reports: 7 qdisc-wide counters and 3 per class
    // (delay violations, late for the loss bound, loss-bound drops).
    assert_eq!(counters.rows(), 7 + 3 * 4);
    assert!(scopes.iter().all(|s| s == "r1->r2"));
    assert!(names.iter().zip(queues).any(|(n, q)| n == "delay_violations" && q == "c1"));
    // Differentiation at the bottleneck: delays and losses grow class by
    // class, class 1 within its bounds, class 2 above its rate guarantee.
    let delay = |c| class_value(&out, "r1->r2", c, "delay_mean_s");
    let loss = |c| class_value(&out, "r1->r2", c, "loss_rate");
    assert!(delay("c1") < delay("c2") && delay("c2") < delay("c3") && delay("c3") < delay("c4"));
    assert!(class_value(&out, "r1->r2", "c1", "delay_max_s") <= 0.010);
    assert!(loss("c1") <= 0.01 + 1e-12);
    for (a, b) in [("c4", "c3"), ("c3", "c2")] {
        let ratio = loss(a) / loss(b);
        assert!((1.5..=2.5).contains(&ratio), "L{a}/L{b} = {ratio}");
    }
    assert!(class_value(&out, "r1->r2", "c2", "throughput_bps") > 3.5e6);
}

#[test]
fn the_trace_holds_every_arrival_at_the_port() {
    let scenario =
        load(EXAMPLE, "jobs.toml", &["run.duration=\"5s\"".to_owned(), "run.warmup=\"0s\"".to_owned()]).unwrap();
    let out = run(&scenario, None, &mut |_| {}).unwrap();
    let arrivals = trace_arrivals(&scenario, None, "r1->r2").unwrap().expect("the scope exists");
    let counted: f64 = ["c1", "c2", "c3", "c4"].iter().map(|c| class_value(&out, "r1->r2", c, "arrivals")).sum();
    assert_eq!(arrivals.len() as f64, counted);
    assert!(arrivals.windows(2).all(|w| w[0].time <= w[1].time));
    assert!(trace_arrivals(&scenario, None, "r2->r1").unwrap().is_some_and(|a| a.iter().all(|x| x.size == 40)));
    assert!(trace_arrivals(&scenario, None, "nowhere->r1").unwrap().is_none());
}
