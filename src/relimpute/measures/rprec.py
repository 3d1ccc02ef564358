"""R-precision (trec_eval ``Rprec``): precision at rank R, R = relevant count.

Equals the share of the R relevant documents found in the top R. A topic
with R = 0 scores 0. R may differ per draw, so the cutoff is per draw.
"""

from __future__ import annotations

import numpy as np

from ._ranked import at_ranks, in_draw_chunks, ratio_or_zero, recall_inputs
from ._registry import BinaryMeasure, register_measure


@in_draw_chunks
def r_precision(
    ranking: np.ndarray, relevant: np.ndarray, *, n_relevant: np.ndarray | float | None = None
) -> np.ndarray:
    """R-precision of every system on one topic: ``(S,)`` or ``(B, S)``.

    ``n_relevant`` (R, ``()`` or ``(B,)``, whole numbers) defaults to
    ``relevant.sum(-1)``.
    """
    ranking, relevant, total = recall_inputs(ranking, relevant, None, n_relevant)
    if (total != np.round(total)).any():
        raise ValueError("n_relevant must hold whole numbers for R-precision")
    depth = ranking.shape[1]
    found = np.cumsum(at_ranks(ranking, relevant), axis=-1, dtype=np.int64)
    found = np.concatenate([np.zeros(found.shape[:-1] + (1,), np.int64), found], axis=-1)
    cut = np.minimum(total, depth).astype(np.int64)[..., None, None]
    cut = np.broadcast_to(cut, found.shape[:-1] + (1,))
    hits = np.take_along_axis(found, cut, axis=-1)[..., 0].astype(np.float64)
    total = total[..., None]
    return ratio_or_zero(hits, total)


class Rprec(BinaryMeasure):
    """R-precision."""

    description = "precision at rank R = number of relevant (trec_eval Rprec)"

    def _binary_score(self, ranking, relevant):
        return r_precision(ranking, relevant)


register_measure(Rprec, family="Rprec", aliases=("RPrec",), trec_eval="Rprec")
