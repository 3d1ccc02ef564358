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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..relevance.base import get_model
from ..relevance.settings import load_settings
from .base import SelectionState, register
from .mtc import MTC


class RTC(MTC):
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
        documents, and the model only ranks the candidates.

    Attributes
    ----------
    n_fits_
        How many times the model has been fitted.
    """

    name = "rtc"

    def __init__(
        self,
        model: str = "rtc",
        interval: int = 10,
        model_params: Mapping[str, Any] | None = None,
        stop_on: str = "model",
    ):
        self.model = model
        self.interval = interval
        self.model_params = model_params
        self.stop_on = stop_on

    def _initial_p(self, state: SelectionState) -> None:
        if int(self.interval) < 1:
            raise ValueError(f"interval must be a positive integer, got {self.interval}")
        if self.stop_on not in ("model", "prior"):
            raise ValueError(f"stop_on must be 'model' or 'prior', got {self.stop_on!r}")
        # the probabilities that choose documents (state.p, unless stop_on="prior")
        self.choice_p_ = state.p if self.stop_on == "model" else [p.copy() for p in state.p]
        if self.stop_on == "prior":
            for p, judged in zip(state.p, state.judged):
                p[~judged] = 0.5
        settings = load_settings(self.model)
        self.model_params_ = {**settings.params, **dict(self.model_params or {})}
        self.model_name_ = settings.model
        self.n_fits_ = 0
        self.n_seen_ = 0
        self._refit(state)

    def _refit(self, state: SelectionState) -> None:
        model = get_model(self.model_name_, **self.model_params_)
        estimate = model.fit_predict(state.current_campaign(), rng=self.rng_)
        for p, judged, fitted in zip(self.choice_p_, state.judged, estimate.p):
            p[~judged] = fitted[~judged]
        self.n_fits_ += 1

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


register(RTC)
