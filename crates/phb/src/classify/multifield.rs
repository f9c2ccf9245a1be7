//! Multi-field (MF) classification: match a packet on several header fields
//! at once.
//!
//! RFC 2475 §2.3.1 defines the two classifier kinds of a DiffServ router:
//! the behaviour-aggregate classifier (the codepoint alone, see
//! [`dscp`](super::dscp)) and the multi-field classifier, which selects
//! packets "based on the value of a combination of one or more IP header
//! fields, such as source address, destination address, DS field, protocol
//! ID, source port and destination port numbers". RFC 3290 §4.2.2 models it
//! as a list of filters.
//!
//! The simulator has no IP addresses or ports; a flow's end nodes stand for
//! addresses and its flow id (and the flow group it was declared in) for the
//! port pair. A [`PacketKey`] carries these fields; the caller fills it from
//! what it knows per flow, since [`Packet`](crate::Packet) itself carries
//! only the flow id and the codepoint.
//!
//! A [`Match`] holds an optional set per field: every present field must
//! contain the key's value (logical AND across fields, OR within a set); an
//! absent field matches anything. [`Match::ANY`] matches every packet.
//!
//! [`Match`] is plain data (what a scenario writes). [`Match::compile`]
//! turns it into a [`Matcher`] — codepoints as a 64-bit mask, id sets sorted
//! and deduplicated — whose [`Matcher::matches`] does no allocation and at
//! most a binary search per field. [`Match::matches`] gives the same answer
//! by scanning the lists, for one-off use.

/// Transport protocol, the one header field besides addresses and ports a
/// 5-tuple classifier looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Protocol {
    Tcp,
    Udp,
    /// Any other IP protocol (ICMP, say): only real packets carry it, those
    /// of programs run in an emulation's hosts; no scenario key names it.
    Other,
}

/// What a multi-field classifier sees of a packet; the caller fills it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacketKey {
    /// Flow id (the simulator's index; stands for the port pair).
    pub flow: u32,
    /// Flow-group id the simulator assigns (a scenario's `[[flows]]` entry).
    pub group: u32,
    /// Source node id (stands for the source address).
    pub src: u32,
    /// Destination node id.
    pub dst: u32,
    pub protocol: Protocol,
    /// The DSCP codepoint the packet arrives with (0..=63).
    pub codepoint: u8,
}

/// A multi-field filter: each present field must match (AND), an absent
/// field matches any value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Match {
    /// Codepoints (0..=63) the packet may carry.
    pub codepoints: Option<Vec<u8>>,
    /// Flow ids.
    pub flows: Option<Vec<u32>>,
    /// Flow-group ids.
    pub groups: Option<Vec<u32>>,
    /// Source node ids.
    pub src: Option<Vec<u32>>,
    /// Destination node ids.
    pub dst: Option<Vec<u32>>,
    pub protocol: Option<Protocol>,
}

fn contains<T: PartialEq>(set: &Option<Vec<T>>, value: T) -> bool {
    match set {
        None => true,
        Some(s) => s.contains(&value),
    }
}

impl Match {
    /// Matches every packet.
    pub const ANY: Match = Match { codepoints: None, flows: None, groups: None, src: None, dst: None, protocol: None };

    pub fn with_codepoints(mut self, v: impl IntoIterator<Item = u8>) -> Match {
        self.codepoints = Some(v.into_iter().collect());
        self
    }

    pub fn with_flows(mut self, v: impl IntoIterator<Item = u32>) -> Match {
        self.flows = Some(v.into_iter().collect());
        self
    }

    pub fn with_groups(mut self, v: impl IntoIterator<Item = u32>) -> Match {
        self.groups = Some(v.into_iter().collect());
        self
    }

    pub fn with_src(mut self, v: impl IntoIterator<Item = u32>) -> Match {
        self.src = Some(v.into_iter().collect());
        self
    }

    pub fn with_dst(mut self, v: impl IntoIterator<Item = u32>) -> Match {
        self.dst = Some(v.into_iter().collect());
        self
    }

    pub fn with_protocol(mut self, p: Protocol) -> Match {
        self.protocol = Some(p);
        self
    }

    /// Whether no field is constrained (the filter matches everything).
    pub fn is_any(&self) -> bool {
        *self == Match::ANY
    }

    /// Checks the filter: codepoints must be 0..=63, and a present list must
    /// not be empty (it would match nothing; omit the field to match any).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(cps) = &self.codepoints {
            if let Some(&bad) = cps.iter().find(|&&c| c > super::dscp::MAX_CODEPOINT) {
                return Err(format!("match codepoint {bad} is out of range: a codepoint is 0..=63"));
            }
        }
        let lists = [
            ("codepoints", self.codepoints.as_ref().map(Vec::len)),
            ("flows", self.flows.as_ref().map(Vec::len)),
            ("groups", self.groups.as_ref().map(Vec::len)),
            ("src", self.src.as_ref().map(Vec::len)),
            ("dst", self.dst.as_ref().map(Vec::len)),
        ];
        for (field, len) in lists {
            if len == Some(0) {
                return Err(format!(
                    "match field `{field}` is an empty list, which matches nothing; \
                     omit it to match any {field}"
                ));
            }
        }
        Ok(())
    }

    /// Whether `key` passes the filter (scans the lists; see
    /// [`Matcher::matches`] for the fast form).
    pub fn matches(&self, key: &PacketKey) -> bool {
        contains(&self.codepoints, key.codepoint)
            && contains(&self.flows, key.flow)
            && contains(&self.groups, key.group)
            && contains(&self.src, key.src)
            && contains(&self.dst, key.dst)
            && (self.protocol.is_none() || self.protocol == Some(key.protocol))
    }

    /// The filter in its fast form. Codepoints above 63 are ignored (they
    /// can never match; [`Match::validate`] rejects them).
    pub fn compile(&self) -> Matcher {
        let set = |v: &Option<Vec<u32>>| {
            v.as_ref().map(|v| {
                let mut s = v.clone();
                s.sort_unstable();
                s.dedup();
                s.into_boxed_slice()
            })
        };
        Matcher {
            codepoints: self.codepoints.as_ref().map_or(u64::MAX, |cps| {
                cps.iter().filter(|&&c| c <= super::dscp::MAX_CODEPOINT).fold(0, |m, &c| m | 1u64 << c)
            }),
            flows: set(&self.flows),
            groups: set(&self.groups),
            src: set(&self.src),
            dst: set(&self.dst),
            protocol: self.protocol,
        }
    }
}

/// A compiled [`Match`]: codepoint mask and sorted id sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matcher {
    /// Bit `c` set: codepoint `c` matches (all ones when the field is absent).
    codepoints: u64,
    flows: Option<Box<[u32]>>,
    groups: Option<Box<[u32]>>,
    src: Option<Box<[u32]>>,
    dst: Option<Box<[u32]>>,
    protocol: Option<Protocol>,
}

#[inline]
fn in_set(set: &Option<Box<[u32]>>, value: u32) -> bool {
    match set {
        None => true,
        // Linear scan is faster than bisection for the few ids a rule lists.
        Some(s) if s.len() <= 8 => s.contains(&value),
        Some(s) => s.binary_search(&value).is_ok(),
    }
}

impl Matcher {
    /// Whether `key` passes the filter. Allocation-free; the codepoint test
    /// is one shift and mask.
    #[inline]
    pub fn matches(&self, key: &PacketKey) -> bool {
        key.codepoint <= super::dscp::MAX_CODEPOINT
            && self.codepoints >> key.codepoint & 1 == 1
            && (self.protocol.is_none() || self.protocol == Some(key.protocol))
            && in_set(&self.flows, key.flow)
            && in_set(&self.groups, key.group)
            && in_set(&self.src, key.src)
            && in_set(&self.dst, key.dst)
    }

    /// The codepoint mask: bit `c` set when codepoint `c` matches.
    pub fn codepoint_mask(&self) -> u64 {
        self.codepoints
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::dscp::{AF11, AF12, AF13, EF};
    use proptest::prelude::*;

    fn key() -> PacketKey {
        PacketKey { flow: 7, group: 2, src: 1, dst: 9, protocol: Protocol::Tcp, codepoint: AF11 }
    }

    fn both(m: &Match, k: &PacketKey) -> bool {
        let (slow, fast) = (m.matches(k), m.compile().matches(k));
        assert_eq!(slow, fast, "{m:?} {k:?}");
        fast
    }

    #[test]
    fn absent_fields_match_anything() {
        assert!(both(&Match::ANY, &key()));
        assert!(Match::ANY.is_any());
        assert_eq!(Match::ANY.compile().codepoint_mask(), u64::MAX);
        let k = PacketKey { codepoint: 63, flow: u32::MAX, ..key() };
        assert!(both(&Match::default(), &k));
    }

    #[test]
    fn each_field_alone() {
        let k = key();
        assert!(both(&Match::ANY.with_flows([3, 7]), &k));
        assert!(!both(&Match::ANY.with_flows([3, 8]), &k));
        assert!(both(&Match::ANY.with_groups([2]), &k));
        assert!(!both(&Match::ANY.with_groups([1]), &k));
        assert!(both(&Match::ANY.with_src([1]), &k));
        assert!(!both(&Match::ANY.with_src([9]), &k));
        assert!(both(&Match::ANY.with_dst([9]), &k));
        assert!(!both(&Match::ANY.with_dst([1]), &k));
        assert!(both(&Match::ANY.with_protocol(Protocol::Tcp), &k));
        assert!(!both(&Match::ANY.with_protocol(Protocol::Udp), &k));
        assert!(both(&Match::ANY.with_codepoints([AF11, EF]), &k));
        assert!(!both(&Match::ANY.with_codepoints([AF12, AF13]), &k));
    }

    #[test]
    fn fields_are_anded() {
        let k = key();
        let m = Match::ANY.with_groups([2]).with_src([1]).with_protocol(Protocol::Tcp).with_codepoints([AF11]);
        assert!(both(&m, &k));
        // Any one field failing fails the whole match.
        assert!(!both(&m.clone().with_protocol(Protocol::Udp), &k));
        assert!(!both(&m.clone().with_dst([8]), &k));
        assert!(!both(&m.clone().with_codepoints([0]), &k));
        assert!(!both(&m, &PacketKey { group: 3, ..k }));
    }

    #[test]
    fn codepoint_mask() {
        let c = Match::ANY.with_codepoints([0, 10, 46, 63, 10]).compile();
        assert_eq!(c.codepoint_mask(), 1 | 1 << 10 | 1 << 46 | 1 << 63);
        for cp in 0..=63u8 {
            let k = PacketKey { codepoint: cp, ..key() };
            assert_eq!(c.matches(&k), [0, 10, 46, 63].contains(&cp), "{cp}");
        }
        // An out-of-range codepoint in a key matches no codepoint set and
        // does not overflow the shift.
        let k = PacketKey { codepoint: 64, ..key() };
        assert!(!c.matches(&k));
    }

    #[test]
    fn large_sets_use_bisection() {
        let m = Match::ANY.with_flows((0..100).rev().map(|i| 3 * i));
        let c = m.compile();
        for f in 0..300 {
            let k = PacketKey { flow: f, ..key() };
            assert_eq!(c.matches(&k), f % 3 == 0, "{f}");
            assert_eq!(m.matches(&k), f % 3 == 0, "{f}");
        }
    }

    #[test]
    fn validate_rejects_empty_lists_and_bad_codepoints() {
        assert_eq!(Match::ANY.validate(), Ok(()));
        let e = Match::ANY.with_codepoints([64]).validate().unwrap_err();
        assert!(e.contains("64") && e.contains("0..=63"), "{e}");
        let e = Match::ANY.with_flows([]).validate().unwrap_err();
        assert!(e.contains("`flows`"), "{e}");
        let e = Match::ANY.with_dst([]).validate().unwrap_err();
        assert!(e.contains("`dst`"), "{e}");
        assert!(Match::ANY.with_codepoints([]).validate().is_err());
    }

    fn opt_set(max: u32) -> impl Strategy<Value = Option<Vec<u32>>> {
        prop::option::of(prop::collection::vec(0..max, 1..12))
    }

    proptest! {
        /// The compiled matcher agrees with the plain one.
        #[test]
        fn compiled_agrees(
            cps in prop::option::of(prop::collection::vec(0u8..64, 1..6)),
            flows in opt_set(20), groups in opt_set(4), src in opt_set(4), dst in opt_set(4),
            proto in prop::option::of(any::<bool>()),
            keys in prop::collection::vec((0u32..20, 0u32..4, 0u32..4, 0u32..4, any::<bool>(), 0u8..64), 1..50),
        ) {
            let p = |b: bool| if b { Protocol::Tcp } else { Protocol::Udp };
            let m = Match { codepoints: cps, flows, groups, src, dst, protocol: proto.map(p) };
            let c = m.compile();
            for (flow, group, src, dst, tcp, codepoint) in keys {
                let k = PacketKey { flow, group, src, dst, protocol: p(tcp), codepoint };
                prop_assert_eq!(m.matches(&k), c.matches(&k));
            }
        }
    }
}
