"""A check's tolerance: how far ours may be from the paper's value.

Three forms (docs/workflow.md, "Tolerances"):

- `"15%"`: relative, 15% of the expected value (of a `within` claim's
  right side);
- `0.5`: absolute, in the metric's unit;
- `"printed"`: from the precision the paper prints the number with, half a
  unit of its last printed digit (`printed_precision`): "≈ 2" allows
  ±0.5, "0.50" ±0.005. The number is then given as the paper prints it, a
  string (`value = "0.50"`, or a claim's `scale = "2"`), since TOML keeps
  no trailing zeros.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from phblab.catalog.schema import CatalogError

PRINTED = "printed"
#: a number as a paper prints it: digits, a decimal point, an exponent
_PRINTED_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def printed_precision(text: str) -> float:
    """Half a unit of the last digit printed in `text`: "2" → 0.5, "0.50"
    → 0.005, "12.4" → 0.05, "1.5e3" → 50. ValueError for text that is not
    a plain decimal number."""
    t = text.strip()
    if not _PRINTED_NUMBER.fullmatch(t):
        raise ValueError(f"{text!r} is not a number as printed (digits, a decimal point, an exponent)")
    try:
        exponent = Decimal(t).as_tuple().exponent
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
        raise ValueError(f"{text!r} is not a decimal number") from None
    return 0.5 * 10.0**exponent


def parse_tolerance(tol: Any, where: str) -> tuple[str, float]:
    """("rel", 0.15) for "15%", ("abs", 0.5) for 0.5, ("printed", nan) for
    "printed" (its size follows from the printed number: `absolute`)."""
    if tol == PRINTED:
        return PRINTED, math.nan
    if isinstance(tol, str) and tol.strip().endswith("%"):
        try:
            return "rel", float(tol.strip()[:-1]) / 100
        except ValueError:
            pass
    elif isinstance(tol, (int, float)) and not isinstance(tol, bool):
        return "abs", float(tol)
    raise CatalogError(
        f'{where}: tolerance {tol!r}: expected a percentage string ("15%", relative), '
        'a number (absolute, in the metric\'s unit) or "printed" (half a unit of the last digit the paper prints)'
    )


def absolute(
    tol: Any, reference: float, printed: str | None, unit: str, where: str, scale: bool = False
) -> tuple[float, str]:
    """(the tolerance in the metric's unit, the tolerance as shown) for a
    check whose expected value is `reference`. For "printed", `printed` is
    the paper's number as printed: the expected value itself, or (`scale`)
    the factor the reference is that number times; the tolerance is
    relative to it (half a unit of its last digit over the number), so that
    `scale = "2"` on a claim allows ±0.5 on the ratio."""
    form, size = parse_tolerance(tol, where)
    u = f" {unit}" if unit else ""
    if form == "rel":
        return size * abs(reference), str(tol)
    if form == "abs":
        return size, f"±{size:g}{u}"
    if printed is None:
        raise CatalogError(
            f'{where}: tolerance "printed" needs the number as the paper prints it, as a string '
            '(value = "0.50", or a claim\'s right side value = "2" or scale = "2")'
        )
    precision = printed_precision(printed)
    if not scale:
        return precision, f"printed ±{precision:g}{u}"
    return precision / abs(float(printed)) * abs(reference), f"printed ±{precision:g} on the factor {printed}"
