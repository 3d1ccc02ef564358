"""Inferred AP, infAP (Yilmaz & Aslam 2006), exactly as trec_eval computes ``infAP``.

For a judged sample of the pool, infAP estimates AP: at each judged relevant
document at rank k > 1 it adds
``1/k + ((k−1)/k) · (|d_{k−1}| / (k−1)) · (rel + ε) / (rel + nonrel + 2ε)``,
where among the k − 1 documents above, ``|d_{k−1}|`` are in the pool (judged,
or in the pool but unjudged) and ``rel`` / ``nonrel`` are judged relevant /
nonrelevant; at rank 1 it adds 1; the sum is divided by R, the topic's judged
relevant count (0 when R = 0). ε = 1e-5 as in trec_eval. Documents outside
the pool (no qrels line) count as nonrelevant; a document with a negative
qrels label is in the pool but unjudged (trec_eval ``form_res_rels.c``).

relimpute's :class:`~relimpute.data.Campaign` keeps a ``-1`` document unjudged
with grade ``-1``, so infAP counts it in the pool as trec_eval does. A judgment
hidden by :meth:`~relimpute.data.Campaign.with_judged` (simulation) counts as
outside the pool.
"""

from __future__ import annotations

import numpy as np

from ._ranked import as_binary, at_ranks, check_ranking, in_draw_chunks, ratio_or_zero
from ._registry import BinaryMeasure, register_measure
from .bpref import judged_classes

#: trec_eval's ``INFAP_EPSILON``.
EPSILON = 1e-5


def _exclusive_cumsum(values: np.ndarray) -> np.ndarray:
    """Counts of the ranks strictly above each rank."""
    return np.cumsum(values, axis=-1) - values


@in_draw_chunks
def inferred_ap(
    ranking: np.ndarray,
    relevant: np.ndarray,
    nonrelevant: np.ndarray,
    pooled_unjudged: np.ndarray,
) -> np.ndarray:
    """infAP of every system on one topic: ``(S,)`` or ``(B, S)``.

    ``relevant``, ``nonrelevant`` and ``pooled_unjudged`` are disjoint
    ``(n,)`` or ``(B, n)`` binary masks; every other document is outside the pool.
    """
    relevant = as_binary(relevant, "relevant")
    nonrelevant = as_binary(nonrelevant, "nonrelevant")
    pooled_unjudged = as_binary(pooled_unjudged, "pooled_unjudged")
    ranking = check_ranking(ranking, relevant.shape[-1])
    rel_at = at_ranks(ranking, relevant).astype(np.float64)
    rel_above = _exclusive_cumsum(rel_at)
    nonrel_above = _exclusive_cumsum(at_ranks(ranking, nonrelevant).astype(np.float64))
    unjudged_above = _exclusive_cumsum(at_ranks(ranking, pooled_unjudged).astype(np.float64))
    k = np.arange(1.0, ranking.shape[1] + 1.0)  # 1-based rank
    above = np.maximum(k - 1.0, 1.0)  # avoids 0/0 at rank 1, which adds 1 below
    pooled_share = (rel_above + nonrel_above + unjudged_above) / above
    precision = (rel_above + EPSILON) / (rel_above + nonrel_above + 2.0 * EPSILON)
    term = 1.0 / k + ((k - 1.0) / k) * pooled_share * precision
    total = (rel_at * term).sum(axis=-1)
    n_rel = relevant.sum(axis=-1, dtype=np.float64)[..., None]
    return ratio_or_zero(total, n_rel)


class InfAP(BinaryMeasure):
    """Inferred average precision."""

    description = "inferred AP from a judged sample of the pool (trec_eval infAP)"

    def _score(self, ranking, labels, judged, rel_threshold, gain):
        relevant, nonrelevant = judged_classes(self, labels, judged, rel_threshold)
        in_pool = labels < 0  # judged negative grades and pooled-but-unjudged (-1) alike
        return inferred_ap(ranking, relevant, nonrelevant, in_pool)


register_measure(InfAP, family="infAP", trec_eval="infAP")
