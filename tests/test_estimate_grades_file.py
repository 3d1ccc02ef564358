"""Probabilistic qrels with grades (issue 25 item 3): ``fit -o`` writes P(grade ≥ g) columns,
the readers give the estimate its grades back, ``evaluate --estimate`` scores graded measures
with them, and bad files are refused naming the file and line."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from relimpute import Campaign, read_prob_qrels, write_prob_qrels
from relimpute.cli import main
from relimpute.confidence import ConfidenceEngine
from relimpute.relevance import Fusion
from relimpute.relevance.base import RelevanceEstimate
from relimpute.relevance.draws_file import with_draws

QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq1 0 e 0\nq2 0 x 1\nq2 0 y 0\nq2 0 w 2\n"
#: per run, each topic's ranking: "topic doc doc ...; topic doc ..."
RUNS = {"r1": "q1 a b d e f; q2 x v y w", "r2": "q1 d a c f; q2 v x w z", "r3": "q1 b e a d; q2 y x v z"}


@pytest.fixture
def files(write_collection):
    runs = {}
    for name, text in RUNS.items():
        rankings = [part.split() for part in text.split(";")]
        runs[name] = "".join(
            f"{r[0]} Q0 {d} {i + 1} {10 - i} {name}\n" for r in rankings for i, d in enumerate(r[1:])
        )
    return write_collection(QRELS, runs)


def _estimate(files):
    campaign = Campaign.from_files(files / "qrels.txt", files / "runs", rel_threshold=1)
    return campaign, Fusion(n_draws=0).fit_predict(campaign, rng=0)


def test_round_trip_keeps_the_grades(files):
    campaign, estimate = _estimate(files)
    assert estimate.grades is not None and estimate.grades.levels == (0, 1, 2)
    path = files / "estimate.tsv"
    write_prob_qrels(estimate.to_frame(), path)
    assert path.read_text().splitlines()[0] == "query_id\tdoc_id\tprobability\tp_ge_1\tp_ge_2"
    back = RelevanceEstimate.from_frame(campaign, read_prob_qrels(path))
    assert back.grades.levels == (0, 1, 2) and back.grades.anchor == 1
    for t, (before, after) in enumerate(zip(estimate.p, back.p)):
        np.testing.assert_array_equal(before, after)
        np.testing.assert_allclose(
            back.grades.at_least(t, after), estimate.grades.at_least(t, before), rtol=1e-12, atol=1e-15
        )
    # the binary reading of the same file: the three columns alone, as before grades
    binary = RelevanceEstimate.from_frame(campaign, read_prob_qrels(path)[["query_id", "doc_id", "probability"]])
    assert binary.grades is None


def test_cli_fit_then_evaluate_estimate_scores_ndcg_with_the_grades(files, capsys):
    qrels, runs, est = str(files / "qrels.txt"), str(files / "runs"), str(files / "est.tsv")
    fit = ["fit", qrels, runs, "--rel-threshold", "1", "-o", est]
    assert main(fit) == 0
    capsys.readouterr()
    assert "p_ge_2" in (files / "est.tsv").read_text().splitlines()[0]
    argv = ["evaluate", qrels, runs, "--rel-threshold", "1", "--estimate", est, "-m", "nDCG@3",
            "--seed", "7", "-f", "tsv"]  # fmt: skip
    assert main(argv) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t").set_index("system")
    campaign = Campaign.from_files(qrels, runs, rel_threshold=1)
    read = with_draws(RelevanceEstimate.from_frame(campaign, read_prob_qrels(est)), campaign, est)
    assert read.n_draws == 100 and read.grades.cut_draws is not None  # the fit's, beside the file
    engine = ConfidenceEngine()
    graded = engine.confidence(
        campaign, read, pairs=[], measure="nDCG@3", n_draws=4000, rng=7, method="monte carlo"
    )
    np.testing.assert_allclose(frame["E[nDCG@3]"], graded.scores.e_map, rtol=1e-5)  # 6 digits printed
    binary = RelevanceEstimate(read.query_ids, read.doc_ids, read.p, draws=read.draws)
    without = engine.confidence(
        campaign, binary, pairs=[], measure="nDCG@3", n_draws=4000, rng=7, method="monte carlo"
    )
    assert not np.allclose(frame["E[nDCG@3]"], without.scores.e_map)


@pytest.mark.parametrize(
    "body, message, line",
    [
        ("q1\td\t0.5\t0.6\t0.7\n", "p_ge_2 0.7 exceeds p_ge_1 0.6", 2),
        ("q1\td\t0.5\t0.6\t0.1\nq1\tf\t0.5\tx\t0.1\n", "p_ge_1 'x' is not a number", 3),
        ("q1\td\t0.5\t0.6\t1.5\n", "p_ge_2 1.5 is outside [0, 1]", 2),
        ("q1\td\t0.5\t0.6\n", "expected 5 columns", 2),
    ],
)
def test_bad_grade_columns_name_file_and_line(files, capsys, body, message, line):
    qrels, runs, est = str(files / "qrels.txt"), str(files / "runs"), files / "est.tsv"
    est.write_text("query_id\tdoc_id\tprobability\tp_ge_1\tp_ge_2\n" + body)
    assert main(["evaluate", qrels, runs, "--rel-threshold", "1", "--estimate", str(est)]) == 2
    err = capsys.readouterr().err
    assert f"{est}, line {line}" in err and message in err and "Traceback" not in err


def test_a_file_written_at_another_threshold_is_refused(files, capsys):
    qrels, runs, est = str(files / "qrels.txt"), str(files / "runs"), str(files / "est.tsv")
    assert main(["fit", qrels, runs, "--rel-threshold", "1", "-o", est]) == 0
    capsys.readouterr()
    assert main(["evaluate", qrels, runs, "--rel-threshold", "2", "--estimate", est, "-m", "nDCG@3"]) == 2
    err = capsys.readouterr().err
    assert est in err and "another relevance threshold" in err and "Traceback" not in err
    # the line is named: the first whose probability is not its p_ge_2
    rows = [line.split("\t") for line in (files / "est.tsv").read_text().splitlines()]
    first = next(n for n, r in enumerate(rows[1:], 2) if float(r[2]) != float(r[4]))
    assert f"{est}, line {first}: probability {float(rows[first - 1][2])!r} differs from p_ge_2 " in err


def test_the_threshold_check_allows_rounding(files, capsys):
    # a file whose probability column was rewritten with a rounding error is still consistent
    qrels, runs, est = str(files / "qrels.txt"), str(files / "runs"), files / "est.tsv"
    assert main(["fit", qrels, runs, "--rel-threshold", "1", "-o", str(est)]) == 0
    frame = read_prob_qrels(est)
    frame["probability"] *= 1 - 1e-12
    write_prob_qrels(frame, est)
    capsys.readouterr()
    argv = ["evaluate", qrels, runs, "--rel-threshold", "1", "--estimate", str(est), "-m", "nDCG@3"]
    assert main(argv) == 0, capsys.readouterr().err
