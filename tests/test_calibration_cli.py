"""``relimpute calibrate`` end to end on a small slice of DL 2019 written to files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.io import write_qrels, write_run


@pytest.fixture(scope="module")
def small_dir(dl19, dl19_dir, tmp_path_factory):
    """Six runs from six groups, ten topics: files small enough to read in a moment."""
    out = tmp_path_factory.mktemp("dl19_small")
    systems = ["TUA1-1", "bm25base_p", "idst_bert_p1", "p_bert", "runid2", "srchvrs_ps_run1"]
    camp = dl19.subset(systems, dl19.query_ids[:10])
    write_qrels(camp.qrels_frame(), out / "qrels.txt")
    (out / "runs").mkdir()
    for name in systems:
        write_run(camp.run_frame(name), out / "runs" / name, tag=name)
    groups = pd.read_csv(dl19_dir / "groups.tsv", sep="\t")
    groups[groups["run"].isin(systems)].to_csv(out / "groups.tsv", sep="\t", index=False)
    return out


def test_calibrate_writes_report(small_dir, tmp_path, capsys):
    out = tmp_path / "report"
    code = main([
        "calibrate", str(small_dir / "qrels.txt"), str(small_dir / "runs"), "--rel-threshold", "2",
        "--trials", "2", "--k", "3", "--c", "2", "--strategies", "mtc,ip", "--seed", "4",
        "--groups", str(small_dir / "groups.tsv"), "--depth", "50", "--quiet",
        "-o", str(out),
    ])
    assert code == 0
    printed = capsys.readouterr().out
    assert "mtc" in printed and "ip" in printed and "report written to" in printed
    doc = json.loads((out / "report.json").read_text())
    assert doc["config"]["k"] == 3 and doc["config"]["depth"] == 50 and doc["config"]["one_per_group"]
    assert [r["strategy"] for r in doc["summary"]["raw"]] == ["mtc", "ip"]
    pairs = pd.read_csv(out / "pairs.csv.gz")
    assert len(pairs) == 2 * 2 * 3
    for name in ("report.md", "reliability.png", "reliability.svg", "paired_tests.csv", "trials.csv"):
        assert (out / name).is_file()


def test_calibrate_rejects_bad_settings(small_dir, tmp_path, capsys):
    base = ["calibrate", str(small_dir / "qrels.txt"), str(small_dir / "runs"),
            "-o", str(tmp_path / "x"), "--quiet"]
    assert main(base + ["--k", "9"]) == 2
    assert "exceeds" in capsys.readouterr().err
    assert main(base + ["--strategies", "ip"]) == 2
    assert "budget" in capsys.readouterr().err
    assert main(base + ["--strategies", "nope"]) == 2
    assert "unknown strategy" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_calibrate_needs_qrels_and_runs(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["calibrate", "-o", str(tmp_path / "x")])
    assert exit.value.code == 2
    assert "the following arguments are required: QRELS, RUN" in capsys.readouterr().err


def test_calibrate_models_folder_replaces_the_shipped_settings(small_dir, tmp_path, capsys):
    """--settings-dir DIR: a model with DIR/NAME.json takes those settings (the report names the
    file) and its answers change; models without a file there keep the shipped settings."""
    folder = tmp_path / "held_out"
    folder.mkdir()
    body = {"model": "fusion", "params": {"weight_mean": [3.0, 0.0, 0.0], "weight_sd": 0.1}}
    (folder / "fusion.json").write_text(json.dumps(body))
    base = [
        "calibrate", str(small_dir / "qrels.txt"), str(small_dir / "runs"), "--rel-threshold", "2",
        "--trials", "2", "--k", "4", "--c", "2", "--strategies", "mtc,mtc+fusion", "--seed", "4",
        "--depth", "50", "--quiet",
    ]
    assert main(base + ["-o", str(tmp_path / "shipped")]) == 0
    assert main(base + ["--settings-dir", str(folder), "-o", str(tmp_path / "held")]) == 0
    specs = json.loads((tmp_path / "held" / "report.json").read_text())["config"]["strategy_specs"]
    assert specs["mtc+fusion"]["model"] == str(folder / "fusion.json")
    assert specs["mtc"]["model"] == "uniform"
    shipped = pd.read_csv(tmp_path / "shipped" / "pairs.csv.gz")
    held = pd.read_csv(tmp_path / "held" / "pairs.csv.gz")
    fusion = held["strategy"] == "mtc+fusion"
    assert not np.allclose(shipped.loc[fusion, "p_a_better"], held.loc[fusion, "p_a_better"])
    np.testing.assert_array_equal(shipped.loc[~fusion, "p_a_better"], held.loc[~fusion, "p_a_better"])
    capsys.readouterr()
    assert main(base + ["--settings-dir", str(tmp_path / "nowhere"), "-o", str(tmp_path / "x")]) == 2
    assert "no such settings folder" in capsys.readouterr().err


def test_calibrate_budget_caps_each_trial(small_dir, tmp_path, capsys):
    """``--budget N`` stops a trial's judging at N judgments; the report says so."""
    out = tmp_path / "capped"
    code = main([
        "calibrate", str(small_dir / "qrels.txt"), str(small_dir / "runs"), "--rel-threshold", "2",
        "--trials", "2", "--k", "3", "--strategies", "mtc", "--seed", "4", "--confidence", "0.999",
        "--budget", "3", "--quiet", "-o", str(out),
    ])
    assert code == 0
    assert "at most 3 judgments" in capsys.readouterr().out
    trials = pd.read_csv(out / "trials.csv")
    assert (trials["judgments"] <= 3).all() and "budget" in set(trials["stopped_because"])
    with pytest.raises(SystemExit) as exit_:  # refused when parsed, before any work
        main(["calibrate", str(small_dir / "qrels.txt"), str(small_dir / "runs"), "--budget", "0",
              "-o", str(tmp_path / "y")])
    assert exit_.value.code == 2 and "positive integer" in capsys.readouterr().err
