"""Inputs people already hold: stacked run frames, pytrec_eval dicts, ranx objects, ir_datasets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from relimpute import Campaign, InputError
from relimpute.adapters import as_run_frames, split_stacked_runs
from relimpute.io import read_qrels, read_runs
from relimpute.measures import evaluate

QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 d 1\n2 0 e 0\n"
RUNS = {
    "r1": "1 Q0 a 1 1.0 r1\n1 Q0 x 2 1.0 r1\n1 Q0 c 3 0.5 r1\n2 Q0 e 1 3.0 r1\n2 Q0 d 2 2.0 r1\n",
    "r2": "1 Q0 c 1 2.0 r2\n1 Q0 a 2 1.0 r2\n2 Q0 d 1 1.0 r2\n",
}
MEASURES = ["AP", "P@2", "nDCG@3", "RR"]


@pytest.fixture
def files(write_collection):
    return write_collection(QRELS, RUNS)


@pytest.fixture
def reference(files):
    return evaluate(Campaign.from_files(files / "qrels.txt", files / "runs"), MEASURES, per_topic=True)


def _dicts(files):
    qrels = read_qrels(files / "qrels.txt")
    runs = read_runs(files / "runs")
    qrels_dict: dict = {}
    for q, d, r in qrels.itertuples(index=False):
        qrels_dict.setdefault(q, {})[d] = int(r)
    run_dicts = {}
    for name, frame in runs.items():
        run_dicts[name] = {}
        for q, d, s in frame[["query_id", "doc_id", "score"]].itertuples(index=False):
            run_dicts[name].setdefault(q, {})[d] = float(s)
    return qrels_dict, run_dicts


def test_stacked_run_frame_gives_the_same_campaign(files, reference):
    runs = read_runs(files / "runs")
    stacked = pd.concat([f.assign(run=name) for name, f in runs.items()], ignore_index=True)
    stacked = stacked[["run", "query_id", "doc_id", "score"]]  # ir_measures columns plus a run
    campaign = Campaign.from_frames(read_qrels(files / "qrels.txt"), stacked)
    assert campaign.systems == ("r1", "r2")
    pd.testing.assert_frame_equal(evaluate(campaign, MEASURES, per_topic=True), reference)
    by_system = stacked.rename(columns={"run": "system"})
    assert list(split_stacked_runs(by_system)) == ["r1", "r2"]


def test_stacked_frame_without_a_run_column_is_an_error(files):
    frame = read_runs(files / "runs")["r1"].drop(columns="run")  # read_runs keeps the tag
    with pytest.raises(InputError, match="needs a run column"):
        as_run_frames(frame)


def test_pytrec_eval_dicts_give_the_scores_pytrec_eval_gives(files, reference):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, runs = _dicts(files)
    campaign = Campaign.from_frames(qrels, runs)
    pd.testing.assert_frame_equal(evaluate(campaign, MEASURES, per_topic=True), reference)
    ours = evaluate(campaign, ["AP", "RR"], per_topic=True)
    for name, run in runs.items():
        oracle = pytrec_eval.RelevanceEvaluator(qrels, {"map", "recip_rank"}).evaluate(run)
        for row in ours[ours["system"] == name].itertuples():
            key = "map" if row.measure == "AP" else "recip_rank"
            assert row.value == pytest.approx(oracle[row.query_id][key], abs=1e-12)


def test_a_single_unnamed_pytrec_eval_run_asks_for_a_name(files):
    qrels, runs = _dicts(files)
    with pytest.raises(InputError, match="name it"):
        Campaign.from_frames(qrels, runs["r1"])


def test_ranx_qrels_and_runs(files, reference):
    ranx = pytest.importorskip("ranx")
    qrels, runs = _dicts(files)
    ranx_runs = [ranx.Run(run, name=name) for name, run in runs.items()]
    campaign = Campaign.from_frames(ranx.Qrels(qrels), ranx_runs)
    pd.testing.assert_frame_equal(evaluate(campaign, MEASURES, per_topic=True), reference)
    mapping = Campaign.from_frames(ranx.Qrels(qrels), {"r1": ranx.Run(runs["r1"])})
    assert mapping.systems == ("r1",)
    with pytest.raises(InputError, match="need names"):
        Campaign.from_frames(qrels, [ranx.Run(runs["r1"])])


def test_ir_datasets_qrels_by_dataset_id(files, reference, capsys):
    ir_datasets = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import LocalDownload

    name = "relimpute-test/local-qrels"
    if name not in ir_datasets.registry:
        qrels = TrecQrels(LocalDownload(files / "qrels.txt"), {0: "no", 1: "yes", 2: "very"})
        ir_datasets.registry.register(name, Dataset(qrels))
    campaign = Campaign.from_files(f"irds:{name}", files / "runs")
    pd.testing.assert_frame_equal(evaluate(campaign, MEASURES, per_topic=True), reference)
    from relimpute.cli import main

    assert main(["evaluate", f"irds:{name}", str(files / "runs"), "-m", "AP", "-f", "tsv"]) == 0
    out = capsys.readouterr().out.splitlines()
    means = reference[reference["measure"] == "AP"].groupby("system", sort=False)["value"].mean()
    assert [float(line.split("\t")[2]) for line in out[1:]] == pytest.approx(means.to_numpy(), abs=1e-6)
    with pytest.raises(InputError, match="no dataset"):
        Campaign.from_files("irds:relimpute-test/nonexistent", files / "runs")


def test_mixed_mapping_of_frames_and_dicts(files, reference):
    qrels, runs = _dicts(files)
    frames = read_runs(files / "runs")
    campaign = Campaign.from_frames(qrels, {"r1": frames["r1"], "r2": runs["r2"]})
    got = evaluate(campaign, MEASURES, per_topic=True)
    np.testing.assert_allclose(got["value"], reference["value"], rtol=0, atol=1e-15)
