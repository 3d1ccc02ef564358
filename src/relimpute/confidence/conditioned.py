"""Monte Carlo draws conditioned on labels as they arrive, for a loop that judges.

A selection loop (:mod:`relimpute.selection.posterior`) reads the confidence after every
judgment. :class:`ConditionedDraws` keeps each topic's Monte Carlo draws of the engine
(:meth:`~relimpute.confidence.ConfidenceEngine.confidence`, measure AP, Monte Carlo) and
redraws only the topic a new label changed, with the seed the engine gave it, so its answer
is the engine's on the campaign with the new labels, draw for draw. Labels between refits
also weight the model's posterior draws (self-normalised importance sampling):
:func:`normalised_weights` and :func:`weighted_pair_summaries` summarise the draws so
weighted.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .runset import select_runs, topic_view


class ConditionedDraws:
    """Monte Carlo ``P(ΔMAP > 0)`` over one estimate's posterior draws as labels arrive.

    The draws of :meth:`relimpute.confidence.ConfidenceEngine.confidence` (measure AP,
    method ``"monte carlo"``, full depth) on ``campaign`` with the generator
    ``default_rng(seed)``: the engine draws a topic's
    AP from one kernel seed, taken from the generator topic by topic, so each topic's
    draws are kept and a new label in a topic recomputes that topic alone with its seed.
    A judged document keeps its label in every draw (its p is not read), so after
    :meth:`label` the result is the engine's on the campaign with the new labels, draw
    for draw (tests/test_selection.py).
    """

    def __init__(self, campaign, estimate, pairs, n_draws: int, seed: int):
        from ..labels import labelled_documents

        self.labelled = labelled_documents(campaign) or [None] * campaign.n_topics
        self.rows, _, self.pairs = select_runs(campaign, estimate, None, pairs)
        self.campaign, self.estimate, self.n_draws = campaign, estimate, int(n_draws)
        generator = np.random.default_rng(seed)
        self.seeds = [int(generator.integers(2**32)) for _ in range(campaign.n_topics)]
        self.scores: list[np.ndarray | None] = [None] * campaign.n_topics

    def label(self, t: int, judged: np.ndarray, grades: np.ndarray) -> None:
        """Topic ``t`` with these judgments, ``(n,)`` judged mask and grades (its draws
        recomputed when next read)."""
        topics = list(self.campaign.topics)
        topics[t] = replace(topics[t], judged=judged.copy(), grades=grades.copy())
        self.campaign = replace(self.campaign, topics=tuple(topics))
        self.scores[t] = None

    def _topic(self, t: int) -> np.ndarray:
        """``(n_draws, S)`` AP draws of topic ``t``, as the engine's Monte Carlo draws them."""
        from .montecarlo import _ap_draws, uncertain_documents

        topic = self.campaign.topics[t]
        view = topic_view(topic, self.rows, None, self.labelled[t])  # as the engine's views
        p = np.asarray(self.estimate.p[t], dtype=np.float64)
        post = self.estimate.draws[t] if self.estimate.draws is not None else None
        possible = p if post is None else post.max(axis=0)
        relevant = topic.relevant(self.campaign.rel_threshold)
        uncertain = uncertain_documents(view, topic, possible)
        return _ap_draws(view, relevant, uncertain, p, post, self.n_draws, _Seed(self.seeds[t]))

    def summaries(self, log_weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per pair E[ΔMAP], Var[ΔMAP] and P(ΔMAP > 0) (ties ½) over the draws.

        ``log_weights``, ``(M,)`` over the estimate's posterior draws: Monte Carlo draw
        ``b`` (which reads posterior draw ``b mod M``) weighs ``exp(log_weights[b mod M])``
        (self-normalised); None, or equal weights: every draw alike.
        """
        from .montecarlo import _pair_summaries

        n_topics = self.campaign.n_topics
        mean_draws = np.zeros((self.n_draws, len(self.rows)))
        for t in range(n_topics):  # in topic order, as the engine adds them
            if self.scores[t] is None:
                self.scores[t] = self._topic(t)
            mean_draws += self.scores[t] / n_topics
        if log_weights is None or np.all(log_weights == log_weights[0]):
            return _pair_summaries(mean_draws, self.pairs)
        weights = normalised_weights(log_weights)[np.arange(self.n_draws) % len(log_weights)]
        return weighted_pair_summaries(mean_draws, self.pairs, weights / weights.sum())


def normalised_weights(log_weights: np.ndarray) -> np.ndarray:
    """``exp(log_weights)`` scaled to sum to 1 (a draw of likelihood 0 weighs 0)."""
    log_weights = np.asarray(log_weights, dtype=np.float64)
    top = np.max(log_weights)
    if not np.isfinite(top):
        raise ValueError("every posterior draw gives the labels likelihood 0")
    weights = np.exp(log_weights - top)
    return weights / weights.sum()


def weighted_pair_summaries(mean_draws: np.ndarray, pairs: np.ndarray, weights: np.ndarray):
    """Weighted mean, variance and ``P(Δ > 0) + ½ P(Δ = 0)`` of ``Δ = mean_draws[:, a] −
    mean_draws[:, b]`` per pair ``(a, b)``; ``weights (B,)`` sum to 1."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    delta = mean_draws[:, pairs[:, 0]] - mean_draws[:, pairs[:, 1]]
    mean = weights @ delta
    var = weights @ (delta - mean) ** 2
    prob = weights @ (delta > 0) + 0.5 * (weights @ (delta == 0))
    return mean, var, prob


class _Seed:
    """A generator stand-in whose ``integers`` returns one fixed kernel seed."""

    def __init__(self, seed: int):
        self.seed = seed

    def integers(self, high: int) -> int:
        return self.seed
