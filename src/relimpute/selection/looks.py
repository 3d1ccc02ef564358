"""Stopping a design's judging early without breaking the coverage of its intervals.

Reading a 95% interval after every batch of judgments and stopping the first time it excludes
0 is optional stopping: the interval reported at the stop covers less than 95% of the time,
because the chance that *some* look's interval misses is larger than any one's
(``docs/sampled.md``, "Stopping a design's judging"). :class:`Looks` is the fixed-schedule
answer: K looks at the fractions f_1 < ... < f_K = 1 of the design, each interval at level
1 − α/K (Bonferroni). By the union bound the probability that any of the K intervals misses
the true value is at most Σ α/K = α, so whichever look the judging stops at — and whatever
rule chose it — its interval covers with probability at least 1 − α (each look's own interval
being valid at its level: the normal approximation of the design-based estimator).

A look must be a probability sample with known π whatever was seen before it. The
model-guided design (:class:`~.designs.ModelGuidedDesign`) asks its documents in the order of
their entry U/π, so the documents answered when the entries pass f are {d : U_d < f π_d}:
a Poisson sample with inclusion f · π_d, nested in the next look's (:func:`look_sample`).

A pair is decided at a look when its interval excludes 0 (the sign is shown), or lies inside
(−``margin``, ``margin``) (equivalence shown: |ΔMAP| < margin); judging stops at the first
look where every pair asked is decided, else at the last. A look where some topic has no
document in its sample cannot stop (that topic's ΔAP is the model's prediction alone, with no
estimate of its variance); passing a look never costs coverage.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .designs import ENTRY

#: why a pair is decided at a look (or not)
VERDICTS = ("A better", "B better", "equivalent", "open")


@dataclass(frozen=True)
class Looks:
    """``count`` looks at the evenly spaced fractions 1/K, 2/K, ..., 1 of a design (or at
    ``fractions``), each interval at level 1 − (1 − ``confidence``)/K, so that the interval
    of the look judging stops at covers with probability ≥ ``confidence``."""

    count: int = 4
    confidence: float = 0.95
    margin: float | None = None
    fractions: tuple[float, ...] | None = None

    def __post_init__(self):
        if int(self.count) != self.count or self.count < 1:
            raise ValueError(f"looks must be a positive integer, got {self.count}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must lie strictly between 0 and 1, got {self.confidence}")
        if self.margin is not None and not self.margin > 0:
            raise ValueError(f"the equivalence margin must be positive, got {self.margin}")
        if self.fractions is not None:
            f = tuple(float(x) for x in self.fractions)
            if len(f) != self.count or list(f) != sorted(set(f)) or not 0 < f[0] or f[-1] != 1:
                raise ValueError("fractions must increase strictly within (0, 1] and end at 1, "
                                 f"one per look: got {self.fractions}")  # fmt: skip
            object.__setattr__(self, "fractions", f)

    @property
    def at(self) -> tuple[float, ...]:
        """The fractions of the design at which the looks are taken."""
        if self.fractions is not None:
            return self.fractions
        return tuple((k + 1) / self.count for k in range(self.count))

    @property
    def level(self) -> float:
        """Each look's interval level, 1 − (1 − confidence)/K."""
        return 1 - (1 - self.confidence) / self.count

    @property
    def z(self) -> float:
        """The normal quantile of each look's two-sided interval."""
        from scipy.stats import norm

        return float(norm.ppf(1 - (1 - self.level) / 2))

    def rule(self) -> str:
        """The rule in one sentence (printed by ``judge``)."""
        spaced = ", ".join(f"{f:.0%}" for f in self.at)
        return (f"{self.count} looks at {spaced} of the design, each interval at "
                f"{100 * self.level:.4g}% (Bonferroni: {1 - self.confidence:g}/{self.count}), so the "
                f"interval of the look judging stops at covers with probability at least "
                f"{self.confidence:g} under optional stopping")  # fmt: skip

    def verdict(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """Per pair, one of :data:`VERDICTS` from its interval of ΔMAP = A − B at a look."""
        low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        out = np.full(low.shape, "open", dtype=object)
        if self.margin is not None:
            out[(low > -self.margin) & (high < self.margin)] = "equivalent"
        out[low > 0] = "A better"
        out[high < 0] = "B better"
        return out

    def decided(self, low, high) -> bool:
        """Every pair decided: judging stops at this look."""
        return bool((self.verdict(low, high) != "open").all())


def look_sample(sample: pd.DataFrame, fraction: float) -> pd.DataFrame:
    """The sample table of the look at ``fraction`` of a model-guided draw: the documents with
    entry < ``fraction`` stay drawn, with inclusion ``fraction`` · π; the rest leave the
    sample (drawn False, relevance −1); documents judged already keep π = 1."""
    if ENTRY not in sample.columns:
        raise ValueError("only a model-guided sample (with each document's entry U/π) can be "
                         "looked at before it is judged whole")  # fmt: skip
    if not 0 < fraction <= 1:
        raise ValueError(f"a look's fraction must lie in (0, 1], got {fraction}")
    entry = sample[ENTRY].to_numpy()
    open_ = ~np.isnan(entry)
    inside = ~open_ | (entry < fraction)
    pi = sample["inclusion"].to_numpy()
    return sample.assign(
        inclusion=np.where(open_, pi * fraction, pi),
        drawn=sample["drawn"].to_numpy() & inside,
        relevance=np.where(inside, sample["relevance"].to_numpy(), -1),
    )


def look_index(sample: pd.DataFrame, answered: int, looks: Looks) -> int | None:
    """The look (0-based) that is complete once the first ``answered`` documents of the
    order are answered and the next one would start another, or None."""
    drawn = sample[sample["order"] >= 0].sort_values("order")[ENTRY].to_numpy()
    done = [k for k, f in enumerate(looks.at) if int((drawn < f).sum()) == answered]
    return done[-1] if done else None
