"""relimpute's own correction: the expected full-pool score under a fitted relevance model.

The full-pool score of a new run is its score had it been pooled too: the
documents it ranks within the pool depth would have been judged; everything
else stays as in the pool (unjudged = nonrelevant). So the only unknowns are
the new run's *would-be-pooled* documents that the pool did not judge. A
relevance model (:mod:`relimpute.relevance`; ``fusion`` by default) is
fitted on the pool's judgments over the pooled runs and the new runs, and
gives each such document a probability of relevance; every other unjudged
document gets 0. The estimate is E[measure] under those probabilities and
the interval the 95% percentile interval of its Monte Carlo distribution,
drawn with the model's joint posterior draws when it has them (parameter
uncertainty included), from :meth:`relimpute.confidence.ConfidenceEngine.monte_carlo`.
Any measure works (AP with the drawn R, nDCG with the drawn ideal list).
"""

from __future__ import annotations

import numpy as np

from ..relevance.base import RelevanceEstimate
from .base import Corrector, PoolContext, register


def would_be_pool_estimate(
    context: PoolContext, estimate: RelevanceEstimate, rows: np.ndarray
) -> RelevanceEstimate:
    """``estimate`` with every unjudged document outside the new runs' top ``depth`` set to 0."""
    campaign = context.campaign
    ps, draws = [], []
    for t, topic in enumerate(campaign.topics):
        unknown = np.zeros(topic.n_docs, dtype=bool)
        for row in rows:
            unknown |= context.top(row, t)
        unknown &= ~topic.judged
        fixed = topic.relevant(campaign.rel_threshold).astype(float)
        ps.append(np.where(unknown, estimate.p[t], fixed))
        if estimate.draws is not None:
            draws.append(np.where(unknown[None, :], estimate.draws[t], fixed[None, :]))
    return RelevanceEstimate(
        query_ids=estimate.query_ids,
        doc_ids=estimate.doc_ids,
        p=tuple(ps),
        draws=tuple(draws) if draws else None,
        model=estimate.model,
        params=estimate.params,
    )


class ModelBased(Corrector):
    """E[full-pool score] and its 95% interval under a relevance model fitted on the pool.

    Parameters
    ----------
    model
        A registered model name or settings file (:func:`relimpute.relevance.load_model`).
    n_draws
        Monte Carlo draws of relevance.
    level
        Interval level.
    seed
        Seed of the model fit and the draws.
    """

    name = "model"

    def __init__(self, model: str = "fusion", n_draws: int = 2000, level: float = 0.95, seed: int = 0):
        self.model = model
        self.n_draws = n_draws
        self.level = level
        self.seed = seed

    def fitted(self, context: PoolContext, rows: np.ndarray) -> RelevanceEstimate:
        """The model fitted on the pooled runs and ``rows`` (cached on the context)."""
        from ..relevance import load_model

        key = ("model", self.model, self.seed, tuple(int(r) for r in rows))
        if key not in context.cache:
            campaign = context.campaign
            runs = list(context.pooled) + [campaign.systems[r] for r in rows]
            estimate = load_model(self.model).fit_predict(campaign.subset(runs), rng=self.seed)
            context.cache[key] = would_be_pool_estimate(context, estimate, rows)
        return context.cache[key]

    def _correct(self, context, rows, measure, reduced):
        from ..confidence import ConfidenceEngine

        estimate = self.fitted(context, rows)
        names = [context.campaign.systems[r] for r in rows]
        scores = ConfidenceEngine().monte_carlo(
            context.campaign,
            estimate,
            systems=names,
            pairs=[],
            n_draws=self.n_draws,
            rng=self.seed,
            measure=str(measure),
        ).scores
        interval = scores.confidence_interval(self.level)
        return {
            "estimate": scores.e_map,
            "ci_low": interval.low,
            "ci_high": interval.high,
            "sd": scores.sd_map,
        }


register(ModelBased)
