"""The three estimands of the confidence engine: complete, pool, qrels (docs/which-map.md)."""

from __future__ import annotations

import numpy as np
import pytest

from relimpute.confidence import ConfidenceEngine
from relimpute.confidence.estimands import judged_pool_depth
from relimpute.measures import evaluate
from test_confidence_engine import enumerate_topic, random_estimate, tiny_campaign


def _top(topic, row, k):
    """``(n,)`` bool: the unjudged documents of run ``row``'s top ``k``."""
    mask = np.zeros(topic.n_docs, dtype=bool)
    docs = topic.ranking[row, :k]
    mask[docs[docs >= 0]] = True
    return mask & ~topic.judged


@pytest.mark.parametrize("ratio", ["constant", "delta"])
@pytest.mark.parametrize("pool_depth", [1, 3])
@pytest.mark.parametrize("together", [False, True])
def test_pool_matches_enumeration(rng, ratio, pool_depth, together):
    """Per run its own pool, per pair both runs' pool (``pool_together``: every run and pair
    on the pool of all three runs), enumerated over every relevance vector: the exact moments
    agree to 1e-12 (below K an unjudged document is nonrelevant; documents independent: no
    shared shift, which tests/test_pool_coverage.py checks)."""
    campaign = tiny_campaign(rng, empty=(1, 2))
    estimate = random_estimate(campaign, rng)
    engine = ConfidenceEngine(ratio=ratio, estimand="pool", pool_depth=pool_depth, pool_group_sd=0,
                              pool_together=together)  # fmt: skip
    result = engine.confidence(campaign, estimate, method="normal")
    n = campaign.n_topics
    e_map, v_map = np.zeros(3), np.zeros(3)
    e_d, v_d = np.zeros(len(result.pairs)), np.zeros(len(result.pairs))

    def moments(values, r, w):
        e_r = w @ r
        if e_r == 0:
            return 0.0, 0.0
        mean = w @ values
        target = values - mean / e_r * r if ratio == "delta" else values
        return mean / e_r, w @ (target - w @ target) ** 2 / e_r**2

    for topic, p in zip(campaign.topics, estimate.p):
        every = _top(topic, 0, pool_depth) | _top(topic, 1, pool_depth) | _top(topic, 2, pool_depth)
        for s in range(3):
            q = np.where(topic.judged | (every if together else _top(topic, s, pool_depth)), p, 0.0)
            qs, r, w = enumerate_topic(topic, q, [0, 1, 2])  # R: every document with q > 0
            m, v = moments(qs[s], r, w)
            e_map[s] += m / n
            v_map[s] += v / n**2
        for k, (a, b) in enumerate(result.pairs):
            pool = topic.judged | (every if together else _top(topic, a, pool_depth) | _top(topic, b, pool_depth))
            qs, r, w = enumerate_topic(topic, np.where(pool, p, 0.0), [0, 1, 2])
            m, v = moments(qs[a] - qs[b], r, w)
            e_d[k] += m / n
            v_d[k] += v / n**2
    assert result.scores.e_map == pytest.approx(e_map, abs=1e-12)
    assert result.scores.var_map == pytest.approx(v_map, abs=1e-12)
    assert result.e_delta_map == pytest.approx(e_d, abs=1e-12)
    assert result.var_delta_map == pytest.approx(v_d, abs=1e-12)
    assert result.scores.estimand == "pool"
    if together:  # the other runs' documents move the scores (they do on this campaign)
        assert "the runs pooled together with the judged runs" in engine.describe()
        alone = ConfidenceEngine(ratio=ratio, estimand="pool", pool_depth=pool_depth, pool_group_sd=0,
                                 pool_together=False)  # fmt: skip
        assert "each run pooled alone with the judged runs" in alone.describe()
        assert np.abs(alone.confidence(campaign, estimate, method="normal").scores.e_map - e_map).max() > 1e-6
        # pooled together is the default, and the pool is the campaign's whichever runs are scored
        default = ConfidenceEngine(ratio=ratio, estimand="pool", pool_depth=pool_depth, pool_group_sd=0)
        assert default.pool_together and "pool_together" not in repr(default)
        one = default.confidence(campaign, estimate, systems=["s0", "s1"], pairs=[("s0", "s1")], method="normal")
        assert one.scores.e_map == pytest.approx(e_map[:2], abs=1e-12)
        assert one.e_delta_map == pytest.approx(e_d[:1], abs=1e-12)


def test_pooled_run_scores_trec_eval_with_zero_variance(rng):
    """A run whose top K is judged on every topic: pooled alone, its pool score is trec_eval's,
    sd 0, though it retrieves unjudged documents below K (which the complete estimand counts).
    Pooled together with runs whose top K is not judged, the documents they bring into the
    pool count for it too (in R, and where it ranks them below K): its score moves, with an sd."""
    k = 2
    campaign = _judge_top(tiny_campaign(rng, n_topics=4, n_docs=12, n_systems=3), 0, k)
    estimate = random_estimate(campaign, rng)
    scores = ConfidenceEngine(estimand="pool", pool_depth=k, pool_together=False).confidence(
        campaign, estimate, pairs=[], method="normal"
    ).scores
    trec = evaluate(campaign, "AP", missing="zero").set_index("system")["value"]
    assert scores.e_map[0] == pytest.approx(trec["s0"], abs=1e-15)
    assert scores.var_map[0] == 0.0
    together = ConfidenceEngine(estimand="pool", pool_depth=k).confidence(
        campaign, estimate, pairs=[], method="normal"
    ).scores
    assert abs(together.e_map[0] - trec["s0"]) > 1e-6 and together.var_map[0] > 0
    complete = ConfidenceEngine().confidence(campaign, estimate, pairs=[], method="normal").scores
    assert complete.var_map[0] > 0  # it does retrieve unjudged documents


def _judge_top(campaign, row, k):
    """The campaign with run ``row``'s top ``k`` judged (grade 0) on every topic."""
    import pandas as pd

    from relimpute.data import Campaign

    qrels, runs = [], {name: [] for name in campaign.systems}
    for topic in campaign.topics:
        top = set(topic.ranking[row, :k].tolist())
        for i, doc in enumerate(topic.doc_ids):
            if topic.judged[i]:
                qrels.append((topic.query_id, doc, int(topic.grades[i])))
            elif i in top:
                qrels.append((topic.query_id, doc, 0))
        for s, name in enumerate(campaign.systems):
            docs = topic.ranking[s, : topic.depth[s]]
            for rank, i in enumerate(docs):
                runs[name].append((topic.query_id, topic.doc_ids[i], float(len(docs) - rank)))
    frames = {
        name: pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
        for name, rows in runs.items()
    }
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    return Campaign.from_frames(qrels, frames, rel_threshold=campaign.rel_threshold)


@pytest.mark.parametrize("measure", ["AP", "P@5", "nDCG@10"])
def test_qrels_is_the_plain_evaluation(rng, measure):
    """``qrels``: the measures' evaluation with unjudged = nonrelevant (-c), sd 0, no model."""
    campaign = tiny_campaign(rng, empty=(1, 2))
    engine = ConfidenceEngine(estimand="qrels")
    result = engine.confidence(campaign, None, measure=measure, n_draws=10, rng=0)
    plain = evaluate(campaign, measure, missing="zero").set_index("system")["value"]
    assert result.scores.e_map == pytest.approx(plain[list(result.systems)].to_numpy(), abs=1e-12)
    assert result.scores.var_map.max() == 0.0
    assert set(result.p_a_better) <= {0.0, 0.5, 1.0}


def test_complete_is_the_default(rng):
    campaign = tiny_campaign(rng)
    estimate = random_estimate(campaign, rng)
    default = ConfidenceEngine().confidence(campaign, estimate, method="normal")
    named = ConfidenceEngine(estimand="complete").confidence(campaign, estimate, method="normal")
    np.testing.assert_array_equal(default.e_delta_map, named.e_delta_map)
    np.testing.assert_array_equal(default.var_delta_map, named.var_delta_map)
    assert default.scores.estimand == "complete"
    assert "estimand complete" in str(default)


def test_pool_refuses_what_it_cannot_give(rng):
    campaign = tiny_campaign(rng)
    estimate = random_estimate(campaign, rng)
    engine = ConfidenceEngine(estimand="pool", pool_depth=2)
    with pytest.raises(ValueError, match="exact moments only.*'complete' and 'qrels'"):
        engine.confidence(campaign, estimate, n_draws=10, method="monte carlo")
    with pytest.raises(ValueError, match="exact moments only.*not 'nDCG@10'"):
        engine.confidence(campaign, estimate, measure="nDCG@10")
    with pytest.raises(ValueError, match="estimand must be one of"):
        ConfidenceEngine(estimand="official")
    with pytest.raises(ValueError, match="pool_depth is the pool estimand's"):
        ConfidenceEngine(pool_depth=10)
    with pytest.raises(ValueError, match="pool_together is the pool estimand's"):
        ConfidenceEngine(pool_together=True)
    with pytest.raises(ValueError, match="pool_together is the pool estimand's"):
        ConfidenceEngine(pool_together=False)
    with pytest.raises(ValueError, match="needs a relevance estimate"):
        ConfidenceEngine().confidence(campaign, None, method="normal")


def test_judged_pool_depth(dl19):
    """DL 2019 passage: the depth-10 pool of every run is judged."""
    assert judged_pool_depth(dl19) == 10


@pytest.mark.parametrize("together", [False, True])
def test_pool_linear_measure_matches_its_sums(rng, together):
    """P@2 under ``pool``: E = Σ w p and Var = Σ w² p(1 - p) over each pool (each run's, each
    pair's, or with ``together`` the campaign's), to 1e-12."""
    campaign = tiny_campaign(rng)
    estimate = random_estimate(campaign, rng)
    engine = ConfidenceEngine(estimand="pool", pool_depth=1, pool_group_sd=0,
                              pool_together=together)  # independent  # fmt: skip
    result = engine.confidence(campaign, estimate, measure="P@2", method="normal")
    n = campaign.n_topics
    e, v = np.zeros(3), np.zeros(3)
    e_d, v_d = np.zeros(len(result.pairs)), np.zeros(len(result.pairs))

    def weights(topic, s):
        w = np.zeros(topic.n_docs)
        docs = topic.ranking[s, : min(2, topic.depth[s])]
        w[docs] = 0.5
        return w

    for topic, p in zip(campaign.topics, estimate.p):
        every = _top(topic, 0, 1) | _top(topic, 1, 1) | _top(topic, 2, 1)
        for s in range(3):
            q = np.where(topic.judged | (every if together else _top(topic, s, 1)), p, 0.0)
            e[s] += weights(topic, s) @ q / n
            v[s] += weights(topic, s) ** 2 @ (q * (1 - q)) / n**2
        for k, (a, b) in enumerate(result.pairs):
            q = np.where(topic.judged | (every if together else _top(topic, a, 1) | _top(topic, b, 1)), p, 0.0)
            w = weights(topic, a) - weights(topic, b)
            e_d[k] += w @ q / n
            v_d[k] += w**2 @ (q * (1 - q)) / n**2
    assert result.scores.e_map == pytest.approx(e, abs=1e-12)
    assert result.scores.var_map == pytest.approx(v, abs=1e-12)
    assert result.e_delta_map == pytest.approx(e_d, abs=1e-12)
    assert result.var_delta_map == pytest.approx(v_d, abs=1e-12)
