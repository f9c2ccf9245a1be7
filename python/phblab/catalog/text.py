"""Numbers and grid points as text, the same in every renderer (the
terminal, the HTML report)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def coords_text(coords: Mapping) -> str:
    """ "delta=8, udp_mbps=5": a grid point."""
    return ", ".join(f"{k}={fmt(v)}" for k, v in coords.items())


def fmt(v: Any) -> str:
    """A value with four significant digits ("nan" for a missing one)."""
    if v is None:
        return "nan"
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else "nan"
    return str(v)


def seeds_text(seeds: Any) -> str:
    """ "1..5" for seeds 1 to 5 (or an entry's `seeds = 5`), "1, 3" otherwise."""
    if isinstance(seeds, list):
        return (
            f"{seeds[0]}..{seeds[-1]}"
            if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2
            else ", ".join(map(str, seeds))
        )
    return f"1..{seeds}"


def stamp(doc: Mapping) -> str:
    """What produced a saved outcome: "phblab 0.1.0, commit 0d4d129a1b2c,
    2026-11-24T16:05:09Z" (the commit "+dirty" if the checkout had changes;
    "commit unknown" outside a checkout or before outcomes recorded it)."""
    commit = doc.get("commit")
    if commit:
        sha, dirty, _ = commit.partition("+")
        commit_text = f"commit {sha[:12]}{' with uncommitted changes' if dirty else ''}"
    else:
        commit_text = "commit unknown"
    return f"phblab {doc.get('phblab_version', '?')}, {commit_text}, {doc.get('date') or 'date unknown'}"
