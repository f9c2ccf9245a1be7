"""The catalog on the terminal: an outcome as `phblab reproduce` prints
it, and the list of entries."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from phblab.catalog.run import Outcome
from phblab.catalog.schema import DEFAULT_BACKENDS, Entry
from phblab.catalog.text import coords_text, fmt
from phblab.catalog.verdict import tally


def format_table(table: Mapping) -> list[str]:
    """The lines `format_outcome` prints for a point table."""
    if not table or not table.get("rows"):
        return []
    lines = [f"  table{': ' + table['title'] if table.get('title') else ''}"]
    names = [m["name"] for m in table["metrics"]]
    for row in table["rows"]:
        at = coords_text({k: row[k] for k in table["keys"]}) or "the point"
        lines.append(f"    {at}: " + ", ".join(f"{n} {fmt(row[n])}" for n in names))
    return lines


def format_definitions(entry: Entry) -> list[str]:
    """The metrics that say what the paper means by them or where phblab
    measures them."""
    lines = []
    for m in entry.metrics.values():
        said = [x for x in (m.definition, m.measured_at and f"measured at: {m.measured_at}") if x]
        if said:
            unit = f" ({m.unit})" if m.unit else ""
            alt = f", a sensitivity row of {m.sensitivity_of}" if m.sensitivity_of else ""
            lines.append(f"    {m.name}{unit}{alt}: {' — '.join(said)}")
    return ["  metrics:", *lines] if lines else []


def format_sensitivity(rows: Sequence[Mapping]) -> list[str]:
    """Each sensitivity row beside its headline (`evaluate.sensitivity_rows`)."""
    lines = []
    for s in rows:
        unit = f" {s['unit']}" if s.get("unit") else ""
        lines.append(f"  sensitivity: {s['metric']} beside {s['of']} (shown, not checked)")
        for r in s["rows"]:
            at = coords_text(r["at"]) or "the fit"
            h, v = r["headline"], r["sensitivity"]
            lines.append(
                f"    {at}: {s['of']} {fmt(h['mean'])} [{fmt(h['ci_low'])}, {fmt(h['ci_high'])}], "
                f"{s['metric']} {fmt(v['mean'])} [{fmt(v['ci_low'])}, {fmt(v['ci_high'])}]{unit}"
            )
    return lines


def format_outcome(outcome: Outcome) -> str:
    e = outcome.entry
    lines = [f"{e.id}: {e.title}" + (f" [{e.kind}]" if e.kind != "reproduction" else "")]
    if e.paper:
        lines.append(f"  paper: {e.paper}")
    if e.assumptions:
        lines.append("  assumptions:")
        lines += [f"    - {a}" for a in e.assumptions]
    if e.notes:
        lines.append(f"  notes: {e.notes}")
    grid = ", ".join(f"{k} ∈ {{{', '.join(fmt(v) for v in vs)}}}" for k, vs in e.grid.items())
    kernel = f", Linux {outcome.kernel}" if outcome.kernel else ""
    how = f" emulated (TCP congestion control {outcome.congestion}{kernel})" if outcome.backend == "emulate" else ""
    lines.append(
        f"  sweep: {grid or 'one point'}; {outcome.runs} runs{how} ({outcome.ran} run now, the rest reused) "
        f"in {outcome.wall_time_s:.1f} s; results in {outcome.dir}/"
    )
    settings = e.per_backend.get(outcome.backend)
    if settings:
        lines.append(f"  left unset on {outcome.backend}: {', '.join(settings.unset)}: {settings.why}")
    lines += [f"  note: {r}" for r in outcome.reruns]
    lines += format_definitions(e)
    for c in outcome.checks:
        lines.append(f"  {c.message()}")
        if c.explanation():
            lines.append(f"    {c.explanation()}")
    lines += [f"  not checked ({u['ref']}): {u['text']}: {u['why']}" for u in e.unchecked]
    lines += format_sensitivity(outcome.sensitivity)
    lines += format_table(outcome.table)
    verdict = "PASS" if outcome.passed else "FAIL"
    lines.append(f"  {verdict}: {tally(outcome.checks)}")
    return "\n".join(lines)


def list_entries(entries: Sequence[Entry]) -> str:
    if not entries:
        return "(no catalog entries)"
    width = max(len(e.id) for e in entries)
    out = []
    for e in entries:
        n = sum(len(x.points) for x in e.expect)
        sources = "/".join(sorted({x.source for x in e.expect}))
        checks = sum(len(c.combinations()) for c in e.claims)
        what = [f"{n} {sources} values"] if n else []
        if e.claims:
            what.append(f"{len(e.claims)} claim{'s' if len(e.claims) > 1 else ''} ({checks} checks)")
        points = math.prod(len(v) for v in e.grid.values()) if e.grid else 1
        seeds = e.sweep.get("seeds", 1)
        nseeds = seeds if isinstance(seeds, int) else len(seeds)
        kind = f" ({e.kind})" if e.kind != "reproduction" else ""
        backends = f"; {' and '.join(e.backends)}" if e.backends != DEFAULT_BACKENDS else ""
        out.append(
            f"{e.id.ljust(width)}  {e.title}{kind}  "
            f"[{', '.join(what) or 'no values'}; {points} points × {nseeds} seeds{backends}]"
        )
    return "\n".join(out)
