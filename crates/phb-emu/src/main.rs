//! The `phb-emu` command, which `phblab emulate` runs:
//!
//! ```text
//! phb-emu check                       exit 0 if this process may emulate, else 2 and why
//! phb-emu run SCENARIO --out DIR [--seed N] [--congestion CC] [--set KEY=VALUE]...
//!                                     [--source-name NAME] [--spin-us US] [--shell HOST]
//!                                     emulate; writes classes.parquet, flows.parquet
//!                                     and emulation.json into DIR (which must exist),
//!                                     and the packet trace a [trace] section asks for
//!                                     (events.parquet, trace.pcapng);
//!                                     NAME stands for the file in messages; the
//!                                     router polls instead of sleeping in the last
//!                                     US microseconds before each timer (default 0);
//!                                     HOST: a shell ($SHELL, else /bin/sh) in that
//!                                     host's namespace on this terminal while the run
//!                                     lasts (leaving it early does not end the run;
//!                                     its process group is killed at the end)
//! phb-emu agent SCENARIO --host NODE --seed N --epoch NS --congestion CC --out DIR [--set ...]
//!                                     (internal) a host's traffic agents; their
//!                                     TCP_INFO samples go into DIR
//! ```
//!
//! Exit status: 0 done, 1 the emulation failed (an agent ended during the
//! run, say), 2 bad input or missing privileges (one line on stderr), 130
//! stopped by SIGINT or SIGTERM (no results written).
//!
//! `run` dies with the process that started it (SIGTERM when it ends,
//! `PR_SET_PDEATHSIG`), its agents with it (SIGKILL); each process carries
//! its emulation's owner in `PHBLAB_EMULATION` (`sys::OWNER_VARIABLE`).
//! Results are written as new files (`O_EXCL`, `O_NOFOLLOW`) into DIR,
//! which `phblab emulate` creates fresh for each run.

use std::path::PathBuf;
use std::process::ExitCode;

use phb::Time;
use phb_emu::plan::{plan, CONGESTION_CONTROLS};
use phb_emu::{agent, commands, hosts, report, router, sys, tcp_info, trace};
use phb_sim::scenario::NodeKind;
use phb_sim::Scenario;

/// Packet buffers of the router (2 KiB each).
const POOL_SLOTS: usize = 16384;
/// Time between starting the agents and the run's time 0.
const START_MARGIN: Time = Time::from_millis(300);

enum Failure {
    BadInput(String),
    Failed(String),
    Interrupted,
}

#[derive(Default)]
struct Args {
    positional: Vec<String>,
    out: Option<PathBuf>,
    seed: Option<u64>,
    congestion: Option<String>,
    host: Option<usize>,
    epoch: Option<u64>,
    sets: Vec<String>,
    source_name: Option<String>,
    spin_us: Option<u64>,
    shell: Option<String>,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value"));
        let number = |name: &str, v: String| v.parse::<u64>().map_err(|_| format!("{name}: {v:?} is not a number"));
        match arg.as_str() {
            "--out" => parsed.out = Some(value("--out")?.into()),
            "--seed" => parsed.seed = Some(number("--seed", value("--seed")?)?),
            "--congestion" => parsed.congestion = Some(value("--congestion")?),
            "--host" => parsed.host = Some(number("--host", value("--host")?)? as usize),
            "--epoch" => parsed.epoch = Some(number("--epoch", value("--epoch")?)?),
            "--set" => parsed.sets.push(value("--set")?),
            "--source-name" => parsed.source_name = Some(value("--source-name")?),
            "--shell" => parsed.shell = Some(value("--shell")?),
            "--spin-us" => {
                let us = number("--spin-us", value("--spin-us")?)?;
                if us > 1_000_000 {
                    return Err(format!("--spin-us {us}: at most 1000000 (1 s)"));
                }
                parsed.spin_us = Some(us);
            }
            other if other.starts_with("--") => return Err(format!("unknown option {other}")),
            other => parsed.positional.push(other.to_owned()),
        }
    }
    Ok(parsed)
}

fn load(args: &Args) -> Result<(Scenario, String), Failure> {
    let [path] = args.positional.as_slice() else {
        return Err(Failure::BadInput("give one scenario file".into()));
    };
    let text = std::fs::read_to_string(path).map_err(|e| Failure::BadInput(format!("{path}: {e}")))?;
    let name = args.source_name.as_deref().unwrap_or(path);
    let scenario = phb_sim::load_for(&text, name, &args.sets, phb_sim::Backend::Emulate)
        .map_err(|e| Failure::BadInput(e.to_string()))?;
    let congestion = args.congestion.clone().unwrap_or_else(|| "reno".into());
    if !CONGESTION_CONTROLS.contains(&congestion.as_str()) {
        return Err(Failure::BadInput(format!(
            "--congestion {congestion}: expected one of {}",
            CONGESTION_CONTROLS.join(", ")
        )));
    }
    Ok((scenario, congestion))
}

/// Whether the kernel offers congestion control `name` (read from the
/// current namespace, never written).
fn congestion_available(name: &str) -> bool {
    let allowed = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap_or_default();
    allowed.split_whitespace().any(|c| c == name)
}

/// Makes the router die with the process that started it (SIGTERM, so it
/// stops its agents and ends as on Ctrl-C), checked at once; returns the
/// emulation's owner for [`sys::OWNER_VARIABLE`]: the variable's value if
/// `phblab emulate` set it (its pid is then the expected parent), else
/// this process.
fn watch_parent() -> Result<String, Failure> {
    // SAFETY: getppid has no arguments and cannot fail.
    let parent = unsafe { libc::getppid() } as u32;
    let given = std::env::var(sys::OWNER_VARIABLE).ok();
    let owner_pid = given.as_deref().and_then(|v| v.split_once(':')).and_then(|(pid, _)| pid.parse().ok());
    sys::die_with_parent(libc::SIGTERM, owner_pid.unwrap_or(parent))
        .map_err(|e| Failure::Failed(format!("watching the process that started phb-emu: {e}")))?;
    Ok(match (given, owner_pid) {
        (Some(value), Some(_)) => value,
        _ => {
            let pid = std::process::id();
            format!("{pid}:{}", sys::start_time(pid).unwrap_or(0))
        }
    })
}

/// The first agent that has ended, as a message naming its node and how.
fn ended_agent(agents: &mut [std::process::Child], nodes: &[String]) -> Option<String> {
    agents.iter_mut().zip(nodes).find_map(|(child, node)| match child.try_wait() {
        Ok(Some(status)) => Some(format!("the agent of node {node} ended during the run ({status})")),
        _ => None,
    })
}

fn run(args: &Args) -> Result<(), Failure> {
    let owner = watch_parent()?;
    let (scenario, congestion) = load(args)?;
    let seed = args.seed.unwrap_or(scenario.run.seed);
    let source = args.source_name.as_deref().unwrap_or(&args.positional[0]);
    let is_host = |n: &usize| scenario.nodes[*n].kind == NodeKind::Host;
    let shell_node = match &args.shell {
        Some(name) => Some(
            (0..scenario.nodes.len()).filter(is_host).find(|&n| scenario.nodes[n].name == *name).ok_or_else(|| {
                let hosts: Vec<&str> =
                    (0..scenario.nodes.len()).filter(is_host).map(|n| scenario.nodes[n].name.as_str()).collect();
                Failure::BadInput(format!(
                    "--shell {name}: not a host of the scenario (its hosts: {})",
                    hosts.join(", ")
                ))
            })?,
        ),
        None => None,
    };
    let plan = plan(&scenario, seed, shell_node)
        .map_err(|e| Failure::BadInput(format!("{source}: cannot be emulated: {e}")))?;
    if let Some(missing) = sys::missing_privileges() {
        return Err(Failure::BadInput(missing));
    }
    let out = args.out.clone().ok_or_else(|| Failure::BadInput("--out DIR is required".into()))?;
    if !out.is_dir() {
        return Err(Failure::BadInput(format!("--out {}: not a directory", out.display())));
    }
    let trace = match &scenario.trace {
        Some(def) => Some(Box::new(
            trace::Trace::open(&scenario, &plan, def, &out, seed)
                .map_err(|e| Failure::Failed(format!("creating the packet trace: {e}")))?,
        )),
        None => None,
    };
    let shell_host = shell_node.map(|node| plan.hosts.iter().position(|&n| n == node).expect("a host"));
    for (f, flow) in plan.flows.iter().enumerate().filter(|(_, f)| f.tcp) {
        let (asked, key) = match flow.congestion {
            Some(c) => (c.name(), format!("traffic[{}].congestion", flow.group)),
            None => (congestion.as_str(), "--congestion".to_owned()),
        };
        if !congestion_available(asked) {
            return Err(Failure::BadInput(format!(
                "{key} {asked} (flow {}): not offered by this kernel (net.ipv4.tcp_available_congestion_control)",
                plan.flows[f].name
            )));
        }
    }
    sys::catch_stop_signals();
    sys::catch_child_exits();
    sys::tight_timers();
    let hosts = hosts::create(&plan).map_err(Failure::Failed)?;
    let epoch = sys::monotonic() + START_MARGIN;
    let program = std::env::current_exe().map_err(|e| Failure::Failed(format!("finding phb-emu: {e}")))?;
    let mut agents = Vec::with_capacity(hosts.len());
    for host in &hosts {
        let mut agent_args = vec![
            "agent".to_owned(),
            args.positional[0].clone(),
            "--host".into(),
            host.node.to_string(),
            "--seed".into(),
            seed.to_string(),
            "--epoch".into(),
            epoch.as_nanos().to_string(),
            "--congestion".into(),
            congestion.clone(),
            "--out".into(),
            out.display().to_string(),
        ];
        for set in &args.sets {
            agent_args.extend(["--set".to_owned(), set.clone()]);
        }
        match hosts::spawn_in(host, &program, &agent_args, &owner) {
            Ok(child) => agents.push(child),
            Err(e) => {
                stop_agents(&mut agents);
                return Err(Failure::Failed(format!("starting the agents of node {}: {e}", host.node)));
            }
        }
    }
    let mut shell = match shell_host {
        Some(h) => {
            let program = std::env::var_os("SHELL").filter(|s| !s.is_empty()).unwrap_or_else(|| "/bin/sh".into());
            let name = &scenario.nodes[hosts[h].node].name;
            match hosts::spawn_shell(&hosts[h], std::path::Path::new(&program), name, &owner) {
                Ok(child) => Some(child),
                Err(e) => {
                    stop_agents(&mut agents);
                    return Err(Failure::Failed(format!(
                        "starting the shell ({}) of host {name}: {e}",
                        program.to_string_lossy()
                    )));
                }
            }
        }
        None => None,
    };
    let agent_nodes: Vec<String> = hosts.iter().map(|h| scenario.nodes[h.node].name.clone()).collect();
    let mut tun: Vec<Option<_>> = (0..scenario.nodes.len()).map(|_| None).collect();
    let mut netns: Vec<Option<std::fs::File>> = (0..scenario.nodes.len()).map(|_| None).collect();
    for host in hosts {
        tun[host.node] = Some(host.tun);
        netns[host.node] = Some(host.netns);
    }
    let mut commands =
        match commands::Commands::new(&scenario, netns.iter().map(Option::as_ref).collect(), &out, &owner, epoch) {
            Ok(commands) => commands,
            Err(e) => {
                stop_agents(&mut agents);
                return Err(Failure::Failed(format!("creating {}: {e}", out.join("commands").display())));
            }
        };
    let mut router = router::Router::new(&scenario, &plan, seed, tun, POOL_SLOTS);
    router.spin = Time::from_micros(args.spin_us.unwrap_or(0));
    router.trace = trace;
    sys::sleep_until(epoch);
    let cpu_at_start = sys::cpu_time();
    let end = scenario.run.duration;
    // The router runs to the run's end, pausing for the commands' events;
    // a command or the shell ending (or stopping) does not end the run.
    let mut reached = Time::ZERO;
    let mut failed = None;
    while !sys::stop_requested() && reached < end {
        if sys::child_ended() {
            sys::forget_child_ended();
            if ended_agent(&mut agents, &agent_nodes).is_some() {
                break;
            }
        }
        if let Err(e) = commands.act(reached) {
            failed = Some(e);
            break;
        }
        reached = router.run(epoch, commands.next_event().unwrap_or(end));
    }
    let cpu = sys::cpu_time() - cpu_at_start;
    let traced = router.trace.as_mut().map_or(Ok(()), |t| t.finish());
    commands.finish();
    drop(shell.take());
    if let Some(ended) = ended_agent(&mut agents, &agent_nodes).or(failed) {
        stop_agents(&mut agents);
        return Err(Failure::Failed(ended));
    }
    if sys::stop_requested() {
        stop_agents(&mut agents);
        return Err(Failure::Interrupted);
    }
    let samplers: Vec<usize> =
        plan.hosts.iter().copied().filter(|&h| plan.flows.iter().any(|f| f.src == h && f.tcp)).collect();
    let missing = tcp_info::wait_for(&out, &samplers);
    stop_agents(&mut agents);
    traced.map_err(|e| Failure::Failed(format!("writing the packet trace: {e}")))?;
    if let Some(node) = missing.first() {
        return Err(Failure::Failed(format!(
            "the agent of node {} wrote no TCP_INFO samples",
            scenario.nodes[*node].name
        )));
    }
    let reports = tcp_info::read(&out, &samplers)
        .map_err(|e| Failure::Failed(format!("reading the agents' TCP_INFO samples: {e}")))?;
    let outcomes = commands.outcomes();
    let facts = report::Facts {
        seed,
        congestion: &congestion,
        reached_s: reached.as_secs_f64(),
        cpu_s: cpu.as_secs_f64(),
        commands: &outcomes,
    };
    report::write(&out, &scenario, &plan, &mut router, &reports, &facts)
        .map_err(|e| Failure::Failed(format!("writing results to {}: {e}", out.display())))
}

fn stop_agents(agents: &mut [std::process::Child]) {
    for child in agents.iter_mut() {
        let _ = child.kill();
    }
    for child in agents.iter_mut() {
        let _ = child.wait();
    }
}

fn run_agent(args: &Args) -> Result<(), Failure> {
    let (scenario, congestion) = load(args)?;
    let (Some(host), Some(seed), Some(epoch), Some(out)) = (args.host, args.seed, args.epoch, args.out.as_deref())
    else {
        return Err(Failure::BadInput("agent needs --host, --seed, --epoch and --out".into()));
    };
    let plan = plan(&scenario, seed, None).map_err(Failure::BadInput)?;
    let setting = agent::Setting { host, seed, epoch: Time::from_nanos(epoch), congestion: &congestion, out };
    Err(Failure::Failed(agent::run(&scenario, &plan, &setting)))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprintln!("phb-emu: give a command: run, check or agent");
        return ExitCode::from(2);
    };
    let result = parse_args(rest).map_err(Failure::BadInput).and_then(|parsed| match command.as_str() {
        "run" => run(&parsed),
        "agent" => run_agent(&parsed),
        "check" => sys::missing_privileges().map_or(Ok(()), |m| Err(Failure::BadInput(m))),
        other => Err(Failure::BadInput(format!("unknown command {other}; expected run, check or agent"))),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(message)) => {
            eprintln!("phb-emu: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Failed(message)) => {
            eprintln!("phb-emu: {message}");
            ExitCode::from(1)
        }
        Err(Failure::Interrupted) => ExitCode::from(130),
    }
}
