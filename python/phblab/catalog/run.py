"""Reproducing an entry: its sweep run (or reused), its metrics evaluated,
its checks decided, its plots drawn, and its outcome written
(`comparison.json`, `comparison.csv`, `per_run.csv`) into
`results/reproduce/<id>/`."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from phblab import _core, api, outdir
from phblab.catalog.evaluate import fitted, per_run_values, point_stats, point_table, sensitivity_rows
from phblab.catalog.plots import plot_entry
from phblab.catalog.provenance import run_date, source_commit
from phblab.catalog.schema import BACKENDS, DEFAULT_RESULTS, CatalogError, Entry, Metric, Side
from phblab.catalog.verdict import check_claims, compare, from_row
from phblab.results import read_json_object


@dataclass
class Outcome:
    entry: Entry
    checks: list
    dir: Path
    plots: list
    runs: int
    ran: int
    wall_time_s: float
    per_point: pd.DataFrame
    seeds: list = field(default_factory=list)
    reruns: list = field(default_factory=list)  # sweep.Rerun: runs that failed verification
    table: dict = field(default_factory=dict)
    backend: str = "simulate"
    congestion: str | None = None  # an emulated reproduction's congestion control
    sensitivity: list = field(default_factory=list)  # evaluate.sensitivity_rows
    commit: str | None = None  # provenance.source_commit() when it ran
    date: str = ""  # provenance.run_date() when it ran
    kernel: str | None = None  # an emulated reproduction's kernel release(s), from its runs

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def to_json(self) -> dict:
        e = self.entry
        return {
            "id": e.id,
            "title": e.title,
            "kind": e.kind,
            "paper": e.paper,
            "scenario": str(e.scenario_path),
            "entry": str(e.path),
            "assumptions": e.assumptions,
            "notes": e.notes,
            "sweep": {**e.sweep, "seeds": self.seeds or e.sweep.get("seeds", 1)},
            "metrics": {m.name: _metric_json(m) for m in e.metrics.values()},
            "claims": [
                {
                    "text": c.text,
                    "ref": c.ref,
                    "source": c.source,
                    "over": c.over,
                    "op": c.op,
                    "left": _side_json(c.left),
                    "right": _side_json(c.right),
                    "kind": c.kind,
                    **({"tolerance": c.tolerance} if c.tolerance is not None else {}),
                    **({"cause": c.cause, "why": c.why} if c.cause else {}),
                }
                for c in e.claims
            ],
            "unchecked": e.unchecked,
            "phblab_version": _core.version(),
            "commit": self.commit,
            "date": self.date,
            "backend": self.backend,
            **({"congestion_control": self.congestion} if self.congestion else {}),
            **({"kernel": self.kernel} if self.kernel else {}),
            **_unset_json(e, self.backend),
            "runs": self.runs,
            "ran": self.ran,
            "wall_time_s": self.wall_time_s,
            "passed": self.passed,
            "checks": [c.row() for c in self.checks],
            "table": self.table,
            "sensitivity": self.sensitivity,
            "plots": [str(p.relative_to(self.dir)) for p in self.plots],
        }


def _unset_json(entry: Entry, backend: str) -> dict:
    """What the entry left unset on `backend` (`[reproduce.<backend>]`), if anything."""
    settings = entry.per_backend.get(backend)
    return {"unset": list(settings.unset), "unset_why": settings.why} if settings else {}


def _metric_json(m: Metric) -> dict:
    doc = {"label": m.label, "unit": m.unit, "kind": m.kind}
    described = {"definition": m.definition, "measured_at": m.measured_at, "sensitivity_of": m.sensitivity_of}
    doc.update({k: v for k, v in described.items() if v})
    if m.fit:
        doc.update(fit=m.fit, param=m.param)
    if m.expr is not None:
        doc.update(expr=m.expr, **({"params": m.params} if m.params else {}))
    if m.series is not None:
        doc[m.kind] = m.series
        reduction = {"percentile": m.percentile, "within": m.within, "during": m.during, "when": m.when}
        doc.update({k: v for k, v in reduction.items() if v is not None and v != []})
    return doc


def _side_json(s: Side) -> dict:
    printed = {"printed": s.printed} if s.printed is not None else {}
    if s.metric is None:
        return {"value": s.value, **printed}
    return {"metric": s.metric, "at": s.at, "scale": s.scale, **printed}


@dataclass
class Saved:
    """An outcome as `reproduce` wrote it (comparison.json), with its checks
    rebuilt as verdict objects: what every renderer of saved results reads."""

    doc: dict
    checks: list
    # an emulated outcome's worst run's p99 of how late the router served its timers (s)
    router_lateness_p99_s: float | None = None

    @property
    def passed(self) -> bool:
        return bool(self.doc.get("passed"))


def read_outcome(directory: str | os.PathLike) -> Saved | None:
    """The outcome saved in an entry's results `directory`, or None if it
    has none."""
    path = Path(directory) / "comparison.json"
    if not path.is_file():
        return None
    doc = read_json_object(path)
    checks, plots = doc.get("checks", []), doc.get("plots", [])
    if not (isinstance(checks, list) and all(isinstance(c, dict) for c in checks)):
        raise ValueError(f"{path}: `checks` is not a list of tables; run the entry again")
    if not (isinstance(plots, list) and all(isinstance(p, str) for p in plots)):
        raise ValueError(f"{path}: `plots` is not a list of file names; run the entry again")
    lateness = _router_lateness(Path(directory)) if doc.get("backend") == "emulate" else None
    return Saved(doc, [from_row(row) for row in checks], lateness)


def _router_lateness(directory: Path) -> float | None:
    """The largest p99 of the router's lateness over the runs an emulated
    outcome in `directory` used (their summaries), None if none recorded it."""
    per_run = directory / "per_run.csv"
    if not per_run.is_file():
        return None
    worst = None
    for key in pd.read_csv(per_run, usecols=["run"], dtype=str)["run"]:
        summary = directory / "sweep" / "runs" / key / "summary.json"
        if summary.is_file():
            late = read_json_object(summary).get("emulation", {}).get("lateness_p99_s")
            if isinstance(late, (int, float)):
                worst = late if worst is None else max(worst, late)
    return worst


def entry_dir(entry: Entry, results: str | os.PathLike = DEFAULT_RESULTS, backend: str = "simulate") -> Path:
    """Where an entry's reproduction goes: `results/<id>`, or
    `results/<id>-emulate` for an emulated one."""
    return Path(results) / (entry.id if backend == "simulate" else f"{entry.id}-{backend}")


def check_backend(entry: Entry, backend: str) -> None:
    """CatalogError unless the entry allows `backend` (`[reproduce].backends`)."""
    if backend not in BACKENDS:
        raise CatalogError(f"backend {backend!r}: one of {', '.join(BACKENDS)}")
    if backend not in entry.backends:
        allowed = ", ".join(f'"{b}"' for b in entry.backends)
        raise CatalogError(
            f"{entry.id} does not allow the {backend} backend: its [reproduce].backends is [{allowed}] "
            f'({entry.path}; add "{backend}" there if the entry can run that way)'
        )


def reproduce(
    entry: Entry,
    results: str | os.PathLike = DEFAULT_RESULTS,
    jobs: int | None = None,
    client: Any = None,
    seeds: int | Sequence[int] | None = None,
    progress: bool = False,
    backend: str = "simulate",
    congestion: str | None = None,
) -> Outcome:
    """Runs an entry's sweep (reusing complete runs in its directory,
    `results/<id>/sweep`), computes its metrics, compares them and plots.
    Writes `results/<id>/comparison.json` and `.csv` and the plots.

    `backend="emulate"` (for an entry whose `backends` allow it) runs the
    sweep on real Linux TCP (`phblab.sweep`, one run at a time, with the
    congestion control `congestion`) into `results/<id>-emulate/`."""
    from phblab.sweep import sweep

    check_backend(entry, backend)
    settings = entry.per_backend.get(backend)
    overrides = api.override_list(entry.sweep.get("overrides")) + (settings.overrides() if settings else [])
    start = time.perf_counter()
    d = entry_dir(entry, results, backend)
    outdir.claim(d, "reproduction")
    with outdir.lock(d, "reproduction"):
        sw = sweep(
            entry.scenario_path,
            grid=entry.grid,
            seeds=seeds if seeds is not None else entry.sweep.get("seeds", 1),
            jobs=jobs,
            out=d / "sweep",
            client=client,
            overrides=overrides,
            set=entry.sweep.get("set"),
            progress=progress,
            backend=backend,
            congestion=congestion,
        )
        data = {
            "classes": sw.classes,
            "flows": sw.flows,
            "delay_ratios": sw.delay_ratios,
            "counters": sw.counters,
            "runs": sw.runs,
        }
        per_run = per_run_values(entry, data, sw.dir / "runs")
        pstats = point_stats(entry, per_run)
        fits = fitted(entry, pstats)
        checks = compare(entry, pstats, fits) + check_claims(entry, pstats)
        with outdir.writing(d, "reproduction") as staging:
            plots = [d / p.relative_to(staging) for p in plot_entry(entry, pstats, staging)]
            outcome = Outcome(
                entry,
                checks,
                d,
                plots,
                len(sw.runs),
                sw.ran,
                time.perf_counter() - start,
                pstats,
                list(sw.seeds),
                sw.reruns,
                point_table(entry, pstats),
                sw.backend,
                sw.congestion,
                sensitivity_rows(entry, pstats, fits),
                source_commit(),
                run_date(),
                _kernels(sw.runs),
            )
            text = json.dumps(outcome.to_json(), indent=2, default=_json_default) + "\n"
            (staging / "comparison.json").write_text(text)
            pd.DataFrame([c.row() for c in checks]).to_csv(staging / "comparison.csv", index=False)
            per_run.to_csv(staging / "per_run.csv", index=False)
    return outcome


def _kernels(runs: pd.DataFrame) -> str | None:
    """The kernel release(s) an emulated sweep's runs recorded ("6.8.0-49-generic";
    several joined by ", "), None for a simulated one or runs that did not record it."""
    if "kernel" not in runs:
        return None
    releases = sorted({k for k in runs["kernel"] if isinstance(k, str)})
    return ", ".join(releases) or None


def _json_default(v: Any) -> Any:
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return str(v)
