"""``relimpute fit``: probabilistic qrels from a fitted relevance model."""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pandas as pd
import pytest

from relimpute import InputError, read_prob_qrels, read_qrels
from relimpute.cli import main
from relimpute.relevance import load_model, load_settings
from relimpute.relevance import settings as settings_module


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq1 0 z 0\nq2 0 x 1\nq2 0 y 0\nq2 0 w 0\n")
    runs = []
    lists = {
        "r1": {"q1": "a b d e", "q2": "x v y"},
        "r2": {"q1": "d a c", "q2": "v x"},
        "r3": {"q1": "b e a d", "q2": "y w x v"},
    }
    for name, per_topic in lists.items():
        path = tmp_path / f"{name}.run"
        lines = [
            f"{q} Q0 {d} {i + 1} {10 - i} {name}"
            for q, docs in per_topic.items()
            for i, d in enumerate(docs.split())
        ]
        path.write_text("\n".join(lines) + "\n")
        runs.append(str(path))
    return str(qrels), runs, tmp_path


def test_fit_writes_probabilistic_qrels(files, capsys):
    qrels, runs, tmp = files
    out = tmp / "est.tsv"
    code = main(["fit", "--model", "rtc", qrels, *runs, "-o", str(out), "--format", "tsv"])
    captured = capsys.readouterr()
    assert code == 0
    est = read_prob_qrels(out)
    judged = read_qrels(qrels)
    # every judged document keeps its label at the threshold (default 1)
    merged = judged.merge(est, on=["query_id", "doc_id"])
    assert len(merged) == len(judged)
    np.testing.assert_array_equal(merged["probability"], (merged["relevance"] >= 1).astype(float))
    # unjudged retrieved documents are estimated, strictly inside (0, 1)
    unjudged = est[~est.set_index(["query_id", "doc_id"]).index.isin(
        judged.set_index(["query_id", "doc_id"]).index)]  # fmt: skip
    assert set(unjudged["doc_id"]) == {"d", "e", "v"}
    assert ((unjudged["probability"] > 0) & (unjudged["probability"] < 1)).all()
    # the summary: one row per topic, expected relevant = sum of p
    summary = pd.read_csv(io.StringIO(captured.out), sep="\t", dtype={"query_id": str})
    assert list(summary.columns) == [
        "query_id", "n_docs", "n_judged", "n_relevant_judged", "expected_relevant"
    ]  # fmt: skip
    sums = est.groupby("query_id")["probability"].sum()
    np.testing.assert_allclose(summary.set_index("query_id")["expected_relevant"], sums, rtol=1e-5)
    assert summary["n_relevant_judged"].tolist() == [2, 1]
    rtc = settings_module.MODELS_DIRS[0] / "rtc.json"
    assert f"relimpute fit: model rtc (settings {rtc}), fitted " in captured.err
    assert "weights=" in captured.err and "prior_strength" not in captured.err  # in the file
    assert f"relimpute fit: wrote {out} (10 documents of 2 topics, 7 of them judged)" in captured.err


def test_fit_rel_threshold_and_settings_file(files, capsys, tmp_path):
    qrels, runs, tmp = files
    settings = tmp_path / "u.json"
    settings.write_text(json.dumps({"model": "uniform", "params": {"prior": 0.25}}))
    out = tmp / "est.tsv"
    assert (
        main(["fit", "--model", str(settings), qrels, *runs, "-o", str(out), "--rel-threshold", "2"])
        == 0
    )
    est = read_prob_qrels(out).set_index(["query_id", "doc_id"])["probability"]
    assert est[("q1", "a")] == 1.0 and est[("q1", "c")] == 0.0  # grade 1 < 2
    assert est[("q1", "d")] == 0.25
    assert f"model uniform (settings {settings}), fitted prior=0.25" in capsys.readouterr().err


def test_fit_reports_bad_models(files, capsys, tmp_path):
    qrels, runs, tmp = files
    out = str(tmp / "est.tsv")
    assert main(["fit", "--model", "no-such-model", qrels, *runs, "-o", out]) == 2
    assert "unknown relevance model 'no-such-model'" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": "rtc",\n "params": {"prior_strenght": 2}}')
    assert main(["fit", "--model", str(bad), qrels, *runs, "-o", out]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "prior_strenght" in err
    bad.write_text('{"model": "rtc",\n "params": }')
    assert main(["fit", "--model", str(bad), qrels, *runs, "-o", out]) == 2
    assert "line 2" in capsys.readouterr().err


def test_shipped_settings_load():
    for name in ("rtc", "uniform"):
        settings = load_settings(name)
        assert settings.model == name
        assert settings.source == str(settings_module.MODELS_DIRS[0] / f"{name}.json")
        assert {"data", "command", "date", "how_chosen"} <= set(settings.provenance)
        assert type(load_model(name)).name == name
    # a registered model without a shipped file falls back to the class defaults
    assert load_settings("nonrelevant").source == "<class defaults>"
    frame = load_settings("uniform").to_frame()
    assert frame.to_dict("records") == [{"model": "uniform", "param": "prior", "value": "0.5"}]


@pytest.mark.parametrize(
    "body, message",
    [
        ("[1, 2]", "must be a JSON object"),
        ('{"model": "rtc", "parms": {}}', "unknown key"),
        ('{"model": "nope", "params": {}}', "registered relevance model"),
        ('{"model": "rtc", "params": [1]}', "must be JSON objects"),
    ],
)
def test_bad_settings_files_name_the_file(tmp_path, body, message):
    path = tmp_path / "s.json"
    path.write_text(body)
    with pytest.raises(InputError, match=message) as info:
        load_settings(path)
    assert str(path) in str(info.value)
    with pytest.raises(InputError, match="cannot read model settings file: No such file"):
        load_settings(tmp_path / "missing.json")


def test_every_model_module_can_be_named():
    # discovery: a model registered in its own file is loadable by name without importing it
    import pkgutil

    from relimpute import relevance

    modules = {m.name for m in pkgutil.iter_modules(relevance.__path__)}
    names = ["rtc", "uniform", "nonrelevant"] + (["bayes"] if "bayes" in modules else [])
    for name in names:
        assert load_settings(name).model == name


def test_installed_settings_are_found(tmp_path, monkeypatch):
    # a wheel installs models/ as <prefix>/share/relimpute/models: searched after the source tree
    (tmp_path / "uniform.json").write_text(
        json.dumps({"model": "uniform", "params": {"prior": 0.1}})
    )
    (tmp_path / "rtc.json").write_text('{"model": "uniform"}')
    monkeypatch.setattr(settings_module, "MODELS_DIRS", (tmp_path / "absent", tmp_path))
    assert load_settings("uniform").params == {"prior": 0.1}
    with pytest.raises(InputError, match="not 'rtc'"):
        load_settings("rtc")
    monkeypatch.setattr(settings_module, "MODELS_DIRS", ())
    # without the shipped settings the defaults change: said, never silent
    with pytest.warns(UserWarning, match="shipped model settings were not found"):
        assert load_settings("uniform").source == "<class defaults>"


def test_settings_in_prefers_a_folder_file_over_the_shipped_name(tmp_path):
    from relimpute.relevance.settings import settings_in

    assert settings_in(tmp_path, "fusion") == "fusion"
    (tmp_path / "fusion.json").write_text('{"model": "fusion", "params": {}}')
    assert settings_in(tmp_path, "fusion") == str(tmp_path / "fusion.json")
    assert settings_in(tmp_path, "rtc") == "rtc"


def test_a_file_named_like_a_model_never_replaces_its_settings(files, tmp_path, monkeypatch):
    # a stray file "uniform" in the current folder: the name still means the shipped settings,
    # and a warning says which was read; ./uniform (or a .json name) reads the file
    import subprocess
    import sys

    qrels, runs, tmp = files
    monkeypatch.chdir(tmp_path)
    (tmp_path / "uniform").write_text(json.dumps({"model": "uniform", "params": {"prior": 0.25}}))
    with pytest.warns(UserWarning, match=r"reading .*uniform.json, not the file 'uniform'"):
        settings = load_settings("uniform")
    assert settings.source == str(settings_module.MODELS_DIRS[0] / "uniform.json")
    assert settings.params == {"prior": 0.5}
    assert load_settings("./uniform").params == {"prior": 0.25}
    assert load_settings(tmp_path / "uniform").params == {"prior": 0.25}  # a Path is a file
    (tmp_path / "my.json").write_text((tmp_path / "uniform").read_text())
    assert load_settings("my.json").params == {"prior": 0.25}
    (tmp_path / "mine").write_text((tmp_path / "uniform").read_text())
    assert load_settings("mine").params == {"prior": 0.25}  # no model is named "mine"
    # on the command line the warning is one line naming the command
    argv = ["fit", "--model", "uniform", qrels, *runs, "-o", str(tmp / "est.tsv")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(os.path.abspath, sys.path))}
    command = [sys.executable, "-m", "relimpute", *argv]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "relimpute fit: warning: model 'uniform': reading " in done.stderr
    assert "UserWarning" not in done.stderr and "[from uniform]" not in done.stderr


@pytest.mark.parametrize(
    "params, message",
    [
        ('{"n_draws": 1e12}', "params.n_draws: 1000000000000.0 is not a whole number from 0 to 10,000"),
        ('{"n_draws": 1e999}', "params.n_draws: inf is not a finite number"),
        ('{"capture_bins": 2.5}', "params.capture_bins: 2.5 is not a whole number"),
        ('{"weight_mean": [1, NaN, 0]}', "params.weight_mean: nan is not a finite number"),
        ('{"mean_prior": [1]}', "mean_prior must be two numbers"),
        ('{"mean_prior": ' + "[" * 5000 + "]" * 5000 + "}", "nested too deeply"),
    ],
    ids=["huge", "overflow", "fraction", "nan", "short", "deep"],
)
def test_settings_values_are_checked_when_read(files, capsys, tmp_path, params, message):
    qrels, runs, tmp = files
    path = tmp_path / "s.json"
    path.write_text('{"model": "fusion", "params": ' + params + "}")
    assert main(["fit", "--model", str(path), qrels, *runs, "-o", str(tmp / "est.tsv")]) == 2
    err = capsys.readouterr().err
    assert f"error: {path}: " in err and message in err and "Traceback" not in err
    wrapped = tmp_path / "llm.json"  # the fusion settings a fusion-llm file wraps: the same checks
    wrapped.write_text('{"model": "fusion-llm", "params": {"fusion": ' + params + "}}")
    with pytest.raises(InputError, match=message.replace("params.", "params.fusion.")):
        load_settings(wrapped)


def test_fit_to_standard_output(files, capsys, monkeypatch):
    # -o - writes the estimate to standard output (it wrote a file named "-"), without the table
    qrels, runs, tmp = files
    monkeypatch.chdir(tmp)
    assert main(["fit", "--model", "uniform", qrels, *runs, "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert not (tmp / "-").exists()
    assert main(["fit", "--model", "uniform", qrels, *runs, "-o", "est.tsv"]) == 0
    assert captured.out == (tmp / "est.tsv").read_text()
    assert "relimpute fit: wrote standard output (10 documents of 2 topics" in captured.err
    assert main(["fit", "--model", "uniform", qrels, *runs, "-o", "./-"]) == 0  # a file named -
    assert (tmp / "-").read_text() == captured.out


@pytest.mark.parametrize(
    "model, params, message",
    [
        ("uniform", '{"prior": "x"}', "params.prior: 'x' is not a number"),
        ("uniform", '{"prior": 2}', "prior must lie in [0, 1], got 2"),
        ("rtc", '{"weight_alpha": [1]}', "params.weight_alpha: [1] is not a number"),
        ("rtc", '{"weight_alpha": 0}', "weight_alpha and weight_beta of the beta prior must be"),
        ("rtc", '{"weight_prior": 0}', "weight_prior must be 'beta', 'beta_weight' or 'gaussian'"),
        ("rtc", '{"prior_strength": 1e-8}', "prior_strength must be >= 0.001"),
        ("fusion", '{"weight_mean": [[1], [2], [3]]}', "weight_mean must be 3 finite numbers"),
        ("fusion", '{"mean_prior": [null, 1]}', "mean_prior must be two numbers"),
        ("fusion", '{"intercept_sd": 1e-320}', "prior standard deviations must be > 0"),
        ("fusion", '{"run_effect_sd": 1e-320}', "run_effect_sd must be 0 or from 1e-100"),
        ("fusion-llm", '{"label_sd": 0}', "label_sd must be > 0"),
        ("fusion-llm", '{"runs_weight_sd": 1e300}', "each from 1e-100 to 1e100"),
        ("fusion-llm", '{"unlabelled": "bogus"}', "unlabelled must be 'runs' or 'nonrelevant'"),
        ("fusion-llm", '{"runs_weight": -1}', "runs_weight must be in [0, 1]"),
    ],
    ids=["uniform-text", "uniform-range", "rtc-list", "rtc-zero", "rtc-prior", "rtc-weak", "nested",
         "null", "tiny-sd", "tiny-run-sd", "llm-sd", "llm-huge-sd", "llm-unlabelled",
         "llm-weight"],
)
def test_settings_of_every_model_are_checked_before_the_data(files, capsys, tmp_path, model,
                                                            params, message):
    # each of these passed the reader and stopped the fit with a traceback
    qrels, runs, tmp = files
    path = tmp_path / "s.json"
    path.write_text(f'{{"model": "{model}", "params": {params}}}')
    assert main(["fit", "--model", str(path), qrels, *runs, "-o", str(tmp / "est.tsv")]) == 2
    err = capsys.readouterr().err
    assert f"error: {path}: " in err and message in err and "Traceback" not in err
