//! The LSPs' ingress machinery during a run (Bouras & Sevasti 2008): each
//! LSP's TWAM, the input of its members' windows, the marker at its
//! ingress and the DWRED queues its `W_LSP^cwnd` goes to. The simulator
//! and the emulator (`phb-emu`'s router) both run it, so an LSP marks and
//! signals the same way on either backend; they differ only in where a
//! member's window can come from (the emulator has no sender's window to
//! read: only the passive estimate, validation refuses the other).

use phb::mark::{Meter, PassiveWindow, Tsw2cm, Tsw2cmParams, Twam};
use phb::{Colour, Rng, Time};

use crate::scenario::{LspMarker, Scenario, WindowInput};

/// An LSP's ingress marker during a run.
enum Marker {
    None,
    Twam,
    /// One TSW2CM per member.
    Tsw2cm(Vec<Tsw2cm>),
}

/// [`Lsps::flow_member`] of a flow outside every LSP.
const NO_LSP: u32 = u32::MAX;

/// One LSP during a run: its TWAM, the window input feeding it, and the
/// ports its DWRED signal goes to.
pub struct LspState {
    pub twam: Twam,
    /// The passive window estimate, when the LSP's window input is passive.
    passive: Option<PassiveWindow>,
    window: WindowInput,
    /// The port at whose entry TWAM marks.
    ingress: usize,
    /// What marks the members' packets.
    marker: Marker,
    /// The in and out codepoints.
    marks: (u8, u8),
    /// The flows of each member.
    member_flows: Vec<Vec<usize>>,
    /// The signalling channel: the ports whose qdisc holds a DWRED
    /// listening on this LSP. `W_LSP^cwnd` reaches them at the instant TWAM
    /// computes it (the paper does not model signalling).
    listeners: Vec<usize>,
}

/// Every LSP of a run, and which LSP and member each flow belongs to.
pub struct Lsps {
    /// In the order of `scenario.lsps`.
    pub lsps: Vec<LspState>,
    /// Per flow, the LSP and member it belongs to (`NO_LSP` for none).
    flow_member: Vec<(u32, u32)>,
}

impl Lsps {
    /// The LSPs of `scenario` with `seed`, for flows of the groups
    /// `flow_groups` (one entry per flow), over the link directions `ports`
    /// (`(from, to)` in port order); `listens(p, l)` says whether port
    /// `p`'s qdisc listens on LSP `l`.
    pub fn new(
        scenario: &Scenario,
        seed: u64,
        flow_groups: &[usize],
        ports: &[(usize, usize)],
        listens: impl Fn(usize, u32) -> bool,
    ) -> Lsps {
        let mut flow_member = vec![(NO_LSP, NO_LSP); flow_groups.len()];
        let lsps = scenario
            .lsps
            .iter()
            .enumerate()
            .map(|(l, def)| {
                let ingress = ports
                    .iter()
                    .position(|&p| p == def.ingress)
                    .expect("validation guarantees the ingress link direction exists");
                let mut member_flows = vec![Vec::new(); def.members.len()];
                for (m, groups) in def.members.iter().enumerate() {
                    for (f, group) in flow_groups.iter().enumerate() {
                        if groups.contains(group) {
                            member_flows[m].push(f);
                            flow_member[f] = (l as u32, m as u32);
                        }
                    }
                }
                let listeners = (0..ports.len()).filter(|&p| listens(p, l as u32)).collect();
                let twam = Twam::new(def.twam.clone(), Rng::derive(seed, &format!("twam/{}", def.name)))
                    .expect("validation checks TWAM's parameters");
                let passive = (def.window == WindowInput::Passive).then(|| {
                    PassiveWindow::new(def.members.len(), def.twam.rtt_lsp).expect("validation checks RTT_LSP")
                });
                let marker = match def.marker {
                    LspMarker::None => Marker::None,
                    LspMarker::Twam => Marker::Twam,
                    LspMarker::Tsw2cm { win_length } => Marker::Tsw2cm(
                        def.twam
                            .r
                            .iter()
                            .enumerate()
                            .map(|(m, &ctr)| {
                                let rng = Rng::derive(seed, &format!("tsw2cm/{}/{m}", def.name));
                                Tsw2cm::new(Tsw2cmParams { ctr, win_length }, rng).expect("validated TSW2CM")
                            })
                            .collect(),
                    ),
                };
                LspState {
                    twam,
                    passive,
                    window: def.window,
                    ingress,
                    marker,
                    marks: def.marks,
                    member_flows,
                    listeners,
                }
            })
            .collect();
        Lsps { lsps, flow_member }
    }

    /// Whether port `p` is some LSP's ingress.
    pub fn is_ingress(&self, p: usize) -> bool {
        self.lsps.iter().any(|lsp| lsp.ingress == p)
    }

    /// A data packet of `flow` (`size` bytes, `colour`) enters port `p`,
    /// some LSP's ingress, at `now`: if `flow` is a member of an LSP whose
    /// ingress this is, the passive estimator counts it and the marker
    /// marks it in (the LSP's in codepoint, Green) or out (its out
    /// codepoint, Red): the codepoint and colour it leaves with, `None` if
    /// it passes unchanged. Runs after the port's conditioner.
    #[inline]
    pub fn ingress(&mut self, p: usize, flow: u32, size: u32, colour: Colour, now: Time) -> Option<(u8, Colour)> {
        let (l, m) = *self.flow_member.get(flow as usize)?;
        if l == NO_LSP {
            return None;
        }
        let lsp = &mut self.lsps[l as usize];
        if lsp.ingress != p {
            return None;
        }
        let m = m as usize;
        if let Some(passive) = &mut lsp.passive {
            passive.observe(m, now);
        }
        let colour = match &mut lsp.marker {
            Marker::None => return None,
            Marker::Twam => lsp.twam.mark(m, now),
            Marker::Tsw2cm(meters) => meters[m].meter(size, colour, now),
        };
        Some((if colour == Colour::Green { lsp.marks.0 } else { lsp.marks.1 }, colour))
    }

    /// LSP `l`'s operating interval ends at `now`: TWAM reads its members'
    /// windows (the passive estimate, or `senders(flows)`, the window and
    /// ssthresh summed over a member's flows, in segments, from the
    /// senders: an oracle) and recomputes its marking probabilities; the
    /// new `W_LSP^cwnd` for the listening ports ([`Self::listeners`]), if
    /// TWAM computed one.
    pub fn tick(&mut self, l: usize, now: Time, mut senders: impl FnMut(&[usize]) -> (f64, f64)) -> Option<f64> {
        let lsp = &mut self.lsps[l];
        for (m, flows) in lsp.member_flows.iter().enumerate() {
            let (window, ssthresh) = match (lsp.window, &mut lsp.passive) {
                (WindowInput::Passive, Some(passive)) => (passive.window(m, now), f64::INFINITY),
                _ => senders(flows),
            };
            lsp.twam.observe_window(m, window, now);
            lsp.twam.observe_ssthresh(m, ssthresh, now);
        }
        lsp.twam.on_wakeup(now)
    }

    /// The ports whose qdisc listens on LSP `l`.
    pub fn listeners(&self, l: usize) -> &[usize] {
        &self.lsps[l].listeners
    }
}
