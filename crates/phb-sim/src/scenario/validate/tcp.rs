//! Validation of `kind = "tcp"` traffic groups: the TCP profile and its
//! overrides, and the application.

use phb::Time;

use super::{number, udp_source_keys, Context, Present, Result};
use crate::apps::{AppModel, PhaseMode, SizeDist};
use crate::scenario::location::join;
use crate::scenario::model::TcpFlow;
use crate::scenario::raw::{self, AppKind, PhaseKind, SizeDistKind, TcpProfile, TcpVariant};
use crate::tcp::{Rules, TcpConfig, Variant};

/// The keys only TCP groups take, and whether each is set.
pub(super) fn tcp_keys(t: &raw::Traffic) -> [(&'static str, bool); 27] {
    [
        ("profile", t.profile.is_some()),
        ("variant", t.variant.is_some()),
        ("mss", t.mss.is_some()),
        ("header", t.header.is_some()),
        ("initial_window", t.initial_window.is_some()),
        ("initial_ssthresh", t.initial_ssthresh.is_some()),
        ("window", t.window.is_some()),
        ("dupthresh", t.dupthresh.is_some()),
        ("min_rto", t.min_rto.is_some()),
        ("max_rto", t.max_rto.is_some()),
        ("initial_rto", t.initial_rto.is_some()),
        ("granularity", t.granularity.is_some()),
        ("delayed_ack", t.delayed_ack.is_some()),
        ("delack_timeout", t.delack_timeout.is_some()),
        ("slow_start_restart", t.slow_start_restart.is_some()),
        ("byte_counting", t.byte_counting.is_some()),
        ("limited_transmit", t.limited_transmit.is_some()),
        ("whole_segment_halving", t.whole_segment_halving.is_some()),
        ("ecn", t.ecn.is_some()),
        ("congestion", t.congestion.is_some()),
        ("trace", t.trace.is_some()),
        ("app", t.app.is_some()),
        ("file_size", t.file_size.is_some()),
        ("file_size_dist", t.file_size_dist.is_some()),
        ("think_time", t.think_time.is_some()),
        ("new_connection", t.new_connection.is_some()),
        ("phases", t.phases.is_some()),
    ]
}

impl Context<'_> {
    /// A UDP group must not carry TCP keys.
    pub(super) fn no_tcp_keys(&self, path: &str, t: &raw::Traffic) -> Result<()> {
        match tcp_keys(t).iter().find(|(_, set)| *set) {
            Some((key, _)) => Err(self.err(&join(path, key), format!("`{key}` applies only to kind = \"tcp\""))),
            None => Ok(()),
        }
    }

    fn segments(&self, key: &str, value: Option<u32>, default: u32) -> Result<u32> {
        match value {
            Some(0) => Err(self.err(key, "must be at least 1 segment")),
            Some(n) => Ok(n),
            None => Ok(default),
        }
    }

    fn bytes_u32(&self, key: &str, value: &Option<raw::Quantity>, default: u32, min: u64) -> Result<u32> {
        let Some(q) = value else { return Ok(default) };
        let bytes = self.size(key, q)?;
        u32::try_from(bytes)
            .ok()
            .filter(|&b| b as u64 >= min && b <= 65_495)
            .ok_or_else(|| self.err(key, format!("must be between {min} B and 65495 B, got {bytes} B")))
    }

    pub(super) fn tcp_flow(&self, path: &str, t: &raw::Traffic) -> Result<TcpFlow> {
        let key = |k: &str| join(path, k);
        if let Some((k, _)) = udp_source_keys(t).iter().find(|(_, set)| *set) {
            let hint = if *k == "packet_size" { "; TCP packets are mss + header bytes" } else { "" };
            return Err(self.err(&key(k), format!("`{k}` applies only to UDP sources{hint}")));
        }
        let profile = t.profile.unwrap_or(TcpProfile::Ns2);
        let base = match profile {
            TcpProfile::Ns2 => TcpConfig::ns2(),
            TcpProfile::Ns2Of2004 => TcpConfig::ns2_2004(),
            TcpProfile::Ns3 => TcpConfig::ns3(),
            TcpProfile::Linux => TcpConfig::linux(),
            TcpProfile::Stcp => TcpConfig::stcp(),
        };
        let mss = self.bytes_u32(&key("mss"), &t.mss, base.mss, 1)?;
        // ns-3's window is its 128 KiB buffers, stcp's 64 KB, whatever the segment size.
        let window = match profile {
            TcpProfile::Ns3 => TcpConfig::ns3_window(mss),
            TcpProfile::Stcp => (crate::tcp::config::STCP_WINDOW_BYTES / mss).max(1),
            _ => base.window,
        };
        let config = TcpConfig {
            variant: match t.variant {
                Some(TcpVariant::Reno) => Variant::Reno,
                Some(TcpVariant::Newreno) => Variant::NewReno,
                Some(TcpVariant::Sack) => Variant::Sack,
                None => base.variant,
            },
            mss,
            header: self.bytes_u32(&key("header"), &t.header, base.header, 0)?,
            initial_window: self.segments(&key("initial_window"), t.initial_window, base.initial_window)?,
            initial_ssthresh: match t.initial_ssthresh {
                Some(n) => Some(self.segments(&key("initial_ssthresh"), Some(n), n)?),
                None => base.initial_ssthresh,
            },
            window: self.segments(&key("window"), t.window, window)?,
            dupthresh: self.segments(&key("dupthresh"), t.dupthresh, base.dupthresh)?,
            min_rto: self.time_or(&key("min_rto"), &t.min_rto, base.min_rto)?,
            max_rto: self.time_or(&key("max_rto"), &t.max_rto, base.max_rto)?,
            initial_rto: self.time_or(&key("initial_rto"), &t.initial_rto, base.initial_rto)?,
            granularity: self.time_or(&key("granularity"), &t.granularity, base.granularity)?,
            delayed_ack: t.delayed_ack.unwrap_or(base.delayed_ack),
            delack_timeout: self.time_or(&key("delack_timeout"), &t.delack_timeout, base.delack_timeout)?,
            slow_start_restart: t.slow_start_restart.unwrap_or(base.slow_start_restart),
            byte_counting: t.byte_counting.unwrap_or(base.byte_counting),
            limited_transmit: t.limited_transmit.unwrap_or(base.limited_transmit),
            whole_segment_halving: t.whole_segment_halving.unwrap_or(base.whole_segment_halving),
            ecn: t.ecn.unwrap_or(base.ecn),
            ..base
        };
        if config.whole_segment_halving && config.rules != Rules::Ns2 {
            return Err(self.err(
                &key("whole_segment_halving"),
                "applies only to ns-2's rules (profile = \"ns2\" or \"ns2_2004\")",
            ));
        }
        if config.initial_rto == Time::ZERO {
            return Err(self.err(&key("initial_rto"), "must be positive"));
        }
        config.validate().map_err(|m| {
            let at = if m.contains("rto") { "min_rto" } else { "mss" };
            self.err(&key(at), m)
        })?;
        let app = self.app(path, t)?;
        let explicit = tcp_keys(t).iter().filter(|(_, set)| *set).map(|(k, _)| *k).collect();
        Ok(TcpFlow { config, app, trace: t.trace.unwrap_or(false), congestion: t.congestion, explicit })
    }

    fn app(&self, path: &str, t: &raw::Traffic) -> Result<AppModel> {
        let key = |k: &str| join(path, k);
        let kind = t.app.unwrap_or(AppKind::Bulk);
        let present: &Present = &[
            ("file_size", t.file_size.is_some()),
            ("file_size_dist", t.file_size_dist.is_some()),
            ("think_time", t.think_time.is_some()),
            ("new_connection", t.new_connection.is_some()),
            ("shape", t.shape.is_some()),
            ("phases", t.phases.is_some()),
        ];
        match kind {
            AppKind::Bulk => {
                self.only(path, "a bulk application", present, &[])?;
                Ok(AppModel::Bulk)
            }
            AppKind::Files => {
                let what = "a files application";
                let dist = t.file_size_dist.unwrap_or(SizeDistKind::Fixed);
                let allowed: &[&str] = if dist == SizeDistKind::Pareto {
                    &["file_size", "file_size_dist", "think_time", "new_connection", "shape"]
                } else {
                    &["file_size", "file_size_dist", "think_time", "new_connection"]
                };
                self.only(path, what, present, allowed)?;
                let quantity = self.required(path, "file_size", &t.file_size, what)?;
                let size = self.size(&key("file_size"), quantity)?;
                if size == 0 {
                    return Err(self.err(&key("file_size"), "a file must hold at least one byte"));
                }
                let size = match dist {
                    SizeDistKind::Fixed => SizeDist::Fixed(size),
                    SizeDistKind::Exponential => SizeDist::Exponential { mean: size },
                    SizeDistKind::Pareto => {
                        let shape = t.shape.unwrap_or(1.5);
                        if !(shape > 1.0 && shape.is_finite()) {
                            return Err(
                                self.err(&key("shape"), format!("shape must be greater than 1, got {}", number(shape)))
                            );
                        }
                        SizeDist::Pareto { mean: size, shape }
                    }
                };
                let think = match &t.think_time {
                    Some(q) => Some(self.positive_time(&key("think_time"), q)?),
                    None => None,
                };
                Ok(AppModel::Files { size, think, new_connection: t.new_connection.unwrap_or(false) })
            }
            AppKind::Phases => {
                let what = "a phases application";
                self.only(path, what, present, &["phases"])?;
                let phases = self.required(path, "phases", &t.phases, what)?;
                if phases.is_empty() {
                    return Err(self.err(&key("phases"), "list at least one phase"));
                }
                let mut out: Vec<(Time, PhaseMode)> = Vec::with_capacity(phases.len());
                for (i, phase) in phases.iter().enumerate() {
                    let at = format!("{path}.phases[{i}]");
                    let from = self.time(&join(&at, "from"), &phase.from)?;
                    if i == 0 && from != Time::ZERO {
                        return Err(self.err(
                            &join(&at, "from"),
                            "the first phase starts at \"0s\" (relative to the flow's start)",
                        ));
                    }
                    if out.last().is_some_and(|&(prev, _)| from <= prev) {
                        return Err(self.err(&join(&at, "from"), "phases must start in increasing order"));
                    }
                    let mode = match phase.mode {
                        PhaseKind::Greedy => {
                            if phase.chunk.is_some() || phase.pause.is_some() {
                                return Err(self.err(&at, "a greedy phase takes no chunk or pause"));
                            }
                            PhaseMode::Greedy
                        }
                        PhaseKind::Chunks => {
                            let chunk = self.size(
                                &join(&at, "chunk"),
                                self.required(&at, "chunk", &phase.chunk, "a chunks phase")?,
                            )?;
                            if chunk == 0 {
                                return Err(self.err(&join(&at, "chunk"), "a chunk must hold at least one byte"));
                            }
                            let pause = self.time(
                                &join(&at, "pause"),
                                self.required(&at, "pause", &phase.pause, "a chunks phase")?,
                            )?;
                            PhaseMode::Chunks { chunk, pause }
                        }
                    };
                    out.push((from, mode));
                }
                Ok(AppModel::Phases(out))
            }
        }
    }
}
