"""Rank-biased precision and its residual (Moffat & Zobel 2008).

RBP(p) = (1 − p) Σ_k rel_k p^(k−1) for a user who moves on from rank k to
k + 1 with persistence p. Unjudged documents count as nonrelevant, so RBP is
a lower bound; the *residual* is the most it could grow if every unknown were
relevant: the weight of unjudged retrieved documents plus the weight beyond
the end of the list, ``(1 − p) Σ_{k ≤ d, unjudged} p^(k−1) + p^d`` for a list
of d documents. The true score lies in ``[RBP, RBP + residual]``.

With a cutoff ``@k`` the list is truncated at rank k first (then d ≤ k).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np

from ._ranked import (
    as_binary,
    at_ranks,
    check_values,
    in_draw_chunks,
    rank_discount,
    retrieved_count,
    top_k,
)
from ._registry import REL, Measure, Param, register_measure

PERSISTENCE = Param(float, 0.8, low=0.0, high=1.0, open_low=True, open_high=True)


def _check_persistence(p: float) -> float:
    if not 0.0 < p < 1.0:
        raise ValueError(f"persistence p must lie in (0, 1), got {p}")
    return float(p)


@in_draw_chunks
def rank_biased_precision(
    ranking: np.ndarray, relevant: np.ndarray, p: float = 0.8, *, k: int | None = None
) -> np.ndarray:
    """RBP(p) of every system on one topic: ``(S,)`` or ``(B, S)``.

    ``relevant`` is ``(n,)`` or ``(B, n)``, bool or numbers in [0, 1] (then
    the expected RBP, RBP being linear in relevance).
    """
    p = _check_persistence(p)
    relevant = check_values(relevant, "relevant")
    ranking = top_k(ranking, relevant, k)
    weights = (1.0 - p) * rank_discount(ranking.shape[1], p)
    return at_ranks(ranking, relevant.astype(np.float64, copy=False)) @ weights


@in_draw_chunks
def rbp_residual(
    ranking: np.ndarray, judged: np.ndarray, p: float = 0.8, *, k: int | None = None
) -> np.ndarray:
    """RBP residual of every system on one topic: ``(S,)`` (or ``(B, S)`` for ``(B, n)``).

    The weight of unjudged retrieved documents plus ``p ** d`` for the ranks
    beyond the d retrieved ones (Moffat & Zobel 2008).
    """
    p = _check_persistence(p)
    judged = as_binary(judged, "judged")
    ranking = top_k(ranking, judged, k)
    weights = (1.0 - p) * rank_discount(ranking.shape[1], p)
    unknown = (ranking >= 0) & ~at_ranks(ranking, judged)
    return unknown @ weights + p ** retrieved_count(ranking)


class RBP(Measure):
    """Rank-biased precision, unjudged documents counted nonrelevant."""

    description = "rank-biased precision, persistence p; unjudged = nonrelevant"
    parameters: ClassVar[Mapping[str, Param]] = {"p": PERSISTENCE, "rel": REL}
    moments = "linear"

    def rank_weights(self, depth: int) -> np.ndarray:
        """``(1 − p) p^(r−1)`` for ranks up to the cutoff (Moffat & Zobel 2008)."""
        p = self.param("p")
        weights = (1.0 - p) * rank_discount(depth, p)
        if self.cutoff is not None:
            weights[self.cutoff :] = 0.0
        return weights

    def _score(self, ranking, labels, judged, rel_threshold, gain):
        relevant = self.relevant(labels, judged, rel_threshold)
        return rank_biased_precision(ranking, relevant, self.param("p"), k=self.cutoff)


class RBPResidual(Measure):
    """The RBP residual: how much RBP could still grow (needs the judged mask)."""

    description = "RBP residual: weight of unjudged ranks and of the tail"
    parameters: ClassVar[Mapping[str, Param]] = {"p": PERSISTENCE}

    def _score(self, ranking, labels, judged, rel_threshold, gain):
        if judged is None:
            judged = np.ones(labels.shape[-1], dtype=bool)
        residual = rbp_residual(ranking, judged, self.param("p"), k=self.cutoff)
        return np.broadcast_to(residual, labels.shape[:-1] + residual.shape[-1:]).copy()


register_measure(RBP, family="RBP", cutoff_rule="optional")
register_measure(RBPResidual, family="RBPres", cutoff_rule="optional")
