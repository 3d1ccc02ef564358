"""The README's five-minute tour on the real TREC DL 2019 passage data.

Run from the repository root: ``python examples/quickstart.py``. The data is
read from ``../shared/data`` (research use only, never copied here); the
script says so and stops when it is absent.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from relimpute import Campaign
from relimpute.confidence import ConfidenceEngine
from relimpute.measures import evaluate
from relimpute.relevance import load_model

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec-dl-2019-passage"


def main() -> int:
    if not (DATA / "qrels.txt").is_file():
        print(f"DL 2019 data not found at {DATA}; nothing to do", file=sys.stderr)
        return 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = Campaign.from_files(DATA / "qrels.txt", DATA / "runs", rel_threshold=2)
    print(full)

    # Scores with every judgment, as trec_eval gives them.
    official = evaluate(full, ["AP"]).set_index("system")["value"]
    pair = ["p_bert", "bm25base_p"]
    truth = official[pair[0]] - official[pair[1]]
    engine = ConfidenceEngine()

    def compare(campaign, estimate):
        """Monte Carlo over the model's posterior draws when it has them, else the normal form."""
        if estimate.draws is None:
            return engine.confidence(
                campaign, estimate, systems=pair, method="normal"
            ).to_frame().iloc[0]
        return engine.confidence(
            campaign, estimate, systems=pair, rng=0, method="monte carlo", n_draws=10_000
        ).to_frame().iloc[0]

    # The default model (fusion) on the official, nearly complete qrels: close to trec_eval.
    estimate = load_model().fit_predict(full, rng=0)
    row = compare(full, estimate)
    print(
        f"official qrels, default model: E[dMAP] = {row.e_delta_map:+.4f} "
        f"[{row.ci_low:+.4f}, {row.ci_high:+.4f}], P({pair[0]} beats {pair[1]}) = "
        f"{row.p_a_better:.3f}; trec_eval dMAP = {truth:+.4f}"
    )

    # Pretend only the depth-10 pool was judged, as in a shallow pooled collection.
    shallow = full.pooled(10)
    for name in ("nonrelevant", "uniform", "rtc", "fusion"):
        row = compare(shallow, load_model(name).fit_predict(shallow, rng=0))
        print(
            f"depth-10 pool, {name:>11}: E[dMAP] = {row.e_delta_map:+.4f} +- {row.sd_delta_map:.4f}, "
            f"P({pair[0]} beats {pair[1]}) = {row.p_a_better:.3f}"
        )
    print(f"{'truth':>26}: dMAP = {truth:+.4f} (full qrels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
