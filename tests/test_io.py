"""TREC file I/O: every bad-input case names file, line and problem; writers round-trip atomically."""

from __future__ import annotations

import gzip
import os

import numpy as np
import pandas as pd
import pytest

from relimpute import _files
from relimpute.io import writing as _writing
from relimpute.io import parsing
from relimpute import io as rio
from relimpute.errors import InputError
from relimpute.io import (
    read_prob_qrels,
    read_qrels,
    read_run,
    read_runs,
    write_prob_qrels,
    write_qrels,
    write_run,
)

RUN = "1 Q0 d1 1 3.5 tag\n1 Q0 d2 2 2.0 tag\n2 Q0 d1 1 1.0 tag\n"
QRELS = "1 0 d1 1\n1 0 d3 0\n2 0 d1 2\n"


def _write(tmp_path, text, name="f.txt", *, gz=False, raw=None):
    path = tmp_path / name
    data = raw if raw is not None else text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def _error(func, path, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        func(path, **kwargs)
    return info.value


# --------------------------------------------------------------------------- column counts


@pytest.mark.parametrize("sep", ["\t", " ", " \t "])  # fast path (one separator) and line-by-line
@pytest.mark.parametrize("bad_line", ["1 Q0 d9 3 1.0", "1 Q0 d9 3 1.0 tag extra"])
def test_run_wrong_column_count(tmp_path, sep, bad_line):
    lines = RUN.splitlines()
    lines.insert(2, bad_line)
    text = "\n".join(sep.join(line.split()) for line in lines) + "\n"
    err = _error(read_run, _write(tmp_path, text))
    assert err.line == 3 and err.source.endswith("f.txt")
    assert (
        f"expected 6 columns (qid Q0 docno rank score tag), found {len(bad_line.split())}"
        in str(err)
    )
    assert str(err).startswith(f"{tmp_path / 'f.txt'}, line 3: ")


def test_qrels_wrong_column_count_after_blank_lines(tmp_path):
    err = _error(read_qrels, _write(tmp_path, "1 0 d1 1\n\n\n1 d2 1\n"))
    assert err.line == 4 and "expected 4 columns (qid iter docno rel), found 3" in err.problem


def test_empty_field_is_a_missing_column(tmp_path):
    # "1\t\td1\t1" splits into 3 whitespace-separated fields, not 4 with an empty one.
    err = _error(read_qrels, _write(tmp_path, "1\t0\td0\t1\n1\t\td1\t1\n"))
    assert err.line == 2 and "found 3" in err.problem


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    "score, problem",
    [
        ("abc", "score 'abc' is not a number"),
        ("NA", "score 'NA' is not a number"),
        ("nan", "score 'nan' is not a finite number"),
        ("inf", "score 'inf' is not a finite number"),
        ("-Infinity", "score '-Infinity' is not a finite number"),
        ("1e999", "score '1e999' is not a finite number"),
    ],
)
@pytest.mark.parametrize("sep", ["\t", "  "])
def test_bad_scores_are_located(tmp_path, score, problem, sep):
    lines = [line.split() for _ in range(40) for line in RUN.splitlines()]  # bad value deep in
    lines[57][4] = score
    text = "\n".join(sep.join(f) for f in lines) + "\n"
    err = _error(read_run, _write(tmp_path, text), duplicates="first")
    assert err.line == 58 and err.problem == problem


@pytest.mark.parametrize(
    "label, problem",
    [
        ("1.5", "relevance 1.5 is not an integer"),
        ("x", "relevance 'x' is not a number"),
        ("nan", "relevance 'nan' is not a finite number"),
        ("11", "relevance 11 is outside the allowed range [-2, 10]"),
        ("-3", "relevance -3 is outside the allowed range [-2, 10]"),
        ("1e300", "relevance 1e+300 is not an integer"),
    ],
)
def test_bad_relevance_is_located(tmp_path, label, problem):
    err = _error(read_qrels, _write(tmp_path, QRELS + f"3 0 d4 {label}\n"))
    assert err.line == 4 and err.problem.startswith(problem)


def test_grade_range_and_integral_floats(tmp_path):
    path = _write(tmp_path, QRELS + "3 0 d4 11\n3 0 d5 2.0\n")
    table = read_qrels(path, grade_range=(0, 20))
    assert table["relevance"].tolist() == [1, 0, 2, 11, 2]
    assert table["relevance"].dtype == np.int64


def test_unjudged_label_is_kept(tmp_path):
    table = read_qrels(_write(tmp_path, QRELS + "3 0 d4 -1\n"))
    assert table["relevance"].iat[-1] == -1


def test_rank_column_checked_only_when_used(tmp_path):
    path = _write(tmp_path, RUN.replace(" 2 2.0 ", " two 2.0 "))
    assert "rank" not in read_run(path)
    err = _error(read_run, path, keep_rank=True)
    assert err.line == 2 and err.problem == "rank 'two' is not a number"
    assert read_run(_write(tmp_path, RUN, "ok.txt"), keep_rank=True)["rank"].tolist() == [1, 2, 1]


# --------------------------------------------------------------------------- duplicates


def test_duplicate_document_in_run(tmp_path):
    path = _write(tmp_path, RUN + "1 Q0 d2 3 0.5 tag\n")
    err = _error(read_run, path)
    assert err.line == 4
    assert (
        "conflicting duplicate document in run: topic '1', document 'd2' also on line 2"
        in err.problem
    )
    assert "(score 2 vs 0.5)" in err.problem and "duplicates='first'|'last'" in err.problem
    first = read_run(path, duplicates="first")
    last = read_run(path, duplicates="last")
    assert len(first) == len(last) == 3
    assert first.set_index("doc_id").loc["d2"].iat[0] == "1"  # query id column
    assert first.loc[first["doc_id"] == "d2", "score"].item() == 2.0
    assert last.loc[last["doc_id"] == "d2", "score"].item() == 0.5
    # the same docno in another topic is not a duplicate
    assert read_run(_write(tmp_path, RUN, "ok.txt"))["doc_id"].tolist() == ["d1", "d2", "d1"]


def test_identical_run_lines_are_still_an_error(tmp_path):
    err = _error(read_run, _write(tmp_path, RUN + "1 Q0 d1 1 3.5 tag\n"))
    assert err.line == 4 and err.problem.startswith("duplicate document in run")


def test_qrels_conflicting_duplicates_and_policies(tmp_path):
    path = _write(tmp_path, QRELS + "1 0 d1 2\n1 0 d1 0\n")
    err = _error(read_qrels, path)
    assert err.line == 4 and "conflicting duplicate judgment" in err.problem
    assert "also on line 1 (relevance 1 vs 2)" in err.problem and "'max'" in err.problem

    def label(policy):
        table = read_qrels(path, duplicates=policy)
        assert len(table) == 3
        return table.loc[(table["query_id"] == "1") & (table["doc_id"] == "d1"), "relevance"].item()

    assert (label("first"), label("last"), label("max")) == (1, 0, 2)
    # kept rows stay in file order
    assert read_qrels(path, duplicates="last")["doc_id"].tolist() == ["d3", "d1", "d1"]


def test_qrels_identical_duplicates_are_merged(tmp_path):
    table = read_qrels(_write(tmp_path, QRELS + "1 7 d1 1\n"))
    assert len(table) == 3 and table["relevance"].tolist() == [1, 0, 2]


def test_unknown_policy():
    with pytest.raises(ValueError, match="duplicates must be one of"):
        read_run(
            pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]}), duplicates="max"
        )


# --------------------------------------------------------------------------- encodings and files


@pytest.mark.parametrize("text", ["", "\n\n", "  \t \n"])
@pytest.mark.parametrize("gz", [False, True])
def test_empty_file(tmp_path, text, gz):
    for func in (read_run, read_qrels, read_prob_qrels):
        err = _error(func, _write(tmp_path, text, gz=gz))
        assert err.problem == "file is empty" and err.line is None
        assert str(err) == f"{tmp_path / 'f.txt'}: file is empty"


@pytest.mark.parametrize(
    "transform",
    [
        lambda t: t.replace("\n", "\r\n"),
        lambda t: "\ufeff" + t,
        lambda t: "\ufeff" + t.replace("\n", "\r\n").replace(" ", "\t"),
        lambda t: t.replace("\n", "\r"),
        lambda t: "\n" + t.replace(" ", "   ") + "\n\n",
    ],
    ids=["crlf", "bom", "bom-crlf-tabs", "cr", "blank-lines-and-spaces"],
)
def test_line_endings_bom_and_whitespace_accepted(tmp_path, transform):
    expected_run = read_run(_write(tmp_path, RUN, "run.txt"))
    expected_qrels = read_qrels(_write(tmp_path, QRELS, "qrels.txt"))
    pd.testing.assert_frame_equal(read_run(_write(tmp_path, transform(RUN), "r2")), expected_run)
    pd.testing.assert_frame_equal(
        read_qrels(_write(tmp_path, transform(QRELS), "q2")), expected_qrels
    )
    assert expected_qrels["query_id"].iat[0] == "1"  # the BOM is not part of the first id


def test_crlf_error_lines_are_counted_right(tmp_path):
    err = _error(read_qrels, _write(tmp_path, "\ufeff1 0 a 1\r\n\r\n1 0 b x\r\n"))
    assert err.line == 3 and err.problem == "relevance 'x' is not a number"


def test_gzip_is_detected_by_content(tmp_path):
    plain = read_run(_write(tmp_path, RUN, "run.txt"))
    pd.testing.assert_frame_equal(read_run(_write(tmp_path, RUN, "run_no_suffix", gz=True)), plain)


def test_truncated_and_corrupt_gzip(tmp_path):
    data = gzip.compress((RUN * 200).encode())
    err = _error(read_run, _write(tmp_path, "", "t.gz", raw=data[: len(data) // 2]))
    assert "unreadable or truncated gzip" in err.problem and err.source.endswith("t.gz")
    corrupt = data[:10] + bytes(b ^ 0xFF for b in data[10:40]) + data[40:]
    err = _error(read_qrels, _write(tmp_path, "", "c.gz", raw=corrupt))
    assert "unreadable or truncated gzip" in err.problem


def test_not_utf8_and_missing_file(tmp_path):
    err = _error(read_qrels, _write(tmp_path, "", raw=b"1 0 a 1\n1 0 \xff\xfe 1\n"))
    assert err.line == 2 and "not UTF-8" in err.problem
    err = _error(read_qrels, tmp_path / "nope.txt")
    assert "cannot read file" in err.problem and err.source.endswith("nope.txt")


def test_fast_and_line_by_line_paths_agree(tmp_path, rng, monkeypatch):
    fast = []
    arrow_read = parsing._arrow_read
    monkeypatch.setattr(
        parsing, "_arrow_read", lambda *a: fast.append(arrow_read(*a) is not None) or arrow_read(*a)
    )
    n = 3000
    q = rng.integers(0, 20, n).astype(str)
    d = np.array([f"doc-{i}" for i in rng.permutation(n)])
    s = rng.normal(size=n).round(6)
    lines = [f"{a}\tQ0\t{b}\t{i}\t{float(c)!r}\trun" for i, (a, b, c) in enumerate(zip(q, d, s))]
    tabbed = read_run(_write(tmp_path, "\n".join(lines) + "\n", "tab"))
    messy = read_run(_write(tmp_path, "\n\n".join(x.replace("\t", " \t") for x in lines), "messy"))
    pd.testing.assert_frame_equal(tabbed, messy)
    assert fast == [True]  # the tabbed file took the fast path, the messy one never tried it
    assert tabbed["score"].tolist() == s.tolist() and tabbed["doc_id"].tolist() == d.tolist()


def test_a_file_parsed_in_several_blocks_reads_the_same(tmp_path, monkeypatch):
    path = _write(tmp_path, "".join(f"{i % 3} Q0 d{i} {i} {i / 7} tag\n" for i in range(300)))
    whole = read_run(path)
    monkeypatch.setattr(parsing, "_BLOCK_LIMIT", 200)  # files over the limit: a chunk per block
    table = parsing._arrow_read(path.read_bytes(), 6, " ")
    assert table.column(2).num_chunks > 1
    assert parsing._one_array(table.column(2)).to_pylist() == whole["doc_id"].tolist()
    pd.testing.assert_frame_equal(read_run(path), whole)


def test_run_columns_are_checked_but_for_duplicates(tmp_path):
    path = _write(tmp_path, RUN + "1 Q0 d2 3 0.5 tag\n")
    columns, lines = rio.read_run_columns(path, keep_rank=True)
    assert columns["doc_id"].to_pylist() == ["d1", "d2", "d1", "d2"]
    assert columns["score"].tolist() == [3.5, 2.0, 1.0, 0.5] and columns["rank"].tolist()[-1] == 3
    assert columns["run"].to_pylist() == ["tag"] * 4 and lines.tolist() == [1, 2, 3, 4]
    assert "duplicate" in _error(read_run, path).problem
    bad = _write(tmp_path, RUN + "1 Q0 d2 3 x tag\n", "bad.txt")
    assert _error(rio.read_run_columns, bad).problem == "score 'x' is not a number"


def test_only_ascii_whitespace_separates_fields(tmp_path):
    # a no-break space inside a docno is part of it (trec_eval splits on ASCII blanks only),
    # on the fast path (tabs only) and on the line-by-line path (mixed blanks) alike
    fast = read_qrels(_write(tmp_path, "1\t0\ta\u00a0b\t1\n", "fast"))
    slow = read_qrels(_write(tmp_path, "1 \t0 a\u00a0b  1\n", "slow"))
    assert fast["doc_id"].tolist() == slow["doc_id"].tolist() == ["a\u00a0b"]
    write_qrels(slow, tmp_path / "out")
    pd.testing.assert_frame_equal(read_qrels(tmp_path / "out"), slow)


# --------------------------------------------------------------------------- DataFrames


def test_dataframe_with_ir_measures_names():
    frame = pd.DataFrame({"query_id": [1, 1, 2], "doc_id": ["a", "b", "a"], "score": [2, 1, 3]})
    table = read_run(frame)
    assert table["query_id"].tolist() == ["1", "1", "2"]
    assert table["score"].dtype == np.float64
    qrels = read_qrels(
        pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [2], "iteration": ["0"]})
    )
    assert qrels.columns.tolist() == ["query_id", "doc_id", "relevance"]


def test_dataframe_aliases_and_column_mapping():
    aliased = read_qrels(pd.DataFrame({"qid": ["1", "2"], "docno": ["a", "b"], "rel": [1, 0]}))
    assert aliased["doc_id"].tolist() == ["a", "b"]
    mapped = read_run(
        pd.DataFrame({"topic_no": ["1", "1"], "passage": ["a", "b"], "bm25": [1.0, 2.0]}),
        columns={"topic_no": "query_id", "passage": "doc_id", "bm25": "score"},
    )
    assert mapped["score"].tolist() == [1.0, 2.0]
    with pytest.raises(InputError, match=r"<DataFrame>: missing column\(s\) \['score'\].*columns="):
        read_run(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"]}))


@pytest.mark.parametrize(
    "frame, problem, row",
    [
        (
            pd.DataFrame({"query_id": ["1", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]}),
            "query_id is missing",
            2,
        ),
        (
            pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", ""], "score": [1.0, 2.0]}),
            "doc_id is empty",
            2,
        ),
        (
            pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, np.nan]}),
            "score nan is not a finite number",
            2,
        ),
        (
            pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": ["1", "x"]}),
            "score 'x' is not a number",
            2,
        ),
        (
            pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "a"], "score": [1.0, 2.0]}),
            "conflicting duplicate document",
            2,
        ),
        (pd.DataFrame({"query_id": [], "doc_id": [], "score": []}), "table is empty", None),
    ],
)
def test_dataframe_errors_name_the_row(frame, problem, row):
    with pytest.raises(InputError) as info:
        read_run(frame)
    assert info.value.source == "<DataFrame>" and problem in info.value.problem
    assert info.value.line == row


# --------------------------------------------------------------------------- directories


def test_directory_of_runs(tmp_path):
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    _write(runs_dir, RUN, "b.run.gz", gz=True)
    _write(runs_dir, RUN, "a.txt")
    _write(runs_dir, "garbage", ".hidden")
    extra = _write(tmp_path, RUN, "c.trec")
    runs = read_runs([runs_dir, extra])
    assert list(runs) == ["a", "b", "c"]
    assert all(len(r) == 3 for r in runs.values())
    _write(runs_dir, RUN, "a.gz", gz=True)
    with pytest.raises(InputError, match="two run files are both named 'a'"):
        read_runs(runs_dir)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no run files found"):
        read_runs(empty)


def test_error_in_one_run_of_a_directory_names_that_file(tmp_path):
    _write(tmp_path, RUN, "good.txt")
    _write(tmp_path, RUN + "1 Q0 d5 4 oops tag\n", "bad.txt")
    with pytest.raises(InputError) as info:
        read_runs(tmp_path)
    assert info.value.source.endswith("bad.txt") and info.value.line == 4


# --------------------------------------------------------------------------- writers


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_qrels_round_trip(tmp_path, suffix):
    original = read_qrels(_write(tmp_path, QRELS + "3 0 d4 -1\n"))
    path = tmp_path / f"out.qrels{suffix}"
    write_qrels(original, path)
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == (suffix == ".gz")
    pd.testing.assert_frame_equal(read_qrels(path), original)


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_run_round_trip_keeps_scores_and_order(tmp_path, suffix, rng):
    n = 500
    frame = pd.DataFrame(
        {
            "query_id": rng.integers(0, 5, n).astype(str),
            "doc_id": [f"d{i}" for i in range(n)],
            "score": np.r_[rng.normal(size=n - 50), np.full(50, 0.1)],  # exact ties too
        }
    )
    path = tmp_path / f"out.run{suffix}"
    write_run(frame, path, tag="mine")
    back = read_run(path, keep_rank=True)
    expected = rio.sort_trec(read_run(frame))
    assert back["doc_id"].tolist() == expected["doc_id"].tolist()
    assert back["score"].tolist() == expected["score"].tolist()  # bit-exact floats
    assert (
        back.groupby("query_id")["rank"].apply(lambda r: r.tolist() == list(range(1, len(r) + 1)))
    ).all()
    assert set(back["run"]) == {"mine"}


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_prob_qrels_round_trip(tmp_path, suffix, rng):
    frame = pd.DataFrame(
        {
            "query_id": ["1"] * 100,
            "doc_id": [f"d{i}" for i in range(100)],
            "probability": rng.random(100),
        }
    )
    frame.loc[0, "probability"] = 1.0
    frame.loc[1, "probability"] = 0.0
    path = tmp_path / f"p.txt{suffix}"
    write_prob_qrels(frame, path)
    back = read_prob_qrels(path)
    assert back["probability"].tolist() == frame["probability"].tolist()
    assert back["doc_id"].tolist() == frame["doc_id"].tolist()


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_prob_qrels_written_in_chunks_are_the_text_written_at_once(tmp_path, monkeypatch, suffix):
    frame = pd.DataFrame(
        {"query_id": ["1"] * 50 + ["2"] * 51, "doc_id": [f"d{i}" for i in range(101)],
         "probability": np.linspace(0, 1, 101) ** 3},
    )  # fmt: skip
    whole = "query_id\tdoc_id\tprobability\n" + "".join(
        f"{q}\t{d}\t{p!r}\n" for q, d, p in zip(frame.query_id, frame.doc_id, frame.probability)
    )
    written = []
    real = _files.write_fully
    monkeypatch.setattr(_files, "write_fully", lambda fd, data: (written.append(len(data)), real(fd, data)))
    monkeypatch.setattr(_writing, "_ROWS_PER_CHUNK", 16)
    path = tmp_path / f"p.txt{suffix}"
    write_prob_qrels(frame, path)
    data = path.read_bytes()
    assert (gzip.decompress(data) if suffix else data) == whole.encode()
    if suffix:  # the same bytes as compressing the whole text at once
        assert data == gzip.compress(whole.encode(), mtime=0)
    else:  # header, then 7 chunks of at most 16 rows: never the whole text at once
        assert len(written) == 8 and max(written) < len(whole) // 4
    frame.loc[40, "doc_id"] = "d 40"  # in the third chunk: named by its row in the table
    with pytest.raises(ValueError, match=r"'d 40' \(row 40\)"):
        write_prob_qrels(frame, path)
    assert os.listdir(tmp_path) == [path.name]


def test_a_failing_chunk_leaves_the_old_file(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("old\n")

    def chunks():
        yield "new\n"
        raise ValueError("bad row")

    with pytest.raises(ValueError, match="bad row"):
        _files.atomic_write_chunks(path, chunks())
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["p.txt"]


def test_prob_qrels_errors(tmp_path):
    err = _error(read_prob_qrels, _write(tmp_path, "1 a 0.5\n1 b 1.5\n"))
    assert err.line == 2 and err.problem == "probability 1.5 is outside [0, 1]"
    err = _error(read_prob_qrels, _write(tmp_path, "1 a 0.5\n1 a 0.25\n", "dup"))
    assert err.line == 2 and "conflicting duplicate probability" in err.problem
    assert read_prob_qrels(tmp_path / "dup", duplicates="max")["probability"].tolist() == [0.5]
    aliased = read_prob_qrels(pd.DataFrame({"qid": ["1"], "docno": ["a"], "p": [0.3]}))
    assert aliased.columns.tolist() == ["query_id", "doc_id", "probability"]


def test_writers_refuse_what_would_not_read_back(tmp_path):
    with pytest.raises(ValueError, match="whitespace"):
        write_qrels(
            pd.DataFrame({"query_id": ["1"], "doc_id": ["a b"], "relevance": [1]}), tmp_path / "q"
        )
    with pytest.raises(ValueError, match="finite"):
        write_run(
            pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [np.inf]}), tmp_path / "r"
        )
    with pytest.raises(ValueError, match="tag"):
        write_run(
            pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]}),
            tmp_path / "r",
            tag="a b",
        )
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("target", ["os.replace", "write_fully"])
def test_crash_during_write_keeps_old_file_and_leaves_no_temp(tmp_path, monkeypatch, target):
    path = tmp_path / "qrels.gz"
    write_qrels(read_qrels(_write(tmp_path, QRELS, "src.txt")), path)
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk on fire")

    if target == "os.replace":
        monkeypatch.setattr(os, "replace", boom)  # the one os module every writer renames with
    else:  # the disk fills while the (compressed) text is written
        monkeypatch.setattr(_files, "write_fully", boom)
    new = pd.DataFrame({"query_id": ["9"], "doc_id": ["z"], "relevance": [1]})
    with pytest.raises(InputError, match="disk on fire") as info:
        write_qrels(new, path)
    assert info.value.source == str(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qrels.gz", "src.txt"]
    assert not any(name.endswith(".tmp") for name in os.listdir(tmp_path))


def test_gzip_members_and_padding_read_as_gzip_reads_them(tmp_path):
    """Several gzip members (as ``cat a.gz b.gz`` makes), NUL padding between them, and a
    member that is cut short or followed by junk, read as :func:`gzip.decompress` reads them."""
    from relimpute._files import read_bytes

    half = len(RUN) // 2
    first, second = gzip.compress(RUN[:half].encode()), gzip.compress(RUN[half:].encode())
    for raw in (first + second, first + b"\0" * 7 + second, gzip.compress(RUN.encode())):
        path = _write(tmp_path, "", "m.gz", raw=raw)
        assert read_bytes(path) == gzip.decompress(raw) == RUN.encode()
    for raw in (first + second[:-3], first + b"junk"):
        with pytest.raises(Exception):  # gzip's own refusal
            gzip.decompress(raw)
        err = _error(read_run, _write(tmp_path, "", "bad.gz", raw=raw))
        assert "unreadable or truncated gzip" in err.problem
