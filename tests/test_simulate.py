"""The simulator: reproducible, its parameters visible in the output, valid campaigns, pools."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from relimpute.data import Campaign
from relimpute.simulate import SimulatedCampaign, simulate_campaign


def _average_precision(campaign: Campaign) -> np.ndarray:
    """(S, T) AP from the definition (independent of relimpute.measures)."""
    out = np.zeros((campaign.n_systems, campaign.n_topics))
    for j, topic in enumerate(campaign.topics):
        relevant = topic.relevant(campaign.rel_threshold)
        for s in range(campaign.n_systems):
            hits = relevant[topic.ranking[s, : topic.depth[s]]]
            precision = np.cumsum(hits) / np.arange(1, len(hits) + 1)
            out[s, j] = precision[hits].sum() / relevant.sum()
    return out


@pytest.fixture(scope="module")
def sim() -> SimulatedCampaign:
    return simulate_campaign(n_topics=20, n_systems=15, n_docs=600, depth=100, rng=7)


def _same(a: Campaign, b: Campaign) -> bool:
    return a.systems == b.systems and all(
        np.array_equal(x.ranking, y.ranking) and np.array_equal(x.grades, y.grades)
        for x, y in zip(a.topics, b.topics)
    )


def test_reproducible_with_seed_and_generator():
    a = simulate_campaign(n_topics=5, n_systems=6, n_docs=300, depth=50, rng=3)
    b = simulate_campaign(n_topics=5, n_systems=6, n_docs=300, depth=50, rng=3)
    c = simulate_campaign(n_topics=5, n_systems=6, n_docs=300, depth=50, rng=4)
    d = simulate_campaign(
        n_topics=5, n_systems=6, n_docs=300, depth=50, rng=np.random.default_rng(3)
    )
    assert _same(a.campaign, b.campaign) and np.array_equal(a.skill, b.skill)
    assert _same(a.campaign, d.campaign)
    assert not _same(a.campaign, c.campaign) and not np.array_equal(a.skill, c.skill)


def test_campaign_is_complete_and_valid(sim):
    c = sim.campaign
    assert c.n_systems == 15 and c.n_topics == 20 and c.rel_threshold == 1
    assert list(c.query_ids) == sorted(c.query_ids)
    for t, n_rel in zip(c.topics, sim.n_relevant):
        assert t.judged.all() and t.n_docs == 600
        assert list(t.doc_ids) == sorted(t.doc_ids)
        assert int((t.grades >= 1).sum()) == n_rel
        for s in range(c.n_systems):
            row = t.ranking[s]
            assert (row[: t.depth[s]] >= 0).all() and (row[t.depth[s] :] == -1).all()
            assert len(np.unique(row[: t.depth[s]])) == t.depth[s]


def test_same_campaign_through_the_file_tables(sim):
    # qrels_frame/run_frame -> from_frames rebuilds it: the simulator keeps the data-model contract.
    c = sim.campaign.subset(systems=list(sim.campaign.systems[:4]))
    rebuilt = Campaign.from_frames(c.qrels_frame(), {s: c.run_frame(s) for s in c.systems})
    assert _same(c, rebuilt)
    assert all(np.array_equal(x.doc_ids, y.doc_ids) for x, y in zip(c.topics, rebuilt.topics))


def test_depths_respected():
    sc = simulate_campaign(
        n_topics=30, n_systems=40, n_docs=500, depth=80, short_fraction=0.3, rng=1
    )
    depth = np.stack([t.depth for t in sc.campaign.topics], axis=1)
    full = (depth == 80).all(axis=1)
    assert 0 < (~full).sum() < 40  # some, not all, systems are short
    assert depth.min() >= 8 and depth.max() == 80
    assert all(t.ranking.shape == (40, t.depth.max()) for t in sc.campaign.topics)
    all_short = simulate_campaign(
        n_topics=3, n_systems=2, n_docs=200, depth=50, short_fraction=1, rng=1
    ).campaign
    assert all(t.ranking.shape == (2, t.depth.max()) for t in all_short.topics)
    assert any(t.depth.max() < 50 for t in all_short.topics)
    none_short = simulate_campaign(
        n_topics=3, n_systems=10, n_docs=200, depth=50, short_fraction=0, rng=1
    )
    assert all((t.depth == 50).all() for t in none_short.campaign.topics)
    np.testing.assert_allclose(sc.to_frame()["mean_depth"], depth.mean(axis=1))


def test_prevalence_and_grades_follow_parameters():
    sc = simulate_campaign(
        n_topics=400,
        n_systems=2,
        n_docs=4000,
        depth=10,
        relevant_median=60,
        relevant_sigma=0.5,
        grade_probs=(0.6, 0.3, 0.1),
        rng=11,
    )
    logs = np.log(sc.n_relevant)
    # median of 400 lognormal draws: sd of log-median ~ 1.25 * 0.5 / sqrt(400) = 0.031
    assert abs(np.median(logs) - np.log(60)) < 0.1
    assert abs(logs.std() - 0.5) < 0.06  # sd of a sample sd ~ 0.5 / sqrt(800) = 0.018
    grades = np.concatenate([t.grades[t.grades > 0] for t in sc.campaign.topics])
    shares = np.bincount(grades, minlength=4)[1:] / len(grades)
    np.testing.assert_allclose(shares, [0.6, 0.3, 0.1], atol=0.01)  # n ~ 25,000: sd < 0.004
    more = simulate_campaign(
        n_topics=400, n_systems=2, n_docs=4000, depth=10, relevant_median=200, rng=11
    )
    assert np.median(more.n_relevant) > 2.5 * np.median(sc.n_relevant)


def test_better_skill_gives_higher_map():
    correlations, ordered, pairs = [], 0, 0
    for seed in range(6):
        sc = simulate_campaign(
            n_topics=25, n_systems=12, n_docs=1000, depth=100, short_fraction=0, rng=seed
        )
        mean_ap = _average_precision(sc.campaign).mean(axis=1)
        correlations.append(spearmanr(sc.skill, mean_ap)[0])
        clearly_better = sc.skill[:, None] - sc.skill[None, :] > 0.5
        ordered += (mean_ap[:, None] > mean_ap[None, :])[clearly_better].sum()
        pairs += clearly_better.sum()
    # monotone on average; close skills may swap (topic interaction), clear gaps do not
    assert np.mean(correlations) > 0.8 and min(correlations) > 0.3
    assert pairs > 100 and ordered / pairs > 0.97


def test_skill_extremes():
    random_systems = simulate_campaign(
        n_topics=10,
        n_systems=4,
        n_docs=1000,
        depth=1000,
        skill_range=(0, 0),
        skill_jitter=0,
        topic_interaction=0,
        relevant_median=50,
        relevant_sigma=0,
        rng=2,
    )
    # a random full ranking of 1000 docs with 50 relevant has expected AP ~ 0.05 + O(log n / n)
    assert 0.03 < _average_precision(random_systems.campaign).mean() < 0.1
    oracle_like = simulate_campaign(
        n_topics=10,
        n_systems=4,
        n_docs=1000,
        depth=1000,
        skill_range=(50, 50),
        doc_noise=0.0,
        relevant_median=50,
        relevant_sigma=0,
        rng=2,
    )
    assert _average_precision(oracle_like.campaign).mean() > 0.99


def test_family_overlap():
    def top10_overlap(overlap):
        sc = simulate_campaign(
            n_topics=10,
            n_systems=12,
            n_families=4,
            n_docs=1000,
            depth=10,
            overlap=overlap,
            skill_range=(1, 1),
            skill_jitter=0,
            topic_interaction=0,
            short_fraction=0,
            rng=5,
        )
        same, other = [], []
        for t in sc.campaign.topics:
            sets = [set(r) for r in t.ranking]
            for i in range(12):
                for j in range(i + 1, 12):
                    (same if sc.family[i] == sc.family[j] else other).append(len(sets[i] & sets[j]))
        return np.mean(same), np.mean(other)

    same_hi, other_hi = top10_overlap(0.95)
    same_lo, _ = top10_overlap(0.0)
    assert same_hi > 2 * other_hi and same_hi > same_lo + 2


def test_campaign_pooled_judges_exactly_the_union_of_top_k(sim):
    c = sim.campaign
    pooled = c.pooled(10)
    assert isinstance(pooled, Campaign) and pooled.systems == c.systems
    for full, t in zip(c.topics, pooled.topics):
        top = full.ranking[:, :10]
        expected = np.zeros(full.n_docs, bool)
        expected[top[top >= 0]] = True
        np.testing.assert_array_equal(t.judged, expected)
        np.testing.assert_array_equal(t.grades[t.judged], full.grades[t.judged])
        assert (t.grades[~t.judged] == 0).all()
        np.testing.assert_array_equal(t.ranking, full.ranking)
    some = c.pooled(5, c.systems[:2])
    for full, t in zip(c.topics, some.topics):
        assert set(np.flatnonzero(t.judged)) == set(full.ranking[:2, :5].ravel())
    # a deeper pool judges more, and depth >= run depth judges everything retrieved
    assert sum(t.judged.sum() for t in c.pooled(20).topics) > sum(
        t.judged.sum() for t in pooled.topics
    )
    everything = c.pooled(100)
    assert all((t.judged == full.retrieved()).all() for t, full in zip(everything.topics, c.topics))
    # pooling a pooled campaign never adds judgments
    again = pooled.pooled(50)
    assert all((b.judged <= a.judged).all() for a, b in zip(pooled.topics, again.topics))


def test_result_reporting(sim):
    frame = sim.to_frame()
    assert list(frame.columns) == ["system", "family", "skill", "mean_depth"]
    assert isinstance(frame, pd.DataFrame) and len(frame) == 15
    text = str(sim)
    assert "15 systems" in text and "20 topics" in text and "seed 7" in text
    assert sim.params["depth"] == 100 and sim.params["n_families"] == 5


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"depth": 700}, "cannot exceed n_docs"),
        ({"grade_probs": (0.5, 0.4)}, "sum to 1"),
        ({"overlap": 1.5}, "overlap"),
        ({"n_families": 20}, "n_families"),
        ({"n_topics": 0}, "n_topics"),
    ],
)
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate_campaign(**{"n_docs": 600, **kwargs})


def test_bad_campaign_pooled_depth(sim):
    with pytest.raises(ValueError, match="depth must be a positive integer"):
        sim.campaign.pooled(0)


@pytest.mark.parametrize("compress", [False, True])
def test_simulated_campaign_round_trips_through_trec_files(tmp_path, compress):
    c = simulate_campaign(n_topics=4, n_systems=5, n_docs=200, depth=30, rng=9).campaign
    qrels, runs = c.to_files(tmp_path, compress=compress)
    assert qrels.name == ("qrels.txt.gz" if compress else "qrels.txt")
    back = Campaign.from_files(qrels, runs)
    assert _same(c, back) and back.query_ids == c.query_ids
    assert all(np.array_equal(x.doc_ids, y.doc_ids) for x, y in zip(c.topics, back.topics))
    with pytest.raises(FileExistsError, match="already holds files"):
        c.to_files(tmp_path)
