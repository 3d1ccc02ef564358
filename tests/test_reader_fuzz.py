"""Every file a command reads, mutated: exit 0 or exit 2 with a message naming the file, never
a traceback (issue 26). The qrels and run parsers' answers are checked against an oracle in
test_reader_hardening.py; here every reader behind a command option is covered."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relimpute.cli import main

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d4 1\n2 0 d5 0\n"
RUN_A = "1 Q0 d1 1 3.5 a\n1 Q0 d2 2 2 a\n1 Q0 d9 3 1 a\n2 Q0 d4 1 1 a\n2 Q0 d5 2 0.5 a\n"
RUN_B = "1 Q0 d2 1 3 b\n1 Q0 d1 2 2 b\n2 Q0 d5 1 1 b\n2 Q0 d8 2 0.5 b\n"
RUN_C = "1 Q0 d3 1 3 c\n1 Q0 d9 2 2 c\n2 Q0 d4 1 1 c\n2 Q0 d5 2 0.5 c\n"
CURVES = (
    "strategy\tmeasure\tdepth\tn_topics\teffort\teffort_per_topic\tpower\tbias\n"
    "depth\tMAP\t1\t2\t4\t2\t0.5\t0.0\ndepth\tMAP\t2\t2\t8\t4\t0.9\t0.01\n"
)
GROUPS = "run\tgroup\tpooled\na\tg1\tyes\nb\tg2\tyes\nc\tg3\tno\n"
PROB = "query_id\tdoc_id\tprobability\n1\td1\t1\n1\td2\t0\n1\td3\t1\n1\td9\t0.3\n" \
       "2\td4\t1\n2\td5\t0\n2\td8\t0.6\n"  # fmt: skip
DOCS = 'd1\tfirst text\n{"doc_id": "d9", "text": "second"}\nd2\tthird\n'
JOURNAL = (
    json.dumps({"action": "start", "version": 2, "qrels": "QRELS", "qrels_sha256": None,
                "scale": [0, 2], "rel_threshold": 1})  # fmt: skip
    + "\n"
    + json.dumps({"action": "judge", "query_id": "1", "doc_id": "d9", "relevance": 1})
    + "\n"
    + json.dumps({"action": "undo"})
    + "\n"
)
SETTINGS = json.dumps({"model": "uniform", "params": {"prior": 0.3}})
TOML = "rel_threshold = 1\n"

# what a hostile editor types: separators, line ends, numbers that are not, bytes that are not
# UTF-8, quotes and comment marks (pandas), JSON punctuation
PIECES = ["\t", " ", "\n", "\r", "\r\n", "\x00", "\xff", "nan", "inf", "-1", "1e999", "#", '"',
          "'", "{", "}", ",", ":", "=", "[", "]", "yes", "no", "0.5", "é", "\x0b"]  # fmt: skip


@st.composite
def mutated(draw, text: str) -> bytes:
    data = bytearray(text.encode("utf-8"))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "truncate", "line"]))
        at = draw(st.integers(0, len(data)))
        if kind == "insert":
            piece = draw(st.sampled_from(PIECES))
            data[at:at] = piece.encode("latin-1") if piece == "\xff" else piece.encode("utf-8")
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 8))]
        elif kind == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif kind == "truncate":
            del data[at:]
        else:  # repeat or drop a whole line
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines[i : i + 1] = [lines[i]] * draw(st.integers(0, 2))
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def _collection(root: Path) -> dict[str, Path]:
    (root / "runs").mkdir()
    for name, text in {"a": RUN_A, "b": RUN_B, "c": RUN_C}.items():
        (root / "runs" / name).write_text(text)
    (root / "qrels.txt").write_text(QRELS)
    return {"qrels": root / "qrels.txt", "runs": root / "runs", "root": root}


def _commands(f: dict[str, Path], bad: Path) -> dict[str, list]:
    q, r, root = f["qrels"], f["runs"], f["root"]
    quick = ["--correctors", "reduced", "-m", "P@5", "--common-topics", "0"]
    return {
        "qrels": ["evaluate", bad, r, "-m", "AP"],
        "run": ["evaluate", q, r / "a", bad, "-m", "AP"],
        "estimate": ["evaluate", q, r, "-m", "AP", "--estimate", bad],
        "curves": ["plan", bad, "--budget", "10"],
        "groups": ["poolbias", q, r, "--groups", bad, "--pool-depth", "1", *quick, "-o", root / "pb"],
        "pooled-from": ["power", q, r, "--groups", bad, "--pool-depth", "1", "--n-topics", "2",
                        "--repetitions", "2"],  # fmt: skip
        "docs": ["judge", q, r, "--docs", bad, "--journal", root / "j.jsonl", "--budget", "1",
                 "--answers", "-"],  # fmt: skip
        "journal": ["judge", q, r, "--journal", bad, "--export-qrels", root / "x.txt"],
        "settings": ["compare", q, r, "--model", bad, "--normal"],
    }


TEXTS = {
    "qrels": QRELS, "run": RUN_B, "estimate": PROB, "curves": CURVES, "groups": GROUPS,
    "pooled-from": GROUPS, "docs": DOCS, "journal": JOURNAL, "settings": SETTINGS,
}  # fmt: skip


def _run_cli(argv) -> tuple[int, str]:
    """Exit code and stderr of one call; any exception but SystemExit fails the test."""
    err, stdin = io.StringIO(), sys.stdin
    old_err, old_out = sys.stderr, sys.stdout
    sys.stdin, sys.stderr, sys.stdout = io.StringIO("q\n"), err, io.StringIO()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.stdin, sys.stderr, sys.stdout = stdin, old_err, old_out
    return code, err.getvalue()


@pytest.mark.parametrize("reader", sorted(TEXTS))
def test_valid_inputs_pass(tmp_path, reader):
    """The unmutated files are read (the fuzz below starts from inputs that work)."""
    files = _collection(tmp_path)
    path = tmp_path / "input"
    path.write_text(TEXTS[reader].replace("QRELS", str(files["qrels"])))
    code, err = _run_cli(_commands(files, path)[reader])
    assert code == 0, err


@pytest.mark.parametrize("reader", sorted(TEXTS))
def test_mutated_inputs_never_end_in_a_traceback(tmp_path_factory, reader):
    @settings(max_examples=20, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
    @given(data=mutated(TEXTS[reader]))
    def check(data):
        root = tmp_path_factory.mktemp(reader)
        files = _collection(root)
        path = root / "input"
        path.write_bytes(data.replace(b"QRELS", str(files["qrels"]).encode()))
        code, err = _run_cli(_commands(files, path)[reader])
        assert code in (0, 2), (data, err)
        if code == 2:
            assert "Traceback" not in err and "error:" in err, (data, err)
            assert str(path) in err or "argument" in err, (data, err)  # the file is named

    check()


@pytest.mark.parametrize("data", [b"", b"\xff\xfe", b"rel_threshold = \n", b"x = 1\n",
                                  b"rel_threshold = 'two'\n"])  # fmt: skip
def test_bad_settings_files_beside_the_qrels(tmp_path, data):
    files = _collection(tmp_path)
    (tmp_path / "relimpute.toml").write_bytes(data)
    code, err = _run_cli(["evaluate", files["qrels"], files["runs"], "-m", "AP"])
    assert code in (0, 2) and (code == 0 or str(tmp_path / "relimpute.toml") in err), err
