"""The Bayesian hierarchy as a relevance model: configuration, fit, prediction of a campaign."""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit

from ...data import Campaign
from ...errors import ConvergenceWarning
from ..base import RelevanceModel, register
from . import persistence
from .design import (
    _HYPER,
    _PARAMETERS,
    DEFAULT_PRIORS,
    DELTA_POOLING,
    FORMAT_VERSION,
    METHODS,
    SAMPLERS,
    JudgedDesign,
    _import_pymc,
    build_model,
)
from .inference import (
    FitDiagnostics,
    _AdviProgram,
    _NutsProgram,
    _nuts_diagnostics,
    _sample_nuts_pymc,
    elbo_plateau,
)
from .prediction import PosteriorDraws, topic_log_odds


class BayesianHierarchy(RelevanceModel):
    """Hierarchical Bernoulli-logit relevance model (package docstring), fitted with PyMC.

    Parameters
    ----------
    method
        ``"nuts"`` (default) or ``"advi"`` (mean-field, fast, approximate).
    draws, tune, chains
        NUTS draws and tuning steps per chain, and the number of chains.
        With ADVI, ``draws * chains`` draws are taken from the approximation.
    sampler
        NUTS implementation: ``"nutpie"`` (default) or ``"pymc"``.
    target_accept
        NUTS step-size adaptation target.
    advi_steps, advi_learning_rate, advi_tolerance
        ADVI iterations and Adam step size; after them, the mean ELBO of the
        last tenth of the iterations must differ from the tenth before by
        at most ``advi_tolerance`` (relative), else a ConvergenceWarning.
    n_draws
        Posterior draws (evenly thinned) used for prediction; ``p`` is their
        mean and, when ``return_draws``, they are handed over as joint draws.
    return_draws
        Whether :meth:`predict` returns the ``(n_draws, n)`` draws per topic.
    rhat_max, min_ess_per_chain
        Convergence thresholds after NUTS (Vehtari et al. 2021: R-hat ≤ 1.01,
        bulk and tail ESS ≥ 100 per chain); a failed check, or any divergent
        transition, raises a :class:`~relimpute.errors.ConvergenceWarning`.
    priors
        Overrides of :data:`DEFAULT_PRIORS` (keys must exist there).

    delta_pooling
        ``"shared"`` (default): one retrieval evidence δ for all systems;
        ``"partial"``: per-system δ_j partially pooled (package docstring).

    Attributes
    ----------
    idata_
        The ArviZ InferenceData of the fit.
    systems_, topics_
        Names of the fitted systems and topic ids (matched by name at predict time).
    diagnostics_
        :class:`FitDiagnostics`.
    predict_seed_
        Seed of the hyperprior draws for unseen topics and systems.
    """

    name = "bayes"

    def __init__(
        self,
        method: str = "nuts",
        draws: int = 1500,
        tune: int = 300,
        chains: int = 2,
        sampler: str = "nutpie",
        target_accept: float = 0.95,
        advi_steps: int = 5000,
        advi_tolerance: float = 0.01,
        advi_learning_rate: float = 0.02,
        n_draws: int = 100,
        return_draws: bool = True,
        rhat_max: float = 1.01,
        min_ess_per_chain: int = 100,
        priors: Mapping[str, float] | None = None,
        delta_pooling: str = "shared",
    ):
        self.method = method
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.sampler = sampler
        self.target_accept = target_accept
        self.advi_steps = advi_steps
        self.advi_tolerance = advi_tolerance
        self.advi_learning_rate = advi_learning_rate
        self.n_draws = n_draws
        self.return_draws = return_draws
        self.rhat_max = rhat_max
        self.min_ess_per_chain = min_ess_per_chain
        self.priors = priors
        self.delta_pooling = delta_pooling

    # ------------------------------------------------------------------ config

    def _validate(self) -> dict[str, float]:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.delta_pooling not in DELTA_POOLING:
            raise ValueError(
                f"delta_pooling must be one of {DELTA_POOLING}, got {self.delta_pooling!r}"
            )
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        for name in ("draws", "chains", "n_draws", "advi_steps"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if int(self.tune) < 0:
            raise ValueError(f"tune must be non-negative, got {self.tune}")
        if not 0.0 < self.target_accept < 1.0:
            raise ValueError(f"target_accept must lie in (0, 1), got {self.target_accept}")
        priors = dict(DEFAULT_PRIORS)
        unknown = set(self.priors or {}) - set(DEFAULT_PRIORS)
        if unknown:
            raise ValueError(
                f"unknown prior setting(s) {sorted(unknown)}; known: {sorted(DEFAULT_PRIORS)}"
            )
        priors.update({k: float(v) for k, v in (self.priors or {}).items()})
        bad = [k for k, v in priors.items() if ("_sd" in k) and not v > 0]
        if bad:
            raise ValueError(f"prior scale(s) {bad} must be positive")
        return priors

    def config(self) -> dict[str, Any]:
        """The hyper-parameters as JSON-ready data (what :meth:`save` stores and hashes)."""
        params = self.get_params()
        params["priors"] = None if self.priors is None else dict(sorted(self.priors.items()))
        return {"model": self.name, "format": FORMAT_VERSION, "params": params}

    # ------------------------------------------------------------------ fit / predict

    def _fit(self, campaign: Campaign, rng: np.random.Generator) -> None:
        from ...progress import progress

        priors = self._validate()
        design = JudgedDesign.from_campaign(campaign)
        seed = int(rng.integers(2**31 - 1))
        start = time.perf_counter()
        nuts = self.method == "nuts"
        total = int(self.chains) * (int(self.tune) + int(self.draws)) if nuts else int(self.advi_steps)
        # shown at once: importing PyMC and compiling take seconds before the first step
        with progress(None, desc="bayes: loading PyMC", total=total) as bar:
            _import_pymc()
            topics, systems = campaign.query_ids, campaign.systems
            if nuts and self.sampler == "nutpie":
                bar.set_description("bayes: compiling the model")
                program, compile_seconds = _NutsProgram.for_model(
                    design, topics, systems, priors, self.delta_pooling
                )
                bar.set_description("bayes: NUTS (nutpie)")
                idata = program.sample(
                    design,
                    topics,
                    systems,
                    draws=int(self.draws),
                    tune=int(self.tune),
                    chains=int(self.chains),
                    target_accept=float(self.target_accept),
                    seed=seed,
                    bar=bar,
                )
            elif nuts:
                bar.set_description("bayes: NUTS (PyMC)")
                compile_seconds = math.nan
                idata = _sample_nuts_pymc(
                    build_model(design, topics, systems, priors, self.delta_pooling),
                    draws=int(self.draws),
                    tune=int(self.tune),
                    chains=int(self.chains),
                    target_accept=float(self.target_accept),
                    seed=seed,
                )
            else:
                bar.set_description("bayes: compiling the model")
                program = _AdviProgram.for_model(
                    design, topics, systems, priors, self.delta_pooling,
                    float(self.advi_learning_rate),
                )  # fmt: skip
                bar.set_description("bayes: ADVI")
                idata, loss = program.fit(
                    design,
                    topics,
                    systems,
                    steps=int(self.advi_steps),
                    draws=int(self.draws) * int(self.chains),
                    seed=seed,
                    bar=bar,
                )
        if nuts:
            diagnostics = _nuts_diagnostics(
                idata,
                n_judged=design.n,
                seconds=time.perf_counter() - start,
                rhat_max=self.rhat_max,
                min_ess_per_chain=self.min_ess_per_chain,
                compile_seconds=compile_seconds,
            )
        else:
            iterations = len(loss)
            elbo, change = elbo_plateau(loss)
            problems = ()
            if not change <= self.advi_tolerance:
                problems = (
                    (
                        f"ADVI's ELBO still moves by {change:.3g} (relative) over its last "
                        f"tenth of {iterations} iterations (> {self.advi_tolerance})"
                    ),
                )
            diagnostics = FitDiagnostics(
                method="advi",
                n_judged=design.n,
                n_posterior_draws=int(self.draws) * int(self.chains),
                rhat_max=math.nan,
                ess_bulk_min=math.nan,
                ess_tail_min=math.nan,
                divergences=-1,
                elbo=elbo,
                iterations=iterations,
                seconds=time.perf_counter() - start,
                problems=problems,
            )
        self._set_state(
            idata=idata,
            systems=campaign.systems,
            topics=campaign.query_ids,
            diagnostics=diagnostics,
            predict_seed=int(rng.integers(2**31 - 1)),
        )
        if not diagnostics.converged:
            warnings.warn(
                f"bayes relevance model: {'; '.join(diagnostics.problems)} "
                "(raise draws/tune or check the priors)",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _set_state(self, *, idata, systems, topics, diagnostics, predict_seed) -> None:
        self.idata_ = idata
        self.systems_ = tuple(systems)
        self.topics_ = tuple(topics)
        self.diagnostics_ = diagnostics
        self.predict_seed_ = predict_seed

    def posterior_draws(self) -> PosteriorDraws:
        """The ``n_draws`` thinned posterior draws used for prediction."""
        return PosteriorDraws.from_idata(self.idata_, int(self.n_draws))

    def _predict(self, campaign: Campaign):
        post = self.posterior_draws()
        fitted_system = {s: i for i, s in enumerate(self.systems_)}
        fitted_topic = {q: i for i, q in enumerate(self.topics_)}
        shape = (post.n, campaign.n_systems)
        beta, gamma, delta = np.empty(shape), np.empty(shape), np.empty(shape)
        for j, name in enumerate(campaign.systems):
            if name in fitted_system:
                k = fitted_system[name]
                beta[:, j], gamma[:, j], delta[:, j] = (
                    post.beta[:, k],
                    post.gamma[:, k],
                    post.delta[:, k],
                )
            else:
                beta[:, j], gamma[:, j], delta[:, j] = post.new_system(name, self.predict_seed_)
        max_depth = max((int(t.depth.max(initial=0)) for t in campaign.topics), default=0)
        log_rank = np.log(np.arange(1, max_depth + 1, dtype=np.float64))
        curve = beta[:, :, None] * np.exp(-gamma[:, :, None] * log_rank) + delta[:, :, None]

        ps, draws = [], []
        for topic in campaign.topics:
            if topic.query_id in fitted_topic:
                alpha = post.alpha[:, fitted_topic[topic.query_id]]
            else:
                alpha = post.new_topic(topic.query_id, self.predict_seed_)
            prob = expit(topic_log_odds(topic, alpha, curve, delta))
            ps.append(prob.mean(axis=0))
            if self.return_draws:
                draws.append(prob)
        d = self.diagnostics_
        params = {
            "method": d.method,
            "converged": d.converged,
            "rhat_max": d.rhat_max,
            "ess_bulk_min": d.ess_bulk_min,
            "ess_tail_min": d.ess_tail_min,
            "divergences": d.divergences,
            "n_judged": d.n_judged,
            "fit_seconds": d.seconds,
            "unseen_systems": tuple(s for s in campaign.systems if s not in fitted_system),
            "unseen_topics": tuple(q for q in campaign.query_ids if q not in fitted_topic),
            **{h: float(post.hyper[h].mean()) for h in _HYPER},
            **{p: getattr(post, p).mean(axis=0) for p in _PARAMETERS},
        }
        return ps, (draws if self.return_draws else None), params

    # ------------------------------------------------------------------ persistence

    def save(self, path: str | Path) -> Path:
        """Write the posterior as netCDF with the configuration and its hash in the attrs."""
        return persistence.save(self, path)

    @classmethod
    def load(cls, path: str | Path) -> BayesianHierarchy:
        """Restore a model written by :meth:`save`, checking its configuration and hash."""
        return persistence.load(cls, path)


register(BayesianHierarchy)
