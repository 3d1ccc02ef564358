"""The campaign data model: trec_eval ordering, alignment, subsets, judgments."""

import numpy as np
import pandas as pd
import pytest

from relimpute.data import Campaign


def _campaign(**kwargs):
    qrels = pd.DataFrame(
        {"query_id": ["1", "1", "1", "2"], "doc_id": ["a", "b", "z", "c"], "relevance": [1, 0, 2, -1]}
    )
    runs = {
        "r1": pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "c", "b"], "score": [1.0, 2.0, 1.0]}),
        "r2": pd.DataFrame({"query_id": ["2", "1"], "doc_id": ["c", "d"], "score": [0.5, 0.1]}),
    }
    return Campaign.from_frames(qrels, runs, **kwargs)


def test_rankings_follow_trec_eval_order():
    with pytest.warns(UserWarning, match="retrieves nothing"):
        c = _campaign()
    t = c.topics[0]
    # score descending, ties broken by docno descending: c (2.0), then b before a.
    assert list(t.doc_ids[t.ranking[0, : t.depth[0]]]) == ["c", "b", "a"]
    assert list(t.depth) == [3, 1]
    assert t.ranking[1, 1] == -1


def test_document_index_is_union_of_runs_and_qrels():
    with pytest.warns(UserWarning):
        c = _campaign()
    t1, t2 = c.topics
    assert set(t1.doc_ids) == {"a", "b", "c", "d", "z"}
    assert t1.judged.tolist() == [d in {"a", "b", "z"} for d in t1.doc_ids]
    # -1 = pooled but unjudged
    assert not t2.judged.any()
    assert c.relevant()[0].tolist() == [d in {"a", "z"} for d in t1.doc_ids]


def test_missing_topic_is_noted():
    with pytest.warns(UserWarning, match="r1.*retrieves nothing for 1"):
        c = _campaign()
    assert any("r1" in n for n in c.notes)
    assert c.coverage().tolist() == [[True, False], [True, True]]


def test_subset_and_hidden_judgments():
    with pytest.warns(UserWarning):
        c = _campaign(rel_threshold=2)
    s = c.subset(["r2"])
    assert s.systems == ("r2",) and s.topics[0].ranking.shape == (1, 1)
    hide = [np.zeros(t.n_docs, bool) for t in c.topics]
    h = c.with_judged(hide)
    assert not any(t.judged.any() for t in h.topics)
    assert c.relevant()[0].sum() == 1  # only 'z' at rel >= 2
    with pytest.raises(ValueError, match="cannot mark unjudged"):
        h.with_judged([np.ones(t.n_docs, bool) for t in h.topics])


def test_round_trip_frames():
    with pytest.warns(UserWarning):
        c = _campaign()
    q = c.qrels_frame()
    assert sorted(q["doc_id"]) == ["a", "b", "z"]
    run = c.run_frame("r1")
    assert list(run["doc_id"]) == ["c", "b", "a"]


def test_dl19_loads(dl19):
    assert dl19.n_systems == 37 and dl19.n_topics == 43
    assert sum(int(t.judged.sum()) for t in dl19.topics) == 9260
    assert sum(int(r.sum()) for r in dl19.relevant()) == 2501
