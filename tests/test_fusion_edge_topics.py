"""The default model on the fuzz corpus's shapes (issue 26, item 4): a qrels topic no run
retrieves, a topic with nothing judged, one-document runs, a run that retrieves nothing
judged. In Python, and through every command that fits the default model."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import make_campaign

from relimpute.cli import main
from relimpute.confidence import ConfidenceEngine
from relimpute.data import Campaign
from relimpute.relevance import Fusion, load_model
from relimpute.simulate import simulate_campaign

NOBODY = "zz1"  # judged, retrieved by no run
NOTHING_JUDGED = "zz2"  # pooled-but-unjudged only, retrieved by no run
MODELS = {
    "shipped": lambda: load_model("fusion"),
    "plug-in": lambda: Fusion.plug_in(n_draws=8),
}


def _pooled():
    sim = simulate_campaign(n_topics=5, n_systems=5, n_docs=80, depth=25, n_families=3, rng=11)
    return sim, sim.campaign.pooled(8, list(sim.campaign.systems))


def _frames(campaign: Campaign, odd_topics: bool = True, odd_runs: bool = True):
    qrels = campaign.qrels_frame()
    runs = {s: campaign.run_frame(s) for s in campaign.systems}
    if odd_topics:
        extra = pd.DataFrame(
            {
                "query_id": [NOBODY, NOBODY, NOTHING_JUDGED],
                "doc_id": ["n1", "n2", "u1"],
                "relevance": [1, 0, -1],
            }
        )
        qrels = pd.concat([qrels, extra], ignore_index=True)
    if odd_runs:
        q0 = campaign.query_ids[0]
        runs["onedoc"] = pd.DataFrame(
            {"query_id": [q0], "doc_id": [campaign.topics[0].doc_ids[0]], "score": [1.0]}
        )
        runs["nojudged"] = pd.DataFrame(
            {
                "query_id": np.repeat(campaign.query_ids, 3),
                "doc_id": [f"fresh{i}" for i in range(3 * campaign.n_topics)],
                "score": np.tile([3.0, 2.0, 1.0], campaign.n_topics),
            }
        )
    return qrels, runs


def _campaign(**kw) -> Campaign:
    _, pooled = _pooled()
    qrels, runs = _frames(pooled, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Campaign.from_frames(qrels, runs)


@pytest.mark.parametrize("which", sorted(MODELS))
def test_unretrieved_topics_contribute_their_judged_documents_only(which):
    campaign = _campaign()
    model = MODELS[which]()
    est = model.fit_predict(campaign, rng=3)
    by_id = dict(zip(est.query_ids, est.p))
    np.testing.assert_array_equal(by_id[NOBODY], [1.0, 0.0])  # n1 relevant, n2 not
    np.testing.assert_array_equal(by_id[NOTHING_JUDGED], [0.0])
    for t, q in enumerate(est.query_ids):
        assert np.all(np.isfinite(est.p[t]))
        assert est.draws[t].shape == (model.n_draws, len(est.p[t]))
        if q in (NOBODY, NOTHING_JUDGED):
            fixed = np.broadcast_to(est.p[t], est.draws[t].shape)
            np.testing.assert_array_equal(est.draws[t], fixed)
    # the judged documents of an unretrieved topic are not in the fit set
    fit_on_retrieved = MODELS[which]().fit(_campaign(odd_topics=False), rng=3)
    assert model.n_fit_ == fit_on_retrieved.n_fit_


@pytest.mark.parametrize("which", sorted(MODELS))
def test_unretrieved_topics_leave_the_other_topics_unchanged(which):
    """Oracle: an intercept with no data sits at μ at the mode and adds nothing to the
    posterior, and the topic has no part in the capture adjustment, so the point estimate
    of every retrieved topic is that of the campaign without the extra topics."""
    with_extra = MODELS[which]().fit_predict(_campaign(), rng=3)
    without = MODELS[which]().fit_predict(_campaign(odd_topics=False), rng=3)
    for q, p in zip(without.query_ids, without.p):
        np.testing.assert_allclose(dict(zip(with_extra.query_ids, with_extra.p))[q], p, atol=1e-8)


def test_confidence_over_odd_shapes_is_finite():
    campaign = _campaign()
    est = load_model("fusion").fit_predict(campaign, rng=3)
    comparison = ConfidenceEngine().confidence(
        campaign, est, n_draws=400, rng=1, method="monte carlo"
    )
    frame = comparison.to_frame()
    assert len(frame) == campaign.n_systems * (campaign.n_systems - 1) // 2
    assert np.all(np.isfinite(frame["e_delta_map"])) and frame["p_a_better"].between(0, 1).all()
    # a one-document run and a run with nothing judged are scored like any other
    scores = comparison.scores.to_frame().set_index("system")
    assert np.isfinite(scores.loc[["onedoc", "nojudged"], "e_map"]).all()
    assert scores.loc["nojudged", "e_map"] > 0  # its unjudged documents may be relevant


def test_a_campaign_where_no_run_retrieves_anything():
    qrels = [("a", "x", 1), ("a", "y", 0), ("b", "z", 1)]
    campaign = make_campaign(qrels, {"r": {"c": ["x"]}}, quiet=True)
    est = load_model("fusion").fit_predict(campaign, rng=0)
    assert [p.tolist() for p in est.p] == [[1.0, 0.0], [1.0]]


# ---------------------------------------------------------------- through the CLI


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("edge_topics")
    sim, pooled = _pooled()
    qrels, runs = _frames(pooled)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_frames(qrels, runs)
    qrels_path, runs_path = campaign.to_files(root)
    groups = pd.DataFrame(
        {
            "run": list(pooled.systems) + ["onedoc", "nojudged"],
            "group": [f"g{f}" for f in sim.family] + ["g0", "g1"],
            "pooled": ["yes"] * pooled.n_systems + ["no", "no"],
        }
    )
    groups.to_csv(root / "groups.tsv", sep="\t", index=False)
    return root, str(qrels_path), str(runs_path)


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Traceback" not in err
    return out, err


@pytest.mark.parametrize("extra", [[], ["--topic-bootstrap"]])
def test_cli_compare(files, capsys, extra):
    _, qrels, runs = files
    out, _ = _run(capsys, "compare", qrels, runs, "--seed", "1", "-f", "tsv", *extra)
    frame = pd.read_csv(pd.io.common.StringIO(out), sep="\t")
    assert len(frame) == 7 * 6 // 2 and frame["p_a_better"].between(0, 1).all()


def test_cli_fit(files, capsys, tmp_path):
    _, qrels, runs = files
    out, _ = _run(capsys, "fit", qrels, runs, "-o", str(tmp_path / "p.tsv"), "-f", "tsv")
    topics = pd.read_csv(pd.io.common.StringIO(out), sep="\t", dtype={"query_id": str})
    row = topics.set_index("query_id").loc[NOBODY]
    assert row["expected_relevant"] == 1.0 and row["n_judged"] == 2
    assert topics.set_index("query_id").loc[NOTHING_JUDGED, "expected_relevant"] == 0.0


def test_cli_calibrate_fusion_mc(files, capsys, tmp_path):
    _, qrels, runs = files
    _run(
        capsys, "calibrate", qrels, runs, "--trials", "1", "--k", "4", "--c", "2",
        "--strategies", "fusion-mc", "--seed", "3", "--depth", "10", "--quiet",
        "-o", str(tmp_path / "cal"),
    )  # fmt: skip
    doc = json.loads((tmp_path / "cal" / "report.json").read_text())
    assert [r["strategy"] for r in doc["summary"]["raw"]] == ["fusion-mc"]


def test_cli_poolbias_model_fusion(files, capsys, tmp_path):
    root, qrels, runs = files
    _run(
        capsys, "poolbias", qrels, runs, "--groups", str(root / "groups.tsv"), "--pool-depth", "5",
        "--correctors", "reduced", "-m", "AP", "--model", "fusion", "--common-topics", "0",
        "--mc-draws", "50", "-f", "tsv", "-o", str(tmp_path / "pb"),
    )  # fmt: skip
    metrics = pd.read_csv(tmp_path / "pb" / "metrics.tsv", sep="\t")
    assert "model:fusion" in set(metrics["corrector"])
    assert np.isfinite(metrics.loc[metrics["corrector"] == "model:fusion", "mae"]).all()
