//! The traffic agents: one process per host namespace (this binary's
//! `agent` command), sending the flows that start at the host and sinking
//! those that end there, on the kernel's own TCP and UDP.
//!
//! Written in Rust, in the router's binary: no interpreter to start in
//! every namespace, sleeps to the nanosecond with `clock_nanosleep` on the
//! monotonic clock, socket options (`TCP_CONGESTION`, `TCP_MAXSEG`,
//! `IP_TOS`) set directly, and the UDP sources are the simulator's own
//! ([`phb_sim::traffic::Source`], same random streams per flow), so an
//! emulated flow's packet times are the simulated flow's.
//!
//! - A TCP flow connects from port `BASE_PORT + f` to the destination's
//!   [`SINK_PORT`] at its start time with the chosen congestion control and
//!   the scenario's MSS ([`kernel_tcp`]), reads what the kernel set up for
//!   it ([`tcp_info::opening`]), then, until its stop time, writes without end
//!   (bulk) or runs the simulator's own files or phases application
//!   ([`phb_sim::apps::App`], same random stream per flow: the same file
//!   sizes and think times) on the real socket ([`tcp_app`]).
//! - The UDP flows of a host share one thread that sleeps until the next
//!   flow's next packet is due.
//! - A sampling thread reads `TCP_INFO` of the host's TCP senders on a
//!   grid, collects the transfers they complete, and writes both into the
//!   output directory at the end ([`crate::tcp_info`]).
//! - The sinks read and discard; an accepted TCP connection takes its
//!   flow's codepoint, so the ACKs carry the class as in the simulator,
//!   and its window ([`kernel_tcp::window_clamp`]).
//!
//! The agents run until the router kills them (they also die with it).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use phb::{Rng, Time};
use phb_sim::apps::{Action, App, AppModel};
use phb_sim::scenario::{Scenario, Transport};
use phb_sim::traffic::Source;

use crate::kernel_tcp;
use crate::plan::{host_addr, FlowPlan, Plan, BASE_PORT, SINK_PORT};
use crate::sys;
use crate::tcp_info::{self, Report};

/// IPv4 and UDP headers: a UDP packet's size less its payload.
pub use phb_sim::scenario::backend::UDP_HEADERS;
/// Connection attempts 50 ms apart before a TCP flow gives up (its sink
/// starts at the same time in another namespace).
const CONNECT_ATTEMPTS: u32 = 20;

fn setsockopt(fd: RawFd, level: libc::c_int, name: libc::c_int, value: &[u8]) -> Result<(), String> {
    // SAFETY: `value` is a valid buffer of its length.
    let ret = unsafe { libc::setsockopt(fd, level, name, value.as_ptr().cast(), value.len() as libc::socklen_t) };
    if ret < 0 {
        return Err(format!("setsockopt({level}, {name}): {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

fn set_int(fd: RawFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> Result<(), String> {
    setsockopt(fd, level, name, &value.to_ne_bytes())
}

fn sockaddr(addr: [u8; 4], port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(addr) },
        sin_zero: [0; 8],
    }
}

/// Connects flow `f`'s TCP socket with its options set before the handshake
/// (`maxseg`: [`kernel_tcp::maxseg`]; `notsent_lowat`: [`kernel_tcp::notsent_lowat`], for a phased sender).
fn tcp_connect(
    f: usize,
    flow: &FlowPlan,
    codepoint: u8,
    maxseg: u32,
    congestion: &str,
    notsent_lowat: Option<u32>,
) -> Result<TcpStream, String> {
    let mut attempts = 0;
    loop {
        // SAFETY: plain socket creation.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(format!("socket: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: just created, owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = fd.as_raw_fd();
        set_int(raw, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
        setsockopt(raw, libc::IPPROTO_TCP, libc::TCP_CONGESTION, congestion.as_bytes())?;
        set_int(raw, libc::IPPROTO_TCP, libc::TCP_MAXSEG, maxseg as libc::c_int)?;
        set_int(raw, libc::IPPROTO_IP, libc::IP_TOS, libc::c_int::from(codepoint) << 2)?;
        if let Some(lowat) = notsent_lowat {
            set_int(raw, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, lowat as libc::c_int)?;
        }
        let local = sockaddr(host_addr(flow.src), BASE_PORT + f as u16);
        let remote = sockaddr(host_addr(flow.dst), SINK_PORT);
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        // SAFETY: valid sockaddr_in values of `len` bytes.
        if unsafe { libc::bind(raw, (&local as *const libc::sockaddr_in).cast(), len) } < 0 {
            return Err(format!("bind: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: as above.
        if unsafe { libc::connect(raw, (&remote as *const libc::sockaddr_in).cast(), len) } == 0 {
            return Ok(TcpStream::from(fd));
        }
        let error = std::io::Error::last_os_error();
        attempts += 1;
        if attempts > CONNECT_ATTEMPTS {
            return Err(format!("connect: {error}"));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// A bulk TCP sender: writes until the monotonic clock reaches `stop`.
fn tcp_bulk(mut stream: TcpStream, stop: Time) {
    let data = vec![0u8; 1 << 16];
    let _ = stream.set_write_timeout(Some(Duration::from_millis(50)));
    while sys::monotonic() < stop {
        if let Err(e) = stream.write(&data) {
            if !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) {
                return;
            }
        }
    }
}

/// How often an application looks at what its socket has had
/// acknowledged: a transfer's end is known to within this.
const FILES_POLL: Time = Time::from_millis(1);

/// A files or phases application on a connected socket, from the run's
/// time now until `stop` (monotonic): the simulator's [`App`] decides what
/// to hand to the kernel and when; it is told of acknowledgements
/// (`TCP_INFO`'s count of acknowledged bytes) and its wake-ups within
/// [`FILES_POLL`], or at once when the socket takes more data. Completed
/// transfers go to the sampling thread.
///
/// A socket cannot take back data written into it, so when a phase asks to
/// withdraw the unsent data (the end of a greedy phase) only what was not
/// yet written is dropped: a phased sender keeps at most
/// [`kernel_tcp::notsent_lowat`] bytes unsent in its socket, and those
/// still leave. The application's byte count is what was written to the
/// socket, so a chunk after them ends where the kernel's sequence does.
fn tcp_app(stream: TcpStream, f: usize, mut app: App, epoch: Time, stop: Time, reports: &mpsc::Sender<Report>) {
    if stream.set_nonblocking(true).is_err() {
        return;
    }
    let mut stream = stream;
    let data = vec![0u8; 1 << 16];
    let run_time = || sys::monotonic().saturating_sub(epoch);
    let (mut pending, mut written, mut wake, mut acked, mut reported) = (0u64, 0u64, None, 0u64, 0usize);
    let apply = |action: Action, pending: &mut u64, wake: &mut Option<Time>| {
        if action.withdraw {
            *pending = 0;
        }
        *pending = pending.saturating_add(action.push);
        if action.wake.is_some() {
            *wake = action.wake;
        }
    };
    apply(app.start(run_time()), &mut pending, &mut wake);
    while sys::monotonic() < stop {
        while pending > 0 {
            match stream.write(&data[..pending.min(data.len() as u64) as usize]) {
                Ok(n) => {
                    pending -= n as u64;
                    written += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => return,
            }
        }
        if let Some(now_acked) = tcp_info::bytes_acked(&stream).filter(|&a| a > acked) {
            acked = now_acked;
            apply(app.on_acked(acked, run_time()), &mut pending, &mut wake);
        }
        if wake.is_some_and(|at| run_time() >= at) {
            wake = None;
            apply(app.on_wake(run_time(), written), &mut pending, &mut wake);
        }
        for transfer in &app.transfers[reported..] {
            let _ = reports.send(Report::Transfer(f, *transfer));
        }
        reported = app.transfers.len();
        let events = if pending > 0 { libc::POLLOUT } else { 0 };
        let mut fds = [libc::pollfd { fd: stream.as_raw_fd(), events, revents: 0 }];
        sys::wait(&mut fds, Some(sys::monotonic() + FILES_POLL), Time::ZERO);
    }
}

/// One UDP flow of the host's sending thread.
struct UdpFlow {
    socket: UdpSocket,
    source: Source,
    payload: usize,
    next: Time,
    stop: Time,
}

fn udp_sender(mut flows: Vec<UdpFlow>) {
    let data = vec![0u8; 1 << 16];
    loop {
        let Some(i) = (0..flows.len()).filter(|&i| flows[i].next < flows[i].stop).min_by_key(|&i| flows[i].next) else {
            return;
        };
        if sys::monotonic() < flows[i].next {
            sys::sleep_until(flows[i].next);
        }
        let flow = &mut flows[i];
        let _ = flow.socket.send(&data[..flow.payload]);
        flow.next += flow.source.next_gap();
    }
}

fn drain_udp(socket: UdpSocket) {
    let mut buf = vec![0u8; 1 << 16];
    while socket.recv(&mut buf).is_ok() {}
}

/// What a TCP sink sets on the socket of a flow it receives: the flow's
/// codepoint (`IP_TOS`, for its ACKs) and its window ([`kernel_tcp::window_clamp`]
/// on a buffer of [`kernel_tcp::receive_buffer`]).
#[derive(Clone, Copy, PartialEq, Eq)]
struct SinkFlow {
    codepoint: u8,
    window_clamp: u32,
    receive_buffer: u32,
}

/// Sets a flow's window on `fd`: the buffer first (which also turns
/// receive autotuning off, so it cannot lift the clamp), then the clamp.
fn set_window(fd: RawFd, sink: &SinkFlow) -> Result<(), String> {
    set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, sink.receive_buffer as libc::c_int)?;
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, sink.window_clamp as libc::c_int)
}

/// Accepts the host's TCP flows (`flows`: per flow of the scenario, its
/// settings if it ends here). When every flow it receives has the same
/// window, the listener has it too, so the handshake already advertises
/// it; otherwise each connection takes its own once accepted.
fn tcp_sink(listener: TcpListener, flows: Vec<Option<SinkFlow>>) {
    let mut windows = flows.iter().flatten().map(|s| (s.window_clamp, s.receive_buffer));
    if let Some(first) = windows.next().filter(|first| windows.all(|w| w == *first)) {
        let common = SinkFlow { codepoint: 0, window_clamp: first.0, receive_buffer: first.1 };
        if let Err(e) = set_window(listener.as_raw_fd(), &common) {
            eprintln!("phb-emu agent: TCP sink: {e}");
        }
    }
    for stream in listener.incoming().flatten() {
        let flow = stream.peer_addr().ok().and_then(|a| a.port().checked_sub(BASE_PORT)).map(usize::from);
        let sink = flow.and_then(|f| flows.get(f).copied().flatten());
        if let Some(sink) = &sink {
            let fd = stream.as_raw_fd();
            let _ = set_int(fd, libc::IPPROTO_IP, libc::IP_TOS, libc::c_int::from(sink.codepoint) << 2);
            if let Err(e) = set_window(fd, sink) {
                eprintln!("phb-emu agent: TCP sink: {e}");
            }
        }
        thread::spawn(move || {
            let mut stream = stream;
            let mut buf = vec![0u8; 1 << 16];
            while matches!(stream.read(&mut buf), Ok(n) if n > 0) {
                // Linux (6.x) resets the clamp to what the buffer holds when
                // the first segments change its estimate of their overhead
                // (`tcp_measure_rcv_mss`): set it again (a no-op when unchanged).
                if let Some(sink) = &sink {
                    let clamp = sink.window_clamp as libc::c_int;
                    let _ = set_int(stream.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, clamp);
                }
            }
        });
    }
}

/// Where and how an agent runs, beside the scenario and its plan.
pub struct Setting<'a> {
    /// Host node whose flows it sends and sinks.
    pub host: usize,
    pub seed: u64,
    /// Monotonic time of the run's time 0.
    pub epoch: Time,
    pub congestion: &'a str,
    /// The run's output directory, for the `TCP_INFO` samples and transfers.
    pub out: &'a Path,
}

/// Runs the agents of a host. Returns only on an error (the router kills
/// agents).
pub fn run(scenario: &Scenario, plan: &Plan, setting: &Setting) -> String {
    match start(scenario, plan, setting) {
        Ok(threads) => {
            for t in threads {
                let _ = t.join();
            }
            loop {
                thread::park();
            }
        }
        Err(e) => e,
    }
}

fn start(scenario: &Scenario, plan: &Plan, setting: &Setting) -> Result<Vec<thread::JoinHandle<()>>, String> {
    let Setting { host, seed, epoch, congestion, out } = *setting;
    let mut threads = Vec::new();
    let (register, sockets) = mpsc::channel::<Report>();
    if plan.flows.iter().any(|f| f.src == host && f.tcp) {
        let run = &scenario.run;
        let (period, warmup, end) = (tcp_info::sample_period(run.sample_interval), run.warmup, run.duration);
        let file = tcp_info::file_of(out, host);
        threads.push(thread::spawn(move || {
            if let Err(e) = tcp_info::sample_until(sockets, epoch, period, warmup, end, &file) {
                eprintln!("phb-emu agent: writing {}: {e}", file.display());
            }
        }));
    }
    let codepoint = |f: &FlowPlan| scenario.classes[f.class].codepoint;
    let sink = SocketAddrV4::new(Ipv4Addr::from(host_addr(host)), SINK_PORT);
    if plan.flows.iter().any(|f| f.dst == host && !f.tcp) {
        let socket = UdpSocket::bind(sink).map_err(|e| format!("UDP sink {sink}: {e}"))?;
        threads.push(thread::spawn(move || drain_udp(socket)));
    }
    if plan.flows.iter().any(|f| f.dst == host && f.tcp) {
        let listener = TcpListener::bind(sink).map_err(|e| format!("TCP sink {sink}: {e}"))?;
        let flows = plan
            .flows
            .iter()
            .map(|f| match &scenario.groups[f.group].transport {
                Transport::Tcp(tcp) if f.dst == host => Some(SinkFlow {
                    codepoint: codepoint(f),
                    window_clamp: kernel_tcp::window_clamp(&tcp.config),
                    receive_buffer: kernel_tcp::receive_buffer(&tcp.config),
                }),
                _ => None,
            })
            .collect();
        threads.push(thread::spawn(move || tcp_sink(listener, flows)));
    }
    let mut udp = Vec::new();
    for (f, flow) in plan.flows.iter().enumerate().filter(|(_, flow)| flow.src == host) {
        let stop = epoch + flow.stop.min(scenario.run.duration);
        match &scenario.groups[flow.group].transport {
            Transport::Tcp(tcp) => {
                let (flow, tos, maxseg) = (flow.clone(), codepoint(flow), kernel_tcp::maxseg(&tcp.config));
                let app = match &tcp.app {
                    AppModel::Bulk => None,
                    model => Some(App::new(model, Rng::derive(seed, &format!("app/{}", flow.name)))),
                };
                let lowat = matches!(tcp.app, AppModel::Phases(_)).then(|| kernel_tcp::notsent_lowat(&tcp.config));
                let congestion = flow.congestion.map_or(congestion, |c| c.name()).to_owned();
                let register = register.clone();
                threads.push(thread::spawn(move || {
                    sys::sleep_until(epoch + flow.start);
                    match tcp_connect(f, &flow, tos, maxseg, &congestion, lowat) {
                        Ok(stream) => {
                            if let (Ok(copy), Some(opening)) = (stream.try_clone(), tcp_info::opening(&stream)) {
                                let _ = register.send(Report::Socket(f, OwnedFd::from(copy), opening));
                            }
                            match app {
                                Some(app) => tcp_app(stream, f, app, epoch, stop, &register),
                                None => tcp_bulk(stream, stop),
                            }
                        }
                        Err(e) => eprintln!("phb-emu agent: flow {}: {e}", flow.name),
                    }
                }));
            }
            Transport::Udp(model) => {
                let local = SocketAddrV4::new(Ipv4Addr::from(host_addr(host)), BASE_PORT + f as u16);
                let socket = UdpSocket::bind(local).map_err(|e| format!("flow {}: bind {local}: {e}", flow.name))?;
                set_int(socket.as_raw_fd(), libc::IPPROTO_IP, libc::IP_TOS, libc::c_int::from(codepoint(flow)) << 2)?;
                let remote = SocketAddrV4::new(Ipv4Addr::from(host_addr(flow.dst)), SINK_PORT);
                socket.connect(remote).map_err(|e| format!("flow {}: connect {remote}: {e}", flow.name))?;
                // A burst source's default rate: its first link's, as in the simulator.
                let line_rate_bps =
                    plan.routes.next_port(flow.route_fwd, 0).map_or(0, |port| scenario.links[port / 2].rate_bps);
                let mut source = model.source(line_rate_bps, Rng::derive(seed, &format!("flow/{}", flow.name)));
                let next = epoch + flow.start + source.first_gap();
                let payload = (model.packet_size() - UDP_HEADERS) as usize;
                udp.push(UdpFlow { socket, source, payload, next, stop });
            }
        }
    }
    if !udp.is_empty() {
        threads.push(thread::spawn(move || udp_sender(udp)));
    }
    Ok(threads)
}
