//! TCP with a receiver window far above the path's capacity (issue 12):
//! benches/scenarios/thesis-7.toml with its RED bottleneck replaced by a
//! 250-packet drop-tail FIFO, so that losses come in bursts. Ten bulk flows
//! with `window = 10000` share a 10 Mb/s bottleneck (about 310 segments of
//! bandwidth-delay product plus buffer) behind a 100 Mb/s access link with
//! the default 50-packet queue. A sender whose recovery lets its window run
//! away bursts into that access queue; one that follows its RFCs (or ns-2's
//! or ns-3's own rules) loses its packets at the bottleneck, where the
//! congestion is. The test runs the real scenario file, shortened to 30 s
//! (the runaway showed within 30 s: 862 to 4 502 TCP drops at s->r1 for
//! every profile with NewReno before the fix), and counts drops after a
//! 5 s warm-up: the start-up is not recovery, and there the `linux`
//! profile's slow start (byte counting, two segments per delayed ACK, as
//! Linux) overflows the 50-packet access queue a little (27 TCP drops at
//! s->r1 against 1 471 at the bottleneck over the whole run, SACK).

use phb_sim::{Column, RunOutput};

const THESIS_7: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../benches/scenarios/thesis-7.toml");

/// thesis-7 with a 250-packet FIFO bottleneck, 30 s long, measured from 5 s.
fn fifo_thesis_7() -> String {
    let text = std::fs::read_to_string(THESIS_7).expect("benches/scenarios/thesis-7.toml");
    let mut doc: toml_edit::DocumentMut = text.parse().expect("thesis-7 is TOML");
    let mut fifo = toml_edit::Table::new();
    fifo.insert("kind", toml_edit::value("fifo"));
    fifo.insert("limit", toml_edit::value("250pkt"));
    let qdiscs = doc["qdiscs"].as_table_mut().expect("thesis-7 has [qdiscs]");
    assert!(qdiscs.contains_key("red"), "thesis-7's bottleneck qdisc is [qdiscs.red]");
    qdiscs.insert("red", toml_edit::Item::Table(fifo));
    doc["run"]["duration"] = toml_edit::value("30s");
    doc["run"]["warmup"] = toml_edit::value("5s");
    doc.to_string()
}

fn run(profile: &str, variant: &str, seed: u64) -> RunOutput {
    let sets = [format!("traffic[0].profile={profile}"), format!("traffic[0].variant={variant}")];
    let scenario = phb_sim::load(&fifo_thesis_7(), "thesis-7-fifo", &sets).unwrap_or_else(|e| panic!("{e}"));
    phb_sim::run(&scenario, Some(seed), &mut |_| {}).expect("the run conserves packets")
}

/// TCP packets (data and ACKs) dropped on the link direction `scope`.
fn tcp_drops(out: &RunOutput, scope: &str) -> u64 {
    let t = out.table("classes").expect("classes table");
    let (Some(Column::Str(scopes)), Some(Column::Str(classes)), Some(Column::U64(dropped))) =
        (t.column("scope"), t.column("class"), t.column("dropped"))
    else {
        panic!("classes table columns")
    };
    (0..scopes.len()).filter(|&i| scopes[i] == scope && classes[i] == "tcp").map(|i| dropped[i]).sum()
}

#[test]
fn with_a_large_receiver_window_tcp_loses_its_packets_at_the_bottleneck_not_at_its_own_access_link() {
    let mut failures = Vec::new();
    for profile in ["ns2", "ns2_2004", "linux", "ns3"] {
        for variant in ["reno", "newreno", "sack"] {
            let out = run(profile, variant, 1);
            let (access, bottleneck) = (tcp_drops(&out, "s->r1"), tcp_drops(&out, "r1->r2"));
            assert!(bottleneck > 100, "{profile}/{variant}: the FIFO bottleneck drops ({bottleneck})");
            if access * 100 > bottleneck {
                failures.push(format!("{profile}/{variant}: {access} TCP drops at s->r1, {bottleneck} at r1->r2"));
            }
        }
    }
    assert!(failures.is_empty(), "access-link drops above 1% of bottleneck drops:\n{}", failures.join("\n"));
}
