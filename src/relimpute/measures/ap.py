"""Average precision (AP): trec_eval's ``map`` and ``map_cut``.

AP = (1/R) Σ_k rel_k · P@k over the ranks k of the list (Carterette 2007, §2.1:
``AP = Q / R`` with ``Q = Σ_{i≤j} a_ij X_i X_j``, which equals this sum),
with R the number of relevant documents of the topic, retrieved or not. A
topic with R = 0 scores 0, as in trec_eval. With a cutoff ``AP@k`` the sum
stops at rank k while R stays the topic's count (trec_eval ``map_cut``).
"""

from __future__ import annotations

import numpy as np

from ._ranked import at_ranks, in_draw_chunks, ratio_or_zero, recall_inputs
from ._registry import BinaryMeasure, register_measure


@in_draw_chunks
def average_precision(
    ranking: np.ndarray,
    relevant: np.ndarray,
    *,
    n_relevant: np.ndarray | float | None = None,
    k: int | None = None,
) -> np.ndarray:
    """AP of every system on one topic, for one or many relevance vectors.

    Parameters
    ----------
    ranking
        ``(S, D)`` padded document indices.
    relevant
        ``(n,)`` or ``(B, n)`` binary relevance over the topic's documents.
    n_relevant
        R, ``()`` or ``(B,)``; default ``relevant.sum(-1)`` (every relevant
        document of the index counts, retrieved or not).
    k
        Optional rank cutoff.

    Returns
    -------
    ndarray
        ``(S,)`` or ``(B, S)``.
    """
    ranking, relevant, total = recall_inputs(ranking, relevant, k, n_relevant)
    hits = at_ranks(ranking, relevant)
    found = np.cumsum(hits, axis=-1, dtype=np.int32)
    found *= hits  # relevant documents found so far, at the relevant ranks only
    precision_sum = found @ (1.0 / np.arange(1, ranking.shape[1] + 1))
    return ratio_or_zero(precision_sum, total[..., None])


class AP(BinaryMeasure):
    """Average precision; ``AP@k`` stops at rank k (trec_eval ``map_cut``)."""

    description = "average precision (trec_eval map; with @k map_cut_k)"
    moments = "ratio"
    _kernel = staticmethod(average_precision)

    def exact_moments(self) -> str | None:
        """Exact moments (Carterette 2007, §2.1) cover AP over the whole list only."""
        return None if self.cutoff is not None else super().exact_moments()


register_measure(
    AP, family="AP", cutoff_rule="optional", aliases=("MAP",), trec_eval="map",
    trec_eval_cut="map_cut",
)
