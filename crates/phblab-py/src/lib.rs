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
//! Exceptions: `ScenarioError` (a `ValueError`: the scenario or an override
//! is wrong) and `RunError` (a `RuntimeError`: the run could not finish
//! correctly, a simulator bug).

use std::ops::ControlFlow;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use phb_sim::output::parquet_file::to_parquet;
use phb_sim::{Column, Scenario, Table};

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

fn load(text: &str, source_name: &str, overrides: &[String]) -> PyResult<Scenario> {
    phb_sim::load(text, source_name, overrides).map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// Validates scenario `text` (called `source_name` in messages) with
/// `overrides` (`"path.to.key=value"`) applied; raises `ScenarioError` or
/// returns a short description of the scenario, with its link directions
/// (`"a->b"`, the scopes a time series may name), generated ones included.
#[pyfunction]
#[pyo3(signature = (text, source_name = "<string>", overrides = Vec::new()))]
fn validate<'py>(
    py: Python<'py>,
    text: &str,
    source_name: &str,
    overrides: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let scenario = load(text, source_name, &overrides)?;
    let d = PyDict::new(py);
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
/// `RunError`.
///
/// The simulation runs without holding the GIL (other Python threads keep
/// running). Every 65,536 events (a few milliseconds) it re-acquires it to
/// run pending signal handlers and call `progress`; an exception from
/// either (KeyboardInterrupt on Ctrl-C) stops the run at once and is
/// re-raised.
#[pyfunction]
#[pyo3(signature = (text, source_name = "<string>", seed = None, overrides = Vec::new(), progress = None))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    source_name: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let scenario = load(text, source_name, &overrides)?;
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
        phb_sim::run_with(&scenario, seed, &mut report)
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("RunError", m.py().get_type::<RunError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    Ok(())
}
