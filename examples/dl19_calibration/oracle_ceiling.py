"""The ceiling of the protocol: a relevance model that knows every label in the full qrels.

Run from the repository root: ``python examples/dl19_calibration/oracle_ceiling.py [TRIALS]``.
Writes ``examples/dl19_calibration/oracle_ceiling/`` (the usual report). The model
predicts p = 1 for every document the full qrels call relevant and 0 otherwise,
so the only errors left are those of the protocol itself: R counts the documents
the engine knows of (judged, or retrieved by one of the k runs at depth 100;
math.md §1), while the true MAP divides by every relevant document in the qrels.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from relimpute.calibration import CalibrationReport, Strategy, read_groups, run_study
from relimpute.data import Campaign
from relimpute.relevance import RelevanceModel

DL19 = Path(__file__).resolve().parents[3] / "shared" / "data" / "trec-dl-2019-passage"
OUT = Path(__file__).resolve().parent / "oracle_ceiling"


class KnowsTheTruth(RelevanceModel):
    """p = the full qrels' binary label of each document (not registered: an analysis tool)."""

    name = "knows-the-truth"

    def __init__(self, truth: Campaign | None = None):
        self.truth = truth

    def _fit(self, campaign, rng):
        pass

    def _predict(self, campaign):
        lookup = {t.query_id: t for t in self.truth.topics}
        p = [lookup[t.query_id].relevant(self.truth.rel_threshold).astype(float) for t in campaign.topics]
        return p, None, {}


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(DL19 / "qrels.txt", DL19 / "runs", rel_threshold=2)
    from relimpute.calibration import truncate_campaign

    cut = truncate_campaign(campaign, 100)  # the model's document index must match the study's
    oracle = Strategy("oracle", selector="mtc", model=KnowsTheTruth(cut))
    study = run_study(cut, [oracle, "mtc"], n_trials=trials, k=10, c=2, depth=None,
                      groups=read_groups(DL19 / "groups.tsv"), seed=2007)
    study = type(study)(study.pairs, study.trials, {**study.config, "depth": 100})
    report = CalibrationReport.from_study(study)
    report.write(OUT, study=study)
    print(report.terminal_summary())


if __name__ == "__main__":
    main()
