//! # phb-models — analytic models
//!
//! Closed-form models the papers use to design and check their mechanisms,
//! independent of the simulator so that results can be set beside them.
//!
//! - [`tcp_throughput`] — steady-state TCP throughput: the square-root law
//!   (Mathis et al.; thesis eq. 28, BEDS eq. 7), PFTK (Padhye et al.; BEDS
//!   eqs. 8–11) and the thesis' empirical power law (eqs. 30/60).

pub mod tcp_throughput;
