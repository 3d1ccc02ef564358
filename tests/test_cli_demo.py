"""`relimpute demo`: the README's main job runs on embedded data and reports sane numbers."""

import json

import pytest

from relimpute.cli import main


def test_demo_runs_without_data_and_reports_each_model(capsys):
    code = main(["demo", "--n-systems", "6", "--topics", "8", "--models", "nonrelevant,uniform", "-f", "json"])
    out = capsys.readouterr()
    assert code == 0
    rows = {r["model"]: r for r in json.loads(out.out)}
    assert set(rows) == {"nonrelevant", "uniform"}
    for r in rows.values():
        assert -1 <= r["kendall_tau"] <= 1
        assert 0 <= r["accuracy"] <= 1
        assert r["W"] <= 1
    # With every p in {0, 1} the variance is 0, so every call is made with certainty.
    assert rows["nonrelevant"]["share_conf>=0.95"] == 1.0
    assert "depth-5 pool" in out.err


def test_demo_help_lists_options(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--seed", "--pool-depth", "--models", "--format"):
        assert option in text
