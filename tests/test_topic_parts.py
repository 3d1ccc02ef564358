"""A campaign compared in topic parts (relimpute.confidence.parts) against the one machine's
engine."""

from __future__ import annotations

import numpy as np
import pytest

from relimpute.confidence import ConfidenceEngine
from relimpute.confidence.parts import combine, compare_in_parts, part_seed, topic_parts
from relimpute.relevance import Fusion, Uniform
from relimpute.simulate import simulate_campaign


@pytest.fixture(scope="module")
def campaign():
    sim = simulate_campaign(n_topics=12, n_systems=5, n_docs=300, depth=40, rng=3)
    return sim.campaign.pooled(4)


@pytest.mark.parametrize("parts", [1, 2, 5])
def test_exact_parts_equal_the_one_machine_engine_bit_for_bit(campaign, parts):
    # the uniform prior shares no parameter across topics: the parts' answer is the engine's
    estimate = Uniform(prior=0.5).fit_predict(campaign)
    one = ConfidenceEngine().confidence(campaign, estimate, method="normal")
    got = compare_in_parts(campaign, parts, prior=0.5, method="normal", progress=False)
    for name in ("e_delta_map", "var_delta_map", "p_a_better"):
        np.testing.assert_array_equal(getattr(got, name), getattr(one, name))
    np.testing.assert_array_equal(got.scores.e_map, one.scores.e_map)
    np.testing.assert_array_equal(got.scores.var_map, one.scores.var_map)
    np.testing.assert_array_equal(got.e_delta_ap, one.e_delta_ap)
    assert got.scores.query_ids == campaign.query_ids


def test_monte_carlo_parts_agree_with_one_machine(campaign):
    # Monte Carlo in 3 parts (draw k of the whole = Σ (T_i/T) draw k of each part) against the
    # engine's Monte Carlo on the whole (other draws): E[ΔMAP] within 4 standard errors of the
    # difference of two independent Monte Carlo means, sd within 10%
    estimate = Uniform(prior=0.5).fit_predict(campaign)
    n = 4000
    one = ConfidenceEngine().confidence(campaign, estimate, method="monte carlo", n_draws=n, rng=9)
    mc = compare_in_parts(campaign, 3, prior=0.5, method="monte carlo", n_draws=n, seed=1,
                          progress=False)  # fmt: skip
    se = np.sqrt(2 * one.var_delta_map / n)
    assert np.all(np.abs(mc.e_delta_map - one.e_delta_map) <= 4 * se + 1e-12)
    np.testing.assert_allclose(np.sqrt(mc.var_delta_map), np.sqrt(one.var_delta_map), rtol=0.1)
    assert mc.scores.draws.shape == (n, campaign.n_systems)


def test_the_answer_does_not_depend_on_where_the_parts_run(campaign):
    serial = compare_in_parts(campaign, 2, n_draws=200, seed=4, progress=False)
    on_two = compare_in_parts(campaign, 2, n_draws=200, seed=4, jobs=2, progress=False)
    np.testing.assert_array_equal(serial.scores.draws, on_two.scores.draws)
    np.testing.assert_array_equal(serial.p_a_better, on_two.p_a_better)


def _half_map_draws(campaign, topics, shared_seed, fit_seed):
    half = campaign.subset(topics=topics)
    model = Fusion(n_draws=200).fit(half, rng=fit_seed).share_draws(shared_seed)
    result = ConfidenceEngine().confidence(half, model.predict(half), method="monte carlo",
                                           n_draws=200, rng=fit_seed)  # fmt: skip
    return result.scores.draws[:, 0]


def test_shared_draws_make_the_parts_move_together(campaign):
    # γ's spread below the pool is one number for every topic: drawn alike in both halves, the
    # halves' MAP draws are correlated (as on one machine); drawn apart, they are not
    first, second = list(campaign.query_ids[:6]), list(campaign.query_ids[6:])
    one = _half_map_draws(campaign, first, 11, 1)
    shared = np.corrcoef(one, _half_map_draws(campaign, second, 11, 2))[0, 1]
    apart = np.corrcoef(one, _half_map_draws(campaign, second, 12, 2))[0, 1]
    assert shared > 0.3  # 0.48 here; the Monte Carlo's own Bernoulli noise dilutes it
    assert abs(apart) < 0.2  # 0.01 here; 200 draws: se about 0.07


def test_topic_parts_and_seeds():
    c = simulate_campaign(n_topics=7, n_systems=3, n_docs=50, depth=10, rng=0).campaign
    groups = topic_parts(c, 3)
    assert [len(g) for g in groups] == [3, 2, 2]
    assert sum(groups, []) == list(c.query_ids)
    assert part_seed(5, 0) == part_seed(5, 0) != part_seed(5, 1) != part_seed(5, -1)
    with pytest.raises(ValueError, match="at most one part a topic"):
        topic_parts(c, 8)
    with pytest.raises(ValueError, match="positive integer"):
        topic_parts(c, 0)


def test_combine_refuses_parts_that_do_not_fit_together(campaign):
    engine = ConfidenceEngine()
    ids = list(campaign.query_ids)
    halves = [campaign.subset(topics=ids[:6]), campaign.subset(topics=ids[6:])]
    parts = [engine.confidence(h, Uniform(prior=0.5).fit_predict(h), method="normal")
             for h in halves]  # fmt: skip
    with pytest.raises(ValueError, match="once, in order"):
        combine([parts[0], parts[0]], campaign.query_ids)
    estimate = Uniform(prior=0.5).fit_predict(halves[1])
    other = engine.confidence(halves[1], estimate, systems=["s0", "s1"], method="normal")
    with pytest.raises(ValueError, match="different systems"):
        combine([parts[0], other], campaign.query_ids)


def test_the_study_runs_on_trec8(tmp_path, monkeypatch):
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    if not (root.parent / "shared" / "data" / "trec-8-adhoc" / "qrels.txt").is_file():
        pytest.skip("../shared/data/trec-8-adhoc is absent")
    spec = importlib.util.spec_from_file_location("topic_parts_measure",
                                                  root / "examples" / "topic_parts" / "measure.py")
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    argv = ["--quick", "--parts", "1", "2", "--draws", "300", "--out", str(tmp_path)]
    assert study.main(argv) == 0
    import pandas as pd

    table = pd.read_csv(tmp_path / "quick" / "parts.csv")
    assert list(table["parts"]) == [1, 2]
    two = table.iloc[1]
    assert 0 <= two["mean_abs_dP"] <= two["max_abs_dP"] <= 1 and 0.5 < two["sd_ratio"] < 1.5


@pytest.fixture
def files(tmp_path):
    sim = simulate_campaign(n_topics=6, n_systems=4, n_docs=120, depth=20, rng=5)
    qrels, runs = sim.campaign.pooled(3).to_files(tmp_path)
    return str(qrels), str(runs)


def _compare(files, *options, capsys):
    from relimpute.cli import main

    code = main(["compare", *files, "-f", "tsv", *options])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_topic_parts_with_the_prior_print_the_one_fit_answer(files, capsys):
    code, whole, _ = _compare(files, "--prior", "0.5", capsys=capsys)
    assert code == 0
    code, parts, err = _compare(files, "--prior", "0.5", "--topic-parts", "3", capsys=capsys)
    assert code == 0 and parts == whole
    assert "the 6 topics in 3 parts of about 2" in err


@pytest.mark.parametrize("options, says", [
    (("--jobs", "2"), "--jobs: runs the topic parts: give --topic-parts N too"),
    (("--topic-parts", "2", "--estimand", "pool"), "drop --estimand pool"),
    (("--topic-parts", "2", "--topic-bootstrap"), "drop --topic-bootstrap"),
    (("--topic-parts", "7", "--prior", "0.5"), "7 parts for 6 topics"),
])
def test_cli_topic_parts_refuse_what_they_cannot_split(files, capsys, options, says):
    code, _, err = _compare(files, *options, capsys=capsys)
    assert code == 2 and says in err
