"""Monte Carlo coverage of the design-based and model-assisted intervals on a synthetic
campaign (relimpute.confidence.survey): 95% intervals of MAP and ΔMAP cover the full-universe
value 93-97% of seeded samplings for HT, for the difference estimator with a good control
variate, and for PPI++ with a good, a useless (0.5) and a reversed one; the model-assisted
interval is narrower than HT's with the good one, PPI++'s never much wider.

The campaign: a universe of 100 documents per topic (about 16 relevant), two runs that rank
it by noisy scores of relevance; Poisson sampling with π ∝ statAP's AP-prior weight of the
best rank, floored at 0.08, about 25 documents judged per topic (25%). The difference estimator
(λ = 1) with a wrong control is left out: its AP is a ratio whose R̂ comes near 0 (docs/survey.md).
``-m slow``: 400 samplings of 30 topics; by default 40 samplings of 10 topics with the bounds
widened to what 40 samplings can tell (85-100%: a binomial 95% at 40 is about ±7 points).
"""

from __future__ import annotations

import numpy as np
import pytest

from relimpute.confidence.survey import POISSON, Control, TopicSample, topic_estimate
from relimpute.confidence.survey.estimate import cross_fitted_lambdas, lambda_moments
from relimpute.selection.designs import ap_prior, pps_inclusion

N_DOCS, JUDGED = 100, 25


def _campaign(rng, n_topics):
    topics = []
    for _ in range(n_topics):
        x = (rng.random(N_DOCS) < np.linspace(0.4, 0.02, N_DOCS)).astype(int)
        ranks = []
        for noise in (1.0, 1.3):
            score = x + noise * rng.standard_normal(N_DOCS)
            order = np.argsort(-score, kind="stable")
            rank = np.empty(N_DOCS, dtype=int)
            rank[order] = np.arange(1, N_DOCS + 1)
            ranks.append(rank)
        best = np.minimum(*ranks)
        pi = pps_inclusion(ap_prior(best, N_DOCS), JUDGED, floor=0.08)
        good = np.clip(np.where(x == 1, 0.75, 0.12) + 0.1 * rng.standard_normal(N_DOCS), 0.01,
                       0.99)
        topics.append((x, ranks, pi, good))
    return topics


def _topic(x, pi, judged):
    n = len(x)
    return TopicSample("t", np.arange(n).astype(str), np.where(judged, x, -1), pi,
                       np.zeros(n, dtype=int), np.array([float(n)]),
                       np.array([float(judged.sum())]), np.ones(1), POISSON)


CONTROLS = {"good": lambda g: g, "half": lambda g: np.full(len(g), 0.5),
            "reversed": lambda g: 1 - g}


CELLS = [("ht", "none"), ("model-assisted", "good")] + [("ppi++", c) for c in CONTROLS]


@pytest.fixture(scope="module")
def small():
    return simulate(40, 10)


@pytest.fixture(scope="module")
def large():
    return simulate(400, 30)


def simulate(n_trials, n_topics, cells=CELLS):
    """Per trial and (estimator, control): (MAP_A, its variance, ΔMAP, its variance)."""
    rng = np.random.default_rng(20261202)
    topics = _campaign(rng, n_topics)
    truth = []
    for x, ranks, pi, good in topics:
        full = _topic(x, np.ones(N_DOCS), np.ones(N_DOCS, dtype=bool))
        truth.append([topic_estimate(full, "AP", r)[0] for r in ranks])
    truth = np.array(truth).mean(axis=0)
    out = {cell: [] for cell in cells}
    for _ in range(n_trials):
        draws = [rng.random(N_DOCS) < pi for _, _, pi, _ in topics]
        samples = [_topic(x, pi, judged) for (x, _, pi, _), judged in zip(topics, draws)]
        for estimator, name in cells:
            sums = np.zeros(4)
            controls = [Control(CONTROLS[name](good), None, {}) if name != "none" else None
                        for *_, good in topics]
            lams = {0: [None] * n_topics, 1: [None] * n_topics}
            if estimator == "ppi++":  # cross-fitted over topics, as estimate() does
                for which, pick in ((0, lambda r: r[0]), (1, lambda r: r)):
                    found = cross_fitted_lambdas({i: lambda_moments(s, "AP", pick(t[1]), c)
                                                  for i, (s, t, c) in
                                                  enumerate(zip(samples, topics, controls))})
                    lams[which] = [found[i] for i in range(n_topics)]
            for i, (topic, (x, ranks, pi, good), control) in enumerate(zip(samples, topics,
                                                                          controls)):
                a = topic_estimate(topic, "AP", ranks[0], control, estimator, lam=lams[0][i])
                d = topic_estimate(topic, "AP", ranks, control, estimator, lam=lams[1][i])
                sums += (a[0], a[1], d[0], d[1])
            out[(estimator, name)].append(sums / (n_topics, n_topics**2, n_topics, n_topics**2))
    return truth, {cell: np.array(rows) for cell, rows in out.items()}


def _coverage(rows, truth_map, truth_delta):
    z = 1.959964
    cover_map = np.abs(rows[:, 0] - truth_map) <= z * np.sqrt(rows[:, 1])
    cover_delta = np.abs(rows[:, 2] - truth_delta) <= z * np.sqrt(rows[:, 3])
    return cover_map.mean(), cover_delta.mean()


def _check_coverage(result, cell, low, high):
    truth, rows = result
    cover_map, cover_delta = _coverage(rows[cell], truth[0], truth[0] - truth[1])
    assert low <= cover_map <= high, cover_map
    assert low <= cover_delta <= high, cover_delta


@pytest.mark.slow
@pytest.mark.parametrize("cell", CELLS, ids="-".join)
def test_intervals_cover_93_to_97_percent_whatever_the_control(large, cell):
    _check_coverage(large, cell, 0.93, 0.97)


@pytest.mark.parametrize("cell", CELLS, ids="-".join)
def test_intervals_cover_about_95_percent_small(small, cell):
    _check_coverage(small, cell, 0.85, 1.0)


@pytest.mark.parametrize("cell", CELLS, ids="-".join)
def test_mean_error_of_map_is_small(small, cell):
    """Within 3 standard errors of the mean over the samplings, or under 0.005 (the ratio's
    bias after its correction)."""
    truth, rows = small
    error = rows[cell][:, 0] - truth[0]
    assert abs(error.mean()) < max(3 * error.std() / np.sqrt(len(error)), 0.005)


def test_a_good_control_narrows_the_interval_and_ppi_is_never_much_wider_than_ht(small):
    _, rows = small
    width = {cell: np.sqrt(r[:, 3]).mean() for cell, r in rows.items()}
    assert width[("model-assisted", "good")] < 0.8 * width[("ht", "none")]
    assert width[("ppi++", "good")] < 0.8 * width[("ht", "none")]
    for name in CONTROLS:
        assert width[("ppi++", name)] <= 1.1 * width[("ht", "none")]


def test_ppi_on_precision_is_unbiased_where_few_relevant_are_drawn():
    """P@10 under a stratified sample with about one judged document in a run's top 10: PPI++
    with a good control must stay unbiased over samplings (Monte Carlo, 3 se). Choosing HT on a
    topic whose own sample shows HT's variance small (0 when nothing relevant is drawn, the
    estimate 0 too) biased it low by about one sd and narrowed its interval."""
    import pandas as pd

    from relimpute.confidence.survey import estimate

    rng = np.random.default_rng(2026)
    n_topics, n_docs = 30, 60
    topics, truth = [], 0.0
    for t in range(n_topics):
        x = (rng.random(n_docs) < np.linspace(0.6, 0.05, n_docs)).astype(int)
        p = np.clip(0.7 * x + 0.15 + rng.normal(0, 0.1, n_docs), 0.01, 0.99)
        topics.append((str(t), x, p))
        truth += x[:10].mean() / n_topics
    runs = {"a": pd.concat([pd.DataFrame({"query_id": q, "doc_id": [f"d{i}" for i in range(n_docs)],
                                          "score": -np.arange(n_docs)}) for q, _, _ in topics])}
    control = pd.concat([pd.DataFrame({"query_id": q, "doc_id": [f"d{i}" for i in range(n_docs)],
                                       "p": p}) for q, _, p in topics])
    found, covered = [], []
    for _ in range(120):
        frames = []
        for q, x, _ in topics:
            stratum = (np.arange(n_docs) >= 10).astype(int)
            drawn = np.zeros(n_docs, bool)
            drawn[rng.choice(10, 2, replace=False)] = True
            drawn[10 + rng.choice(n_docs - 10, 5, replace=False)] = True
            frames.append(pd.DataFrame({"query_id": q, "doc_id": [f"d{i}" for i in range(n_docs)],
                                        "relevance": np.where(drawn, x, -1), "stratum": stratum}))
        row = estimate(pd.concat(frames), runs, measures=("P@10",), control=control,
                       estimator="ppi++", sampling="stratified")
        row = row[row["query_id"] == "all"].iloc[0]
        found.append(row["estimate"])
        covered.append(row["low"] <= truth <= row["high"])
    found = np.array(found)
    assert abs(found.mean() - truth) < 3 * found.std(ddof=1) / np.sqrt(len(found))
    assert np.mean(covered) >= 0.85


def test_ppi_on_ap_is_unbiased_where_few_relevant_are_drawn():
    """MAP under a stratified sample of 2 of the top 10 and 4 of the other 50 documents (no
    relevant drawn on many topics): PPI++ with a good control, λ cross-fitted over topics as
    estimate() does, must stay unbiased over 200 samplings: within 3 Monte Carlo se plus 0.015,
    the ratio's own bias at 6 judged a topic with AP̂ clipped to [0, 1] (0.013-0.017 on four
    seeds; 0.008-0.012 unclipped), and cover ≥ 85%. A
    per-topic fallback to HT where PPI++'s variance exceeded 4x HT's took 0 ± 0 wherever no
    relevant was drawn: bias -0.11 (30 se), coverage 22%."""
    from relimpute.confidence.survey.batched import Samplings, TopicSamplings

    rng = np.random.default_rng(2026)
    n_topics, n_docs, B = 30, 60, 200
    members = [(np.arange(1), 1.0)]
    ranks = np.arange(1, n_docs + 1)[None]
    stratum = (np.arange(n_docs) >= 10).astype(int)
    whole = Samplings(np.ones((1, n_docs), bool), inclusion=np.ones(n_docs))
    topics, truth = [], 0.0
    for _ in range(n_topics):
        x = (rng.random(n_docs) < np.linspace(0.5, 0.02, n_docs)).astype(float)
        p = np.clip(0.7 * x + 0.15 + rng.normal(0, 0.1, n_docs), 0.01, 0.99)
        drawn = np.zeros((B, n_docs), bool)
        for b in range(B):
            drawn[b, rng.choice(10, 2, replace=False)] = True
            drawn[b, 10 + rng.choice(n_docs - 10, 4, replace=False)] = True
        topics.append(TopicSamplings(Samplings(drawn, stratum=stratum, sampling="stratified"),
                                     x, ranks, p))
        truth += TopicSamplings(whole, x, ranks).quantity(members, "ht", "linearised",
                                                          False)[0][0, 0] / n_topics
    lams = cross_fitted_lambdas({t: s.lambda_moments(members) for t, s in enumerate(topics)})
    found = [s.quantity(members, "ppi++", "jackknife", True, lams[t])
             for t, s in enumerate(topics)]
    value = sum(f[0][:, 0] for f in found) / n_topics
    se = np.sqrt(sum(f[1][:, 0] for f in found)) / n_topics
    error = value - truth
    assert abs(error.mean()) < 3 * error.std(ddof=1) / np.sqrt(B) + 0.015, error.mean()
    assert np.mean(np.abs(error) <= 1.959964 * se) >= 0.85
