"""Judging with automatic labels: humans judge where the labels leave the comparison unsure.

The RTC loop (Carterette 2007 §3–4, Algorithm 1) on the label-aware model
(:class:`~relimpute.relevance.fusion_llm.FusionLLM`: the runs' consensus plus
the labels, their error learned from the judgments so far), refitted every
``interval`` judgments, stopping on its posterior predictive confidence as
:class:`~.posterior.PosteriorSelection` does.

What it judges. MTC's weight of an unjudged document is the change of
``E[ΔMAP]`` between its two outcomes, ``|E[ΔQ | x_i = 1] − E[ΔQ | x_i = 0]|``
over ``T · E[R_t]`` (:mod:`.mtc`). A document the model is sure of barely moves
the comparison when judged, however large that change: its expected movement
is ``p_i`` times the change to 1 plus ``1 − p_i`` times the change to 0, ::

    w_i = 2 p_i (1 − p_i) · |E[ΔQ | x_i = 1] − E[ΔQ | x_i = 0]| / (T · E[R_t])

with ``p_i`` the model's probability (the expected absolute change of
``E[ΔQ]`` when ``x_i ~ Bernoulli(p_i)``; summed over the undecided pairs for a
run set). The labels enter through ``p_i``: where a label and the runs agree
the model is sure and the document waits; where they disagree, or a label
value has proved unreliable, ``p_i`` is near ½ and the document is judged
first, which is also where a human label teaches the model most about the
labels' error. Before the first judgment of a labelled document the labels'
shifts sit at their prior mean 0 and the choice is the runs' alone.

Where it may judge. The default model learns from the judged documents within
the runs' judged prefixes (docs/math/fusion.md, "Which judged documents it
learns from"): a pool, chosen on the runs' evidence only, so the fit is
unbiased given its features. Documents picked anywhere for their labels would
be a sample chosen on something the runs do not see, and the fit would learn
the wrong level. With ``frontier=True`` (the default) only the next unjudged
document of some compared run is a candidate, so every judgment extends a run's
judged prefix and the judged set stays a pool; the labels choose which run's
pool grows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._deprecation import renamed_kwargs
from .base import SelectionState, register_strategy
from .rtc import RTCSelection


@renamed_kwargs(mc_draws="n_draws")
class LLMSelection(RTCSelection):
    """The RTC loop on ``fusion-llm``, judging where the model is least sure (module docstring).

    Parameters
    ----------
    model
        A registered relevance model or settings file (``"fusion-llm"``: the
        labels of the campaign, :func:`relimpute.labels.with_labels`, as evidence;
        without any it is the default model).
    interval
        Refit the model every this many judgments.
    model_params
        Hyper-parameters overriding the model's settings.
    stop_on
        What the stopping confidence reads, as :class:`~.rtc.RTCSelection`:
        ``"posterior"`` (default) Monte Carlo over the refitted model's draws.
    n_draws
        Monte Carlo draws of the confidence (``mc_draws`` until 0.3.0).
    screen
        Skip the Monte Carlo at a refit that cannot stop (:class:`~.rtc.RTCSelection`).
    frontier
        Judge only the first candidate of some compared run's ranking (module docstring);
        False: any candidate.
    seed, evaluated
        As :class:`~.rtc.RTCSelection`.
    """

    name = "llm"

    def __init__(
        self,
        model: str = "fusion-llm",
        interval: int = 10,
        model_params: Mapping[str, Any] | None = None,
        stop_on: str = "posterior",
        n_draws: int = 4000,
        screen: float | None = 0.05,
        frontier: bool = True,
        seed: int | None = None,
        evaluated: str = "compared",
    ):
        super().__init__(model=model, interval=interval, model_params=model_params,
                         stop_on=stop_on, n_draws=n_draws, screen=screen,
                         seed=seed, evaluated=evaluated)  # fmt: skip
        self.frontier = frontier

    def _judging_params(self, model: str) -> dict:
        """fusion-llm keeps the runs' evidence on a document no label names (``unlabelled="runs"``,
        at full weight, ``runs_weight=1``): its defaults take the labels' documents as the pool,
        which would hold such a document at p 0, so that it is never judged. Its draws keep the
        default model's per-run spread below the pool on a labelled document too
        (``labelled_beyond_run_sd=1``, the shipped ``beyond_run_sd``): the selector was measured
        so. A settings file or ``model_params`` naming them wins."""
        if model != "fusion-llm":
            return {}
        return {"unlabelled": "runs", "runs_weight": 1.0, "labelled_beyond_run_sd": 1.0}

    def topic_weights(self, state: SelectionState, t: int) -> np.ndarray:
        """``(n,)`` expected absolute change of ``E[ΔQ]`` per document over ``T · E[R_t]``
        (0 for non-candidates; with ``frontier``, −1 for candidates no run reaches next)."""
        p = self._choice_probabilities(state)[t]
        weights = 2.0 * p * (1.0 - p) * super().topic_weights(state, t)
        if self.frontier:
            weights[state.candidates[t] & ~frontier_documents(state, t)] = -1.0
        return weights


def frontier_documents(state: SelectionState, t: int) -> np.ndarray:
    """``(n,)`` bool: per compared run, its best-ranked candidate document of topic ``t``."""
    topic = state.campaign.topics[t]
    out = np.zeros(topic.n_docs, dtype=bool)
    for s in state.compared:
        docs = topic.ranking[s, : int(topic.depth[s])]
        open_ = state.candidates[t][docs]
        if open_.any():
            out[docs[np.argmax(open_)]] = True
    return out


register_strategy(LLMSelection)
