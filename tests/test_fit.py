"""The Levenberg–Marquardt power-law fit recovers known exponents and
agrees with scipy's curve_fit."""

import numpy as np
import pytest

from phblab.fit import fit_power_law
from phblab.stats import t_quantile_975


def test_t_quantiles_match_tables():
    # Student's t, 97.5%: 1 dof 12.7062, 10 dof 2.2281, 30 dof 2.0423, 100 dof 1.9840
    assert t_quantile_975(1) == pytest.approx(12.7062, abs=1e-4)
    assert t_quantile_975(10) == pytest.approx(2.2281, abs=1e-4)
    assert t_quantile_975(30) == pytest.approx(2.0423, abs=1e-4)
    assert t_quantile_975(100) == pytest.approx(1.9840, abs=1e-4)


def test_exact_data_gives_exact_exponents():
    r, p = np.meshgrid([0.01, 0.02, 0.05, 0.1, 0.2], [0.001, 0.005, 0.01, 0.02, 0.05])
    t = 3.0 / (r.ravel() ** 0.9 * p.ravel() ** 0.73)
    fit = fit_power_law(r.ravel(), p.ravel(), t)
    assert fit.a == pytest.approx(0.9, abs=1e-9)
    assert fit.b == pytest.approx(0.73, abs=1e-9)
    assert fit.c == pytest.approx(3.0, rel=1e-9)


def test_noisy_data_is_covered_by_the_confidence_intervals():
    rng = np.random.default_rng(1)
    r, p = np.meshgrid([0.01, 0.02, 0.05, 0.1, 0.15, 0.2], [0.001, 0.005, 0.01, 0.02, 0.04, 0.05])
    r, p = r.ravel(), p.ravel()
    covered = 0
    for _ in range(200):
        t = 2.0 / (r**0.9007 * p**0.726) * (1 + 0.05 * rng.standard_normal(r.size))
        fit = fit_power_law(r, p, t)
        covered += fit.a_ci[0] <= 0.9007 <= fit.a_ci[1]
    # nominal 95%: allow sampling error over 200 trials
    assert 0.90 <= covered / 200 <= 0.99


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        fit_power_law([1, 2], [0.1, 0.2], [1, 2])
    with pytest.raises(ValueError):
        fit_power_law([1, 2, 3, 4], [0.1, 0.2, 0, 0.3], [1, 2, 3, 4])


def test_agrees_with_curve_fit():
    from scipy import optimize

    rng = np.random.default_rng(2)
    r, p = np.meshgrid([0.02, 0.05, 0.1, 0.15], [0.005, 0.01, 0.02, 0.04])
    r, p = r.ravel(), p.ravel()
    t = 2.0 / (r**0.9 * p**0.7) * (1 + 0.05 * rng.standard_normal(r.size))
    fit = fit_power_law(r, p, t)
    params, _ = optimize.curve_fit(
        lambda x, c, a, b: c / (x[0] ** a * x[1] ** b), (r, p), t, p0=[fit.c, 0.8, 0.6], sigma=t
    )
    assert fit.a == pytest.approx(params[1], abs=1e-6)
    assert fit.b == pytest.approx(params[2], abs=1e-6)
