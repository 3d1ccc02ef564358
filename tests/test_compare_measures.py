"""Any measure in the confidence engine and ``relimpute compare -m``: exact where linear, else Monte Carlo."""

from __future__ import annotations

import contextlib
import io
import itertools
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.confidence import ConfidenceEngine, has_closed_form
from relimpute.data import Campaign
from relimpute.measures import evaluate, relevant_retrieved
from relimpute.relevance import RelevanceEstimate, Uniform

CLOSE = ["bm25base_prf_p", "bm25base_rm3_p", "bm25tuned_prf_p"]
# every measure added for trec_eval users, by one of its names
NEW_MEASURES = ["recip_rank", "R@100", "Success@10", "ERR@20", "NumRel", "num_ret", "Bpref", "infAP"]


@pytest.mark.parametrize(
    ("name", "closed"),
    [
        ("AP", True),
        ("MAP", True),
        ("map", True),
        ("P_10", True),
        ("RBP", True),
        ("DCG@10", True),
        ("num_rel_ret", True),
        ("AP@10", False),
        ("nDCG@10", False),
        ("RR", False),
        ("Bpref", False),
    ],
)
def test_which_measures_have_exact_moments(name, closed):
    assert has_closed_form(name) is closed


def test_expected_relevant_retrieved_is_exact():
    """NumRelRet is linear: given p it returns E[count]; checked by enumerating all 2^n vectors."""
    ranking = np.array([[0, 3, 1, -1], [2, 4, -1, -1]])
    p = np.array([0.1, 0.5, 0.9, 0.3, 0.7])
    vectors = np.array(list(itertools.product([0, 1], repeat=len(p))), dtype=bool)
    weights = np.prod(np.where(vectors, p, 1 - p), axis=1)
    exact = weights @ relevant_retrieved(ranking, vectors)
    np.testing.assert_allclose(relevant_retrieved(ranking, p), exact, rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def uniform(dl19):
    return Uniform(0.5).fit_predict(dl19)


def test_num_rel_ret_exact_moments_agree_with_monte_carlo(dl19, uniform):
    n = 2_000
    exact = ConfidenceEngine().confidence(
        dl19, uniform, systems=CLOSE, measure="num_rel_ret", method="normal"
    )
    mc = ConfidenceEngine().confidence(
        dl19, uniform, systems=CLOSE, n_draws=n, rng=5, measure="NumRelRet",
        method="monte carlo",
    )
    assert exact.scores.measure == mc.scores.measure == "NumRelRet"
    assert exact.var_delta_map.min() > 0
    assert np.all(np.abs(mc.e_delta_map - exact.e_delta_map) <= 4 * np.sqrt(exact.var_delta_map / n))
    np.testing.assert_allclose(mc.var_delta_map / exact.var_delta_map, 1.0, atol=4 * np.sqrt(2 / n))
    # with every p in {0, 1} the mean is trec_eval's num_rel_ret averaged over topics
    zero = Uniform(0.0).fit_predict(dl19)
    scores = ConfidenceEngine().confidence(
        dl19, zero, systems=CLOSE, measure="NumRelRet", pairs=[], method="normal"
    ).scores
    counts = evaluate(dl19.subset(CLOSE), ["NumRelRet"], missing="zero")["value"]
    np.testing.assert_allclose(scores.e_map * dl19.n_topics, counts, rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", NEW_MEASURES)
def test_monte_carlo_with_certain_relevance_scores_the_completed_qrels(dl19, name):
    """All p in {0, 1}: each draw is the same complete judgment; the Monte Carlo mean is the
    measure on qrels where every counted document is judged (unjudged ones as nonrelevant)."""
    campaign = dl19.subset(CLOSE)
    rng = np.random.default_rng(7)
    p = [  # unjudged documents the runs retrieve: relevant with probability 1 or 0
        np.where(t.judged, t.relevant(2), t.retrieved() & (rng.random(t.n_docs) < 0.05))
        for t in campaign.topics
    ]
    estimate = RelevanceEstimate(
        query_ids=campaign.query_ids,
        doc_ids=tuple(t.doc_ids for t in campaign.topics),
        p=tuple(x.astype(float) for x in p),
    )
    mc = ConfidenceEngine().confidence(
        campaign, estimate, n_draws=2, rng=1, measure=name, method="monte carlo"
    )
    complete = Campaign(
        systems=campaign.systems,
        topics=tuple(
            replace(
                t,
                grades=np.where(t.judged, t.grades, np.where(x, 2, 0)).astype(np.int16),
                judged=np.ones(t.n_docs, dtype=bool),
            )
            for t, x in zip(campaign.topics, p)
        ),
        rel_threshold=2,
    )
    want = evaluate(complete, [name], per_topic=True, missing="zero")
    want = want.pivot(index="system", columns="query_id", values="value").loc[list(CLOSE)]
    np.testing.assert_allclose(mc.scores.e_ap, want.to_numpy(), rtol=0, atol=1e-12)
    assert np.all(mc.scores.var_ap == 0)


def _compare(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["compare", *argv])
    return code, out.getvalue()


def test_cli_compare_measure_paths(dl19_dir, dl19):
    base = [str(dl19_dir / "qrels.txt"), str(dl19_dir / "runs"), "--rel-threshold", "2"]
    base += ["--prior", "0.5", "--systems", *CLOSE, "--format", "tsv"]
    estimate = Uniform(0.5).fit_predict(dl19)
    # P_10: exact moments, as the engine gives them for P@10
    code, text = _compare([*base, "-m", "P_10"])
    assert code == 0
    got = pd.read_csv(io.StringIO(text), sep="\t")
    want = ConfidenceEngine().confidence(
        dl19, estimate, systems=CLOSE, measure="P@10", method="normal"
    ).to_frame()
    np.testing.assert_allclose(got["e_delta_map"], want["e_delta_map"], atol=1e-6)
    # Rprec: no closed form, so Monte Carlo with the given seed, the same as the engine's
    code, text = _compare([*base, "-m", "Rprec", "--mc-draws", "300", "--seed", "4"])
    assert code == 0
    got = pd.read_csv(io.StringIO(text), sep="\t")
    want = ConfidenceEngine().confidence(
        dl19, estimate, systems=CLOSE, n_draws=300, rng=4, measure="Rprec",
        method="monte carlo",
    )
    np.testing.assert_allclose(got["p_a_better"], want.p_a_better, atol=1e-6)
    assert want.var_delta_map.min() > 0


def test_cli_compare_measure_errors(dl19_dir, capsys):
    base = [str(dl19_dir / "qrels.txt"), str(dl19_dir / "runs"), "--prior", "0.5"]
    assert _compare([*base, "-m", "RR", "--normal"])[0] == 2
    assert "--normal needs a measure with exact moments" in capsys.readouterr().err
    assert _compare([*base, "-m", "nDGC@10"])[0] == 2
    err = capsys.readouterr().err
    assert "compare: error: -m nDGC@10: unknown measure 'nDGC@10'; did you mean 'nDCG@10'" in err


def test_engine_confidence_picks_the_method():
    """Posterior draws -> Monte Carlo; else exact where the measure has it; else Monte Carlo."""
    from relimpute.simulate import simulate_campaign

    truth = simulate_campaign(n_topics=3, n_systems=4, n_docs=200, depth=20, rng=2).campaign
    rng = np.random.default_rng(3)
    partial = truth.with_judged([t.judged & (rng.random(t.n_docs) < 0.5) for t in truth.topics])
    point = Uniform(0.4).fit_predict(partial)
    engine = ConfidenceEngine()
    exact = engine.confidence(partial, point)
    assert exact.scores.method == "normal"
    np.testing.assert_array_equal(exact.p_a_better, engine.confidence(
        partial, point, method="normal"
    ).p_a_better)
    mc = engine.confidence(partial, point, measure="nDCG@10", n_draws=40, rng=1)
    want = engine.confidence(
        partial, point, n_draws=40, rng=1, measure="nDCG@10", method="monte carlo"
    )
    assert mc.scores.method == "monte carlo" and len(mc.scores.draws) == 40
    np.testing.assert_array_equal(mc.p_a_better, want.p_a_better)
    draws = tuple(np.clip(p + 0.1 * rng.standard_normal((5, len(p))), 0, 1) for p in point.p)
    with_draws = replace(point, draws=draws)
    assert engine.confidence(partial, with_draws, n_draws=20, rng=1).scores.method == "monte carlo"
    forced = engine.confidence(partial, with_draws, method="normal")
    assert forced.scores.method == "normal"
    with pytest.raises(ValueError, match="no closed form for 'RR'"):
        engine.confidence(partial, point, measure="RR", method="normal")
    with pytest.raises(ValueError, match="method must be one of"):
        engine.confidence(partial, point, method="exact")
