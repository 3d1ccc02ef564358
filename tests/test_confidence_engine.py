"""ConfidenceEngine: campaign-level moments against enumeration, measures, and edge cases."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import make_campaign

from relimpute.confidence import (
    ConfidenceEngine,
    expected_relevant,
    pair_topic_moments,
    prob_positive,
    relevant_moments,
    topic_moments,
)
from relimpute.data import Campaign
from relimpute.measures import average_precision, precision_at_k
from relimpute.relevance import RelevanceEstimate, Uniform, Nonrelevant


def tiny_campaign(rng, n_topics=3, n_docs=9, n_systems=3, empty=None):
    """Random runs over ``n_docs`` documents per topic, about half of them judged.

    ``empty=(system, topic)`` makes that run retrieve nothing for that topic.
    """
    qrels, runs = [], {f"s{s}": [] for s in range(n_systems)}
    for t in range(n_topics):
        docs = [f"d{t}_{i}" for i in range(n_docs)]
        judged = rng.random(n_docs) < 0.5
        for d, j in zip(docs, judged):
            if j:
                qrels.append((f"q{t}", d, int(rng.integers(0, 3))))
        for s in range(n_systems):
            if empty == (s, t):
                continue
            m = int(rng.integers(1, n_docs + 1))
            for rank, i in enumerate(rng.permutation(n_docs)[:m]):
                runs[f"s{s}"].append((f"q{t}", docs[i], float(m - rank)))
    if not qrels:
        qrels.append(("q0", "d0_0", 1))
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    frames = {k: pd.DataFrame(v, columns=["query_id", "doc_id", "score"]) for k, v in runs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Campaign.from_frames(qrels, frames, rel_threshold=1)


def random_estimate(campaign, rng, binary=False):
    ps = []
    for topic, relevant in zip(campaign.topics, campaign.relevant()):
        p = (rng.random(topic.n_docs) < 0.5).astype(float) if binary else rng.random(topic.n_docs)
        ps.append(np.where(topic.judged, relevant.astype(float), p))
    return RelevanceEstimate(
        campaign.query_ids, tuple(t.doc_ids for t in campaign.topics), tuple(ps), model="test"
    )


def enumerate_topic(topic, p, rows):
    """All 2^n relevance vectors of one topic: Q per system and R over the counted documents."""
    counted = topic.judged.copy()
    for s in rows:
        counted[topic.ranking[s, : topic.depth[s]]] = True
    x = np.array(list(itertools.product([0.0, 1.0], repeat=topic.n_docs)))
    w = np.prod(np.where(x == 1.0, p, 1.0 - p), axis=1)
    qs = []
    for s in rows:
        row = topic.ranking[s, : topic.depth[s]]
        hits = x[:, row]
        qs.append((hits * np.cumsum(hits, axis=1) / np.arange(1, len(row) + 1)).sum(axis=1))
    return np.array(qs), x[:, counted].sum(axis=1), w


@pytest.mark.parametrize("ratio", ["constant", "delta"])
def test_compare_matches_enumeration(rng, ratio):
    campaign = tiny_campaign(rng, empty=(1, 2))
    estimate = random_estimate(campaign, rng)
    rows = [0, 1, 2]
    result = ConfidenceEngine(ratio=ratio).confidence(campaign, estimate, method="normal")
    e_map = np.zeros(3)
    v_map = np.zeros(3)
    e_d = np.zeros(len(result.pairs))
    v_d = np.zeros(len(result.pairs))
    for topic, p in zip(campaign.topics, estimate.p):
        q, r, w = enumerate_topic(topic, p, rows)
        e_r, var_r = w @ r, w @ (r - w @ r) ** 2

        def moments(values):
            mean = w @ values
            target = values - mean / e_r * r if ratio == "delta" else values
            return mean / e_r, w @ (target - w @ target) ** 2 / e_r**2

        for s in rows:
            m, v = moments(q[s])
            e_map[s] += m / 3
            v_map[s] += v / 9
        for k, (a, b) in enumerate(result.pairs):
            m, v = moments(q[a] - q[b])
            e_d[k] += m / 3
            v_d[k] += v / 9
        assert (e_r, var_r) == pytest.approx(relevant_moments(topic, p), abs=1e-12)
    assert result.scores.e_map == pytest.approx(e_map, abs=1e-12)
    assert result.scores.var_map == pytest.approx(v_map, abs=1e-12)
    assert result.e_delta_map == pytest.approx(e_d, abs=1e-12)
    assert result.var_delta_map == pytest.approx(v_d, abs=1e-12)
    assert result.p_a_better == pytest.approx(prob_positive(e_d, v_d), abs=1e-12)


def test_binary_probabilities_give_exact_ap_and_zero_variance(dl19, rng):
    """Every p in {0, 1}: E[AP] equals relimpute.measures AP with those labels, Var = 0."""
    estimate = random_estimate(dl19, rng, binary=True)
    result = ConfidenceEngine(ratio="delta").confidence(dl19, estimate, method="normal")
    for t, (topic, p) in enumerate(zip(dl19.topics, estimate.p)):
        relevant = (p == 1.0) & (topic.judged | topic.retrieved())
        expected = average_precision(topic.ranking, relevant)
        np.testing.assert_allclose(result.scores.e_ap[:, t], expected, rtol=0, atol=1e-12)
    assert np.abs(result.scores.var_ap).max() < 1e-20
    assert np.abs(result.var_delta_ap).max() < 1e-20
    assert set(np.unique(result.p_a_better)) <= {0.0, 0.5, 1.0}


def test_unjudged_nonrelevant_is_trec_eval_map(dl19, dl19_dir):
    estimate = Nonrelevant().fit_predict(dl19)
    scores = ConfidenceEngine().confidence(dl19, estimate, pairs=[], method="normal").scores
    stats = pd.read_csv(dl19_dir / "run_stats.tsv", sep="\t", dtype={"run": str}).set_index("run")
    official = stats.loc[list(scores.systems), "MAP"].to_numpy(dtype=float)
    np.testing.assert_allclose(scores.e_map, official, atol=5e-5)
    assert scores.var_map.max() == 0.0


def test_engine_agrees_with_topic_api(dl19):
    """The campaign path and the per-topic dense-rank API (used by MTC loops) agree."""
    systems = ["bm25base_p", "runid2", "ICT-BERT2"]
    estimate = Uniform(0.5).fit_predict(dl19)
    for ratio in ("constant", "delta"):
        result = ConfidenceEngine(ratio=ratio).confidence(
            dl19, estimate, systems=systems, method="normal"
        )
        rows = dl19.system_index(systems)
        for t in (0, 17, 42):
            topic, p = dl19.topics[t], estimate.p[t]
            e_r, var_r = relevant_moments(topic, p)  # E[R] over the whole campaign
            assert e_r == expected_relevant(topic, p)
            for k, (a, b) in enumerate(result.pairs):
                got = pair_topic_moments(
                    topic.ranks(rows[a]), topic.ranks(rows[b]), p, e_r, var_r=var_r, ratio=ratio
                )
                assert got == pytest.approx(
                    (result.e_delta_ap[k, t], result.var_delta_ap[k, t]), rel=1e-10, abs=1e-15
                )
            single = topic_moments(topic.ranks(rows[2]), p, e_r, var_r=var_r, ratio=ratio)
            assert single == pytest.approx(
                (result.scores.e_ap[2, t], result.scores.var_ap[2, t]), rel=1e-10, abs=1e-15
            )


def test_pair_answer_does_not_depend_on_the_other_runs_compared(dl19):
    """E[R] comes from the campaign, so adding runs to the comparison changes nothing."""
    estimate = Uniform(0.5).fit_predict(dl19)
    engine = ConfidenceEngine()
    alone = engine.confidence(
        dl19, estimate, systems=["p_bert", "bm25base_p"], method="normal"
    ).to_frame()
    crowd = engine.confidence(
        dl19, estimate, systems=["p_bert", "bm25base_p", "UNH_exDL_bm25", "ICT-BERT2"],
        method="normal",
    ).to_frame()
    pair = crowd[(crowd.system_a == "p_bert") & (crowd.system_b == "bm25base_p")]
    assert len(pair) == 1
    for column in ("e_delta_map", "sd_delta_map", "p_a_better"):
        assert pair[column].iloc[0] == pytest.approx(alone[column].iloc[0], rel=1e-12)


def test_depth_truncation_equals_truncated_ranks(dl19):
    estimate = Uniform(0.5).fit_predict(dl19)
    systems = ["bm25base_p", "runid2"]
    result = ConfidenceEngine(depth=10).confidence(dl19, estimate, systems=systems, method="normal")
    rows = dl19.system_index(systems)
    topic, p = dl19.topics[3], estimate.p[3]
    ra, rb = (np.where(topic.ranks(s) <= 10, topic.ranks(s), 0) for s in rows)
    e_r = expected_relevant(topic, p, rows, depth=10)
    assert e_r == pytest.approx(
        p[topic.judged].sum() + 0.5 * ((ra > 0) | (rb > 0))[~topic.judged].sum()
    )
    got = pair_topic_moments(ra, rb, p, e_r)
    assert got == pytest.approx((result.e_delta_ap[0, 3], result.var_delta_ap[0, 3]), rel=1e-10)


def test_run_set_changes_expected_r(dl19):
    estimate = Uniform(0.5).fit_predict(dl19)
    topic, p = dl19.topics[0], estimate.p[0]
    few = expected_relevant(topic, p, dl19.system_index(["bm25base_p", "runid2"]))
    everything = expected_relevant(topic, p)
    judged_relevant = topic.relevant(dl19.rel_threshold).sum()
    assert judged_relevant < few < everything


def test_edge_cases(rng):
    campaign = tiny_campaign(rng, n_topics=2, n_docs=6, empty=(0, 1))
    # topic 0: nothing can be relevant; topic 1: system 0 retrieves nothing
    ps = [np.zeros(campaign.topics[0].n_docs), np.full(campaign.topics[1].n_docs, 0.5)]
    ps[1] = np.where(campaign.topics[1].judged, campaign.relevant()[1], ps[1])
    estimate = RelevanceEstimate(
        campaign.query_ids, tuple(t.doc_ids for t in campaign.topics), tuple(ps)
    )
    result = ConfidenceEngine(ratio="delta").confidence(campaign, estimate, method="normal")
    assert (result.scores.e_ap[:, 0] == 0).all() and (result.scores.var_ap[:, 0] == 0).all()
    assert result.scores.e_ap[0, 1] == 0 and result.scores.var_ap[0, 1] == 0
    assert (result.e_delta_ap[:, 0] == 0).all() and (result.var_delta_ap[:, 0] == 0).all()


def test_identical_systems_without_unjudged_documents():
    """Zero variance: P = ½ for equal means, 0 or 1 otherwise."""
    qrels = [("q", "a", 1), ("q", "b", 0), ("q", "c", 1)]
    campaign = make_campaign(qrels, {"x": ["a", "b"], "y": ["a", "b"], "z": ["b", "a"]})
    estimate = Uniform(0.5).fit_predict(campaign)
    result = ConfidenceEngine().confidence(campaign, estimate, method="normal")
    assert result.var_delta_map.tolist() == [0.0, 0.0, 0.0]
    assert result.p_a_better.tolist() == [0.5, 1.0, 1.0]
    assert result.probability("z", "x") == 0.0
    assert result.scores.e_map.tolist() == pytest.approx([0.5, 0.5, 0.25])


@pytest.mark.parametrize("measure, family", [("P@3", "P"), ("RBP(p=0.7)", "RBP"), ("DCG@4", "DCG")])
def test_linear_measures_match_enumeration(rng, measure, family):
    campaign = tiny_campaign(rng, n_topics=2, n_docs=8)
    estimate = random_estimate(campaign, rng)
    result = ConfidenceEngine().confidence(campaign, estimate, measure=measure, method="normal")
    assert result.scores.measure == measure and result.scores.ratio is None
    e_d = np.zeros(len(result.pairs))
    v_d = np.zeros(len(result.pairs))
    for t, (topic, p) in enumerate(zip(campaign.topics, estimate.p)):
        x = np.array(list(itertools.product([0.0, 1.0], repeat=topic.n_docs)))
        w = np.prod(np.where(x == 1.0, p, 1.0 - p), axis=1)
        values = []
        for s in range(3):
            row = topic.ranking[s, : topic.depth[s]]
            r = np.arange(1, len(row) + 1)
            weight = {
                "P": (r <= 3) / 3.0,
                "RBP": 0.3 * 0.7 ** (r - 1.0),
                "DCG": (r <= 4) / np.log2(r + 1.0),
            }[family]
            values.append(x[:, row] @ weight)
            assert result.scores.e_ap[s, t] == pytest.approx(w @ values[s], abs=1e-12)
            assert result.scores.var_ap[s, t] == pytest.approx(
                w @ (values[s] - w @ values[s]) ** 2, abs=1e-12
            )
        for k, (a, b) in enumerate(result.pairs):
            d = values[a] - values[b]
            e_d[k] += (w @ d) / 2
            v_d[k] += w @ (d - w @ d) ** 2 / 4
    assert result.e_delta_map == pytest.approx(e_d, abs=1e-12)
    assert result.var_delta_map == pytest.approx(v_d, abs=1e-12)


def test_precision_with_binary_p_equals_measure(dl19, rng):
    estimate = random_estimate(dl19, rng, binary=True)
    scores = ConfidenceEngine().confidence(
        dl19, estimate, measure="P@10", pairs=[], method="normal"
    ).scores
    topic, p = dl19.topics[5], estimate.p[5]
    np.testing.assert_allclose(
        scores.e_ap[:, 5], precision_at_k(topic.ranking, p == 1.0, 10), atol=1e-12
    )
    assert scores.var_ap.max() == 0.0


def test_results_api(dl19):
    systems = ["bm25base_p", "runid2", "srchvrs_ps_run3", "ICT-BERT2"]
    estimate = Uniform(0.5).fit_predict(dl19)
    result = ConfidenceEngine().confidence(dl19, estimate, systems=systems, method="normal")
    frame = result.to_frame(level=0.9)
    assert list(frame.columns) == [
        "system_a",
        "system_b",
        "e_delta_map",
        "sd_delta_map",
        "p_a_better",
        "ci_low",
        "ci_high",
    ]
    assert len(frame) == 6 and frame.system_a.iloc[0] == "bm25base_p"
    z = 1.6448536269514722
    np.testing.assert_allclose(
        frame.ci_high - frame.e_delta_map, z * frame.sd_delta_map, rtol=1e-12
    )
    matrix = result.matrix()
    assert matrix.shape == (4, 4) and np.isnan(np.diag(matrix)).all()
    off = ~np.eye(4, dtype=bool)
    np.testing.assert_allclose((matrix.values + matrix.values.T)[off], 1.0)
    assert matrix.loc["runid2", "bm25base_p"] == pytest.approx(
        result.probability("runid2", "bm25base_p")
    )
    np.testing.assert_allclose(result.p_delta_negative, 1.0 - result.p_a_better)
    assert "p_a_better" in str(result) and "4 systems" in str(result)
    ranking = result.scores.ranking()
    assert ranking[-1] == "ICT-BERT2"
    assert result.scores.to_frame().system.tolist() == list(ranking)
    assert len(result.scores.topic_frame()) == 4 * dl19.n_topics
    chosen = ConfidenceEngine().confidence(
        dl19, estimate, systems=systems, pairs=[("runid2", "bm25base_p")],
        method="normal",
    )
    assert chosen.e_delta_map[0] == pytest.approx(-result.e_delta_map[0])
    assert chosen.p_a_better[0] == pytest.approx(1.0 - result.p_a_better[0])


def test_prob_positive():
    assert prob_positive([1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]).tolist() == [
        1.0,
        0.0,
        0.5,
        0.5,
    ]
    assert prob_positive(1.0, 1.0) == pytest.approx(0.8413447460685429)


def test_invalid_arguments(dl19):
    estimate = Uniform(0.5).fit_predict(dl19)
    engine = ConfidenceEngine()
    with pytest.raises(ValueError, match="ratio"):
        ConfidenceEngine(ratio="exact")
    with pytest.raises(ValueError, match="depth"):
        ConfidenceEngine(depth=0)
    with pytest.raises(KeyError, match="nosuch"):
        engine.confidence(dl19, estimate, systems=["runid2", "nosuch"], method="normal")
    with pytest.raises(KeyError, match="run set"):
        engine.confidence(
            dl19, estimate, systems=["runid2", "bm25base_p"], pairs=[("runid2", "test1")],
            method="normal",
        )
    with pytest.raises(ValueError, match="itself"):
        engine.confidence(dl19, estimate, pairs=[("runid2", "runid2")], method="normal")
    with pytest.raises(ValueError, match="monte carlo. of ConfidenceEngine.confidence"):
        engine.confidence(dl19, estimate, measure="nDCG@10", method="normal")
    with pytest.raises(ValueError, match="topics"):
        engine.confidence(dl19.subset(topics=dl19.query_ids[:3]), estimate, method="normal")
    with pytest.raises(ValueError, match="confidence level"):
        engine.confidence(
            dl19, estimate, systems=["runid2", "test1"], method="normal"
        ).confidence_interval(1.5)
