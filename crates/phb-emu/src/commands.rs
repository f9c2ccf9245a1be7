//! The scenario's commands (`kind = "command"` traffic entries): programs
//! run in hosts' namespaces on the run's clock.
//!
//! Each starts at its `start` in a process group of its own
//! ([`hosts::spawn_group`], the `--shell`'s code), with `PHBLAB_HOST` set
//! to its host's name and its `env` and `cwd`, standard input empty and
//! standard output and error written to `commands/<i>.out` and
//! `commands/<i>.err` of the output directory (new files, never through a
//! link; `i` is its position in `traffic`). At its `stop`, or when the run
//! ends, fails or is interrupted, its whole group gets SIGTERM, and SIGKILL
//! [`GRACE`] later (at once if every program has ended by then); a panic
//! kills the groups as it unwinds ([`hosts::Group`]'s drop). So nothing a
//! command started outlives the run, except a process that left its group
//! (`setsid`) — which only a router killed with SIGKILL leaves behind, and
//! `phblab emulate --cleanup` stops (it carries the emulation's mark).

use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use phb::Time;
use phb_sim::scenario::{address_references, CommandDef, Scenario, ADDRESS_REFERENCE};

use crate::hosts::{self, Group};
use crate::plan::host_addr;
use crate::sys;

/// The time between SIGTERM and SIGKILL.
pub const GRACE: Time = Time::from_millis(500);

/// Where a command is.
enum State {
    Waiting,
    Running(Group),
    /// SIGTERM sent; SIGKILL due at the time given.
    Stopping(Group, Time),
    Done,
}

/// One command and what became of it.
struct Program<'s> {
    def: &'s CommandDef,
    state: State,
    /// When it started and when it was stopped (run time), and whether it
    /// had ended by itself before.
    started: Option<Time>,
    stopped: Option<Time>,
    ended_by_itself: bool,
    status: Option<ExitStatus>,
}

/// The scenario's commands.
pub struct Commands<'s> {
    scenario: &'s Scenario,
    programs: Vec<Program<'s>>,
    /// Per host node: its namespace, while the run lasts.
    netns: Vec<Option<&'s std::fs::File>>,
    dir: std::path::PathBuf,
    owner: String,
    /// The monotonic time of the run's time 0.
    epoch: Time,
}

impl<'s> Commands<'s> {
    /// The commands of `scenario`, run in the namespaces `netns` (per
    /// node) on the run's clock (time 0 at the monotonic time `epoch`),
    /// writing their output into `out/commands/` (created here when there
    /// is a command).
    pub fn new(
        scenario: &'s Scenario,
        netns: Vec<Option<&'s std::fs::File>>,
        out: &Path,
        owner: &str,
        epoch: Time,
    ) -> std::io::Result<Self> {
        let dir = out.join("commands");
        if !scenario.commands.is_empty() {
            std::fs::create_dir(&dir)?;
        }
        let programs = scenario
            .commands
            .iter()
            .map(|def| Program {
                def,
                state: State::Waiting,
                started: None,
                stopped: None,
                ended_by_itself: false,
                status: None,
            })
            .collect();
        Ok(Commands { scenario, programs, netns, dir, owner: owner.to_owned(), epoch })
    }

    /// The next time (run time) at which [`Self::act`] has something to do.
    pub fn next_event(&self) -> Option<Time> {
        self.programs
            .iter()
            .filter_map(|p| match &p.state {
                State::Waiting => Some(p.def.start),
                State::Running(_) => Some(p.def.stop),
                State::Stopping(_, kill_at) => Some(*kill_at),
                State::Done => None,
            })
            .min()
    }

    /// Starts the commands whose start has come, stops those whose stop has
    /// come (SIGTERM), and kills those whose grace is over, at run time `now`.
    pub fn act(&mut self, now: Time) -> Result<(), String> {
        for i in 0..self.programs.len() {
            let due = |t: Time| t <= now;
            let (start, stop) = (self.programs[i].def.start, self.programs[i].def.stop);
            match std::mem::replace(&mut self.programs[i].state, State::Done) {
                State::Waiting if due(start) => {
                    let group = self.start(i)?;
                    self.programs[i].started = Some(now);
                    self.programs[i].state = State::Running(group);
                }
                State::Running(group) if due(stop) => {
                    let program = &mut self.programs[i];
                    program.state = Self::terminate(program, group, now);
                }
                State::Stopping(mut group, kill_at) if due(kill_at) => self.programs[i].status = group.kill(),
                state => self.programs[i].state = state,
            }
        }
        Ok(())
    }

    /// SIGTERM to `program`'s group at `now`; SIGKILL due [`GRACE`] later.
    fn terminate(program: &mut Program, group: Group, now: Time) -> State {
        program.ended_by_itself = group.ended();
        program.stopped = Some(now);
        group.signal(libc::SIGTERM);
        State::Stopping(group, now + GRACE)
    }

    /// Starts command `i`.
    fn start(&self, i: usize) -> Result<Group, String> {
        let def = self.programs[i].def;
        let index = def.index;
        let failed = |what: &str, e: std::io::Error| format!("traffic[{index}] (command {}): {what}: {e}", def.name);
        let file = |ext: &str| {
            let path = self.dir.join(format!("{index}.{ext}"));
            sys::create_new_file(&path).map_err(|e| failed(&format!("creating {}", path.display()), e))
        };
        let mut command = Command::new(&def.argv[0]);
        command
            .args(def.argv[1..].iter().map(|a| with_addresses(a, self.scenario)))
            .stdin(Stdio::null())
            .stdout(file("out")?)
            .stderr(file("err")?);
        let [a, b, c, d] = host_addr(def.host);
        command
            .env("PHBLAB_HOST", &self.scenario.nodes[def.host].name)
            .env("PHBLAB_ADDR", format!("{a}.{b}.{c}.{d}"))
            .envs(def.env.iter().cloned());
        if let Some(cwd) = &def.cwd {
            command.current_dir(cwd);
        }
        let netns = self.netns[def.host].expect("a command runs at a host");
        hosts::spawn_group(netns, command, &self.owner).map_err(|e| failed(&format!("starting {:?}", def.argv[0]), e))
    }

    /// Stops every command still running (SIGTERM to its group, SIGKILL
    /// when every program has ended or [`GRACE`] has passed); commands not
    /// yet started never start.
    pub fn finish(&mut self) {
        let now = sys::monotonic().saturating_sub(self.epoch);
        let mut stopping = false;
        for program in &mut self.programs {
            program.state = match std::mem::replace(&mut program.state, State::Done) {
                State::Running(group) => {
                    stopping = true;
                    Self::terminate(program, group, now)
                }
                State::Stopping(group, kill_at) => {
                    stopping = true;
                    State::Stopping(group, kill_at)
                }
                _ => State::Done,
            };
        }
        if stopping {
            let deadline = sys::monotonic() + GRACE;
            let ended = |p: &Program| match &p.state {
                State::Stopping(group, _) => group.ended(),
                _ => true,
            };
            while !self.programs.iter().all(ended) && sys::monotonic() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        for program in &mut self.programs {
            if let State::Stopping(mut group, _) = std::mem::replace(&mut program.state, State::Done) {
                program.status = group.kill();
            }
        }
    }

    /// What became of each command, in file order.
    pub fn outcomes(&self) -> Vec<Outcome<'s>> {
        self.programs
            .iter()
            .map(|p| Outcome {
                def: p.def,
                started: p.started,
                stopped: p.stopped,
                how: match (p.started, p.stopped) {
                    (None, _) => "not started",
                    (Some(_), Some(_)) if !p.ended_by_itself => "stopped",
                    (Some(_), _) => "exited",
                },
                status: p.status,
            })
            .collect()
    }
}

/// What became of a command: when it started and was stopped (run time),
/// how it ended ("exited" by itself, "stopped" at its stop or the run's
/// end, or "not started") and its exit status.
pub struct Outcome<'s> {
    pub def: &'s CommandDef,
    pub started: Option<Time>,
    pub stopped: Option<Time>,
    pub how: &'static str,
    pub status: Option<ExitStatus>,
}

impl Drop for Commands<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `arg` with each `{addr:NAME}` replaced by host NAME's address
/// (validation checked that NAME is a host).
fn with_addresses(arg: &str, scenario: &Scenario) -> String {
    let mut out = arg.to_owned();
    for name in address_references(arg).flatten() {
        if let Some(node) = scenario.nodes.iter().position(|n| n.name == name) {
            let [a, b, c, d] = host_addr(node);
            out = out.replace(&format!("{ADDRESS_REFERENCE}{name}}}"), &format!("{a}.{b}.{c}.{d}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_references_become_the_hosts_addresses() {
        let text = "[run]\nduration = \"1s\"\n[classes]\nbe = 0\n[nodes]\nhosts = [\"a\", \"b\"]\n\
                    [[links]]\nbetween = [\"a\", \"b\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
        let scenario = phb_sim::load(text, "t", &[]).unwrap();
        assert_eq!(with_addresses("{addr:b}", &scenario), "10.77.0.2");
        assert_eq!(with_addresses("http://{addr:a}:80/{addr:b}", &scenario), "http://10.77.0.1:80/10.77.0.2");
        assert_eq!(with_addresses("{x}", &scenario), "{x}");
    }
}
