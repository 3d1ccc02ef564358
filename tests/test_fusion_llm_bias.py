"""FusionLLM's two settings against the bias issue 28's diagnosis names (examples/llm_evidence/,
"Where the bias comes from"): documents outside the labels' pool (``unlabelled``) and the runs'
weight on a labelled document (``runs_weight``), each on a synthetic campaign where the old
setting is biased and the new one is not."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

from relimpute.confidence import ConfidenceEngine
from relimpute.labels import read_labels, with_labels
from relimpute.measures import evaluate
from relimpute.relevance import FusionLLM
from relimpute.simulate import simulate_campaign


def _labeller(official, masks, given_relevant, given_not, rng):
    """Labels of the documents in ``masks``, drawn from the official relevance with the given
    confusion rates P(label = v | relevant), P(label = v | not)."""
    rows = []
    for topic, relevant, mask in zip(official.topics, official.relevant(), masks):
        rates = np.where(relevant[:, None], given_relevant, given_not).cumsum(axis=1)
        label = np.minimum((rng.random(topic.n_docs)[:, None] > rates).sum(axis=1), len(given_not) - 1)
        rows.append(pd.DataFrame({"query_id": topic.query_id, "doc_id": topic.doc_ids[mask],
                                  "relevance": label[mask]}))  # fmt: skip
    return read_labels(pd.concat(rows, ignore_index=True), name="sim")


def _true_map(official):
    frame = evaluate(official, ["AP"], per_topic=True, missing="zero")
    table = frame.pivot(index="query_id", columns="system", values="value")
    return table.reindex(index=list(official.query_ids), columns=list(official.systems)).fillna(0).to_numpy().mean(0)


@pytest.fixture(scope="module")
def label_pool():
    """Official qrels = a depth-20 pool, labelled entirely by a noisy labeller; humans kept for
    the depth-3 pool (the study's pool design in small)."""
    official = simulate_campaign(n_topics=20, n_systems=10, rng=11).campaign.pooled(20)
    rng = np.random.default_rng(11)
    source = _labeller(official, [t.judged for t in official.topics],
                       np.array([0.02, 0.08, 0.3, 0.6]), np.array([0.7, 0.2, 0.08, 0.02]), rng)  # fmt: skip
    return official, with_labels(official.pooled(3), [source])


def test_outside_the_labels_pool_is_nonrelevant_only_when_asked(label_pool):
    official, kept = label_pool
    named = [t.judged for t in official.topics]  # the labelled documents: the official pool
    runs = FusionLLM(fusion={"n_draws": 5}, unlabelled="runs").fit_predict(kept, rng=0)
    pool = FusionLLM(fusion={"n_draws": 5}, unlabelled="nonrelevant").fit_predict(kept, rng=0)
    assert sum(p[~n].sum() for p, n in zip(runs.p, named)) > 20  # the runs' model's extrapolation
    for t, (topic, n) in enumerate(zip(kept.topics, named)):
        np.testing.assert_array_equal(pool.p[t][~n], 0.0)
        np.testing.assert_array_equal(pool.draws[t][:, ~n], 0.0)
        np.testing.assert_array_equal(pool.p[t][n], runs.p[t][n])  # the labelled ones as before
        np.testing.assert_array_equal(pool.p[t][topic.judged], kept.relevant()[t][topic.judged])
    # a topic no source labels keeps the runs' evidence
    masks = [n & (t > 0) for t, n in enumerate(named)]
    source = _labeller(official, masks, np.array([0.5, 0.5]), np.array([0.5, 0.5]), np.random.default_rng(0))
    unlabelled_topic = with_labels(official.pooled(3), [source])
    p = FusionLLM(fusion={"n_draws": 0}, unlabelled="nonrelevant").fit_predict(unlabelled_topic, rng=0).p[0]
    assert p[~kept.topics[0].judged].sum() > 0


def test_the_pool_convention_removes_the_bias_against_pooled_qrels(label_pool):
    """Against qrels that count every document outside their pool non-relevant, the runs'
    extrapolation to those documents biases E[MAP] down; taking the labels' pool as the pool
    removes it (Monte Carlo answer, as ``relimpute compare``)."""
    official, kept = label_pool
    truth = _true_map(official)

    def mean_abs_bias(**settings):
        estimate = FusionLLM(fusion={"n_draws": 20}, runs_weight=1.0, **settings).fit_predict(kept, rng=0)
        scores = ConfidenceEngine().confidence(
            kept, estimate, n_draws=200, rng=0, method="monte carlo"
        ).scores
        e_map = scores.to_frame(0.95).set_index("system").reindex(kept.systems)["e_map"].to_numpy()
        return np.abs(e_map - truth).mean()

    runs, pool = mean_abs_bias(unlabelled="runs"), mean_abs_bias(unlabelled="nonrelevant")
    assert runs > 0.015 and pool < 0.01, (runs, pool)


def test_runs_weight_calibrates_labelled_documents_below_the_pool():
    """Labelled documents below the humans' pool, selected as NIST's pools select them (a
    depth-10 pool plus relevant-seeking picks further down): their share relevant per label
    does not fall with depth as the runs' extrapolation does. With the runs' log-odds at full
    weight (1, the old model) the label shift learned at the top leaves them far too low; at
    weight 0 (the labels' calibration alone) their expected number of relevant is right."""
    complete = simulate_campaign(n_topics=20, n_systems=10, rng=11).campaign
    rng = np.random.default_rng(11)
    masks = []
    for topic, relevant in zip(complete.topics, complete.relevant()):
        pool = topic.retrieved(None, 10)
        masks.append(pool | (topic.retrieved() & ~pool & (rng.random(topic.n_docs) < np.where(relevant, 0.6, 0.04))))
    official = complete.with_judged(masks)
    source = _labeller(official, masks, np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.6, 0.25, 0.1, 0.05]), rng)
    kept = with_labels(official.pooled(3), [source])
    hidden = [o.judged & ~k.judged for o, k in zip(official.topics, kept.topics)]
    true = sum(r[h].sum() for r, h in zip(official.relevant(), hidden))

    def expected(weight):
        model = FusionLLM(fusion={"n_draws": 0}, runs_weight=weight, run_effects_weight=weight)
        p = model.fit_predict(kept, rng=0).p
        return sum(x[h].sum() for x, h in zip(p, hidden))

    assert expected(1.0) < 0.5 * true
    assert expected(0.0) == pytest.approx(true, rel=0.1)


def test_runs_weight_zero_leaves_a_labelled_document_to_its_labels(label_pool):
    _, kept = label_pool
    model = FusionLLM(fusion={"n_draws": 0}, runs_weight=0.0, run_effects_weight=0.0)
    estimate = model.fit_predict(kept, rng=0)
    codes = kept.labels[0].align(kept)
    for topic, p, c in zip(kept.topics, estimate.p, codes):
        open_docs = (c >= 0) & ~topic.judged & topic.retrieved()
        for v in np.unique(c[open_docs]):
            assert np.ptp(p[open_docs & (c == v)]) < 1e-9  # one probability per topic and label


def test_the_run_effects_keep_their_own_weight_on_a_labelled_document(label_pool):
    """With ``run_effects_weight`` r the log-odds of a labelled, unjudged document some run
    retrieves differ from those at r = w (the runs' weight) by (r − w) Σ_j u_j / log2(1 + r_ij),
    the runs' effects (the default model's ``run_effects``) summed over the runs retrieving it,
    computed here from the rankings; in every posterior draw too; every other document, and the
    label shifts, are unchanged."""
    from scipy.special import logit

    _, kept = label_pool
    w = 0.5
    shrunk = FusionLLM(fusion={"n_draws": 6}, runs_weight=w, run_effects_weight=w).fit_predict(kept, rng=0)
    kept_whole = FusionLLM(fusion={"n_draws": 6}, runs_weight=w).fit_predict(kept, rng=0)
    u = np.array([shrunk.params["run_effects"][s] for s in kept.systems])
    assert np.ptp(u) > 0.1  # the runs differ, so the check can fail
    assert kept_whole.params["labels_sim"] == shrunk.params["labels_sim"]
    codes = kept.labels[0].align(kept)
    moved = 0
    for t, topic in enumerate(kept.topics):
        share = np.zeros(topic.n_docs)
        for j, row in enumerate(topic.ranking):
            row = row[row >= 0]
            share[row] += u[j] / np.log2(2.0 + np.arange(len(row)))
        target = (codes[t] >= 0) & ~topic.judged & topic.retrieved()
        a, b = shrunk.p[t], kept_whole.p[t]
        np.testing.assert_allclose(logit(b[target]) - logit(a[target]), (1 - w) * share[target], atol=1e-6)
        np.testing.assert_array_equal(a[~target], b[~target])
        da, db = shrunk.draws[t], kept_whole.draws[t]
        np.testing.assert_allclose(logit(db[:, target]) - logit(da[:, target]),
                                   np.broadcast_to((1 - w) * share[target], da[:, target].shape), atol=1e-6)  # fmt: skip
        moved += int(target.sum())
    assert moved > 50


def test_a_labelled_document_is_drawn_without_the_per_run_spread_below_the_pool(label_pool):
    """``labelled_beyond_run_sd`` (default 0) replaces the wrapped model's per-run spread below
    the pool (``beyond_run_sd``, 1 shipped) on a labelled document only: its draws are those of
    the model whose wrapped model has no such spread at all, every other document's draws and
    every point probability are the shipped model's, and at the wrapped model's own value
    nothing changes."""
    _, kept = label_pool
    settings = {"unlabelled": "runs"}  # so that the documents no label names keep draws of their own
    shipped = FusionLLM(fusion={"n_draws": 6}, labelled_beyond_run_sd=1.0, **settings).fit_predict(kept, rng=0)
    default = FusionLLM(fusion={"n_draws": 6}, **settings).fit_predict(kept, rng=0)
    without = FusionLLM(fusion={"n_draws": 6, "beyond_run_sd": 0.0}, **settings).fit_predict(kept, rng=0)
    codes = kept.labels[0].align(kept)
    moved = 0
    for t, topic in enumerate(kept.topics):
        named = codes[t] >= 0
        np.testing.assert_array_equal(default.p[t], shipped.p[t])
        np.testing.assert_array_equal(default.draws[t][:, ~named], shipped.draws[t][:, ~named])
        np.testing.assert_allclose(default.draws[t][:, named], without.draws[t][:, named], atol=1e-12)
        moved += int((np.abs(default.draws[t] - shipped.draws[t]) > 1e-6).any(axis=0).sum())
    assert moved > 20  # the spread was there to remove
    assert shipped.params["unlabelled"] == "runs"


def _second_prediction(fusion, campaign, spread):
    """The draws of the default model with ``beyond_run_sd`` at ``spread`` as they were got before
    ``Fusion._draws`` took the spread: a copy of the fitted model, predicted again."""
    other = copy.copy(fusion)
    other.beyond_run_sd = spread
    return other._predict(campaign)[1]


@pytest.mark.parametrize("spread", [0.0, 0.4, 1.0])
def test_the_default_models_draws_at_another_spread_are_those_of_a_second_prediction(label_pool, spread):
    """``Fusion._draws(campaign, parts, spread)`` on the parts of one ``_point`` gives, to the last
    bit, the draws a copy of the model with ``beyond_run_sd = spread`` predicts (the same θ draws,
    γ spreads and, with the carry's spread, the same stream), the model's own spread its own."""
    from relimpute.relevance import Fusion

    _, kept = label_pool
    model = Fusion(n_draws=5, beyond_run_carry=0.5, beyond_run_carry_sd=0.3).fit(kept, rng=0)
    p, params, parts = model._point(kept)
    own, other = model._draws(kept, parts), model._draws(kept, parts, spread)
    old_own, old_other = model._predict(kept)[1], _second_prediction(model, kept, spread)
    for t in range(kept.n_topics):
        np.testing.assert_array_equal(own[t], old_own[t])
        np.testing.assert_array_equal(other[t], old_other[t])
    assert spread == 1.0 or any(np.abs(own[t] - other[t]).max() > 1e-6 for t in range(kept.n_topics))


def test_the_labelled_documents_draws_are_the_second_predictions(label_pool):
    """FusionLLM's wrapped draws (labelled documents at ``labelled_beyond_run_sd``, the others at
    the wrapped model's spread) equal, to the last bit, the earlier path's: the wrapped model
    copied with that spread and predicted again; and the answer's draws are unchanged by reading
    them so (two predictions of one fit agree)."""
    _, kept = label_pool
    model = FusionLLM(fusion={"n_draws": 6}, unlabelled="runs").fit(kept, rng=0)
    designs = model._designs(kept)
    (_, draws, _), _ = model._wrapped(kept, designs)
    base, other = model.fusion_._predict(kept)[1], _second_prediction(model.fusion_, kept, 0.0)
    named = [d.getnnz(axis=1) > 0 for d in designs]
    for t in range(kept.n_topics):
        np.testing.assert_array_equal(draws[t], np.where(named[t], other[t], base[t]))
    assert sum(int(n.sum()) for n in named) > 100
    first, second = model.predict(kept), model.predict(kept)
    for t in range(kept.n_topics):
        np.testing.assert_array_equal(first.draws[t], second.draws[t])


@pytest.mark.parametrize("settings, match", [({"runs_weight": 1.5}, "runs_weight"),
                                             ({"labelled_beyond_run_sd": -1.0}, "labelled_beyond_run_sd"),
                                             ({"run_effects_weight": -0.1}, "run_effects_weight"),
                                             ({"unlabelled": "zero"}, "unlabelled"),
                                             ({"label_draws": "joint"}, "label_draws")])  # fmt: skip
def test_bad_settings_are_refused(label_pool, settings, match):
    _, kept = label_pool
    with pytest.raises(ValueError, match=match):
        FusionLLM(fusion={"n_draws": 0}, **settings).fit(kept, rng=0)


def test_conditional_label_draws_absorb_a_shift_of_the_runs_log_odds(label_pool):
    """``label_draws="conditional"`` refits the label shifts on each draw of the default model:
    a draw whose runs' log-odds are all higher by 1 on the judged, labelled documents gets label
    shifts lower by about 1 (the offset's change moves into the shifts: with w = 1 the fitted
    log-odds of those documents are unchanged), and draws at the point estimate scatter around
    the point fit."""
    from scipy.special import expit, logit

    _, kept = label_pool
    model = FusionLLM(fusion={"n_draws": 0}, runs_weight=1.0, label_draws="conditional").fit(kept, rng=0)
    raw, _, _ = model.fusion_._predict(kept)
    designs = model._designs(kept)
    n = 60
    shifted = [np.stack([q] * (n // 2) + [expit(logit(np.clip(q, 1e-9, 1 - 1e-9)) + 1.0)] * (n // 2)) for q in raw]
    gamma = model._conditional_draws(kept, designs, raw, shifted, np.random.default_rng(0))
    assert gamma.shape == (n, len(model.coef_))
    fitted = [t.judged & (d.getnnz(axis=1) > 0) & (q > 0) & (q < 1) for d, t, q in zip(designs, kept.topics, raw)]
    judged = np.concatenate([(d @ gamma[:, :-1].T)[f] for d, f in zip(designs, fitted)])  # (m, n) label shifts
    at_point, at_shift = judged[:, : n // 2].mean(), judged[:, n // 2 :].mean()
    assert at_point - at_shift == pytest.approx(1.0, abs=0.15)
    point = np.concatenate([(d @ model.coef_[:-1])[f] for d, f in zip(designs, fitted)])
    assert at_point == pytest.approx(point.mean(), abs=0.15)
