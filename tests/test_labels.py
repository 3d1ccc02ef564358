"""Label files (relimpute.labels): read with the library's readers, checked against the campaign."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from relimpute.data import Campaign
from relimpute.errors import InputError
from relimpute.labels import UNKNOWN_DOCUMENTS, read_labels, with_labels

QRELS = pd.DataFrame(
    [("1", "d1", 1), ("1", "d2", 0), ("2", "e1", 0)], columns=["query_id", "doc_id", "relevance"]
)
RUNS = {
    "A": pd.DataFrame(
        [("1", "d1", 3.0), ("1", "d3", 2.0), ("2", "e1", 1.0), ("2", "e2", 0.5)],
        columns=["query_id", "doc_id", "score"],
    )
}
CAMPAIGN = Campaign.from_frames(QRELS, RUNS)


def _file(tmp_path, text: str, name: str = "llm.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_graded_labels_become_categories(tmp_path):
    source = read_labels(_file(tmp_path, "1 0 d1 3\n1 0 d3 0\n2 0 e2 2\n", "umbrela-x.txt"))
    assert (source.name, source.scale, source.categories) == ("umbrela-x", "graded", ("0", "2", "3"))
    codes = source.align(CAMPAIGN)
    topic = CAMPAIGN.topics[0]
    got = dict(zip(topic.doc_ids, codes[0]))
    assert got == {"d1": 2, "d2": -1, "d3": 0}  # d2 has no label
    assert list(codes[1][CAMPAIGN.topics[1].doc_ids == "e2"]) == [1]


def test_binary_labels_have_both_categories_even_if_one_is_unused(tmp_path):
    source = read_labels(_file(tmp_path, "1 0 d1 1\n1 0 d3 1\n", "binary-llama3.2.txt"))
    assert source.scale == "binary" and source.categories == ("0", "1")
    assert source.name == "binary-llama3.2"  # a dot inside the name stays


def test_probability_labels_are_binned(tmp_path):
    text = "query_id\tdoc_id\tprobability\n1\td1\t0.95\n1\td3\t0.05\n2\te1\t1.0\n2\te2\t0.2\n"
    source = read_labels(_file(tmp_path, text))
    assert source.scale == "probability" and len(source.categories) == 5
    assert source.frame["category"].tolist() == [4, 0, 4, 1]  # 1.0 in the last bin, 0.2 in [0.2, 0.4)


@pytest.mark.parametrize(
    "text, line, problem",
    [
        ("1 0 d1 1\n1 0 d3 x\n", 2, "relevance"),  # the qrels reader's own error
        ("1 0 d1 1\n1 0 d3 -1\n", 2, "grades >= 0"),
        ("1 0 d1 1 extra\n", 1, "4 fields"),
        ("1\td1\t1.5\n", 1, r"outside \[0, 1\]"),
    ],
)
def test_bad_lines_are_located(tmp_path, text, line, problem):
    path = _file(tmp_path, text)
    with pytest.raises(InputError, match=problem) as info:
        read_labels(path)
    assert info.value.source == str(path) and info.value.line == line


def test_a_scale_with_too_many_grades_is_refused(tmp_path):
    text = "".join(f"1 0 d{i} {i}\n" for i in range(11))
    with pytest.raises(InputError, match="at most 10 grades"):
        read_labels(_file(tmp_path, text))


def test_labels_for_a_topic_or_document_the_campaign_lacks_are_located(tmp_path):
    path = _file(tmp_path, "1 0 d1 1\n9 0 d1 1\n")
    with pytest.raises(InputError, match="topic '9', which the campaign lacks") as info:
        with_labels(CAMPAIGN, [path])
    assert (info.value.source, info.value.line) == (str(path), 2)
    for policy in UNKNOWN_DOCUMENTS:  # an unknown topic is an error whatever the policy
        with pytest.raises(InputError, match="topic '9'"):
            with_labels(CAMPAIGN, [path], unknown_documents=policy)
    path = _file(tmp_path, "1 0 d1 1\n2 0 e1 0\n2 0 zz 1\n")
    with pytest.raises(InputError, match="document 'zz' of topic '2'") as info:
        with_labels(CAMPAIGN, [path], unknown_documents="error")
    assert info.value.line == 3
    with pytest.raises(ValueError, match="unknown_documents must be one of"):
        with_labels(CAMPAIGN, [path], unknown_documents="ignore")


def test_labels_on_unknown_documents_add_them_or_are_dropped(tmp_path):
    """By default a label on a document the campaign lacks adds it, unjudged and retrieved by no
    run, in docno order (the campaign built from qrels listing it, its judgment then hidden);
    ``"drop"`` sets the label aside and leaves the campaign as it was."""
    path = _file(tmp_path, "1 0 d1 1\n1 0 a9 2\n2 0 zz 1\n2 0 e2 0\n1 0 d9 0\n")
    added = with_labels(CAMPAIGN, [path])
    listing = pd.concat([QRELS, pd.DataFrame([("1", "a9", 0), ("1", "d9", 0), ("2", "zz", 0)],
                                             columns=QRELS.columns)])  # fmt: skip
    full = Campaign.from_frames(listing, RUNS)
    hidden = full.with_judged(
        [t.judged & ~np.isin(t.doc_ids, ["a9", "d9", "zz"]) for t in full.topics]
    )
    for a, b in zip(added.topics, hidden.topics):
        assert list(a.doc_ids) == list(b.doc_ids)
        for name in ("grades", "judged", "ranking", "depth"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert list(added.topics[0].doc_ids) == ["a9", "d1", "d2", "d3", "d9"]
    assert not added.topics[0].retrieved()[[0, 4]].any() and added.topics[0].ranking[0, 0] == 1
    assert [len(s.frame) for s in added.labels] == [5]
    dropped = with_labels(CAMPAIGN, [path], unknown_documents="drop")
    assert [list(t.doc_ids) for t in dropped.topics] == [list(t.doc_ids) for t in CAMPAIGN.topics]
    assert dropped.labels[0].frame["doc_id"].tolist() == ["d1", "e2"]


def test_with_documents_keeps_what_it_holds_and_refuses_unknown_topics():
    grown = CAMPAIGN.with_documents({"2": ["e1", "e0", "e0"]})
    assert list(grown.topics[1].doc_ids) == ["e0", "e1", "e2"]
    assert list(grown.topics[1].judged) == [False, True, False]
    assert grown.topics[0] is CAMPAIGN.topics[0]
    with pytest.raises(KeyError, match="unknown topic"):
        CAMPAIGN.with_documents({"7": ["x"]})


def test_two_sources_need_two_names(tmp_path):
    a = _file(tmp_path, "1 0 d1 1\n")
    (tmp_path / "b").mkdir()
    b = _file(tmp_path, "1 0 d3 0\n", "b/llm.tsv")
    with pytest.raises(InputError, match="two label sources named 'llm'") as info:
        with_labels(CAMPAIGN, [a, b])
    assert f"({a} and {b})" in str(info.value)  # both files named, so the user knows which


def test_a_fit_output_file_with_grade_columns_is_a_probability_source(tmp_path):
    # `relimpute fit -o` writes p_ge_<grade> columns after the three of probabilistic qrels
    text = "query_id\tdoc_id\tprobability\tp_ge_1\tp_ge_2\n1\td1\t0.9\t0.95\t0.9\n2\te2\t0.1\t0.3\t0.1\n"
    source = read_labels(_file(tmp_path, text, "est.tsv"))
    assert (source.name, source.scale) == ("est", "probability")
    assert source.frame["category"].tolist() == [4, 0]  # binned by the probability column


def test_the_campaign_keeps_its_labels_through_with_judged_and_subset(tmp_path):
    labelled = with_labels(CAMPAIGN, [_file(tmp_path, "1 0 d1 1\n2 0 e2 0\n")])
    hidden = labelled.with_judged([np.zeros(t.n_docs, bool) for t in labelled.topics])
    assert hidden.labels == labelled.labels and len(hidden.labels) == 1
    assert CAMPAIGN.labels == ()  # the original is unchanged


def test_a_topic_out_of_docno_order_gets_its_added_documents_at_the_end():
    from dataclasses import replace

    t = CAMPAIGN.topics[0]  # d1 d2 d3, A ranks d1 d3
    order = np.array([2, 0, 1])  # d3 d1 d2
    back = np.argsort(order)
    shuffled = replace(t, doc_ids=t.doc_ids[order], grades=t.grades[order], judged=t.judged[order],
                       ranking=np.where(t.ranking >= 0, back[np.maximum(t.ranking, 0)], -1).astype(np.int32))  # fmt: skip
    campaign = replace(CAMPAIGN, topics=(shuffled, *CAMPAIGN.topics[1:]))
    grown = campaign.with_documents({"1": ["a0"]}).topics[0]
    assert list(grown.doc_ids) == ["d3", "d1", "d2", "a0"]
    assert list(grown.doc_ids[grown.ranking[0]]) == ["d1", "d3"] and not grown.judged[3]


def test_shrinking_keeps_the_labelled_documents_so_every_score_stays():
    """``truncated(depth, shrink=True)`` keeps the documents a label source names (R counts
    them): E[MAP] equals the unshrunk campaign's; without labels it drops what it dropped."""
    from relimpute.confidence import ConfidenceEngine
    from relimpute.relevance import Uniform
    from relimpute.simulate import simulate_campaign

    truth = simulate_campaign(n_topics=3, n_systems=4, rng=1).campaign.pooled(3)
    rows = [pd.DataFrame({"query_id": t.query_id, "doc_id": t.doc_ids[::3], "relevance": 1}) for t in truth.topics]
    labelled = with_labels(truth, [read_labels(pd.concat(rows), name="llm")])
    cut, shrunk = labelled.truncated(5), labelled.truncated(5, shrink=True)
    assert sum(t.n_docs for t in shrunk.topics) < sum(t.n_docs for t in cut.topics)
    for topic, kept in zip(labelled.topics, shrunk.topics):
        assert set(topic.doc_ids[::3]) <= set(kept.doc_ids)
    engine = ConfidenceEngine()
    a = engine.confidence(
        cut, Uniform(0.3).fit_predict(cut), pairs=[], method="normal"
    ).scores.e_map
    b = engine.confidence(
        shrunk, Uniform(0.3).fit_predict(shrunk), pairs=[], method="normal"
    ).scores.e_map
    np.testing.assert_allclose(a, b, rtol=1e-12)
    bare = truth.truncated(5, shrink=True)
    assert [t.n_docs for t in bare.topics] == [
        int((t.judged | t.retrieved(None, 5)).sum()) for t in truth.topics
    ]
