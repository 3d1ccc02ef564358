"""Judging until the posterior predictive confidence is reached.

The MTC loop (Carterette 2007 Algorithm 1) with the default relevance model
refitted every ``interval`` judgments, as RTC does (§4.2), but stopping on the
confidence ``fusion-mc`` states at the end of a study: Monte Carlo over the
model's joint posterior draws. A model fitted on a few judgments is uncertain
about its own parameters; stopping on its point estimate (RTC read literally)
declares a pair decided after ten or twenty judgments and is then wrong far
more often than it says (examples/rtc_paper/).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import register
from .rtc import RTCSelection


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
    """

    name = "posterior"

    def __init__(
        self,
        model: str = "fusion",
        interval: int = 10,
        model_params: Mapping[str, Any] | None = None,
        mc_draws: int = 4000,
        screen: float | None = 0.05,
    ):
        super().__init__(model=model, interval=interval, model_params=model_params,
                         stop_on="posterior", mc_draws=mc_draws, screen=screen)


register(PosteriorSelection)
