"""Topic-level significance: runs against a baseline, over the sample of topics.

The uncertainty here is **topic sampling**: the topics are a sample of the
information needs a run will meet, and a test asks whether a run's mean
would beat the baseline's on other topics. The scores are taken as they
are (unjudged documents scored as the measure scores them), so these
p-values say nothing about the **unjudged documents**; the confidence
engine (:mod:`relimpute.confidence`, ``relimpute compare``) measures that
other uncertainty, with the topics held fixed.
On expected scores under a model, ``judgment_variance`` adds the
variance the unjudged documents leave in each mean difference to the t-test.

Three paired tests over the per-topic differences d_t = run_t − baseline_t
(Smucker, Allan & Carterette 2007 compare them on TREC data):

- ``"t"``: the paired t-test (:func:`scipy.stats.ttest_rel`);
- ``"wilcoxon"``: the Wilcoxon signed-rank test (:func:`scipy.stats.wilcoxon`,
  zero differences dropped);
- ``"randomization"``: Fisher's paired randomization test — under the null
  each d_t is as likely −d_t, so the two-sided p-value is the share of sign
  flips whose mean is at least as far from 0 as the observed mean; exact
  (all 2^n flips) when 2^n ≤ ``permutations``, otherwise ``permutations``
  random flips with p = (k + 1) / (B + 1) (Phipson & Smyth 2010).

The effect size is Cohen's d_z = mean(d) / sd(d) (sd with n − 1).
Corrections (``holm``, ``bh``) adjust the p-values of one test across every
comparison made with it — every run and every measure together — so
"significant" controls the family-wise error (Holm 1979) or the false
discovery rate (Benjamini & Hochberg 1995) over the whole table, not per
measure as tools that correct per column do.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

TESTS = ("t", "wilcoxon", "randomization")
CORRECTIONS = ("holm", "bh", "none")
#: Comparisons of randomization means closer than this (relative) count as ties.
_TIE = 1e-9


def randomization_test(
    differences: np.ndarray, *, permutations: int = 10_000, rng=None
) -> float:
    """Two-sided p-value of Fisher's paired randomization (sign-flip) test.

    Exact over all 2^n sign vectors when 2^n ≤ ``permutations``; otherwise
    ``permutations`` random sign vectors, p = (k + 1) / (B + 1). NaN for no
    pairs, 1 when every difference is 0.
    """
    d = np.asarray(differences, dtype=float)
    n = len(d)
    if n == 0:
        return float("nan")
    if not np.any(d):
        return 1.0
    observed = abs(d.mean())
    tolerance = _TIE * max(observed, np.abs(d).max())
    if n < 63 and 2**n <= permutations:
        signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
        extreme = np.abs(signs @ d / n) >= observed - tolerance
        return float(extreme.mean())
    generator = np.random.default_rng(rng)
    k = 0
    for start in range(0, permutations, 2048):  # bounded memory: 2048 x n signs at a time
        size = min(2048, permutations - start)
        signs = generator.choice(np.array([-1.0, 1.0]), size=(size, n))
        k += int(np.count_nonzero(np.abs(signs @ d / n) >= observed - tolerance))
    return (k + 1) / (permutations + 1)


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979); NaN stays NaN and is not counted."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    known = np.flatnonzero(~np.isnan(p))
    m = len(known)
    if m == 0:
        return out
    order = known[np.argsort(p[known], kind="stable")]
    scaled = p[order] * (m - np.arange(m))
    out[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return out


def benjamini_hochberg(pvalues: np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (q-values); NaN stays NaN and is not counted."""
    from scipy.stats import false_discovery_control

    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    known = ~np.isnan(p)
    if known.any():
        out[known] = false_discovery_control(p[known], method="bh")
    return out


def adjust(pvalues: np.ndarray, correction: str) -> np.ndarray:
    """Adjusted p-values under ``correction`` (``holm``, ``bh`` or ``none``)."""
    if correction == "holm":
        return holm(pvalues)
    if correction == "bh":
        return benjamini_hochberg(pvalues)
    if correction == "none":
        return np.asarray(pvalues, dtype=float).copy()
    raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")


def compare_to_baseline(
    per_topic: pd.DataFrame,
    baseline: str,
    *,
    tests=TESTS,
    correction: str = "holm",
    alpha: float = 0.05,
    permutations: int = 10_000,
    rng=None,
    judgment_variance=None,
) -> pd.DataFrame:
    """Test every run against ``baseline`` on every measure, over topics.

    Parameters
    ----------
    per_topic
        Tidy per-topic scores, ``system, query_id, measure, value``, as
        ``evaluate(..., per_topic=True)`` returns them. A run is paired with
        the baseline on the topics both have a score for.
    baseline
        The baseline run's name.
    tests
        Any of ``"t"``, ``"wilcoxon"``, ``"randomization"``.
    correction
        ``"holm"`` (family-wise), ``"bh"`` (false discovery rate) or
        ``"none"``, applied per test across all runs and measures.
    alpha
        Level at which ``significant`` is decided on the adjusted p-value.
    permutations, rng
        Sign flips of the randomization test and their seed.
    judgment_variance
        Optional ``{(measure, system): v}``: the variance of the run's mean difference
        from the baseline that the judgments leave (expected scores under a model: the
        engine's ``var_delta_map``). The t-test adds it to the topic variance,
        t = mean(d) / sqrt(sd(d)² / n + v) on n − 1 degrees of freedom; the other tests
        cannot take it.

    Returns
    -------
    pandas.DataFrame
        One row per (measure, system, test): ``measure, system, baseline,
        n_topics, system_mean, baseline_mean, mean_difference, effect_size``
        (Cohen's d_z), ``test, statistic, pvalue, pvalue_adjusted,
        significant``. The uncertainty is topic sampling only (see the
        module docstring).
    """
    tests = tuple(tests)
    unknown = [t for t in tests if t not in TESTS]
    if unknown or not tests:
        raise ValueError(f"tests must be among {TESTS}, got {list(tests)}")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    systems = list(dict.fromkeys(per_topic["system"]))
    if baseline not in systems:
        raise ValueError(f"baseline {baseline!r} is not among the runs {systems}")
    if len(systems) < 2:
        raise ValueError("need at least one run besides the baseline")
    from ..stats import paired_test

    generator = np.random.default_rng(rng)
    rows = []
    for measure, scores in per_topic.groupby("measure", sort=False):
        wide = scores.pivot(index="query_id", columns="system", values="value")
        for system in systems:
            if system == baseline:
                continue
            both = wide[[system, baseline]].dropna()
            a, b = both[system].to_numpy(float), both[baseline].to_numpy(float)
            d = a - b
            sd = d.std(ddof=1) if len(d) > 1 else float("nan")
            common = {
                "measure": measure,
                "system": system,
                "baseline": baseline,
                "n_topics": len(d),
                "system_mean": a.mean() if len(d) else float("nan"),
                "baseline_mean": b.mean() if len(d) else float("nan"),
                "mean_difference": d.mean() if len(d) else float("nan"),
                "effect_size": _cohen_dz(d.mean() if len(d) else float("nan"), sd),
            }
            for test in tests:
                if test == "randomization":
                    statistic = common["mean_difference"]
                    p = randomization_test(d, permutations=permutations, rng=generator)
                elif test == "t" and judgment_variance is not None:
                    statistic, p = _t_with_variance(d, judgment_variance[(measure, system)])
                else:
                    statistic, p = paired_test(a, b, test)
                rows.append({**common, "test": test, "statistic": statistic, "pvalue": p})
    frame = pd.DataFrame(rows)
    frame["pvalue_adjusted"] = np.nan
    for test in tests:
        mask = (frame["test"] == test).to_numpy()
        frame.loc[mask, "pvalue_adjusted"] = adjust(frame.loc[mask, "pvalue"].to_numpy(), correction)
    frame["significant"] = frame["pvalue_adjusted"] < alpha
    return frame


def _t_with_variance(d: np.ndarray, v: float) -> tuple[float, float]:
    """The paired t-test of ``d`` with ``v`` added to the squared standard error of its mean."""
    from scipy.stats import t as student

    n = len(d)
    if n < 2:
        return float("nan"), float("nan")
    se = np.sqrt(d.var(ddof=1) / n + max(float(v), 0.0))
    if se <= 1e-12 * max(1.0, float(np.abs(d).max())):
        return (0.0, 1.0) if not np.any(d) else (float(np.sign(d.mean()) * np.inf), 0.0)
    statistic = float(d.mean() / se)
    return statistic, float(2 * student.sf(abs(statistic), n - 1))


def _cohen_dz(mean: float, sd: float) -> float:
    """mean / sd; ±inf for a constant non-zero difference, NaN when undefined."""
    if np.isnan(sd) or np.isnan(mean):
        return float("nan")
    if sd <= 1e-12 * max(1.0, abs(mean)):
        return float("nan") if mean == 0 else float(np.sign(mean) * np.inf)
    return float(mean / sd)
