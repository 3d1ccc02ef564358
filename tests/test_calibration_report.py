"""The report's tables and files on a hand-made study whose answers are known."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from relimpute.calibration import CalibrationReport, CalibrationStudy, read_study
from relimpute.calibration.report import breakdown_frame, scored_pairs, summary_frame
from relimpute.errors import InputError


def _study() -> CalibrationStudy:
    """Two strategies, three trials of three pairs; one pair per trial is a true tie."""
    rows = []
    # (p_a_better, true delta, n_initial, similarity) per pair, same truth for both strategies
    s1 = [(0.9, 0.1, 2, 0.05), (0.2, 0.1, 1, 0.15), (0.7, 0.0, 0, 0.25)]  # W_i: 1, -4, (tie)
    s2 = [(0.97, 0.1, 2, 0.05), (0.6, 0.1, 1, 0.15), (0.5, 0.0, 0, 0.25)]  # W_i: 1, 1, (tie)
    for trial in range(3):
        for name, preds in (("s1", s1), ("s2", s2)):
            for i, (p, delta, n_init, sim) in enumerate(preds):
                rows.append(
                    {
                        "trial": trial, "strategy": name, "system_a": f"r{i}", "system_b": f"r{i + 1}",
                        "e_delta_map": 0.0, "p_a_better": p, "true_delta_map": delta,
                        "n_initial": n_init, "similarity": sim,
                    }
                )
    pairs = pd.DataFrame(rows)
    # in trial 2 strategy s1 is wrong at certainty on the first pair: W_i = -100
    pairs.loc[(pairs["trial"] == 2) & (pairs["strategy"] == "s1") & (pairs["system_a"] == "r0"), "p_a_better"] = 0.0
    trials = pd.DataFrame(
        [
            {"trial": t, "strategy": s, "seed": t, "systems": "r0,r1,r2,r3", "initial": "r0,r1",
             "judgments": j, "stopped_because": "alpha", "tau": tau, "seconds": 0.1}
            for t, (j1, j2) in enumerate([(10, 10), (0, 20), (40, 60)])
            for s, j, tau in (("s1", j1, 0.2 + 0.1 * t), ("s2", j2, 0.5 + 0.1 * t))
        ]
    )
    config = {"n_trials": 3, "k": 4, "c": 2, "alpha": 0.95, "depth": 100, "seed": 1,
              "rel_threshold": 2, "strategy_specs": {}}
    return CalibrationStudy(pairs=pairs, trials=trials, config=config)


def test_scored_pairs_drop_ties_and_orient():
    scored = scored_pairs(_study())
    assert len(scored) == 12 and (scored["true_delta_map"] != 0).all()
    s1 = scored[scored["strategy"] == "s1"]
    np.testing.assert_allclose(s1["w_i"], [1, -4, 1, -4, -100, -4])


def test_summary_matches_hand_computation():
    summary = summary_frame(_study()).set_index("strategy")
    assert summary.loc["s1", "w"] == pytest.approx((1 - 4 + 1 - 4 - 100 - 4) / 6)
    assert summary.loc["s2", "w"] == pytest.approx(1.0)
    assert summary.loc["s1", "ties_excluded"] == 3
    assert summary.loc["s1", "median_judgments"] == 10 and summary.loc["s2", "mean_judgments"] == 30
    assert summary.loc["s1", "share_zero_judgments"] == pytest.approx(1 / 3)
    assert summary.loc["s1", "mean_tau"] == pytest.approx(0.3)
    assert summary.loc["s2", "accuracy_conf_95"] == 1.0 and summary.loc["s2", "share_conf_95"] == 0.5
    # capping at 0.95 bounds the certain loss at 19
    capped = summary_frame(_study(), cap=0.95).set_index("strategy")
    assert capped.loc["s1", "w"] == pytest.approx((1 - 4 + 1 - 4 - 19 - 4) / 6)
    low, high = summary.loc["s1", ["w_low", "w_high"]]
    assert low <= summary.loc["s1", "w"] <= high


def test_breakdowns_group_pairs():
    by_initial = breakdown_frame(_study(), "initial")
    groups = by_initial.drop_duplicates(["strategy", "group"]).set_index(["strategy", "group"])
    # ties (the no-initial pairs) are gone, so only two groups remain
    assert sorted(groups.index.get_level_values("group").unique()) == ["one initial", "two initial"]
    assert groups.loc[("s1", "one initial"), "group_w"] == pytest.approx(-4)
    assert groups.loc[("s1", "two initial"), "group_w"] == pytest.approx((1 + 1 - 100) / 3)
    assert groups.loc[("s1", "two initial"), "group_pairs"] == 3
    by_sim = breakdown_frame(_study(), "similarity")
    assert sorted(by_sim["group"].unique()) == ["0-0.1", "0.1-0.2"]
    with pytest.raises(ValueError):
        breakdown_frame(_study(), "topic")


def test_report_files_and_structure(tmp_path):
    study = _study()
    report = CalibrationReport.from_study(study, cap=0.95)
    written = report.write(tmp_path / "out", study=study)
    names = {p.name for p in written}
    for name in (
        "report.md", "report.json", "summary.txt", "summary.csv", "summary_capped.csv",
        "table2_bins.csv", "table3_initial.csv", "table4_similarity.csv", "trials.csv",
        "paired_tests.csv", "pairs.csv.gz", "reliability.png", "reliability.svg",
    ):
        assert name in names and (tmp_path / "out" / name).stat().st_size > 0
    assert (tmp_path / "out" / "reliability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "out" / "reliability.svg").read_bytes()[:2000]
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert set(doc["summary"]) == {"raw", "capped"} and len(doc["bins"]["raw"]) == 14
    markdown = (tmp_path / "out" / "report.md").read_text()
    for heading in ("## Table 2", "## Table 3", "## Table 4", "## Paired tests"):
        assert heading in markdown
    bins = pd.read_csv(tmp_path / "out" / "table2_bins.csv")
    assert bins.groupby("strategy")["n"].sum().tolist() == [6, 6]
    # paired tests: judgments (Wilcoxon), tau and W (paired t), s1 vs s2
    paired = report.paired.set_index("outcome")
    assert list(paired.index) == ["judgments", "tau", "w"]
    assert paired.loc["tau", "mean_difference"] == pytest.approx(-0.3)
    assert paired.loc["tau", "statistic"] == -np.inf  # constant difference
    assert report.trials["w"].notna().all() and (report.trials["w_capped"] >= report.trials["w"]).all()
    summary = report.terminal_summary()
    assert len(summary.splitlines()) < 25 and "s1 vs s2: judgments" in summary
    assert str(study).startswith("CalibrationStudy: 3 trials")
    # the folder holds enough to rebuild the study and re-report it
    again = CalibrationReport.from_study(read_study(tmp_path / "out"), cap=0.95)
    pd.testing.assert_frame_equal(again.summary["capped"], report.summary["capped"])
    pd.testing.assert_frame_equal(again.trials, report.trials, check_dtype=False)
    with pytest.raises(InputError):
        read_study(tmp_path)


def test_combine_studies_keeps_pairing():
    from relimpute.calibration import combine_studies

    study = _study()
    only_s1 = CalibrationStudy(
        pairs=study.pairs[study.pairs["strategy"] == "s1"],
        trials=study.trials[study.trials["strategy"] == "s1"],
        config=study.config,
    )
    two_trials = CalibrationStudy(
        pairs=study.pairs[study.pairs["trial"] < 2],
        trials=study.trials[study.trials["trial"] < 2],
        config=study.config,
    )
    both = combine_studies(only_s1, two_trials)
    assert both.strategies == ["s1", "s2"] and both.n_trials == 2  # trial 2 is not in both
    assert len(both.pairs) == 2 * 2 * 3 and both.config["n_trials"] == 2
    # s1 is taken from the first study only
    assert (both.pairs["strategy"] == "s1").sum() == 6
    other = study.trials.assign(seed=study.trials["seed"] + 1)
    with pytest.raises(ValueError, match="not paired"):
        combine_studies(study, CalibrationStudy(study.pairs, other, study.config))


def test_markdown_tables_escape_names():
    # a group named "a|b" (from a groups table) stays one column of the report
    from relimpute.calibration.report import _breakdown_markdown

    frame = pd.DataFrame(
        {"strategy": ["mtc"], "group": ["a|b"], "bin": ["[0.5, 0.6)"], "accuracy": [0.5],
         "n": [4], "group_w": [0.1], "group_pairs": [4]}  # fmt: skip
    )
    lines = _breakdown_markdown(frame).splitlines()
    assert lines[2] == r"| confidence | a\|b accuracy (n) |"
