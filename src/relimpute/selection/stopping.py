"""When a selection loop stops: confidence reached, budget spent, pool exhausted.

The confidence of a pair is that of Carterette 2007 §2.1 (Eq. 1 with the
normal approximation): with ΔMAP = MAP_a − MAP_b,
``p_a_better = P(ΔMAP > 0) = Φ(E[ΔMAP] / sd[ΔMAP])`` and the pair is decided
when ``max(P, 1 − P) ≥ α``. :class:`PairConfidence` keeps the per-topic
moments of ΔQ for every compared pair and, after a judgment in topic ``t``,
recomputes only topic ``t`` of the pairs whose systems retrieve the judged
document (the others only see ``E[R_t]`` change). The moments come from the
confidence engine with the paper's ratio ``Var[ΔQ] / E[R]²``.
"""

from __future__ import annotations


from dataclasses import dataclass, replace

import numpy as np

from ..confidence import ConfidenceEngine, prob_positive
from ..relevance.base import RelevanceEstimate
from .base import SelectionState

STOP_REASONS = ("confidence", "budget", "exhausted")


class PairConfidence:
    """Per-pair ``E[ΔMAP]``, ``Var[ΔMAP]`` and ``P(ΔMAP > 0)`` kept up to date.

    The per-topic moments come from :class:`relimpute.confidence.ConfidenceEngine`
    (``ratio="constant"``, E[R] over the compared systems: the run set being
    evaluated while judging; Carterette 2007 §4.3 judges for the initial
    pair before the other runs are seen) and are stored
    as moments of ΔQ = ΔAP · E[R_t], so that a judgment that does not touch a
    pair only rescales it by the new ``E[R_t]``.

    Attributes
    ----------
    e_q, var_q
        ``(P, T)`` moments of ΔQ per pair and topic.
    expected_r
        ``(T,)`` ``E[R_t]`` over judged documents and unjudged ones a
        compared system retrieves (docs/math/average-precision.md).
    """

    def __init__(self, state: SelectionState):
        self.engine = ConfidenceEngine(ratio="constant")
        names = state.systems
        self.pair_names = [(names[a], names[b]) for a, b in state.pairs]
        # the engine counts E[R] over its campaign's runs: give it the compared ones only
        compared = state.campaign.subset(list(names))
        self.single = [replace(compared, topics=(t,)) for t in compared.topics]
        n_pairs, n_topics = len(state.pairs), state.n_topics
        self.e_q = np.zeros((n_pairs, n_topics))
        self.var_q = np.zeros((n_pairs, n_topics))
        self.expected_r = np.zeros(n_topics)
        self.refresh(state, range(n_topics))

    def refresh(self, state: SelectionState, topics) -> None:
        """Recompute every pair on ``topics``."""
        for t in topics:
            self._pairs_on_topic(state, t, np.arange(len(state.pairs)))

    def update(self, state: SelectionState, topic: int, doc: int) -> None:
        """After a judgment of ``doc`` in ``topic``: only the pairs retrieving it."""
        retrieves = state.ranks[topic][:, doc] > 0
        touched = np.flatnonzero(retrieves[state.pairs[:, 0]] | retrieves[state.pairs[:, 1]])
        self._pairs_on_topic(state, topic, touched)

    def _pairs_on_topic(self, state: SelectionState, t: int, pairs: np.ndarray) -> None:
        expected_r = state.expected_relevant(t)
        self.expected_r[t] = expected_r
        if not len(pairs):
            return
        campaign = self.single[t]
        estimate = RelevanceEstimate(
            query_ids=campaign.query_ids, doc_ids=(campaign.topics[0].doc_ids,), p=(state.p[t],)
        )
        result = self.engine.confidence(
            campaign, estimate, systems=state.systems, pairs=[self.pair_names[k] for k in pairs],
            method="normal",
        )
        self.e_q[pairs, t] = result.e_delta_ap[:, 0] * expected_r
        self.var_q[pairs, t] = result.var_delta_ap[:, 0] * expected_r**2

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """``(P,)`` E[ΔMAP] and Var[ΔMAP] (topics with E[R] = 0 contribute 0)."""
        n_topics = self.e_q.shape[1]
        positive = self.expected_r > 0
        r = np.where(positive, self.expected_r, 1.0)
        mean = (np.where(positive, self.e_q / r, 0.0)).sum(axis=1) / n_topics
        var = (np.where(positive, self.var_q / r**2, 0.0)).sum(axis=1) / n_topics**2
        return mean, var

    def p_a_better(self) -> np.ndarray:
        """``(P,)`` ``P(ΔMAP > 0)`` (normal approximation)."""
        return prob_positive(*self.moments())

    def confidence(self) -> np.ndarray:
        """``(P,)`` ``max(P, 1 − P)`` per pair."""
        p = self.p_a_better()
        return np.maximum(p, 1.0 - p)


class PosteriorPairConfidence:
    """Per-pair ``E[ΔMAP]``, ``Var[ΔMAP]`` and ``P(ΔMAP > 0)`` over a model's posterior draws.

    The same reading interface as :class:`PairConfidence`, but the numbers are
    the posterior predictive ones of Monte Carlo over the model's joint draws
    (:meth:`relimpute.confidence.ConfidenceEngine.monte_carlo`), so the
    model's parameter uncertainty is in the confidence. They are recomputed
    when the strategy refits its model (:meth:`set`); a judgment in between
    leaves them as they were, so the loop can only stop right after a refit.
    """

    def __init__(self, n_pairs: int):
        self.mean = np.zeros(n_pairs)
        self.var = np.zeros(n_pairs)
        self.p = np.full(n_pairs, 0.5)

    def set(self, mean: np.ndarray, var: np.ndarray, p_a_better: np.ndarray) -> None:
        self.mean, self.var, self.p = (np.asarray(a, dtype=float).copy() for a in (mean, var, p_a_better))

    def refresh(self, state: SelectionState, topics) -> None:
        """Nothing to do: the numbers move at the strategy's refits."""

    def update(self, state: SelectionState, topic: int, doc: int) -> None:
        """Nothing to do: the numbers move at the strategy's refits."""

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        return self.mean, self.var

    def p_a_better(self) -> np.ndarray:
        return self.p

    def confidence(self) -> np.ndarray:
        return np.maximum(self.p, 1.0 - self.p)


@dataclass(frozen=True, slots=True)
class StoppingRule:
    """Stop at ``confidence`` (Carterette 2007's α) for every pair, after ``budget`` new
    judgments, or when nothing is left to judge (checked in that order).

    ``confidence=None`` never stops on confidence (pooling to a budget);
    ``budget=None`` has no budget.
    """

    confidence: float | None = 0.95
    budget: int | None = None

    def __post_init__(self) -> None:
        if self.confidence is not None and not 0.5 <= self.confidence <= 1.0:
            raise ValueError(f"confidence must lie in [0.5, 1], got {self.confidence}")
        if self.budget is not None and self.budget < 0:
            raise ValueError(f"budget must be >= 0, got {self.budget}")

    def decided(self, confidence: np.ndarray) -> np.ndarray:
        """``(P,)`` bool: pairs whose ``max(P, 1 − P)`` reached the stopping confidence."""
        if self.confidence is None:
            return np.zeros(len(confidence), dtype=bool)
        return np.asarray(confidence) >= self.confidence

    def reason(self, confidence: np.ndarray, n_judged: int, exhausted: bool) -> str | None:
        """Why to stop now (one of :data:`STOP_REASONS`), or None to go on."""
        if self.confidence is not None and self.decided(confidence).all():
            return "confidence"
        if self.budget is not None and n_judged >= self.budget:
            return "budget"
        if exhausted:
            return "exhausted"
        return None
