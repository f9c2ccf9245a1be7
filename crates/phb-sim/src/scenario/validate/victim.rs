//! Validation of a classful buffer's victim rule: who pays when its policy
//! drops — the arrival (default), a PLR dropper (`plr`, with `sigma` on each
//! of the buffer's queues) or the Packet Loss Controller (`plc`, `plc_x`).

use phb::aqm::plr::PlrMemory;
use phb::queue::Victim;

use super::{number, Context, Result};
use crate::scenario::location::join;
use crate::scenario::raw;

impl Context<'_> {
    /// The victim rule of buffer `b` (at `path`) of the classful qdisc at
    /// `qdisc_path`, whose queues are `queues` and belong to `queue_buffer`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn victim(
        &self,
        qdisc_path: &str,
        path: &str,
        b: usize,
        buffer: &raw::Buffer,
        scheduler: Option<raw::Scheduler>,
        queues: &[raw::Queue],
        queue_buffer: &[usize],
    ) -> Result<Victim> {
        let mine: Vec<usize> = (0..queues.len()).filter(|&q| queue_buffer[q] == b).collect();
        let queue_path = |q: usize| format!("{}[{q}]", join(qdisc_path, "queues"));
        if buffer.plr.is_none() {
            if let Some(&q) = mine.iter().find(|&&q| queues[q].sigma.is_some()) {
                return Err(self.err(
                    &join(&queue_path(q), "sigma"),
                    format!("`sigma` applies to the queues of a buffer with `plr`; buffer {} has none", buffer.name),
                ));
            }
        }
        let plc = buffer.plc == Some(true);
        if !plc && buffer.plc_x.is_some() {
            return Err(self.err(&join(path, "plc_x"), "`plc_x` applies only with `plc = true`"));
        }
        if plc && buffer.plr.is_some() {
            return Err(self.err(&join(path, "plr"), "a buffer has either `plr` or `plc`, not both"));
        }
        if plc {
            let key = join(path, "plc");
            if buffer.policy != raw::Policy::Red {
                return Err(
                    self.err(&key, "PLC works with `policy = \"red\"` (its sigma is derived for RED's drop curve)")
                );
            }
            if mine.len() != 2 {
                return Err(self.err(
                    &key,
                    format!(
                        "PLC needs a buffer holding exactly two queues, the TCP (throughput-sensitive) one first; buffer {} holds {}",
                        buffer.name,
                        mine.len()
                    ),
                ));
            }
            if !matches!(scheduler, Some(raw::Scheduler::Bpr | raw::Scheduler::BprPlus)) {
                return Err(self.err(
                    &key,
                    "PLC needs `scheduler = \"bpr\"` or `\"bpr_plus\"` on the qdisc: it reads their service rates",
                ));
            }
            let x = buffer.plc_x.unwrap_or(phb::aqm::plc::PlcParams::DEFAULT_X);
            if !(x.is_finite() && x > 0.0) {
                return Err(self
                    .err(&join(path, "plc_x"), format!("plc_x = a/b must be positive and finite, got {}", number(x))));
            }
            return Ok(Victim::Plc { x });
        }
        let Some(memory) = &buffer.plr else { return Ok(Victim::Arrival) };
        let key = join(path, "plr");
        if buffer.policy == raw::Policy::Codel {
            return Err(self.err(&key, "PLR chooses victims for drops decided at arrival; CoDel drops at dequeue"));
        }
        let memory = match memory {
            raw::PlrMemory::Window(m) if *m >= 1 => PlrMemory::Window(*m as usize),
            raw::PlrMemory::Word(w) if w == "infinite" => PlrMemory::Infinite,
            other => {
                let got = match other {
                    raw::PlrMemory::Window(m) => m.to_string(),
                    raw::PlrMemory::Word(w) => format!("{w:?}"),
                };
                return Err(self.err(
                    &key,
                    format!("plr is the dropper's memory: a number of arrivals M >= 1 (PLR(M)) or \"infinite\" (PLR(∞)); got {got}"),
                ));
            }
        };
        let mut sigma = Vec::with_capacity(mine.len());
        for &q in &mine {
            let value = queues[q].sigma.ok_or_else(|| {
                self.err(
                    &queue_path(q),
                    format!("buffer {} has `plr`: give `sigma` on each of its queues", buffer.name),
                )
            })?;
            if !(value.is_finite() && value > 0.0) {
                return Err(self.err(
                    &join(&queue_path(q), "sigma"),
                    format!("sigma must be positive and finite, got {}", number(value)),
                ));
            }
            sigma.push(value);
        }
        Ok(Victim::Plr { sigma, memory })
    }
}
