"""examples/llm_human_sample/few_human.py: LLM labels everywhere, a few humans drawn with known π.

- Every judged pair drawn (π = 1): the model-assisted MAP with the labels as control is the
  official MAP exactly, with standard error 0 (the study's universe, ranks and estimand agree
  with trec_eval's MAP on the official qrels; DL 2019, skipped without ``../shared/data``).
- The guided design (strata by the label, Neyman's allocation with a floor): over every
  sample it can draw (enumeration), the model-assisted P@5 with a wrong control averages to
  the true P@5 (its π are the design's), and the allocation keeps the floor and the budget.
"""

from __future__ import annotations

import sys
from itertools import combinations, product
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from relimpute.confidence.survey import estimate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "llm_human_sample"))
import few_human  # noqa: E402

DATA = few_human.DATA / few_human.COLLECTIONS["dl19"]


def test_allocation_keeps_the_floor_the_budget_and_follows_the_spread():
    assert few_human.allocate([100, 20], [0.1, 0.5], 10).tolist() == [5, 5]
    assert few_human.allocate([200, 20], [0.01, 0.5], 10).tolist() == [2, 8]
    assert few_human.allocate([200, 1], [0.5, 0.5], 10).tolist() == [9, 1]
    assert few_human.allocate([3, 4], [0.5, 0.5], 10).tolist() == [3, 4]


def test_guided_design_is_unbiased_over_every_sample():
    label = np.array([3, 2, 0, 0, 1, 0, 2, 0, 0])
    human = np.array([2, 0, 3, 0, 2, 0, 2, 0, 1])
    stratum = (label >= 2).astype(int)
    counts = few_human.allocate(np.bincount(stratum), [0.4, 0.3], 5)
    assert counts.tolist() == [3, 2]
    docs = np.array([f"d{i}" for i in range(len(label))])
    universe = SimpleNamespace(full=SimpleNamespace(topics=[SimpleNamespace(query_id="q")]),
                               doc_ids=[docs], human=[human])
    run = pd.DataFrame({"query_id": "q", "doc_id": docs[[4, 0, 7, 2, 5, 1]],
                        "score": -np.arange(6.0)})
    wrong = pd.DataFrame({"query_id": "q", "doc_id": docs, "p": 1.0 - (label >= 2)})
    truth = float((human[[4, 0, 7, 2, 5]] >= 2).mean())
    values = []
    for picks in product(*(combinations(np.flatnonzero(stratum == h), int(m))
                           for h, m in enumerate(counts))):
        drawn = np.zeros(len(label), bool)
        drawn[np.concatenate(picks)] = True
        sample = few_human.sampled_qrels(universe, [(drawn, stratum)])
        table = estimate(sample, {"A": run}, measures=["P@5"], control=wrong,
                         estimator="model-assisted", rel_threshold=2)
        values.append(table["estimate"].iloc[-1])
    assert len(values) == 20 * 3  # C(6, 3) C(3, 2)
    assert np.mean(values) == pytest.approx(truth, abs=1e-12)
    assert np.std(values) > 0.05  # the samples differ: the mean is not trivially right


@pytest.mark.skipif(not DATA.exists(), reason=f"{DATA} is absent (shared data)")
def test_every_pair_judged_gives_the_official_map():
    full = few_human.load("dl19", [few_human.SOURCE])
    universe = few_human.Universe(full)
    keep = 3
    every = [(np.ones(len(d), bool), np.zeros(len(d), int)) for d in universe.doc_ids]
    sample = few_human.sampled_qrels(universe, every)
    topics = [t.query_id for t in full.topics[:keep]]
    sample = sample[sample["query_id"].isin(topics)]
    systems = list(full.systems[:4])
    runs = {}
    for s in systems:
        frame = full.run_frame(s)
        runs[s] = frame[frame["query_id"].isin(topics)]
    control = few_human.controls(universe, {0: 0.0, 1: 0.2, 2: 0.6, 3: 0.7}, DATA)["label"]
    found = few_human.survey_answer(sample, runs, control, "model-assisted",
                                    [(systems[0], systems[1])])
    truth = few_human.per_topic_ap(full)[:keep, :4].mean(axis=0)
    estimate_, low, high = found["map"]
    assert estimate_ == pytest.approx(truth, abs=1e-9)
    assert high - low == pytest.approx(np.zeros(4), abs=1e-12)
    assert found["delta"][0] == pytest.approx([truth[0] - truth[1]], abs=1e-9)
