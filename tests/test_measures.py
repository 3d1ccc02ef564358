"""Measure kernels, the name parser and ``evaluate``: hand-made cases and a naive oracle."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from conftest import make_campaign

from relimpute.data import Campaign
from relimpute.measures import (
    Measure,
    at_ranks,
    available_measures,
    average_precision,
    condense,
    evaluate,
    gain_values,
    judged_fraction,
    normalized_dcg,
    parse_measure,
    parse_measures,
    precision_at_k,
    r_precision,
    rank_biased_precision,
    rbp_residual,
)

# --------------------------------------------------------------------------- naive oracle


def _naive(docs, grades, judged, rel=1, p=0.8, k=None, exponential=False):
    """Every measure of one ranked list (a Python list of doc indices), by definition."""
    relevant = [bool(judged[i] and grades[i] >= rel) for i in range(len(grades))]
    total = sum(relevant)
    top = docs if k is None else docs[:k]
    hits, ap = 0, 0.0
    for rank, d in enumerate(top, start=1):
        if relevant[d]:
            hits += 1
            ap += hits / rank
    ap = ap / total if total else 0.0
    rprec = sum(relevant[d] for d in docs[:total]) / total if total else 0.0
    prec = sum(relevant[d] for d in top) / k if k else None

    def gain(g):
        g = max(g, 0)
        return 2.0**g - 1 if exponential else float(g)

    gains = [gain(grades[i]) if judged[i] else 0.0 for i in range(len(grades))]
    dcg = sum(gains[d] / math.log2(r + 1) for r, d in enumerate(top, start=1))
    ideal = sorted(gains, reverse=True)[: (k or len(gains))]
    idcg = sum(g / math.log2(r + 1) for r, g in enumerate(ideal, start=1))
    rbp = sum((1 - p) * p ** (r - 1) for r, d in enumerate(top, start=1) if relevant[d])
    residual = sum((1 - p) * p ** (r - 1) for r, d in enumerate(top, start=1) if not judged[d])
    residual += p ** len(top)
    jud = sum(bool(judged[d]) for d in top) / len(top) if top else 0.0
    return {
        "AP": ap,
        "Rprec": rprec,
        "P": prec,
        "nDCG": dcg / idcg if idcg else 0.0,
        "RBP": rbp,
        "RBPres": residual,
        "Judged": jud,
    }


def _random_topic(rng, n=30, n_systems=6, max_depth=12):
    ranking = np.full((n_systems, max_depth), -1, dtype=np.int32)
    depth = rng.integers(0, max_depth + 1, size=n_systems)
    depth[0] = max_depth
    depth[1] = 0  # an empty run
    for s in range(n_systems):
        ranking[s, : depth[s]] = rng.choice(n, size=depth[s], replace=False)
    grades = rng.integers(0, 4, size=n).astype(np.int16)
    judged = rng.random(n) < 0.7
    grades = np.where(judged, grades, 0).astype(np.int16)
    return ranking, grades, judged, depth


@pytest.mark.parametrize(
    "name",
    [
        "AP",
        "AP@5",
        "Rprec",
        "P@5",
        "P@20",
        "nDCG",
        "nDCG@5",
        "RBP(p=0.8)",
        "RBP(p=0.5)@4",
        "RBPres(p=0.9)",
        "Judged@5",
        "Judged",
        "AP(rel=2)",
        "P(rel=3)@3",
    ],
)
@pytest.mark.parametrize("gain", ["linear", "exponential"])
def test_measures_equal_naive_definitions(name, gain, rng):
    measure = parse_measure(name)
    for _ in range(5):
        ranking, grades, judged, depth = _random_topic(rng)
        got = measure.score(ranking, grades, judged=judged, rel_threshold=1, gain=gain)
        assert got.shape == (ranking.shape[0],)
        for s in range(ranking.shape[0]):
            docs = ranking[s, : depth[s]].tolist()
            want = _naive(
                docs,
                grades.tolist(),
                judged.tolist(),
                rel=measure.threshold(1),
                p=measure.param("p") if "p" in measure.parameters else 0.8,
                k=measure.cutoff,
                exponential=gain == "exponential",
            )[measure.family]
            assert got[s] == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("name", ["AP", "Rprec", "P@5", "nDCG@5", "RBP(p=0.7)", "Judged@5"])
def test_draw_axis_equals_one_draw_at_a_time(name, rng):
    measure = parse_measure(name)
    ranking, _, judged, _ = _random_topic(rng)
    draws = rng.integers(0, 3, size=(7, judged.size))
    many = measure.score(ranking, draws, judged=judged)
    assert many.shape == (7, ranking.shape[0])
    for b in range(7):
        np.testing.assert_allclose(many[b], measure.score(ranking, draws[b], judged=judged))


def test_linear_kernels_give_expectations_by_enumeration(rng):
    # P@k and RBP are linear in relevance: with probabilities they return the
    # exact mean over all 2^n relevance vectors (enumerated on the draw axis).
    n = 8
    ranking = np.array([[0, 1, 2, 3, 4, -1], [5, 6, 7, 0, 3, 2]], dtype=np.int32)
    p = rng.random(n)
    vectors = np.array(list(itertools.product([0, 1], repeat=n)), dtype=bool)
    weights = np.prod(np.where(vectors, p, 1 - p), axis=1)
    for kernel in (
        lambda x: precision_at_k(ranking, x, 4),
        lambda x: rank_biased_precision(ranking, x, 0.6),
    ):
        exact = weights @ kernel(vectors)
        np.testing.assert_allclose(kernel(p), exact, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- kernels by hand


def test_average_precision_by_hand():
    ranking = np.array([[0, 1, 2, -1], [3, 0, -1, -1]], dtype=np.int32)
    relevant = np.array([True, False, True, False, True])  # R = 3, doc 4 never retrieved
    np.testing.assert_allclose(average_precision(ranking, relevant), [(1 + 2 / 3) / 3, (1 / 2) / 3])
    np.testing.assert_allclose(
        average_precision(ranking, relevant, n_relevant=2), [(1 + 2 / 3) / 2, 1 / 4]
    )
    np.testing.assert_allclose(average_precision(ranking, relevant, k=1), [1 / 3, 0])
    draws = np.stack([relevant, np.zeros(5, bool)])
    np.testing.assert_allclose(
        average_precision(ranking, draws, n_relevant=np.array([3, 0])),
        [[(1 + 2 / 3) / 3, 1 / 6], [0, 0]],
    )


def test_r_precision_uses_each_draws_own_r():
    ranking = np.array([[0, 1, 2]], dtype=np.int32)
    draws = np.array([[1, 0, 0, 0], [1, 1, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1]], dtype=bool)
    # R = 1, 3, 0, 4: top-1 has 1/1; top-3 has 2/3; R = 0 scores 0; R > depth counts all retrieved
    np.testing.assert_allclose(r_precision(ranking, draws)[:, 0], [1.0, 2 / 3, 0.0, 3 / 4])


def test_precision_divides_by_k_even_for_short_runs():
    ranking = np.array([[1, -1, -1]], dtype=np.int32)
    np.testing.assert_allclose(precision_at_k(ranking, np.array([0, 1]), 10), [0.1])


def test_rbp_and_its_residual_by_hand():
    judged = np.array([True, False, True, True])
    relevant = np.array([True, False, False, True])
    ranking = np.array([[0, 1, 2, -1], [-1, -1, -1, -1]], dtype=np.int32)
    p = 0.5
    # ranks 1..3 weigh 0.5, 0.25, 0.125: doc 0 relevant; doc 1 unjudged; 3 docs -> p^3 beyond
    np.testing.assert_allclose(rank_biased_precision(ranking, relevant, p), [0.5, 0.0])
    np.testing.assert_allclose(rbp_residual(ranking, judged, p), [0.25 + 0.125, 1.0])
    # with a cutoff at 2 the tail starts at rank 3
    np.testing.assert_allclose(rbp_residual(ranking, judged, p, k=2), [0.25 + 0.25, 1.0])


def test_ndcg_by_hand_with_both_gains():
    grades = np.array([3, 0, 1, 2])
    ranking = np.array([[2, 0, -1]], dtype=np.int32)
    dcg_lin = 1 + 3 / np.log2(3)
    idcg_lin = 3 + 2 / np.log2(3)
    np.testing.assert_allclose(normalized_dcg(ranking, grades, 2), [dcg_lin / idcg_lin])
    dcg_exp = 1 + 7 / np.log2(3)
    idcg_exp = 7 + 3 / np.log2(3)
    np.testing.assert_allclose(
        normalized_dcg(ranking, grades, 2, gain="exponential"), [dcg_exp / idcg_exp]
    )
    np.testing.assert_allclose(gain_values(np.array([-2, 0, 2]), "exponential"), [0, 0, 3])


def test_judged_fraction_counts_only_retrieved_positions():
    judged = np.array([True, False, True])
    ranking = np.array([[0, 1, -1, -1], [-1, -1, -1, -1], [2, 0, 1, -1]], dtype=np.int32)
    np.testing.assert_allclose(judged_fraction(ranking, judged, 10), [0.5, 0.0, 2 / 3])
    np.testing.assert_allclose(judged_fraction(ranking, judged, 1), [1.0, 0.0, 1.0])


def test_empty_rankings_and_topics_without_relevant_documents():
    empty = np.zeros((3, 0), dtype=np.int32)
    grades = np.array([2, 0, 1])
    for name in ["AP", "Rprec", "P@5", "nDCG@5", "RBP", "Judged@5"]:
        np.testing.assert_array_equal(parse_measure(name).score(empty, grades), 0.0)
    np.testing.assert_array_equal(parse_measure("RBPres").score(empty, grades), 1.0)
    ranking = np.array([[0, 1, 2]], dtype=np.int32)
    nothing = np.zeros(3, dtype=np.int16)
    for name in ["AP", "Rprec", "P@5", "nDCG", "RBP"]:
        assert parse_measure(name).score(ranking, nothing)[0] == 0.0


def test_unjudged_documents_are_never_relevant_even_at_threshold_zero():
    ranking = np.array([[0, 1]], dtype=np.int32)
    grades = np.array([0, 0], dtype=np.int16)
    judged = np.array([True, False])
    assert parse_measure("P@2").score(ranking, grades, judged=judged, rel_threshold=0)[0] == 0.5


def test_at_ranks_pads_with_zero_and_keeps_the_draw_axis():
    ranking = np.array([[2, -1], [0, 1]], dtype=np.int32)
    values = np.array([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(at_ranks(ranking, values), [[[3, 0], [1, 2]], [[6, 0], [4, 5]]])


def test_condense_drops_unjudged_and_keeps_order():
    judged = np.array([True, False, True, False, True])
    ranking = np.array([[1, 4, 3, 0, -1], [1, 3, -1, -1, -1]], dtype=np.int32)
    np.testing.assert_array_equal(condense(ranking, judged), [[4, 0], [-1, -1]])


@pytest.mark.parametrize(
    ("ranking", "values", "message"),
    [
        (np.array([0, 1]), np.zeros(3), "2-D"),
        (np.array([[0, 3]]), np.zeros(3), r"\[-1, 2\]"),
        (np.array([[0.0, 1.0]]), np.zeros(3), "integer"),
        (np.array([[0, 1]]), np.zeros((2, 2, 3)), "shape"),
    ],
)
def test_kernels_reject_bad_input(ranking, values, message):
    with pytest.raises(ValueError, match=message):
        average_precision(ranking, values)


def test_kernels_reject_bad_parameters():
    ranking = np.array([[0]], dtype=np.int32)
    with pytest.raises(ValueError, match="persistence"):
        rank_biased_precision(ranking, np.ones(1), 1.0)
    with pytest.raises(ValueError, match="cutoff"):
        precision_at_k(ranking, np.ones(1), 0)
    with pytest.raises(ValueError, match="n_relevant"):
        average_precision(ranking, np.ones((2, 1)), n_relevant=np.ones(3))
    with pytest.raises(ValueError, match="gain"):
        normalized_dcg(ranking, np.ones(1), gain="cubic")
    with pytest.raises(ValueError, match="binary"):
        average_precision(ranking, np.array([0.5]))  # a probability is not a label
    with pytest.raises(ValueError, match="judged"):
        parse_measure("Judged@1").score(ranking, np.ones(1), judged=np.ones(2, bool))


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("AP", "AP"),
        ("P@10", "P@10"),
        ("Rprec", "Rprec"),
        ("RBP", "RBP(p=0.8)"),
        ("RBP(p=0.80)", "RBP(p=0.8)"),
        ("RBPres(p=0.5)@10", "RBPres(p=0.5)@10"),
        ("nDCG@10", "nDCG@10"),
        ("nDCG", "nDCG"),
        ("Judged@10", "Judged@10"),
        ("AP(rel=2)", "AP(rel=2)"),
        (" P(rel=2)@5 ", "P(rel=2)@5"),
    ],
)
def test_names_parse_to_canonical_form(name, canonical):
    measure = parse_measure(name)
    assert isinstance(measure, Measure)
    assert str(measure) == canonical
    assert parse_measure(str(measure)) == measure


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("MAPP", r"^unknown measure 'MAPP'; did you mean 'MAP'\?$"),  # the hint, not the list
        ("ndcg@10", r"^unknown measure 'ndcg@10'; did you mean 'ndcg_cut_10' or 'nDCG@10'\?$"),
        ("nDGC@10", r"did you mean 'nDCG@10' or 'ndcg_cut_10'\?"),
        ("recip_rnk", "did you mean 'recip_rank'"),
        ("XYZQ", r"unknown measure 'XYZQ'; known"),
        ("P", "needs a cutoff"),
        ("Rprec@5", "takes no cutoff"),
        ("P@0", "positive integer"),
        ("RBP(p=1)", "outside"),
        ("RBP(x=1)", "unknown parameter 'x'"),
        ("AP(rel=1.5)", "not a valid int"),
        ("AP(rel)", "name=value"),
        ("AP(rel=1,rel=2)", "twice"),
        ("P@10@5", "cannot parse"),
    ],
)
def test_bad_names_get_clear_errors(name, message):
    with pytest.raises(ValueError, match=message):
        parse_measure(name)


def test_registry_lists_every_family():
    assert available_measures() == [
        "AP[@k]",
        "Bpref",
        "DCG[@k]",
        "ERR[@k]",
        "infAP",
        "Judged[@k]",
        "nDCG[@k]",
        "NumRel",
        "NumRelRet",
        "NumRet",
        "P@k",
        "R[@k]",
        "RBP(p=0.8)[@k]",
        "RBPres(p=0.8)[@k]",
        "Rprec",
        "RR[@k]",
        "Success[@k]",
    ]
    assert [str(m) for m in parse_measures(["AP", "RBP", "RBP(p=0.8)", "P@5"])] == [
        "AP",
        "RBP(p=0.8)",
        "P@5",
    ]
    with pytest.raises(ValueError, match="no measures"):
        parse_measures([])


# --------------------------------------------------------------------------- evaluate


@pytest.fixture
def tiny():
    """Two topics; r2 retrieves nothing for topic 2; ties in r1 are broken by docno descending."""
    qrels = pd.DataFrame(
        {
            "query_id": ["1", "1", "1", "2", "2"],
            "doc_id": ["a", "b", "c", "d", "e"],
            "relevance": [2, 0, 1, 1, 0],
        }
    )
    runs = {
        "r1": pd.DataFrame(
            {
                "query_id": ["1", "1", "1", "2"],
                "doc_id": ["a", "x", "c", "e"],
                "score": [1.0, 1.0, 0.5, 3.0],
            }
        ),
        "r2": pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["c", "a"], "score": [2.0, 1.0]}),
    }
    with pytest.warns(UserWarning, match="retrieves nothing"):
        return Campaign.from_frames(qrels, runs, rel_threshold=1)


def test_evaluate_per_topic_by_hand(tiny):
    frame = evaluate(tiny, ["AP", "P@2"], per_topic=True)
    assert list(frame.columns) == ["system", "query_id", "measure", "value"]
    # r1 topic 1: x (tie with a, x > a), a, c -> relevant a, c at ranks 2, 3
    got = frame.set_index(["system", "query_id", "measure"])["value"]
    assert got[("r1", "1", "AP")] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert got[("r1", "1", "P@2")] == pytest.approx(0.5)
    assert got[("r1", "2", "AP")] == 0.0
    assert got[("r2", "1", "AP")] == 1.0
    assert ("r2", "2", "AP") not in got.index  # skipped: r2 retrieved nothing there
    assert list(frame["system"]) == ["r1"] * 4 + ["r2"] * 2


def test_missing_topic_policies(tiny):
    skip = evaluate(tiny, "AP").set_index("system")["value"]
    zero = evaluate(tiny, "AP", missing="zero").set_index("system")["value"]
    assert skip["r2"] == 1.0 and zero["r2"] == 0.5
    assert skip["r1"] == zero["r1"] == pytest.approx((1 / 2 + 2 / 3) / 4)
    per_topic = evaluate(tiny, "AP", missing="zero", per_topic=True)
    assert len(per_topic) == 4
    with pytest.raises(ValueError, match="missing"):
        evaluate(tiny, "AP", missing="drop")


def test_condensed_lists_score_judged_documents_only(tiny):
    got = evaluate(tiny, ["AP", "P@1", "Judged@3"], per_topic=True, condensed=True)
    got = got.set_index(["system", "query_id", "measure"])["value"]
    # r1 topic 1 condensed: a, c (x removed)
    assert got[("r1", "1", "AP")] == 1.0
    assert got[("r1", "1", "P@1")] == 1.0
    assert got[("r1", "1", "Judged@3")] == 1.0


def test_evaluate_gain_and_threshold(tiny):
    lin = evaluate(tiny, "nDCG@2", per_topic=True)["value"].to_numpy()
    exp = evaluate(tiny, "nDCG@2", per_topic=True, gain="exponential")["value"].to_numpy()
    # r2 topic 1: c (1), a (2) vs ideal a, c
    assert lin[2] == pytest.approx((1 + 2 / np.log2(3)) / (2 + 1 / np.log2(3)))
    assert exp[2] == pytest.approx((1 + 3 / np.log2(3)) / (3 + 1 / np.log2(3)))
    strict = evaluate(tiny, ["AP(rel=2)"]).set_index("system")["value"]
    assert strict["r2"] == 0.5
    with pytest.raises(ValueError, match="gain"):
        evaluate(tiny, "AP", gain="log")


def test_evaluate_mean_is_nan_for_a_run_with_no_topics():
    with pytest.warns(UserWarning):
        campaign = make_campaign([("1", "a", 1)], {"r1": {"1": ["a"]}, "r2": {"9": ["a"]}})
    means = evaluate(campaign, "AP").set_index("system")["value"]
    assert means["r1"] == 1.0 and np.isnan(means["r2"])


def test_ideal_dcg_by_grade_counts_equals_sorting(rng):
    ranking, _, _, _ = _random_topic(rng)
    grades = rng.integers(-1, 4, size=(5, 30))
    for k in (None, 3, 50):
        for gain in ("linear", "exponential"):
            counted = normalized_dcg(ranking, grades, k, gain=gain)  # integer grades: counting
            sorted_ = normalized_dcg(ranking, grades.astype(float), k, gain=gain)  # sorting
            np.testing.assert_allclose(counted, sorted_, rtol=0, atol=1e-12)


def test_draws_are_scored_in_chunks_with_the_same_result(rng, monkeypatch):
    import relimpute.measures._ranked as ranked

    ranking, grades, _, _ = _random_topic(rng)
    draws = rng.random((23, grades.size)) < 0.3
    total = draws.sum(axis=1) + rng.integers(0, 3, size=23)
    whole = average_precision(ranking, draws, n_relevant=total)
    whole_ndcg = normalized_dcg(ranking, draws, 5)
    monkeypatch.setattr(ranked, "CHUNK_CELLS", ranking.size * 4)  # 4 draws per chunk
    np.testing.assert_array_equal(average_precision(ranking, draws, n_relevant=total), whole)
    np.testing.assert_array_equal(normalized_dcg(ranking, draws, 5), whole_ndcg)
    with pytest.raises(ValueError, match="n_relevant"):
        average_precision(ranking, draws, n_relevant=total[:5])


def test_average_precision_is_carterettes_quadratic_form(rng):
    # Carterette 2007 §2.1: AP = (1/R) Σ_{i ≤ j} a_ij X_i X_j, a_ij = 1 / max(r(i), r(j)).
    ranking, _, _, depth = _random_topic(rng)
    x = rng.random((4, 30)) < 0.4
    got = average_precision(ranking, x)
    for s in range(ranking.shape[0]):
        ranks = np.zeros(30)
        ranks[ranking[s, : depth[s]]] = np.arange(1, depth[s] + 1)
        a = np.where(
            (ranks[:, None] > 0) & (ranks[None, :] > 0),
            1.0 / np.maximum(np.maximum(ranks[:, None], ranks[None, :]), 1),
            0.0,
        )
        a = np.triu(a)
        for b in range(4):
            q = x[b].astype(float) @ a @ x[b].astype(float)
            r = x[b].sum()
            assert got[b, s] == pytest.approx(q / r if r else 0.0, abs=1e-12)
