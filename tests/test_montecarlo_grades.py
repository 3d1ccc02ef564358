"""Monte Carlo over grades (issue 25 item 3): E[nDCG@k] and E[ERR@k] against enumeration of
every grade assignment on a tiny topic, and binary measures drawn exactly as without grades."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import make_campaign

from relimpute.confidence import ConfidenceEngine
from relimpute.data import Campaign
from relimpute.relevance.base import RelevanceEstimate
from relimpute.relevance.grades import GradeShares

LEVELS = (0, 1, 2, 3)
RUNS = {"a": ["d0", "d1", "d2", "d3", "d4", "d5"], "b": ["d4", "d2", "d6", "d0", "d5", "d1"]}
JUDGED = {"d0": 2, "d3": 0}  # the rest unjudged: d1, d2, d4, d5, d6


def _campaign(ranked: dict = RUNS, judged: dict = JUDGED) -> Campaign:
    """One topic: the runs ``ranked`` (documents in rank order) and the qrels ``judged``."""
    return make_campaign([("q", d, g) for d, g in judged.items()], ranked, rel_threshold=2)


def _estimate(campaign: Campaign, draws: bool) -> RelevanceEstimate:
    topic = campaign.topics[0]
    n = topic.n_docs
    rng = np.random.default_rng(4)
    p = np.where(topic.judged, topic.grades >= 2, rng.uniform(0.1, 0.9, n))
    above, below = rng.uniform(0.1, 0.9, (n, 1)), rng.uniform(0.1, 0.9, (n, 1))
    post = None
    if draws:  # two posterior draws of p, the point estimate their mean
        shift = rng.uniform(-0.08, 0.08, n)
        post = (np.where(topic.judged, p, np.vstack([p + shift, p - shift])),)
    shares = GradeShares(LEVELS, 2, (above,), (below,))
    return RelevanceEstimate(("q",), (topic.doc_ids,), (p,), draws=post, grades=shares)


def _ndcg(grades_by_doc: dict[str, int], run: list[str], k: int) -> float:
    gains = [grades_by_doc[d] for d in run[:k]]
    dcg = sum(g / np.log2(r + 2) for r, g in enumerate(gains))
    ideal = sorted(grades_by_doc.values(), reverse=True)[:k]
    idcg = sum(g / np.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def _err(grades_by_doc: dict[str, int], run: list[str], k: int, top: int = 4) -> float:
    """Chapelle et al. (2009) eq. 4 with gdeval.pl's maximum grade 4."""
    value, stop = 0.0, 1.0
    for r, d in enumerate(run[:k]):
        chance = (2.0 ** grades_by_doc[d] - 1) / 2.0**top
        value += stop * chance / (r + 1)
        stop *= 1 - chance
    return value


def _exact(campaign, estimate, score, k, p_rows):
    """E[score] per run by enumerating every grade of every unjudged document, averaged over
    the rows of ``p_rows`` (the posterior draws, or the point estimate)."""
    topic, shares = campaign.topics[0], estimate.grades
    docs = list(topic.doc_ids)
    unjudged = [i for i in range(len(docs)) if not topic.judged[i]]
    out = np.zeros(len(RUNS))
    for p in p_rows:
        exceed = shares.at_least(0, p)
        probs = -np.diff(np.column_stack([np.ones(len(p)), exceed, np.zeros(len(p))]), axis=1)
        for assignment in itertools.product(range(len(LEVELS)), repeat=len(unjudged)):
            weight = np.prod([probs[i, g] for i, g in zip(unjudged, assignment)])
            grades = {d: int(topic.grades[i]) for i, d in enumerate(docs) if topic.judged[i]}
            grades.update({docs[i]: LEVELS[g] for i, g in zip(unjudged, assignment)})
            out += weight * np.array([score(grades, run, k) for run in RUNS.values()])
    return out / len(p_rows)


@pytest.mark.parametrize("measure, score, k", [("nDCG@5", _ndcg, 5), ("ERR@4", _err, 4)])
@pytest.mark.parametrize("draws", [False, True])
def test_expected_graded_measure_matches_enumeration(measure, score, k, draws):
    """200,000 draws: within 4 Monte Carlo standard errors of the enumerated expectation (and
    the standard error below 0.002)."""
    campaign = _campaign()
    estimate = _estimate(campaign, draws)
    p_rows = estimate.draws[0] if draws else estimate.p[0][None, :]
    exact = _exact(campaign, estimate, score, k, p_rows)
    result = ConfidenceEngine().confidence(
        campaign, estimate, pairs=[("a", "b")], measure=measure, n_draws=200_000, rng=7,
        method="monte carlo",
    )
    scores = result.scores
    se = np.sqrt(scores.var_map / 200_000)
    assert np.all(se < 0.002)
    np.testing.assert_array_less(np.abs(scores.e_map - exact), 4 * se)


@pytest.mark.parametrize("measure", ["AP", "P@3", "RR", "nDCG@5"])
def test_binary_measures_draw_as_without_grades(measure):
    """AP and linear measures never see the grades; a binary measure scored by its kernel (RR)
    sees the drawn grades but, relevant exactly when u < p, the same numbers. nDCG@k is the one
    that changes: a grade-1 or grade-3 passage now carries its own gain."""
    campaign = _campaign()
    graded = _estimate(campaign, draws=False)
    binary = RelevanceEstimate(graded.query_ids, graded.doc_ids, graded.p)
    runs = [
        ConfidenceEngine().confidence(campaign, e, pairs=[("a", "b")], measure=measure,
                                       n_draws=2000, rng=3, method="monte carlo").scores.draws  # fmt: skip
        for e in (graded, binary)
    ]
    if measure == "nDCG@5":
        assert not np.array_equal(*runs)
    else:
        np.testing.assert_array_equal(*runs)


def test_pool_bias_draws_use_the_models_grades():
    """The model-based pool-bias correction draws each document's grade from the model's
    distribution: its E[nDCG@5] matches enumeration (4 standard errors, 100,000 draws), and a
    document outside the would-be pool stays at grade 0."""
    from relimpute.bias.model import graded_draws, would_be_pool_estimate
    from relimpute.measures import parse_measure

    campaign = _campaign()
    estimate = _estimate(campaign, draws=False)
    exact = _exact(campaign, estimate, _ndcg, 5, estimate.p[0][None, :])
    draws = graded_draws(campaign, estimate, parse_measure("nDCG@5"), 100_000, rng=2)
    se = draws.std(axis=0) / np.sqrt(len(draws))
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - exact), 4 * se)
    restricted = would_be_pool_estimate(campaign, estimate, np.array([0]), 2)  # run a's top 2
    topic = campaign.topics[0]
    outside = ~topic.judged & ~np.isin(np.arange(topic.n_docs), topic.ranking[0, :2])
    assert outside.any() and np.all(restricted.grades.below[0][outside] == 0)
    assert np.all(restricted.grades.at_least(0, restricted.p[0])[outside] == 0)
