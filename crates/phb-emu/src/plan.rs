//! What an emulation runs, decided before anything is created: the
//! scenario (already validated for the emulator by `phb_sim::load_for`,
//! which refuses what a real stack cannot carry), each flow's ports and
//! routes, and the hosts' addresses.
//!
//! **Addresses.** Host node `n` is `10.77.x.y` with `x.y` = `n + 1` (a
//! /16 on the TUN device of its own namespace, where nothing else lives, so
//! the prefix cannot clash with the machine's networks).
//!
//! **Flows on the wire.** Flow `f` (in the simulator's order: groups in file
//! order, `count` flows each) sends from source port [`BASE_PORT`]` + f` to
//! [`SINK_PORT`] of its destination: the router reads the flow from the
//! source port of data packets and the destination port of the reverse
//! direction (TCP ACKs), so a five-tuple names one flow of the scenario.
//!
//! **Programs' packets.** A packet of no flow (a command's, `kind =
//! "command"`, or one of a program the `--shell` started) is forwarded when
//! it goes between two hosts one of which runs a command or the shell (a
//! *program host*), along the shortest path ([`ProgramRoutes`]); it gets
//! the class of its source's commands, else of its destination's, else
//! keeps the codepoint its program set.

use phb::{Rng, Time};
use phb_sim::net::routing::{Routes, RoutesBuilder, Topology, Wanted};
use phb_sim::scenario::{Congestion, NodeKind, Scenario, Transport};

use crate::kernel_tcp::{self, Kernel};

/// Flow `f`'s sender binds source port `BASE_PORT + f`.
pub const BASE_PORT: u16 = 20000;
/// The port every host's sink listens on (TCP) and receives on (UDP).
pub const SINK_PORT: u16 = 5001;
/// The most flows the port numbering leaves room for (the validator
/// refuses more: `phb_sim::scenario::backend::EMULATE_MAX_FLOWS`).
pub const MAX_FLOWS: usize = (u16::MAX - BASE_PORT) as usize;
const _: () = assert!(MAX_FLOWS == phb_sim::scenario::backend::EMULATE_MAX_FLOWS);

/// The congestion controls a sender may ask the kernel for (`TCP_CONGESTION`).
pub const CONGESTION_CONTROLS: [&str; 3] = ["reno", "cubic", "bbr"];

/// Host node `node`'s address.
pub fn host_addr(node: usize) -> [u8; 4] {
    let n = node as u32 + 1;
    [10, 77, (n >> 8) as u8, n as u8]
}

/// The node whose address is `addr`, if it is one of [`host_addr`]'s.
pub fn node_of_addr(addr: [u8; 4]) -> Option<usize> {
    if addr[0] != 10 || addr[1] != 77 {
        return None;
    }
    let n = (usize::from(addr[2]) << 8) | usize::from(addr[3]);
    n.checked_sub(1)
}

/// One flow as the emulator runs it.
#[derive(Clone, Debug)]
pub struct FlowPlan {
    /// `group` or `group.i`, as the simulator names it.
    pub name: String,
    pub group: usize,
    pub src: usize,
    pub dst: usize,
    pub class: usize,
    pub tcp: bool,
    /// The congestion control its group asks for (`None`: the run's, the
    /// command line's `--congestion`).
    pub congestion: Option<Congestion>,
    /// When it starts (start plus the simulator's jitter) and stops sending,
    /// from the run's start.
    pub start: Time,
    pub stop: Time,
    /// Route of its data (source to destination) and of the reverse direction.
    pub route_fwd: u32,
    pub route_rev: u32,
}

/// Everything the router and the agents need beyond the scenario.
#[derive(Debug)]
pub struct Plan {
    pub flows: Vec<FlowPlan>,
    pub routes: Routes,
    /// Node indices of the hosts, in node order.
    pub hosts: Vec<usize>,
    /// The scenario's TCP keys as the hosts' sysctls and routes.
    pub kernel: Kernel,
    pub programs: ProgramRoutes,
}

/// Marks a missing route in [`ProgramRoutes`].
const NO_ROUTE: u32 = u32::MAX;

/// The routes of programs' packets (module doc): from and to each program
/// host, to and from every node, in flat tables (two lookups per packet).
#[derive(Debug, Default)]
pub struct ProgramRoutes {
    /// Per node: its position among the program hosts, or [`NO_ROUTE`].
    position: Vec<u32>,
    /// Route from program host `p` to node `n` at `p * nodes + n`, and
    /// from node `n` to it ([`NO_ROUTE`]: none, `n` is not a host or is `p`).
    from: Vec<u32>,
    to: Vec<u32>,
    /// Per node: the codepoint its commands' `class` gives their packets.
    codepoint: Vec<Option<u8>>,
}

impl ProgramRoutes {
    /// The route of a programs' packet from host `src` to host `dst`, if
    /// one of them is a program host.
    pub fn route(&self, src: usize, dst: usize) -> Option<u32> {
        let nodes = self.position.len();
        if src >= nodes || dst >= nodes {
            return None;
        }
        let found = if self.position[src] != NO_ROUTE {
            self.from[self.position[src] as usize * nodes + dst]
        } else if self.position[dst] != NO_ROUTE {
            self.to[self.position[dst] as usize * nodes + src]
        } else {
            NO_ROUTE
        };
        (found != NO_ROUTE).then_some(found)
    }

    /// The codepoint a programs' packet from `src` to `dst` (nodes that
    /// [`Self::route`] found a route between) is given, if any.
    pub fn codepoint(&self, src: usize, dst: usize) -> Option<u8> {
        self.codepoint[src].or(self.codepoint[dst])
    }
}

/// A scenario feature the emulator cannot run: the key and why.
fn refuse(key: String, why: &str) -> String {
    format!("{key}: {why}")
}

/// Plans the flows of `scenario`, which was validated for the emulator
/// (`phb_sim::load_for` with `Backend::Emulate`: what a real stack cannot
/// carry is refused there, with the key's position); the error names a
/// flow's key whose destination is unreachable. `shell`: the host node a
/// `--shell` runs in, a program host (module doc) besides the commands'.
pub fn plan(scenario: &Scenario, seed: u64, shell: Option<usize>) -> Result<Plan, String> {
    let nodes = scenario.nodes.len();
    let forwards: Vec<bool> = scenario.nodes.iter().map(|n| n.kind == NodeKind::Router).collect();
    let topology = Topology::new(forwards.clone(), scenario.links.iter().map(|l| (l.a, l.b, l.delay)));
    let mut routes = RoutesBuilder::default();
    let mut flows = Vec::new();
    for (g, group) in scenario.groups.iter().enumerate() {
        let key = |k: &str| format!("traffic[{g}].{k}");
        let (tcp, congestion) = match &group.transport {
            Transport::Udp(_) => (false, None),
            Transport::Tcp(t) => (true, t.congestion),
        };
        let wanted = |reversed: bool| match &group.path {
            Some(nodes) => Wanted::Pinned { nodes, reversed },
            None if reversed => Wanted::Shortest { src: group.dst, dst: group.src },
            None => Wanted::Shortest { src: group.src, dst: group.dst },
        };
        let mut paths = topology.route_all(&[wanted(false), wanted(true)]).into_iter();
        let fwd = paths.next().flatten().ok_or_else(|| refuse(key("to"), "unreachable"))?;
        let rev = paths.next().flatten().ok_or_else(|| refuse(key("from"), "unreachable from the destination"))?;
        let (route_fwd, route_rev) = (routes.add(&fwd), routes.add(&rev));
        for i in 0..group.count {
            let name = if group.count == 1 { group.name.clone() } else { format!("{}.{}", group.name, i) };
            // A flow-count schedule gives each flow its own window (its
            // start before the jitter), as the simulator's `Flow::new` reads it.
            let (start, stop) = group.windows.as_ref().map_or((group.start, group.stop), |w| w[i as usize]);
            let jitter = if group.start_jitter > Time::ZERO {
                let mut rng = Rng::derive(seed, &format!("jitter/{name}"));
                Time::from_secs_f64(rng.uniform() * group.start_jitter.as_secs_f64())
            } else {
                Time::ZERO
            };
            flows.push(FlowPlan {
                name,
                group: g,
                src: group.src,
                dst: group.dst,
                class: group.class,
                tcp,
                congestion,
                start: start + jitter,
                stop,
                route_fwd,
                route_rev,
            });
        }
    }
    let hosts: Vec<usize> = (0..nodes).filter(|&n| !forwards[n]).collect();
    let programs = program_routes(scenario, &topology, &mut routes, &hosts, shell);
    Ok(Plan { flows, routes: routes.finish(), hosts, kernel: kernel_tcp::settings(scenario), programs })
}

/// The routes from and to each program host (the commands' and `shell`),
/// added to `routes`.
fn program_routes(
    scenario: &Scenario,
    topology: &Topology,
    routes: &mut RoutesBuilder,
    hosts: &[usize],
    shell: Option<usize>,
) -> ProgramRoutes {
    let nodes = scenario.nodes.len();
    let mut programs =
        ProgramRoutes { position: vec![NO_ROUTE; nodes], codepoint: vec![None; nodes], ..ProgramRoutes::default() };
    let mut program_hosts = Vec::new();
    for host in scenario.commands.iter().map(|c| c.host).chain(shell) {
        if programs.position[host] == NO_ROUTE {
            programs.position[host] = program_hosts.len() as u32;
            program_hosts.push(host);
        }
    }
    for command in &scenario.commands {
        if let Some(class) = command.class {
            programs.codepoint[command.host] = Some(scenario.classes[class].codepoint);
        }
    }
    programs.from = vec![NO_ROUTE; program_hosts.len() * nodes];
    programs.to = vec![NO_ROUTE; program_hosts.len() * nodes];
    for (p, &program) in program_hosts.iter().enumerate() {
        let others: Vec<usize> = hosts.iter().copied().filter(|&h| h != program).collect();
        let wanted: Vec<Wanted> = others
            .iter()
            .flat_map(|&h| [Wanted::Shortest { src: program, dst: h }, Wanted::Shortest { src: h, dst: program }])
            .collect();
        let mut paths = topology.route_all(&wanted).into_iter();
        for &h in &others {
            if let Some(path) = paths.next().flatten() {
                programs.from[p * nodes + h] = routes.add(&path);
            }
            if let Some(path) = paths.next().flatten() {
                programs.to[p * nodes + h] = routes.add(&path);
            }
        }
    }
    programs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip() {
        for node in [0, 1, 254, 255, 256, 65533] {
            assert_eq!(node_of_addr(host_addr(node)), Some(node));
        }
        assert_eq!(node_of_addr([192, 168, 0, 1]), None);
        assert_eq!(node_of_addr([10, 77, 0, 0]), None);
    }

    /// Programs' packets are routed only to and from program hosts (a
    /// command's or the shell's), along the shortest path, and take the
    /// class of their source's commands, else of their destination's.
    #[test]
    fn programs_packets_are_routed_to_and_from_program_hosts() {
        let text = "[run]\nduration = \"1s\"\n[classes]\nbe = 0\nef = 46\n[nodes]\nhosts = [\"a\", \"b\", \"c\"]\n\
                    routers = [\"r\"]\n[[links]]\nbetween = [\"a\", \"r\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
                    [[links]]\nbetween = [\"b\", \"r\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
                    [[links]]\nbetween = [\"c\", \"r\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
                    [[traffic]]\nname = \"x\"\nkind = \"command\"\nhost = \"a\"\nargv = [\"sh\"]\nclass = \"ef\"\n";
        let scenario = phb_sim::load_for(text, "t", &[], phb_sim::Backend::Emulate).unwrap();
        let (a, b, c, r) = (0, 1, 2, 3);
        let plan = plan(&scenario, 1, None).unwrap();
        let programs = &plan.programs;
        let ports = |route: u32| -> Vec<usize> { (0..).map_while(|hop| plan.routes.next_port(route, hop)).collect() };
        // Ports: link l's direction a->b is 2l, b->a is 2l + 1.
        assert_eq!(ports(programs.route(a, b).unwrap()), vec![0, 3]);
        assert_eq!(ports(programs.route(c, a).unwrap()), vec![4, 1]);
        assert_eq!((programs.route(b, c), programs.route(a, r), programs.route(a, 9)), (None, None, None));
        assert_eq!((programs.codepoint(a, b), programs.codepoint(b, a)), (Some(46), Some(46)));
        let with_shell = super::plan(&scenario, 1, Some(c)).unwrap();
        assert!(with_shell.programs.route(b, c).is_some());
        assert_eq!(with_shell.programs.codepoint(b, c), None);
    }
}
