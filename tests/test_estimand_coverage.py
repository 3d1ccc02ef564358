"""The bookkeeping of the coverage study (examples/estimand_coverage/run.py), not its numbers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from relimpute.measures import evaluate
from relimpute.simulate import simulate_campaign

PATH = Path(__file__).resolve().parents[1] / "examples" / "estimand_coverage" / "run.py"


@pytest.fixture(scope="module")
def study():
    spec = importlib.util.spec_from_file_location("estimand_coverage_run", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_coverage_z_and_pair_scores_by_hand(study):
    """Covered when the truth is inside the interval (ends included), z = (truth − E)/sd, no z
    for sd 0; a tied pair counts in coverage but not in accuracy nor W."""
    ci = type("CI", (), {"low": [0.1, 0.1, 0.3], "high": [0.3, 0.3, 0.3]})
    runs = study._checked(pd.DataFrame({"system": list("abc")}), [0.3, 0.4, 0.3],
                          [0.2, 0.2, 0.3], [0.05, 0.1, 0.0], ci)  # fmt: skip
    assert runs["covered"].tolist() == [True, False, True]
    assert runs["z"].iloc[:2].tolist() == pytest.approx([2.0, 2.0])
    assert np.isnan(runs["z"].iloc[2])
    pairs = study._checked(pd.DataFrame({"system_a": list("aab"), "system_b": list("bcc")}),
                           [0.1, -0.1, 0.0], [0.0, 0.0, 0.0], [0.1, 0.1, 0.1], ci)  # fmt: skip
    pairs["p_a_better"] = [0.99, 0.97, 0.5]  # right, wrong (truth a < c), tied (left out)
    row = study.summarize(runs, pairs)
    assert row["run_coverage"] == pytest.approx(2 / 3)
    assert row["run_ez2"] == pytest.approx(4.0)
    assert row["run_bias"] == pytest.approx(-0.1)  # E − truth: −0.1, −0.2, 0
    assert row["pair_coverage"] == pytest.approx(1 / 3)  # only the tied pair's 0 is inside
    assert row["pair_ez2"] == pytest.approx((1 + 1 + 0) / 3)
    assert (row["confident"], row["accuracy_95"]) == (2, 0.5)


def test_study_scores_every_run_and_pair_against_the_deep_pool(study):
    """On a tiny simulated campaign: the truth is the deep pool's MAP, every pair once with its
    true ΔMAP, and the intervals are the engine's (E inside them)."""
    campaign = simulate_campaign(n_topics=4, n_systems=4, n_docs=60, depth=20, rng=1).campaign
    runs, pairs = study.study(campaign, 3, truth_depth=20, n_draws=200)
    truth = evaluate(campaign.pooled(20), ["AP"]).set_index("system")["value"]
    assert runs["truth"].to_numpy() == pytest.approx(truth[runs["system"]].to_numpy())
    assert len(pairs) == 6 and set(pairs["system_a"] + pairs["system_b"]) == {
        a + b for i, a in enumerate(campaign.systems) for b in campaign.systems[i + 1 :]
    }
    assert pairs["truth"].to_numpy() == pytest.approx(
        truth[pairs["system_a"]].to_numpy() - truth[pairs["system_b"]].to_numpy()
    )
    for frame in (runs, pairs):
        assert ((frame["ci_low"] <= frame["e"]) & (frame["e"] <= frame["ci_high"])).all()
    sampled = study.study(campaign, 3, truth_depth=20, n_draws=200, max_pairs=4)[1]
    assert len(sampled) == 4


def test_by_run_counts_each_pair_for_both_of_its_runs(study):
    """A run's pair coverage is over every pair it is in, as first or second system."""
    runs = pd.DataFrame({"system": list("abc"), "covered": [True] * 3, "z": [0.0] * 3})
    pairs = pd.DataFrame({"system_a": list("aab"), "system_b": list("bcc"),
                          "covered": [True, False, False]})  # fmt: skip
    table = study.by_run(runs, pairs).set_index("system")["pair_coverage"]
    assert table.to_dict() == {"a": 0.5, "b": 0.5, "c": 0.0}


def test_a_candidate_changes_only_the_settings_it_names(study):
    """``--set NAME=VALUE`` builds the shipped model with that one setting changed."""
    from relimpute.relevance import load_model

    shipped, candidate = load_model(), study.model({"beyond_decay_sd": 0.5})
    assert candidate.beyond_decay_sd == 0.5
    assert {k: v for k, v in vars(candidate).items() if k != "beyond_decay_sd"} == {
        k: v for k, v in vars(shipped).items() if k != "beyond_decay_sd"
    }
    assert study.setting("beyond_run_sd=2") == ("beyond_run_sd", 2.0)
    with pytest.raises(Exception, match="NAME=NUMBER"):
        study.setting("beyond_run_sd")


def test_choice_scores_each_collection_with_the_setting_the_others_chose():
    """Leave-one-collection-out: the pick minimises the mean loss on the other collections,
    among candidates whose W and accuracy are no worse than the shipped settings' there."""
    path = PATH.with_name("choose.py")
    spec = importlib.util.spec_from_file_location("estimand_coverage_choose", path)
    choose = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(choose)
    sharp = {"run_ez2": 1.0, "pair_ez2": 1.0, "pair_coverage": 0.95}
    assert choose.loss(sharp) == pytest.approx(0.0)
    assert choose.loss({**sharp, "run_ez2": np.e}) == pytest.approx(1.0)

    def row(candidate, collection, ez2, w):
        return {"candidate": candidate, "collection": collection, "run_ez2": ez2,
                "pair_ez2": 1.0, "pair_coverage": 0.95, "accuracy_95": 1.0, "w": w}  # fmt: skip

    shipped = choose.SHIPPED
    frame = pd.DataFrame([
        row(shipped, "a", 0.5, 0.5), row(shipped, "b", 0.5, 0.5), row(shipped, "c", 0.5, 0.5),
        row("x", "a", 1.0, 0.6), row("x", "b", 1.0, 0.6), row("x", "c", 0.1, 0.6),
        row("y", "a", 1.0, 0.4), row("y", "b", 1.0, 0.6), row("y", "c", 1.0, 0.6),
    ])  # fmt: skip
    frame["loss"] = frame.apply(choose.loss, axis=1)
    frame["eligible"] = frame["w"] >= 0.5
    picks = choose.choose(frame).set_index("held_out")["chosen"].to_dict()
    # a out: y is sharp on b and c; b out: y loses W on a and x is worse than shipped on a + c
    # (0 + 2.3 against 0.69 + 0.69); c out: x is sharp on a and b, y loses W on a
    assert picks == {"a": "y", "b": shipped, "c": "x"}


def test_a_calibrated_spread_scales_z_and_the_pairs_confidence():
    """Each sd times c: z shrinks by c (E[z²] by c²), the interval is E ± 1.96 c sd, and
    P(A beats B) is Φ(E / (c sd))."""
    path = PATH.with_name("scaled.py")
    spec = importlib.util.spec_from_file_location("estimand_coverage_scaled", path)
    scaled = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scaled)
    frame = pd.DataFrame({"truth": [0.1, -0.1, 0.3], "e": [0.0, 0.1, 0.1], "sd": [0.05] * 3})
    one, half = scaled.scored(frame, 1.0, pairs=True), scaled.scored(frame, 2.0, pairs=True)
    assert one["ez2"] == pytest.approx((4 + 16 + 16) / 3)
    assert half["ez2"] == pytest.approx(one["ez2"] / 4)
    assert (one["coverage"], half["coverage"]) == (0.0, pytest.approx(1 / 3))
    # P(a beats b) = Φ(0), Φ(2), Φ(2) at c = 1: the two sure pairs, one right and one wrong
    assert one["accuracy_95"] == pytest.approx(0.5)
    assert np.isnan(half["accuracy_95"])  # Φ(1) < 0.95: no pair is sure
