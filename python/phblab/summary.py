"""The readable summary printed after a run: one block per scope of the
`classes` table, delays in milliseconds and throughput in Mb/s.

End-to-end is always shown; a link direction ("r1->r2") only if it dropped
or ECN-marked packets or queued them noticeably (95th-percentile queueing delay of at
least `QUEUEING_MS`), which is where the per-hop behaviour mattered. It works
on the table's columns as plain lists (`Results.classes_columns`), so
printing it needs no pandas.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

END_TO_END = "end-to-end"
QUEUEING_MS = 1.0

_DELAYS = [
    ("delay_mean_s", "mean"),
    ("delay_p50_s", "p50"),
    ("delay_p95_s", "p95"),
    ("delay_p99_s", "p99"),
    ("delay_max_s", "max"),
]


def _int(v: Any) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else str(int(v))


def _num(v: Any, scale: float, digits: int) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v * scale:.{digits}f}"


Rows = list[dict[str, Any]]


def _shown(block: Rows) -> bool:
    drops = sum(r.get("dropped", 0) + r.get("marked", 0) for r in block)
    p95 = max((r.get("delay_p95_s", 0.0) for r in block), default=0.0)
    return bool(drops > 0 or (p95 is not None and not math.isnan(p95) and p95 * 1e3 >= QUEUEING_MS))


def _block(block: Rows, end_to_end: bool) -> list[str]:
    """The lines of one scope's table."""
    present = block[0].keys()
    columns: list[tuple[str, str, Callable[[Any], str]]] = [("class", "class", str)]
    for col, head in [
        ("arrivals", "sent" if end_to_end else "arrivals"),
        ("departures", "received" if end_to_end else "departures"),
        ("dropped", "dropped"),
    ]:
        if col in present:
            columns.append((col, head, _int))
    # Drop reasons that occurred in this scope (any drop_* column).
    for col in present:
        if col.startswith("drop_") and sum(r[col] for r in block) > 0:
            columns.append((col, col.removeprefix("drop_"), _int))
    # ECN marks, where some were set.
    if "marked" in present and sum(r["marked"] for r in block) > 0:
        columns.append(("marked", "marked", _int))
    if "loss_rate" in present:
        columns.append(("loss_rate", "loss %", lambda v: _num(v, 100.0, 2)))
    for col, head in _DELAYS:
        if col in present:
            columns.append((col, f"{head} ms", lambda v: _num(v, 1e3, 2)))
    if "throughput_bps" in present:
        columns.append(("throughput_bps", "Mb/s", lambda v: _num(v, 1e-6, 3)))
    if not end_to_end and "queued_end" in present:
        columns.append(("queued_end", "queued", _int))

    cells = [[head for _, head, _ in columns]]
    for row in block:
        cells.append([fmt(row[col]) for col, _, fmt in columns])
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = []
    for r in cells:
        parts = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        lines.append("  " + "  ".join(parts).rstrip())
    return lines


def format_summary(summary: dict[str, Any], classes: Mapping[str, list] | None) -> str:
    """The summary text of a run (`summary` as in `Results.summary`,
    `classes` the table's columns as {column: list})."""
    out = []
    emulated = summary.get("backend") == "emulate"
    head = (
        f"{summary.get('scenario')}: seed {summary.get('seed')}, "
        f"{summary.get('duration_s', 0):g} s {'emulated' if emulated else 'simulated'} "
        f"(statistics from {summary.get('warmup_s', 0):g} s), "
        f"{summary.get('events', 0):,} {'packets forwarded' if emulated else 'events'}"
    )
    if summary.get("wall_time_s") is not None:
        head += f" in {summary['wall_time_s']:.2f} s"
    out.append(head)
    if not classes or "scope" not in classes or "class" not in classes or not classes["scope"]:
        out.append("(no per-class statistics)")
        return "\n".join(out)
    out.append(
        "Counts are of the measured period: a packet sent before the warm-up ended and received after it "
        "counts as received only, so sent need not equal received + dropped (docs/results.md)."
    )
    names = list(classes)
    rows = [dict(zip(names, values, strict=True)) for values in zip(*classes.values(), strict=True)]
    hidden = 0
    for scope in dict.fromkeys(classes["scope"]):  # scopes in table order
        block = [r for r in rows if r["scope"] == scope]
        end_to_end = scope == END_TO_END
        if not end_to_end and not _shown(block):
            hidden += 1
            continue
        title = (
            "end-to-end (delay: one way, source to sink)"
            if end_to_end
            else f"link {scope} (delay: queueing at this output)"
        )
        out.extend(["", title])
        out.extend(_block(block, end_to_end))
    if hidden:
        out.extend(
            [
                "",
                f"({hidden} other link direction{'s' if hidden != 1 else ''} "
                f"without drops and with p95 queueing under {QUEUEING_MS:g} ms not shown; "
                "see classes.parquet)",
            ]
        )
    return "\n".join(out)


def print_summary(results, file=None) -> None:
    """Prints `format_summary` of a `Results`."""
    print(format_summary(results.summary, results.classes_columns()), file=file)
