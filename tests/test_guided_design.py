"""The model-guided design (relimpute.selection.designs.ModelGuidedDesign) and its looks.

π sums to the budget with every candidate at or above the floor (so every one can be drawn)
and grows with the model's uncertainty times the document's weight in ΔAP; a seeded draw is
reproducible; the order of the entries makes each look's documents a Poisson sample with π
scaled by the look's fraction (checked by Monte Carlo against f · π); the Bonferroni rule's
levels and verdicts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from relimpute.relevance.base import RelevanceEstimate
from relimpute.selection.designs import (
    ENTRY,
    GUIDED_FLOOR_SHARE,
    JUDGED_STRATUM,
    ModelGuidedDesign,
    PPSDesign,
    design_from_spec,
    poisson_draw,
    sample_from_record,
    sample_record,
    unsampled_topics,
)
from relimpute.selection.guided import guided_uncertainty
from relimpute.selection.looks import Looks, look_index, look_sample
from relimpute.simulate import simulate_campaign


@pytest.fixture(scope="module")
def truth():
    """Four topics of 300 documents, five runs of 40 (complete qrels: the truth)."""
    return simulate_campaign(n_topics=4, n_systems=5, n_docs=300, depth=40, rng=3).campaign


@pytest.fixture(scope="module")
def hidden(truth):
    """The truth with only each run's top 2 documents judged."""
    return truth.with_judged([t.retrieved(depth=2) for t in truth.topics])


def _estimate(campaign, seed=0):
    """A stand-in model: p uniform on (0.05, 0.95), judged documents at their labels."""
    rng = np.random.default_rng(seed)
    p = tuple(np.where(t.judged, (t.grades >= 1).astype(float), rng.uniform(0.05, 0.95, t.n_docs))
              for t in campaign.topics)  # fmt: skip
    return RelevanceEstimate(campaign.query_ids, tuple(t.doc_ids for t in campaign.topics), p)


@pytest.mark.parametrize("share", [0.0, GUIDED_FLOOR_SHARE])
def test_pi_sums_to_the_budget_floored_and_following_the_uncertainty(hidden, share):
    design = ModelGuidedDesign(budget=120, pool_depth=40, floor=0.02, floor_share=share)
    estimate = _estimate(hidden)
    sample = design.draw(hidden, np.random.default_rng(1), estimate=estimate)
    universe = sample[sample["stratum"] != JUDGED_STRATUM]
    pi = universe["inclusion"].to_numpy()
    floor = max(0.02, share * 120 / len(universe))  # the floor, or the share of the budget's rate
    assert floor > 0.02 or share == 0
    assert pi.sum() == pytest.approx(120, rel=1e-6)
    assert (pi >= floor - 1e-12).all() and (pi <= 1).all()  # every candidate can be drawn
    assert share == 0 or (pi <= floor + 1e-9).any()  # the share's floor binds
    # the universe is every unjudged document of the depth-40 pool, each once
    pool = sum(int((t.retrieved(depth=40) & ~t.judged).sum()) for t in hidden.topics)
    assert len(universe) == pool and not universe.duplicated(["query_id", "doc_id"]).any()
    u = guided_uncertainty(hidden, estimate, hidden.systems, 40)["uncertainty"].to_numpy()
    between = (pi > floor + 1e-9) & (pi < 1)  # neither floored nor capped: π ∝ u
    ratio = pi[between] / u[between]
    assert np.allclose(ratio, ratio[0])
    assert (u[pi == 1] >= u[between].max()).all() and (u[pi <= floor] <= u[between].min()).all()
    judged = sample[sample["stratum"] == JUDGED_STRATUM]
    assert (judged["inclusion"] == 1).all() and judged[ENTRY].isna().all()


def test_a_journal_written_before_the_floor_share_reads_as_share_zero():
    """Old journals recorded no floor_share: their sample was drawn at share 0."""
    old = {"design": "guided", "budget": 50, "depth": 100, "floor": 0.01, "model": "fusion",
           "pairs": None}
    assert design_from_spec(old).floor_share == 0.0
    new = ModelGuidedDesign(50)
    assert new.floor_share == GUIDED_FLOOR_SHARE
    assert design_from_spec(new.spec()) == new
    pps = PPSDesign(budget=50, floor_share=0.25)
    assert design_from_spec(pps.spec()) == pps and PPSDesign(budget=50).floor_share == 0.0
    with pytest.raises(ValueError, match="floor_share"):
        ModelGuidedDesign(50, floor_share=1.5)


def test_the_weight_is_mtc_s_and_zero_uncertainty_gets_the_floor(hidden):
    """A document the model is sure of (p = 0 or 1) has no uncertainty: it gets the floor."""
    estimate = _estimate(hidden)
    p = list(estimate.p)
    t = hidden.topics[0]
    open_ = np.flatnonzero(t.retrieved(depth=40) & ~t.judged)
    p[0] = p[0].copy()
    p[0][open_[:5]] = 1.0
    sure = RelevanceEstimate(estimate.query_ids, estimate.doc_ids, tuple(p))
    design = ModelGuidedDesign(budget=120, pool_depth=40, floor=0.02)
    sample = design.draw(hidden, np.random.default_rng(1), estimate=sure)
    floor = max(0.02, GUIDED_FLOOR_SHARE * 120 / int((sample["stratum"] != JUDGED_STRATUM).sum()))
    sample = sample.set_index(["query_id", "doc_id"])
    docs = [(t.query_id, str(d)) for d in t.doc_ids[open_[:5]]]
    assert np.allclose(sample.loc[docs, "inclusion"], floor)
    # one pair: a document only one of the two runs retrieves weighs 1/rank-ish; one neither
    # retrieves is not a candidate at all
    pair = ModelGuidedDesign(budget=30, pool_depth=40, pairs=[hidden.systems[:2]])
    table = guided_uncertainty(hidden, estimate, hidden.systems[:2], 40, pair.pairs)
    assert (table["weight"] >= 0).all() and (table["weight"] > 0).mean() > 0.9


def test_a_seeded_draw_is_reproducible_and_ordered_by_entry(hidden):
    design = ModelGuidedDesign(budget=120, pool_depth=40)
    first = design.draw(hidden, np.random.default_rng(5))  # the default model, fitted
    pd.testing.assert_frame_equal(first, design.draw(hidden, np.random.default_rng(5)))
    assert not first.equals(design.draw(hidden, np.random.default_rng(6)))
    drawn = first[first["order"] >= 0].sort_values("order")
    assert list(drawn["order"]) == list(range(len(drawn)))
    assert drawn[ENTRY].is_monotonic_increasing and (drawn[ENTRY] < 1).all()
    assert (first.loc[first["order"] < 0, ENTRY].dropna() >= 1).all()
    assert drawn["query_id"].nunique() > 1  # topics interleave: a prefix spans them
    back = sample_from_record(sample_record(first))
    pd.testing.assert_frame_equal(back, first)
    assert design_from_spec(design.spec()) == design


def test_each_look_is_a_poisson_sample_with_pi_times_its_fraction(hidden):
    """Monte Carlo: over 2000 draws, P(d answered by the look at f) = f · π_d (3 sd)."""
    design = ModelGuidedDesign(budget=120, pool_depth=40, floor=0.05)
    universe = design.universe(hidden, np.random.default_rng(0), estimate=_estimate(hidden))
    hits, n = None, 2000
    for seed in range(n):
        sample = poisson_draw(universe, np.random.default_rng(seed))
        look = look_sample(sample, 0.5)
        inside = look["drawn"].to_numpy()[sample["stratum"].to_numpy() != JUDGED_STRATUM]
        hits = inside.astype(float) if hits is None else hits + inside
    universe = look[look["stratum"] != JUDGED_STRATUM]
    pi = universe["inclusion"].to_numpy()
    assert np.allclose(pi, 0.5 * sample.loc[sample["stratum"] != JUDGED_STRATUM, "inclusion"])
    sd = np.sqrt(pi * (1 - pi) / n)
    assert (np.abs(hits / n - pi) <= 3 * sd + 1e-9).mean() > 0.99
    assert abs((hits / n).sum() - pi.sum()) < 3 * np.sqrt((pi * (1 - pi)).sum() / n)
    # the look's documents are a prefix of the order: the first ones asked
    asked = look[look["order"] >= 0]
    assert set(asked.loc[asked["drawn"], "order"]) == set(range(int(asked["drawn"].sum())))


def test_looks_levels_verdicts_and_completion(hidden):
    looks = Looks(4, confidence=0.95, margin=0.01)
    assert looks.at == (0.25, 0.5, 0.75, 1.0) and looks.level == pytest.approx(0.9875)
    assert looks.z == pytest.approx(2.4977, abs=1e-4)
    verdict = looks.verdict([0.01, -0.03, -0.005, -0.02], [0.03, -0.01, 0.004, 0.02])
    assert list(verdict) == ["A better", "B better", "equivalent", "open"]
    assert not looks.decided([0.01, -0.02], [0.03, 0.02]) and looks.decided([0.01], [0.03])
    assert "Bonferroni" in looks.rule()
    sample = ModelGuidedDesign(budget=120, pool_depth=40).draw(
        hidden, np.random.default_rng(2), estimate=_estimate(hidden)
    )
    entry = np.sort(sample.loc[sample["order"] >= 0, ENTRY].to_numpy())
    first = int((entry < 0.25).sum())
    assert look_index(sample, first, looks) == 0
    assert look_index(sample, first + 1, looks) in (None, 1)
    assert look_index(sample, len(entry), looks) == 3
    with pytest.raises(ValueError, match="fractions must increase"):
        Looks(2, fractions=(0.5, 0.9))


def test_bad_budgets_and_unsampled_topics(hidden):
    with pytest.raises(ValueError, match="larger than the pool"):
        ModelGuidedDesign(budget=10_000, pool_depth=40).draw(hidden, np.random.default_rng(1),
                                                        estimate=_estimate(hidden))  # fmt: skip
    with pytest.raises(ValueError, match="below the π floor"):
        ModelGuidedDesign(budget=2, pool_depth=40).draw(hidden, np.random.default_rng(1),
                                                   estimate=_estimate(hidden))  # fmt: skip
    with pytest.raises(ValueError, match="not compared"):
        ModelGuidedDesign(budget=50, pool_depth=40, pairs=[("nope", hidden.systems[0])]).draw(
            hidden, np.random.default_rng(1), estimate=_estimate(hidden))
    nothing = hidden.with_judged([np.zeros(t.n_docs, dtype=bool) for t in hidden.topics])
    sample = ModelGuidedDesign(budget=5, pool_depth=40, floor=0.001).draw(
        nothing, np.random.default_rng(1), estimate=_estimate(nothing)
    )
    empty = unsampled_topics(look_sample(sample, 0.25))
    assert set(empty) <= set(hidden.query_ids) and empty  # a tiny look leaves topics unsampled


def test_the_survey_estimators_are_unbiased_under_the_design(truth, hidden):
    """Monte Carlo over 300 draws: the mean of HT and of the model-assisted (GREG) estimate of
    ΔP@10 (a linear total: exactly unbiased) lies within 4 Monte Carlo se of the value with the
    universe judged completely; of ΔMAP (a ratio per topic) within 4 se + 0.01 (its bias)."""
    from relimpute.confidence.survey import controls, run_ranks, topic_estimate, topic_samples
    from relimpute.selection.designs import PREDICTION

    a, b = truth.systems[:2]
    design = ModelGuidedDesign(budget=150, pool_depth=40, pairs=[(a, b)])
    universe = design.universe(hidden, np.random.default_rng(0), (a, b), _estimate(hidden))
    grade = {(t.query_id, str(d)): int(g)
             for t in truth.topics for d, g in zip(t.doc_ids, t.grades)}
    true_grade = np.array([grade[q, d] for q, d in zip(universe["query_id"], universe["doc_id"])])
    complete = topic_samples(universe.assign(relevance=true_grade, inclusion=1.0), "poisson")
    ranks = {n: run_ranks(truth.run_frame(n), complete) for n in (a, b)}
    open_ = universe[PREDICTION].notna()
    control = universe.loc[open_, ["query_id", "doc_id"]].assign(p=universe.loc[open_, PREDICTION])
    preds = controls(complete, control)

    def delta(samples, measure, estimator):
        return np.mean([topic_estimate(samples[t], measure, [ranks[a][t], ranks[b][t]], preds[t],
                                       estimator)[0] for t in samples])  # fmt: skip

    target = {m: delta(complete, m, "ht") for m in ("P@10", "AP")}
    values = {(m, e): [] for m in target for e in ("ht", "model-assisted")}
    for seed in range(300):
        drawn = poisson_draw(universe, np.random.default_rng(seed))
        samples = topic_samples(drawn.assign(relevance=np.where(drawn["drawn"], true_grade, -1)),
                                "poisson")  # fmt: skip
        for m, e in values:
            values[m, e].append(delta(samples, m, e))
    for (m, e), v in values.items():
        v = np.asarray(v)
        slack = 4 * v.std(ddof=1) / np.sqrt(len(v)) + (0.01 if m == "AP" else 0.0)
        assert abs(v.mean() - target[m]) < slack, (m, e, v.mean(), target[m])


def test_bonferroni_looks_keep_coverage_where_stopping_at_the_first_exclusion_does_not():
    """Monte Carlo oracle of the rule alone: nested samples of 25, 50, 75, 100 normal
    observations of a mean 0 (each look's interval exact), 20000 sequences. Stopping at the
    first 95% interval that excludes 0 reports an interval that misses 0 in about 12.6% of
    sequences (Armitage et al. 1969: 4 equally spaced looks); stopping by :class:`Looks` misses
    at most 5% (the union bound)."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(20000, 100))
    sizes = np.array([25, 50, 75, 100])
    means = np.cumsum(x, axis=1)[:, sizes - 1] / sizes
    se = 1 / np.sqrt(sizes)

    def miss(looks: Looks, z: float) -> float:
        missed = np.zeros(len(means), dtype=bool)
        stopped = np.zeros(len(means), dtype=bool)
        for k in range(len(sizes)):
            low, high = means[:, k] - z * se[k], means[:, k] + z * se[k]
            decided = looks.verdict(low, high) != "open"
            missed |= ~stopped & decided  # the interval reported excludes the truth 0
            stopped |= decided
        return missed.mean()

    looks = Looks(4)
    naive = miss(looks, 1.959964)
    assert 0.11 < naive < 0.14  # the optional-stopping inflation, about 12.6%
    assert miss(looks, looks.z) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / len(means))
