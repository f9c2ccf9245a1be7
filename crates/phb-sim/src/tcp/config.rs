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
}

impl TcpConfig {
    /// What ns-2's `Agent/TCP/Newreno` with `Agent/TCPSink` does by default
    /// (ns-2.35 `ns-default.tcl`), the TCP the papers simulated:
    /// `packetSize_` 1000 bytes of segment, to which `TcpAgent::output` adds
    /// the 40-byte TCP/IP header (`useHeaders_`, on since 2001/11/28), so
    /// 1040-byte packets and 40-byte ACKs; an initial window of 1, `window_`
    /// 20, minimum RTO 200 ms, initial RTO 3 s, a 10 ms clock, no delayed
    /// ACKs (100 ms when turned on).
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
        }
    }

    /// ns-2 as the papers of 2002–2004 ran it (ns-2.26 and 2.27; the
    /// Vukadinović thesis was defended in October 2004): [`TcpConfig::ns2`]
    /// with that era's `ns-default.tcl` timer defaults, a minimum RTO of 1 s
    /// (`minrto_ 1`, set on 2001/05/14, lowered to 0.2 s on 2004/10/14), an
    /// initial RTO of 6 s (`rtxcur_init_ 6.0` until 2006/01/21) and no
    /// practical maximum (`maxrto_ 100000`).
    pub fn ns2_2004() -> TcpConfig {
        TcpConfig {
            min_rto: Time::from_secs(1),
            initial_rto: Time::from_secs(6),
            max_rto: Time::from_secs(100_000),
            ..TcpConfig::ns2()
        }
    }

    /// A Linux-like profile (also close to ns-3's `TcpSocket` defaults
    /// with SACK): 1448-byte segments, initial window 10, a large window,
    /// SACK recovery, minimum RTO 200 ms, initial RTO 1 s, a 1 ms clock,
    /// delayed ACKs with a 40 ms timeout.
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
        }
    }

    /// A profile by name: `ns2`, `ns2_2004`, `linux` or `ns3` (same as
    /// `linux`).
    pub fn profile(name: &str) -> Option<TcpConfig> {
        match name {
            "ns2" => Some(TcpConfig::ns2()),
            "ns2_2004" => Some(TcpConfig::ns2_2004()),
            "linux" | "ns3" => Some(TcpConfig::linux()),
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
