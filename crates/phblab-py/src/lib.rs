//! # phblab-py — the Python binding of phblab (`phblab._core`)
//!
//! Thin on purpose: it hands scenario text to [`phb_sim::load`] and
//! [`phb_sim::run`] and converts what comes back into Python dicts and lists.
//! Everything a user sees (the CLI, DataFrames, result files, the printed
//! summary) is in the Python package `python/phblab/`.
//!
//! Functions:
//! - `version() -> str`
//! - `validate(text, source_name, overrides) -> dict` — a short description
//!   of the validated scenario.
//! - `run(text, source_name, seed, overrides, progress) -> dict` — the
//!   run's facts (`scenario`, `seed`, `duration_s`, `warmup_s`, `events`),
//!   each table as a Parquet file in memory (`parquet: {table: bytes}`, with
//!   every column's description and unit in its metadata), and the small
//!   `classes` table also as `classes: {column: list}` (for the printed
//!   summary and summary.json, without pandas).
//!
//! - `models`: the analytic models of `phb_models` (PFTK and its inverse,
//!   the square-root law, RED's control function, the queue law and its
//!   operating point, the E-model), one function each, scalars in and out;
//!   `python/phblab/models.py` gives them their Python signatures.
//!
//! Exceptions: `ScenarioError` (a `ValueError`: the scenario or an override
//! is wrong) and `RunError` (a `RuntimeError`: the run could not finish
//! correctly, a simulator bug).

use std::ops::ControlFlow;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use phb_sim::output::parquet_file::to_parquet;
use phb_sim::{Backend, Column, Scenario, Table};

create_exception!(
    phblab._core,
    ScenarioError,
    PyValueError,
    "The scenario file or a --set override is wrong; the message names the key and its position."
);
create_exception!(
    phblab._core,
    RunError,
    PyRuntimeError,
    "A run started but could not finish correctly (e.g. packet conservation violated): a simulator bug."
);

/// The version of the phblab crates this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

fn load(text: &str, source_name: &str, overrides: &[String], backend: Backend) -> PyResult<Scenario> {
    phb_sim::load_for(text, source_name, overrides, backend).map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// Validates scenario `text` (called `source_name` in messages) with
/// `overrides` (`"path.to.key=value"`) applied, for `backend` ("simulate"
/// or "emulate": what that backend cannot run is refused too); raises
/// `ScenarioError` or returns a short description of the scenario, with its
/// link directions (`"a->b"`, the scopes a time series may name),
/// generated ones included. With `advise`, also its `warnings`
/// (`phb_sim::advice`: what it will not measure as it seems to), which
/// need every group's route.
#[pyfunction]
#[pyo3(signature = (text, source_name = "<string>", overrides = Vec::new(), backend = "simulate", advise = false))]
fn validate<'py>(
    py: Python<'py>,
    text: &str,
    source_name: &str,
    overrides: Vec<String>,
    backend: &str,
    advise: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let backend = Backend::from_name(backend)
        .ok_or_else(|| PyValueError::new_err(format!("backend {backend:?}: one of simulate, emulate")))?;
    let scenario = load(text, source_name, &overrides, backend)?;
    let d = PyDict::new(py);
    if advise {
        let routes = phb_sim::scenario::group_routes(&scenario);
        d.set_item("warnings", phb_sim::advice::warnings(&scenario, &routes))?;
    }
    d.set_item("name", &scenario.name)?;
    d.set_item("duration_s", scenario.run.duration.as_secs_f64())?;
    d.set_item("warmup_s", scenario.run.warmup.as_secs_f64())?;
    d.set_item("seed", scenario.run.seed)?;
    d.set_item("nodes", scenario.nodes.len())?;
    d.set_item("links", scenario.links.len())?;
    let name = |n: usize| scenario.nodes[n].name.as_str();
    let directions: Vec<String> = scenario
        .links
        .iter()
        .flat_map(|l| [format!("{}->{}", name(l.a), name(l.b)), format!("{}->{}", name(l.b), name(l.a))])
        .collect();
    d.set_item("link_directions", directions)?;
    d.set_item("classes", scenario.classes.iter().map(|c| c.name.as_str()).collect::<Vec<_>>())?;
    d.set_item("flows", scenario.groups.iter().map(|g| u64::from(g.count)).sum::<u64>())?;
    Ok(d)
}

/// Loads and runs a scenario with `seed` (the scenario's own when `None`).
/// `progress`, when given, is called now and then with the fraction of
/// simulated time done (a float in [0, 1]). Raises `ScenarioError` or
/// `RunError`. A scenario's packet trace (`[trace]`) is written into a fresh
/// directory `phblab-trace-*` that the run creates in `trace_parent`
/// (`events.parquet`, and `trace.pcap` if asked for), returned as
/// `trace_dir`; a run without a trace creates none, and a failed or
/// interrupted one removes its own. Without `trace_parent` the trace is
/// not recorded.
///
/// The simulation runs without holding the GIL (other Python threads keep
/// running). Once the network is built, and then every 65,536 events (a few
/// milliseconds), it re-acquires it to run pending signal handlers and call
/// `progress`; an exception from
/// either (KeyboardInterrupt on Ctrl-C) stops the run at once and is
/// re-raised.
#[pyfunction]
#[pyo3(signature = (text, source_name = "<string>", seed = None, overrides = Vec::new(), progress = None, trace_parent = None))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    source_name: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    progress: Option<Py<PyAny>>,
    trace_parent: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let scenario = load(text, source_name, &overrides, Backend::Simulate)?;
    let trace_dir = match (&scenario.trace, &trace_parent) {
        (Some(_), Some(parent)) => Some(
            tempfile::Builder::new()
                .prefix("phblab-trace-")
                .tempdir_in(parent)
                .map_err(|e| RunError::new_err(format!("{}: {e}", parent.display())))?,
        ),
        _ => None,
    };
    let mut callback_error: Option<PyErr> = None;
    let result = py.detach(|| {
        let mut report = |fraction: f64| {
            Python::attach(|py| {
                let outcome = py.check_signals().and_then(|()| match &progress {
                    Some(callback) => callback.call1(py, (fraction,)).map(drop),
                    None => Ok(()),
                });
                match outcome {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => {
                        callback_error = Some(e);
                        ControlFlow::Break(())
                    }
                }
            })
        };
        phb_sim::run_traced(&scenario, seed, &mut report, trace_dir.as_ref().map(tempfile::TempDir::path))
    });
    if let Some(e) = callback_error {
        return Err(e);
    }
    let output = result.map_err(|e| RunError::new_err(e.to_string()))?;

    let d = PyDict::new(py);
    d.set_item("scenario", &output.scenario)?;
    d.set_item("seed", output.seed)?;
    d.set_item("duration_s", output.duration_s)?;
    d.set_item("warmup_s", output.warmup_s)?;
    d.set_item("events", output.events)?;
    let parquet = PyDict::new(py);
    for table in &output.tables {
        let bytes =
            to_parquet(table, &[("phblab_version", version())]).map_err(|e| RunError::new_err(e.to_string()))?;
        parquet.set_item(&table.name, PyBytes::new(py, &bytes))?;
    }
    d.set_item("parquet", parquet)?;
    d.set_item("warnings", &output.warnings)?;
    if let Some(dir) = trace_dir {
        d.set_item("trace_dir", dir.keep())?;
    }
    let classes = output.table("classes").expect("every run has a classes table");
    d.set_item("classes", columns(py, classes)?)?;
    Ok(d)
}

/// A table's columns as a dict {column: list}.
fn columns<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyDict>> {
    let columns = PyDict::new(py);
    for (name, column) in &table.columns {
        match column {
            Column::F64(v) => columns.set_item(name, v)?,
            Column::U64(v) => columns.set_item(name, v)?,
            Column::Str(v) => columns.set_item(name, v)?,
        }
    }
    Ok(columns)
}

/// `phb_models` for Python: each function converts its arguments and calls
/// the model (see `python/phblab/models.py` for the documented API).
mod models {
    use phb_models::emodel::{self, Codec, EModel};
    use phb_models::queue_law::QueueLaw;
    use phb_models::red_control::{RedControl, Spacing};
    use phb_models::tcp_throughput::{self as tt, PftkParams, Timeout};
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;

    /// PFTK's parameters; `t0` in seconds, or `t0_rtts` times R; `q` the
    /// timeout probability (None: PFTK's Q̂).
    fn pftk_params(b: f64, w_max: f64, t0: Option<f64>, t0_rtts: Option<f64>, q: Option<f64>) -> PyResult<PftkParams> {
        let t0 = match (t0, t0_rtts) {
            (Some(s), None) => Timeout::Seconds(s),
            (None, Some(k)) => Timeout::Rtts(k),
            _ => return Err(PyValueError::new_err("give exactly one of T_0 (seconds) and T_0_rtts (a multiple of R)")),
        };
        if q.is_some_and(|q| !(q > 0.0 && q <= 1.0)) {
            return Err(PyValueError::new_err(format!("Q is a probability in (0, 1], got {}", q.unwrap_or_default())));
        }
        Ok(PftkParams { b, w_max, t0, timeout_probability: q })
    }

    #[pyfunction]
    #[allow(clippy::too_many_arguments)]
    pub fn pftk(
        m_bits: f64,
        r: f64,
        p: f64,
        b: f64,
        w_max: f64,
        t0: Option<f64>,
        t0_rtts: Option<f64>,
        q: Option<f64>,
    ) -> PyResult<f64> {
        Ok(tt::pftk(m_bits, r, p, pftk_params(b, w_max, t0, t0_rtts, q)?))
    }

    #[pyfunction]
    #[allow(clippy::too_many_arguments)]
    pub fn pftk_rtt(
        m_bits: f64,
        t: f64,
        p: f64,
        b: f64,
        w_max: f64,
        t0: Option<f64>,
        t0_rtts: Option<f64>,
        q: Option<f64>,
    ) -> PyResult<f64> {
        Ok(tt::pftk_rtt(m_bits, t, p, pftk_params(b, w_max, t0, t0_rtts, q)?))
    }

    #[pyfunction]
    pub fn square_root(m_bits: f64, r: f64, p: f64, b: f64) -> f64 {
        tt::square_root(m_bits, r, p, b)
    }

    #[pyfunction]
    pub fn square_root_rtt(m_bits: f64, t: f64, p: f64, b: f64) -> f64 {
        tt::square_root_rtt(m_bits, t, p, b)
    }

    #[allow(clippy::too_many_arguments)]
    fn law(
        n: f64,
        c: f64,
        r0: f64,
        m_bits: f64,
        b: f64,
        w_max: f64,
        t0: Option<f64>,
        t0_rtts: Option<f64>,
        q: Option<f64>,
        m: f64,
        u: f64,
        udp_packet_bits: f64,
    ) -> PyResult<QueueLaw> {
        Ok(QueueLaw::tcp(n, c, r0, m_bits, pftk_params(b, w_max, t0, t0_rtts, q)?).with_udp(m, u, udp_packet_bits))
    }

    fn red(min_th: f64, max_th: f64, max_p: f64, gentle: bool, spacing: &str) -> PyResult<RedControl> {
        let spacing = match spacing {
            "wait" => Spacing::Wait,
            "uniform" => Spacing::Uniform,
            "none" => Spacing::None,
            other => {
                return Err(PyValueError::new_err(format!(
                    "spacing is \"wait\", \"uniform\" or \"none\", not {other:?}"
                )))
            }
        };
        let red = RedControl { min_th, max_th, max_p, gentle, spacing };
        red.validate().map_err(PyValueError::new_err)?;
        Ok(red)
    }

    /// `(rtt, delay, queue_bits, queue_packets)` of the queue law at `p`.
    #[pyfunction]
    #[allow(clippy::too_many_arguments)]
    pub fn queue_law(
        p: f64,
        n: f64,
        c: f64,
        r0: f64,
        m_bits: f64,
        b: f64,
        w_max: f64,
        t0: Option<f64>,
        t0_rtts: Option<f64>,
        q: Option<f64>,
        m: f64,
        u: f64,
        udp_packet_bits: f64,
    ) -> PyResult<(f64, f64, f64, f64)> {
        let law = law(n, c, r0, m_bits, b, w_max, t0, t0_rtts, q, m, u, udp_packet_bits)?;
        Ok((law.rtt(p), law.delay(p), law.queue_bits(p), law.queue_packets(p)))
    }

    /// `(p_b, H)` of a RED configuration at average `q` (packets).
    #[pyfunction]
    pub fn red_control(
        q: f64,
        min_th: f64,
        max_th: f64,
        max_p: f64,
        gentle: bool,
        spacing: &str,
    ) -> PyResult<(f64, f64)> {
        let red = red(min_th, max_th, max_p, gentle, spacing)?;
        Ok((red.p_b(q), red.h(q)))
    }

    /// `(p, delay, queue_packets)` where the queue law meets RED's `H`.
    #[pyfunction]
    #[allow(clippy::too_many_arguments)]
    pub fn operating_point(
        n: f64,
        c: f64,
        r0: f64,
        m_bits: f64,
        b: f64,
        w_max: f64,
        t0: Option<f64>,
        t0_rtts: Option<f64>,
        q: Option<f64>,
        m: f64,
        u: f64,
        udp_packet_bits: f64,
        min_th: f64,
        max_th: f64,
        max_p: f64,
        gentle: bool,
        spacing: &str,
    ) -> PyResult<(f64, f64, f64)> {
        let law = law(n, c, r0, m_bits, b, w_max, t0, t0_rtts, q, m, u, udp_packet_bits)?;
        let op = law.operating_point(&red(min_th, max_th, max_p, gentle, spacing)?);
        Ok((op.p, op.delay, op.queue_packets))
    }

    fn codec(name: &str) -> PyResult<Codec> {
        Codec::by_name(name).ok_or_else(|| {
            let names: Vec<&str> = Codec::ALL.iter().map(|c| c.name).collect();
            PyValueError::new_err(format!("unknown codec {name:?}; codecs are {}", names.join(", ")))
        })
    }

    /// `R` of a call with one-way delay `delay` (s) and random loss `loss`.
    #[pyfunction]
    pub fn voip_r(delay: f64, loss: f64, codec: &str) -> PyResult<f64> {
        Ok(emodel::voip_r(delay, loss, self::codec(codec)?))
    }

    /// `(Ie, Bpl)` of a codec.
    #[pyfunction]
    pub fn codec_values(name: &str) -> PyResult<(f64, f64)> {
        let c = codec(name)?;
        Ok((c.ie, c.bpl))
    }

    /// G.107's defaults, by parameter name.
    #[pyfunction]
    pub fn emodel_defaults() -> Vec<(&'static str, f64)> {
        let d = EModel::default();
        vec![
            ("SLR", d.slr),
            ("RLR", d.rlr),
            ("STMR", d.stmr),
            ("LSTR", d.lstr),
            ("Ds", d.ds),
            ("Dr", d.dr),
            ("TELR", d.telr),
            ("WEPL", d.wepl),
            ("T", d.t),
            ("Tr", d.tr),
            ("Ta", d.ta),
            ("qdu", d.qdu),
            ("Ie", d.ie),
            ("Bpl", d.bpl),
            ("Ppl", d.ppl),
            ("BurstR", d.burst_r),
            ("Nc", d.nc),
            ("Nfor", d.nfor),
            ("Ps", d.ps),
            ("Pr", d.pr),
            ("A", d.a),
        ]
    }

    /// `(Ro, Is, Id, Ie_eff, A, R)` for G.107's parameters in the order of
    /// `emodel_defaults`.
    #[pyfunction]
    pub fn emodel_rating(v: Vec<f64>) -> PyResult<(f64, f64, f64, f64, f64, f64)> {
        let [slr, rlr, stmr, lstr, ds, dr, telr, wepl, t, tr, ta, qdu, ie, bpl, ppl, burst_r, nc, nfor, ps, pr, a] =
            v[..]
        else {
            return Err(PyValueError::new_err(format!("expected 21 E-model parameters, got {}", v.len())));
        };
        let e = EModel {
            slr,
            rlr,
            stmr,
            lstr,
            ds,
            dr,
            telr,
            wepl,
            t,
            tr,
            ta,
            qdu,
            ie,
            bpl,
            ppl,
            burst_r,
            nc,
            nfor,
            ps,
            pr,
            a,
        };
        let r = e.rating();
        Ok((r.ro, r.is, r.id, r.ie_eff, r.a, r.r))
    }

    #[pyfunction]
    pub fn mos(r: f64) -> f64 {
        emodel::mos(r)
    }

    pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
        let m = PyModule::new(parent.py(), "models")?;
        m.add_function(wrap_pyfunction!(pftk, &m)?)?;
        m.add_function(wrap_pyfunction!(pftk_rtt, &m)?)?;
        m.add_function(wrap_pyfunction!(square_root, &m)?)?;
        m.add_function(wrap_pyfunction!(square_root_rtt, &m)?)?;
        m.add_function(wrap_pyfunction!(queue_law, &m)?)?;
        m.add_function(wrap_pyfunction!(red_control, &m)?)?;
        m.add_function(wrap_pyfunction!(operating_point, &m)?)?;
        m.add_function(wrap_pyfunction!(voip_r, &m)?)?;
        m.add_function(wrap_pyfunction!(codec_values, &m)?)?;
        m.add_function(wrap_pyfunction!(emodel_defaults, &m)?)?;
        m.add_function(wrap_pyfunction!(emodel_rating, &m)?)?;
        m.add_function(wrap_pyfunction!(mos, &m)?)?;
        parent.add_submodule(&m)
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("RunError", m.py().get_type::<RunError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    models::register(m)?;
    Ok(())
}
