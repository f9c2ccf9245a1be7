"""What a catalog entry is, once parsed: its metrics, expected values,
claims and the entry itself (dataclasses), the vocabulary of the
`[reproduce]` section (tables, aggregates, sources, operators), and the
small checks every stage of the catalog shares."""

from __future__ import annotations

import itertools
import math
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_RESULTS = Path("results") / "reproduce"
AGGREGATES = {"sum", "mean", "min", "max", "count"}
#: the per-run tables a column metric may read (the sweep's dataset, and
#: each run's transfers.parquet)
COLUMN_TABLES = ("classes", "flows", "delay_ratios", "counters", "transfers")
#: a percentile aggregate: "p10", "p50", "p90", "p99.9" ...
PERCENTILE_AGG = re.compile(r"p(\d+(\.\d+)?)")
SOURCES = {"paper", "measured"}
#: what an entry is: a reproduction of a paper's result, or a sensitivity
#: study that reruns one under another assumption (not itself a reproduction)
ENTRY_KINDS = ("reproduction", "sensitivity")
#: where an entry's runs may execute (`[reproduce].backends`, phblab.sweep.BACKENDS)
BACKENDS = ("simulate", "emulate")
#: the backends an entry allows when it does not say
DEFAULT_BACKENDS = ("simulate",)
CLAIM_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
#: a claim's two-sided relation: left within a tolerance of right
WITHIN = "within"
#: what a check compares ours with: its `kind` (docs/workflow.md, "Checks")
CHECK_KINDS = {
    "printed": "a number printed in the paper (text, table, or read off a figure's axis)",
    "stated": "a relation the paper states in a sentence",
    "derived": "a target computed from the paper's parameters, not printed by it",
    "model": "phblab's own model of the paper's equations",
}
#: the kinds that are the paper's own values and statements
PAPER_KINDS = ("printed", "stated")
#: the kind of a check with `source = "measured"`: a regression value of
#: phblab itself, no paper's
MEASURED = "measured"
#: the kind of a check read from a comparison row written before checks had
#: kinds (an entry's check must give one: it fails to load without)
UNLABELLED = "unlabelled"
#: the order kinds are counted in: the paper's own (printed, stated) first
KIND_ORDER = (*CHECK_KINDS, MEASURED, UNLABELLED)
#: what explains a failing check (`cause`, with `why`)
CAUSES = {
    "paper-inconsistent": "the paper's own numbers disagree (why: the arithmetic)",
    "unstated-assumption": "the paper does not say, and the choice moves the result (why: the sensitivity run)",
    "model-difference": "phblab lacks or does differently a named feature (why: which)",
}
#: a failing check without a cause
UNEXPLAINED = "unexplained"
#: per-class series of a run's time series (`timeseries.parquet`)
CLASS_SERIES = {"delay_mean_s", "throughput_bps", "offered_bps", "loss_rate", "busy_loss_rate"}
#: series that add up over classes (an `interval_value` or `when` over a list of classes)
ADDITIVE_SERIES = {"throughput_bps", "offered_bps"}
TIMESERIES_KINDS = ("interval_ratio", "interval_value")
#: keys every kind of metric may have: what the paper means by it, where
#: phblab measures it, and the headline metric it is an alternative
#: reading of (a sensitivity row: shown, not checked)
DESCRIPTIVE_KEYS = ("definition", "measured_at", "sensitivity_of")
METRIC_KEYS = {
    "table",
    "column",
    "where",
    "agg",
    "scale",
    "unit",
    "label",
    "ratio",
    "fit",
    "x",
    "y",
    "param",
    "expr",
    "params",
    "interval_ratio",
    "interval_value",
    "percentile",
    "within",
    "during",
    "when",
    *DESCRIPTIVE_KEYS,
}


class CatalogError(ValueError):
    """A catalog entry's [reproduce] section is malformed."""


@dataclass
class Metric:
    """A metric of an entry. Its kind follows from the keys given:
    `column` (a table's column, aggregated per run), `ratio`, `expr`,
    `interval_ratio` or `interval_value` (from each run's time series) or
    `fit` (one value for the whole grid); every kind but `fit` gives one
    value per run."""

    name: str
    table: str = "flows"
    column: str | None = None
    where: dict = field(default_factory=dict)
    agg: str = "sum"
    scale: float = 1.0
    unit: str = ""
    label: str = ""
    ratio: tuple | None = None
    fit: str | None = None
    x: tuple = ()
    y: str | None = None
    param: str | None = None
    expr: str | None = None
    params: dict = field(default_factory=dict)  # expr: {name in the expression: grid key}
    interval_ratio: dict | None = None  # scope, numerator, denominator, metric
    interval_value: dict | None = None  # scope, class (a name or a list), metric
    percentile: float | None = None
    within: tuple | None = None  # (lo, hi): the fraction of intervals with a value in [lo, hi]
    during: list = field(default_factory=list)  # [(t0, t1)]: intervals ending in (t0, t1]
    when: list = field(default_factory=list)  # [{class, metric, op, value}]: intervals where all hold
    inputs: dict = field(default_factory=dict)  # expr: {name in the expression: per-run column}
    uses: tuple = ()  # expr: the metrics it reads
    definition: str = ""  # the paper's definition, quoted, or what it leaves open
    measured_at: str = ""  # where phblab measures it (node, layer, offered or delivered, ...)
    sensitivity_of: str | None = None  # the headline metric this one is an alternative reading of

    @property
    def per_point(self) -> bool:
        return self.fit is None

    @property
    def kind(self) -> str:
        """ "column", "ratio", "expr", "interval_ratio", "interval_value" or
        "fit": the key that defines it."""
        if self.fit is not None:
            return "fit"
        if self.ratio is not None:
            return "ratio"
        if self.expr is not None:
            return "expr"
        if self.interval_ratio is not None:
            return "interval_ratio"
        if self.interval_value is not None:
            return "interval_value"
        return "column"

    @property
    def series(self) -> dict | None:
        """A time-series metric's interval_ratio or interval_value table."""
        return self.interval_ratio if self.interval_ratio is not None else self.interval_value

    @property
    def deps(self) -> tuple:
        """The metrics this one is computed from."""
        if self.ratio is not None:
            return tuple(self.ratio)
        if self.expr is not None:
            return self.uses
        if self.y is not None:
            return (self.y,)
        return ()


@dataclass
class Expectation:
    """`[[reproduce.expect]]`: values to compare a metric with."""

    metric: str
    source: str
    ref: str
    tolerance: Any
    points: list  # of dicts: grid params + value (+ tolerance, cause, why)
    kind: str = UNLABELLED  # CHECK_KINDS, MEASURED or UNLABELLED
    cause: str = ""  # CAUSES: what explains it if it fails
    why: str = ""


@dataclass
class Side:
    """One side of a claim: a per-point metric at grid coordinates (`at`
    plus the claim's `over`), times `scale`; or a constant `value`."""

    metric: str | None = None
    at: dict = field(default_factory=dict)
    scale: float = 1.0
    value: float | None = None
    #: the constant, or the scale, as the paper prints it ("2", "0.50"):
    #: given as a string in the file; a `tolerance = "printed"` follows from it
    printed: str | None = None


@dataclass
class Claim:
    """A relation the paper states, checked on the means over the seeds:
    `left op right`, once per combination of the `over` values."""

    text: str
    ref: str
    source: str
    over: dict  # {grid key: [values]}
    left: Side
    op: str  # CLAIM_OPS or WITHIN
    right: Side
    kind: str = UNLABELLED
    tolerance: Any = None  # op WITHIN: how far left may be from right
    cause: str = ""
    why: str = ""

    def combinations(self) -> list[dict]:
        """The coordinates of each check, in the order of `over`."""
        return [dict(zip(self.over, vs, strict=True)) for vs in itertools.product(*self.over.values())]


@dataclass
class Entry:
    id: str
    path: Path
    title: str
    paper: str
    assumptions: list
    notes: str
    sweep: dict
    metrics: dict
    expect: list
    plot: dict
    text: str
    claims: list = field(default_factory=list)
    #: `[reproduce.table]`: {"metrics": [...], "where": {...}, "title": "..."}
    table: dict = field(default_factory=dict)
    #: "reproduction" or "sensitivity" (ENTRY_KINDS)
    kind: str = "reproduction"
    #: the scenario file the entry sweeps: `path` itself, or the file its
    #: `scenario` key names
    scenario: Path | None = None
    #: `[reproduce].backends`: where its runs may execute (BACKENDS)
    backends: tuple = DEFAULT_BACKENDS
    #: `[reproduce.<backend>]`: what the entry changes on one backend, by
    #: backend (BackendSettings)
    per_backend: dict = field(default_factory=dict)
    #: `[[reproduce.unchecked]]`: what the paper states that is not
    #: checked, each {"text", "ref", "why"}
    unchecked: list = field(default_factory=list)

    @property
    def scenario_path(self) -> Path:
        return self.scenario or self.path

    @property
    def grid(self) -> dict:
        return self.sweep.get("grid", {})


@dataclass
class BackendSettings:
    """`[reproduce.<backend>]`: the scenario's keys an entry's runs on that
    backend leave unset (`unset`, each path as the scenario holds it,
    `traffic[*]` expanded to every entry that sets the key), so that the
    backend's own behaviour applies, and why (`why`): e.g. FreeBSD's TCP
    timers, which the simulator models and Linux cannot be asked for."""

    unset: tuple
    why: str

    def overrides(self) -> list[str]:
        """The core's removals (`~path`, applied after the sweep's overrides)."""
        return [f"~{p}" for p in self.unset]


def need(cond: bool, where: str, msg: str) -> None:
    """CatalogError "`where`: `msg`" unless `cond`."""
    if not cond:
        raise CatalogError(f"{where}: {msg}")


def check_keys(d: Mapping, allowed: set, where: str) -> None:
    """CatalogError naming the keys of `d` outside `allowed`."""
    extra = set(d) - allowed
    need(
        not extra,
        where,
        f"unknown key{'s' if len(extra) > 1 else ''} {', '.join(sorted(extra))}; expected {', '.join(sorted(allowed))}",
    )


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same(a: Any, b: Any) -> bool:
    """Whether two grid values are the same (numbers within a relative 1e-9)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b
