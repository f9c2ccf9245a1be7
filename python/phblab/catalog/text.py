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
