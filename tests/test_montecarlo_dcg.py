"""Monte Carlo nDCG and DCG with drawn grades by the thinning kernel
(relimpute.confidence._graded_kernels): the expectation against a brute-force nDCG over every
grade assignment, documents below the cutoff and saturated levels included, and the whole
answer against the general scorer it replaces (the old path) on a small campaign."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_montecarlo_grades import _campaign as one_topic

from relimpute.confidence import ConfidenceEngine
from relimpute.confidence import montecarlo
from relimpute.data import Campaign
from relimpute.relevance.base import RelevanceEstimate
from relimpute.relevance.grades import GradeShares

LEVELS = (0, 1, 2, 3)
RUNS = {
    "a": ["d0", "d1", "d2", "d3", "d4", "d5", "d8", "d9"],
    "b": ["d4", "d3", "d7", "d8", "d0", "d6", "d9", "d1"],
}
# three grade-1 documents fill level 1 of an ideal list of 3; d6 is judged but no run ranks
# it high; unjudged: d1, d2, d4, d7 (ranked in a top 3) and d8, d9 (below it)
JUDGED = {"d0": 1, "d3": 1, "d5": 1, "d6": 2}


def _campaign() -> Campaign:
    return one_topic(RUNS, JUDGED)


def _estimate(campaign: Campaign, draws: bool) -> RelevanceEstimate:
    """Random grade shares; with ``draws``, three posterior draws of p, each splitting into
    grades at its own drawn cut-points."""
    topic = campaign.topics[0]
    n = topic.n_docs
    rng = np.random.default_rng(5)
    p = np.where(topic.judged, topic.grades >= 2, rng.uniform(0.05, 0.6, n))
    above, below = rng.uniform(0.1, 0.9, (n, 1)), rng.uniform(0.1, 0.9, (n, 1))
    if not draws:
        shares = GradeShares(LEVELS, 2, (above,), (below,))
        return RelevanceEstimate(("q",), (topic.doc_ids,), (p,), grades=shares)
    post = np.where(topic.judged, p, np.clip(p + rng.uniform(-0.1, 0.1, (3, n)), 0.01, 0.99))
    offset = np.where(topic.judged, np.nan, rng.normal(0, 0.5, n))
    cuts = np.array([[2.0, 0.0, -1.5], [1.2, 0.0, -0.6], [2.5, 0.0, -2.5]])
    shares = GradeShares(LEVELS, 2, (above,), (below,), offset=(offset,), cut_draws=(cuts,))
    return RelevanceEstimate(("q",), (topic.doc_ids,), (post.mean(axis=0),), draws=(post,),
                             grades=shares)  # fmt: skip


def _brute_dcg(grades: dict[str, int], run: list[str], k: int | None, normalise: bool) -> float:
    """DCG or nDCG by its definition: gains in run order and sorted, linear gains."""
    top = run if k is None else run[:k]
    dcg = sum(grades[d] / np.log2(r + 2) for r, d in enumerate(top))
    if not normalise:
        return dcg
    ideal = sorted(grades.values(), reverse=True)[: (len(grades) if k is None else k)]
    idcg = sum(g / np.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def _exact(campaign, estimate, k, normalise, draws):
    """E[score] per run over every grade of every unjudged document, averaged over the
    posterior draws (each with its own split) or at the point estimate."""
    topic, shares = campaign.topics[0], estimate.grades
    docs = list(topic.doc_ids)
    unjudged = [i for i in range(len(docs)) if not topic.judged[i]]
    rows = estimate.draws[0] if draws else estimate.p[0][None, :]
    out = np.zeros(len(RUNS))
    for r, p in enumerate(rows):
        exceed = shares.at_least(0, p[None, :], index=np.array([r]) if draws else None)[0]
        probs = -np.diff(np.column_stack([np.ones(len(p)), exceed, np.zeros(len(p))]), axis=1)
        for assignment in itertools.product(range(len(LEVELS)), repeat=len(unjudged)):
            weight = np.prod([probs[i, g] for i, g in zip(unjudged, assignment)])
            grades = {d: int(topic.grades[i]) for i, d in enumerate(docs) if topic.judged[i]}
            grades.update({docs[i]: LEVELS[g] for i, g in zip(unjudged, assignment)})
            scores = [_brute_dcg(grades, run, k, normalise) for run in RUNS.values()]
            out += weight * np.array(scores)
    return out / len(rows)


@pytest.mark.parametrize(
    "measure, k, normalise",
    [("nDCG@3", 3, True), ("nDCG@5", 5, True), ("nDCG", None, True), ("DCG@3", 3, False)],
)
@pytest.mark.parametrize("draws", [False, True])
def test_expected_dcg_matches_brute_force(measure, k, normalise, draws):
    """100,000 draws: within 4 Monte Carlo standard errors of the brute-force expectation.
    nDCG@3: level 1 is saturated by the judged grades, so documents below rank 3 are drawn
    only above it; nDCG@5 and nDCG: nothing is saturated; DCG@3: only ranked documents."""
    campaign = _campaign()
    estimate = _estimate(campaign, draws)
    assert montecarlo.dcg_draws(measure, campaign, estimate) is not None  # the kernel's path
    exact = _exact(campaign, estimate, k, normalise, draws)
    n = 100_000
    result = ConfidenceEngine().confidence(
        campaign, estimate, pairs=[("a", "b")], measure=measure, n_draws=n, rng=11,
        method="monte carlo",
    )
    se = np.sqrt(result.scores.var_map / n)
    np.testing.assert_array_less(np.abs(result.scores.e_map - exact), 4 * se + 1e-12)


def _old_path(monkeypatch):
    """The general scorer (every document's grade drawn from its own uniform, scored by the
    measure), as before the kernel."""
    monkeypatch.setattr(montecarlo, "dcg_draws", lambda *args: None)


def _small_graded_campaign():
    """A simulated campaign (grades 0-3 complete), a third of its documents left unjudged,
    with a random graded estimate carrying posterior draws and drawn cut-points."""
    from relimpute.simulate import simulate_campaign

    full = simulate_campaign(n_topics=6, n_systems=5, n_docs=300, depth=60, rel_threshold=2,
                             grade_probs=(0.4, 0.4, 0.2), rng=3).campaign  # fmt: skip
    rng = np.random.default_rng(8)
    campaign = full.with_judged([rng.random(t.n_docs) < 0.6 for t in full.topics])
    p, post, above, below, offset, cuts = [], [], [], [], [], []
    for topic in campaign.topics:
        n = topic.n_docs
        pt = np.where(topic.judged, topic.grades >= 2, rng.beta(0.5, 3.0, n))
        draws = np.where(topic.judged, pt, np.clip(pt * rng.uniform(0.6, 1.4, (20, n)), 0, 1))
        p.append(draws.mean(axis=0))
        post.append(draws)
        judged, grade = topic.judged[:, None], topic.grades[:, None]
        above.append(np.where(judged, grade >= 3, rng.uniform(0, 0.5, (n, 1))))
        below.append(np.where(judged, grade >= 1, rng.uniform(0, 0.3, (n, 1))))
        offset.append(np.where(topic.judged, np.nan, rng.normal(0, 0.3, n)))
        cuts.append(np.column_stack([rng.normal(2, 0.3, 20), np.zeros(20),
                                     rng.normal(-1.5, 0.3, 20)]))  # fmt: skip
    shares = GradeShares(LEVELS, 2, tuple(above), tuple(below), offset=tuple(offset),
                         cut_draws=tuple(cuts))  # fmt: skip
    ids = tuple(t.doc_ids for t in campaign.topics)
    return campaign, RelevanceEstimate(campaign.query_ids, ids, tuple(p), draws=tuple(post),
                                       grades=shares)  # fmt: skip


@pytest.mark.parametrize("measure", ["nDCG@10", "nDCG@3", "DCG@5"])
def test_kernel_agrees_with_the_general_scorer(monkeypatch, measure):
    """The same campaign and estimate through the kernel and through the general scorer,
    20,000 draws each: every system's mean and standard deviation, every pair's ΔMAP mean and
    P(a beats b) within 4.5 standard errors of their difference (independent draws)."""
    campaign, estimate = _small_graded_campaign()
    n = 20_000

    def run():
        return ConfidenceEngine().confidence(
            campaign, estimate, measure=measure, n_draws=n, rng=1, method="monte carlo"
        )

    new = run()
    _old_path(monkeypatch)
    old = run()
    for a, b in ((new.scores, old.scores), (new, old)):
        mean_a = a.e_map if hasattr(a, "e_map") else a.e_delta_map
        mean_b = b.e_map if hasattr(b, "e_map") else b.e_delta_map
        var_a = a.var_map if hasattr(a, "var_map") else a.var_delta_map
        var_b = b.var_map if hasattr(b, "var_map") else b.var_delta_map
        se = np.sqrt((var_a + var_b) / n)
        np.testing.assert_array_less(np.abs(mean_a - mean_b), 4.5 * se + 1e-12)
        # the standard deviation's standard error is about sd / sqrt(2n) (near normal draws)
        sd_a, sd_b = np.sqrt(var_a), np.sqrt(var_b)
        sd_se = (sd_a + sd_b) / np.sqrt(2 * n)
        np.testing.assert_array_less(np.abs(sd_a - sd_b), 4.5 * sd_se + 1e-9)
    p_se = np.sqrt(2 * 0.25 / n)
    np.testing.assert_array_less(np.abs(new.p_a_better - old.p_a_better), 4.5 * p_se)


def test_judged_topic_scores_as_the_measure():
    """Nothing to draw (every document judged): each draw is the measure's own score of the
    judged grades, to rounding."""
    from relimpute.measures import parse_measure

    campaign = _campaign()
    topic = campaign.topics[0]
    grades = np.where(topic.judged, topic.grades, 0)
    p = np.zeros(topic.n_docs)
    shares = GradeShares(LEVELS, 2, (np.zeros((topic.n_docs, 1)),), (np.zeros((topic.n_docs, 1)),))
    estimate = RelevanceEstimate(("q",), (topic.doc_ids,), (p,), grades=shares)
    for measure in ("nDCG@3", "nDCG", "DCG@5"):
        draws = ConfidenceEngine().confidence(campaign, estimate, measure=measure, n_draws=5,
                                               rng=0, method="monte carlo").scores.draws  # fmt: skip
        expected = parse_measure(measure).score(topic.ranking, grades)
        np.testing.assert_allclose(draws, np.broadcast_to(expected, draws.shape), rtol=1e-13)
