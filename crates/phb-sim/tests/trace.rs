//! Packet traces in real runs (`phb_sim::trace`): the event log conserves
//! packets per class and agrees with the `classes` table, the same seed
//! writes the same bytes, tracing leaves the run's results untouched, and
//! `[trace]` is validated, its size estimated against `trace.max_size`.

use std::collections::BTreeMap;
use std::fs::File;
use std::ops::ControlFlow;
use std::path::PathBuf;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use phb_sim::{load, run_traced, Column, RunOutput, Scenario};

/// scenarios/examples/tcp-udp-red.toml made short and without warm-up
/// (the classes table then counts what the whole trace saw), tracing its
/// RED bottleneck r1->r2.
fn scenario(trace: &str) -> Scenario {
    let text = include_str!("../../../scenarios/examples/tcp-udp-red.toml")
        .replace("duration = \"60s\"", "duration = \"8s\"")
        .replace("warmup = \"10s\"", "warmup = \"0s\"");
    load(&format!("{text}\n[trace]\n{trace}\n"), "tcp-udp-red.toml", &[]).unwrap()
}

/// A fresh directory for one test's trace.
fn dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trace-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn traced(scenario: &Scenario, name: &str) -> (RunOutput, PathBuf) {
    let dir = dir(name);
    let out = run_traced(scenario, None, &mut |_| ControlFlow::Continue(()), Some(&dir)).unwrap();
    (out, dir)
}

fn batches(dir: &std::path::Path) -> Vec<RecordBatch> {
    let file = File::open(dir.join("events.parquet")).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap().map(Result::unwrap).collect()
}

/// A dictionary column's values as strings.
fn names(batch: &RecordBatch, column: &str) -> Vec<String> {
    let dict = batch.column_by_name(column).unwrap().as_dictionary::<Int32Type>();
    let values = dict.values().as_string::<i32>();
    dict.keys().values().iter().map(|&k| values.value(k as usize).to_owned()).collect()
}

fn ints(batch: &RecordBatch, column: &str) -> Vec<i64> {
    batch.column_by_name(column).unwrap().as_primitive::<Int64Type>().values().to_vec()
}

fn classes_at(out: &RunOutput, scope: &str, column: &str) -> BTreeMap<String, u64> {
    let t = out.table("classes").unwrap();
    let (Some(Column::Str(scopes)), Some(Column::Str(classes)), Some(Column::U64(values))) =
        (t.column("scope"), t.column("class"), t.column(column))
    else {
        panic!("classes table columns")
    };
    (0..scopes.len()).filter(|&i| scopes[i] == scope).map(|i| (classes[i].clone(), values[i])).collect()
}

#[test]
fn the_event_log_conserves_packets_per_class_and_matches_the_classes_table() {
    let (out, dir) = traced(&scenario("links = [\"r1->r2\"]"), "conservation");
    let docs = include_str!("../../../docs/results.md");
    for field in batches(&dir)[0].schema().fields() {
        assert!(docs.contains(&format!("`{}`", field.name())), "docs/results.md does not list events.{}", field.name());
        assert!(!field.metadata()["description"].is_empty() && field.metadata().contains_key("unit"));
    }
    let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut rows = 0;
    let mut last_time = 0;
    for batch in batches(&dir) {
        let (events, classes, scopes, times) =
            (names(&batch, "event"), names(&batch, "class"), names(&batch, "scope"), ints(&batch, "time_ns"));
        for i in 0..batch.num_rows() {
            assert_eq!(scopes[i], "r1->r2");
            assert!(times[i] >= last_time, "rows are in time order");
            last_time = times[i];
            *counts.entry((classes[i].clone(), events[i].clone())).or_default() += 1;
            rows += 1;
        }
    }
    assert!(rows > 10_000, "{rows} rows");
    let get = |class: &str, event: &str| counts.get(&(class.to_owned(), event.to_owned())).copied().unwrap_or(0);
    let (arrivals, departures, dropped, queued) = (
        classes_at(&out, "r1->r2", "arrivals"),
        classes_at(&out, "r1->r2", "departures"),
        classes_at(&out, "r1->r2", "dropped"),
        classes_at(&out, "r1->r2", "queued_end"),
    );
    for class in ["tcp", "udp"] {
        let (a, e, d, q) = (get(class, "arrive"), get(class, "enqueue"), get(class, "drop"), get(class, "dequeue"));
        assert!(d > 0, "{class}: the RED bottleneck drops");
        assert_eq!(a, q + d + queued[class], "{class}: arrivals = departures + drops + left in queue");
        assert_eq!((a, q, d), (arrivals[class], departures[class], dropped[class]), "{class}: as the classes table");
        assert!(e <= a && e + d >= a, "{class}: every arrival is kept or dropped");
        // every packet that started its transmission before the end minus
        // the path's latency reached the far end
        assert!(get(class, "deliver") <= q && get(class, "deliver") + 50 >= q, "{class}: deliveries");
    }
}

#[test]
fn the_same_seed_writes_the_same_trace_and_tracing_changes_no_result() {
    let s = scenario("links = [\"r1->r2\", \"r2->r1\"]\npcap = true");
    let (a, dir_a) = traced(&s, "same-a");
    let (b, dir_b) = traced(&s, "same-b");
    let bytes = |d: &PathBuf| std::fs::read(d.join("events.parquet")).unwrap();
    assert!(bytes(&dir_a) == bytes(&dir_b), "byte-identical traces");
    let pcap = |d: &PathBuf| std::fs::read(d.join("trace.pcapng")).unwrap();
    assert!(pcap(&dir_a).len() > 100_000 && pcap(&dir_a) == pcap(&dir_b), "byte-identical pcapng files");
    assert_eq!(a, b);
    let untraced = phb_sim::run(&s, None, &mut |_| {}).unwrap();
    assert_eq!(a, untraced, "a traced run's results are the untraced run's");
    let (other_seed, dir_c) = {
        let dir = dir("same-c");
        (run_traced(&s, Some(2), &mut |_| ControlFlow::Continue(()), Some(&dir)).unwrap(), dir)
    };
    assert_ne!(other_seed, a);
    assert!(bytes(&dir_c) != bytes(&dir_a));
}

#[test]
fn filters_keep_only_the_chosen_classes_flows_window_and_events() {
    let s = scenario(
        "links = [\"r1->r2\"]\nclasses = [\"tcp\"]\nflows = [\"tcp\"]\nstart = \"2s\"\nend = \"3s\"\nevents = [\"drop\", \"dequeue\"]",
    );
    let (_, dir) = traced(&s, "filters");
    let mut rows = 0;
    for batch in batches(&dir) {
        let (events, classes, flows, times, seq) = (
            names(&batch, "event"),
            names(&batch, "class"),
            names(&batch, "flow"),
            ints(&batch, "time_ns"),
            ints(&batch, "seq"),
        );
        for i in 0..batch.num_rows() {
            assert!(events[i] == "drop" || events[i] == "dequeue", "{}", events[i]);
            assert_eq!(classes[i], "tcp");
            assert!(flows[i].starts_with("tcp."), "{}", flows[i]);
            assert!((2_000_000_000..3_000_000_000).contains(&times[i]));
            assert!(seq[i] >= 0);
            rows += 1;
        }
    }
    assert!(rows > 100, "{rows}");
}

#[test]
fn a_scenario_without_a_directory_or_a_trace_writes_nothing() {
    let dir = dir("none");
    let text = include_str!("../../../scenarios/examples/tcp-udp-red.toml")
        .replace("duration = \"60s\"", "duration = \"11s\"");
    let s = load(&text, "x.toml", &[]).unwrap();
    run_traced(&s, None, &mut |_| ControlFlow::Continue(()), Some(&dir)).unwrap();
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn a_bad_trace_section_is_refused_naming_the_key() {
    let text = include_str!("../../../scenarios/examples/tcp-udp-red.toml");
    let err = |trace: &str| load(&format!("{text}\n[trace]\n{trace}\n"), "x.toml", &[]).unwrap_err().to_string();
    assert!(err("links = [\"r1->d1\"]").contains("trace.links[0]"), "{}", err("links = [\"r1->d1\"]"));
    assert!(err("links = [\"r1-r2\"]").contains("not a link direction"));
    assert!(err("links = []").contains("trace.links"));
    assert!(err("links = [\"r1->r2\"]\nclasses = [\"ef\"]").contains("trace.classes[0]"));
    assert!(err("links = [\"r1->r2\"]\nflows = [\"nope\"]").contains("trace.flows[0]"));
    assert!(err("links = [\"r1->r2\"]\nevents = [\"send\"]").contains("trace.events[0]"));
    assert!(err("links = [\"r1->r2\"]\nstart = \"5s\"\nend = \"5s\"").contains("trace.end"));
    assert!(err("links = [\"r1->r2\"]\nend = \"61s\"").contains("trace.end"));
    let bad_pcap = err("links = [\"r1->r2\"]\npcap = \"yes\"");
    assert!(bad_pcap.contains("trace.pcap"), "{bad_pcap}");
    // 10 Mb/s of 500-byte packets for 60 s, 5 rows of 40 bytes each: 30 MB
    let big = err("links = [\"r1->r2\"]\nmax_size = \"20MB\"");
    assert!(big.contains("about 28.6 MiB"), "{big}");
    assert!(big.contains("trace.links") && big.contains("trace.max_size"), "{big}");
    assert!(load(&format!("{text}\n[trace]\nlinks = [\"r1->r2\"]\nmax_size = \"40MB\"\n"), "x.toml", &[]).is_ok());
    // the pcapng file adds a block of at most 112 bytes a packet: 44.6 MiB
    let with_pcap = err("links = [\"r1->r2\"]\nmax_size = \"40MB\"\npcap = true");
    assert!(with_pcap.contains("about 44.6 MiB"), "{with_pcap}");
}
