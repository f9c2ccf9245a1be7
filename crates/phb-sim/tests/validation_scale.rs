//! Validation time grows about linearly with the size of the scenario: a
//! generated chain of 100 000 links validates in a few seconds (issue 11:
//! 16k links took 3 s, 64k 30 s, 200k more than a minute: node names,
//! duplicate links, pinned paths and traffic names were searched linearly),
//! and a dumbbell generator of 10 000 pairs expands and validates in well
//! under a second (issue 12).

use std::fmt::Write;
use std::time::{Duration, Instant};

use phb_sim::scenario::load;

/// A chain `h0 - r0 - r1 - … - r(n−2) - h1` of `n` links, one qdisc, a UDP
/// flow end to end pinned along the chain, and time series of two link
/// directions at the far end.
fn chain(n: usize) -> String {
    let routers = n - 1;
    let mut s = String::with_capacity(n * 96);
    s.push_str("[run]\nduration = \"1s\"\nsample_interval = \"100ms\"\n");
    let _ = writeln!(s, "sample_scopes = [\"end-to-end\", \"r{}->h1\", \"h1->r{}\"]", routers - 1, routers - 1);
    s.push_str("\n[classes]\nbe = 0\n\n[nodes]\nhosts = [\"h0\", \"h1\"]\nrouters = [");
    for r in 0..routers {
        let _ = write!(s, "\"r{r}\", ");
    }
    s.push_str("]\n\n[qdiscs.q]\nkind = \"fifo\"\nlimit = \"100pkt\"\n\n");
    let mut ends = vec!["h0".to_owned()];
    ends.extend((0..routers).map(|r| format!("r{r}")));
    ends.push("h1".to_owned());
    for pair in ends.windows(2) {
        let _ = write!(
            s,
            "[[links]]\nbetween = [\"{}\", \"{}\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\nqdisc = \"q\"\n\n",
            pair[0], pair[1]
        );
    }
    s.push_str("[[traffic]]\nname = \"u\"\nkind = \"cbr\"\nfrom = \"h0\"\nto = \"h1\"\nclass = \"be\"\n");
    s.push_str("packet_size = \"500B\"\nrate = \"1Mbps\"\npath = [");
    for end in &ends {
        let _ = write!(s, "\"{end}\", ");
    }
    s.push_str("]\n");
    s
}

/// Measured in release mode on the shared 2-core machine: 2.0 s (of which
/// about 1.1 s parse the TOML twice, `toml` and `toml_edit`); 4.5 s for
/// 200 000. Before, 16 000 links took 2.5 s and the time grew as the
/// square. The budget leaves room for a loaded machine; an unoptimised
/// build gets more.
#[test]
fn a_hundred_thousand_links_validate_in_a_few_seconds() {
    let budget = Duration::from_secs(if cfg!(debug_assertions) { 120 } else { 10 });
    let text = chain(100_000);
    let start = Instant::now();
    let scenario = load(&text, "chain.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    let elapsed = start.elapsed();
    assert_eq!(scenario.links.len(), 100_000);
    eprintln!("100 000 links validated in {elapsed:?}");
    assert!(elapsed < budget, "100 000 links took {elapsed:?} (budget {budget:?})");
}

/// A dumbbell of `pairs` pairs, each with its TCP group and a drawn delay.
fn dumbbell(pairs: usize) -> String {
    format!(
        "[run]\nduration = \"10s\"\n\n[classes]\nbe = 0\n\n[qdiscs.red]\nkind = \"red\"\nlimit = \"1000pkt\"\nmin_th = 100\nmax_th = 300\n
[[generators]]
kind = \"dumbbell\"
name = \"db\"
count = {pairs}
bottleneck = {{ rate = \"1Gbps\", delay = \"10ms\", qdisc = \"red\" }}
sender_links = {{ rate = \"100Mbps\", delay = {{ uniform = [\"1ms\", \"100ms\"] }} }}
receiver_links = {{ rate = \"100Mbps\", delay = \"1ms\" }}
traffic = {{ kind = \"tcp\", class = \"be\", start_jitter = \"1s\" }}
"
    )
}

/// Measured in release mode on the shared 2-core machine: 0.10 s for
/// 10 000 pairs (20 001 links, 10 000 TCP groups), 1.7 s for 100 000. The
/// issue asks for under 1 s; the budget leaves room for a loaded machine.
#[test]
fn a_dumbbell_of_ten_thousand_pairs_validates_in_under_a_second() {
    let budget = Duration::from_secs(if cfg!(debug_assertions) { 60 } else { 3 });
    let text = dumbbell(10_000);
    let start = Instant::now();
    let scenario = load(&text, "dumbbell.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    let elapsed = start.elapsed();
    assert_eq!((scenario.nodes.len(), scenario.links.len(), scenario.groups.len()), (20_002, 20_001, 10_000));
    eprintln!("a dumbbell of 10 000 pairs validated in {elapsed:?}");
    assert!(elapsed < budget, "10 000 pairs took {elapsed:?} (budget {budget:?})");
}

/// A message listing the nodes shows 20 names and counts the rest.
#[test]
fn long_lists_in_messages_are_cut() {
    let text = chain(30).replacen("to = \"h1\"", "to = \"nowhere\"", 1);
    let message = load(&text, "chain.toml", &[]).unwrap_err().to_string();
    assert!(
        message.ends_with("nowhere is not a node; nodes are h0, h1, r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15, r16, r17, and 11 more"),
        "{message}"
    );
}
