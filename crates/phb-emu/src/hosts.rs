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
        let host = create_one(node, plan.sack[node], plan.ecn[node]);
        sys::enter_netns(root.as_raw_fd()).map_err(|e| format!("returning to the original namespace: {e}"))?;
        hosts.push(host?);
    }
    Ok(hosts)
}

fn create_one(node: usize, sack: bool, ecn: bool) -> Result<Host, String> {
    let name = device_name(std::process::id(), node);
    let step = |what: &str, e: std::io::Error| format!("host namespace of node {node}: {what}: {e}");
    let netns = sys::new_netns().map_err(|e| step("creating", e))?;
    sys::sysctl("net/ipv6/conf/default/disable_ipv6", "1").map_err(|e| step("disabling IPv6", e))?;
    sys::sysctl("net/ipv4/tcp_sack", if sack { "1" } else { "0" }).map_err(|e| step("tcp_sack", e))?;
    sys::sysctl("net/ipv4/tcp_ecn", if ecn { "1" } else { "2" }).map_err(|e| step("tcp_ecn", e))?;
    sys::configure_interface("lo", None, 65536).map_err(|e| step("loopback", e))?;
    let tun = sys::open_tun(&name).map_err(|e| step("TUN device", e))?;
    sys::configure_interface(&name, Some((host_addr(node), 16)), 1500).map_err(|e| step("address", e))?;
    Ok(Host { node, netns, tun })
}

/// Starts `program args` inside `host`'s namespace, marked with the
/// emulation's `owner` ([`sys::OWNER_VARIABLE`]) and killed when this
/// process dies (checked before it runs: a child whose parent is already
/// gone exits at once).
pub fn spawn_in(host: &Host, program: &std::path::Path, args: &[String], owner: &str) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let ns = host.netns.as_raw_fd();
    let parent = std::process::id();
    let mut command = Command::new(program);
    command.args(args).env(sys::OWNER_VARIABLE, owner).stdin(Stdio::null()).stdout(Stdio::null());
    // SAFETY: between fork and exec the child only makes system calls.
    unsafe {
        command.pre_exec(move || {
            sys::enter_netns(ns)?;
            sys::die_with_parent(libc::SIGKILL, parent)
        });
    }
    command.spawn()
}

/// A user's shell in a host's namespace ([`spawn_shell`]). Dropping it (at
/// the run's end, on an error or while a panic unwinds) kills its whole
/// process group, the shell and every program it started there, and takes
/// the terminal back.
pub struct Shell(Child);

/// Starts `shell` inside `host`'s namespace for the user, with this
/// process's standard input and output (also as its standard error), marked with the emulation's `owner`
/// ([`sys::OWNER_VARIABLE`]) and `PHBLAB_HOST=name`, in a process group of
/// its own and killed when this process dies. When standard input is a
/// terminal the shell's group becomes its foreground group (Ctrl-C then
/// reaches the shell, not the emulation) until the [`Shell`] is dropped.
pub fn spawn_shell(host: &Host, shell: &std::path::Path, name: &str, owner: &str) -> std::io::Result<Shell> {
    use std::os::unix::process::CommandExt;
    let ns = host.netns.as_raw_fd();
    let parent = std::process::id();
    let mut command = Command::new(shell);
    // Its errors and prompt (a shell writes it on standard error) go to
    // standard output: the router's standard error is read by `phblab`.
    let stdout = std::io::stdout().as_fd().try_clone_to_owned()?;
    command.env(sys::OWNER_VARIABLE, owner).env("PHBLAB_HOST", name).stderr(stdout).process_group(0);
    // SAFETY: between fork and exec the child only makes system calls.
    unsafe {
        command.pre_exec(move || {
            sys::enter_netns(ns)?;
            sys::die_with_parent(libc::SIGKILL, parent)
        });
    }
    let child = command.spawn()?;
    sys::give_terminal(child.id());
    // A shell that found itself in the background before it got the
    // terminal has stopped: it goes on now.
    sys::signal_group(child.id(), libc::SIGCONT);
    Ok(Shell(child))
}

impl Drop for Shell {
    fn drop(&mut self) {
        sys::signal_group(self.0.id(), libc::SIGKILL);
        let _ = self.0.wait();
        sys::give_terminal(std::process::id());
    }
}
