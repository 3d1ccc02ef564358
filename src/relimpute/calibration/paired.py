"""Paired tests between strategies run on the same trials (Carterette 2007, §4.4.1).

Every strategy of a study sees the same run sets and initial pairs, so the
per-trial outcomes are paired: the number of judgments is compared with the
Wilcoxon signed-rank test (the paper's test for medians), Kendall's τ and the
per-trial W with the paired t-test.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..stats import paired_test

#: (per-trial column, test) pairs compared between every two strategies.
PAIRED_OUTCOMES = (("judgments", "wilcoxon"), ("tau", "t"), ("w", "t"))


@dataclass(frozen=True, slots=True)
class PairedTest:
    """One paired test of an outcome between two strategies.

    Attributes
    ----------
    outcome, test
        The per-trial outcome compared and the test (``"wilcoxon"`` or ``"t"``).
    strategy_a, strategy_b
        The two strategies; ``mean_difference`` is a − b.
    n
        Number of trials with both outcomes defined.
    statistic, pvalue
        The test's statistic and two-sided p-value (p = 1 when every paired
        difference is 0, NaN with fewer than two trials).
    """

    outcome: str
    test: str
    strategy_a: str
    strategy_b: str
    n: int
    mean_difference: float
    median_difference: float
    statistic: float
    pvalue: float

    def to_frame(self) -> pd.DataFrame:
        """One row with the fields as columns (:func:`paired_frame` stacks many)."""
        return paired_frame([self])

    def __str__(self) -> str:
        name = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test"}[self.test]
        return (
            f"{self.outcome}: {self.strategy_a} - {self.strategy_b} = "
            f"{self.mean_difference:+.4g} on average (median {self.median_difference:+.4g}) "
            f"over {self.n} trials; {name} statistic {self.statistic:.4g}, p = {self.pvalue:.3g}"
        )


def paired_tests(trials: pd.DataFrame, outcomes=PAIRED_OUTCOMES) -> list[PairedTest]:
    """Every paired test between every two strategies of a per-trial table.

    ``trials`` has one row per (trial, strategy) with columns ``trial,
    strategy`` and the outcome columns; rows where either side is NaN are
    dropped pair-wise.
    """
    strategies = list(dict.fromkeys(trials["strategy"]))
    out = []
    for outcome, test in outcomes:
        wide = trials.pivot(index="trial", columns="strategy", values=outcome)
        for sa, sb in itertools.combinations(strategies, 2):
            both = wide[[sa, sb]].dropna()
            a, b = both[sa].to_numpy(float), both[sb].to_numpy(float)
            stat, p = paired_test(a, b, test)
            diff = a - b
            out.append(
                PairedTest(
                    outcome=outcome,
                    test=test,
                    strategy_a=sa,
                    strategy_b=sb,
                    n=len(diff),
                    mean_difference=float(diff.mean()) if len(diff) else float("nan"),
                    median_difference=float(np.median(diff)) if len(diff) else float("nan"),
                    statistic=stat,
                    pvalue=p,
                )
            )
    return out


def paired_frame(tests: list[PairedTest]) -> pd.DataFrame:
    """The tests as a tidy table, one row per (outcome, strategy pair)."""
    columns = [f for f in PairedTest.__slots__]
    return pd.DataFrame([[getattr(t, c) for c in columns] for t in tests], columns=columns)
