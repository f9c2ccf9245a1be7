//! # phb-emu — the user-space router of `phblab emulate`
//!
//! Runs a scenario's hosts as Linux network namespaces with the kernel's
//! own TCP and UDP, and its routers and links in one user-space process
//! that carries the real packets through the same qdiscs, conditioners and
//! loss elements as the simulator (`crates/phb`, unchanged), in real time:
//! `now` is the monotonic clock since the run's start.
//!
//! ## Map
//!
//! - [`plan`] — what can be emulated (refusals name the scenario key),
//!   addresses, each flow's ports and routes.
//! - [`hosts`] — one anonymous namespace and TUN device per host (and why
//!   TUN); nothing outlives the process.
//! - [`kernel_tcp`] — the scenario's TCP keys as the hosts' sysctls,
//!   routes and socket options.
//! - [`router`] — the forwarding loop: routes, serialisation at the link
//!   rate, propagation delay, qdiscs; its design is in its module doc.
//! - [`ipv4`] — the header fields read (five-tuple, DSCP, ECN) and written
//!   (DSCP, CE).
//! - [`agent`] — the traffic agents run inside the namespaces.
//! - [`commands`] — the scenario's commands (`kind = "command"`), programs
//!   run in hosts' namespaces on the run's clock.
//! - [`tcp_info`] — the kernel's TCP state of each sender, sampled by the
//!   agents and read by the router at the end.
//! - [`trace`] — the packet trace (`[trace]`): the simulator's event log
//!   and a pcapng file of the real packets, fed by the router.
//! - [`report`] — the result tables, as `phblab run` writes them (the
//!   simulator's builders).
//! - [`sys`] — the Linux calls, wrapped once.
//! - `main.rs` — the `phb-emu` command (`run`, `agent`, `check`).
//!
//! Start with [`plan::plan`], then [`router::Router::run`].

pub mod agent;
pub mod commands;
pub mod hosts;
pub mod ipv4;
pub mod kernel_tcp;
pub mod plan;
pub mod report;
pub mod router;
pub mod sys;
pub mod tcp_info;
pub mod trace;
