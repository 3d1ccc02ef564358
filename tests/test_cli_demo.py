"""`relimpute demo`: the README's main job runs on embedded data and reports sane numbers."""

import json

import pytest

from relimpute.cli import main


def test_demo_runs_without_data_and_reports_each_model(capsys):
    code = main(["demo", "--n-systems", "6", "--n-topics", "8", "-M", "nonrelevant", "-M", "uniform", "-f", "json"])
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
    for option in ("--seed", "--pool-depth", "--model", "--format"):
        assert option in text


def test_demo_shows_the_default_models_answer(capsys):
    """The product, not only the calibration table: E[MAP] ± sd of the best runs against the
    truth, and P(A beats B) of the top two, from the default model's posterior draws."""
    import re

    code = main(["demo", "--n-systems", "6", "--n-topics", "8", "-M", "uniform", "-M", "fusion", "-f", "json"])
    err = capsys.readouterr().err
    assert code == 0
    lines = re.findall(r"E\[MAP\] ([0-9.]+) ± ([0-9.]+)\s+true MAP ([0-9.]+)", err)
    assert len(lines) == 5
    assert all(float(sd) > 0 for _, sd, _ in lines)  # posterior draws: a spread, not a point
    assert [float(e) for e, _, _ in lines] == sorted((float(e) for e, _, _ in lines), reverse=True)
    inside = sum(abs(float(e) - float(t)) <= 2 * float(sd) for e, sd, t in lines)
    assert f"{inside} of 5 true MAPs within" in err
    assert re.search(r"P\(\w+ beats \w+\) = [01]\.\d{3}", err)
