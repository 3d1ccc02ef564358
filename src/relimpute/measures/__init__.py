"""Evaluation measures: pure-numpy kernels with a leading draw axis, and ``evaluate``.

Layers (docs/contributing.md, habit 4):

kernels
    :func:`average_precision`, :func:`precision_at_k`, :func:`r_precision`,
    :func:`rank_biased_precision`, :func:`rbp_residual`, :func:`normalized_dcg`,
    :func:`discounted_cumulative_gain`,
    :func:`judged_fraction`, :func:`reciprocal_rank`, :func:`recall_at_k`,
    :func:`success_at_k`, :func:`expected_reciprocal_rank`,
    :func:`relevant_retrieved`, :func:`bpref`, :func:`inferred_ap` take a padded ``(S, D)`` ranking (a
    ``TopicData.ranking``) and per-document values ``(n,)`` or ``(B, n)``
    (B relevance draws) and return ``(S,)`` or ``(B, S)``. They are what the
    confidence engine's Monte Carlo path calls with drawn relevance.
measures
    :class:`Measure` objects parsed from ir_measures-style names
    (:func:`parse_measure`: ``"AP"``, ``"P@10"``, ``"Rprec"``,
    ``"RBP(p=0.8)"``, ``"RBPres(p=0.8)"``, ``"nDCG@10"``, ``"nDCG"``, ``"DCG@10"``,
    ``"Judged@10"``, ``"RR"``, ``"R@100"``, ``"Success@10"``, ``"ERR@20"``,
    ``"NumRet"``, ``"NumRel"``, ``"NumRelRet"``, ``"Bpref"``, ``"infAP"``;
    ``rel=N`` overrides the relevance threshold of binary measures), their
    ir_measures aliases (``MAP``, ``NDCG``, ``MRR``, ``Recall``) or trec_eval
    names (``map``, ``P_10``, ``ndcg_cut_10``, ``recip_rank``, ...). ``measure.score(ranking, labels, judged=, rel_threshold=,
    gain=)`` scores one topic, with labels ``(n,)`` or ``(B, n)``.
campaign
    :func:`evaluate` scores a whole campaign into a tidy DataFrame, with
    trec_eval's missing-topic policies and Sakai's condensed lists.

With complete 0/1 judgments the scores equal trec_eval / ir_measures
(tested on TREC DL 2019 to 1e-9).
"""

from ._ranked import at_ranks, condense
from ._registry import (
    Measure,
    Param,
    available_measures,
    describe_measures,
    measure_families,
    name_table,
    parse_measure,
    parse_measures,
    register,  # deprecated: register_measure
    register_measure,
)
from .ap import average_precision
from .bpref import bpref
from .counts import relevant_retrieved
from .err import expected_reciprocal_rank
from .evaluate import evaluate
from .infap import inferred_ap
from .judged import judged_fraction
from .ndcg import discounted_cumulative_gain, gain_values, normalized_dcg
from .precision import precision_at_k
from .rbp import rank_biased_precision, rbp_residual
from .recall import recall_at_k
from .rprec import r_precision
from .rr import reciprocal_rank
from .success import success_at_k

__all__ = [
    "Measure",
    "Param",
    "at_ranks",
    "available_measures",
    "average_precision",
    "bpref",
    "condense",
    "describe_measures",
    "discounted_cumulative_gain",
    "evaluate",
    "expected_reciprocal_rank",
    "gain_values",
    "inferred_ap",
    "judged_fraction",
    "measure_families",
    "name_table",
    "normalized_dcg",
    "parse_measure",
    "parse_measures",
    "precision_at_k",
    "r_precision",
    "rank_biased_precision",
    "rbp_residual",
    "recall_at_k",
    "reciprocal_rank",
    "register_measure",
    "relevant_retrieved",
    "success_at_k",
]
