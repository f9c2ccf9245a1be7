"""The reproduction report: one static HTML page over the catalog.

    phblab report                      # results/report/index.html from results/reproduce/
    phblab report --run                # run `reproduce` on every entry first

The page reads what `phblab reproduce` left in the results directory
(`results/reproduce/<id>/comparison.json` and the plots beside it); it does
not run anything unless asked (`run=True`, `--run`). An entry without
results is listed as not run, with the command that runs it. Everything the
page shows or links to is copied into the output directory (plots as PNG
with the SVG linked, each entry's comparison as CSV, its scenario file), and
every link is relative, so the directory can be opened from the file system,
moved or archived.

An entry reproduced on both backends (`phblab reproduce ID --backend
emulate`, results in `results/reproduce/<id>-emulate/`) shows both result
blocks, each headed by the backend that produced its figures: phblab's
simulator, or the emulator (real Linux TCP, with its congestion control).
"""

from __future__ import annotations

import datetime as _dt
import html
import math
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from phblab import _core, outdir
from phblab.catalog import DEFAULT_RESULTS, Check, ClaimCheck, Entry, crosscheck, entry_dir, load_catalog, tally
from phblab.catalog.run import read_outcome
from phblab.catalog.text import coords_text, seeds_text, stamp
from phblab.catalog.verdict import failures

DEFAULT_OUT = Path("results") / "report"

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
.pass { color: #176317; font-weight: bold; } .fail { color: #a01010; font-weight: bold; }
.notrun { color: #777; font-weight: bold; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }
code { background: #f5f5f5; padding: 0 0.2em; } .small { font-size: 0.85em; color: #555; }
"""


def _e(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _num(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else "–"
    return _e(v)


def _flat(entry_id: str) -> str:
    return entry_id.replace("/", "__")


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def _values_table(checks: list[Check]) -> str:
    rows = []
    for c in checks:
        ok = "pass" if c.passed else "fail"
        rel_txt = f"{100 * c.rel_gap:+.1f}%" if math.isfinite(c.rel_gap) else "–"
        ci = f"[{_num(c.ci_low)}, {_num(c.ci_high)}]"
        rows.append(
            "<tr>"
            f'<td class="l">{_e(c.metric)}</td><td class="l">{_e(c.kind)}</td><td class="l">{_e(c.where())}</td>'
            f"<td>{_num(c.ours)}</td><td>{ci}</td><td>{_num(c.expected)}</td>"
            f'<td class="l">{_e(c.source)}{(": " + _e(c.ref)) if c.ref else ""}</td>'
            f"<td>{_num(c.gap)}</td><td>{rel_txt}</td><td>{_e(c.tolerance)}</td>"
            f"<td>{_e(c.unit)}</td>"
            f'<td class="{ok}">{ok.upper()}</td>{_cause_cell(c)}</tr>'
        )
    return (
        "<table><tr>"
        '<th class="l">metric</th><th class="l">kind</th><th class="l">at</th><th>ours (mean)</th><th>95% CI</th><th>expected</th>'
        '<th class="l">source</th><th>gap</th><th>gap %</th><th>tolerance</th><th>unit</th><th>result</th>'
        '<th class="l">cause</th></tr>' + "".join(rows) + "</table>"
    )


def _cause_cell(c: Check | ClaimCheck) -> str:
    """What explains a failing check (its cause and why, or "unexplained"),
    or the note a passing one keeps."""
    if not c.cause:
        return '<td class="l fail">unexplained</td>' if not c.passed else '<td class="l"></td>'
    what = _e(c.cause) if not c.passed else f"<i>note:</i> {_e(c.cause)}"
    return f'<td class="l">{what}<br><span class="small">{_e(c.why)}</span></td>'


def _unexplained(failing: list) -> str:
    """The failing checks without a cause, listed before everything else,
    and how many failures each cause explains."""
    unexplained = [(e, b, c) for e, b, c in failing if not c.cause]
    causes = failures([c for _, _, c in failing])
    summary = ", ".join(f"{n} {cause}" for cause, n in causes.items()) or "none"
    head = f"<h2>Failing checks</h2><p>{len(failing)} failing checks: {_e(summary)}.</p>"
    if not unexplained:
        return head
    rows = "".join(
        f'<tr><td class="l"><a href="#{_e(_flat(e.id))}">{_e(e.id)}</a>'
        f'{" (emulated)" if backend == "emulate" else ""}</td><td class="l">{_e(c.kind)}</td>'
        f'<td class="l">{_e(c.what())}</td><td class="l">{_e(c.where() or "–")}</td>'
        f'<td class="l">{_e(c.comparison())}</td></tr>'
        for e, backend, c in unexplained
    )
    return (
        head + '<p><b>Unexplained</b> <span class="small">— failing checks whose entry gives no cause '
        "(paper inconsistent, unstated assumption, model difference).</span></p>"
        '<table><tr><th class="l">entry</th><th class="l">kind</th><th class="l">check</th><th class="l">at</th>'
        f'<th class="l">ours against the paper</th></tr>{rows}</table>'
    )


def _claims_table(checks: list[ClaimCheck]) -> str:
    """One row per claim check: the statement, where it is checked, and the
    comparison of our means (with their 95% CIs) that decides it."""
    rows = []
    for c in checks:
        ok = "pass" if c.passed else "fail"
        rows.append(
            "<tr>"
            f'<td class="l">{_e(c.text)}</td><td class="l">{_e(c.kind)}</td>'
            f'<td class="l">{_e(c.source_text() or "–")}</td>'
            f'<td class="l">{_e(c.where() or "–")}</td>'
            f'<td class="l">{_e(c.relation(ci=True))}</td>'
            f"<td>{_num(c.margin)}</td>"
            f'<td class="{ok}">{ok.upper()}</td>{_cause_cell(c)}</tr>'
        )
    return (
        '<p><b>Claims</b> <span class="small">— relations the source states, each checked on our means over the '
        "seeds. A side reads <code>metric[grid point] mean [95% CI]</code> (the grid point besides the one "
        "the row is checked at; the CI is shown, not used); <code>k × … = v</code> scales the mean by k.</span></p>"
        "<table><tr>"
        '<th class="l">claim</th><th class="l">kind</th><th class="l">source</th><th class="l">checked at</th>'
        '<th class="l">ours: left op right</th><th>left − right</th><th>result</th><th class="l">cause</th></tr>'
        + "".join(rows)
        + "</table>"
    )


def _metrics_table(metrics: dict) -> str:
    """The metrics that say what the paper means by them or where phblab
    measures them ("" if none does)."""
    rows = [
        f'<tr><td class="l">{_e(name)}{(" (" + _e(m["unit"]) + ")") if m.get("unit") else ""}</td>'
        f'<td class="l">{_e(m.get("definition", "–"))}</td><td class="l">{_e(m.get("measured_at", "–"))}</td>'
        f'<td class="l">{_e(m.get("sensitivity_of", ""))}</td></tr>'
        for name, m in metrics.items()
        if m.get("definition") or m.get("measured_at")
    ]
    if not rows:
        return ""
    return (
        '<p><b>Metrics</b> <span class="small">— as the paper defines them, and where phblab measures them; '
        "a sensitivity row is an alternative reading of the metric it names, shown and not checked.</span></p>"
        '<table><tr><th class="l">metric</th><th class="l">the paper\'s definition</th>'
        '<th class="l">measured at</th><th class="l">sensitivity row of</th></tr>' + "".join(rows) + "</table>"
    )


def _unchecked_list(unchecked: list) -> str:
    """What the paper states that the entry does not check, with why."""
    if not unchecked:
        return ""
    items = "".join(
        f"<li>{_e(u['text'])}{(' (' + _e(u['ref']) + ')') if u.get('ref') else ''}: "
        f"<i>not checked:</i> {_e(u['why'])}</li>"
        for u in unchecked
    )
    return f"<p><b>Not checked</b></p><ul>{items}</ul>"


def _sensitivity_table(s: dict) -> str:
    """A sensitivity row beside its headline, at the points the headline is
    checked at."""
    rows = "".join(
        f'<tr><td class="l">{_e(coords_text(r["at"]) or "the fit")}</td>'
        f"<td>{_num(r['headline']['mean'])}<br><span class=small>[{_num(r['headline']['ci_low'])}, "
        f"{_num(r['headline']['ci_high'])}]</span></td>"
        f"<td>{_num(r['sensitivity']['mean'])}<br><span class=small>[{_num(r['sensitivity']['ci_low'])}, "
        f"{_num(r['sensitivity']['ci_high'])}]</span></td></tr>"
        for r in s["rows"]
    )
    unit = f" ({_e(s['unit'])})" if s.get("unit") else ""
    return (
        f"<p><b>Sensitivity: <code>{_e(s['metric'])}</code> beside <code>{_e(s['of'])}</code></b>{unit} "
        f'<span class="small">— an alternative reading, shown and not checked. '
        f"{_e(s.get('definition', ''))}</span></p>"
        f'<table><tr><th class="l">at</th><th>{_e(s["of"])}</th><th>{_e(s["metric"])}</th></tr>{rows}</table>'
    )


def _point_table(table: dict) -> str:
    """`[reproduce.table]`: one row per grid point, one column per metric
    (the mean over the seeds, its 95% CI below it)."""
    metrics = table.get("metrics", [])
    keys = table.get("keys", [])
    head = "".join(f'<th class="l">{_e(k)}</th>' for k in keys) + "".join(
        f'<th title="{_e(m.get("label") or m["name"])}">{_e(m["name"])}'
        f"{'<br><span class=small>' + _e(m['unit']) + '</span>' if m.get('unit') else ''}</th>"
        for m in metrics
    )
    rows = []
    for r in table.get("rows", []):
        cells = "".join(f'<td class="l">{_e(r.get(k))}</td>' for k in keys)
        for m in metrics:
            n = m["name"]
            cells += (
                f"<td>{_num(r.get(n))}<br><span class=small>[{_num(r.get(n + '_ci_low'))}, "
                f"{_num(r.get(n + '_ci_high'))}]</span></td>"
            )
        rows.append(f"<tr>{cells}</tr>")
    labels = "; ".join(f"<code>{_e(m['name'])}</code>: {_e(m['label'])}" for m in metrics if m.get("label"))
    title = table.get("title") or "Per-point means"
    return (
        f'<p><b>{_e(title)}</b> <span class="small">— ours, the mean over the seeds [95% CI]. {labels}</span></p>'
        f"<table><tr>{head}</tr>{''.join(rows)}</table>"
    )


#: the heading of each backend's results (report)
BACKEND_TITLES = {"simulate": "Simulated", "emulate": "Emulated"}


def _entry_section(entry: Entry, results: Path, out: Path) -> tuple[str, str, list]:
    """(status, HTML, checks) of one entry; copies its files into `out`. The
    status is the simulated results' ("pass", "fail", "not run"), followed
    by the emulated results' if there are any ("pass; emulated: fail");
    checks are [(backend, check)] of both."""
    flat = _flat(entry.id)
    parts = [f'<h2 id="{_e(flat)}">{_e(entry.id)}: {_e(entry.title)}</h2>']
    if entry.kind == "sensitivity":
        parts.append(
            '<p class="small"><b>A sensitivity study, not a reproduction:</b> it reruns a result of the '
            "source under another assumption; its checks say whether the source's statements survive it.</p>"
        )
    if entry.paper:
        parts.append(f"<p><b>Source:</b> {_e(entry.paper)}</p>")
    scen = Path("scenarios") / f"{flat}.toml"
    _copy(entry.path, out / scen)
    if entry.scenario is not None:
        base = Path("scenarios") / f"{flat}.scenario.toml"
        _copy(entry.scenario, out / base)
        parts.append(f'<p>Sweeps the scenario <a href="{_e(base.as_posix())}">{_e(entry.scenario.name)}</a>.</p>')
    if entry.assumptions:
        parts.append(
            "<p><b>Assumptions</b></p><ul>" + "".join(f"<li>{_e(a)}</li>" for a in entry.assumptions) + "</ul>"
        )
    if entry.notes:
        parts.append(f"<p><b>Notes:</b> {_e(entry.notes)}</p>")
    emulated = entry_dir(entry, results, "emulate")
    both = (emulated / "comparison.json").is_file()
    status, body, checks = _results_block(entry, results, "simulate", out, scen, headed=both)
    parts.append(body)
    checked = [("simulate", c) for c in checks]
    if both:
        emu_status, body, checks = _results_block(entry, results, "emulate", out, scen, headed=True)
        parts.append(body)
        status = f"{status}; emulated: {emu_status}"
        checked += [("emulate", c) for c in checks]
    return status, "\n".join(parts), checked


def _results_block(
    entry: Entry, results: Path, backend: str, out: Path, scen: Path, headed: bool
) -> tuple[str, str, list]:
    """(status, HTML, checks) of an entry's results on one backend: verdict, plots,
    tables and run parameters, under a heading naming the backend when
    `headed` (an entry with results of both)."""
    flat = _flat(entry.id)
    d = entry_dir(entry, results, backend)
    # file names in `out`: the simulated ones as before emulation existed
    tag = flat if backend == "simulate" else f"{flat}__{backend}"
    parts = []
    saved = read_outcome(d)
    doc = saved.doc if saved is not None else None
    if headed:
        what = BACKEND_TITLES.get(backend, backend)
        if backend == "emulate":
            cc = (doc or {}).get("congestion_control")
            how = f"real Linux TCP{', ' + cc + ' congestion control' if cc else ''}, through phb-emu"
        else:
            how = "phblab's simulator"
        parts.append(f'<h3 id="{_e(flat)}__{_e(backend)}">{_e(what)} <span class="small">({_e(how)})</span></h3>')
    if doc is None:
        option = "" if backend == "simulate" else f" --backend {backend}"
        parts.append(
            f'<p class="notrun">NOT RUN</p><p>No results in <code>{_e(d)}</code>; run '
            f"<code>phblab reproduce {_e(entry.id)}{_e(option)}</code>. Scenario: "
            f'<a href="{_e(scen.as_posix())}">{_e(entry.path.name)}</a></p>'
        )
        return "not run", "\n".join(parts), []
    checks = saved.checks
    status = "pass" if doc.get("passed") else "fail"
    parts.append(f'<p class="{status}">{status.upper()}: {_e(tally(checks))}</p>')
    if doc.get("unset"):
        parts.append(
            "<p><b>Left unset on this backend:</b> "
            + ", ".join(f"<code>{_e(u)}</code>" for u in doc["unset"])
            + f": {_e(doc.get('unset_why', ''))}</p>"
        )
    for rel in doc.get("plots", []):
        png = d / rel
        if not outdir.inside(rel) or not png.is_file():
            continue  # a plot named outside the entry's directory is not copied
        img = Path("img") / f"{tag}__{Path(rel).name}"
        _copy(png, out / img)
        svg = png.with_suffix(".svg")
        link = ""
        if svg.is_file():
            svg_rel = img.with_suffix(".svg")
            _copy(svg, out / svg_rel)
            link = f' <a href="{_e(svg_rel.as_posix())}">SVG</a>'
        parts.append(f'<p><img src="{_e(img.as_posix())}" alt="{_e(entry.id)} {_e(Path(rel).stem)}">{link}</p>')
    values = [c for c in checks if c.check == "value"]
    claims = [c for c in checks if c.check == "claim"]
    parts.append(_metrics_table(doc.get("metrics", {})))
    if values:
        parts.append(_values_table(values))
    if claims:
        parts.append(_claims_table(claims))
    parts.append(_unchecked_list(doc.get("unchecked", [])))
    parts += [_sensitivity_table(s) for s in doc.get("sensitivity", [])]
    if doc.get("table", {}).get("rows"):
        parts.append(_point_table(doc["table"]))
    csv = Path("data") / f"{tag}.csv"
    if (d / "comparison.csv").is_file():
        _copy(d / "comparison.csv", out / csv)
    sweep = doc.get("sweep", {})
    grid = "; ".join(f"{k} = {', '.join(map(str, v))}" for k, v in sweep.get("grid", {}).items()) or "one point"
    extra = []
    if sweep.get("set"):
        extra.append("set: " + ", ".join(f"{k} = {v}" for k, v in sweep["set"].items()))
    if sweep.get("overrides"):
        ov = sweep["overrides"]
        extra.append(
            "overrides: "
            + (", ".join(f"{k} = {v}" for k, v in ov.items()) if isinstance(ov, dict) else ", ".join(map(str, ov)))
        )
    if doc.get("backend", "simulate") == "emulate":
        extra.append(f"emulated (TCP congestion control {doc.get('congestion_control', 'reno')})")
    parts.append(
        f'<p class="small"><b>Run parameters:</b> grid {_e(grid)}; seeds {_e(seeds_text(sweep.get("seeds", 1)))}'
        f"{'; ' + _e('; '.join(extra)) if extra else ''}; {doc.get('runs')} runs; "
        f'{_e(stamp(doc))}. Files: <a href="{_e(scen.as_posix())}">scenario</a>'
        + (f', <a href="{_e(csv.as_posix())}">comparison (CSV)</a>' if (out / csv).is_file() else "")
        + "</p>"
    )
    return status, "\n".join(parts), checks


def _both_backends(entries: Sequence[Entry], results: Path) -> str:
    """The cross-check of the entries with results of both backends: each
    check's value on both, emulated over simulated, and both verdicts
    ("" if no entry has both)."""
    blocks = []
    for entry in entries:
        sim = read_outcome(entry_dir(entry, results, "simulate"))
        emu = read_outcome(entry_dir(entry, results, "emulate"))
        if sim is None or emu is None:
            continue
        all_pairs = crosscheck.pairs(sim, emu)
        rows = "".join(
            f'<tr><td class="l">{_e(p.what)}</td><td class="l">{_e(p.where or "–")}</td>'
            f'<td class="l">{_e(crosscheck.Pair.shown(p.simulated))}</td>'
            f'<td class="l">{_e(crosscheck.Pair.shown(p.emulated))}</td>'
            f"<td>{_e(crosscheck.ratio_text(p.ratio))}</td>"
            f"<td>{_e(crosscheck.verdict_text(p.simulated))}</td>"
            f"<td{' class=fail' if p.verdicts_differ else ''}>{_e(crosscheck.verdict_text(p.emulated))}</td></tr>"
            for p in all_pairs
        )
        blocks.append(
            f'<h3><a href="#{_e(_flat(entry.id))}">{_e(entry.id)}</a></h3>'
            f'<p class="small">Emulated on {_e(crosscheck.ran_with(emu))} ({_e(stamp(emu.doc))}); simulated '
            f"{_e(stamp(sim.doc))}. {crosscheck.differing(all_pairs)} of {len(all_pairs)} verdicts differ.</p>"
            '<table><tr><th class="l">check</th><th class="l">at</th><th class="l">simulated</th>'
            '<th class="l">emulated</th><th>emulated / simulated</th><th>verdict, simulated</th>'
            f"<th>verdict, emulated</th></tr>{rows}</table>"
        )
    if not blocks:
        return ""
    return f"<h2>Both backends</h2><p>{_e(crosscheck.INTRO)}</p>" + "".join(blocks)


def _status_cell(status: str) -> str:
    """The overview's result cell: the simulated verdict, then the emulated
    one if the entry has emulated results ("PASS · emulated: FAIL")."""
    sim, _, emu = status.partition("; emulated: ")

    def css(s: str) -> str:
        return "notrun" if s == "not run" else s

    if not emu:
        return f'<td class="{css(sim)}">{_e(sim.upper())}</td>'
    return (
        f'<td><span class="{css(sim)}">{_e(sim.upper())}</span> · '
        f'emulated: <span class="{css(emu)}">{_e(emu.upper())}</span></td>'
    )


def write_report(
    out: str | os.PathLike = DEFAULT_OUT,
    results: str | os.PathLike = DEFAULT_RESULTS,
    catalog: str | os.PathLike | None = None,
    entries: Sequence[Entry] | None = None,
) -> Path:
    """Writes `out/index.html` (and the files it links) from the results of
    `phblab reproduce` in `results`; returns the page's path."""
    out = Path(out)
    results = Path(results)
    entries = list(entries) if entries is not None else load_catalog(catalog)
    with outdir.writing(out, "report") as staging:
        sections, statuses, failing = [], [], []
        for entry in entries:
            status, body, checks = _entry_section(entry, results, staging)
            statuses.append((entry, status, [c for b, c in checks if b == "simulate"]))
            sections.append(body)
            failing += [(entry, b, c) for b, c in checks if not c.passed]
        overview = "".join(
            f'<tr><td class="l"><a href="#{_e(_flat(e.id))}">{_e(e.id)}</a></td><td class="l">{_e(e.title)}'
            f"{' <i>(sensitivity)</i>' if e.kind == 'sensitivity' else ''}</td>{_status_cell(s)}"
            f'<td class="l small">{_e(tally(checks)) if checks else ""}</td></tr>'
            for e, s, checks in statuses
        )
        now = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
        page = f"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>phblab reproduction report</title><style>{_CSS}</style></head>
<body>
<h1>phblab reproduction report</h1>
<p class="small">phblab {_e(_core.version())}; written {_e(now)} from <code>{_e(results)}</code>.
Each entry is a scenario of the catalog with a <code>[reproduce]</code> section; ours is the mean over the seeds
with its 95% confidence interval (Student t); a value passes when |ours − expected| ≤ tolerance;
a claim (a relation the source states, such as “A’s throughput is at least 0.99 × B’s”) holds when
the relation holds for the means. Each check says what it compares with (its kind): a number
<i>printed</i> in the paper, a relation it <i>states</i>, a target <i>derived</i> from its parameters,
or phblab's own <i>model</i> of its equations; an entry's summary counts each kind. A failing check
carries its cause where the entry gives one (the paper is inconsistent, it leaves an assumption unstated,
or phblab's model differs); the failing checks without one are listed first, as unexplained.
Values marked <i>measured</i> are regression values of phblab itself, not a paper's.</p>
{_unexplained(failing)}
<h2>Entries</h2>
<table><tr><th class="l">entry</th><th class="l">title</th><th>result</th><th class="l">checks that pass, by kind</th></tr>
{overview}</table>
{_both_backends(entries, results)}
{"".join(sections) if sections else "<p>The catalog has no entries.</p>"}
</body>
</html>
"""
        (staging / "index.html").write_text(page, encoding="utf-8")
    return out / "index.html"
