"""trec_eval's counts: NumRet, NumRel and NumRelRet (``num_ret``, ``num_rel``, ``num_rel_ret``).

NumRet is the number of documents a run retrieved for the topic, NumRel the
number of relevant documents of the topic (judged, retrieved or not; the
same for every run), NumRelRet the number of relevant documents retrieved.
A run's score over topics is their *sum*, as trec_eval's ``all`` rows.
NumRel and NumRelRet are linear in relevance, so given probabilities of
relevance instead of 0/1 they return the expected count.
"""

from __future__ import annotations

import numpy as np

from ._ranked import at_ranks, check_ranking, check_values, in_draw_chunks, retrieved_count
from ._registry import BinaryMeasure, Measure, register_measure


@in_draw_chunks
def relevant_retrieved(ranking: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Relevant documents each system retrieved: ``(S,)`` or ``(B, S)``.

    ``relevant`` is bool, or probabilities (then the expected count).
    """
    relevant = check_values(relevant, "relevant")
    ranking = check_ranking(ranking, relevant.shape[-1])
    return at_ranks(ranking, relevant.astype(np.float64, copy=False)).sum(axis=-1)


class _Count(Measure):
    """A count: summed over topics."""

    aggregate = "sum"


class NumRet(_Count):
    """Documents retrieved."""

    description = "documents retrieved (trec_eval num_ret; summed over topics)"

    def _score(self, ranking, labels, judged, rel_threshold, gain):
        count = retrieved_count(ranking).astype(np.float64)
        return np.broadcast_to(count, labels.shape[:-1] + count.shape).copy()


class NumRel(_Count, BinaryMeasure):
    """Relevant documents of the topic, retrieved or not."""

    description = "relevant documents of the topic (trec_eval num_rel; summed over topics)"

    def _score(self, ranking, labels, judged, rel_threshold, gain):
        count = self.relevant(labels, judged, rel_threshold).sum(axis=-1, dtype=np.float64)
        return np.broadcast_to(count[..., None], labels.shape[:-1] + ranking.shape[:1]).copy()


class NumRelRet(_Count, BinaryMeasure):
    """Relevant documents retrieved."""

    description = "relevant documents retrieved (trec_eval num_rel_ret; summed over topics)"
    moments = "linear"

    def rank_weights(self, depth: int) -> np.ndarray:
        return np.ones(depth)

    def _binary_score(self, ranking, relevant):
        return relevant_retrieved(ranking, relevant)


register_measure(NumRet, family="NumRet", trec_eval="num_ret")
register_measure(NumRel, family="NumRel", trec_eval="num_rel")
register_measure(NumRelRet, family="NumRelRet", trec_eval="num_rel_ret")
