"""The reusability study for another measure than MAP (``calibrate -m nDCG@10``): the truth
against ir_measures, and a model that knows every grade is right on every pair."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from relimpute.calibration import run_study, true_map
from relimpute.calibration.strategies import Strategy
from relimpute.relevance import RelevanceModel
from relimpute.relevance.grades import GradeShares, judged_shares


@pytest.fixture(scope="module")
def dl19_cut(dl19):
    return dl19.truncated(100, shrink=True)


def test_true_ndcg_matches_ir_measures(dl19_cut):
    import ir_measures

    systems = list(dl19_cut.systems[3:6])
    ours = true_map(dl19_cut, systems, measure="nDCG@10")
    qrels = dl19_cut.qrels_frame()
    for name in systems:
        run = dl19_cut.run_frame(name)
        values = [m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ 10], qrels, run)]
        assert len(values) == dl19_cut.n_topics
        assert ours[name] == pytest.approx(np.mean(values), abs=1e-12)


class _KnowsTheGrades(RelevanceModel):
    """Test-only model: every document's grade from the full qrels, as grade shares."""

    name = "test-knows-the-grades"

    def __init__(self, truth=None):
        self.truth = truth

    def _fit(self, campaign, rng):
        """Nothing to learn."""

    def _predict(self, campaign):
        p = [t.relevant(self.truth.rel_threshold).astype(float) for t in self.truth.topics]
        return p, None, {}

    def predict(self, campaign):
        estimate = super().predict(campaign)
        n = [t.n_docs for t in campaign.topics]
        empty = GradeShares((0, 1, 2, 3), 2, tuple(np.zeros((k, 1)) for k in n), tuple(np.zeros((k, 1)) for k in n))
        return replace(estimate, grades=judged_shares(empty, self.truth.topics))


def test_a_model_that_knows_the_grades_is_right_about_ndcg(dl19_cut):
    five = dl19_cut.subset(["TUA1-1", "bm25base_p", "idst_bert_p1", "p_bert", "runid2"])
    # the engine counts only documents it knows of (judged, or retrieved by the run set) in the
    # ideal DCG, as in R for AP (docs/math/average-precision.md): keep the judgments the runs retrieve
    five = five.with_judged([t.judged & t.retrieved() for t in five.topics])
    oracle = Strategy("oracle", selector="mtc", model=_KnowsTheGrades(five))
    study = run_study(five, [oracle], n_trials=2, k=5, c=2, depth=None, seed=9, progress=False,
                      measure="nDCG@10")  # fmt: skip
    assert study.config["measure"] == "nDCG@10"
    pairs = study.pairs[study.pairs["true_delta_map"] != 0]
    np.testing.assert_allclose(pairs["e_delta_map"], pairs["true_delta_map"], atol=1e-12)
    np.testing.assert_array_equal(pairs["p_a_better"] > 0.5, pairs["true_delta_map"] > 0)
