"""The critics' tests as slices of a calibration study's pairs, on hand-built tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from relimpute.calibration import CalibrationReport
from relimpute.calibration.report import scored_pairs
from relimpute.calibration.slices import slice_masks, slices_frame, top_by_judgments
from relimpute.stats import slice_scores as slice_row
from relimpute.calibration.study import CalibrationStudy


def _pairs(n: int = 120) -> pd.DataFrame:
    """``n`` pairs per block: (ranks, true ΔMAP, P(a better)) with known right and wrong calls."""
    blocks = [
        # both in the top 10, far apart, stated 0.99 and right
        ((1, 2), 0.05, 0.99),
        # both in the top 10, close, stated 0.97 and wrong
        ((3, 9), 0.005, 0.03),
        # one outside the top 10, close, stated 0.6 and right
        ((10, 11), -0.002, 0.4),
        # far outside, far apart, stated 0.8 and right
        ((20, 30), 0.2, 0.8),
    ]
    rows = []
    for i, ((ra, rb), delta, p) in enumerate(blocks):
        for j in range(n):
            rows.append({"trial": j, "strategy": "s", "system_a": f"a{i}", "system_b": f"b{i}",
                         "e_delta_map": 0.0, "p_a_better": p, "true_delta_map": delta,
                         "true_rank_a": ra, "true_rank_b": rb, "n_initial": 0, "similarity": 0.5})  # fmt: skip
    return pd.DataFrame(rows)


def _study(pairs: pd.DataFrame) -> CalibrationStudy:
    trials = pd.DataFrame([{"trial": t, "strategy": "s", "seed": t, "systems": "", "initial": "",
                            "judgments": 1, "stopped_because": "confidence", "tau": 0.0, "seconds": 0.0}
                           for t in sorted(pairs["trial"].unique())])  # fmt: skip
    return CalibrationStudy(pairs, trials, {"n_trials": len(trials), "strategy_specs": {}})


def test_slices_count_the_pairs_they_hold():
    table = slices_frame(scored_pairs(_study(_pairs())), ["s"]).set_index("slice")
    assert list(table.index) == ["all", "top-10", "close (<0.01)"]
    assert table["pairs"].tolist() == [480, 240, 240]
    # top 10: half right at 0.99 (W_i = 1), half wrong at 0.97 (W_i = -0.97/0.03)
    assert table.loc["top-10", "w"] == pytest.approx((1 - 0.97 / 0.03) / 2)
    assert table.loc["top-10", "pairs_conf_95"] == 240
    assert table.loc["top-10", "accuracy_conf_95"] == pytest.approx(0.5)
    assert table.loc["top-10", "target"] == "missed"
    # close: 120 wrong at 0.97, 120 right at 0.6
    assert table.loc["close (<0.01)", "accuracy"] == pytest.approx(0.5)
    assert table.loc["close (<0.01)", "share_conf_95"] == pytest.approx(0.5)
    assert table.loc["all", "accuracy"] == pytest.approx(0.75)


def test_a_slice_is_judged_from_100_pairs_on():
    table = slices_frame(scored_pairs(_study(_pairs(20))), ["s"]).set_index("slice")
    assert set(table["target"]) == {"too few pairs"}
    right = slice_row(np.full(100, 0.96), np.ones(100, bool), np.ones(100))
    assert right["target"] == "met" and right["pairs"] == 100
    no_high = slice_row(np.full(100, 0.6), np.ones(100, bool), np.ones(100))
    assert no_high["target"] == "met" and np.isnan(no_high["accuracy_conf_95"])


def test_pairs_without_ranks_are_in_no_top_slice():
    pairs = _pairs(2)
    old = pairs.drop(columns=["true_rank_a", "true_rank_b"])
    assert slice_masks(old)["top-10"].sum() == 0
    pairs.loc[0, "true_rank_a"] = np.nan
    assert slice_masks(pairs, top_k=10)["top-10"].sum() == 3
    assert slice_masks(pairs, top_k=20, close=0.1)["close (<0.1)"].sum() == 6


def test_the_report_prints_the_slices(tmp_path):
    study = _study(_pairs(5))
    report = CalibrationReport.from_study(study)
    report.write(tmp_path, study=study)
    markdown = (tmp_path / "report.md").read_text()
    assert "## Slices: the critics' tests (uncapped confidence)" in markdown
    assert "## Slices: the critics' tests (confidence capped at 0.95)" in markdown
    written = pd.read_csv(tmp_path / "slices.csv")
    assert written["slice"].tolist() == ["all", "top-10", "close (<0.01)"]
    assert written["pairs"].tolist() == [20, 10, 10]
    assert (tmp_path / "slices_capped.csv").is_file()


def test_the_top_slice_is_split_by_the_judgments_of_its_trials(tmp_path):
    pairs = _pairs(10)  # trial j: one top-10 pair right at 0.99, one wrong at 0.97
    made = {j: (0, 5, 50, 500, 5000)[j % 5] for j in range(10)}
    deep = pairs["trial"].map(made) > 100
    pairs.loc[deep & (pairs["system_a"] == "a1"), "p_a_better"] = 0.97  # now right there
    study = _study(pairs)
    study.trials["judgments"] = study.trials["trial"].map(made)
    table = top_by_judgments(scored_pairs(study), study.trials, ["s"]).set_index("judgments")
    assert list(table.index) == ["0", "1–10", "11–100", "101–1000", ">1000"]
    assert table["pairs"].tolist() == [4, 4, 4, 4, 4]  # two trials per bin, two top pairs each
    assert table["accuracy"].tolist() == pytest.approx([0.5, 0.5, 0.5, 1.0, 1.0])
    assert table["mean_confidence"].tolist() == pytest.approx([0.98] * 5)
    assert table.loc["0", "w"] == pytest.approx((1 - 0.97 / 0.03) / 2)
    assert table.loc[">1000", "w"] == pytest.approx(1.0)
    # the edges: 10 judgments is in 1–10, 11 in 11–100, 1001 beyond 1000
    study.trials["judgments"] = study.trials["trial"].map({j: (10, 11, 100, 1000, 1001)[j % 5] for j in range(10)})
    again = top_by_judgments(scored_pairs(study), study.trials, ["s"]).set_index("judgments")
    assert again["pairs"].tolist() == [0, 4, 8, 4, 4]
    report = CalibrationReport.from_study(study)
    report.write(tmp_path, study=study)
    assert pd.read_csv(tmp_path / "top_by_judgments.csv")["pairs"].sum() == 20
    assert "### The top-10 slice by the trial's judgments (uncapped confidence)" in (tmp_path / "report.md").read_text()


def test_documents_only_one_run_found_are_filled_from_the_consensus():
    """The limit docs/studies.md ("Slices") documents: a run whose relevant documents no other
    run retrieves, left unjudged, is placed by the consensus below runs that agree with each
    other, though the full judgments put it first (update the docs with this test)."""
    from relimpute.confidence import ConfidenceEngine
    from relimpute.relevance import load_model
    from relimpute.testing import make_campaign

    rng = np.random.default_rng(0)
    topics = [f"t{i}" for i in range(6)]
    qrels, runs = [], {"B": {}, **{f"C{j}": {} for j in range(4)}}
    for q in topics:
        shared, unique = [f"s{i}" for i in range(30)], [f"u{i}" for i in range(5)]
        qrels += [(q, d, int(i < 5)) for i, d in enumerate(shared)] + [(q, d, 1) for d in unique]
        for j in range(4):  # the consensus: s0-s4 (relevant) first, in some order
            runs[f"C{j}"][q] = list(rng.permutation(shared[:5])) + list(rng.permutation(shared[5:]))
        runs["B"][q] = unique + shared[:5] + shared[10:25]  # AP 1 against the others' 0.5
    hidden = {(q, d) for q in topics for d in unique}
    delta = {}
    for label, hide in (("judged", set()), ("only B found them, unjudged", hidden)):
        campaign = make_campaign(qrels, runs, hidden=hide, quiet=True, rel_threshold=1)
        estimate = load_model().fit(campaign, rng=0).predict(campaign)
        frame = ConfidenceEngine().confidence(campaign, estimate, systems=["B", "C0"], method="normal").to_frame()
        delta[label] = float(frame["e_delta_map"].iloc[0])
    assert delta["judged"] == pytest.approx(0.5)
    assert delta["only B found them, unjudged"] < -0.3
