"""The Gaussian prior of the default model's ``θ = (w, μ, α_1..α_T, u)`` (``docs/math/fusion.md``).

``w ~ N(w₀, σ_w²)`` per standardised feature, ``μ ~ N(m, s²)``, ``α_t ~ N(μ, σ_α²)``,
``u_j ~ N(0, σ_u²)``: each ``α_t`` meets ``μ`` alone, so the precision is an
:class:`~..arrowhead.Arrowhead`, diagonal in ``α`` (and the fit's curvature with it).
"""

from __future__ import annotations

import numpy as np

from ..arrowhead import Arrowhead
from .evidence import N_FEATURES


def theta_prior(model, n_topics: int) -> tuple[Arrowhead, np.ndarray]:
    """Prior precision and linear term of ``θ`` for a :class:`~.model.Fusion` ``model``
    (its prior settings, ``systems_`` and ``feature_scale_``) over ``n_topics`` topics."""
    k, n_runs = N_FEATURES, len(model.systems_)
    m = k + 1 + n_runs  # (w, μ, u): the arrowhead's dense part, in θ's order
    dense = np.zeros((m, m))
    dense[np.arange(k), np.arange(k)] = 1.0 / model.weight_sd**2
    dense[k, k] = n_topics / model.intercept_sd**2 + 1.0 / model.mean_prior[1] ** 2
    u = np.arange(k + 1, m)
    dense[u, u] = 1.0 / model.run_effect_sd**2 if n_runs else 0.0
    coupling = np.zeros((n_topics, m))
    coupling[:, k] = -1.0 / model.intercept_sd**2  # α_t ~ N(μ, σ_α²)
    diagonal = np.full(n_topics, 1.0 / model.intercept_sd**2)
    shift = np.zeros(k + 1 + n_topics + n_runs)
    # the prior mean of w is given per raw unit; w acts on standardised features
    shift[:k] = np.asarray(model.weight_mean, float) * model.feature_scale_ / model.weight_sd**2
    shift[k] = model.mean_prior[0] / model.mean_prior[1] ** 2
    return Arrowhead(k + 1, k + 1 + n_topics, diagonal, coupling, dense), shift
