//! TCP parameters and the documented default profiles.

use phb::Time;

/// How the sender recovers from loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Fast retransmit and fast recovery (RFC 5681); a partial ACK ends
    /// recovery, so several losses in one window usually end in a timeout.
    Reno,
    /// Reno with partial ACKs retransmitting the next hole and keeping the
    /// sender in recovery until all data outstanding at its start is
    /// acknowledged (RFC 6582).
    NewReno,
    /// SACK-based loss recovery with a scoreboard and `pipe` (RFC 6675).
    Sack,
}

/// Whose rules the sender follows where the RFCs leave a choice, or where
/// the simulator a profile stands for departs from them (`docs/tcp.md`
/// lists each rule with its source).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// RFC 5681, RFC 6582 and RFC 6675 as written: `ssthresh =
    /// max(FlightSize/2, 2·SMSS)`, held on a repeated timeout (RFC 5681
    /// §3.1); NewReno leaves recovery with `cwnd = min(ssthresh,
    /// max(FlightSize, SMSS) + SMSS)` (RFC 6582 §3.2 step 3, option 1).
    Rfc,
    /// ns-2.35's `Agent/TCP/Reno` and `Agent/TCP/Newreno` (`tcp.cc`,
    /// `tcp-reno.cc`, `tcp-newreno.cc`): `ssthresh` and `cwnd` halve the
    /// window `min(cwnd_, wnd_)` (`slowdown`), the inflation is kept apart
    /// (`dupwnd_`) and dropped on leaving recovery, so the window left is
    /// `cwnd_` as partial ACKs deflated it (`exit_recovery_fix_ 0`); NewReno
    /// sends at most two new segments per ACK while recovering
    /// (`send_much(0, 0, 2)`); fast retransmit restarts the timer
    /// (`reset_rtx_timer(1, 0)`); Limited Transmit, when on, sends one
    /// segment per duplicate ACK (`send_one`), after a timeout too.
    Ns2,
    /// ns-3's `TcpSocketBase` with `TcpNewReno` and `TcpClassicRecovery`
    /// (`tcp-socket-base.cc`, `tcp-congestion-ops.cc`,
    /// `tcp-recovery-ops.cc`): `ssthresh = max(2·SMSS, BytesInFlight/2)`
    /// with the bytes in flight counted as ns-3 counts them (segments the
    /// duplicate ACKs reported have left the network), held on a timeout
    /// while the head is already retransmitted; recovery left with `cwnd =
    /// ssthresh` (RFC 6582 option 2) and the window opened by the exiting
    /// ACK; a recovery point that an ACK reaching it clears; without SACK,
    /// the duplicate ACKs' reports of segments out of the network
    /// (`AddRenoSack`) kept across ACKs until a timeout, and a first segment
    /// among them marked lost and resent (`TcpTxBuffer::DiscardUpTo`).
    Ns3,
}

/// When a partial ACK restarts the retransmission timer during NewReno
/// recovery. RFC 6582 §3.2 step 3 resets it "for the first partial ACK
/// that arrives during fast recovery" only: the "Impatient" variant of RFC
/// 2582 / RFC 3782 §4, which lets the timer expire when a window lost many
/// segments rather than repair one per round trip; resetting it on every
/// partial ACK is the "Slow-but-Steady" variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialAckTimer {
    Impatient,
    SlowButSteady,
}

/// ns-3's socket buffers, `ns3::TcpSocket::SndBufSize` and `RcvBufSize`
/// (`tcp-socket.cc`): 131072 bytes each.
pub const NS3_BUFFER_BYTES: u32 = 131_072;

/// The `stcp` profile's maximum window: 64 KB without window scaling
/// (RFC 793's 16-bit window field), 65,535 bytes.
pub const STCP_WINDOW_BYTES: u32 = 65_535;

/// Everything that shapes one connection's behaviour.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    pub variant: Variant,
    /// Maximum segment size: payload bytes per segment.
    pub mss: u32,
    /// IP + TCP header bytes added to every segment and carried by ACKs.
    pub header: u32,
    /// Initial congestion window, segments.
    pub initial_window: u32,
    /// Initial slow-start threshold, segments (`None`: unlimited).
    pub initial_ssthresh: Option<u32>,
    /// Receiver's advertised window, segments (ns-2's `window_`).
    pub window: u32,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupthresh: u32,
    /// RFC 6298 timer: lower and upper bounds, the value before any RTT
    /// sample, and the clock granularity `G`.
    pub min_rto: Time,
    pub max_rto: Time,
    pub initial_rto: Time,
    pub granularity: Time,
    /// Acknowledge every second full segment, or after `delack_timeout`.
    pub delayed_ack: bool,
    pub delack_timeout: Time,
    /// Whose rules decide `ssthresh`, the window on leaving recovery, and
    /// the other points where implementations differ.
    pub rules: Rules,
    /// NewReno: which partial ACKs restart the retransmission timer.
    pub partial_ack_timer: PartialAckTimer,
    /// Limited Transmit (RFC 3042 §2): each of the first `dupthresh − 1`
    /// duplicate ACKs lets one segment go if the receiver's window allows
    /// it and at most `cwnd + (dupthresh − 1)·SMSS` is then outstanding,
    /// `cwnd` unchanged. ns-2's `singledup_ 1` (`ns-default.tcl`, the
    /// default since 2001/11/28; `TcpAgent::send_one` in `tcp.cc`); ns-3's
    /// `LimitedTransmit` attribute.
    pub limited_transmit: bool,
    /// ns-2's `precisionReduce_ false` (`ns-default.tcl`: its default until
    /// 2006/01/24): fast retransmit halves `cwnd_` to whole segments,
    /// `(int)(window() / 2)` with `window()` the `int` of `min(cwnd_,
    /// wnd_)` (`TcpAgent::slowdown` in `tcp.cc`); off, to half of
    /// `windowd()`, exactly. `ssthresh_` is whole segments either way. Only
    /// [`Rules::Ns2`] reads it.
    pub whole_segment_halving: bool,
    /// Timestamps (RFC 7323): every ACK that acknowledges new data gives an
    /// RTT sample, from the send time of the segment whose timestamp it
    /// echoes (retransmissions included); without them one segment is
    /// timed at a time, never a retransmitted one (Karn).
    pub timestamps: bool,
    /// Every ACK of new data ends the timer's back-off, as if it gave an
    /// RTT sample: the `linux` profile's stand-in for Linux's timestamp
    /// samples, taken from every ACK (`tcp_ack_update_rtt`: "only reset
    /// backoff on valid RTT measurement"), which it does not take. Otherwise
    /// only a sample ends it (RFC 6298 §5; ns-2's `TcpAgent::newack`;
    /// 4.4BSD's `tcp_xmit_timer`; [`super::rtt::RttEstimator`]).
    pub ack_ends_backoff: bool,
    /// Restart after idle (RFC 5681 §4.1; ns-2's `slow_start_restart_`):
    /// when the application hands over data after the sender has sent
    /// nothing for longer than the RTO, with nothing outstanding, `cwnd`
    /// falls to at most the initial window. Off in every profile (ns-2's
    /// `slow_start_restart_` is on, but its bulk FTP never idles).
    pub slow_start_restart: bool,
    /// Grow the window by what each ACK acknowledges, as Linux does
    /// (`tcp_slow_start`, `tcp_cong_avoid_ai`) and RFC 3465 allows: slow
    /// start adds the bytes acknowledged, at most `L = 2·MSS` per ACK (RFC
    /// 3465 §2.2, which keeps a cumulative ACK after a loss from releasing
    /// a burst), congestion avoidance `MSS·acked/cwnd`; so a delayed ACK of
    /// two segments opens the window as two ACKs would. Off: RFC 5681's
    /// `min(acked, MSS)` and `MSS²/cwnd` per ACK (ns-2, ns-3). On in the
    /// `linux` profile only.
    pub byte_counting: bool,
    /// ECN (RFC 3168 §6.1): data segments go out ECT(0) (retransmissions
    /// not-ECT, §6.1.5), the receiver echoes a CE mark with ECE on its ACKs
    /// until a segment with CWR arrives, and the sender halves its window
    /// for an ECE at most once per window of data and sets CWR on the next
    /// new segment (see the sender). Both ends of a connection share the
    /// setting, so the negotiation (ECN-setup SYN and SYN-ACK) is taken to
    /// succeed exactly when it is on. Off in every profile: ns-2's
    /// `ecn_` is 0, ns-3's `UseEcn` is `Off`, and Linux's default
    /// `net.ipv4.tcp_ecn = 2` accepts ECN when the peer asks but never
    /// asks itself, so a connection the simulated source opens does not
    /// use it.
    pub ecn: bool,
}

impl TcpConfig {
    /// What ns-2's `Agent/TCP/Newreno` with `Agent/TCPSink` does by default
    /// (ns-2.35 `ns-default.tcl`), the TCP the papers simulated:
    /// `packetSize_` 1000 bytes of segment, to which `TcpAgent::output` adds
    /// the 40-byte TCP/IP header (`useHeaders_`, on since 2001/11/28), so
    /// 1040-byte packets and 40-byte ACKs; an initial window of 1, `window_`
    /// 20, minimum RTO 200 ms, initial RTO 3 s, a 10 ms clock, no delayed
    /// ACKs (100 ms when turned on); ns-2's recovery rules ([`Rules::Ns2`])
    /// with `newreno_changes1_ 1` (the timer reset by the first partial ACK
    /// only: [`PartialAckTimer::Impatient`]) and `partial_window_deflation_
    /// 1`, both defaults since 2003/05/05; Limited Transmit (`singledup_
    /// 1`, the default since 2001/11/28) and the window halved exactly
    /// (`precisionReduce_ true`, the default since 2006/01/24).
    pub fn ns2() -> TcpConfig {
        TcpConfig {
            variant: Variant::NewReno,
            mss: 1000,
            header: 40,
            initial_window: 1,
            initial_ssthresh: None,
            window: 20,
            dupthresh: 3,
            min_rto: Time::from_millis(200),
            max_rto: Time::from_secs(60),
            initial_rto: Time::from_secs(3),
            granularity: Time::from_millis(10),
            delayed_ack: false,
            delack_timeout: Time::from_millis(100),
            rules: Rules::Ns2,
            partial_ack_timer: PartialAckTimer::Impatient,
            limited_transmit: true,
            whole_segment_halving: false,
            timestamps: false,
            ack_ends_backoff: false,
            slow_start_restart: false,
            byte_counting: false,
            ecn: false,
        }
    }

    /// ns-2 as the papers of 2002–2004 ran it (ns-2.26 and 2.27; the
    /// Vukadinović thesis was defended in October 2004): [`TcpConfig::ns2`]
    /// with that era's `ns-default.tcl` timer defaults, a minimum RTO of 1 s
    /// (`minrto_ 1`, set on 2001/05/14, lowered to 0.2 s on 2004/10/14), an
    /// initial RTO of 6 s (`rtxcur_init_ 6.0` until 2006/01/21), no
    /// practical maximum (`maxrto_ 100000`), and fast retransmit halving the
    /// window to whole segments (`precisionReduce_ false` until 2006/01/24).
    pub fn ns2_2004() -> TcpConfig {
        TcpConfig {
            min_rto: Time::from_secs(1),
            initial_rto: Time::from_secs(6),
            max_rto: Time::from_secs(100_000),
            whole_segment_halving: true,
            ..TcpConfig::ns2()
        }
    }

    /// A Linux-like profile: 1448-byte segments, initial window 10, a large
    /// window, SACK recovery, minimum RTO 200 ms, initial RTO 1 s, a 1 ms
    /// clock, delayed ACKs with a 40 ms timeout, the window grown by what
    /// each ACK acknowledges (byte counting); the RFCs' rules where Linux's
    /// own (PRR, RACK, undo) are not modelled.
    pub fn linux() -> TcpConfig {
        TcpConfig {
            variant: Variant::Sack,
            mss: 1448,
            header: 52,
            initial_window: 10,
            initial_ssthresh: None,
            window: 4096,
            dupthresh: 3,
            min_rto: Time::from_millis(200),
            max_rto: Time::from_secs(120),
            initial_rto: Time::from_secs(1),
            granularity: Time::from_millis(1),
            delayed_ack: true,
            delack_timeout: Time::from_millis(40),
            rules: Rules::Rfc,
            partial_ack_timer: PartialAckTimer::Impatient,
            limited_transmit: false,
            whole_segment_halving: false,
            timestamps: false,
            ack_ends_backoff: true,
            slow_start_restart: false,
            byte_counting: true,
            ecn: false,
        }
    }

    /// ns-3's defaults (ns-3.44) for a `TcpSocketBase` running `TcpNewReno`
    /// with `TcpClassicRecovery` and SACK off: `SegmentSize` 536 bytes,
    /// `InitialCwnd` 10, `InitialSlowStartThreshold` unlimited,
    /// `SndBufSize` and `RcvBufSize` 131072 bytes (a window of
    /// [`TcpConfig::ns3_window`] segments), `DelAckCount` 2 and
    /// `DelAckTimeout` 200 ms (`tcp-socket.cc`); `MinRto` 1 s,
    /// `ClockGranularity` 1 ms, `ReTxThreshold` 3, `LimitedTransmit` on,
    /// `Timestamp` on (12 option bytes: 52-byte headers), the backed-off RTO
    /// capped at 60 s (`tcp-socket-base.cc`); RTT gains 1/8 and 1/4 from a
    /// 1 s initial estimate (`RttMeanDeviation`, `rtt-estimator.cc`).
    pub fn ns3() -> TcpConfig {
        TcpConfig {
            variant: Variant::NewReno,
            mss: 536,
            header: 52,
            initial_window: 10,
            initial_ssthresh: None,
            window: TcpConfig::ns3_window(536),
            dupthresh: 3,
            min_rto: Time::from_secs(1),
            max_rto: Time::from_secs(60),
            initial_rto: Time::from_secs(1),
            granularity: Time::from_millis(1),
            delayed_ack: true,
            delack_timeout: Time::from_millis(200),
            rules: Rules::Ns3,
            partial_ack_timer: PartialAckTimer::Impatient,
            limited_transmit: true,
            whole_segment_halving: false,
            timestamps: true,
            ack_ends_backoff: false,
            slow_start_restart: false,
            byte_counting: false,
            ecn: false,
        }
    }

    /// The TCP of Tufail, Jennes & Leduc's STCP simulations (SPIE 1999,
    /// Section 3): SACK, MSS 1460 bytes (40 bytes of TCP/IP headers: 1500-byte
    /// packets), a maximum window of 64 KB (65,535 bytes, no window
    /// scaling: 44 whole segments), delayed ACKs with the 200 ms "slow
    /// time-out" (every second segment, or 200 ms after the first unacknowledged
    /// one), and a retransmission timer ticking every 50 ms (their "fast
    /// time-out ... instead of traditionally used 500ms": the clock
    /// granularity `G`). The paper gives no more; the rest is 4.4BSD's,
    /// scaled to that tick where BSD counts ticks: a minimum RTO of two ticks
    /// (100 ms; BSD's `TCPTV_MIN` is two of its 500 ms ticks), an initial RTO
    /// of 3 s (`TCPTV_SRTTDFLT`), a maximum of 64 s (`TCPTV_REXMTMAX`), an
    /// initial window of one segment; the RFCs' recovery rules
    /// ([`Rules::Rfc`], RFC 6675 for SACK).
    pub fn stcp() -> TcpConfig {
        TcpConfig {
            variant: Variant::Sack,
            mss: 1460,
            header: 40,
            initial_window: 1,
            initial_ssthresh: None,
            window: STCP_WINDOW_BYTES / 1460,
            dupthresh: 3,
            min_rto: Time::from_millis(100),
            max_rto: Time::from_secs(64),
            initial_rto: Time::from_secs(3),
            granularity: Time::from_millis(50),
            delayed_ack: true,
            delack_timeout: Time::from_millis(200),
            rules: Rules::Rfc,
            partial_ack_timer: PartialAckTimer::Impatient,
            limited_transmit: false,
            whole_segment_halving: false,
            timestamps: false,
            ack_ends_backoff: false,
            slow_start_restart: false,
            byte_counting: false,
            ecn: false,
        }
    }

    /// The window, in whole segments of `mss` bytes, that ns-3's 128 KiB
    /// send and receive buffers allow.
    pub fn ns3_window(mss: u32) -> u32 {
        (NS3_BUFFER_BYTES / mss.max(1)).max(1)
    }

    /// A profile by name: `ns2`, `ns2_2004`, `linux`, `ns3` or `stcp`.
    pub fn profile(name: &str) -> Option<TcpConfig> {
        match name {
            "stcp" => Some(TcpConfig::stcp()),
            "ns2" => Some(TcpConfig::ns2()),
            "ns2_2004" => Some(TcpConfig::ns2_2004()),
            "linux" => Some(TcpConfig::linux()),
            "ns3" => Some(TcpConfig::ns3()),
            _ => None,
        }
    }

    /// Checks relations the state machines rely on.
    pub fn validate(&self) -> Result<(), String> {
        if self.mss == 0 {
            return Err("mss must be positive".into());
        }
        if self.initial_window == 0 || self.window == 0 {
            return Err("initial_window and window must be at least 1 segment".into());
        }
        if self.dupthresh == 0 {
            return Err("dupthresh must be at least 1".into());
        }
        if self.min_rto > self.max_rto {
            return Err(format!("min_rto ({}) exceeds max_rto ({})", self.min_rto, self.max_rto));
        }
        Ok(())
    }
}
