"""``compare --systems``: one check for the model-based and the design-based answers (a run
named twice, an unknown run, fewer than two runs are refused alike)."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from relimpute.cli import main

INCLUSION = ("query_id doc_id relevance inclusion_probability\n"
             "1 a 1 1\n1 b 0 0.5\n1 c 1 0.5\n2 a 1 0.5\n2 b 1 0.5\n2 c 0 0.5\n")
RUN_A = "1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n2 Q0 a 1 2 r\n2 Q0 c 2 1 r\n"
RUN_B = "1 Q0 c 1 3 r\n1 Q0 a 2 2 r\n2 Q0 b 1 2 r\n2 Q0 a 2 1 r\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "A").write_text(RUN_A)
    (tmp_path / "runs" / "B").write_text(RUN_B)
    (tmp_path / "q.tsv").write_text(INCLUSION)
    return tmp_path


def _compare(files, *argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["compare", str(files / "q.tsv"), str(files / "runs"), *argv])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("answer", [["--prior", "0.5"], ["--estimator", "ht"]])
@pytest.mark.parametrize("systems, message", [
    (["A", "A"], "--systems lists a run twice"),
    (["A", "C"], "unknown run(s) C"),
    (["A"], "need at least two runs to compare"),
])
def test_both_answers_refuse_the_same_systems(files, answer, systems, message):
    code, _, err = _compare(files, *answer, "--systems", *systems)
    assert code != 0 and message in err


@pytest.mark.parametrize("answer", [["--prior", "0.5"], ["--estimator", "ht"]])
def test_both_answers_take_two_named_runs(files, answer):
    code, out, _ = _compare(files, *answer, "--systems", "B", "A", "-f", "tsv")
    assert code == 0 and "B\tA" in out
