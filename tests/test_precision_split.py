"""Split-corpus validation: the MD5 halves, restricted campaigns, and the in-interval shares."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from conftest import make_campaign

from relimpute.data import Campaign
from relimpute.precision.split import in_half_a, split_halves, split_validation


def _population(n_topics=30, n_systems=3, size=3000, prevalence=0.03, depth=200, seed=0):
    """Topics whose corpora are i.i.d. documents; systems are noisy scorers of relevance."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {f"s{k}": [] for k in range(n_systems)}
    for t in range(n_topics):
        qid = f"q{t:03d}"
        rel = rng.random(size) < prevalence
        docs = np.array([f"{qid}-d{i}" for i in range(size)])
        qrels.append(pd.DataFrame({"query_id": qid, "doc_id": docs, "relevance": rel.astype(int)}))
        for k in range(n_systems):
            score = rng.normal(size=size) + (1.0 + 0.5 * k) * rel
            top = np.argsort(-score)[:depth]
            runs[f"s{k}"].append(
                pd.DataFrame({"query_id": qid, "doc_id": docs[top], "score": score[top]})
            )
    return Campaign.from_frames(pd.concat(qrels), {k: pd.concat(v) for k, v in runs.items()})


def test_md5_halves():
    docs = [f"FT{i:06d}" for i in range(4000)]
    half = in_half_a(docs)
    assert half[0] == (hashlib.md5(b"FT000000").digest()[-1] % 2 == 0)
    assert abs(half.mean() - 0.5) < 4 * 0.5 / np.sqrt(4000)
    other = in_half_a(docs, salt="split-2")
    assert abs((half == other).mean() - 0.5) < 4 * 0.5 / np.sqrt(4000)  # an independent split


def test_restricted_half_scores_like_trec_eval_on_filtered_files():
    campaign = _population(n_topics=5, seed=1)
    half_a, _ = split_halves(campaign)
    qrels, run_a = {}, {}
    for topic in campaign.topics:
        keep = in_half_a(topic.doc_ids)
        rel = topic.relevant(1)
        qrels[topic.query_id] = {d: int(r) for d, r, k in zip(topic.doc_ids, rel, keep) if k}
        row = topic.ranking[0, : topic.depth[0]]
        docs = [topic.doc_ids[i] for i in row if keep[i]]
        run_a[topic.query_id] = {d: float(len(docs) - j) for j, d in enumerate(docs)}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run_a)
    from relimpute.precision import corpus_bootstrap

    boot = corpus_bootstrap(half_a, 5, rng=0)
    for t, qid in enumerate(boot.query_ids):
        assert boot.observed[0, t] == pytest.approx(expected[qid]["map"], abs=1e-9)
        assert boot.n_relevant[t] == sum(qrels[qid].values())


def test_split_validation_on_independent_halves_lands_near_the_prediction():
    campaign = _population(n_topics=40, seed=2)
    result = split_validation(campaign, 300, rng=3)
    assert result.predicted == pytest.approx(0.834, abs=1e-3)
    table = result.ap_table()
    assert set(table["direction"]) == {"A w.r.t. B", "B w.r.t. A"}
    assert np.allclose(table[["below", "in", "above"]].sum(axis=1), 1.0)
    assert (table["n"] == 40 * 3).all()  # every topic has relevant documents in both halves
    inside = table.groupby("method")["in"].mean()
    for method in ("normal", "logit", "bca", "percentile"):
        assert 0.72 < inside[method] < 0.93, method
    means = result.mean_table()
    assert set(means["measure"]) == {"MAP", "L-MAP"} and (means["n"] == 3).all()
    assert "predicted 83.4% inside" in str(result)
    ratio = result.variance_ratio().set_index("measure")
    assert 0.75 < ratio.loc["AP", "variance_ratio"] < 1.35  # bootstrap SEs right on average


def test_split_validation_needs_relevant_documents_in_both_halves():
    campaign = make_campaign([("q", "only", 1)], {"r": ["only", "x"]})
    with pytest.raises(ValueError, match="both halves"):
        split_validation(campaign, 20, rng=0)


@pytest.mark.slow
def test_dl19_split_corpus_lands_near_the_paper(dl19):
    """The study of examples/precision on DL 2019 (one split, fewer resamples)."""
    result = split_validation(dl19, 1000, rng=20060806)
    inside = result.ap_table().groupby("method")["in"].mean()
    assert 0.80 < inside["logit+small-R"] < 0.87  # 83.3% with 2,000 resamples
    assert inside["logit"] < inside["logit+small-R"]  # the small-R correction matters
    ratio = result.variance_ratio().set_index("measure").loc["AP", "variance_ratio"]
    assert 0.8 < ratio < 1.5
