"""The posterior selector's reweighting between refits (``update="reweight"``): the weighted
confidence against exact enumeration of the same posterior, and its reductions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import make_campaign

from relimpute.relevance.base import RelevanceEstimate
from relimpute.selection import PosteriorSelection, SelectionSession, SimulatedAssessor
from relimpute.selection.posterior import effective_sample_size

N_DOCS = 5


def tiny_campaign():
    """Two topics of five documents, two runs ranking all five in different orders."""
    orders = {"s0": [0, 1, 2, 3, 4], "s1": [3, 0, 4, 1, 2]}
    runs = {s: {f"q{t}": [f"d{t}_{i}" for i in o] for t in range(2)} for s, o in orders.items()}
    qrels = [(f"q{t}", f"d{t}_{i}", 0) for t in range(2) for i in range(N_DOCS)]
    return make_campaign(qrels, runs)


def fixed_estimate(campaign, draws):
    """An estimate whose posterior draws are ``draws[t] (M, n)`` (its p: their mean)."""
    return RelevanceEstimate(
        query_ids=campaign.query_ids,
        doc_ids=tuple(t.doc_ids for t in campaign.topics),
        p=tuple(d.mean(axis=0) for d in draws),
        draws=tuple(draws),
    )


def parameter_draws(campaign, n_draws, seed):
    """Draws of p through shared parameters: ``p_s(d) = σ(a_s + b_s z_d)``, ``z_d`` the
    document's position in s0's ranking (so a label moves every other document's p)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0.0, 1.5, n_draws)[:, None]
    b = rng.normal(-0.6, 0.8, n_draws)[:, None]
    out = []
    for topic in campaign.topics:
        z = np.array([int(d.split("_")[1]) for d in topic.doc_ids], dtype=float)
        out.append(1.0 / (1.0 + np.exp(-(a + b * z))))
    return out


def average_precision(order, relevant):
    """AP of one ranking (all documents retrieved) with R = the relevant documents."""
    r = relevant.sum()
    if r == 0:
        return 0.0
    hits = np.cumsum(relevant[order])
    return float(np.sum(relevant[order] * hits / np.arange(1, len(order) + 1)) / r)


def enumerated_p_a_better(campaign, draws, labels, weighted=True):
    """Exact P(ΔMAP > 0) + ½ P(ΔMAP = 0) given ``labels {(t, doc): y}``: each draw weighted by
    the labels' likelihood (``weighted=False``: every draw alike, the labels fixing their own
    documents only), every unjudged relevance vector enumerated (the oracle)."""
    names = campaign.systems
    orders = [
        [np.array([list(t.doc_ids).index(d) for d in _ranked(campaign, t, s)]) for s in names]
        for t in campaign.topics
    ]
    free = [(t, d) for t in range(2) for d in range(N_DOCS) if (t, d) not in labels]
    total = weight_sum = 0.0
    for s in range(draws[0].shape[0]):
        w = np.prod([draws[t][s, d] if y else 1 - draws[t][s, d] for (t, d), y in labels.items()])
        w = w if weighted else 1.0
        weight_sum += w
        for x in itertools.product([0, 1], repeat=len(free)):
            rel = [np.zeros(N_DOCS) for _ in range(2)]
            for (t, d), y in labels.items():
                rel[t][d] = y
            prob = 1.0
            for (t, d), xi in zip(free, x):
                rel[t][d] = xi
                prob *= draws[t][s, d] if xi else 1 - draws[t][s, d]
            maps = [np.mean([average_precision(orders[t][k], rel[t]) for t in range(2)]) for k in range(2)]
            delta = maps[0] - maps[1]
            total += w * prob * (1.0 if delta > 1e-12 else 0.5 if abs(delta) <= 1e-12 else 0.0)
    return total / weight_sum


def _ranked(campaign, topic, system):
    s = campaign.system_index([system])[0]
    return topic.doc_ids[topic.ranking[s, : int(topic.depth[s])]]


def session_on(campaign, draws, monkeypatch, **params):
    """A reweighting selector whose every fit returns the fixed ``draws``."""
    estimate = fixed_estimate(campaign, draws)
    monkeypatch.setattr(PosteriorSelection, "_fit_predict", lambda self, c: estimate)
    selector = PosteriorSelection(**params)
    hidden = campaign.with_judged([np.zeros(t.n_docs, dtype=bool) for t in campaign.topics])
    pair = tuple(campaign.systems)
    return selector, SelectionSession(hidden, selector, pair, confidence=None, rng=3)


def test_reweighted_confidence_equals_the_enumerated_posterior(monkeypatch):
    """After labels between refits, the selector's P(ΔMAP > 0) is Bayes on the refit's draws:
    oracle, exact enumeration of every unjudged relevance vector under every draw weighted by
    the labels' likelihood; within 4 standard errors of a self-normalised estimate,
    sqrt(P (1 − P) / (B · ESS / M)), and away from the refit-free checks' answer (the same
    draws unweighted) by more than that."""
    campaign = tiny_campaign()
    draws = parameter_draws(campaign, 40, seed=5)
    n_mc = 40 * 1000
    selector, session = session_on(
        campaign, draws, monkeypatch, update="reweight", min_ess=0.01, n_draws=n_mc, screen=None
    )
    labels = {(0, 0): 0, (1, 0): 0, (0, 4): 1}  # first nonrelevant, last relevant: b_s > 0 likelier
    for (t, d), y in labels.items():
        session.judge(f"q{t}", f"d{t}_{d}", y)
    assert selector.n_fits_ == 1 and selector.n_checks_ == 3
    got = float(session.tracker.p_a_better()[0])
    expected = enumerated_p_a_better(campaign, draws, labels)
    unweighted = enumerated_p_a_better(campaign, draws, labels, weighted=False)  # refit-free checks
    ess = effective_sample_size(selector.log_weights_)
    error = np.sqrt(expected * (1 - expected) / (n_mc * ess / 40))
    assert ess < 30  # the labels did move the weights
    assert abs(got - expected) < 4 * error
    assert abs(unweighted - expected) > 8 * error


def test_equal_draws_reweight_as_the_refit_free_checks(monkeypatch):
    """When a document's p is the same in every draw, its label leaves the weights equal: the
    reweighting selector never refits and its confidence after every judgment is, exactly,
    that of the checks on the refit's draws (``update="refit"``, ``check_every=1``)."""
    campaign = tiny_campaign()
    rng = np.random.default_rng(2)
    draws = [np.broadcast_to(rng.uniform(0.1, 0.9, N_DOCS), (20, N_DOCS)).copy() for _ in range(2)]
    traces = []
    for params in ({"update": "reweight", "min_ess": 0.99}, {"check_every": 1, "interval": 1000}):
        selector, session = session_on(campaign, draws, monkeypatch, n_draws=400, screen=None, **params)
        trace = []
        for _ in range(6):
            q, d = session.propose()
            session.judge(q, d, int(d.endswith(("1", "3"))))
            trace.append((q, d, float(session.tracker.p_a_better()[0])))
        assert selector.n_fits_ == 1 and selector.n_checks_ == 6
        traces.append(trace)
    assert traces[0] == traces[1]
    assert len({c for _, _, c in traces[0]}) > 2  # the confidence moved


def test_reweight_refits_when_the_effective_sample_size_falls():
    """On the default model: between refits the log-weights are the labels' log-likelihood
    under each of the refit's draws (recomputed here from its draws), the refit comes at the
    first judgment that takes their ESS below ``min_ess`` × M, and resets them."""
    from relimpute.simulate import simulate_campaign

    full = simulate_campaign(n_topics=6, n_systems=3, n_docs=200, depth=30, rng=11).campaign
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    pair = tuple(full.systems[:2])
    oracle = SimulatedAssessor(full)
    selector = PosteriorSelection(model_params={"n_draws": 40}, update="reweight", min_ess=0.5, n_draws=400)
    session = SelectionSession(hidden.subset(list(pair)), selector, pair, confidence=None, rng=3)
    expected, refits = np.zeros(40), 0
    for _ in range(30):
        q, d = session.propose()
        t, i = session.state.locate(q, d)
        p = np.asarray(selector.draws_estimate_.draws[t][:, i])  # the refit's draws, before the label
        fits = selector.n_fits_
        y = oracle.judge(q, d)
        session.judge(q, d, y)
        expected += np.log(p if y >= full.rel_threshold else 1 - p)
        if selector.n_fits_ > fits:  # refitted: the weights had degenerated
            refits += 1
            assert effective_sample_size(expected) < 0.5 * 40
            expected = np.zeros(40)
            assert np.all(selector.log_weights_ == 0)
        else:
            np.testing.assert_allclose(selector.log_weights_, expected, rtol=1e-12, atol=1e-9)
            assert selector.ess_ >= 0.5 * 40
    assert refits >= 1 and selector.n_checks_ == 30 - refits
    for bad, match in (({"update": "resample"}, "update"), ({"min_ess": 0.0}, "min_ess"),
                       ({"posterior_draws": 1}, "posterior_draws"), ({"n_draws": 1}, "n_draws")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            SelectionSession(hidden.subset(list(pair)), PosteriorSelection(**bad), pair)


def test_posterior_draws_sets_the_refits_posterior_draws():
    from relimpute.simulate import simulate_campaign

    full = simulate_campaign(n_topics=3, n_systems=2, n_docs=100, depth=20, rng=4).campaign
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    pair = tuple(full.systems)
    selector = PosteriorSelection(model_params={"n_draws": 40}, posterior_draws=60, update="reweight")
    SelectionSession(hidden, selector, pair, confidence=None, rng=1)
    assert selector.draws_estimate_.n_draws == 60 and len(selector.log_weights_) == 60


def test_reweight_between_fixed_refits_judges_as_the_refitting_selector():
    """``ess_refits=False``: refits every ``interval`` judgments, so the documents are those
    of ``update="refit"`` (checks every judgment) judgment for judgment; a check is skipped
    exactly when the weights' ESS is below ``min_ess`` × M."""
    from relimpute.simulate import simulate_campaign

    full = simulate_campaign(n_topics=6, n_systems=3, n_docs=200, depth=30, rng=11).campaign
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    pair = tuple(full.systems[:2])
    oracle = SimulatedAssessor(full)
    settings = {"model_params": {"n_draws": 40}, "interval": 5, "n_draws": 400, "screen": None}
    runs = []
    for params in ({"update": "reweight", "ess_refits": False, "min_ess": 0.3}, {"check_every": 1}):
        selector = PosteriorSelection(**settings, **params)
        session = SelectionSession(hidden.subset(list(pair)), selector, pair, confidence=None, budget=23, rng=3)
        docs, skipped = [], 0
        while session.stop_reason() is None:
            q, d = session.propose()
            before = selector.n_check_screened_
            session.judge(q, d, oracle.judge(q, d))
            docs.append((q, d, selector.n_fits_))
            if selector.update == "reweight" and session.n_judged % 5:
                low = selector.ess_ < 0.3 * 40
                assert (selector.n_check_screened_ > before) == low
                skipped += low
        runs.append((docs, selector.n_checks_, skipped))
    (docs, checks, skipped), (plain_docs, plain_checks, _) = runs
    assert docs == plain_docs and checks + skipped == plain_checks == 23 - 4


def confirm_session(campaign, fits, monkeypatch, target, **params):
    """A selector whose ``k``-th fit returns ``fits[k]`` (the last one from then on), judging
    the pair with stopping confidence ``target``."""
    estimates = [fixed_estimate(campaign, draws) for draws in fits]
    monkeypatch.setattr(
        PosteriorSelection, "_fit_predict", lambda self, c: estimates[min(self.n_fits_, len(estimates) - 1)]
    )
    selector = PosteriorSelection(**params)
    hidden = campaign.with_judged([np.zeros(t.n_docs, dtype=bool) for t in campaign.topics])
    return selector, SelectionSession(hidden, selector, tuple(campaign.systems), confidence=target, rng=3)


FLAT = "flat"


@pytest.mark.parametrize(("update", "n_labels", "target", "lost"), [("reweight", 3, 0.8, "a"), ("refit", 4, 0.88, FLAT)])
def test_confirm_stops_only_on_a_refit_that_reaches_the_target(monkeypatch, update, n_labels, target, lost):
    """A check between refits that reaches the target stops the loop without ``confirm``; with
    it, the loop refits there and stops only if the refit's confidence reaches the target (the
    oracle: exact enumeration on the refit's draws, unweighted). The checks read refit A's
    draws (weighted by the labels with ``update="reweight"``). A refit that has learned less
    (A again, its weights lost: enumerated 0.73 < 0.8; or p = ½ everywhere: 0.87 < 0.88)
    fails to confirm and the loop judges on; A resampled by the labels' likelihood confirms."""
    campaign = tiny_campaign()
    a = parameter_draws(campaign, 40, seed=5)
    labels = [((0, 0), 0), ((1, 0), 0), ((0, 4), 1), ((1, 4), 1)][:n_labels]
    n_mc = 40 * 1000
    own = {"update": "reweight", "min_ess": 0.01} if update == "reweight" else {"check_every": 1}
    params = {**own, "n_draws": n_mc, "screen": None}
    likelihood = np.ones(40)
    for (t, d), y in labels:
        likelihood *= a[t][:, d] if y else 1 - a[t][:, d]
    index = np.random.default_rng(0).choice(40, size=40, p=likelihood / likelihood.sum())
    resampled = [draws[index] for draws in a]
    worse = [np.full_like(draws, 0.5) for draws in a] if lost == FLAT else a
    outcomes = {}
    for name, fits, confirm in (("plain", [a], False), ("lost", [a, worse], True), ("kept", [a, resampled], True)):
        selector, session = confirm_session(campaign, fits, monkeypatch, target, confirm=confirm, **params)
        known = {}
        for (t, d), y in labels:
            assert session.stop_reason() is None
            session.judge(f"q{t}", f"d{t}_{d}", y)
            known[(t, d)] = y
        p = float(session.tracker.p_a_better()[0])
        outcomes[name] = (session.stop_reason(), selector.n_fits_, selector.n_confirms_)
        if confirm:  # the loop reads the refit's confidence: the enumeration on its draws
            exact = enumerated_p_a_better(campaign, fits[-1], known, weighted=False)
            assert abs(p - exact) < 4 * np.sqrt(exact * (1 - exact) / n_mc)
            assert (session.stop_reason() == "confidence") == (max(exact, 1 - exact) >= target)
        if name == "lost":  # judging goes on after a confirm that fails
            q, doc = session.propose()
            session.judge(q, doc, 0)
            assert session.n_judged == n_labels + 1 and selector.n_confirms_ == 1
    assert outcomes["plain"] == ("confidence", 1, 0)  # the check alone stops
    assert outcomes["lost"] == (None, 2, 1)
    assert outcomes["kept"] == ("confidence", 2, 1)


def test_confirm_changes_nothing_until_a_check_reaches_the_target():
    """On the default model: with a target no check reaches, ``confirm=True`` judges the same
    documents with the same refits and confidences as ``confirm=False``."""
    from relimpute.simulate import simulate_campaign

    full = simulate_campaign(n_topics=6, n_systems=3, n_docs=200, depth=30, rng=11).campaign
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    pair = tuple(full.systems[:2])
    oracle = SimulatedAssessor(full)
    traces = []
    for confirm in (False, True):
        selector = PosteriorSelection(model_params={"n_draws": 40}, update="reweight", n_draws=400,
                                      confirm=confirm)  # fmt: skip
        session = SelectionSession(hidden.subset(list(pair)), selector, pair, confidence=1.0, budget=25, rng=3)
        trace = []
        while session.stop_reason() is None:
            q, d = session.propose()
            session.judge(q, d, oracle.judge(q, d))
            trace.append((q, d, selector.n_fits_, float(session.confidence()[0])))
        assert selector.n_confirms_ == 0
        traces.append(trace)
    assert traces[0] == traces[1] and len(traces[0]) == 25
    with pytest.raises(ValueError, match="confirm"):
        SelectionSession(hidden.subset(list(pair)), PosteriorSelection(confirm="yes"), pair)


def mtc_choices(campaign, p, judged):
    """The oracle of MTC's choice (Carterette 2007 §2.1), written out: for every unjudged
    document of every topic ``|g^A_i − g^B_i| / (T · E[R_t])`` with ``g^S_i = a_ii + Σ_{j≠i}
    a_ij p_j``, ``a_ij = 1 / max(r_i, r_j)`` over the documents run S retrieves; the documents
    of the largest (several when tied up to rounding)."""
    weights = {}
    for t, topic in enumerate(campaign.topics):
        rank = [{int(d): r + 1 for r, d in enumerate(topic.ranking[s, : int(topic.depth[s])])}
                for s in range(2)]  # fmt: skip
        expected_r = sum(p[t])
        for i in range(topic.n_docs):
            if judged[t][i]:
                continue
            g = [0.0, 0.0]
            for s in range(2):
                if i in rank[s]:
                    g[s] = 1 / rank[s][i] + sum(p[t][j] / max(rank[s][i], r) for j, r in rank[s].items() if j != i)
            weights[(f"q{t}", str(topic.doc_ids[i]))] = abs(g[0] - g[1]) / (campaign.n_topics * expected_r)
    best = max(weights.values())
    return {doc for doc, w in weights.items() if w >= best - 1e-12}


def judge_and_follow(session, selector, labels, n_after, label_of):
    """Judge ``labels`` ``{(q, doc): y}``, then ``n_after`` proposals (labelled ``label_of(doc)``):
    the proposals with the p the choice read before each (copied)."""
    for (q, d), y in labels.items():
        session.judge(q, d, y)
    out = []
    for _ in range(n_after):
        p = [x.copy() for x in selector.choice_p_]
        q, d = session.propose()
        out.append(((q, d), p))
        session.judge(q, d, label_of(d))
    return out


@pytest.mark.parametrize("update", ["refit", "reweight"])
def test_predictive_choice_with_equal_weights_is_the_refits(monkeypatch, update):
    """``choose_from="predictive"`` reads the draws' mean weighted by the labels' likelihood.
    When the weights stay equal (``update="refit"``; or draws that agree on every document,
    which a label cannot tell apart) and the refit's p is the draws' mean, it judges exactly
    the documents ``choose_from="refit"`` judges."""
    campaign = tiny_campaign()
    rng = np.random.default_rng(8)
    if update == "refit":
        draws = [rng.uniform(0.05, 0.95, (20, N_DOCS)) for _ in range(2)]
        params = {"update": "refit", "check_every": 1, "interval": 1000}
    else:
        draws = [np.broadcast_to(rng.uniform(0.1, 0.9, N_DOCS), (20, N_DOCS)).copy() for _ in range(2)]
        params = {"update": "reweight", "min_ess": 0.99}
    traces = []
    for choose_from in ("refit", "predictive"):
        selector, session = session_on(campaign, draws, monkeypatch, n_draws=400, screen=None,
                                       choose_from=choose_from, **params)  # fmt: skip
        trace = judge_and_follow(session, selector, {}, 8, lambda d: int(d.endswith(("1", "3"))))
        assert selector.n_fits_ == 1
        traces.append([doc for doc, _ in trace])
    assert traces[0] == traces[1] and len(set(traces[0])) == 8


def test_predictive_choice_with_all_weight_on_one_draw_is_that_draws(monkeypatch):
    """A label that only draw 0 allows (p = 0 in every other draw) puts all the weight on draw 0:
    from then on ``choose_from="predictive"`` reads draw 0's p for every unjudged document and
    judges what MTC's weights with that p choose (the oracle, written out), where the refit's p
    (the draws' mean) chooses otherwise; ``choose_from="draws"`` (the draws' mean, unweighted)
    judges as the refit's p does."""
    campaign = tiny_campaign()
    rng = np.random.default_rng(4)
    draws = [rng.uniform(0.05, 0.95, (6, N_DOCS)) for _ in range(2)]
    first = list(campaign.topics[0].doc_ids).index("d0_0")
    draws[0][:, first] = 0.0
    draws[0][0, first] = 0.8
    labels = {("q0", "d0_0"): 1}
    label_of = lambda d: int(d.endswith(("2", "4")))  # noqa: E731
    params = {"update": "reweight", "ess_refits": False, "interval": 1000, "n_draws": 400, "screen": None}
    followed = {}
    for choose_from in ("refit", "predictive", "draws"):
        selector, session = session_on(campaign, draws, monkeypatch, choose_from=choose_from, **params)
        followed[choose_from] = judge_and_follow(session, selector, labels, 6, label_of)
        assert selector.n_fits_ == 1
        if choose_from == "predictive":
            weights = np.exp(selector.log_weights_ - selector.log_weights_.max())
    assert weights[0] == 1 and np.all(weights[1:] == 0)
    judged = [np.zeros(N_DOCS, dtype=bool) for _ in range(2)]
    judged[0][first] = True
    p = [draws[t][0].copy() for t in range(2)]
    p[0][first] = 1.0
    for (q, d), read in followed["predictive"]:
        t = int(q[1:])
        i = list(campaign.topics[t].doc_ids).index(d)
        for x, own, done in zip(read, p, judged):
            np.testing.assert_allclose(x[~done], own[~done], rtol=1e-12)  # draw 0's p
        assert (q, d) in mtc_choices(campaign, p, judged)
        judged[t][i], p[t][i] = True, float(label_of(d))
    assert [doc for doc, _ in followed["refit"]] != [doc for doc, _ in followed["predictive"]]
    assert [doc for doc, _ in followed["refit"]] == [doc for doc, _ in followed["draws"]]
    with pytest.raises(ValueError, match="choose_from"):
        SelectionSession(campaign, PosteriorSelection(choose_from="weighted"), tuple(campaign.systems))
