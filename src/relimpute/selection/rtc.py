"""RTC: the MTC loop with probabilities re-estimated by a relevance model.

Carterette 2007 §3–4: the same greedy selection as MTC, but the
probabilities of relevance of unjudged documents come from a relevance model
(the expert-aggregation model, registered as ``"rtc"``) refitted on the
judgments so far every ``interval`` judgments (10 in the paper). Between
refits a judgment only sets its own document's probability and the MTC sums
are updated incrementally; a refit recomputes them for every topic.
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

    Attributes
    ----------
    n_fits_
        How many times the model has been fitted.
    """

    name = "rtc"

    def __init__(
        self, model: str = "rtc", interval: int = 10, model_params: Mapping[str, Any] | None = None
    ):
        self.model = model
        self.interval = interval
        self.model_params = model_params

    def _initial_p(self, state: SelectionState) -> None:
        if int(self.interval) < 1:
            raise ValueError(f"interval must be a positive integer, got {self.interval}")
        settings = load_settings(self.model)
        self.model_params_ = {**settings.params, **dict(self.model_params or {})}
        self.model_name_ = settings.model
        self.n_fits_ = 0
        self.n_seen_ = 0
        self._refit(state)

    def _refit(self, state: SelectionState) -> None:
        model = get_model(self.model_name_, **self.model_params_)
        estimate = model.fit_predict(state.current_campaign(), rng=self.rng_)
        for p, judged, fitted in zip(state.p, state.judged, estimate.p):
            p[~judged] = fitted[~judged]
        self.n_fits_ += 1

    def _observe(self, state, topic, doc, p_before):
        self.n_seen_ += 1
        if self.n_seen_ % int(self.interval):
            return super()._observe(state, topic, doc, p_before)
        self._refit(state)
        self._recompute_all(state)
        return list(range(state.n_topics))


register(RTC)
