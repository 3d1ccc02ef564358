"""The trial protocol: campaign preparation, drawing, reproducibility, and a small honest study."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import make_campaign

from relimpute.calibration import (
    CalibrationReport,
    get_calibration_strategy,
    run_similarity,
    run_study,
    run_trial,
    trial_specs,
    true_map,
)
from relimpute.calibration.strategies import Strategy, resolve_strategies
from relimpute.calibration.trials import draw_trial
from relimpute.data import Campaign
from relimpute.groups import read_groups
from relimpute.relevance import RelevanceModel


def _tiny() -> Campaign:
    qrels = [("1", "a", 1), ("1", "z", 1), ("1", "c", 0), ("2", "b", 1)]
    runs = {"r1": {"1": list("abcd"), "2": list("ab")}, "r2": {"1": list("dce"), "2": ["b"]}}
    return make_campaign(qrels, runs, rel_threshold=1)


def test_campaign_truncated_shrink_keeps_judged_and_ranking():
    camp = _tiny()
    cut = camp.truncated(2, shrink=True)
    t = cut.topics[0]
    # r1 top-2 = a, b; r2 top-2 = d, c; judged a, c, z (z retrieved by nobody) -> e dropped
    assert sorted(t.doc_ids) == ["a", "b", "c", "d", "z"]
    assert [t.doc_ids[i] for i in t.ranking[0, : t.depth[0]]] == ["a", "b"]
    assert [t.doc_ids[i] for i in t.ranking[1, : t.depth[1]]] == ["d", "c"]
    assert t.depth.tolist() == [2, 2]
    assert dict(zip(t.doc_ids[t.judged], t.grades[t.judged])) == {"a": 1, "c": 0, "z": 1}
    assert camp.truncated(None, shrink=True) is camp
    with pytest.raises(ValueError):
        camp.truncated(0, shrink=True)


def test_run_similarity_by_hand():
    sim = run_similarity(_tiny())
    # topic 1: r1 {a,b,c,d}, r2 {d,c,e}: 2 in common / 4; topic 2: {a,b} vs {b}: 1 / 2
    assert sim[0, 1] == pytest.approx((2 / 4 + 1 / 2) / 2)
    assert sim[1, 0] == sim[0, 1] and sim[0, 0] == 1.0 and sim[1, 1] == 1.0


def test_draw_trial_one_per_group():
    systems = [f"g{g}r{r}" for g in range(6) for r in range(3)]
    groups = {s: s[:2] for s in systems}
    for seed in range(20):
        chosen, c = draw_trial(systems, 5, 2, np.random.default_rng(seed), groups)
        assert len({groups[s] for s in chosen}) == 5 and c == 2
    with pytest.raises(ValueError):
        draw_trial(systems, 7, 2, np.random.default_rng(0), groups)
    with pytest.raises(ValueError):
        draw_trial(systems, 5, 1, np.random.default_rng(0))


def test_trial_specs_reproducible():
    systems = [f"s{i}" for i in range(12)]
    a = trial_specs(systems, 5, 4, 2, seed=7)
    b = trial_specs(systems, 5, 4, 2, seed=7)
    assert a == b and a != trial_specs(systems, 5, 4, 2, seed=8)
    assert len({s.systems for s in a}) > 1  # trials differ from each other


def test_strategy_resolution():
    names = [s.name for s in resolve_strategies("ip,mtc,rtc")]
    assert names.index("mtc") < names.index("ip")
    with pytest.raises(ValueError, match="budget from 'mtc'"):
        resolve_strategies("ip")
    custom = get_calibration_strategy("mtc+rtc")
    assert (custom.selector, custom.model) == ("mtc", "rtc")
    with pytest.raises(KeyError):
        get_calibration_strategy("nonsense")
    with pytest.raises(ValueError):
        resolve_strategies("mtc,mtc")
    with pytest.raises(ValueError, match="n_draws"):
        Strategy("x", selector="mtc", model="uniform", n_draws=1)


@pytest.fixture(scope="module")
def dl19_cut(dl19):
    return dl19.truncated(100, shrink=True)


def test_true_map_matches_ir_measures(dl19_cut):
    """Oracle: ir_measures AP(rel=2) on the runs cut at rank 100."""
    import ir_measures

    systems = list(dl19_cut.systems[3:6])
    ours = true_map(dl19_cut, systems)
    qrels = dl19_cut.qrels_frame()
    for name in systems:
        run = dl19_cut.run_frame(name)
        per_topic = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.AP(rel=2)], qrels, run)}
        # every DL19 run covers every topic, so trec_eval's mean equals the engine's
        assert len(per_topic) == dl19_cut.n_topics
        assert ours[name] == pytest.approx(np.mean(list(per_topic.values())), abs=1e-12)


def test_small_study_structure_and_reproducibility(dl19_cut, dl19_dir):
    """A small honest study: 3 trials, k = 4, MTC and IP, on the DL19 runs at depth 100."""
    groups = read_groups(dl19_dir / "groups.tsv").run_to_group()
    study = run_study(dl19_cut, "mtc,ip", n_trials=3, k=4, c=2, depth=None, groups=groups,
                      seed=11, progress=False)
    assert study.strategies == ["mtc", "ip"] and study.n_trials == 3
    assert len(study.pairs) == 3 * 2 * 6
    assert np.all((study.pairs["p_a_better"] >= 0) & (study.pairs["p_a_better"] <= 1))
    # each trial: one pair of initial runs, four pairs with one, one pair with none
    counts = study.pairs[study.pairs["strategy"] == "mtc"].groupby("trial")["n_initial"].value_counts()
    assert counts.unstack().loc[:, [0, 1, 2]].to_numpy().tolist() == [[1, 4, 1]] * 3
    truth = true_map(dl19_cut)
    row = study.pairs.iloc[0]
    assert row["true_delta_map"] == pytest.approx(truth[row["system_a"]] - truth[row["system_b"]])
    # the runs' ranks by true MAP among all the collection's runs, not the trial's four
    ranks = truth.rank(ascending=False, method="min")
    assert row["true_rank_a"] == ranks[row["system_a"]] and row["true_rank_b"] == ranks[row["system_b"]]
    wide = study.trials.pivot(index="trial", columns="strategy", values="judgments")
    assert (wide["ip"] == wide["mtc"]).all()  # IP gets MTC's budget
    assert set(study.trials["stopped_because"]) <= {"confidence", "budget", "exhausted"}
    assert study.trials["tau"].between(-1, 1).all()

    # one trial rerun alone from its seed gives the same rows
    spec = trial_specs(dl19_cut.systems, 3, 4, 2, seed=11, groups=groups)[1]
    pairs, _ = run_trial(dl19_cut, spec, resolve_strategies("mtc,ip"))
    expected = study.pairs[study.pairs["trial"] == 1].reset_index(drop=True)
    pd.testing.assert_frame_equal(pairs.reset_index(drop=True), expected, check_exact=False, rtol=1e-12)

    report = CalibrationReport.from_study(study)
    assert set(report.summary["raw"]["strategy"]) == {"mtc", "ip"}
    assert report.bins["raw"].groupby("strategy")["n"].sum().max() <= 18


@pytest.mark.slow
def test_parallel_equals_serial(dl19_cut):
    """Results do not depend on the number of workers (slow: starting workers costs ~30 s)."""
    kwargs = {"n_trials": 2, "k": 3, "c": 2, "depth": None, "seed": 5, "progress": False}
    serial = run_study(dl19_cut, "mtc", jobs=1, **kwargs)
    parallel = run_study(dl19_cut, "mtc", jobs=2, **kwargs)
    pd.testing.assert_frame_equal(serial.pairs, parallel.pairs)
    pd.testing.assert_frame_equal(
        serial.trials.drop(columns="seconds"), parallel.trials.drop(columns="seconds")
    )


def test_custom_strategy_plugs_in(dl19_cut):
    """A new strategy by object and by SELECTOR+MODEL name, on the same trial."""
    mine = Strategy("mtc-pessimist", selector="mtc", model="uniform", model_params={"prior": 0.1})
    study = run_study(dl19_cut, [mine, "mtc+nonrelevant"], n_trials=1, k=3, c=2, depth=None,
                      seed=3, progress=False)
    assert study.strategies == ["mtc-pessimist", "mtc+nonrelevant"]
    j = study.trials.set_index("strategy")["judgments"]
    assert j["mtc-pessimist"] == j["mtc+nonrelevant"]  # same selector, same trial


def test_rtc_strategy_runs(dl19_cut):
    """The expert model plugs in by name (RTC judgments, expert model for the other runs)."""
    study = run_study(dl19_cut, "mtc,rtc", n_trials=1, k=3, c=2, depth=None, seed=2, progress=False)
    assert study.strategies == ["mtc", "rtc"] and len(study.pairs) == 6
    assert np.all((study.pairs["p_a_better"] >= 0) & (study.pairs["p_a_better"] <= 1))


@pytest.mark.slow
def test_bayes_strategy_runs(dl19_cut):
    """The Bayesian hierarchy generalises the MTC judgments (slow: one ADVI fit)."""
    study = run_study(dl19_cut, "mtc,bayes", n_trials=1, k=3, c=2, depth=None, seed=2, progress=False)
    j = study.trials.set_index("strategy")["judgments"]
    assert j["mtc"] == j["bayes"]  # same selector, same trial
    assert np.all((study.pairs["p_a_better"] >= 0) & (study.pairs["p_a_better"] <= 1))


class _KnowsTheTruth(RelevanceModel):
    """Test-only model: predicts the full qrels' labels (so every prediction must be right)."""

    name = "test-knows-the-truth"

    def __init__(self, truth=None):
        self.truth = truth

    def _fit(self, campaign, rng):
        """Nothing to learn: the labels come from the truth."""

    def _predict(self, campaign):
        lookup = {t.query_id: t for t in self.truth.topics}
        p = []
        for t in campaign.topics:
            full = lookup[t.query_id]
            assert np.array_equal(full.doc_ids, t.doc_ids)
            p.append(full.relevant(self.truth.rel_threshold).astype(float))
        return p, None, {}


def test_end_to_end_oracle_model_is_always_right(dl19_cut):
    """Wiring check: a model that knows the full qrels is right at confidence 1 on every pair.

    This catches a flipped orientation, a mismatched truth or a wrong pair order
    anywhere between the engine's p_a_better and the report's W (which must be 1).
    """
    from relimpute.calibration.report import summary_frame

    # The engine counts in R only documents it knows of (judged, or retrieved by the
    # run set; docs/math/average-precision.md), so keep only judgments some of the
    # five runs retrieve:
    # then E[R] is the true R and a model that knows the labels knows MAP exactly.
    five = dl19_cut.subset(["TUA1-1", "bm25base_p", "idst_bert_p1", "p_bert", "runid2"])
    five = five.with_judged([t.judged & t.retrieved() for t in five.topics])
    oracle = Strategy("oracle", selector="mtc", model=_KnowsTheTruth(five))
    study = run_study(five, [oracle, "mtc"], n_trials=2, k=5, c=2, depth=None, seed=9,
                      progress=False)
    mine = study.pairs[study.pairs["strategy"] == "oracle"]
    decided = mine[mine["true_delta_map"] != 0]
    np.testing.assert_array_equal(decided["p_a_better"] > 0.5, decided["true_delta_map"] > 0)
    np.testing.assert_allclose(decided["e_delta_map"], decided["true_delta_map"], atol=1e-12)
    summary = summary_frame(study).set_index("strategy")
    assert summary.loc["oracle", "w"] == 1.0 and summary.loc["oracle", "accuracy"] == 1.0
    # tau from scipy: equal rankings give 1 up to one rounding (two square roots)
    tau = study.trials.set_index("strategy").loc["oracle", "tau"]
    np.testing.assert_allclose(tau, 1.0, atol=1e-15)
    assert summary.loc["mtc", "w"] < 1.0


def test_monte_carlo_confidence_agrees_with_exact(dl19_cut):
    """A strategy may take its confidence from Monte Carlo: with the uniform prior
    (no posterior draws) it must agree with the exact normal path within sampling error."""
    mc = Strategy("mtc-mc", selector="mtc", model="uniform", n_draws=4000)
    study = run_study(dl19_cut, ["mtc", mc], n_trials=1, k=4, c=2, depth=None, seed=6,
                      progress=False)
    wide = study.pairs.pivot(index=["system_a", "system_b"], columns="strategy", values="p_a_better")
    # sd of a proportion from 4000 draws is at most 0.008; the normal approximation adds a little
    assert np.abs(wide["mtc"] - wide["mtc-mc"]).max() < 0.06


def test_run_study_takes_confidence(dl19_cut):
    """confidence= is the stopping confidence (as the CLI's --confidence; the report keeps the
    paper's key ``alpha``); the alpha= keyword removed in 0.3.0 is refused; out-of-range
    values are refused."""
    kwargs = {"n_trials": 1, "k": 3, "c": 2, "depth": None, "seed": 5, "progress": False}
    new = run_study(dl19_cut, "mtc", confidence=0.9, **kwargs)
    with pytest.raises(TypeError, match="alpha"):
        run_study(dl19_cut, "mtc", alpha=0.9, **kwargs)
    assert new.config["alpha"] == 0.9
    with pytest.raises(ValueError, match="confidence"):
        run_study(dl19_cut, "mtc", confidence=0.4, **kwargs)


def test_rtc_loop_refits_the_papers_model():
    """``rtc`` judges with the model the study then generalises with: the paper's
    (models/rtc.json, the class defaults), refitted after 10 judgments."""
    from relimpute.calibration.strategies import get_calibration_strategy
    from relimpute.relevance import RTC
    from relimpute.selection import SimulatedAssessor, run_selection
    from relimpute.selection.rtc import RTCSelection
    from relimpute.simulate import simulate_campaign

    strategy = get_calibration_strategy("rtc")
    paper = RTC().get_params()
    assert strategy.make_model().get_params() == paper
    sim = simulate_campaign(n_topics=4, n_systems=3, n_docs=150, depth=20, rng=5)
    full = sim.campaign
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    selector = RTCSelection(**strategy.selector_kwargs())
    pair = list(full.systems[:2])
    run_selection(hidden.subset(pair), selector, SimulatedAssessor(full), systems=pair,
                  confidence=None, budget=12, rng=0)
    assert selector.n_fits_ >= 2  # the initial fit and the refit after 10 judgments
    assert selector.model_params_ == paper


def test_judgment_budget_stops_trials_and_is_reported(dl19_cut):
    """``max_judgments`` cuts judging at the budget when the confidence is not reached first,
    the trial rows say so, the budget-following strategy (ip) spends the same, and the report
    counts the stopped trials; an unreachable confidence makes every trial hit the budget."""
    kwargs = {"n_trials": 3, "k": 3, "c": 2, "depth": None, "seed": 4, "progress": False}
    free = run_study(dl19_cut, "mtc,ip", **kwargs)
    capped = run_study(dl19_cut, "mtc,ip", confidence=0.999999, max_judgments=7, **kwargs)
    mtc = capped.trials[capped.trials["strategy"] == "mtc"]
    assert (mtc["judgments"] <= 7).all()
    assert set(mtc.loc[mtc["judgments"] == 7, "stopped_because"]) == {"budget"}
    assert (free.trials.loc[free.trials["strategy"] == "mtc", "judgments"] > 7).any()  # the cap bit
    wide = capped.trials.pivot(index="trial", columns="strategy", values="judgments")
    assert (wide["ip"] == wide["mtc"]).all()
    summary = CalibrationReport.from_study(capped).summary["raw"].set_index("strategy")
    assert summary.loc["mtc", "share_stopped_at_budget"] == pytest.approx((mtc["stopped_because"] == "budget").mean())
    report = CalibrationReport.from_study(capped)
    assert capped.config["max_judgments"] == 7 and "7 judgments" in report.to_markdown()
    # the stopped trials are named in the report (never a silent stop); ip follows mtc's
    # budget by design and is not listed for it
    stopped = int((mtc["stopped_because"] == "budget").sum())
    line = f"mtc: {stopped} of 3 trials did not reach the confidence ({stopped} at the judgment budget)"
    assert line in report.terminal_summary() and line in report.to_markdown()
    assert "\nip: " not in report.terminal_summary()
    with pytest.raises(ValueError, match="max_judgments"):
        run_study(dl19_cut, "mtc", max_judgments=0, **kwargs)
