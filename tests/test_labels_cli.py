"""``--llm-labels`` naming documents neither the qrels nor any run hold (issue 28 item 1).

The usual case: shallow human qrels plus LLM labels on a deeper pool. Such a label adds its
document to the topic (unjudged, retrieved by no run), so R counts it as it counts every
labelled document. Checked on a tiny campaign: every command runs; E[AP] against an
enumeration of every relevance vector; the CLI's campaign and answers equal those of the
campaign built in Python the way the study builds it (full qrels, the added documents'
judgments hidden); bad label files are exit 2 naming file and line.
"""

from __future__ import annotations

import io
import itertools
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from relimpute import read_prob_qrels
from relimpute.cli import main
from relimpute.data import Campaign
from relimpute.labels import read_labels, with_labels

from test_cli_llm_labels import files as tiny  # the tiny campaign and its labels

QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 x 1\nq2 0 y 0\n"  # tiny's
RUNS = {  # tiny's
    "r1": {"q1": "a b d e f", "q2": "x v y u"},
    "r2": {"q1": "d a c f", "q2": "v x u"},
    "r3": {"q1": "b e a d", "q2": "y x v"},
}
#: tiny's labels (on judged documents and on d, e, v) and labels on g, h (q1) and w (q2),
#: which neither the qrels nor any run hold
OUTSIDE = {("q1", "g"), ("q1", "h"), ("q2", "w")}
SEED = "2007"


@pytest.fixture
def files(tiny):
    qrels, runs, labels, tmp = tiny
    assert Path(qrels).read_text() == QRELS
    with open(labels, "a") as out:
        out.write("q1 0 g 1\nq1 0 h 0\nq2 0 w 1\n")
    return qrels, runs, labels, tmp


def _study_campaign(qrels, runs, labels):
    """The campaign as examples/llm_evidence builds it: qrels listing every document (the
    outside ones with any grade), their judgments then hidden, the labels attached."""
    listing = qrels.replace(".txt", "-full.txt")
    with open(listing, "w") as out:
        out.write(QRELS + "".join(f"{q} 0 {d} 3\n" for q, d in sorted(OUTSIDE)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = Campaign.from_files(listing, runs)
    hidden = full.with_judged(
        [t.judged & ~np.isin(t.doc_ids, [d for q, d in OUTSIDE if q == t.query_id]) for t in full.topics]
    )
    return with_labels(hidden, [read_labels(labels)])


def _json(text: str) -> pd.DataFrame:
    return pd.DataFrame(json.loads(text))


def test_every_command_runs_and_says_how_many_documents_it_added(files, capsys, monkeypatch):
    qrels, runs, labels, tmp = files
    said = "3 labelled document(s) that neither the qrels nor any run hold added to 2 topic(s)"
    commands = [
        ["fit", "-o", str(tmp / "fit.tsv")],
        ["compare"],
        ["compare", "--measure", "nDCG@3"],
        ["evaluate", "-m", "AP", "-m", "nDCG@10"],
        ["calibrate", "--trials", "2", "--k", "3", "--c", "2", "--strategies", "fusion-mc,mtc",
         "-o", str(tmp / "calibration"), "--seed", "1"],
    ]  # fmt: skip
    for command in commands:
        assert main([command[0], qrels, *runs, *command[1:], "--llm-labels", labels]) == 0, command
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, command
    assert "the truth (the full qrels) holds them non-relevant" in err  # calibrate says so
    assert OUTSIDE <= set(read_prob_qrels(tmp / "fit.tsv").set_index(["query_id", "doc_id"]).index)
    journal = tmp / "j.jsonl"
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n0\n1\n1\nq\n"))
    argv = ["judge", qrels, *runs, "--strategy", "llm", "--llm-labels", labels,
            "--journal", str(journal), "--answers", "-"]
    assert main(argv) == 0
    assert said in capsys.readouterr().err
    judged = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert len(judged) == 4
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    assert main(argv) == 0  # the journal replays on the grown campaign
    assert main(["judge", "--export-qrels", str(tmp / "out.txt"), qrels, "--journal", str(journal)]) == 0
    exported = pd.read_csv(tmp / "out.txt", sep=r"\s+", header=None, names=["q", "it", "d", "r"], dtype=str)
    assert len(exported) == 5 + 4


def _enumerated_map(estimate: pd.DataFrame, judged: dict, systems=RUNS) -> dict:
    """Per run, the mean over topics of E[AP·R] / E[R] over every relevance vector of the
    estimate's unjudged documents (independent Bernoulli(p)); R counts every document listed."""
    out = {name: [] for name in systems}
    for q, group in estimate.groupby("query_id"):
        docs, p = group["doc_id"].tolist(), group["probability"].to_numpy()
        free = [i for i, d in enumerate(docs) if (q, d) not in judged]
        base = np.array([judged.get((q, d), 0) for d in docs], dtype=bool)
        e_q = {name: 0.0 for name in systems}
        e_r = 0.0
        for bits in itertools.product((0, 1), repeat=len(free)):
            rel = base.copy()
            rel[free] = bits
            weight = float(np.prod(np.where(bits, p[free], 1 - p[free])))
            e_r += weight * rel.sum()
            for name, per_topic in systems.items():
                ranked = rel[[docs.index(d) for d in per_topic[q].split()]]
                hits = np.cumsum(ranked) * ranked
                e_q[name] += weight * float(np.sum(hits / np.arange(1, len(ranked) + 1)))
        for name in systems:
            out[name].append(e_q[name] / e_r)
    return {name: float(np.mean(v)) for name, v in out.items()}


def test_expected_ap_counts_the_added_documents_by_enumeration(files, capsys):
    """``evaluate --estimate`` (the probabilities ``fit --llm-labels`` wrote) with the same labels:
    E[AP] = E[Q]/E[R] with g, h and w in R, by enumeration; without the labels the file's g, h
    and w are left out of R (and a note says so), which the enumeration without them matches."""
    qrels, runs, labels, tmp = files
    assert main(["fit", qrels, *runs, "-o", str(tmp / "fit.tsv"), "--llm-labels", labels]) == 0
    (tmp / "fit.tsv.draws.npz").unlink()  # E[Q]/E[R] of the point probabilities, not the draws'
    estimate = read_prob_qrels(tmp / "fit.tsv")
    judged = {(q, d): int(r) >= 1 for q, _, d, r in (line.split() for line in QRELS.splitlines())}
    capsys.readouterr()
    answers = {}
    for extra in (["--llm-labels", labels], []):
        argv = ["evaluate", qrels, *runs, "--estimate", str(tmp / "fit.tsv"), "-m", "AP", "--format", "json"]
        assert main(argv + extra) == 0
        out, err = capsys.readouterr()
        answers[bool(extra)] = _json(out).set_index("system")["E[AP]"]
        assert ("lists 3 document(s) of these topics that neither" in err) != bool(extra)
    inside = estimate[[(q, d) not in OUTSIDE for q, d in zip(estimate["query_id"], estimate["doc_id"])]]
    for counted, table in ((True, estimate), (False, inside)):
        oracle = _enumerated_map(table, judged)
        for name in RUNS:
            assert answers[counted][name] == pytest.approx(oracle[name], abs=1e-9)
    assert (answers[False] - answers[True]).min() > 0.05  # g, h, w weigh


def test_the_cli_campaign_and_answers_are_the_study_campaigns(files, capsys):
    """The CLI's campaign equals, array for array, the one built from qrels listing g, h, w with
    their judgments hidden; so ``fit`` writes the same probabilities and ``compare`` gives the
    same answer as the Python calls on that campaign."""
    from relimpute.cli import build_parser
    from relimpute.cli._common import load_campaign
    from relimpute.cli._requests import CampaignInputs
    from relimpute.confidence import ConfidenceEngine
    from relimpute.relevance import load_model

    qrels, runs, labels, tmp = files
    study = _study_campaign(qrels, runs, labels)
    args = build_parser().parse_args(["fit", qrels, *runs, "-o", str(tmp / "x.tsv"), "--llm-labels", labels])
    cli = load_campaign(CampaignInputs.from_args(args, "fit"), "fit")
    for a, b in zip(cli.topics, study.topics):
        assert list(a.doc_ids) == list(b.doc_ids)
        for name in ("grades", "judged", "ranking", "depth"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    model = load_model("fusion-llm")
    model.fit(study, rng=int(SEED))
    assert main(["fit", qrels, *runs, "-o", str(tmp / "fit.tsv"), "--llm-labels", labels]) == 0
    written = read_prob_qrels(tmp / "fit.tsv")
    expected = model.predict(study).to_frame()
    np.testing.assert_array_equal(written["probability"], expected["probability"])
    capsys.readouterr()
    assert main(["compare", qrels, *runs, "--llm-labels", labels, "--format", "json", "--mc-draws", "400"]) == 0
    got = _json(capsys.readouterr().out)
    result = ConfidenceEngine().confidence(
        study, model.predict(study), measure="AP", n_draws=400, rng=int(SEED)
    )
    frame = result.to_frame()
    np.testing.assert_array_equal(got["e_delta_map"], frame["e_delta_map"])
    np.testing.assert_array_equal(got["p_a_better"], frame["p_a_better"])


@pytest.mark.parametrize("command", ["fit", "compare", "evaluate", "judge", "calibrate"])
@pytest.mark.parametrize(
    "text, line, problem",
    [
        ("q1 0 a 1\nq1 0 zz 1\nq9 0 a 1\n", 3, "labels for topic 'q9', which the campaign lacks"),
        ("q1 0 a 1\nq1 0 b x\n", 2, ""),
        ("q1 0 a 1\nq1 0 b -2\n", 2, "labels are grades >= 0"),
        ("".join(f"q1 0 d{i} {i}\n" for i in range(11)), 11, "a label scale has at most 10 grades"),
        ("q1 a 0.5\nq1 b 1.5\n", 2, ""),
    ],
)
def test_a_bad_label_file_is_exit_2_naming_file_and_line(files, capsys, command, text, line, problem):
    qrels, runs, _, tmp = files
    bad = tmp / "bad.txt"
    bad.write_text(text)
    extra = {"fit": ["-o", str(tmp / "o.tsv")], "judge": ["--strategy", "llm", "--journal", str(tmp / "j.jsonl")],
             "calibrate": ["-o", str(tmp / "cal")]}.get(command, [])  # fmt: skip
    assert main([command, qrels, *runs, *extra, "--llm-labels", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}, line {line}" in err and problem in err and "Traceback" not in err
    assert not (tmp / "o.tsv").exists() and not (tmp / "j.jsonl").exists()


def test_a_fit_output_file_is_a_label_source_and_two_stems_are_named(files, capsys):
    # the help offers probabilistic qrels: fit -o's file, with its p_ge_<grade> columns, is one
    qrels, runs, labels, tmp = files
    est, again = str(tmp / "est.tsv"), str(tmp / "again.tsv")
    assert main(["fit", qrels, *runs, "-o", est, "--seed", SEED]) == 0
    assert "p_ge_2" in Path(est).read_text().splitlines()[0]
    capsys.readouterr()
    assert main(["fit", qrels, *runs, "-o", again, "--llm-labels", est, "--seed", SEED]) == 0
    assert f"probability labels from {est} (source 'est')" in capsys.readouterr().err
    (tmp / "b").mkdir()
    same = tmp / "b" / "llm.tsv"  # the same stem as llm.txt: both paths named
    same.write_text(Path(labels).read_text())
    assert main(["fit", qrels, *runs, "-o", again, "--llm-labels", labels, "--llm-labels", str(same)]) == 2
    err = capsys.readouterr().err
    assert f"two label sources named 'llm' ({labels} and {same})" in err and "Traceback" not in err
