"""Survey strategies of a calibration study (relimpute.calibration.survey): a sample of the
trial's pool drawn with a design, MTC's budget, P(ΔMAP > 0) from the design-based or
model-assisted estimator, paired with the other strategies on the same trials."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from relimpute.calibration import get_calibration_strategy, run_study
from relimpute.calibration.strategies import Strategy, resolve_strategies
from relimpute.calibration.survey import draw_judged_sample, survey_comparison
from relimpute.calibration.trial_study import CalibrationTrials
from relimpute.calibration.trials import strategy_rng
from relimpute.confidence.survey import estimate
from relimpute.simulate import simulate_campaign

NAMES = ["stratified-ht", "stratified-ppi++", "pps-ht", "pps-ppi++", "guided-ht",
         "guided-ppi++"]


@pytest.fixture(scope="module")
def campaign():
    return simulate_campaign(n_topics=5, n_systems=5, n_docs=150, depth=25, rng=5).campaign


def _hidden(full):
    return full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])


def test_every_design_and_estimator_is_a_strategy_spending_mtcs_budget():
    for name in NAMES:
        strategy = get_calibration_strategy(name)
        design, estimator = name.rsplit("-", 1)
        assert (strategy.design, strategy.estimator, strategy.budget_from) == \
            (design, estimator, "mtc")
    assert [s.name for s in resolve_strategies("pps-ppi++,mtc")] == ["mtc", "pps-ppi++"]
    with pytest.raises(ValueError, match="add it to the study"):
        resolve_strategies("pps-ht")
    with pytest.raises(ValueError, match="design"):
        Strategy("x", selector="pps", model="fusion", budget_from="mtc", design="poisson",
                 estimator="ht")
    with pytest.raises(ValueError, match="budget_from"):
        Strategy("x", selector="pps", model="fusion", design="pps", estimator="ht")


@pytest.mark.parametrize("name", ["stratified-ht", "pps-ppi++", "guided-ht"])
def test_the_sample_is_the_trials_seeds_and_judged_from_the_qrels(campaign, name):
    strategy = get_calibration_strategy(name)
    full = campaign.subset(list(campaign.systems[:3]))
    hidden = _hidden(full)
    first = draw_judged_sample(full, hidden, strategy, 60, strategy_rng(123, name))
    again = draw_judged_sample(full, hidden, strategy, 60, strategy_rng(123, name))
    other = draw_judged_sample(full, hidden, strategy, 60, strategy_rng(124, name))
    pd.testing.assert_frame_equal(first, again)
    assert not first["drawn"].equals(other["drawn"])
    assert 30 <= first["drawn"].sum() <= 100  # about the budget
    qrels = {(t.query_id, d): g for t in full.topics
             for d, g in zip(t.doc_ids[t.judged].astype(str), t.grades[t.judged])}
    drawn = first[first["drawn"]]
    assert (drawn["relevance"].to_numpy() == [qrels.get((q, d), 0) for q, d in
                                              zip(drawn["query_id"], drawn["doc_id"])]).all()
    assert (first.loc[~first["drawn"], "relevance"] == -1).all()


def test_the_stated_probability_is_the_estimators_normal_approximation(campaign):
    """P(a beats b) = Φ(ΔMAP̂ / se) of :func:`estimate` on the same sample, ppi++ with the
    default model cross-fitted on it as the control variate."""
    strategy = get_calibration_strategy("pps-ppi++")
    systems = list(campaign.systems[:3])
    full = campaign.subset(systems)
    sample = draw_judged_sample(full, _hidden(full), strategy, 80, strategy_rng(7, "x"))
    _, rows = survey_comparison(full, sample, strategy, systems, strategy_rng(7, "y"))
    from relimpute.calibration.survey import judged_campaign
    from relimpute.confidence.survey.control import model_predictions

    control = model_predictions(judged_campaign(full, sample), sample, strategy.make_model(),
                                rng=strategy_rng(7, "y"))
    table = estimate(sample, {s: full.run_frame(s) for s in systems}, control=control,
                     estimator="ppi++", pairs=list(combinations(systems, 2)),
                     rel_threshold=full.rel_threshold)
    paired = table[table["run_b"] != ""]
    assert np.allclose(rows["p_a_better"], norm.cdf(paired["estimate"] / paired["se"]))
    assert np.allclose(rows["e_delta_map"], paired["estimate"])


def test_the_stated_probability_against_a_monte_carlo_oracle_of_the_estimator(campaign):
    """Over 60 seeded samples of one trial's pool (pps, HT), the spread of ΔMAP̂ is what the
    stated probability assumes: P = Φ(ΔMAP̂ / se) against Φ(ΔMAP̂ / sd), sd the Monte Carlo
    standard deviation of the same estimator, differ by less than 0.1 on average. The median
    se is 0.59–0.80 of sd here (about 24 judgments a topic: statAP's ratio is wider than its
    jackknife says at few relevant drawn, docs/design-based.md), so the band is [0.5, 1.4]
    (60 samples: sd itself is ±10%); a se off by a factor of two fails it."""
    strategy = get_calibration_strategy("pps-ht")
    systems = list(campaign.systems[:3])
    full = campaign.subset(systems)
    hidden = _hidden(full)
    deltas, stated = [], []
    for seed in range(60):
        sample = draw_judged_sample(full, hidden, strategy, 120, strategy_rng(seed, "pps-ht"))
        _, rows = survey_comparison(full, sample, strategy, systems, None)
        deltas.append(rows["e_delta_map"].to_numpy())
        stated.append(rows["p_a_better"].to_numpy())
    deltas, stated = np.array(deltas), np.array(stated)
    sd = deltas.std(axis=0, ddof=1)
    oracle = norm.cdf(deltas / sd)
    assert np.abs(stated - oracle).mean() < 0.1
    implied = np.abs(deltas) / np.abs(norm.ppf(np.clip(stated, 1e-12, 1 - 1e-12)))
    ratio = np.nanmedian(np.where(np.abs(deltas) > 1e-3, implied, np.nan), axis=0) / sd
    assert ((ratio > 0.5) & (ratio < 1.4)).all(), ratio


def test_a_study_pairs_them_with_mtc_and_resumes(campaign, tmp_path):
    """Same trials, the survey strategy spends what MTC spent (the stratified design at least
    one per stratum and topic), the identity names the design and estimator, and a study
    folder missing a trial's part runs that trial alone to the same result."""
    names = "mtc,pps-ht"
    kwargs = dict(n_trials=3, k=3, c=2, depth=None, seed=2, progress=False)
    study = run_study(campaign, names, folder=tmp_path / "study", **kwargs)
    wide = study.trials.pivot(index="trial", columns="strategy", values="judgments")
    assert (np.abs(wide["pps-ht"] - wide["mtc"]) <= 3 * np.sqrt(wide["mtc"]) + 3).all()
    assert set(study.pairs["strategy"]) == {"mtc", "pps-ht"}
    assert study.pairs["p_a_better"].between(0, 1).all()
    identity = CalibrationTrials(campaign, resolve_strategies(names), n_trials=3, k=3, c=2,
                                 depth=None, seed=2).identity()
    text = json.dumps(identity)
    assert '"design": "pps"' in text and '"estimator": "ht"' in text
    parts = sorted((tmp_path / "study").rglob("*.json"))
    trial_parts = [p for p in parts if p.name != "manifest.json" and "trial" in p.read_text()]
    assert trial_parts
    trial_parts[-1].unlink()
    resumed = run_study(campaign, names, folder=tmp_path / "study", **kwargs)
    assert trial_parts[-1].is_file()  # the missing trial ran again, and it alone
    assert all(p.is_file() for p in trial_parts)
    columns = ["trial", "strategy", "system_a", "system_b", "p_a_better", "e_delta_map"]
    pd.testing.assert_frame_equal(resumed.pairs[columns], study.pairs[columns])
