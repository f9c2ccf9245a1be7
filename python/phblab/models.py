"""Analytic models of TCP, RED and voice quality (the Rust crate `phb_models`).

The BEDS paper's models (Firoiu, Zhang, Guo, "Best Effort Differentiated
Services", ICT 2001), computed by the same Rust code the catalog entries'
expected values come from:

- `pftk(p, R, ...)`: TCP throughput T(p, R), eqs. (8)-(11) (Padhye, Firoiu,
  Towsley, Kurose 2000), in bit/s; `pftk_rtt(p, T, ...)` its inverse in R.
- `square_root(p, R, ...)`: Mathis et al.'s law (M/R)·sqrt(3/(2bp)), eq. (7);
  `square_root_rtt` its inverse.
- `queue_law(p, n, c, R_0, ...)`: G(p) = c·(T⁻¹(p, c/n) − R_0), eq. (3), for n
  TCP flows (and m UDP flows of rate U: Section II.C), as `QueueLawPoint`.
- `red_control(q, min_th, max_th, max_p, ...)`: RED's control function H(q),
  the drop rate its count spacing gives, and `red_curve` its curve p_b(q).
- `operating_point(n, c, R_0, min_th, max_th, max_p, ...)`: where G meets H.
- `emodel_r(delay, loss, codec)`: ITU-T G.107's rating R of a voice call (Fig.
  11); `emodel(**params)` every term; `mos(R)`.

Units: bits, bit/s, seconds, packets; loss probabilities as fractions. The
parameters are named as the paper names them (M, b, W_max, T_0, R_0, n, m,
U; G.107's SLR, TELR, Ppl, ...). Every function takes and returns floats;
for arrays use a comprehension or `numpy.vectorize`.

    >>> from phblab import models
    >>> round(models.emodel_r(0.0, 0.0, "g711"), 1)
    93.2
    >>> law = models.queue_law(0.01, n=80, c=9e6, R_0=0.04, M=8000, b=1, W_max=20)
    >>> round(law.delay, 3)   # the mean queueing delay at 1% loss, s
    0.676
"""

from __future__ import annotations

import math
from typing import NamedTuple

from phblab._core import models as _m

__all__ = [
    "CODECS",
    "OperatingPoint",
    "QueueLawPoint",
    "Rating",
    "codec_values",
    "emodel",
    "emodel_r",
    "mos",
    "operating_point",
    "pftk",
    "pftk_rtt",
    "queue_law",
    "red_control",
    "red_curve",
    "square_root",
    "square_root_rtt",
]

#: The codecs of `emodel_r`: G.113 Appendix I's Ie and Bpl (random loss).
CODECS = ("g711", "g711_no_plc", "g723.1", "g729a")


class QueueLawPoint(NamedTuple):
    """The queue law at one loss probability."""

    rtt: float
    """T⁻¹(p, share): the round-trip time at which each TCP flow gets its share, s."""
    delay: float
    """The mean queueing delay q/c = max(0, rtt − R_0), s."""
    queue_bits: float
    """G(p) = c·delay, bits."""
    queue_packets: float
    """The mean queue in packets (Little's law over TCP and UDP packets)."""


class OperatingPoint(NamedTuple):
    """Where the queue law meets RED's control function."""

    p: float
    """The drop probability (RED's drop rate H(q))."""
    delay: float
    """The mean queueing delay, s."""
    queue_packets: float
    """The mean queue, packets."""


class Rating(NamedTuple):
    """G.107's terms: R = Ro − Is − Id − Ie_eff + A."""

    Ro: float
    Is: float
    Id: float
    Ie_eff: float
    A: float
    R: float


def _t0(T_0: float | None, T_0_rtts: float | None, Q: float | None) -> tuple[float | None, float | None, float | None]:
    """PFTK's base timeout: T_0 seconds, or T_0_rtts·R (the default, 5R:
    "typically 5R"); then the timeout probability Q (None: PFTK's Q̂)."""
    if T_0 is None and T_0_rtts is None:
        return None, 5.0, Q
    return T_0, T_0_rtts, Q


def pftk(
    p: float,
    R: float,
    *,
    M: float = 8000.0,
    b: float = 2.0,
    W_max: float = math.inf,
    T_0: float | None = None,
    T_0_rtts: float | None = None,
    Q: float | None = None,
) -> float:
    """TCP throughput T(p, R), bit/s (eq. 8).

    `p` the loss probability in (0, 1), `R` the round-trip time (s), `M` the
    packet size (bits), `b` packets per ACK (2 with delayed ACKs), `W_max` the
    receiver's window (packets), and the base timeout: `T_0` seconds or
    `T_0_rtts` times R (default 5R, the paper's "typically 5R"). `Q`, the
    probability that a loss ends in a timeout, replaces PFTK's Q̂(W) (eq. 10)
    if given: a sensitivity, e.g. the share a simulation measured.
    """
    return _m.pftk(M, R, p, b, W_max, *_t0(T_0, T_0_rtts, Q))


def pftk_rtt(
    p: float,
    T: float,
    *,
    M: float = 8000.0,
    b: float = 2.0,
    W_max: float = math.inf,
    T_0: float | None = None,
    T_0_rtts: float | None = None,
    Q: float | None = None,
) -> float:
    """T⁻¹(p, T): the round-trip time at which a flow gets `T` bit/s (closed form).

    With a fixed T_0 it may be 0 or negative: no positive RTT gives that much.
    """
    return _m.pftk_rtt(M, T, p, b, W_max, *_t0(T_0, T_0_rtts, Q))


def square_root(p: float, R: float, *, M: float = 8000.0, b: float = 1.0) -> float:
    """Mathis et al.'s (M/R)·sqrt(3/(2bp)), bit/s (eq. 7 without its o(1/√p))."""
    return _m.square_root(M, R, p, b)


def square_root_rtt(p: float, T: float, *, M: float = 8000.0, b: float = 1.0) -> float:
    """The square-root law's inverse in R: (M/T)·sqrt(3/(2bp))."""
    return _m.square_root_rtt(M, T, p, b)


def queue_law(
    p: float,
    n: float,
    c: float,
    R_0: float,
    *,
    M: float = 8000.0,
    b: float = 2.0,
    W_max: float = math.inf,
    T_0: float | None = None,
    T_0_rtts: float | None = None,
    Q: float | None = None,
    m: float = 0.0,
    U: float = 0.0,
    udp_packet_bits: float = 656.0,
) -> QueueLawPoint:
    """The queue law at loss `p` for `n` TCP flows on a link of `c` bit/s with
    round-trip propagation delay `R_0` (s), and `m` UDP flows of `U` bit/s each
    in packets of `udp_packet_bits` (82 bytes by default). PFTK's parameters as
    in `pftk`."""
    return QueueLawPoint(*_m.queue_law(p, n, c, R_0, M, b, W_max, *_t0(T_0, T_0_rtts, Q), m, U, udp_packet_bits))


def red_control(
    q: float, min_th: float, max_th: float, max_p: float, *, gentle: bool = False, spacing: str = "wait"
) -> float:
    """H(q): the fraction of arrivals a RED drops while its average stays at `q`
    packets. `spacing`: "wait" (ns-2's wait_, its default: about (2/3)·p_b),
    "uniform" (Floyd & Jacobson's, about 2·p_b) or "none" (p_b itself)."""
    return _m.red_control(q, min_th, max_th, max_p, gentle, spacing)[1]


def red_curve(q: float, min_th: float, max_th: float, max_p: float, *, gentle: bool = False) -> float:
    """p_b(q): RED's drop probability curve at average `q` packets."""
    return _m.red_control(q, min_th, max_th, max_p, gentle, "none")[0]


def operating_point(
    n: float,
    c: float,
    R_0: float,
    min_th: float,
    max_th: float,
    max_p: float,
    *,
    gentle: bool = False,
    spacing: str = "wait",
    M: float = 8000.0,
    b: float = 2.0,
    W_max: float = math.inf,
    T_0: float | None = None,
    T_0_rtts: float | None = None,
    Q: float | None = None,
    m: float = 0.0,
    U: float = 0.0,
    udp_packet_bits: float = 656.0,
) -> OperatingPoint:
    """The intersection of the queue law (as `queue_law`) with RED's control
    function (as `red_control`), found by bisection."""
    return OperatingPoint(
        *_m.operating_point(
            n,
            c,
            R_0,
            M,
            b,
            W_max,
            *_t0(T_0, T_0_rtts, Q),
            m,
            U,
            udp_packet_bits,
            min_th,
            max_th,
            max_p,
            gentle,
            spacing,
        )
    )


def emodel_r(delay: float, loss: float, codec: str = "g723.1") -> float:
    """G.107's R for a call with one-way delay `delay` (s) and random loss
    `loss` (a fraction): T = Ta = delay, Tr = 2·delay, the codec's Ie and Bpl
    (one of `CODECS`), every other parameter at G.107's default."""
    return _m.voip_r(delay, loss, codec)


def codec_values(codec: str) -> tuple[float, float]:
    """`(Ie, Bpl)` of a codec (G.113 Appendix I)."""
    return _m.codec_values(codec)


def emodel(**params: float) -> Rating:
    """G.107's rating with any of its parameters changed from the defaults
    (names as G.107: SLR, RLR, STMR, LSTR, Ds, Dr, TELR, WEPL, T, Tr, Ta (ms),
    qdu, Ie, Bpl, Ppl (percent), BurstR, Nc, Nfor, Ps, Pr, A)."""
    defaults = dict(_m.emodel_defaults())
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise TypeError(f"unknown E-model parameter(s) {', '.join(unknown)}; parameters are {', '.join(defaults)}")
    defaults.update(params)
    return Rating(*_m.emodel_rating([float(v) for v in defaults.values()]))


def mos(R: float) -> float:
    """The mean opinion score G.107 estimates from R (1 to 4.5)."""
    return _m.mos(R)
