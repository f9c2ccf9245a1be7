//! Event-level tests of TCP loss recovery: a sender and a receiver joined
//! by a loss-free pipe of fixed delay, where the test chooses which segment
//! transmissions are lost.

use std::collections::{BTreeMap, HashSet};

use phb::Time;
use phb_sim::tcp::{Ack, PartialAckTimer, Receiver, Rules, Segment, Sender, TcpConfig, Variant};

enum Msg {
    /// A segment and its send time.
    Data(Segment, Time),
    Ack(Ack),
}

/// A sender and receiver 50 ms apart each way (100 ms RTT), no queueing.
struct Pipe {
    now: Time,
    config: TcpConfig,
    sender: Sender,
    receiver: Receiver,
    in_flight: BTreeMap<(Time, u64), Msg>,
    seq: u64,
    /// First transmissions of these sequence numbers are lost.
    drop_first: HashSet<u64>,
    dropped: HashSet<u64>,
    /// (time, seq, retransmission) of every segment sent.
    log: Vec<(Time, u64, bool)>,
}

const ONE_WAY: Time = Time::from_millis(50);
const MSS: u64 = 1000;

impl Pipe {
    fn new(variant: Variant, window: u32, drops: &[u64]) -> Pipe {
        let cfg = TcpConfig {
            variant,
            mss: MSS as u32,
            initial_window: window,
            initial_ssthresh: Some(window),
            window,
            granularity: Time::from_millis(1),
            min_rto: Time::from_millis(200),
            initial_rto: Time::from_secs(1),
            ..TcpConfig::ns2()
        };
        Pipe {
            now: Time::ZERO,
            receiver: Receiver::new(cfg.mss, variant == Variant::Sack, false, Time::from_millis(100)),
            sender: Sender::new(cfg.clone()),
            config: cfg,
            in_flight: BTreeMap::new(),
            seq: 0,
            drop_first: drops.iter().map(|s| s * MSS).collect(),
            dropped: HashSet::new(),
            log: Vec::new(),
        }
    }

    fn send(&mut self, segments: Vec<Segment>) {
        for s in segments {
            self.log.push((self.now, s.seq, s.retransmission));
            if self.drop_first.contains(&s.seq) && self.dropped.insert(s.seq) {
                continue;
            }
            self.seq += 1;
            self.in_flight.insert((self.now + ONE_WAY, self.seq), Msg::Data(s, self.now));
        }
    }

    /// Runs until `bytes` are acknowledged or `limit` passes.
    fn run(&mut self, bytes: u64, limit: Time) {
        let mut out = Vec::new();
        self.sender.push(bytes, self.now, &mut out);
        self.send(std::mem::take(&mut out));
        while self.sender.snd_una() < bytes && self.now < limit {
            let next_msg = self.in_flight.keys().next().map(|k| k.0);
            let timer = self.sender.rto_deadline();
            let message_first = match (next_msg, timer) {
                (None, None) => break,
                (Some(t), Some(r)) => t <= r,
                (Some(_), None) => true,
                (None, Some(_)) => false,
            };
            if message_first {
                let (key, msg) = self.in_flight.pop_first().unwrap();
                self.now = key.0;
                match msg {
                    Msg::Data(s, sent_at) => {
                        if let Some(ack) = self.receiver.on_segment(s.seq, s.len, sent_at, self.now) {
                            self.seq += 1;
                            self.in_flight.insert((self.now + ONE_WAY, self.seq), Msg::Ack(ack));
                        }
                    }
                    Msg::Ack(a) => {
                        self.sender.on_ack(&a, self.now, &mut out);
                        self.send(std::mem::take(&mut out));
                    }
                }
            } else {
                self.now = timer.unwrap();
                self.sender.on_timeout(self.now, &mut out);
                self.send(std::mem::take(&mut out));
            }
        }
    }

    fn retransmissions(&self) -> Vec<u64> {
        self.log.iter().filter(|l| l.2).map(|l| l.1 / MSS).collect()
    }
}

#[test]
fn three_duplicate_acks_trigger_exactly_one_fast_retransmit() {
    for variant in [Variant::Reno, Variant::NewReno, Variant::Sack] {
        let mut p = Pipe::new(variant, 10, &[3]);
        p.run(30 * MSS, Time::from_secs(10));
        assert_eq!(p.sender.snd_una(), 30 * MSS, "{variant:?} finishes");
        assert_eq!(p.sender.stats.fast_retransmits, 1, "{variant:?}");
        assert_eq!(p.sender.stats.timeouts, 0, "{variant:?}");
        assert_eq!(p.retransmissions(), vec![3], "{variant:?} resends only the lost segment");
        // The retransmission leaves when the third duplicate ACK arrives:
        // one RTT after segments 4, 5, 6 were sent at time 0.
        let at = p.log.iter().find(|l| l.2).unwrap().0;
        assert_eq!(at, Time::from_millis(100), "{variant:?}");
    }
}

#[test]
fn newreno_repairs_several_losses_in_a_window_without_a_timeout_where_reno_times_out() {
    let losses = [3, 5, 7, 9];
    let mut reno = Pipe::new(Variant::Reno, 20, &losses);
    reno.run(60 * MSS, Time::from_secs(30));
    assert!(reno.sender.stats.timeouts >= 1, "Reno needs a timeout for four losses in one window");

    let mut newreno = Pipe::new(Variant::NewReno, 20, &losses);
    newreno.run(60 * MSS, Time::from_secs(30));
    assert_eq!(newreno.sender.stats.timeouts, 0);
    assert_eq!(newreno.sender.stats.fast_retransmits, 1, "one recovery episode");
    assert_eq!(newreno.retransmissions(), losses.to_vec());
    // One hole per RTT: the last retransmission goes three RTTs after the first.
    let times: Vec<Time> = newreno.log.iter().filter(|l| l.2).map(|l| l.0).collect();
    assert_eq!(times[3] - times[0], Time::from_millis(300));
}

#[test]
fn sack_repairs_several_losses_in_about_one_rtt() {
    let losses = [3, 5, 7, 9];
    let mut sack = Pipe::new(Variant::Sack, 20, &losses);
    sack.run(60 * MSS, Time::from_secs(30));
    assert_eq!(sack.sender.stats.timeouts, 0);
    assert_eq!(sack.retransmissions(), losses.to_vec());
    let times: Vec<Time> = sack.log.iter().filter(|l| l.2).map(|l| l.0).collect();
    assert!(times[3] - times[0] < Time::from_millis(100), "all holes resent within one RTT: {times:?}");
}

#[test]
fn the_rto_doubles_on_repeated_timeouts_and_only_a_sample_ends_the_backoff() {
    let cfg = TcpConfig { initial_rto: Time::from_secs(1), ..TcpConfig::ns2() };
    let mut sender = Sender::new(cfg);
    let mut out = Vec::new();
    sender.push(960, Time::ZERO, &mut out);
    assert_eq!(out.len(), 1);
    let mut deadlines = Vec::new();
    for _ in 0..4 {
        let deadline = sender.rto_deadline().unwrap();
        deadlines.push(deadline);
        out.clear();
        sender.on_timeout(deadline, &mut out);
        assert_eq!(out, vec![Segment { seq: 0, len: 960, retransmission: true, cwr: false }]);
    }
    // 1 s, then 2, 4 and 8 s more.
    assert_eq!(deadlines, [1, 3, 7, 15].map(Time::from_secs).to_vec());
    assert_eq!(sender.rto(), Time::from_secs(16));
    assert_eq!(sender.stats.timeouts, 4);
    // One timeout sequence (PFTK's T_0 period), whose first timer ran 1 s.
    assert_eq!((sender.stats.first_timeouts, sender.stats.first_timeouts_ns), (1, 1_000_000_000));
    // The ACK of the retransmission gives no RTT sample (Karn), so the
    // back-off stays (RFC 6298 §5; ns-2's `newack` ends it only when the
    // timed segment is acknowledged).
    sender.on_ack(&Ack { ack: 960, ..Ack::default() }, Time::from_secs(16), &mut out);
    assert_eq!(sender.rto(), Time::from_secs(16));
    assert_eq!(sender.rto_deadline(), None, "nothing outstanding, no timer");
    // New data is timed under the backed-off timer, and its ACK, a sample,
    // ends the back-off.
    out.clear();
    sender.push(960, Time::from_secs(20), &mut out);
    assert_eq!(sender.rto_deadline(), Some(Time::from_secs(36)));
    sender.on_ack(&Ack { ack: 1920, ..Ack::default() }, Time::from_millis(20_100), &mut out);
    assert!(sender.rto() < Time::from_secs(1), "rto {:?}", sender.rto());
    // The next timeout begins a new sequence.
    out.clear();
    sender.push(960, Time::from_secs(21), &mut out);
    let rto = sender.rto();
    sender.on_timeout(sender.rto_deadline().unwrap(), &mut out);
    assert_eq!((sender.stats.first_timeouts, sender.stats.first_timeouts_ns), (2, 1_000_000_000 + rto.as_nanos()));
}

#[test]
fn under_the_linux_profile_an_ack_of_new_data_ends_the_backoff() {
    // Linux's timestamps give a sample from every ACK; the profile, which
    // times one segment, ends the back-off on the ACK instead.
    let mut sender = Sender::new(TcpConfig::linux());
    let mut out = Vec::new();
    sender.push(1448, Time::ZERO, &mut out);
    sender.on_timeout(sender.rto_deadline().unwrap(), &mut out);
    assert_eq!(sender.rto(), Time::from_secs(2));
    sender.on_ack(&Ack { ack: 1448, ..Ack::default() }, Time::from_secs(3), &mut out);
    assert_eq!(sender.rto(), Time::from_secs(1));
}

#[test]
fn one_flow_fills_an_idle_pipe_up_to_its_window() {
    // Window 20 segments of 1000 bytes per 100 ms RTT: 200 kB/s at most.
    let mut p = Pipe::new(Variant::NewReno, 20, &[]);
    p.run(2000 * MSS, Time::from_secs(60));
    let rate = (2000 * MSS) as f64 / p.now.as_secs_f64();
    assert!((rate - 200_000.0).abs() < 0.01 * 200_000.0, "rate {rate}");
}

/// A sender of `window` segments (initial window and ssthresh too) under
/// `rules`, with bulk data and its first window sent at time 0.
fn bulk_sender(variant: Variant, rules: Rules, window: u32) -> (Sender, Vec<Segment>) {
    let cfg = TcpConfig {
        variant,
        rules,
        mss: MSS as u32,
        initial_window: window,
        initial_ssthresh: Some(window),
        window,
        granularity: Time::from_millis(1),
        min_rto: Time::from_millis(200),
        initial_rto: Time::from_secs(1),
        ..TcpConfig::ns2()
    };
    let mut sender = Sender::new(cfg);
    let mut out = Vec::new();
    sender.push(u64::MAX, Time::ZERO, &mut out);
    assert_eq!(out.len(), window as usize);
    (sender, out)
}

/// Feeds `n` duplicate ACKs of `ack` at `now`; returns what was sent.
fn dupacks(sender: &mut Sender, ack: u64, n: u32, now: Time) -> Vec<Segment> {
    let mut out = Vec::new();
    for _ in 0..n {
        sender.on_ack(&Ack { ack, ..Ack::default() }, now, &mut out);
    }
    out
}

fn ack(sender: &mut Sender, ack: u64, now: Time) -> Vec<Segment> {
    let mut out = Vec::new();
    sender.on_ack(&Ack { ack, ..Ack::default() }, now, &mut out);
    out
}

#[test]
fn newreno_leaves_recovery_with_flightsize_plus_one_mss_not_a_burst_of_ssthresh() {
    // 20 segments out, 0 and 9 lost, only three duplicate ACKs arrive (the
    // others are lost): the partial ACK of segment 9 leaves little in
    // flight, and the full ACK none at all.
    for (rules, after_full_ack) in [(Rules::Rfc, 2), (Rules::Ns2, 5)] {
        let (mut s, _) = bulk_sender(Variant::NewReno, rules, 20);
        let fr = dupacks(&mut s, 0, 3, Time::from_millis(100));
        assert_eq!(fr, vec![Segment { seq: 0, len: 1000, retransmission: true, cwr: false }], "{rules:?}");
        assert_eq!(s.ssthresh_bytes(), 10_000.0, "{rules:?}: half of 20 segments");
        let partial = ack(&mut s, 9 * MSS, Time::from_millis(200));
        assert_eq!(partial, vec![Segment { seq: 9 * MSS, len: 1000, retransmission: true, cwr: false }], "{rules:?}");
        let full = ack(&mut s, 20 * MSS, Time::from_millis(300));
        assert!(!s.in_recovery());
        // RFC 6582 option (1): cwnd = min(ssthresh, max(FlightSize, SMSS) +
        // SMSS) = 2 segments. ns-2 keeps cwnd_ as the partial ACK deflated
        // it (10 − (9 − 3) = 4) and opens it by one (slow start): 5.
        assert_eq!(full.len(), after_full_ack, "{rules:?}: segments sent on the full ACK");
        assert!(full.iter().all(|seg| !seg.retransmission));
    }
}

#[test]
fn only_the_first_partial_ack_restarts_the_timer_unless_slow_but_steady() {
    for timer in [PartialAckTimer::Impatient, PartialAckTimer::SlowButSteady] {
        let cfg = TcpConfig {
            variant: Variant::NewReno,
            rules: Rules::Rfc,
            partial_ack_timer: timer,
            mss: MSS as u32,
            initial_window: 20,
            window: 20,
            initial_rto: Time::from_secs(1),
            ..TcpConfig::ns2()
        };
        let mut s = Sender::new(cfg);
        let mut out = Vec::new();
        s.push(u64::MAX, Time::ZERO, &mut out);
        // Segments 0, 5, 10 and 15 lost.
        dupacks(&mut s, 0, 3, Time::from_millis(100));
        let first = Time::from_millis(200);
        ack(&mut s, 5 * MSS, first);
        let rto = s.rto();
        assert_eq!(s.rto_deadline(), Some(first + rto), "{timer:?}: the first partial ACK restarts the timer");
        let second = Time::from_millis(300);
        ack(&mut s, 10 * MSS, second);
        let expected = match timer {
            PartialAckTimer::Impatient => first + rto,
            PartialAckTimer::SlowButSteady => second + rto,
        };
        assert_eq!(s.rto_deadline(), Some(expected), "{timer:?}: the second partial ACK");
    }
}

#[test]
fn impatient_newreno_times_out_on_a_window_with_many_losses_slow_but_steady_crawls() {
    // Ten losses in a 40-segment window: one hole per RTT would take a
    // second; the Impatient timer (RTO 300 ms here) gives up before.
    let losses: Vec<u64> = (0..10).map(|i| 2 + 3 * i).collect();
    let run = |timer| {
        let mut p = Pipe::new(Variant::NewReno, 40, &losses);
        p.sender = Sender::new(TcpConfig { partial_ack_timer: timer, rules: Rules::Rfc, ..p.config.clone() });
        p.run(200 * MSS, Time::from_secs(60));
        assert_eq!(p.sender.snd_una(), 200 * MSS, "{timer:?} finishes");
        p
    };
    let impatient = run(PartialAckTimer::Impatient);
    assert!(impatient.sender.stats.timeouts >= 1, "Impatient: the timer expires");
    let steady = run(PartialAckTimer::SlowButSteady);
    assert_eq!(steady.sender.stats.timeouts, 0, "Slow-but-Steady: no timeout");
    let times: Vec<Time> = steady.log.iter().filter(|l| l.2).map(|l| l.0).collect();
    assert_eq!(times[9] - times[0], Time::from_millis(900), "one hole per RTT: {times:?}");
}

#[test]
fn no_fast_retransmit_unless_the_ack_covers_more_than_recover() {
    // RFC 6582 §3.2 step 2 (ns-2's `bug_fix_`): after a recovery whose
    // full ACK acknowledges exactly `recover`, duplicate ACKs of that very
    // point start no new fast retransmit.
    for rules in [Rules::Rfc, Rules::Ns2] {
        let (mut s, _) = bulk_sender(Variant::NewReno, rules, 10);
        dupacks(&mut s, 0, 3, Time::from_millis(100));
        ack(&mut s, 10 * MSS, Time::from_millis(200));
        assert!(!s.in_recovery());
        assert_eq!(s.stats.fast_retransmits, 1);
        dupacks(&mut s, 10 * MSS, 3, Time::from_millis(300));
        assert_eq!(s.stats.fast_retransmits, 1, "{rules:?}: ACK == recover");
        // New data acknowledged beyond recover re-arms fast retransmit.
        ack(&mut s, 11 * MSS, Time::from_millis(400));
        dupacks(&mut s, 11 * MSS, 3, Time::from_millis(500));
        assert_eq!(s.stats.fast_retransmits, 2, "{rules:?}: ACK > recover");
    }
}

#[test]
fn ssthresh_halves_flightsize_per_the_rfcs_and_the_window_in_ns2() {
    // 20 segments of window, only 6 outstanding (the application had no
    // more): RFC 5681 halves FlightSize, ns-2's `slowdown` the window.
    for (rules, ssthresh) in [(Rules::Rfc, 3_000.0), (Rules::Ns2, 10_000.0)] {
        let cfg = TcpConfig {
            variant: Variant::NewReno,
            rules,
            mss: MSS as u32,
            initial_window: 20,
            window: 20,
            ..TcpConfig::ns2()
        };
        let mut s = Sender::new(cfg);
        let mut out = Vec::new();
        s.push(6 * MSS, Time::ZERO, &mut out);
        assert_eq!(out.len(), 6);
        dupacks(&mut s, 0, 3, Time::from_millis(100));
        assert_eq!(s.ssthresh_bytes(), ssthresh, "{rules:?}");
    }
}

#[test]
fn a_repeated_timeout_holds_ssthresh_per_rfc_5681_and_halves_again_in_ns2() {
    for (rules, second) in [(Rules::Rfc, 5_000.0), (Rules::Ns2, 2_000.0)] {
        let (mut s, _) = bulk_sender(Variant::NewReno, rules, 10);
        let mut out = Vec::new();
        s.on_timeout(s.rto_deadline().unwrap(), &mut out);
        assert_eq!(s.ssthresh_bytes(), 5_000.0, "{rules:?}: first timeout");
        s.on_timeout(s.rto_deadline().unwrap(), &mut out);
        assert_eq!(s.ssthresh_bytes(), second, "{rules:?}: the same segment times out again");
    }
}

/// ns-3's defaults (`TcpConfig::ns3`) with `window` segments out at time 0.
fn ns3_sender(window: u32, limited_transmit: bool) -> (Sender, Vec<Segment>) {
    let cfg = TcpConfig { initial_window: window, limited_transmit, ..TcpConfig::ns3() };
    let mut sender = Sender::new(cfg);
    let mut out = Vec::new();
    sender.push(u64::MAX, Time::ZERO, &mut out);
    assert_eq!(out.len(), window as usize);
    (sender, out)
}

#[test]
fn ns3_halves_the_bytes_in_flight_less_the_segments_the_duplicate_acks_reported() {
    let mss = TcpConfig::ns3().mss as u64;
    // Limited Transmit (on in ns-3): the first two duplicate ACKs each let a
    // new segment go, so 22 segments are out at the third, which reports
    // the third segment gone; `EnterRecovery` counts the lost head back in:
    // BytesInFlight = 22 − 3 segments, ssthresh = 19·536/2 bytes.
    let (mut s, _) = ns3_sender(20, true);
    let first = dupacks(&mut s, 0, 1, Time::from_millis(100));
    let second = dupacks(&mut s, 0, 1, Time::from_millis(101));
    assert_eq!(first, vec![Segment { seq: 20 * mss, len: 536, retransmission: false, cwr: false }]);
    assert_eq!(second, vec![Segment { seq: 21 * mss, len: 536, retransmission: false, cwr: false }]);
    let third = dupacks(&mut s, 0, 1, Time::from_millis(102));
    assert_eq!(third, vec![Segment { seq: 0, len: 536, retransmission: true, cwr: false }]);
    assert_eq!(s.ssthresh_bytes(), (19 * mss / 2) as f64);
    // The RFCs halve FlightSize: 22 segments, 11.
    let (mut rfc, _) = bulk_sender(Variant::NewReno, Rules::Rfc, 20);
    dupacks(&mut rfc, 0, 3, Time::from_millis(100));
    assert_eq!(rfc.ssthresh_bytes(), 10.0 * MSS as f64);
    // Without Limited Transmit only the third duplicate ACK is counted out:
    // 20 − 1 segments.
    let (mut s, _) = ns3_sender(20, false);
    assert!(dupacks(&mut s, 0, 2, Time::from_millis(100)).is_empty());
    dupacks(&mut s, 0, 1, Time::from_millis(102));
    assert_eq!(s.ssthresh_bytes(), (19 * mss / 2) as f64);
}

#[test]
fn ns3_leaves_recovery_with_cwnd_ssthresh_and_opens_it_for_the_exiting_ack() {
    // As in the RFC 6582 exit test: 0 and 9 lost, three duplicate ACKs,
    // nothing in flight after the full ACK. ns-3 (`TcpClassicRecovery`)
    // sets cwnd = ssthresh (RFC 6582 option 2) and `IncreaseWindow` adds
    // 536²/cwnd: 19·536/2 + 536²/5092 = 5148 bytes, nine whole segments
    // at once where the RFCs' option (1) lets two go.
    let mss = TcpConfig::ns3().mss as u64;
    let (mut s, _) = ns3_sender(20, false);
    dupacks(&mut s, 0, 3, Time::from_millis(100));
    assert_eq!(s.ssthresh_bytes(), (19 * mss / 2) as f64);
    let partial = ack(&mut s, 9 * mss, Time::from_millis(200));
    assert_eq!(partial, vec![Segment { seq: 9 * mss, len: 536, retransmission: true, cwr: false }]);
    let full = ack(&mut s, 20 * mss, Time::from_millis(300));
    let cwnd = (19 * mss / 2) as f64;
    assert_eq!(s.cwnd_bytes(), cwnd + (mss * mss) as f64 / cwnd);
    assert_eq!(full.len(), 9);
}

#[test]
fn ns3_resends_a_first_segment_the_duplicate_acks_had_reported_and_retransmits_fast_on_one_more() {
    // ns-3 without SACK counts duplicate ACKs as SACKs of the segments right
    // behind the first (`AddRenoSack`). Two duplicate ACKs (Limited
    // Transmit sends segments 20 and 21) report segments 1 and 2; the ACK
    // of segment 0 then leaves segment 1 first while reported:
    // `DiscardUpTo` moves the report to segment 3 and marks segment 1 lost
    // (`MarkHeadAsLost`), so it is resent before new data (`NextSeg` rule
    // 1): cwnd 21 segments, 18 in flight, three go.
    let mss = TcpConfig::ns3().mss as u64;
    let segment = |i: u64, retransmission| Segment { seq: i * mss, len: 536, retransmission, cwr: false };
    let (mut s, _) = ns3_sender(20, true);
    dupacks(&mut s, 0, 2, Time::from_millis(100));
    let sent = ack(&mut s, mss, Time::from_millis(101));
    assert_eq!(sent, vec![segment(1, true), segment(22, false), segment(23, false)]);
    // One duplicate ACK now starts a fast retransmit (`DupAck`:
    // `IsLost(m_highRxAckMark)`), with three segments reported:
    // ssthresh = (23 − 3)/2 segments.
    let sent = dupacks(&mut s, mss, 1, Time::from_millis(102));
    assert_eq!(s.stats.fast_retransmits, 1);
    assert_eq!(sent, vec![segment(1, true)]);
    assert_eq!(s.ssthresh_bytes(), (10 * mss) as f64);
    // Under the RFCs' rules the ACK sends new data only, and a duplicate
    // ACK after it is the first of three.
    let (mut rfc, _) = bulk_sender(Variant::NewReno, Rules::Rfc, 20);
    dupacks(&mut rfc, 0, 2, Time::from_millis(100));
    let sent = ack(&mut rfc, MSS, Time::from_millis(101));
    assert!(!sent.is_empty() && sent.iter().all(|seg| !seg.retransmission), "{sent:?}");
    assert!(dupacks(&mut rfc, MSS, 1, Time::from_millis(102)).iter().all(|seg| !seg.retransmission));
    assert_eq!(rfc.stats.fast_retransmits, 0);
}

#[test]
fn with_timestamps_every_ack_of_new_data_is_an_rtt_sample_retransmissions_included() {
    // A timed-out segment, resent at 1 s and acknowledged at 1.3 s: Karn's
    // rule takes no sample; ns-3's timestamps echo the retransmission's.
    for timestamps in [false, true] {
        let cfg = TcpConfig { initial_window: 1, timestamps, ..TcpConfig::ns3() };
        let mut s = Sender::new(cfg);
        let mut out = Vec::new();
        s.push(536, Time::ZERO, &mut out);
        let rto = s.rto_deadline().unwrap();
        assert_eq!(rto, Time::from_secs(1));
        s.on_timeout(rto, &mut out);
        let echo = Ack { ack: 536, ts_echo: rto, ..Ack::default() };
        s.on_ack(&echo, rto + Time::from_millis(300), &mut out);
        let expected = if timestamps { Some(Time::from_millis(300)) } else { None };
        assert_eq!(s.srtt(), expected, "timestamps {timestamps}");
    }
}

/// Restart after idle (RFC 5681 §4.1; ns-2's `slow_start_restart_`): a
/// transfer of 60 segments opens `cwnd` from an initial window of 1 to the
/// receiver's window (20). After 5 s of silence (the RTO is about 0.3 s)
/// the next data goes out one segment at a time with `slow_start_restart`,
/// a whole window at once without; after a pause shorter than the RTO,
/// either way a whole window.
#[test]
fn slow_start_restart_cuts_the_window_after_an_idle_rto() {
    for (restart, pause, burst) in
        [(true, Time::from_secs(5), 1), (false, Time::from_secs(5), 20), (true, Time::from_millis(100), 20)]
    {
        let mut p = Pipe::new(Variant::NewReno, 20, &[]);
        let cfg =
            TcpConfig { initial_window: 1, initial_ssthresh: None, slow_start_restart: restart, ..p.config.clone() };
        p.sender = Sender::new(cfg);
        p.run(60 * MSS, Time::from_secs(10));
        assert_eq!(p.sender.snd_una(), 60 * MSS);
        assert!(p.sender.cwnd_bytes() >= 20.0 * MSS as f64, "{}", p.sender.cwnd_bytes());
        let mut out = Vec::new();
        p.sender.push(30 * MSS, p.now + pause, &mut out);
        assert_eq!(out.len(), burst, "restart {restart}, pause {pause}");
    }
}

/// A files application's `new_connection`: after a transfer with a loss
/// (a fast retransmit halves `ssthresh`) and RTT samples of 100 ms, the
/// next data goes out as on a fresh sender: one segment (the initial
/// window), `ssthresh` unset again and the RTO back at `initial_rto`;
/// on the same connection the window and `ssthresh` carry over.
#[test]
fn a_new_connection_starts_from_the_initial_window_ssthresh_and_rto() {
    for fresh in [true, false] {
        let mut p = Pipe::new(Variant::NewReno, 20, &[30]);
        let cfg = TcpConfig { initial_window: 1, initial_ssthresh: None, ..p.config.clone() };
        p.sender = Sender::new(cfg);
        p.run(60 * MSS, Time::from_secs(10));
        assert_eq!(p.sender.snd_una(), 60 * MSS);
        assert_eq!(p.sender.stats.fast_retransmits, 1);
        assert!(p.sender.ssthresh_bytes().is_finite());
        assert!(p.sender.rto() < Time::from_secs(1), "{}", p.sender.rto());
        if fresh {
            p.sender.start_new_connection(p.now);
        }
        let mut out = Vec::new();
        p.sender.push(30 * MSS, p.now, &mut out);
        if fresh {
            assert_eq!(out.len(), 1);
            assert!(p.sender.ssthresh_bytes().is_infinite());
            assert_eq!(p.sender.rto(), Time::from_secs(1));
            assert_eq!(out[0].seq, 60 * MSS, "the sequence space goes on");
            assert_eq!(p.sender.stats.fast_retransmits, 1, "the counters go on");
        } else {
            assert!(out.len() > 1, "{}", out.len());
            assert!(p.sender.ssthresh_bytes().is_finite());
        }
    }
}

/// A sender of profile `base` (MSS 1000) with `cwnd` segments out at time 0
/// in congestion avoidance (`ssthresh = cwnd`) and a receiver's window of
/// `rwnd` segments.
fn limited_sender(base: TcpConfig, cwnd: u32, rwnd: u32) -> Sender {
    let cfg = TcpConfig {
        mss: MSS as u32,
        initial_window: cwnd,
        initial_ssthresh: Some(cwnd),
        window: rwnd,
        granularity: Time::from_millis(1),
        min_rto: Time::from_millis(200),
        initial_rto: Time::from_secs(1),
        ..base
    };
    let mut sender = Sender::new(cfg);
    let mut out = Vec::new();
    sender.push(u64::MAX, Time::ZERO, &mut out);
    assert_eq!(out.len(), cwnd.min(rwnd) as usize);
    sender
}

fn new_segment(index: u64) -> Vec<Segment> {
    vec![Segment { seq: index * MSS, len: MSS as u32, retransmission: false, cwr: false }]
}

/// RFC 3042 §2, as ns-2 does it (`singledup_ 1`; `TcpAgent::send_one`): on
/// each of the first two duplicate ACKs one segment of new data goes, if
/// the receiver's window allows it and at most `cwnd + 2` segments are then
/// outstanding; `cwnd` is not changed; the third duplicate ACK is a fast
/// retransmit whose `ssthresh` counts none of those segments (RFC 5681 §3.2
/// step 2; ns-2 halves `min(cwnd_, wnd_)`).
#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_duplicate_acks() {
    for profile in [TcpConfig::ns2(), TcpConfig::ns2_2004()] {
        assert!(profile.limited_transmit);
        let mut s = limited_sender(profile, 10, 20);
        let t = Time::from_millis(100);
        assert_eq!(dupacks(&mut s, 0, 1, t), new_segment(10));
        assert_eq!(s.cwnd_uninflated_bytes(), 10_000.0, "cwnd unchanged");
        assert_eq!(dupacks(&mut s, 0, 1, t), new_segment(11));
        assert_eq!(s.snd_max() - s.snd_una(), 12 * MSS, "cwnd + 2 segments outstanding");
        assert_eq!(dupacks(&mut s, 0, 1, t), vec![Segment { seq: 0, len: 1000, retransmission: true, cwr: false }]);
        assert_eq!(s.ssthresh_bytes(), 5_000.0, "half of cwnd, not of the 12 segments outstanding");
        assert!(dupacks(&mut s, 0, 1, t).is_empty(), "window 5 + 4 < 12 outstanding");
    }
    // Without it the first two duplicate ACKs send nothing.
    let mut s = limited_sender(TcpConfig { limited_transmit: false, ..TcpConfig::ns2() }, 10, 20);
    assert!(dupacks(&mut s, 0, 2, Time::from_millis(100)).is_empty());
}

#[test]
fn limited_transmit_stays_within_the_receivers_window() {
    // RFC 3042 §2 condition (1): with cwnd = rwnd nothing more may go.
    let mut s = limited_sender(TcpConfig::ns2(), 10, 10);
    assert!(dupacks(&mut s, 0, 2, Time::from_millis(100)).is_empty());
    let mut s = limited_sender(TcpConfig::ns2(), 10, 11);
    assert_eq!(dupacks(&mut s, 0, 2, Time::from_millis(100)), new_segment(10));
}

/// A fractional `cwnd` (5.2 segments after one ACK in congestion avoidance)
/// sends whole segments: 5 outstanding, then one more per duplicate ACK up
/// to 7 ≤ 5.2 + 2 (ns-2: `t_seqno_ <= highest_ack_ + cwnd_ + dupacks_`).
/// Fast retransmit halves `min(cwnd_, wnd_)`: to 2.6 segments in ns-2.35
/// (`precisionReduce_ true`), to `(int)(5 / 2)` = 2 in ns-2 of 2004
/// (`precisionReduce_ false`); `ssthresh` is 2 either way.
#[test]
fn ns2_of_2004_halves_the_window_to_whole_segments() {
    for (profile, cwnd) in [(TcpConfig::ns2(), 2_600.0), (TcpConfig::ns2_2004(), 2_000.0)] {
        let halving = profile.whole_segment_halving;
        let mut s = limited_sender(profile, 5, 20);
        assert_eq!(ack(&mut s, MSS, Time::from_millis(100)), new_segment(5));
        assert_eq!(s.cwnd_uninflated_bytes(), 5_200.0);
        let t = Time::from_millis(101);
        assert_eq!(dupacks(&mut s, MSS, 1, t), new_segment(6));
        assert_eq!(dupacks(&mut s, MSS, 1, t), new_segment(7));
        assert_eq!(dupacks(&mut s, MSS, 1, t), vec![Segment { seq: MSS, len: 1000, retransmission: true, cwr: false }]);
        assert_eq!(s.ssthresh_bytes(), 2_000.0, "whole segments {halving}");
        assert_eq!(s.cwnd_uninflated_bytes(), cwnd, "whole segments {halving}");
    }
}

/// After a timeout ns-2's `send_one` still answers the first two duplicate
/// ACKs, with the next segment of the go-back-N resend (`t_seqno_`); ns-3
/// counts no duplicate ACK in `CA_LOSS`, and the RFCs' rules send only new
/// data by it.
#[test]
fn after_a_timeout_ns2_s_limited_transmit_resends_the_next_segment() {
    let resend = |index: u64| vec![Segment { seq: index * MSS, len: MSS as u32, retransmission: true, cwr: false }];
    for rules in [Rules::Ns2, Rules::Rfc, Rules::Ns3] {
        let mut s = limited_sender(TcpConfig { rules, limited_transmit: true, ..TcpConfig::ns2() }, 10, 20);
        let mut out = Vec::new();
        let t = s.rto_deadline().unwrap();
        s.on_timeout(t, &mut out);
        assert_eq!(out, resend(0), "{rules:?}");
        let first = dupacks(&mut s, 0, 1, t);
        let second = dupacks(&mut s, 0, 1, t);
        if rules == Rules::Ns2 {
            assert_eq!((first, second), (resend(1), resend(2)));
        } else {
            assert!(first.is_empty() && second.is_empty(), "{rules:?}");
        }
        assert!(dupacks(&mut s, 0, 1, t).is_empty(), "{rules:?}: no fast retransmit below recover");
        assert_eq!(s.stats.fast_retransmits, 0);
    }
}
