"""Bpref (Buckley & Voorhees 2004, §4), exactly as trec_eval computes ``bpref``.

Bpref uses judged documents only: with R judged relevant and N judged
nonrelevant documents for the topic,
``bpref = (1/R) Σ_{r judged relevant, retrieved} (1 − min(n_r, R) / min(N, R))``,
where ``n_r`` is the number of judged nonrelevant documents ranked above r
(a term is 1 when ``n_r = 0``, so N = 0 divides nothing). Unjudged documents
are skipped. Following trec_eval (``form_res_rels.c``), a document with a
negative label is in the pool but unjudged: it is neither relevant nor
nonrelevant and does not count in N. A topic with R = 0 scores 0.
"""

from __future__ import annotations

import numpy as np

from ._ranked import as_binary, at_ranks, check_ranking, in_draw_chunks, ratio_or_zero
from ._registry import BinaryMeasure, Measure, register_measure


@in_draw_chunks
def bpref(ranking: np.ndarray, relevant: np.ndarray, nonrelevant: np.ndarray) -> np.ndarray:
    """Bpref of every system on one topic: ``(S,)`` or ``(B, S)``.

    ``relevant`` and ``nonrelevant`` are disjoint ``(n,)`` or ``(B, n)`` binary
    masks of the judged relevant and judged nonrelevant documents; every other
    document is unjudged.
    """
    relevant = as_binary(relevant, "relevant")
    nonrelevant = as_binary(nonrelevant, "nonrelevant")
    if nonrelevant.shape[-1] != relevant.shape[-1]:
        raise ValueError("relevant and nonrelevant must cover the same documents")
    if (relevant & nonrelevant).any():
        raise ValueError("a document cannot be both relevant and nonrelevant")
    ranking = check_ranking(ranking, relevant.shape[-1])
    n_rel = relevant.sum(axis=-1, dtype=np.float64)[..., None, None]
    n_nonrel = nonrelevant.sum(axis=-1, dtype=np.float64)[..., None, None]
    hits = at_ranks(ranking, relevant)
    above = np.cumsum(at_ranks(ranking, nonrelevant), axis=-1) - at_ranks(ranking, nonrelevant)
    denominator = np.minimum(n_nonrel, n_rel)  # 0 only when R = 0 (no term) or N = 0 (above = 0)
    penalty = np.divide(
        np.minimum(above, n_rel),
        denominator,
        out=np.zeros(above.shape),
        where=(above > 0) & (denominator > 0),
    )
    total = np.where(hits, 1.0 - penalty, 0.0).sum(axis=-1)
    n_rel = n_rel[..., 0]
    return ratio_or_zero(total, n_rel)


def judged_classes(measure: Measure, labels, judged, rel_threshold):
    """trec_eval's judged relevant and judged nonrelevant masks (negative labels: unjudged)."""
    known = labels >= 0 if judged is None else judged & (labels >= 0)
    relevant = measure.relevant(labels, judged, rel_threshold) & known
    return relevant, known & ~relevant


class Bpref(BinaryMeasure):
    """Bpref over judged documents."""

    description = "binary preference over judged documents (trec_eval bpref)"

    def _score(self, ranking, labels, judged, rel_threshold, gain):
        return bpref(ranking, *judged_classes(self, labels, judged, rel_threshold))


register_measure(Bpref, family="Bpref", aliases=("BPref",), trec_eval="bpref")
