//! The receiver's delayed-ACK timer in a simulated network: a segment
//! that arrives after an ACK cancelled the timer is acknowledged when its
//! own timer expires, not left for the sender's retransmission timeout.

use phb_sim::scenario::load;
use phb_sim::{run, Column};

/// One TCP flow sending 3-segment files (two full segments, then 500
/// bytes) across a 10 Mb/s link with 5 ms each way, delayed ACKs of 100 ms
/// and a 1 s minimum RTO: the first two segments are acknowledged at once,
/// the third only by the delayed-ACK timer.
const SCENARIO: &str = r#"
[run]
duration = "5s"
[classes]
be = 0
[nodes]
hosts = ["s", "d"]
[[links]]
between = ["s", "d"]
rate = "10Mbps"
delay = "5ms"
[[traffic]]
name = "files"
kind = "tcp"
from = "s"
to = "d"
class = "be"
profile = "linux"
mss = "1000B"
initial_window = 4
delayed_ack = true
delack_timeout = "100ms"
min_rto = "1s"
app = "files"
file_size = "2500B"
"#;

#[test]
fn the_last_segment_of_a_burst_is_acknowledged_by_its_own_delayed_ack_timer() {
    let scenario = load(SCENARIO, "delack.toml", &[]).unwrap();
    let out = run(&scenario, None, &mut |_| {}).unwrap();
    let transfers = out.table("transfers").unwrap();
    let Some(Column::F64(completion)) = transfers.column("completion_s") else { panic!("no completion_s") };
    // Ten RTTs at least fit in the 5 s: the first file was stuck until the
    // RTO (1 s) before the fix, and every file after it.
    assert!(completion.len() >= 20, "{} files in 5 s: {completion:?}", completion.len());
    // A round trip (10 ms), the file's time at 10 Mb/s and the 100 ms timer;
    // far below the RTO.
    for c in completion {
        assert!((0.1..0.2).contains(c), "{completion:?}");
    }
    let Some(Column::U64(retransmissions)) = out.table("flows").unwrap().column("retransmissions") else {
        panic!("no retransmissions")
    };
    assert_eq!(retransmissions, &[0]);
}
