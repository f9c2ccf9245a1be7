//! The hosts' namespaces: one anonymous network namespace per host node,
//! holding a loopback and one TUN device, `phb<pid>h<node>`, whose other
//! end is the router process.
//!
//! **Why TUN, not veth + AF_PACKET.** A TUN device hands the router whole
//! IP packets with one `read` and takes them back with one `write`: no
//! Ethernet header, no ARP or neighbour tables to keep, no promiscuous
//! capture of the host's own traffic, and the device belongs to the file
//! descriptor, so it disappears with the router however the router ends.
//! A veth pair would need a second end in the router's namespace, a packet
//! socket per end, and an explicit deletion.
//!
//! **Nothing outlives the run.** The namespaces are anonymous (never
//! mounted under `/run/netns`): each lives while the router holds its
//! handle or an agent runs in it, and the agents die with the router
//! (`PR_SET_PDEATHSIG`), as the router dies with the process that started
//! it (`main.rs`). Normal end, error, SIGINT, SIGTERM, a panic or SIGKILL
//! of the router or of its starter all leave nothing behind. Every process
//! carries its owner in [`sys::OWNER_VARIABLE`], so that `phblab emulate
//! --cleanup` finds any that a run of an earlier version left. The
//! machine's own namespace is never configured: every address, route and
//! sysctl is set inside a namespace this module created.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};

use phb_sim::scenario::linux_tcp;

use crate::plan::{host_addr, Plan};
use crate::sys;

/// A host's namespace and the router's end of its TUN device.
pub struct Host {
    pub node: usize,
    pub netns: File,
    pub tun: OwnedFd,
}

/// The TUN device name of host `node` in a run of process `pid`.
pub fn device_name(pid: u32, node: usize) -> String {
    format!("phb{pid}h{node}")
}

/// Creates the namespace of every host of `plan`, the calling thread
/// staying in (or returning to) its own namespace whatever happens.
pub fn create(plan: &Plan) -> Result<Vec<Host>, String> {
    let root = sys::current_netns().map_err(|e| format!("reading the current network namespace: {e}"))?;
    let mut hosts = Vec::with_capacity(plan.hosts.len());
    for &node in &plan.hosts {
        let host = create_one(node, plan);
        sys::enter_netns(root.as_raw_fd()).map_err(|e| format!("returning to the original namespace: {e}"))?;
        hosts.push(host?);
    }
    Ok(hosts)
}

/// Creates host `node`'s namespace (entering it) with its sysctls, device,
/// address and the routes to its TCP peers that carry the scenario's TCP
/// keys ([`crate::kernel_tcp`]).
fn create_one(node: usize, plan: &Plan) -> Result<Host, String> {
    let name = device_name(std::process::id(), node);
    let step = |what: &str, e: std::io::Error| format!("host namespace of node {node}: {what}: {e}");
    let netns = sys::new_netns().map_err(|e| step("creating", e))?;
    sys::sysctl("net/ipv6/conf/default/disable_ipv6", "1").map_err(|e| step("disabling IPv6", e))?;
    for (path, value) in plan.kernel.sysctls[node].settings() {
        sys::sysctl(path, value).map_err(|e| step(path, e))?;
    }
    sys::configure_interface("lo", None, 65536).map_err(|e| step("loopback", e))?;
    let tun = sys::open_tun(&name).map_err(|e| step("TUN device", e))?;
    sys::configure_interface(&name, Some((host_addr(node), 16)), linux_tcp::HOST_MTU as i32)
        .map_err(|e| step("address", e))?;
    for route in plan.kernel.routes.iter().filter(|r| r.host == node) {
        sys::add_route(&name, host_addr(route.peer), &route.metrics()).map_err(|e| step("route to a TCP peer", e))?;
    }
    Ok(Host { node, netns, tun })
}

/// Makes `command` start inside the namespace `netns`, marked with the
/// emulation's `owner` ([`sys::OWNER_VARIABLE`]) and killed when this
/// process dies (checked before it runs: a child whose parent is already
/// gone exits at once).
fn in_namespace(command: &mut Command, netns: &File, owner: &str) {
    use std::os::unix::process::CommandExt;
    let ns = netns.as_raw_fd();
    let parent = std::process::id();
    command.env(sys::OWNER_VARIABLE, owner);
    // SAFETY: between fork and exec the child only makes system calls.
    unsafe {
        command.pre_exec(move || {
            sys::enter_netns(ns)?;
            sys::die_with_parent(libc::SIGKILL, parent)
        });
    }
}

/// Starts `program args` inside `host`'s namespace ([`in_namespace`]),
/// without standard input or output.
pub fn spawn_in(host: &Host, program: &std::path::Path, args: &[String], owner: &str) -> std::io::Result<Child> {
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::null()).stdout(Stdio::null());
    in_namespace(&mut command, &host.netns, owner);
    command.spawn()
}

/// A process group started in a host's namespace ([`spawn_group`]): a
/// command's or the `--shell`'s. Dropping it (at the run's end, on an
/// error or while a panic unwinds) kills the whole group, the program and
/// everything it started there, and reaps the program. The program is
/// reaped only then, so the group's id cannot be reused before.
pub struct Group {
    child: Child,
    killed: bool,
}

impl Group {
    /// The program's pid, which is the group's id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to every process of the group.
    pub fn signal(&self, signal: libc::c_int) {
        if !self.killed {
            sys::signal_group(self.child.id(), signal);
        }
    }

    /// Whether the program (the group's leader) has ended, without reaping it.
    pub fn ended(&self) -> bool {
        self.killed || sys::has_ended(self.child.id())
    }

    /// Kills the whole group (SIGKILL) and reaps the program; its exit
    /// status (`None` if it was killed before).
    pub fn kill(&mut self) -> Option<std::process::ExitStatus> {
        if std::mem::replace(&mut self.killed, true) {
            return None;
        }
        sys::signal_group(self.child.id(), libc::SIGKILL);
        self.child.wait().ok()
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts `command` inside the namespace `netns` ([`in_namespace`]), in a
/// process group of its own ([`Group`]).
pub fn spawn_group(netns: &File, mut command: Command, owner: &str) -> std::io::Result<Group> {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    in_namespace(&mut command, netns, owner);
    Ok(Group { child: command.spawn()?, killed: false })
}

/// A user's shell in a host's namespace ([`spawn_shell`]): its [`Group`],
/// killed when it is dropped, which then takes the terminal back.
pub struct Shell(Group);

/// Starts `shell` inside `host`'s namespace for the user, with this
/// process's standard input and output (also as its standard error), marked with the emulation's `owner`
/// and `PHBLAB_HOST=name`, in a process group of its own ([`spawn_group`]).
/// When standard input is a terminal the shell's group becomes its
/// foreground group (Ctrl-C then reaches the shell, not the emulation)
/// until the [`Shell`] is dropped.
pub fn spawn_shell(host: &Host, shell: &std::path::Path, name: &str, owner: &str) -> std::io::Result<Shell> {
    let mut command = Command::new(shell);
    // Its errors and prompt (a shell writes it on standard error) go to
    // standard output: the router's standard error is read by `phblab`.
    let stdout = std::io::stdout().as_fd().try_clone_to_owned()?;
    command.env("PHBLAB_HOST", name).stderr(stdout);
    let group = spawn_group(&host.netns, command, owner)?;
    sys::give_terminal(group.id());
    // A shell that found itself in the background before it got the
    // terminal has stopped: it goes on now.
    group.signal(libc::SIGCONT);
    Ok(Shell(group))
}

impl Drop for Shell {
    fn drop(&mut self) {
        self.0.kill();
        sys::give_terminal(std::process::id());
    }
}
