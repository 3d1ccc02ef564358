"""Discounted cumulative gain, DCG[@k] and nDCG[@k] (Järvelin & Kekäläinen 2002).

DCG@k = Σ_{r ≤ k} gain(rel_r) / log2(r + 1); nDCG@k = DCG@k / IDCG@k, where
IDCG@k is the DCG of the ideal ordering of all the topic's judged documents.
Without a cutoff the whole list counts (trec_eval ``ndcg``); with one,
trec_eval ``ndcg_cut_k``. Gains are the grades (``"linear"``, as trec_eval and
ir_measures) or ``2**grade - 1`` (``"exponential"``, Burges et al. 2005, the
convention of the TREC DL overview's nDCG@10). Negative grades gain 0. A topic
with no positive gain scores 0.
"""

from __future__ import annotations

import numpy as np

from ._ranked import at_ranks, check_cutoff, check_values, in_draw_chunks, ratio_or_zero, top_k
from ._registry import GAINS, GradedMeasure, register_measure


def gain_values(grades: np.ndarray, gain: str = "linear") -> np.ndarray:
    """Gain of each graded label: ``max(grade, 0)`` or ``2**max(grade, 0) - 1``."""
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, got {gain!r}")
    grades = np.maximum(np.asarray(grades, dtype=np.float64), 0.0)
    return grades if gain == "linear" else np.exp2(grades) - 1.0


def dcg_discounts(depth: int) -> np.ndarray:
    """The DCG discount 1 / log2(r + 1) of ranks 1..depth (the Monte Carlo kernel reads it too)."""
    return 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))


@in_draw_chunks
def discounted_cumulative_gain(
    ranking: np.ndarray, grades: np.ndarray, k: int | None = None, *, gain: str = "linear"
) -> np.ndarray:
    """DCG (or DCG@k) of every system on one topic: ``(S,)`` or ``(B, S)``.

    ``grades`` is ``(n,)`` or ``(B, n)``; with 0/1 grades or probabilities of
    relevance it is linear in them (the expected DCG from probabilities).
    """
    grades = check_values(grades, "grades")
    ranking = top_k(ranking, grades, k)
    return at_ranks(ranking, gain_values(grades, gain)) @ dcg_discounts(ranking.shape[1])


@in_draw_chunks
def normalized_dcg(
    ranking: np.ndarray, grades: np.ndarray, k: int | None = None, *, gain: str = "linear"
) -> np.ndarray:
    """nDCG (or nDCG@k) of every system on one topic: ``(S,)`` or ``(B, S)``.

    ``grades`` is ``(n,)`` or ``(B, n)`` over the topic's whole document index
    (unjudged documents grade 0); the ideal ordering is taken over all of it.
    """
    grades = check_values(grades, "grades")
    k = check_cutoff(k)
    dcg = discounted_cumulative_gain(ranking, grades, k, gain=gain)
    idcg = _ideal_dcg(grades, gain_values(grades, gain), gain, k)[..., None]
    return ratio_or_zero(dcg, idcg)


def _ideal_dcg(grades: np.ndarray, gains: np.ndarray, gain: str, k: int | None) -> np.ndarray:
    """IDCG per draw: the DCG of all the topic's documents in descending grade order.

    Integer grades are counted instead of sorted: the documents of grade at
    least ``g`` fill the first ``c_g`` ranks of the ideal list, so
    ``IDCG = Σ_g (gain(g) − gain(g − 1)) · Σ_{r ≤ min(c_g, k)} 1 / log2(r + 1)``,
    one pass over the documents per grade level instead of a sort per draw.
    """
    depth = gains.shape[-1] if k is None else min(k, gains.shape[-1])
    top = int(np.max(grades, initial=0))
    if not (np.issubdtype(grades.dtype, np.integer) or grades.dtype == bool) or top > 64:
        ideal = -np.sort(-gains, axis=-1)[..., :depth]
        return ideal @ dcg_discounts(ideal.shape[-1])
    prefix = np.concatenate([[0.0], np.cumsum(dcg_discounts(depth))])
    step = np.diff(gain_values(np.arange(top + 1), gain))  # gain(g) - gain(g - 1), g = 1..top
    idcg = np.zeros(grades.shape[:-1])
    for level, weight in enumerate(step, start=1):
        filled = np.minimum((grades >= level).sum(axis=-1), depth)
        idcg += weight * prefix[filled]
    return idcg


class NDCG(GradedMeasure):
    """nDCG over the whole list, or nDCG@k."""

    description = "normalised DCG over the grades (linear or exponential gains)"
    _kernel = staticmethod(normalized_dcg)


class DCG(GradedMeasure):
    """DCG over the whole list, or DCG@k: unnormalised, so linear in relevance."""

    description = "discounted cumulative gain, unnormalised (linear in 0/1 relevance)"
    moments = "linear"
    _kernel = staticmethod(discounted_cumulative_gain)

    def rank_weights(self, depth: int) -> np.ndarray:
        """``1 / log2(r + 1)`` for ranks up to the cutoff (gain 1 per relevant document)."""
        weights = dcg_discounts(depth)
        if self.cutoff is not None:
            weights[self.cutoff :] = 0.0
        return weights


register_measure(
    NDCG, family="nDCG", cutoff_rule="optional", aliases=("NDCG",), trec_eval="ndcg",
    trec_eval_cut="ndcg_cut",
)
register_measure(DCG, family="DCG", cutoff_rule="optional")
