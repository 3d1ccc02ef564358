"""``relimpute judge`` and its journal: no judgment lost or changed, bad input a clean error."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys

import pytest

from relimpute import _files
from relimpute.cli import main
from relimpute.errors import InputError
from relimpute.io import read_qrels
from relimpute.selection.journal import Journal, read_records
from test_judge_cli import Terminal


@pytest.fixture
def graded(tmp_path):
    """TREC DL-like graded qrels (0-3, relevant from 2) and two runs over two topics."""
    for name, order in {"A": "abdefg", "B": "gfedab"}.items():
        lines = [f"{q} Q0 {q}{d} {i + 1} {10 - i} {name}\n" for q in ("q1", "q2")
                 for i, d in enumerate(order)]  # fmt: skip
        (tmp_path / name).write_text("".join(lines))
    (tmp_path / "qrels.txt").write_text(
        "q1 0 q1a 3\nq1 0 q1b 0\nq1 0 q1c 1\nq2 0 q2a 2\nq2 0 q2b 0\nq2 0 q2c 1\n"
    )
    return tmp_path


def _args(tmp, *extra, journal="j.jsonl"):
    return ["judge", str(tmp / "qrels.txt"), str(tmp / "A"), str(tmp / "B"),
            "--journal", str(tmp / journal), *map(str, extra)]  # fmt: skip


def _judge(argv, keys, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", Terminal("".join(k + "\n" for k in keys)))
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _judged(path):
    return [(r["doc_id"], r["relevance"]) for r in read_records(path) if r["action"] == "judge"]


# --------------------------------------------------------------------------- the collection's scale


def test_graded_qrels_store_the_assessors_grade(graded, monkeypatch, capsys):
    code, out, _ = _judge(_args(graded, "--rel-threshold", "2"), ["r", "3", "1", "q"],
                          monkeypatch, capsys)  # fmt: skip
    assert code == 0
    assert "grade? [0-3] (relevant from 2)" in out
    assert "'r' is not a key: answer a grade 0-3" in out
    path = graded / "j.jsonl"
    assert [g for _, g in _judged(path)] == [3, 1]
    header = read_records(path)[0]
    assert header["scale"] == [0, 3] and header["rel_threshold"] == 2
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask  # the journal follows the umask
    exported = graded / "out.txt"
    assert main(["judge", str(graded / "qrels.txt"), "--journal", str(path),
                 "--export-qrels", str(exported)]) == 0  # fmt: skip
    new = read_qrels(exported).tail(2)
    assert new["relevance"].tolist() == [3, 1]


def test_default_threshold_on_graded_qrels_no_longer_stores_grade_1(graded, monkeypatch, capsys):
    # The original fault: with --rel-threshold 1 (default) the 'relevant' key stored grade 1,
    # which DL 2019's convention (relevant = 2+) reads as nonrelevant.
    _judge(_args(graded), ["2", "q"], monkeypatch, capsys)
    assert [g for _, g in _judged(graded / "j.jsonl")] == [2]


def test_binary_qrels_keep_r_and_n(tmp_path, monkeypatch, capsys):
    (tmp_path / "qrels.txt").write_text("q1 0 q1a 1\nq1 0 q1b 0\n")
    for name, order in {"A": "abcd", "B": "dcba"}.items():
        (tmp_path / name).write_text(
            "".join(f"q1 Q0 q1{d} {i + 1} {9 - i} {name}\n" for i, d in enumerate(order))
        )
    code, out, _ = _judge(_args(tmp_path), ["2", "r", "q"], monkeypatch, capsys)
    assert code == 0 and "relevant? [r/1] yes" in out and "'2' is not a key" in out
    assert [g for _, g in _judged(tmp_path / "j.jsonl")] == [1]
    assert read_records(tmp_path / "j.jsonl")[0]["scale"] == [0, 1]


def test_out_of_scale_journal_label_is_refused(graded, monkeypatch, capsys):
    _judge(_args(graded), ["2", "q"], monkeypatch, capsys)
    path = graded / "j.jsonl"
    text = path.read_text().replace('"relevance": 2', '"relevance": 99')
    path.write_text(text)
    argv = ["judge", str(graded / "qrels.txt"), "--journal", str(path),
            "--export-qrels", str(graded / "out.txt")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{path}, line 2: grade 99 is not on the journal's scale 0..3" in err
    assert not (graded / "out.txt").exists()
    with pytest.raises(ValueError, match="outside the journal's scale"):
        with Journal.open(graded / "k.jsonl", {"scale": [0, 3]}) as journal:
            journal.judge("q1", "a", 4)


def test_export_refuses_a_journal_of_other_qrels(graded, monkeypatch, capsys):
    _judge(_args(graded), ["2", "q"], monkeypatch, capsys)
    other = graded / "other.txt"
    other.write_text("q1 0 q1a 1\n")
    argv = ["judge", str(other), "--journal", str(graded / "j.jsonl"),
            "--export-qrels", str(graded / "out.txt")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "j.jsonl: this journal was judged on the qrels" in err and "other.txt" in err
    # the same content elsewhere is the same qrels
    other.write_bytes((graded / "qrels.txt").read_bytes())
    assert main(argv) == 0


# --------------------------------------------------------------------------- the journal file


def test_complete_last_line_without_newline_is_kept(graded, monkeypatch, capsys):
    _judge(_args(graded), ["2", "0", "q"], monkeypatch, capsys)
    path = graded / "j.jsonl"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # the final newline never reached the disk
    code, out, _ = _judge(_args(graded), ["q"], monkeypatch, capsys)
    assert code == 0 and "resumed with 2 action(s)" in out
    assert path.read_bytes().endswith(b"}\n")
    assert [g for _, g in _judged(path)] == [2, 0]


def test_replay_error_names_the_journal(graded, monkeypatch, capsys):
    _judge(_args(graded), ["2", "q"], monkeypatch, capsys)
    path = graded / "j.jsonl"
    with open(path, "a") as out:
        out.write(json.dumps({"action": "judge", "query_id": "q1", "doc_id": "nope",
                              "relevance": 1}) + "\n")  # fmt: skip
        out.write(json.dumps({"action": "skip", "query_id": "q1"}) + "\n")
    code, _, err = _judge(_args(graded), ["q"], monkeypatch, capsys)
    assert code == 2 and f"{path}, line 4: incomplete skip record" in err
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")
    code, _, err = _judge(_args(graded), ["q"], monkeypatch, capsys)
    assert code == 2 and f"{path}, line 3: cannot replay this journal line" in err
    assert "<input>" not in err


def test_second_process_on_a_journal_stops(graded, monkeypatch, capsys):
    path = graded / "j.jsonl"
    _judge(_args(graded), ["q"], monkeypatch, capsys)  # the session's journal exists
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from relimpute.selection.journal import Journal\n"
         f"j = Journal.open({str(path)!r}, {{}}); print('locked', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "locked"
        code, _, err = _judge(_args(graded), ["2", "q"], monkeypatch, capsys)
        assert code == 2 and "journal is in use by another relimpute judge session" in err
        assert str(path) in err
    finally:
        holder.communicate("", timeout=30)
    assert _judged(path) == []  # the second session wrote nothing
    code, _, _ = _judge(_args(graded), ["2", "q"], monkeypatch, capsys)  # free again
    assert code == 0 and len(_judged(path)) == 1


def test_disk_full_while_judging_loses_no_saved_judgment(graded, monkeypatch, capsys):
    _judge(_args(graded), ["2", "q"], monkeypatch, capsys)
    path = graded / "j.jsonl"
    before = path.read_bytes()
    real_write = os.write

    def half_then_full(fd, data):
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(_files.os, "write", half_then_full)
    code, out, err = _judge(_args(graded), ["0", "q"], monkeypatch, capsys)
    monkeypatch.undo()
    assert code == 2
    assert f"{path}: cannot write the journal (No space left on device)" in err
    assert path.read_bytes() == before  # the half-written line was taken back
    code, out, _ = _judge(_args(graded), ["q"], monkeypatch, capsys)
    assert code == 0 and "resumed with 1 action(s)" in out


# --------------------------------------------------------------------------- option values


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--confidence", "2", "argument --confidence: must lie strictly between 0 and 1, got 2.0"),
        ("--confidence", "nan", "argument --confidence: must lie strictly between 0 and 1, got nan"),
        ("--confidence", "x", "argument --confidence: not a number: 'x'"),
        ("--budget", "-1", "argument --budget: -1 is not a positive integer"),
        ("--prior", "7", "argument --prior: 7 is not in [0, 1]"),
        ("--depth", "0", "argument --depth: 0 is not a positive integer"),
    ],
)
def test_bad_option_values(graded, capsys, option, value, message):
    with pytest.raises(SystemExit) as info:
        main(_args(graded, option, value))
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_pair_journal_and_docs(graded, monkeypatch, capsys):
    code, _, err = _judge(_args(graded, "--pair", "A", "A"), ["q"], monkeypatch, capsys)
    assert code == 2 and "--pair needs two different runs, got 'A' twice" in err
    code, _, err = _judge(_args(graded, journal=""), ["q"], monkeypatch, capsys)
    assert code == 2 and f"{graded}: is a directory, not a journal file" in err
    missing = graded / "missing.tsv"
    code, _, err = _judge(_args(graded, "--docs", missing), ["q"], monkeypatch, capsys)
    assert code == 2 and f"{missing}: cannot read --docs file: No such file" in err
    latin = graded / "latin1.tsv"
    latin.write_bytes(b"q1a\tok\nq1b\tcaf\xe9\n")
    code, _, err = _judge(_args(graded, "--docs", latin), ["q"], monkeypatch, capsys)
    assert code == 2 and f"{latin}, line 2: --docs file is not UTF-8 text" in err
    with pytest.raises(InputError, match="cannot read journal: No such file"):
        Journal.read(graded / "none.jsonl")


@pytest.mark.shared_data
def test_dl19_judgments_read_as_the_collection_reads_them(dl19_dir, tmp_path, monkeypatch, capsys):
    """On DL 2019 (grades 0-3, relevant from 2) the assessor's '2' is stored as 2, and with the
    default --rel-threshold 1 a '1' stays a 1: the exported qrels say what was said."""
    argv = ["judge", str(dl19_dir / "qrels.txt"), str(dl19_dir / "runs" / "bm25base_p.gz"),
            str(dl19_dir / "runs" / "p_bert.gz"), "--journal", str(tmp_path / "j.jsonl"),
            "--strategy", "depth"]  # fmt: skip
    code, out, _ = _judge(argv, ["2", "1", "q"], monkeypatch, capsys)
    assert code == 0 and "grade? [0-3] (relevant from 1)" in out
    assert [g for _, g in _judged(tmp_path / "j.jsonl")] == [2, 1]
    out_path = tmp_path / "qrels.txt"
    assert main(["judge", str(dl19_dir / "qrels.txt"), "--journal", str(tmp_path / "j.jsonl"),
                 "--export-qrels", str(out_path)]) == 0  # fmt: skip
    assert read_qrels(out_path).tail(2)["relevance"].tolist() == [2, 1]
