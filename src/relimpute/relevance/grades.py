"""Each document's distribution over relevance grades, beside its probability of relevance.

A model that predicts grades (``docs/math/fusion.md``, "How the grades split")
keeps ``p = P(G ≥ l_a)`` in :attr:`RelevanceEstimate.p` (``l_a`` the lowest level
that is relevant) and here, per document, how each side splits into grades:
``P(G ≥ l_k | G ≥ l_a)`` for the levels above ``l_a`` and ``P(G ≥ l_k | G < l_a)``
for those between the lowest level and ``l_a``. Any ``p`` (the point estimate or a
posterior draw) then gives the whole distribution, and one uniform per document
draws a grade consistent with the binary draw of the same uniform.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class GradeShares:
    """How relevance splits into grades, per document of every topic.

    Attributes
    ----------
    levels
        The grade levels ``l_0 < … < l_{K−1}``, increasing.
    anchor
        Index ``a ≥ 1`` of the lowest relevant level: ``p = P(G ≥ levels[a])``.
    above
        Per topic ``(n, K − 1 − a)``: ``P(G ≥ l_k | G ≥ l_a)``, ``k = a + 1..K − 1``.
    below
        Per topic ``(n, a − 1)``: ``P(G ≥ l_k | G < l_a)``, ``k = 1..a − 1``.
    """

    levels: tuple[int, ...]
    anchor: int
    above: tuple[np.ndarray, ...]
    below: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        if list(self.levels) != sorted(set(self.levels)) or len(self.levels) < 2:
            raise ValueError(f"grade levels must be at least two increasing grades, got {self.levels}")
        if not 1 <= self.anchor < len(self.levels):
            raise ValueError(f"anchor must index a level above the lowest, got {self.anchor}")
        n_above, n_below = len(self.levels) - 1 - self.anchor, self.anchor - 1
        for a, b in zip(self.above, self.below):
            if a.shape[1:] != (n_above,) or b.shape[1:] != (n_below,) or len(a) != len(b):
                raise ValueError("grade shares have the wrong shape for their levels")

    @property
    def threshold(self) -> int:
        """The lowest relevant grade."""
        return int(self.levels[self.anchor])

    def at_least(self, t: int, p: np.ndarray, rows=slice(None)) -> np.ndarray:
        """``(..., m, K − 1)``: ``P(G ≥ l_k)``, ``k = 1..K − 1``, of topic ``t``'s documents
        ``rows`` given their ``p`` (``(m,)`` or ``(B, m)``, e.g. posterior draws)."""
        p = np.asarray(p, dtype=float)[..., None]
        below = p + (1.0 - p) * self.below[t][rows]
        above = p * self.above[t][rows]
        return np.concatenate([below, p, above], axis=-1)

    def draw(self, t: int, u: np.ndarray, p: np.ndarray, rows) -> np.ndarray:
        """Grades of topic ``t``'s documents ``rows`` from uniforms ``u`` (``(B, m)``):
        ``l_m`` with ``m`` the number of levels ``k ≥ 1`` with ``u < P(G ≥ l_k)``, so a grade
        is relevant exactly when ``u < p`` (``docs/math/fusion.md``, "Monte Carlo over grades")."""
        exceed = self.at_least(t, p, rows)
        count = (np.asarray(u, dtype=float)[..., None] < exceed).sum(axis=-1)
        return np.asarray(self.levels, dtype=np.int64)[count]

    def expected(self, t: int, p: np.ndarray, values: Sequence[float]) -> np.ndarray:
        """``E[value(G)]`` per document of topic ``t`` given ``p``, for ``values`` per level."""
        exceed = self.at_least(t, p)
        steps = np.diff(np.asarray(values, dtype=float))
        return values[0] + exceed @ steps

    def with_judged(self, t: int, judged: np.ndarray, grades: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Topic ``t``'s ``(above, below)`` with judged documents at the indicator of their grade."""
        levels = np.asarray(self.levels)
        hit = grades[:, None] >= levels[None, 1:]
        above = np.where(judged[:, None], hit[:, self.anchor :], self.above[t])
        below = np.where(judged[:, None], hit[:, : self.anchor - 1], self.below[t])
        return above, below


def judged_shares(shares: GradeShares, topics) -> GradeShares:
    """``shares`` with every judged document's split at the indicator of its grade."""
    parts = [shares.with_judged(t, topic.judged, topic.grades) for t, topic in enumerate(topics)]
    return GradeShares(
        shares.levels, shares.anchor, tuple(a for a, _ in parts), tuple(b for _, b in parts)
    )


def grade_column(level: int) -> str:
    """The probabilistic-qrels column of ``P(G ≥ level)`` (:data:`relimpute.io.GRADE_COLUMN`)."""
    return f"p_ge_{int(level)}"


def levels_of_columns(names) -> tuple[int, ...]:
    """The grade levels of ``p_ge_<grade>`` columns: theirs, below the lowest one 0 (or, when a
    column is at 0 or below, one grade lower: a file lists every level but the lowest)."""
    listed = sorted(int(str(n)[len("p_ge_") :]) for n in names)
    lowest = 0 if listed[0] > 0 else listed[0] - 1
    return (lowest, *listed)


def from_exceedance(levels, anchor: int, exceed, p) -> GradeShares:
    """:class:`GradeShares` from per-topic ``(n, K − 1)`` ``P(G ≥ l_k)`` and ``(n,)`` ``p``."""
    above, below = [], []
    for e, pt in zip(exceed, p):
        pt = pt[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            above.append(np.where(pt > 0, np.clip(e[:, anchor:] / pt, 0, 1), 0.0))
            below.append(np.where(pt < 1, np.clip((e[:, : anchor - 1] - pt) / (1 - pt), 0, 1), 0.0))
    return GradeShares(tuple(levels), anchor, tuple(above), tuple(below))
