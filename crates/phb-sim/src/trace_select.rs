//! What a trace records and how its event log is opened, shared by the
//! simulator (`sim/record.rs`) and the emulator's router (`phb-emu`'s
//! `trace.rs`), so that both honour a scenario's `[trace]` the same way:
//! the same link directions, classes, flows, time window and events, the
//! same names in the log's dictionaries and the same queue state per row.

use std::path::Path;

use phb::{Qdisc, Time};

use crate::scenario::model::TraceDef;
use crate::scenario::Scenario;
use crate::trace::event_log::{Dictionaries, EventLog, LogError};
use crate::trace::{TraceEvent, EVENT_LOG_FILE};

/// The selection of a `[trace]` section: which ports, classes, flows,
/// times and events are recorded.
#[derive(Clone, Debug)]
pub struct Selection {
    /// Per port: its index among the traced scopes (`u32::MAX`: untraced).
    scope_of_port: Vec<u32>,
    /// Per class: traced.
    classes: Vec<bool>,
    /// Per flow: traced.
    flows: Vec<bool>,
    /// Packets of no flow (an emulation's programs') are traced.
    programs: bool,
    start: Time,
    end: Time,
    events: [bool; TraceEvent::ALL.len()],
}

impl Selection {
    /// The selection `def` makes among `ports` link directions and the
    /// flows whose traffic groups are `groups` (one per flow, in order).
    pub fn new(def: &TraceDef, ports: usize, groups: impl IntoIterator<Item = usize>) -> Selection {
        let mut scope_of_port = vec![u32::MAX; ports];
        for (i, &p) in def.ports.iter().enumerate() {
            scope_of_port[p] = i as u32;
        }
        Selection {
            scope_of_port,
            classes: def.classes.clone(),
            flows: groups.into_iter().map(|g| def.groups[g]).collect(),
            programs: def.programs,
            start: def.start,
            end: def.end,
            events: def.events,
        }
    }

    /// Port `p`'s index among the traced scopes, if it is traced.
    #[inline]
    pub fn scope(&self, p: usize) -> Option<u32> {
        let scope = self.scope_of_port[p];
        (scope != u32::MAX).then_some(scope)
    }

    /// Whether a packet of `class` and `flow` is traced at `now`: in the
    /// window, of a traced class and flow. `flow` is the flow's index, or
    /// the number of flows for a packet of no flow (an emulation's
    /// programs': traced when `trace.flows` is not given).
    #[inline]
    pub fn takes(&self, now: Time, class: usize, flow: usize) -> bool {
        now >= self.start
            && now < self.end
            && self.classes[class]
            && self.flows.get(flow).copied().unwrap_or(self.programs)
    }

    /// Whether the log records `event`.
    #[inline]
    pub fn records(&self, event: TraceEvent) -> bool {
        self.events[event as usize]
    }
}

/// The names of `def`'s traced link directions (`"A->B"`), in its order:
/// the log's scopes and the pcapng file's interfaces.
pub fn scope_names(scenario: &Scenario, def: &TraceDef) -> Vec<String> {
    def.ports
        .iter()
        .map(|&p| {
            let link = &scenario.links[p / 2];
            let (from, to) = if p.is_multiple_of(2) { (link.a, link.b) } else { (link.b, link.a) };
            format!("{}->{}", scenario.nodes[from].name, scenario.nodes[to].name)
        })
        .collect()
}

/// Creates the event log of a run of `scenario` with `seed` in `dir`, its
/// dictionaries the traced `scopes`, the scenario's classes and `flows`.
pub fn open_event_log(
    dir: &Path,
    scenario: &Scenario,
    scopes: Vec<String>,
    flows: Vec<String>,
    seed: u64,
    version: &str,
) -> Result<EventLog, LogError> {
    let names = Dictionaries { scopes, classes: scenario.classes.iter().map(|c| c.name.clone()).collect(), flows };
    let seed = seed.to_string();
    let metadata = [("phblab_version", version), ("scenario", scenario.name.as_str()), ("seed", seed.as_str())];
    EventLog::create(&dir.join(EVENT_LOG_FILE), &names, &metadata)
}

/// A row's queue state: `qdisc`'s backlog in packets and bytes, and its
/// RED average if it has exactly one AQM average (NaN otherwise);
/// `averages` is a reused buffer.
#[inline]
pub fn queue_state<M>(qdisc: &Qdisc<M>, averages: &mut Vec<Option<f64>>) -> (u64, u64, f64) {
    qdisc.averages(averages);
    let red_avg = match averages.as_slice() {
        [Some(avg)] => *avg,
        _ => f64::NAN,
    };
    (qdisc.len_packets(), qdisc.len_bytes(), red_avg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ports, classes and flows are selected by the section; a packet of
    /// no flow (index past the flows) only when `trace.flows` is not given.
    #[test]
    fn the_selection_takes_what_the_section_names() {
        let def = TraceDef {
            ports: vec![3, 0],
            classes: vec![true, false],
            groups: vec![false, true],
            programs: false,
            start: Time::from_millis(10),
            end: Time::from_millis(20),
            events: [true, false, true, false, false],
            pcap: false,
        };
        let select = Selection::new(&def, 4, [0, 1, 1]);
        assert_eq!((0..4).map(|p| select.scope(p)).collect::<Vec<_>>(), [Some(1), None, None, Some(0)]);
        let at = Time::from_millis(15);
        assert!(select.takes(at, 0, 1) && select.takes(at, 0, 2));
        assert!(!select.takes(at, 1, 1) && !select.takes(at, 0, 0) && !select.takes(at, 0, 3));
        assert!(!select.takes(Time::from_millis(9), 0, 1) && !select.takes(Time::from_millis(20), 0, 1));
        assert!(select.records(TraceEvent::Arrive) && !select.records(TraceEvent::Dequeue));
        let all = Selection::new(&TraceDef { programs: true, ..def }, 4, [0]);
        assert!(all.takes(at, 0, 1));
    }
}
