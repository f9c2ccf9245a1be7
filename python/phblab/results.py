"""The result of a run: its facts (`summary`) and its tables, and writing
them to (or loading them from) a directory.

The core hands over each table as a Parquet file in memory (with every
column's description and unit in its metadata, `docs/results.md`); writing
a run stores those bytes as they are, so `phblab run` needs neither pandas
nor pyarrow. The tables become pandas DataFrames only when asked for
(`res.classes`, `res.tables["flows"]`), read from the bytes or the files.

A results directory holds one Parquet file per table (`classes.parquet`,
`flows.parquet`, `timeseries.parquet`, `transfers.parquet`, `delay_ratios.parquet`,
`counters.parquet`, `delay_histogram.parquet`, `conditioners.parquet`),
`summary.json`, the scenario text (`scenario.toml`) and the manifest of
what phblab wrote there (`phblab.outdir`).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phblab import outdir

if TYPE_CHECKING:
    import pandas as pd

#: the tables every run has, in the order they are listed
TABLES = (
    "classes",
    "flows",
    "timeseries",
    "transfers",
    "delay_ratios",
    "counters",
    "delay_histogram",
    "conditioners",
)
#: the tables a run has when its scenario asks for them: the packet trace's event log (`[trace]`)
TRACE_TABLES = ("events",)
#: the packet trace's pcapng file (`trace.pcap`), a file of the run's directory
PCAP_FILE = "trace.pcapng"


class _Tables(Mapping):
    """{table name: DataFrame}, each read from its Parquet bytes or file on
    first use and kept."""

    def __init__(self, sources: Mapping[str, bytes | Path]) -> None:
        self._sources = dict(sources)
        self._frames: dict[str, pd.DataFrame] = {}

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            import pandas as pd

            source = self._sources[name]
            self._frames[name] = pd.read_parquet(io.BytesIO(source) if isinstance(source, bytes) else source)
        return self._frames[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)


class Results:
    """What `phblab.run` and `phblab.load` return.

    Attributes:
        summary: the run's facts: scenario, scenario_sha256, seed,
            duration_s, warmup_s, events, wall_time_s, phblab_version,
            overrides, warnings (`docs/results.md`).
        tables: every table by name, as DataFrames (read on first use).
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
        counters: a qdisc's own counts of its decisions, long form (scope,
            queue, counter, value); empty without a JoBS qdisc.
        delay_histogram: per (scope, class) the delays' distribution, one
            row per non-empty bucket (lower_s, upper_s, packets).
        conditioners: per edge conditioner, rule and colour, the packets
            matched and the colour's action; empty without a conditioner.
        scenario_text: the scenario the run was given, if known.
        files: other files of the run, by path in its directory, as bytes
            or the path of a file holding them: an emulation's
            `commands/<i>.out` and `.err` (`docs/emulation.md`), a packet
            trace's `trace.pcapng`.
    """

    def __init__(
        self,
        summary: dict[str, Any],
        parquet: Mapping[str, bytes | Path],
        classes: Mapping[str, list] | None = None,
        scenario_text: str | None = None,
        files: Mapping[str, bytes | Path] | None = None,
        scratch: tempfile.TemporaryDirectory | None = None,
    ) -> None:
        self.summary = summary
        self._parquet = dict(parquet)
        self.files = dict(files) if files is not None else {}
        # Holds the files of a `_parquet` entry that is a path (the packet
        # trace, `simulate`) while the results live; removed with them.
        self._scratch = scratch
        self._classes_columns = dict(classes) if classes is not None else None
        self.scenario_text = scenario_text
        self.tables = _Tables(self._parquet)

    @classmethod
    def from_core(
        cls,
        out: Mapping[str, Any],
        *,
        wall_time_s: float,
        overrides: list[str],
        version: str,
        scenario_text: str,
    ) -> Results:
        """Builds results from the dict `phblab._core.run` returns for
        `scenario_text`."""
        summary = {
            "scenario": out["scenario"],
            "scenario_sha256": hashlib.sha256(scenario_text.encode("utf-8")).hexdigest(),
            "seed": out["seed"],
            "duration_s": out["duration_s"],
            "warmup_s": out["warmup_s"],
            "events": out["events"],
            "wall_time_s": wall_time_s,
            "phblab_version": version,
            "overrides": list(overrides),
            "warnings": list(out.get("warnings", [])),
        }
        files = out.get("files")
        return cls(summary, out["parquet"], out["classes"], scenario_text, files, scratch=out.get("scratch"))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["tables"]  # DataFrames are rebuilt from the bytes
        # Files travel as bytes: another process (a sweep's parent) may not
        # see this one's scratch directory, which goes with this object.
        state["_parquet"] = {n: s if isinstance(s, bytes) else Path(s).read_bytes() for n, s in self._parquet.items()}
        state["files"] = {n: s if isinstance(s, bytes) else Path(s).read_bytes() for n, s in self.files.items()}
        state["_scratch"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.tables = _Tables(self._parquet)

    @property
    def classes(self) -> pd.DataFrame:
        return self.tables["classes"]

    @property
    def flows(self) -> pd.DataFrame:
        return self.tables["flows"]

    @property
    def timeseries(self) -> pd.DataFrame:
        return self.tables["timeseries"]

    @property
    def transfers(self) -> pd.DataFrame:
        return self.tables["transfers"]

    @property
    def counters(self) -> pd.DataFrame:
        return self.tables["counters"]

    @property
    def delay_histogram(self) -> pd.DataFrame:
        return self.tables["delay_histogram"]

    @property
    def conditioners(self) -> pd.DataFrame:
        return self.tables["conditioners"]

    def classes_columns(self) -> dict[str, list]:
        """The `classes` table as {column: list} (no pandas needed when the
        run came from the core)."""
        if self._classes_columns is None:
            self._classes_columns = self.classes.to_dict("list")
        return self._classes_columns

    @property
    def delay_ratios(self) -> pd.DataFrame:
        return self.tables["delay_ratios"]

    def __repr__(self) -> str:
        s = self.summary
        return f"<Results {s.get('scenario')!r} seed={s.get('seed')} (tables: {', '.join(self._parquet)})>"

    def summary_json(self) -> dict[str, Any]:
        """The content of summary.json: the summary plus the `classes` rows."""
        doc = dict(self.summary)
        cols = self.classes_columns()
        rows = len(next(iter(cols.values()))) if cols else 0
        doc["classes"] = [{n: _json_safe(v[i]) for n, v in cols.items()} for i in range(rows)]
        return {k: _json_safe(v) for k, v in doc.items()}

    def write(self, out_dir: str | os.PathLike) -> Path:
        """Writes `<table>.parquet`, `summary.json` and `scenario.toml`
        into `out_dir` and returns the directory.

        The files replace those of a previous run there; files phblab did not
        write are kept, and figures `phblab plot` drew there from other
        tables are removed (`outdir.drop_stale_plots`). A directory that holds files phblab did not write,
        and no record of phblab's (`phblab.outdir`), is refused with
        `outdir.NotOurs` (a FileExistsError), and so is one that holds another
        kind of results (a sweep; emulated results for simulated ones, and
        the other way round); one another process is writing into with
        `outdir.Busy`.
        """
        return self._write(Path(out_dir))

    @property
    def kind(self) -> str:
        """The kind of directory its results make (`outdir.KINDS`): "run",
        or "emulated-run" for results of `phblab emulate`."""
        return "emulated-run" if self.summary.get("backend") == "emulate" else "run"

    def _write(self, out: Path, owned: bool = False) -> Path:
        """`write`; `owned`: `out` is a run's directory in a sweep, phblab's
        even if its manifest is missing or unreadable (`outdir.claim`)."""
        with outdir.writing(out, self.kind, owned=owned) as staging:
            for name, source in self._parquet.items():
                target = staging / f"{name}.parquet"
                if isinstance(source, bytes):
                    target.write_bytes(source)
                else:
                    shutil.copyfile(source, target)
            text = json.dumps(self.summary_json(), indent=2, allow_nan=False) + "\n"
            (staging / "summary.json").write_text(text)
            if self.scenario_text is not None:
                (staging / "scenario.toml").write_text(self.scenario_text, encoding="utf-8")
            for name, data in self.files.items():
                target = staging / name
                target.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(data, bytes):
                    target.write_bytes(data)
                else:
                    shutil.copyfile(data, target)
        outdir.drop_stale_plots(out)
        return out


def load(run_dir: str | os.PathLike) -> Results:
    """The `Results` of a run's directory (written by `phblab run`, or a
    sweep's `runs/<key>/`), its tables read on first use. Raises
    FileNotFoundError for a directory without `summary.json`, ValueError if
    its files no longer match the manifest phblab wrote."""
    path = Path(run_dir)
    if not (path / "summary.json").is_file():
        raise FileNotFoundError(f"{path} is not a run's results directory (no summary.json)")
    if (path / outdir.MANIFEST).is_file():
        problem = outdir.verify(path)
        if problem is not None:
            raise ValueError(f"{path}: {problem}; run it again")
    summary = read_json_object(path / "summary.json")
    for key, types, what in _SUMMARY_FIELDS:
        if key in summary and (not isinstance(summary[key], types) or isinstance(summary[key], bool)):
            raise ValueError(f"{path / 'summary.json'}: `{key}` is a JSON {type(summary[key]).__name__}, not {what}")
    summary.pop("classes", None)  # the rows of classes.parquet
    parquet = {name: path / f"{name}.parquet" for name in TABLES + TRACE_TABLES if (path / f"{name}.parquet").is_file()}
    if "classes" not in parquet:
        raise FileNotFoundError(f"{path}: classes.parquet is missing")
    scenario = path / "scenario.toml"
    text = scenario.read_text(encoding="utf-8") if scenario.is_file() else None
    files = {PCAP_FILE: path / PCAP_FILE} if (path / PCAP_FILE).is_file() else None
    return Results(summary, parquet, scenario_text=text, files=files)


#: summary.json's facts that readers use: key, Python types, what it should be
_SUMMARY_FIELDS = [
    ("scenario", str, "a name"),
    ("seed", int, "an integer"),
    ("duration_s", (int, float), "a number"),
    ("warmup_s", (int, float), "a number"),
    ("events", int, "an integer"),
    ("wall_time_s", (int, float), "a number"),
    ("overrides", list, "a list"),
]

#: the largest JSON file of phblab's that is read (a summary, sweep.json)
MAX_JSON_BYTES = 256 << 20


def keep_trace(written: Path, parquet: dict, files: dict) -> tempfile.TemporaryDirectory | None:
    """Moves the packet trace a run wrote into `written` (`events.parquet`,
    and `trace.pcapng` if asked for), if any, into a fresh temporary
    directory that goes with the results, and adds them to `parquet` (as
    the table `events`) and `files` as paths: a trace can be large, so it
    is moved, never read into memory. Regular files only, never a link."""
    events = written / "events.parquet"
    if not stat.S_ISREG(_lstat_mode(events)):
        return None
    scratch = tempfile.TemporaryDirectory(prefix="phblab-trace-")
    kept = Path(scratch.name)
    shutil.move(events, kept / events.name)
    parquet["events"] = kept / events.name
    pcap = written / PCAP_FILE
    if stat.S_ISREG(_lstat_mode(pcap)):
        shutil.move(pcap, kept / PCAP_FILE)
        files[PCAP_FILE] = kept / PCAP_FILE
    return scratch


def _lstat_mode(path: Path) -> int:
    """The mode of `path` itself (0 if there is none)."""
    try:
        return os.lstat(path).st_mode
    except FileNotFoundError:
        return 0


def read_json_object(path: Path) -> dict:
    """The JSON object (a dict) in file `path`, which phblab wrote (a
    run's summary.json, a sweep's sweep.json); ValueError saying what is
    wrong if it is not one."""
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ValueError(f"{path} is not a regular file")
        data = f.read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise ValueError(f"{path} is larger than any phblab writes; not phblab's")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValueError(f"{path} is not valid JSON; run it again") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path} holds a JSON {type(doc).__name__}, not the object phblab writes; run it again")
    return doc


def _json_safe(value: Any) -> Any:
    """NaN and infinities become null (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
