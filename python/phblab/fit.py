"""Least-squares fits used by the reproductions.

`fit_power_law` fits the Vukadinović thesis' empirical TCP model (eq. 60,
Appendix B), T = c / (R**a * p**b), by Levenberg–Marquardt as the thesis
did (scipy's `least_squares(method="lm")`, MINPACK), and returns the
parameters with 95% confidence intervals from the linearised covariance
s²·(JᵀJ)⁻¹, with Student's t quantile for the residual degrees of freedom
(`phblab.stats.t_quantile_975`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PowerLawFit:
    c: float
    a: float
    b: float
    #: 95% confidence intervals, (low, high)
    a_ci: tuple[float, float]
    b_ci: tuple[float, float]
    #: residual sum of squares and degrees of freedom
    rss: float
    dof: int

    def predict(self, r, p):
        return self.c / (np.asarray(r, float) ** self.a * np.asarray(p, float) ** self.b)


def fit_power_law(r, p, t) -> PowerLawFit:
    """Fits t = c / (r**a * p**b) to measured throughputs.

    The residuals are relative, (model − t)/t, so that points of very
    different throughput weigh alike (the thesis' grid spans two orders of
    magnitude); the start comes from the log-linear fit.
    """
    from scipy.optimize import least_squares

    from phblab.stats import t_quantile_975

    r, p, t = (np.asarray(v, float) for v in (r, p, t))
    if not (len(r) == len(p) == len(t)) or len(t) < 4:
        raise ValueError("need at least four (R, p, T) points of equal length")
    if np.any(r <= 0) or np.any(p <= 0) or np.any(t <= 0):
        raise ValueError("R, p and T must be positive")
    design = np.column_stack([np.ones_like(r), -np.log(r), -np.log(p)])
    start, *_ = np.linalg.lstsq(design, np.log(t), rcond=None)

    def model(x):
        return np.exp(x[0]) / (r ** x[1] * p ** x[2])

    def residual(x):
        return (model(x) - t) / t

    def jacobian(x):
        m = model(x) / t
        return np.column_stack([m, -m * np.log(r), -m * np.log(p)])

    x = least_squares(residual, start, jac=jacobian, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15).x
    res = residual(x)
    dof = len(t) - 3
    rss = float(res @ res)
    j = jacobian(x)
    cov = np.linalg.inv(j.T @ j) * rss / dof
    half = t_quantile_975(dof) * np.sqrt(np.diag(cov))
    return PowerLawFit(
        c=float(math.exp(x[0])),
        a=float(x[1]),
        b=float(x[2]),
        a_ci=(float(x[1] - half[1]), float(x[1] + half[1])),
        b_ci=(float(x[2] - half[2]), float(x[2] + half[2])),
        rss=rss,
        dof=dof,
    )
