"""The campaign data model: trec_eval ordering, alignment, subsets, judgments."""

import warnings

import numpy as np
import pandas as pd
import pytest

from relimpute.data import Campaign


def _campaign(**kwargs):
    qrels = pd.DataFrame(
        {
            "query_id": ["1", "1", "1", "2"],
            "doc_id": ["a", "b", "z", "c"],
            "relevance": [1, 0, 2, -1],
        }
    )
    runs = {
        "r1": pd.DataFrame(
            {"query_id": ["1"] * 3, "doc_id": ["a", "c", "b"], "score": [1.0, 2.0, 1.0]}
        ),
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


# --------------------------------------------------------------------------- building from files


def _files(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n3 0 e 1\n")
    (tmp_path / "runs" / "r1.txt").write_text(
        "1 Q0 a 1 1.0 r1\n1 Q0 b 2 1.0 r1\n2 Q0 c 1 0.5 r1\n9 Q0 x 1 3.0 r1\n"
    )
    (tmp_path / "runs" / "r2.txt").write_text("1 Q0 b 1 2.0 r2\n8 Q0 y 1 1.0 r2\n2 Q0 d 1 0.1 r2\n")
    return tmp_path / "qrels.txt", tmp_path / "runs"


def test_topic_policy_is_reported(tmp_path):
    qrels, runs = _files(tmp_path)
    with pytest.warns(UserWarning) as record:
        c = Campaign.from_files(qrels, runs)
    # qrels topics only, as trec_eval; run-only topics 8 and 9 dropped and reported once
    assert c.query_ids == ("1", "2", "3")
    assert c.notes[0] == (
        "2 topic(s) retrieved by 2 run(s) but absent from the qrels were dropped, "
        "as trec_eval does (8, 9)"
    )
    # qrels topic 3 has no run: an empty ranking, reported per run
    assert "run 'r1': retrieves nothing for 1 qrels topic(s) (3)" in c.notes
    assert "run 'r2': retrieves nothing for 1 qrels topic(s) (3)" in c.notes
    assert [str(w.message) for w in record] == list(c.notes)
    t3 = c.topics[2]
    assert t3.depth.tolist() == [0, 0] and t3.ranking.shape == (2, 0) and t3.judged.all()


def test_from_files_equals_from_frames(tmp_path):
    qrels, runs = _files(tmp_path)
    with pytest.warns(UserWarning):
        a = Campaign.from_files(qrels, runs, rel_threshold=2)
    frames = {
        "r1": pd.DataFrame(
            {"qid": ["1", "1", "2", "9"], "docno": ["a", "b", "c", "x"], "score": [1, 1, 0.5, 3]}
        ),
        "r2": pd.DataFrame({"qid": [1, 8, 2], "docno": ["b", "y", "d"], "score": [2.0, 1.0, 0.1]}),
    }
    q = pd.DataFrame({"qid": [1, 1, 2, 3], "docno": ["a", "b", "c", "e"], "rel": [1, 0, 2, 1]})
    with pytest.warns(UserWarning):
        b = Campaign.from_frames(q, frames, rel_threshold=2)
    assert a.systems == b.systems and a.query_ids == b.query_ids and a.notes == b.notes
    for ta, tb in zip(a.topics, b.topics):
        for name in ("doc_ids", "grades", "judged", "ranking", "depth"):
            np.testing.assert_array_equal(getattr(ta, name), getattr(tb, name))


def test_judgments_read_once_give_the_campaign_from_files_reads(tmp_path):
    """``read_judgments`` then ``from_files`` (the qrels read once, as the design path does)
    is ``from_files`` on the path, with run files or run frames; the threshold is the read one."""
    from relimpute.io.campaign import read_judgments

    qrels, runs = _files(tmp_path)
    (tmp_path / "relimpute.toml").write_text("rel_threshold = 2\n")
    with pytest.warns(UserWarning):
        a = Campaign.from_files(qrels, runs)
    judged = read_judgments(qrels)
    settings = (tmp_path / "relimpute.toml").resolve()
    assert judged.rel_threshold == 2 and judged.threshold_from == settings
    with pytest.warns(UserWarning):
        b = Campaign.from_files(judged, runs)
    frames = {"r1": pd.DataFrame({"qid": ["1", "2"], "docno": ["b", "c"], "score": [1.0, 0.5]})}
    with pytest.warns(UserWarning):  # columns read for files, aligned as a frame
        c = Campaign.from_files(judged, frames)
    assert a.rel_threshold == b.rel_threshold == c.rel_threshold == 2
    assert a.rel_threshold_from == b.rel_threshold_from == settings
    assert a.query_ids == b.query_ids and a.notes == b.notes
    for ta, tb in zip(a.topics, b.topics):
        for name in ("doc_ids", "grades", "judged", "ranking", "depth"):
            np.testing.assert_array_equal(getattr(ta, name), getattr(tb, name))
    assert c.systems == ("r1",) and list(c.topics[0].grades[c.topics[0].judged]) == [1, 0]
    with pytest.raises(ValueError, match="read at rel_threshold 2"):
        Campaign.from_files(judged, runs, rel_threshold=1)


def test_from_frames_validates_by_default():
    from relimpute.errors import InputError

    q = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match="duplicate document in run"):
        Campaign.from_frames(q, {"r": run})


def test_ties_follow_byte_order_of_docnos():
    q = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    run = pd.DataFrame(
        {"query_id": ["1"] * 4, "doc_id": ["a", "é", "z", "B"], "score": [1.0, 1.0, 1.0, -0.0]}
    )
    run2 = run.assign(score=[1.0, 1.0, 1.0, 0.0])
    c = Campaign.from_frames(q, {"r": run, "r2": run2})
    t = c.topics[0]
    # trec_eval: score descending, ties by strcmp descending; -0.0 == 0.0
    assert list(t.doc_ids[t.ranking[0]]) == ["é", "z", "a", "B"] == list(t.doc_ids[t.ranking[1]])


def test_by_rank_orders_by_the_rank_column(tmp_path):
    (tmp_path / "q").write_text("1 0 a 1\n")
    (tmp_path / "r").write_text("1 Q0 a 2 9.0 t\n1 Q0 b 1 1.0 t\n1 Q0 c 2 5.0 t\n")
    c = Campaign.from_files(tmp_path / "q", tmp_path / "r", by_rank=True)
    t = c.topics[0]
    assert list(t.doc_ids[t.ranking[0]]) == ["b", "c", "a"]


@pytest.mark.parametrize("n_docs_arg", [None, 2**62])  # packed int64 key, and the lexsort fallback
@pytest.mark.parametrize("dtype", [np.float64, np.float32])  # dense rank; monotone float32 bits
def test_trec_order_matches_lexsort(rng, n_docs_arg, dtype):
    from relimpute.io.assembly import _trec_order

    n = 5000
    group = rng.integers(0, 30, n)
    order = (rng.integers(-20, 20, n) / 4.0).astype(dtype)  # many ties
    order[rng.integers(0, n, 40)] = rng.choice([0.0, -0.0, np.inf, -np.inf, 1e-45, -3e38], 40)
    doc = rng.integers(0, 800, n)
    expected = np.lexsort((-doc, order, group))
    got = _trec_order(group, order, doc, n_docs_arg or 800)
    keys = np.stack([group, order, -doc])
    np.testing.assert_array_equal(keys[:, got], keys[:, expected])


def test_dl19_rankings_follow_trec_eval_order(dl19, dl19_dir):
    from relimpute.io import read_run, sort_trec

    for name in (dl19.systems[0], dl19.systems[-1]):
        expected = sort_trec(read_run(dl19_dir / "runs" / f"{name}.gz"))
        s = dl19.system_index(name)[0]
        qrels_topics = set(dl19.query_ids)
        expected = expected[expected["query_id"].isin(qrels_topics)]
        got = dl19.run_frame(name)
        assert got["query_id"].tolist() == expected["query_id"].tolist()
        assert got["doc_id"].tolist() == expected["doc_id"].tolist()
        assert sum(int(t.depth[s]) for t in dl19.topics) == len(expected)


def test_scores_tie_at_trec_eval_float32_precision():
    from relimpute.io import sort_trec

    q = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    # 1.0 and 1.0 + 1e-9 differ as float64 but are the same C float in trec_eval
    run = pd.DataFrame(
        {"query_id": ["1"] * 3, "doc_id": ["a", "b", "c"], "score": [1.0 + 1e-9, 1.0, 0.5]}
    )
    t = Campaign.from_frames(q, {"r": run}).topics[0]
    assert list(t.doc_ids[t.ranking[0]]) == ["b", "a", "c"]
    assert sort_trec(run)["doc_id"].tolist() == ["b", "a", "c"]
    assert sort_trec(run.assign(rank=[3, 1, 1]), by_rank=True)["doc_id"].tolist() == ["c", "b", "a"]


def test_to_files_round_trip_and_empty_systems(tmp_path):
    with pytest.warns(UserWarning):
        c = _campaign(rel_threshold=2)
    qrels, runs = c.to_files(tmp_path / "out")
    with pytest.warns(UserWarning, match="retrieves nothing"):
        back = Campaign.from_files(qrels, runs, rel_threshold=2)
    assert back.systems == c.systems and back.notes == c.notes
    assert back.query_ids == c.query_ids  # topic 2 (only -1 labels) survives
    for a, b in zip(c.topics, back.topics):
        for name in ("doc_ids", "grades", "judged", "ranking", "depth"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    hidden = c.with_judged([np.zeros(t.n_docs, bool) for t in c.topics])
    qrels, runs = hidden.to_files(tmp_path / "hidden")
    with pytest.warns(UserWarning):
        back = Campaign.from_files(qrels, runs)
    assert all(np.array_equal(a.doc_ids, b.doc_ids) for a, b in zip(c.topics, back.topics))
    assert not any(t.judged.any() for t in back.topics)
    q = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    runs = {"r": pd.DataFrame({"query_id": ["9"], "doc_id": ["a"], "score": [1.0]})}
    with pytest.warns(UserWarning):
        nothing = Campaign.from_frames(q, runs)
    with pytest.raises(ValueError, match=r"systems \['r'\] retrieve nothing"):
        nothing.to_files(tmp_path / "x")


# -------------------------------------------------------------------------- duplicates in run files


def _collection(tmp_path, runs):
    (tmp_path / "runs").mkdir(parents=True, exist_ok=True)
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n2 0 b 1\n")
    for name, text in runs.items():
        (tmp_path / "runs" / name).write_text(text)
    return tmp_path / "qrels.txt", tmp_path / "runs"


def _load_error(qrels, runs, **kwargs):
    from relimpute.errors import InputError

    with pytest.raises(InputError) as info:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # topics the qrels lack
            Campaign.from_files(qrels, runs, **kwargs)
    return info.value


@pytest.mark.parametrize("topic", ["1", "7"])  # a qrels topic; one the qrels lack (dropped)
@pytest.mark.parametrize("sep", [" ", "\t", " \t"])  # the fast path; line by line
def test_duplicate_in_a_run_file_is_the_readers_error(tmp_path, topic, sep):
    from relimpute.io import read_run

    lines = ["1 Q0 a 1 2.0 t", f"{topic} Q0 c 1 1.5 t", "2 Q0 b 1 1.0 t", f"{topic} Q0 c 2 0.5 t"]
    text = "".join(sep.join(line.split()) + "\n" for line in lines)
    qrels, runs = _collection(tmp_path, {"a.txt": "1 Q0 a 1 1.0 t\n", "b.txt": text})
    for by_rank in (False, True):
        err = _load_error(qrels, runs, by_rank=by_rank)
        with pytest.raises(type(err)) as expected:
            read_run(runs / "b.txt", keep_rank=by_rank)
        assert str(err) == str(expected.value) and err.line == 4
        assert f"topic '{topic}', document 'c' also on line 2" in err.problem


def test_an_earlier_runs_duplicate_comes_before_a_later_runs_error(tmp_path):
    dup, bad = "1 Q0 a 1 1.0 t\n1 Q0 a 2 0.5 t\n", "1 Q0 a 1 x t\n"
    qrels, runs = _collection(tmp_path, {"a.txt": dup, "b.txt": bad})
    err = _load_error(qrels, runs)
    assert err.source.endswith("a.txt") and "duplicate document in run" in err.problem
    qrels, runs = _collection(tmp_path / "reversed", {"a.txt": bad, "b.txt": dup})
    err = _load_error(qrels, runs)
    assert err.source.endswith("a.txt") and err.problem == "score 'x' is not a number"
    # policies other than "error" keep one line and read on to the bad file
    qrels, runs = _collection(tmp_path, {"a.txt": dup, "b.txt": bad})
    assert _load_error(qrels, runs, duplicates="first").source.endswith("b.txt")


@pytest.mark.parametrize("duplicates", ["first", "last"])
def test_duplicate_policies_keep_the_readers_lines(tmp_path, duplicates):
    from relimpute.io import read_qrels, read_run

    text = "1 Q0 a 1 1.0 t\n1 Q0 c 2 0.9 t\n2 Q0 b 1 0.5 t\n1 Q0 a 3 0.1 t\n"
    qrels, runs = _collection(tmp_path, {"r.txt": text})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = Campaign.from_files(qrels, runs, duplicates=duplicates)
        frames = {"r": read_run(runs / "r.txt", duplicates=duplicates)}
        expected = Campaign.from_frames(read_qrels(qrels), frames)
    ranked = [list(t.doc_ids[t.ranking[0, : t.depth[0]]]) for t in got.topics]
    assert ranked == ([["a", "c"], ["b"]] if duplicates == "first" else [["c", "a"], ["b"]])
    for a, b in zip(got.topics, expected.topics):
        np.testing.assert_array_equal(a.ranking, b.ranking)


def test_runs_listing_topics_in_pieces_load_as_grouped_ones(tmp_path, rng):
    lines = [f"{q} Q0 d{i} {i} {s} t" for i, (q, s) in enumerate(zip([1, 2] * 20, rng.random(40)))]
    qrels, runs = _collection(tmp_path, {"mixed.txt": "\n".join(lines) + "\n"})
    (runs / "sorted.txt").write_text("\n".join(sorted(lines, key=lambda x: x[0])) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = Campaign.from_files(qrels, runs)
    for t in c.topics:
        assert t.depth.tolist() == [20, 20]
        np.testing.assert_array_equal(t.ranking[0], t.ranking[1])


def test_repeating_systems_in_several_passes(rng, monkeypatch):
    from relimpute.io import assembly as data

    system = np.sort(rng.integers(0, 40, 3000))
    doc = rng.integers(0, 20_000, 3000)
    seen, expected = set(), set()
    for pair in zip(system.tolist(), doc.tolist()):
        if pair in seen:
            expected.add(pair[0])
        seen.add(pair)
    assert 0 < len(expected) < 40
    assert sorted(data._repeating_systems(system, doc, 20_000)) == sorted(expected)
    monkeypatch.setattr(data, "_PAIR_CELLS", 50_000)  # two systems a pass
    assert sorted(data._repeating_systems(system, doc, 20_000)) == sorted(expected)


@pytest.mark.parametrize("by_rank", [False, True])
def test_documents_coded_in_batches_build_the_same_campaign(tmp_path, rng, monkeypatch, by_rank):
    """Run files' document ids are coded per topic in batches as they are read: any batching
    gives trec_eval's rankings over documents in docno order (ties by docno, shuffled lines,
    documents shared by topics, a topic the qrels lack), as the frames give them."""
    from relimpute.io import assembly as data
    from relimpute.io import read_qrels, read_runs

    docs = [f"d{i}" for i in range(60)] + ["D1", "d1\u00e9", "e"]
    judged = {(q, d): int(rng.integers(-1, 3)) for q in "123" for d in rng.choice(docs, 9, False)}
    (tmp_path / "runs").mkdir()
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in judged.items()))
    expected = {}
    for r in range(7):
        lines = []
        for q in "1234":
            picked = rng.choice(docs, int(rng.integers(1, 25)), replace=False)
            scores = rng.integers(0, 4, len(picked)) / 2  # many ties
            ranks = rng.integers(1, 6, len(picked))
            lines += [f"{q} Q0 {d} {k} {s} t" for d, k, s in zip(picked, ranks, scores)]
            keys = ranks if by_rank else -scores
            by_docno = sorted(zip(keys, picked), key=lambda x: x[1].encode(), reverse=True)
            expected[f"r{r}", q] = [d for _, d in sorted(by_docno, key=lambda x: x[0])]
        order = rng.permutation(len(lines)) if r % 2 else np.arange(len(lines))
        (tmp_path / "runs" / f"r{r}").write_text("\n".join(lines[i] for i in order) + "\n")

    def load():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Campaign.from_files(tmp_path / "qrels.txt", tmp_path / "runs", by_rank=by_rank)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frames = Campaign.from_frames(
            read_qrels(tmp_path / "qrels.txt"),
            read_runs(tmp_path / "runs", keep_rank=by_rank),
            by_rank=by_rank,
        )
    flushes = []
    one_batch = load()
    monkeypatch.setattr(data, "_BATCH_ROWS", 1)  # a batch about every run
    flush = data._DocIds._flush
    monkeypatch.setattr(data._DocIds, "_flush", lambda self: flushes.append(1) or flush(self))
    for got in (one_batch, frames, load()):
        assert got.systems == tuple(f"r{r}" for r in range(7))
        assert [t.query_id for t in got.topics] == ["1", "2", "3"] and "4" in got.notes[0]
        for t in got.topics:
            doc_ids = t.doc_ids.tolist()
            assert doc_ids == sorted(doc_ids, key=str.encode)
            for s, name in enumerate(got.systems):
                assert t.doc_ids[t.ranking[s, : t.depth[s]]].tolist() == expected[name, t.query_id]
            labels = {d: judged.get((t.query_id, d), 0) for d in doc_ids}
            assert t.grades.tolist() == list(labels.values())
            known = [(t.query_id, d) in judged and g >= 0 for d, g in labels.items()]
            assert t.judged.tolist() == known
    assert len(flushes) > 5


def test_pooled_and_truncated_against_hand_built_pools():
    """Campaign.pooled keeps exactly the judged documents of the runs' top-k (sets worked out
    by hand from the frames); Campaign.truncated keeps the index or shrinks it, with the same
    rankings by docno either way."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = _campaign()
    topic = c.topics[0]  # r1 ranks c, then a and b tied (b first by docno descending); r2: d
    for depth, systems, expected in [(1, None, set()), (2, None, {"b"}), (3, ["r1"], {"a", "b"})]:
        for chosen in (systems, None if systems is None else [0]):  # names or row indices
            pooled = c.pooled(depth, chosen).topics[0]
            assert set(pooled.doc_ids[pooled.judged]) == expected
    kept, shrunk = c.truncated(1), c.truncated(1, shrink=True)
    assert list(kept.topics[0].doc_ids) == list(topic.doc_ids)  # index kept
    for a, b in zip(kept.topics, shrunk.topics):
        for s in range(c.n_systems):
            rows_a = a.doc_ids[a.ranking[s, : a.depth[s]]]
            rows_b = b.doc_ids[b.ranking[s, : b.depth[s]]]
            assert list(rows_a) == list(rows_b) and len(rows_a) <= 1
    assert c.truncated(None) is c
    with pytest.raises(ValueError, match="depth must be a positive integer"):
        c.truncated(0)
    with pytest.raises(ValueError, match="depth must be a positive integer"):
        c.pooled(1.5)
