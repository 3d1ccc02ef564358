"""The runs' evidence about each document and how deep the judging followed the runs.

The rank-fusion model's features, the runs' votes, the judged prefixes and the
pool depth (``docs/math/fusion.md``, "Evidence" and "Which judged documents it
learns from"); :mod:`relimpute.relevance.fusion` fits on them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...data import Campaign, TopicData

N_FEATURES = 3
FEATURE_NAMES = ("log_fused_rr", "log_share_retrieving", "log_best_rank")


@dataclass(frozen=True, slots=True)
class TopicEvidence:
    """The runs' evidence about every document of one topic.

    Attributes
    ----------
    features
        ``(n, 3)`` raw features (``docs/math/fusion.md``), unstandardised.
    best_rank
        ``(n,)`` best rank over the covering runs (``inf`` if no run retrieves it).
    votes
        ``(n, S)`` sparse: run ``j``'s vote ``1 / log2(1 + r_ij)`` for the
        documents it retrieves (the feature of its run effect).
    within
        ``(n,)`` bool: ranked by some run within both its judged prefix
        (:func:`judged_prefixes`) and the topic's pool depth: the pool.
    horizon
        The topic's pool depth ``k_t`` (:func:`pool_depth`).
    """

    features: np.ndarray
    best_rank: np.ndarray
    votes: sp.csr_matrix
    within: np.ndarray
    horizon: int


def topic_evidence(topic: TopicData, rrf_offset: float) -> TopicEvidence:
    """Features, runs' votes, best ranks and pool of one topic (``docs/math/fusion.md``)."""
    n = topic.n_docs
    n_cover = max(int((topic.depth > 0).sum()), 1)
    rows, cols = np.nonzero(topic.ranking >= 0)
    docs = topic.ranking[rows, cols]
    rank = cols + 1.0
    deepest = float(topic.ranking.shape[1])
    fused = np.bincount(docs, weights=1.0 / (rrf_offset + rank), minlength=n) / n_cover
    share = np.bincount(docs, minlength=n) / n_cover
    best = np.full(n, np.inf)
    np.minimum.at(best, docs, rank)
    # a document no run retrieves: as if one run had it just below the deepest rank
    beyond = 1.0 / (rrf_offset + deepest + 1.0) / n_cover
    features = np.column_stack(
        [
            np.log(np.where(share > 0, fused, beyond)),
            np.log(np.where(share > 0, share, 1.0 / n_cover)),
            np.log(np.where(np.isfinite(best), best, deepest + 1.0)),
        ]
    )
    votes = sp.csr_matrix(
        (1.0 / np.log2(1.0 + rank), (docs, rows)), shape=(n, len(topic.depth))
    )
    prefix = judged_prefixes(topic)
    depth = pool_depth(prefix[topic.depth > 0])
    inside = cols < np.minimum(prefix[rows], depth)
    within = np.zeros(n, dtype=bool)
    within[docs[inside]] = True
    return TopicEvidence(features, best, votes, within, depth)


def pool_depth(prefixes: np.ndarray) -> int:
    """The depth to which judging followed the ranks, from the runs' judged prefixes.

    Runs left out of a pool have short prefixes and judging beyond the pool
    (active learning) extends some prefixes at random; the lower quartile of
    the prefixes that reach at least half the median prefix is robust to both.
    """
    if not len(prefixes):
        return 0
    long = prefixes[prefixes >= np.median(prefixes) / 2]
    return int(np.floor(np.quantile(long, 0.25)))


def judged_prefixes(topic: TopicData) -> np.ndarray:
    """``(S,)`` per run, how many of its top documents are judged before the first
    unjudged one: how deep the judging reached into each run."""
    valid = topic.ranking >= 0
    unjudged = valid & ~topic.judged[np.maximum(topic.ranking, 0)]
    unjudged |= ~valid  # the end of the run stops the prefix too
    if not unjudged.shape[1]:  # no run retrieves anything for this topic
        return np.zeros(len(unjudged), dtype=np.int64)
    return np.where(unjudged.any(axis=1), np.argmax(unjudged, axis=1), topic.ranking.shape[1])


def fit_mask(topic: TopicData, ev: TopicEvidence) -> np.ndarray:
    """The judged documents the model learns from: those within the pool horizon
    (all judged documents when the judging follows no run's ranks; none in a topic
    no run retrieves for, whose documents carry no evidence of the runs)."""
    if not _retrieved_any(topic):
        return np.zeros(topic.n_docs, dtype=bool)
    if not ev.within.any():
        return topic.judged.copy()
    return topic.judged & ev.within


def _retrieved_any(topic: TopicData) -> bool:
    """Whether some run retrieves anything for the topic."""
    return bool(topic.ranking.shape[1]) and bool((topic.depth > 0).any())


def _only_judged_where_unretrieved(campaign: Campaign, point: list[np.ndarray]) -> list[np.ndarray]:
    """p = 0 for the unjudged documents of a topic no run retrieves for: such a topic
    contributes its judged documents only (no measure counts the others, and the runs
    say nothing about them)."""
    return [pt if _retrieved_any(t) else np.zeros_like(pt) for t, pt in zip(campaign.topics, point)]


def _log_depth_ratio(ev: TopicEvidence) -> np.ndarray:
    """``log(max(b / k_t, 1))`` per document: how far below the pool depth its best rank lies
    (a document no run retrieves: just below the deepest rank)."""
    return np.maximum(ev.features[:, 2] - np.log(max(ev.horizon, 1)), 0.0)


def _votes_below(ev: TopicEvidence) -> sp.csr_matrix:
    """The runs' votes ``1 / log2(1 + r)`` on the documents they rank below the pool depth."""
    below = ev.votes.copy()
    below.data[below.data >= 1.0 / np.log2(1.0 + max(ev.horizon, 1))] = 0.0
    below.eliminate_zeros()
    return below

