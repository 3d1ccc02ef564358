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
