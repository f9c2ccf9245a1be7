"""The cross-check of the two backends: for an entry reproduced both
simulated and emulated, each of its checks' values on both, their ratio
and both verdicts, with the kernel and congestion control the emulated runs
used. The HTML report and the Markdown outcome (docs/catalog-outcome.md)
render it from the saved outcomes; nothing in it is typed.

A value check compares our mean over the seeds (`ours`); a claim compares
its left side (the quantity the claim is about) and shows the right side
beside it when that is a metric too, so a claim such as "BPR's delay ratio
is within 20% of δ" shows the two backends' delay ratios. Checks pair by
what they check and where (the metric or the claim, and the grid point);
a check present on one backend only (an older outcome) is listed with the
other side empty.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from phblab.catalog.run import Saved
from phblab.catalog.text import fmt
from phblab.catalog.verdict import Check, ClaimCheck


@dataclass
class Pair:
    """One check on both backends (None where a backend lacks it)."""

    what: str
    where: str
    simulated: Check | ClaimCheck | None
    emulated: Check | ClaimCheck | None

    @staticmethod
    def value(c: Check | ClaimCheck | None) -> float:
        """The checked quantity: a value check's mean, a claim's left side."""
        if c is None:
            return math.nan
        return c.ours if isinstance(c, Check) else c.left.value

    @staticmethod
    def shown(c: Check | ClaimCheck | None) -> str:
        """The quantity as shown: "7.21", or a claim's "left op right"."""
        if c is None:
            return "–"
        if isinstance(c, Check):
            return f"{fmt(c.ours)} {c.unit}".strip()
        return c.relation()

    @property
    def ratio(self) -> float:
        """Emulated over simulated (NaN where either is missing or the
        simulated value is 0)."""
        sim, emu = self.value(self.simulated), self.value(self.emulated)
        return emu / sim if math.isfinite(sim) and math.isfinite(emu) and sim != 0 else math.nan

    @property
    def verdicts_differ(self) -> bool:
        return (
            self.simulated is not None and self.emulated is not None and self.simulated.passed != self.emulated.passed
        )


def _key(c: Check | ClaimCheck) -> tuple[str, str, str]:
    return (c.check, c.what(), c.where())


def pairs(simulated: Saved, emulated: Saved) -> list[Pair]:
    """The checks of both outcomes paired, in the simulated outcome's order
    (checks only the emulated one has come last)."""
    emu = {_key(c): c for c in emulated.checks}
    out, seen = [], set()
    for c in simulated.checks:
        k = _key(c)
        seen.add(k)
        out.append(Pair(c.what(), c.where(), c, emu.get(k)))
    out += [Pair(c.what(), c.where(), None, c) for c in emulated.checks if _key(c) not in seen]
    return out


#: What the section of both backends shows (the HTML report and the Markdown outcome).
INTRO = (
    "Each entry run both simulated and emulated (real Linux TCP between network namespaces, "
    "through the same qdisc code): each check's value on both backends (a claim shows its relation, "
    "and the ratio is of its left sides), emulated over simulated, and both verdicts. Each entry says "
    "what its emulated runs ran on, with the worst run's p99 of how late the router served its timers: "
    "tens of microseconds on a quiet machine; milliseconds mean other work held the cores, and the "
    "verdicts that depend on timing (delays and delay bounds) say more about that load than about "
    "the mechanism."
)


def ran_with(emulated: Saved) -> str:
    """ "Linux 6.8.0-49-generic, reno, router lateness p99 ≤ 84 µs": what
    the emulated runs ran on ("kernel not recorded" for outcomes saved
    before it was), and the worst run's p99 of how late the router served
    its timers, which a loaded machine raises (docs/emulation.md)."""
    doc = emulated.doc
    kernel = doc.get("kernel")
    text = f"{'Linux ' + kernel if kernel else 'kernel not recorded'}, {doc.get('congestion_control', 'reno')}"
    late = emulated.router_lateness_p99_s
    if late is None:
        return text
    shown = f"{late * 1e6:.0f} µs" if late < 1e-3 else f"{late * 1e3:.1f} ms"
    return f"{text}, router lateness p99 ≤ {shown}"


def ratio_text(r: float) -> str:
    return fmt(r) if math.isfinite(r) else "–"


def verdict_text(c: Check | ClaimCheck | None) -> str:
    return "–" if c is None else ("PASS" if c.passed else "FAIL")


def differing(all_pairs: Sequence[Pair]) -> int:
    """How many checks pass on one backend and fail on the other."""
    return sum(p.verdicts_differ for p in all_pairs)
