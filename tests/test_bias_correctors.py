"""Pool-bias correctors against hand-computed small cases and the papers' definitions."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from conftest import make_campaign

from relimpute.bias import (
    common_topic_adjustment,
    get_corrector,
    topic_scores,
)
from relimpute.bias.anti_precision import merged_top
from relimpute.bias.lipani import lipani_adjustment
from relimpute.bias.model import would_be_pool_estimate
from relimpute.measures import evaluate, parse_measures


# Topic 1: A = a b c, B = b d e, new run N = a x d; depth 2 pool of A, B = {a, b, d};
# a and d relevant, b not; x (relevant) is only in N's top 2.
# Topic 2: A = B = p q, N = p z; nothing is unique to one pooled run.
FULL_QRELS = [
    ("1", "a", 1),
    ("1", "b", 0),
    ("1", "d", 1),
    ("1", "x", 1),
    ("2", "p", 1),
    ("2", "q", 0),
    ("2", "z", 0),
]
RUNS = {
    "A": {"1": ["a", "b", "c"], "2": ["p", "q", "r"]},
    "B": {"1": ["b", "d", "e"], "2": ["p", "q", "s"]},
    "N": {"1": ["a", "x", "d"], "2": ["p", "z", "q"]},
}


@pytest.fixture
def full():
    return make_campaign(FULL_QRELS, RUNS, quiet=True)


@pytest.fixture
def reduced(full):
    return full.pooled(2, ["A", "B"])


def _one(correction, measure="P@2", column="estimate"):
    table = correction.table
    return table.loc[table["measure"] == measure, column].to_numpy()


def test_reduced_pool_scores_unjudged_as_nonrelevant(reduced):
    out = get_corrector("reduced").correct(reduced, ["A", "B"], "N", ["P@2"], pool_depth=2)
    # topic 1: a relevant, x unjudged; topic 2: p relevant, z unjudged
    assert _one(out) == pytest.approx([0.5])


def test_webber_park_with_add_back_by_hand(reduced):
    out = get_corrector("webber-park").correct(reduced, ["A", "B"], "N", ["P@2"], pool_depth=2)
    # β_A = 0 (a, A's unique document, is also in N's top 2: added back);
    # β_B = (0.5 - 0) / 2 topics (d removed); a = mean(β) = 0.125
    assert _one(out, column="adjustment") == pytest.approx([0.125])
    assert _one(out) == pytest.approx([0.625])


def test_webber_park_without_add_back_by_hand(reduced):
    out = get_corrector("webber-park", add_back=False).correct(
        reduced, ["A", "B"], "N", ["P@2"], pool_depth=2
    )
    assert _one(out) == pytest.approx([0.75])  # β_A = β_B = 0.25


@pytest.mark.parametrize("add_back", [True, False])
def test_webber_park_equals_rebuilding_every_pool(full, add_back):
    """Oracle: β_s from pools rebuilt from scratch and scored with relimpute.measures.evaluate."""
    pooled = ["A", "B"]
    context_campaign = full.pooled(2, pooled)
    measures = ["P@1", "P@2", "RBP(p=0.8)", "AP", "nDCG@2"]
    out = get_corrector("webber-park", add_back=add_back).correct(
        context_campaign, pooled, "N", measures, pool_depth=2
    )
    base = evaluate(context_campaign, measures, missing="zero").set_index(["system", "measure"])[
        "value"
    ]
    for measure in measures:
        betas = []
        for s in pooled:
            others = [r for r in pooled if r != s] + (["N"] if add_back else [])
            # judged in the pool AND in the rebuilt pool (N's own documents are unjudged in Q)
            mask = [
                p & t.judged
                for p, t in zip([m for m in _pool_masks(full, others)], context_campaign.topics)
            ]
            left = evaluate(context_campaign.with_judged(mask), [measure], missing="zero")
            betas.append(base[(s, measure)] - left.set_index("system").loc[s, "value"])
        expected = base[("N", measure)] + np.mean(betas)
        assert _one(out, measure) == pytest.approx([expected], abs=1e-12), measure


def _pool_masks(campaign, systems):
    from relimpute.bias import depth_pool

    return depth_pool(campaign, systems, 2)


def test_lipani_2016_by_hand(reduced):
    out = get_corrector("lipani").correct(reduced, ["A", "B"], "N", ["P@2"], pool_depth=2)
    # δP_A = δP_B = 0.25, k̄'_A = k̄'_B = 0.25 → GM = 1; k̄(N) = 0.5 → a = 0.5
    assert _one(out, column="adjustment") == pytest.approx([0.5])
    assert not _one(out, column="no_information")[0]


def test_lipani_2016_when_every_delta_is_zero(full):
    """Topic 2 only (nothing unique to a pooled run): GM over an empty set → no correction."""
    topic2 = full.subset(topics=["2"]).pooled(2, ["A", "B"])
    out = get_corrector("lipani").correct(topic2, ["A", "B"], "N", ["P@2"], pool_depth=2)
    assert _one(out) == pytest.approx(_one(out, column="reduced"))
    assert _one(out, column="no_information")[0]


def test_lipani_adjustment_is_a_geometric_mean_over_nonzero_deltas():
    delta = np.array([0.1, 0.0, 0.4])
    k_left = np.array([0.5, 0.3, 0.2])
    a, empty = lipani_adjustment(np.array([0.3]), delta, k_left)
    assert a == pytest.approx([0.3 * np.sqrt(0.2 * 2.0)])
    assert not empty


def test_lipani_only_for_precision(reduced):
    out = get_corrector("lipani").correct(
        reduced, ["A", "B"], "N", ["P@2", "AP", "RBP(p=0.8)"], pool_depth=2
    )
    assert set(out.table["measure"]) == {"P@2"}


def test_merged_run_takes_the_new_runs_ranks():
    # own ranking of docs 0..3; the new run has doc 3 at rank 1 and doc 0 at rank 4
    ranking = np.array([[0, 1, 2, 3]])
    new_ranks = np.array([4, 0, 0, 1])
    # keys: doc0 4 + (1+1)e-4, doc1 2.0001, doc2 3.0001, doc3 1 + 4e-8
    assert merged_top(ranking, new_ranks, 4).tolist() == [[3, 1, 2, 0]]
    # a document at the same rank in both keeps its place before the own-ranked next one
    assert merged_top(np.array([[5, 6, -1]]), np.array([0, 0, 0, 0, 0, 1, 0]), 3).tolist() == [
        [5, 6, -1]
    ]


def test_anti_precision_by_hand():
    # judgments: a, d relevant; b, c not; y, z unjudged. Pool: A, B at depth 2.
    qrels = [("1", "a", 1), ("1", "b", 0), ("1", "c", 0), ("1", "d", 1)]
    runs = {"A": {"1": ["b", "c", "y"]}, "B": {"1": ["c", "d", "a"]}, "N": {"1": ["y", "a", "z"]}}
    campaign = make_campaign(qrels, runs, quiet=True)
    out = get_corrector("anti-precision").correct(campaign, ["A", "B"], "N", ["P@2"], pool_depth=2)
    # N: s = 0.5, s̄ = 0, k = 0.5. A∘N = y b c: δs = 0, δs̄ = -0.5, δk = 0.5;
    # B∘N = c a d: no change.
    # λ = k (Δs s̄ - Δs̄ s) = 0.5 (0 + 0.25 * 0.5) > 0 → a = k · mean δk = 0.5 * 0.25
    assert _one(out, column="adjustment") == pytest.approx([0.125])
    assert _one(out) == pytest.approx([0.625])


def test_anti_precision_on_two_topics_by_hand(reduced):
    out = get_corrector("anti-precision").correct(reduced, ["A", "B"], "N", ["P@2"], pool_depth=2)
    # N: s = 0.5, s̄ = 0, k = 0.5. Topic 1: A∘N = a b (no change); B∘N = b e d (d moves to
    # N's rank 3, after e): δs = -0.5, δs̄ = 0. Topic 2: A∘N = p r q, B∘N = p s q (q moves to
    # rank 3): δs = 0, δs̄ = -0.5 for both. Means: δs = (0, -0.25), δs̄ = (-0.25, -0.25),
    # δk = (0.25, 0.5); λ = 0.5 (0 + 0.25 * 0.5) > 0 → a = 0.5 * 0.375
    assert _one(out, column="adjustment") == pytest.approx([0.1875])


def test_anti_precision_not_triggered_without_unjudged_documents(full):
    out = get_corrector("anti-precision").correct(full, ["A", "B"], "N", ["P@1"], pool_depth=1)
    # N's top 1 is judged (k = 0): λ = 0, no correction
    assert _one(out, "P@1") == pytest.approx(_one(out, "P@1", column="reduced"))


def test_common_topic_adjustment_by_hand():
    u = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    common = np.array([0, 2, 4])
    fit = common_topic_adjustment(np.array([0.2, 0.35, 0.6]), u, common)
    assert fit.adjustment == pytest.approx(0.25 / 3)  # Eq. 1
    assert fit.estimate == pytest.approx(0.3 + 0.25 / 3)  # Eq. 2
    s2 = ((1 / 60) ** 2 + (1 / 30) ** 2 + (1 / 60) ** 2) / 2  # Eq. 7
    assert fit.variance == pytest.approx(2 / 5 * s2 / 3)  # Eq. 3
    assert fit.helps  # Eq. 6: sqrt(var) = 0.0105 < |a| = 0.083
    assert fit.ci_high - fit.estimate == pytest.approx(1.959964 * np.sqrt(fit.variance), rel=1e-6)


def test_common_topic_estimate_is_unbiased_with_sampling_variance(rng):
    """Enumerate every common-topic set: E[μ̂_a] = μ and Var[μ̂_a] = (N-n)/N · S²/n (Eqs. 2-3)."""
    big_n, n = 8, 3
    u = rng.uniform(0, 0.5, big_n)
    t = u + rng.uniform(0, 0.3, big_n)
    estimates = [
        common_topic_adjustment(t[list(c)], u, np.array(c)).estimate
        for c in itertools.combinations(range(big_n), n)
    ]
    d = t - u
    assert np.mean(estimates) == pytest.approx(t.mean(), abs=1e-12)
    assert np.var(estimates) == pytest.approx((big_n - n) / big_n * d.var(ddof=1) / n, rel=1e-9)


def test_common_topics_corrector_uses_full_judgments_on_common_topics(full):
    # judgments: full on topic 1 (common), the A+B pool on topic 2
    reduced_masks = [t.judged for t in full.pooled(2, ["A", "B"]).topics]
    campaign = full.with_judged([full.topics[0].judged, reduced_masks[1]])
    corrector = get_corrector("webber-park-topics", common_topics=["1", "2"])
    out = corrector.correct(campaign, ["A", "B"], "N", ["P@2"], pool_depth=2)
    # t = (1.0, 0.5); u = (0.5, 0.5) → a = 0.25, estimate = 0.5 + 0.25
    assert _one(out) == pytest.approx([0.75])
    assert _one(out, column="adjustment") == pytest.approx([0.25])


def test_model_based_expectation_under_a_uniform_prior(reduced):
    """prior 0.5 on N's would-be-pooled unjudged documents (x, z): E[P@2] = 0.5 + 0.5·0.5."""
    out = get_corrector("model", model="uniform", n_draws=4000, seed=1).correct(
        reduced, ["A", "B"], "N", ["P@2", "P@1"], pool_depth=2
    )
    assert _one(out) == pytest.approx([0.75], abs=0.02)
    assert _one(out, "P@1") == pytest.approx([1.0])  # a and p are judged relevant: no uncertainty
    low, high = _one(out, column="ci_low")[0], _one(out, column="ci_high")[0]
    assert low <= 0.75 <= high and low >= 0.5 and high <= 1.0


def test_would_be_pool_keeps_only_the_new_runs_top_documents(reduced):
    from relimpute.relevance import Uniform

    estimate = Uniform(0.5).fit_predict(reduced)
    restricted = would_be_pool_estimate(reduced, estimate, reduced.system_index(["N"]), 2)
    for topic, p in zip(reduced.topics, restricted.p):
        docs = dict(zip(topic.doc_ids, p))
        if topic.query_id == "1":
            assert docs["x"] == 0.5 and docs["c"] == 0.0 and docs["e"] == 0.0 and docs["a"] == 1.0
        else:
            assert docs["z"] == 0.5 and docs["r"] == 0.0 and docs["q"] == 0.0


def test_correct_refuses_pooled_runs_and_unknown_runs(reduced):
    from relimpute.errors import InputError

    with pytest.raises(InputError, match="in the pool"):
        get_corrector("reduced").correct(reduced, ["A", "B"], "A", ["P@2"], pool_depth=2)
    with pytest.raises(InputError, match="not in the campaign"):
        get_corrector("reduced").correct(reduced, ["A", "B"], "Q", ["P@2"], pool_depth=2)
    with pytest.raises(InputError, match="larger than the pooled runs"):
        get_corrector("reduced").correct(reduced, ["A", "B"], "N", ["P@2"], pool_depth=5)


def test_topic_scores_equal_evaluate(reduced):
    measures = parse_measures(["P@2", "AP", "nDCG@2", "RBP(p=0.8)"])
    ours = topic_scores(reduced, measures, np.arange(3)).mean(axis=2)
    frame = evaluate(reduced, measures, missing="zero").pivot(
        index="system", columns="measure", values="value"
    )
    for m, measure in enumerate(measures):
        assert ours[m] == pytest.approx(frame.loc[list(reduced.systems), str(measure)].to_numpy())


def test_compact_keeps_scores_and_judgments(reduced):
    from relimpute.bias.model import compact

    small, index = compact(reduced.subset(["N"]))
    measures = parse_measures(["AP", "P@2", "nDCG@3"])
    before = topic_scores(reduced, measures, reduced.system_index(["N"]))
    assert topic_scores(small, measures, np.array([0])) == pytest.approx(before)
    for t_old, t_new, old in zip(reduced.topics, small.topics, index):
        assert t_new.judged.sum() == t_old.judged.sum()
        assert list(t_new.doc_ids) == list(t_old.doc_ids[old])
    assert set(small.topics[0].doc_ids) == {"a", "b", "d", "x"}


def test_model_based_graded_measure_draws_grades_from_the_judged_ones():
    """a judged 3, d judged 2, b judged 0; x unjudged with p = 0.5: it is 0, 2 or 3 with 1/2, 1/4, 1/4."""
    from relimpute.measures import parse_measure

    qrels = [("1", "a", 3), ("1", "b", 0), ("1", "d", 2)]
    runs = {"A": {"1": ["a", "b"]}, "B": {"1": ["d", "b"]}, "N": {"1": ["x", "a"]}}
    campaign = make_campaign(qrels, runs, quiet=True)
    out = get_corrector("model", model="uniform", n_draws=20000, seed=2).correct(
        campaign, ["A", "B"], "N", ["nDCG@2"], pool_depth=2
    )
    measure = parse_measure("nDCG@2")
    topic = campaign.topics[0]
    x = list(topic.doc_ids).index("x")
    expected = 0.0
    for grade, weight in ((0, 0.5), (2, 0.25), (3, 0.25)):
        labels = topic.grades.astype(int).copy()
        labels[x] = grade
        row = topic.ranking[campaign.system_index(["N"])]
        expected += weight * measure.score(row, labels)[0]
    assert _one(out, "nDCG@2") == pytest.approx([expected], abs=0.01)


def _shared_shift_moments(p: float, sd: float, n_docs: int) -> tuple[float, float]:
    """Oracle: mean and variance of the number of relevant among ``n_docs`` documents of
    marginal probability ``p`` whose log-odds share one shift δ ~ N(0, sd²) (plus the
    offset c that keeps the marginal at p), by numerical integration over δ."""
    from scipy.integrate import quad
    from scipy.optimize import brentq
    from scipy.special import expit, logit
    from scipy.stats import norm

    def mean_q(c, power=1):
        density = norm(0, sd).pdf
        return quad(lambda d: expit(logit(p) + c + d) ** power * density(d), -12 * sd, 12 * sd)[0]

    c = brentq(lambda c: mean_q(c) - p, -20, 20)
    e_q, e_q2 = mean_q(c), mean_q(c, 2)
    variance = n_docs * (e_q - e_q2) + n_docs**2 * (e_q2 - e_q**2)
    return n_docs * e_q, variance


@pytest.mark.parametrize("prior", [0.5, 0.2])
def test_between_group_shift_matches_integration_over_the_shared_shift(reduced, prior, tmp_path):
    """N's unknown documents x and z (P@2 = (2 + X + Z) / 4) share one log-odds shift:
    the mean stays at the prior's, the sd is the integral's (stratified δ, 4% tolerance)."""
    from relimpute.bias.model import ModelBased

    model = tmp_path / "uniform.json"
    model.write_text(json.dumps({"model": "uniform", "params": {"prior": prior}}))
    sds = {}
    for group_sd in (0.0, 2.0):
        out = ModelBased(model=str(model), n_draws=40000, seed=3, group_sd=group_sd).correct(
            reduced, ["A", "B"], "N", ["P@2"], pool_depth=2
        )
        if group_sd:
            mean, variance = _shared_shift_moments(prior, group_sd, 2)
        else:
            mean, variance = 2 * prior, 2 * prior * (1 - prior)
        assert _one(out)[0] == pytest.approx((2 + mean) / 4, abs=0.005)
        sds[group_sd] = _one(out, column="sd")[0]
        assert sds[group_sd] == pytest.approx(np.sqrt(variance) / 4, rel=0.04)
    assert sds[2.0] > 1.1 * sds[0.0]


def test_between_group_shift_keeps_each_documents_mean_and_no_spread_is_the_identity():
    from relimpute.bias.model import group_shifted
    from relimpute.relevance.base import RelevanceEstimate

    rng = np.random.default_rng(0)
    draws = rng.beta(0.5, 3, size=(50, 6))
    ids = (np.arange(6).astype(str),)
    estimate = RelevanceEstimate(("1",), ids, (draws.mean(axis=0),), (draws,))
    unknown = [np.array([True, True, True, False, False, True])]
    assert group_shifted(estimate, unknown, 0.0, 0) is estimate
    shifted = group_shifted(estimate, unknown, 1.5, 0).draws[0]
    assert shifted.mean(axis=0) == pytest.approx(draws.mean(axis=0), abs=1e-9)
    assert np.array_equal(shifted[:, 3:5], draws[:, 3:5])  # known documents untouched
    # one shift per draw: the unknown documents now move together
    before = np.corrcoef(draws[:, 0], draws[:, 1])[0, 1]
    assert np.corrcoef(shifted[:, 0], shifted[:, 1])[0, 1] > 0.5 > before


def test_model_based_refuses_a_negative_or_missing_spread():
    from relimpute.bias.model import ModelBased

    for bad in (-0.1, float("nan")):
        with pytest.raises(ValueError, match="group_sd"):
            ModelBased(group_sd=bad)

