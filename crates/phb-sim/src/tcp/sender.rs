//! The sending side of a TCP connection: congestion control and loss
//! recovery as a state machine, free of the simulator.
//!
//! Sequence numbers count payload bytes from 0. Every segment the sender
//! has sent and not yet seen acknowledged is kept, with its boundaries, in
//! `outstanding`; retransmissions reuse the boundaries. The sender reacts to
//! three inputs — an ACK ([`Sender::on_ack`]), its retransmission timer
//! ([`Sender::on_timeout`]) and new application data ([`Sender::push`]) —
//! and answers each with segments to transmit.
//!
//! - Slow start and congestion avoidance, RFC 5681 §3.1: `cwnd += min(acked,
//!   MSS)` below `ssthresh`, `cwnd += MSS·MSS/cwnd` per ACK above (ns-2's
//!   `1/cwnd` per ACK).
//! - Fast retransmit on `dupthresh` duplicate ACKs, `ssthresh =
//!   max(FlightSize/2, 2·MSS)`; then Reno / NewReno fast recovery (RFC 5681
//!   §3.2, RFC 6582 §3.2 with the full-ACK rule `cwnd = ssthresh` and
//!   partial-ACK window deflation) or SACK recovery (RFC 6675 §5: `pipe`,
//!   `IsLost`, `NextSeg` rules 1–3).
//! - Retransmission timeout (RFC 6298 / RFC 5681 §3.1): `ssthresh =
//!   max(FlightSize/2, 2·MSS)`, `cwnd = 1 MSS`, go back to the first
//!   unacknowledged segment, SACK information discarded, and (NewReno,
//!   RFC 6582 §3.2 step 2) no fast retransmit for duplicate ACKs of data
//!   sent before the timeout.
//! - One segment timed at a time, never a retransmitted one (Karn).

use std::collections::VecDeque;

use phb::Time;

use super::config::{TcpConfig, Variant};
use super::rtt::RttEstimator;

/// A segment to transmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub retransmission: bool,
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    seq: u64,
    len: u32,
    sacked: bool,
    /// Retransmitted during the current recovery (SACK's `pipe`).
    retransmitted: bool,
}

impl Sent {
    fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
}

/// Counters a run reports per flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
}

pub struct Sender {
    cfg: TcpConfig,
    mss: u64,
    /// Oldest unacknowledged byte.
    snd_una: u64,
    /// Next byte to send (moves back to `snd_una` after a timeout).
    snd_nxt: u64,
    /// Highest byte sent so far.
    snd_max: u64,
    /// Bytes the application has handed over (`u64::MAX`: unlimited).
    app_limit: u64,
    cwnd: f64,
    ssthresh: f64,
    dupacks: u32,
    in_recovery: bool,
    /// `snd_max` when recovery (or the last timeout) began.
    recover: u64,
    after_timeout: bool,
    outstanding: VecDeque<Sent>,
    /// Highest SACKed byte (RFC 6675's HighACK-side `HighRxt` helper).
    high_sacked: u64,
    rtt: RttEstimator,
    /// The timed segment: (end sequence, send time).
    timed: Option<(u64, Time)>,
    rto_deadline: Option<Time>,
    pub stats: SenderStats,
}

impl Sender {
    pub fn new(cfg: TcpConfig) -> Sender {
        let mss = cfg.mss as u64;
        let rtt = RttEstimator::new(cfg.min_rto, cfg.max_rto, cfg.initial_rto, cfg.granularity);
        Sender {
            mss,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_limit: 0,
            cwnd: (cfg.initial_window as u64 * mss) as f64,
            ssthresh: cfg.initial_ssthresh.map_or(f64::INFINITY, |s| (s as u64 * mss) as f64),
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            after_timeout: false,
            outstanding: VecDeque::new(),
            high_sacked: 0,
            rtt,
            timed: None,
            rto_deadline: None,
            stats: SenderStats::default(),
            cfg,
        }
    }

    pub fn mss(&self) -> u32 {
        self.cfg.mss
    }
    pub fn cwnd_bytes(&self) -> f64 {
        self.cwnd
    }
    pub fn ssthresh_bytes(&self) -> f64 {
        self.ssthresh
    }
    pub fn srtt(&self) -> Option<Time> {
        self.rtt.srtt()
    }
    pub fn rto(&self) -> Time {
        self.rtt.rto()
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// When the retransmission timer fires, if it runs.
    pub fn rto_deadline(&self) -> Option<Time> {
        self.rto_deadline
    }
    /// All data the application handed over has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.snd_una >= self.app_limit
    }

    /// The application hands over `bytes` more (`u64::MAX`: unlimited).
    pub fn push(&mut self, bytes: u64, now: Time, out: &mut Vec<Segment>) {
        self.app_limit = self.app_limit.saturating_add(bytes);
        self.transmit(now, out);
    }

    /// The application stops: nothing beyond what was sent is written.
    pub fn stop_writing(&mut self) {
        self.app_limit = self.app_limit.min(self.snd_max);
    }

    fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    fn window(&self) -> u64 {
        (self.cwnd as u64).min(self.cfg.window as u64 * self.mss)
    }

    fn arm_timer(&mut self, now: Time) {
        self.rto_deadline = if self.snd_una < self.snd_max { Some(now + self.rtt.rto()) } else { None };
    }

    /// Sends `seg` and records what the timer and RTT estimator need.
    fn emit(&mut self, seg: Segment, now: Time, out: &mut Vec<Segment>) {
        self.stats.segments_sent += 1;
        if seg.retransmission {
            self.stats.retransmissions += 1;
            if self.timed.is_some_and(|(end, _)| end > seg.seq) {
                self.timed = None;
            }
        } else if self.timed.is_none() {
            self.timed = Some((seg.seq + seg.len as u64, now));
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        out.push(seg);
    }

    /// A new segment of at most one MSS at `snd_max`, if the application
    /// has data.
    fn new_segment(&mut self) -> Option<Segment> {
        let len = (self.app_limit - self.snd_max).min(self.mss);
        if len == 0 {
            return None;
        }
        let seg = Segment { seq: self.snd_max, len: len as u32, retransmission: false };
        self.outstanding.push_back(Sent { seq: seg.seq, len: seg.len, sacked: false, retransmitted: false });
        self.snd_max += len;
        self.snd_nxt = self.snd_max;
        Some(seg)
    }

    /// The outstanding segment starting at `seq`.
    fn find(&self, seq: u64) -> Option<usize> {
        let first = self.outstanding.front()?.seq;
        let guess = ((seq - first) / self.mss) as usize;
        if self.outstanding.get(guess).is_some_and(|s| s.seq == seq) {
            return Some(guess);
        }
        self.outstanding.binary_search_by_key(&seq, |s| s.seq).ok()
    }

    /// Sends what the window allows (window-based: Reno, NewReno, and any
    /// variant outside SACK recovery).
    fn transmit(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.in_recovery && self.cfg.variant == Variant::Sack {
            self.transmit_sack(now, out);
            return;
        }
        while self.snd_nxt < self.snd_una + self.window() {
            let seg = if self.snd_nxt < self.snd_max {
                let i = self.find(self.snd_nxt).expect("snd_nxt is at a segment boundary");
                let s = self.outstanding[i];
                self.snd_nxt = s.end();
                Segment { seq: s.seq, len: s.len, retransmission: true }
            } else {
                match self.new_segment() {
                    Some(seg) => seg,
                    None => break,
                }
            };
            self.emit(seg, now, out);
        }
    }

    /// RFC 6675 `IsLost`: `dupthresh` segments, or more than
    /// `(dupthresh − 1)·MSS` bytes, SACKed above it.
    fn is_lost(&self, index: usize) -> bool {
        let (mut segments, mut bytes) = (0u32, 0u64);
        for s in self.outstanding.iter().skip(index + 1) {
            if s.sacked {
                segments += 1;
                bytes += s.len as u64;
                if segments >= self.cfg.dupthresh || bytes > (self.cfg.dupthresh as u64 - 1) * self.mss {
                    return true;
                }
            }
        }
        false
    }

    /// RFC 6675 `SetPipe`: bytes believed in the network.
    fn pipe(&self) -> u64 {
        let mut pipe = 0;
        let mut sacked_above = (0u32, 0u64);
        for s in self.outstanding.iter().rev() {
            if s.sacked {
                sacked_above.0 += 1;
                sacked_above.1 += s.len as u64;
                continue;
            }
            let lost =
                sacked_above.0 >= self.cfg.dupthresh || sacked_above.1 > (self.cfg.dupthresh as u64 - 1) * self.mss;
            if !lost {
                pipe += s.len as u64;
            }
            if s.retransmitted {
                pipe += s.len as u64;
            }
        }
        pipe
    }

    /// RFC 6675 `NextSeg` rules 1–3: a lost hole, else new data, else an
    /// unSACKed segment below the highest SACK.
    fn next_segment(&mut self) -> Option<Segment> {
        let hole = (0..self.outstanding.len()).find(|&i| {
            let s = self.outstanding[i];
            !s.sacked && !s.retransmitted && s.seq < self.high_sacked && self.is_lost(i)
        });
        if let Some(i) = hole {
            self.outstanding[i].retransmitted = true;
            let s = self.outstanding[i];
            return Some(Segment { seq: s.seq, len: s.len, retransmission: true });
        }
        if self.snd_max < self.snd_una + self.cfg.window as u64 * self.mss {
            if let Some(seg) = self.new_segment() {
                return Some(seg);
            }
        }
        let unsacked = (0..self.outstanding.len()).find(|&i| {
            let s = self.outstanding[i];
            !s.sacked && !s.retransmitted && s.seq < self.high_sacked
        })?;
        self.outstanding[unsacked].retransmitted = true;
        let s = self.outstanding[unsacked];
        Some(Segment { seq: s.seq, len: s.len, retransmission: true })
    }

    fn transmit_sack(&mut self, now: Time, out: &mut Vec<Segment>) {
        while self.pipe() + self.mss <= self.cwnd as u64 {
            match self.next_segment() {
                Some(seg) => self.emit(seg, now, out),
                None => break,
            }
        }
    }

    /// Marks SACKed segments from the blocks of an ACK.
    fn apply_sack(&mut self, blocks: &[(u64, u64)]) {
        for &(start, end) in blocks {
            for s in self.outstanding.iter_mut() {
                if s.seq >= start && s.end() <= end {
                    s.sacked = true;
                }
            }
            self.high_sacked = self.high_sacked.max(end);
        }
    }

    fn enter_recovery(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.stats.fast_retransmits += 1;
        self.ssthresh = (self.flight_size() as f64 / 2.0).max(2.0 * self.mss as f64);
        self.recover = self.snd_max;
        self.in_recovery = true;
        let first = self.outstanding[0];
        match self.cfg.variant {
            Variant::Reno | Variant::NewReno => {
                self.cwnd = self.ssthresh + 3.0 * self.mss as f64;
                self.emit(Segment { seq: first.seq, len: first.len, retransmission: true }, now, out);
                self.transmit(now, out);
            }
            Variant::Sack => {
                self.cwnd = self.ssthresh;
                self.outstanding[0].retransmitted = true;
                self.emit(Segment { seq: first.seq, len: first.len, retransmission: true }, now, out);
                self.transmit_sack(now, out);
            }
        }
    }

    /// An ACK arrives acknowledging everything below `ack`, with SACK
    /// blocks `sack` (empty without SACK).
    pub fn on_ack(&mut self, ack: u64, sack: &[(u64, u64)], now: Time, out: &mut Vec<Segment>) {
        if self.cfg.variant == Variant::Sack {
            self.apply_sack(sack);
        }
        if ack > self.snd_una {
            self.on_new_ack(ack, now, out);
        } else if ack == self.snd_una && self.snd_una < self.snd_max {
            self.on_duplicate_ack(now, out);
        }
    }

    fn on_new_ack(&mut self, ack: u64, now: Time, out: &mut Vec<Segment>) {
        let acked = ack - self.snd_una;
        if let Some((end, sent_at)) = self.timed {
            if ack >= end {
                self.rtt.sample(now - sent_at);
                self.timed = None;
            }
        }
        self.rtt.reset_backoff();
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        while self.outstanding.front().is_some_and(|s| s.end() <= ack) {
            self.outstanding.pop_front();
        }
        self.dupacks = 0;
        let mss = self.mss as f64;
        if self.in_recovery {
            let full = ack >= self.recover;
            match self.cfg.variant {
                Variant::Reno => {
                    self.cwnd = self.ssthresh;
                    self.in_recovery = false;
                }
                Variant::NewReno if full => {
                    self.cwnd = self.ssthresh;
                    self.in_recovery = false;
                }
                Variant::NewReno => {
                    // Partial ACK: retransmit the next hole, deflate by the
                    // amount acknowledged, add back one MSS (RFC 6582 §3.2 step 5).
                    let first = self.outstanding[0];
                    self.emit(Segment { seq: first.seq, len: first.len, retransmission: true }, now, out);
                    self.cwnd = (self.cwnd - acked as f64 + if acked >= self.mss { mss } else { 0.0 }).max(mss);
                    self.rto_deadline = Some(now + self.rtt.rto());
                }
                Variant::Sack if full => {
                    self.cwnd = self.ssthresh;
                    self.in_recovery = false;
                }
                Variant::Sack => {}
            }
        } else if self.cwnd < self.ssthresh {
            self.cwnd += (acked as f64).min(mss);
        } else {
            self.cwnd += mss * mss / self.cwnd;
        }
        if ack >= self.recover {
            self.after_timeout = false;
        }
        self.arm_timer(now);
        self.transmit(now, out);
    }

    fn on_duplicate_ack(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.dupacks += 1;
        if self.in_recovery {
            match self.cfg.variant {
                Variant::Reno | Variant::NewReno => {
                    self.cwnd += self.mss as f64;
                    self.transmit(now, out);
                }
                Variant::Sack => self.transmit_sack(now, out),
            }
            return;
        }
        let sack_loss = self.cfg.variant == Variant::Sack && self.is_lost(0);
        if (self.dupacks >= self.cfg.dupthresh || sack_loss) && !self.after_timeout {
            self.enter_recovery(now, out);
        }
    }

    /// The retransmission timer fired at `now`.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            return;
        }
        self.stats.timeouts += 1;
        self.rtt.on_timeout();
        self.ssthresh = (self.flight_size() as f64 / 2.0).max(2.0 * self.mss as f64);
        self.cwnd = self.mss as f64;
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.after_timeout = true;
        self.high_sacked = 0;
        for s in self.outstanding.iter_mut() {
            s.sacked = false;
            s.retransmitted = false;
        }
        self.timed = None;
        self.snd_nxt = self.snd_una;
        self.rto_deadline = Some(now + self.rtt.rto());
        self.transmit(now, out);
    }
}
