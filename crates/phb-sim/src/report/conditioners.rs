//! The `conditioners` table: what each edge conditioner's rules did after
//! the warm-up, per rule and colour (also the emulator's).
//!
//! One row per rule and colour its meter gives (green alone for a rule
//! without a meter: its one action applies to every packet it matches),
//! with the action that colour takes, and one row (rule `""`) for the
//! packets no rule matched, which pass unchanged. The counts are the
//! packets (and IP bytes) the rule matched and the meter coloured so, in
//! the measured period, whatever happened to them afterwards.

use phb::classify::{Conditioner, ConditionerCounts, RuleStats};
use phb::mark::Action;
use phb::Colour;

use crate::output::{Column, Table};
use crate::scenario::Scenario;

/// Rows of the `conditioners` table.
#[derive(Default)]
pub struct ConditionerRows {
    scope: Vec<String>,
    rule: Vec<String>,
    colour: Vec<String>,
    action: Vec<String>,
    packets: Vec<u64>,
    bytes: Vec<u64>,
}

const COLOURS: [(Colour, &str); 3] = [(Colour::Green, "green"), (Colour::Yellow, "yellow"), (Colour::Red, "red")];

impl ConditionerRows {
    /// Adds the rows of the conditioner at link direction `scope`: its
    /// counts now less `at_warmup` (`None` before the warm-up ended).
    pub fn push_port(
        &mut self,
        scenario: &Scenario,
        scope: &str,
        conditioner: &Conditioner,
        at_warmup: Option<&ConditionerCounts>,
    ) {
        let zero =
            ConditionerCounts { rules: vec![RuleStats::default(); conditioner.rules().len()], ..Default::default() };
        let then = at_warmup.unwrap_or(&zero);
        for ((rule, now), then) in conditioner.rules().iter().zip(conditioner.stats()).zip(&then.rules) {
            let counts = now.since(then);
            let colours = if rule.meter().is_some() { &COLOURS[..] } else { &COLOURS[..1] };
            for &(colour, name) in colours {
                let c = counts.colour(colour);
                self.push(
                    scope,
                    rule.name(),
                    name,
                    action_text(scenario, rule.actions().action(colour)),
                    c.packets,
                    c.bytes,
                );
            }
        }
        let unmatched = conditioner.unmatched().since(then.unmatched);
        self.push(scope, "", "", "pass".into(), unmatched.packets, unmatched.bytes);
    }

    fn push(&mut self, scope: &str, rule: &str, colour: &str, action: String, packets: u64, bytes: u64) {
        self.scope.push(scope.to_owned());
        self.rule.push(rule.to_owned());
        self.colour.push(colour.to_owned());
        self.action.push(action);
        self.packets.push(packets);
        self.bytes.push(bytes);
    }

    pub fn into_table(self) -> Table {
        let mut t = Table::new("conditioners");
        t.push("scope", Column::Str(self.scope));
        t.push("rule", Column::Str(self.rule));
        t.push("colour", Column::Str(self.colour));
        t.push("action", Column::Str(self.action));
        t.push("packets", Column::U64(self.packets));
        t.push("bytes", Column::U64(self.bytes));
        t
    }
}

/// `"pass"`, `"drop"`, or `"mark <class>"` (the class of the codepoint).
fn action_text(scenario: &Scenario, action: Action) -> String {
    match action {
        Action::Pass => "pass".into(),
        Action::Drop => "drop".into(),
        Action::Mark { codepoint, .. } => match scenario.classes.iter().find(|c| c.codepoint == codepoint) {
            Some(class) => format!("mark {}", class.name),
            None => format!("mark {codepoint}"),
        },
    }
}
