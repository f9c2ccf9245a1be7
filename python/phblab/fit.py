"""Least-squares fits used by the reproductions.

`fit_power_law` fits the Vukadinović thesis' empirical TCP model (eq. 60,
Appendix B), T = c / (R**a * p**b), by Levenberg–Marquardt, as the thesis
did, and returns the parameters with 95% confidence intervals from the
linearised covariance s²·(JᵀJ)⁻¹. The interval uses Student's t quantile
for the residual degrees of freedom.
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


def _t_quantile_975(dof: int) -> float:
    """Student's t 97.5% quantile (Cornish–Fisher expansion; < 1e-4 off for dof ≥ 5)."""
    z = 1.959963984540054
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    n = float(dof)
    return z + g1 / n + g2 / n**2 + g3 / n**3 + g4 / n**4


def levenberg_marquardt(residual, jacobian, x0, max_iter: int = 200, tol: float = 1e-12):
    """Minimises ||residual(x)||² from x0; returns x."""
    x = np.asarray(x0, float)
    lam = 1e-3
    r = residual(x)
    cost = r @ r
    for _ in range(max_iter):
        j = jacobian(x)
        jtj = j.T @ j
        g = j.T @ r
        while True:
            step = np.linalg.solve(jtj + lam * np.diag(np.diag(jtj)), -g)
            x_new = x + step
            r_new = residual(x_new)
            cost_new = r_new @ r_new
            if cost_new < cost:
                lam = max(lam / 10, 1e-12)
                break
            lam *= 10
            if lam > 1e12:
                return x
        converged = abs(cost - cost_new) <= tol * max(cost, 1e-300)
        x, r, cost = x_new, r_new, cost_new
        if converged:
            break
    return x


def fit_power_law(r, p, t) -> PowerLawFit:
    """Fits t = c / (r**a * p**b) to measured throughputs.

    The residuals are relative, (model − t)/t, so that points of very
    different throughput weigh alike (the thesis' grid spans two orders of
    magnitude); the start comes from the log-linear fit.
    """
    r, p, t = (np.asarray(v, float) for v in (r, p, t))
    if not (len(r) == len(p) == len(t)) or len(t) < 4:
        raise ValueError("need at least four (R, p, T) points of equal length")
    if np.any(r <= 0) or np.any(p <= 0) or np.any(t <= 0):
        raise ValueError("R, p and T must be positive")
    design = np.column_stack([np.ones_like(r), -np.log(r), -np.log(p)])
    (log_c, a0, b0), *_ = np.linalg.lstsq(design, np.log(t), rcond=None)

    def model(x):
        return np.exp(x[0]) / (r ** x[1] * p ** x[2])

    def residual(x):
        return (model(x) - t) / t

    def jacobian(x):
        m = model(x) / t
        return np.column_stack([m, -m * np.log(r), -m * np.log(p)])

    x = levenberg_marquardt(residual, jacobian, [log_c, a0, b0])
    res = residual(x)
    dof = len(t) - 3
    rss = float(res @ res)
    j = jacobian(x)
    cov = np.linalg.inv(j.T @ j) * rss / dof
    half = _t_quantile_975(dof) * np.sqrt(np.diag(cov))
    return PowerLawFit(
        c=float(math.exp(x[0])),
        a=float(x[1]),
        b=float(x[2]),
        a_ci=(float(x[1] - half[1]), float(x[1] + half[1])),
        b_ci=(float(x[2] - half[2]), float(x[2] + half[2])),
        rss=rss,
        dof=dof,
    )
