"""Verdicts: each expected value and each claim of an entry checked
against our means (`Check`, `ClaimCheck`), rebuilt the same from a saved
comparison (`from_row`), and counted by kind and cause (`tally`,
`failures`). `reproduce` makes them, and every renderer (the terminal, the
HTML report, the Markdown outcome) reads them."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from phblab.catalog.evaluate import point_value
from phblab.catalog.schema import CAUSES, CLAIM_OPS, KIND_ORDER, UNEXPLAINED, UNLABELLED, WITHIN, Entry, Expectation
from phblab.catalog.text import coords_text, fmt
from phblab.catalog.tolerance import absolute


class _Verdict:
    """What both forms of check (a value, a claim) share: coordinates
    (`coords`), `passed`, what the check compares with (`kind`: CHECK_KINDS,
    MEASURED or UNLABELLED), what explains it if it fails (`cause`, `why`),
    and the head of their one-line message."""

    check: str  # "value" or "claim"
    coords: dict
    source: str
    ref: str
    kind: str
    cause: str
    why: str

    @property
    def passed(self) -> bool:
        raise NotImplementedError

    @property
    def failure(self) -> str | None:
        """None if the check passes; else its cause, or UNEXPLAINED."""
        return None if self.passed else (self.cause or UNEXPLAINED)

    def explanation(self) -> str:
        """ "cause: model-difference: <why>" for a failing check with a cause,
        "cause: unexplained" for one without, "note (<cause>): <why>" for a
        passing check that keeps one; "" otherwise."""
        if self.passed:
            return f"note ({self.cause}): {self.why}" if self.cause else ""
        return f"cause: {self.cause}: {self.why}" if self.cause else f"cause: {UNEXPLAINED}"

    def what(self) -> str:
        """The check in a few words: the metric, or the claim's text."""
        raise NotImplementedError

    def comparison(self) -> str:
        """Ours against what the check compares with, as text."""
        raise NotImplementedError

    def where(self) -> str:
        return coords_text(self.coords)

    def _head(self, what: str) -> str:
        at = f" at {self.where()}" if self.coords else ""
        return f"{'PASS' if self.passed else 'FAIL'} [{self.kind}] {what}{at}"

    def _located(self) -> dict:
        """The columns every row has after its first three: the coordinates,
        their text, and where the checked value comes from."""
        return {
            **{f"at.{k}": v for k, v in self.coords.items()},
            "where": self.where(),
            "source": self.source,
            "ref": self.ref,
        }

    def _explained(self) -> dict:
        """The columns every row ends with: the verdict and its cause."""
        return {"passed": self.passed, "cause": self.cause, "why": self.why}


@dataclass
class Check(_Verdict):
    """A value check: ours (the mean over the seeds) against an expected
    value, within a tolerance."""

    metric: str
    coords: dict
    source: str
    ref: str
    expected: float
    tolerance: str
    tol_abs: float
    ours: float
    ci_low: float
    ci_high: float
    n: int
    unit: str
    kind: str = UNLABELLED
    cause: str = ""
    why: str = ""
    check = "value"

    @property
    def gap(self) -> float:
        return self.ours - self.expected

    @property
    def rel_gap(self) -> float:
        return self.gap / self.expected if self.expected else math.nan

    @property
    def passed(self) -> bool:
        return math.isfinite(self.ours) and abs(self.gap) <= self.tol_abs * (1 + 1e-12)

    def what(self) -> str:
        return self.metric

    def comparison(self) -> str:
        """Ours against the expected value, as text."""
        ci = f" [{fmt(self.ci_low)}, {fmt(self.ci_high)}]" if math.isfinite(self.ci_low) else ""
        rel = f" ({100 * self.rel_gap:+.1f}%)" if math.isfinite(self.rel_gap) else ""
        verdict = "within" if self.passed else "exceeds"
        what = f"{self.source} ({self.ref})" if self.ref else self.source
        unit = f" {self.unit}" if self.unit else ""
        return (
            f"ours {fmt(self.ours)}{ci}{unit}, "
            f"{what} {fmt(self.expected)}: gap {self.gap:+.4g}{rel} {verdict} tolerance {self.tolerance}"
        )

    def message(self) -> str:
        return f"{self._head(self.metric)}: {self.comparison()}"

    def row(self) -> dict:
        return {
            "check": self.check,
            "kind": self.kind,
            "metric": self.metric,
            **self._located(),
            "expected": self.expected,
            "ours": self.ours,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n": self.n,
            "unit": self.unit,
            "tolerance": self.tolerance,
            "tol_abs": self.tol_abs,
            "gap": self.gap,
            "rel_gap": self.rel_gap,
            **self._explained(),
        }

    @classmethod
    def from_row(cls, row: Mapping) -> Check:
        """The check a `row()` was written from."""
        return cls(
            row["metric"],
            _coords(row),
            row.get("source", "paper"),
            row.get("ref", ""),
            row["expected"],
            row.get("tolerance", ""),
            row["tol_abs"],
            row["ours"],
            row["ci_low"],
            row["ci_high"],
            row["n"],
            row.get("unit", ""),
            **_explanation(row),
        )


@dataclass
class SideValue:
    """One side of a claim check, evaluated: the metric's mean over the
    seeds at grid point `at` (as text: "scheduler=fifo"), or a constant
    (metric None), times `scale`."""

    metric: str | None
    at: str
    scale: float
    mean: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    n: int = 0
    unit: str = ""

    @property
    def value(self) -> float:
        return self.scale * self.mean

    def text(self, ci: bool, unit: str) -> str:
        """'0.99 × tcp_throughput[scheduler=fifo] 5.13 = 5.079': the side as
        shown; `ci` adds the mean's 95% CI, `unit` follows the value."""
        u = f" {unit}" if unit else ""
        if not self.metric:
            return f"{fmt(self.mean)}{u}"
        name = f"{self.metric}[{self.at}]" if self.at else self.metric
        interval = f" [{fmt(self.ci_low)}, {fmt(self.ci_high)}]" if ci and math.isfinite(self.ci_low) else ""
        if self.scale == 1:
            return f"{name} {fmt(self.mean)}{interval}{u}"
        return f"{fmt(float(self.scale))} × {name} {fmt(self.mean)}{interval} = {fmt(self.value)}{u}"

    def row(self, side: str) -> dict:
        return {
            f"{side}_metric": self.metric or "",
            f"{side}_at": self.at,
            f"{side}_scale": self.scale,
            f"{side}_mean": self.mean,
            f"{side}_ci_low": self.ci_low,
            f"{side}_ci_high": self.ci_high,
            f"{side}_n": self.n,
            f"{side}_unit": self.unit,
            side: self.value,
        }

    @classmethod
    def from_row(cls, row: Mapping, side: str) -> SideValue:
        """The side a `row(side)` was written from."""
        return cls(
            row.get(f"{side}_metric") or None,
            row.get(f"{side}_at", ""),
            row.get(f"{side}_scale", 1.0),
            row[f"{side}_mean"],
            row.get(f"{side}_ci_low", math.nan),
            row.get(f"{side}_ci_high", math.nan),
            row.get(f"{side}_n", 0),
            row.get(f"{side}_unit") or "",
        )


@dataclass
class ClaimCheck(_Verdict):
    """One check of a claim: `left op right` on the means, at the claim's
    `over` coordinates `coords`."""

    text: str
    source: str
    ref: str
    coords: dict
    op: str  # CLAIM_OPS or WITHIN
    left: SideValue
    right: SideValue
    kind: str = UNLABELLED
    cause: str = ""
    why: str = ""
    tolerance: str = ""  # op WITHIN: as given ("30%", "±0.5 ms", "printed ±0.5 of 2")
    tol_abs: float = math.nan  # op WITHIN: how far left may be from right
    check = "claim"

    @property
    def passed(self) -> bool:
        left, right = self.left.value, self.right.value
        if not (math.isfinite(left) and math.isfinite(right)):
            return False
        if self.op == WITHIN:
            return abs(left - right) <= self.tol_abs * (1 + 1e-12)
        return CLAIM_OPS[self.op](left, right)

    @property
    def margin(self) -> float:
        """left − right: how far the left side is above the right."""
        return self.left.value - self.right.value

    def source_text(self) -> str:
        """The claim's source as shown: its ref for a paper ("Fig. 25"), else
        "measured, <ref>"."""
        if self.source == "paper":
            return self.ref or ""
        return ", ".join(x for x in (self.source, self.ref) if x)

    def relation(self, ci: bool = False) -> str:
        """The comparison as text: 'tcp[scheduler=bpr_plc] 5.11 >= 0.99 ×
        tcp[scheduler=fifo] 5.13 = 5.079 Mb/s'; `ci` adds each mean's 95% CI."""
        lu, ru = self.left.unit, self.right.unit
        same = lu == ru
        left = self.left.text(ci, "" if same else lu)
        right = self.right.text(ci, "" if same else ru)
        op = f"within ±{fmt(self.tol_abs)} of" if self.op == WITHIN else self.op
        return f"{left} {op} {right}{' ' + lu if same and lu else ''}"

    def label(self) -> str:
        """ "claim (Fig. 25)", "claim (measured, phblab 0.1.0)"."""
        what = self.source_text()
        return f"claim ({what})" if what else "claim"

    def what(self) -> str:
        return f"{self.label()}: {self.text}"

    def comparison(self) -> str:
        """Our means in the claim's relation, as text."""
        tolerance = f" (tolerance {self.tolerance})" if self.op == WITHIN else ""
        return f"ours {self.relation()}{tolerance}"

    def message(self) -> str:
        return f"{self._head(self.label())}: {self.text}: {self.comparison()}"

    def row(self) -> dict:
        return {
            "check": self.check,
            "kind": self.kind,
            "text": self.text,
            **self._located(),
            "op": self.op,
            **self.left.row("left"),
            **self.right.row("right"),
            "margin": self.margin,
            "tolerance": self.tolerance,
            "tol_abs": self.tol_abs,
            **self._explained(),
        }

    @classmethod
    def from_row(cls, row: Mapping) -> ClaimCheck:
        """The check a `row()` was written from."""
        return cls(
            row.get("text", ""),
            row.get("source", "paper"),
            row.get("ref", ""),
            _coords(row),
            row["op"],
            SideValue.from_row(row, "left"),
            SideValue.from_row(row, "right"),
            tolerance=row.get("tolerance") or "",
            tol_abs=row.get("tol_abs", math.nan),
            **_explanation(row),
        )


def _coords(row: Mapping) -> dict:
    """A row's grid point, from its `at.<key>` columns."""
    return {k[3:]: v for k, v in row.items() if k.startswith("at.")}


def _explanation(row: Mapping) -> dict:
    """A row's kind and cause as keyword arguments."""
    return {"kind": row.get("kind") or UNLABELLED, "cause": row.get("cause") or "", "why": row.get("why") or ""}


def from_row(row: Mapping) -> Check | ClaimCheck:
    """The check a row of comparison.json was written from (`row()`). A
    row written before checks had kinds names its form in `kind`."""
    if "check" not in row:
        row = {**row, "check": row.get("kind", "value"), "kind": UNLABELLED}
    return ClaimCheck.from_row(row) if row["check"] == "claim" else Check.from_row(row)


def counts(checks: Sequence[_Verdict]) -> dict[str, tuple[int, int]]:
    """{kind: (passed, checks)} in KIND_ORDER, for the kinds present."""
    out = {k: [0, 0] for k in KIND_ORDER}
    for c in checks:
        out[c.kind][0] += bool(c.passed)
        out[c.kind][1] += 1
    return {k: (p, n) for k, (p, n) in out.items() if n}


def failures(checks: Sequence[_Verdict]) -> dict[str, int]:
    """{cause: failing checks}, the unexplained first, then CAUSES' order."""
    order = [UNEXPLAINED, *CAUSES]
    found = Counter(c.failure for c in checks if not c.passed)
    return {cause: found[cause] for cause in order if found[cause]}


def tally(checks: Sequence[_Verdict]) -> str:
    """'printed 12/14 · stated 8/9 · derived 3/4 · model 2/2; failing: 1
    unexplained, 2 model-difference': the checks that pass of each kind, the
    paper's own (printed, stated) first, and what explains the failures."""
    text = " · ".join(f"{k} {p}/{n}" for k, (p, n) in counts(checks).items()) or "no checks"
    failing = failures(checks)
    if failing:
        text += "; failing: " + ", ".join(f"{n} {cause}" for cause, n in failing.items())
    return text


def compare(entry: Entry, pstats: pd.DataFrame, fits: Mapping[str, dict]) -> list[Check]:
    """One check per expected value, in order."""
    checks = []
    keys = list(entry.grid)
    for e in entry.expect:
        m = entry.metrics[e.metric]
        for p in e.points:
            expected = float(p["value"])
            tol_abs, tol_str = expected_tolerance(e, p, m.unit, f"{entry.id} expect {e.metric}")
            coords = {k: p[k] for k in keys if k in p}
            if m.per_point:
                ours, lo, hi, n = point_value(pstats, entry, m.name, coords)
            else:
                f = fits[m.name]
                ours, lo, hi, n = f["mean"], f["ci_low"], f["ci_high"], f["n"]
            checks.append(
                Check(
                    e.metric,
                    coords,
                    e.source,
                    e.ref,
                    expected,
                    tol_str,
                    tol_abs,
                    ours,
                    lo,
                    hi,
                    n,
                    m.unit,
                    kind=e.kind,
                    cause=p.get("cause", e.cause),
                    why=p.get("why", e.why),
                )
            )
    return checks


def check_claims(entry: Entry, pstats: pd.DataFrame) -> list[ClaimCheck]:
    """One check per claim and combination of its `over` values, in order."""
    checks = []
    for c in entry.claims:
        units = [entry.metrics[s.metric].unit for s in (c.left, c.right) if s.metric]
        for combo in c.combinations():
            sides = []
            for s in (c.left, c.right):
                if s.metric is None:
                    sides.append(SideValue(None, "", 1.0, s.value, unit=units[0]))
                else:
                    mean, lo, hi, n = point_value(pstats, entry, s.metric, {**combo, **s.at})
                    sides.append(
                        SideValue(s.metric, coords_text(s.at), s.scale, mean, lo, hi, n, entry.metrics[s.metric].unit)
                    )
            tolerance, tol_abs = "", math.nan
            if c.op == WITHIN:
                tol_abs, tolerance = absolute(
                    c.tolerance, sides[1].value, c.right.printed, units[0], entry.id, scale=c.right.metric is not None
                )
            checks.append(
                ClaimCheck(
                    c.text,
                    c.source,
                    c.ref,
                    combo,
                    c.op,
                    sides[0],
                    sides[1],
                    kind=c.kind,
                    cause=c.cause,
                    why=c.why,
                    tolerance=tolerance,
                    tol_abs=tol_abs,
                )
            )
    return checks


def expected_tolerance(e: Expectation, point: Mapping, unit: str, where: str) -> tuple[float, str]:
    """(the tolerance in the metric's unit, as shown) of an expected point."""
    value = point["value"]
    printed = value.strip() if isinstance(value, str) else None
    return absolute(point.get("tolerance", e.tolerance), float(value), printed, unit, where)
