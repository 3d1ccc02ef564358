"""Webber & Park (2009) Algorithm 2: pool bias observed on common, fully judged topics.

On ``n`` common topics the new run is judged as if pooled (true scores
``t_i``) and also scored without its own contributions (``u_i``); the
adjustment and the adjusted estimate of the mean over all ``N`` topics are

    a = (1/n) Σ_{i∈C} (t_i − u_i)                        (Eq. 1)
    μ̂_a = (1/N) Σ_{i=1}^{N} (u_i + a)                    (Eq. 2)
    var(μ̂_a) = ((N − n)/N) · s_a² / n                    (Eq. 3, σ_a² estimated by Eq. 7)
    s_a² = (1/(n − 1)) Σ_{i∈C} (t_i − (u_i + a))²         (Eq. 7)

and adjusting is likely (68%, one standard deviation) to beat the unadjusted
score when ``s_a · sqrt((N − n)/(N n)) < |a|`` (Eq. 6, with the estimates in
place of σ_a and A). The interval is ``μ̂_a ± z · sqrt(var)`` (normal, CLT).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..stats import z_value
from .base import Corrector, PoolContext, register_corrector, topic_scores


@dataclass(frozen=True, slots=True)
class TopicAdjustment:
    """The common-topics estimate of one run's mean score (Eqs. 1–3, 6, 7)."""

    estimate: float
    adjustment: float
    variance: float
    s_a: float
    helps: bool
    ci_low: float
    ci_high: float


def common_topic_adjustment(
    true_common: np.ndarray, unpooled: np.ndarray, common: np.ndarray, level: float = 0.95
) -> TopicAdjustment:
    """Eqs. 1–3, 6 and 7 from ``t`` on the common topics and ``u`` on all ``N`` topics.

    ``common`` are the positions of the common topics in ``unpooled``
    (``true_common[k]`` belongs to topic ``common[k]``); needs ``n ≥ 2``.
    """
    unpooled = np.asarray(unpooled, dtype=float)
    common = np.asarray(common, dtype=int)
    t = np.asarray(true_common, dtype=float)
    big_n, n = len(unpooled), len(common)
    if n < 2 or n > big_n or len(t) != n:
        raise ValueError(
            f"need 2 <= n <= N common topics with one true score each (n={n}, N={big_n})"
        )
    u = unpooled[common]
    a = float(np.mean(t - u))
    s2 = float(np.sum((t - (u + a)) ** 2) / (n - 1))
    var = (big_n - n) / big_n * s2 / n
    estimate = float(np.mean(unpooled + a))
    half = z_value(level) * np.sqrt(var)
    helps = bool(np.sqrt(s2) * np.sqrt((big_n - n) / (big_n * n)) < abs(a))
    return TopicAdjustment(
        estimate, a, var, float(np.sqrt(s2)), helps, estimate - half, estimate + half
    )


class WebberParkTopics(Corrector):
    """Webber & Park (2009) Algorithm 2 (inference from common topics).

    Parameters
    ----------
    common_topics
        Query ids of the topics on which the new run is fully judged: the
        campaign's judgments there include the new run's documents.
    level
        Level of the normal interval.

    The table's ``reduced`` column scores the run against the judgments as
    given (full on the common topics); ``estimate`` is μ̂_a (Eq. 2), ``sd``
    the square root of Eq. 3 and ``helps`` the Eq. 6 check.
    """

    name = "webber-park-topics"

    def __init__(self, common_topics: Sequence[str] = (), level: float = 0.95):
        self.common_topics = tuple(map(str, common_topics))
        self.level = level

    def _correct(self, context: PoolContext, rows, measure, reduced):
        campaign = context.campaign
        position = {q: i for i, q in enumerate(campaign.query_ids)}
        unknown = [q for q in self.common_topics if q not in position]
        if unknown or len(self.common_topics) < 2:
            raise InputError(
                "common topics must be at least 2 of the campaign's topics "
                f"(unknown: {unknown[:5]})"
            )
        common = np.array([position[q] for q in self.common_topics])
        true = topic_scores(campaign, [measure], rows)[0]
        columns = {
            k: np.empty(len(rows)) for k in ("estimate", "ci_low", "ci_high", "adjustment", "sd")
        }
        columns["helps"] = np.zeros(len(rows), dtype=bool)
        for j, row in enumerate(rows):
            # u: the run scored without the documents only it brought (not in the pooled runs' pool)
            judged = [
                t.judged & ~(context.top(row, k) & (c == 0))
                for k, (t, c) in enumerate(zip(campaign.topics, context.counts))
            ]
            unpooled = topic_scores(campaign, [measure], np.array([row]), judged=judged)[0, 0]
            fit = common_topic_adjustment(true[j, common], unpooled, common, self.level)
            columns["estimate"][j], columns["adjustment"][j] = fit.estimate, fit.adjustment
            columns["ci_low"][j], columns["ci_high"][j] = fit.ci_low, fit.ci_high
            columns["sd"][j], columns["helps"][j] = np.sqrt(fit.variance), fit.helps
        return columns


register_corrector(WebberParkTopics)
