//! The kernel's view of each emulated TCP sender: `TCP_INFO` samples, and
//! the file transfers the senders completed (which `TCP_INFO`'s count of
//! acknowledged bytes tells).
//!
//! Each host's agent runs one sampling thread ([`sample_until`]) that reads
//! `getsockopt(TCP_INFO)` of every TCP sender of the host on a regular grid
//! of the run's time ([`sample_period`]), once at the end of the warm-up
//! and once at the end of the run, collects the transfers the senders
//! report, and writes both into `tcp_info.<node>.txt` of the run's output
//! directory (written under another name and renamed, so a file that
//! exists is complete). The router, once the run is over, waits for those
//! files ([`wait_for`]) and reads them ([`read`]) into the `flows` table
//! (retransmissions, timeouts, the mean congestion window), the time series
//! (`flow/<name>` scopes) and the `transfers` table.
//!
//! Besides, each sender reads what the kernel set up for its connection as
//! soon as it is open ([`opening`]: its segment size, initial window,
//! first RTO, options and congestion control) and hands it to the
//! sampling thread with the socket; the `flows` table's `kernel_*` columns
//! come from there and from the last sample.
//!
//! Fields read from `struct tcp_info` (linux/tcp.h) by offset, since the
//! `libc` crate's copy stops short of the newer ones: `tcpi_options` (5:
//! `TCPI_OPT_TIMESTAMPS` 1, `_SACK` 2, `_WSCALE` 4, `_ECN` 8),
//! `tcpi_snd_wscale` (6, low 4 bits), `tcpi_rto` (8, µs), `tcpi_snd_mss`
//! (16), `tcpi_rtt` (68, µs), `tcpi_snd_ssthresh` (76), `tcpi_snd_cwnd`
//! (80, segments), `tcpi_total_retrans` (100), `tcpi_delivered_ce` (196, Linux 4.18:
//! segments whose ACKs echoed a CE mark, ECE), `tcpi_snd_wnd` (228, Linux
//! 5.4: the peer's advertised window, bytes) and, from Linux 6.7,
//! `tcpi_total_rto` (240, u16; 0 on older kernels, whose answer is shorter).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;

use phb::Time;
use phb_sim::apps::Transfer;

use crate::sys;

/// The longest time between two samples: the grid is the time series'
/// interval cut into equal parts no longer than this (this alone without a
/// time series), so the mean congestion window averages enough samples.
pub const MAX_PERIOD: Time = Time::from_millis(100);
/// How long the router waits after the run for the agents' sample files.
const WAIT_FOR_FILES: Time = Time::from_secs(3);
/// `tcpi_options`' bit for a connection that negotiated ECN (linux/tcp.h).
const TCPI_OPT_ECN: u8 = 8;
/// `ssthresh` before the first loss: "infinite".
const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// How long the sampling thread waits after its last sample for the
/// transfers completed just before the end (their senders poll every
/// millisecond).
const LAST_TRANSFERS: Time = Time::from_millis(20);

/// `tcpi_options`' bits (linux/tcp.h) and their names in the `flows`
/// table's `kernel_options`.
const TCPI_OPTIONS: [(u8, &str); 4] = [(1, "timestamps"), (2, "sack"), (4, "wscale"), (TCPI_OPT_ECN, "ecn")];

/// What the kernel set up for a connection, read as soon as it is open.
#[derive(Clone, Debug, PartialEq)]
pub struct Opening {
    /// The congestion control the socket runs (`TCP_CONGESTION`, read back).
    pub congestion: String,
    /// `tcpi_snd_mss`: payload bytes per segment.
    pub snd_mss: u32,
    /// `tcpi_snd_cwnd` before any data: the initial window.
    pub cwnd: u32,
    /// `tcpi_rto` after the handshake's RTT sample: Linux's SRTT plus
    /// max(RTTVAR, rto_min).
    pub rto: Time,
    /// `tcpi_options`: the negotiated options.
    pub options: u8,
    /// `tcpi_snd_wscale`: the shift the peer's windows are scaled by.
    pub snd_wscale: u8,
}

impl Opening {
    /// The negotiated options' names, comma-separated.
    pub fn option_names(&self) -> String {
        let names: Vec<&str> =
            TCPI_OPTIONS.iter().filter(|(bit, _)| self.options & bit != 0).map(|(_, name)| *name).collect();
        names.join(",")
    }
}

/// What a host's senders tell its sampling thread.
pub enum Report {
    /// Flow `f`'s connected socket (a duplicate of its descriptor), to
    /// sample, and what the kernel set up for it.
    Socket(usize, OwnedFd, Opening),
    /// Flow `f` completed a transfer.
    Transfer(usize, Transfer),
}

/// One reading of one flow's socket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// The flow's index in the scenario.
    pub flow: usize,
    /// Time of the run (from its start).
    pub time: Time,
    pub cwnd_segments: u32,
    /// `None` while it is infinite (before the first loss).
    pub ssthresh_segments: Option<u32>,
    /// Smoothed RTT; `None` before the first measurement.
    pub srtt: Option<Time>,
    /// Segments retransmitted so far.
    pub total_retrans: u32,
    /// Retransmission timeouts so far (Linux 6.7 and later; else 0).
    pub total_rto: u32,
    /// Whether the connection negotiated ECN (RFC 3168 §6.1.1).
    pub ecn: bool,
    /// Segments delivered whose ACKs carried ECE so far.
    pub delivered_ce: u32,
    /// `tcpi_snd_wnd` (Linux 5.4): the window the receiver advertises, bytes.
    pub peer_window: u32,
}

/// The sampling grid's step for a time series of `interval` (if any).
pub fn sample_period(interval: Option<Time>) -> Time {
    match interval {
        Some(interval) => {
            let parts = interval.as_nanos().div_ceil(MAX_PERIOD.as_nanos()).max(1);
            Time::from_nanos(interval.as_nanos() / parts)
        }
        None => MAX_PERIOD,
    }
}

/// The times of the run at which the sockets are read: `k·period` before
/// `end`, the end of the warm-up, and `end`.
fn sample_times(period: Time, warmup: Time, end: Time) -> Vec<Time> {
    let mut times: Vec<Time> =
        (1..).map(|k| Time::from_nanos(period.as_nanos() * k)).take_while(|&t| t < end).collect();
    if warmup > Time::ZERO && warmup < end {
        times.push(warmup);
    }
    times.push(end);
    times.sort();
    times.dedup();
    times
}

/// `struct tcp_info` of socket `fd` and its length, or `None` if it cannot
/// be read.
fn tcp_info(fd: &impl AsRawFd) -> Option<([u8; 512], usize)> {
    let mut buf = [0u8; 512];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is writable for `len` bytes, and `len` is its length.
    let ret = unsafe {
        libc::getsockopt(fd.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_INFO, buf.as_mut_ptr().cast(), &mut len)
    };
    (ret == 0 && len as usize >= 104).then_some((buf, len as usize))
}

/// The data bytes the peer of connected socket `fd` has acknowledged, or
/// `None` if they cannot be read: `tcpi_bytes_acked` (offset 120, Linux
/// 4.1 and later) less the SYN's sequence number, which it counts too.
pub fn bytes_acked(fd: &impl AsRawFd) -> Option<u64> {
    let (buf, len) = tcp_info(fd)?;
    (len >= 128).then(|| u64::from_ne_bytes(buf[120..128].try_into().expect("8 bytes")).saturating_sub(1))
}

/// What the kernel set up for connected socket `fd` ([`Opening`]), or
/// `None` if it cannot be read.
pub fn opening(fd: &impl AsRawFd) -> Option<Opening> {
    let (buf, _) = tcp_info(fd)?;
    let u32_at = |at: usize| u32::from_ne_bytes(buf[at..at + 4].try_into().expect("4 bytes"));
    let mut name = [0u8; 16];
    let mut len = name.len() as libc::socklen_t;
    // SAFETY: `name` is writable for `len` bytes, and `len` is its length.
    let ret = unsafe {
        libc::getsockopt(fd.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_CONGESTION, name.as_mut_ptr().cast(), &mut len)
    };
    let congestion = if ret == 0 {
        String::from_utf8_lossy(&name[..len as usize]).trim_end_matches('\0').to_owned()
    } else {
        String::new()
    };
    Some(Opening {
        congestion,
        snd_mss: u32_at(16),
        cwnd: u32_at(80),
        rto: Time::from_micros(u64::from(u32_at(8))),
        options: buf[5],
        snd_wscale: buf[6] & 0x0f,
    })
}

/// Reads `TCP_INFO` of socket `fd`, or `None` if it cannot be read.
fn read_socket(fd: &OwnedFd, flow: usize, time: Time) -> Option<Sample> {
    let (buf, len) = tcp_info(fd)?;
    let u32_at = |at: usize| u32::from_ne_bytes(buf[at..at + 4].try_into().expect("4 bytes"));
    let ssthresh = u32_at(76);
    let rtt_us = u32_at(68);
    Some(Sample {
        flow,
        time,
        cwnd_segments: u32_at(80),
        ssthresh_segments: (ssthresh < INFINITE_SSTHRESH).then_some(ssthresh),
        srtt: (rtt_us > 0).then(|| Time::from_micros(u64::from(rtt_us))),
        total_retrans: u32_at(100),
        total_rto: if len >= 242 { u32::from(u16::from_ne_bytes([buf[240], buf[241]])) } else { 0 },
        ecn: buf[5] & TCPI_OPT_ECN != 0,
        delivered_ce: if len >= 200 { u32_at(196) } else { 0 },
        peer_window: if len >= 232 { u32_at(228) } else { 0 },
    })
}

/// The sample file of host `node` in `dir`.
pub fn file_of(dir: &Path, node: usize) -> PathBuf {
    dir.join(format!("tcp_info.{node}.txt"))
}

/// The agent's sampling thread: reads every socket registered through
/// `reports` at `epoch + k·period`, at `epoch + warmup` and at `epoch +
/// end`, collects the transfers reported until shortly after the end, then
/// writes both to `file`.
pub fn sample_until(
    reports: Receiver<Report>,
    epoch: Time,
    period: Time,
    warmup: Time,
    end: Time,
    file: &Path,
) -> std::io::Result<()> {
    let mut open: Vec<(usize, OwnedFd)> = Vec::new();
    let mut samples = Vec::new();
    let mut transfers = Vec::new();
    let mut openings = Vec::new();
    let mut take = |open: &mut Vec<(usize, OwnedFd)>| {
        for report in reports.try_iter() {
            match report {
                Report::Socket(flow, fd, opening) => {
                    open.push((flow, fd));
                    openings.push((flow, opening));
                }
                Report::Transfer(flow, t) => transfers.push((flow, t)),
            }
        }
    };
    for at in sample_times(period, warmup, end) {
        sys::sleep_until(epoch + at);
        take(&mut open);
        samples.extend(open.iter().filter_map(|(flow, fd)| read_socket(fd, *flow, at)));
    }
    sys::sleep_until(epoch + end + LAST_TRANSFERS);
    take(&mut open);
    let text: String = samples
        .iter()
        .map(to_line)
        .chain(openings.iter().map(|(f, o)| opening_line(*f, o)))
        .chain(transfers.iter().filter(|(_, t)| t.end <= end).map(|(f, t)| transfer_line(*f, t)))
        .collect();
    let partial = file.with_extension("partial");
    crate::sys::write_new_file(&partial, text.as_bytes())?;
    std::fs::rename(&partial, file)
}

fn to_line(s: &Sample) -> String {
    format!(
        "{} {} {} {} {} {} {} {} {} {}\n",
        s.flow,
        s.time.as_nanos(),
        s.cwnd_segments,
        s.ssthresh_segments.map_or(-1, i64::from),
        s.srtt.map_or(-1, |t| t.as_nanos() as i64),
        s.total_retrans,
        s.total_rto,
        u8::from(s.ecn),
        s.delivered_ce,
        s.peer_window
    )
}

fn opening_line(flow: usize, o: &Opening) -> String {
    let congestion = if o.congestion.is_empty() { "-" } else { &o.congestion };
    format!("O {flow} {} {} {} {} {} {congestion}\n", o.snd_mss, o.cwnd, o.rto.as_nanos(), o.options, o.snd_wscale)
}

fn opening_from_line(line: &str) -> Option<(usize, Opening)> {
    let fields: Vec<&str> = line.split_whitespace().skip(1).collect();
    let [flow, snd_mss, cwnd, rto, options, snd_wscale, congestion]: [&str; 7] = fields.as_slice().try_into().ok()?;
    let opening = Opening {
        congestion: if congestion == "-" { String::new() } else { congestion.to_owned() },
        snd_mss: snd_mss.parse().ok()?,
        cwnd: cwnd.parse().ok()?,
        rto: Time::from_nanos(rto.parse().ok()?),
        options: options.parse().ok()?,
        snd_wscale: snd_wscale.parse().ok()?,
    };
    Some((flow.parse().ok()?, opening))
}

fn transfer_line(flow: usize, t: &Transfer) -> String {
    format!("T {flow} {} {} {}\n", t.size, t.start.as_nanos(), t.end.as_nanos())
}

fn transfer_from_line(line: &str) -> Option<(usize, Transfer)> {
    let fields: Vec<u64> = line.split_whitespace().skip(1).map(str::parse).collect::<Result<_, _>>().ok()?;
    let [flow, size, start, end] = fields.as_slice().try_into().ok()?;
    let transfer = Transfer { size, start: Time::from_nanos(start), end: Time::from_nanos(end) };
    Some((usize::try_from(flow).ok()?, transfer))
}

fn from_line(line: &str) -> Option<Sample> {
    let fields: Vec<i64> = line.split_whitespace().map(str::parse).collect::<Result<_, _>>().ok()?;
    let [flow, time, cwnd, ssthresh, srtt, retrans, rto, ecn, delivered_ce, peer_window] =
        fields.as_slice().try_into().ok()?;
    Some(Sample {
        flow: usize::try_from(flow).ok()?,
        time: Time::from_nanos(u64::try_from(time).ok()?),
        cwnd_segments: u32::try_from(cwnd).ok()?,
        ssthresh_segments: u32::try_from(ssthresh).ok(),
        srtt: u64::try_from(srtt).ok().map(Time::from_nanos),
        total_retrans: u32::try_from(retrans).ok()?,
        total_rto: u32::try_from(rto).ok()?,
        ecn: ecn != 0,
        delivered_ce: u32::try_from(delivered_ce).ok()?,
        peer_window: u32::try_from(peer_window).ok()?,
    })
}

/// Waits (a few seconds at most) until the sample file of each of `nodes`
/// exists in `dir`; returns the nodes whose file did not come.
pub fn wait_for(dir: &Path, nodes: &[usize]) -> Vec<usize> {
    let deadline = sys::monotonic() + WAIT_FOR_FILES;
    loop {
        let missing: Vec<usize> = nodes.iter().copied().filter(|&n| !file_of(dir, n).is_file()).collect();
        if missing.is_empty() || sys::monotonic() >= deadline {
            return missing;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// What the agents reported: `TCP_INFO` samples, sorted by time, then
/// flow, the connections' openings, sorted by flow, and completed
/// transfers, sorted by flow, then start.
#[derive(Debug, Default)]
pub struct Reports {
    pub samples: Vec<Sample>,
    pub openings: Vec<(usize, Opening)>,
    pub transfers: Vec<(usize, Transfer)>,
}

/// Everything in the files of `nodes` in `dir` (a missing file adds
/// nothing), which it then removes.
pub fn read(dir: &Path, nodes: &[usize]) -> std::io::Result<Reports> {
    let mut reports = Reports::default();
    for &node in nodes {
        let path = file_of(dir, node);
        if !path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        for line in text.lines() {
            let bad = || {
                std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: bad line {line:?}", path.display()))
            };
            if line.starts_with("T ") {
                reports.transfers.push(transfer_from_line(line).ok_or_else(bad)?);
            } else if line.starts_with("O ") {
                reports.openings.push(opening_from_line(line).ok_or_else(bad)?);
            } else {
                reports.samples.push(from_line(line).ok_or_else(bad)?);
            }
        }
        std::fs::remove_file(&path)?;
    }
    reports.samples.sort_by_key(|s| (s.time, s.flow));
    reports.transfers.sort_by_key(|(f, t)| (*f, t.start));
    reports.openings.sort_by_key(|(f, _)| *f);
    Ok(reports)
}

/// What a flow's samples say of its measured period (after `warmup`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowSummary {
    /// Retransmitted segments and timeouts since the warm-up.
    pub retransmissions: u64,
    pub timeouts: u64,
    /// Mean of the congestion window over the samples after the warm-up;
    /// NaN if there are none.
    pub cwnd_mean_segments: f64,
    /// Whether the connection negotiated ECN (its last sample).
    pub ecn: bool,
    /// Segments delivered with ECE on their ACKs since the warm-up.
    pub delivered_ce: u64,
    /// The receiver's advertised window at the last sample, bytes (NaN
    /// without samples).
    pub peer_window_bytes: f64,
}

/// Summarizes `samples` (sorted by time) of each of `flows` flows.
pub fn summarize(samples: &[Sample], flows: usize, warmup: Time) -> Vec<FlowSummary> {
    (0..flows)
        .map(|f| {
            let mine = || samples.iter().filter(move |s| s.flow == f);
            let baseline = mine().rfind(|s| s.time <= warmup);
            let last = mine().next_back();
            let since = |get: fn(&Sample) -> u32| match (last, baseline) {
                (Some(last), Some(base)) => u64::from(get(last).saturating_sub(get(base))),
                (Some(last), None) => u64::from(get(last)),
                _ => 0,
            };
            let measured: Vec<f64> = mine().filter(|s| s.time > warmup).map(|s| f64::from(s.cwnd_segments)).collect();
            FlowSummary {
                retransmissions: since(|s| s.total_retrans),
                timeouts: since(|s| s.total_rto),
                ecn: last.is_some_and(|s| s.ecn),
                delivered_ce: since(|s| s.delivered_ce),
                peer_window_bytes: last.map_or(f64::NAN, |s| f64::from(s.peer_window)),
                cwnd_mean_segments: if measured.is_empty() {
                    f64::NAN
                } else {
                    measured.iter().sum::<f64>() / measured.len() as f64
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(flow: usize, ms: u64, cwnd: u32, retrans: u32) -> Sample {
        Sample {
            flow,
            time: Time::from_millis(ms),
            cwnd_segments: cwnd,
            ssthresh_segments: (retrans > 0).then_some(cwnd / 2),
            srtt: Some(Time::from_micros(20_500)),
            total_retrans: retrans,
            total_rto: retrans / 3,
            ecn: retrans % 2 == 1,
            delivered_ce: retrans * 2,
            peer_window: 20_000 + cwnd,
        }
    }

    #[test]
    fn periods_divide_the_series_interval() {
        assert_eq!(sample_period(None), MAX_PERIOD);
        assert_eq!(sample_period(Some(Time::from_millis(40))), Time::from_millis(40));
        assert_eq!(sample_period(Some(Time::from_millis(250))), Time::from_nanos(250_000_000 / 3));
        assert_eq!(sample_period(Some(Time::from_secs(1))), Time::from_millis(100));
    }

    #[test]
    fn sockets_are_read_on_the_grid_at_the_warmup_and_at_the_end() {
        let ms = Time::from_millis;
        assert_eq!(sample_times(ms(100), ms(250), ms(400)), [ms(100), ms(200), ms(250), ms(300), ms(400)]);
        assert_eq!(sample_times(ms(100), ms(200), ms(350)), [ms(100), ms(200), ms(300), ms(350)]);
        assert_eq!(sample_times(ms(100), Time::ZERO, ms(100)), [ms(100)]);
    }

    #[test]
    fn lines_round_trip() {
        for s in [sample(3, 1500, 17, 0), sample(0, 0, 10, 7)] {
            assert_eq!(from_line(&to_line(&s)), Some(s));
        }
        let none = Sample { srtt: None, ssthresh_segments: None, ..sample(1, 2, 3, 0) };
        assert_eq!(from_line(&to_line(&none)), Some(none));
        assert_eq!(from_line("1 2 3"), None);
        let opening = Opening {
            congestion: "cubic".into(),
            snd_mss: 1448,
            cwnd: 4,
            rto: Time::from_millis(212),
            options: 7,
            snd_wscale: 7,
        };
        assert_eq!(opening_from_line(&opening_line(2, &opening)), Some((2, opening.clone())));
        assert_eq!(opening.option_names(), "timestamps,sack,wscale");
        let unread = Opening { congestion: String::new(), ..opening };
        assert_eq!(opening_from_line(&opening_line(0, &unread)), Some((0, unread)));
        let transfer = Transfer { size: 5000, start: Time::from_millis(1200), end: Time::from_micros(1_834_017) };
        assert_eq!(transfer_from_line(&transfer_line(4, &transfer)), Some((4, transfer)));
    }

    #[test]
    fn summaries_count_from_the_warmup() {
        let samples = [sample(0, 500, 4, 1), sample(0, 1000, 10, 3), sample(0, 1500, 20, 6), sample(0, 2000, 30, 9)];
        let [s, empty] = summarize(&samples, 2, Time::from_millis(1000)).try_into().expect("two flows");
        assert_eq!(s.retransmissions, 6);
        assert_eq!(s.timeouts, 2);
        assert_eq!(s.cwnd_mean_segments, 25.0);
        assert_eq!((s.ecn, s.delivered_ce), (true, 12));
        assert_eq!(s.peer_window_bytes, 20_030.0);
        assert_eq!(empty.retransmissions, 0);
        assert!(empty.cwnd_mean_segments.is_nan() && empty.peer_window_bytes.is_nan());
    }

    #[test]
    fn a_connected_socket_can_be_read() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let stream = std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let fd = OwnedFd::from(stream);
        let s = read_socket(&fd, 2, Time::from_millis(7)).expect("TCP_INFO");
        assert_eq!((s.flow, s.time, s.total_retrans, s.delivered_ce), (2, Time::from_millis(7), 0, 0));
        assert!(s.cwnd_segments >= 1);
        let o = opening(&fd).expect("TCP_INFO");
        assert!(o.snd_mss > 0 && o.cwnd >= 1 && o.rto >= Time::from_millis(200), "{o:?}");
        assert!(!o.congestion.is_empty());
        assert_eq!(bytes_acked(&fd), Some(0));
        let mut stream = std::net::TcpStream::from(fd);
        std::io::Write::write_all(&mut stream, &[7; 1000]).expect("write");
        let (mut peer, _) = listener.accept().expect("accept");
        std::io::Read::read_exact(&mut peer, &mut [0; 1000]).expect("read");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while bytes_acked(&stream) != Some(1000) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(bytes_acked(&stream), Some(1000));
    }
}
