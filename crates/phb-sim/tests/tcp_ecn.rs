//! The ECN-capable TCP sender against RFC 3168 §6.1.2: an ECN-Echo halves
//! the window as a fast retransmit would, without resending anything, at
//! most once per window of data; the next new segment carries CWR; an
//! ACK with ECE never opens the window; a sender without ECN ignores ECE.

use phb::Time;
use phb_sim::tcp::{Ack, Segment, Sender, TcpConfig};

const MSS: u64 = 1000;

/// An ns-2 sender with a 10-segment window in congestion avoidance, without
/// Limited Transmit (so that only fast recovery's inflation sends new data
/// on duplicate ACKs).
fn sender(ecn: bool) -> (Sender, Vec<Segment>) {
    let cfg = TcpConfig {
        mss: MSS as u32,
        initial_window: 10,
        initial_ssthresh: Some(10),
        window: 40,
        ecn,
        limited_transmit: false,
        ..TcpConfig::ns2()
    };
    let mut s = Sender::new(cfg);
    let mut out = Vec::new();
    s.push(1000 * MSS, Time::ZERO, &mut out);
    (s, out)
}

fn ack(s: &mut Sender, segments: u64, ece: bool, at_ms: u64) -> Vec<Segment> {
    let mut out = Vec::new();
    s.on_ack(&Ack { ack: segments * MSS, ece, ..Ack::default() }, Time::from_millis(at_ms), &mut out);
    out
}

#[test]
fn an_ecn_echo_halves_the_window_once_per_window_and_the_next_new_segment_carries_cwr() {
    let (mut s, first) = sender(true);
    assert_eq!(first.len(), 10);
    assert!(first.iter().all(|seg| !seg.cwr && !seg.retransmission));

    // The ACK of segment 0 echoes a mark: ssthresh and cwnd halve (ns-2's
    // rules: floor(10/2) segments), nothing is resent, and with 9 segments
    // in flight in a window of 5 nothing new leaves.
    assert!(ack(&mut s, 1, true, 100).is_empty());
    assert_eq!(s.stats.ecn_reductions, 1);
    assert_eq!((s.cwnd_bytes(), s.ssthresh_bytes()), (5.0 * MSS as f64, 5.0 * MSS as f64));
    assert_eq!((s.stats.retransmissions, s.stats.fast_retransmits), (0, 0));

    // The receiver echoes until CWR reaches it: these ACKs of the same
    // window are ignored, and do not open the window either.
    let mut sent = Vec::new();
    for n in 2..=7 {
        sent.extend(ack(&mut s, n, true, 100 + n));
        assert_eq!(s.stats.ecn_reductions, 1, "once per window");
        assert_eq!(s.cwnd_bytes(), 5.0 * MSS as f64, "an ECE ACK does not open the window");
    }
    // Flight fell to 4 segments at the ACK up to segment 6: segment 10
    // left, with CWR, and segment 11 at the next ACK, without it.
    assert_eq!(sent.iter().map(|seg| (seg.seq / MSS, seg.cwr)).collect::<Vec<_>>(), vec![(10, true), (11, false)]);

    // The window of the reaction (up to segment 10) is acknowledged: the
    // plain ACK opens the window again, and the next echo is acted on.
    ack(&mut s, 10, false, 200);
    assert!(s.cwnd_bytes() > 5.0 * MSS as f64);
    ack(&mut s, 11, true, 210);
    assert_eq!(s.stats.ecn_reductions, 2);
    assert!(ack(&mut s, 12, false, 220).iter().chain(&ack(&mut s, 13, false, 230)).any(|seg| seg.cwr));
}

#[test]
fn a_sender_without_ecn_ignores_ecn_echo() {
    let (mut s, _) = sender(false);
    let out = ack(&mut s, 1, true, 100);
    assert_eq!(s.stats.ecn_reductions, 0);
    assert!(s.cwnd_bytes() > 10.0 * MSS as f64, "the window opened as for any ACK");
    assert!(out.iter().all(|seg| !seg.cwr));
}

/// An echo during loss recovery is not a second reduction (RFC 3168
/// §6.1.2: at most one response per window to loss or ECE), and the
/// fast retransmit itself queues CWR for the next new segment.
#[test]
fn an_echo_during_fast_recovery_is_not_a_second_reduction() {
    let (mut s, _) = sender(true);
    ack(&mut s, 1, false, 100);
    for t in 0..3 {
        ack(&mut s, 1, false, 101 + t);
    }
    assert_eq!(s.stats.fast_retransmits, 1);
    let ssthresh = s.ssthresh_bytes();
    let mut out = Vec::new();
    for t in 0..4 {
        out.extend(ack(&mut s, 1, true, 110 + t));
    }
    assert_eq!((s.stats.ecn_reductions, s.ssthresh_bytes()), (0, ssthresh));
    let new: Vec<_> = out.iter().filter(|seg| !seg.retransmission).collect();
    assert!(!new.is_empty() && new[0].cwr && new[1..].iter().all(|seg| !seg.cwr), "{out:?}");
}
