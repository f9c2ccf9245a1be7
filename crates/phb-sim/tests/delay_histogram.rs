//! The `delay_histogram` table in a real run: for every (scope, class) row
//! of `classes`, buckets that hold exactly the packets behind its delays,
//! in order, and agree with its percentiles and maximum.

use phb_sim::{load, run, Column, RunOutput, Table};

const SCENARIO: &str = r#"
[run]
duration = "20s"
warmup = "2s"

[classes]
be = 0
ef = 46

[nodes]
hosts = ["s", "d"]
routers = ["r1", "r2"]

[qdiscs.red]
kind = "red"
limit = "200pkt"
min_th = 20
max_th = 60

[[links]]
between = ["s", "r1"]
rate = "100Mbps"
delay = "1ms"

[[links]]
between = ["r1", "r2"]
rate = "10Mbps"
delay = "10ms"
qdisc = "red"

[[links]]
between = ["r2", "d"]
rate = "100Mbps"
delay = "1ms"

[[traffic]]
name = "onoff"
kind = "pareto_onoff"
from = "s"
to = "d"
class = "be"
count = 16
packet_size = "500B"
rate = "1Mbps"
on_mean = "50ms"
off_mean = "50ms"

[[traffic]]
name = "web"
kind = "tcp"
from = "s"
to = "d"
class = "ef"
count = 2
window = 1000
"#;

fn strings<'a>(t: &'a Table, name: &str) -> &'a [String] {
    match t.column(name) {
        Some(Column::Str(v)) => v,
        _ => panic!("{}.{name}", t.name),
    }
}

fn floats<'a>(t: &'a Table, name: &str) -> &'a [f64] {
    match t.column(name) {
        Some(Column::F64(v)) => v,
        _ => panic!("{}.{name}", t.name),
    }
}

fn counts<'a>(t: &'a Table, name: &str) -> &'a [u64] {
    match t.column(name) {
        Some(Column::U64(v)) => v,
        _ => panic!("{}.{name}", t.name),
    }
}

#[test]
fn every_class_s_histogram_holds_its_delays() {
    let out: RunOutput = run(&load(SCENARIO, "h.toml", &[]).unwrap(), None, &mut |_| {}).unwrap();
    let (classes, histogram) = (out.table("classes").unwrap(), out.table("delay_histogram").unwrap());
    let (scope, class) = (strings(histogram, "scope"), strings(histogram, "class"));
    let (lower, upper, packets) =
        (floats(histogram, "lower_s"), floats(histogram, "upper_s"), counts(histogram, "packets"));
    let mut checked = 0;
    for (row, (s, c)) in strings(classes, "scope").iter().zip(strings(classes, "class")).enumerate() {
        let buckets: Vec<usize> = (0..scope.len()).filter(|&i| &scope[i] == s && &class[i] == c).collect();
        let departed = counts(classes, "departures")[row];
        assert_eq!(buckets.iter().map(|&i| packets[i]).sum::<u64>(), departed, "{s} {c}");
        if departed == 0 {
            continue;
        }
        for w in buckets.windows(2) {
            assert!(upper[w[0]] <= lower[w[1]], "{s} {c}: buckets out of order");
        }
        // The bucket holding the median holds p50 (the classes table's is a bucket's middle at 1/128).
        let p50 = floats(classes, "delay_p50_s")[row];
        let (mut seen, half) = (0, departed.div_ceil(2));
        let median = *buckets
            .iter()
            .find(|&&i| {
                seen += packets[i];
                seen >= half
            })
            .unwrap();
        assert!(lower[median] <= p50 * (1.0 + 1e-9) && p50 <= upper[median], "{s} {c}: p50 {p50} not in its bucket");
        let last = *buckets.last().unwrap();
        let max = floats(classes, "delay_max_s")[row];
        assert!(lower[last] <= max && max < upper[last], "{s} {c}: max {max}");
        checked += 1;
    }
    assert!(checked >= 6, "end to end and at the link directions, both classes");
}
