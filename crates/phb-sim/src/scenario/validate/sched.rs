//! Validation of a classful qdisc's scheduler and its per-queue parameters.
//!
//! The proportional delay schedulers (BPR, BPR+, WTP, PAD, MDP, DWFQ) and
//! BEDS' backlog-weighted WFQ take either `s` on every queue, or the
//! two-queue shorthand `delta` on the qdisc: `s = [1, delta]`, the first
//! queue throughput-sensitive (the higher delay; BEDS' TCP queue), the
//! second delay-sensitive. BEDS also takes `backlog_unit`, BPR⁺
//! `residual_backlog`; fluid BPR⁺ takes exactly two queues.

use phb::queue::{JobsClass, JobsParams, SchedulerKind};
use phb::sched::{BacklogUnit, ResidualBacklog};

use super::{number, Context, Result};
use crate::scenario::location::join;
use crate::scenario::raw;

impl Context<'_> {
    /// The scheduler of classful qdisc `q` at `path`, reading `weight`,
    /// `quantum` or `rate` from each queue as the scheduler needs.
    pub(super) fn scheduler(&self, path: &str, q: &raw::Qdisc, queues: &[raw::Queue]) -> Result<SchedulerKind> {
        let kind = q.scheduler.unwrap_or(raw::Scheduler::Priority);
        let name = match kind {
            raw::Scheduler::Priority => "priority",
            raw::Scheduler::CappedPriority => "capped_priority",
            raw::Scheduler::Wrr => "wrr",
            raw::Scheduler::Wirr => "wirr",
            raw::Scheduler::Drr => "drr",
            raw::Scheduler::Wfq => "wfq",
            raw::Scheduler::Wf2qPlus => "wf2q_plus",
            raw::Scheduler::Scfq => "scfq",
            raw::Scheduler::VirtualClock => "virtual_clock",
            raw::Scheduler::Bpr => "bpr",
            raw::Scheduler::BprPlus => "bpr_plus",
            raw::Scheduler::BprPlusFluid => "bpr_plus_fluid",
            raw::Scheduler::Wtp => "wtp",
            raw::Scheduler::Pad => "pad",
            raw::Scheduler::Mdp => "mdp",
            raw::Scheduler::Dwfq => "dwfq",
            raw::Scheduler::Beds => "beds",
            raw::Scheduler::Jobs => "jobs",
            raw::Scheduler::Exvc => "exvc",
        };
        let proportional = matches!(
            kind,
            raw::Scheduler::Bpr
                | raw::Scheduler::BprPlus
                | raw::Scheduler::BprPlusFluid
                | raw::Scheduler::Wtp
                | raw::Scheduler::Pad
                | raw::Scheduler::Mdp
                | raw::Scheduler::Dwfq
                | raw::Scheduler::Beds
        );
        let wants = match kind {
            raw::Scheduler::Priority | raw::Scheduler::CappedPriority | raw::Scheduler::Jobs => None,
            raw::Scheduler::Drr => Some("quantum"),
            raw::Scheduler::VirtualClock => Some("rate"),
            raw::Scheduler::Exvc => Some("q"),
            _ if proportional && q.delta.is_some() => None,
            _ if proportional => Some("s"),
            _ => Some("weight"),
        };
        if let Some(delta) = q.delta {
            let key = join(path, "delta");
            if !proportional {
                return Err(self.err(&key, format!("`delta` does not apply to the {name} scheduler; it is for bpr, bpr_plus, bpr_plus_fluid, wtp, pad, mdp, dwfq and beds")));
            }
            if queues.len() != 2 {
                return Err(self.err(&key, format!("`delta` needs exactly two queues (throughput-sensitive first, delay-sensitive second), this qdisc has {}; give `s` on every queue instead", queues.len())));
            }
            if !(delta.is_finite() && delta > 0.0) {
                return Err(self.err(&key, format!("delta must be positive and finite, got {}", number(delta))));
            }
        }
        if kind != raw::Scheduler::Beds && q.backlog_unit.is_some() {
            return Err(self.err(
                &join(path, "backlog_unit"),
                format!("`backlog_unit` applies only to scheduler = \"beds\", not {name}"),
            ));
        }
        if kind == raw::Scheduler::BprPlusFluid && queues.len() != 2 {
            return Err(self.err(&join(path, "queues"), format!("the bpr_plus_fluid scheduler is defined for two queues (throughput-sensitive first, delay-sensitive second), this qdisc has {}", queues.len())));
        }
        if kind != raw::Scheduler::BprPlus && q.residual_backlog.is_some() {
            return Err(self.err(
                &join(path, "residual_backlog"),
                format!("`residual_backlog` applies only to scheduler = \"bpr_plus\", not {name}"),
            ));
        }
        for (i, queue) in queues.iter().enumerate() {
            let qpath = format!("{}[{i}]", join(path, "queues"));
            let keys = [
                ("weight", queue.weight.is_some()),
                ("quantum", queue.quantum.is_some()),
                ("rate", queue.rate.is_some()),
                ("s", queue.s.is_some()),
                ("q", queue.q.is_some()),
            ];
            for (key, set) in keys {
                if set && wants != Some(key) {
                    let why = if key == "s" && proportional { " when the qdisc gives `delta`" } else { "" };
                    return Err(
                        self.err(&join(&qpath, key), format!("`{key}` does not apply to the {name} scheduler{why}"))
                    );
                }
                if !set && wants == Some(key) {
                    return Err(self.err(&qpath, format!("the {name} scheduler needs `{key}` on every queue")));
                }
            }
        }
        if kind != raw::Scheduler::Jobs {
            if q.gain.is_some() {
                return Err(self.err(&join(path, "gain"), "`gain` applies only to scheduler = \"jobs\""));
            }
            for (i, queue) in queues.iter().enumerate() {
                let set = [
                    ("d", queue.d.is_some()),
                    ("L", queue.l.is_some()),
                    ("mu", queue.mu.is_some()),
                    ("k", queue.k.is_some()),
                    ("k_prime", queue.k_prime.is_some()),
                ];
                if let Some((key, _)) = set.iter().find(|(_, set)| *set) {
                    return Err(self.err(
                        &format!("{}[{i}].{key}", join(path, "queues")),
                        format!("`{key}` is a JoBS guarantee; it applies only to scheduler = \"jobs\""),
                    ));
                }
            }
        }
        if kind != raw::Scheduler::Exvc && q.regulate_every.is_some() {
            return Err(
                self.err(&join(path, "regulate_every"), "`regulate_every` applies only to scheduler = \"exvc\"")
            );
        }
        if kind != raw::Scheduler::CappedPriority {
            for (key, set) in [("cap_rate", q.cap_rate.is_some()), ("cap_depth", q.cap_depth.is_some())] {
                if set {
                    return Err(
                        self.err(&join(path, key), format!("`{key}` applies only to scheduler = \"capped_priority\""))
                    );
                }
            }
        }
        // Each queue's `key` (checked set above), positive and finite,
        // reported where it is written rather than by the scheduler's
        // constructor at the qdisc.
        let per_queue = |key: &str, value: fn(&raw::Queue) -> Option<f64>| -> Result<Vec<f64>> {
            queues
                .iter()
                .enumerate()
                .map(|(i, queue)| {
                    let v = value(queue).unwrap_or_default();
                    if v.is_finite() && v > 0.0 {
                        Ok(v)
                    } else {
                        Err(self.err(
                            &format!("{}[{i}].{key}", join(path, "queues")),
                            format!("{key} must be positive and finite, got {}", number(v)),
                        ))
                    }
                })
                .collect()
        };
        let weights = || per_queue("weight", |queue| queue.weight);
        let s = || -> Result<Vec<f64>> {
            match q.delta {
                Some(delta) => Ok(vec![1.0, delta]),
                None => per_queue("s", |queue| queue.s),
            }
        };
        let integer_weights = || -> Result<Vec<u32>> {
            queues
                .iter()
                .enumerate()
                .map(|(i, queue)| {
                    let w = queue.weight.unwrap_or_default();
                    if w >= 1.0 && w.fract() == 0.0 && w <= u32::MAX as f64 {
                        Ok(w as u32)
                    } else {
                        Err(self.err(
                            &format!("{}[{i}].weight", join(path, "queues")),
                            format!(
                                "the {name} scheduler needs a whole number of packets per round, at least 1; got {}",
                                number(w)
                            ),
                        ))
                    }
                })
                .collect()
        };
        Ok(match kind {
            raw::Scheduler::Priority => SchedulerKind::StrictPriority,
            raw::Scheduler::CappedPriority => {
                let what = "the capped_priority scheduler";
                let rate_bps =
                    self.rate(&join(path, "cap_rate"), self.required(path, "cap_rate", &q.cap_rate, what)?)?;
                let depth_key = join(path, "cap_depth");
                let depth = self.size(&depth_key, self.required(path, "cap_depth", &q.cap_depth, what)?)?;
                let depth = u32::try_from(depth)
                    .ok()
                    .filter(|&d| d > 0)
                    .ok_or_else(|| self.err(&depth_key, "the bucket depth must be between 1 B and 4 GB"))?;
                SchedulerKind::CappedPriority { rate_bps, depth }
            }
            raw::Scheduler::Wrr => SchedulerKind::Wrr { weights: integer_weights()? },
            raw::Scheduler::Wirr => SchedulerKind::Wirr { weights: integer_weights()? },
            raw::Scheduler::Wfq => SchedulerKind::Wfq { weights: weights()? },
            raw::Scheduler::Wf2qPlus => SchedulerKind::Wf2qPlus { weights: weights()? },
            raw::Scheduler::Scfq => SchedulerKind::Scfq { weights: weights()? },
            raw::Scheduler::Drr => {
                let mut quanta = Vec::with_capacity(queues.len());
                for (i, queue) in queues.iter().enumerate() {
                    let key = format!("{}[{i}].quantum", join(path, "queues"));
                    let bytes = self.size(&key, queue.quantum.as_ref().expect("checked above"))?;
                    quanta.push(
                        u32::try_from(bytes)
                            .ok()
                            .filter(|&b| b > 0)
                            .ok_or_else(|| self.err(&key, "a quantum must be between 1 B and 4 GB"))?,
                    );
                }
                SchedulerKind::Drr { quanta }
            }
            raw::Scheduler::VirtualClock => {
                let mut rates = Vec::with_capacity(queues.len());
                for (i, queue) in queues.iter().enumerate() {
                    let key = format!("{}[{i}].rate", join(path, "queues"));
                    rates.push(self.rate(&key, queue.rate.as_ref().expect("checked above"))?);
                }
                SchedulerKind::VirtualClock { rates }
            }
            raw::Scheduler::Bpr => SchedulerKind::Bpr { s: s()? },
            raw::Scheduler::BprPlus => SchedulerKind::BprPlus {
                s: s()?,
                residual: match q.residual_backlog {
                    Some(raw::ResidualBacklog::BytesAhead) => ResidualBacklog::BytesAhead,
                    Some(raw::ResidualBacklog::WithOwnPacket) | None => ResidualBacklog::WithOwnPacket,
                },
            },
            raw::Scheduler::BprPlusFluid => SchedulerKind::BprPlusFluid { s: s()? },
            raw::Scheduler::Wtp => SchedulerKind::Wtp { s: s()? },
            raw::Scheduler::Pad => SchedulerKind::Pad { s: s()? },
            raw::Scheduler::Mdp => SchedulerKind::Mdp { s: s()? },
            raw::Scheduler::Dwfq => SchedulerKind::Dwfq { s: s()? },
            raw::Scheduler::Beds => SchedulerKind::Beds {
                s: s()?,
                unit: match q.backlog_unit {
                    Some(raw::BacklogUnit::Packets) => BacklogUnit::Packets,
                    Some(raw::BacklogUnit::Bytes) | None => BacklogUnit::Bytes,
                },
            },
            raw::Scheduler::Jobs => SchedulerKind::Jobs(self.jobs(path, q, queues)?),
            raw::Scheduler::Exvc => {
                let k = match q.regulate_every {
                    Some(0) => {
                        return Err(self.err(
                            &join(path, "regulate_every"),
                            "regulate_every must be at least 1 (1: self-regulate at every arrival)",
                        ))
                    }
                    Some(k) => k,
                    None => 1,
                };
                SchedulerKind::ExVc { q: per_queue("q", |queue| queue.q)?, k }
            }
        })
    }

    /// JoBS' guarantees, one table per queue (`d`, `L`, `mu`, `k`,
    /// `k_prime`, all optional), its gain, and its one shared drop-tail
    /// buffer.
    fn jobs(&self, path: &str, q: &raw::Qdisc, queues: &[raw::Queue]) -> Result<JobsParams> {
        let buffers = q.buffers.as_deref().unwrap_or_default();
        if buffers.len() != 1 {
            return Err(self.err(
                &join(path, "buffers"),
                format!(
                    "the jobs scheduler manages one buffer shared by every queue (the B of the paper's eq. 63); this qdisc has {}",
                    buffers.len()
                ),
            ));
        }
        let bpath = format!("{}[0]", join(path, "buffers"));
        if buffers[0].policy != raw::Policy::Droptail {
            return Err(self.err(
                &join(&bpath, "policy"),
                "JoBS drops by its own loss feedback loop: its buffer's policy must be \"droptail\" (its limit is B)",
            ));
        }
        for key in ["plr", "plc"] {
            let set = if key == "plr" { buffers[0].plr.is_some() } else { buffers[0].plc.is_some() };
            if set {
                return Err(self.err(
                    &join(&bpath, key),
                    format!("`{key}` does not apply to a JoBS buffer: JoBS chooses its own victims"),
                ));
            }
        }
        let gain = q.gain.unwrap_or(JobsParams::DEFAULT_GAIN);
        if !(gain > 0.0 && gain <= 1.0) {
            return Err(self.err(
                &join(path, "gain"),
                format!("gain is a fraction of the stability limit of eq. (59), in (0, 1]; got {}", number(gain)),
            ));
        }
        let mut classes = Vec::with_capacity(queues.len());
        for (i, queue) in queues.iter().enumerate() {
            let qpath = format!("{}[{i}]", join(path, "queues"));
            let d = queue.d.as_ref().map(|d| self.positive_time(&join(&qpath, "d"), d)).transpose()?;
            if let Some(l) = queue.l {
                if !(0.0..1.0).contains(&l) {
                    return Err(self.err(
                        &join(&qpath, "L"),
                        format!("L is a loss-rate bound, a fraction in [0, 1) (0.001 for 0.1%); got {}", number(l)),
                    ));
                }
            }
            let mu = queue.mu.as_ref().map(|mu| self.rate(&join(&qpath, "mu"), mu)).transpose()?;
            for (key, value) in [("k", queue.k), ("k_prime", queue.k_prime)] {
                let Some(v) = value else { continue };
                let key_path = join(&qpath, key);
                if !(v.is_finite() && v > 0.0) {
                    return Err(self.err(&key_path, format!("{key} must be positive and finite, got {}", number(v))));
                }
                if i + 1 == queues.len() {
                    let what = if key == "k" { "delay: D_i+1 = k_i·D_i" } else { "loss: p_i+1 = k'_i·p_i" };
                    return Err(self.err(
                        &key_path,
                        format!("{key} relates a queue to the next one ({what}); {} is the last queue", queue.name),
                    ));
                }
            }
            classes.push(JobsClass { d, l: queue.l, mu, k: queue.k, k_prime: queue.k_prime });
        }
        Ok(JobsParams { classes, gain })
    }
}
