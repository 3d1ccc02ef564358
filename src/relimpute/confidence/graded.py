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


def dcg_draws(measure: str, campaign: Campaign, estimate: RelevanceEstimate) -> Callable | None:
    """``draws(t, view, uncertain, p, post, n_draws, rng, max_elements) -> (n_draws, S)``: nDCG
    or DCG per draw with drawn grades by
    :func:`~relimpute.confidence._graded_kernels.dcg_monte_carlo` (its cost follows the
    documents drawn above the lowest grade, not the documents), or None where the general
    scorer of :func:`graded_scorer` is needed (no grades, another measure, a grade above 64
    or a lowest level above 0)."""
    from ..measures import parse_measure
    from ..measures.ndcg import DCG, NDCG, _discounts, gain_values

    shares = estimate.grades
    parsed = parse_measure(measure)
    if shares is None or type(parsed) not in (NDCG, DCG) or parsed.params:
        return None
    levels = np.asarray(shares.levels, dtype=np.int64)
    judged = max(int(topic.grades[topic.judged].max(initial=0)) for topic in campaign.topics)
    top = max(int(levels[-1]), judged, 0)
    if levels[0] > 0 or top > 64:
        return None
    gain_of = gain_values(np.arange(top + 1))
    step_of = np.r_[0.0, np.diff(gain_of)]

    def draws(t, view, uncertain, p, post, n_draws, rng, max_elements):
        from . import _kernels
        from ._graded_kernels import dcg_monte_carlo
        from .montecarlo import _halving_blocks

        topic = campaign.topics[t]
        base = np.where(topic.judged, topic.grades, 0).astype(np.int64)
        width, ideal = view.ranking.shape[1], topic.n_docs
        if parsed.cutoff is not None:
            width, ideal = min(width, parsed.cutoff), min(ideal, parsed.cutoff)
        limit = np.minimum(view.depth, width)
        ranked, rest, col, starts = _split_documents(view, limit, uncertain, base, ideal)
        if not isinstance(parsed, NDCG):
            rest = rest[:0]  # without the ideal DCG, documents no system ranks do not matter
        if len(rest):
            point = shares.at_least(t, p[rest], rest)[:, col]  # the order to draw them in
            rest = rest[np.argsort(-point, kind="stable")]
            starts = len(ranked) + _halving_blocks(np.sort(point)[::-1])
        docs = np.concatenate([ranked, rest]).astype(np.int64)
        n_post = 1 if post is None else len(post)
        group = max(1, max_elements // max(len(docs) * (len(levels) - 1), 1))
        out = np.empty((n_draws, len(view.depth)))
        state = _kernels._mt_seed(int(rng.integers(2**32)))
        uniform = np.empty(_kernels.MT_N // 2)
        cursor = np.array([len(uniform)], dtype=np.int64)
        for lo in range(0, min(n_post, n_draws), group):
            rows = np.arange(lo, min(lo + group, n_post, n_draws), dtype=np.int64)
            if post is None:
                exceed = shares.at_least(t, p[docs][None, :], docs)
            else:
                exceed = shares.at_least(t, post[rows][:, docs], docs, rows)
            dcg_monte_carlo(
                view.ranking, limit, base, docs, np.ascontiguousarray(exceed, dtype=np.float64),
                rows, n_post, len(ranked), col, np.asarray(starts, dtype=np.int64), levels,
                gain_of, step_of, np.r_[0.0, np.cumsum(_discounts(ideal))], _discounts(width),
                isinstance(parsed, NDCG), out, state, uniform, cursor,
            )
        return out

    def _split_documents(view, limit, uncertain, base, ideal):
        """The uncertain documents some system ranks within ``limit`` and the others that can
        change the ideal DCG (grade above the saturated levels), the column of ``at_least``
        that is the latter's lowest unsaturated level, and empty blocks."""
        within = np.arange(view.ranking.shape[1])[None, :] < limit[:, None]
        is_ranked = np.zeros(len(base), dtype=bool)
        is_ranked[view.ranking[within]] = True
        ranked = uncertain[is_ranked[uncertain]]
        rest = uncertain[~is_ranked[uncertain]]
        # a level whose fixed grades alone fill the ideal list: its count never changes it
        open_levels = [
            k for k in range(1, len(levels)) if levels[k] > 0 and (base >= levels[k]).sum() < ideal
        ]
        if not open_levels:
            return ranked, rest[:0], 0, np.full(1, len(ranked))
        return ranked, rest, open_levels[0] - 1, np.full(1, len(ranked))

    return draws


def possible(estimate: RelevanceEstimate, t: int, possible_p: np.ndarray) -> np.ndarray:
    """Per document of topic ``t``, a number > 0 where some grade above the lowest can be
    drawn: ``possible_p`` (the largest p over the draws) plus the share of the lowest
    nonrelevant grade with a gain."""
    below = estimate.grades.below[t]
    return possible_p + (below[:, 0] if below.shape[1] else 0.0)
