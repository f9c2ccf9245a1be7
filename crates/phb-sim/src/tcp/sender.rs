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
//! - Sending, RFC 5681 §3.1: nothing beyond `SND.UNA + min(cwnd, rwnd)`;
//!   only whole segments fit, so the window counts `⌊cwnd/SMSS⌋` segments
//!   (as ns-2's `send_much` and ns-3's `SendPendingData` do).
//! - Slow start and congestion avoidance, RFC 5681 §3.1: `cwnd += min(acked,
//!   MSS)` below `ssthresh`, `cwnd += MSS·MSS/cwnd` per ACK above (ns-2's
//!   `1/cwnd` per ACK), or, with `byte_counting`, in proportion to what the
//!   ACK acknowledges, as Linux; `cwnd` does not grow past the receiver's window,
//!   which it could not use (Linux's `tcp_is_cwnd_limited`, RFC 7661).
//! - Fast retransmit on `dupthresh` duplicate ACKs, unless the ACK does not
//!   cover more than `recover` (RFC 6582 §3.2 step 2, for Reno as ns-2
//!   applies it too), or under ns-3's rules on one while the first segment
//!   is marked lost (`Sender::ns3_discard_reno_sacks`); `ssthresh` as
//!   [`Rules`] say. Then Reno / NewReno fast
//!   recovery (RFC 5681 §3.2, RFC 6582 §3.2 step 3) with the window
//!   inflated by one MSS per duplicate ACK and deflated by partial ACKs, or
//!   SACK recovery (RFC 6675 §5: `pipe`, `IsLost`, `NextSeg` rules 1–3).
//! - NewReno leaves recovery on the ACK of everything outstanding when it
//!   began: `cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS)` (RFC 6582
//!   option 1), or ns-2's un-inflated `cwnd_`. Partial ACKs restart the
//!   timer as [`PartialAckTimer`] says (RFC 6582: the first one only).
//! - Retransmission timeout (RFC 6298 / RFC 5681 §3.1): `ssthresh` as
//!   [`Rules`] say, `cwnd = 1 MSS`, go back to the first unacknowledged
//!   segment, SACK information discarded, `recover = HighData` (RFC 6582
//!   §3.2 step 4) so that duplicate ACKs of data sent before the timeout
//!   start no fast retransmit.
//! - Limited Transmit (RFC 3042) when configured: each of the first
//!   `dupthresh − 1` duplicate ACKs lets one segment go beyond `cwnd`, so
//!   that at most `cwnd + (dupthresh − 1)·SMSS` is outstanding, within the
//!   receiver's window, `cwnd` unchanged. Under ns-2's rules (`send_one` in
//!   `tcp.cc`, called by `TcpAgent::recv`, `RenoTcpAgent::recv` and
//!   `NewRenoTcpAgent::recv` for `dupacks_ < numdupacks_` with `singledup_`)
//!   one segment per duplicate ACK, after a timeout too, where the next
//!   segment is the go-back-N resend of old data; under the others new
//!   data only outside recovery from a timeout.
//! - RTT: one segment timed at a time, never a retransmitted one (Karn), or
//!   with timestamps (RFC 7323) a sample from every ACK of new data; only a
//!   sample ends the timer's back-off ([`RttEstimator`]), or under
//!   [`TcpConfig::ack_ends_backoff`] every ACK of new data.

use std::collections::VecDeque;

use phb::Time;

use super::config::{PartialAckTimer, Rules, TcpConfig, Variant};
use super::receiver::Ack;
use super::rtt::RttEstimator;

/// A segment to transmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub retransmission: bool,
    /// CWR (RFC 3168 §6.1.2): the first new segment after a window
    /// reduction of an ECN-capable sender.
    pub cwr: bool,
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

/// The time integral of the congestion window (without the inflation of
/// fast recovery: ns-2's `cwnd_`), for its time average: `cwnd` is constant
/// between the events that change it (ACKs and timeouts), so it is brought
/// up to date when one arrives. The clock runs from the first data the
/// application hands over until [`Sender::stop_clock`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CwndIntegral {
    /// Σ cwnd·Δt, byte·seconds.
    pub byte_seconds: f64,
    /// Σ Δt while the clock ran, seconds.
    pub seconds: f64,
}

/// Counters a run reports per flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Window halvings for an ECN-Echo (RFC 3168 §6.1.2).
    pub ecn_reductions: u64,
    /// Timeouts that fired with no back-off in force: each the first of a
    /// sequence of consecutive timeouts (PFTK's "timeout sequence").
    pub first_timeouts: u64,
    /// The summed duration of those timeouts, each the RTO its timer ran
    /// for (PFTK's `T_0`, the basic timeout), nanoseconds.
    pub first_timeouts_ns: u64,
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
    /// The congestion window without the inflation of fast recovery
    /// (ns-2's `cwnd_`).
    cwnd: f64,
    /// What duplicate ACKs added to the window during fast recovery (ns-2's
    /// `dupwnd_`): one MSS each (RFC 5681 §3.2 steps 3–4), less what
    /// partial ACKs deflated (RFC 6582 §3.2 step 3). RFC 5681's `cwnd` is
    /// `cwnd + inflation`.
    inflation: f64,
    ssthresh: f64,
    dupacks: u32,
    in_recovery: bool,
    /// `recover` of RFC 6582 (RecoveryPoint of RFC 6675): `snd_max` when the
    /// last fast retransmit or timeout happened; `None` before the first.
    recover: Option<u64>,
    /// A partial ACK has restarted the timer in this recovery (RFC 6582).
    partial_ack_seen: bool,
    /// Recovering from a timeout: until `snd_una` reaches `recover` (ns-3's
    /// `CA_LOSS`).
    in_loss: bool,
    /// ns-3 without SACK ([`Sender::ns3_reno_sacks`]): the first outstanding
    /// segment is marked lost (`TcpTxItem::m_lost`, set by
    /// `TcpTxBuffer::MarkHeadAsLost`), so that one duplicate ACK starts a
    /// fast retransmit (`DupAck`: `IsLost(m_highRxAckMark)`).
    ns3_head_lost: bool,
    /// ... and it has not been resent since: it goes first, once the window
    /// allows (`NextSeg` rule 1 in `SendPendingData`).
    ns3_head_resend: bool,
    /// The end of the highest segment resent since the last timeout: the
    /// first unacknowledged segment was resent by the timer's go-back-N if
    /// it lies below.
    loss_resent: u64,
    outstanding: VecDeque<Sent>,
    /// Highest SACKed byte (RFC 6675's HighACK-side `HighRxt` helper).
    high_sacked: u64,
    rtt: RttEstimator,
    /// The timed segment: (end sequence, send time).
    timed: Option<(u64, Time)>,
    rto_deadline: Option<Time>,
    /// When the running timer was started (its duration is `rto_deadline`
    /// less this).
    rto_started: Time,
    /// When data was last sent (for the restart after idle).
    last_sent: Option<Time>,
    pub stats: SenderStats,
    /// The integral of `cwnd` over time, and when it was last brought up to
    /// date (`None`: the clock is not running).
    cwnd_integral: CwndIntegral,
    cwnd_clock: Option<Time>,
    /// [`Sender::stop_clock`] was called: the clock never runs again.
    cwnd_clock_stopped: bool,
    /// ECN (RFC 3168 §6.1.2): `snd_max` at the last window reduction (for
    /// an ECN-Echo, a fast retransmit or a timeout); an ECN-Echo is acted
    /// on only once an ACK goes beyond it, so at most once per window.
    ecn_recover: Option<u64>,
    /// ECN: the next new segment carries CWR.
    cwr_pending: bool,
}

impl Sender {
    pub fn new(cfg: TcpConfig) -> Sender {
        let mss = cfg.mss as u64;
        let restart_after_backoff = cfg.rules == Rules::Ns2;
        let rtt = RttEstimator::new(cfg.min_rto, cfg.max_rto, cfg.initial_rto, cfg.granularity, restart_after_backoff);
        Sender {
            mss,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_limit: 0,
            cwnd: (cfg.initial_window as u64 * mss) as f64,
            inflation: 0.0,
            ssthresh: cfg.initial_ssthresh.map_or(f64::INFINITY, |s| (s as u64 * mss) as f64),
            dupacks: 0,
            in_recovery: false,
            recover: None,
            partial_ack_seen: false,
            in_loss: false,
            ns3_head_lost: false,
            ns3_head_resend: false,
            loss_resent: 0,
            outstanding: VecDeque::new(),
            high_sacked: 0,
            rtt,
            timed: None,
            rto_deadline: None,
            rto_started: Time::ZERO,
            last_sent: None,
            stats: SenderStats::default(),
            cwnd_integral: CwndIntegral::default(),
            cwnd_clock: None,
            cwnd_clock_stopped: false,
            ecn_recover: None,
            cwr_pending: false,
            cfg,
        }
    }

    pub fn mss(&self) -> u32 {
        self.cfg.mss
    }
    /// The congestion window as RFC 5681 counts it: inflated by the
    /// duplicate ACKs of fast recovery.
    pub fn cwnd_bytes(&self) -> f64 {
        self.cwnd + self.inflation
    }
    /// The congestion window without the inflation of fast recovery
    /// (ns-2's `cwnd_`): what TWAM's oracle reads (`docs/mechanisms/twam.md`).
    pub fn cwnd_uninflated_bytes(&self) -> f64 {
        self.cwnd
    }
    /// The integral of [`Sender::cwnd_uninflated_bytes`] over time up to
    /// `now` (`now` never goes back).
    pub fn cwnd_integral(&mut self, now: Time) -> CwndIntegral {
        self.account_cwnd(now);
        self.cwnd_integral
    }
    /// The flow stops at `now`: the integral stops growing.
    pub fn stop_clock(&mut self, now: Time) {
        self.account_cwnd(now);
        self.cwnd_clock = None;
        self.cwnd_clock_stopped = true;
    }
    #[inline]
    fn account_cwnd(&mut self, now: Time) {
        if let Some(since) = self.cwnd_clock {
            let dt = now.saturating_sub(since).as_secs_f64();
            self.cwnd_integral.byte_seconds += self.cwnd * dt;
            self.cwnd_integral.seconds += dt;
            self.cwnd_clock = Some(now.max(since));
        }
    }
    /// The receiver's window in bytes.
    pub fn rwnd_bytes(&self) -> u64 {
        self.cfg.window as u64 * self.mss
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
    /// With `slow_start_restart`, a sender that has sent nothing for longer
    /// than the RTO and has nothing outstanding first cuts `cwnd` to
    /// `min(cwnd, initial window)` (RFC 5681 §4.1's restart window).
    pub fn push(&mut self, bytes: u64, now: Time, out: &mut Vec<Segment>) {
        if self.cfg.slow_start_restart
            && self.snd_una == self.snd_max
            && self.last_sent.is_some_and(|t| now.saturating_sub(t) > self.rtt.rto())
        {
            let restart = (self.cfg.initial_window as u64 * self.mss) as f64;
            self.cwnd = self.cwnd.min(restart);
        }
        if self.cwnd_clock.is_none() && !self.cwnd_clock_stopped {
            self.cwnd_clock = Some(now);
        }
        self.app_limit = self.app_limit.saturating_add(bytes);
        self.transmit(now, out);
    }

    /// The next data goes out as on a new connection (the files
    /// application's `new_connection`): the congestion window back to the
    /// initial window, `ssthresh` to its initial value, no recovery state,
    /// and the RTT estimator as before its first sample (so the RTO is
    /// `initial_rto`), as a fresh sender agent would start. Called with
    /// nothing outstanding; the sequence space and the counters go on. No
    /// handshake is modelled (ns-2's one-way agents have none).
    pub fn start_new_connection(&mut self, now: Time) {
        debug_assert_eq!(self.snd_una, self.snd_max, "a new connection starts with nothing outstanding");
        self.account_cwnd(now);
        let fresh = Sender::new(self.cfg.clone());
        *self = Sender {
            snd_una: self.snd_una,
            snd_nxt: self.snd_max,
            snd_max: self.snd_max,
            app_limit: self.app_limit,
            stats: self.stats,
            cwnd_integral: self.cwnd_integral,
            cwnd_clock: self.cwnd_clock,
            cwnd_clock_stopped: self.cwnd_clock_stopped,
            ..fresh
        };
    }

    /// The application stops: nothing beyond what was sent is written.
    pub fn stop_writing(&mut self) {
        self.app_limit = self.app_limit.min(self.snd_max);
    }

    /// FlightSize (RFC 5681 §2): data sent but not yet cumulatively
    /// acknowledged.
    fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// How far beyond `snd_una` data may be sent: `min(cwnd, rwnd)` (RFC
    /// 5681 §3.1), `cwnd` inflated during fast recovery.
    fn window(&self) -> u64 {
        ((self.cwnd + self.inflation) as u64).min(self.rwnd_bytes())
    }

    /// (Re)starts the retransmission timer for the current RTO.
    fn start_timer(&mut self, now: Time) {
        self.rto_started = now;
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    fn arm_timer(&mut self, now: Time) {
        if self.snd_una < self.snd_max {
            self.start_timer(now);
        } else {
            self.rto_deadline = None;
        }
    }

    /// Opens the window for an ACK of `acked` new bytes outside recovery:
    /// slow start or congestion avoidance (RFC 5681 §3.1), never past the
    /// receiver's window.
    fn open_window(&mut self, acked: u64) {
        let mss = self.mss as f64;
        let acked = acked as f64;
        let increase = match (self.cfg.byte_counting, self.cwnd < self.ssthresh) {
            (false, true) => acked.min(mss),
            (false, false) => mss * mss / self.cwnd,
            // RFC 3465 §2.2: at most L = 2·SMSS per ACK in slow start.
            (true, true) => acked.min(2.0 * mss),
            (true, false) => mss * acked / self.cwnd,
        };
        let cap = (self.rwnd_bytes() as f64).max(self.cwnd);
        self.cwnd = (self.cwnd + increase).min(cap);
    }

    /// Bytes in flight as ns-3 counts them (`TcpTxBuffer::BytesInFlight`
    /// without SACK): FlightSize less the segments duplicate ACKs reported
    /// (`AddRenoSack`: one each during recovery, and before it with Limited
    /// Transmit), which the window's inflation counts here; with SACK,
    /// RFC 6675's `pipe`.
    fn ns3_bytes_in_flight(&self) -> u64 {
        if self.cfg.variant == Variant::Sack {
            return self.pipe();
        }
        let head_out = if self.ns3_head_resend { self.mss } else { 0 };
        self.flight_size().saturating_sub(self.inflation as u64 + head_out)
    }

    /// ns-3 without SACK counts each duplicate ACK as a SACK of one segment
    /// (`TcpTxBuffer::AddRenoSack`): the segments behind the first, in
    /// order, as many as duplicate ACKs came, in recovery and, with Limited
    /// Transmit, before it. Here `inflation` is their bytes, kept from one
    /// ACK to the next until a timeout (`ResetRenoSack`) rather than
    /// zeroed when recovery ends: ns-3 keeps them too.
    fn ns3_reno_sacks(&self) -> bool {
        self.cfg.rules == Rules::Ns3 && self.cfg.variant != Variant::Sack
    }

    /// One more duplicate ACK reported as a segment out of the network
    /// (`AddRenoSack`), never more than the segments behind the first.
    fn ns3_add_reno_sack(&mut self) {
        let behind_first = self.flight_size() - self.outstanding[0].len as u64;
        self.inflation = (self.inflation + self.mss as f64).min(behind_first as f64);
    }

    /// A cumulative ACK removed `acked_segments` segments; `reported` were
    /// the segments the duplicate ACKs had reported before it, the ones
    /// right behind the old first (`TcpTxBuffer::DiscardUpTo`): those the
    /// ACK covers leave the count, and if the new first segment is among
    /// the rest ns-3 takes that for its own wrong guess, moves the report to
    /// the next segment (`AddRenoSack`) and marks the new first segment lost
    /// (`MarkHeadAsLost`): it is resent as soon as the window allows, and
    /// one duplicate ACK then starts a fast retransmit.
    fn ns3_discard_reno_sacks(&mut self, reported: u64, acked_segments: u64) {
        if self.outstanding.is_empty() || acked_segments == 0 || reported < acked_segments {
            self.inflation = 0.0;
            return;
        }
        let left = (reported - acked_segments + 1).min(self.outstanding.len() as u64 - 1);
        self.inflation = (left * self.mss) as f64;
        self.ns3_head_lost = true;
        self.ns3_head_resend = true;
    }

    /// The `ssthresh` of a loss the sender detects, fast retransmit or
    /// timeout (`timeout`), as [`Rules`] say:
    /// - RFC 5681 §3.1 eq. (4), RFC 6582, RFC 6675 (4.2): `max(FlightSize/2,
    ///   2·SMSS)`; after a timeout, if the segment timing out again was
    ///   already resent by the timer, `ssthresh` is held (RFC 5681 §3.1).
    /// - ns-2 (`TcpAgent::slowdown` with `CLOSE_SSTHRESH_HALF`): half the
    ///   window `min(cwnd_, wnd_)` in whole segments, at least 2; `cwnd_`
    ///   is never inflated (`dupwnd_` is apart).
    /// - ns-3 (`TcpNewReno::GetSsThresh`): `max(2·SMSS, BytesInFlight/2)`.
    ///   At fast retransmit (`TcpSocketBase::EnterRecovery`, SACK off) the
    ///   head is marked lost but counted back in "for compatibility with old
    ///   ns-3 versions", and the duplicate ACKs have each removed a segment
    ///   (`AddRenoSack`: all `dupthresh` of them with Limited Transmit, else
    ///   the last, plus any an earlier ACK left): `FlightSize −
    ///   dupthresh·SMSS` after an ACK that left none. On a timeout
    ///   (`ReTxTimeout`) the bytes in flight before it, and `ssthresh` held
    ///   in `CA_LOSS` while the head is already retransmitted.
    fn reduced_ssthresh(&self, timeout: bool) -> f64 {
        let mss = self.mss as f64;
        let resent_by_timer = self.in_loss && self.loss_resent > self.snd_una;
        match self.cfg.rules {
            Rules::Rfc if timeout && resent_by_timer => self.ssthresh,
            Rules::Rfc => (self.flight_size() as f64 / 2.0).max(2.0 * mss),
            Rules::Ns2 => {
                let window = self.cwnd.min(self.rwnd_bytes() as f64) / mss;
                ((window / 2.0).floor().max(2.0)) * mss
            }
            Rules::Ns3 if timeout && resent_by_timer => self.ssthresh,
            Rules::Ns3 if timeout || self.cfg.variant == Variant::Sack => {
                ((self.ns3_bytes_in_flight() / 2) as f64).max(2.0 * mss)
            }
            // The duplicate ACKs' reports (the third's included:
            // [`Sender::enter_recovery`] adds it first).
            Rules::Ns3 => ((self.flight_size().saturating_sub(self.inflation as u64) / 2) as f64).max(2.0 * mss),
        }
    }

    /// RFC 6582 §3.2 step 2: fast retransmit only if the ACK covers more
    /// than `recover`, the highest byte sent when the last fast retransmit
    /// or timeout happened (ns-2's `dupack_action`, `bug_fix_` on, applies
    /// it to Reno too). SACK waits only until HighACK reaches the
    /// RecoveryPoint (RFC 6675 §5.1), as ns-3 does (`DupAck`: `m_highRxAckMark
    /// >= m_recover`).
    fn may_fast_retransmit(&self) -> bool {
        match self.recover {
            None => true,
            Some(recover) if self.cfg.variant == Variant::Sack || self.cfg.rules == Rules::Ns3 => {
                self.snd_una >= recover
            }
            Some(recover) => self.snd_una > recover,
        }
    }

    /// Sends `seg` and records what the timer and RTT estimator need.
    fn emit(&mut self, mut seg: Segment, now: Time, out: &mut Vec<Segment>) {
        self.stats.segments_sent += 1;
        if self.cwr_pending && !seg.retransmission {
            seg.cwr = true;
            self.cwr_pending = false;
        }
        if seg.retransmission {
            self.stats.retransmissions += 1;
            if self.in_loss {
                self.loss_resent = self.loss_resent.max(seg.seq + seg.len as u64);
            }
            if self.timed.is_some_and(|(end, _)| end > seg.seq) {
                self.timed = None;
            }
        } else if self.timed.is_none() && !self.cfg.timestamps {
            self.timed = Some((seg.seq + seg.len as u64, now));
        }
        if self.rto_deadline.is_none() {
            self.start_timer(now);
        }
        self.last_sent = Some(now);
        out.push(seg);
    }

    /// The length of the next new segment: at most one MSS of what the
    /// application has handed over.
    fn next_new_len(&self) -> u64 {
        (self.app_limit - self.snd_max).min(self.mss)
    }

    /// A new segment of `len` bytes at `snd_max`.
    fn new_segment(&mut self, len: u64) -> Segment {
        let seg = Segment { seq: self.snd_max, len: len as u32, retransmission: false, cwr: false };
        self.outstanding.push_back(Sent { seq: seg.seq, len: seg.len, sacked: false, retransmitted: false });
        self.snd_max += len;
        self.snd_nxt = self.snd_max;
        seg
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
    /// variant outside SACK recovery): whole segments up to `snd_una +
    /// window` (RFC 5681 §3.1). ns-2's NewReno sends at most two per ACK
    /// while recovering (`send_much(0, 0, 2)` in `NewRenoTcpAgent::recv`).
    fn transmit(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.in_recovery && self.cfg.variant == Variant::Sack {
            self.transmit_sack(now, out);
            return;
        }
        let burst = if self.in_recovery && self.cfg.rules == Rules::Ns2 && self.cfg.variant == Variant::NewReno {
            2
        } else {
            usize::MAX
        };
        self.transmit_window(burst, now, out);
    }

    /// Sends at most `burst` whole segments up to `snd_una + window`:
    /// first what a timeout left to resend (below `snd_max`), then new data.
    fn transmit_window(&mut self, burst: usize, now: Time, out: &mut Vec<Segment>) {
        let edge = self.snd_una + self.window();
        let mut sent = 0;
        // ns-3: a first segment marked lost is not in flight, so it goes
        // when what is outstanding fits the window (`NextSeg` rule 1).
        if self.ns3_head_resend && burst > 0 && self.snd_max <= edge {
            let head = self.outstanding[0];
            self.ns3_head_resend = false;
            self.emit(Segment { seq: head.seq, len: head.len, retransmission: true, cwr: false }, now, out);
            sent += 1;
        }
        while sent < burst {
            let seg = if self.snd_nxt < self.snd_max {
                let i = self.find(self.snd_nxt).expect("snd_nxt is at a segment boundary");
                let s = self.outstanding[i];
                if s.end() > edge {
                    break;
                }
                self.snd_nxt = s.end();
                Segment { seq: s.seq, len: s.len, retransmission: true, cwr: false }
            } else {
                let len = self.next_new_len();
                if len == 0 || self.snd_max + len > edge {
                    break;
                }
                self.new_segment(len)
            };
            self.emit(seg, now, out);
            sent += 1;
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

    /// RFC 6675 `SetPipe`: bytes believed in the network (a walk over the
    /// outstanding segments).
    pub fn pipe(&self) -> u64 {
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
            return Some(Segment { seq: s.seq, len: s.len, retransmission: true, cwr: false });
        }
        let len = self.next_new_len();
        if len > 0 && self.snd_max + len <= self.snd_una + self.rwnd_bytes() {
            return Some(self.new_segment(len));
        }
        let unsacked = (0..self.outstanding.len()).find(|&i| {
            let s = self.outstanding[i];
            !s.sacked && !s.retransmitted && s.seq < self.high_sacked
        })?;
        self.outstanding[unsacked].retransmitted = true;
        let s = self.outstanding[unsacked];
        Some(Segment { seq: s.seq, len: s.len, retransmission: true, cwr: false })
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

    /// Fast retransmit (RFC 5681 §3.2 steps 2–3, RFC 6675 (4)): `ssthresh`
    /// reduced, `recover` set, the first unacknowledged segment resent.
    fn enter_recovery(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.stats.fast_retransmits += 1;
        self.window_reduced();
        if self.ns3_reno_sacks() {
            // `EnterRecovery`: "one segment has left the network".
            self.ns3_add_reno_sack();
        }
        let mss = self.mss as f64;
        let window = self.cwnd.min(self.rwnd_bytes() as f64);
        self.ssthresh = self.reduced_ssthresh(false);
        self.recover = Some(self.snd_max);
        self.in_recovery = true;
        self.partial_ack_seen = false;
        let first = self.outstanding[0];
        match self.cfg.variant {
            Variant::Reno | Variant::NewReno => {
                // RFC 5681 step 3: cwnd = ssthresh + 3·SMSS. ns-2 halves
                // cwnd_ itself (`CLOSE_CWND_HALF`) and sets dupwnd_ = 3.
                self.cwnd = match self.cfg.rules {
                    Rules::Rfc | Rules::Ns3 => self.ssthresh,
                    // `precisionReduce_ false`: `(int)(window() / 2)`.
                    Rules::Ns2 if self.cfg.whole_segment_halving => {
                        ((window / mss).floor() / 2.0).floor().max(1.0) * mss
                    }
                    Rules::Ns2 => (window / 2.0).max(mss),
                };
                // ns-3: the segments the duplicate ACKs reported, out of the
                // network (`AddRenoSack`), which is what inflating cwnd by
                // them does; the head is marked lost and resent.
                if self.ns3_reno_sacks() {
                    self.ns3_head_lost = true;
                    self.ns3_head_resend = false;
                } else {
                    self.inflation = self.cfg.dupthresh as f64 * mss;
                }
                self.emit(Segment { seq: first.seq, len: first.len, retransmission: true, cwr: false }, now, out);
                if self.cfg.rules == Rules::Ns2 {
                    // `reset_rtx_timer(1, 0)` in `dupack_action`.
                    self.start_timer(now);
                }
                self.transmit(now, out);
            }
            Variant::Sack => {
                self.cwnd = self.ssthresh;
                self.inflation = 0.0;
                self.outstanding[0].retransmitted = true;
                self.emit(Segment { seq: first.seq, len: first.len, retransmission: true, cwr: false }, now, out);
                self.transmit_sack(now, out);
            }
        }
    }

    /// An ACK arrives: everything below `ack.ack` acknowledged, its SACK
    /// blocks (none without SACK) and echoed timestamp.
    pub fn on_ack(&mut self, ack: &Ack, now: Time, out: &mut Vec<Segment>) {
        self.account_cwnd(now);
        if self.cfg.variant == Variant::Sack {
            self.apply_sack(ack.blocks());
        }
        let echo = self.cfg.ecn && ack.ece;
        if echo && !self.in_recovery && !self.in_loss && self.ecn_recover.is_none_or(|r| ack.ack > r) {
            self.on_ecn_echo();
        }
        if ack.ack > self.snd_una {
            self.on_new_ack(ack.ack, ack.ts_echo, echo, now, out);
        } else if ack.ack == self.snd_una && self.snd_una < self.snd_max {
            self.on_duplicate_ack(now, out);
        }
    }

    /// ECN-Echo (RFC 3168 §6.1.2): congestion is treated as a loss would
    /// be, without a retransmission: `ssthresh` and `cwnd` halved as on a
    /// fast retransmit (by the profile's rules), CWR on the next new
    /// segment, and no further reaction until the data now outstanding is
    /// acknowledged. Not modelled: with a window of one segment the RFC
    /// waits for the retransmission timer before sending again.
    fn on_ecn_echo(&mut self) {
        self.stats.ecn_reductions += 1;
        let mss = self.mss as f64;
        let window = self.cwnd.min(self.rwnd_bytes() as f64);
        self.ssthresh = self.reduced_ssthresh(false);
        self.cwnd = match self.cfg.rules {
            Rules::Ns2 if self.cfg.variant != Variant::Sack => (window / 2.0).max(mss),
            _ => self.ssthresh,
        };
        self.inflation = 0.0;
        self.window_reduced();
    }

    /// The window was reduced (ECN-Echo, fast retransmit or timeout): an
    /// ECN-capable sender sets CWR on its next new segment and ignores
    /// ECN-Echo for the data outstanding now (RFC 3168 §6.1.2).
    fn window_reduced(&mut self) {
        if self.cfg.ecn {
            self.cwr_pending = true;
            self.ecn_recover = Some(self.snd_max);
        }
    }

    /// New data acknowledged up to `ack`; `echo`: the ACK carried an
    /// ECN-Echo, and then the window does not grow (RFC 3168 §6.1.2).
    fn on_new_ack(&mut self, ack: u64, ts_echo: Time, echo: bool, now: Time, out: &mut Vec<Segment>) {
        let acked = ack - self.snd_una;
        if self.cfg.timestamps {
            // RFC 7323 §4.1; ns-3's `EstimateRtt` with `Timestamp` on.
            self.rtt.sample(now.saturating_sub(ts_echo));
        } else if let Some((end, sent_at)) = self.timed {
            if ack >= end {
                self.rtt.sample(now - sent_at);
                self.timed = None;
            }
        }
        if self.cfg.ack_ends_backoff {
            self.rtt.end_backoff();
        }
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        // ns-3 without SACK: the segments the duplicate ACKs reported before
        // this ACK; other profiles keep no such count.
        let reno_sacks_reported = self.ns3_reno_sacks().then(|| (self.inflation / self.mss as f64).round() as u64);
        let mut acked_segments = 0;
        while self.outstanding.front().is_some_and(|s| s.end() <= ack) {
            self.outstanding.pop_front();
            acked_segments += 1;
        }
        if acked_segments > 0 {
            self.ns3_head_lost = false;
            self.ns3_head_resend = false;
        }
        self.dupacks = 0;
        let mut restart_timer = true;
        if self.in_recovery {
            let full = self.recover.is_some_and(|recover| ack >= recover);
            match self.cfg.variant {
                Variant::Reno => self.leave_recovery(acked),
                Variant::NewReno if full => self.leave_recovery(acked),
                Variant::NewReno => {
                    self.partial_ack(acked, now, out);
                    restart_timer = match self.cfg.partial_ack_timer {
                        PartialAckTimer::Impatient => !std::mem::replace(&mut self.partial_ack_seen, true),
                        PartialAckTimer::SlowButSteady => true,
                    };
                }
                Variant::Sack if full => {
                    // RFC 6675 (A): recovery ends; cwnd stays ssthresh.
                    self.in_recovery = false;
                }
                Variant::Sack => {}
            }
        } else {
            self.inflation = 0.0;
            if !echo {
                self.open_window(acked);
            }
        }
        if let Some(reported) = reno_sacks_reported.filter(|_| !self.in_recovery) {
            self.ns3_discard_reno_sacks(reported, acked_segments);
        }
        if self.in_loss && self.recover.is_some_and(|recover| ack >= recover) {
            self.in_loss = false;
        }
        if restart_timer {
            self.arm_timer(now);
        }
        self.transmit(now, out);
    }

    /// RFC 6582 §3.2 step 3, partial acknowledgments: resend the first
    /// unacknowledged segment, deflate the window by the amount acknowledged
    /// and add back one MSS if at least one was. ns-2 (`partialnewack`,
    /// `partial_window_deflation_ 1`) takes the deflation from `dupwnd_`
    /// first, then from `cwnd_`, leaving `dupwnd_` at one segment.
    fn partial_ack(&mut self, acked: u64, now: Time, out: &mut Vec<Segment>) {
        let mss = self.mss as f64;
        let first = self.outstanding[0];
        self.emit(Segment { seq: first.seq, len: first.len, retransmission: true, cwr: false }, now, out);
        let add_back = if acked >= self.mss { mss } else { 0.0 };
        let deflate = acked as f64;
        if self.cfg.rules == Rules::Ns3 {
            // ns-3 keeps cwnd = ssthresh; the acknowledged segments the
            // duplicate ACKs had reported leave the count (`DiscardUpTo`);
            // the head, marked lost, is resent (`MarkHeadAsLost`,
            // `DoRetransmit`).
            let behind_first = self.flight_size() - self.outstanding[0].len as u64;
            self.inflation = (self.inflation - (deflate - add_back)).clamp(0.0, behind_first as f64);
            self.ns3_head_lost = true;
            self.ns3_head_resend = false;
        } else if self.inflation > deflate {
            self.inflation -= deflate - add_back;
        } else {
            self.cwnd = (self.cwnd - (deflate - self.inflation)).max(mss);
            self.inflation = add_back;
        }
    }

    /// Leaves fast recovery on a full ACK (Reno: any ACK of new data):
    /// - RFC 5681 §3.2 step 6 (Reno): `cwnd = ssthresh`.
    /// - RFC 6582 §3.2 step 3 (NewReno), option (1): `cwnd = min(ssthresh,
    ///   max(FlightSize, SMSS) + SMSS)`, FlightSize being what is
    ///   outstanding now, so that a sender whose partial ACKs left little in
    ///   flight does not burst a whole `ssthresh` of segments.
    /// - ns-2 (`RenoTcpAgent::recv`, `NewRenoTcpAgent::recv` with
    ///   `exit_recovery_fix_ 0`): `dupwnd_ = 0`, `cwnd_` stays as fast
    ///   retransmit halved it and partial ACKs deflated it, then opens as
    ///   for any new ACK (`recv_newack_helper` calls `opencwnd`).
    /// - ns-3 (`TcpSocketBase::ProcessAck` leaving `CA_RECOVERY`,
    ///   `TcpClassicRecovery::ExitRecovery`): `cwnd = ssthresh` (RFC 6582
    ///   option 2, no burst limit), then `IncreaseWindow` for the ACK.
    fn leave_recovery(&mut self, acked: u64) {
        let mss = self.mss as f64;
        self.in_recovery = false;
        self.inflation = 0.0;
        match (self.cfg.rules, self.cfg.variant) {
            (Rules::Rfc, Variant::NewReno) => {
                self.cwnd = self.ssthresh.min((self.flight_size() as f64).max(mss) + mss);
            }
            (Rules::Rfc, _) => self.cwnd = self.ssthresh,
            (Rules::Ns2, _) => self.open_window(acked),
            (Rules::Ns3, _) => {
                self.cwnd = self.ssthresh;
                self.open_window(acked);
            }
        }
    }

    fn on_duplicate_ack(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.dupacks += 1;
        if self.in_recovery {
            match self.cfg.variant {
                Variant::Reno | Variant::NewReno => {
                    // RFC 5681 §3.2 step 4; ns-2's `++dupwnd_`; ns-3's
                    // `AddRenoSack`, which cannot report more segments than
                    // are outstanding behind the first.
                    self.inflation += self.mss as f64;
                    if self.cfg.rules == Rules::Ns3 {
                        let behind_first = self.flight_size() - self.outstanding[0].len as u64;
                        self.inflation = self.inflation.min(behind_first as f64);
                    }
                    self.transmit(now, out);
                }
                Variant::Sack => self.transmit_sack(now, out),
            }
            return;
        }
        let sack_loss = self.cfg.variant == Variant::Sack && self.is_lost(0);
        // ns-3 (`DupAck` in `CA_DISORDER`): any duplicate ACK while the head
        // is marked lost (`IsLost(m_highRxAckMark)`), whatever `m_recover`.
        let head_lost = self.ns3_head_lost && !self.in_loss;
        if ((self.dupacks >= self.cfg.dupthresh || sack_loss) && self.may_fast_retransmit()) || head_lost {
            self.enter_recovery(now, out);
        } else if self.cfg.limited_transmit
            && self.dupacks < self.cfg.dupthresh
            && (self.cfg.rules == Rules::Ns2 || !self.in_loss)
        {
            // RFC 3042: one segment beyond cwnd per duplicate ACK, cwnd
            // unchanged. ns-2's `send_one`: the one segment at `t_seqno_`
            // if `t_seqno_ <= highest_ack_ + cwnd_ + dupacks_` (and within
            // `wnd_`), after a timeout too. ns-3 (`AddRenoSack` in
            // `CA_DISORDER`) counts no duplicate ACK in `CA_LOSS`.
            if self.ns3_reno_sacks() {
                self.ns3_add_reno_sack();
            } else {
                self.inflation = (self.dupacks as u64 * self.mss) as f64;
            }
            let burst = if self.cfg.rules == Rules::Ns2 { 1 } else { usize::MAX };
            self.transmit_window(burst, now, out);
        }
    }

    /// The retransmission timer fired at `now`.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.account_cwnd(now);
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            return;
        }
        self.stats.timeouts += 1;
        if !self.rtt.backed_off() {
            self.stats.first_timeouts += 1;
            let ran = self.rto_deadline.map_or(Time::ZERO, |d| d.saturating_sub(self.rto_started));
            self.stats.first_timeouts_ns += ran.as_nanos();
        }
        self.rtt.on_timeout();
        self.ssthresh = self.reduced_ssthresh(true);
        // ns-2's `RenoTcpAgent::timeout` zeroes `dupwnd_` before `slowdown`
        // (`cwnd_` is never inflated); ns-3's `ResetRenoSack`.
        self.inflation = 0.0;
        self.ns3_head_lost = false;
        self.ns3_head_resend = false;
        self.in_loss = true;
        self.loss_resent = 0;
        self.cwnd = self.mss as f64;
        self.in_recovery = false;
        self.dupacks = 0;
        // RFC 6582 §3.2 step 4; RFC 6675 §5.1.
        self.recover = Some(self.snd_max);
        self.window_reduced();
        self.high_sacked = 0;
        for s in self.outstanding.iter_mut() {
            s.sacked = false;
            s.retransmitted = false;
        }
        self.timed = None;
        self.snd_nxt = self.snd_una;
        self.start_timer(now);
        self.transmit(now, out);
    }
}
