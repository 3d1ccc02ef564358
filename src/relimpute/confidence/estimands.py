"""Which MAP: the three estimands a score can be an estimate of (docs/which-map.md).

``complete``
    The score once every document retrieved to the evaluation depth is judged:
    every unjudged document any run of the campaign retrieves is relevant with
    the model's p and counts in R (what the engine computed before it named it).
``pool``
    The score the run would get had it been pooled with the judged runs to the
    pool depth K: its unjudged documents within its top K are relevant with the
    model's p and count in R; the unjudged documents it ranks below K count as
    nonrelevant (nobody would have judged them). For a pair the pool is the
    judged documents and the top K of both runs, so both scores see the same
    relevance on the same documents. A run that was pooled to K has no unjudged
    document in its top K: its ``pool`` score is trec_eval's, with variance 0.
    Exact moments only (AP and the measures linear in relevance).
``qrels``
    trec_eval's number on the qrels given (unjudged = nonrelevant, as ``-c``):
    no model, variance 0.
"""

from __future__ import annotations

import numpy as np

from ..data import Campaign

#: Each estimand and what it is, as the tables say it.
ESTIMANDS = {
    "complete": "every retrieved document to the evaluation depth judged",
    "pool": "the run pooled with the judged runs to the pool depth",
    "qrels": "trec_eval on the qrels given, unjudged = nonrelevant",
}
#: What gives each estimand, for the messages that refuse one.
EXACT_ONLY = "estimand 'pool' has exact moments only (AP and the measures linear in relevance)"


def check_estimand(estimand: str) -> str:
    """Validate an estimand name (``"complete"``, ``"pool"`` or ``"qrels"``)."""
    if estimand not in ESTIMANDS:
        raise ValueError(f"estimand must be one of {tuple(ESTIMANDS)}, got {estimand!r}")
    return estimand


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


def pooled_topic_moments(topic, view, p, pairs, pool_depth: int, moments, rows):
    """``(E (S,), Var (S,), E Δ (P,), Var Δ (P,))`` of one topic under the ``pool`` estimand.

    ``view`` is the topic's engine view of the campaign ``rows``; ``moments(view, q,
    pairs)`` the engine's moments with ``q`` the probabilities (0 outside the pool; every
    document counts in R, so E[R] = Σq). Each system is scored on its own pool, each pair
    on both runs' pool.
    """
    judged = topic.judged
    tops = []
    for row in rows:
        top = np.zeros(topic.n_docs, dtype=bool)
        docs = topic.ranking[row, :pool_depth]
        top[docs[docs >= 0]] = True
        tops.append(top & ~judged)
    n_sys = len(rows)
    e = np.empty(n_sys)
    var = np.empty(n_sys)
    for s in range(n_sys):
        q = np.where(judged | tops[s], p, 0.0)
        out = moments(_rows_of(view, [s]), q, np.zeros((0, 2), dtype=np.int64))
        e[s], var[s] = out[0][0], out[1][0]
    if not len(pairs):
        return e, var, None, None
    e_d = np.empty(len(pairs))
    var_d = np.empty(len(pairs))
    one = np.array([[0, 1]], dtype=np.int64)
    for i, (a, b) in enumerate(pairs.tolist()):
        q = np.where(judged | tops[a] | tops[b], p, 0.0)
        out = moments(_rows_of(view, [a, b]), q, one)
        e_d[i], var_d[i] = out[2][0], out[3][0]
    return e, var, e_d, var_d


def _rows_of(view, index):
    """The view of some of its systems, every document counted (R = Σq)."""
    ranking = np.ascontiguousarray(view.ranking[index])
    counted = np.ones(view.counted.shape, dtype=bool)
    return type(view)(ranking, view.depth[index], counted)
