"""Monte Carlo confidence: draw relevance, score exactly, summarise (Carterette 2007 §2.1).

Each draw is a full relevance vector for every topic: the documents whose
relevance counts (judged ones, and unjudged ones retrieved by any run of the campaign)
keep their judged label or are drawn Bernoulli(p), independently. With posterior draws of p
(``estimate.draws``), draw ``d`` uses posterior draw ``d mod M`` in every
topic, so parameter uncertainty is shared across topics as the model says.
Every system of the run set is scored on the same draw (paired comparisons),
AP with the drawn R exactly (AP = 0 when R = 0). Draws are processed in
chunks of bounded size.

Topics are processed one at a time, all draws of a topic before the next (a
model's posterior draws may be computed per topic when read, see
:class:`~relimpute.relevance.base.LazyDraws`).

Measures: ``"AP"`` uses a numba kernel (the hot path,
:func:`~relimpute.confidence._kernels.ap_monte_carlo`) that draws only the
relevant documents (thinning) and scores AP from their ranks, so its cost
follows the expected number of relevant documents, not the run depth; it
equals the dense kernel's AP draw for draw and
:func:`relimpute.measures.average_precision` (tested); linear measures
(:mod:`relimpute.confidence.linear`) are a sparse product; any other
:mod:`relimpute.measures` name (``nDCG@10``, ``Rprec``, ...) is scored by its
kernel with labels ``grade`` for judged documents and ``rel_threshold`` for
drawn-relevant unjudged ones (so a drawn relevant document has the lowest
relevant grade's gain in nDCG), or, when the estimate carries grades, with each
unjudged document's grade drawn from the same uniform
(:mod:`relimpute.confidence.graded`); nDCG and DCG then by a numba kernel that draws, by
thinning, only the grades that can change a score (:func:`dcg_draws`,
:mod:`relimpute.confidence._graded_kernels`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..data import Campaign
from ..measures import parse_measure
from ..relevance.base import RelevanceEstimate, as_generator
from .graded import graded_scorer
from .graded import possible as graded_possible
from .linear import weight_matrix
from .results import PARAMETERS, Comparison, SystemScores


def simulate(
    campaign: Campaign,
    estimate: RelevanceEstimate,
    views,
    names: tuple[str, ...],
    pairs: np.ndarray,
    *,
    n_draws: int,
    rng,
    measure: str,
    use_posterior_draws: bool,
    max_elements: int,
    topic_draws: np.ndarray | None = None,
    estimand: str = "complete",
) -> Comparison:
    """Monte Carlo :class:`Comparison` (with its :class:`SystemScores`); see the module docstring.

    ``topic_draws``, a ``(n_draws, S, T)`` array when given, receives every draw's
    score per system and topic (for :mod:`relimpute.confidence.topic_bootstrap`).
    """
    rng = as_generator(rng)
    scorer, label = _scorer(measure, campaign.rel_threshold)
    graded = graded_scorer(measure, campaign, estimate)
    fast_graded = dcg_draws(measure, campaign, estimate)  # nDCG, DCG: drawn by thinning
    posterior = estimate.draws if use_posterior_draws and estimate.draws is not None else None
    n_sys, n_topics = len(names), campaign.n_topics
    per_draw = max(
        max(view.ranking.size for view in views),
        max(topic.n_docs for topic in campaign.topics),
    )
    chunk = int(max(1, min(n_draws, max_elements // max(per_draw, 1))))

    sums = np.zeros((n_sys, n_topics))
    squares = np.zeros((n_sys, n_topics))
    mean_draws = np.zeros((n_draws, n_sys))
    from ..progress import progress

    # topic by topic (a model's posterior draws may be computed per topic when read), all the
    # draws of one topic before the next: each draw's mean over topics adds them in order
    for t in progress(range(n_topics), desc="Monte Carlo", unit="topic"):
        topic, view = campaign.topics[t], views[t]
        p = np.asarray(estimate.p[t], dtype=np.float64)
        relevant = topic.relevant(campaign.rel_threshold)
        post = None if posterior is None else posterior[t]
        if post is not None and post.shape[1:] != p.shape:
            raise ValueError(f"topic {topic.query_id}: posterior draws have shape {post.shape}")
        possible = p if post is None else post.max(axis=0)
        if graded is not None:  # a grade below the threshold may have a gain where p = 0
            possible = graded_possible(estimate, t, possible)
        uncertain = uncertain_documents(view, topic, possible)
        if scorer is _score_ap:
            scores = _ap_draws(view, relevant, uncertain, p, post, n_draws, rng)
            _accumulate(t, scores, 0, sums, squares, mean_draws, topic_draws, n_topics)
            continue
        if fast_graded is not None:
            scores = fast_graded(t, view, uncertain, p, post, n_draws, rng, max_elements)
            _accumulate(t, scores, 0, sums, squares, mean_draws, topic_draws, n_topics)
            continue
        for start in range(0, n_draws, chunk):
            size = min(chunk, n_draws - start)
            index = None if post is None else (start + np.arange(size)) % post.shape[0]
            prob = p[uncertain][None, :] if post is None else post[index][:, uncertain]
            # float32 uniforms: half the cost; p is resolved to 2^-24
            u = rng.random((size, len(uncertain)), dtype=np.float32)
            if graded is not None:  # the same uniforms draw grades (confidence.graded)
                scores = graded(t, view, uncertain, u, prob, index)
            else:
                scores = scorer(topic, view, relevant, uncertain, u < prob)
            _accumulate(t, scores, start, sums, squares, mean_draws, topic_draws, n_topics)

    e_topic = sums / n_draws
    var_topic = np.maximum(squares / n_draws - e_topic**2, 0.0)
    scores = SystemScores(
        systems=names,
        query_ids=campaign.query_ids,
        e_ap=e_topic,
        var_ap=var_topic,
        e_map=mean_draws.mean(axis=0),
        var_map=mean_draws.var(axis=0),
        measure=label,
        method="monte carlo",
        ratio=None,
        draws=mean_draws,
        sources="unjudged documents" + ("" if posterior is None else f" + {PARAMETERS}"),
        estimand=estimand,
        clusters=None if posterior is None else estimate.n_draws,
    )
    e_delta, var_delta, p_better = _pair_summaries(mean_draws, pairs)
    return Comparison(
        pairs=pairs,
        e_delta_map=e_delta,
        var_delta_map=var_delta,
        p_a_better=p_better,
        scores=scores,
    )


def dcg_draws(measure: str, campaign: Campaign, estimate: RelevanceEstimate) -> Callable | None:
    """``draws(t, view, uncertain, p, post, n_draws, rng, max_elements) -> (n_draws, S)``: nDCG
    or DCG per draw with drawn grades by
    :func:`~relimpute.confidence._graded_kernels.dcg_monte_carlo` (its cost follows the
    documents drawn above the levels the judged grades fill, not the documents), or None where
    the general scorer of :func:`graded_scorer` is needed (no grades, another measure, a grade
    above 64 or a lowest level above 0)."""
    from ..measures import parse_measure
    from ..measures.ndcg import DCG, NDCG, dcg_discounts, gain_values

    shares = estimate.grades
    parsed = parse_measure(measure)
    if shares is None or type(parsed) not in (NDCG, DCG) or parsed.params:
        return None
    levels = np.asarray(shares.levels, dtype=np.int64)
    judged = max((int(t.grades[t.judged].max(initial=0)) for t in campaign.topics), default=0)
    top = max(int(levels[-1]), judged, 0)
    if levels[0] > 0 or top > 64:
        return None
    gain_of = gain_values(np.arange(top + 1))
    step_of = np.r_[0.0, np.diff(gain_of)]

    def draws(t, view, uncertain, p, post, n_draws, rng, max_elements):
        from . import _kernels
        from ._graded_kernels import dcg_monte_carlo

        topic = campaign.topics[t]
        base = np.where(topic.judged, topic.grades, 0).astype(np.int64)
        width, ideal = view.ranking.shape[1], topic.n_docs
        if parsed.cutoff is not None:
            width, ideal = min(width, parsed.cutoff), min(ideal, parsed.cutoff)
        limit = np.minimum(view.depth, width)
        ranked, rest, col = _split_documents(view, limit, uncertain, base, ideal)
        starts = np.full(1, len(ranked))  # no blocks: nothing drawn by thinning
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
                gain_of, step_of, np.r_[0.0, np.cumsum(dcg_discounts(ideal))], dcg_discounts(width),
                isinstance(parsed, NDCG), out, state, uniform, cursor,
            )
        return out

    def _split_documents(view, limit, uncertain, base, ideal):
        """The uncertain documents some system ranks within ``limit`` and the others that can
        change the ideal DCG (grade above the saturated levels), the column of ``at_least``
        that is the latter's lowest unsaturated level."""
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
            return ranked, rest[:0], 0
        return ranked, rest, open_levels[0] - 1

    return draws


def _accumulate(t, scores, start, sums, squares, mean_draws, topic_draws, n_topics) -> None:
    """Add topic ``t``'s ``scores (B, S)`` of draws ``start..start + B``."""
    sums[:, t] += scores.sum(axis=0)
    squares[:, t] += (scores**2).sum(axis=0)
    mean_draws[start : start + len(scores)] += scores / n_topics
    if topic_draws is not None:
        topic_draws[start : start + len(scores), :, t] = scores


def uncertain_documents(view, topic, possible: np.ndarray) -> np.ndarray:
    """Indices of the documents a draw decides: counted towards R, unjudged, and possibly
    relevant (``possible``: p, or its largest posterior draw)."""
    return np.flatnonzero(view.counted & ~topic.judged & (possible > 0.0))


def _ap_draws(view, relevant, uncertain, p, post, n_draws, rng) -> np.ndarray:
    """``(n_draws, S)`` AP per draw by :func:`~relimpute.confidence._kernels.ap_monte_carlo`
    (draws only the relevant documents: its cost follows Σ p, not the documents)."""
    from . import _kernels  # numba: imported when first needed

    order = uncertain[np.argsort(-p[uncertain], kind="stable")]  # most probable first
    probs = p[None, :] if post is None else post  # read at ``order`` by the kernel
    return _kernels.ap_monte_carlo(
        view.ranking,
        view.depth,
        relevant.view(np.uint8),
        order.astype(np.int64),
        np.ascontiguousarray(probs, dtype=np.float64),
        _halving_blocks(p[order]),
        n_draws,
        int(rng.integers(2**32)),
    )


def _halving_blocks(p: np.ndarray, size: int = 128) -> np.ndarray:
    """Starts of the blocks of ``p`` (sorted decreasing) within a factor 2 of their first
    value and of at most ``size`` documents, then ``len(p)``; the zeros form the last blocks."""
    if not len(p):
        return np.zeros(1, dtype=np.int64)
    with np.errstate(divide="ignore"):
        level = np.floor(np.log2(p[0] / p)) if p[0] > 0 else np.zeros(len(p))
    level = np.where(np.isfinite(level), level, np.inf)
    starts = np.flatnonzero(np.r_[True, level[1:] != level[:-1]])
    ends = np.r_[starts[1:], len(p)]
    starts = np.concatenate([np.arange(a, e, size) for a, e in zip(starts, ends)])
    return np.r_[starts, len(p)].astype(np.int64)


def _pair_summaries(mean_draws: np.ndarray, pairs: np.ndarray):
    """Mean, variance and P(Δ > 0) (ties ½) of ΔMAP per pair, by
    :func:`~relimpute.confidence._kernels.pair_summaries` (one pass per pair, no ``(B, P)``
    array of differences)."""
    from . import _kernels  # numba: imported when first needed

    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    draws_t = np.ascontiguousarray(np.asarray(mean_draws, dtype=np.float64).T)
    return _kernels.pair_summaries(draws_t, pairs[:, 0].copy(), pairs[:, 1].copy())


def _scorer(measure: str, rel_threshold: int):
    """A function ``(topic, view, relevant, uncertain, drawn) -> (B, S)`` and the measure's name.

    The registry says which path: the AP kernel, rank weights for a linear
    measure (``Measure.exact_moments()``), else the measure's own scorer.
    """
    parsed = parse_measure(measure)
    if parsed.exact_moments() == "ratio":
        return _score_ap, str(parsed)
    if parsed.exact_moments() == "linear":

        def score_linear(topic, view, relevant, uncertain, drawn):
            w = weight_matrix(parsed, view.ranking, view.depth, topic.n_docs)
            fixed = w @ relevant.astype(np.float64)
            return fixed[None, :] + (w[:, uncertain] @ drawn.T.astype(np.float64)).T

        return score_linear, str(parsed)

    def score_generic(topic, view, relevant, uncertain, drawn):
        base = np.where(topic.judged, topic.grades, 0).astype(np.int64)
        labels = np.repeat(base[None, :], len(drawn), axis=0)
        labels[:, uncertain] = np.where(drawn, rel_threshold, 0)
        ranking = _pad_to_depth(view)
        return parsed.score(ranking, labels, rel_threshold=rel_threshold)

    return score_generic, str(parsed)


def _score_ap(topic, view, relevant, uncertain, drawn):
    """AP of every system per draw with the numba kernel (equals relimpute.measures AP)."""
    from . import _kernels  # numba: imported when first needed

    base = relevant.astype(np.float64)
    return _kernels.average_precision_draws(
        view.ranking,
        view.depth,
        base,
        uncertain.astype(np.int64),
        drawn.view(np.uint8),
        int(relevant.sum()),
    )


def _pad_to_depth(view) -> np.ndarray:
    """The view's ranking with positions beyond each system's (truncated) depth set to -1."""
    keep = np.arange(view.ranking.shape[1])[None, :] < view.depth[:, None]
    return np.where(keep, view.ranking, -1)
