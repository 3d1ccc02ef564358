"""Sampled qrels read by the campaign and scored by ``relimpute evaluate``."""

from __future__ import annotations

import io
import subprocess
from contextlib import redirect_stderr, redirect_stdout

import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.data import Campaign
from relimpute.io import read_run, read_sampled_qrels
from relimpute.measures.inferred import sample_eval

from test_inferred_measures import BIOCADDIE, HAND_QRELS, HAND_RUN, ORACLE, _require_script


def _files(tmp_path, qrels=HAND_QRELS, run=HAND_RUN):
    (tmp_path / "q.txt").write_text(qrels)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r.txt").write_text(run)
    return tmp_path / "q.txt", tmp_path / "runs"


def _run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def test_a_sampled_file_is_read_by_the_campaign_and_a_not_sampled_document_is_unjudged(tmp_path):
    qrels, runs = _files(tmp_path)
    campaign = Campaign.from_files(qrels, runs)
    assert campaign.sample is not None and len(campaign.sample) == 6
    topic = campaign.topics[0]
    judged = dict(zip(topic.doc_ids, topic.judged))
    assert not judged["d"]  # in the pool, not sampled: unjudged, never nonrelevant
    assert judged["c"] and judged["e"]
    assert campaign.subset(systems=["r"]).sample is campaign.sample


def test_evaluate_prints_the_inferred_measures_by_default_and_beside_others(tmp_path):
    qrels, runs = _files(tmp_path)
    code, out, _ = _run("evaluate", qrels, runs, "-f", "tsv")
    assert code == 0
    frame = pd.read_csv(io.StringIO(out), sep="\t")
    assert list(frame.columns) == ["system", "xinfAP", "infNDCG", "iP@10", "iNumRel"]
    expected = sample_eval(read_sampled_qrels(qrels), read_run(runs / "r.txt")).loc["all"]
    assert frame.loc[0, "xinfAP"] == pytest.approx(expected["xinfAP"], abs=1e-4)
    code, out, _ = _run("evaluate", qrels, runs, "-m", "AP", "-m", "infAP", "-m", "infNDCG",
                        "-q", "-f", "tsv")
    frame = pd.read_csv(io.StringIO(out), sep="\t", dtype={"query_id": str})
    assert list(frame.columns) == ["system", "query_id", "AP", "infAP", "infNDCG"]
    assert frame["query_id"].tolist() == ["1", "all"]


def test_evaluate_reads_runs_as_the_ordinary_evaluate_does(tmp_path, monkeypatch):
    """Runs are read as columns, not pandas frames (the speed target beside ordinary qrels);
    a document listed twice is still the reader's error naming the line."""
    import relimpute.io.runs
    import relimpute.io

    qrels, runs = _files(tmp_path)
    with monkeypatch.context() as patch:
        for module in (relimpute.io.runs, relimpute.io):
            patch.setattr(module, "read_run", lambda *a, **k: pytest.fail("read_run"))
        code, out, err = _run("evaluate", qrels, runs, "-f", "tsv")
    assert code == 0, err
    (runs / "r.txt").write_text(HAND_RUN + "1 Q0 a 5 0 r\n")
    code, out, err = _run("evaluate", qrels, runs, "-f", "tsv")
    assert code == 2 and "r.txt, line 5: conflicting duplicate document in run" in err
    code, out, err = _run("evaluate", qrels, runs, "-f", "tsv", "--duplicates", "first")
    assert code == 0, err


def test_the_relevance_threshold_maps_lower_grades_to_nonrelevant(tmp_path):
    qrels, runs = _files(tmp_path, HAND_QRELS.replace("c 2 1", "c 2 2").replace("a 1 1", "a 1 2"))
    top = tmp_path / "with3.txt"  # a grade 3 (in the stratum judged whole): the grades 2 count 0
    top.write_text(qrels.read_text() + "1 0 g 1 3\n")
    _, out, _ = _run("evaluate", top, runs, "-m", "iNumRel", "--rel-threshold", "3", "-f", "tsv")
    assert pd.read_csv(io.StringIO(out), sep="\t").loc[0, "iNumRel"] == 1
    _, out, _ = _run("evaluate", qrels, runs, "-m", "iNumRel", "--rel-threshold", "2", "-f", "tsv")
    assert pd.read_csv(io.StringIO(out), sep="\t").loc[0, "iNumRel"] == pytest.approx(3.0, abs=1e-4)


def test_a_threshold_above_every_grade_is_refused_for_the_inferred_measures_too(tmp_path):
    qrels, runs = _files(tmp_path)  # grades 0 and 1: nothing is relevant at 2
    for measures in ([], ["-m", "xinfAP"], ["-m", "xinfAP", "-m", "AP"]):
        code, out, err = _run("evaluate", qrels, runs, "--rel-threshold", "2", *measures)
        assert code == 2 and out == "", err
        assert f"{qrels}: no judged document is relevant at --rel-threshold 2" in err


def test_inferred_measures_on_ordinary_qrels_are_refused_naming_infap(tmp_path):
    qrels, runs = _files(tmp_path, "1 0 a 1\n1 0 c 0\n")
    code, _, err = _run("evaluate", qrels, runs, "-m", "xinfAP")
    assert code == 2 and "need sampled qrels" in err and "-m infAP" in err


@pytest.mark.parametrize(
    "name, message",
    [("empty.txt", "file is empty"), ("dir", "is a directory"), ("fifo", "named pipe"),
     ("cut.txt.gz", "truncated gzip"), ("six.txt", "line 1: expected 4 columns")],
)
def test_inferred_measures_on_an_unreadable_file_name_its_problem(tmp_path, name, message):
    # not "need sampled qrels": the file may hold sampled qrels and be cut short, say
    import gzip
    import os

    _, runs = _files(tmp_path)
    path = tmp_path / name
    if name == "dir":
        path.mkdir()
    elif name == "fifo":
        os.mkfifo(path)
    elif name.endswith(".gz"):
        path.write_bytes(gzip.compress(HAND_QRELS.encode())[:-12])
    else:
        path.write_text("" if name == "empty.txt" else "1 0 a 1 1 x\n")
    code, _, err = _run("evaluate", path, runs, "-m", "xinfAP")
    assert code == 2 and message in err and "need sampled qrels" not in err, err


def test_a_stratum_with_nothing_judged_is_noted_on_stderr(tmp_path):
    qrels, runs = _files(tmp_path, HAND_QRELS + "1 0 z 3 -1\n")
    code, _, err = _run("evaluate", qrels, runs)
    assert code == 0 and "topic 1 stratum 3 was judged" in err


def test_a_file_mixing_four_and_five_columns_names_the_line(tmp_path):
    qrels, runs = _files(tmp_path, HAND_QRELS + "1 0 y 1\n")
    code, _, err = _run("evaluate", qrels, runs)
    assert code == 2 and "line 7: expected 5 columns" in err


def test_evaluate_equals_the_script_on_biocaddie(tmp_path):
    _require_script()
    runs = tmp_path / "runs"
    runs.mkdir()
    docs = read_sampled_qrels(BIOCADDIE).groupby("query_id").head(400)
    lines = [f"0{q} Q0 {d} {i} {(i * 7919) % 97} tied" for i, (q, d) in
             enumerate(zip(docs["query_id"], docs["doc_id"]))]
    (runs / "tied.txt").write_text("\n".join(lines) + "\n")
    _, out, _ = _run("evaluate", BIOCADDIE, runs, "-m", "xinfAP", "-m", "infNDCG", "-m", "iP@10",
                     "-q", "-f", "tsv")
    ours = pd.read_csv(io.StringIO(out), sep="\t", dtype={"query_id": str}).set_index("query_id")
    script = subprocess.run(["perl", str(ORACLE), "-q", str(BIOCADDIE), str(runs / "tied.txt")],
                            capture_output=True, text=True, check=True).stdout
    names = {"infAP": "xinfAP", "infNDCG": "infNDCG", "iP10": "iP@10"}
    checked = 0
    for line in script.splitlines():
        measure, topic, value = line.split()
        if measure in names:
            assert ours.loc[topic, names[measure]] == pytest.approx(float(value), abs=1e-4)
            checked += 1
    assert checked == 3 * 16  # 15 topics and "all"


def test_a_model_estimand_on_sampled_qrels_gives_the_models_answer(tmp_path):
    # with no -m, sampled qrels print NIST's inferred measures, unless a model's estimand is asked
    qrels, runs = _files(tmp_path)
    code, out, err = _run("evaluate", qrels, runs, "--estimand", "complete", "-f", "tsv")
    assert code == 0, err
    assert "E[AP]" in out.splitlines()[0] and "xinfAP" not in out
