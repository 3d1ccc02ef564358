"""Topic sampling and unjudged documents: the two uncertainties, side by side on TREC DL 2019.

Run from the repository root: ``python examples/two_uncertainties/run.py`` (about a
minute on 2 cores). Every DL 2019 run is compared with the baseline bm25base_p on AP:

- topic level (``evaluate --baseline``): the randomization test over the 43 topics,
  Holm-adjusted across all runs, the judgments taken as they are;
- judgment level (``compare``): P(run beats the baseline) from the default fusion
  model, Monte Carlo over its posterior draws, the topics held fixed;
- both (``compare --topic-bootstrap``): the same with a topic resample in every draw.

Both with only the depth-10 pool judged (unjudged = nonrelevant for the topic-level
test), and checked against the official qrels' answer (the sign of ΔAP there).
Writes ``results.tsv`` and prints a summary.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pandas as pd

from relimpute import Campaign
from relimpute.confidence import ConfidenceEngine
from relimpute.measures import evaluate
from relimpute.measures.significance import compare_to_baseline
from relimpute.relevance import load_model

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1].parent / "shared" / "data" / "trec-dl-2019-passage"
BASELINE = "bm25base_p"
POOL_DEPTH = 10


def main() -> int:
    if not (DATA / "qrels.txt").is_file():
        print(f"DL 2019 data not found at {DATA}; nothing to do", file=sys.stderr)
        return 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = Campaign.from_files(DATA / "qrels.txt", DATA / "runs", rel_threshold=2)
    official = evaluate(full, ["AP"]).set_index("system")["value"]
    pooled = full.pooled(POOL_DEPTH)
    topic = compare_to_baseline(
        evaluate(pooled, ["AP"], per_topic=True), BASELINE, tests=["randomization"], rng=0
    ).set_index("system")
    others = [s for s in pooled.systems if s != BASELINE]
    estimate = load_model().fit_predict(pooled, rng=0)
    judged = ConfidenceEngine().confidence(
        pooled, estimate, pairs=[(s, BASELINE) for s in others], rng=0
    )
    both_sources = ConfidenceEngine().confidence(
        pooled, estimate, pairs=[(s, BASELINE) for s in others], rng=0,
        topics=True,
    )
    table = pd.DataFrame(
        {
            "system": others,
            "delta_ap_pool": topic.loc[others, "mean_difference"].to_numpy(),
            "p_topics_holm": topic.loc[others, "pvalue_adjusted"].to_numpy(),
            "e_delta_ap_model": judged.e_delta_map,
            "p_beats_baseline": judged.p_a_better,
            "p_beats_baseline_topics": both_sources.comparison.p_a_better,
            "delta_ap_official": (official[others] - official[BASELINE]).to_numpy(),
        }
    )
    table.to_csv(HERE / "results.tsv", sep="\t", index=False, float_format="%.4f")
    truth = table["delta_ap_official"] > 0
    pool_says = table["delta_ap_pool"] > 0
    significant = table["p_topics_holm"] < 0.05
    confident = (table["p_beats_baseline"] >= 0.95) | (table["p_beats_baseline"] <= 0.05)
    model_says = table["p_beats_baseline"] > 0.5
    print(f"{len(table)} runs against {BASELINE}, depth-{POOL_DEPTH} pool judged")
    print(
        f"topic level: {significant.sum()} significant (Holm, randomization); "
        f"direction right on the official qrels for {(pool_says == truth)[significant].sum()}"
        f" of them, {(pool_says == truth).sum()} of {len(table)} overall"
    )
    print(
        f"judgment level: {confident.sum()} confident (P >= 0.95 either way); direction right "
        f"for {(model_says == truth)[confident].sum()} of them, "
        f"{(model_says == truth).sum()} of {len(table)} overall"
    )
    combined = table["p_beats_baseline_topics"]
    combined_confident = (combined >= 0.95) | (combined <= 0.05)
    print(
        f"both sources (--topics): {combined_confident.sum()} confident; direction right for "
        f"{((combined > 0.5) == truth)[combined_confident].sum()} of them; "
        f"{(combined_confident & significant).sum()} of the {significant.sum()} significant"
    )
    both = significant & confident
    print(f"significant and confident: {both.sum()}; confident only: {(confident & ~significant).sum()}; "
          f"significant only: {(significant & ~confident).sum()}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
