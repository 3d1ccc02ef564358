"""Power and bias of pooling strategies: t-tests, pools, efforts, gold agreement, planning."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from relimpute.data import Campaign
from relimpute.errors import InputError
from relimpute.measures.ap import average_precision
from relimpute.precision.pools import best_ranks, replayed_orders
from relimpute.precision.power import paired_t_pvalues, plan_design, power_curves
from relimpute.selection.base import all_pairs


def _campaign(n_topics=12, n_systems=6, size=400, depth=30, judged_depth=10, seed=0):
    """Synthetic runs; the qrels judge the depth-``judged_depth`` pool of every run."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {f"s{k}": [] for k in range(n_systems)}
    for t in range(n_topics):
        qid = f"q{t:02d}"
        rel = rng.random(size) < 0.1
        docs = np.array([f"{qid}-d{i}" for i in range(size)])
        pool = set()
        for k in range(n_systems):
            score = rng.normal(size=size) + (0.5 + 0.4 * k) * rel
            top = np.argsort(-score)[:depth]
            pool |= set(top[:judged_depth].tolist())
            runs[f"s{k}"].append(
                pd.DataFrame(
                    {"query_id": qid, "doc_id": docs[top], "score": -np.arange(depth, dtype=float)}
                )
            )
        judged = sorted(pool)
        qrels.append(
            pd.DataFrame(
                {"query_id": qid, "doc_id": docs[judged], "relevance": rel[judged].astype(int)}
            )
        )
    return Campaign.from_frames(pd.concat(qrels), {k: pd.concat(v) for k, v in runs.items()})


def test_paired_t_pvalues_match_scipy():
    rng = np.random.default_rng(1)
    scores = rng.random((5, 9))
    scores[3] = scores[2]  # identical systems: p = 1
    pairs = all_pairs(5)
    mean, p = paired_t_pvalues(scores, pairs)
    for (a, b), m, pv in zip(pairs, mean, p):
        if (a, b) == (2, 3):
            assert pv == 1.0 and m == 0.0
            continue
        assert pv == pytest.approx(stats.ttest_rel(scores[a], scores[b]).pvalue)
        assert m == pytest.approx(np.mean(scores[a] - scores[b]))


def test_full_pool_on_every_topic_reproduces_the_gold_standard():
    campaign = _campaign()
    curves = power_curves(
        campaign, depths=(1, 3, 10), topic_counts=(4, 12), repetitions=5, rng=2
    ).curves
    full = curves[(curves.depth == 10) & (curves.n_topics == 12) & (curves.measure == "MAP")]
    assert (full["bias"] == 0).all()
    assert full["tau"].tolist() == pytest.approx([1.0, 1.0])
    gold = np.stack([average_precision(t.ranking, t.relevant(1)) for t in campaign.topics], axis=1)
    _, p = paired_t_pvalues(gold, all_pairs(6))
    assert full["power"].iloc[0] == pytest.approx(np.mean(p < 0.05))
    # efforts: the depth-k pool is the union of every run's top k
    for k in (1, 3, 10):
        expected = sum(len(set(t.ranking[:, :k].ravel())) for t in campaign.topics)
        row = curves[(curves.depth == k) & (curves.n_topics == 12) & (curves.strategy == "depth")]
        assert row["effort"].iloc[0] == expected
    assert curves.groupby(["strategy", "measure", "n_topics"])[
        "effort"
    ].is_monotonic_increasing.all()


def test_mtf_judges_exactly_the_deepest_pool_starting_with_the_first_run():
    campaign = _campaign(n_topics=3)
    orders = replayed_orders(campaign, list(campaign.systems), 10, "mtf")
    best = best_ranks(campaign, range(campaign.n_systems))
    for topic, order, b in zip(campaign.topics, orders, best):
        assert len(order) == len(set(order.tolist()))
        assert set(order.tolist()) == set(np.flatnonzero((b > 0) & (b <= 10)).tolist())
        assert order[0] == topic.ranking[0, 0]


def test_mtc_orders_every_pool_document_once_and_matches_depth_when_all_are_judged():
    campaign = _campaign(n_topics=4)
    orders = replayed_orders(campaign, list(campaign.systems), 5, "mtc")
    best = best_ranks(campaign, range(campaign.n_systems))
    for order, b in zip(orders, best):
        assert sorted(order.tolist()) == np.flatnonzero((b > 0) & (b <= 5)).tolist()
    curves = power_curves(
        campaign, depths=(1, 5), topic_counts=(4,), strategies=("depth", "mtc"), rng=0
    ).curves.set_index(["strategy", "measure", "depth"])
    # matched effort at every depth; at the deepest both pools are the whole depth-5 pool
    assert (curves.loc["mtc", "effort"] == curves.loc["depth", "effort"]).all()
    deepest = curves.xs(5, level="depth")
    assert deepest.loc["mtc", ["power", "tau"]].equals(deepest.loc["depth", ["power", "tau"]])
    # MTC judges the documents that separate the runs first: not the depth-1 pool
    shallow = [o[: int(((b > 0) & (b <= 1)).sum())] for o, b in zip(orders, best)]
    top = [set(np.flatnonzero(b == 1).tolist()) for b in best]
    assert any(set(s.tolist()) != t for s, t in zip(shallow, top))


def test_bad_designs_are_input_errors():
    campaign = _campaign(n_topics=4)
    with pytest.raises(InputError, match="between 2 and 4 topics") as info:
        power_curves(campaign, depths=(1,), topic_counts=(5,))
    assert info.value.source == "topic_counts"  # the Python parameter; the CLI says --topics
    for bad, parameter in (({"depths": (0,)}, "depths"), ({"alpha": 1.5}, "alpha")):
        with pytest.raises(InputError) as info:
            power_curves(campaign, **{"depths": (1,), **bad})
        assert info.value.source == parameter and str(info.value).startswith(f"{parameter}: ")
    with pytest.raises(InputError, match="unknown strategy"):
        power_curves(campaign, depths=(1,), strategies=("mtc-fast",))
    curves = power_curves(campaign, depths=(2, 5), topic_counts=(2, 4), repetitions=3, rng=0).curves
    with pytest.raises(InputError, match="smaller than one topic's pool") as info:
        plan_design(curves, 1)
    assert info.value.source == "budget"
    plan = plan_design(curves, 10_000, max_bias=1.01)
    assert plan["power"].is_monotonic_decreasing and (plan["effort"] <= 10_000).all()
