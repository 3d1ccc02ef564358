"""``evaluate --estimator`` and ``compare --estimator``: design-based and model-assisted
answers from sampled qrels on the command line, and their messages for bad input."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.io import read_inclusion_qrels, read_run
from relimpute.measures.statap import stat_eval

INCLUSION = ("query_id doc_id relevance inclusion_probability\n"
             "1 a 1 1\n1 b 0 0.5\n1 c 1 0.5\n1 d -1 0.25\n1 e 1 0.25\n"
             "2 a 1 0.5\n2 b 1 0.5\n2 c 0 0.5\n2 d -1 0.5\n")
RUN_A = "1 Q0 a 1 6 r\n1 Q0 b 2 5 r\n1 Q0 c 3 4 r\n1 Q0 d 4 3 r\n1 Q0 e 5 2 r\n1 Q0 x 6 1 r\n" \
        "2 Q0 a 1 3 r\n2 Q0 c 2 2 r\n2 Q0 d 3 1 r\n"
RUN_B = "1 Q0 e 1 6 r\n1 Q0 d 2 5 r\n1 Q0 a 3 4 r\n2 Q0 b 1 3 r\n2 Q0 a 2 2 r\n"
LABELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n1 0 d 1\n1 0 e 0\n2 0 a 1\n2 0 b 0\n2 0 c 0\n2 0 d 1\n"


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "A").write_text(RUN_A)
    (tmp_path / "runs" / "B").write_text(RUN_B)
    (tmp_path / "q.tsv").write_text(INCLUSION)
    (tmp_path / "labels.txt").write_text(LABELS)
    return tmp_path


def _tsv(text):
    return pd.read_csv(io.StringIO(text), sep="\t")


def test_evaluate_ht_is_statap_corrected_and_says_estimator_and_estimand(files):
    """Per topic, HT is statAP less its second-order ratio bias, a correction capped at half
    the topic's standard error."""
    code, out, err = _run("evaluate", files / "q.tsv", files / "runs", "--estimator", "ht",
                          "-q", "-f", "tsv")
    assert code == 0
    table = _tsv(out).astype({"query_id": str})
    qrels = read_inclusion_qrels(files / "q.tsv")
    for name in ("A", "B"):
        stat = stat_eval(qrels, read_run(files / "runs" / name))["statAP"]
        rows = table[(table["run"] == name) & (table["query_id"] != "all")]
        for _, row in rows.iterrows():
            assert abs(row["estimate"] - stat[row["query_id"]]) <= 0.5 * row["se"] + 1e-4
            assert row["low"] < row["estimate"] < row["high"]
    assert "Horvitz-Thompson" in err and "every document of the sample's universe" in err


def test_compare_ppi_with_labels_gives_the_pair_and_equivalence(files):
    code, out, err = _run("compare", files / "q.tsv", files / "runs", "--estimator", "ppi++",
                          "--llm-labels", files / "labels.txt", "--margin", "0.05", "-f", "tsv")
    assert code == 0
    pair = _tsv(out).dropna(subset=["run_b"]).iloc[0]
    assert (pair["run"], pair["run_b"]) == ("A", "B")
    assert 0 <= pair["p_a_better"] <= 1 and 0 <= pair["p_equivalent"] <= 1
    assert "PPI++" in err and "LLM labels" in err


@pytest.mark.parametrize("argv, message", [
    (["--estimator", "ht", "--llm-labels", "labels.txt"], "uses no control variate"),
    (["--estimator", "ppi++"], "needs a control variate"),
])
def test_a_control_variate_is_asked_for_exactly_when_needed(files, argv, message):
    argv = [str(files / a) if a.endswith(".txt") else a for a in argv]
    code, _, err = _run("evaluate", files / "q.tsv", files / "runs", *argv)
    assert code != 0 and message in err


def test_ordinary_qrels_say_why_there_is_no_design_based_interval(files):
    (files / "plain.txt").write_text("1 0 a 1\n1 0 b 0\n")
    code, _, err = _run("evaluate", files / "plain.txt", files / "runs", "--estimator", "ht")
    assert code != 0 and "no design-based interval" in err and "plain.txt" in err


def test_a_judged_document_with_probability_zero_names_file_and_line(files):
    (files / "zero.tsv").write_text(INCLUSION.replace("1 c 1 0.5", "1 c 1 0"))
    code, _, err = _run("evaluate", files / "zero.tsv", files / "runs", "--estimator", "ht")
    assert code != 0 and "outside (0, 1]" in err and "zero.tsv" in err and "4" in err


def test_an_unsampled_stratum_is_said_not_dropped(files):
    (files / "strata.txt").write_text("1 0 a 1 1\n1 0 b 1 0\n1 0 c 2 1\n1 0 d 2 -1\n"
                                      "2 0 a 1 1\n2 0 b 2 -1\n2 0 c 2 -1\n")
    code, out, err = _run("evaluate", files / "strata.txt", files / "runs", "--estimator", "ht",
                          "-q", "-f", "tsv")
    assert code == 0
    table = _tsv(out)
    row = table[(table["query_id"].astype(str) == "2") & (table["run"] == "A")].iloc[0]
    assert pd.isna(row["estimate"]) and "contribution is unknown" in row["note"]
    assert "left out (unsampled stratum): 2" in err


@pytest.mark.parametrize("answer", [["--prior", "0.5"], ["--estimator", "ht"]])
@pytest.mark.parametrize("systems, message", [
    (["A", "A"], "--systems lists a run twice"),
    (["A", "C"], "unknown run(s) C"),
    (["A"], "need at least two runs to compare"),
])
def test_both_answers_of_compare_refuse_the_same_systems(files, answer, systems, message):
    """One --systems check for the model-based and the design-based answer."""
    code, _, err = _run("compare", files / "q.tsv", files / "runs", *answer, "--systems", *systems)
    assert code != 0 and message in err


def test_a_model_control_is_cross_fitted_to_the_runs_read_once(files, monkeypatch):
    """With ``--model`` the estimates' ranks and the campaign the model is cross-fitted to are
    one reading of the run files: each file is read once."""
    from relimpute.io import assembly

    read, file_rows = [], assembly._file_rows

    def counted(path, *args, **kwargs):
        read.append(path.name)
        return file_rows(path, *args, **kwargs)

    monkeypatch.setattr(assembly, "_file_rows", counted)
    code, out, _ = _run("compare", files / "q.tsv", files / "runs", "--estimator",
                        "model-assisted", "--model", "uniform", "-f", "tsv")
    assert code == 0 and len(_tsv(out)) == 3  # A, B and the pair
    assert sorted(read) == ["A", "B"]


def test_compare_by_design_shows_the_runs_chosen(files):
    """``compare --estimator --systems A C`` prints A's and C's own rows and the pair A − C, as
    the model-based answer prints only the runs chosen; B, estimated too, is not shown."""
    (files / "runs" / "C").write_text(RUN_B.replace("1 Q0 e 1", "1 Q0 x 1"))
    code, out, _ = _run("compare", files / "q.tsv", files / "runs", "--estimator", "ht",
                        "--systems", "A", "C", "-f", "tsv")
    assert code == 0
    table = _tsv(out).astype({"run_b": object})
    rows = sorted((r, "" if pd.isna(b) else b) for r, b in table[["run", "run_b"]].to_numpy())
    assert rows == [("A", ""), ("A", "C"), ("C", "")]
