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
    holes = hole_fractions(campaign, [("x", (a,), (b, c))], pool_depth=5, top=10)
    unjudged = seen = 0
    rows = campaign.system_index([b, c])
    for topic in campaign.topics:
        known = topic.retrieved(rows, 5) & topic.judged
        top = topic.ranking[campaign.system_index(a)[0], :10]
        top = top[top >= 0]
        unjudged += int((~known[top]).sum())
        seen += len(top)
    assert holes[a] == pytest.approx(unjudged / seen) and 0 < holes[a] < 1


def test_pairs_are_called_from_the_left_out_runs_interval():
    from relimpute.bias.slices import pair_slices

    # r0 (truth 0.30) estimated 0.30 ± 0.0392 (sd 0.02); r1 and r2 truths 0.25 and 0.40
    rows = [
        {"group": "g0", "run": "r0", "corrector": "model:m", "measure": "AP", "repeat": 0,
         "reduced": 0.2, "estimate": 0.30, "ci_low": 0.2608, "ci_high": 0.3392, "truth": 0.30},
        {"group": "g1", "run": "r1", "corrector": "model:m", "measure": "AP", "repeat": 0,
         "reduced": 0.2, "estimate": 0.30, "ci_low": 0.29, "ci_high": 0.31, "truth": 0.25},
        {"group": "g1", "run": "r2", "corrector": "model:m", "measure": "AP", "repeat": 0,
         "reduced": 0.2, "estimate": 0.41, "ci_low": 0.40, "ci_high": 0.42, "truth": 0.40},
        {"group": "g1", "run": "r2", "corrector": "lipani", "measure": "AP", "repeat": 0,
         "reduced": 0.2, "estimate": 0.41, "ci_low": np.nan, "ci_high": np.nan, "truth": 0.40},
    ]  # fmt: skip
    table = pair_slices(pd.DataFrame(rows), "run")
    assert len(table) == 2  # lipani has no interval
    close = table.iloc[1]
    assert close["slice"] == "variants (leave one run out), close (<0.01)" and close["pairs"] == 0
    row = table.iloc[0]
    assert row["slice"] == "variants (leave one run out)"
    # r0-r1, r0-r2, r1-r0, r2-r0 (r1 and r2 share a step: no pair)
    assert row["pairs"] == 4
    # r0 vs r1: P = Φ(2.5) = 0.994 right; r0 vs r2: P(beats) = Φ(-5) right;
    # r1 vs r0: Δ 0 → 0.5, wrong side of nothing (favours r1, r1 is worse): wrong; r2 vs r0: right
    assert row["accuracy"] == pytest.approx(0.75) and row["pairs_conf_95"] == 3
    assert row["accuracy_conf_95"] == 1.0 and row["target"] == "too few pairs"
    assert row["w"] == pytest.approx((1 + 1 - 1 + 1) / 4)
    assert row["coverage"] == pytest.approx(2 / 3)  # r1 missed; r2 held at its edge


def test_leave_run_keeps_the_groups_other_runs_pooled(tmp_path):
    from relimpute.bias import groups_from_frame
    from relimpute.bias.study import LeaveOneGroupOut, run_pool_bias_study
    from relimpute.errors import InputError

    sim = simulate_campaign(n_topics=6, n_systems=6, n_docs=120, depth=20, n_families=3, rng=2)
    names = list(sim.campaign.systems)
    groups = groups_from_frame(pd.DataFrame({"run": names, "group": [f"g{f}" for f in sim.family],
                                             "pooled": "yes"}))  # fmt: skip
    study = LeaveOneGroupOut(sim.campaign, groups, pool_depth=5, measures=["AP"], correctors=("reduced",),
                             n_common=0, leave="run")  # fmt: skip
    steps = study._prepared["steps"]
    assert [s[1] for s in steps] == [(r,) for r in names]
    assert all(set(kept) == set(names) - {left[0]} for _, left, kept in steps)
    result = run_pool_bias_study(sim.campaign, groups, pool_depth=5, measures=["AP"], correctors=["reduced"],
                                 models=["uniform"], n_common=0, n_draws=200, progress=False, leave="run")  # fmt: skip
    assert result.settings["leave"] == "run"
    assert set(result.estimates["group"]) == set(names)
    assert result.pair_slices["slice"].tolist() == ["variants (leave one run out)",
                                                    "variants (leave one run out), close (<0.01)"]
    # a run is left out with fewer holes than its whole group
    grouped = run_pool_bias_study(sim.campaign, groups, pool_depth=5, measures=["AP"], correctors=["reduced"],
                                  n_common=0, progress=False)  # fmt: skip
    by_run = result.estimates.drop_duplicates("run").set_index("run")["holes"]
    by_group = grouped.estimates.drop_duplicates("run").set_index("run")["holes"]
    assert (by_run <= by_group[by_run.index] + 1e-12).all() and (by_run < by_group[by_run.index]).any()
    single = groups_from_frame(pd.DataFrame({"run": names, "group": names, "pooled": "yes"}))
    with pytest.raises(InputError, match="every group has one pooled run"):
        LeaveOneGroupOut(sim.campaign, single, pool_depth=5, leave="run")
    with pytest.raises(InputError, match="must be 'run' or 'group'"):
        LeaveOneGroupOut(sim.campaign, groups, pool_depth=5, leave="topic")
