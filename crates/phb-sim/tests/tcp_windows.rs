//! Property tests of the TCP sender's windows, event by event, over random
//! losses, ACK losses and reordering on a 100 ms pipe:
//!
//! - `cwnd` (RFC 5681's, inflated during fast recovery) never exceeds the
//!   receiver's window (or the initial window, if larger) plus one MSS per
//!   duplicate ACK of the current recovery — the inflation RFC 5681 §3.2
//!   steps 3–4 allow (RFC 3042's Limited Transmit: the duplicate ACKs before
//!   it) — so no recovery lets the window run away; under ns-3's rules
//!   without SACK, per duplicate ACK since the last timeout, which ns-3
//!   keeps as reports of segments out of the network (`AddRenoSack`),
//!   never more than the segments behind the first unacknowledged one;
//! - every segment the sender transmits, but the retransmission of the
//!   first unacknowledged one that fast retransmit and partial ACKs
//!   mandate, lies within `SND.UNA + min(cwnd, rwnd)` (RFC 5681 §3.1), or,
//!   in SACK recovery, leaves `pipe ≤ cwnd` (RFC 6675 (C));
//! - FlightSize never exceeds the receiver's window.

use std::collections::BTreeMap;

use phb::{Rng, Time};
use phb_sim::tcp::{Ack, PartialAckTimer, Receiver, Rules, Segment, Sender, TcpConfig, Variant};
use proptest::prelude::*;

const MSS: u64 = 1000;
const ONE_WAY: Time = Time::from_millis(50);

enum Msg {
    /// A segment and its send time.
    Data(Segment, Time),
    Ack(Ack),
}

struct Case {
    variant: Variant,
    rules: Rules,
    partial_ack_timer: PartialAckTimer,
    limited_transmit: bool,
    timestamps: bool,
    byte_counting: bool,
    window: u32,
    initial_window: u32,
    initial_ssthresh: Option<u32>,
    delayed_ack: bool,
    loss: f64,
    ack_loss: f64,
    /// Extra one-way delay drawn per packet in [0, jitter): reordering.
    jitter_ms: u64,
    seed: u64,
}

/// Runs `case` for `segments` segments (or 300 s) and checks the window
/// properties after every event; returns the first violation, or the
/// final `cwnd` in segments.
fn check(case: &Case, segments: u64) -> Result<f64, String> {
    let cfg = TcpConfig {
        variant: case.variant,
        rules: case.rules,
        partial_ack_timer: case.partial_ack_timer,
        limited_transmit: case.limited_transmit,
        timestamps: case.timestamps,
        byte_counting: case.byte_counting,
        mss: MSS as u32,
        window: case.window,
        initial_window: case.initial_window,
        initial_ssthresh: case.initial_ssthresh,
        delayed_ack: case.delayed_ack,
        granularity: Time::from_millis(1),
        ..TcpConfig::ns2()
    };
    let mut rng = Rng::derive(case.seed, "tcp_windows");
    let mut sender = Sender::new(cfg.clone());
    let mut receiver = Receiver::new(cfg.mss, case.variant == Variant::Sack, cfg.delayed_ack, cfg.delack_timeout);
    let rwnd = cfg.window as u64 * MSS;
    let iw = cfg.initial_window as u64 * MSS;
    let mut wire: BTreeMap<(Time, u64), Msg> = BTreeMap::new();
    let mut serial = 0u64;
    let mut now = Time::ZERO;
    let mut out = Vec::new();
    // Duplicate ACKs since recovery began (or, outside recovery, since the
    // last ACK of new data; under ns-3's rules without SACK, since the last
    // timeout).
    let mut dupacks_in_episode = 0u64;
    let ns3_reports = case.rules == Rules::Ns3 && case.variant != Variant::Sack;
    let bytes = segments * MSS;
    sender.push(bytes, now, &mut out);
    let mut event = "start";
    loop {
        // Check what the last event did.
        let una = sender.snd_una();
        let cwnd = sender.cwnd_bytes();
        let bound = rwnd.max(iw) as f64 + (dupacks_in_episode * MSS) as f64;
        if cwnd > bound + 1e-6 {
            return Err(format!(
                "at {now:?} after {event}: cwnd {cwnd} > {bound} (rwnd {rwnd}, {dupacks_in_episode} dupacks)"
            ));
        }
        let reported = cwnd - sender.cwnd_uninflated_bytes();
        if ns3_reports && reported > (sender.snd_max() - una) as f64 + 1e-6 {
            return Err(format!(
                "at {now:?} after {event}: {reported} bytes reported out of the network, beyond FlightSize {} (recovery: {})",
                sender.snd_max() - una,
                sender.in_recovery()
            ));
        }
        if sender.snd_max() - una > rwnd {
            return Err(format!("at {now:?} after {event}: FlightSize {} > rwnd {rwnd}", sender.snd_max() - una));
        }
        let sack_recovery = case.variant == Variant::Sack && sender.in_recovery();
        let window = (cwnd as u64).min(rwnd);
        let mut sent_optional = false;
        for s in &out {
            let end = s.seq + s.len as u64;
            if end > una + rwnd {
                return Err(format!("at {now:?} after {event}: segment {}..{end} beyond rwnd ({una} + {rwnd})", s.seq));
            }
            let mandated = s.retransmission && s.seq == una;
            if !mandated {
                sent_optional = true;
                if !sack_recovery && end > una + window {
                    return Err(format!(
                        "at {now:?} after {event}: segment {}..{end} beyond SND.UNA {una} + window {window}",
                        s.seq
                    ));
                }
            }
        }
        if sack_recovery && sent_optional && sender.pipe() as f64 > cwnd + 1e-6 {
            return Err(format!("at {now:?} after {event}: pipe {} > cwnd {cwnd}", sender.pipe()));
        }
        for s in out.drain(..) {
            if rng.uniform() < case.loss {
                continue;
            }
            serial += 1;
            let delay = ONE_WAY + Time::from_micros((rng.uniform() * case.jitter_ms as f64 * 1000.0) as u64);
            wire.insert((now + delay, serial), Msg::Data(s, now));
        }
        if sender.snd_una() >= bytes || now > Time::from_secs(300) {
            return Ok(sender.cwnd_bytes() / MSS as f64);
        }
        // The next event: a message, the retransmission timer or the
        // delayed-ACK timer, whichever comes first.
        let next_msg = wire.keys().next().map(|k| k.0);
        let rto = sender.rto_deadline();
        let delack = receiver.delack_deadline();
        let first = [next_msg, rto, delack].into_iter().flatten().min().expect("something is pending");
        now = first;
        if next_msg == Some(first) {
            let (_, msg) = wire.pop_first().expect("a message");
            match msg {
                Msg::Data(s, sent_at) => {
                    if let Some(ack) = receiver.on_segment(s.seq, s.len, sent_at, now) {
                        if rng.uniform() >= case.ack_loss {
                            serial += 1;
                            wire.insert((now + ONE_WAY, serial), Msg::Ack(ack));
                        }
                    }
                    event = "data";
                }
                Msg::Ack(a) => {
                    let before = sender.snd_una();
                    let duplicate = a.ack == before && before < sender.snd_max();
                    sender.on_ack(&a, now, &mut out);
                    if duplicate {
                        dupacks_in_episode += 1;
                    } else if a.ack > before && !sender.in_recovery() && !ns3_reports {
                        dupacks_in_episode = 0;
                    }
                    event = "ACK";
                }
            }
        } else if delack == Some(first) {
            if let Some(ack) = receiver.on_delack_timeout() {
                serial += 1;
                wire.insert((now + ONE_WAY, serial), Msg::Ack(ack));
            }
            event = "delayed-ACK timer";
        } else {
            sender.on_timeout(now, &mut out);
            dupacks_in_episode = 0;
            event = "timeout";
        }
    }
}

fn variant() -> impl Strategy<Value = Variant> {
    prop_oneof![Just(Variant::Reno), Just(Variant::NewReno), Just(Variant::Sack)]
}

fn rules() -> impl Strategy<Value = Rules> {
    prop_oneof![Just(Rules::Rfc), Just(Rules::Ns2), Just(Rules::Ns3)]
}

fn timer() -> impl Strategy<Value = PartialAckTimer> {
    prop_oneof![Just(PartialAckTimer::Impatient), Just(PartialAckTimer::SlowButSteady)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn windows_hold_under_random_loss(
        variant in variant(),
        rules in rules(),
        partial_ack_timer in timer(),
        limited_transmit in any::<bool>(),
        timestamps in any::<bool>(),
        byte_counting in any::<bool>(),
        window in 2u32..400,
        initial_window in 1u32..12,
        delayed_ack in any::<bool>(),
        loss in 0.0f64..0.25,
        ack_loss in 0.0f64..0.1,
        jitter_ms in prop_oneof![Just(0u64), 1u64..30],
        seed in any::<u64>(),
    ) {
        let case = Case {
            variant, rules, partial_ack_timer, limited_transmit, timestamps, byte_counting, window, initial_window,
            initial_ssthresh: None, delayed_ack, loss, ack_loss, jitter_ms, seed,
        };
        prop_assert_eq!(check(&case, 400).map(|_| ()), Ok(()));
    }
}

/// A large window and a burst of losses: the case of issue 12, without
/// randomness, for every variant and set of rules.
#[test]
fn a_burst_of_losses_in_a_large_window_keeps_the_windows_in_bounds() {
    for variant in [Variant::Reno, Variant::NewReno, Variant::Sack] {
        for rules in [Rules::Rfc, Rules::Ns2, Rules::Ns3] {
            let case = Case {
                variant,
                rules,
                partial_ack_timer: PartialAckTimer::Impatient,
                limited_transmit: rules != Rules::Rfc,
                timestamps: rules == Rules::Ns3,
                byte_counting: false,
                window: 10_000,
                initial_window: 1,
                initial_ssthresh: None,
                delayed_ack: false,
                loss: 0.05,
                ack_loss: 0.0,
                jitter_ms: 0,
                seed: 7,
            };
            assert_eq!(check(&case, 3000).map(|_| ()), Ok(()), "{variant:?} {rules:?}");
        }
    }
}

/// With delayed ACKs (one ACK per two segments), congestion avoidance opens
/// the window by one segment per round trip with byte counting (Linux) and
/// by half a segment without it (RFC 5681's `MSS²/cwnd` per ACK). Without
/// loss, from a window `w0` growing by `g` per round trip, `S` segments
/// take the window to `c` with `S = (c² − w0²) / 2g`: `g` is measured from
/// the final window.
#[test]
fn byte_counting_opens_the_window_twice_as_fast_under_delayed_acks() {
    const SEGMENTS: u64 = 2000;
    let growth_per_rtt = |byte_counting| {
        let case = Case {
            variant: Variant::NewReno,
            rules: Rules::Rfc,
            partial_ack_timer: PartialAckTimer::Impatient,
            limited_transmit: false,
            timestamps: false,
            byte_counting,
            window: 10_000,
            initial_window: 10,
            initial_ssthresh: Some(10),
            delayed_ack: true,
            loss: 0.0,
            ack_loss: 0.0,
            jitter_ms: 0,
            seed: 1,
        };
        let c = check(&case, SEGMENTS).expect("no window bound broken");
        (c * c - 100.0) / (2.0 * SEGMENTS as f64)
    };
    let (with, without) = (growth_per_rtt(true), growth_per_rtt(false));
    assert!((0.9..1.1).contains(&with), "byte counting: {with} segments per round trip");
    assert!((0.45..0.55).contains(&without), "per ACK: {without} segments per round trip");
}

/// The window after each ACK, by hand (MSS 1000 bytes, initial window 10,
/// `ssthresh` 20 segments):
/// - slow start, an ACK of 2 segments: +2000 with byte counting, +1000
///   (one MSS) without; a cumulative ACK of 5 segments: +2000 (RFC 3465's
///   L = 2 MSS) with byte counting, +1000 without;
/// - congestion avoidance at cwnd 25,000: an ACK of 2 segments adds
///   1000·2000/25000 = 80 bytes with byte counting, 1000²/25000 = 40 without.
#[test]
fn byte_counting_grows_the_window_by_hand() {
    let ack = |to: u64| Ack { ack: to * MSS, sack: [(0, 0); 3], sack_len: 0, ts_echo: Time::ZERO, ece: false };
    for (byte_counting, slow_start_steps, avoidance_step) in
        [(true, [2000.0, 2000.0], 80.0), (false, [1000.0; 2], 40.0)]
    {
        let cfg = TcpConfig {
            variant: Variant::NewReno,
            rules: Rules::Rfc,
            mss: MSS as u32,
            window: 10_000,
            initial_window: 10,
            initial_ssthresh: Some(20),
            byte_counting,
            ..TcpConfig::ns2()
        };
        let mut sender = Sender::new(cfg);
        let mut out = Vec::new();
        sender.push(1_000_000, Time::ZERO, &mut out);
        let now = Time::from_millis(100);
        let start = sender.cwnd_bytes();
        assert_eq!(start, 10_000.0);
        sender.on_ack(&ack(2), now, &mut out);
        assert_eq!(sender.cwnd_bytes() - start, slow_start_steps[0], "byte counting {byte_counting}");
        let before = sender.cwnd_bytes();
        sender.on_ack(&ack(7), now, &mut out);
        assert_eq!(sender.cwnd_bytes() - before, slow_start_steps[1], "byte counting {byte_counting}");
        // Into congestion avoidance: ACK one segment at a time up to ssthresh.
        let mut acked = 7;
        while sender.cwnd_bytes() < 20_000.0 {
            acked += 1;
            sender.on_ack(&ack(acked), now, &mut out);
        }
        while sender.cwnd_bytes() < 25_000.0 {
            acked += 1;
            sender.on_ack(&ack(acked), now, &mut out);
        }
        let before = sender.cwnd_bytes();
        sender.on_ack(&ack(acked + 2), now, &mut out);
        let expected = if byte_counting { 1000.0 * 2000.0 / before } else { 1000.0 * 1000.0 / before };
        assert!((sender.cwnd_bytes() - before - expected).abs() < 1e-9, "byte counting {byte_counting}");
        assert!((expected - avoidance_step).abs() < 0.1 * avoidance_step, "cwnd {before} near 25,000");
    }
}
