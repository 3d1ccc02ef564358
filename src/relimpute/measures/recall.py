"""Recall, R@k (trec_eval ``recall_k``).

R@k = (relevant documents in the top k) / R, with R the number of relevant
documents of the topic, retrieved or not; a topic with R = 0 scores 0, as in
trec_eval. Without a cutoff, the share of the relevant documents retrieved
anywhere in the list. A ratio of two random counts when relevance is
uncertain, so it goes through Monte Carlo, not the linear closed form.
"""

from __future__ import annotations

import numpy as np

from ._ranked import at_ranks, in_draw_chunks, ratio_or_zero, recall_inputs
from ._registry import BinaryMeasure, register_measure


@in_draw_chunks
def recall_at_k(
    ranking: np.ndarray,
    relevant: np.ndarray,
    k: int | None = None,
    *,
    n_relevant: np.ndarray | float | None = None,
) -> np.ndarray:
    """R@k of every system on one topic: ``(S,)`` or ``(B, S)``.

    ``relevant`` is ``(n,)`` or ``(B, n)`` binary relevance; ``n_relevant``
    (R, ``()`` or ``(B,)``) defaults to ``relevant.sum(-1)``.
    """
    ranking, relevant, total = recall_inputs(ranking, relevant, k, n_relevant)
    found = at_ranks(ranking, relevant).sum(axis=-1, dtype=np.float64)
    return ratio_or_zero(found, total[..., None])


class R(BinaryMeasure):
    """Recall in the top k (or over the whole list)."""

    description = "share of the topic's relevant documents in the top k (trec_eval recall_k)"
    _kernel = staticmethod(recall_at_k)


register_measure(R, family="R", cutoff_rule="optional", aliases=("Recall",), trec_eval_cut="recall")
