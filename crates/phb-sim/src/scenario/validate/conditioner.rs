//! Validation of `[conditioners.NAME]`: edge traffic conditioners whose rules
//! match on classes, traffic groups, hosts and protocol, meter with a token
//! bucket, srTCM, trTCM, TSW or F-GCRA, and mark (a DSCP name or number),
//! drop or pass each colour.

use std::collections::BTreeMap;

use phb::classify::{dscp, ConditionerConfig, Match, MeterConfig, Protocol, RuleConfig};
use phb::mark::fgcra::FgcraParams;
use phb::mark::srtcm::SrtcmParams;
use phb::mark::token_bucket::TokenBucketParams;
use phb::mark::trtcm::TrtcmParams;
use phb::mark::tsw::{Tsw2cmParams, Tsw3cmParams};
use phb::mark::{Action, ColourActions, ColourMode};

use super::{class_index, list, Context, Nodes, Present, Result};
use crate::scenario::location::join;
use crate::scenario::model::ClassDef;
use crate::scenario::raw;

impl Context<'_> {
    /// Every conditioner, by name. Group names resolve against `groups`
    /// (the traffic groups' names, in order).
    pub(super) fn conditioners(
        &self,
        raw: &BTreeMap<String, raw::Conditioner>,
        classes: &[ClassDef],
        nodes: &Nodes,
        groups: &[&str],
    ) -> Result<BTreeMap<String, ConditionerConfig>> {
        let mut out = BTreeMap::new();
        for (name, c) in raw {
            let path = join("conditioners", name);
            let mut rules = Vec::with_capacity(c.rules.len());
            for (i, rule) in c.rules.iter().enumerate() {
                rules.push(self.rule(&format!("{path}.rules[{i}]"), rule, classes, nodes, groups)?);
            }
            let config = ConditionerConfig { rules };
            config.validate().map_err(|m| self.err(&path, m))?;
            out.insert(name.clone(), config);
        }
        Ok(out)
    }

    fn rule(
        &self,
        path: &str,
        r: &raw::Rule,
        classes: &[ClassDef],
        nodes: &Nodes,
        groups: &[&str],
    ) -> Result<RuleConfig> {
        let matches = match &r.matches {
            None => Match::ANY,
            Some(m) => self.rule_match(&join(path, "match"), m, classes, nodes, groups)?,
        };
        let action = |key: &str, value: &Option<String>, default: Action| -> Result<Action> {
            let Some(text) = value else { return Ok(default) };
            let key = join(path, key);
            match text.as_str() {
                "pass" => Ok(Action::Pass),
                "drop" => Ok(Action::Drop),
                other => {
                    let codepoint = dscp::parse_codepoint(other)
                        .map_err(|m| self.err(&key, format!("{m}; or \"pass\" or \"drop\"")))?;
                    if !classes.iter().any(|c| c.codepoint == codepoint) {
                        return Err(self.err(
                            &key,
                            format!("codepoint {codepoint} ({other}) is not the codepoint of a class; declare it under [classes]"),
                        ));
                    }
                    Ok(Action::Mark { codepoint, colour: dscp::drop_precedence(codepoint) })
                }
            }
        };
        let actions = ColourActions {
            green: action("green", &r.green, Action::Pass)?,
            yellow: action("yellow", &r.yellow, Action::Pass)?,
            red: action("red", &r.red, Action::Pass)?,
        };
        let meter = match &r.meter {
            Some(m) => Some(self.meter(&join(path, "meter"), m)?),
            None => {
                if r.yellow.is_some() || r.red.is_some() {
                    return Err(
                        self.err(path, "`yellow` and `red` need a `meter`; without one every packet gets `green`")
                    );
                }
                None
            }
        };
        Ok(RuleConfig { name: r.name.clone(), matches, meter, actions })
    }

    fn rule_match(
        &self,
        path: &str,
        m: &raw::RuleMatch,
        classes: &[ClassDef],
        nodes: &Nodes,
        groups: &[&str],
    ) -> Result<Match> {
        let names = |key: &str,
                     values: &Option<Vec<String>>,
                     find: &dyn Fn(&str) -> std::result::Result<u32, String>|
         -> Result<Option<Vec<u32>>> {
            let Some(values) = values else { return Ok(None) };
            values
                .iter()
                .enumerate()
                .map(|(i, v)| find(v).map_err(|msg| self.err(&format!("{}[{i}]", join(path, key)), msg)))
                .collect::<Result<Vec<u32>>>()
                .map(Some)
        };
        let codepoints =
            names("classes", &m.classes, &|c| class_index(classes, c).map(|i| classes[i].codepoint as u32))?;
        Ok(Match {
            codepoints: codepoints.map(|v| v.into_iter().map(|c| c as u8).collect()),
            flows: None,
            groups: names("groups", &m.groups, &|g| {
                groups
                    .iter()
                    .position(|n| *n == g)
                    .map(|i| i as u32)
                    .ok_or_else(|| format!("{g} is not a traffic group; groups are {}", list(groups.iter().copied())))
            })?,
            src: names("src", &m.src, &|n| nodes.index(n).map(|i| i as u32))?,
            dst: names("dst", &m.dst, &|n| nodes.index(n).map(|i| i as u32))?,
            protocol: m.protocol.map(|p| match p {
                raw::Protocol::Tcp => Protocol::Tcp,
                raw::Protocol::Udp => Protocol::Udp,
            }),
        })
    }

    fn meter(&self, path: &str, m: &raw::Meter) -> Result<MeterConfig> {
        let present: &Present = &[
            ("rate", m.rate.is_some()),
            ("burst_size", m.burst_size.is_some()),
            ("cir", m.cir.is_some()),
            ("cbs", m.cbs.is_some()),
            ("ebs", m.ebs.is_some()),
            ("pir", m.pir.is_some()),
            ("pbs", m.pbs.is_some()),
            ("ctr", m.ctr.is_some()),
            ("ptr", m.ptr.is_some()),
            ("win_length", m.win_length.is_some()),
            ("mode", m.mode.is_some()),
            ("tau", m.tau.is_some()),
        ];
        let rate = |key: &str, v: &Option<raw::Quantity>, what: &str| -> Result<u64> {
            self.rate(&join(path, key), self.required(path, key, v, what)?)
        };
        let size = |key: &str, v: &Option<raw::Quantity>, what: &str| -> Result<u64> {
            self.size(&join(path, key), self.required(path, key, v, what)?)
        };
        let mode = match m.mode {
            Some(raw::MeterMode::Aware) => ColourMode::Aware,
            Some(raw::MeterMode::Blind) | None => ColourMode::Blind,
        };
        let config = match m.kind {
            raw::MeterKind::TokenBucket => {
                let what = "a token_bucket meter";
                self.only(path, what, present, &["rate", "burst_size"])?;
                MeterConfig::TokenBucket(TokenBucketParams {
                    rate: rate("rate", &m.rate, what)?,
                    burst_size: size("burst_size", &m.burst_size, what)?,
                })
            }
            raw::MeterKind::Srtcm => {
                let what = "an srtcm meter";
                self.only(path, what, present, &["cir", "cbs", "ebs", "mode"])?;
                MeterConfig::Srtcm(SrtcmParams {
                    cir: rate("cir", &m.cir, what)?,
                    cbs: size("cbs", &m.cbs, what)?,
                    ebs: size("ebs", &m.ebs, what)?,
                    mode,
                })
            }
            raw::MeterKind::Trtcm => {
                let what = "a trtcm meter";
                self.only(path, what, present, &["cir", "cbs", "pir", "pbs", "mode"])?;
                MeterConfig::Trtcm(TrtcmParams {
                    pir: rate("pir", &m.pir, what)?,
                    pbs: size("pbs", &m.pbs, what)?,
                    cir: rate("cir", &m.cir, what)?,
                    cbs: size("cbs", &m.cbs, what)?,
                    mode,
                })
            }
            raw::MeterKind::Tsw2cm => {
                let what = "a tsw2cm meter";
                self.only(path, what, present, &["ctr", "win_length"])?;
                let win_length = self.positive_time(
                    &join(path, "win_length"),
                    self.required(path, "win_length", &m.win_length, what)?,
                )?;
                MeterConfig::Tsw2cm(Tsw2cmParams { ctr: rate("ctr", &m.ctr, what)?, win_length })
            }
            raw::MeterKind::Fgcra => {
                let what = "an fgcra meter";
                self.only(path, what, present, &["rate", "tau", "mode"])?;
                let tau = self.time(&join(path, "tau"), self.required(path, "tau", &m.tau, what)?)?;
                MeterConfig::Fgcra(FgcraParams { rate: rate("rate", &m.rate, what)?, tau, mode })
            }
            raw::MeterKind::Tsw3cm => {
                let what = "a tsw3cm meter";
                self.only(path, what, present, &["ctr", "ptr", "win_length"])?;
                let win_length = self.positive_time(
                    &join(path, "win_length"),
                    self.required(path, "win_length", &m.win_length, what)?,
                )?;
                MeterConfig::Tsw3cm(Tsw3cmParams {
                    ctr: rate("ctr", &m.ctr, what)?,
                    ptr: rate("ptr", &m.ptr, what)?,
                    win_length,
                })
            }
        };
        config.validate().map_err(|msg| {
            let first = msg
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .find(|w| present.iter().any(|(k, _)| k.eq_ignore_ascii_case(w)));
            let key = first.map_or(path.to_owned(), |k| join(path, &k.to_ascii_lowercase()));
            self.err(&key, msg)
        })?;
        Ok(config)
    }
}
