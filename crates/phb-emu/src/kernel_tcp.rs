//! How the scenario's TCP keys are asked of the kernel (the keys it cannot
//! honour were refused by `phb_sim::scenario::linux_tcp` before anything
//! was created; `docs/emulation.md`, "TCP keys"):
//!
//! | key | where | how |
//! |---|---|---|
//! | `variant` | both hosts' namespaces | `net.ipv4.tcp_sack` (`sack`: 1, `newreno`: 0) |
//! | `header` | both hosts' namespaces | `net.ipv4.tcp_timestamps` (52 B: 1, 40 B: 0) |
//! | `ecn` | the sending host's namespace | `net.ipv4.tcp_ecn` (1, or Linux's 2) |
//! | `slow_start_restart` | the sending host's namespace | `net.ipv4.tcp_slow_start_after_idle` |
//! | `initial_window` | the sending host's route to the destination | `initcwnd` |
//! | `min_rto` | the sending host's route to the destination | `rto_min`, locked (Linux reads it only then) |
//! | `delayed_ack` | the receiving host's route to the sender | `quickack 1` when off |
//! | `mss` | the sender's socket | `TCP_MAXSEG`, `mss` plus the timestamp option: Linux takes the option out of the segment |
//! | `window` | the receiver's socket (and its listener when every flow to the host has the same) | `TCP_WINDOW_CLAMP` of `window · mss` bytes, on a receive buffer fixed large enough (`SO_RCVBUFFORCE`) so that autotuning does not lift the clamp |
//! | `congestion` | the sender's socket | `TCP_CONGESTION` |
//!
//! Route attributes apply per pair of hosts: each host gets a /32 route to
//! every other host it has TCP flows with (the validator refused two
//! groups asking different values of one pair); sysctls are per namespace.
//! All of it lives in the namespaces the emulator creates and goes with
//! them.

use std::collections::BTreeMap;

use phb::Time;
use phb_sim::scenario::{linux_tcp, Scenario, Transport};
use phb_sim::tcp::TcpConfig;

/// Route metrics (`RTAX_*`, linux/rtnetlink.h): the lock mask, and the
/// attributes set here.
pub const RTAX_LOCK: u16 = 1;
pub const RTAX_INITCWND: u16 = 11;
pub const RTAX_RTO_MIN: u16 = 13;
pub const RTAX_QUICKACK: u16 = 15;

/// The attributes of host `host`'s route to host `peer`: its senders'
/// initial window and minimum RTO towards `peer`, and whether its
/// receivers of `peer`'s flows acknowledge every segment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerRoute {
    pub host: usize,
    pub peer: usize,
    pub initcwnd: Option<u32>,
    pub rto_min: Option<Time>,
    pub quickack: bool,
}

impl PeerRoute {
    /// The route's metrics as `(RTAX_*, value)`: `rto_min` in
    /// milliseconds and locked, as `ip route ... rto_min lock` sets it.
    pub fn metrics(&self) -> Vec<(u16, u32)> {
        let mut metrics = Vec::new();
        if let Some(rto_min) = self.rto_min {
            metrics.push((RTAX_LOCK, 1 << RTAX_RTO_MIN));
            metrics.push((RTAX_RTO_MIN, u32::try_from(rto_min.as_nanos() / 1_000_000).unwrap_or(u32::MAX)));
        }
        if let Some(initcwnd) = self.initcwnd {
            metrics.push((RTAX_INITCWND, initcwnd));
        }
        if self.quickack {
            metrics.push((RTAX_QUICKACK, 1));
        }
        metrics
    }
}

/// Per host namespace: what its sysctls say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostSysctls {
    /// `net.ipv4.tcp_sack`: SACK unless a TCP group there asks for NewReno.
    pub sack: bool,
    /// `net.ipv4.tcp_ecn = 1` (a TCP group with `ecn = true` sends from
    /// it), else 2, Linux's default, which accepts ECN when the peer asks
    /// but never asks, as the simulator's `ecn = false`.
    pub ecn: bool,
    /// `net.ipv4.tcp_timestamps`: on unless a TCP group there has a 40-byte header.
    pub timestamps: bool,
    /// `net.ipv4.tcp_slow_start_after_idle`: the sending groups'
    /// `slow_start_restart` (off when none sends from it).
    pub slow_start_after_idle: bool,
}

impl HostSysctls {
    /// `(path under /proc/sys, value)` of each.
    pub fn settings(&self) -> [(&'static str, &'static str); 4] {
        let flag = |on: bool| if on { "1" } else { "0" };
        [
            ("net/ipv4/tcp_sack", flag(self.sack)),
            ("net/ipv4/tcp_ecn", if self.ecn { "1" } else { "2" }),
            ("net/ipv4/tcp_timestamps", flag(self.timestamps)),
            ("net/ipv4/tcp_slow_start_after_idle", flag(self.slow_start_after_idle)),
        ]
    }
}

/// What the kernel is asked for in every host namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Per node (the routers' entries unused).
    pub sysctls: Vec<HostSysctls>,
    /// One per pair of hosts with TCP flows between them, each direction.
    pub routes: Vec<PeerRoute>,
}

/// The kernel settings of `scenario` (validated for the emulator: the
/// groups sharing a namespace or a route agree).
pub fn settings(scenario: &Scenario) -> Kernel {
    let default = HostSysctls { sack: true, ecn: false, timestamps: true, slow_start_after_idle: false };
    let mut sysctls = vec![default; scenario.nodes.len()];
    let mut routes: BTreeMap<(usize, usize), PeerRoute> = BTreeMap::new();
    for group in &scenario.groups {
        let Transport::Tcp(tcp) = &group.transport else { continue };
        let (src, dst, c) = (group.src, group.dst, &tcp.config);
        for host in [src, dst] {
            sysctls[host].sack &= c.variant != phb_sim::tcp::Variant::NewReno;
            sysctls[host].timestamps &= linux_tcp::timestamps(tcp);
        }
        sysctls[src].ecn |= c.ecn;
        sysctls[src].slow_start_after_idle |= c.slow_start_restart;
        let out =
            routes.entry((src, dst)).or_insert_with(|| PeerRoute { host: src, peer: dst, ..PeerRoute::default() });
        (out.initcwnd, out.rto_min) = (Some(c.initial_window), Some(c.min_rto));
        let back =
            routes.entry((dst, src)).or_insert_with(|| PeerRoute { host: dst, peer: src, ..PeerRoute::default() });
        back.quickack |= !c.delayed_ack;
    }
    Kernel { sysctls, routes: routes.into_values().collect() }
}

/// `TCP_MAXSEG` for a group's sender: Linux subtracts the options every
/// segment carries (the timestamp) from it, so the segments carry `mss`.
pub fn maxseg(config: &TcpConfig) -> u32 {
    config.mss + config.header - linux_tcp::BARE_HEADER
}

/// `TCP_NOTSENT_LOWAT` for a phased application's sender: at most this
/// much written data waits unsent in the socket (a write is refused above
/// it, and `poll` reports the socket writable below half of it), so when
/// a greedy phase ends what the sender cannot withdraw, as the simulator's
/// application does ([`phb_sim::apps`]), is at most this plus one segment.
/// Four segments: enough that the sender never waits for the application
/// (woken by `poll` when two are left, it refills long before they leave).
pub fn notsent_lowat(config: &TcpConfig) -> u32 {
    4 * config.mss
}

/// `TCP_WINDOW_CLAMP` for a group's receiver: its window in bytes.
pub fn window_clamp(config: &TcpConfig) -> u32 {
    config.window.saturating_mul(config.mss)
}

/// `SO_RCVBUFFORCE` for a group's receiver: four windows of whole packets
/// (the kernel doubles it and counts each packet's buffer overhead in it),
/// so the buffer never limits the window below the clamp.
pub fn receive_buffer(config: &TcpConfig) -> u32 {
    let packets = u64::from(config.window) * u64::from(config.mss + config.header);
    u32::try_from(4 * packets).unwrap_or(u32::MAX).min(i32::MAX as u32 / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(x: &str, y: &str) -> Scenario {
        let text = format!(
            "[run]\nduration = \"1s\"\n[classes]\nbe = 0\n[nodes]\nhosts = [\"a\", \"b\", \"c\"]\nrouters = [\"r\"]\n\
             [[links]]\nbetween = [\"a\", \"r\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
             [[links]]\nbetween = [\"b\", \"r\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
             [[links]]\nbetween = [\"c\", \"r\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
             [[traffic]]\nname = \"x\"\nkind = \"tcp\"\nfrom = \"a\"\nto = \"b\"\nclass = \"be\"\nprofile = \"linux\"\n{x}\n\
             [[traffic]]\nname = \"y\"\nkind = \"tcp\"\nfrom = \"c\"\nto = \"a\"\nclass = \"be\"\nprofile = \"linux\"\n{y}\n"
        );
        phb_sim::load_for(&text, "t", &[], phb_sim::Backend::Emulate).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The keys go to the routes of the pair they belong to: the sender's
    /// for the initial window and minimum RTO, the receiver's for quick
    /// ACKs; Linux's own values (`linux` profile) are set too.
    #[test]
    fn keys_become_route_attributes_of_their_pair() {
        let kernel = settings(&scenario("initial_window = 4\nmin_rto = \"300ms\"\ndelayed_ack = false", ""));
        let (a, b, c) = (0, 1, 2);
        let route = |host, peer| kernel.routes.iter().find(|r| (r.host, r.peer) == (host, peer)).cloned();
        let ms = Time::from_millis;
        assert_eq!(kernel.routes.len(), 4);
        assert_eq!(
            route(a, b),
            Some(PeerRoute { host: a, peer: b, initcwnd: Some(4), rto_min: Some(ms(300)), quickack: false })
        );
        assert_eq!(route(b, a), Some(PeerRoute { host: b, peer: a, initcwnd: None, rto_min: None, quickack: true }));
        assert_eq!(route(c, a).and_then(|r| r.initcwnd), Some(10));
        assert_eq!(route(a, c).map(|r| r.quickack), Some(false));
        assert_eq!(route(b, c), None);
        assert_eq!(
            route(a, b).unwrap().metrics(),
            [(RTAX_LOCK, 1 << RTAX_RTO_MIN), (RTAX_RTO_MIN, 300), (RTAX_INITCWND, 4)]
        );
        assert_eq!(route(b, a).unwrap().metrics(), [(RTAX_QUICKACK, 1)]);
    }

    #[test]
    fn sysctls_follow_the_groups_at_each_host() {
        let both = "variant = \"newreno\"\nheader = \"40B\"";
        let kernel = settings(&scenario(&format!("{both}\necn = true\nslow_start_restart = true"), both));
        let (a, b, c) = (kernel.sysctls[0], kernel.sysctls[1], kernel.sysctls[2]);
        assert_eq!(a, HostSysctls { sack: false, ecn: true, timestamps: false, slow_start_after_idle: true });
        assert_eq!(b, HostSysctls { sack: false, ecn: false, timestamps: false, slow_start_after_idle: false });
        assert_eq!(c, HostSysctls { sack: false, ecn: false, timestamps: false, slow_start_after_idle: false });
        assert_eq!(
            a.settings(),
            [
                ("net/ipv4/tcp_sack", "0"),
                ("net/ipv4/tcp_ecn", "1"),
                ("net/ipv4/tcp_timestamps", "0"),
                ("net/ipv4/tcp_slow_start_after_idle", "1")
            ]
        );
    }

    #[test]
    fn socket_options_carry_the_segment_and_the_window() {
        let mut config = TcpConfig::linux();
        assert_eq!(maxseg(&config), 1460);
        (config.mss, config.header, config.window) = (1000, 40, 20);
        assert_eq!((maxseg(&config), window_clamp(&config)), (1000, 20_000));
        assert_eq!(receive_buffer(&config), 4 * 20 * 1040);
        config.window = u32::MAX;
        assert_eq!(receive_buffer(&config), i32::MAX as u32 / 2);
    }
}
