"""statAP / statMAP (Horvitz–Thompson, Aslam, Pavlu & Yilmaz 2006) and the inclusion-probability
qrels form: cases derived by hand, AP when everything is judged, bad input, the command line,
and unbiasedness over seeded Poisson samplings of DL 2019 and TREC-8 (tests/statap_study.py)."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.data import Campaign
from relimpute.errors import InputError
from relimpute.io import is_inclusion_qrels, read_inclusion_qrels, read_qrels, read_sampled_qrels
from relimpute.measures.statap import stat_ap, stat_eval, strata_inclusion

from conftest import SHARED_DATA

HEADER = "query_id doc_id relevance inclusion_probability\n"
#: a sampled (pi 1), b sampled non (0.5), c sampled (0.5), d not sampled (0.25), e sampled (0.25)
HAND = HEADER + "1 a 1 1\n1 b 0 0.5\n1 c 1 0.5\n1 d -1 0.25\n1 e 1 0.25\n"
HAND_RUN = "1 Q0 a 1 6 r\n1 Q0 b 2 5 r\n1 Q0 c 3 4 r\n1 Q0 d 4 3 r\n1 Q0 e 5 2 r\n1 Q0 x 6 1 r\n"


def _run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _files(tmp_path, qrels=HAND, run=HAND_RUN):
    (tmp_path / "q.tsv").write_text(qrels)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r.txt").write_text(run)
    return tmp_path / "q.tsv", tmp_path / "runs"


def test_a_poisson_case_derived_by_hand(tmp_path):
    """Relevant and sampled: a (rank 1, pi 1), c (rank 3, pi 1/2), e (rank 5, pi 1/4).

    R̂ = 1 + 2 + 4 = 7. N̂ = Σ x_k/(k pi_k) + Σ_{j<k} x_j x_k/(k pi_j pi_k)
       = 1/1 + 2/3 + 4/5 + (a,c) 2/3 + (a,e) 4/5 + (c,e) 8/5 = 83/15; statAP = 83/105.
    """
    qrels, runs = _files(tmp_path)
    scores = stat_eval(read_inclusion_qrels(qrels), pd.read_csv(
        runs / "r.txt", sep=" ", names=["query_id", "q0", "doc_id", "rank", "score", "tag"]))
    assert scores.loc["1", "statNumRel"] == pytest.approx(7)
    assert scores.loc["1", "statAP"] == pytest.approx(83 / 105)
    assert scores.loc["all", "statAP"] == pytest.approx(83 / 105)


def test_a_stratified_case_derived_by_hand():
    """Stratum 1: a (rel), b judged whole (pi 1). Stratum 2: c, e sampled of c, d, e, f:
    pi = 2/4, pi_ce = 2·1/(4·3) = 1/6. A run ranks a, c, x, e.

    R̂ = 1 + 2 + 2 = 5. N̂ = 1/1 + 1/(2·½) + 1/(4·½) + (a,c) 1/(2·½) + (a,e) 1/(4·½)
       + (c,e) 1/(4·⅙) = 1 + 1 + ½ + 1 + ½ + 3/2 = 5.5; statAP = 1.1 (an estimate may pass 1).
    """
    sample = pd.DataFrame({
        "query_id": ["1"] * 6, "doc_id": list("abcdef"), "stratum": [1, 1, 2, 2, 2, 2],
        "relevance": [1, 0, 1, -1, 1, -1],
    })  # fmt: skip
    design = strata_inclusion(sample)
    assert design["inclusion"].tolist() == [1, 1, 0.5, 0.5, 0.5, 0.5]
    assert design["pair_factor"].tolist()[2] == pytest.approx(0.25 / (1 / 6))
    run = pd.DataFrame({"query_id": "1", "doc_id": list("acxe"), "score": [4.0, 3, 2, 1]})
    scores = stat_eval(sample, run)
    assert scores.loc["1", "statNumRel"] == pytest.approx(5)
    assert scores.loc["1", "statAP"] == pytest.approx(1.1)


def test_the_vectorised_kernel_equals_the_double_sum():
    rng = np.random.default_rng(3)
    x = rng.random(30) < 0.4
    pi = rng.uniform(0.05, 1, 30)
    sampled = rng.random(30) < pi
    y = np.where(x & sampled, 1 / pi, 0.0)
    k = np.arange(1, 31)
    double = sum(y[i] / k[i] for i in range(30)) + sum(
        y[j] * y[i] / k[i] for i in range(30) for j in range(i))
    assert stat_ap(y, k, 2.5) == pytest.approx(double / 2.5)
    assert stat_ap(y[None].repeat(3, 0), k, np.array([2.5, 0.0, 5.0])) == pytest.approx(
        [double / 2.5, 0.0, double / 5.0])  # R̂ = 0 scores 0


def test_stratified_sampling_without_replacement_is_unbiased_in_its_parts():
    """Stratum 1 (10 documents) judged whole, stratum 2 (30) sampled 6 at a time: over 3,000
    samplings the mean of N̂/R (true R) is within 2 se of AP; with π_jk = π_j π_k for the pairs
    of stratum 2 (the Poisson formula) it is not."""
    rng = np.random.default_rng(11)
    relevant = rng.random(40) < 0.4
    stratum = np.repeat([0, 1], [10, 30])
    order = rng.permutation(40)  # the run's ranking of the 40 documents
    rank = np.empty(40, int)
    rank[order] = np.arange(1, 41)
    pi = np.where(stratum == 0, 1.0, 6 / 30)
    factor = np.array([1.0, (6 / 30) ** 2 / (6 * 5 / (30 * 29))])
    truth = stat_ap(relevant[order].astype(float), np.arange(1, 41), relevant.sum())
    draws = {"right": [], "poisson": []}
    for _ in range(3000):
        sampled = stratum == 0
        sampled[10 + rng.choice(30, 6, replace=False)] = True
        y = np.where(sampled & relevant, 1 / pi, 0.0)[order]
        draws["right"].append(stat_ap(y, np.arange(1, 41), relevant.sum(), stratum[order], factor))
        draws["poisson"].append(stat_ap(y, np.arange(1, 41), relevant.sum()))
    for name, values in draws.items():
        z = (np.mean(values) - truth) / (np.std(values, ddof=1) / np.sqrt(len(values)))
        assert (abs(z) <= 2) == (name == "right"), (name, z)


def test_everything_included_gives_trec_eval_ap(tmp_path):
    """With pi = 1 for every judged document, statAP is AP (relimpute's, = trec_eval's)."""
    qrels = read_qrels(SHARED_DATA / "trec-dl-2019-passage" / "qrels.txt") if (
        SHARED_DATA / "trec-dl-2019-passage" / "qrels.txt").is_file() else None
    if qrels is None:
        pytest.skip(f"DL 2019 data not found under {SHARED_DATA}")
    path = tmp_path / "q.tsv"
    path.write_text(HEADER + "".join(f"{q} {d} {r} 1\n" for q, d, r in qrels[
        ["query_id", "doc_id", "relevance"]].itertuples(index=False)))
    runs = sorted((SHARED_DATA / "trec-dl-2019-passage" / "runs").iterdir())[:3]
    (tmp_path / "runs").mkdir()
    for run in runs:
        (tmp_path / "runs" / run.name).symlink_to(run)
    code, out, err = _run("evaluate", path, tmp_path / "runs", "-m", "statAP", "-m", "AP",
                          "--rel-threshold", "2", "-f", "tsv")
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out), sep="\t", comment="#")
    assert np.allclose(table["statAP"], table["AP"], atol=1e-9)


def test_the_campaign_reads_the_form_and_keeps_not_sampled_documents_unjudged(tmp_path):
    qrels, runs = _files(tmp_path)
    assert is_inclusion_qrels(qrels)
    campaign = Campaign.from_files(qrels, runs)
    assert list(campaign.sample.columns) == ["query_id", "doc_id", "relevance", "inclusion"]
    judged = dict(zip(campaign.topics[0].doc_ids, campaign.topics[0].judged))
    assert not judged["d"] and judged["b"]


def test_evaluate_prints_statap_by_default_and_beside_ap(tmp_path):
    qrels, runs = _files(tmp_path)
    code, out, _ = _run("evaluate", qrels, runs, "-q", "-f", "tsv")
    assert code == 0
    table = pd.read_csv(io.StringIO(out), sep="\t", comment="#", dtype={"query_id": str})
    assert list(table.columns) == ["system", "query_id", "statAP"]
    assert table["statAP"].tolist() == pytest.approx([83 / 105] * 2, abs=1e-4)
    code, out, _ = _run("evaluate", qrels, runs, "-m", "statAP", "-m", "AP", "-f", "tsv")
    assert code == 0 and "statAP\tAP" in out


def test_statap_of_stratified_qrels_beside_xinfap(tmp_path):
    from test_inferred_measures import HAND_QRELS, HAND_RUN as STRATA_RUN

    qrels, runs = _files(tmp_path, HAND_QRELS, STRATA_RUN)
    code, out, err = _run("evaluate", qrels, runs, "-m", "xinfAP", "-m", "statAP", "-f", "tsv")
    assert code == 0, err
    run = pd.read_csv(runs / "r.txt", sep=" ",
                      names=["query_id", "q0", "doc_id", "r", "score", "t"])
    expected = stat_eval(read_sampled_qrels(qrels), run).loc["all", "statAP"]
    assert float(out.strip().splitlines()[-1].split("\t")[-1]) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(
    "text, message, line",
    [
        (HEADER + "1 a 1 0\n", "inclusion probability 0.0 is outside (0, 1]", 2),
        (HEADER + "1 a 1 1\n1 b 0 1.5\n", "inclusion probability 1.5 is outside (0, 1]", 3),
        (HEADER + "1 a 1 -0.1\n", "outside (0, 1]", 2),
        (HEADER + "1 a 1 nan\n", "inclusion probability", 2),
        (HEADER + "1 a -3 0.5\n", "relevance -3 is outside [-2, 10]", 2),
        (HEADER + "1 a 1 0.5\n1 a 0 0.5\n", "listed twice (also on line 2)", 3),
        (HEADER + "1 a 1\n", "expected 4 columns", 2),
    ],
)
def test_bad_input_is_an_error_naming_file_and_line(tmp_path, text, message, line):
    path = tmp_path / "q.tsv"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(message)) as err:
        read_inclusion_qrels(path)
    assert err.value.line == line and str(path) in str(err.value)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r.txt").write_text(HAND_RUN)
    code, out, stderr = _run("evaluate", path, tmp_path / "runs", "-m", "statAP")
    assert code == 2 and f"{path}, line {line}:" in stderr and "Traceback" not in stderr


def test_nist_measures_are_refused_on_the_inclusion_form(tmp_path):
    qrels, runs = _files(tmp_path)
    code, _, err = _run("evaluate", qrels, runs, "-m", "xinfAP")
    assert code == 2 and "xinfAP needs stratified sampled qrels" in err
    (tmp_path / "plain.txt").write_text("1 0 a 1\n")
    code, _, err = _run("evaluate", tmp_path / "plain.txt", runs, "-m", "statAP")
    assert code == 2 and "need sampled qrels" in err and "inclusion_probability" in err


def test_a_file_without_the_header_is_not_the_inclusion_form(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("1 0 a 1\n")
    assert not is_inclusion_qrels(path)
    with pytest.raises(InputError, match="expected a header line"):
        read_inclusion_qrels(path)


# --------------------------------------------------------------------------- unbiasedness


#: the two collections of the unbiasedness studies, each with its relevance threshold
BOTH = pytest.mark.parametrize("folder, threshold", [("trec-dl-2019-passage", 2),
                                                     ("trec-8-adhoc", 1)])


def _pooled(folder: str, runs: int | None):
    """The collection's qrels and its pooled runs (``runs`` of them, spread, if given)."""
    import statap_study

    root = SHARED_DATA / folder
    if not (root / "qrels.txt").is_file():
        pytest.skip(f"{folder} not found under {SHARED_DATA} (../shared/data is not beside "
                    "the repo)")
    pooled = statap_study.pooled_runs(root)
    return root / "qrels.txt", (pooled if runs is None else
                                pooled[:: max(1, len(pooled) // runs)][:runs])


def _collection(folder: str, threshold: int, runs: int | None):
    import statap_study

    return statap_study.load(*_pooled(folder, runs), threshold)


def _check_unbiased(folder, threshold, runs, samplings, every_run=True):
    """The HT pieces are exactly unbiased: Σ_t R̂_t within 2 se of Σ_t R_t, and statMAP with the
    true R (mean of N̂_t / R_t) within 2 se of the full-qrels MAP, for every run (or, over many
    runs, beyond 2 se no more often than chance: at most 10%, none beyond 3.5 se). Returns
    statMAP (N̂/R̂, with its ratio bias) per run."""
    import statap_study

    topics, names = _collection(folder, threshold, runs)
    table = statap_study.study(topics, names, samplings, seed=2006)
    known = statap_study.study(topics, names, samplings, seed=2006, known_r=True)
    z = ((known["statMAP"] - known["MAP"]) / known["se"]).abs()
    if every_run:
        assert (z <= 2).all(), known
    else:
        assert (z > 2).mean() <= 0.10 and (z <= 3.5).all(), known
    r = statap_study.r_hat(topics, samplings, seed=2006)
    assert abs(r["mean"] - r["R"]) <= 2 * r["se"], r
    return table


@BOTH
def test_unbiased_small(folder, threshold):
    """CI's honest small version: 6 pooled runs, 300 samplings."""
    _check_unbiased(folder, threshold, 6, 300)


@pytest.mark.slow
@BOTH
def test_unbiased_every_pooled_run(folder, threshold):
    """Every pooled run, 1,000 samplings (the numbers in docs/sampled.md). 37 and 71 runs
    make a few |z| > 2 likely under exact unbiasedness (TREC-8: 2 of 71)."""
    table = _check_unbiased(folder, threshold, None, 1000, every_run=False)
    # statMAP = mean of N̂/R̂ is a ratio estimator: its bias, recorded in docs/sampled.md, is far
    # more than 2 se at 1,000 samplings; it keeps the ranking of the runs
    from scipy.stats import kendalltau

    assert kendalltau(table["statMAP"], table["MAP"]).statistic > 0.9


# ------------------------------------------------------- the acceptance under the paper's design


def _paper_design(folder: str, threshold: int, runs: int | None):
    import statap_readings

    return statap_readings.paper_design(*_pooled(folder, runs), threshold)


def _check_paper_reading(folder, threshold, runs, samplings):
    """Reading (b, c, d) of docs/sampled.md: n draws with replacement from the depth-100 pool
    (p ∝ the AP prior, π = 1 − (1 − p)^n, 10% of the pool expected), truth the MAP on the qrels
    restricted to that pool: every run's mean statMAP is within 2 × statMAP's own standard
    error (the sd of one estimate) of it; not within 2 se of the mean (the ratio's bias)."""
    import statap_readings

    topics, names = _paper_design(folder, threshold, runs)
    table = statap_readings.paper_study(topics, names, samplings)
    result = statap_readings.within(table["statMAP"], table["MAP"], table["statMAP sd"],
                                    samplings)
    assert result["(b) within 2 sd"] == len(names), result
    assert result["(a) within 2 se"] < len(names), result  # statMAP is not unbiased
    assert result["bias mean"] > 0, result


@BOTH
@pytest.mark.parametrize("runs, samplings", [(6, 300), pytest.param(None, 1000,
                                                                     marks=pytest.mark.slow)])
def test_within_its_own_standard_error_under_the_papers_design(folder, threshold, runs,
                                                               samplings):
    """CI's honest small version: the pool of 6 pooled runs, 300 samplings; ``-m slow``:
    every pooled run, 1,000 samplings (the table in docs/sampled.md)."""
    _check_paper_reading(folder, threshold, runs, samplings)


def test_the_papers_draws_with_replacement():
    """n draws with replacement, p = (1/2, 1/4, 1/4): 3 draws are the fewest that judge 2
    documents in expectation (2: 0.75 + 2 · 0.4375 = 1.625; 3: 0.875 + 2 · 0.578 = 2.03);
    a document is judged with π = 1 − (1 − p)^n, so R̂ = Σ x/π is unbiased over the draws."""
    import statap_readings

    p = np.array([0.5, 0.25, 0.25])
    assert statap_readings._draws(p, 2.0) == 3
    pi = 1 - (1 - p) ** 3
    drawn = np.random.default_rng(7).multinomial(3, p, size=20000) > 0
    assert np.abs(drawn.mean(axis=0) - pi).max() < 0.01
    r_hat = (drawn[:, :2] / pi[:2]).sum(axis=1)  # the first two relevant
    assert abs(r_hat.mean() - 2) < 2 * r_hat.std() / np.sqrt(len(r_hat))
