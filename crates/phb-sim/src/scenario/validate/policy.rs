//! Validation of buffer policies (a single-queue qdisc's `kind`, or a
//! classful buffer's `policy`): drop-tail, RED, WRED, RIO-C/D, Adaptive RED,
//! CoDel, PIE, F-RED and DI-RO, with their keys and defaults.

use phb::aqm::adaptive_red::AdaptiveRedParams;
use phb::aqm::codel::{CoDelParams, CountReuse};
use phb::aqm::diro::DiRoParams;
use phb::aqm::dwred::{AverageOnSignal, DwredParams};
use phb::aqm::fred::FRedParams;
use phb::aqm::pie::PieParams;
use phb::aqm::red::RedParams;
use phb::aqm::rio::{RioMode, RioParams};
use phb::aqm::wred::WredParams;
use phb::aqm::{Limit, Thresholds};
use phb::queue::BufferPolicy;

use super::{Context, Present, Result};
use crate::scenario::location::join;
use crate::scenario::raw::{self, ColourCurve, Quantity};
use crate::scenario::units;

/// The policy keys a single-queue qdisc and a classful buffer share.
pub(super) struct PolicyKeys<'a> {
    pub limit: &'a Option<Quantity>,
    pub min_th: Option<f64>,
    pub max_th: Option<f64>,
    pub w_q: Option<f64>,
    pub max_p: Option<f64>,
    pub mean_pktsize: &'a Option<Quantity>,
    pub gentle: Option<bool>,
    pub wait: Option<bool>,
    pub ns1_compat: Option<bool>,
    pub mode: Option<raw::RedMode>,
    pub curves: [Option<ColourCurve>; 3],
    pub interval: &'a Option<Quantity>,
    pub beta: Option<f64>,
    pub top: Option<f64>,
    pub bottom: Option<f64>,
    pub target: &'a Option<Quantity>,
    pub maxpacket: &'a Option<Quantity>,
    pub count_reuse: Option<raw::CountReuse>,
    pub t_update: &'a Option<Quantity>,
    pub alpha: Option<f64>,
    pub max_burst: &'a Option<Quantity>,
    pub derandomize: Option<bool>,
    pub ecn: Option<bool>,
    pub count: Option<bool>,
    pub average_all: Option<bool>,
    pub b: Option<f64>,
    pub lsp: &'a Option<String>,
    pub average_on_signal: Option<raw::AverageOnSignal>,
}

/// Builds [`PolicyKeys`] from a raw qdisc or buffer (they name the keys alike).
macro_rules! policy_keys {
    ($r:expr) => {
        PolicyKeys {
            limit: &$r.limit,
            min_th: $r.min_th,
            max_th: $r.max_th,
            w_q: $r.w_q,
            max_p: $r.max_p,
            mean_pktsize: &$r.mean_pktsize,
            gentle: $r.gentle,
            wait: $r.wait,
            ns1_compat: $r.ns1_compat,
            mode: $r.mode,
            curves: [$r.green, $r.yellow, $r.red],
            interval: &$r.interval,
            beta: $r.beta,
            top: $r.top,
            bottom: $r.bottom,
            target: &$r.target,
            maxpacket: &$r.maxpacket,
            count_reuse: $r.count_reuse,
            t_update: &$r.t_update,
            alpha: $r.alpha,
            max_burst: &$r.max_burst,
            derandomize: $r.derandomize,
            ecn: $r.ecn,
            count: $r.count,
            average_all: $r.average_all,
            b: $r.b,
            lsp: &$r.lsp,
            average_on_signal: $r.average_on_signal,
        }
    };
}
pub(super) use policy_keys;

const RED_KEYS: &[&str] =
    &["limit", "min_th", "max_th", "w_q", "max_p", "mean_pktsize", "gentle", "wait", "ns1_compat", "mode", "ecn"];
const COLOURED_KEYS: &[&str] = &["limit", "green", "yellow", "red", "w_q", "mean_pktsize", "gentle", "wait", "ecn"];
const ADAPTIVE_KEYS: &[&str] = &[
    "limit",
    "min_th",
    "max_th",
    "w_q",
    "max_p",
    "interval",
    "beta",
    "top",
    "bottom",
    "mean_pktsize",
    "gentle",
    "wait",
    "ecn",
];
const DWRED_KEYS: &[&str] = &[
    "limit",
    "min_th",
    "max_th",
    "max_p",
    "b",
    "lsp",
    "average_on_signal",
    "w_q",
    "mean_pktsize",
    "gentle",
    "wait",
    "ecn",
];
const CODEL_KEYS: &[&str] = &["limit", "target", "interval", "maxpacket", "count_reuse", "ecn"];
const PIE_KEYS: &[&str] =
    &["limit", "target", "t_update", "alpha", "beta", "max_burst", "mean_pktsize", "derandomize", "ecn"];
const FRED_KEYS: &[&str] = &["limit", "min_th", "max_th", "w_q", "max_p", "mean_pktsize", "count"];
const DIRO_KEYS: &[&str] = &["limit", "min_th", "max_th", "w_q", "max_p", "mean_pktsize", "count", "average_all"];

impl PolicyKeys<'_> {
    /// Every policy key and whether it is set.
    pub(super) fn present(&self) -> [(&'static str, bool); 30] {
        [
            ("limit", self.limit.is_some()),
            ("min_th", self.min_th.is_some()),
            ("max_th", self.max_th.is_some()),
            ("w_q", self.w_q.is_some()),
            ("max_p", self.max_p.is_some()),
            ("mean_pktsize", self.mean_pktsize.is_some()),
            ("gentle", self.gentle.is_some()),
            ("wait", self.wait.is_some()),
            ("ns1_compat", self.ns1_compat.is_some()),
            ("mode", self.mode.is_some()),
            ("green", self.curves[0].is_some()),
            ("yellow", self.curves[1].is_some()),
            ("red", self.curves[2].is_some()),
            ("interval", self.interval.is_some()),
            ("beta", self.beta.is_some()),
            ("top", self.top.is_some()),
            ("bottom", self.bottom.is_some()),
            ("target", self.target.is_some()),
            ("maxpacket", self.maxpacket.is_some()),
            ("count_reuse", self.count_reuse.is_some()),
            ("t_update", self.t_update.is_some()),
            ("alpha", self.alpha.is_some()),
            ("max_burst", self.max_burst.is_some()),
            ("derandomize", self.derandomize.is_some()),
            ("ecn", self.ecn.is_some()),
            ("count", self.count.is_some()),
            ("average_all", self.average_all.is_some()),
            ("b", self.b.is_some()),
            ("lsp", self.lsp.is_some()),
            ("average_on_signal", self.average_on_signal.is_some()),
        ]
    }
}

impl Context<'_> {
    fn limit(&self, path: &str, keys: &PolicyKeys, what: &str) -> Result<Limit> {
        let key = join(path, "limit");
        let limit = self.required(path, "limit", keys.limit, what)?;
        match units::parse_limit(&limit.0).map_err(|m| self.err(&key, m))? {
            Limit::Packets(0) | Limit::Bytes(0) | Limit::Cells(0) => Err(self.err(&key, "a limit must be positive")),
            limit => Ok(limit),
        }
    }

    fn packet_size(&self, path: &str, key: &str, value: &Option<Quantity>, default: u32) -> Result<u32> {
        let Some(q) = value else { return Ok(default) };
        let key = join(path, key);
        let size = self.size(&key, q)?;
        u32::try_from(size)
            .ok()
            .filter(|&s| s > 0)
            .ok_or_else(|| self.err(&key, format!("{:?} is not a usable packet size", q.0)))
    }

    /// Files a parameter struct's validation message under the key it names.
    fn checked(&self, path: &str, result: std::result::Result<(), String>, keys: &[&str]) -> Result<()> {
        result.map_err(|message| {
            let first = message.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
            let key = if keys.contains(&first) { join(path, first) } else { path.to_owned() };
            self.err(&key, message)
        })
    }

    fn red_params(&self, path: &str, keys: &PolicyKeys, what: &str) -> Result<RedParams> {
        let defaults = RedParams::default();
        let params = RedParams {
            min_th: *self.required(path, "min_th", &keys.min_th, what)?,
            max_th: *self.required(path, "max_th", &keys.max_th, what)?,
            w_q: keys.w_q.unwrap_or(defaults.w_q),
            max_p: keys.max_p.unwrap_or(defaults.max_p),
            limit: self.limit(path, keys, what)?,
            mean_pktsize: self.packet_size(path, "mean_pktsize", keys.mean_pktsize, defaults.mean_pktsize)?,
            gentle: keys.gentle.unwrap_or(defaults.gentle),
            wait: keys.wait.unwrap_or(defaults.wait),
            byte_mode: keys.mode == Some(raw::RedMode::Bytes),
            ns1_compat: keys.ns1_compat.unwrap_or(defaults.ns1_compat),
        };
        self.checked(path, params.validate(), RED_KEYS)?;
        if let Limit::Packets(limit) = params.limit {
            if !params.byte_mode && params.max_th > limit as f64 {
                return Err(self.err(
                    &join(path, "max_th"),
                    format!(
                        "max_th ({}) is above the buffer's limit ({limit} packets): the queue can never reach it; \
                         lower max_th or raise limit",
                        params.max_th
                    ),
                ));
            }
        }
        Ok(params)
    }

    /// F-RED's parameters (also DI-RO's RED part): thresholds in cells.
    fn fred_params(&self, path: &str, keys: &PolicyKeys, what: &str, defaults: &FRedParams) -> Result<FRedParams> {
        let params = FRedParams {
            min_th: *self.required(path, "min_th", &keys.min_th, what)?,
            max_th: *self.required(path, "max_th", &keys.max_th, what)?,
            max_p: keys.max_p.unwrap_or(defaults.max_p),
            w_q: keys.w_q.unwrap_or(defaults.w_q),
            limit: self.limit(path, keys, what)?,
            count: keys.count.unwrap_or(defaults.count),
            mean_pktsize: self.packet_size(path, "mean_pktsize", keys.mean_pktsize, defaults.mean_pktsize)?,
        };
        self.checked(path, params.validate(), DIRO_KEYS)?;
        Ok(params)
    }

    /// DWRED (Bouras & Sevasti 2008, Section 5): `max_th` is required (the
    /// static value, or the start before the LSP's first signal); `min_th`
    /// defaults to `b·max_th`, `b` to 0.15 and `max_p` to 0.1 (eq. 12);
    /// `lsp` names the LSP whose `W_LSP^cwnd` resets the thresholds;
    /// `average_on_signal` (`"keep"`, `"reset"`) what that does to the average.
    fn dwred_params(&self, path: &str, keys: &PolicyKeys, what: &str) -> Result<DwredParams> {
        let max_th = *self.required(path, "max_th", &keys.max_th, what)?;
        let b = keys.b.unwrap_or(DwredParams::B);
        let channel = match keys.lsp {
            None => None,
            Some(name) => match self.lsp_names.iter().position(|n| n == name) {
                Some(i) => Some(i as u32),
                None => {
                    return Err(self.err(
                        &join(path, "lsp"),
                        format!(
                            "{name} is not an LSP; LSPs defined under [lsps] are {}",
                            super::list(self.lsp_names.iter().copied())
                        ),
                    ))
                }
            },
        };
        let mut params = DwredParams::paper(max_th, self.limit(path, keys, what)?, channel);
        params.b = b;
        params.thresholds.min_th = keys.min_th.unwrap_or(b * max_th);
        params.thresholds.max_p = keys.max_p.unwrap_or(DwredParams::MAX_P);
        params.w_q = keys.w_q.unwrap_or(params.w_q);
        params.mean_pktsize = self.packet_size(path, "mean_pktsize", keys.mean_pktsize, params.mean_pktsize)?;
        params.gentle = keys.gentle.unwrap_or(params.gentle);
        params.wait = keys.wait.unwrap_or(params.wait);
        params.average_on_signal = match keys.average_on_signal {
            None | Some(raw::AverageOnSignal::Keep) => AverageOnSignal::Keep,
            Some(raw::AverageOnSignal::Reset) => AverageOnSignal::Reset,
        };
        self.checked(path, params.validate(), DWRED_KEYS)?;
        Ok(params)
    }

    /// WRED's and RIO's per-colour curves: all three are required.
    fn curves(&self, path: &str, keys: &PolicyKeys, what: &str) -> Result<[Thresholds; 3]> {
        let mut out = [Thresholds::new(0.0, 1.0, 1.0); 3];
        for (i, name) in ["green", "yellow", "red"].into_iter().enumerate() {
            let c = self.required(path, name, &keys.curves[i], what)?;
            let t = Thresholds::new(c.min_th, c.max_th, c.max_p);
            t.validate(name).map_err(|m| self.err(&join(path, name), m))?;
            out[i] = t;
        }
        Ok(out)
    }

    /// The policy `kind` with the keys `keys`, at `path`.
    pub(super) fn policy(&self, path: &str, kind: raw::Policy, keys: &PolicyKeys, what: &str) -> Result<BufferPolicy> {
        let present: &Present = &keys.present();
        let policy = match kind {
            raw::Policy::Droptail => {
                self.only(path, what, present, &["limit"])?;
                BufferPolicy::DropTail { limit: self.limit(path, keys, what)? }
            }
            raw::Policy::Red => {
                self.only(path, what, present, RED_KEYS)?;
                BufferPolicy::Red(self.red_params(path, keys, what)?)
            }
            raw::Policy::Wred => {
                self.only(path, what, present, COLOURED_KEYS)?;
                let d = WredParams::default();
                BufferPolicy::Wred(WredParams {
                    thresholds: self.curves(path, keys, what)?,
                    w_q: keys.w_q.unwrap_or(d.w_q),
                    limit: self.limit(path, keys, what)?,
                    mean_pktsize: self.packet_size(path, "mean_pktsize", keys.mean_pktsize, d.mean_pktsize)?,
                    gentle: keys.gentle.unwrap_or(d.gentle),
                    wait: keys.wait.unwrap_or(d.wait),
                })
            }
            raw::Policy::Dwred => {
                self.only(path, what, present, DWRED_KEYS)?;
                BufferPolicy::Dwred(self.dwred_params(path, keys, what)?)
            }
            raw::Policy::RioC | raw::Policy::RioD => {
                self.only(path, what, present, COLOURED_KEYS)?;
                let d = RioParams::default();
                BufferPolicy::Rio(RioParams {
                    mode: if kind == raw::Policy::RioC { RioMode::Coupled } else { RioMode::Decoupled },
                    thresholds: self.curves(path, keys, what)?,
                    w_q: [keys.w_q.unwrap_or(d.w_q[0]); 3],
                    limit: self.limit(path, keys, what)?,
                    mean_pktsize: self.packet_size(path, "mean_pktsize", keys.mean_pktsize, d.mean_pktsize)?,
                    gentle: keys.gentle.unwrap_or(d.gentle),
                    wait: keys.wait.unwrap_or(d.wait),
                })
            }
            raw::Policy::AdaptiveRed => {
                self.only(path, what, present, ADAPTIVE_KEYS)?;
                let d = AdaptiveRedParams::default();
                BufferPolicy::AdaptiveRed(AdaptiveRedParams {
                    min_th: *self.required(path, "min_th", &keys.min_th, what)?,
                    max_th: *self.required(path, "max_th", &keys.max_th, what)?,
                    w_q: keys.w_q,
                    max_p: keys.max_p.unwrap_or(d.max_p),
                    interval: self.time_or(&join(path, "interval"), keys.interval, d.interval)?,
                    beta: keys.beta.unwrap_or(d.beta),
                    top: keys.top.unwrap_or(d.top),
                    bottom: keys.bottom.unwrap_or(d.bottom),
                    limit: self.limit(path, keys, what)?,
                    mean_pktsize: self.packet_size(path, "mean_pktsize", keys.mean_pktsize, d.mean_pktsize)?,
                    gentle: keys.gentle.unwrap_or(d.gentle),
                    wait: keys.wait.unwrap_or(d.wait),
                })
            }
            raw::Policy::Codel => {
                self.only(path, what, present, CODEL_KEYS)?;
                let d = CoDelParams::default();
                BufferPolicy::CoDel(CoDelParams {
                    target: self.time_or(&join(path, "target"), keys.target, d.target)?,
                    interval: self.time_or(&join(path, "interval"), keys.interval, d.interval)?,
                    maxpacket: self.packet_size(path, "maxpacket", keys.maxpacket, d.maxpacket)?,
                    limit: if keys.limit.is_some() { self.limit(path, keys, what)? } else { d.limit },
                    count_reuse: match keys.count_reuse {
                        Some(raw::CountReuse::Ns2) => CountReuse::Ns2,
                        Some(raw::CountReuse::Rfc) | None => CountReuse::Rfc8289,
                    },
                })
            }
            raw::Policy::LossRatio => unreachable!("a loss_ratio buffer is validated by Context::loss_ratio"),
            raw::Policy::Fred => {
                self.only(path, what, present, FRED_KEYS)?;
                BufferPolicy::FRed(self.fred_params(path, keys, what, &FRedParams::default())?)
            }
            raw::Policy::Diro => {
                self.only(path, what, present, DIRO_KEYS)?;
                let d = DiRoParams::default();
                BufferPolicy::DiRo(DiRoParams {
                    red: self.fred_params(path, keys, what, &d.red)?,
                    average_all: keys.average_all.unwrap_or(d.average_all),
                })
            }
            raw::Policy::Pie => {
                self.only(path, what, present, PIE_KEYS)?;
                let d = PieParams::default();
                BufferPolicy::Pie(PieParams {
                    qdelay_ref: self.time_or(&join(path, "target"), keys.target, d.qdelay_ref)?,
                    t_update: self.time_or(&join(path, "t_update"), keys.t_update, d.t_update)?,
                    alpha: keys.alpha.unwrap_or(d.alpha),
                    beta: keys.beta.unwrap_or(d.beta),
                    max_burst: match keys.max_burst {
                        Some(q) => self.time(&join(path, "max_burst"), q)?,
                        None => d.max_burst,
                    },
                    mean_pktsize: self.packet_size(path, "mean_pktsize", keys.mean_pktsize, d.mean_pktsize)?,
                    limit: if keys.limit.is_some() { self.limit(path, keys, what)? } else { d.limit },
                    derandomize: keys.derandomize.unwrap_or(d.derandomize),
                    cap_drop_adjustment: d.cap_drop_adjustment,
                })
            }
        };
        let all: Vec<&str> = present.iter().map(|(k, _)| *k).collect();
        let result = match &policy {
            BufferPolicy::DropTail { .. } | BufferPolicy::Red(_) => Ok(()),
            BufferPolicy::FRed(p) => p.validate(),
            BufferPolicy::DiRo(p) => p.validate(),
            BufferPolicy::Wred(p) => p.validate(),
            BufferPolicy::Dwred(p) => p.validate(),
            BufferPolicy::Rio(p) => p.validate(),
            BufferPolicy::AdaptiveRed(p) => p.validate(),
            BufferPolicy::CoDel(p) => p.validate(),
            BufferPolicy::Pie(p) => p.validate(),
            BufferPolicy::LossRatio(p) => p.validate(),
        };
        self.checked(path, result, &all)?;
        Ok(policy)
    }
}
