"""R counts the documents a label source names (issue 28): the mask, its callers, an oracle.

A document NIST judged but no run retrieves is relevant in the official R; once its
judgment is hidden, the campaign still knows it exists when a label source names it, so
E[R] counts it by its probability. Oracle: every relevance vector of the counted documents
enumerated on a tiny campaign, against the exact engine and Monte Carlo.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pandas as pd
import pytest
from conftest import make_campaign

from relimpute.confidence import ConfidenceEngine, counted_documents, relevant_moments
from relimpute.data import Campaign
from relimpute.labels import labelled_documents, read_labels, with_labels
from relimpute.measures import parse_measure
from relimpute.relevance import FusionLLM, RelevanceEstimate, Uniform
from relimpute.selection.base import SelectionState
from relimpute.simulate import simulate_campaign

# topic q1: runs A and B retrieve d1-d5; d6, d7, d8 are judged but retrieved by no run
RUNS = {
    "A": [("q1", "d1"), ("q1", "d2"), ("q1", "d3"), ("q1", "d4"), ("q2", "e1"), ("q2", "e2")],
    "B": [("q1", "d3"), ("q1", "d5"), ("q1", "d1"), ("q2", "e2"), ("q2", "e3")],
}
QRELS = [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d6", 1), ("q1", "d7", 0), ("q1", "d8", 1),
         ("q2", "e1", 1), ("q2", "e4", 1)]  # fmt: skip
#: hidden: the judgments of d6, d7, d8 (q1) and e1 (q2); labelled: d3, d6, d7 (q1)
HIDDEN = {("q1", "d6"), ("q1", "d7"), ("q1", "d8"), ("q2", "e1")}
LABELLED = [("q1", "d3", 2), ("q1", "d6", 3), ("q1", "d7", 0)]
#: the estimate's p of each unjudged document (d8 and e4's are never counted)
P = {"d3": 0.6, "d4": 0.3, "d5": 0.5, "d6": 0.7, "d7": 0.2, "d8": 0.9, "e1": 0.4, "e2": 0.25, "e3": 0.8}


def _campaign() -> Campaign:
    runs = {
        name: {q: [d for t, d in rows if t == q] for q, _ in rows} for name, rows in RUNS.items()
    }
    return make_campaign(QRELS, runs, hidden=HIDDEN)


@pytest.fixture(scope="module")
def tiny():
    bare = _campaign()
    source = read_labels(pd.DataFrame(LABELLED, columns=["query_id", "doc_id", "relevance"]), name="llm")
    labelled = with_labels(bare, [source])
    p = tuple(
        np.array([float(t.relevant(1)[i]) if t.judged[i] else P[d] for i, d in enumerate(t.doc_ids)])
        for t in bare.topics
    )  # fmt: skip
    estimate = RelevanceEstimate(bare.query_ids, tuple(t.doc_ids for t in bare.topics), p, model="fixed")
    return bare, labelled, estimate


def _enumerate(campaign, estimate, measure="AP"):
    """Per topic and system: E[score], Var[score], E[R] and E[AP·R] over every relevance vector of
    the counted unjudged documents (independent Bernoulli(p)); AP = Σ precision at the relevant
    retrieved ranks / R (0 when R = 0), other measures by their scorer."""
    named = labelled_documents(campaign) or [None] * campaign.n_topics
    out = []
    for topic, p, mask in zip(campaign.topics, estimate.p, named):
        counted = counted_documents(topic, None, None, mask)
        free = np.flatnonzero(counted & ~topic.judged)
        base = topic.relevant(1) & counted
        moments = np.zeros((topic.ranking.shape[0], 4))
        for bits in itertools.product((0, 1), repeat=len(free)):
            rel = base.copy()
            rel[free] = np.array(bits, dtype=bool)
            weight = float(np.prod(np.where(bits, p[free], 1 - p[free])))
            r = rel.sum()
            for s, row in enumerate(topic.ranking):
                row = row[row >= 0]
                if measure == "AP":
                    hits = np.cumsum(rel[row])
                    score = float(np.sum(rel[row] * hits / np.arange(1, len(row) + 1)) / r) if r else 0.0
                else:
                    score = float(parse_measure(measure).score(row[None, :], rel[None, :].astype(np.int64),
                                                               rel_threshold=1)[0, 0])  # fmt: skip
                moments[s] += weight * np.array([score, score**2, r, score * r])
        moments[:, 1] -= moments[:, 0] ** 2
        out.append(moments)
    return np.stack(out, axis=1)  # (S, T, 4)


def test_without_labels_the_mask_is_judged_or_retrieved(tiny):
    bare, labelled, _ = tiny
    assert labelled_documents(bare) is None
    for topic, depth in itertools.product(bare.topics, (None, 2)):
        np.testing.assert_array_equal(
            counted_documents(topic, None, depth), topic.judged | topic.retrieved(None, depth)
        )
    q1, named = labelled.topics[0], labelled_documents(labelled)[0]
    assert list(q1.doc_ids[named]) == ["d3", "d6", "d7"]
    counted = counted_documents(q1, None, None, named)
    assert list(q1.doc_ids[counted & ~q1.judged]) == ["d3", "d4", "d5", "d6", "d7"]  # not d8
    with pytest.raises(ValueError, match="labelled has shape"):
        counted_documents(q1, None, None, named[:-1])


def test_labels_on_counted_documents_change_no_answer():
    """Labels only on documents a run retrieves or a human judged: every answer bit-identical to
    the campaign's without labels (exact, Monte Carlo, a generic measure, the selection state)."""
    bare = simulate_campaign(n_topics=4, n_systems=5, rng=2).campaign.truncated(40).pooled(5)
    counted = [t.judged | t.retrieved() for t in bare.topics]
    rows = [pd.DataFrame({"query_id": t.query_id, "doc_id": t.doc_ids[c], "relevance": 1}) for t, c in zip(bare.topics, counted)]  # fmt: skip
    labelled = with_labels(bare, [read_labels(pd.concat(rows), name="llm")])
    estimate = Uniform(0.3).fit_predict(bare)
    engine = ConfidenceEngine(ratio="delta")
    a, b = engine.confidence(
        bare, estimate, method="normal"
    ), engine.confidence(labelled, estimate, method="normal")
    np.testing.assert_array_equal(a.scores.e_ap, b.scores.e_ap)
    np.testing.assert_array_equal(a.var_delta_map, b.var_delta_map)
    for measure in ("AP", "nDCG@10"):
        a = engine.confidence(
            bare, estimate, n_draws=50, rng=4, measure=measure, method="monte carlo"
        )
        b = engine.confidence(
            labelled, estimate, n_draws=50, rng=4, measure=measure, method="monte carlo"
        )
        np.testing.assert_array_equal(a.scores.draws, b.scores.draws)
    systems = list(bare.systems)  # the selection state counts what the compared runs retrieve
    for x, y in zip(SelectionState(bare, systems).counted, SelectionState(labelled, systems).counted):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("ratio", ["constant", "delta"])
def test_exact_engine_counts_labelled_documents_by_enumeration(tiny, ratio):
    """E[AP] = E[Q] / E[R] of the exact engine, with Q = AP·R and R over judged, retrieved and
    labelled documents, by enumeration; without the labels d6 and d7 are not counted."""
    bare, labelled, estimate = tiny
    for campaign in (labelled, bare):
        m = _enumerate(campaign, estimate)
        got = ConfidenceEngine(ratio=ratio).confidence(
            campaign, estimate, pairs=[], method="normal"
        ).scores
        np.testing.assert_allclose(got.e_ap, m[..., 3] / m[..., 2], rtol=1e-12)
    e_r, _ = relevant_moments(labelled.topics[0], estimate.p[0], labelled=labelled_documents(labelled)[0])
    assert e_r == pytest.approx(1 + 0.6 + 0.3 + 0.5 + 0.7 + 0.2)  # d1 judged relevant, d2 not
    assert not np.allclose(_enumerate(labelled, estimate)[..., 0], _enumerate(bare, estimate)[..., 0], atol=0.02)


@pytest.mark.parametrize("measure", ["AP", "nDCG@3"])
def test_monte_carlo_counts_labelled_documents_by_enumeration(tiny, measure):
    """Monte Carlo E[score] per system and topic within 4 standard errors of the enumerated mean,
    with and without the labels (whose answers differ by far more than that)."""
    bare, labelled, estimate = tiny
    n = 40_000
    means = []
    for campaign in (labelled, bare):
        m = _enumerate(campaign, estimate, measure)
        got = ConfidenceEngine().confidence(
            campaign, estimate, n_draws=n, rng=11, measure=measure, method="monte carlo"
        )
        assert np.all(np.abs(got.scores.e_ap - m[..., 0]) <= 4 * np.sqrt(m[..., 1] / n) + 1e-12)
        means.append(m[..., 0])
    assert np.abs(means[0] - means[1]).max() > 0.05


def test_the_selection_state_counts_labelled_documents(tiny):
    bare, labelled, _ = tiny
    state = SelectionState(labelled, ["A", "B"])
    q1 = labelled.topics[0]
    assert list(q1.doc_ids[state.counted[0] & ~q1.judged]) == ["d3", "d4", "d5", "d6", "d7"]
    assert state.counted[0].sum() == SelectionState(bare, ["A", "B"]).counted[0].sum() + 2


def test_fusion_llm_gives_unretrieved_labelled_documents_the_labels_calibration():
    """A labelled, unjudged document no run retrieves gets the labels' probability alone: with one
    source and topics pooled (label_topic_sd 0), the share of the judged documents with its label
    that are relevant (within the prior's pull); its draws vary; judged ones keep their label."""
    truth = simulate_campaign(n_topics=12, n_systems=8, rng=5).campaign.truncated(30)
    rng = np.random.default_rng(5)
    rows = []
    for topic, relevant in zip(truth.topics, truth.relevant()):
        label = np.where(relevant, rng.choice(4, topic.n_docs, p=[0.1, 0.2, 0.3, 0.4]),
                         rng.choice(4, topic.n_docs, p=[0.6, 0.25, 0.1, 0.05]))  # fmt: skip
        rows.append(pd.DataFrame({"query_id": topic.query_id, "doc_id": topic.doc_ids, "relevance": label}))
    source = read_labels(pd.concat(rows, ignore_index=True), name="sim")
    kept = with_labels(truth.pooled(10), [source])
    estimate = FusionLLM(fusion={"n_draws": 30}, label_topic_sd=0.0).fit_predict(kept, rng=0)
    codes = source.align(kept)
    judged_v = np.concatenate([c[t.judged] for c, t in zip(codes, kept.topics)])
    judged_y = np.concatenate([r[t.judged] for r, t in zip(kept.relevant(), kept.topics)])
    alone = [~t.retrieved() & ~t.judged for t in kept.topics]
    assert sum(a.sum() for a in alone) > 1000
    for v in range(4):
        share = judged_y[judged_v == v].mean()
        got = np.concatenate([p[a & (c == v)] for p, a, c in zip(estimate.p, alone, codes)])
        np.testing.assert_allclose(got, share, atol=0.03)
        assert estimate.params["labels_alone_sim"][str(v)] == pytest.approx(got[0])
    draws = estimate.draws[0][:, alone[0]]
    assert np.ptp(draws, axis=0).min() > 0
    np.testing.assert_allclose(draws.mean(axis=0), estimate.p[0][alone[0]], atol=0.05)
    judged_unretrieved = dataclasses.replace(kept, topics=tuple(
        dataclasses.replace(t, judged=t.judged | (~t.retrieved() & (np.arange(t.n_docs) % 7 == 0)))
        for t in kept.topics))  # fmt: skip
    p = FusionLLM(fusion={"n_draws": 0}).fit_predict(judged_unretrieved, rng=0).p
    for t, pt, r in zip(judged_unretrieved.topics, p, judged_unretrieved.relevant()):
        np.testing.assert_array_equal(pt[t.judged], r[t.judged])


def test_a_label_blind_calibration_strategy_answers_as_without_labels():
    """In a calibration trial the labels are for the strategies that read them: MTC (p = ½)
    judges and answers exactly as on the campaign without labels, although labels name
    documents no run retrieves (which would count at ½ in its R)."""
    from relimpute.calibration import run_trial, trial_specs
    from relimpute.calibration.strategies import resolve_strategies

    truth = simulate_campaign(n_topics=6, n_systems=5, rng=8).campaign.truncated(20, shrink=True)
    rows = [pd.DataFrame({"query_id": t.query_id, "doc_id": t.doc_ids, "relevance": t.grades}) for t in truth.topics]
    labelled = with_labels(truth, [read_labels(pd.concat(rows), name="llm")])
    assert any((~t.retrieved()).any() for t in labelled.topics)
    spec = trial_specs(truth.systems, 1, 4, 2, seed=3)[0]
    strategies = resolve_strategies("mtc")
    plain = run_trial(truth, spec, strategies, max_judgments=40)
    with_them = run_trial(labelled, spec, strategies, max_judgments=40)
    for a, b in zip(plain, with_them):
        pd.testing.assert_frame_equal(a.drop(columns="seconds", errors="ignore"),
                                      b.drop(columns="seconds", errors="ignore"))  # fmt: skip
    hidden = [np.zeros(t.n_docs, dtype=bool) for t in truth.topics]
    bare, named = truth.with_judged(hidden), labelled.with_judged(hidden)
    estimate = Uniform(0.5).fit_predict(bare)
    engine = ConfidenceEngine()
    assert not np.allclose(engine.confidence(bare, estimate, pairs=[], method="normal").scores.e_map,
                           engine.confidence(named, estimate, pairs=[], method="normal").scores.e_map)  # fmt: skip
