"""Which MAP: the three estimands a score can be an estimate of (docs/which-map.md).

``complete``
    The score once every document retrieved to the evaluation depth is judged:
    every unjudged document any run of the campaign retrieves is relevant with
    the model's p and counts in R (what the engine computed before it named it).
``pool``
    The score the runs would get had they been pooled together with the judged
    runs to the pool depth K (as a campaign pools a group's runs): every unjudged
    document some run of the campaign ranks within its top K is relevant with the
    model's p and counts in R; the other unjudged documents count as nonrelevant
    (nobody would have judged them). Every run and pair is scored on that one
    pool, so a pooled run's score moves too when the others bring relevant
    documents into it. Pooled alone (``pool_together=False``), a run's pool is
    the judged documents and its own top K (a pair's: both runs' top K), and a
    run that was pooled to K has its trec_eval score, with variance 0.
    Exact moments only (AP and the measures linear in relevance). The model's
    error on a run's would-be-pooled documents is shared by all of them (they
    are where the pooled runs, which the model learns from, say least): the
    variance of a mean over topics adds ``(group_sd · ∂E/∂δ)²``, ``δ`` one
    shift of the log-odds of every such document in every topic
    (:data:`POOL_GROUP_SD`; the delta method, E unchanged).
``qrels``
    trec_eval's number on the qrels given (unjudged = nonrelevant, as ``-c``):
    no model, variance 0.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..data import Campaign

#: Each estimand and what it is, as the tables say it.
ESTIMANDS = {
    "complete": "every retrieved document to the evaluation depth judged",
    "pool": "the runs pooled together with the judged runs to the pool depth",
    "qrels": "trec_eval on the qrels given, unjudged = nonrelevant",
}
#: Spread of the shared shift of the log-odds of a run's would-be-pooled documents (module
#: docstring): the spread whose ΔMAP intervals cover closest to 95% over leave-one-group-out
#: studies of DL 2019, DL 2021 and TREC-8 at depth 10, each group's runs pooled together as
#: the truth pools them; each collection's held-out number uses the spread chosen on the other
#: two, and each chose this one (examples/pool_coverage/README.md). ``relimpute newrun``,
#: whose target is the official qrels' score, has its own (bias.newrun.NEW_RUN_GROUP_SD).
POOL_GROUP_SD = 0.5
#: The step of the shift's numerical derivative (log-odds).
SHIFT_STEP = 1e-3
#: What gives each estimand, for the messages that refuse one.
EXACT_ONLY = "estimand 'pool' has exact moments only (AP and the measures linear in relevance)"


def check_estimand(estimand: str) -> str:
    """Validate an estimand name (``"complete"``, ``"pool"`` or ``"qrels"``)."""
    if estimand not in ESTIMANDS:
        raise ValueError(f"estimand must be one of {tuple(ESTIMANDS)}, got {estimand!r}")
    return estimand


def check_pool_group_sd(group_sd: float | None, estimand: str) -> float:
    """The spread of the pool estimand's shared shift (None: :data:`POOL_GROUP_SD`)."""
    if group_sd is None:
        return POOL_GROUP_SD
    if estimand != "pool":
        raise ValueError(f"pool_group_sd is the pool estimand's, not {estimand!r}'s")
    if not (np.isfinite(group_sd) and group_sd >= 0):
        raise ValueError(f"pool_group_sd must be a finite number >= 0, got {group_sd!r}")
    return float(group_sd)


def describe(estimand: str, depth: int | None = None, pool_depth: int | None = None) -> str:
    """One line naming the estimand, e.g. ``estimand: pool (the run pooled ... to depth 10)``."""
    text = ESTIMANDS[check_estimand(estimand)]
    if estimand == "complete":
        text = text.replace("the evaluation depth", f"depth {depth}" if depth else "full depth")
    elif estimand == "pool" and pool_depth is not None:
        text = text.replace("the pool depth", f"depth {pool_depth}")
    return f"estimand: {estimand} ({text})"


def judged_pool_depth(campaign: Campaign) -> int:
    """The pool depth the judgments show: the depth most runs are judged to on every topic.

    Per run, the largest k with its top k judged on every topic (a run pooled to depth K
    has at least K); the most common of these over the runs (the larger on a tie), at
    least 1. TREC DL 2019 passage gives 10, TREC-8 ad hoc 100.
    """
    prefix = np.full(campaign.n_systems, np.iinfo(np.int64).max, dtype=np.int64)
    for topic in campaign.topics:
        width = topic.ranking.shape[1]
        ranks = np.arange(width)[None, :]
        retrieved = ranks < topic.depth[:, None]
        docs = np.where(retrieved, topic.ranking, 0)
        unjudged = retrieved & ~topic.judged[docs]
        first = np.where(unjudged.any(axis=1), unjudged.argmax(axis=1), topic.depth)
        prefix = np.minimum(prefix, first)
    values, counts = np.unique(prefix, return_counts=True)
    best = values[counts == counts.max()].max() if len(values) else 1
    return max(int(best), 1)


def qrels_estimate(campaign: Campaign):
    """The estimate of the ``qrels`` estimand: judged relevant 1, everything else 0, no draws."""
    from ..relevance.base import RelevanceEstimate

    return RelevanceEstimate(
        query_ids=campaign.query_ids,
        doc_ids=tuple(t.doc_ids for t in campaign.topics),
        p=tuple(r.astype(np.float64) for r in campaign.relevant()),
        model="qrels",
    )


def without_variance(comparison):
    """The comparison with every variance 0 (``qrels``: Monte Carlo over identical draws
    leaves rounding of order 1e-32 there)."""
    from dataclasses import replace

    scores = comparison.scores
    scores = replace(scores, var_ap=np.zeros_like(scores.var_ap), var_map=np.zeros_like(scores.var_map))
    return replace(comparison, var_delta_map=np.zeros_like(comparison.var_delta_map), scores=scores)


def pooled_topic_moments(
    topic, view, p, pairs, pool_depth: int, rows, ratio, linear=None, slopes: bool = False,
    together: bool = False,
):  # fmt: skip
    """``(E (S,), Var (S,), E Δ (P,), Var Δ (P,))`` of one topic under the ``pool`` estimand,
    and with ``slopes`` ``∂E/∂δ`` of each (S,) and (P,): δ shifts the log-odds of the unjudged
    documents of the pool (module docstring).

    ``view`` is the topic's engine view of the campaign ``rows``. Each system is scored on its
    own pool, each pair on both runs' pool (``together``: every one on the pool of every run
    of the campaign, as :func:`pool_estimate` pools them, whichever ``rows`` are scored): p is
    0 outside the pool (nonrelevant) and every document counts in R, so
    E[R] = Σp over the pool. AP (``linear`` None, with ``ratio``)
    or a ``linear`` measure (:func:`~relimpute.confidence.linear.linear_moments`).
    """
    judged = topic.judged
    if together:
        tops = [topic.retrieved(None, pool_depth) & ~judged] * len(rows)
    else:
        tops = [topic.retrieved([row], pool_depth) & ~judged for row in rows]
    groups = [[(s,) for s in range(len(rows))], [tuple(pair) for pair in pairs.tolist()]]
    opened = [tops, [tops[a] | tops[b] for a, b in pairs.tolist()]]
    out = []
    for group, unjudged in zip(groups, opened):
        if not group:
            out.append((None, None, None))
            continue
        pools = [judged | u for u in unjudged]
        e, var = _moments(view, p, group, pools, ratio, linear)
        slope = _slopes(view, p, group, pools, unjudged, ratio, linear) if slopes else None
        out.append((e, var, slope))
    (e, var, slope), (e_d, var_d, slope_d) = out
    return (e, var, e_d, var_d, slope, slope_d) if slopes else (e, var, e_d, var_d)


def _slopes(view, p, groups, pools, unjudged, ratio, linear):
    """``∂E/∂δ`` of each group's measure (or difference), δ added to the log-odds of its
    ``unjudged`` documents (central difference of :data:`SHIFT_STEP`). One shifted vector
    serves every group: the documents another group opens lie outside this one's pool."""
    from scipy.special import expit, logit

    opened = np.logical_or.reduce(unjudged)
    if not opened.any():  # every top K judged: nothing to shift
        return np.zeros(len(groups))
    odds = logit(np.clip(p[opened], 1e-12, 1.0 - 1e-12))
    ends = []
    for step in (SHIFT_STEP, -SHIFT_STEP):
        moved = p.copy()
        moved[opened] = expit(odds + step)
        ends.append(_moments(view, moved, groups, pools, ratio, linear, mean_only=True)[0])
    return (ends[0] - ends[1]) / (2.0 * SHIFT_STEP)


def shared_shift_variance(topic_moments, index: int, group_sd: float) -> np.ndarray:
    """The variance the shared shift adds to each mean over topics, ``(group_sd · mean_t
    slope)²`` (one δ for every topic), from the slopes at ``index`` of each topic's
    :func:`pooled_topic_moments`."""
    slopes = np.stack([m[index] for m in topic_moments], axis=1)
    return (group_sd * slopes.mean(axis=1)) ** 2


def _moments(view, p, groups, pools, ratio, linear, mean_only: bool = False):
    """Mean and variance of the measure of each one-system group, or of the difference of
    each two-system group, with p kept on ``pools`` (one mask per group) and 0 elsewhere
    (``mean_only``: a pair's variance is left 0, its costly part skipped)."""
    from . import _kernels  # numba: imported when first needed
    from .linear import linear_moments
    from .moments import ratio_moments

    n = len(groups)
    out = np.zeros((5, n))  # E[Q], Var[Q], Cov(Q, R), E[R], Var[R] (or the linear mean, var)
    rank = np.broadcast_to(np.arange(1.0, view.ranking.shape[1] + 1.0), (2, view.ranking.shape[1]))
    rank = np.ascontiguousarray(rank)
    first_pair = (np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64))
    for i, (group, pool) in enumerate(zip(groups, pools)):
        q = np.where(pool, p, 0.0)
        ranking = np.ascontiguousarray(view.ranking[list(group)])
        depth = view.depth[list(group)]
        if linear is not None:
            chosen = None if len(group) == 1 else np.array([[0, 1]], dtype=np.int64)
            m = linear_moments(linear, ranking, depth, q, chosen)
            out[:2, i] = (m[0][0], m[1][0]) if len(group) == 1 else (m[2][0], m[3][0])
            continue
        v = q * (1.0 - q)
        k = len(group)
        eq, first, second, cov, g = _kernels.system_terms(ranking, rank[:k], depth, q, v)
        if k == 1:
            out[:3, i] = eq[0], first[0] + second[0], cov[0]
        elif mean_only:
            out[0, i] = eq[0] - eq[1]
        else:
            cf, cs = _kernels.pair_terms(ranking, rank, depth, g, v, len(q), *first_pair)
            var_dq = first[0] + first[1] - 2.0 * cf[0] + second[0] + second[1] - 2.0 * cs[0]
            out[:3, i] = eq[0] - eq[1], max(var_dq, 0.0), cov[0] - cov[1]
        out[3:, i] = q.sum(), v.sum()
    if linear is not None:
        return out[0], out[1]
    return ratio_moments(*out, ratio)


def pool_estimate(
    campaign: Campaign, estimate, depth: int, *, group_sd: float | None = None, rng=None,
    n_draws: int = 256,
):
    """The ``pool`` estimand by draws, for every run at once (the Monte Carlo route beside the
    engine's exact moments, for statistics of joint draws such as a run's rank): an unjudged
    document keeps its p and its posterior draws when some run ranks it within ``depth``
    (every run pooled together), else it is nonrelevant (p = 0: nobody would have judged it);
    in each draw the log-odds of every unjudged pool document move by one shift from
    N(0, group_sd²) (None: :data:`POOL_GROUP_SD`), shared by the topics and the runs, the
    draw-by-draw form of the exact route's ``(group_sd · ∂E/∂δ)²``. A model without posterior
    draws gets ``n_draws`` of them from the shift alone.
    """
    from dataclasses import replace

    from ..relevance.base import LazyDraws

    shift_sd = check_pool_group_sd(group_sd, "pool")
    keep = [topic.judged | topic.retrieved(None, depth) for topic in campaign.topics]
    p = tuple(np.where(mask, p, 0.0) for mask, p in zip(keep, estimate.p))
    draws = estimate.draws
    if shift_sd > 0 and draws is None:
        draws = LazyDraws(len(p), n_draws, partial(_repeated, p, n_draws))
    if draws is not None:
        m = draws.n_draws if isinstance(draws, LazyDraws) else int(draws[0].shape[0])
        shift = np.random.default_rng(rng).normal(0.0, shift_sd, m) if shift_sd > 0 else None
        unjudged = [mask & ~topic.judged for mask, topic in zip(keep, campaign.topics)]
        if isinstance(draws, LazyDraws):  # masked (and shifted) when a topic is read
            draws = draws.map(partial(_pooled_draws, keep, unjudged, shift))
        else:
            draws = [_pooled_draws(keep, unjudged, shift, t, d) for t, d in enumerate(draws)]
    return replace(estimate, p=p, draws=draws)


def _repeated(p, n_draws, t):
    return np.broadcast_to(p[t], (n_draws, len(p[t])))


def _pooled_draws(keep, unjudged, shift, t, draws):
    """Topic ``t``'s draws: 0 outside the pool, the unjudged pool documents' log-odds moved
    by each draw's shift."""
    out = np.where(keep[t], draws, 0.0)
    if shift is not None and unjudged[t].any():
        q = np.clip(out[:, unjudged[t]], 1e-12, 1 - 1e-12)
        logit = np.log(q) - np.log1p(-q) + shift[:, None]
        out[:, unjudged[t]] = 1.0 / (1.0 + np.exp(-logit))
    return out
