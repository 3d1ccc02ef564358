"""examples/design_based/study.py, the coverage study of relimpute.confidence.survey: its small
cell reports every row (its numbers are the batched entry's, checked against
:func:`relimpute.confidence.survey.estimate` sample by sample in tests/test_survey_batched.py).
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "design_based"))


DL19 = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-dl-2019-passage"


def _dl19_cell(samplings):
    import study

    universe = study.Universe(study.load("dl19"))
    rng = np.random.default_rng([study.SEED, 100])
    p, estimate_ = study.pilot_model(universe, "dl19", 0.1, rng)
    pairs, results = study.cell(universe, {"none": None, "model": p}, "pps", 0.1, estimate_,
                                samplings, np.random.default_rng([study.SEED, 100, 1]))
    return pd.DataFrame(study.summarise(universe, pairs, results)), universe


@pytest.mark.shared_data
@pytest.mark.skipif(not DL19.exists(), reason="needs ../shared/data/trec-dl-2019-passage")
def test_small_study_reports_every_cell():
    """The small version CI runs: 3 samplings of DL 2019 at 10% (PPS), every row present and
    every width positive."""
    table, universe = _dl19_cell(3)
    assert len(table) == 2 * 3  # (HT) + (GREG, PPI++), each with two variances
    assert set(table["variance"]) == {"linearised", "jackknife"}
    assert (table["map_width"] > 0).all()
    assert universe.truth_ap.shape == (43, 37)


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.skipif(not DL19.exists(), reason="needs ../shared/data/trec-dl-2019-passage")
@pytest.mark.xfail(strict=True, reason="statAP's ratio N/R is biased at 10% of a DL pool "
                   "(+0.036 under PPS, from the few relevant drawn per topic) and no reading "
                   "tried removes it at HT's width (examples/design_based/README.md): the "
                   "guarantee is not met yet")
def test_guarantee_on_dl19_at_ten_percent():
    """Issue's targets, 500 samplings: coverage 93-97%, mean |bias| of MAP <= 0.003."""
    table, _ = _dl19_cell(500)
    jack = table[table["variance"] == "jackknife"]
    assert jack["map_coverage"].between(0.93, 0.97).all()
    assert jack["dmap_coverage"].between(0.93, 0.97).all()
    assert (jack["map_bias"] <= 0.003).all()


@pytest.mark.parametrize("design, correction, variances", [
    ("uniform", False, ("linearised", "jackknife")),
    ("census", "jackknife", ("jackknife", "averaged"))])
def test_a_sampling_of_the_study_is_estimate_of_that_sample(design, correction, variances):
    """Oracle for the study's cell: sampling b across topics is one sample of the collection,
    and its MAP̂ and ΔMAP̂ and their variances (HT, GREG and PPI++, λ cross-fitted over topics)
    are :func:`relimpute.confidence.survey.estimate`'s for that sample, for the uniform design
    and for the census (top k judged whole, the jackknife's corrected ratio). Tolerance 1e-10
    absolute (estimates), 1e-8 relative (variances): the same sums in another order."""
    from types import SimpleNamespace

    import study
    from relimpute.confidence.survey import estimate

    rng = np.random.default_rng(3)
    T, R, n = 4, 3, 30
    topics, controls = [], []
    for t in range(T):
        ranks = np.zeros((R, n), int)
        for r in range(R):
            ranks[r, rng.permutation(n)[:20]] = np.arange(1, 21)
        best = np.where(ranks > 0, ranks, 101).min(axis=0)
        x = (rng.random(n) < 0.3).astype(float)
        controls.append(np.clip(0.6 * x + 0.4 * rng.random(n), 0, 1))
        topics.append(dict(query_id=f"q{t}", ranks=ranks, x=x, best=best,
                           doc_ids=np.array([f"d{i}" for i in range(n)])))
    universe = SimpleNamespace(topics=topics, truth_ap=np.zeros((T, R)), pool_size=T * n)
    B, rate = 3, 0.3
    pairs, results = study.cell(universe, {"none": None, "model": controls}, design, rate,
                                None, B, np.random.default_rng(8), chunk=2,
                                bias_correction=correction, variances=variances)
    rng8 = np.random.default_rng(8)
    plan = study.inclusion(universe, design, rate, None)
    draws = [study.draw(pi, s, st, B, rng8) for pi, s, st in plan]
    if design == "census":  # the census stratum judged whole, the rest sampled
        assert all(d.drawn[:, d.stratum == 0].all() for d in draws)
        assert not all(d.drawn[:, d.stratum == 1].all() for d in draws)
    runs = {f"r{r}": pd.concat([pd.DataFrame({
        "query_id": u["query_id"], "doc_id": u["doc_ids"][u["ranks"][r] > 0],
        "score": -u["ranks"][r][u["ranks"][r] > 0].astype(float)}) for u in topics])
        for r in range(R)}
    control = pd.concat([pd.DataFrame({"query_id": u["query_id"], "doc_id": u["doc_ids"],
                                       "p": p}) for u, p in zip(topics, controls)])
    for b in range(B):
        sample = pd.concat([pd.DataFrame({
            "query_id": u["query_id"], "doc_id": u["doc_ids"], "stratum": d.stratum,
            "relevance": np.where(d.drawn[b], u["x"].astype(int), -1)})
            for u, d in zip(topics, draws)])
        for (c, e, v), (est, var, delta, dvar, _) in results.items():
            table = estimate(sample, runs, control=None if e == "ht" else control,
                             estimator=e, pairs="all", variance=v,
                             bias_correction=correction, sampling="stratified")
            table = table[table["query_id"] == "all"]
            single, paired = table[table["run_b"] == ""], table[table["run_b"] != ""]
            np.testing.assert_allclose(est[b], single["estimate"], rtol=0, atol=1e-10,
                                       err_msg=f"{c} {e} {v}")
            np.testing.assert_allclose(var[b], single["se"] ** 2, rtol=1e-8, atol=1e-14)
            np.testing.assert_allclose(delta[b], paired["estimate"], rtol=0, atol=1e-10)
            np.testing.assert_allclose(dvar[b], paired["se"] ** 2, rtol=1e-8, atol=1e-14)


def test_guided_strata_spend_the_budget_by_uncertainty():
    """The guided-strata design's allocation: strata cut at the uncertainty's quantiles, each
    stratum's rate in [floor, 1], rising with its mean uncertainty, Σ N_h rate_h = the budget
    (to 1e-6 of the pool); the documents of highest uncertainty in the last stratum."""
    import study

    u = np.random.default_rng(5).gamma(0.5, 1.0, 10_000)
    for rate in (0.05, 0.1, 0.2):
        stratum, rates = study.strata_rates(u, rate)
        size = np.bincount(stratum, minlength=len(rates))
        assert abs((size * rates).sum() - rate * len(u)) < 1e-6 * len(u)
        assert (rates >= study.STRATA_FLOOR_SHARE * rate - 1e-12).all() and (rates <= 1).all()
        assert (np.diff(rates) >= 0).all() and rates[-1] > rates[0]
        assert stratum[np.argmax(u)] == len(rates) - 1 and stratum[np.argmin(u)] == 0


@pytest.mark.shared_data
@pytest.mark.skipif(not DL19.exists(), reason="needs ../shared/data/trec-dl-2019-passage")
def test_the_worked_example_names_the_topic_that_holds_ppi_s_variance(tmp_path):
    """The README's worked example (``draw_sample.py --seed 1``, PPI++ with UMBRELA GPT-4o's
    labels, TUA1-1 against p_bert): the labels call 48 of topic 1113437's 180 documents
    relevant where the sample finds 2 of 18; the λ cross-fitted on the other topics (0.53) sends
    its R̂ to the floor, and that topic holds 99% of ΔMAP's variance. The pair's note says so."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    import draw_sample
    from relimpute.cli import main

    path = tmp_path / "sample.tsv"
    draw_sample.draw(draw_sample.judged_documents(), 0.1, 1).to_csv(path, sep=" ", index=False,
                                                                   float_format="%.6g")
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert main(["compare", str(path), str(DL19 / "runs"), "--rel-threshold", "2",
                     "--estimator", "ppi++", "--llm-labels",
                     str(DL19 / "llm" / "umbrela-gpt-4o.txt"), "--systems", "TUA1-1", "p_bert",
                     "-f", "tsv"]) == 0
    table = pd.read_csv(io.StringIO(out.getvalue()), sep="\t", comment="#", dtype=str,
                        keep_default_na=False)
    pair = table[table["run_b"] == "p_bert"].iloc[0]
    assert "topic 1113437 carries 99% of this mean's variance" in pair["note"]
    assert "λ 0.53 there" in pair["note"] and "--estimator ht" in pair["note"]
