"""ΔMAP with both sources of error: which topics were sampled, and what the unjudged documents hold.

The confidence engine's P(ΔMAP > 0) holds the topics fixed: its only
uncertainty is the relevance of unjudged documents (Carterette 2007 §2). A
topic-level test (``relimpute evaluate --baseline``) holds the judgments
fixed: its only uncertainty is the sample of topics. This module combines the
two with a bootstrap over topics that draws relevance inside every resample
(Efron & Tibshirani's bootstrap of the topic mean, as Sakai 2006 uses for IR,
with Carterette's random relevance): replicate ``b`` resamples the T topics
with replacement and scores them on Monte Carlo relevance draw ``b`` (joint
across topics, from the model's posterior draws when it has them), so

    Var[ΔMAP*] = E_d[ σ_d² / T ] + Var_d[ ΔMAP_d ]

(law of total variance; ``σ_d²`` the spread of ΔAP over topics on draw d,
``ΔMAP_d`` its mean): the topic-sampling term plus the judgment term of the
engine. The result is a :class:`TopicBootstrap`: a
:class:`~relimpute.confidence.Comparison` whose draws are the replicates (its
intervals are percentile intervals, ``p_a_better`` the share of replicates
with ΔMAP* > 0, ties ½, and ``scores.sources`` says which uncertainty it
carries), with the standard deviation each source alone gives.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .montecarlo import _pair_summaries
from .results import Comparison

SOURCES = "topics + unjudged documents"


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
        ``(P,)`` standard deviation of ΔMAP from topic sampling alone: the
        bootstrap of the per-topic expected ΔAP, ``sd_t(E[ΔAP_t]) / √T``.
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

    def __repr__(self) -> str:
        return repr(self.comparison)

    def __str__(self) -> str:
        return str(self.comparison)


def resample_topics(
    comparison: Comparison,
    topic_draws: np.ndarray,
    rng: np.random.Generator,
    max_elements: int = 1 << 22,
) -> TopicBootstrap:
    """The Monte Carlo ``comparison`` with topic sampling added (see the module docstring).

    ``topic_draws`` is ``(D, S, T)``: draw d's score of every system on every
    topic, as :func:`relimpute.confidence.montecarlo.simulate` fills it; each
    draw gets one topic resample, drawn from ``rng``; pairs are summarised in
    blocks of at most ``max_elements`` values.
    """
    n_draws, _, n_topics = topic_draws.shape
    counts = rng.multinomial(n_topics, np.full(n_topics, 1.0 / n_topics), size=n_draws)
    means = np.einsum("dt,dst->ds", counts.astype(np.float64), topic_draws) / n_topics
    _, var, p_a_better = _pair_summaries(means, comparison.pairs, max_elements)
    a, b = comparison.pairs[:, 0], comparison.pairs[:, 1]
    e_delta_ap = comparison.scores.e_ap[a] - comparison.scores.e_ap[b]  # per-topic E[ΔAP]
    combined = replace(
        comparison,
        var_delta_map=var,
        p_a_better=p_a_better,
        scores=replace(comparison.scores, var_map=means.var(axis=0), draws=means, sources=SOURCES),
        e_delta_ap=e_delta_ap,
        var_delta_ap=None,
    )
    return TopicBootstrap(
        comparison=combined,
        sd_topics=e_delta_ap.std(axis=1) / np.sqrt(n_topics),
        sd_judgments=np.sqrt(comparison.var_delta_map),
    )
