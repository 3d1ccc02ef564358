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

Which p the weights read (``choose_from``): the latest refit's estimate of each unjudged
document (``"refit"``), or its posterior predictive probability over the refit's draws,
``Σ_s w_s p_s(d) / Σ_s w_s`` (``"predictive"``): the draws' mean at a refit, and between
refits with ``update="reweight"`` their mean weighted by the labels since (below), so every
label moves the choice of the next document through the shared parameters, as it moves the
checks' confidence (docs/math/selection.md, "Choosing from the weighted draws"). ``"draws"``:
the draws' mean at a refit, left as it is between refits (what ``"predictive"`` adds to it is
the weighting).

The stopping confidence is the posterior predictive P(ΔMAP > 0), a binary measure, so
each refit fits the default model on the judgments read at the relevance threshold
(grades 0/1): its probabilities of relevance and their draws do not depend on the grades
(only its split of relevance into grades does, docs/math/fusion.md "Relevance and
grades"), and the cut-points' fit is skipped. Each topic's posterior draws are computed
once per refit, not once per Monte Carlo pass.

Between refits (``update="reweight"``) a new label is evidence about the model's
parameters, not only about its own document: the refit's posterior draws are draws of the
parameters, draw ``s`` giving ``p_s(d)`` for every document, so conditioning them on a label
``y`` of document ``d`` is Bayes' rule on the draws, ``w_s ∝ w_s p_s(d)^y (1 − p_s(d))^(1−y)``
(self-normalised importance sampling from the refit's posterior; Gelman et al. 2013, BDA3
§10.4). The checks' Monte Carlo then weights each of its draws by its posterior draw's ``w``,
which moves every other document's predictive probability through the shared parameters;
the model is refitted only when the effective sample size ``(Σ w)² / Σ w²`` falls below
``min_ess`` times the draws (docs/math/selection.md, "Between refits").

A check between refits is a Monte Carlo estimate on draws that only approximate the refitted
posterior (the model's judged-depth and capture features move with the judgments; weights
cannot move them), read after every judgment: stopping the first time it crosses the target
is optional stopping on a noisy estimate. ``confirm=True`` refits at such a candidate stop and
stops only if the refit's confidence reaches the target too, so every stop is a refit's
(docs/math/selection.md, "Confirming a stop").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from .._deprecation import renamed_kwargs
from ..confidence.conditioned import ConditionedDraws, normalised_weights
from ..relevance.base import LazyDraws
from .base import SelectionState, register_strategy
from .mtc import MTC
from .rtc import RTCSelection
from .stopping import PairConfidence

#: how the posterior selector ranks the candidates (see the module docstring)
CHOOSE = ("mtc", "variance")
#: what happens to the latest refit's draws between refits (see the module docstring)
UPDATE = ("refit", "reweight")
#: which probabilities of the unjudged documents the choice reads (see the module docstring)
CHOOSE_FROM = ("refit", "predictive", "draws")
#: models whose probabilities of relevance (and their draws) are fitted at the threshold
#: alone, the grades only split them (relimpute/relevance/fusion/): refitted on binary labels
THRESHOLD_ONLY = ("fusion",)
#: keep a refit's posterior draws of every topic when they hold at most this many values
#: (2^24 float64: 128 MB); larger campaigns recompute a topic's draws at each pass
KEEP_DRAWS = 1 << 24


@renamed_kwargs(mc_draws="n_draws")
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
    n_draws
        Monte Carlo draws of the confidence (``mc_draws`` until 0.3.0).
    screen
        Skip the Monte Carlo at a refit, or at a check between refits, when the
        confidence with the refitted probabilities taken as known is more than this
        below the stopping confidence (see :class:`~.rtc.RTCSelection`); None computes
        it every time.
    choose
        ``"mtc"``: MTC's weights with the model's p. ``"variance"``: those
        weights times the sd ``sqrt(p (1 − p))`` of the document's label (the
        module docstring).
    check_every
        Between refits, recompute the confidence every this many judgments on the latest
        refit's draws conditioned on the new labels (the module docstring); None: only at
        refits (with ``update="reweight"``: after every judgment).
    update
        ``"refit"``: refit every ``interval`` judgments; the checks keep the refit's
        draws equally likely. ``"reweight"``: weight the refit's draws by the labels'
        likelihood (the module docstring) and refit only when their effective sample size
        falls below ``min_ess`` times the draws (``interval`` is not read).
    min_ess
        With ``update="reweight"``: the fraction of the draws, in (0, 1], below which the
        effective sample size triggers a refit.
    ess_refits
        With ``update="reweight"``: True, refit when the effective sample size falls
        below ``min_ess`` times the draws; False, refit every ``interval`` judgments as
        ``update="refit"`` does (the same documents, up to the earlier stop), skipping the
        checks while the effective sample size is below it.
    posterior_draws
        The model's posterior draws per refit, its ``n_draws`` (None: the model's settings).
    confirm
        When a check between refits reaches the stopping confidence, refit on the
        judgments so far and stop only if the refit's confidence reaches it too; if not,
        judging goes on from the refit. False: stop on the check.
    choose_from
        The p of the unjudged documents that ``choose`` reads: ``"refit"``, the latest
        refit's estimate; ``"predictive"``, the mean of its posterior draws, weighted by the
        labels since with ``update="reweight"``; ``"draws"``, that mean unweighted (the module
        docstring).
    seed, evaluated
        As :class:`~.rtc.RTCSelection`: a fixed seed makes every refit state ``compare``'s
        confidence on the judgments so far, with ``evaluated="all"`` counting ``E[R]`` as
        ``compare`` does.

    Attributes
    ----------
    estimate_
        The latest refit's estimate (of the default model: relevance at the threshold,
        no grades).
    n_checks_, n_check_screened_
        Checks between refits whose Monte Carlo ran, and those ``screen`` skipped.
    n_confirms_
        With ``confirm``: refits a check's candidate stop asked for.
    confirms_
        Their ``(judgments, check, refit)``: the new judgments so far and ``(P,)``
        P(ΔMAP > 0) of the check and of the refit.
    check_seed_
        The seed of the checks' Monte Carlo since the latest refit (one per refit).
    log_weights_
        With ``update="reweight"``: ``(M,)`` log-likelihood of the labels since the latest
        refit under each of its posterior draws.
    ess_
        Their effective sample size ``(Σ w)² / Σ w²``.
    """

    name = "posterior"

    def __init__(
        self,
        model: str = "fusion",
        interval: int = 10,
        model_params: Mapping[str, Any] | None = None,
        n_draws: int = 4000,
        screen: float | None = 0.05,
        choose: str = "mtc",
        check_every: int | None = None,
        update: str = "refit",
        min_ess: float = 0.5,
        ess_refits: bool = True,
        posterior_draws: int | None = None,
        confirm: bool = False,
        choose_from: str = "refit",
        seed: int | None = None,
        evaluated: str = "compared",
    ):
        super().__init__(model=model, interval=interval, model_params=model_params,
                         stop_on="posterior", n_draws=n_draws, screen=screen,
                         seed=seed, evaluated=evaluated)  # fmt: skip
        self.choose = choose
        self.check_every = check_every
        self.update = update
        self.min_ess = min_ess
        self.ess_refits = ess_refits
        self.posterior_draws = posterior_draws
        self.confirm = confirm
        self.choose_from = choose_from

    def _initial_p(self, state: SelectionState) -> None:
        if self.choose not in CHOOSE:
            raise ValueError(f"choose must be one of {CHOOSE}, got {self.choose!r}")
        every = self.check_every
        if every is not None and (int(every) != every or every < 1):
            raise ValueError(f"check_every must be None or a positive integer, got {every!r}")
        if self.update not in UPDATE:
            raise ValueError(f"update must be one of {UPDATE}, got {self.update!r}")
        if not 0.0 < float(self.min_ess) <= 1.0:
            raise ValueError(f"min_ess must lie in (0, 1], got {self.min_ess!r}")
        draws = self.posterior_draws
        if draws is not None and (int(draws) != draws or draws < 2):
            raise ValueError(f"posterior_draws must be None or an integer >= 2, got {draws!r}")
        if not isinstance(self.confirm, (bool, np.bool_)):
            raise ValueError(f"confirm must be True or False, got {self.confirm!r}")
        if self.choose_from not in CHOOSE_FROM:
            raise ValueError(f"choose_from must be one of {CHOOSE_FROM}, got {self.choose_from!r}")
        self.reweight_ = self.update == "reweight"
        self.every_ = int(every) if every is not None else 1 if self.reweight_ else None
        self.log_weights_, self.ess_ = np.zeros(0), 0.0
        self.n_checks_ = self.n_check_screened_ = self.n_confirms_ = 0
        self.confirms_: list[tuple[int, np.ndarray, np.ndarray]] = []
        self.known_ = self.conditioned_ = None
        # the checks' seeds: a stream of their own, so the refits draw as without checks
        bits = self.rng_.bit_generator
        own = bits.jumped() if hasattr(bits, "jumped") else type(bits)(bits.seed_seq.spawn(1)[0])
        self.check_rng_ = np.random.Generator(own)
        super()._initial_p(state)

    def _refit(self, state: SelectionState) -> None:
        super()._refit(state)
        if self.choose_from != "refit":  # the draws equally likely: their mean
            self._predictive_p(state, None)
        if self.every_ is None:
            return
        self.check_seed_ = int(self.check_rng_.integers(2**63))
        self.conditioned_ = None  # built at the first check the screen lets through
        if self.reweight_:  # the refit's draws equally likely again
            self.log_weights_ = np.zeros(self.draws_estimate_.n_draws)
            self.ess_ = float(self.draws_estimate_.n_draws)
        else:  # the refit's p taken as known: the checks' screen (the weights would move it)
            self.known_ = PairConfidence(state)

    def _observe(self, state, topic, doc, p_before):
        if self.reweight_:
            return self._reweight(state, topic, doc, p_before)
        changed = super()._observe(state, topic, doc, p_before)
        if self.known_ is None or not self.n_seen_ % int(self.interval):
            return changed  # no checks, or a refit has just decided
        self.known_.update(state, topic, doc)
        if self.conditioned_ is not None:
            self.conditioned_.label(topic, state.judged[topic], state.grades[topic])
        if not self.n_seen_ % self.every_:
            self._check(state)
            if self._confirmed(state):
                return list(range(state.n_topics))
        return changed

    def _reweight(self, state, topic, doc, p_before):
        """Weight the refit's draws by the new label's likelihood; refit when they degenerate."""
        self.n_seen_ += 1
        p = np.asarray(self.draws_estimate_.draws[topic][:, doc], dtype=np.float64)
        with np.errstate(divide="ignore"):
            self.log_weights_ += np.log(p if state.p[topic][doc] == 1.0 else 1.0 - p)
        self.ess_ = effective_sample_size(self.log_weights_)
        degenerate = self.ess_ < float(self.min_ess) * len(self.log_weights_)
        due = not self.n_seen_ % int(self.interval) if not self.ess_refits else degenerate
        if due:
            self._refit(state)
            self._recompute_all(state)
            return list(range(state.n_topics))
        weights = self.log_weights_
        moved = np.isfinite(np.max(weights)) and np.any(weights != weights[0])
        if self.choose_from == "predictive" and moved:  # (else the p set before stands)
            self._predictive_p(state, weights)
            self._recompute_all(state)
            changed = list(range(state.n_topics))
        else:
            changed = MTC._observe(self, state, topic, doc, p_before)
        if self.conditioned_ is not None:
            self.conditioned_.label(topic, state.judged[topic], state.grades[topic])
        if not self.n_seen_ % self.every_:
            if degenerate:  # (ess_refits=False) the weights cannot be trusted until the refit
                self.n_check_screened_ += 1
            else:
                self._check(state)
                if self._confirmed(state):
                    return list(range(state.n_topics))
        return changed

    def _predictive_p(self, state: SelectionState, log_weights: np.ndarray | None) -> None:
        """Every unjudged document's p: the mean of the latest refit's draws of it, weighted by
        ``exp(log_weights)`` (None: equally)."""
        draws = self.draws_estimate_.draws
        weights = None if log_weights is None else normalised_weights(log_weights)
        for t, (p, judged) in enumerate(zip(self.choice_p_, state.judged)):
            drawn = np.asarray(draws[t], dtype=np.float64)
            mean = drawn.mean(axis=0) if weights is None else weights @ drawn
            p[~judged] = mean[~judged]

    def _check(self, state: SelectionState) -> None:
        """The confidence on the latest refit's draws conditioned on the labels since."""
        target = state.target_confidence
        if self.screen is not None and target is not None and not self.reweight_:
            if np.all(self.known_.confidence() < target - float(self.screen)):
                self.n_check_screened_ += 1
                return
        if self.conditioned_ is None:
            names = state.systems
            self.conditioned_ = ConditionedDraws(
                self.evaluated_campaign(state, state.current_campaign()), self.draws_estimate_,
                [(names[a], names[b]) for a, b in state.pairs], int(self.n_draws), self.check_seed_,
            )  # fmt: skip
        self.n_checks_ += 1
        weights = self.log_weights_ if self.reweight_ else None
        self.posterior_.set(*self.conditioned_.summaries(weights))

    def _confirmed(self, state: SelectionState) -> bool:
        """With ``confirm``, when the check just made reaches the stopping confidence: refit,
        so the loop stops on the refit's confidence (True: refitted)."""
        target = state.target_confidence
        if not self.confirm or target is None or not np.all(self.posterior_.confidence() >= target):
            return False
        self.n_confirms_ += 1
        check = self.posterior_.p_a_better().copy()
        screen, self.screen = self.screen, None  # a skipped Monte Carlo would keep the check's value
        try:
            self._refit(state)
        finally:
            self.screen = screen
        self._recompute_all(state)
        self.confirms_.append((self.n_seen_, check, self.posterior_.p_a_better().copy()))
        return True

    def _fit_predict(self, campaign):
        if self.posterior_draws is not None:
            self.model_params_ = {**self.model_params_, "n_draws": int(self.posterior_draws)}
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
        self.draws_estimate_ = estimate  # the checks until the next refit read the same draws
        super()._posterior_confidence(state, campaign, estimate)

    def topic_weights(self, state: SelectionState, t: int) -> np.ndarray:
        weights = super().topic_weights(state, t)
        if self.choose == "mtc":
            return weights
        p = self.choice_p_[t]
        return weights * np.sqrt(np.clip(p * (1.0 - p), 0.0, None))


def effective_sample_size(log_weights: np.ndarray) -> float:
    """``(Σ w)² / Σ w²`` of the weights ``exp(log_weights)`` (Kong 1992; 0 when every
    draw gives the labels likelihood 0)."""
    if not np.isfinite(np.max(log_weights)):
        return 0.0
    weights = normalised_weights(log_weights)
    return float(1.0 / np.sum(weights**2))


def _kept(draws: LazyDraws) -> LazyDraws:
    """``draws`` with each topic's array computed when first read and then kept."""
    kept: dict[int, np.ndarray] = {}

    def make(t: int) -> np.ndarray:
        if t not in kept:
            kept[t] = draws[t]
        return kept[t]

    return LazyDraws(draws.n_topics, draws.n_draws, make)


register_strategy(PosteriorSelection)
