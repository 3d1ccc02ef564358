"""Fixed-prior relevance: the MTC assumption.

``Uniform(prior=0.5)`` is the assumption of Carterette et al.'s MTC (and
Carterette 2007 §4.3): every unjudged document is relevant with the same
probability. ``prior=0`` is the convention "unjudged = nonrelevant"
(:class:`~relimpute.relevance.nonrelevant.Nonrelevant`).
"""

from __future__ import annotations

import numpy as np

from .base import RelevanceModel, register_model


class Uniform(RelevanceModel):
    """p = ``prior`` for every unjudged document; judged documents keep their labels."""

    name = "uniform"

    def __init__(self, prior: float = 0.5):
        self.prior = prior

    def _validate(self) -> None:
        if not 0.0 <= self.prior <= 1.0:
            raise ValueError(f"prior must lie in [0, 1], got {self.prior}")

    def _fit(self, campaign, rng):
        self._validate()

    def _predict(self, campaign):
        p = [np.full(t.n_docs, float(self.prior)) for t in campaign.topics]
        return p, None, {"prior": float(self.prior)}


register_model(Uniform)
