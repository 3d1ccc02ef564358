"""One door for every file kind (relimpute.io.parsing.read_checked): a header line is found on
the first non-blank line whatever the kind, and the lines it returns are the file's, so that an
error found after reading (a label on a topic the campaign lacks) names the line without
reading the file again."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from relimpute.errors import InputError
from relimpute.io import read_inclusion_qrels, read_prob_qrels
from relimpute.io.qrels import PROB_QRELS_FILE, read_label_file, read_qrels_columns
from relimpute.io.parsing import read_fields
from relimpute.labels import check_labels, read_labels


def _lines_naming(text: str, query: str, doc: str) -> list[int]:
    """Every line of ``text`` whose first field is ``query`` and that names ``doc`` (the
    oracle: the file read by eye)."""
    return [n for n, line in enumerate(text.splitlines(), 1)
            if line.split()[:1] == [query] and doc in line.split()[1:3]]  # fmt: skip


@pytest.mark.parametrize("blank", ["", "\n", "\n  \n"])
def test_a_header_after_blank_lines_is_a_header_for_every_kind(tmp_path, blank):
    prob = tmp_path / "prob.tsv"
    prob.write_text(blank + "query_id\tdoc_id\tprobability\n1\td1\t0.5\n1\td2\t1.5\n")
    skip = blank.count("\n")
    with pytest.raises(InputError) as info:
        read_prob_qrels(prob)
    assert (info.value.problem, info.value.line) == ("probability 1.5 is outside [0, 1]", skip + 3)
    inclusion = tmp_path / "inclusion.txt"
    inclusion.write_text(blank + "qid docno rel pi\n1 d1 1 0.5\n1 d2 -1 0\n")
    with pytest.raises(InputError) as info:
        read_inclusion_qrels(inclusion)
    assert (info.value.problem, info.value.line) == (
        "inclusion probability 0.0 is outside (0, 1]", skip + 3)


def test_the_fields_of_a_file_and_of_its_frame_agree(tmp_path):
    path = tmp_path / "prob.tsv"
    path.write_text("qid docno p p_ge_2\n1 d1 0.5 0.25\n2 d9 0.1 0.0\n")
    from_file = read_fields(path, PROB_QRELS_FILE, data=path.read_bytes())
    frame = pd.DataFrame({"qid": ["1", "2"], "docno": ["d1", "d9"], "p": [0.5, 0.1],
                          "p_ge_2": [0.25, 0.0]})  # fmt: skip
    from_frame = read_fields(frame, PROB_QRELS_FILE)
    assert list(from_file.values) == list(from_frame.values) == ["probability", "p_ge_2"]
    for column in from_file.values:
        assert from_file.floats(column).tolist() == from_frame.floats(column).tolist()
    assert from_file.query.to_pylist() == from_frame.query.to_pylist() == ["1", "2"]
    assert from_file.lines.tolist() == [2, 3] and from_frame.lines.tolist() == [1, 2]


def test_qrels_lines_are_the_kept_rows_lines(tmp_path, rng):
    """Repeated identical judgments are merged: the line kept is the first naming the pair."""
    docs = [f"d{i}" for i in range(8)]
    rows = [(q, d, 1 if d < "d4" else 0) for q in "12" for d in rng.choice(docs, 6, False)]
    rows += [rows[i] for i in rng.choice(len(rows), 4)]  # identical repeats
    order = rng.permutation(len(rows))
    text = "".join(f"{rows[i][0]} 0 {rows[i][1]} {rows[i][2]}\n" for i in order)
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    columns, lines = read_qrels_columns(path)
    assert len(lines) == len(set(rows))
    for q, d, line in zip(columns["query_id"].to_pylist(), columns["doc_id"].to_pylist(), lines):
        assert int(line) == _lines_naming(text, q, d)[0]
    # read_qrels's keywords reach it: a grade above the range is the file's line
    with pytest.raises(InputError, match=r"qrels\.txt, line \d+"):
        read_qrels_columns(path, grade_range=(0, 0))
    assert read_qrels_columns(path, duplicates="first")[0]["relevance"].tolist() == \
        read_qrels_columns(path)[0]["relevance"].tolist()


def test_a_label_error_found_after_reading_names_the_files_line(tmp_path):
    """A label on a document the campaign lacks: the line comes from the read, also after
    labels on unknown documents were set aside."""
    from conftest import make_campaign

    campaign = make_campaign([("q", "a", 1), ("q", "b", 0)], {"r": ["a", "b", "c"]})
    topic = campaign.topics[0]
    known = [str(d) for d in topic.doc_ids[:3]]
    text = "".join(f"{topic.query_id} 0 {d} 1\n" for d in known[:2])
    text += f"{topic.query_id} 0 nowhere 0\n{topic.query_id} 0 {known[2]} 2\n"
    path = tmp_path / "labels.txt"
    path.write_text(text)
    form, table, lines = read_label_file(path)
    assert form == "qrels" and lines.tolist() == [1, 2, 3, 4]
    source = read_labels(path)
    with pytest.raises(InputError) as info:
        check_labels(campaign, source)
    assert info.value.line == _lines_naming(text, topic.query_id, "nowhere")[0] == 3
    kept = check_labels(campaign, source, unknown_documents="drop")
    assert kept.line_numbers.tolist() == [1, 2, 4]
    assert np.array_equal(kept.frame["doc_id"].to_numpy(), np.array(known, dtype=object))


def test_run_frames_beside_a_qrels_file_are_checked_and_give_the_files_campaign(tmp_path, rng):
    """The qrels file is checked once, as it is read; run frames are checked as run files are."""
    import warnings

    from relimpute.data import Campaign
    from relimpute.io import read_run

    docs = [f"d{i}" for i in range(12)]
    (tmp_path / "qrels.txt").write_text("".join(
        f"{q} 0 {d} {int(rng.integers(-1, 3))}\n" for q in "12" for d in rng.choice(docs, 5, False)))
    (tmp_path / "runs").mkdir()
    for name in ("a", "b"):
        lines = [f"{q} Q0 {d} {k} {s} {name}" for q in "123"
                 for k, (d, s) in enumerate(zip(rng.choice(docs, 6, False), rng.integers(0, 3, 6)), 1)]
        (tmp_path / "runs" / name).write_text("\n".join(lines) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        files = Campaign.from_files(tmp_path / "qrels.txt", tmp_path / "runs")
        frames = {n: read_run(tmp_path / "runs" / n) for n in ("a", "b")}
        framed = Campaign.from_files(tmp_path / "qrels.txt", frames)
    assert framed.systems == files.systems and framed.notes[-2:] == files.notes[-2:]
    for got, want in zip(framed.topics, files.topics, strict=True):
        for name in ("doc_ids", "grades", "judged", "ranking", "depth"):
            assert np.array_equal(getattr(got, name), getattr(want, name)), name
    twice = {"a": pd.concat([frames["a"], frames["a"].iloc[:1]], ignore_index=True)}
    with pytest.raises(InputError, match="duplicate document in run"):
        Campaign.from_files(tmp_path / "qrels.txt", twice)
