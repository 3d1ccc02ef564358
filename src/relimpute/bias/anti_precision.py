"""Lipani, Lupu & Hanbury (2015) "Splitting water": P@n corrected with precision and anti-precision.

Each pooled run ``r_p`` is merged with the new run ``r_u``: ``r_p``'s own
documents are reordered so that those ``r_u`` also retrieves take ``r_u``'s
rank (the others keep their own; ties as in the authors' PoolBiasEstimators,
``LipaniEstimator.getNewScore``). Against the pool's qrels ``Q``:

    δs = P@n(r_p∘r_u) − P@n(r_p),   δs̄ = P̄@n(r_p∘r_u) − P̄@n(r_p),   δk = −δs − δs̄

(``P̄@n``: anti-precision, the share of the top ``n`` judged nonrelevant;
``δk`` the change in the unjudged share). With ``s, s̄, k`` the new run's
precision, anti-precision and unjudged share and ``Δ`` the mean over pooled
runs, the correction is triggered by ``λ = k (Δs · s̄ − Δs̄ · s) > 0``:

    a = k · max(mean δk, 0)   if λ > 0, else 0.

All quantities are means over topics (as the authors' code computes them).
"""

from __future__ import annotations

import numpy as np

from .base import Corrector, PoolContext, register_corrector


def merged_top(ranking: np.ndarray, new_ranks: np.ndarray, n: int) -> np.ndarray:
    """``(S, n)`` the top ``n`` of each row of ``ranking`` after merging with the new run.

    ``new_ranks`` is ``(n_docs,)`` the new run's 1-based rank of every document
    (0 = not retrieved). A document at own rank ``i`` that the new run has at
    rank ``j`` is placed at ``j`` plus a tie-break (1e-4 when ``j = i``,
    ``(i + 1)·1e-4`` when it moves down, ``i·1e-8`` when it moves up); the
    others stay at ``i + 1e-4``.
    """
    own = np.arange(1, ranking.shape[1] + 1, dtype=np.float64)[None, :]
    j = np.where(ranking >= 0, new_ranks[np.maximum(ranking, 0)], 0).astype(np.float64)
    fix = np.where(j == own, 1e-4, np.where(j > own, (own + 1.0) * 1e-4, own * 1e-8))
    key = np.where(j > 0, j + fix, own + 1e-4)
    key = np.where(ranking >= 0, key, np.inf)
    order = np.argsort(key, axis=1, kind="stable")[:, :n]
    return np.take_along_axis(ranking, order, axis=1)


def precision_parts(top: np.ndarray, relevant: np.ndarray, judged: np.ndarray, n: int):
    """``(P@n, P̄@n)`` per row of a ``(S, ≤n)`` top list (missing ranks count in ``n``)."""
    valid = top >= 0
    doc = np.maximum(top, 0)
    rel = (valid & relevant[doc]).sum(axis=1) / n
    nonrel = (valid & judged[doc] & ~relevant[doc]).sum(axis=1) / n
    return rel, nonrel


class AntiPrecision(Corrector):
    """Lipani et al. (2015) estimator for P@n (module docstring)."""

    name = "anti-precision"
    families = ("P",)

    def _correct(self, context: PoolContext, rows, measure, reduced):
        campaign = context.campaign
        n = measure.cutoff
        pooled = context.pooled_rows
        n_topics = campaign.n_topics
        estimate = np.empty(len(rows))
        adjustment = np.zeros(len(rows))
        relevant = [t.relevant(campaign.rel_threshold) for t in campaign.topics]
        key = ("anti-precision-own", n)
        if key not in context.cache:
            context.cache[key] = [
                precision_parts(t.ranking[pooled, :n], r, t.judged, n)
                for t, r in zip(campaign.topics, relevant)
            ]
        own = context.cache[key]
        for j, row in enumerate(rows):
            s = s_bar = 0.0
            d_s = np.zeros(len(pooled))
            d_s_bar = np.zeros(len(pooled))
            for topic, rel, (own_p, own_pbar) in zip(campaign.topics, relevant, own):
                judged = topic.judged
                p, pbar = precision_parts(topic.ranking[row : row + 1, :n], rel, judged, n)
                s += p[0] / n_topics
                s_bar += pbar[0] / n_topics
                merged = merged_top(topic.ranking[pooled], topic.ranks(row), n)
                new_p, new_pbar = precision_parts(merged, rel, judged, n)
                d_s += (new_p - own_p) / n_topics
                d_s_bar += (new_pbar - own_pbar) / n_topics
            k = 1.0 - (s + s_bar)
            d_k = -d_s - d_s_bar
            trigger = k * (d_s.mean() * s_bar - d_s_bar.mean() * s)
            if trigger > 0:
                adjustment[j] = k * max(d_k.mean(), 0.0)
            estimate[j] = reduced[j] + adjustment[j]
        return {"estimate": estimate, "adjustment": adjustment}


register_corrector(AntiPrecision)
