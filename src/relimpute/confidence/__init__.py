"""The confidence engine: how sure are we that one system beats another (Carterette 2007 §2).

Relevance is a random variable: document i of a topic is relevant with
probability ``p_i`` (judged documents: 0 or 1; see :mod:`relimpute.relevance`).
AP = Q / R is then random too, with Q a quadratic form in the relevance
indicators (Carterette 2007 §2.1); MAP and ΔMAP = MAP_a - MAP_b are sums over
independent topics, and the confidence that a beats b is P(ΔMAP > 0).

Campaign level
--------------
``ConfidenceEngine(ratio="constant"|"delta", depth=None, estimand="complete", pool_depth=None)``
    (``estimand``: which score, :mod:`.estimands`: ``"complete"`` every retrieved document
    judged, ``"pool"`` each run pooled to ``pool_depth``, ``"qrels"`` trec_eval's number;
    ``.describe(campaign)`` is the line a table prints)
    ``.confidence(campaign, estimate, systems=None, pairs=None, measure="AP", method="auto",
    n_draws=4000, rng=None, topics=False) -> Comparison`` is the one entry: exact moments
    and the normal approximation or Monte Carlo draws of relevance, by what the measure
    (``has_closed_form(measure)``), the estimate (posterior draws: Monte Carlo) and the
    estimand (``pool``: exact only) allow; ``method="normal"`` or ``"monte carlo"`` fixes
    it. A ``Comparison`` has per pair E[ΔMAP], Var[ΔMAP], ``p_a_better = P(ΔMAP > 0)``,
    ``confidence_interval(level)``, ``matrix()``, ``to_frame()`` (``rounded=True``: Monte
    Carlo bounds to the decimal of their error, ``bound_errors(level)``), the per-system
    ``scores`` (:class:`SystemScores`: E/Var of AP per system × topic, E/Var of MAP,
    expected ranking) and, from exact moments, the per-topic ``e_delta_ap``/``var_delta_ap``;
    ``pairs=[]`` gives the scores alone; ``topics=True`` adds topic sampling (a
    :class:`TopicBootstrap`, a topic resample per draw; :mod:`.topic_bootstrap`).
    ``.evaluate`` (exact ``.scores``), ``.compare`` (exact), ``.monte_carlo`` and
    ``.topic_bootstrap`` are that entry with the method fixed, kept for existing code.
    A binary measure reads no grades: ``predict_for(model, campaign, measures)`` predicts
    without the grade split when no measure reads it, and the engine drops it
    (:mod:`.binary`). :class:`ConditionedDraws` keeps the Monte Carlo draws of a loop
    that judges and redraws only the topic a label changed (:mod:`.conditioned`).
``compare_in_parts(campaign, parts, ...) -> Comparison``
    the same comparison with the campaign's topics in parts, each fitted and scored on its
    own (serially, on joblib processes or a Dask cluster) and combined (:mod:`.parts`).

Exact moments cost O(n) per system and topic (prefix sums) and O(n log n)
per pair and topic (a Fenwick tree for the cross term); per-system parts are
computed once and shared by all pairs.

Topic level (for incremental loops such as MTC, which recompute only the
topic whose judgment changed)
-------------------------------------------------------------------------
``expected_relevant(topic, p, systems=None, depth=None, labelled=None) -> float``
    E[R]: Σp over every judged document plus every unjudged document
    retrieved by the run set ``systems`` (row indices) or in ``labelled`` (the
    documents a label source names, :func:`relimpute.labels.labelled_documents`);
    ``relevant_moments(...) -> (E[R], Var[R])``; ``counted_documents(...)`` the mask.
``pair_topic_moments(ranks_a, ranks_b, p, expected_r, *, var_r=None, ratio="constant")``
    ``-> (E[ΔAP], Var[ΔAP])`` with ranks as from ``TopicData.ranks(s)``
    (1-based over the topic's document index, 0 = not retrieved);
    ``topic_moments(ranks, p, expected_r, ...)`` the same for one system;
    ``q_moments``/``delta_q_moments`` the exact moments of Q and ΔQ with Cov(·, R).

Conventions: ΔMAP = MAP_a - MAP_b; ``p_a_better = P(ΔMAP > 0)``; the paper's
P(ΔMAP < 0) is ``1 - p_a_better``; with Var = 0 it is 1, 0 or ½ by the sign
of E[ΔMAP]. A topic with E[R] = 0 (no relevant, no possibly relevant
document) scores 0 with variance 0; a topic a system retrieves nothing for
scores 0 and counts in MAP (trec_eval ``-c``).
"""

from .binary import predict_for
from .conditioned import ConditionedDraws
from .engine import ConfidenceEngine, exact_measure_names, has_closed_form
from .linear import linear_measure
from .moments import (
    QMoments,
    counted_documents,
    delta_q_moments,
    expected_relevant,
    pair_topic_moments,
    q_moments,
    ratio_moments,
    relevant_moments,
    topic_moments,
)
from .parts import compare_in_parts
from .results import Comparison, ConfidenceInterval, SystemScores, prob_positive
from .topic_bootstrap import TopicBootstrap

__all__ = [
    "Comparison",
    "ConditionedDraws",
    "ConfidenceEngine",
    "ConfidenceInterval",
    "QMoments",
    "SystemScores",
    "TopicBootstrap",
    "compare_in_parts",
    "counted_documents",
    "delta_q_moments",
    "exact_measure_names",
    "expected_relevant",
    "has_closed_form",
    "linear_measure",
    "pair_topic_moments",
    "predict_for",
    "prob_positive",
    "q_moments",
    "ratio_moments",
    "relevant_moments",
    "topic_moments",
]
