//! Event-level tests of TCP loss recovery: a sender and a receiver joined
//! by a loss-free pipe of fixed delay, where the test chooses which segment
//! transmissions are lost.

use std::collections::{BTreeMap, HashSet};

use phb::Time;
use phb_sim::tcp::{Receiver, Segment, Sender, TcpConfig, Variant};

enum Msg {
    Data(Segment),
    Ack(phb_sim::tcp::Ack),
}

/// A sender and receiver 50 ms apart each way (100 ms RTT), no queueing.
struct Pipe {
    now: Time,
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
            sender: Sender::new(cfg),
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
            self.in_flight.insert((self.now + ONE_WAY, self.seq), Msg::Data(s));
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
                    Msg::Data(s) => {
                        if let Some(ack) = self.receiver.on_segment(s.seq, s.len, self.now) {
                            self.seq += 1;
                            self.in_flight.insert((self.now + ONE_WAY, self.seq), Msg::Ack(ack));
                        }
                    }
                    Msg::Ack(a) => {
                        self.sender.on_ack(a.ack, a.blocks(), self.now, &mut out);
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
fn the_rto_doubles_on_repeated_timeouts_and_resets_on_new_data() {
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
        assert_eq!(out, vec![Segment { seq: 0, len: 960, retransmission: true }]);
    }
    // 1 s, then 2, 4 and 8 s more.
    assert_eq!(deadlines, [1, 3, 7, 15].map(Time::from_secs).to_vec());
    assert_eq!(sender.rto(), Time::from_secs(16));
    assert_eq!(sender.stats.timeouts, 4);
    // The ACK of the retransmission gives no RTT sample (Karn) but ends the back-off.
    sender.on_ack(960, &[], Time::from_secs(16), &mut out);
    assert_eq!(sender.rto(), Time::from_secs(1));
    assert_eq!(sender.rto_deadline(), None, "nothing outstanding, no timer");
}

#[test]
fn one_flow_fills_an_idle_pipe_up_to_its_window() {
    // Window 20 segments of 1000 bytes per 100 ms RTT: 200 kB/s at most.
    let mut p = Pipe::new(Variant::NewReno, 20, &[]);
    p.run(2000 * MSS, Time::from_secs(60));
    let rate = (2000 * MSS) as f64 / p.now.as_secs_f64();
    assert!((rate - 200_000.0).abs() < 0.01 * 200_000.0, "rate {rate}");
}
