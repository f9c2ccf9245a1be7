"""The result of a run: its facts (`summary`) and its tables as pandas
DataFrames, and writing them to a directory.

A results directory holds one Parquet file per table (`classes.parquet`,
`flows.parquet`, `timeseries.parquet`, `delay_ratios.parquet`, ...) and `summary.json`. It is written
atomically: into a temporary sibling directory first, which then replaces the
target, so a reader never sees a half-written directory.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

_ARROW_TYPES = {"f64": pa.float64(), "u64": pa.int64(), "str": pa.string()}
_NUMPY_TYPES = {"f64": "float64", "u64": "int64", "str": "str"}


def _kind(values: list) -> str:
    """A column's type when the core did not say (older cores)."""
    if values and isinstance(values[0], str):
        return "str"
    if values and all(isinstance(v, int) for v in values):
        return "u64"
    return "f64"


class Results:
    """What `phblab.run` returns.

    Attributes:
        summary: the run's facts: scenario, seed, duration_s, warmup_s,
            events, wall_time_s, phblab_version, overrides.
        tables: every table by name, as DataFrames.
        classes: per (scope, class) counters, drops by reason, delays and
            throughput; scope is "end-to-end" or a link direction "r1->r2".
        flows: one row per flow.
        timeseries: long form (time_s, scope, class, metric, value); empty
            unless the scenario sets `run.sample_interval`.
        transfers: one row per TCP file transfer (empty without `app = "files"`).
        delay_ratios: per (scope, numerator, denominator, timescale_s) the
            per-packet delay ratio and the mean and percentiles of the
            per-interval ratios; empty unless the scenario sets
            `run.delay_ratios`.
    """

    def __init__(
        self,
        summary: dict[str, Any],
        columns: Mapping[str, Mapping[str, list]],
        column_types: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.summary = summary
        self._columns = {name: dict(cols) for name, cols in columns.items()}
        column_types = column_types or {}
        self._types = {
            name: {c: column_types.get(name, {}).get(c) or _kind(v) for c, v in cols.items()}
            for name, cols in self._columns.items()
        }
        self.tables: dict[str, pd.DataFrame] = {
            name: pd.DataFrame({c: pd.Series(v, dtype=_NUMPY_TYPES[self._types[name][c]]) for c, v in cols.items()})
            for name, cols in self._columns.items()
        }

    @classmethod
    def from_core(cls, out: Mapping[str, Any], *, wall_time_s: float, overrides: list[str], version: str) -> Results:
        """Builds results from the dict `phblab._core.run` returns."""
        summary = {
            "scenario": out["scenario"],
            "seed": out["seed"],
            "duration_s": out["duration_s"],
            "warmup_s": out["warmup_s"],
            "events": out["events"],
            "wall_time_s": wall_time_s,
            "phblab_version": version,
            "overrides": list(overrides),
        }
        return cls(summary, out["tables"], out.get("column_types"))

    def _table(self, name: str) -> pd.DataFrame:
        return self.tables.get(name, pd.DataFrame())

    @property
    def classes(self) -> pd.DataFrame:
        return self._table("classes")

    @property
    def flows(self) -> pd.DataFrame:
        return self._table("flows")

    @property
    def timeseries(self) -> pd.DataFrame:
        return self._table("timeseries")

    @property
    def transfers(self) -> pd.DataFrame:
        return self._table("transfers")

    @property
    def delay_ratios(self) -> pd.DataFrame:
        return self._table("delay_ratios")

    def __repr__(self) -> str:
        s = self.summary
        tables = ", ".join(f"{n}: {len(t)} rows" for n, t in self.tables.items())
        return f"<Results {s.get('scenario')!r} seed={s.get('seed')} ({tables})>"

    def summary_json(self) -> dict[str, Any]:
        """The content of summary.json: the summary plus the `classes` rows."""
        doc = dict(self.summary)
        cols = self._columns.get("classes", {})
        names = list(cols)
        rows = len(next(iter(cols.values()))) if cols else 0
        doc["classes"] = [{n: _json_safe(cols[n][i]) for n in names} for i in range(rows)]
        return {k: _json_safe(v) for k, v in doc.items()}

    def write(self, out_dir: str | os.PathLike) -> Path:
        """Writes `<name>.parquet` per table and `summary.json` into `out_dir`,
        atomically, replacing a previous results directory there. Returns the
        directory.

        An existing `out_dir` is replaced only if it is empty or holds a
        `summary.json` (a previous result); anything else raises
        FileExistsError rather than deleting a directory that is not ours.
        """
        out = Path(out_dir)
        if out.exists() and not _replaceable(out):
            raise FileExistsError(
                f"{out} exists and is not a phblab results directory (no summary.json); "
                "refusing to replace it: choose another --out"
            )
        parent = out.absolute().parent
        parent.mkdir(parents=True, exist_ok=True)
        tmp = parent / f"{out.name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            for name, cols in self._columns.items():
                types = self._types[name]
                schema = pa.schema([(c, _ARROW_TYPES[types[c]]) for c in cols])
                table = pa.Table.from_pydict(cols, schema=schema)
                pq.write_table(table, tmp / f"{name}.parquet")
            text = json.dumps(self.summary_json(), indent=2, allow_nan=False) + "\n"
            (tmp / "summary.json").write_text(text)
            _replace_dir(tmp, parent / out.name)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return out


def _replaceable(path: Path) -> bool:
    if not path.is_dir() or path.is_symlink():
        return False
    entries = list(path.iterdir())
    return not entries or (path / "summary.json").is_file()


def _replace_dir(tmp: Path, target: Path) -> None:
    """Puts directory `tmp` at `target`: renames an existing target aside,
    renames `tmp` into place, then removes the old one."""
    if not target.exists():
        os.rename(tmp, target)
        return
    old = target.with_name(f"{target.name}.old-{os.getpid()}")
    shutil.rmtree(old, ignore_errors=True)
    os.rename(target, old)
    try:
        os.rename(tmp, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _json_safe(value: Any) -> Any:
    """NaN and infinities become null (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
