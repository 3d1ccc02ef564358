"""Judging until the posterior predictive confidence is reached.

The MTC loop (Carterette 2007 Algorithm 1) with the default relevance model
refitted every ``interval`` judgments, as RTC does (§4.2), but stopping on the
confidence ``fusion-mc`` states at the end of a study: Monte Carlo over the
model's joint posterior draws. A model fitted on a few judgments is uncertain
about its own parameters; stopping on its point estimate (RTC read literally)
declares a pair decided after ten or twenty judgments and is then wrong far
more often than it says (examples/rtc_paper/).

Which document to judge (``choose``): MTC's weight ``w_i`` (Carterette 2007
§2.1, with the model's p for the unjudged documents) is the change of
``E[ΔMAP]`` when document ``i`` turns relevant, whatever the model believes of
it. ``choose="variance"`` ranks by ``|w_i| · sqrt(p_i (1 − p_i))``: to first
order (ΔMAP linear in the label) judging ``i`` removes ``w_i² p_i (1 − p_i)``
from ``Var[ΔMAP]``, so a document the model is already sure of is not judged
first (docs/math/map-difference.md). With ``p = ½`` for every document both
rank alike.

The stopping confidence is the posterior predictive P(ΔMAP > 0), a binary measure, so
each refit fits the default model on the judgments read at the relevance threshold
(grades 0/1): its probabilities of relevance and their draws do not depend on the grades
(only its split of relevance into grades does, docs/math/fusion.md "Relevance and
grades"), and the cut-points' fit is skipped. Each topic's posterior draws are computed
once per refit, not once per Monte Carlo pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from ..relevance.base import LazyDraws
from .base import SelectionState, register
from .rtc import RTCSelection

#: how the posterior selector ranks the candidates (see the module docstring)
CHOOSE = ("mtc", "variance")
#: models whose probabilities of relevance (and their draws) are fitted at the threshold
#: alone, the grades only split them (relimpute/relevance/fusion.py): refitted on binary labels
THRESHOLD_ONLY = ("fusion",)
#: keep a refit's posterior draws of every topic when they hold at most this many values
#: (2^24 float64: 128 MB); larger campaigns recompute a topic's draws at each pass
KEEP_DRAWS = 1 << 24


class PosteriorSelection(RTCSelection):
    """The RTC loop on the default model, stopping on its posterior predictive confidence.

    Parameters
    ----------
    model
        A registered relevance model that returns posterior draws, or a
        settings file (``"fusion"``: the default model, shipped settings).
    interval
        Refit the model, and recompute the confidence, every this many judgments.
    model_params
        Hyper-parameters overriding the model's settings.
    mc_draws
        Monte Carlo draws of the confidence.
    screen
        Skip the Monte Carlo at a refit when the confidence with the refitted
        probabilities taken as known is more than this below the stopping
        confidence (see :class:`~.rtc.RTCSelection`); None computes it at every refit.
    choose
        ``"mtc"``: MTC's weights with the model's p. ``"variance"``: those
        weights times the sd ``sqrt(p (1 − p))`` of the document's label (the
        module docstring).

    Attributes
    ----------
    estimate_
        The latest refit's estimate (of the default model: relevance at the threshold,
        no grades).
    """

    name = "posterior"

    def __init__(
        self,
        model: str = "fusion",
        interval: int = 10,
        model_params: Mapping[str, Any] | None = None,
        mc_draws: int = 4000,
        screen: float | None = 0.05,
        choose: str = "mtc",
    ):
        super().__init__(model=model, interval=interval, model_params=model_params,
                         stop_on="posterior", mc_draws=mc_draws, screen=screen)
        self.choose = choose

    def _initial_p(self, state: SelectionState) -> None:
        if self.choose not in CHOOSE:
            raise ValueError(f"choose must be one of {CHOOSE}, got {self.choose!r}")
        super()._initial_p(state)

    def _fit_predict(self, campaign):
        if self.model_name_ not in THRESHOLD_ONLY:
            return super()._fit_predict(campaign)
        level = campaign.rel_threshold
        binary = tuple(
            replace(t, grades=(t.grades >= level).astype(t.grades.dtype)) for t in campaign.topics
        )
        return super()._fit_predict(replace(campaign, topics=binary, rel_threshold=1))

    def _posterior_confidence(self, state: SelectionState, campaign, estimate) -> None:
        draws = estimate.draws
        size = sum(len(p) for p in estimate.p)
        if isinstance(draws, LazyDraws) and draws.n_draws * size <= KEEP_DRAWS:
            estimate = replace(estimate, draws=_kept(draws))
        super()._posterior_confidence(state, campaign, estimate)

    def topic_weights(self, state: SelectionState, t: int) -> np.ndarray:
        weights = super().topic_weights(state, t)
        if self.choose == "mtc":
            return weights
        p = self.choice_p_[t]
        return weights * np.sqrt(np.clip(p * (1.0 - p), 0.0, None))


def _kept(draws: LazyDraws) -> LazyDraws:
    """``draws`` with each topic's array computed when first read and then kept."""
    kept: dict[int, np.ndarray] = {}

    def make(t: int) -> np.ndarray:
        if t not in kept:
            kept[t] = draws[t]
        return kept[t]

    return LazyDraws(draws.n_topics, draws.n_draws, make)


register(PosteriorSelection)
