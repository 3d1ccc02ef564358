"""LLMSelection: MTC's weight times the model's 2p(1 − p), against enumeration, with labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from relimpute.labels import read_labels, with_labels
from relimpute.selection import (
    LLMSelection,
    SelectionSession,
    SelectionState,
    SimulatedAssessor,
    get_strategy,
    run_selection,
)
from relimpute.simulate import simulate_campaign

from test_selection import oracle_weights, random_campaign

CHEAP = {"fusion": {"n_draws": 8}}


def _labels(campaign, share: float, rng, *, truth=None, name="sim"):
    """0/1 labels on ``share`` of each topic's documents: the truth's where given, else random."""
    rows = []
    for topic, relevant in zip(campaign.topics, (truth or campaign).relevant()):
        keep = rng.random(topic.n_docs) < share
        label = relevant if truth is not None else rng.random(topic.n_docs) < 0.5
        rows.append(pd.DataFrame({"query_id": topic.query_id, "doc_id": topic.doc_ids[keep],
                                  "relevance": label[keep].astype(int)}))  # fmt: skip
    return read_labels(pd.concat(rows, ignore_index=True), name=name)


def test_weights_are_the_expected_change_of_the_comparison_by_enumeration():
    """Oracle: E|E[ΔQ | x_i] − E[ΔQ]| for x_i ~ Bernoulli(p_i), p the model's, by enumerating
    every relevance vector of a tiny campaign with labels; before and after a refit."""
    rng = np.random.default_rng(5)
    campaign = random_campaign(rng, n_topics=2, n_systems=2, n_docs=7, depth=5)
    campaign = with_labels(campaign, [_labels(campaign, 0.8, rng)])
    state = SelectionState(campaign, ("s0", "s1"))
    selector = LLMSelection(model_params=CHEAP, stop_on="model", interval=2, frontier=False)
    selector.start(state, np.random.default_rng(0))
    for step in range(3):
        oracle = oracle_weights(state)
        for t in range(state.n_topics):
            p = state.p[t]  # the model's probabilities (stop_on="model")
            assert np.all((p > 0) & (p < 1) | state.judged[t])
            expected = 2 * p * (1 - p) * oracle[t]  # E|change| = 2 p (1 − p) |hi − lo|
            np.testing.assert_allclose(selector.topic_weights(state, t), expected, rtol=1e-10, atol=1e-14)
        t, i = selector.propose(state)
        assert selector.topic_weights(state, t)[i] == pytest.approx(
            max(float((2 * state.p[k] * (1 - state.p[k]) * oracle[k]).max()) for k in range(2)), rel=1e-10
        )
        before = state.record(t, i, 1)
        selector.observe(state, t, i, before)
    assert selector.n_fits_ == 2  # at the start and after the second judgment
    assert "labels_sim" in selector.estimate_.params


def test_labels_that_agree_with_the_truth_are_judged_last():
    """With labels equal to the truth on half the documents, learned from a depth-10 pool, the
    model is sure of the labelled documents and the selector spends its judgments elsewhere."""
    truth = simulate_campaign(n_topics=6, n_systems=4, n_docs=150, depth=30, rng=7).campaign
    source = _labels(truth, 0.5, np.random.default_rng(1), truth=truth)
    campaign = with_labels(truth.pooled(10), [source])
    pair = tuple(truth.systems[:2])
    session = SelectionSession(campaign, LLMSelection(model_params=CHEAP, stop_on="model", interval=1000, frontier=False),
                               pair, confidence=None, rng=0)  # fmt: skip
    selector, state = session.strategy, session.state
    assert selector.estimate_.params["labels_sim"]["1"] > 1.5 > -1.5 > selector.estimate_.params["labels_sim"]["0"]
    codes = source.align(state.campaign)
    labelled = np.concatenate([c[cand] >= 0 for c, cand in zip(codes, state.candidates)])
    chosen = []
    for _ in range(20):
        t, i = selector.propose(state)
        chosen.append(codes[t][i] >= 0)
        state.exclude(t, i)
        selector.skipped(state, t, i)
    assert 0.3 < labelled.mean() < 0.7
    assert np.mean(chosen) < labelled.mean() / 2


def test_the_frontier_keeps_the_judged_set_a_union_of_run_prefixes():
    """With ``frontier`` every judgment is some compared run's best-ranked unjudged document,
    so each run's judged documents stay a prefix of its ranking (up to the one being extended),
    and the document chosen is the frontier's argmax of the unrestricted weights."""
    truth = simulate_campaign(n_topics=4, n_systems=4, n_docs=80, depth=15, rng=9).campaign
    campaign = with_labels(truth.pooled(2), [_labels(truth, 0.7, np.random.default_rng(4), truth=truth)])
    systems = tuple(truth.systems[:3])
    free = LLMSelection(model_params=CHEAP, stop_on="model", interval=1000, frontier=False)
    bound = LLMSelection(model_params=CHEAP, stop_on="model", interval=1000)
    state, other = SelectionState(campaign, systems), SelectionState(campaign, systems)
    free.start(other, np.random.default_rng(0))
    bound.start(state, np.random.default_rng(0))
    for _ in range(25):
        t, i = bound.propose(state)
        ranks = state.ranks[t][:, i]
        above = [(0 < state.ranks[t][k]) & (state.ranks[t][k] < ranks[k]) for k in range(len(systems))]
        assert any(r > 0 and not (a & state.candidates[t]).any() for r, a in zip(ranks, above))
        weights = free.topic_weights(other, t)
        best = max(float(free.topic_weights(other, k)[bound.topic_weights(state, k) >= 0].max())
                   for k in range(state.n_topics) if state.candidates[k].any())  # fmt: skip
        assert weights[i] == pytest.approx(best, rel=1e-10)
        grade = int(truth.topics[t].grades[i])
        for s, sel in ((state, bound), (other, free)):
            before = s.record(t, i, grade)
            sel.observe(s, t, i, before)


def test_without_labels_it_is_the_posterior_loop_with_uncertainty_weights():
    full = simulate_campaign(n_topics=4, n_systems=3, n_docs=120, depth=20, rng=3).campaign
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    pair = tuple(full.systems[:2])
    selector = get_strategy("llm", model_params={"fusion": {"n_draws": 40}}, interval=5)
    result = run_selection(hidden.subset(list(pair)), selector, SimulatedAssessor(full), pair,
                           confidence=0.9, budget=40, rng=2)  # fmt: skip
    assert selector.stop_on_ == "posterior" and selector.model_name_ == "fusion-llm"
    assert result.stopped_because in ("confidence", "budget")
    assert result.n_judgments <= 40 and selector.n_fits_ == 1 + result.n_judgments // 5
    assert repr(selector).startswith("LLMSelection(model='fusion-llm', interval=5")


def test_calibrate_strategy_judges_with_the_labels_and_generalises_with_them():
    """The calibration strategy ``llm``: the loop and the answer are fusion-llm (one model, the
    same parameters), and a trial on a labelled campaign records labels learned and a stop."""
    from relimpute.calibration.strategies import get_calibration_strategy
    from relimpute.calibration.trials import TrialSpec, run_trial

    strategy = get_calibration_strategy("llm")
    kwargs = strategy.selector_kwargs()
    assert strategy.selector == "llm" and kwargs["model"] == strategy.model == "fusion-llm"
    assert kwargs["model_params"]["fusion"] == {"n_draws": 200} and strategy.n_draws >= 1000
    truth = simulate_campaign(n_topics=5, n_systems=4, n_docs=120, depth=20, rng=4).campaign
    campaign = with_labels(truth, [_labels(truth, 0.6, np.random.default_rng(2), truth=truth)])
    cheap = type(strategy)(name="llm", selector="llm", model="fusion-llm", model_params={"fusion": {"n_draws": 20}},
                           selector_params={"n_draws": 200}, n_draws=200)  # fmt: skip
    spec = TrialSpec(trial=0, seed=1, systems=tuple(truth.systems), n_initial=2)
    pairs, trials = run_trial(campaign, spec, [cheap], confidence=0.9, max_judgments=30)
    assert len(pairs) == 6 and trials["judgments"].iat[0] <= 30
    assert trials["stopped_because"].iat[0] in ("confidence", "budget")
    assert pairs["p_a_better"].between(0, 1).all()
