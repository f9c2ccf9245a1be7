"""Statistics across seeds (`phblab.stats.summarize`): the vectorised
mean and confidence interval against a per-group reference, and its cost."""

import math
import time

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t

from phblab import stats


def reference(values: np.ndarray) -> tuple[int, float, float]:
    """(n, mean, ci_half) of the finite values, computed group by group."""
    v = values[np.isfinite(values)]
    if len(v) == 0:
        return 0, math.nan, math.nan
    half = t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)) if len(v) > 1 else math.nan
    return len(v), v.mean(), half


def test_summarize_matches_a_per_group_computation():
    rng = np.random.default_rng(3)
    n = 3000
    df = pd.DataFrame(
        {
            "k": rng.integers(0, 60, n).astype(str),
            "j": rng.integers(0, 3, n),
            "seed": rng.integers(0, 5, n),
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
        }
    )
    df.loc[rng.random(n) < 0.3, "b"] = np.nan
    df.loc[rng.random(n) < 0.05, "b"] = np.inf
    s = stats.summarize(df, by=["k", "j"])
    assert list(s.columns) == ["k", "j", *stats.STAT_COLUMNS]
    first_seen = list(dict.fromkeys(zip(df.k, df.j, strict=True)))
    assert list(dict.fromkeys(zip(s.k, s.j, strict=True))) == first_seen  # groups in order of appearance
    assert list(s.metric[:2]) == ["a", "b"]  # metrics in column order; seed is not one
    for r in s.itertuples():
        n, mean, half = reference(df[(df.k == r.k) & (df.j == r.j)][r.metric].to_numpy())
        assert r.n == n
        assert r.mean == pytest.approx(mean, rel=1e-12, nan_ok=True)
        assert r.ci_half == pytest.approx(half, rel=1e-9, nan_ok=True)
        assert r.ci_low == pytest.approx(r.mean - r.ci_half, nan_ok=True)


def test_summarize_without_groups_and_without_metrics():
    df = pd.DataFrame({"v": [1.0, 2.0, 3.0]})
    whole = stats.summarize(df, by=[])
    assert len(whole) == 1 and whole.n[0] == 3 and whole["mean"][0] == 2.0
    assert stats.summarize(df.assign(x=1), by=["x"], metrics=[]).empty
    assert stats.summarize(df.iloc[:0], by=["x"]).empty


def test_one_t_quantile_per_sample_size(monkeypatch):
    import scipy.special

    calls = []
    real = scipy.special.stdtrit
    monkeypatch.setattr(scipy.special, "stdtrit", lambda dof, p: calls.append(len(np.atleast_1d(dof))) or real(dof, p))
    df = pd.DataFrame({"g": np.repeat(np.arange(1000), 4), "v": np.arange(4000.0), "w": np.arange(4000.0)})
    df.loc[df.index % 8 == 0, "w"] = np.nan  # sizes 3 and 4
    stats.summarize(df, by=["g"])
    assert calls == [2]


def test_summarize_scales_with_rows_not_groups():
    """10 runs × 20,000 scopes: one call per group and metric (the old way)
    took about a minute for this; the vectorised one a fraction of a second."""
    runs, scopes = 10, 20_000
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "max_p": np.repeat(np.arange(runs) % 2 / 10, scopes),
            "seed": np.repeat(np.arange(runs) // 2, scopes),
            "scope": np.tile([f"r{i}->x" for i in range(scopes)], runs),
        }
    )
    for c in ["arrivals", "loss_rate", "delay_mean_s", "delay_p99_s", "throughput_bps"]:
        df[c] = rng.random(len(df))
    start = time.perf_counter()
    s = stats.summarize(df, by=["max_p", "scope"])
    assert len(s) == 2 * scopes * 5
    assert time.perf_counter() - start < 5
