"""Precision at a cutoff, P@k (trec_eval ``P_k``).

P@k = (number of relevant documents in the top k) / k. The denominator is k
even when the run retrieved fewer than k documents, as in trec_eval.
"""

from __future__ import annotations

import numpy as np

from ._ranked import at_ranks, check_cutoff, check_ranking, check_values, in_draw_chunks, truncate
from ._registry import BinaryMeasure, register_measure


@in_draw_chunks
def precision_at_k(ranking: np.ndarray, relevant: np.ndarray, k: int) -> np.ndarray:
    """P@k of every system on one topic: ``(S,)`` or ``(B, S)``.

    ``relevant`` is ``(n,)`` or ``(B, n)``; bool, or numbers (then the sum of
    the values in the top k over k, e.g. an expected P@k from probabilities).
    """
    relevant = check_values(relevant, "relevant")
    k = check_cutoff(k)
    if k is None:
        raise ValueError("precision needs a cutoff k")
    if relevant.dtype == bool:
        relevant = relevant.astype(np.int64)
    ranking = truncate(check_ranking(ranking, relevant.shape[-1]), k)
    return at_ranks(ranking, relevant).sum(axis=-1) / float(k)


class P(BinaryMeasure):
    """Precision at k."""

    description = "precision in the top k, divided by k (trec_eval P_k)"
    _kernel = staticmethod(precision_at_k)
    moments = "linear"

    def rank_weights(self, depth: int) -> np.ndarray:
        """``1/k`` for ranks up to k, 0 below."""
        return np.where(np.arange(1, depth + 1) <= self.cutoff, 1.0 / self.cutoff, 0.0)


register_measure(P, family="P", cutoff_rule="required", aliases=("Precision",), trec_eval_cut="P")
