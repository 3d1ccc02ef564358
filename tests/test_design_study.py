"""examples/design_based/engine.py, the vectorised form of relimpute.confidence.survey the
design study runs, agrees with :func:`relimpute.confidence.survey.estimate` sample by sample:
AP of every run and ΔAP of every pair, HT, GREG and PPI++, Poisson and stratified designs."""

import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from relimpute.confidence.survey import estimate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "design_based"))
from engine import TopicDraws, TopicParts, estimates  # noqa: E402

N, RUNS, DEPTH, B = 40, 3, 25, 6
ESTIMATOR_NAMES = {"ht": "ht", "greg": "model-assisted", "ppi++": "ppi++"}


def universe(rng):
    """One topic: relevance x, predictions p, three runs' ranks over 40 documents."""
    x = (rng.random(N) < 0.3).astype(float)
    p = np.clip(0.6 * x + 0.4 * rng.random(N), 0, 1)
    ranks = np.zeros((RUNS, N), int)
    for r in range(RUNS):
        order = rng.permutation(N)[:DEPTH]
        ranks[r, order] = np.arange(1, DEPTH + 1)
    return x, p, ranks


def draws(rng, stratified):
    stratum = (np.arange(N) >= 15).astype(int)
    if stratified:
        drawn = np.zeros((B, N), bool)
        pi = np.where(stratum == 0, 6 / 15, 8 / 25)
        for b in range(B):
            drawn[b, rng.permutation(15)[:6]] = True
            drawn[b, 15 + rng.permutation(25)[:8]] = True
        return TopicDraws(drawn, pi, stratum, True), pi, stratum
    pi = np.clip(rng.random(N), 0.2, 0.9)
    drawn = rng.random((B, N)) < pi
    return TopicDraws(drawn, pi, np.zeros(N, int), False), pi, None


@pytest.mark.parametrize("stratified,variance", [
    (False, "linearised"), (True, "linearised"),
    (False, "jackknife")])
@pytest.mark.parametrize("estimator", ["ht", "greg", "ppi++"])
def test_engine_matches_the_package(stratified, variance, estimator):
    rng = np.random.default_rng(11)
    x, p, ranks = universe(rng)
    d, pi, stratum = draws(rng, stratified)
    parts = TopicParts(x, p, ranks, d)
    pairs = np.array(list(combinations(range(RUNS), 2)))
    value, var, _, dvalue, dvar, _ = estimates(parts, parts.gram(), pairs, estimator, variance)
    docs = np.array([f"d{i}" for i in range(N)])
    runs = {f"r{r}": pd.DataFrame({"query_id": "q", "doc_id": docs[ranks[r] > 0],
                                   "score": -ranks[r][ranks[r] > 0].astype(float)})
            for r in range(RUNS)}
    control = pd.DataFrame({"query_id": "q", "doc_id": docs, "p": p})
    for b in range(B):
        sample = pd.DataFrame({"query_id": "q", "doc_id": docs,
                               "relevance": np.where(d.drawn[b], x.astype(int), -1)})
        sample = sample.assign(stratum=stratum) if stratified else sample.assign(inclusion=pi)
        table = estimate(sample, runs, control=None if estimator == "ht" else control,
                         estimator=ESTIMATOR_NAMES[estimator], pairs="all",
                         variance=variance, bias_correction=False,
                         sampling="stratified" if stratified else "poisson")
        single = table[table["run_b"] == ""].set_index("run").loc[list(runs)]
        paired = table[table["run_b"] != ""]
        assert np.allclose(single["estimate"], value[b], atol=1e-10)
        assert np.allclose(single["se"] ** 2, var[b], rtol=1e-8, atol=1e-12)
        assert np.allclose(paired["estimate"], dvalue[b], atol=1e-10)
        assert np.allclose(paired["se"] ** 2, dvar[b], rtol=1e-8, atol=1e-12)


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
