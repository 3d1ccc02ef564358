"""Experiment, not shipped: each run's fitted effect held below the pool at the pool edge's vote.

Run from the repository root (seed 0; TREC-8 ~3 min, DL seconds)::

    python examples/estimand_coverage/carry.py trec8 10
    python examples/estimand_coverage/carry.py dl19 3

The default model's per-run effect ``u_j`` acts on a document through the run's vote
``1 / log2(1 + r)``, which fades below the pool; here every vote below the pool depth is raised
to the vote at the depth, so a run's effect learned in the pool carries down undiminished. Prints
the study's summary (:func:`run.summarize`) and the runs whose pairs are covered least.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np

import run  # noqa: I001  (the study beside it)
from relimpute.relevance import fusion

_EVIDENCE = fusion.Fusion._evidence


def carried(self, campaign):
    """The runs' evidence with every vote at least the pool edge's."""
    out = []
    for ev in _EVIDENCE(self, campaign):
        votes = ev.votes.copy()
        votes.data = np.maximum(votes.data, 1.0 / np.log2(1.0 + max(ev.horizon, 1)))
        out.append(replace(ev, votes=votes))
    return out


def main(argv: list[str]) -> int:
    name, k = argv[0], int(argv[1])
    collection = run.COLLECTIONS[name]
    campaign, _ = run.load(run.SHARED / collection.folder, False, collection)
    fusion.Fusion._evidence = carried
    runs, pairs = run.study(campaign, k, truth_depth=collection.truth_depth, seed=0)
    print(name, k, {key: round(v, 4) for key, v in run.summarize(runs, pairs).items()})
    print(run.by_run(runs, pairs).head(6)[["system", "truth", "e", "sd", "pair_coverage"]])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
