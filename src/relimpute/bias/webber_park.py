"""Webber & Park (2009) Algorithm 1: pool bias inferred from the pooled systems.

For every pooled system ``s`` the documents only ``s`` contributed to the
pool are marked unjudged — except those the new run ``r`` also ranks within
the pool depth (the paper's refinement: ``r`` is added back to the pool in
``s``'s place, so the estimate is that of an ``n``-system pool, not ``n − 1``)
— and ``s`` is rescored. The adjustment is the mean over pooled systems of
``β_s = p_s − u_s`` (pooled minus leave-one-out mean score) and is added to
``r``'s reduced score:

    a = (1/|S|) Σ_s β_s,        score(r) = u_r + a

Unjudged documents count as nonrelevant (the paper's "presumed irrelevance").
For RBP the residual of ``r``'s reduced score is reported beside it. A
relevant document must be among those removed for ``β_s`` to move on a topic,
so only those (system, topic) pairs are rescored.
"""

from __future__ import annotations

import numpy as np

from .base import Corrector, PoolContext, register_corrector


def unique_relevant(context: PoolContext) -> dict[tuple[int, int], np.ndarray]:
    """``{(i, t): mask}``: relevant documents only pooled system ``i`` contributed on topic ``t``.

    ``i`` is the position in ``context.pooled``; pairs with no such document are absent.
    """
    key = ("unique_relevant",)
    if key not in context.cache:
        campaign = context.campaign
        found = {}
        for t, (topic, counts) in enumerate(zip(campaign.topics, context.counts)):
            relevant = topic.relevant(campaign.rel_threshold)
            for i, row in enumerate(context.pooled_rows):
                mask = context.top(row, t) & (counts == 1) & relevant
                if mask.any():
                    found[(i, t)] = mask
        context.cache[key] = found
    return context.cache[key]


def leave_one_out_bias(context: PoolContext, measure, add_back: np.ndarray | None) -> np.ndarray:
    """``(|S|,)`` β_s: mean over topics of pooled minus leave-one-out score of each pooled system.

    ``add_back`` is per topic the ``(n,)`` documents of the new run(s) that stay
    judged (None: plain leave-one-out).
    """
    campaign = context.campaign
    rows = context.pooled_rows
    beta = np.zeros(len(rows))
    for (i, t), removed in unique_relevant(context).items():
        if add_back is not None:
            removed = removed & ~add_back[t]
            if not removed.any():
                continue
        topic = campaign.topics[t]
        ranking = topic.ranking[rows[i] : rows[i] + 1]
        kwargs = {"rel_threshold": campaign.rel_threshold}
        full = measure.score(ranking, topic.grades, judged=topic.judged, **kwargs)[0]
        left = measure.score(ranking, topic.grades, judged=topic.judged & ~removed, **kwargs)[0]
        beta[i] += full - left
    return beta / campaign.n_topics


class WebberParkSystems(Corrector):
    """Webber & Park (2009) Algorithm 1 (inference from systems), with the add-back refinement.

    Parameters
    ----------
    add_back
        Keep the documents the new run shares with a left-out system judged
        (the paper's refinement; False gives the plain leave-one-out of
        Lipani et al. 2016 Eq. 2).
    """

    name = "webber-park"

    def __init__(self, add_back: bool = True):
        self.add_back = add_back

    def _correct(self, context, rows, measure, reduced):
        estimate = np.empty(len(rows))
        adjustment = np.empty(len(rows))
        for j, row in enumerate(rows):
            keep = (
                [context.top(row, t) for t in range(context.campaign.n_topics)]
                if self.add_back
                else None
            )
            cache_key = ("wp-beta", str(measure), None if keep is not None else "plain")
            if keep is None and cache_key in context.cache:
                beta = context.cache[cache_key]
            else:
                beta = leave_one_out_bias(context, measure, keep)
                if keep is None:
                    context.cache[cache_key] = beta
            adjustment[j] = beta.mean()
            estimate[j] = reduced[j] + adjustment[j]
        return {"estimate": estimate, "adjustment": adjustment}


register_corrector(WebberParkSystems)
