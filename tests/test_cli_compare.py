"""``relimpute compare`` on a tiny hand-made data set and on DL 2019."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.confidence import ConfidenceEngine
from relimpute.data import Campaign
from relimpute.relevance import Uniform

QRELS = """\
q1 0 d1 1
q1 0 d2 0
q1 0 d3 1
q2 0 e1 2
q2 0 e2 0
"""
RUNS = {
    "alpha": [
        "q1 Q0 d1 1 3.0 alpha",
        "q1 Q0 d4 2 2.0 alpha",
        "q1 Q0 d2 3 1.0 alpha",
        "q2 Q0 e1 1 2.0 alpha",
        "q2 Q0 e3 2 1.0 alpha",
    ],
    "beta": [
        "q1 Q0 d4 1 3.0 beta",
        "q1 Q0 d1 2 2.0 beta",
        "q1 Q0 d5 3 1.0 beta",
        "q2 Q0 e3 1 2.0 beta",
        "q2 Q0 e1 2 1.0 beta",
    ],
    "gamma": ["q1 Q0 d2 1 2.0 gamma", "q1 Q0 d6 2 1.0 gamma", "q2 Q0 e2 1 1.0 gamma"],
}


@pytest.fixture
def data(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, lines in RUNS.items():
        (runs / f"{name}.run").write_text("\n".join(lines) + "\n")
    return qrels, runs


def expected(qrels, runs, prior=0.5, ratio="constant", systems=None):
    campaign = Campaign.from_files(qrels, runs)
    estimate = Uniform(prior).fit_predict(campaign)
    return ConfidenceEngine(ratio=ratio).confidence(
        campaign, estimate, systems=systems, method="normal"
    )


def test_pairs_table_tsv(data, capsys):
    qrels, runs = data
    assert main(["compare", str(qrels), str(runs), "--prior", "0.3", "--format", "tsv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t")
    want = expected(qrels, runs, prior=0.3).to_frame()
    assert (
        frame[["system_a", "system_b"]].values.tolist()
        == want[["system_a", "system_b"]].values.tolist()
    )
    np.testing.assert_allclose(frame.p_a_better, want.p_a_better, rtol=1e-5)
    np.testing.assert_allclose(frame.e_delta_map, want.e_delta_map, rtol=1e-5, atol=1e-7)


def test_matrix_json_with_systems_and_delta(data, capsys):
    qrels, runs = data
    argv = ["compare", str(qrels), str(runs), "--systems", "gamma", "alpha", "--ratio", "delta"]
    assert main(argv + ["--matrix", "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["system"] for r in rows] == ["gamma", "alpha"]
    p = expected(qrels, runs, ratio="delta", systems=["gamma", "alpha"]).p_a_better[0]
    assert rows[0]["alpha"] == pytest.approx(p) and rows[1]["gamma"] == pytest.approx(1 - p)
    assert rows[0]["gamma"] is None or np.isnan(rows[0]["gamma"])


def test_table_and_markdown_formats(data, capsys):
    qrels, runs = data
    assert main(["compare", str(qrels), str(runs), "--confidence", "0.9"]) == 0
    heading, *lines = capsys.readouterr().out.splitlines()
    assert heading == "estimand: complete (every retrieved document to full depth judged)"
    assert lines[0].split() == [
        "system_a",
        "system_b",
        "e_delta_map",
        "sd_delta_map",
        "p_a_better",
        "ci_low",
        "ci_high",
    ]
    assert len(lines) == 4
    assert (
        main(["compare", str(qrels), str(runs), "--matrix", "-f", "markdown", "--depth", "1"]) == 0
    )
    out = capsys.readouterr().out  # columns numbered as the rows, under the estimand
    assert out.startswith(
        "estimand: complete (every retrieved document to depth 1 judged)\n\n"
        "| system | 1 | 2 | 3 |\n|---|---|---|---|\n| 1 alpha | - |"
    )


def test_input_errors_exit_2(data, tmp_path, capsys):
    qrels, runs = data
    assert main(["compare", str(qrels), str(runs), "--systems", "alpha", "nosuch"]) == 2
    assert "--systems: unknown run(s) nosuch" in capsys.readouterr().err
    assert main(["compare", str(qrels), str(runs), "--systems", "alpha"]) == 2
    assert "at least two runs" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 0 d1 1\nq1 0 d2\n")
    assert main(["compare", str(bad), str(runs)]) == 2
    assert f"{bad}, line 2" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(qrels), str(runs), "--prior", "1.5"])
    assert exc.value.code == 2
    assert "argument --prior: 1.5 is not in [0, 1]" in capsys.readouterr().err


def test_dl19_matrix(dl19_dir, capsys):
    """The default model orders runs as official MAP does on the official (nearly complete) qrels,
    surely where they are more than 0.05 apart (the closest pair, 0.034 apart, stays near 0.87:
    the runs go to rank 1,000 and the spread of the decay below the pool acts there);
    --prior 0.5 is the uniform prior, which punishes short runs such as ICT-BERT2."""
    argv = ["compare", str(dl19_dir / "qrels.txt"), str(dl19_dir / "runs"), "--rel-threshold", "2"]
    official = {"bm25base_p": 0.301, "runid2": 0.267, "ICT-BERT2": 0.242, "p_bert": 0.468}
    assert main(argv + ["--systems", *official, "--matrix", "-f", "tsv"]) == 0
    matrix = pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t").set_index("system")
    order = ["p_bert", "bm25base_p", "runid2", "ICT-BERT2"]
    for i, better in enumerate(order):
        for worse in order[i + 1 :]:
            surely = official[better] - official[worse] > 0.05
            assert matrix.loc[better, worse] >= (0.95 if surely else 0.8), (better, worse)
    assert main(argv + ["--systems", *official, "--matrix", "-f", "tsv", "--prior", "0.5"]) == 0
    uniform = pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t").set_index("system")
    assert uniform.loc["ICT-BERT2", "runid2"] == pytest.approx(0.0)
    assert uniform.loc["bm25base_p", "runid2"] < 0.5  # the uniform prior gets this pair wrong


def test_prior_and_model_are_exclusive(dl19_dir, capsys):
    argv = ["compare", str(dl19_dir / "qrels.txt"), str(dl19_dir / "runs"), "--rel-threshold", "2"]
    assert main(argv + ["--model", "rtc", "--prior", "0.5"]) == 2
    assert "give one of --model, --prior and --estimate, not --model and --prior" in capsys.readouterr().err


def test_model_option_uses_the_fitted_estimate(data, capsys):
    qrels, runs = data
    assert main(["compare", str(qrels), str(runs), "--model", "rtc", "--seed", "1", "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    from relimpute.relevance import load_model

    campaign = Campaign.from_files(qrels, runs)
    estimate = load_model("rtc").fit_predict(campaign, rng=1)
    want = ConfidenceEngine().confidence(campaign, estimate, method="normal").to_frame()
    assert [r["p_a_better"] for r in rows] == pytest.approx(want["p_a_better"].tolist(), abs=1e-12)
    # The fitted model gives other probabilities than the uniform prior here.
    uniform = expected(qrels, runs).to_frame()["p_a_better"].to_numpy()
    assert not np.allclose(want["p_a_better"].to_numpy(), uniform)


def test_unknown_model_exits_2(data, capsys):
    qrels, runs = data
    assert main(["compare", str(qrels), str(runs), "--model", "no-such-model"]) == 2
    assert "unknown relevance model" in capsys.readouterr().err


def test_default_confidence_is_monte_carlo_over_the_models_draws(dl19_dir, capsys):
    """The shipped default model hands over posterior draws: the confidence is Monte Carlo
    over them (seeded, so repeatable), and --normal falls back to the normal approximation."""
    argv = ["compare", str(dl19_dir / "qrels.txt"), str(dl19_dir / "runs"), "--rel-threshold", "2",
            "--systems", "runid2", "bm25base_p", "-f", "json", "--seed", "3", "--mc-draws", "500"]
    frames = []
    for extra in ([], [], ["--normal"]):
        assert main(argv + extra) == 0
        frames.append(pd.read_json(io.StringIO(capsys.readouterr().out)))
    pd.testing.assert_frame_equal(frames[0], frames[1])
    assert frames[0]["sd_delta_map"].iloc[0] != pytest.approx(frames[2]["sd_delta_map"].iloc[0])
    with pytest.raises(SystemExit, match="2"):  # refused when parsed, before any work
        main(argv + ["--mc-draws", "1"])


def test_point_estimate_answers_say_they_are_narrower(data, capsys):
    """No shortcut narrower than the answer goes unsaid: --normal, a model without draws and
    an --estimate file without draws each say on stderr that the model's own uncertainty is
    left out; the default (posterior draws) and a fixed prior do not."""
    qrels, runs = data
    base = ["compare", str(qrels), str(runs), "--seed", "1", "-f", "json"]
    said = {}
    for name, extra in {
        "default": [],
        "normal": ["--normal"],
        "rtc": ["--model", "rtc"],
        "prior": ["--prior", "0.3"],
    }.items():
        assert main(base + extra) == 0
        said[name] = "narrower than the posterior's" in capsys.readouterr().err
    assert said == {"default": False, "normal": True, "rtc": True, "prior": False}
    out = qrels.parent / "estimate.tsv"
    assert main(["fit", str(qrels), str(runs), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(base + ["--estimate", str(out)]) == 0  # the draws beside it: the posterior's
    assert "narrower than the posterior's" not in capsys.readouterr().err
    (qrels.parent / "estimate.tsv.draws.npz").unlink()  # a file written before fit kept them
    assert main(base + ["--estimate", str(out)]) == 0
    err = capsys.readouterr().err
    assert "no posterior draws" in err and str(out) in err
    # evaluate --estimate gives E[m] alone from such a file, and says why
    assert main(["evaluate", str(qrels), str(runs), "--estimate", str(out), "-m", "AP"]) == 0
    err = capsys.readouterr().err
    assert "relimpute evaluate: note:" in err and "no posterior draws" in err and "E[m] only" in err


def test_help_opens_with_what_the_default_does(capsys):
    """The default answer is Monte Carlo over the default model's posterior draws; the help
    said "the normal approximation" first, which only --normal and draw-less models give."""
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    opening = capsys.readouterr().out.split("\n\n")[1]  # the paragraph after the usage
    opening = " ".join(opening.split())
    assert "By default these come by Monte Carlo" in opening
    assert "posterior draws" in opening and "--mc-draws" in opening
    assert opening.index("Monte Carlo") < opening.index("normal approximation")
    assert "--normal gives instead the normal approximation" in opening


def test_tsv_and_json_keep_every_digit_of_the_bounds(data, capsys):
    """The human formats round a Monte Carlo bound at its standard error; tsv and json are read
    by programs and print the engine's numbers whole (tsv rounded them, and at 6 digits)."""
    from relimpute.cli import build_parser
    from relimpute.cli._relevance import relevance_estimate
    from relimpute.cli._requests import RelevanceSource

    qrels, runs = data
    argv = ["compare", str(qrels), str(runs), "--seed", "3", "--mc-draws", "500"]
    args = build_parser(["compare"]).parse_args(argv)
    campaign = Campaign.from_files(qrels, runs)
    want = ConfidenceEngine().confidence(
        campaign, relevance_estimate(RelevanceSource.from_args(args), campaign, ["AP"], "compare", 3),
        measure="AP", n_draws=500, rng=3,
    ).to_frame(level=0.95)
    assert main([*argv, "-f", "tsv"]) == 0
    out, err = capsys.readouterr()
    got = pd.read_csv(io.StringIO(out), sep="\t")
    columns = ["e_delta_map", "sd_delta_map", "p_a_better", "ci_low", "ci_high"]
    np.testing.assert_array_equal(got[columns].to_numpy(), want[columns].to_numpy())
    assert "ci_low and ci_high have Monte Carlo standard error (up to" in err
    assert main([*argv, "-f", "json"]) == 0
    rows = pd.DataFrame(json.loads(capsys.readouterr().out))
    np.testing.assert_array_equal(rows[columns].to_numpy(), want[columns].to_numpy())
    assert main(argv) == 0  # the table still rounds to the standard error
    assert "are rounded at the decimal of their Monte Carlo" in capsys.readouterr().err


def test_prior_not_a_number_is_refused_as_other_numbers_are(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["compare", "qrels.txt", "runs", "--prior", "x"])
    assert exc.value.code == 2
    assert "argument --prior: 'x' is not a number" in capsys.readouterr().err
