"""``--llm-labels FILE`` on fit, evaluate, compare, judge and calibrate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from relimpute import read_prob_qrels
from relimpute.cli import main

COMMANDS = ("fit", "evaluate", "compare", "judge", "calibrate")


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 x 1\nq2 0 y 0\n")
    lists = {
        "r1": {"q1": "a b d e f", "q2": "x v y u"},
        "r2": {"q1": "d a c f", "q2": "v x u"},
        "r3": {"q1": "b e a d", "q2": "y x v"},
    }
    runs = []
    for name, per_topic in lists.items():
        path = tmp_path / f"{name}.run"
        lines = [f"{q} Q0 {d} {i + 1} {10 - i} {name}"
                 for q, docs in per_topic.items() for i, d in enumerate(docs.split())]  # fmt: skip
        path.write_text("\n".join(lines) + "\n")
        runs.append(str(path))
    labels = tmp_path / "llm.txt"
    # labels on judged documents (the model learns from them) and on d, e, v (unjudged)
    labels.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq2 0 x 1\nq2 0 y 0\nq1 0 d 1\nq1 0 e 0\nq2 0 v 1\n")
    return str(qrels), runs, str(labels), tmp_path


@pytest.mark.parametrize("command", COMMANDS)
def test_help_says_what_the_labels_are_taken_to_mean(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--llm-labels FILE" in text
    assert "never as judgments" in text and "learned from the human judgments" in text


def test_fit_with_labels_moves_labelled_documents_only(files, capsys):
    qrels, runs, labels, tmp = files
    plain, labelled = tmp / "plain.tsv", tmp / "labelled.tsv"
    assert main(["fit", qrels, *runs, "-o", str(plain), "--format", "tsv"]) == 0
    assert main(["fit", qrels, *runs, "-o", str(labelled), "--llm-labels", labels, "--format", "tsv"]) == 0
    err = capsys.readouterr().err
    assert "fusion-llm" in err and "not judgments" in err
    a = read_prob_qrels(plain).set_index(["query_id", "doc_id"])["probability"]
    b = read_prob_qrels(labelled).set_index(["query_id", "doc_id"])["probability"]
    # judged keep their labels; unlabelled unjudged (f, u) are outside the labels' pool
    # (nonrelevant, as in qrels); d, e, v move
    for key in [("q1", "a"), ("q1", "b"), ("q2", "y")]:
        assert b[key] == pytest.approx(a[key], abs=1e-12)
    assert b[("q1", "f")] == 0 and b[("q2", "u")] == 0 and a[("q1", "f")] > 0
    assert b[("q1", "d")] > a[("q1", "d")] and b[("q1", "e")] < a[("q1", "e")]


def test_compare_and_evaluate_read_labels(files, capsys):
    qrels, runs, labels, _ = files
    assert main(["compare", qrels, *runs, "--llm-labels", labels, "--format", "tsv"]) == 0
    assert main(["evaluate", qrels, *runs, "--llm-labels", labels, "-m", "AP", "--format", "tsv"]) == 0
    out = capsys.readouterr().out
    assert "E[AP]" in out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--model", "rtc"], "--model rtc does not read --llm-labels"),
        (["--prior", "0.5"], "--llm-labels cannot be combined with --prior"),
    ],
)
def test_compare_refuses_a_model_that_ignores_labels(files, capsys, extra, message):
    qrels, runs, labels, _ = files
    assert main(["compare", qrels, *runs, "--llm-labels", labels, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_bad_label_file_is_exit_2_naming_file_and_line(files, capsys):
    qrels, runs, _, tmp = files
    bad = tmp / "bad.txt"
    bad.write_text("q1 0 a 1\nq9 0 a 1\n")
    assert main(["fit", qrels, *runs, "-o", str(tmp / "o.tsv"), "--llm-labels", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}, line 2: labels for topic 'q9'" in err
    assert not (tmp / "o.tsv").exists()


def test_labels_on_documents_outside_the_campaign_add_them_and_say_so(files, capsys):
    qrels, runs, labels, tmp = files
    more = tmp / "more.txt"
    more.write_text(Path(labels).read_text() + "q1 0 nowhere 1\n")
    assert main(["fit", qrels, *runs, "-o", str(tmp / "o.tsv"), "--llm-labels", str(more)]) == 0
    assert "1 labelled document(s) that neither the qrels nor any run hold added to 1 topic(s)" in capsys.readouterr().err
    assert ("q1", "nowhere") in set(read_prob_qrels(tmp / "o.tsv").set_index(["query_id", "doc_id"]).index)


def test_judge_needs_the_strategy_that_refits_a_model(files, capsys):
    qrels, runs, labels, tmp = files
    code = main(["judge", qrels, *runs, "--llm-labels", labels, "--journal", str(tmp / "j.jsonl")])
    assert code == 2 and "--strategy llm or rtc" in capsys.readouterr().err
    code = main(["judge", qrels, *runs, "--strategy", "llm", "--journal", str(tmp / "j.jsonl")])
    assert code == 2 and "--strategy llm chooses with automatic labels" in capsys.readouterr().err


def test_judge_llm_chooses_with_the_labels_model(files, monkeypatch, capsys):
    """``judge --strategy llm --llm-labels F``: the labels' model chooses, the journal says so,
    and the document shown is the one the selector proposes on the same campaign."""
    import io
    import json
    import sys

    from relimpute.labels import with_labels
    from relimpute.selection import SelectionSession
    from relimpute.data import Campaign

    qrels, runs, labels, tmp = files
    journal = tmp / "j.jsonl"
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    argv = ["judge", qrels, *runs, "--strategy", "llm", "--llm-labels", labels,
            "--journal", str(journal), "--answers", "-"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    header = json.loads(journal.read_text().splitlines()[0])
    assert header["strategy"] == "llm" and header["model"] == "fusion-llm"
    campaign = with_labels(Campaign.from_files(qrels, runs), [labels])
    session = SelectionSession(campaign, "llm", confidence=0.95, rng=0, model="fusion-llm", screen=None)
    query_id, doc_id = session.propose()
    assert f"topic {query_id}  document {doc_id}" in out


def test_calibrate_swaps_the_default_model_for_the_labels_model():
    from relimpute.calibration.strategies import resolve_strategies
    from relimpute.cli._labels import strategies_with_labels

    swapped = strategies_with_labels(("x.txt",), resolve_strategies(["fusion-mc", "mtc"]))
    assert [s.model for s in swapped] == ["fusion-llm", "uniform"]
    model = swapped[0].make_model()
    assert model.fusion == {"n_draws": 200} and np.isfinite(model.label_sd)


def test_calibrate_swaps_a_held_out_default_model_keeping_its_settings(tmp_path):
    """With --settings-dir the default model is a settings file: the labels' model wraps it
    with those settings (they were chosen without the collection), not the class defaults."""
    import json

    from relimpute.calibration.strategies import resolve_strategies, with_settings_from
    from relimpute.cli._labels import strategies_with_labels

    (tmp_path / "fusion.json").write_text(json.dumps({"model": "fusion", "params": {"weight_sd": 0.5}}))
    strategies = with_settings_from(resolve_strategies(["fusion-mc", "mtc"]), tmp_path)
    swapped = strategies_with_labels(("x.txt",), strategies)
    assert [s.model for s in swapped] == ["fusion-llm", "uniform"]
    assert swapped[0].make_model().fusion == {"weight_sd": 0.5, "n_draws": 200}


def test_judge_rtc_refits_the_labels_model_and_records_it(files, monkeypatch, capsys):
    import io
    import json
    import sys

    qrels, runs, labels, tmp = files
    journal = tmp / "j.jsonl"
    monkeypatch.setattr(sys, "stdin", io.StringIO("0\nq\n"))
    argv = ["judge", qrels, *runs[:2], "--pair", "r1", "r2", "--strategy", "rtc",
            "--llm-labels", labels, "--journal", str(journal), "--answers", "-"]  # fmt: skip
    assert main(argv) == 0
    header = json.loads(journal.read_text().splitlines()[0])
    assert header["model"] == "fusion-llm"
