"""Judged@k: the share of a run's top-k documents that have a judgment.

As in ir_measures, the denominator is the number of documents in the top k
(k, or fewer when the run is shorter); a topic the run retrieved nothing for
scores 0. Without a cutoff, the share over the whole list. Not a quality
measure: it says how far the other scores can be trusted.
"""

from __future__ import annotations

import numpy as np

from ._ranked import as_binary, at_ranks, in_draw_chunks, ratio_or_zero, retrieved_count, top_k
from ._registry import Measure, register_measure


@in_draw_chunks
def judged_fraction(ranking: np.ndarray, judged: np.ndarray, k: int | None = None) -> np.ndarray:
    """Judged@k of every system on one topic: ``(S,)`` (``(B, S)`` for ``(B, n)``)."""
    judged = as_binary(judged, "judged")
    ranking = top_k(ranking, judged, k)
    count = at_ranks(ranking, judged).sum(axis=-1, dtype=np.float64)
    shown = retrieved_count(ranking).astype(np.float64)
    return ratio_or_zero(count, shown)


class Judged(Measure):
    """Judged@k (needs the judged mask; without one every document is judged)."""

    description = "share of the top k documents that are judged"

    def _score(self, ranking, labels, judged, rel_threshold, gain):
        if judged is None:
            judged = np.ones(labels.shape[-1], dtype=bool)
        fraction = judged_fraction(ranking, judged, self.cutoff)
        return np.broadcast_to(fraction, labels.shape[:-1] + fraction.shape[-1:]).copy()


register_measure(Judged, family="Judged", cutoff_rule="optional")
