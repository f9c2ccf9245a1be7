//! The few Linux calls the emulator makes, each wrapped once: the monotonic
//! clock, network namespaces, TUN devices, their addresses and routes,
//! sysctls of the current namespace, waiting on file descriptors, signals.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use phb::Time;

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// The monotonic clock, shared by every namespace of the machine.
pub fn monotonic() -> Time {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    Time::from_nanos(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

fn timespec(t: Time) -> libc::timespec {
    let ns = t.as_nanos();
    libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long }
}

/// CPU time this process (not its children) has used, user and system.
pub fn cpu_time() -> Time {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid rusage to write.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    Time::from_nanos(ns(usage.ru_utime) + ns(usage.ru_stime))
}

/// Sleeps until the monotonic clock reads `t`.
pub fn sleep_until(t: Time) {
    let ts = timespec(t);
    // SAFETY: `ts` is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
    while unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) }
        == libc::EINTR
    {}
}

/// Asks for timer wake-ups within 1 µs of the time asked (the default
/// slack is 50 µs).
pub fn tight_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
}

/// The network namespace of the calling thread.
pub fn current_netns() -> io::Result<File> {
    File::open("/proc/thread-self/ns/net")
}

/// Moves the calling thread into a new, anonymous network namespace and
/// returns a handle on it: it lives while a handle or a process in it does.
pub fn new_netns() -> io::Result<File> {
    // SAFETY: unshare takes flags only.
    check(unsafe { libc::unshare(libc::CLONE_NEWNET) })?;
    current_netns()
}

/// Moves the calling thread into namespace `ns`.
pub fn enter_netns(ns: RawFd) -> io::Result<()> {
    // SAFETY: setns takes a descriptor and flags.
    check(unsafe { libc::setns(ns, libc::CLONE_NEWNET) }).map(drop)
}

/// Writes a sysctl of the current namespace (`net/ipv4/tcp_sack`).
pub fn sysctl(path: &str, value: &str) -> io::Result<()> {
    std::fs::write(format!("/proc/sys/{path}"), value)
}

fn ifreq(name: &str) -> libc::ifreq {
    // SAFETY: ifreq is plain data; all zeroes is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(name.bytes().take(libc::IFNAMSIZ - 1)) {
        *dst = src as libc::c_char;
    }
    req
}

/// Opens a new TUN device `name` in the current namespace (raw IP packets,
/// no packet-information header, non-blocking). It disappears when the
/// descriptor is closed.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    let path = CString::new("/dev/net/tun").expect("no NUL");
    // SAFETY: a valid C string and flags.
    let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) })?;
    // SAFETY: `fd` was just opened and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = ifreq(name);
    req.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF reads an ifreq.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF as _, &req) })?;
    Ok(fd)
}

fn sockaddr(addr: [u8; 4]) -> libc::sockaddr {
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(addr) },
        sin_zero: [0; 8],
    };
    // SAFETY: sockaddr_in and sockaddr have the same size; this is how the ioctls take it.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(sin) }
}

/// Gives interface `name` of the current namespace an IPv4 address (with
/// its prefix's route, if `addr` is given), an MTU and brings it up.
pub fn configure_interface(name: &str, addr: Option<([u8; 4], u8)>, mtu: i32) -> io::Result<()> {
    // SAFETY: plain socket creation.
    let sock = check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: just created, owned here.
    let sock = unsafe { OwnedFd::from_raw_fd(sock) };
    let ioctl = |request: libc::c_ulong, req: &mut libc::ifreq| {
        // SAFETY: each request below reads or writes an ifreq.
        check(unsafe { libc::ioctl(sock.as_raw_fd(), request as _, req as *mut libc::ifreq) }).map(drop)
    };
    if let Some((ip, prefix)) = addr {
        let mut req = ifreq(name);
        req.ifr_ifru.ifru_addr = sockaddr(ip);
        ioctl(libc::SIOCSIFADDR, &mut req)?;
        let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - u32::from(prefix)) };
        req.ifr_ifru.ifru_netmask = sockaddr(mask.to_be_bytes());
        ioctl(libc::SIOCSIFNETMASK, &mut req)?;
    }
    let mut req = ifreq(name);
    req.ifr_ifru.ifru_mtu = mtu;
    ioctl(libc::SIOCSIFMTU, &mut req)?;
    let mut req = ifreq(name);
    ioctl(libc::SIOCGIFFLAGS, &mut req)?;
    // SAFETY: SIOCGIFFLAGS filled ifru_flags.
    unsafe { req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short };
    ioctl(libc::SIOCSIFFLAGS, &mut req)
}

/// A route netlink attribute: its header (length, type) and `payload`,
/// padded to 4 bytes.
fn route_attribute(kind: u16, payload: &[u8]) -> Vec<u8> {
    let len = 4 + payload.len();
    let mut attr = Vec::with_capacity(len.next_multiple_of(4));
    attr.extend_from_slice(&(len as u16).to_ne_bytes());
    attr.extend_from_slice(&kind.to_ne_bytes());
    attr.extend_from_slice(payload);
    attr.resize(len.next_multiple_of(4), 0);
    attr
}

/// The `RTM_NEWROUTE` request for a route to the host `dst` (/32) through
/// interface `ifindex` with `metrics` (`RTAX_*`, value), as `ip route add
/// DST/32 dev DEV METRICS...` sends it (rtnetlink(7)).
fn new_route_message(ifindex: u32, dst: [u8; 4], metrics: &[(u16, u32)]) -> Vec<u8> {
    let mut body = vec![libc::AF_INET as u8, 32, 0, 0, libc::RT_TABLE_MAIN, libc::RTPROT_STATIC, libc::RT_SCOPE_LINK];
    body.push(libc::RTN_UNICAST);
    body.extend_from_slice(&0u32.to_ne_bytes()); // rtm_flags
    body.extend(route_attribute(libc::RTA_DST, &dst));
    body.extend(route_attribute(libc::RTA_OIF, &ifindex.to_ne_bytes()));
    let nested: Vec<u8> =
        metrics.iter().flat_map(|&(kind, value)| route_attribute(kind, &value.to_ne_bytes())).collect();
    body.extend(route_attribute(libc::RTA_METRICS, &nested));
    let flags = libc::NLM_F_REQUEST | libc::NLM_F_ACK | libc::NLM_F_CREATE | libc::NLM_F_EXCL;
    let mut message = Vec::with_capacity(16 + body.len());
    message.extend_from_slice(&(16 + body.len() as u32).to_ne_bytes());
    message.extend_from_slice(&libc::RTM_NEWROUTE.to_ne_bytes());
    message.extend_from_slice(&(flags as u16).to_ne_bytes());
    message.extend_from_slice(&1u32.to_ne_bytes()); // sequence number
    message.extend_from_slice(&0u32.to_ne_bytes()); // to the kernel
    message.extend(body);
    message
}

/// Adds a route to host `dst` (/32) through interface `name` with route
/// `metrics` (`RTAX_*`, value) in the current namespace, over route
/// netlink (the interface ioctls cannot set these attributes).
pub fn add_route(name: &str, dst: [u8; 4], metrics: &[(u16, u32)]) -> io::Result<()> {
    let c_name = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a valid C string.
    let ifindex = unsafe { libc::if_nametoindex(c_name.as_ptr()) };
    if ifindex == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: plain socket creation.
    let sock =
        check(unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_ROUTE) })?;
    // SAFETY: just created, owned here.
    let sock = unsafe { OwnedFd::from_raw_fd(sock) };
    let message = new_route_message(ifindex, dst, metrics);
    // SAFETY: `message` is readable for its length; the socket is netlink,
    // whose default destination is the kernel.
    let sent = unsafe { libc::send(sock.as_raw_fd(), message.as_ptr().cast(), message.len(), 0) };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut reply = [0u8; 512];
    // SAFETY: `reply` is writable for its length.
    let got = unsafe { libc::recv(sock.as_raw_fd(), reply.as_mut_ptr().cast(), reply.len(), 0) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    // An acknowledgement: NLMSG_ERROR, its error 0 or a negative errno.
    let kind = u16::from_ne_bytes([reply[4], reply[5]]);
    let error = i32::from_ne_bytes(reply[16..20].try_into().expect("4 bytes"));
    match (got >= 20, kind == libc::NLMSG_ERROR as u16, error) {
        (true, true, 0) => Ok(()),
        (true, true, e) => Err(io::Error::from_raw_os_error(-e)),
        _ => Err(io::Error::new(io::ErrorKind::InvalidData, "unexpected route netlink reply")),
    }
}

/// What the process lacks to create namespaces and TUN devices, if anything.
pub fn missing_privileges() -> Option<String> {
    const CAP_NET_ADMIN: u32 = 12;
    const CAP_SYS_ADMIN: u32 = 21;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let effective = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .unwrap_or(0);
    let mut missing: Vec<&str> = [(CAP_NET_ADMIN, "CAP_NET_ADMIN"), (CAP_SYS_ADMIN, "CAP_SYS_ADMIN")]
        .iter()
        .filter(|(bit, _)| effective & (1 << bit) == 0)
        .map(|&(_, name)| name)
        .collect();
    let tun = std::fs::OpenOptions::new().read(true).write(true).open("/dev/net/tun");
    if tun.is_err() {
        missing.push("read-write access to /dev/net/tun");
    }
    (!missing.is_empty())
        .then(|| format!("emulation needs {} (run as root, or with those capabilities)", missing.join(" and ")))
}

/// Waits until one of `fds` is readable or the clock reaches `deadline`
/// (`None`: no deadline), whichever comes first; a signal ends the wait too.
///
/// Within `spin` of the deadline it does not sleep but polls the devices
/// without blocking until the deadline: the wake-up latency of a sleep
/// (tens of microseconds, more on a busy machine) is traded for a core's
/// time. Further away it sleeps until `spin` before the deadline, so the
/// caller's next wait spins.
pub fn wait(fds: &mut [libc::pollfd], deadline: Option<Time>, spin: Time) {
    let poll = |fds: &mut [libc::pollfd], timeout: Option<libc::timespec>| {
        let ptr = timeout.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `fds` is a valid array of pollfd; `ptr` is null or a valid timespec.
        unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ptr, std::ptr::null()) }
    };
    let Some(deadline) = deadline else {
        poll(fds, None);
        return;
    };
    let now = monotonic();
    if deadline.saturating_sub(now) > spin {
        poll(fds, Some(timespec(deadline.saturating_sub(now) - spin)));
        return;
    }
    while poll(fds, Some(timespec(Time::ZERO))) == 0 && monotonic() < deadline && !stop_requested() {}
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Makes SIGINT and SIGTERM set a flag ([`stop_requested`]) instead of
/// killing the process, so that the run ends through its normal clean-up.
pub fn catch_stop_signals() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic.
        unsafe { libc::signal(signal, on_signal as *const () as libc::sighandler_t) };
    }
}

/// Whether SIGINT or SIGTERM arrived.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Asks the kernel for `signal` when the parent (the thread that started
/// this process) dies, then checks that the parent is still `parent`: had
/// it died before the request, the signal would never come (the process
/// would have been adopted already), so that is an error.
pub fn die_with_parent(signal: libc::c_int, parent: u32) -> io::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number.
    check(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong) })?;
    // SAFETY: getppid has no arguments and cannot fail.
    if unsafe { libc::getppid() } as u32 != parent {
        return Err(io::Error::other("the process that started it has ended"));
    }
    Ok(())
}

static CHILD_ENDED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_child(_: libc::c_int) {
    CHILD_ENDED.store(true, Ordering::Relaxed);
}

/// Makes SIGCHLD set a flag ([`child_ended`]) and interrupt waits, so the
/// router learns at once that an agent ended.
pub fn catch_child_exits() {
    // SAFETY: the handler only stores to an atomic.
    unsafe { libc::signal(libc::SIGCHLD, on_child as *const () as libc::sighandler_t) };
}

/// Whether a child process ended (SIGCHLD arrived).
pub fn child_ended() -> bool {
    CHILD_ENDED.load(Ordering::Relaxed)
}

/// Forgets that a child ended (after finding it was one that may end).
pub fn forget_child_ended() {
    CHILD_ENDED.store(false, Ordering::Relaxed);
}

/// Sends `signal` to the process group led by `pid`.
pub fn signal_group(pid: u32, signal: libc::c_int) {
    // SAFETY: kill takes a process group id (negated) and a signal.
    unsafe { libc::kill(-(pid as libc::pid_t), signal) };
}

/// Makes the process group of `pid` the foreground group of the terminal
/// on standard input, if it is one (SIGTTOU ignored meanwhile: a process in
/// a background group may take the terminal back).
pub fn give_terminal(pid: u32) {
    // SAFETY: isatty, getpgid, signal and tcsetpgrp take plain values.
    unsafe {
        if libc::isatty(0) != 1 {
            return;
        }
        let group = libc::getpgid(pid as libc::pid_t);
        let before = libc::signal(libc::SIGTTOU, libc::SIG_IGN);
        libc::tcsetpgrp(0, group);
        libc::signal(libc::SIGTTOU, before);
    }
}

/// The environment variable that marks every process of an emulation with
/// its owner (`PID:START`, the process that started the router and its
/// start time in clock ticks since boot), so that `phblab emulate
/// --cleanup` can find the processes of a run whose owner is gone.
pub const OWNER_VARIABLE: &str = "PHBLAB_EMULATION";

/// Process `pid`'s start time in clock ticks since boot (field 22 of
/// `/proc/PID/stat`), which tells a process from a later one given its pid.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()
}

/// This emulation's owner as [`OWNER_VARIABLE`] says (`PID:START`): the
/// variable's value if `phblab emulate` set it, else this process.
pub fn owner() -> (u32, String) {
    let own = || {
        let pid = std::process::id();
        (pid, format!("{pid}:{}", start_time(pid).unwrap_or(0)))
    };
    match std::env::var(OWNER_VARIABLE) {
        Ok(value) => match value.split_once(':').and_then(|(pid, _)| pid.parse().ok()) {
            Some(pid) => (pid, value),
            None => own(),
        },
        Err(_) => own(),
    }
}

/// Creates file `path` for writing: a new file (`O_EXCL`), never through a
/// symbolic link (`O_NOFOLLOW`), so results go only into the fresh
/// directory `phblab emulate` gives.
pub fn create_new_file(path: &std::path::Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Creates file `path` ([`create_new_file`]) and writes `data` into it.
pub fn write_new_file(path: &std::path::Path, data: &[u8]) -> io::Result<()> {
    use std::io::Write;
    create_new_file(path)?.write_all(data)
}

/// Whether child `pid` has ended, without reaping it (`waitid` with
/// `WNOWAIT`).
pub fn has_ended(pid: u32) -> bool {
    // SAFETY: waitid writes into the zeroed siginfo it is given.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let found = libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT);
        found == 0 && info.si_pid() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request `ip route add 10.77.0.2/32 dev D initcwnd 4` sends,
    /// field by field.
    #[test]
    fn a_route_request_holds_the_destination_the_device_and_the_metrics() {
        let m = new_route_message(7, [10, 77, 0, 2], &[(11, 4)]);
        let u16_at = |at: usize| u16::from_ne_bytes([m[at], m[at + 1]]);
        let u32_at = |at: usize| u32::from_ne_bytes(m[at..at + 4].try_into().unwrap());
        assert_eq!((m.len(), u32_at(0) as usize), (56, 56));
        assert_eq!(u16_at(4), libc::RTM_NEWROUTE);
        assert_eq!(&m[16..24], &[2, 32, 0, 0, 254, 4, 253, 1]);
        assert_eq!((u16_at(28), u16_at(30), &m[32..36]), (8, libc::RTA_DST, &[10u8, 77, 0, 2][..]));
        assert_eq!((u16_at(36), u16_at(38), u32_at(40)), (8, libc::RTA_OIF, 7));
        assert_eq!((u16_at(44), u16_at(46)), (12, libc::RTA_METRICS));
        assert_eq!((u16_at(48), u16_at(50), u32_at(52)), (8, 11, 4));
        let padded = route_attribute(1, &[1, 2, 3]);
        assert_eq!(
            (padded.len(), u16::from_ne_bytes([padded[0], padded[1]]), &padded[4..]),
            (8, 7, &[1u8, 2, 3, 0][..])
        );
    }
}
