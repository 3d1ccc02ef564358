"""Probabilistic qrels: what ``fit -o`` writes, ``evaluate``/``compare --estimate`` read."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from relimpute import Campaign, InputError, read_prob_qrels, write_prob_qrels
from relimpute.cli import main
from relimpute.relevance import Uniform, load_model
from relimpute.relevance.base import RelevanceEstimate

QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 x 1\nq2 0 y 0\n"
RUNS = {
    "r1": {"q1": "a b d e", "q2": "x v y"},
    "r2": {"q1": "d a c", "q2": "v x"},
    "r3": {"q1": "b e a d", "q2": "y x v"},
}


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "runs").mkdir()
    for name, per_topic in RUNS.items():
        lines = [
            f"{q} Q0 {d} {i + 1} {10 - i} {name}\n"
            for q, docs in per_topic.items()
            for i, d in enumerate(docs.split())
        ]
        (tmp_path / "runs" / name).write_text("".join(lines))
    (tmp_path / "uniform.json").write_text(
        json.dumps({"model": "uniform", "params": {"prior": 0.25}})
    )
    return tmp_path


def _tsv(capsys) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t")


def test_python_round_trip_is_exact(files):
    campaign = Campaign.from_files(files / "qrels.txt", files / "runs")
    estimate = load_model("rtc").fit_predict(campaign, rng=0)
    path = files / "estimate.tsv"
    write_prob_qrels(estimate.to_frame(), path)
    assert path.read_text().splitlines()[0] == "query_id\tdoc_id\tprobability"
    back = RelevanceEstimate.from_frame(campaign, read_prob_qrels(path))
    for before, after in zip(estimate.p, back.p):
        np.testing.assert_array_equal(before, after)  # repr round-trips floats exactly


def test_headerless_and_aliased_headers_are_read(tmp_path):
    (tmp_path / "plain").write_text("q1 a 0.5\nq1 b 1\n")
    (tmp_path / "alias").write_text("qid\tdocno\tp\nq1\ta\t0.5\nq1\tb\t1\n")
    for name in ("plain", "alias"):
        frame = read_prob_qrels(tmp_path / name)
        assert frame["probability"].tolist() == [0.5, 1.0]


def test_errors_after_the_header_name_the_right_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("query_id\tdoc_id\tprobability\nq1\ta\t0.5\nq1\tb\t1.5\n")
    with pytest.raises(InputError) as err:
        read_prob_qrels(path)
    assert err.value.line == 3 and "outside [0, 1]" in err.value.problem
    path.write_text("query_id\tdoc_id\tprobability\n")
    with pytest.raises(InputError, match="no rows after the header"):
        read_prob_qrels(path)


def test_cli_fit_then_evaluate_estimate_gives_expected_measures(files, capsys):
    qrels, runs, est = str(files / "qrels.txt"), str(files / "runs"), str(files / "est.tsv")
    assert main(["fit", "--model", str(files / "uniform.json"), qrels, runs, "-o", est]) == 0
    capsys.readouterr()
    measures = ["-m", "P@2", "-m", "NumRelRet", "-f", "tsv"]
    assert main(["evaluate", qrels, runs, "--estimate", est, *measures]) == 0
    # a model without posterior draws writes none: the file gives E[m] only, no narrow sd
    assert not (files / "est.tsv.draws.npz").exists()
    frame = _tsv(capsys).set_index("system")
    assert list(frame.columns) == ["num_q", "E[P@2]", "E[NumRelRet]"]
    assert main(["evaluate", qrels, runs, "--model", str(files / "uniform.json"), *measures]) == 0
    fitted = _tsv(capsys).set_index("system")
    pd.testing.assert_frame_equal(frame, fitted[frame.columns])
    # r1: q1 top 2 = a (rel), b (0) -> 0.5; q2 = x (rel), v (p .25) -> 0.625
    assert frame.loc["r1", "E[P@2]"] == pytest.approx((0.5 + 0.625) / 2, rel=1e-5)  # tsv: 6 digits
    assert fitted.loc["r1", "sd[P@2]"] == pytest.approx(np.sqrt(0.1875 / 4) / 2, rel=1e-5)  # tsv: 6 digits
    # r1 retrieves relevant a, x and unjudged d, e, v (p .25 each): 2.75, sd sqrt(3 * .1875)
    assert frame.loc["r1", "E[NumRelRet]"] == pytest.approx(2.75, rel=1e-5)  # tsv: 6 digits
    assert fitted.loc["r1", "sd[NumRelRet]"] == pytest.approx(0.75, rel=1e-5)  # tsv: 6 digits
    assert frame["num_q"].tolist() == [2, 2, 2]


def test_cli_evaluate_estimate_monte_carlo_measure_matches_the_engine(files, capsys):
    qrels, runs, est = str(files / "qrels.txt"), str(files / "runs"), str(files / "est.tsv")
    campaign = Campaign.from_files(qrels, runs)
    estimate = Uniform(prior=0.25).fit_predict(campaign)
    write_prob_qrels(estimate.to_frame(), est)
    argv = ["evaluate", qrels, runs, "--estimate", est, "-m", "nDCG@3", "--seed", "7", "-f", "tsv"]
    assert main(argv) == 0
    frame = _tsv(capsys).set_index("system")
    from relimpute.confidence import ConfidenceEngine

    oracle = ConfidenceEngine().confidence(
        campaign, estimate, pairs=[], measure="nDCG@3", n_draws=4000, rng=7,
        method="monte carlo",
    ).scores
    np.testing.assert_allclose(frame["E[nDCG@3]"], oracle.e_map, rtol=1e-5)
    assert "sd[nDCG@3]" not in frame  # no posterior draws beside the file: E[m] only


def test_cli_compare_estimate_equals_the_model_it_was_fitted_with(files, capsys):
    qrels, runs, est = str(files / "qrels.txt"), str(files / "runs"), str(files / "est.tsv")
    assert main(["fit", "--model", str(files / "uniform.json"), qrels, runs, "-o", est]) == 0
    capsys.readouterr()
    base = ["compare", qrels, runs, "-f", "tsv"]
    assert main([*base, "--estimate", est]) == 0
    from_file = _tsv(capsys)
    assert main([*base, "--prior", "0.25"]) == 0
    pd.testing.assert_frame_equal(from_file, _tsv(capsys))


def test_estimate_bad_input(files, capsys):
    qrels, runs, est = str(files / "qrels.txt"), str(files / "runs"), files / "est.tsv"
    est.write_text("query_id\tdoc_id\tprobability\nq1\td\t0.5\n")  # e, v missing
    assert main(["compare", qrels, runs, "--estimate", str(est)]) == 2
    err = capsys.readouterr().err
    assert str(est) in err and "no probability for unjudged document" in err
    assert main(["compare", qrels, runs, "--estimate", str(est), "--prior", "0.5"]) == 2
    assert "not --prior and --estimate" in capsys.readouterr().err
    assert main(["evaluate", qrels, runs, "--estimate", str(est), "-q"]) == 2
    assert "--estimate cannot be combined with -q" in capsys.readouterr().err


def test_read_estimate_gives_python_what_estimate_file_reads(files):
    """``read_estimate`` is the Python door of ``--estimate FILE``: the file aligned to the
    campaign with the posterior draws ``fit -o`` wrote beside it (``from_frame`` alone has
    none), a document the campaign lacks left out with a warning, one it needs an error."""
    from relimpute.errors import LeftOutWarning
    from relimpute.relevance.draws_file import read_estimate

    qrels, runs, est = str(files / "qrels.txt"), str(files / "runs"), files / "est.tsv"
    assert main(["fit", qrels, runs, "-o", str(est)]) == 0  # the default model: with draws
    campaign = Campaign.from_files(qrels, runs)
    estimate = read_estimate(est, campaign)
    plain = RelevanceEstimate.from_frame(campaign, read_prob_qrels(est))
    assert estimate.draws is not None and plain.draws is None
    for before, after in zip(plain.p, estimate.p):
        np.testing.assert_array_equal(before, after)
    frame = Uniform(prior=0.25).fit_predict(campaign).to_frame()
    extra = pd.DataFrame({"query_id": ["q1"], "doc_id": ["zz"], "probability": [0.5]})
    write_prob_qrels(pd.concat([frame, extra], ignore_index=True), files / "extra.tsv")
    with pytest.warns(LeftOutWarning, match="lists 1 document"):
        read_estimate(files / "extra.tsv", campaign)
    (files / "bad.tsv").write_text("query_id\tdoc_id\tprobability\nq1\td\t0.5\n")
    with pytest.raises(InputError, match="fitted to other runs or qrels"):
        read_estimate(files / "bad.tsv", campaign)
