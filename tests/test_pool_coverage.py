"""The ``pool`` estimand for a run left out of the pool: its truth when its documents are
judged, its shared shift against a Monte Carlo oracle, and the study's scoring
(examples/pool_coverage/run.py)."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from relimpute.confidence import ConfidenceEngine
from relimpute.measures import evaluate
from relimpute.relevance.base import RelevanceEstimate
from relimpute.simulate import simulate_campaign

K = 5
PATH = Path(__file__).resolve().parents[1] / "examples" / "pool_coverage" / "run.py"


@pytest.fixture(scope="module")
def left_out():
    """A campaign judged on the depth-K pool of every run (the truth), and the same campaign
    with run s0 left out of the pool (s0's own documents unjudged)."""
    campaign = simulate_campaign(n_topics=15, n_systems=4, n_docs=80, depth=25, rng=3).campaign
    full = campaign.pooled(K)
    reduced = full.pooled(K, campaign.systems[1:])
    assert any((~t.judged[t.ranking[0, :K]]).any() for t in reduced.topics)
    return full, reduced


def _estimate(campaign, ps):
    return RelevanceEstimate(campaign.query_ids, tuple(t.doc_ids for t in campaign.topics),
                             tuple(ps), model="test")  # fmt: skip


def _top_unjudged(topic, row):
    mask = np.zeros(topic.n_docs, dtype=bool)
    mask[topic.ranking[row, :K]] = True
    return mask & ~topic.judged


def test_pool_is_the_truth_when_the_left_out_run_is_judged(left_out):
    """With the left-out run's top K judged (the full pool) or known exactly (p 0 or 1 from the
    full pool's judgments), E is its MAP on the full pool and its sd is 0, with the shared
    shift on; so is every ΔMAP against a pooled run (a pooled run alone is scored on the
    pool without s0's documents: only a pair with s0 sees them)."""
    full, reduced = left_out
    truth = evaluate(full, "AP", missing="zero").set_index("system")["value"]
    engine = ConfidenceEngine(estimand="pool", pool_depth=K, pool_group_sd=1.0)
    judged = _estimate(full, [r.astype(float) for r in full.relevant()])
    known = _estimate(reduced, [r.astype(float) for r in full.relevant()])
    for campaign, estimate in ((full, judged), (reduced, known)):
        result = engine.confidence(
            campaign, estimate, pairs=[("s0", "s1"), ("s0", "s2")], method="normal"
        )
        assert result.scores.e_map[0] == pytest.approx(truth["s0"], abs=1e-12)
        assert result.scores.var_map == pytest.approx(0.0, abs=1e-24)
        assert result.e_delta_map == pytest.approx(
            [truth["s0"] - truth["s1"], truth["s0"] - truth["s2"]], abs=1e-12)  # fmt: skip
        assert result.var_delta_map == pytest.approx(0.0, abs=1e-24)


def test_a_group_pooled_together_is_the_truth_when_its_documents_are_known(left_out):
    """Two runs left out together, every p known (0 or 1 from the full pool's judgments):
    ``pool_together`` gives each its MAP on the full pool, which holds the other's top K, with
    sd 0; each run pooled alone misses the relevant documents only the other ranks in its top K
    (they count for it in the truth), so at least one of its MAPs differs."""
    full, _ = left_out
    truth = evaluate(full, "AP", missing="zero").set_index("system")["value"]
    reduced = full.pooled(K, full.systems[2:])
    known = _estimate(reduced, [r.astype(float) for r in full.relevant()])
    pairs = [("s0", "s2"), ("s1", "s3")]
    together = ConfidenceEngine(estimand="pool", pool_depth=K, pool_group_sd=1.0, pool_together=True)
    result = together.confidence(reduced, known, systems=["s0", "s1", "s2", "s3"], pairs=pairs, method="normal")
    np.testing.assert_allclose(result.scores.e_map, truth[["s0", "s1", "s2", "s3"]].to_numpy(), atol=1e-12)
    np.testing.assert_allclose(result.e_delta_map, [truth["s0"] - truth["s2"], truth["s1"] - truth["s3"]],
                               atol=1e-12)  # fmt: skip
    assert result.scores.var_map == pytest.approx(0.0, abs=1e-24)
    alone = ConfidenceEngine(estimand="pool", pool_depth=K, pool_group_sd=1.0, pool_together=False)
    e_alone = alone.confidence(reduced, known, systems=["s0", "s1"], pairs=[], method="normal").scores.e_map
    assert np.abs(e_alone - truth[["s0", "s1"]].to_numpy()).max() > 1e-4


def _oracle_ap(topic, rel, row, pool):
    """``(D,)`` AP of run ``row`` under each drawn ``(D, n)`` relevance: plain trec_eval, R the
    relevant documents of ``pool``."""
    docs = topic.ranking[row, : topic.depth[row]]
    hits = rel[:, docs]
    precision = np.cumsum(hits, axis=1) / np.arange(1, len(docs) + 1)
    total = rel[:, pool].sum(axis=1)
    return np.where(total > 0, (hits * precision).sum(axis=1) / np.maximum(total, 1), 0.0)


@pytest.mark.parametrize("group_sd", [0.0, 0.6])
def test_pool_interval_against_monte_carlo(left_out, group_sd):
    """Monte Carlo as the estimand says (one log-odds shift δ ~ N(0, group_sd²) for all of the
    left-out run's unjudged top-K documents in every topic, then each relevant independently;
    every other unjudged document nonrelevant): E, sd and the 95% interval of its MAP and of
    ΔMAP against a pooled run agree with the engine's (``ratio="delta"``: Q and R share those
    documents; the default ``"constant"`` leaves out their covariance and is wider)."""
    _, reduced = left_out
    rng = np.random.default_rng(7)
    ps = [np.where(t.judged, r, rng.uniform(0.05, 0.6, t.n_docs))
          for t, r in zip(reduced.topics, reduced.relevant())]  # fmt: skip
    engine = ConfidenceEngine("delta", estimand="pool", pool_depth=K, pool_group_sd=group_sd)
    result = engine.confidence(
        reduced, _estimate(reduced, ps), pairs=[("s0", "s1")], method="normal"
    )
    wide = ConfidenceEngine(estimand="pool", pool_depth=K, pool_group_sd=group_sd).confidence(
        reduced, _estimate(reduced, ps), pairs=[("s0", "s1")], method="normal")  # fmt: skip
    draws = 40_000
    shift = rng.normal(0.0, group_sd, size=(draws, 1))
    map0, map1 = np.zeros(draws), np.zeros(draws)
    for topic, p, relevant in zip(reduced.topics, ps, reduced.relevant()):
        open_ = _top_unjudged(topic, 0)
        prob = expit(logit(np.clip(p, 1e-12, 1 - 1e-12)) + shift)
        rel = np.where(open_, rng.random((draws, topic.n_docs)) < prob, relevant)
        pool = topic.judged | open_
        map0 += _oracle_ap(topic, rel, 0, pool) / reduced.n_topics
        map1 += _oracle_ap(topic, rel, 1, pool) / reduced.n_topics
    for mc, e, sd, ci in (
        (map0, result.scores.e_map[0], result.scores.sd_map[0], result.scores.confidence_interval()),
        (map0 - map1, result.e_delta_map[0], result.sd_delta_map[0], result.confidence_interval()),
    ):
        # E[AP] is E[Q]/E[R] (moments.py): a ratio's first order, off by ~0.25 sd here
        assert e == pytest.approx(mc.mean(), abs=0.3 * mc.std())
        assert sd == pytest.approx(mc.std(), rel=0.1)
        inside = np.mean((ci.low[0] <= mc) & (mc <= ci.high[0]))
        assert 0.93 <= inside <= 0.98
    assert wide.scores.sd_map[0] > result.scores.sd_map[0]
    # the pooled run s1, pooled together with s0 (the default): s0's documents count in its R
    assert result.scores.sd_map[1] == pytest.approx(map1.std(), rel=0.1)
    alone = ConfidenceEngine("delta", estimand="pool", pool_depth=K, pool_group_sd=group_sd,
                             pool_together=False).confidence(reduced, _estimate(reduced, ps), pairs=[], method="normal")  # fmt: skip
    assert alone.scores.sd_map[1] == 0.0  # a pooled run alone on its own pool: nothing unjudged
    assert alone.scores.e_map[0] == result.scores.e_map[0]  # s0 alone: the same pool


def test_shift_widens_only_the_left_out_run(left_out):
    """Each run pooled alone, the shared shift adds variance to the run with unjudged documents
    in its top K (and to its pairs), more with a larger spread, and leaves E unchanged."""
    _, reduced = left_out
    rng = np.random.default_rng(1)
    ps = [np.where(t.judged, r, rng.uniform(0.05, 0.6, t.n_docs))
          for t, r in zip(reduced.topics, reduced.relevant())]  # fmt: skip
    results = [ConfidenceEngine(estimand="pool", pool_depth=K, pool_group_sd=g, pool_together=False).confidence(
        reduced, _estimate(reduced, ps), method="normal") for g in (0.0, 0.5, 1.0)]  # fmt: skip
    sds = np.array([r.scores.sd_map for r in results])
    assert sds[0, 0] < sds[1, 0] < sds[2, 0]
    np.testing.assert_array_equal(sds[:, 1:], 0.0)
    for r in results[1:]:
        np.testing.assert_allclose(r.scores.e_map, results[0].scores.e_map, atol=1e-15)
        np.testing.assert_allclose(r.e_delta_map, results[0].e_delta_map, atol=1e-15)
    with pytest.raises(ValueError, match="pool_group_sd is the pool estimand's"):
        ConfidenceEngine(pool_group_sd=0.5)
    with pytest.raises(ValueError, match="pool_group_sd must be a finite number >= 0"):
        ConfidenceEngine(estimand="pool", pool_group_sd=-1.0)


def _study_module() -> SimpleNamespace:
    """examples/pool_coverage/run.py's functions (run, not imported: it is a script)."""
    return SimpleNamespace(**runpy.run_path(str(PATH)))


def test_study_scores_any_spread_from_two_runs_of_the_engine(left_out):
    """The study runs the engine at spreads 0 and 1 and scores every other spread from them:
    the sd, interval and P(A beats B) it derives are the engine's at that spread."""
    study = _study_module()
    _, reduced = left_out
    rng = np.random.default_rng(2)
    estimate = _estimate(reduced, [np.where(t.judged, r, rng.uniform(0.05, 0.6, t.n_docs))
                                   for t, r in zip(reduced.topics, reduced.relevant())])  # fmt: skip
    pairs = [("s0", "s1"), ("s0", "s2"), ("s0", "s3")]
    alone, unit, wanted = (
        ConfidenceEngine(estimand="pool", pool_depth=K, pool_group_sd=g).confidence(
            reduced, estimate, pairs=pairs, method="normal"
        )
        for g in (0.0, 1.0, 0.7)
    )  # fmt: skip
    frames = [
        {"system": list(reduced.systems), "truth": 0.5, "e": alone.scores.e_map,
         "sd_model": alone.scores.sd_map, "slope": study._added(unit.scores.var_map, alone.scores.var_map)},
        {"system_a": list(alone.system_a), "system_b": list(alone.system_b), "truth": 0.0,
         "e": alone.e_delta_map, "sd_model": alone.sd_delta_map,
         "slope": study._added(unit.var_delta_map, alone.var_delta_map)},
    ]  # fmt: skip
    runs, pairs = study.scored(*(pd.DataFrame(f) for f in frames), 0.7)
    np.testing.assert_allclose(runs["sd"], wanted.scores.sd_map, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(pairs["sd"], wanted.sd_delta_map, rtol=1e-9)
    np.testing.assert_allclose(pairs["ci_high"], wanted.confidence_interval().high, atol=1e-8)
    np.testing.assert_allclose(pairs["p_a_better"], wanted.p_a_better, rtol=1e-9)


def test_the_truths_pool_counts_its_holes_nonrelevant(left_out):
    """A document of the full pool the qrels leave unjudged is judged nonrelevant in the
    truth's campaign (so a left-out run's estimate does not give it a p the truth denies)."""
    full, _ = left_out
    topic = full.topics[0]
    hidden = topic.ranking[0, 0]
    holed = full.with_judged([t.judged if i else t.judged & (np.arange(t.n_docs) != hidden)
                              for i, t in enumerate(full.topics)])  # fmt: skip
    filled = _study_module().judged_pool(holed, K)
    assert filled.topics[0].judged[hidden] and filled.topics[0].grades[hidden] == 0
    for a, b in zip(filled.topics, full.topics):
        np.testing.assert_array_equal(a.judged, b.judged)
    assert not filled.relevant()[0][hidden]


def test_each_collection_is_scored_at_the_spread_chosen_on_the_others():
    study = _study_module()
    rows = [("a", 0.0, 0.93), ("a", 1.0, 0.95), ("b", 0.0, 0.94), ("b", 1.0, 0.99),
            ("c", 0.0, 0.70), ("c", 1.0, 0.93)]  # fmt: skip
    summary = pd.DataFrame(rows, columns=["collection", "group_sd", "pair_coverage"])
    held = study.choose(summary).set_index("collection")
    # a on b, c: 0.82 or 0.96 → 1; b on a, c: 0.815 or 0.94 → 1; c on a, b: 0.935 or 0.97 → 0
    assert held["group_sd"].to_dict() == {"a": 1.0, "b": 1.0, "c": 0.0}
    assert held.loc["c", "chosen_on"] == "a,b"


def test_study_leaves_each_group_out_once():
    """The whole study on a tiny campaign of two groups: every pooled run is scored once with its
    group left out, against every run of the other group; the truth is the full pool's MAP, and
    a group of one run has own = truth."""
    from relimpute.groups import RunGroups

    study = _study_module()
    campaign = simulate_campaign(n_topics=4, n_systems=3, n_docs=60, depth=15, rng=5).campaign
    names = campaign.systems
    groups = RunGroups(names, ("g1", "g1", "g2"), (True, True, True))
    runs, pairs = study.study(campaign, groups, depth=3, progress=False)
    truth = evaluate(study.judged_pool(campaign, 3), "AP", missing="zero").set_index("system")["value"]
    assert sorted(runs["system"]) == sorted(names)
    np.testing.assert_allclose(runs["truth"], truth[runs["system"]].to_numpy(), atol=1e-12)
    assert sorted(zip(pairs["system_a"], pairs["system_b"])) == sorted(
        [(names[0], names[2]), (names[1], names[2]), (names[2], names[0]), (names[2], names[1])])  # fmt: skip
    alone = runs.set_index("group").loc["g2"]
    assert alone["own"] == pytest.approx(alone["truth"], abs=1e-12)
    assert (runs["sd_model"] >= 0).all() and (runs["slope"] >= 0).all()


def test_the_shipped_spread_is_the_one_each_collection_is_scored_at():
    """The committed study (examples/pool_coverage/results/summary.csv) chose, for each
    collection on the other two, the spread the engine ships."""
    from relimpute.confidence.estimands import POOL_GROUP_SD

    summary = pd.read_csv(PATH.parent / "results" / "summary.csv")
    held = _study_module().choose(summary)
    assert set(held["collection"]) == {"dl19", "dl21", "trec8"}
    assert (held["group_sd"] == POOL_GROUP_SD).all()
    assert ConfidenceEngine(estimand="pool").pool_group_sd == POOL_GROUP_SD
