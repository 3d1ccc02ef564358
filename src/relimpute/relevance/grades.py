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
from dataclasses import dataclass, replace

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
    offset, cut_draws
        Optional, for a split that is uncertain (``docs/math/fusion.md``, "Each topic's
        split"): per topic ``(n,)`` the log-odds the split is taken at less those of ``p``
        (NaN where the split is known, e.g. judged) and ``(M, K − 1)`` posterior draws of the
        topic's cut-points; posterior draw ``m`` of ``p`` splits at log-odds
        ``logit(p_m) + offset`` with ``cut_draws[t][m mod M]`` (:meth:`at_least`'s ``index``).
    split_shift
        Optional, with :attr:`cut_draws`: ``(M,)`` per posterior draw a shift of the log-odds
        every uncertain split (``offset`` not NaN, in every topic) is taken at, draw ``m``
        splitting at ``logit(p_m) + offset + split_shift[m mod M]``: a between-group term on
        the split (``docs/math/fusion.md``, "A left-out group's split").
    """

    levels: tuple[int, ...]
    anchor: int
    above: tuple[np.ndarray, ...]
    below: tuple[np.ndarray, ...]
    offset: tuple[np.ndarray, ...] | None = None
    cut_draws: tuple[np.ndarray, ...] | None = None
    split_shift: np.ndarray | None = None

    def __post_init__(self) -> None:
        if list(self.levels) != sorted(set(self.levels)) or len(self.levels) < 2:
            raise ValueError(f"grade levels must be at least two increasing grades, got {self.levels}")
        if not 1 <= self.anchor < len(self.levels):
            raise ValueError(f"anchor must index a level above the lowest, got {self.anchor}")
        n_above, n_below = len(self.levels) - 1 - self.anchor, self.anchor - 1
        for a, b in zip(self.above, self.below):
            if a.shape[1:] != (n_above,) or b.shape[1:] != (n_below,) or len(a) != len(b):
                raise ValueError("grade shares have the wrong shape for their levels")
        if (self.offset is None) != (self.cut_draws is None):
            raise ValueError("grade shares need both offset and cut_draws, or neither")
        if self.offset is not None:
            for a, e, c in zip(self.above, self.offset, self.cut_draws):
                if e.shape != (len(a),) or c.ndim != 2 or c.shape[1] != len(self.levels) - 1:
                    raise ValueError("grade shares' offset or cut_draws have the wrong shape")
        if self.split_shift is not None:
            shift = np.asarray(self.split_shift)
            if self.cut_draws is None or shift.ndim != 1 or not len(shift) or not np.all(np.isfinite(shift)):
                raise ValueError("split_shift needs cut_draws and one finite shift per posterior draw")

    @property
    def threshold(self) -> int:
        """The lowest relevant grade."""
        return int(self.levels[self.anchor])

    def at_least(self, t: int, p: np.ndarray, rows=slice(None), index=None) -> np.ndarray:
        """``(..., m, K − 1)``: ``P(G ≥ l_k)``, ``k = 1..K − 1``, of topic ``t``'s documents
        ``rows`` given their ``p`` (``(m,)`` or ``(B, m)``, e.g. posterior draws); ``index``
        (``(B,)``, with ``(B, m)`` ``p``) the posterior draws', whose split they take when the
        shares carry :attr:`cut_draws` (None: the point split)."""
        p = np.asarray(p, dtype=float)
        above, below = self.above[t][rows], self.below[t][rows]
        if index is not None and self.cut_draws is not None:
            above, below = self._split_draws(t, rows, np.asarray(index), p, above, below)
        p = p[..., None]
        below = p + (1.0 - p) * below
        above = p * above
        return np.concatenate([below, p, above], axis=-1)

    def _split_draws(self, t, rows, index, p, above, below):
        """``(B, m, ·)`` splits of ``rows`` at the cut-points of posterior draws ``index`` and
        their log-odds ``logit(p) + offset`` (rows of one draw share ``p``); a document whose
        ``offset`` is NaN keeps its split."""
        from scipy.special import logit  # here: reading probabilities needs no scipy

        from .ordinal import grade_shares

        offset = self.offset[t][rows]
        known = np.isnan(offset)
        # rows of one posterior draw share p: each draw's split once (Monte Carlo repeats them)
        p = np.broadcast_to(p, (len(index), p.shape[-1]))
        unique, first, inverse = np.unique(index, return_index=True, return_inverse=True)
        cuts = self.cut_draws[t][unique % len(self.cut_draws[t])]
        eta = logit(np.clip(p[first], 1e-12, 1 - 1e-12)) + np.where(known, 0.0, offset)
        if self.split_shift is not None:  # the draw's between-group shift of the split
            eta = eta + self.split_shift[unique % len(self.split_shift)][:, None]
        up, down = grade_shares(eta, cuts, self.anchor)
        # drawn cut-points may leave their order: keep P(G ≥ l_k) decreasing in k
        up, down = np.minimum.accumulate(up, axis=-1), np.minimum.accumulate(down, axis=-1)
        keep = known[None, :, None]
        return np.where(keep, above, up[inverse]), np.where(keep, below, down[inverse])

    def draw(self, t: int, u: np.ndarray, p: np.ndarray, rows, index=None) -> np.ndarray:
        """Grades of topic ``t``'s documents ``rows`` from uniforms ``u`` (``(B, m)``):
        ``l_m`` with ``m`` the number of levels ``k ≥ 1`` with ``u < P(G ≥ l_k)``, so a grade
        is relevant exactly when ``u < p`` (``docs/math/fusion.md``, "Monte Carlo over grades");
        ``index`` as in :meth:`at_least`."""
        exceed = self.at_least(t, p, rows, index)
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
    """``shares`` with every judged document's split at the indicator of its grade (and
    known, with :attr:`GradeShares.offset`)."""
    parts = [shares.with_judged(t, topic.judged, topic.grades) for t, topic in enumerate(topics)]
    offset = shares.offset
    if offset is not None:
        offset = tuple(np.where(topic.judged, np.nan, e) for e, topic in zip(offset, topics))
    return replace(
        shares, above=tuple(a for a, _ in parts), below=tuple(b for _, b in parts), offset=offset
    )


def grade_column(level: int) -> str:
    """The probabilistic-qrels column of ``P(G ≥ level)``
    (:data:`relimpute.io.trec.GRADE_COLUMN`)."""
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
