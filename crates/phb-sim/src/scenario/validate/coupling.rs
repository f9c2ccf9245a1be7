//! Validation of a classful buffer coupled to another: `policy =
//! "loss_ratio"` (BEDS' forced loss ratio, `docs/mechanisms/loss-ratio.md`),
//! which drops with `lambda` times the probability the RED of the buffer
//! named by `reads` computes.

use phb::aqm::loss_ratio::{LossRatioParams, Reading};
use phb::queue::BufferPolicy;

use super::policy::{policy_keys, PolicyKeys};
use super::{list, number, Context, Result};
use crate::scenario::location::join;
use crate::scenario::raw;

impl Context<'_> {
    /// The `loss_ratio` buffer `b` at `path`, one of the qdisc's `buffers`.
    pub(super) fn loss_ratio(&self, path: &str, b: &raw::Buffer, buffers: &[raw::Buffer]) -> Result<BufferPolicy> {
        let what = "a loss_ratio buffer";
        self.only(path, what, &policy_keys!(b).present(), &["limit"])?;
        let limit = self.required(path, "limit", &b.limit, what)?;
        let limit_key = join(path, "limit");
        let limit = match crate::scenario::units::parse_limit(&limit.0).map_err(|m| self.err(&limit_key, m))? {
            phb::aqm::Limit::Packets(0) | phb::aqm::Limit::Bytes(0) => {
                return Err(self.err(&limit_key, "a limit must be positive"))
            }
            limit => limit,
        };
        let reads_key = join(path, "reads");
        let name = self.required(path, "reads", &b.reads, what)?;
        let reads = buffers.iter().position(|other| other.name == *name).ok_or_else(|| {
            self.err(
                &reads_key,
                format!(
                    "{name} is not a buffer of this qdisc; buffers are {}",
                    list(buffers.iter().map(|b| b.name.as_str()))
                ),
            )
        })?;
        if buffers[reads].name == b.name {
            return Err(
                self.err(&reads_key, format!("buffer {name} cannot read itself; name the buffer whose RED it follows"))
            );
        }
        if !matches!(buffers[reads].policy, raw::Policy::Red | raw::Policy::AdaptiveRed) {
            return Err(self.err(
                &reads_key,
                format!(
                    "buffer {name} is not managed by RED: a loss_ratio reads the drop probability of a `red` or `adaptive_red` buffer"
                ),
            ));
        }
        let lambda = *self.required(path, "lambda", &b.lambda, what)?;
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(
                self.err(&join(path, "lambda"), format!("lambda must be finite and >= 0, got {}", number(lambda)))
            );
        }
        let reading = match b.reading {
            Some(raw::Reading::Curve) => Reading::Curve,
            Some(raw::Reading::Spaced) | None => Reading::Spaced,
        };
        Ok(BufferPolicy::LossRatio(LossRatioParams { lambda, reads, limit, reading }))
    }
}
