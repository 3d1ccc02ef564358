"""ΔMAP with both sources of error: which topics were sampled, and what the unjudged documents hold.

The confidence engine's P(ΔMAP > 0) holds the topics fixed: its only
uncertainty is the relevance of unjudged documents (Carterette 2007 §2). A
topic-level test (``relimpute evaluate --baseline``) holds the judgments
fixed: its only uncertainty is the sample of topics. This module combines the
two with a bootstrap over topics that draws relevance inside every resample
(Efron & Tibshirani's bootstrap of the topic mean, as Sakai 2006 uses for IR,
with Carterette's random relevance): replicate ``b`` resamples the T topics
with replacement and scores them on Monte Carlo relevance draw ``b`` (joint
across topics, from the model's posterior draws when it has them).

Small topic sets. The plain bootstrap of a mean is too narrow for the 25 to
50 topics of a TREC collection: it uses the plug-in variance (biased low by
``(T − 1)/T``) and ignores that the variance itself is estimated, which the
t distribution's ``T − 1`` degrees of freedom account for. Split in half,
TREC-8 ad hoc and DL 2019 with complete judgments show it: a 95% percentile
interval on one half's topics holds the other half's ΔMAP 76% of the time,
where a correct interval holds 83.5% (Cormack & Lynam 2006;
``examples/precision/``). So each replicate's topic deviation from its draw's
mean ``m_b`` is scaled by ``c_b = √(T / χ²_{T−1,b})`` (an independent
chi-square draw per replicate)::

    ΔMAP*_b = m_b + c_b · (resampled mean_b − m_b)

which turns the bootstrap's normal-like spread into ``s/√T · t_{T−1}`` (the
paired t-test's distribution, ``s`` the sample standard deviation; the
posterior of a normal mean under Jeffreys' prior) while keeping its shape.
By the law of total variance

    Var[ΔMAP*] = Var_b[ m_b ] + E[c²] · E_b[ σ_b² / T ],   E[c²] = T / (T − 3)

(``σ_b²`` the plug-in spread of ΔAP over topics on draw b): the judgment
term of the engine plus the topic-sampling term. With complete judgments the
interval is the paired t-interval and ``p_a_better`` one minus the t-test's
one-sided p-value, up to the bootstrap's shape. The result is a
:class:`TopicBootstrap`: a :class:`~relimpute.confidence.Comparison` whose
draws are the replicates (its intervals are percentile intervals of them,
``p_a_better`` the share of replicates with ΔMAP* > 0, ties ½, and
``scores.sources`` says which uncertainty it carries), with the standard
deviation each source alone gives.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from .montecarlo import _pair_summaries
from .results import Comparison

if TYPE_CHECKING:  # the frames' type, for readers: pandas is imported by what makes them
    import pandas as pd

@dataclass(frozen=True, slots=True, eq=False)
class TopicBootstrap:
    """ΔMAP over topic resamples with relevance drawn inside, and where its spread comes from.

    Attributes
    ----------
    comparison
        A :class:`~relimpute.confidence.Comparison` whose draws are the
        replicates (``scores.sources`` says "topics + unjudged documents");
        ``e_delta_ap`` holds the per-topic expected ΔAP.
    sd_topics
        ``(P,)`` standard error of ΔMAP from topic sampling alone, the
        t-test's ``s / √T`` of the per-topic expected ΔAP (``s`` with ``T − 1``
        degrees of freedom).
    sd_judgments
        ``(P,)`` standard deviation of ΔMAP from the unjudged documents alone
        (topics fixed): the engine's Monte Carlo answer.
    """

    comparison: Comparison
    sd_topics: np.ndarray
    sd_judgments: np.ndarray

    def to_frame(self, level: float = 0.95) -> pd.DataFrame:
        """The comparison's table (interval and P from the replicates) with
        ``sd_topics`` and ``sd_judgments`` beside ``sd_delta_map``."""
        frame = self.comparison.to_frame(level)
        frame.insert(frame.columns.get_loc("sd_delta_map") + 1, "sd_topics", self.sd_topics)
        frame.insert(frame.columns.get_loc("sd_topics") + 1, "sd_judgments", self.sd_judgments)
        return frame

    def matrix(self) -> pd.DataFrame:
        """``S × S`` table of P(row system beats column system) over the replicates."""
        return self.comparison.matrix()

    def beats(self) -> np.ndarray:
        """:meth:`matrix`'s values (:meth:`Comparison.beats`)."""
        return self.comparison.beats()

    def __repr__(self) -> str:
        return repr(self.comparison)

    def __str__(self) -> str:
        return str(self.comparison)


def resample_topics(
    comparison: Comparison,
    topic_draws: np.ndarray,
    rng: np.random.Generator,
) -> TopicBootstrap:
    """The Monte Carlo ``comparison`` with topic sampling added (see the module docstring).

    ``topic_draws`` is ``(D, S, T)``: draw d's score of every system on every
    topic, as :func:`relimpute.confidence.montecarlo.simulate` fills it; each
    draw gets one topic resample and one scale ``c``, drawn from ``rng``.
    """
    n_draws, _, n_topics = topic_draws.shape
    if n_topics < 2:
        raise ValueError(f"topic sampling needs at least 2 topics, got {n_topics}")
    counts = rng.multinomial(n_topics, np.full(n_topics, 1.0 / n_topics), size=n_draws)
    resampled = np.einsum("dt,dst->ds", counts.astype(np.float64), topic_draws) / n_topics
    draw_means = topic_draws.mean(axis=2)
    scale = np.sqrt(n_topics / rng.chisquare(n_topics - 1, size=n_draws))[:, None]
    means = draw_means + scale * (resampled - draw_means)
    _, var, p_a_better = _pair_summaries(means, comparison.pairs)
    a, b = comparison.pairs[:, 0], comparison.pairs[:, 1]
    e_delta_ap = comparison.scores.e_ap[a] - comparison.scores.e_ap[b]  # per-topic E[ΔAP]
    combined = replace(
        comparison,
        var_delta_map=var,
        p_a_better=p_a_better,
        scores=replace(comparison.scores, var_map=means.var(axis=0), draws=means, sources=f"topics + {comparison.scores.sources}"),
        e_delta_ap=e_delta_ap,
        var_delta_ap=None,
    )
    return TopicBootstrap(
        comparison=combined,
        sd_topics=e_delta_ap.std(axis=1, ddof=1) / np.sqrt(n_topics),
        sd_judgments=np.sqrt(comparison.var_delta_map),
    )
