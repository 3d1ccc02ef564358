"""``--estimand``: every scoring command says which score it prints, and refuses one it cannot give."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.confidence import ConfidenceEngine
from relimpute.data import Campaign
from relimpute.relevance import Uniform
from test_cli_compare import data  # noqa: F401  (the fixture: a tiny qrels and three runs)

# `relimpute compare qrels.txt runs/ --prior 0.5` before the estimand was named, as printed
# (tsv then rounded to 6 significant digits; it now prints every digit)
BEFORE_TSV = """\
system_a\tsystem_b\te_delta_map\tsd_delta_map\tp_a_better\tci_low\tci_high
alpha\tbeta\t0.0595238\t0.113564\t0.69991\t-0.163058\t0.282106
alpha\tgamma\t0.678571\t0.184812\t0.99988\t0.316347\t1.0408
beta\tgamma\t0.619048\t0.285714\t0.98487\t0.0590579\t1.17904
"""
BEFORE_TABLE = """\
system_a system_b  e_delta_map  sd_delta_map  p_a_better  ci_low  ci_high
   alpha     beta       0.0595        0.1136      0.6999 -0.1631   0.2821
   alpha    gamma       0.6786        0.1848      0.9999  0.3163   1.0408
    beta    gamma       0.6190        0.2857      0.9849  0.0591   1.1790
"""
COMPLETE = "estimand: complete (every retrieved document to full depth judged)"


def _run(argv, capsys):
    """``(exit code, stdout, stderr)``; argparse's SystemExit included."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_complete_is_unchanged_but_for_the_line_naming_it(data, capsys):  # noqa: F811
    qrels, runs = data
    for estimand in ([], ["--estimand", "complete"]):
        code, out, err = _run(["compare", qrels, runs, "--prior", "0.5", "-f", "tsv", *estimand], capsys)
        assert code == 0  # TSV stays machine-readable: the same table, every digit ...
        got, before = (pd.read_csv(io.StringIO(t), sep="\t") for t in (out, BEFORE_TSV))
        assert list(got.columns) == list(before.columns)
        pd.testing.assert_frame_equal(got, before, rtol=1e-5, atol=0)
        assert COMPLETE in err  # ... and the line goes to stderr
        code, out, _ = _run(["compare", qrels, runs, "--prior", "0.5", *estimand], capsys)
        assert code == 0 and out == f"{COMPLETE}\n{BEFORE_TABLE}"


def test_qrels_is_trec_eval_with_sd_0(data, capsys):  # noqa: F811
    qrels, runs = data
    code, out, err = _run(["compare", qrels, runs, "--estimand", "qrels", "-f", "tsv"], capsys)
    assert code == 0 and "estimand: qrels (trec_eval on the qrels given" in err
    pairs = pd.read_csv(io.StringIO(out), sep="\t")
    _, out, _ = _run(["evaluate", qrels, runs, "-m", "AP", "-c", "-f", "tsv"], capsys)
    ap = pd.read_csv(io.StringIO(out), sep="\t").set_index("system")["AP"]
    want = [ap[a] - ap[b] for a, b in zip(pairs["system_a"], pairs["system_b"])]
    np.testing.assert_allclose(pairs["e_delta_map"], want, atol=1e-6)
    assert (pairs["sd_delta_map"] == 0).all()


def test_pool_is_the_engines(data, capsys):  # noqa: F811
    qrels, runs = data
    argv = ["compare", qrels, runs, "--prior", "0.5", "--estimand", "pool", "-f", "tsv"]
    code, out, err = _run([*argv, "--pool-depth", "1"], capsys)
    assert code == 0 and "estimand: pool (the runs pooled together with the judged runs to depth 1)" in err
    campaign = Campaign.from_files(qrels, runs)
    engine = ConfidenceEngine(estimand="pool", pool_depth=1)
    want = engine.confidence(campaign, Uniform(0.5).fit_predict(campaign), method="normal")
    got = pd.read_csv(io.StringIO(out), sep="\t")
    np.testing.assert_allclose(got["e_delta_map"], want.e_delta_map, atol=1e-6)
    np.testing.assert_allclose(got["sd_delta_map"], want.sd_delta_map, atol=1e-6)
    code, _, err = _run(argv, capsys)  # the depth the judgments show, said
    assert code == 0 and "note: pool depth 1, the depth most runs are judged to" in err


def test_evaluate_names_its_estimand(data, capsys):  # noqa: F811
    qrels, runs = data
    code, out, _ = _run(["evaluate", qrels, runs, "-m", "AP"], capsys)
    assert code == 0
    assert out.splitlines()[0] == "estimand: qrels (trec_eval on the qrels given, unjudged = nonrelevant)"
    code, out, _ = _run(["evaluate", qrels, runs, "-m", "AP", "--estimand", "pool",
                         "--pool-depth", "3", "-f", "markdown"], capsys)  # fmt: skip
    assert code == 0 and out.startswith("estimand: pool (the runs pooled together with the judged runs to depth 3)\n\n| system")


def test_pool_does_not_claim_the_posterior_draws_it_does_not_use(data, capsys):  # noqa: F811
    qrels, runs = data
    code, _, err = _run(["evaluate", qrels, runs, "--estimand", "pool", "--pool-depth", "3"], capsys)
    assert code == 0 and "model's point estimate of p" in err  # the default measure: AP
    assert "posterior draws)" not in err
    code, _, err = _run(["evaluate", qrels, runs, "--estimand", "complete"], capsys)
    assert code == 0 and "posterior draws)" in err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["compare", "--estimand", "qrels", "--prior", "0.5"],
         "--estimand: qrels is trec_eval on the qrels given and uses no relevance model: drop --prior"),
        (["compare", "--pool-depth", "3"], "--pool-depth: the depth of --estimand pool, not of complete"),
        (["compare", "--estimand", "pool", "-m", "nDCG@10"],
         "--estimand: pool has exact moments only (AP, P@k, RBP, DCG, NumRelRet), not nDCG@10"),
        (["compare", "--estimand", "pool", "--topic-bootstrap"],
         "--estimand: pool has exact moments only, and --topic-bootstrap is Monte Carlo"),
        (["evaluate", "--estimand", "pool", "-m", "nDCG@10"], "not nDCG@10: choose -m among them"),
        (["evaluate", "--estimand", "qrels", "--llm-labels", "x.tsv"], "drop --llm-labels"),
        (["judge", "--estimand", "pool"], "--estimand: judge cannot give pool: its strategies judge "
         "until confident about the complete MAP; it gives complete"),
        (["calibrate", "--estimand", "qrels", "-o", "out"], "calibrate cannot give qrels"),
        (["calibrate", "--estimand", "pool", "-o", "out"], "calibrate cannot give pool: its trials "
         "start from no judgments and judge where a strategy chooses, so no run is pooled to a depth"),
        (["poolbias", "--estimand", "complete", "--groups", "g.tsv", "--pool-depth", "1", "-o", "out"],
         "poolbias cannot give complete: its correctors estimate each left-out run's full-pool "
         "score (use evaluate or compare); it gives pool"),
    ],
)  # fmt: skip
def test_an_estimand_a_path_cannot_give_is_refused(data, capsys, extra, message):  # noqa: F811
    qrels, runs = data
    command, *options = extra
    code, _, err = _run([command, qrels, runs, *options], capsys)
    assert code == 2 and message in err and "Traceback" not in err
