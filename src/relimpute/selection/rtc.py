"""RTC: the MTC loop with probabilities re-estimated by a relevance model.

Carterette 2007 §3–4: the same greedy selection as MTC, but the
probabilities of relevance of unjudged documents come from a relevance model
(the expert-aggregation model, registered as ``"rtc"``) refitted on the
judgments so far every ``interval`` judgments (10 in the paper). Between
refits a judgment only sets its own document's probability and the MTC sums
are updated incrementally; a refit recomputes them for every topic.

The paper's Algorithm 1 stops on ``P(ΔMAP < 0)`` computed from the current
probabilities, so the model's estimates drive the stopping confidence as well
as the choice of documents (``stop_on="model"``). ``stop_on="prior"`` keeps
½ for every unjudged document in the stopping confidence (MTC's) and uses
the model only to choose what to judge: the reading under which the paper's
RTC needs about as many judgments as MTC (examples/rtc_paper/).
``stop_on="posterior"`` stops on the posterior predictive confidence: Monte
Carlo over the refitted model's joint posterior draws (the confidence
``fusion-mc`` states at the end of a study), so a model fitted on a handful
of judgments cannot declare a pair decided on its point estimate alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._deprecation import renamed_kwargs
from ..relevance.base import get_model
from ..relevance.settings import load_settings
from .base import SelectionState, register_strategy
from .mtc import MTC
from .stopping import PosteriorPairConfidence

#: what the loop's stopping confidence reads (see :class:`RTCSelection`)
STOP_ON = ("model", "prior", "posterior", "auto")
#: which runs E[R] counts in the posterior confidence (see :class:`RTCSelection`)
EVALUATED = ("compared", "all")


@renamed_kwargs(mc_draws="n_draws")
class RTCSelection(MTC):
    """Robust test collections selection (Carterette 2007 §3–4).

    Parameters
    ----------
    model
        A registered relevance model (``"rtc"``: the expert model, with its
        shipped settings from ``models/rtc.json``) or a settings file.
    interval
        Refit the model every this many new judgments.
    model_params
        Hyper-parameters overriding the model's settings.
    stop_on
        ``"model"``: the stopping confidence uses the model's probabilities
        (Algorithm 1 read literally). ``"prior"``: it uses ½ for unjudged
        documents, and the model only ranks the candidates. ``"posterior"``:
        the posterior predictive confidence, recomputed at every refit (the
        model must return posterior draws, e.g. ``fusion`` with ``n_draws``).
        ``"auto"``: ``"posterior"`` when the model's first fit returns
        posterior draws, ``"model"`` otherwise (``stop_on_`` says which).
    n_draws
        Monte Carlo draws of the posterior predictive confidence (``mc_draws`` until 0.3.0).
    screen
        With ``stop_on="posterior"``: skip the Monte Carlo at a refit when even the
        exact confidence with the refitted probabilities taken as known (narrower
        than the posterior's) lies more than ``screen`` below the loop's stopping
        confidence, so the loop could not stop there; the confidence shown keeps
        its last Monte Carlo value. None (the default) computes it at every refit.
    seed
        None: the fits and the Monte Carlo draw from the loop's generator. An integer:
        every refit fits the model and draws its Monte Carlo with this seed, as
        ``relimpute compare --seed`` does, so that a refit states ``compare``'s
        confidence on the judgments so far.
    evaluated
        The runs whose unjudged documents ``E[R]`` counts in the posterior confidence:
        ``"compared"``, the loop's run set (Carterette 2007 §4.3), or ``"all"``, every run
        of the campaign, as ``compare`` counts them.

    Attributes
    ----------
    n_fits_
        How many times the model has been fitted.
    n_screened_
        Refits whose posterior Monte Carlo ``screen`` skipped.
    stop_on_
        What the stopping confidence reads (``stop_on`` with ``"auto"`` resolved).
    estimate_
        The latest fit's :class:`~relimpute.relevance.RelevanceEstimate`.
    """

    name = "rtc"

    def __init__(
        self,
        model: str = "rtc",
        interval: int = 10,
        model_params: Mapping[str, Any] | None = None,
        stop_on: str = "model",
        n_draws: int = 4000,
        screen: float | None = None,
        seed: int | None = None,
        evaluated: str = "compared",
    ):
        self.model = model
        self.interval = interval
        self.model_params = model_params
        self.stop_on = stop_on
        self.n_draws = n_draws
        self.screen = screen
        self.seed = seed
        self.evaluated = evaluated

    def _initial_p(self, state: SelectionState) -> None:
        if int(self.interval) < 1:
            raise ValueError(f"interval must be a positive integer, got {self.interval}")
        if self.stop_on not in STOP_ON:
            raise ValueError(f"stop_on must be one of {STOP_ON}, got {self.stop_on!r}")
        if self.stop_on in ("posterior", "auto") and int(self.n_draws) < 2:
            raise ValueError(f"n_draws must be at least 2, got {self.n_draws}")
        if self.screen is not None and not 0.0 <= float(self.screen) < 0.5:
            raise ValueError(f"screen must be None or in [0, 0.5), got {self.screen}")
        if self.seed is not None and (int(self.seed) != self.seed or self.seed < 0):
            raise ValueError(f"seed must be None or an integer >= 0, got {self.seed!r}")
        if self.evaluated not in EVALUATED:
            raise ValueError(f"evaluated must be one of {EVALUATED}, got {self.evaluated!r}")
        # the probabilities that choose documents (state.p, unless stop_on="prior")
        self.choice_p_ = [p.copy() for p in state.p] if self.stop_on == "prior" else state.p
        self.stop_on_ = self.stop_on
        self.posterior_ = PosteriorPairConfidence(len(state.pairs)) if self.stop_on == "posterior" else None
        if self.stop_on == "prior":
            for p, judged in zip(state.p, state.judged):
                p[~judged] = 0.5
        settings = load_settings(self.model)
        self.model_params_ = {**self._judging_params(settings.model), **settings.params,
                              **dict(self.model_params or {})}  # fmt: skip
        self.model_name_ = settings.model
        self.n_fits_ = 0
        self.n_screened_ = 0
        self.n_seen_ = 0
        self._refit(state)

    def _judging_params(self, model: str) -> dict:
        """Settings the loop fits ``model`` with where its settings file and ``model_params``
        name none (its class defaults otherwise)."""
        return {}

    def _refit(self, state: SelectionState) -> None:
        campaign = state.current_campaign()
        estimate = self.estimate_ = self._fit_predict(campaign)
        for p, judged, fitted in zip(self.choice_p_, state.judged, estimate.p):
            p[~judged] = fitted[~judged]
        self.n_fits_ += 1
        if self.stop_on_ == "auto":  # the first fit says whether the model returns draws
            self.stop_on_ = "posterior" if estimate.n_draws >= 2 else "model"
            if self.stop_on_ == "posterior":
                self.posterior_ = PosteriorPairConfidence(len(state.pairs))
        if self.stop_on_ == "posterior":
            self._posterior_confidence(state, campaign, estimate)

    def _fit_predict(self, campaign):
        """The model fitted on ``campaign`` and its estimate of every document."""
        model = get_model(self.model_name_, **self.model_params_)
        return model.fit_predict(campaign, rng=self._rng())

    def _rng(self):
        """What a refit draws from: the fixed ``seed`` afresh, else the loop's generator."""
        return self.rng_ if self.seed is None else int(self.seed)

    def evaluated_campaign(self, state: SelectionState, campaign):
        """``campaign`` with the runs ``E[R]`` counts (``evaluated``)."""
        return campaign if self.evaluated == "all" else campaign.subset(list(state.systems))

    def _posterior_confidence(self, state: SelectionState, campaign, estimate) -> None:
        """Monte Carlo over the model's draws, E[R] over the compared systems (as
        :class:`~.stopping.PairConfidence` counts it).

        Without a ``seed``, a quarter of ``n_draws`` first: when every pair's confidence is then
        clearly below the loop's stopping confidence (by four Monte Carlo standard
        errors and 0.02), the loop cannot stop on it and that estimate stands;
        otherwise all ``n_draws`` decide.
        """
        from ..confidence import ConfidenceEngine

        if estimate.n_draws < 2:
            raise ValueError(
                f"stop_on='posterior' needs a model that returns posterior draws; "
                f"{self.model_name_!r} with {self.model_params_} returned {estimate.n_draws}"
            )
        names = state.systems
        pairs = [(names[a], names[b]) for a, b in state.pairs]
        subset = self.evaluated_campaign(state, campaign)
        engine, full = ConfidenceEngine(ratio="constant"), int(self.n_draws)
        target = state.target_confidence
        if self.screen is not None and target is not None:
            known = engine.confidence(subset, estimate, pairs=pairs, method="normal").p_a_better
            if np.all(np.maximum(known, 1.0 - known) < target - float(self.screen)):
                self.n_screened_ += 1
                return

        def monte_carlo(n_draws, rng):
            return engine.confidence(subset, estimate, pairs=pairs, method="monte carlo",
                                     n_draws=n_draws, rng=rng)  # fmt: skip

        quick, result = max(2, full // 4), None
        if self.seed is None:  # (with a seed, every refit states compare's full Monte Carlo)
            result = monte_carlo(quick, self.rng_)
        if result is None or target is None or not _clearly_below(result.p_a_better, quick, target):
            result = monte_carlo(full, self._rng())
        self.posterior_.set(result.e_delta_map, result.var_delta_map, result.p_a_better)

    def confidence_tracker(self, state: SelectionState):
        return self.posterior_

    def _choice_probabilities(self, state: SelectionState):
        return self.choice_p_

    def _observe(self, state, topic, doc, p_before):
        if self.choice_p_ is not state.p:  # the choosing probabilities learn the label too
            p_before = float(self.choice_p_[topic][doc])
            self.choice_p_[topic][doc] = state.p[topic][doc]
        self.n_seen_ += 1
        if self.n_seen_ % int(self.interval):
            return super()._observe(state, topic, doc, p_before)
        self._refit(state)
        self._recompute_all(state)
        # the stopping probabilities moved beyond this document only if they are the model's
        return list(range(state.n_topics)) if self.choice_p_ is state.p else None


def _clearly_below(p_a_better, n_draws: int, target: float) -> bool:
    """Whether every pair's ``max(P, 1 − P)`` from ``n_draws`` Monte Carlo draws lies
    below ``target`` by more than four standard errors and 0.02."""
    confidence = np.maximum(p_a_better, 1.0 - np.asarray(p_a_better))
    error = np.sqrt(confidence * (1.0 - confidence) / n_draws)
    return bool(np.all(confidence + 4.0 * error + 0.02 < target))


register_strategy(RTCSelection)
