"""Success@k (trec_eval ``success_k``): 1 if the top k hold a relevant document, else 0.

Without a cutoff, whether the list holds any relevant document.
"""

from __future__ import annotations

import numpy as np

from ._ranked import as_binary, at_ranks, in_draw_chunks, top_k
from ._registry import BinaryMeasure, register_measure


@in_draw_chunks
def success_at_k(ranking: np.ndarray, relevant: np.ndarray, k: int | None = None) -> np.ndarray:
    """Success@k of every system on one topic: ``(S,)`` or ``(B, S)`` of 0.0 / 1.0."""
    relevant = as_binary(relevant, "relevant")
    ranking = top_k(ranking, relevant, k)
    return at_ranks(ranking, relevant).any(axis=-1).astype(np.float64)


class Success(BinaryMeasure):
    """Success@k."""

    description = "1 if a relevant document is in the top k, else 0 (trec_eval success_k)"
    _kernel = staticmethod(success_at_k)


register_measure(Success, family="Success", cutoff_rule="optional", trec_eval_cut="success")
