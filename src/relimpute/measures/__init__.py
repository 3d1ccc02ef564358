"""Evaluation measures: pure-numpy kernels with a leading draw axis, and ``evaluate``.

Layers (style guide, habit 4):

kernels
    :func:`average_precision`, :func:`precision_at_k`, :func:`r_precision`,
    :func:`rank_biased_precision`, :func:`rbp_residual`, :func:`normalized_dcg`,
    :func:`judged_fraction` take a padded ``(S, D)`` ranking (a
    ``TopicData.ranking``) and per-document values ``(n,)`` or ``(B, n)``
    (B relevance draws) and return ``(S,)`` or ``(B, S)``. They are what the
    confidence engine's Monte Carlo path calls with drawn relevance.
measures
    :class:`Measure` objects parsed from ir_measures-style names
    (:func:`parse_measure`: ``"AP"``, ``"P@10"``, ``"Rprec"``,
    ``"RBP(p=0.8)"``, ``"RBPres(p=0.8)"``, ``"nDCG@10"``, ``"nDCG"``,
    ``"Judged@10"``; ``rel=N`` overrides the relevance threshold of binary
    measures). ``measure.score(ranking, labels, judged=, rel_threshold=,
    gain=)`` scores one topic, with labels ``(n,)`` or ``(B, n)``.
campaign
    :func:`evaluate` scores a whole campaign into a tidy DataFrame, with
    trec_eval's missing-topic policies and Sakai's condensed lists.

With complete 0/1 judgments the scores equal trec_eval / ir_measures
(tested on TREC DL 2019 to 1e-9).
"""

from . import ap, judged, ndcg, precision, rbp, rprec  # noqa: F401  (register the measures)
from ._ranked import at_ranks, condense
from ._registry import (
    Measure,
    Param,
    available_measures,
    describe_measures,
    parse_measure,
    parse_measures,
    register,
)
from .ap import average_precision
from .evaluate import evaluate
from .judged import judged_fraction
from .ndcg import gain_values, normalized_dcg
from .precision import precision_at_k
from .rbp import rank_biased_precision, rbp_residual
from .rprec import r_precision

__all__ = [
    "Measure",
    "Param",
    "at_ranks",
    "available_measures",
    "average_precision",
    "condense",
    "describe_measures",
    "evaluate",
    "gain_values",
    "judged_fraction",
    "normalized_dcg",
    "parse_measure",
    "parse_measures",
    "precision_at_k",
    "r_precision",
    "rank_biased_precision",
    "rbp_residual",
    "register",
]
