//! Which TCP keys Linux's own TCP honours under `phblab emulate`, and the
//! refusal, naming the key, of the others: a key is either asked of the
//! kernel or refused, never left silently to its defaults
//! (`docs/emulation.md`, "TCP keys").
//!
//! Honoured (`phb-emu` asks the kernel; its `kernel_tcp.rs` has the mapping):
//! `variant` (SACK per namespace), `mss` (`TCP_MAXSEG`), `header` (40 B:
//! timestamps off, 52 B: on, per namespace), `initial_window` and
//! `min_rto` (the sending host's route to the destination: `initcwnd`,
//! `rto_min`), `window` (the receiver's socket: `TCP_WINDOW_CLAMP`),
//! `delayed_ack` (the receiving host's route to the sender: `quickack`),
//! `slow_start_restart` (`tcp_slow_start_after_idle` per namespace), `ecn`
//! and `congestion`.
//!
//! Accepted only at Linux's own value when a group sets them (the `linux`
//! profile's values stand for the kernel's otherwise): `dupthresh` (3),
//! `max_rto` (120 s), `initial_rto` (1 s), `byte_counting` (on),
//! `limited_transmit` (on), and the files application's `new_connection`
//! (false: the agents keep one socket per flow). Refused whenever set:
//! `initial_ssthresh`, `granularity`, `delack_timeout`, which Linux has no
//! per-connection setting for.

use phb::Time;

use super::model::TcpFlow;
use crate::apps::AppModel;

/// The IPv4 and TCP headers without options.
pub const BARE_HEADER: u32 = 40;
/// The timestamp option as Linux sends it on every segment (RFC 7323,
/// padded to 12 bytes).
pub const TIMESTAMP_OPTION: u32 = 12;
/// The MTU of the emulated hosts' devices.
pub const HOST_MTU: u32 = 1500;
/// The smallest `TCP_MAXSEG` Linux takes (`TCP_MIN_MSS`).
pub const MIN_MAXSEG: u32 = 88;
/// Linux's largest receive window, 65535 << 14 bytes (RFC 7323 §2.3).
pub const MAX_WINDOW_BYTES: u64 = 65_535 << 14;

/// Whether a TCP group's connections carry timestamps: its `header` holds
/// the option.
pub fn timestamps(tcp: &TcpFlow) -> bool {
    tcp.config.header == BARE_HEADER + TIMESTAMP_OPTION
}

/// The first key of a TCP group that Linux cannot honour, and why.
pub fn refused(tcp: &TcpFlow) -> Option<(&'static str, String)> {
    let c = &tcp.config;
    let set = |key: &str| tcp.explicit.contains(&key);
    if c.header != BARE_HEADER && c.header != BARE_HEADER + TIMESTAMP_OPTION {
        return Some((
            "header",
            format!(
                "Linux's TCP/IP header is {BARE_HEADER} B, or {} B with timestamps (net.ipv4.tcp_timestamps)",
                BARE_HEADER + TIMESTAMP_OPTION
            ),
        ));
    }
    if c.mss + c.header > HOST_MTU {
        return Some((
            "mss",
            format!("the emulated hosts' devices carry packets of at most {HOST_MTU} B (mss + header)"),
        ));
    }
    if c.mss + c.header - BARE_HEADER < MIN_MAXSEG {
        return Some(("mss", format!("Linux's smallest segment is {MIN_MAXSEG} B with its options (TCP_MAXSEG)")));
    }
    if u64::from(c.window) * u64::from(c.mss) > MAX_WINDOW_BYTES {
        return Some(("window", format!("Linux's largest window is {MAX_WINDOW_BYTES} B (window · mss)")));
    }
    if !c.min_rto.as_nanos().is_multiple_of(1_000_000) {
        return Some(("min_rto", "a route's rto_min counts whole milliseconds".into()));
    }
    let only = |key: &'static str, linux: bool, value: &str| {
        (set(key) && !linux)
            .then(|| (key, format!("Linux's TCP has no setting for it: only its own value, {value}, is accepted")))
    };
    let whenever = |key: &'static str, why: &str| set(key).then(|| (key, why.to_owned()));
    only("dupthresh", c.dupthresh == 3, "3")
        .or_else(|| only("max_rto", c.max_rto == Time::from_secs(120), "\"120s\""))
        .or_else(|| only("initial_rto", c.initial_rto == Time::from_secs(1), "\"1s\""))
        .or_else(|| only("byte_counting", c.byte_counting, "true"))
        .or_else(|| only("limited_transmit", c.limited_transmit, "true"))
        .or_else(|| {
            whenever(
                "initial_ssthresh",
                "Linux starts every connection with an unlimited ssthresh (a route's ssthresh reaches only later connections, through its metrics cache)",
            )
        })
        .or_else(|| {
            whenever("granularity", "Linux's RTO has no clock-granularity term (it floors RTTVAR at rto_min instead)")
        })
        .or_else(|| {
            let per_file = matches!(tcp.app, AppModel::Files { new_connection: true, .. });
            (set("new_connection") && per_file).then(|| {
                ("new_connection", "the emulator's agents keep one socket per flow; only false is accepted".to_owned())
            })
        })
        .or_else(|| {
            whenever(
                "delack_timeout",
                "Linux's delayed-ACK timer adapts between 40 ms and 200 ms by itself; only delayed_ack can be set",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::SizeDist;
    use crate::tcp::TcpConfig;

    /// The keys a group sets, how it sets them, the key refused, a part of why.
    type Case = (&'static [&'static str], fn(&mut TcpConfig), &'static str, &'static str);

    fn flow(explicit: &[&'static str], change: impl FnOnce(&mut TcpConfig)) -> TcpFlow {
        let mut config = TcpConfig::linux();
        change(&mut config);
        TcpFlow { config, app: AppModel::Bulk, trace: false, congestion: None, explicit: explicit.to_vec() }
    }

    #[test]
    fn the_linux_profile_as_it_is_is_honoured() {
        let linux = flow(&[], |_| {});
        assert_eq!(refused(&linux), None);
        assert!(timestamps(&linux));
        // Its values that differ from the kernel's are not the group's choice.
        assert!(!linux.config.limited_transmit);
    }

    #[test]
    fn honoured_keys_pass_and_the_others_are_refused_when_set() {
        let honoured = flow(&["initial_window", "min_rto", "mss", "window", "delayed_ack", "header"], |c| {
            (c.initial_window, c.min_rto, c.mss, c.window, c.delayed_ack, c.header) =
                (4, Time::from_millis(300), 1000, 20, false, 40);
        });
        assert_eq!(refused(&honoured), None);
        assert!(!timestamps(&honoured));
        let at_linux = flow(&["dupthresh", "max_rto", "initial_rto", "byte_counting", "limited_transmit"], |c| {
            c.limited_transmit = true;
        });
        assert_eq!(refused(&at_linux), None);
        let cases: [Case; 11] = [
            (&["dupthresh"], |c| c.dupthresh = 4, "dupthresh", "only its own value, 3"),
            (&["max_rto"], |c| c.max_rto = Time::from_secs(60), "max_rto", "\"120s\""),
            (&["initial_rto"], |c| c.initial_rto = Time::from_secs(3), "initial_rto", "\"1s\""),
            (&["byte_counting"], |c| c.byte_counting = false, "byte_counting", "true"),
            (&["limited_transmit"], |_| {}, "limited_transmit", "true"),
            (&["initial_ssthresh"], |c| c.initial_ssthresh = Some(8), "initial_ssthresh", "unlimited"),
            (&["granularity"], |_| {}, "granularity", "clock-granularity"),
            (&["delack_timeout"], |_| {}, "delack_timeout", "adapts"),
            (&["header"], |c| c.header = 48, "header", "40 B, or 52 B"),
            (&["mss"], |c| c.mss = 1460, "mss", "at most 1500 B"),
            (&["min_rto"], |c| c.min_rto = Time::from_micros(200_500), "min_rto", "whole milliseconds"),
        ];
        for (explicit, change, key, part) in cases {
            let (k, why) = refused(&flow(explicit, change)).unwrap_or_else(|| panic!("{key} passed"));
            assert_eq!(k, key);
            assert!(why.contains(part), "{key}: {why}");
        }
        assert_eq!(refused(&flow(&["mss"], |c| (c.mss, c.header) = (40, 40))).map(|r| r.0), Some("mss"));
        assert_eq!(refused(&flow(&["mss"], |c| c.mss = 76)), None);
        assert_eq!(refused(&flow(&["window"], |c| c.window = 1 << 20)).map(|r| r.0), Some("window"));
    }

    #[test]
    fn a_new_connection_per_file_is_refused_and_one_per_flow_passes() {
        let files = |new_connection| TcpFlow {
            app: AppModel::Files { size: SizeDist::Fixed(10_000), think: None, new_connection },
            ..flow(&["new_connection"], |_| {})
        };
        let (key, why) = refused(&files(true)).expect("refused");
        assert_eq!(key, "new_connection");
        assert!(why.contains("one socket per flow"), "{why}");
        assert_eq!(refused(&files(false)), None);
    }
}
