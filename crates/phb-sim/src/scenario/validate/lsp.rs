//! Validation of `[lsps.NAME]`: an AF LSP with its TWAM (Bouras & Sevasti
//! 2008, Sections 3–4) — the ingress link direction, `RTT_LSP`, `S`, `α`,
//! the window input, the `W_LSP^cwnd` estimate, the marks and the members
//! with their contracted rates.

use std::collections::{BTreeMap, HashMap};

use phb::classify::dscp;
use phb::mark::{TwamParams, WindowSum};

use super::{list, Context, Links, Nodes, Result};
use crate::net::routing::{adjacency, shortest_path};
use crate::scenario::location::join;
use crate::scenario::model::{ClassDef, LspDef, LspMarker, NodeKind, TrafficGroup, Transport, WindowInput};
use crate::scenario::raw;

impl Context<'_> {
    /// Every LSP, in the order of their names (the DWRED channels' order).
    pub(super) fn lsps(
        &self,
        raw: &BTreeMap<String, raw::Lsp>,
        classes: &[ClassDef],
        nodes: &Nodes,
        links: &Links,
        groups: &[TrafficGroup],
    ) -> Result<Vec<LspDef>> {
        if raw.is_empty() {
            return Ok(Vec::new());
        }
        let group_index: HashMap<&str, usize> = groups.iter().enumerate().map(|(i, g)| (g.name.as_str(), i)).collect();
        let mut member_of: HashMap<usize, String> = HashMap::new();
        let mut out = Vec::with_capacity(raw.len());
        for (name, l) in raw {
            let path = join("lsps", name);
            self.label(&path, name)?;
            out.push(self.lsp(&path, name, l, classes, nodes, links, groups, &group_index, &mut member_of)?);
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn lsp(
        &self,
        path: &str,
        name: &str,
        l: &raw::Lsp,
        classes: &[ClassDef],
        nodes: &Nodes,
        links: &Links,
        groups: &[TrafficGroup],
        group_index: &HashMap<&str, usize>,
        member_of: &mut HashMap<usize, String>,
    ) -> Result<LspDef> {
        let key = |k: &str| join(path, k);
        let ingress = l
            .ingress
            .split_once("->")
            .and_then(|(a, b)| {
                let (a, b) = (nodes.index(a).ok()?, nodes.index(b).ok()?);
                links.between(a, b).map(|_| (a, b))
            })
            .ok_or_else(|| {
                self.err(
                    &key("ingress"),
                    format!("{:?} is not a link direction \"A->B\" of the scenario's links", l.ingress),
                )
            })?;
        let rtt_lsp = self.positive_time(&key("rtt"), &l.rtt)?;
        let size = self.size(&key("packet_size"), &l.packet_size)?;
        let packet_size = u32::try_from(size).ok().filter(|&s| s > 0 && s <= 65535).ok_or_else(|| {
            self.err(&key("packet_size"), format!("S, the packet size, must be between 1 B and 65535 B, got {size} B"))
        })?;
        let alpha = match l.alpha {
            None => TwamParams::ALPHA,
            Some(a) => u32::try_from(a).ok().filter(|&a| a >= 1).ok_or_else(|| {
                self.err(
                    &key("alpha"),
                    format!("alpha is a whole number of RTT_LSP, at least 1 (α ∈ {{1, 2, 3, …}}), got {a}"),
                )
            })?,
        };
        let window = match l.window {
            Some(raw::LspWindow::Passive) => WindowInput::Passive,
            Some(raw::LspWindow::Cwnd) | None => WindowInput::Cwnd,
        };
        let window_sum = match l.w_lsp {
            Some(raw::LspEstimate::Ssthresh) => WindowSum::Ssthresh,
            Some(raw::LspEstimate::Cwnd) | None => WindowSum::Cwnd,
        };
        if window_sum == WindowSum::Ssthresh && window == WindowInput::Passive {
            return Err(self.err(
                &key("w_lsp"),
                "w_lsp = \"ssthresh\" (eq. 8) reads the senders' ssthresh, which a passive estimate cannot see; use window = \"cwnd\"",
            ));
        }
        let marker = match l.marker {
            Some(raw::LspMarker::None) => LspMarker::None,
            Some(raw::LspMarker::Twam) | None => LspMarker::Twam,
            Some(raw::LspMarker::Tsw2cm) => LspMarker::Tsw2cm {
                win_length: match &l.win_length {
                    Some(q) => self.positive_time(&key("win_length"), q)?,
                    None => phb::Time::from_secs(1),
                },
            },
        };
        if l.win_length.is_some() && !matches!(marker, LspMarker::Tsw2cm { .. }) {
            return Err(self.err(&key("win_length"), "`win_length` is TSW2CM's; set marker = \"tsw2cm\""));
        }
        let marking = marker != LspMarker::None;
        let codepoint = |k: &str, value: &Option<String>, default: &str| -> Result<u8> {
            let text = value.as_deref().unwrap_or(default);
            let cp = dscp::parse_codepoint(text).map_err(|m| self.err(&key(k), m))?;
            if !classes.iter().any(|c| c.codepoint == cp) {
                return Err(self.err(
                    &key(k),
                    format!("codepoint {cp} ({text}) is not the codepoint of a class; declare it under [classes]"),
                ));
            }
            Ok(cp)
        };
        let marks = if marking {
            let marks = (codepoint("in", &l.in_mark, "AF11")?, codepoint("out", &l.out_mark, "AF13")?);
            if marks.0 == marks.1 {
                return Err(self.err(
                    &key("out"),
                    format!("the out mark is the in mark (codepoint {}): the marker would mark nothing", marks.1),
                ));
            }
            marks
        } else {
            for (k, set) in [("in", l.in_mark.is_some()), ("out", l.out_mark.is_some())] {
                if set {
                    return Err(self.err(&key(k), format!("`{k}` is a marker's mark; this LSP has marker = \"none\"")));
                }
            }
            (0, 0)
        };
        if l.members.is_empty() {
            return Err(
                self.err(&key("members"), "an LSP needs at least one member: [[lsps.NAME.members]] groups = [...]")
            );
        }
        let adjacency = adjacency(nodes.defs.len(), &links.defs);
        let forwards: Vec<bool> = nodes.defs.iter().map(|n| n.kind == NodeKind::Router).collect();
        let mut members = Vec::with_capacity(l.members.len());
        let mut r = Vec::with_capacity(l.members.len());
        for (m, member) in l.members.iter().enumerate() {
            let mpath = format!("{}[{m}]", key("members"));
            if member.groups.is_empty() {
                return Err(self.err(&join(&mpath, "groups"), "a member needs at least one traffic group"));
            }
            let mut indices = Vec::with_capacity(member.groups.len());
            for (j, g) in member.groups.iter().enumerate() {
                let gkey = format!("{}[{j}]", join(&mpath, "groups"));
                let &gi = group_index.get(g.as_str()).ok_or_else(|| {
                    self.err(
                        &gkey,
                        format!(
                            "{g} is not a traffic group; groups are {}",
                            list(groups.iter().map(|g| g.name.as_str()))
                        ),
                    )
                })?;
                if let Some(other) = member_of.insert(gi, format!("{path}.members[{m}]")) {
                    return Err(self.err(
                        &gkey,
                        format!("group {g} is already a member of {other}; a group belongs to one member"),
                    ));
                }
                let group = &groups[gi];
                if window == WindowInput::Cwnd && !matches!(group.transport, Transport::Tcp(_)) {
                    return Err(self.err(
                        &gkey,
                        format!("group {g} is not TCP: window = \"cwnd\" reads TCP senders' windows (window = \"passive\" counts packets of any flow)"),
                    ));
                }
                let ports = match &group.path {
                    Some(hops) => hops
                        .windows(2)
                        .map(|w| adjacency[w[0]].iter().find(|&&(n, _, _)| n == w[1]).map(|&(_, p, _)| p))
                        .collect::<Option<Vec<usize>>>(),
                    None => shortest_path(&adjacency, &forwards, group.src, group.dst),
                }
                .unwrap_or_default();
                let link = links.between(ingress.0, ingress.1).expect("checked above");
                let port = 2 * link + usize::from(links.defs[link].a != ingress.0);
                if !ports.contains(&port) {
                    return Err(self
                        .err(&gkey, format!("the path of group {g} does not cross the LSP's ingress {}", l.ingress)));
                }
                indices.push(gi);
            }
            let rkey = join(&mpath, "r");
            let rate = match (&member.r, marking) {
                (Some(q), true) => self.rate(&rkey, q)?,
                (None, true) => {
                    return Err(self.err(&rkey, "a member of an LSP with a marker needs `r`, its contracted rate"))
                }
                (Some(_), false) => {
                    return Err(self.err(&rkey, "`r` is the marker's; this LSP has marker = \"none\""));
                }
                (None, false) => 1,
            };
            r.push(rate);
            members.push(indices);
        }
        let twam = TwamParams { rtt_lsp, packet_size, alpha, r, window_sum };
        twam.validate().map_err(|m| self.err(path, m))?;
        Ok(LspDef { name: name.to_owned(), ingress, twam, window, marker, marks, members })
    }
}
