"""A check's tolerance: how far ours may be from the expected value."""

from __future__ import annotations

from typing import Any

from phblab.catalog.schema import CatalogError


def parse_tolerance(tol: Any, where: str) -> tuple[str, float]:
    """("rel", 0.15) for "15%", ("abs", 0.5) for 0.5."""
    if isinstance(tol, str) and tol.strip().endswith("%"):
        try:
            return "rel", float(tol.strip()[:-1]) / 100
        except ValueError:
            pass
    elif isinstance(tol, (int, float)) and not isinstance(tol, bool):
        return "abs", float(tol)
    raise CatalogError(
        f'{where}: tolerance {tol!r}: expected a percentage string ("15%", relative) '
        "or a number (absolute, in the metric's unit)"
    )
