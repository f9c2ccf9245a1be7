//! What each backend can run. A scenario is validated for the backend that
//! will run it ([`super::load_for`]), so `phblab validate --backend B`, a
//! sweep and a reproduction refuse up front, naming the key and its
//! position, what `phblab run` (the simulator) or `phblab emulate` (real
//! Linux TCP through `phb-emu`) would refuse.
//!
//! - The simulator models Reno-style congestion control only: a group's
//!   `congestion` other than `"reno"` runs only emulated.
//! - The emulator runs real sockets and the user-space router: no LSP
//!   whose TWAM reads the senders' windows (`window = "cwnd"`: the router
//!   sees packets, not the hosts' windows; `"passive"` runs), no TCP profile that follows a simulator's rules,
//!   no Reno loss recovery (Linux has NewReno and SACK), no TCP key the
//!   kernel cannot honour ([`super::linux_tcp`]), one setting per host
//!   namespace of SACK, timestamps and (per sending host) ECN and restart
//!   after idle (the kernel's sysctls are per namespace), one initial
//!   window, minimum RTO and delayed-ACK setting per pair of hosts (route
//!   attributes), UDP packets of at least their headers, and at most
//!   [`EMULATE_MAX_FLOWS`] flows and 65 534 nodes (its port and address
//!   numbering, `phb-emu`'s `plan.rs`). A phased application runs, but
//!   cannot withdraw data its socket already holds (`phb-emu`'s agent keeps
//!   little there); nor can a flow of a flow-count schedule (`schedule`),
//!   whose agent starts and stops it at its own window's ends. A packet trace (`[trace]`) is
//!   recorded by both: every key of it is honoured by the router. So is a
//!   link's AAL5 framing: the router serialises and counts 53-byte cells
//!   with the simulator's framing code (`phb::Framing`).

use std::fmt;

use std::collections::BTreeMap;

use super::linux_tcp;
use super::model::{Congestion, Scenario, Transport, WindowInput};
use crate::tcp::{Rules, Variant};

/// Where a scenario runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// phblab's discrete-event simulator (`phblab run`).
    #[default]
    Simulate,
    /// The emulator: the kernel's TCP and UDP through `phb-emu` (`phblab emulate`).
    Emulate,
}

impl Backend {
    /// The backend named `name` ("simulate" or "emulate").
    pub fn from_name(name: &str) -> Option<Backend> {
        match name {
            "simulate" => Some(Backend::Simulate),
            "emulate" => Some(Backend::Emulate),
            _ => None,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Simulate => "simulate",
            Backend::Emulate => "emulate",
        })
    }
}

/// The most flows an emulation runs: its senders bind source ports from
/// 20000 up (`phb-emu`'s `BASE_PORT`).
pub const EMULATE_MAX_FLOWS: usize = (u16::MAX - 20000) as usize;
/// The most nodes an emulation addresses (10.77.0.0/16, `phb-emu`'s `host_addr`).
pub const EMULATE_MAX_NODES: usize = 0xfffe;
/// IPv4 and UDP headers: the smallest UDP packet a socket sends.
pub const UDP_HEADERS: u32 = 28;

/// The first key of `scenario` that `backend` cannot run, and why.
pub fn unsupported(scenario: &Scenario, backend: Backend) -> Option<(String, String)> {
    match backend {
        Backend::Simulate => not_simulable(scenario),
        Backend::Emulate => not_emulable(scenario),
    }
}

fn not_simulable(scenario: &Scenario) -> Option<(String, String)> {
    if let Some(command) = scenario.commands.first() {
        return Some((
            format!("traffic[{}].kind", command.index),
            "a command runs a real program in a host's namespace: only with `phblab emulate`".into(),
        ));
    }
    scenario.groups.iter().enumerate().find_map(|(g, group)| match &group.transport {
        Transport::Tcp(tcp) => match tcp.congestion {
            Some(c) if c != Congestion::Reno => Some((
                format!("traffic[{}].congestion", scenario.traffic_index(g)),
                format!("the simulator's TCP is Reno/NewReno/SACK; \"{}\" runs only with `phblab emulate`", c.name()),
            )),
            _ => None,
        },
        Transport::Udp(_) => None,
    })
}

fn not_emulable(scenario: &Scenario) -> Option<(String, String)> {
    let refuse = |key: String, why: &str| Some((key, format!("{why} (`phblab emulate` cannot run it)")));
    if let Some(lsp) = scenario.lsps.iter().find(|l| l.window == WindowInput::Cwnd) {
        return refuse(
            format!("lsps.{}.window", lsp.name),
            "the router cannot read the hosts' congestion windows; use window = \"passive\" (its estimate from the packets it sees)",
        );
    }
    if scenario.nodes.len() > EMULATE_MAX_NODES {
        return refuse("nodes".into(), &format!("emulation addresses at most {EMULATE_MAX_NODES} nodes"));
    }
    // What the groups sharing a host namespace, or a host's route to
    // another, must agree on (`linux_tcp`): the first value and its entry.
    let mut sack = Agreed::default();
    let mut ecn = Agreed::default();
    let mut timestamps = Agreed::default();
    let mut restart = Agreed::default();
    let mut initcwnd = Agreed::default();
    let mut rto_min = Agreed::default();
    let mut quickack = Agreed::default();
    let mut flows = 0usize;
    for (g, group) in scenario.groups.iter().enumerate() {
        let entry = scenario.traffic_index(g);
        let key = |k: &str| format!("traffic[{entry}].{k}");
        match &group.transport {
            Transport::Udp(model) => {
                if model.packet_size() < UDP_HEADERS {
                    return refuse(key("packet_size"), "a UDP packet is at least 28 B (its IP and UDP headers)");
                }
            }
            Transport::Tcp(t) => {
                if t.config.rules != Rules::Rfc {
                    return refuse(
                        key("profile"),
                        "this TCP profile follows a simulator's rules (ns-2, ns-3), which a real stack cannot; use profile = \"linux\"",
                    );
                }
                let with_sack = match t.config.variant {
                    Variant::Sack => true,
                    Variant::NewReno => false,
                    Variant::Reno => {
                        return refuse(
                            key("variant"),
                            "Linux has no Reno loss recovery; use \"newreno\" (SACK off) or \"sack\"",
                        )
                    }
                };
                if let Some((k, why)) = linux_tcp::refused(t) {
                    return refuse(key(k), &why);
                }
                let (src, dst, c, ts) = (group.src, group.dst, &t.config, linux_tcp::timestamps(t));
                let host = |other: Option<usize>, k: &'static str, sysctl: &str| {
                    other.map(|o| (k, format!("{sysctl} is set per host namespace, and traffic[{o}] at the same host uses another value")))
                };
                let route = |other: Option<usize>, k: &'static str, attribute: &str, whose: &str| {
                    other.map(|o| (k, format!("the route attribute {attribute} is set on the {whose} host's route to the other, and traffic[{o}] between the same two hosts uses another value")))
                };
                let conflict = host(ecn.agree(src, c.ecn, entry), "ecn", "net.ipv4.tcp_ecn")
                    .or(host(sack.agree(src, with_sack, entry), "variant", "net.ipv4.tcp_sack"))
                    .or(host(sack.agree(dst, with_sack, entry), "variant", "net.ipv4.tcp_sack"))
                    .or(host(timestamps.agree(src, ts, entry), "header", "net.ipv4.tcp_timestamps"))
                    .or(host(timestamps.agree(dst, ts, entry), "header", "net.ipv4.tcp_timestamps"))
                    .or(host(
                        restart.agree(src, c.slow_start_restart, entry),
                        "slow_start_restart",
                        "net.ipv4.tcp_slow_start_after_idle",
                    ))
                    .or(route(
                        initcwnd.agree((src, dst), c.initial_window, entry),
                        "initial_window",
                        "initcwnd",
                        "sending",
                    ))
                    .or(route(rto_min.agree((src, dst), c.min_rto, entry), "min_rto", "rto_min", "sending"))
                    .or(route(
                        quickack.agree((dst, src), c.delayed_ack, entry),
                        "delayed_ack",
                        "quickack",
                        "receiving",
                    ));
                if let Some((k, why)) = conflict {
                    return refuse(key(k), &why);
                }
            }
        }
        flows += group.count as usize;
        if flows > EMULATE_MAX_FLOWS {
            return refuse(key("count"), &format!("emulation runs at most {EMULATE_MAX_FLOWS} flows"));
        }
    }
    not_runnable_command(scenario).map(|(key, why)| (key, format!("{why} (`phblab emulate` cannot run it)")))
}

/// What the groups sharing a place (a host's namespace, a host's route to
/// another) must agree on: per place, the first value and the entry that
/// set it.
struct Agreed<K, V>(BTreeMap<K, (V, usize)>);

impl<K, V> Default for Agreed<K, V> {
    fn default() -> Self {
        Agreed(BTreeMap::new())
    }
}

impl<K: Ord, V: PartialEq> Agreed<K, V> {
    /// Records `value` of traffic entry `entry` at `at`; the entry that set
    /// another value there, if one did.
    fn agree(&mut self, at: K, value: V, entry: usize) -> Option<usize> {
        match self.0.get(&at) {
            Some((v, e)) if *v != value => Some(*e),
            Some(_) => None,
            None => {
                self.0.insert(at, (value, entry));
                None
            }
        }
    }
}

/// The first command whose program or working directory cannot be found, or whose class differs
/// from another command's at the same host (the router gives a host's
/// other packets one class), and why.
fn not_runnable_command(scenario: &Scenario) -> Option<(String, String)> {
    // Per host: the class of its commands that set one, and the entry.
    let mut class_at: Vec<Option<(usize, usize)>> = vec![None; scenario.nodes.len()];
    for command in &scenario.commands {
        let key = |k: &str| format!("traffic[{}].{k}", command.index);
        let program = &command.argv[0];
        if find_program(program, command.env.iter().find(|(v, _)| v == "PATH").map(|(_, p)| p.as_str())).is_none() {
            let where_ = if program.contains('/') { "no such executable file" } else { "not found on PATH" };
            return Some((key("argv"), format!("{program:?}: {where_}")));
        }
        if let Some(cwd) = command.cwd.as_deref().filter(|d| !std::path::Path::new(d).is_dir()) {
            return Some((key("cwd"), format!("{cwd:?}: not a directory")));
        }
        if let Some(class) = command.class {
            match class_at[command.host] {
                Some((other, i)) if other != class => {
                    return Some((
                        key("class"),
                        format!(
                        "traffic[{i}] at the same host gives its packets class {}; a host's commands share one class",
                        scenario.classes[other].name
                    ),
                    ))
                }
                _ => class_at[command.host] = Some((class, command.index)),
            }
        }
    }
    None
}

/// Where `program` is: itself if it holds a `/`, else the first
/// executable file of that name in `path` (the command's own `PATH`) or
/// this process's `PATH`.
fn find_program(program: &str, path: Option<&str>) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable =
        |p: &std::path::Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.contains('/') {
        let p = std::path::PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    let search = match path {
        Some(p) => p.to_owned(),
        None => std::env::var("PATH").unwrap_or_default(),
    };
    search.split(':').filter(|d| !d.is_empty()).map(|d| std::path::Path::new(d).join(program)).find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load_for, ScenarioError};

    const TCP: &str = r#"
[run]
duration = "2s"
[classes]
be = 0
[nodes]
hosts = ["a", "b"]
[[links]]
between = ["a", "b"]
rate = "10Mbps"
delay = "1ms"
[[traffic]]
name = "bulk"
kind = "tcp"
from = "a"
to = "b"
class = "be"
profile = "linux"
"#;

    fn refused(text: &str, backend: Backend) -> (String, usize, usize, String) {
        match load_for(text, "s.toml", &[], backend) {
            Err(ScenarioError::Invalid { key, line, column, message, .. }) => (key, line, column, message),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// `phblab validate` says what `phblab run` would refuse (it said
    /// nothing, and run refused without a position), and the other way
    /// round for emulation.
    #[test]
    fn each_backend_refuses_what_it_cannot_run_naming_the_key_and_its_position() {
        let cubic = format!("{TCP}congestion = \"cubic\"\n");
        let (key, line, column, message) = refused(&cubic, Backend::Simulate);
        assert_eq!((key.as_str(), line, column), ("traffic[0].congestion", 19, 1));
        assert!(message.contains("runs only with `phblab emulate`"), "{message}");
        assert!(load_for(&cubic, "s.toml", &[], Backend::Emulate).is_ok());

        let ns2 = TCP.replace("\"linux\"", "\"ns2\"");
        let (key, line, column, message) = refused(&ns2, Backend::Emulate);
        assert_eq!((key.as_str(), line, column), ("traffic[0].profile", 18, 1));
        assert!(message.contains("`phblab emulate` cannot run it"), "{message}");
        assert!(load_for(&ns2, "s.toml", &[], Backend::Simulate).is_ok());
    }

    /// Both backends run ECN (a TCP group's `ecn` and a buffer's); the
    /// emulator sets `tcp_ecn` per host namespace, so two senders at one
    /// host with different settings are refused, naming the second's key.
    #[test]
    fn emulation_runs_ecn_with_one_setting_per_sending_host() {
        let red = TCP.replace(
            "delay = \"1ms\"\n",
            "delay = \"1ms\"\nqdisc = \"red\"\n[qdiscs.red]\nkind = \"red\"\nlimit = \"50pkt\"\nmin_th = 5\nmax_th = 15\necn = true\n",
        );
        let tcp = format!("{red}ecn = true\n");
        for backend in [Backend::Simulate, Backend::Emulate] {
            assert!(load_for(&tcp, "s.toml", &[], backend).is_ok(), "{backend}");
        }
        let second = |from: &str, ecn: bool| {
            format!("{tcp}[[traffic]]\nname = \"other\"\nkind = \"tcp\"\nfrom = \"{from}\"\nto = \"a\"\nclass = \"be\"\nprofile = \"linux\"\necn = {ecn}\n")
        };
        let both = second("a", false).replace("to = \"a\"", "to = \"b\"");
        let (key, _, _, message) = refused(&both, Backend::Emulate);
        assert_eq!(key, "traffic[1].ecn");
        assert!(message.contains("net.ipv4.tcp_ecn") && message.contains("traffic[0]"), "{message}");
        // The receiving host's setting does not matter: Linux accepts ECN when asked.
        assert!(load_for(&second("b", false), "s.toml", &[], Backend::Emulate).is_ok());
        assert!(load_for(&both, "s.toml", &[], Backend::Simulate).is_ok());
    }

    /// TCP keys the kernel cannot honour are refused naming the key; those
    /// set on a route or per namespace must agree between the groups
    /// sharing it (`linux_tcp`).
    #[test]
    fn emulation_refuses_tcp_keys_the_kernel_cannot_honour() {
        let with = |keys: &str| format!("{TCP}{keys}\n");
        let (key, line, _, message) = refused(&with("granularity = \"10ms\""), Backend::Emulate);
        assert_eq!((key.as_str(), line), ("traffic[0].granularity", 19));
        assert!(message.contains("clock-granularity") && message.contains("cannot run it"), "{message}");
        assert!(load_for(&with("granularity = \"10ms\""), "s.toml", &[], Backend::Simulate).is_ok());
        let honoured =
            "initial_window = 4\nmss = \"1000B\"\nmin_rto = \"300ms\"\ndelayed_ack = false\nheader = \"40B\"";
        assert!(load_for(&with(honoured), "s.toml", &[], Backend::Emulate).is_ok());
        let second = |keys: &str, from: &str, to: &str| {
            format!(
                "{TCP}initial_window = 4\n[[traffic]]\nname = \"other\"\nkind = \"tcp\"\nfrom = \"{from}\"\nto = \"{to}\"\n\
                 class = \"be\"\nprofile = \"linux\"\n{keys}\n"
            )
        };
        let (key, _, _, message) = refused(&second("", "a", "b"), Backend::Emulate);
        assert_eq!(key, "traffic[1].initial_window");
        assert!(message.contains("initcwnd") && message.contains("traffic[0]"), "{message}");
        assert!(load_for(&second("initial_window = 4", "a", "b"), "s.toml", &[], Backend::Emulate).is_ok());
        // The reverse direction has a route of its own.
        assert!(load_for(&second("", "b", "a"), "s.toml", &[], Backend::Emulate).is_ok());
        let (key, _, _, message) = refused(&second("initial_window = 4\nheader = \"40B\"", "b", "a"), Backend::Emulate);
        assert_eq!(key, "traffic[1].header");
        assert!(message.contains("net.ipv4.tcp_timestamps"), "{message}");
    }

    /// A phased application runs on both: the emulator's agent drives the
    /// socket with the simulator's application.
    #[test]
    fn a_phased_application_runs_on_both_backends() {
        let phases = format!(
            "{TCP}app = \"phases\"\nphases = [{{ from = \"0s\", mode = \"greedy\" }}, \
             {{ from = \"1s\", mode = \"chunks\", chunk = \"8KiB\", pause = \"175ms\" }}]\n"
        );
        for backend in [Backend::Simulate, Backend::Emulate] {
            assert!(load_for(&phases, "s.toml", &[], backend).is_ok(), "{backend}");
        }
    }

    /// Both backends run AAL5 framing and flow-count schedules; an LSP
    /// runs emulated only with the passive window estimate (the router
    /// cannot read the hosts' windows), naming the LSP's key otherwise.
    #[test]
    fn framing_schedules_and_passive_lsps_run_on_both_backends() {
        let atm = TCP.replace("delay = \"1ms\"\n", "delay = \"1ms\"\nframing = \"aal5\"\n");
        let scheduled = format!("{TCP}schedule = [{{ at = \"0s\", count = 1 }}, {{ at = \"1s\", count = 2 }}]\n");
        let lsp = |window: &str| {
            TCP.replace("be = 0\n", "be = 10\nout = 14\n")
                + &format!(
                    "[lsps.af]\ningress = \"a->b\"\nrtt = \"100ms\"\npacket_size = \"1500B\"\nwindow = \"{window}\"\n\
                     members = [{{ groups = [\"bulk\"], r = \"1Mbps\" }}]\n"
                )
        };
        for text in [&atm, &scheduled, &lsp("passive")] {
            for backend in [Backend::Simulate, Backend::Emulate] {
                assert!(load_for(text, "s.toml", &[], backend).is_ok(), "{backend}: {text}");
            }
        }
        let oracle = lsp("cwnd");
        assert!(load_for(&oracle, "s.toml", &[], Backend::Simulate).is_ok());
        let (key, line, _, message) = refused(&oracle, Backend::Emulate);
        assert_eq!((key.as_str(), line), ("lsps.af.window", 24));
        assert!(message.contains("window = \"passive\"") && message.contains("cannot run it"), "{message}");
    }

    #[test]
    fn backends_are_named() {
        for backend in [Backend::Simulate, Backend::Emulate] {
            assert_eq!(Backend::from_name(&backend.to_string()), Some(backend));
        }
        assert_eq!(Backend::from_name("ns3"), None);
    }

    /// A command entry (`kind = "command"`) written before a TCP group.
    fn with_command(command: &str) -> String {
        let (head, group) = TCP.split_at(TCP.find("[[traffic]]").unwrap());
        format!("{head}[[traffic]]\nname = \"cmd\"\nkind = \"command\"\n{command}\n{group}")
    }

    /// The simulator refuses a command naming `traffic[i].kind`; the
    /// emulator takes it, and the groups after it keep their positions in
    /// messages (`traffic[1]`, not the group's index 0).
    #[test]
    fn a_command_runs_only_emulated_and_groups_after_it_keep_their_keys() {
        let text = with_command("host = \"a\"\nargv = [\"/bin/sh\", \"-c\", \"exit 0\"]\nclass = \"be\"");
        let (key, _, _, message) = refused(&text, Backend::Simulate);
        assert_eq!(key, "traffic[0].kind");
        assert!(message.contains("only with `phblab emulate`"), "{message}");
        let scenario = load_for(&text, "s.toml", &[], Backend::Emulate).unwrap();
        assert_eq!((scenario.commands.len(), scenario.groups.len()), (1, 1));
        assert_eq!((scenario.commands[0].index, scenario.traffic_index(0)), (0, 1));
        assert_eq!(scenario.commands[0].class, Some(0));
        let ns2 = text.replace("\"linux\"", "\"ns2\"");
        assert_eq!(refused(&ns2, Backend::Emulate).0, "traffic[1].profile");
    }

    #[test]
    fn a_command_is_validated_naming_its_key() {
        let cases = [
            ("host = \"a\"\nargv = []", "traffic[0].argv", "give the program"),
            ("host = \"a\"", "traffic[0].argv", "needs `argv`"),
            ("argv = [\"true\"]", "traffic[0].host", "needs `host`"),
            ("host = \"z\"\nargv = [\"true\"]", "traffic[0].host", "not a node"),
            ("host = \"a\"\nargv = [\"true\"]\nstop = \"3s\"", "traffic[0].stop", "after the run's end"),
            ("host = \"a\"\nargv = [\"true\"]\nstart = \"1s\"\nstop = \"1s\"", "traffic[0].stop", "must be before"),
            ("host = \"a\"\nargv = [\"true\"]\nfrom = \"a\"", "traffic[0].from", "does not apply to a command"),
            ("host = \"a\"\nargv = [\"true\"]\nprofile = \"linux\"", "traffic[0].profile", "does not apply"),
            ("host = \"a\"\nargv = [\"ping\", \"{addr:q}\"]", "traffic[0].argv", "q is not a node"),
            ("host = \"a\"\nargv = [\"ping\", \"{addr:b\"]", "traffic[0].argv", "without its `}`"),
            ("host = \"a\"\nargv = [\"true\"]\nclass = \"ef\"", "traffic[0].class", "not a class"),
        ];
        for (keys, key, part) in cases {
            let (k, _, _, message) = refused(&with_command(keys), Backend::Emulate);
            assert_eq!(k, key, "{keys}: {message}");
            assert!(message.contains(part), "{keys}: {message}");
        }
        let (k, _, _, message) =
            refused(&TCP.replace("profile = \"linux\"", "profile = \"linux\"\nhost = \"a\""), Backend::Simulate);
        assert_eq!(k, "traffic[0].host", "{message}");
        assert!(message.contains("only to kind = \"command\""), "{message}");
    }

    /// What the machine decides is checked for the emulator only: the
    /// program on PATH (or the command's own PATH) or as a path.
    #[test]
    fn a_command_s_program_must_exist_for_the_emulator() {
        let missing = with_command("host = \"a\"\nargv = [\"no-such-program-phblab\"]");
        let (key, _, _, message) = refused(&missing, Backend::Emulate);
        assert_eq!(key, "traffic[0].argv");
        assert!(message.contains("not found on PATH"), "{message}");
        let (key, _, _, message) = refused(&with_command("host = \"a\"\nargv = [\"/no/such/file\"]"), Backend::Emulate);
        assert_eq!(key, "traffic[0].argv");
        assert!(message.contains("no such executable file"), "{message}");
        let own_path = with_command("host = \"a\"\nargv = [\"sh\"]\nenv = { PATH = \"/nowhere\" }");
        assert_eq!(refused(&own_path, Backend::Emulate).0, "traffic[0].argv");
        assert!(load_for(&with_command("host = \"a\"\nargv = [\"sh\"]"), "s.toml", &[], Backend::Emulate).is_ok());
        let cwd = with_command("host = \"a\"\nargv = [\"sh\"]\ncwd = \"/no/such/dir\"");
        assert_eq!(refused(&cwd, Backend::Emulate).0, "traffic[0].cwd");
    }

    /// The router gives a host's programs' packets one class.
    #[test]
    fn two_commands_at_one_host_share_a_class() {
        let text = with_command("host = \"a\"\nargv = [\"sh\"]\nclass = \"be\"")
            .replace("[classes]\nbe = 0\n", "[classes]\nbe = 0\nef = 46\n")
            .replace(
                "[[traffic]]\nname = \"bulk\"",
                "[[traffic]]\nname = \"c2\"\nkind = \"command\"\nhost = \"a\"\nargv = [\"sh\"]\nclass = \"ef\"\n[[traffic]]\nname = \"bulk\"",
            );
        let (key, _, _, message) = refused(&text, Backend::Emulate);
        assert_eq!(key, "traffic[1].class");
        assert!(message.contains("share one class"), "{message}");
    }
}
