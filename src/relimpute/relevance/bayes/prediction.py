"""Prediction of the Bayesian hierarchy: the default model's, over the NUTS draws of ``θ``.

:class:`FusionPosterior` is :class:`~relimpute.relevance.fusion.Fusion` with
its inference engine swapped: the fit set, the standardisation, the capture
adjustment and the below-pool decay are the default model's own code; only
the posterior of ``θ = (w, μ, α, u)`` comes from the sampler instead of Newton
+ Laplace.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..fusion import Fusion


def thinned(theta: np.ndarray, n: int) -> np.ndarray:
    """``min(n, D)`` of the ``(D, P)`` draws, evenly spaced over the chains."""
    pick = np.unique(np.linspace(0, len(theta) - 1, min(n, len(theta))).round().astype(int))
    return theta[pick]


class FusionPosterior(Fusion):
    """The default model whose ``θ`` posterior is given by ``engine`` (see the module).

    ``engine(design, y, n_topics, weight_centre, settings)`` returns the ``(D, P)``
    posterior draws of ``θ``; :meth:`_fit_theta` keeps them, the posterior mean as
    ``coef_`` (the point estimate) and their covariance as ``covariance_``.
    """

    name = "bayes-fusion"  # never registered: Bayes is "bayes"

    def __init__(self, engine: Callable | None = None, **settings):
        super().__init__(**settings)
        self._engine = engine

    def get_params(self) -> dict:
        return {k: getattr(self, k) for k in Fusion().get_params()}

    def _fit_theta(self, design, y, prec, shift, start):
        centre = np.asarray(self.weight_mean, float) * self.feature_scale_
        settings = {
            "intercept_sd": float(self.intercept_sd),
            "run_effect_sd": float(self.run_effect_sd),
            "weight_sd": float(self.weight_sd),
            "mean_mean": float(self.mean_prior[0]),
            "mean_sd": float(self.mean_prior[1]),
        }
        self.set_draws(self._engine(design, y, len(self.query_ids_), centre, settings))
        return self.coef_, self.covariance_

    def set_draws(self, theta: np.ndarray) -> None:
        """Keep the ``(D, P)`` posterior draws of ``θ``, their mean and covariance."""
        self.theta_draws_ = np.asarray(theta, dtype=float)
        self.n_draws = min(int(self.n_draws), len(self.theta_draws_))  # no draw used twice
        self.coef_ = self.theta_draws_.mean(axis=0)
        self.covariance_ = np.atleast_2d(np.cov(self.theta_draws_, rowvar=False))

    def _theta_draws(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return thinned(self.theta_draws_, n)
