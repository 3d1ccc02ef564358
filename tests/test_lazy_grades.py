"""The default model fits its per-topic grade split only when something reads it (issue 26):
a binary measure (AP) on a graded collection never fits the cut-points, and its answer is
the same, bit for bit, as with them."""

from __future__ import annotations

import numpy as np
import pytest

import relimpute.relevance.fusion.model as fusion_module
from relimpute.cli import main
from relimpute.relevance import Fusion

from test_cli_compare import QRELS, RUNS
from test_fusion_grades import _campaign as _graded_campaign


@pytest.fixture
def cut_fits(monkeypatch):
    """Counts the calls of the default model's cut-point fit."""
    calls = []
    real = fusion_module.fit_topic_cuts

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(fusion_module, "fit_topic_cuts", counting)
    return calls


def test_cut_points_are_fitted_when_first_read_and_once(cut_fits):
    campaign = _graded_campaign(binary=False)
    model = Fusion(n_draws=4).fit(campaign, rng=3)
    assert len(model.grade_levels_) > 2 and not cut_fits
    binary = model.predict(campaign, grades=False)
    assert binary.grades is None and "cut_points" not in binary.params and not cut_fits
    graded = model.predict(campaign)
    assert len(cut_fits) == 1 and graded.grades is not None
    np.testing.assert_array_equal(model.cuts_, model.topic_cuts_.shared)
    assert len(cut_fits) == 1  # read again: not refitted
    for t in range(campaign.n_topics):  # the probabilities and their draws do not move
        np.testing.assert_array_equal(binary.p[t], graded.p[t])
        np.testing.assert_array_equal(binary.draws[t], graded.draws[t])
    # the lazy fit is the eager one: a model whose cut-points are read right after fit
    eager = Fusion(n_draws=4).fit(campaign, rng=3)
    eager.topic_cuts_  # noqa: B018
    again = eager.predict(campaign)
    for t in range(campaign.n_topics):
        np.testing.assert_array_equal(again.grades.above[t], graded.grades.above[t])
        np.testing.assert_array_equal(again.grades.cut_draws[t], graded.grades.cut_draws[t])


def test_a_binary_scale_has_no_cut_points_to_fit(cut_fits):
    campaign = _graded_campaign(binary=True)
    model = Fusion(n_draws=2).fit(campaign, rng=3)
    assert model.topic_cuts_ is None and model.cuts_.tolist() == [0.0] and not cut_fits


def _files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)  # grades 0, 1 and 2: a graded collection
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, lines in RUNS.items():
        (runs / f"{name}.run").write_text("\n".join(lines) + "\n")
    return [str(qrels), str(runs)]


def test_compare_with_a_binary_measure_skips_the_split_and_answers_the_same(
    tmp_path, capsys, monkeypatch, cut_fits
):
    args = ["compare", *_files(tmp_path), "--seed", "4", "--mc-draws", "300", "-f", "tsv"]
    assert main(args) == 0
    lazy = capsys.readouterr().out
    assert not cut_fits
    eager_predict = Fusion.predict
    monkeypatch.setattr(Fusion, "predict", lambda self, c, grades=True: eager_predict(self, c))
    assert main(args) == 0
    assert capsys.readouterr().out == lazy and len(cut_fits) == 1
    assert main([*args, "-m", "nDCG@10"]) == 0  # a graded measure fits and reads them
    assert len(cut_fits) == 2
