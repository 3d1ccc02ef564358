"""The default relevance model's likelihood as a Bayesian hierarchy in PyMC, sampled by NUTS.

One likelihood, two inference engines. The default model
(:class:`~relimpute.relevance.fusion.Fusion`, whose module docstring
derives it) is

    logit P(X_ti = 1) = α_t + w · z_ti + Σ_j u_j / log2(1 + r_ij),
    α_t ~ N(μ, σ_α²),  u_j ~ N(0, σ_u²),  w ~ N(w₀, σ_w²),  μ ~ N(m, s²)

on its fit set (the judged documents within each topic's pool depth: the
judged-depth structure), with the capture adjustment and the below-pool decay
applied to its predictions. It fixes the spreads σ_α, σ_u, σ_w at values chosen
leave-one-collection-out on grids (``models/fusion.json``) and finds the
posterior of ``θ = (w, μ, α, u)`` by Newton's method with a Laplace
approximation. This hierarchy keeps that likelihood and turns the spreads into
hyper-parameters, ``σ ~ LogNormal(log σ₀, s)`` centred on the default's
settings σ₀ (:data:`DEFAULT_PRIORS`), learned from the judgments, and samples
the joint posterior by NUTS (nutpie, compiled once per model shape with the
judgments swapped in as data; or PyMC's sampler), or approximates it by
mean-field ADVI. Non-centred: ``α_t = μ + σ_α z_t``, ``u_j = σ_u z_j``,
``w = w₀ + σ_w z_w`` on standardised features, so NUTS sees unit-scale,
weakly correlated parameters instead of the funnel of centred spreads. The
below-pool spreads (``beyond_decay_sd``, ``beyond_run_sd``) have nothing in the
judgments to update them (fusion module docstring): they stay priors, drawn per
posterior draw as the default model draws them.

Prediction is the default model's code over the sampled ``θ``
(:class:`~.prediction.FusionPosterior`). Convergence after NUTS is checked with
rank-normalised R-hat, bulk/tail ESS (Vehtari et al. 2021, Bayesian Analysis
16(2)) and the count of divergent transitions; a fit that fails says so (a
:class:`~relimpute.errors.ConvergenceWarning`, ``converged`` False in the
estimate's parameters).

The package: :mod:`.design` (hyperpriors, the fit set as model inputs, the PyMC
model), :mod:`.inference` (NUTS, ADVI, diagnostics), :mod:`.prediction`
(the default model over the draws), :mod:`.persistence` (netCDF),
:mod:`.model` (:class:`Bayes`, registered as ``"bayes"``).
"""

from .design import (
    DEFAULT_PRIORS,
    FORMAT_VERSION,
    METHODS,
    SAMPLERS,
    JudgedDesign,
    _import_arviz,
    _import_pymc,
    build_model,
    design_data,
)
from .inference import FitDiagnostics, _AdviProgram, _NutsProgram, elbo_plateau
from .model import Bayes
from .prediction import FusionPosterior

__all__ = [
    "DEFAULT_PRIORS",
    "FORMAT_VERSION",
    "METHODS",
    "SAMPLERS",
    "Bayes",
    "FitDiagnostics",
    "FusionPosterior",
    "JudgedDesign",
    "build_model",
    "design_data",
    "elbo_plateau",
]
