"""The measures added for trec_eval users against trec_eval itself (pytrec_eval) and gdeval.

RR, R@k, Success@k, NumRet / NumRel / NumRelRet, Bpref and infAP (and AP,
P@10, Rprec, nDCG@10) equal pytrec_eval per run and topic to 1e-9 on every
DL 2019 run (rel >= 2) and on five TREC-8 ad hoc runs chosen for their shapes (the best and worst MAP, the
shortest lists, an unpooled run); ERR@k equals gdeval.pl (through ir_measures,
which prints 5 decimals). A synthetic collection checks trec_eval's handling
of unjudged documents and of negative qrels labels, which neither real
collection has. Reference input: scores = -rank, so the tools see exactly
the campaign's order (the order itself is tested in test_measures_compat.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import make_campaign

from relimpute.data import Campaign
from relimpute.measures import evaluate

pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")

TOL = 1e-9

# relimpute name -> trec_eval name
TREC_EVAL = {
    "RR": "recip_rank",
    "R@10": "recall_10",
    "R@100": "recall_100",
    "Success@1": "success_1",
    "Success@10": "success_10",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
    "Bpref": "bpref",
    "infAP": "infAP",
    # the measures relimpute had before, for TREC-8 (DL 2019: test_measures_compat.py)
    "AP": "map",
    "AP@100": "map_cut_100",
    "P@10": "P_10",
    "Rprec": "Rprec",
    "nDCG@10": "ndcg_cut_10",
}
PYTREC_MEASURES = {
    "map",
    "map_cut.100",
    "P.10",
    "Rprec",
    "ndcg_cut.10",
    "recip_rank",
    "recall.10,100",
    "success.1,10",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "bpref",
    "infAP",
}
# READWARE2: best MAP, lists of 6-493; isa25: worst MAP; disco1: 1-1000 documents;
# CL99SD, ibmg99c: ordinary and short lists (see the data README)
TREC8_RUNS = ["READWARE2", "isa25", "CL99SD", "disco1", "ibmg99c"]


def _qrels_dict(campaign):
    return {
        t.query_id: {d: int(g) for d, g in zip(t.doc_ids[t.judged], t.grades[t.judged])}
        for t in campaign.topics
    }


def _run_dict(campaign, s):
    """Run ``s`` as {query_id: {doc_id: -rank}} in the campaign's order."""
    return {
        t.query_id: {
            d: -float(r) for r, d in enumerate(t.doc_ids[t.ranking[s, : t.depth[s]]], start=1)
        }
        for t in campaign.topics
        if t.depth[s] > 0
    }


def _reference(campaign, qrels, level):
    """pytrec_eval's per-topic values as a Series indexed (system, query_id, measure)."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES, relevance_level=level)
    rows = {}
    for s, name in enumerate(campaign.systems):
        for qid, values in evaluator.evaluate(_run_dict(campaign, s)).items():
            for ours, theirs in TREC_EVAL.items():
                rows[(name, qid, ours)] = values[theirs]
    return pd.Series(rows)


def _assert_equal(campaign, reference):
    ours = evaluate(campaign, list(TREC_EVAL), per_topic=True)
    ours = ours.set_index(["system", "query_id", "measure"])["value"]
    assert len(ours) == len(reference) == campaign.n_systems * campaign.n_topics * len(TREC_EVAL)
    diff = (ours - reference.reindex(ours.index)).abs()
    assert diff.notna().all()
    worst = diff.groupby(level="measure").max()
    assert (worst <= TOL).all(), worst[worst > TOL]
    return ours


@pytest.mark.shared_data
def test_dl19_every_run_and_topic_equals_trec_eval(dl19):
    ours = _assert_equal(dl19, _reference(dl19, _qrels_dict(dl19), 2))
    # the comparison is not vacuous: every measure varies across runs and topics
    assert (ours.groupby(level="measure").std() > 0).loc[list(TREC_EVAL)].drop("NumRel").all()


def _trec8(runs=None):
    """TREC-8 ad hoc with the given run names (all runs when None); skips when absent."""
    from conftest import SHARED_DATA

    root = SHARED_DATA / "trec-8-adhoc"
    if not (root / "qrels.txt").is_file():
        pytest.skip(f"TREC-8 ad hoc data not found at {root}")
    files = root / "runs" if runs is None else [root / "runs" / f"{name}.gz" for name in runs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Campaign.from_files(root / "qrels.txt", files, rel_threshold=1)


@pytest.fixture(scope="module")
def trec8():
    return _trec8(TREC8_RUNS)


@pytest.mark.shared_data
def test_trec8_runs_equal_trec_eval(trec8):
    ours = _assert_equal(trec8, _reference(trec8, _qrels_dict(trec8), 1))
    # unpooled documents are plentiful below rank 100: Bpref and infAP differ from AP there
    ap = evaluate(trec8, ["AP", "Bpref", "infAP"]).pivot(
        index="system", columns="measure", values="value"
    )
    assert (ap["Bpref"] - ap["AP"]).abs().max() > 0.01
    assert ours.xs("NumRet", level="measure").min() == 1  # disco1 retrieves a single document


@pytest.mark.slow
@pytest.mark.shared_data
def test_all_trec8_runs_equal_trec_eval():
    """All 129 runs (about 30 s: loading 6.3 M run lines is most of it)."""
    every = _trec8()
    assert every.n_systems == 129
    _assert_equal(every, _reference(every, _qrels_dict(every), 1))


@pytest.mark.shared_data
def test_err_equals_gdeval(dl19):
    ours = evaluate(dl19, ["ERR@20", "ERR@10", "ERR"], per_topic=True)
    ours = ours.set_index(["system", "query_id", "measure"])["value"]
    qrels = _qrels_dict(dl19)
    measures = [ir_measures.ERR @ 20, ir_measures.ERR @ 10, ir_measures.ERR @ 1000]
    checked = 0
    for s in range(0, dl19.n_systems, 6):  # gdeval is a perl process per call
        name = dl19.systems[s]
        for metric in ir_measures.iter_calc(measures, qrels, _run_dict(dl19, s)):
            key = str(metric.measure).replace("@1000", "")  # DL 2019 runs hold 1000 documents
            assert abs(ours[(name, metric.query_id, key)] - metric.value) <= 5e-6 + 1e-12
            checked += 1
    assert checked == 7 * 43 * 3


# A topic where the pool was sampled: documents judged relevant (2, 1), nonrelevant (0),
# in the pool but unjudged (-2), outside the pool (no line), and one topic without
# relevant documents.
SYNTHETIC_QRELS = [
    ("1", "a", 2),
    ("1", "b", 0),
    ("1", "c", 1),
    ("1", "d", -2),
    ("1", "e", 0),
    ("1", "f", 1),
    ("1", "g", -2),
    ("1", "h", 0),
    ("1", "z", 1),  # relevant, retrieved by no run
    ("2", "a", 0),
    ("2", "b", -2),
]
SYNTHETIC_RUNS = {
    "mixed": {"1": "x d b a y c g e f h", "2": "a b c"},
    "unjudged_first": {"1": "x y d g a c f", "2": "c b"},
    "nonrelevant_first": {"1": "b e h a c f z", "2": "a"},
}


def _synthetic(qrels_lines):
    runs = {
        name: {q: docs.split() for q, docs in topics.items()}
        for name, topics in SYNTHETIC_RUNS.items()
    }
    return make_campaign(qrels_lines, runs, rel_threshold=1)


def test_negative_labels_and_unjudged_documents_as_trec_eval():
    """trec_eval: a negative label is 'in the pool, unjudged'; no line is 'outside the pool'."""
    campaign = _synthetic(SYNTHETIC_QRELS)
    qrels = {}
    for q, d, rel in SYNTHETIC_QRELS:
        qrels.setdefault(q, {})[d] = rel
    ours = _assert_equal(campaign, _reference(campaign, qrels, 1))
    # the cases differ: a -2 document is skipped by bpref but counts as pooled for infAP
    assert ours[("unjudged_first", "1", "infAP")] != ours[("unjudged_first", "1", "Bpref")]
    assert ours[("mixed", "2", "NumRel")] == 0 and ours[("mixed", "2", "Bpref")] == 0


def test_label_minus_one_is_pooled_but_unjudged_as_trec_eval(tmp_path):
    """A -1 line is a pooled-but-unjudged document: unjudged for every measure, in the
    pool for infAP, as trec_eval reads it; and it survives a round trip through files."""
    minus_one = [(q, d, -1 if rel == -2 else rel) for q, d, rel in SYNTHETIC_QRELS]
    campaign = _synthetic(minus_one)
    qrels = {}
    for q, d, rel in minus_one:
        qrels.setdefault(q, {})[d] = rel
    ours = _assert_equal(campaign, _reference(campaign, qrels, 1))
    # the pooled documents raise infAP's precision estimate above that of a pool without them
    without = _synthetic([line for line in minus_one if line[2] != -1])
    theirs = evaluate(without, ["infAP"], per_topic=True).set_index(["system", "query_id"])
    assert ours[("unjudged_first", "1", "infAP")] != theirs.loc[("unjudged_first", "1"), "value"]
    assert not campaign.topics[0].judged[list(campaign.topics[0].doc_ids).index("d")]
    qrels_path, runs_dir = campaign.to_files(tmp_path)
    again = Campaign.from_files(qrels_path, runs_dir, rel_threshold=1)
    def scores(c):
        table = evaluate(c, ["infAP", "Bpref", "AP"], per_topic=True)
        return table.set_index(["system", "query_id", "measure"])["value"].sort_index()

    pd.testing.assert_series_equal(scores(again), scores(campaign))


@pytest.mark.parametrize("name", [*TREC_EVAL, "ERR@5", "RR@3"])
def test_draw_axis_equals_scoring_each_draw(name, rng):
    """(B, n) labels score as the B rows one at a time (the Monte Carlo path relies on it)."""
    from relimpute.measures import parse_measure

    n, depth = 30, 12
    ranking = np.stack([rng.permutation(n)[:depth] for _ in range(4)])
    ranking[1, 7:] = -1  # a shorter list
    ranking[2, :] = -1  # an empty one
    labels = rng.integers(-2, 4, size=(6, n))
    labels[0] = 0  # a draw without relevant documents
    judged = rng.random(n) < 0.7
    measure = parse_measure(name)
    together = measure.score(ranking, labels, judged=judged, rel_threshold=2)
    one_by_one = np.stack(
        [measure.score(ranking, row, judged=judged, rel_threshold=2) for row in labels]
    )
    np.testing.assert_array_equal(together, one_by_one)
    assert together.shape == (6, 4) and np.isfinite(together).all()
