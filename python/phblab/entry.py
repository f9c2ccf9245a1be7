"""Scenario files that carry a `[reproduce]` section (catalog entries).

The Rust core rejects unknown top-level keys, so the `[reproduce]` section
(and its sub-tables `[reproduce.*]`, `[[reproduce.*]]`) is removed before a
file's text is handed over. The section's lines are blanked rather than
deleted, so that the core's error positions (line:column) still point into
the file as the user sees it. `docs/workflow.md` describes the section.
"""

from __future__ import annotations

import re
from typing import Any

from phblab.scenario import to_toml

SECTION = "reproduce"

# A table header line: [a.b] or [[a.b]], possibly with a comment after it.
_HEADER = re.compile(r"""^\s*\[\[?\s*([A-Za-z0-9_\-."' ]+?)\s*\]\]?\s*(#.*)?$""")


def split_reproduce(text: str) -> tuple[str, dict[str, Any] | None]:
    """Returns (scenario text without `[reproduce]`, the section as a dict or
    None). Text without the section is returned unchanged.

    The section's lines are replaced by empty lines. The result is checked by
    parsing it again: if textual removal did not give exactly the document
    minus the section (an unusual layout), the document is written out anew
    from the parsed dict (`phblab.scenario.to_toml`) instead.
    """
    if SECTION not in text:
        return text, None  # no section, and no need to parse the file twice
    import tomllib

    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return text, None  # let the core report the syntax error (or the nesting) with its position
    section = doc.get(SECTION)
    if section is None:
        return text, None
    if not isinstance(section, dict):
        raise ValueError(f"`{SECTION}` must be a table ([{SECTION}]), not a {type(section).__name__}")
    lines = text.splitlines(keepends=True)
    out = []
    inside = False
    for line in lines:
        m = _HEADER.match(line)
        if m:
            first = m.group(1).split(".")[0].strip().strip("\"'")
            inside = first == SECTION
        out.append("\n" if inside else line)
    stripped = "".join(out)
    rest = {k: v for k, v in doc.items() if k != SECTION}
    try:
        if tomllib.loads(stripped) == rest:
            return stripped, section
    except tomllib.TOMLDecodeError:
        pass
    return to_toml(rest), section


def scenario_text_of_file(text: str) -> str:
    """The text the core should read for a scenario file's `text`. A catalog
    entry that only names the scenario it sweeps (`scenario = "base.toml"`
    in `[reproduce]`) has none: that is an error naming the file to use."""
    stripped, section = split_reproduce(text)
    if section is None:
        return stripped
    import tomllib

    if "scenario" in section and not tomllib.loads(stripped):
        raise ValueError(
            f"this file is a catalog entry that sweeps {section['scenario']}: "
            "run that file, or `phblab reproduce` the entry"
        )
    return stripped
