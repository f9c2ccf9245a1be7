"""Reading catalog entries: a scenario file's `[reproduce]` section
checked key by key (its sweep, metrics, expected values, claims, table,
backends) and its cross-references (metrics a check names, grid points it
checks at), all before anything runs; the catalog's entries by id."""

from __future__ import annotations

import functools
import itertools
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from phblab import _core
from phblab.catalog.parse_metrics import metric_order, parse_metric
from phblab.catalog.schema import (
    BACKENDS,
    CAUSES,
    CHECK_KINDS,
    CLAIM_OPS,
    DEFAULT_BACKENDS,
    ENTRY_KINDS,
    MEASURED,
    SOURCES,
    WITHIN,
    BackendSettings,
    CatalogError,
    Claim,
    Entry,
    Expectation,
    Side,
    check_keys,
    is_number,
    need,
    same,
)
from phblab.catalog.tolerance import PRINTED, parse_tolerance, printed_precision
from phblab.entry import split_reproduce

#: keys of a check (expect or claim) that say what it is and what explains it
CHECK_KEYS = ("kind", "cause", "why")
#: keys of an expected point besides its grid coordinates
POINT_KEYS = ("value", "tolerance", "cause", "why")


def default_catalog() -> Path:
    """The catalog root: $PHBLAB_CATALOG, else ./scenarios if it exists, else
    the repository's scenarios/ beside the installed (editable) package."""
    env = os.environ.get("PHBLAB_CATALOG")
    if env:
        return Path(env)
    here = Path("scenarios")
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[3] / "scenarios"


def _parse_side(s: Any, grid: Mapping, over: Mapping, metrics: Mapping, sw: str) -> Side:
    need(isinstance(s, dict), sw, "a table: { metric = ..., at = {...}, scale = ... } or { value = ... }")
    check_keys(s, {"metric", "at", "scale", "value"}, sw)
    if "value" in s:
        need(not ({"metric", "at", "scale"} & set(s)), sw, "value is a constant: it takes no metric, at or scale")
        value, printed = _printed_number(s["value"], f"{sw}.value")
        return Side(value=value, printed=printed)
    name = s.get("metric")
    need(name in metrics, sw, f"metric {name!r} is not defined in [reproduce.metrics]")
    need(
        metrics[name].per_point,
        sw,
        f"metric {name!r} is fitted (one value for the grid); a claim compares per-point metrics",
    )
    scale, printed = _printed_number(s.get("scale", 1.0), f"{sw}.scale")
    at = s.get("at", {})
    need(isinstance(at, dict), f"{sw}.at", "a table {grid key = value}")
    for k, v in at.items():
        need(k in grid, f"{sw}.at", f"{k!r} is not a grid key; grid keys: {', '.join(grid) or 'none'}")
        need(not isinstance(v, list), f"{sw}.at", f"{k}: one value (give several values in the claim's over)")
        need(any(same(v, g) for g in grid[k]), f"{sw}.at", f"{k} = {v!r} is not in the grid")
    missing = [k for k in grid if k not in at and k not in over]
    need(not missing, sw, f"at and over together must give every grid key; missing: {', '.join(missing)}")
    return Side(metric=name, at=dict(at), scale=scale, printed=printed)


def _printed_number(v: Any, where: str) -> tuple[float, str | None]:
    """(the number, its text as the paper prints it or None): a number, or
    a string holding a decimal number as printed ("0.50", "2")."""
    if is_number(v):
        return float(v), None
    need(isinstance(v, str), where, f'{v!r}: a number, or the number as the paper prints it in a string ("0.50")')
    try:
        printed_precision(v)
    except ValueError as e:
        raise CatalogError(f"{where}: {e}") from None
    return float(v), v.strip()


def _parse_kind(d: Mapping, source: str, where: str) -> str:
    """A check's `kind`: one of CHECK_KINDS for a paper's value or claim;
    MEASURED (implied) for a measured regression value. A paper's check
    must give one."""
    kind = d.get("kind")
    if source == "measured":
        need(
            kind in (None, MEASURED),
            f"{where}.kind",
            f'{kind!r}: a value phblab measured (source = "measured") is of kind "{MEASURED}"',
        )
        return MEASURED
    kinds = ", ".join(f'"{k}" ({what})' for k, what in CHECK_KINDS.items())
    need(kind is not None, where, f"kind is required: {kinds}")
    need(kind in CHECK_KINDS, f"{where}.kind", f"{kind!r}: one of {kinds}")
    return kind


def _parse_cause(d: Mapping, where: str) -> tuple[str, str]:
    """A check's (`cause`, `why`): what explains it if it fails, and the
    evidence; ("", "") when it gives none."""
    cause, why = d.get("cause"), d.get("why")
    if cause is None:
        need(why is None, where, "why explains a cause: give cause too")
        return "", ""
    need(cause in CAUSES, f"{where}.cause", f"{cause!r}: one of {', '.join(CAUSES)}")
    need(
        isinstance(why, str) and why.strip(),
        where,
        f"cause = {cause!r} needs why: {CAUSES[cause].partition('(why: ')[2].rstrip(')')}",
    )
    return cause, why.strip()


def _parse_claim(c: Any, grid: Mapping, metrics: Mapping, cw: str) -> Claim:
    need(isinstance(c, dict), cw, "must be a table ([[reproduce.claims]])")
    check_keys(c, {"text", "ref", "source", "over", "left", "op", "right", "tolerance", *CHECK_KEYS}, cw)
    need(isinstance(c.get("text"), str) and c["text"].strip(), cw, "text (the paper's statement) is required")
    source = c.get("source", "paper")
    need(source in SOURCES, cw, f'source {source!r}: "paper" or "measured"')
    need(
        c.get("op") in CLAIM_OPS or c.get("op") == WITHIN,
        cw,
        f"op {c.get('op')!r}: one of {', '.join(CLAIM_OPS)} or {WITHIN} (with tolerance)",
    )
    within = c["op"] == WITHIN
    need(
        within == ("tolerance" in c),
        cw,
        f'op = "{WITHIN}" needs tolerance (how far left may be from right)'
        if within
        else f'tolerance belongs to op = "{WITHIN}"',
    )
    over = c.get("over", {})
    need(isinstance(over, dict), f"{cw}.over", "a table {grid key = [values]}")
    over = {k: (v if isinstance(v, list) else [v]) for k, v in over.items()}
    for k, vs in over.items():
        need(k in grid, f"{cw}.over", f"{k!r} is not a grid key; grid keys: {', '.join(grid) or 'none'}")
        need(bool(vs), f"{cw}.over", f"{k} has no values")
        for v in vs:
            need(any(same(v, g) for g in grid[k]), f"{cw}.over", f"{k} = {v!r} is not in the grid")
    for side in ("left", "right"):
        need(side in c, cw, f"{side} is required")
    left = _parse_side(c["left"], grid, over, metrics, f"{cw}.left")
    right = _parse_side(c["right"], grid, over, metrics, f"{cw}.right")
    need(
        left.metric is not None or right.metric is not None,
        cw,
        "both sides are constant values; at least one must be a metric",
    )
    if within:
        form, _ = parse_tolerance(c["tolerance"], cw)
        need(
            form != PRINTED or right.printed is not None,
            cw,
            'tolerance = "printed" needs the number the paper prints on the right side, as a string: '
            'value = "2" or scale = "2"',
        )
    cause, why = _parse_cause(c, cw)
    return Claim(
        c["text"].strip(),
        c.get("ref", ""),
        source,
        over,
        left,
        c["op"],
        right,
        kind=_parse_kind(c, source, cw),
        tolerance=c.get("tolerance"),
        cause=cause,
        why=why,
    )


def _parse_expect(e: Any, grid: Mapping, metrics: Mapping, ew: str) -> Expectation:
    need(isinstance(e, dict), ew, "must be a table ([[reproduce.expect]])")
    check_keys(e, {"metric", "source", "ref", "tolerance", "points", *CHECK_KEYS}, ew)
    need(e.get("metric") in metrics, ew, f"metric {e.get('metric')!r} is not defined in [reproduce.metrics]")
    source = e.get("source", "paper")
    need(source in SOURCES, ew, f'source {source!r}: "paper" or "measured"')
    need("tolerance" in e, ew, "tolerance is required")
    parse_tolerance(e["tolerance"], ew)
    points = e.get("points", [])
    need(isinstance(points, list) and points, ew, "points = [{<grid key> = ..., value = ...}, ...] is required")
    for j, p in enumerate(points):
        pw = f"{ew}.points[{j}]"
        need(isinstance(p, dict) and "value" in p, pw, "value is required")
        _, printed = _printed_number(p["value"], f"{pw}.value")
        form, _ = parse_tolerance(p.get("tolerance", e["tolerance"]), pw)
        need(
            form != PRINTED or printed is not None,
            pw,
            'tolerance = "printed" needs the value as the paper prints it, as a string (value = "0.50")',
        )
        _parse_cause(p, pw)
        coords = {k: v for k, v in p.items() if k not in POINT_KEYS}
        if metrics[e["metric"]].per_point:
            need(
                set(coords) == set(grid),
                pw,
                f"give every grid key ({', '.join(grid)}) and nothing else",
            )
            for k, v in coords.items():
                need(any(same(v, g) for g in grid[k]), pw, f"{k} = {v!r} is not in the grid")
        else:
            need(not coords, pw, "a fitted metric has one value and no grid coordinates")
    cause, why = _parse_cause(e, ew)
    return Expectation(
        e["metric"],
        source,
        e.get("ref", ""),
        e["tolerance"],
        points,
        kind=_parse_kind(e, source, ew),
        cause=cause,
        why=why,
    )


def _parse_unchecked(u: Any, uw: str) -> list[dict]:
    """`[[reproduce.unchecked]]`: statements of the paper that are not
    checked, each with the reason."""
    need(isinstance(u, list), uw, "must be tables [[reproduce.unchecked]] with text, ref and why")
    out = []
    for i, s in enumerate(u):
        sw = f"{uw}[{i}]"
        need(isinstance(s, dict), sw, "a table: text, ref, why")
        check_keys(s, {"text", "ref", "why"}, sw)
        for k in ("text", "why"):
            need(isinstance(s.get(k), str) and s[k].strip(), sw, f"{k} (a string) is required")
        need(isinstance(s.get("ref", ""), str), sw, "ref: a string")
        out.append({"text": s["text"].strip(), "ref": s.get("ref", ""), "why": s["why"].strip()})
    return out


def _check_sensitivity(metrics: Mapping, expect: Sequence, claims: Sequence, w: str) -> None:
    """A sensitivity row (`sensitivity_of`) reads another headline metric of
    the same shape and is shown, never checked."""
    for m in metrics.values():
        if m.sensitivity_of is None:
            continue
        mw = f"{w}.metrics.{m.name}.sensitivity_of"
        head = metrics.get(m.sensitivity_of)
        need(head is not None, mw, f"{m.sensitivity_of!r} is not a metric of this entry")
        need(head is not m, mw, "names the metric itself")
        need(head.sensitivity_of is None, mw, f"{head.name!r} is itself a sensitivity row; name its headline")
        need(head.per_point == m.per_point, mw, f"{head.name!r} is {'not ' if m.per_point else ''}fitted and this is")
    checked = [(f"{w}.expect", e.metric) for e in expect] + [
        (f"{w}.claims", s.metric) for c in claims for s in (c.left, c.right) if s.metric
    ]
    for where, name in checked:
        of = metrics[name].sensitivity_of
        need(of is None, where, f"metric {name!r} is a sensitivity row of {of!r}: it is shown beside it, not checked")


def _check_templates(sweep: Mapping[str, Any], where: str) -> None:
    """Fills in every `set` template at every grid point, so that a template
    that cannot be evaluated is an error of the entry, found when it is
    loaded."""
    from phblab.sweep import render

    templates = sweep.get("set") or {}
    need(isinstance(templates, dict), where, "must be a table {path = template}")
    grid = sweep["grid"]
    for point in itertools.product(*grid.values()):
        params = dict(zip(grid, point, strict=True))
        for path, template in templates.items():
            try:
                render(template, params)
            except ValueError as e:
                raise CatalogError(f"{where}.{path}: {e}") from None


def parse_section(entry_id: str, path: Path, section: Mapping[str, Any], text: str) -> Entry:
    w = f"{path}: [reproduce]"
    check_keys(
        section,
        {
            "title",
            "kind",
            "paper",
            "scenario",
            "assumptions",
            "notes",
            "sweep",
            "metrics",
            "expect",
            "claims",
            "plot",
            "table",
            "backends",
            "unchecked",
            *BACKENDS,
        },
        w,
    )
    kind = section.get("kind", "reproduction")
    need(kind in ENTRY_KINDS, f"{w}.kind", f"{kind!r}: one of {', '.join(ENTRY_KINDS)}")
    sweep = dict(section.get("sweep", {}))
    check_keys(sweep, {"grid", "set", "seeds", "overrides"}, f"{w}.sweep")
    grid = sweep.get("grid", {})
    need(isinstance(grid, dict), f"{w}.sweep.grid", "must be a table {key = [values]}")
    sweep["grid"] = {k: (v if isinstance(v, list) else [v]) for k, v in grid.items()}
    seeds = sweep.get("seeds", 1)
    need(
        isinstance(seeds, (int, list)) and not isinstance(seeds, bool),
        f"{w}.sweep.seeds",
        "an integer N (seeds 1..N) or a list of seeds",
    )
    try:
        scenario = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        scenario = {}  # the core reports the scenario's own errors, with positions

    @functools.cache
    def directions() -> set[str] | None:
        """The scenario's link directions, generated links included (the core
        expands generators); None if it does not validate: the core then
        reports its own error when it runs."""
        try:
            return set(_core.validate(text, str(path))["link_directions"])
        except _core.ScenarioError:
            return None

    metrics_raw = section.get("metrics", {})
    need(isinstance(metrics_raw, dict), f"{w}.metrics", "must be tables [reproduce.metrics.NAME]")
    metrics = {
        name: parse_metric(name, m, metrics_raw, sweep, scenario, directions, f"{w}.metrics.{name}")
        for name, m in metrics_raw.items()
    }
    for metric in metrics.values():
        for dep in metric.deps:
            need(
                dep in metrics and metrics[dep].per_point,
                f"{w}.metrics.{metric.name}",
                f"{dep!r} is not a per-point metric of this entry",
            )
    metric_order(metrics, f"{w}.metrics")
    expect_raw = section.get("expect", [])
    need(isinstance(expect_raw, list), f"{w}.expect", "must be tables [[reproduce.expect]]")
    expect = [_parse_expect(e, sweep["grid"], metrics, f"{w}.expect[{i}]") for i, e in enumerate(expect_raw)]
    claims_raw = section.get("claims", [])
    need(isinstance(claims_raw, list), f"{w}.claims", "must be tables [[reproduce.claims]]")
    claims = [_parse_claim(c, sweep["grid"], metrics, f"{w}.claims[{i}]") for i, c in enumerate(claims_raw)]
    _check_sensitivity(metrics, expect, claims, w)
    plot = dict(section.get("plot", {}))
    check_keys(plot, {"x", "by", "metrics", "logx", "logy"}, f"{w}.plot")
    table = _parse_table(section.get("table"), sweep["grid"], metrics, f"{w}.table")
    assumptions = section.get("assumptions", [])
    need(
        isinstance(assumptions, list) and all(isinstance(a, str) for a in assumptions),
        f"{w}.assumptions",
        "a list of strings",
    )
    _check_templates(sweep, f"{w}.sweep.set")
    backends = _parse_backends(section.get("backends", list(DEFAULT_BACKENDS)), f"{w}.backends")
    per_backend = {b: _parse_backend_settings(section[b], b, backends, scenario, w) for b in BACKENDS if b in section}
    return Entry(
        id=entry_id,
        path=path,
        title=section.get("title", entry_id),
        paper=section.get("paper", ""),
        assumptions=list(assumptions),
        notes=section.get("notes", ""),
        sweep=sweep,
        metrics=metrics,
        expect=expect,
        plot=plot,
        text=text,
        claims=claims,
        table=table,
        kind=kind,
        backends=backends,
        per_backend=per_backend,
        unchecked=_parse_unchecked(section.get("unchecked", []), f"{w}.unchecked"),
    )


def _parse_backends(value: Any, bw: str) -> tuple:
    """`[reproduce].backends`: a non-empty list of distinct BACKENDS (the
    emulator writes every table the simulator does, so any metric reads
    either's results)."""
    need(
        isinstance(value, list) and value and all(isinstance(b, str) for b in value),
        bw,
        f'a list of backends, e.g. ["simulate", "emulate"]; known: {", ".join(BACKENDS)}',
    )
    for b in value:
        need(b in BACKENDS, bw, f"{b!r} is not a backend; known: {', '.join(BACKENDS)}")
    twice = next((b for i, b in enumerate(value) if b in value[:i]), None)
    need(twice is None, bw, f"{twice!r} is listed twice")
    return tuple(value)


def _parse_backend_settings(t: Any, backend: str, backends: tuple, scenario: Mapping, w: str) -> BackendSettings:
    """`[reproduce.<backend>]`: `unset`, scenario keys that backend's runs
    leave unset (each must be set in the scenario: a path of a key holding
    a value, `traffic[*]` for every entry of the array that sets the key),
    and `why`, which is required."""
    bw = f"{w}.{backend}"
    need(isinstance(t, dict), bw, 'must be a table: unset = ["traffic[*].initial_rto", ...], why = "..."')
    check_keys(t, {"unset", "why"}, bw)
    need(backend in backends, bw, f'the entry does not run on {backend}: its [reproduce].backends lacks "{backend}"')
    unset = t.get("unset")
    need(
        isinstance(unset, list) and unset and all(isinstance(p, str) for p in unset),
        f"{bw}.unset",
        'a list of scenario key paths, e.g. ["traffic[*].initial_rto"]',
    )
    why = t.get("why")
    need(isinstance(why, str) and why.strip() != "", f"{bw}.why", "say why those keys are left to the backend")
    paths = [p for pattern in unset for p in _expand_path(pattern, scenario, f"{bw}.unset")]
    twice = next((p for i, p in enumerate(paths) if p in paths[:i]), None)
    need(twice is None, f"{bw}.unset", f"{twice} is named twice")
    return BackendSettings(tuple(paths), why)


#: one step of a key path: a key, then indexes (`[2]`, or `[*]`: every entry)
_PATH_STEP = re.compile(r"([A-Za-z0-9_-]+)((?:\[(?:\d+|\*)\])*)")


def _expand_path(pattern: str, scenario: Mapping, where: str) -> list[str]:
    """The paths `pattern` names in `scenario` (`[*]` expanded to the
    entries that hold the rest of the path), each holding a value (not a
    table); CatalogError if a step is malformed or nothing matches."""
    steps: list[str | int] = []
    for part in pattern.split("."):
        m = _PATH_STEP.fullmatch(part)
        need(m is not None, where, f"{pattern!r}: not a key path such as traffic[*].initial_rto")
        steps.append(m.group(1))
        steps += [int(i) if i != "*" else "*" for i in re.findall(r"\[(\d+|\*)\]", m.group(2))]
    found: list[str] = []

    def walk(node: Any, rest: list, at: str) -> None:
        if not rest:
            if not isinstance(node, dict):
                found.append(at)
            return
        step, tail = rest[0], rest[1:]
        if step == "*" and isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, tail, f"{at}[{i}]")
        elif isinstance(step, int) and isinstance(node, list) and step < len(node):
            walk(node[step], tail, f"{at}[{step}]")
        elif isinstance(step, str) and step != "*" and isinstance(node, dict) and step in node:
            walk(node[step], tail, f"{at}.{step}" if at else step)

    walk(scenario, steps, "")
    need(bool(found), where, f"{pattern!r} names no key the scenario sets")
    return found


def _parse_table(t: Any, grid: Mapping, metrics: Mapping, tw: str) -> dict:
    """`[reproduce.table]`: per-point metrics to show as a table, one row
    per grid point (those matching `where`), one column per metric."""
    if t is None:
        return {}
    need(isinstance(t, dict), tw, 'must be a table: metrics = [...], where = {...}, title = "..."')
    check_keys(t, {"metrics", "where", "title"}, tw)
    names = t.get("metrics")
    need(
        isinstance(names, list) and names and all(isinstance(n, str) for n in names),
        tw,
        "metrics (a list of per-point metric names) is required",
    )
    for n in names:
        need(n in metrics and metrics[n].per_point, tw, f"metric {n!r} is not a per-point metric of this entry")
    where = t.get("where", {})
    need(isinstance(where, dict), f"{tw}.where", "a table {grid key = value or [values]}")
    where = {k: (v if isinstance(v, list) else [v]) for k, v in where.items()}
    for k, vs in where.items():
        need(k in grid, f"{tw}.where", f"{k!r} is not a grid key; grid keys: {', '.join(grid) or 'none'}")
        for v in vs:
            need(any(same(v, g) for g in grid[k]), f"{tw}.where", f"{k} = {v!r} is not in the grid")
    title = t.get("title", "")
    need(isinstance(title, str), tw, "title: a string")
    return {"metrics": list(names), "where": where, "title": title}


def _shared_scenario(path: Path, text: str, section: Mapping[str, Any]) -> tuple[Path | None, str]:
    """An entry's `scenario = "base.toml"`: the file it sweeps (relative to
    the entry's own file, which then holds nothing but `[reproduce]`) and
    that file's scenario text. Without the key: (None, the entry's text)."""
    name = section.get("scenario")
    if name is None:
        return None, text
    w = f"{path}: [reproduce].scenario"
    need(
        isinstance(name, str) and name.endswith(".toml"),
        w,
        f"{name!r}: the path of a scenario file (.toml), relative to this file",
    )
    rest = tomllib.loads(text)
    need(
        not rest,
        w,
        f"this file gives its scenario by name, so it holds only [reproduce]; found {', '.join(sorted(rest))}",
    )
    base = (path.parent / name).resolve()
    need(base.is_file(), w, f"{base} does not exist")
    need(base != path.resolve(), w, "names the entry's own file")
    try:
        return base, split_reproduce(base.read_text(encoding="utf-8"))[0]
    except (ValueError, tomllib.TOMLDecodeError) as e:
        raise CatalogError(f"{w}: {base}: {e}") from None


def load_entry(path: str | os.PathLike, root: str | os.PathLike | None = None) -> Entry:
    """The catalog entry in scenario file `path` (id relative to `root`)."""
    path = Path(path)
    raw = path.read_text(encoding="utf-8")
    try:
        text, section = split_reproduce(raw)
    except ValueError as e:
        raise CatalogError(f"{path}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise CatalogError(f"{path}: {e}") from None
    if section is None:
        raise CatalogError(f"{path}: no [reproduce] section; not a catalog entry")
    try:
        entry_id = path.resolve().relative_to(Path(root).resolve()).with_suffix("").as_posix() if root else path.stem
    except ValueError:
        entry_id = path.stem
    scenario, text = _shared_scenario(path, text, section)
    entry = parse_section(entry_id, path, section, text)
    entry.scenario = scenario
    return entry


#: a `[reproduce]` table header, found in a file that is not valid TOML:
#: an entry whose mistake must be reported, not skipped
_REPRODUCE_HEADER = re.compile(r"^\s*\[\s*reproduce\s*[\].]", re.MULTILINE)


def load_catalog(root: str | os.PathLike | None = None, errors: list[CatalogError] | None = None) -> list[Entry]:
    """Every entry under `root` (default `default_catalog()`), by id.

    A malformed entry raises its `CatalogError`, or, when `errors` is a
    list, is appended to it and left out, so the rest can still be listed."""
    root = Path(root) if root is not None else default_catalog()
    entries = []
    for path in sorted(root.rglob("*.toml")):
        try:
            text = path.read_text(encoding="utf-8")
            doc = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError) as e:
            if not _REPRODUCE_HEADER.search(text):
                continue  # not an entry (a scenario the catalog does not list)
            doc, failure = None, CatalogError(f"{path}: not valid TOML: {e}")
        except (UnicodeDecodeError, OSError):
            continue
        if doc is not None and "reproduce" not in doc:
            continue
        try:
            if doc is None:
                raise failure
            entries.append(load_entry(path, root))
        except CatalogError as e:
            if errors is None:
                raise
            errors.append(e)
    return entries


def find_entries(ids: Sequence[str], root: str | os.PathLike | None = None) -> list[Entry]:
    """Entries by id (`paper/id`, or just `id` when unique) or by file path."""
    catalog = load_catalog(root)
    found = []
    for want in ids:
        if want.endswith(".toml") and Path(want).is_file():
            found.append(load_entry(want, root if root is not None else default_catalog()))
            continue
        matches = [e for e in catalog if e.id == want] or [e for e in catalog if e.id.split("/")[-1] == want]
        if not matches:
            known = ", ".join(e.id for e in catalog) or "none"
            raise CatalogError(f"no catalog entry {want!r}; entries: {known}")
        if len(matches) > 1:
            raise CatalogError(f"{want!r} is ambiguous: {', '.join(e.id for e in matches)}")
        found.append(matches[0])
    return found
