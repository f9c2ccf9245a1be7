//! # phb-models — analytic models
//!
//! Closed-form models the papers use to design and check their mechanisms,
//! independent of the simulator so that results can be set beside them.
//!
//! - [`tcp_throughput`] — steady-state TCP throughput: the square-root law
//!   (Mathis et al.; thesis eq. 28, BEDS eq. 7), PFTK (Padhye et al.; BEDS
//!   eqs. 8–11) with its inverse in the round-trip time, and the thesis'
//!   empirical power law (eqs. 30/60).
//! - [`red_control`] — RED's control function `H(q)`: its curve and the
//!   drop rate its count spacing gives (BEDS eq. 2).
//! - [`queue_law`] — the queue law `G(p)` of TCP traffic, alone or beside
//!   UDP, and its operating point under RED (BEDS eqs. 1–4, Section II.C),
//!   with a bracketing root finder.
//! - [`emodel`] — ITU-T G.107's E-model: the rating `R` of a voice call from
//!   delay, loss and codec (G.113 Appendix I), and its MOS (BEDS Section
//!   III.B, Fig. 11).
//!
//! Start with [`queue_law::QueueLaw`]: it ties PFTK and RED together.

pub mod emodel;
pub mod queue_law;
pub mod red_control;
pub mod tcp_throughput;
