"""The normal distribution function and quantile of :mod:`relimpute._normal` are scipy's, bit
for bit (``scipy.special.ndtr``/``ndtri``, the oracle), on random values over every branch
(|x|/√2 below 1, up to 8, beyond; the quantile's centre, its tails below exp(-2) and exp(-32))
and at the edges (±0, ±inf, NaN, the branch points, the underflow of erfc).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from relimpute._normal import normal_cdf, normal_quantile
from relimpute.stats import z_value


def _same_bits(a, b) -> np.ndarray:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))


def test_normal_cdf_is_scipys_ndtr_to_the_bit():
    rng = np.random.default_rng(45)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 5e-324, 37.5, -37.5,
                      38.5, -38.5, 40.0, -40.0])  # fmt: skip
    branch_points = np.array([np.sqrt(2), 8 * np.sqrt(2)])
    near = np.concatenate([np.nextafter(branch_points, 0), branch_points,
                           np.nextafter(branch_points, 100)])  # fmt: skip
    x = np.concatenate([
        rng.normal(0, 1, 200_000), rng.normal(0, 6, 100_000), rng.uniform(-40, 40, 100_000),
        rng.standard_cauchy(20_000), edges, near, -near,
    ])  # fmt: skip
    assert _same_bits(normal_cdf(x), ndtr(x)).all()
    assert normal_cdf(np.zeros(0)).shape == (0,)
    assert normal_cdf(np.full((2, 3), 0.25)).shape == (2, 3)


def test_normal_quantile_is_scipys_ndtri_to_the_bit():
    rng = np.random.default_rng(2026)
    exp_m2 = 0.13533528323661269189
    y = np.concatenate([
        rng.uniform(0, 1, 20_000), np.exp(-rng.uniform(0, 700, 10_000)),
        1 - np.exp(-rng.uniform(0, 36, 5_000)),
        [0.0, 1.0, 0.5, 0.975, 0.025, 0.995, exp_m2, 1 - exp_m2, np.nextafter(exp_m2, 1),
         np.exp(-32.0), 5e-324, -0.1, 1.1, np.nan, np.inf],
    ])  # fmt: skip
    got = np.array([normal_quantile(v) for v in y])
    assert _same_bits(got, ndtri(y)).all() and isinstance(normal_quantile(0.3), float)
    assert _same_bits(normal_quantile(y), ndtri(y)).all()  # elementwise, at once
    assert _same_bits(normal_quantile(y[:30].reshape(5, 6)), ndtri(y[:30].reshape(5, 6))).all()
    assert normal_quantile(np.zeros(0)).shape == (0,)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 100, 2000, 4000, 100_003])
def test_the_callers_inputs_give_scipys_numbers(n):
    """What the library asks of them: stratified quantiles ``(k + ½)/n`` (shifts and strata of
    draws), bootstrap shares ``j/(2n)`` and their tails (BCa), ratios of any size (p-values)."""
    strata = (np.arange(n) + 0.5) / n
    shares = np.arange(2 * n + 1) / (2.0 * n)
    assert _same_bits(normal_quantile(strata), ndtri(strata)).all()
    assert _same_bits(normal_quantile(shares), ndtri(shares)).all()
    ratios = np.concatenate([-np.abs(np.random.default_rng(n).standard_cauchy(n)), strata * 40])
    assert _same_bits(normal_cdf(ratios), ndtr(ratios)).all()
    assert _same_bits(normal_cdf(ratios / np.sqrt(2.0)), ndtr(ratios / np.sqrt(2.0))).all()


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
def test_z_value_is_the_two_sided_quantile(level):
    assert _same_bits(z_value(level), ndtri(0.5 + level / 2.0)).all()
