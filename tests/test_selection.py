"""Selection strategies: MTC weights against enumeration, pooling orders by hand, the loop."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pandas as pd
import pytest
from conftest import make_campaign

from relimpute.confidence import prob_positive
from relimpute.confidence.moments import delta_q_moments
from relimpute.errors import InputError
from relimpute.selection import (
    MTC,
    RTCSelection,
    SelectionSession,
    SelectionState,
    SimulatedAssessor,
    StoppingRule,
    available_strategies,
    get_strategy,
    run_selection,
)
from relimpute.selection.mtc import pair_abs_sum, system_sums
from relimpute.selection.stopping import PairConfidence


def random_campaign(rng, n_topics=3, n_systems=3, n_docs=7, depth=5):
    runs = {f"s{s}": {} for s in range(n_systems)}
    qrels = []
    for t in range(n_topics):
        docs = [f"d{t}_{i}" for i in range(n_docs)]
        for s in range(n_systems):
            runs[f"s{s}"][f"q{t}"] = list(rng.choice(docs, size=depth, replace=False))
        for d in rng.choice(docs, size=2, replace=False):
            qrels.append((f"q{t}", d, int(rng.integers(0, 2))))
    return make_campaign(qrels, runs)


def enumerate_delta_q(ranks_a, ranks_b, p):
    """Brute force ΔQ moments by enumerating all 2^n relevance vectors (the oracle)."""
    n = len(p)
    mean = second = 0.0
    for x in itertools.product([0, 1], repeat=n):
        x = np.array(x, dtype=float)
        prob = np.prod(np.where(x == 1, p, 1 - p))
        dq = 0.0
        for ranks, sign in ((ranks_a, 1.0), (ranks_b, -1.0)):
            for i in range(n):
                for j in range(i, n):
                    if ranks[i] and ranks[j]:
                        dq += sign * x[i] * x[j] / max(ranks[i], ranks[j])
        mean += prob * dq
        second += prob * dq * dq
    return mean, second - mean * mean


def oracle_weights(state: SelectionState, pair=(0, 1)):
    """|E[ΔQ | x_i = 1] − E[ΔQ | x_i = 0]| / (T E[R_t]) by enumeration, per topic."""
    out = []
    for t in range(state.n_topics):
        p = state.p[t]
        ra, rb = state.ranks[t][pair[0]], state.ranks[t][pair[1]]
        w = np.zeros(len(p))
        for i in np.flatnonzero(state.candidates[t]):
            hi, lo = p.copy(), p.copy()
            hi[i], lo[i] = 1.0, 0.0
            w[i] = abs(enumerate_delta_q(ra, rb, hi)[0] - enumerate_delta_q(ra, rb, lo)[0])
        out.append(w / (state.n_topics * state.expected_relevant(t)))
    return out


# ---------------------------------------------------------------------- MTC weights


def test_mtc_hand_example():
    # A ranks x, y; B ranks y, z; p = 1/2. c_x = 1 + 1/4 = 1.25, c_y = 0.75 - 1.25, c_z = -0.75.
    campaign = make_campaign([("q", "w", 0)], {"A": {"q": ["x", "y"]}, "B": {"q": ["y", "z"]}})
    state = SelectionState(campaign, ("A", "B"))
    mtc = MTC()
    mtc.start(state, np.random.default_rng(0))
    weights = mtc.topic_weights(state, 0)
    doc = {d: i for i, d in enumerate(campaign.topics[0].doc_ids)}
    expected_r = 1.5  # x, y, z at 1/2; the judged w at 0
    assert weights[doc["x"]] == pytest.approx(1.25 / expected_r, abs=1e-15)
    assert weights[doc["y"]] == pytest.approx(0.5 / expected_r, abs=1e-15)
    assert weights[doc["z"]] == pytest.approx(0.75 / expected_r, abs=1e-15)
    assert weights[doc["w"]] == 0.0
    assert state.query_id(0) == "q" and state.doc_id(*mtc.propose(state)) == "x"


def test_mtc_weights_match_enumeration_and_pick_the_argmax():
    rng = np.random.default_rng(11)
    campaign = random_campaign(rng, n_topics=2, n_systems=2, n_docs=7, depth=5)
    state = SelectionState(campaign, ("s0", "s1"))
    mtc = MTC()
    mtc.start(state, rng)
    oracle = oracle_weights(state)
    for t in range(state.n_topics):
        np.testing.assert_allclose(mtc.topic_weights(state, t), oracle[t], rtol=0, atol=1e-12)
    t, i = mtc.propose(state)
    best = max(range(state.n_topics), key=lambda k: oracle[k].max())
    assert oracle[t][i] == pytest.approx(oracle[best].max(), abs=1e-12)
    # after judgments (p_j = x_j enters the weights) the oracle still agrees
    for grade in (1, 0, 1):
        t, i = mtc.propose(state)
        before = state.record(t, i, grade)
        mtc.observe(state, t, i, before)
    oracle = oracle_weights(state)
    for t in range(state.n_topics):
        np.testing.assert_allclose(mtc.topic_weights(state, t), oracle[t], rtol=0, atol=1e-12)


def test_system_sums_equal_the_engine_gradient():
    from relimpute.confidence import _kernels

    rng = np.random.default_rng(3)
    p = rng.random(30)
    row = rng.permutation(30)[:20].astype(np.int32)
    g = system_sums(row, 20, p)
    _, _, _, _, kernel_g = _kernels.system_terms(
        row[None, :].astype(np.int64),
        np.arange(1, 21, dtype=float)[None, :],
        np.array([20]),
        p,
        p * (1 - p),
    )
    np.testing.assert_allclose(g[row], kernel_g[0], rtol=0, atol=1e-13)
    assert (np.delete(g, row) == 0).all()


def test_pair_abs_sum_all_subsets():
    rng = np.random.default_rng(5)
    g = rng.random((5, 8))
    pairs = np.array(list(itertools.combinations(range(5), 2)))
    for keep in (pairs[:1], pairs[:3], pairs[:8], pairs, pairs[::2], pairs[:0]):
        direct = sum((np.abs(g[a] - g[b]) for a, b in keep), np.zeros(8))
        np.testing.assert_allclose(pair_abs_sum(g, keep), direct, rtol=0, atol=1e-12)


def test_incremental_updates_equal_full_recompute(dl19):
    campaign = dl19.subset(topics=dl19.query_ids[:6]).truncated(100)
    hidden = campaign.with_judged([np.zeros(t.n_docs, bool) for t in campaign.topics])
    oracle = SimulatedAssessor(dl19)
    systems = ("bm25base_p", "idst_bert_p1", "runid3", "TUA1-1")
    session = SelectionSession(hidden, "mtc", systems, confidence=None)
    for _ in range(150):
        q, d = session.propose()
        session.judge(q, d, oracle.judge(q, d))
    state, mtc = session.state, session.strategy
    fresh = MTC()
    fresh.start(state, np.random.default_rng(0))  # same p: judged 0/1, unjudged 1/2
    for t in range(state.n_topics):
        np.testing.assert_allclose(mtc.g_[t], fresh.g_[t], rtol=0, atol=1e-12)
        np.testing.assert_allclose(
            mtc.topic_weights(state, t), fresh.topic_weights(state, t), rtol=0, atol=1e-12
        )
    tracker = PairConfidence(state)
    np.testing.assert_allclose(session.tracker.e_q, tracker.e_q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(session.tracker.var_q, tracker.var_q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(session.tracker.expected_r, tracker.expected_r, rtol=0, atol=1e-12)


def test_confidence_tracker_against_enumeration():
    rng = np.random.default_rng(8)
    campaign = random_campaign(rng, n_topics=2, n_systems=2, n_docs=7, depth=5)
    state = SelectionState(campaign, ("s0", "s1"))
    MTC().start(state, rng)
    tracker = PairConfidence(state)
    mean = var = 0.0
    for t in range(2):
        e, v = enumerate_delta_q(state.ranks[t][0], state.ranks[t][1], state.p[t])
        r = state.expected_relevant(t)
        mean += e / r / 2
        var += v / r**2 / 4
    got_mean, got_var = tracker.moments()
    assert got_mean[0] == pytest.approx(mean, abs=1e-12)
    assert got_var[0] == pytest.approx(var, abs=1e-12)
    assert tracker.p_a_better()[0] == pytest.approx(prob_positive(mean, var), abs=1e-12)
    m = delta_q_moments(state.ranks[0][0], state.ranks[0][1], state.p[0])
    assert tracker.e_q[0, 0] == pytest.approx(m.mean, abs=1e-15)


# ---------------------------------------------------------------------- pooling orders

POOL_RUNS = {
    "A": {"q1": ["a", "b", "c", "d"], "q2": ["p", "q", "r"]},
    "B": {"q1": ["c", "e", "a", "f"], "q2": ["s", "p", "t"]},
}
POOL_QRELS = [
    ("q1", "a", 0),
    ("q1", "b", 1),
    ("q1", "c", 1),
    ("q1", "d", 0),
    ("q1", "e", 0),
    ("q1", "f", 1),
    ("q2", "p", 0),
    ("q2", "q", 0),
    ("q2", "r", 1),
    ("q2", "s", 1),
    ("q2", "t", 1),
]


def pool_order(strategy, **params):
    truth = make_campaign(POOL_QRELS, POOL_RUNS)
    hidden = truth.with_judged([np.zeros(t.n_docs, bool) for t in truth.topics])
    result = run_selection(
        hidden, strategy, SimulatedAssessor(truth), ("A", "B"), confidence=None, **params
    )
    return [
        f"{q}:{d}" for q, d in zip(result.judgments["query_id"], result.judgments["doc_id"])
    ], result


def test_incremental_pooling_order():
    order, result = pool_order("ip")
    assert order == [
        "q1:a",
        "q1:c",
        "q2:p",
        "q2:s",  # rank 1: topic 1 (A, B), topic 2 (A, B)
        "q1:b",
        "q1:e",
        "q2:q",  # rank 2 (p already judged)
        "q2:r",
        "q2:t",  # rank 3 (q1's c and a already judged)
        "q1:d",
        "q1:f",  # rank 4
    ]
    assert result.stopped_because == "exhausted"


def test_depth_k_order_and_pool():
    order, result = pool_order("depth", k=2)
    assert order == ["q1:a", "q1:c", "q1:b", "q1:e", "q2:p", "q2:s", "q2:q"]
    assert result.stopped_because == "exhausted"
    assert list(result.pool(3)["doc_id"]) == ["a", "c", "b"]
    order, _ = pool_order("depth", k=2, budget=5)
    assert len(order) == 5


def test_move_to_front_order():
    # q1: A: a(N) -> B: c(R), e(N) -> A (-1, order) b(R), [c judged] d(N) -> B(-1) a judged, f(R)
    # q2: A: p(N) -> B: s(R) [p judged] t(R) -> B dry -> A: q(N), r(R)
    # topics take turns.
    order, result = pool_order("mtf")
    assert order == [
        "q1:a",
        "q2:p",
        "q1:c",
        "q2:s",
        "q1:e",
        "q2:t",
        "q1:b",
        "q2:q",
        "q1:d",
        "q2:r",
        "q1:f",
    ]
    assert result.stopped_because == "exhausted"


def test_move_to_front_depth_limit():
    order, _ = pool_order("mtf", k=1)
    assert sorted(order) == ["q1:a", "q1:c", "q2:p", "q2:s"]


# ---------------------------------------------------------------------- the loop


@pytest.fixture
def small():
    rng = np.random.default_rng(21)
    truth = random_campaign(rng, n_topics=4, n_systems=3, n_docs=9, depth=6)
    hidden = truth.with_judged([np.zeros(t.n_docs, bool) for t in truth.topics])
    return truth, hidden


@pytest.mark.parametrize("name", available_strategies())
def test_strategy_contract(small, name):
    truth, hidden = small
    oracle = SimulatedAssessor(truth)
    params = {"model": "uniform"} if name == "rtc" else {}  # the expert model has its own tests
    result = run_selection(hidden, name, oracle, ("s0", "s1", "s2"), confidence=None, **params)
    retrieved = sum(int((t.retrieved() & ~t.judged).sum()) for t in hidden.topics)
    # every candidate judged exactly once, then exhausted
    assert result.stopped_because == "exhausted"
    assert result.n_judgments == retrieved
    assert not result.judgments.duplicated(["query_id", "doc_id"]).any()
    again = run_selection(hidden, name, oracle, ("s0", "s1", "s2"), confidence=None, **params)
    pd.testing.assert_frame_equal(result.judgments, again.judgments)
    after = result.campaign_after
    assert sum(int(t.judged.sum()) for t in after.topics) == retrieved
    assert isinstance(pickle.loads(pickle.dumps(get_strategy(name))), type(get_strategy(name)))


def test_registry():
    assert {"mtc", "rtc", "ip", "depth", "mtf"} <= set(available_strategies())
    with pytest.raises(KeyError, match="unknown selection strategy"):
        get_strategy("nope")
    assert get_strategy("depth", k=5).k == 5
    assert "MTC(prior=0.5)" == repr(get_strategy("mtc"))


def test_budget_and_stop_reasons(small):
    truth, hidden = small
    oracle = SimulatedAssessor(truth)
    result = run_selection(hidden, "mtc", oracle, ("s0", "s1"), confidence=None, budget=4)
    assert result.n_judgments == 4 and result.stopped_because == "budget"
    assert list(result.trace["judgment"]) == [1, 2, 3, 4]
    assert (result.trace["weight"] >= 0).all()
    zero = run_selection(hidden, "mtc", oracle, ("s0", "s1"), budget=0)
    assert zero.n_judgments == 0 and zero.stopped_because == "budget"
    # a comparison already decided with all judgments known stops at once
    decided = run_selection(truth, "mtc", oracle, ("s0", "s1"), confidence=0.5)
    assert decided.n_judgments == 0 and decided.stopped_because == "confidence"
    assert "0 judgments" in str(decided)
    rule = StoppingRule(confidence=0.9, budget=3)
    assert rule.reason(np.array([0.95, 0.91]), 0, False) == "confidence"
    assert rule.reason(np.array([0.95, 0.5]), 3, False) == "budget"
    assert rule.reason(np.array([0.95, 0.5]), 1, True) == "exhausted"
    assert rule.reason(np.array([0.95, 0.5]), 1, False) is None
    with pytest.raises(ValueError):
        StoppingRule(confidence=0.2)


def test_confidence_stop_and_trace(small):
    truth, hidden = small
    result = run_selection(hidden, "mtc", SimulatedAssessor(truth), ("s0", "s1"), confidence=0.9)
    if result.stopped_because == "confidence":
        assert result.trace["confidence"].iloc[-1] >= 0.9
        assert (result.trace["confidence"].iloc[:-1] < 0.9).all()
    assert result.confidence == pytest.approx(
        max(result.pairs["p_a_better"].iloc[0], 1 - result.pairs["p_a_better"].iloc[0])
    )
    frame = result.to_frame()
    assert list(frame.columns[:4]) == ["judgment", "query_id", "doc_id", "relevance"]


def test_run_set_weights_sum_over_undecided_pairs(small):
    _, hidden = small
    session = SelectionSession(hidden, "mtc", ("s0", "s1", "s2"), confidence=None)
    state, mtc = session.state, session.strategy
    # per pair numerators |c_ii + Σ c_ij p_j| from single-pair loops (their E[R] differs: undo it)
    singles = []
    for pair in ([0, 1], [0, 2], [1, 2]):
        solo = MTC()
        solo_state = SelectionState(hidden, [state.systems[pair[0]], state.systems[pair[1]]])
        solo.start(solo_state, np.random.default_rng(0))
        singles.append(
            [
                solo.topic_weights(solo_state, t) * solo_state.expected_relevant(t)
                for t in range(state.n_topics)
            ]
        )
    for t in range(state.n_topics):
        total = singles[0][t] + singles[1][t] + singles[2][t]
        np.testing.assert_allclose(
            mtc.topic_weights(state, t) * state.expected_relevant(t), total, atol=1e-12
        )
    mtc.set_undecided(state, np.array([True, False, True]))
    for t in range(state.n_topics):
        np.testing.assert_allclose(
            mtc.topic_weights(state, t) * state.expected_relevant(t),
            singles[0][t] + singles[2][t],
            atol=1e-12,
        )


def test_skip_and_errors(small):
    _, hidden = small
    session = SelectionSession(hidden, "mtc", ("s0", "s1"))
    q, d = session.propose()
    session.skip(q, d)
    assert session.propose() != (q, d)
    with pytest.raises(ValueError, match="not a candidate"):
        session.judge(q, d, 1)
    with pytest.raises(KeyError):
        session.judge("nope", d, 1)
    with pytest.raises(ValueError, match="at least two"):
        SelectionSession(hidden, "mtc", ("s0",))


def test_rtc_refits_every_interval(small):
    truth, hidden = small
    oracle = SimulatedAssessor(truth)
    result = run_selection(
        hidden,
        "rtc",
        oracle,
        ("s0", "s1"),
        confidence=None,
        budget=7,
        model="uniform",
        interval=3,
        model_params={"prior": 0.3},
    )
    assert result.n_judgments == 7
    session = SelectionSession(
        hidden, RTCSelection(model="uniform", interval=3, model_params={"prior": 0.3}), ("s0", "s1")
    )
    state = session.state
    assert all(np.allclose(p[~j], 0.3) for p, j in zip(state.p, state.judged))
    for _ in range(7):
        q, d = session.propose()
        session.judge(q, d, oracle.judge(q, d))
    assert session.strategy.n_fits_ == 1 + 7 // 3
    # with a uniform model RTC is MTC at that prior
    mtc = run_selection(hidden, MTC(prior=0.3), oracle, ("s0", "s1"), confidence=None, budget=7)
    pd.testing.assert_frame_equal(result.judgments, mtc.judgments)


def test_rtc_unknown_model(small):
    truth, hidden = small
    with pytest.raises(InputError, match="unknown relevance model"):
        run_selection(hidden, "rtc", SimulatedAssessor(truth), ("s0", "s1"), model="no-such-model")


# ---------------------------------------------------------------------- DL 2019


def _hidden(campaign):
    return campaign.with_judged([np.zeros(t.n_docs, bool) for t in campaign.topics])


@pytest.mark.parametrize("pair", [("bm25base_p", "idst_bert_p1"), ("runid3", "TUA1-1")])
def test_dl19_mtc_needs_far_fewer_judgments_than_depth_100(dl19, pair):
    oracle = SimulatedAssessor(dl19)
    result = run_selection(_hidden(dl19), "mtc", oracle, pair, depth=100)
    pool = dl19.truncated(100)
    rows = pool.system_index(list(pair))
    pool_size = sum(int(t.retrieved(rows).sum()) for t in pool.topics)
    assert result.stopped_because == "confidence"
    assert result.confidence >= 0.95
    assert result.n_judgments < pool_size / 5
    # MTC's prediction agrees with the full qrels
    from relimpute.selection.stopping import PairConfidence

    full = SelectionState(dl19.truncated(100), pair)
    full.p = [t.relevant(2).astype(float) for t in full.campaign.topics]
    truth_delta = PairConfidence(full).moments()[0][0]
    assert np.sign(result.pairs["e_delta_map"].iloc[0]) == np.sign(truth_delta)


@pytest.mark.parametrize("name", available_strategies())
def test_empty_runs_and_fully_judged_topics(name):
    # B retrieves nothing for q2; q3 is fully judged (no candidates there)
    runs = {"A": {"q1": ["a", "b"], "q2": ["c"], "q3": ["e"]}, "B": {"q1": ["b", "d"], "q3": ["e"]}}
    qrels = [("q1", "a", 1), ("q1", "b", 0), ("q1", "d", 1), ("q2", "c", 1), ("q3", "e", 1)]
    with pytest.warns(UserWarning, match="retrieves nothing"):
        truth = make_campaign(qrels, runs)
    hidden = truth.with_judged([t.doc_ids == "e" for t in truth.topics])
    params = {"model": "uniform"} if name == "rtc" else {}
    result = run_selection(hidden, name, SimulatedAssessor(truth), ("A", "B"), confidence=None, **params)
    assert result.stopped_because == "exhausted"
    assert sorted(result.judgments["doc_id"]) == ["a", "b", "c", "d"]
    assert np.isfinite(result.pairs[["e_delta_map", "sd_delta_map", "p_a_better"]].to_numpy()).all()


def test_alpha_keyword_is_gone(small):
    """``alpha=`` (replaced by ``confidence=`` in 0.2.0) is removed in 0.3.0: the selection
    strategies take no such parameter, so it is refused rather than silently ignored."""
    truth, hidden = small
    oracle = SimulatedAssessor(truth)
    with pytest.raises(TypeError, match="alpha"):
        run_selection(hidden, "mtc", oracle, ("s0", "s1"), alpha=0.9)
    session = SelectionSession(hidden, "mtc", ("s0", "s1"), confidence=None)
    assert session.stopping.confidence is None


def test_rtc_stop_on_prior_chooses_with_the_model_and_stops_on_half():
    """``RTCSelection(stop_on="prior")``: MTC's confidence (½ for unjudged), the model's choices.

    Oracles: the tracker equals a fresh PairConfidence over a state whose unjudged
    documents are ½; the incrementally updated sums equal ``system_sums`` over the
    model's probabilities (judged documents at their labels) recomputed from scratch.
    """
    from relimpute.simulate import simulate_campaign

    full = simulate_campaign(n_topics=4, n_systems=3, n_docs=150, depth=20, rng=5).campaign
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    pair = tuple(full.systems[:2])
    rtc = RTCSelection(model="uniform", model_params={"prior": 0.2}, interval=7, stop_on="prior")
    session = SelectionSession(hidden.subset(list(pair)), rtc, pair, confidence=None)
    oracle = SimulatedAssessor(full)
    for _ in range(17):  # two refits and a few judgments after the second
        q, d = session.propose()
        session.judge(q, d, oracle.judge(q, d))
    state = session.state
    for p, judged in zip(state.p, state.judged):
        assert (p[~judged] == 0.5).all()
    for t in range(state.n_topics):
        p = state.p[t].copy()
        p[~state.judged[t]] = 0.2  # the model's estimate
        np.testing.assert_allclose(rtc.choice_p_[t], p, rtol=0, atol=1e-12)
        topic = state.campaign.topics[t]
        fresh = np.stack([system_sums(topic.ranking[s], int(topic.depth[s]), p) for s in state.compared])
        np.testing.assert_allclose(rtc.g_[t], fresh, rtol=0, atol=1e-12)
    tracker = PairConfidence(state)
    np.testing.assert_allclose(session.tracker.e_q, tracker.e_q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(session.tracker.var_q, tracker.var_q, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="stop_on"):
        SelectionSession(hidden.subset(list(pair)), RTCSelection(stop_on="never"), pair)


def test_posterior_selection_stops_on_the_posterior_predictive_confidence():
    """``posterior``: the loop's confidence is Monte Carlo over the refitted model's draws.

    Oracle: the engine's Monte Carlo on the same judgments and fitted estimate with
    another seed and ten times the draws, within 4 binomial standard errors of the
    loop's 4,000.
    Between refits the confidence does not move, so the loop stops only at a refit.
    """
    from relimpute.confidence import ConfidenceEngine
    from relimpute.selection import PosteriorSelection
    from relimpute.simulate import simulate_campaign

    full = simulate_campaign(n_topics=6, n_systems=3, n_docs=200, depth=30, rng=11).campaign
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    pair = tuple(full.systems[:2])
    selector = PosteriorSelection(model_params={"n_draws": 40}, interval=5)
    session = SelectionSession(hidden.subset(list(pair)), selector, pair, confidence=None, rng=3)
    oracle = SimulatedAssessor(full)
    seen = []

    def judge(n):
        for _ in range(n):
            q, d = session.propose()
            session.judge(q, d, oracle.judge(q, d))
            seen.append(float(session.confidence()[0]))

    judge(10)
    assert selector.n_fits_ == 3  # at the start, after 5 and after 10 judgments
    assert seen[5] == seen[6] == seen[7] == seen[8]  # judgments 6-9: no refit
    campaign = session.state.current_campaign()  # the judgments of the latest refit
    check = ConfidenceEngine().confidence(
        campaign, selector.estimate_, pairs=[pair], n_draws=40_000, rng=99,
        method="monte carlo",
    )
    p_loop = float(session.tracker.p_a_better()[0])
    p_check = float(check.p_a_better[0])
    assert 0 < p_check < 1
    assert abs(p_loop - p_check) < 4 * np.sqrt(p_check * (1 - p_check) / 4000)
    judge(2)
    assert seen[9] == seen[10] == seen[11]
    with pytest.raises(ValueError, match="posterior draws"):
        SelectionSession(hidden.subset(list(pair)), RTCSelection(model="uniform", stop_on="posterior"), pair)


def test_posterior_screen_skips_only_refits_that_cannot_stop():
    """``screen``: the posterior Monte Carlo is skipped at a refit only when the exact
    confidence with the refitted probabilities taken as known is below target − screen,
    and the loop still stops only on a posterior confidence that reached the target."""
    from relimpute.confidence import ConfidenceEngine
    from relimpute.selection import PosteriorSelection
    from relimpute.simulate import simulate_campaign

    full = simulate_campaign(n_topics=6, n_systems=3, n_docs=200, depth=30, rng=11).campaign
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    pair = tuple(full.systems[:2])
    oracle = SimulatedAssessor(full)

    def run(screen, target, cap=60):
        selector = PosteriorSelection(model_params={"n_draws": 40}, interval=5, screen=screen)
        session = SelectionSession(hidden.subset(list(pair)), selector, pair, confidence=target, rng=3)
        skipped = []
        while session.stop_reason() is None and session.n_judged < cap:
            before = selector.n_screened_
            q, d = session.propose()
            session.judge(q, d, oracle.judge(q, d))
            if selector.n_screened_ > before:  # this refit was screened: check why
                known = ConfidenceEngine(ratio="constant").confidence(
                    session.state.current_campaign(), selector.estimate_, pairs=[pair],
                    method="normal",
                ).p_a_better[0]
                skipped.append(max(known, 1 - known))
        return selector, session, skipped

    # an unreachable target with no margin: every refit is screened, the loop never stops on it
    selector, session, skipped = run(0.0, 0.999999, cap=20)
    assert selector.n_screened_ == selector.n_fits_ and session.stop_reason() is None
    assert all(c < 0.999999 for c in skipped)
    # the usual target: the refits skipped were below 0.95 - 0.05 with p taken as known
    selector, session, skipped = run(0.05, 0.95)
    assert all(c < 0.90 for c in skipped)
    if session.stop_reason() == "confidence":
        assert float(session.confidence()[0]) >= 0.95
    with pytest.raises(ValueError, match="screen"):
        SelectionSession(hidden.subset(list(pair)), PosteriorSelection(screen=0.7), pair)


def test_posterior_choose_variance_weights_mtc_by_the_label_sd():
    """``choose="variance"``: MTC's weight (by enumeration, with the model's p) times
    ``sqrt(p (1 − p))``, and the proposal is its argmax over every topic, before and
    after refits."""
    from relimpute.selection import PosteriorSelection

    rng = np.random.default_rng(11)
    campaign = random_campaign(rng, n_topics=3, n_systems=2, n_docs=7, depth=5)
    state = SelectionState(campaign, ("s0", "s1"))
    selector = PosteriorSelection(model_params={"n_draws": 8}, interval=2, choose="variance")
    selector.start(state, np.random.default_rng(0))
    for step in range(4):
        oracle = [w * np.sqrt(p * (1 - p)) for w, p in zip(oracle_weights(state), state.p)]
        for t in range(state.n_topics):
            np.testing.assert_allclose(selector.topic_weights(state, t), oracle[t], rtol=0, atol=1e-12)
        assert any(((p > 0) & (p < 1) & (p != 0.5)).any() for p in state.p)  # the model's p, not ½
        t, i = selector.propose(state)
        assert oracle[t][i] == pytest.approx(max(o.max() for o in oracle), abs=1e-12)
        before = state.record(t, i, step % 2)
        selector.observe(state, t, i, before)
    assert selector.n_fits_ == 3  # at the start, after 2 and after 4 judgments
    with pytest.raises(ValueError, match="choose"):
        PosteriorSelection(choose="entropy").start(SelectionState(campaign, ("s0", "s1")), rng)


def test_posterior_refits_at_the_threshold_decide_as_the_graded_fit():
    """The posterior selector fits the default model on labels read at the threshold and
    keeps each refit's draws for all its Monte Carlo passes; oracle: the RTC loop on the
    same model fitted on the graded judgments (stop_on="posterior", the same rng), whose
    judgments, confidences and refits it must reproduce exactly."""
    from dataclasses import replace

    from relimpute.selection import PosteriorSelection
    from relimpute.simulate import simulate_campaign

    full = simulate_campaign(
        n_topics=6, n_systems=3, n_docs=200, depth=30, grade_probs=(0.4, 0.3, 0.3), rng=11
    ).campaign
    full = replace(full, rel_threshold=2)
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    pair = tuple(full.systems[:2])
    oracle = SimulatedAssessor(full)

    def run(selector):
        campaign = hidden.subset(list(pair))
        session = SelectionSession(campaign, selector, pair, confidence=0.95, budget=45, rng=3)
        trace = []
        while session.stop_reason() is None:
            q, d = session.propose()
            session.judge(q, d, oracle.judge(q, d))
            trace.append((q, d, float(session.tracker.p_a_better()[0])))
        return session, trace

    settings = {"model_params": {"n_draws": 40}, "interval": 5, "screen": None}
    graded, expected = run(RTCSelection(model="fusion", stop_on="posterior", **settings))
    fast, trace = run(PosteriorSelection(**settings))
    assert trace == expected and fast.stop_reason() == graded.stop_reason()
    assert fast.strategy.n_fits_ == graded.strategy.n_fits_ >= 3
    assert graded.strategy.estimate_.grades is not None  # the oracle did fit grades
    assert fast.strategy.estimate_.grades is None


def test_posterior_checks_between_refits_decide_as_a_refit_free_monte_carlo():
    """``check_every=1``: after every judgment between refits, the confidence is the
    engine's Monte Carlo on the current judgments over the latest refit's draws, no refit
    (oracle: ``ConfidenceEngine.monte_carlo`` with the check's seed, the same draws), equal
    draw for draw; the loop stops at the first judgment where that oracle reaches the
    target, and the refits draw as without checks (the same judgments up to that stop)."""
    from relimpute.confidence import ConfidenceEngine
    from relimpute.selection import PosteriorSelection
    from relimpute.simulate import simulate_campaign

    full = simulate_campaign(n_topics=6, n_systems=3, n_docs=200, depth=30, rng=11).campaign
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    pair = tuple(full.systems[:2])
    oracle = SimulatedAssessor(full)
    settings = {"model_params": {"n_draws": 40}, "interval": 5, "n_draws": 500, "screen": None}

    def run(selector, target, budget=60, check=None):
        session = SelectionSession(
            hidden.subset(list(pair)), selector, pair, confidence=target, budget=budget, rng=3
        )
        docs = []
        while session.stop_reason() is None:
            q, d = session.propose()
            fits = selector.n_fits_
            session.judge(q, d, oracle.judge(q, d))
            docs.append((q, d))
            if check is not None and selector.n_fits_ == fits:  # a judgment between refits
                check(session, selector)
        return session, docs

    compared = []

    def against_oracle(session, selector):
        expected = ConfidenceEngine().confidence(
            session.state.current_campaign().subset(list(pair)), selector.estimate_, pairs=[pair],
            n_draws=500, rng=np.random.default_rng(selector.check_seed_),
            method="monte carlo",
        )  # fmt: skip
        got = float(session.tracker.p_a_better()[0])
        assert got == float(expected.p_a_better[0])
        assert float(session.tracker.moments()[0][0]) == float(expected.e_delta_map[0])
        compared.append(max(got, 1 - got))

    # no confidence stop: every judgment between refits is checked against the oracle
    selector = PosteriorSelection(check_every=1, **settings)
    run(selector, None, budget=23, check=against_oracle)
    assert len(compared) == selector.n_checks_ == 23 - 4  # refits after 5, 10, 15, 20
    assert len(set(compared)) > 3  # the confidence moves between refits
    first = list(compared)
    # a reachable target: it stops at the first check (or refit) at the target
    compared.clear()
    target = max(first)  # reached at a check between refits of the first run
    checked = PosteriorSelection(check_every=1, **settings)
    session, docs = run(checked, target, check=against_oracle)
    plain_session, plain_docs = run(PosteriorSelection(**settings), target)
    assert session.stop_reason() == "confidence"
    assert float(session.confidence()[0]) >= target
    assert all(c < target for c in compared[:-1]) and compared[-1] >= target  # stopped at a check
    assert docs == plain_docs[: len(docs)] and len(docs) <= len(plain_docs)
    with pytest.raises(ValueError, match="check_every"):
        SelectionSession(hidden.subset(list(pair)), PosteriorSelection(check_every=0), pair)
