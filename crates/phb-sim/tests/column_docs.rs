//! Every column of every result table, and every time-series metric, is
//! documented (`phb_sim::output::columns`) and in docs/results.md, on
//! scenarios that fill every table.

use phb_sim::output::columns::{column_doc, TIMESERIES_METRICS};
use phb_sim::{load, run, Column};

const RESULTS_DOC: &str = include_str!("../../../docs/results.md");

fn check(text: &str, name: &str, overrides: &[String]) {
    let scenario = load(text, name, overrides).unwrap_or_else(|e| panic!("{e}"));
    let out = run(&scenario, None, &mut |_| {}).unwrap();
    for table in &out.tables {
        for (column, _) in &table.columns {
            assert!(column_doc(&table.name, column).is_some(), "{name}: {}.{column} is not documented", table.name);
            assert!(
                RESULTS_DOC.contains(&format!("`{column}`")),
                "docs/results.md does not list {}.{column}",
                table.name
            );
        }
    }
    let series = out.table("timeseries").unwrap();
    let Some(Column::Str(metrics)) = series.column("metric") else { panic!("no metric column") };
    for metric in metrics {
        assert!(
            TIMESERIES_METRICS.iter().any(|(m, _, _)| m == metric),
            "{name}: time-series metric {metric} is not documented"
        );
    }
}

#[test]
fn every_column_and_metric_is_documented() {
    check(include_str!("../../../scenarios/examples/tcp-udp-red.toml"), "tcp-udp-red.toml", &[]);
    check(
        include_str!("../../../scenarios/examples/jobs.toml"),
        "jobs.toml",
        &["run.duration=\"4s\"".to_owned(), "run.sample_interval=\"1s\"".to_owned()],
    );
    check(
        include_str!("../../../scenarios/examples/diffserv-af-ef.toml"),
        "diffserv-af-ef.toml",
        &["run.sample_interval=\"1s\"".to_owned()],
    );
    check(
        include_str!("../../../scenarios/examples/twam-dwred.toml"),
        "twam-dwred.toml",
        &["run.sample_interval=\"1s\"".to_owned()],
    );
    for (m, unit, description) in TIMESERIES_METRICS {
        assert!(!unit.is_empty() && !description.is_empty());
        assert!(RESULTS_DOC.contains(&format!("`{m}`")), "docs/results.md does not list the time-series metric {m}");
    }
}
