//! Validation of `kind = "command"` traffic entries: a program the
//! emulator runs in a host's namespace (`phb-emu`'s `commands.rs`). What
//! needs the machine (the program on `PATH`) is checked for the emulate
//! backend (`backend.rs`); the simulator refuses the kind there.

use phb::Time;

use super::tcp::tcp_keys;
use super::{class_index, udp_source_keys, Context, Nodes, Result};
use crate::scenario::location::join;
use crate::scenario::model::{address_references, ClassDef, CommandDef, RunConfig};
use crate::scenario::raw;

/// The keys a command takes.
const COMMAND_KEYS: [&str; 9] = ["name", "kind", "host", "argv", "env", "cwd", "class", "start", "stop"];

/// The keys only a command takes, and whether each is set.
pub(super) fn command_keys(t: &raw::Traffic) -> [(&'static str, bool); 4] {
    [("host", t.host.is_some()), ("argv", t.argv.is_some()), ("env", t.env.is_some()), ("cwd", t.cwd.is_some())]
}

impl Context<'_> {
    /// Traffic entry `i`, of kind `command`, named `name`.
    pub(super) fn command(
        &self,
        i: usize,
        name: &str,
        t: &raw::Traffic,
        run: &RunConfig,
        classes: &[ClassDef],
        nodes: &Nodes,
    ) -> Result<CommandDef> {
        let path = format!("traffic[{i}]");
        let key = |k: &str| join(&path, k);
        if self.origins.group_source(i).is_some() {
            return Err(self.err(&key("kind"), "a generator's traffic cannot be a command; write it as its own entry"));
        }
        let other = [
            ("from", t.from.is_some()),
            ("to", t.to.is_some()),
            ("count", t.count.is_some()),
            ("shape", t.shape.is_some()),
            ("start_jitter", t.start_jitter.is_some()),
            ("schedule", t.schedule.is_some()),
            ("path", t.path.is_some()),
        ];
        let present: Vec<(&'static str, bool)> =
            other.into_iter().chain(udp_source_keys(t)).chain(tcp_keys(t)).collect();
        self.only(&path, "a command", &present, &COMMAND_KEYS)?;
        let what = "a command";
        let host_name = self.required(&path, "host", &t.host, what)?;
        let host = self.host(nodes, &key("host"), host_name)?;
        let argv = self.required(&path, "argv", &t.argv, what)?;
        match argv.first() {
            None => {
                return Err(self.err(
                    &key("argv"),
                    "give the program and its arguments, e.g. [\"ping\", \"-c\", \"3\", \"10.77.0.2\"]",
                ))
            }
            Some(program) if program.is_empty() => return Err(self.err(&key("argv"), "the program (argv[0]) is empty")),
            Some(_) => {}
        }
        if argv.iter().any(|a| a.contains('\0')) {
            return Err(self.err(&key("argv"), "an argument holds a NUL character"));
        }
        for arg in argv {
            for name in address_references(arg) {
                let name = name.map_err(|m| self.err(&key("argv"), m))?;
                self.host(nodes, &key("argv"), name)?;
            }
        }
        let mut env = Vec::new();
        for (variable, value) in t.env.iter().flatten() {
            if variable.is_empty() || variable.contains('=') || variable.contains('\0') || value.contains('\0') {
                return Err(self.err(
                    &key("env"),
                    format!("{variable:?}: a variable's name is not empty and holds no `=`, and neither holds a NUL"),
                ));
            }
            env.push((variable.clone(), value.clone()));
        }
        if let Some(cwd) = &t.cwd {
            if cwd.is_empty() || cwd.contains('\0') {
                return Err(self.err(&key("cwd"), "give a directory"));
            }
        }
        let class = match &t.class {
            Some(c) => Some(class_index(classes, c).map_err(|m| self.err(&key("class"), m))?),
            None => None,
        };
        let start = self.time_or(&key("start"), &t.start, Time::ZERO)?;
        let stop = self.time_or(&key("stop"), &t.stop, run.duration)?;
        if start >= stop {
            let at = if t.stop.is_some() { "stop" } else { "start" };
            return Err(self.err(&key(at), format!("start ({start}) must be before stop ({stop})")));
        }
        if stop > run.duration {
            return Err(self.err(&key("stop"), format!("stop ({stop}) is after the run's end ({})", run.duration)));
        }
        Ok(CommandDef {
            name: name.to_owned(),
            index: i,
            host,
            argv: argv.clone(),
            env,
            cwd: t.cwd.clone(),
            class,
            start,
            stop,
        })
    }

    /// A traffic group of another kind must not carry a command's keys.
    pub(super) fn no_command_keys(&self, path: &str, t: &raw::Traffic) -> Result<()> {
        match command_keys(t).iter().find(|(_, set)| *set) {
            Some((key, _)) => Err(self.err(&join(path, key), format!("`{key}` applies only to kind = \"command\""))),
            None => Ok(()),
        }
    }
}
