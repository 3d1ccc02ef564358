"""The pool-bias study's slices: left-out runs by hole fraction, on hand-built tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from relimpute.bias.slices import hole_fractions, hole_slices, slope
from relimpute.simulate import simulate_campaign


def _estimates() -> pd.DataFrame:
    """Four runs with holes 0.05, 0.15, 0.15, 0.35; 'good' is flat, trec_eval falls 0.1 per 0.1."""
    holes = [0.05, 0.15, 0.15, 0.35]
    rows = []
    for i, h in enumerate(holes):
        for corrector, bias in (("good", 0.001 * (-1) ** i), ("lipani", -0.05 * h)):
            rows.append({"group": f"g{i}", "run": f"r{i}", "corrector": corrector, "measure": "AP",
                         "repeat": 0, "reduced": 0.5 - h, "estimate": 0.5 + bias, "truth": 0.5,
                         "holes": h})  # fmt: skip
    return pd.DataFrame(rows)


def test_bins_count_runs_and_average_bias():
    table = hole_slices(_estimates())
    assert list(dict.fromkeys(table["corrector"])) == ["trec_eval", "good", "lipani"]
    plain = table[table["corrector"] == "trec_eval"].set_index("holes")
    assert list(plain.index) == ["0-0.1", "0.1-0.2", "0.3-0.4"]
    assert plain["runs"].tolist() == [1, 2, 1]
    assert plain["bias"].to_numpy() == pytest.approx([-0.05, -0.15, -0.35])
    assert plain["slope"].iloc[0] == pytest.approx(-0.1) and not plain["flat"].iloc[0]
    good = table[table["corrector"] == "good"]
    assert abs(good["slope"].iloc[0]) <= 0.02 and good["flat"].all()
    lipani = table[table["corrector"] == "lipani"]
    assert lipani["slope"].iloc[0] == pytest.approx(-0.005)


def test_repeats_are_averaged_and_one_hole_fraction_has_no_slope():
    est = _estimates()
    again = est[est["corrector"] == "good"].assign(repeat=1, estimate=0.5)
    table = hole_slices(pd.concat([est, again], ignore_index=True))
    good = table[table["corrector"] == "good"].set_index("holes")
    assert good.loc["0-0.1", "bias"] == pytest.approx(0.0005)  # (0.001 + 0) / 2
    assert np.isnan(slope([0.2, 0.2], [0.1, 0.3]))
    assert hole_slices(est.drop(columns="holes")).empty


def test_hole_fractions_count_the_top_documents_outside_the_kept_pool():
    campaign = simulate_campaign(n_topics=3, n_systems=3, n_docs=50, depth=20, rng=1).campaign
    a, b, c = campaign.systems
    holes = hole_fractions(campaign, [("x", (a,), (b, c))], depth=5, top=10)
    unjudged = seen = 0
    rows = campaign.system_index([b, c])
    for topic in campaign.topics:
        known = topic.retrieved(rows, 5) & topic.judged
        top = topic.ranking[campaign.system_index(a)[0], :10]
        top = top[top >= 0]
        unjudged += int((~known[top]).sum())
        seen += len(top)
    assert holes[a] == pytest.approx(unjudged / seen) and 0 < holes[a] < 1
