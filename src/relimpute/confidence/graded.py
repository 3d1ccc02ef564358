"""Monte Carlo over grades: unjudged documents drawn at every grade, not only relevant or not.

With an estimate that carries grades (:class:`~relimpute.relevance.grades.GradeShares`),
a measure scored by its :mod:`relimpute.measures` kernel (``nDCG@k``, ``ERR@k``, any
measure other than AP and the linear ones) gets, per draw, each unjudged document's
grade drawn from its distribution: one uniform ``U`` per document gives grade ``l_m``,
``m = #{k ≥ 1 : U < P(G ≥ l_k)}`` (``docs/math/fusion.md``, "Monte Carlo over grades").
The uniforms are those of the binary path, and ``G`` is relevant exactly when
``U < p``, so binary measures score the same draws as without grades. Judged documents
keep their grades.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..data import Campaign
from ..relevance.base import RelevanceEstimate
from .linear import canonical_name, parse_linear


def graded_scorer(measure: str, campaign: Campaign, estimate: RelevanceEstimate) -> Callable | None:
    """``score(t, view, uncertain, u, prob) -> (B, S)`` scores with drawn grades, or None
    when the estimate has no grades or the measure is AP or linear (binary paths)."""
    shares = estimate.grades
    name = canonical_name(measure)
    if shares is None or name == "AP" or parse_linear(name) is not None:
        return None
    from ..measures import parse_measure

    parsed = parse_measure(name)
    threshold = campaign.rel_threshold

    def score(t, view, uncertain, u, prob):
        topic = campaign.topics[t]
        base = np.where(topic.judged, topic.grades, 0).astype(np.int64)
        labels = np.repeat(base[None, :], len(u), axis=0)
        labels[:, uncertain] = shares.draw(t, u, prob, uncertain)
        keep = np.arange(view.ranking.shape[1])[None, :] < view.depth[:, None]
        return parsed.score(np.where(keep, view.ranking, -1), labels, rel_threshold=threshold)

    return score
