"""Reciprocal rank, RR and RR@k (trec_eval ``recip_rank``).

RR = 1 / (rank of the first relevant document), 0 when the list holds none
(Voorhees 1999, the TREC-8 QA track's measure). With a cutoff ``RR@k`` only
the top k count (ir_measures' ``RR@10``, MS MARCO's MRR@10); trec_eval's
``recip_rank`` has no cutoff. The mean over topics is MRR.
"""

from __future__ import annotations

import numpy as np

from ._ranked import as_binary, at_ranks, in_draw_chunks, top_k
from ._registry import BinaryMeasure, register_measure


@in_draw_chunks
def reciprocal_rank(ranking: np.ndarray, relevant: np.ndarray, k: int | None = None) -> np.ndarray:
    """RR (or RR@k) of every system on one topic: ``(S,)`` or ``(B, S)``.

    ``relevant`` is ``(n,)`` or ``(B, n)`` binary relevance.
    """
    relevant = as_binary(relevant, "relevant")
    ranking = top_k(ranking, relevant, k)
    hits = at_ranks(ranking, relevant)
    first = np.argmax(hits, axis=-1)  # 0-based rank of the first hit (0 when there is none)
    return np.where(hits.any(axis=-1), 1.0 / (first + 1.0), 0.0)


class RR(BinaryMeasure):
    """Reciprocal rank of the first relevant document."""

    description = "reciprocal rank of the first relevant document (trec_eval recip_rank)"
    _kernel = staticmethod(reciprocal_rank)


register_measure(RR, family="RR", cutoff_rule="optional", aliases=("MRR",), trec_eval="recip_rank")
