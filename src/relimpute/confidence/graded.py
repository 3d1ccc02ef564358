"""Monte Carlo over grades: unjudged documents drawn at every grade, not only relevant or not.

With an estimate that carries grades (:class:`~relimpute.relevance.grades.GradeShares`),
a measure that reads grades (one whose registry entry says ``graded``: ``nDCG@k``,
``DCG@k``, ``ERR@k``) gets, per draw, each unjudged document's grade drawn from its distribution: one uniform ``U`` per document gives grade ``l_m``,
``m = #{k ≥ 1 : U < P(G ≥ l_k)}`` (``docs/math/fusion.md``, "Monte Carlo over grades").
``G`` is relevant exactly when ``U < p``; binary measures keep the binary path. With
drawn cut-points (:attr:`~relimpute.relevance.grades.GradeShares.cut_draws`) posterior draw
``m`` splits relevance into grades at its own cut-points, one split per topic and draw. A
document with ``p = 0`` may still hold a grade below the threshold that has a gain, so
it is drawn too (:func:`possible`). Judged documents keep their grades.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..data import Campaign
from ..relevance.base import RelevanceEstimate


def graded_scorer(measure: str, campaign: Campaign, estimate: RelevanceEstimate) -> Callable | None:
    """``score(t, view, uncertain, u, prob, index=None) -> (B, S)`` scores with drawn grades
    (``index``: the posterior draws of ``prob``'s rows, whose split of relevance into grades
    they take), or None when the estimate has no grades or the measure does not read grades
    (binary paths)."""
    from ..measures import parse_measure

    shares = estimate.grades
    parsed = parse_measure(measure)
    if shares is None or not parsed.graded:  # the measure declares whether it reads grades
        return None
    threshold = campaign.rel_threshold

    def score(t, view, uncertain, u, prob, index=None):
        topic = campaign.topics[t]
        base = np.where(topic.judged, topic.grades, 0).astype(np.int64)
        labels = np.repeat(base[None, :], len(u), axis=0)
        labels[:, uncertain] = shares.draw(t, u, prob, uncertain, index)
        keep = np.arange(view.ranking.shape[1])[None, :] < view.depth[:, None]
        return parsed.score(np.where(keep, view.ranking, -1), labels, rel_threshold=threshold)

    return score


def possible(estimate: RelevanceEstimate, t: int, possible_p: np.ndarray) -> np.ndarray:
    """Per document of topic ``t``, a number > 0 where some grade above the lowest can be
    drawn: ``possible_p`` (the largest p over the draws) plus the share of the lowest
    nonrelevant grade with a gain."""
    below = estimate.grades.below[t]
    return possible_p + (below[:, 0] if below.shape[1] else 0.0)
