"""Lipani, Lupu, Kanoulas & Hanbury (2016) Algorithm 1: P@n corrected with a log-normal prior.

For every pooled run ``r_p`` the pool is rebuilt without it (leave one run
out, same depth) and

    δP(r_p) = P@n(r_p, Q) − P@n(r_p, Q′),     k̄′(r_p) = 1 − (P@n(r_p, Q′) + P̄@n(r_p, Q′))

(Eq. 1 and Eq. 3: ``k̄′`` is the share of ``r_p``'s top ``n`` left unjudged
without it; ``P̄@n`` is anti-precision, the share judged nonrelevant). The
ratio ``δP / k̄′`` is the probability that a document of the run unjudged
without it is relevant; its distribution over runs is log-normal, so the
correction uses its geometric mean (Eq. 4–5) over the runs with ``δP ≠ 0``:

    a = k̄(r_u) · GM_{r_p : δP ≠ 0}[δP(r_p) / k̄′(r_p)],     P@n(r_u) = s_{r_u} + a

with ``k̄(r_u)`` the new run's share of unjudged documents in its top ``n``.
All quantities are means over topics, as in the paper. When every ``δP`` is
0 the geometric mean is over an empty set: no pooled run shows that leaving
it out loses relevant documents, so there is no evidence of bias and the
correction is 0 (the ``no_information`` column says when this happened).
"""

from __future__ import annotations

import numpy as np

from .base import Corrector, PoolContext, register_corrector
from .webber_park import leave_one_out_bias


def unjudged_share(context: PoolContext, rows: np.ndarray, n: int, judged=None) -> np.ndarray:
    """``(S, T)``: 1 − (P@n + P̄@n), the share of the top ``n`` not judged.

    Ranks a short list does not fill count as unjudged (P@n divides by ``n``).
    """
    campaign = context.campaign
    out = np.zeros((len(rows), campaign.n_topics))
    for t, topic in enumerate(campaign.topics):
        mask = topic.judged if judged is None else judged[t]
        top = topic.ranking[rows, :n]
        hit = np.where(top >= 0, mask[np.maximum(top, 0)], False)
        out[:, t] = 1.0 - hit.sum(axis=1) / n
    return out


def leave_one_run_out_precision(context: PoolContext, measure) -> tuple[np.ndarray, np.ndarray]:
    """``(δP, k̄′)`` per pooled run (means over topics), cached on the context.

    ``δP`` is Webber & Park's plain leave-one-out bias (no add-back).
    """
    key = ("lipani-loro", str(measure))
    if key not in context.cache:
        campaign = context.campaign
        rows = context.pooled_rows
        delta = leave_one_out_bias(context, measure, None)
        unjudged = np.zeros(len(rows))
        for i, row in enumerate(rows):
            # the pool without r_p: the documents it alone ranked within the depth are unjudged
            judged_without = [
                t.judged & ~(context.top(row, k) & (c == 1))
                for k, (t, c) in enumerate(zip(campaign.topics, context.counts))
            ]
            unjudged[i] = unjudged_share(
                context, rows[i : i + 1], measure.cutoff, judged_without
            ).mean()
        context.cache[key] = (delta, unjudged)
    return context.cache[key]


def lipani_adjustment(
    k_new: np.ndarray, delta: np.ndarray, k_left: np.ndarray
) -> tuple[np.ndarray, bool]:
    """``a = k̄(r_u) · GM[δP / k̄′]`` over ``δP ≠ 0`` (Eq. 5).

    Returns the adjustment and whether every δP was 0 (then the adjustment is 0).
    """
    informative = delta != 0
    if not informative.any():
        return np.zeros_like(np.asarray(k_new, dtype=float)), True
    log_ratio = np.log(delta[informative] / k_left[informative]).mean()
    return np.asarray(k_new, dtype=float) * np.exp(log_ratio), False


class LipaniLogNormal(Corrector):
    """Lipani et al. (2016) Algorithm 1 for P@n."""

    name = "lipani"
    families = ("P",)

    def _correct(self, context, rows, measure, reduced):
        delta, k_left = leave_one_run_out_precision(context, measure)
        k_new = unjudged_share(context, rows, measure.cutoff).mean(axis=1)
        adjustment, empty = lipani_adjustment(k_new, delta, k_left)
        return {
            "estimate": reduced + adjustment,
            "adjustment": adjustment,
            "no_information": np.full(len(rows), empty),
        }


register_corrector(LipaniLogNormal)
