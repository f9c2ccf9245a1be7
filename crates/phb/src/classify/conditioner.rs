//! The DiffServ edge traffic conditioner: classify, meter, then mark, pass
//! or drop.
//!
//! - S. Blake et al., "An Architecture for Differentiated Services",
//!   RFC 2475, 1998, §2.3.3: a traffic conditioner is a classifier followed,
//!   per traffic stream, by a meter and a marker, shaper or dropper; the
//!   stream is checked against its traffic profile and in- and out-of-profile
//!   packets may be treated differently.
//! - Y. Bernet et al., "An Informal Management Model for Diffserv Routers",
//!   RFC 3290, 2002: §4 (classifiers, an ordered list of filters), §5
//!   (meters), §6.1 (markers), §6.3.1 (absolute droppers, a policer being a
//!   meter whose out-of-profile output goes to a dropper).
//!
//! **Model.** A [`Conditioner`] is an ordered list of [`Rule`]s. For each
//! packet the first rule whose [`Match`] accepts the [`PacketKey`] decides
//! (RFC 3290 §4.2.2: filters are evaluated in order); if none does the packet
//! passes unchanged. A rule owns **one** meter instance, so all traffic that
//! matches the rule — an aggregate of flows if the match lists several — is
//! metered together against one profile. The meter's colour selects one of
//! the rule's [`ColourActions`]: `Pass` (forward unchanged), `Mark` (set the
//! codepoint and colour: [`Verdict::Remark`]) or `Drop` (a policer:
//! [`Verdict::Drop`], counted as [`DropReason::Policer`]). A rule without a
//! meter applies its `green` action to every packet it matches — plain
//! re-marking by a classifier (RFC 2475 §2.3.3.3); its `yellow` and `red`
//! actions are never used. A colour-aware meter receives the colour the
//! packet arrives with; colour-blind ones ignore it.
//!
//! **Departures.** No shaper (RFC 2475 §2.3.3.3): a conditioner decides per
//! packet and never delays. Per-rule statistics ([`RuleStats`]) count by the
//! colour the meter gave, which a rule without a meter reports as Green.
//!
//! [`ConditionerConfig`] is the plain-data form a scenario holds
//! (`validate`, then [`ConditionerConfig::build`] once per node that runs
//! it); [`Conditioner::new`] takes already-built rules for code that makes
//! its own meters.

use super::dscp::MAX_CODEPOINT;
use super::multifield::{Match, Matcher, PacketKey};
use crate::framing::Framing;
use crate::mark::{
    Action, AnyMeter, ColourActions, Fgcra, FgcraParams, Srtcm, SrtcmParams, TokenBucket, TokenBucketParams, Trtcm,
    TrtcmParams, Tsw2cm, Tsw2cmParams, Tsw3cm, Tsw3cmParams,
};
use crate::packet::{Colour, DropReason, Packet};
use crate::rng::Rng;
use crate::time::Time;

/// What the conditioner decided for one packet; the caller applies it
/// (see [`Verdict::apply`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Forward unchanged.
    Pass,
    /// Set the packet's codepoint and colour, then forward.
    Remark { codepoint: u8, colour: Colour },
    /// Drop, reason [`DropReason::Policer`].
    Drop,
}

impl Verdict {
    fn from_action(action: Action) -> Verdict {
        match action {
            Action::Pass => Verdict::Pass,
            Action::Mark { codepoint, colour } => Verdict::Remark { codepoint, colour },
            Action::Drop => Verdict::Drop,
        }
    }

    /// The reason to record if this verdict drops the packet.
    pub fn drop_reason(self) -> Option<DropReason> {
        (self == Verdict::Drop).then_some(DropReason::Policer)
    }

    /// Applies the verdict to `packet`: sets `class` and `colour` for a
    /// remark; `Err(Policer)` for a drop (the packet is then the caller's to
    /// discard and count).
    pub fn apply<M>(self, packet: &mut Packet<M>) -> Result<(), DropReason> {
        match self {
            Verdict::Pass => Ok(()),
            Verdict::Remark { codepoint, colour } => {
                packet.class = codepoint;
                packet.colour = colour;
                Ok(())
            }
            Verdict::Drop => Err(DropReason::Policer),
        }
    }
}

/// A packet and byte count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub packets: u64,
    pub bytes: u64,
}

impl Counts {
    #[inline]
    fn add(&mut self, size: u32) {
        self.packets += 1;
        self.bytes += size as u64;
    }

    /// The counts between an earlier snapshot and these.
    pub fn since(self, earlier: Counts) -> Counts {
        Counts { packets: self.packets - earlier.packets, bytes: self.bytes - earlier.bytes }
    }
}

/// What one rule has done so far.
///
/// Invariants: the three `by_colour` counts add up to `matched`, and so do
/// `passed + remarked + dropped`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuleStats {
    /// Packets the rule matched (it was the first matching rule).
    pub matched: Counts,
    /// By the colour the meter gave (Green for a rule without a meter),
    /// indexed by `Colour as usize`; see [`RuleStats::colour`].
    pub by_colour: [Counts; 3],
    /// Verdict `Pass`.
    pub passed: Counts,
    /// Verdict `Remark`.
    pub remarked: Counts,
    /// Verdict `Drop` (all with reason [`DropReason::Policer`]).
    pub dropped: Counts,
}

impl RuleStats {
    /// The packets and bytes the meter coloured `colour`.
    pub fn colour(&self, colour: Colour) -> Counts {
        self.by_colour[colour as usize]
    }

    /// What the rule did between an earlier snapshot and now.
    pub fn since(&self, earlier: &RuleStats) -> RuleStats {
        let mut by_colour = self.by_colour;
        for (now, then) in by_colour.iter_mut().zip(earlier.by_colour) {
            *now = now.since(then);
        }
        RuleStats {
            matched: self.matched.since(earlier.matched),
            by_colour,
            passed: self.passed.since(earlier.passed),
            remarked: self.remarked.since(earlier.remarked),
            dropped: self.dropped.since(earlier.dropped),
        }
    }
}

/// A snapshot of a conditioner's statistics (at the end of a warm-up, say):
/// per rule, in rule order, and the packets no rule matched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConditionerCounts {
    pub rules: Vec<RuleStats>,
    pub unmatched: Counts,
}

/// Checks that every `Mark` action sets a codepoint in 0..=63.
pub fn validate_actions(actions: &ColourActions) -> Result<(), String> {
    for (which, a) in [("green", actions.green), ("yellow", actions.yellow), ("red", actions.red)] {
        if let Action::Mark { codepoint, .. } = a {
            if codepoint > MAX_CODEPOINT {
                return Err(format!("{which} action marks codepoint {codepoint}: a codepoint is 0..=63"));
            }
        }
    }
    Ok(())
}

/// A built rule: compiled match, its own meter, its actions.
#[derive(Clone, Debug)]
pub struct Rule {
    name: String,
    matcher: Matcher,
    meter: Option<AnyMeter>,
    actions: ColourActions,
}

impl Rule {
    /// A rule from a filter, an optional meter (owned by this rule alone)
    /// and its actions; or why the filter or actions are unusable.
    pub fn new(
        name: impl Into<String>,
        matches: &Match,
        meter: Option<AnyMeter>,
        actions: ColourActions,
    ) -> Result<Rule, String> {
        let name = name.into();
        matches
            .validate()
            .and_then(|()| validate_actions(&actions))
            .map_err(|e| format!("conditioner rule {name:?}: {e}"))?;
        Ok(Rule { name, matcher: matches.compile(), meter, actions })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn matcher(&self) -> &Matcher {
        &self.matcher
    }

    /// The rule's meter, for inspection (token levels and the like).
    pub fn meter(&self) -> Option<&AnyMeter> {
        self.meter.as_ref()
    }

    pub fn actions(&self) -> &ColourActions {
        &self.actions
    }
}

/// An edge traffic conditioner: an ordered list of rules, first match wins.
#[derive(Clone, Debug)]
pub struct Conditioner {
    rules: Vec<Rule>,
    stats: Vec<RuleStats>,
    unmatched: Counts,
}

impl Conditioner {
    /// A conditioner over `rules`, evaluated in order.
    pub fn new(rules: Vec<Rule>) -> Conditioner {
        let stats = vec![RuleStats::default(); rules.len()];
        Conditioner { rules, stats, unmatched: Counts::default() }
    }

    /// The index of the first rule matching `key`, with no side effect.
    #[inline]
    pub fn rule_for(&self, key: &PacketKey) -> Option<usize> {
        self.rules.iter().position(|r| r.matcher.matches(key))
    }

    /// Conditions one packet of `size` bytes arriving at `now` with colour
    /// `colour` (given to colour-aware meters). Updates the matching rule's
    /// meter and statistics. `now` must not go backwards.
    pub fn condition(&mut self, key: &PacketKey, colour: Colour, size: u32, now: Time) -> Verdict {
        let Some(i) = self.rule_for(key) else {
            self.unmatched.add(size);
            return Verdict::Pass;
        };
        let rule = &mut self.rules[i];
        let metered = match &mut rule.meter {
            Some(m) => m.meter(size, colour, now),
            None => Colour::Green,
        };
        let verdict = Verdict::from_action(rule.actions.action(metered));
        let s = &mut self.stats[i];
        s.matched.add(size);
        s.by_colour[metered as usize].add(size);
        match verdict {
            Verdict::Pass => s.passed.add(size),
            Verdict::Remark { .. } => s.remarked.add(size),
            Verdict::Drop => s.dropped.add(size),
        }
        verdict
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Per-rule statistics, in rule order.
    pub fn stats(&self) -> &[RuleStats] {
        &self.stats
    }

    /// The statistics of the rule named `name`.
    pub fn stats_of(&self, name: &str) -> Option<&RuleStats> {
        let i = self.rules.iter().position(|r| r.name == name)?;
        Some(&self.stats[i])
    }

    /// Packets no rule matched (passed unchanged).
    pub fn unmatched(&self) -> Counts {
        self.unmatched
    }

    /// Every rule's statistics and the unmatched count, as they are now.
    pub fn counts(&self) -> ConditionerCounts {
        ConditionerCounts { rules: self.stats.clone(), unmatched: self.unmatched }
    }
}

/// A meter's parameters: the plain-data form of [`AnyMeter`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MeterConfig {
    TokenBucket(TokenBucketParams),
    Srtcm(SrtcmParams),
    Trtcm(TrtcmParams),
    Tsw2cm(Tsw2cmParams),
    Tsw3cm(Tsw3cmParams),
    /// The frame-aware GCRA; needs a link with AAL5 framing.
    Fgcra(FgcraParams),
}

impl MeterConfig {
    pub fn validate(&self) -> Result<(), String> {
        match self {
            MeterConfig::TokenBucket(p) => p.validate(),
            MeterConfig::Srtcm(p) => p.validate(),
            MeterConfig::Trtcm(p) => p.validate(),
            MeterConfig::Tsw2cm(p) => p.validate(),
            MeterConfig::Tsw3cm(p) => p.validate(),
            MeterConfig::Fgcra(p) => p.validate(),
        }
    }

    /// Whether the meter counts cells (F-GCRA): its link needs cell framing.
    pub fn counts_cells(&self) -> bool {
        matches!(self, MeterConfig::Fgcra(_))
    }

    /// Whether the meter draws random numbers (the TSW markers).
    pub fn is_random(&self) -> bool {
        matches!(self, MeterConfig::Tsw2cm(_) | MeterConfig::Tsw3cm(_))
    }

    /// A fresh meter on a link without framing; `rng` is used only by the
    /// TSW markers.
    pub fn build(&self, rng: Rng) -> Result<AnyMeter, String> {
        self.build_on(Framing::None, rng)
    }

    /// A fresh meter on a link with `framing` (F-GCRA counts its cells).
    pub fn build_on(&self, framing: Framing, rng: Rng) -> Result<AnyMeter, String> {
        Ok(match self {
            MeterConfig::TokenBucket(p) => TokenBucket::new(p.clone())?.into(),
            MeterConfig::Srtcm(p) => Srtcm::new(p.clone())?.into(),
            MeterConfig::Trtcm(p) => Trtcm::new(p.clone())?.into(),
            MeterConfig::Tsw2cm(p) => Tsw2cm::new(p.clone(), rng)?.into(),
            MeterConfig::Tsw3cm(p) => Tsw3cm::new(p.clone(), rng)?.into(),
            MeterConfig::Fgcra(p) => Fgcra::new(p.clone(), framing)?.into(),
        })
    }
}

/// One rule as plain data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleConfig {
    /// Unique within the conditioner; labels the rule's statistics and names
    /// its random stream.
    pub name: String,
    pub matches: Match,
    /// `None`: every matching packet gets the `green` action.
    pub meter: Option<MeterConfig>,
    pub actions: ColourActions,
}

impl RuleConfig {
    /// A metered rule.
    pub fn metered(name: impl Into<String>, matches: Match, meter: MeterConfig, actions: ColourActions) -> RuleConfig {
        RuleConfig { name: name.into(), matches, meter: Some(meter), actions }
    }

    /// A rule without a meter that marks every matching packet `codepoint`,
    /// coloured by its drop precedence ([`dscp::drop_precedence`](super::dscp::drop_precedence)).
    pub fn remark(name: impl Into<String>, matches: Match, codepoint: u8) -> RuleConfig {
        let mark = Action::Mark { codepoint, colour: super::dscp::drop_precedence(codepoint) };
        RuleConfig {
            name: name.into(),
            matches,
            meter: None,
            actions: ColourActions { green: mark, yellow: mark, red: mark },
        }
    }

    /// A rule without a meter that lets matching packets through unchanged
    /// (and so shields them from later rules).
    pub fn pass(name: impl Into<String>, matches: Match) -> RuleConfig {
        RuleConfig {
            name: name.into(),
            matches,
            meter: None,
            actions: ColourActions { green: Action::Pass, yellow: Action::Pass, red: Action::Pass },
        }
    }
}

/// An edge conditioner as plain data: what a scenario holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConditionerConfig {
    /// Evaluated in order; the first match decides.
    pub rules: Vec<RuleConfig>,
}

impl ConditionerConfig {
    /// Checks every rule: a non-empty unique name, a valid match, valid meter
    /// parameters, codepoints in 0..=63, and no rule made unreachable by an
    /// earlier rule that matches everything. The message names the rule.
    pub fn validate(&self) -> Result<(), String> {
        let mut catch_all: Option<&str> = None;
        for (i, r) in self.rules.iter().enumerate() {
            let at = |e: String| format!("conditioner rule {i} ({:?}): {e}", r.name);
            if r.name.is_empty() {
                return Err(at("the name is empty".into()));
            }
            if let Some(j) = self.rules[..i].iter().position(|q| q.name == r.name) {
                return Err(at(format!("the name is already used by rule {j}")));
            }
            if let Some(any) = catch_all {
                return Err(at(format!("unreachable: the earlier rule {any:?} matches every packet")));
            }
            r.matches.validate().map_err(at)?;
            if let Some(m) = &r.meter {
                m.validate().map_err(at)?;
            }
            validate_actions(&r.actions).map_err(at)?;
            if r.matches.is_any() {
                catch_all = Some(&r.name);
            }
        }
        Ok(())
    }

    /// Whether a rule's meter counts cells (F-GCRA): the conditioner then
    /// needs a link with cell framing.
    pub fn counts_cells(&self) -> bool {
        self.rules.iter().any(|r| r.meter.as_ref().is_some_and(MeterConfig::counts_cells))
    }

    /// Builds fresh meters (full buckets) and returns the conditioner, for
    /// a link without framing (see [`ConditionerConfig::build_on`]).
    pub fn build(&self, rng: Rng) -> Conditioner {
        self.build_on(Framing::None, rng)
    }

    /// Builds fresh meters (full buckets) and returns the conditioner.
    ///
    /// Randomness: one `u64` is drawn from `rng`, and the TSW meter of rule
    /// `name` gets `Rng::derive(that, "conditioner/<name>")`, so adding or
    /// reordering rules leaves the other rules' streams unchanged. `rng` is
    /// the stream the caller derived for this conditioner (e.g. from the
    /// run's seed and the node's name).
    ///
    /// # Panics
    ///
    /// If [`validate`](Self::validate) fails, or a meter counts cells and
    /// `framing` carries none: build only validated configs.
    pub fn build_on(&self, framing: Framing, mut rng: Rng) -> Conditioner {
        if let Err(e) = self.validate() {
            panic!("building an invalid conditioner: {e}");
        }
        let base = rng.next_u64();
        let rules = self
            .rules
            .iter()
            .map(|r| {
                let meter = r.meter.as_ref().map(|m| {
                    m.build_on(framing, Rng::derive(base, &format!("conditioner/{}", r.name)))
                        .expect("validated meter parameters")
                });
                Rule::new(r.name.clone(), &r.matches, meter, r.actions).expect("validated rule")
            })
            .collect();
        Conditioner::new(rules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::dscp::{self, AF11, AF12, AF13, CS1, CS5, DF, EF};
    use crate::classify::multifield::Protocol;
    use crate::mark::ColourMode;
    use Colour::*;

    fn key(group: u32, codepoint: u8) -> PacketKey {
        PacketKey { flow: 100 + group, group, src: group, dst: 0, protocol: Protocol::Tcp, codepoint }
    }

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn mark(codepoint: u8, colour: Colour) -> Verdict {
        Verdict::Remark { codepoint, colour }
    }

    fn check_invariants(s: &RuleStats) {
        let sum = |cs: &[Counts]| Counts {
            packets: cs.iter().map(|c| c.packets).sum(),
            bytes: cs.iter().map(|c| c.bytes).sum(),
        };
        assert_eq!(sum(&s.by_colour), s.matched, "{s:?}");
        assert_eq!(sum(&[s.passed, s.remarked, s.dropped]), s.matched, "{s:?}");
    }

    /// Customer A (group 1): trTCM PIR 16000 bit/s (2 B/ms), PBS 1500 B,
    /// CIR 8000 bit/s (1 B/ms), CBS 1000 B.
    /// Customer B (group 2): PIR 32000 bit/s (4 B/ms), PBS 2000 B,
    /// CIR 16000 bit/s (2 B/ms), CBS 1000 B. Both colour-blind, marking
    /// Green/Yellow/Red into AF11/AF12/AF13.
    fn two_customers() -> ConditionerConfig {
        let trtcm =
            |pir, pbs, cir, cbs| MeterConfig::Trtcm(TrtcmParams { pir, pbs, cir, cbs, mode: ColourMode::Blind });
        let af1 = ColourActions::marker(AF11, AF12, AF13);
        ConditionerConfig {
            rules: vec![
                RuleConfig::metered("A", Match::ANY.with_groups([1]), trtcm(16_000, 1_500, 8_000, 1_000), af1),
                RuleConfig::metered("B", Match::ANY.with_groups([2]), trtcm(32_000, 2_000, 16_000, 1_000), af1),
            ],
        }
    }

    /// F-GCRA at the edge of an AAL5 link, T = 80 µs (5.3 Mb/s of cells),
    /// τ = 0, 1500-byte frames (32 cells): a frame at 0 conforms (TAT 2.56
    /// ms), one at 1 ms does not, one at 2.56 ms does. As a marker the
    /// non-conforming frame is remarked AF13 (red); as a policer it is dropped.
    #[test]
    fn fgcra_marks_or_polices_whole_frames() {
        let fgcra = MeterConfig::Fgcra(FgcraParams { rate: 5_300_000, tau: Time::ZERO, mode: ColourMode::Blind });
        let times = [0, 1_000, 2_560];
        for (actions, out) in
            [(ColourActions::marker(AF11, AF12, AF13), mark(AF13, Red)), (ColourActions::policer(), Verdict::Drop)]
        {
            let cfg = ConditionerConfig { rules: vec![RuleConfig::metered("sla", Match::ANY, fgcra.clone(), actions)] };
            assert!(cfg.counts_cells());
            let mut c = cfg.build_on(Framing::AAL5, Rng::derive(1, "edge"));
            let got: Vec<Verdict> =
                times.iter().map(|&t| c.condition(&key(1, AF11), Green, 1500, Time::from_micros(t))).collect();
            let first = if out == Verdict::Drop { Verdict::Pass } else { mark(AF11, Green) };
            assert_eq!(got, [first, out, first]);
        }
    }

    #[test]
    fn two_trtcm_customers_exact_remark_sequence() {
        let cfg = two_customers();
        cfg.validate().unwrap();
        let mut c = cfg.build(Rng::derive(1, "edge"));
        let (g, y, r) = (mark(AF11, Green), mark(AF12, Yellow), mark(AF13, Red));
        // (group, arriving colour, time, expected); 500-byte packets.
        // Token levels (Tp, Tc) in bytes before → after, by hand (RFC 2698 §3).
        let train = [
            // t = 0, both buckets full. A: (1500, 1000), B: (2000, 1000).
            (1, Green, 0, g),             // A → (1000, 500)
            (2, Green, 0, g),             // B → (1500, 500)
            (1, Green, 0, g),             // A: B = Tc → (500, 0)
            (2, Green, 0, g),             // B → (1000, 0)
            (1, Green, 0, y),             // A: Tc 0 < 500, Tp = 500 → (0, 0)
            (2, Green, 0, y),             // B → (500, 0)
            (1, Green, 0, r),             // A: Tp 0 < 500
            (2, Green, 0, y),             // B: Tp = B → (0, 0)
            (2, Green, 0, r),             // B: empty
            (3, Green, 0, Verdict::Pass), // nobody's customer
            // t = 250 ms: A gains (500, 250) → (500, 250); B (1000, 500).
            (1, Green, 250, y), // A → (0, 250)
            (2, Green, 250, g), // B → (500, 0)
            // t = 500 ms: A (0+500, 250+250) = (500, 500); B (500+1000, 0+500).
            (1, Green, 500, g), // A → (0, 0)
            (2, Green, 500, g), // B: (1500, 500) → (1000, 0)
            (2, Green, 500, y), // B → (500, 0)
            // t = 1000 ms: A (1000, 500); colour-blind ignores the Red.
            (1, Red, 1_000, g),   // A → (500, 0)
            (1, Green, 1_000, y), // A → (0, 0)
            (1, Yellow, 1_000, r),
        ];
        for (n, &(group, colour, t, want)) in train.iter().enumerate() {
            let got = c.condition(&key(group, DF), colour, 500, ms(t));
            assert_eq!(got, want, "packet {n} (group {group}, t = {t} ms)");
        }
        let a = c.stats_of("A").unwrap();
        let b = c.stats_of("B").unwrap();
        check_invariants(a);
        check_invariants(b);
        let n = |packets| Counts { packets, bytes: 500 * packets };
        assert_eq!(a.matched, n(9));
        assert_eq!(a.by_colour, [n(4), n(3), n(2)]);
        assert_eq!(b.matched, n(8));
        assert_eq!(b.by_colour, [n(4), n(3), n(1)]);
        assert_eq!((a.remarked, a.dropped, a.passed), (n(9), n(0), n(0)));
        assert_eq!(c.unmatched(), n(1));
        match c.rules()[0].meter() {
            Some(AnyMeter::Trtcm(m)) => assert_eq!((m.tp(), m.tc()), (0.0, 0.0)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn one_meter_per_rule_meters_the_aggregate() {
        // One rule for groups 1 and 2 together: they share A's buckets.
        let mut cfg = two_customers();
        cfg.rules.truncate(1);
        cfg.rules[0].matches = Match::ANY.with_groups([1, 2]);
        let mut c = cfg.build(Rng::derive(1, "edge"));
        let got: Vec<_> = [1, 2, 1, 2].iter().map(|&grp| c.condition(&key(grp, DF), Green, 500, ms(0))).collect();
        assert_eq!(got, [mark(AF11, Green), mark(AF11, Green), mark(AF12, Yellow), mark(AF13, Red)]);
    }

    #[test]
    fn colour_aware_meter_sees_the_arriving_colour() {
        let mut cfg = two_customers();
        if let Some(MeterConfig::Trtcm(p)) = &mut cfg.rules[0].meter {
            p.mode = ColourMode::Aware;
        }
        let mut c = cfg.build(Rng::derive(1, "edge"));
        // Full buckets, but precoloured Yellow stays Yellow, Red stays Red.
        assert_eq!(c.condition(&key(1, AF12), Yellow, 500, ms(0)), mark(AF12, Yellow));
        assert_eq!(c.condition(&key(1, AF13), Red, 500, ms(0)), mark(AF13, Red));
        assert_eq!(c.condition(&key(1, AF11), Green, 500, ms(0)), mark(AF11, Green));
        // B is still colour-blind.
        assert_eq!(c.condition(&key(2, AF13), Red, 500, ms(0)), mark(AF11, Green));
    }

    #[test]
    fn policer_drops_exactly_the_out_of_profile_packets() {
        // Token bucket 8000 bit/s = 1 B/ms, depth 1000 B; drop Red.
        let cfg = ConditionerConfig {
            rules: vec![RuleConfig::metered(
                "police",
                Match::ANY.with_protocol(Protocol::Udp),
                MeterConfig::TokenBucket(TokenBucketParams { rate: 8_000, burst_size: 1_000 }),
                ColourActions::policer(),
            )],
        };
        cfg.validate().unwrap();
        let mut c = cfg.build(Rng::derive(1, "edge"));
        let udp = PacketKey { protocol: Protocol::Udp, ..key(1, EF) };
        let tcp = key(1, EF);
        let (p, d) = (Verdict::Pass, Verdict::Drop);
        // (time ms, expected) for 300-byte packets; tokens by hand.
        let train = [
            (0, p), // 1000 → 700
            (0, p), // → 400
            (0, p), // → 100
            (0, d), // 100 < 300
            (0, d),
            (0, d),
            (0, d),
            (0, d),
            (0, d),
            (0, d),   // ten at t = 0: seven out of profile, 100 B left
            (200, p), // 100 + 200 = 300 → 0
            (250, d), // 50 < 300
            (549, p), // 50 + 299 = 349 → 49
        ];
        for (n, &(t, want)) in train.iter().enumerate() {
            let got = c.condition(&udp, Green, 300, ms(t));
            assert_eq!(got, want, "packet {n} at {t} ms");
            // TCP is not policed and takes no tokens.
            assert_eq!(c.condition(&tcp, Green, 300, ms(t)), Verdict::Pass);
        }
        // 49 B left; at 800 ms 49 + 251 = 300: exactly enough.
        assert_eq!(c.condition(&udp, Green, 300, ms(800)), p);
        assert_eq!(c.condition(&udp, Green, 1, ms(800)), d);
        let s = c.stats()[0];
        check_invariants(&s);
        assert_eq!(s.matched, Counts { packets: 15, bytes: 4_201 });
        assert_eq!(s.dropped, Counts { packets: 9, bytes: 2_401 });
        assert_eq!(s.passed, Counts { packets: 6, bytes: 1_800 });
        assert_eq!(s.dropped, s.colour(Red));
        assert_eq!(s.passed, s.colour(Green));
        assert_eq!(s.colour(Yellow), Counts::default());
        assert_eq!(c.unmatched(), Counts { packets: 13, bytes: 3_900 });
        assert_eq!(d.drop_reason(), Some(DropReason::Policer));
        assert_eq!(p.drop_reason(), None);
    }

    fn first_match_rules() -> Vec<RuleConfig> {
        vec![
            RuleConfig::remark("voice", Match::ANY.with_codepoints([EF]), CS5),
            RuleConfig::remark("udp", Match::ANY.with_protocol(Protocol::Udp), CS1),
            RuleConfig::pass("host7", Match::ANY.with_src([7])),
            RuleConfig::remark("rest", Match::ANY, DF),
        ]
    }

    #[test]
    fn first_matching_rule_wins() {
        let cfg = ConditionerConfig { rules: first_match_rules() };
        cfg.validate().unwrap();
        let mut c = cfg.build(Rng::derive(0, "x"));
        let udp = |cp| PacketKey { protocol: Protocol::Udp, ..key(1, cp) };
        let host7 = PacketKey { src: 7, ..udp(AF11) };
        let cases = [
            (udp(EF), Some(0), mark(CS5, Green)),
            (key(1, EF), Some(0), mark(CS5, Green)),
            (udp(AF11), Some(1), mark(CS1, Green)),
            (host7, Some(1), mark(CS1, Green)),
            (PacketKey { protocol: Protocol::Tcp, ..host7 }, Some(2), Verdict::Pass),
            (key(1, AF12), Some(3), mark(DF, Green)),
        ];
        for (k, rule, want) in cases {
            assert_eq!(c.rule_for(&k), rule, "{k:?}");
            assert_eq!(c.condition(&k, Yellow, 100, ms(0)), want, "{k:?}");
        }
        let packets: Vec<u64> = c.stats().iter().map(|s| s.matched.packets).collect();
        assert_eq!(packets, [2, 2, 1, 1]);
        for s in c.stats() {
            check_invariants(s);
            // Without a meter, everything counts as Green.
            assert_eq!(s.colour(Green), s.matched);
        }
        assert_eq!(c.unmatched(), Counts::default());

        // Reversed order (catch-all removed): UDP EF now hits "udp".
        let mut rules = first_match_rules();
        rules.pop();
        rules.swap(0, 1);
        let mut c = ConditionerConfig { rules }.build(Rng::derive(0, "x"));
        assert_eq!(c.condition(&udp(EF), Green, 100, ms(0)), mark(CS1, Green));
        assert_eq!(c.condition(&key(1, EF), Green, 100, ms(0)), mark(CS5, Green));
        assert_eq!(c.condition(&key(1, AF12), Red, 100, ms(0)), Verdict::Pass);
        assert_eq!(c.unmatched().packets, 1);
    }

    #[test]
    fn remark_colours_by_drop_precedence_and_apply_sets_the_packet() {
        let r = RuleConfig::remark("x", Match::ANY, AF12);
        assert_eq!(r.actions.green, Action::Mark { codepoint: AF12, colour: Yellow });
        let mut p = Packet {
            flow: 1,
            class: DF,
            colour: Green,
            ecn: crate::Ecn::NotEct,
            size: 100,
            created: Time::ZERO,
            enqueued: Time::ZERO,
            meta: (),
        };
        assert_eq!(mark(AF13, dscp::drop_precedence(AF13)).apply(&mut p), Ok(()));
        assert_eq!((p.class, p.colour), (AF13, Red));
        assert_eq!(Verdict::Pass.apply(&mut p), Ok(()));
        assert_eq!((p.class, p.colour), (AF13, Red));
        assert_eq!(Verdict::Drop.apply(&mut p), Err(DropReason::Policer));
    }

    #[test]
    fn validate_names_the_rule_at_fault() {
        let bad = |rules: Vec<RuleConfig>| ConditionerConfig { rules }.validate().unwrap_err();
        let e = bad(first_match_rules().into_iter().rev().collect());
        assert_eq!(
            e,
            "conditioner rule 1 (\"host7\"): unreachable: the earlier rule \"rest\" \
             matches every packet"
        );
        let mut rules = first_match_rules();
        rules[1].name = "voice".into();
        assert_eq!(bad(rules), "conditioner rule 1 (\"voice\"): the name is already used by rule 0");
        let mut rules = first_match_rules();
        rules[0].name.clear();
        assert!(bad(rules).contains("name is empty"));
        let e = bad(vec![RuleConfig::remark("x", Match::ANY, 64)]);
        assert!(e.contains("rule 0 (\"x\")") && e.contains("codepoint 64"), "{e}");
        let e = bad(vec![RuleConfig::pass("x", Match::ANY.with_groups([]))]);
        assert!(e.contains("`groups`"), "{e}");
        let mut cfg = two_customers();
        if let Some(MeterConfig::Trtcm(p)) = &mut cfg.rules[1].meter {
            p.pir = 1;
        }
        let e = cfg.validate().unwrap_err();
        assert!(e.starts_with("conditioner rule 1 (\"B\"): trTCM PIR (1 bit/s)"), "{e}");
        // Rule::new checks too.
        let e = Rule::new("r", &Match::ANY, None, ColourActions::marker(1, 2, 99)).unwrap_err();
        assert!(e.contains("red action marks codepoint 99"), "{e}");
        // An empty conditioner is legal and passes everything.
        let mut c = ConditionerConfig::default().build(Rng::derive(0, "x"));
        assert_eq!(c.condition(&key(1, EF), Red, 1, ms(0)), Verdict::Pass);
    }

    #[test]
    #[should_panic(expected = "building an invalid conditioner")]
    fn build_panics_on_invalid_config() {
        ConditionerConfig { rules: vec![RuleConfig::remark("x", Match::ANY, 64)] }.build(Rng::derive(0, "x"));
    }

    #[test]
    fn tsw_streams_are_per_rule_and_deterministic() {
        let tsw = |name: &str, g| {
            RuleConfig::metered(
                name,
                Match::ANY.with_groups([g]),
                MeterConfig::Tsw2cm(Tsw2cmParams { ctr: 80_000, win_length: ms(100) }),
                ColourActions::marker(AF11, AF12, AF13),
            )
        };
        let run = |rules: Vec<RuleConfig>| {
            let mut c = ConditionerConfig { rules }.build(Rng::derive(5, "edge"));
            (0..400u64).map(|i| c.condition(&key(1, DF), Green, 1_000, Time::from_micros(500 * i))).collect::<Vec<_>>()
        };
        let one = run(vec![tsw("a", 1)]);
        // 1000 B every 0.5 ms = 16 Mb/s against CTR 80 kb/s: mostly out.
        assert!(one.iter().filter(|&&v| v == mark(AF13, Red)).count() > 300);
        assert_eq!(one, run(vec![tsw("a", 1)]));
        // Adding an unrelated rule in front leaves rule "a"'s stream alone.
        assert_eq!(one, run(vec![tsw("b", 2), tsw("a", 1)]));
        assert!(MeterConfig::Tsw2cm(Tsw2cmParams { ctr: 1, win_length: ms(1) }).is_random());
    }
}
