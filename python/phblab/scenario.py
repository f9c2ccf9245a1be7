"""Turning a scenario given as a Python dict into TOML text.

Rust's parser is the only parser of scenarios (it validates them too); a dict
is therefore written out as TOML and handed over like a file. The writer is
deliberately small: tables, arrays of tables, strings, integers, floats,
booleans and (nested) lists of those.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def to_toml(doc: Mapping[str, Any]) -> str:
    """The TOML text of `doc`, a dict of dicts, lists and scalars.

    >>> print(to_toml({"run": {"duration": "5s"}, "links": [{"rate": "1Mbps"}]}), end="")
    [run]
    duration = "5s"
    <BLANKLINE>
    [[links]]
    rate = "1Mbps"
    """
    lines: list[str] = []
    _table(doc, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def toml_value(value: Any) -> str:
    """One value as inline TOML (also used for `--set` overrides given as a dict)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if hasattr(value, "__fspath__"):
        return json.dumps(str(value), ensure_ascii=False)
    raise TypeError(f"cannot write a {type(value).__name__} as a TOML value: {value!r}")


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"TOML keys are strings, not {type(key).__name__}: {key!r}")
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def _is_table_array(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(isinstance(v, Mapping) for v in value)


def _table(table: Mapping[str, Any], path: list[str], lines: list[str]) -> None:
    """Writes the plain keys of `table`, then its sub-tables, then its arrays of tables."""
    subtables = []
    arrays = []
    for key, value in table.items():
        if value is None:
            continue  # TOML has no null: an absent key means "default"
        if isinstance(value, Mapping):
            subtables.append((key, value))
        elif _is_table_array(value):
            arrays.append((key, value))
        else:
            lines.append(f"{_key(key)} = {toml_value(value)}")
    for key, value in subtables:
        header = ".".join(_key(k) for k in [*path, key])
        lines.extend(["", f"[{header}]"])
        _table(value, [*path, key], lines)
    for key, values in arrays:
        header = ".".join(_key(k) for k in [*path, key])
        for value in values:
            lines.extend(["", f"[[{header}]]"])
            _table(value, [*path, key], lines)
