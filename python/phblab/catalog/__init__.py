"""The reproduction catalog: scenarios that carry a `[reproduce]` section.

A catalog entry is a scenario file `scenarios/<paper>/<id>.toml` whose
`[reproduce]` section says which sweep to run, which metrics to compute from
its results, the values to compare them with (a paper's published numbers,
or measured regression values), each with a tolerance, and the relations the
paper states between them (claims). Its id is `<paper>/<id>` (the path under
the catalog root without `.toml`). `docs/workflow.md` describes the section;
in short:

    [reproduce]
    title = "..."; paper = "..."; assumptions = ["...", ...]
    backends = ["simulate", "emulate"]   where it may run (default
                               ["simulate"]; `reproduce --backend emulate`)
    [reproduce.sweep]          grid, set, seeds, overrides (phblab.sweep)
    [reproduce.metrics.NAME]   table/column/where/agg/scale/unit (table
                               "flows", "classes", "delay_ratios",
                               "transfers" or "counters"; agg sum ... count
                               or a percentile pNN; where values may be
                               templates of grid keys), or ratio, or expr
                               (+ params), or table = "timeseries" with
                               interval_ratio or interval_value, a
                               percentile or within, during and when; or
                               fit = "power_law"
    [[reproduce.expect]]       metric, source, kind, ref, tolerance, points
                               (cause, why)
    [[reproduce.claims]]       text, ref, kind, over, left, op, right
                               (op "within" with tolerance; cause, why)
    [[reproduce.unchecked]]    text, ref, why: statements not checked
    [reproduce.plot]           x, by, metrics, logx, logy
    [reproduce.table]          metrics, where, title: per-point means shown
                               as a table (comparison.json, the report)

A metric may say what the paper means by it (`definition`), where phblab
measures it (`measured_at`) and which headline it is an alternative
reading of (`sensitivity_of`: shown, never checked). Every check has a
kind (printed, stated, derived, model; measured for regression values) and
a failing one a cause or none (unexplained); docs/workflow.md.

The package follows an entry from its file to what a reader sees:

    schema      the parsed entry (dataclasses) and the section's vocabulary
                (kinds, causes)
    tolerance   a check's tolerance, and the rule for "printed" ones
    parse_metrics, parse
                the section checked key by key and its cross-references,
                before any run (`load_entry`, `load_catalog`, `find_entries`)
    evaluate    metrics from the sweep's tables, per run and per grid point
                (`per_run_values`, `point_stats`, `fitted`, `point_table`,
                `sensitivity_rows`)
    verdict     the checks (`Check`, `ClaimCheck`): made by `reproduce`,
                rebuilt from a saved comparison by `from_row`, counted by
                `tally` and `failures`; every renderer reads these objects
    run         `reproduce`: sweep, evaluate, decide, plot, write the
                outcome (`Outcome`, `comparison.json`); `read_outcome`
                reads it back (`Saved`)
    provenance  the commit and date an outcome records
    plots       ours beside every value it is compared with
    crosscheck  an entry's checks on both backends side by side (their
                values, emulated over simulated, both verdicts, the kernel)
    text, terminal, markdown
                numbers as text; the outcome as `phblab reproduce` prints it
                and the list of entries; the catalog's outcome as Markdown
                (`phblab report --format markdown`); `phblab.report`
                renders the HTML

    entry = load_entry("scenarios/vukadinovic-2004/appendix-b.toml")
    outcome = reproduce(entry, results="results/reproduce")
    print(format_outcome(outcome)); outcome.passed

An entry whose `backends` lists "emulate" may also run on real Linux TCP
(`reproduce(entry, backend="emulate")`): its results go to
`results/reproduce/<id>-emulate/` (`entry_dir`), beside the simulated ones,
and record the backend, the congestion control and the kernel's release; docs/emulation.md ("Sweeps and reproductions").
"""

from phblab.catalog.evaluate import (
    fitted,
    interval_ratio_percentile,
    interval_ratios,
    interval_values,
    per_run_values,
    point_stats,
    reduce_intervals,
)
from phblab.catalog.parse import default_catalog, find_entries, load_catalog, load_entry, parse_section
from phblab.catalog.run import Outcome, check_backend, entry_dir, reproduce
from phblab.catalog.schema import (
    CAUSES,
    CHECK_KINDS,
    DEFAULT_RESULTS,
    UNEXPLAINED,
    CatalogError,
    Claim,
    Entry,
    Expectation,
    Metric,
    Side,
)
from phblab.catalog.terminal import format_outcome, list_entries
from phblab.catalog.tolerance import parse_tolerance
from phblab.catalog.verdict import Check, ClaimCheck, SideValue, failures, from_row, tally

__all__ = [
    "CAUSES",
    "CHECK_KINDS",
    "DEFAULT_RESULTS",
    "UNEXPLAINED",
    "CatalogError",
    "Check",
    "Claim",
    "ClaimCheck",
    "Entry",
    "Expectation",
    "Metric",
    "Outcome",
    "Side",
    "SideValue",
    "check_backend",
    "default_catalog",
    "entry_dir",
    "find_entries",
    "fitted",
    "failures",
    "format_outcome",
    "from_row",
    "interval_ratio_percentile",
    "interval_ratios",
    "interval_values",
    "list_entries",
    "load_catalog",
    "load_entry",
    "parse_section",
    "parse_tolerance",
    "per_run_values",
    "point_stats",
    "reduce_intervals",
    "reproduce",
    "tally",
]
