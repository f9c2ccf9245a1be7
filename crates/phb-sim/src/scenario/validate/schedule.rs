//! Validation of a traffic group's flow-count `schedule` (the BEDS paper's
//! Table 1: 80 TCP flows, 160 from 200 s, 80 again from 400 s):
//! `schedule = [{ at = "0s", count = 80 }, { at = "200s", count = 160 }, ...]`.
//!
//! From each step's `at` on, `count` flows of the group are active. A step
//! that raises the count starts new flows at `at` (each plus its own
//! `start_jitter`); one that lowers it stops the most recently started
//! active flows at `at` (they send nothing more, as at a group's `stop`).
//! The last flows stop at the end of the run. Flows are numbered in the
//! order they start; the group has as many as the increases add up to —
//! none if every count is 0, which a sweep may use to leave a group out.

use phb::Time;

use super::{Context, Result};
use crate::scenario::location::join;
use crate::scenario::raw;

impl Context<'_> {
    /// Each flow's `(start, stop)` from the schedule at `path` (a group's
    /// `schedule` key); `end` is the run's duration. The steps are checked
    /// and their flows counted against `run.memory_limit` (in `raw_run`)
    /// before any flow is made.
    pub(super) fn schedule(
        &self,
        path: &str,
        steps: &[raw::ScheduleStep],
        end: Time,
        raw_run: &raw::Run,
    ) -> Result<Vec<(Time, Time)>> {
        if steps.is_empty() {
            return Err(self.err(path, "a schedule needs at least one step, e.g. [{ at = \"0s\", count = 10 }]"));
        }
        let mut counted: Vec<(Time, usize)> = Vec::with_capacity(steps.len());
        // Flows the schedule makes (each increase starts new ones), and the step that starts most.
        let (mut flows, mut largest) = (0u128, (0usize, 0usize));
        for (i, step) in steps.iter().enumerate() {
            let at_key = format!("{path}[{i}].at");
            let at = self.time(&at_key, &step.at)?;
            if let Some(&(before, _)) = counted.last().filter(|&&(before, _)| at <= before) {
                return Err(self.err(&at_key, format!("steps must be in increasing time: {at} is not after {before}")));
            }
            let count_key = join(&format!("{path}[{i}]"), "count");
            let count = usize::try_from(step.count).ok().filter(|&c| c <= u32::MAX as usize).ok_or_else(|| {
                self.err(&count_key, format!("a count is a number of flows >= 0, got {}", step.count))
            })?;
            let started = count.saturating_sub(counted.last().map_or(0, |&(_, c)| c));
            flows += started as u128;
            if started > largest.1 {
                largest = (i, started);
            }
            counted.push((at, count));
        }
        let count_key = join(&format!("{path}[{}]", largest.0), "count");
        if flows > u128::from(u32::MAX) {
            return Err(self.err(&count_key, "a group holds at most 4294967295 flows"));
        }
        self.scheduled_flows(raw_run, &count_key, flows)?;
        let mut windows: Vec<(Time, Time)> = Vec::with_capacity(flows as usize);
        // Indices of the active flows, in the order they started.
        let mut active: Vec<usize> = Vec::new();
        for (at, count) in counted {
            while active.len() < count {
                active.push(windows.len());
                windows.push((at, end));
            }
            while active.len() > count {
                let flow = active.pop().expect("more active flows than the count");
                windows[flow].1 = at;
            }
        }
        Ok(windows)
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::load;
    use phb::Time;

    fn scenario(schedule: &str) -> Result<crate::scenario::Scenario, String> {
        let text = format!(
            r#"
[run]
duration = "500s"
[classes]
be = 0
[nodes]
hosts = ["a", "b"]
[[links]]
between = ["a", "b"]
rate = "10Mbps"
delay = "1ms"
[[traffic]]
name = "voice"
kind = "voip"
from = "a"
to = "b"
class = "be"
start_jitter = "1s"
schedule = {schedule}
"#
        );
        load(&text, "s.toml", &[]).map_err(|e| e.to_string())
    }

    /// Table 1's UDP column: 60 flows, 120 from 100 s, 60 again from 300 s.
    /// Flows 0–59 run the whole 500 s; 60–119 from 100 s to 300 s.
    #[test]
    fn table_1_counts_become_flow_windows() {
        let s = scenario(r#"[{ at = "0s", count = 60 }, { at = "100s", count = 120 }, { at = "300s", count = 60 }]"#)
            .unwrap();
        let g = &s.groups[0];
        let w = g.windows.as_ref().unwrap();
        assert_eq!((g.count, w.len()), (120, 120));
        assert!(w[..60].iter().all(|&x| x == (Time::ZERO, Time::from_secs(500))));
        assert!(w[60..].iter().all(|&x| x == (Time::from_secs(100), Time::from_secs(300))));
    }

    /// A group whose counts are all 0 has no flows (a sweep's way to leave
    /// it out) and runs.
    #[test]
    fn a_schedule_of_zeros_leaves_the_group_empty() {
        let s = scenario(r#"[{ at = "0s", count = 0 }]"#).unwrap();
        assert_eq!((s.groups[0].count, s.groups[0].windows.as_deref()), (0, Some(&[][..])));
        let out = crate::run(&s, None, &mut |_| {}).unwrap();
        assert_eq!(out.table("flows").unwrap().rows(), 0);
    }

    /// A count that falls and rises again starts new flows; those that left
    /// stay stopped. Last in, first out.
    #[test]
    fn leavers_are_the_latest_joiners() {
        let s = scenario(r#"[{ at = "10s", count = 2 }, { at = "20s", count = 3 }, { at = "30s", count = 1 }, { at = "40s", count = 2 }]"#)
            .unwrap();
        let (t, end) = (Time::from_secs, Time::from_secs(500));
        assert_eq!(
            s.groups[0].windows.as_deref().unwrap(),
            [(t(10), end), (t(10), t(30)), (t(20), t(30)), (t(40), end)]
        );
    }

    /// A count of 2³² − 1 was expanded into a flow list before the memory
    /// estimate and aborted validation (an allocation of 2 GiB failed); it
    /// is counted from the steps and refused first.
    #[test]
    fn a_huge_schedule_is_refused_before_it_is_expanded() {
        let err = scenario(r#"[{ at = "0s", count = 4294967295 }]"#).unwrap_err();
        assert!(err.contains("traffic[0].schedule[0].count") && err.contains("run.memory_limit"), "{err}");
        let err = scenario(
            r#"[{ at = "0s", count = 4294967295 }, { at = "1s", count = 0 }, { at = "2s", count = 4294967295 }]"#,
        )
        .unwrap_err();
        assert!(err.contains("schedule[0].count") && err.contains("at most 4294967295 flows"), "{err}");
    }

    #[test]
    fn bad_schedules_name_the_step() {
        let err = scenario(r#"[{ at = "10s", count = 2 }, { at = "5s", count = 3 }]"#).unwrap_err();
        assert!(err.contains("traffic[0].schedule[1].at") && err.contains("increasing"), "{err}");
        let err = scenario(r#"[{ at = "0s", count = -1 }]"#).unwrap_err();
        assert!(err.contains("schedule[0].count") && err.contains(">= 0"), "{err}");
        let err = scenario("[]").unwrap_err();
        assert!(err.contains("at least one step"), "{err}");
        let err = scenario(r#"[{ at = "0s", number = 3 }]"#).unwrap_err();
        assert!(err.contains("unknown field `number`"), "{err}");
    }
}
