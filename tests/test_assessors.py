"""The simulated assessor: answers from full qrels, unjudged policy, label noise."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from relimpute.selection import SimulatedAssessor

QRELS = pd.DataFrame(
    {"query_id": ["1", "1", "2", "2"], "doc_id": ["a", "b", "a", "c"], "relevance": [2, 0, 1, -1]}
)


def test_answers_from_qrels_and_unjudged_policy():
    oracle = SimulatedAssessor(QRELS)
    assert (
        oracle.judge("1", "a") == 2 and oracle.judge("1", "b") == 0 and oracle.judge("2", "a") == 1
    )
    assert oracle.judge("1", "zzz") == 0  # missing = nonrelevant
    assert oracle.judge("2", "c") == 0  # -1 (pooled, unjudged) is not a label
    assert oracle.n_asked_ == 5
    strict = SimulatedAssessor(QRELS, unjudged="error")
    with pytest.raises(KeyError, match="not in the full qrels"):
        strict.judge("1", "zzz")
    with pytest.raises(ValueError):
        SimulatedAssessor(QRELS, unjudged="maybe")
    with pytest.raises(ValueError):
        SimulatedAssessor(QRELS, noise=1.5)


def test_from_campaign_uses_its_threshold(dl19):
    oracle = SimulatedAssessor(dl19, noise=1.0, rng=0)
    assert oracle.rel_threshold == 2
    qrels = dl19.qrels_frame()
    row = qrels[qrels["relevance"] == 3].iloc[0]
    assert oracle.judge(row["query_id"], row["doc_id"]) == 0  # flipped
    row = qrels[qrels["relevance"] == 1].iloc[0]
    assert oracle.judge(row["query_id"], row["doc_id"]) == 2  # grade 1 is nonrelevant at rel >= 2


def test_noise_rate_is_binomial():
    n = 20_000
    frame = pd.DataFrame(
        {"query_id": ["q"] * n, "doc_id": [f"d{i}" for i in range(n)], "relevance": [1] * n}
    )
    rate = 0.1
    oracle = SimulatedAssessor(frame, noise=rate, rng=np.random.default_rng(7))
    flipped = sum(oracle.judge("q", f"d{i}") == 0 for i in range(n))
    assert flipped == oracle.n_flipped_
    # 5 standard deviations of Binomial(n, 0.1)
    assert abs(flipped - n * rate) < 5 * np.sqrt(n * rate * (1 - rate))
    again = SimulatedAssessor(frame, noise=rate, rng=np.random.default_rng(7))
    assert sum(again.judge("q", f"d{i}") == 0 for i in range(n)) == flipped
