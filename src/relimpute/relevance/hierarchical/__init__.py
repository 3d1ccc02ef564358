"""A Bayesian hierarchical relevance model in PyMC, partially pooled across topics and systems.

Carterette 2007 §3.1 rejects a hierarchical model because it "will not
generalize to unseen topics"; this one does, by drawing the parameters of an
unseen topic or system from the fitted hyperpriors. The relevance of
document ``i`` of topic ``t`` is ``X_ti ~ Bernoulli(σ(η_ti))`` with log-odds

    η_ti = α_t + Σ_{j ∈ C_t} [ R_jti · β_j · r_jti^(−γ_j) + (R_jti − ½) · δ_j ]

where ``C_t`` are the systems that retrieve anything for topic ``t``,
``R_jti`` is 1 when system ``j`` retrieves the document (at 1-based rank
``r_jti``) and 0 otherwise. Each system has a reliability ``β_j`` (log-odds
its top document adds), a decay shape ``γ_j`` (the contribution falls as a
power of the rank, linearly in log rank: ``log g = −γ log r``) and a
retrieval evidence ``δ_j`` (effect-coded, so a document the system leaves out
loses ``δ_j / 2``: the evidence of *not* retrieving). The topic intercept is
the log-odds of a document retrieved, at infinite depth, by half the covering
systems. Partial pooling (non-centred)::

    α_t ~ N(μ_α, σ_α),  β_j ~ N(μ_β, σ_β),  log γ_j ~ N(μ_logγ, σ_logγ),  δ_j ~ N(μ_δ, σ_δ)

with the hyperpriors of ``models/bayes.json``. By default
(``delta_pooling="shared"``) the retrieval evidence is one δ for every
system (δ_j = μ_δ, σ_δ = 0), the others stay per system: with per-system δ_j
the posterior of σ_δ on DL 2019 is a funnel set by its prior (90% interval
0.07-0.59 under HalfNormal(0.25), 0.006-0.22 under HalfNormal(0.1)) that NUTS
does not converge on (R-hat ~1.03, divergences; models/bayes.json), i.e. the
data barely say how much the δ_j differ; ``delta_pooling="partial"`` is that
model. The model is fitted on the
judged documents only (labels at ``campaign.rel_threshold``) by NUTS (nutpie
with its low-rank mass-matrix adaptation, which follows the posterior
correlation between the topic intercepts and the δ_j; or PyMC's sampler) or
by mean-field ADVI (PyMC's ``ADVI`` with Adam, its step compiled once per model
shape and refitted on swapped ``pm.Data``; PyMC 5.28 has no native Pathfinder,
that lives in pymc-extras); prediction for every document of a
campaign is vectorised numpy over the posterior draws (no PyMC graph over the
unjudged documents). Convergence after NUTS is checked with rank-normalised
R-hat, bulk/tail ESS (Vehtari et al. 2021, Bayesian Analysis 16(2)) and the
count of divergent transitions.

The package: :mod:`.design` (priors, the judged documents as model inputs, the
PyMC model), :mod:`.inference` (NUTS, ADVI, diagnostics), :mod:`.prediction`
(posterior draws, log-odds of every document), :mod:`.persistence` (netCDF),
:mod:`.model` (:class:`BayesianHierarchy`, registered as ``"bayes"``).
"""

from .design import (
    DEFAULT_PRIORS,
    DELTA_POOLING,
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
from .model import BayesianHierarchy
from .prediction import PosteriorDraws, topic_log_odds

__all__ = [
    "DEFAULT_PRIORS",
    "DELTA_POOLING",
    "FORMAT_VERSION",
    "METHODS",
    "SAMPLERS",
    "BayesianHierarchy",
    "FitDiagnostics",
    "JudgedDesign",
    "PosteriorDraws",
    "build_model",
    "design_data",
    "elbo_plateau",
    "topic_log_odds",
]
