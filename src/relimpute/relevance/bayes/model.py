"""The Bayesian hierarchy as a relevance model: configuration, fit, prediction of a campaign."""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...data import Campaign
from ...errors import ConvergenceWarning
from ...progress import progress
from ..base import RelevanceModel, register_model
from ..fusion import Fusion
from . import persistence
from .design import (
    _HYPER,
    DEFAULT_PRIORS,
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
from .prediction import FusionPosterior


class Bayes(RelevanceModel):
    """The default model's likelihood with learned spreads, sampled by NUTS (package docstring).

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
        Posterior draws (evenly thinned) of ``p`` handed to the confidence engine.
    return_draws
        Whether :meth:`predict` returns the draws.
    rhat_max, min_ess_per_chain
        Convergence thresholds after NUTS (Vehtari et al. 2021: R-hat ≤ 1.01,
        bulk and tail ESS ≥ 400: 200 per chain over the default 2 chains); a
        failed check, or any divergent transition, raises a
        :class:`~relimpute.errors.ConvergenceWarning` and ``converged`` is False
        in the estimate's parameters.
    priors
        Overrides of :data:`DEFAULT_PRIORS` (keys must exist there).
    fusion
        Overrides of the default model's settings (:class:`Fusion`; None: its
        shipped settings, which centre the spreads' hyperpriors).

    Attributes
    ----------
    idata_
        The ArviZ InferenceData of the fit (``theta`` is ``θ`` in the default model's order).
    fusion_
        The default model with the sampled posterior (:class:`FusionPosterior`).
    diagnostics_
        :class:`FitDiagnostics`.
    """

    name = "bayes"

    def __init__(
        self,
        method: str = "nuts",
        draws: int = 2000,
        tune: int = 500,
        chains: int = 2,
        sampler: str = "nutpie",
        target_accept: float = 0.95,
        advi_steps: int = 5000,
        advi_tolerance: float = 0.01,
        advi_learning_rate: float = 0.02,
        n_draws: int = 100,
        return_draws: bool = True,
        rhat_max: float = 1.01,
        min_ess_per_chain: int = 200,
        priors: Mapping[str, float] | None = None,
        fusion: Mapping[str, Any] | None = None,
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
        self.fusion = fusion

    # ------------------------------------------------------------------ config

    def _validate(self) -> dict[str, float]:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        for name in ("draws", "chains", "n_draws", "advi_steps"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if int(self.tune) < 0:
            raise ValueError(f"tune must be non-negative, got {self.tune}")
        if not 0.0 < self.target_accept < 1.0:
            raise ValueError(f"target_accept must lie in (0, 1), got {self.target_accept}")
        unknown = set(self.priors or {}) - set(DEFAULT_PRIORS)
        if unknown:
            raise ValueError(
                f"unknown prior setting(s) {sorted(unknown)}; known: {sorted(DEFAULT_PRIORS)}"
            )
        priors = {**DEFAULT_PRIORS, **{k: float(v) for k, v in (self.priors or {}).items()}}
        bad = [k for k, v in priors.items() if not (np.isfinite(v) and v >= 0)]
        if bad:
            raise ValueError(f"prior width(s) {bad} must be finite and >= 0")
        known = set(Fusion().get_params()) - {"n_draws"}
        unknown = set(self.fusion or {}) - known
        if unknown:
            raise ValueError(f"unknown fusion setting(s) {sorted(unknown)}; known: {sorted(known)}")
        return priors

    def config(self) -> dict[str, Any]:
        """The hyper-parameters as JSON-ready data (what :meth:`save` stores and hashes)."""
        params = self.get_params()
        for key in ("priors", "fusion"):
            value = params[key]
            params[key] = None if value is None else {k: _plain(v) for k, v in sorted(value.items())}
        return {"model": self.name, "format": FORMAT_VERSION, "params": params}

    def _posterior_model(self) -> FusionPosterior:
        n_draws = int(self.n_draws) if self.return_draws else 0
        return FusionPosterior(self._sample, **{**(self.fusion or {}), "n_draws": n_draws})

    # ------------------------------------------------------------------ fit / predict

    def _fit(self, campaign: Campaign, rng: np.random.Generator) -> None:
        self._priors = self._validate()
        self._seed = int(rng.integers(2**31 - 1))
        self._systems = tuple(campaign.systems)
        self._topics = tuple(campaign.query_ids)
        fusion = self._posterior_model()
        nuts = self.method == "nuts"
        total = int(self.chains) * (int(self.tune) + int(self.draws)) if nuts else int(self.advi_steps)
        # shown at once: the fit set, importing PyMC and compiling take seconds before the first step
        with progress(None, desc="bayes: the judged documents", total=total) as self._bar:
            fusion._fit(campaign, rng)
        self._bar = None
        fusion._engine = None  # the fitted state only (pickles without the sampler)
        self.fusion_ = fusion
        if not self.diagnostics_.converged:
            warnings.warn(
                f"bayes relevance model: {'; '.join(self.diagnostics_.problems)} "
                "(raise draws/tune or check the priors)",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _sample(self, design, y, n_topics, weight_centre, settings) -> np.ndarray:
        """``(D, P)`` posterior draws of ``θ`` (the engine of :class:`FusionPosterior`)."""
        design = JudgedDesign.from_fusion(design, y, n_topics, weight_centre)
        settings = {**self._priors, **settings}
        systems = self._systems if settings["run_effect_sd"] > 0 else ()
        topics, seed = self._topics, self._seed
        start = time.perf_counter()
        nuts, bar = self.method == "nuts", self._bar
        bar.set_description("bayes: loading PyMC")
        _import_pymc()
        if nuts and self.sampler == "nutpie":
            bar.set_description("bayes: compiling the model")
            program, compile_seconds = _NutsProgram.for_model(design, topics, systems, settings)
            bar.set_description("bayes: NUTS (nutpie)")
            idata = program.sample(
                design, topics, systems, draws=int(self.draws), tune=int(self.tune),
                chains=int(self.chains), target_accept=float(self.target_accept),
                seed=seed, bar=bar,
            )  # fmt: skip
        elif nuts:
            bar.set_description("bayes: NUTS (PyMC)")
            compile_seconds = math.nan
            idata = _sample_nuts_pymc(
                build_model(design, topics, systems, settings), draws=int(self.draws),
                tune=int(self.tune), chains=int(self.chains),
                target_accept=float(self.target_accept), seed=seed,
            )  # fmt: skip
        else:
            bar.set_description("bayes: compiling the model")
            program = _AdviProgram.for_model(
                design, topics, systems, settings, float(self.advi_learning_rate)
            )
            bar.set_description("bayes: ADVI")
            idata, loss = program.fit(
                design, topics, systems, steps=int(self.advi_steps),
                draws=int(self.draws) * int(self.chains), seed=seed, bar=bar,
            )  # fmt: skip
        seconds = time.perf_counter() - start
        if nuts:
            self.diagnostics_ = _nuts_diagnostics(
                idata, n_judged=design.n, seconds=seconds, rhat_max=self.rhat_max,
                min_ess_per_chain=self.min_ess_per_chain, compile_seconds=compile_seconds,
            )  # fmt: skip
        else:
            self.diagnostics_ = _advi_diagnostics(
                loss, design.n, int(self.draws) * int(self.chains), seconds, self.advi_tolerance
            )
        self.idata_ = idata
        theta = idata.posterior["theta"].to_numpy()
        return theta.reshape(-1, theta.shape[-1])

    def _predict(self, campaign: Campaign):
        p, draws, params = self.fusion_._predict(campaign)
        d = self.diagnostics_
        post = self.idata_.posterior
        params = {
            **params,
            "method": d.method,
            "converged": d.converged,
            "rhat_max": d.rhat_max,
            "ess_bulk_min": d.ess_bulk_min,
            "ess_tail_min": d.ess_tail_min,
            "divergences": d.divergences,
            "fit_seconds": d.seconds,
            **{h: float(post[h].mean()) for h in _HYPER if h in post},
        }
        return p, draws, params

    # ------------------------------------------------------------------ persistence

    def save(self, path: str | Path) -> Path:
        """Write the posterior as netCDF with the configuration and its hash in the attrs."""
        return persistence.save(self, path)

    @classmethod
    def load(cls, path: str | Path) -> Bayes:
        """Restore a model written by :meth:`save`, checking its configuration and hash."""
        return persistence.load(cls, path)


def _advi_diagnostics(loss, n_judged, n_draws, seconds, tolerance) -> FitDiagnostics:
    iterations = len(loss)
    elbo, change = elbo_plateau(loss)
    problems = ()
    if not change <= tolerance:
        problems = (
            f"ADVI's ELBO still moves by {change:.3g} (relative) over its last "
            f"tenth of {iterations} iterations (> {tolerance})",
        )
    return FitDiagnostics(
        method="advi", n_judged=n_judged, n_posterior_draws=n_draws, rhat_max=math.nan,
        ess_bulk_min=math.nan, ess_tail_min=math.nan, divergences=-1, elbo=elbo,
        iterations=iterations, seconds=seconds, problems=problems,
    )  # fmt: skip


def _plain(value):
    """A setting as JSON-ready data (tuples as lists)."""
    return list(value) if isinstance(value, tuple) else value


register_model(Bayes)
