"""The leave-one-group-out study on a small simulated collection, and its error measures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from relimpute.bias import groups_from_frame
from relimpute.bias.study import run_pool_bias_study
from relimpute.bias.study_scores import paired_p_values, rank_errors
from relimpute.measures import evaluate
from relimpute.simulate import simulate_campaign

MEASURES = ["P@5", "RBP(p=0.8)", "AP", "nDCG@10"]


@pytest.fixture(scope="module")
def collection():
    sim = simulate_campaign(n_topics=12, n_systems=12, n_docs=300, depth=40, n_families=5, rng=7)
    campaign = sim.campaign
    names = list(campaign.systems)
    pooled = ["yes"] * len(names)
    pooled[-1] = "no"  # one unpooled run: never contributes, never tested
    groups = groups_from_frame(
        pd.DataFrame({"run": names, "group": [f"g{f}" for f in sim.family], "pooled": pooled})
    )
    official = campaign.pooled(20, groups.pooled_runs())  # the "official" depth-20 qrels
    return official, groups


@pytest.fixture(scope="module")
def study(collection):
    campaign, groups = collection
    return run_pool_bias_study(
        campaign,
        groups,
        pool_depth=5,
        measures=MEASURES,
        models=["uniform"],
        model_groups=["g0", "g1"],
        n_common=4,
        common_repeats=3,
        n_draws=500,
        progress=False,
    )


def test_reduced_and_truth_equal_scores_against_rebuilt_qrels(collection, study):
    campaign, groups = collection
    pooled = groups.pooled_runs()
    truth = evaluate(campaign.pooled(5, pooled), MEASURES, missing="zero")
    truth = truth.set_index(["system", "measure"])["value"]
    reduced = study.estimates[study.estimates["corrector"] == "reduced"]
    assert len(reduced) == len(pooled) * len(MEASURES)
    for group in groups.group_names():
        left = groups.members(group, pooled_only=True)
        if not left:
            continue
        qrels = campaign.pooled(5, [r for r in pooled if r not in left])
        expected = evaluate(qrels, MEASURES, missing="zero").set_index(["system", "measure"])[
            "value"
        ]
        rows = reduced[reduced["group"] == group]
        for run, measure, value, true in zip(
            rows["run"], rows["measure"], rows["estimate"], rows["truth"]
        ):
            assert value == pytest.approx(expected[(run, measure)], abs=1e-12)
            assert true == pytest.approx(truth[(run, measure)], abs=1e-12)
            assert value <= true + 1e-12  # unjudged = nonrelevant can only lose relevant documents


def test_metrics_follow_their_definitions(study):
    est = study.estimates
    metrics = study.metrics.set_index(["corrector", "measure", "filter"])
    for (corrector, measure), rows in est[est["repeat"] == 0].groupby(["corrector", "measure"]):
        if corrector in ("model:uniform", "webber-park-topics"):
            continue
        mae = np.mean(np.abs(rows["estimate"] - rows["truth"]))
        assert metrics.loc[(corrector, measure, "all"), "mae"] == pytest.approx(mae)
        tau = stats.kendalltau(rows["truth"], rows["estimate"]).statistic
        assert metrics.loc[(corrector, measure, "all"), "tau"] == pytest.approx(tau)
    topics = est[(est["corrector"] == "webber-park-topics") & (est["measure"] == "AP")]
    per_repeat = topics.groupby("repeat").apply(
        lambda f: np.mean(np.abs(f["estimate"] - f["truth"]))
    )
    assert metrics.loc[("webber-park-topics", "AP", "all"), "mae"] == pytest.approx(
        per_repeat.mean()
    )
    n_pooled = study.settings["pooled_runs"]
    assert metrics.loc[("reduced", "AP", "all"), "n_runs"] == n_pooled
    assert metrics.loc[("reduced", "AP", "top75"), "n_runs"] == n_pooled - n_pooled // 4
    assert metrics.loc[("reduced", "RBP(p=0.8)", "all"), "coverage"] == 1.0  # [RBP, RBP + residual]
    assert set(est.loc[est["corrector"] == "webber-park-topics", "repeat"]) == {0, 1, 2}
    assert set(est.loc[est["corrector"] == "model:uniform", "group"]) == {"g0", "g1"}
    assert set(metrics.index.get_level_values(0)) >= {
        "reduced",
        "condensed",
        "webber-park",
        "lipani",
    }


def test_rank_errors_by_hand():
    true = np.array([0.5, 0.4, 0.3, 0.2])
    names = ["a", "b", "c", "d"]
    p = np.full((4, 4), 0.01)
    p[3, 2] = p[2, 3] = 0.2  # d vs c not significant
    # d moved to 0.45: true rank 4, new rank 2 (only a's 0.5 above): passes b and c
    assert rank_errors(true, np.array([3]), np.array([0.45]), names, p) == (2, 1)
    # a moved to 0.1: rank 1 → 4, passes b, c, d (all significant)
    assert rank_errors(true, np.array([0]), np.array([0.1]), names, p) == (3, 3)
    assert rank_errors(true, np.arange(4), true, names, p) == (0, 0)


def test_coverage_counts_a_degenerate_interval_at_the_value():
    from relimpute.bias.study_scores import covers

    third = np.array([0.1 + 0.2])  # 0.30000000000000004
    assert covers(np.array([0.3]), np.array([0.3]), third).all()
    assert not covers(np.array([0.3]), np.array([0.31]), np.array([0.2999])).any()


def test_paired_p_values_equal_scipy(rng):
    scores = rng.uniform(size=(4, 15))
    scores[3] = scores[2]  # identical runs: p = 1
    p = paired_p_values(scores)
    for i in range(4):
        for j in range(4):
            if i != j and not np.array_equal(scores[i], scores[j]):
                assert p[i, j] == pytest.approx(stats.ttest_rel(scores[i], scores[j]).pvalue)
    assert p[2, 3] == 1.0 and np.all(np.diag(p) == 1.0)


def test_metrics_recomputed_from_saved_estimates(collection, study, tmp_path):
    from relimpute.bias.study import full_pool_scores, study_metrics, write_study

    campaign, groups = collection
    pooled, truth = full_pool_scores(campaign, groups, 5, MEASURES)
    assert truth == pytest.approx(study.truth_topics)
    write_study(study, tmp_path)
    saved = pd.read_csv(tmp_path / "estimates.tsv", sep="\t")
    # the slices by hole fraction: every left-out run has one, every corrector and trec_eval a slope
    assert saved["holes"].between(0, 1).all()
    slices = pd.read_csv(tmp_path / "slices.tsv", sep="\t")
    assert set(slices["corrector"]) == set(study.estimates["corrector"]) | {"trec_eval"}
    per = slices.groupby(["measure", "corrector"])["runs"].sum()
    runs = study.estimates.groupby(["measure", "corrector"])["run"].nunique()
    assert per.drop("trec_eval", level=1).equals(runs) and (per.xs("trec_eval", level=1) == len(pooled)).all()
    assert "## Slices: left-out runs by hole fraction" in (tmp_path / "metrics.md").read_text()
    # the pairs slice: one row per corrector with intervals; counts per repeat (Algorithm 2 has 3)
    pairs = pd.read_csv(tmp_path / "pair_slices.tsv", sep="\t").set_index(["measure", "corrector"])
    assert set(pairs.index.get_level_values(1)) == {"model:uniform", "webber-park-topics"}
    assert (pairs["pairs_conf_95"] <= pairs["pairs"]).all()
    assert pairs["slice"].str.startswith("new systems (leave one group out)").all()
    again = study_metrics(saved, truth, pooled, MEASURES)
    assert again[["mae", "sre", "sre_star", "coverage"]].to_numpy() == pytest.approx(
        study.metrics[["mae", "sre", "sre_star", "coverage"]].to_numpy(), nan_ok=True, abs=1e-8
    )


def test_model_label_names_a_settings_file_by_its_model():
    from relimpute.bias.study import model_label

    assert model_label("fusion") == "model:fusion"
    assert model_label("examples/calibration/held_out/trec8/fusion.json") == "model:fusion"
