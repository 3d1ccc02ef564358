"""fusion-llm's label_sd and label_topic_sd, chosen leave-one-collection-out.

Run from the repository root::

    python examples/llm_evidence/choose_settings.py [--points 1:0.5,2:0.5,4:0.5,2:0,2:1]
        [--source umbrela-gpt-4o] [--out examples/llm_evidence/results]

For every point ``label_sd:label_topic_sd`` of the grid (by default each spread varied
around 2 and 0.5 with the other held there), ``fusion-llm`` is scored on DL 2019 and on DL 2021 in
the study's two headline designs (the depth-3 pool, and 10 random human labels per topic;
``study.py``'s designs and seed) with the study's numbers. The criterion is the log loss of
the stated P(ΔMAP < 0) of every pair of runs against the official qrels' sign, summed over
the two designs: a proper score of the confidences the model states (as the default model's
settings were chosen, models/fusion.json). The setting scored on DL 2021 is the one with the
lowest log loss on DL 2019, and the other way round, so neither collection chooses its own.

Writes ``settings_grid.csv`` (every collection, design and grid point) and
``settings_choice.csv`` (per collection: the setting chosen on the other and its held-out
numbers) to ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study import EARLIER, kept_judgments, load, model_answer, pair_index, per_topic_ap  # noqa: E402

from relimpute.relevance import FusionLLM  # noqa: E402

DESIGNS = (("pool", 3), ("random", 10))
OTHER = {"dl19": "dl21", "dl21": "dl19"}
EDGE = 1e-6


def log_loss(p_a_better: np.ndarray, truth: np.ndarray) -> float:
    """Mean log loss of P(run a beats run b) over the pairs whose true ΔMAP is not 0."""
    a, b = pair_index(len(truth))
    delta = truth[a] - truth[b]
    keep = delta != 0
    p = np.clip(p_a_better[keep], EDGE, 1 - EDGE)
    return float(-np.where(delta[keep] > 0, np.log(p), np.log(1 - p)).mean())


def grid_rows(collection: str, source: str, points, seed: int) -> list[dict]:
    full = load(collection, [source])
    truth = per_topic_ap(full).mean(axis=0)
    rows = []
    for design, size in DESIGNS:
        kept = kept_judgments(full, design, size, np.random.default_rng(seed))
        for sd, topic_sd in points:
            model = FusionLLM(label_sd=sd, label_topic_sd=topic_sd, **EARLIER)
            result = model_answer(model, kept, truth, seed, keep_pairs=True)
            p = result.pop("p_a_better")
            result.pop("per_run")
            row = {"collection": collection, "design": design, "size": size, "label_sd": sd,
                   "label_topic_sd": topic_sd, "log_loss": log_loss(p, truth), **result}  # fmt: skip
            print("  " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                   for k, v in row.items()), file=sys.stderr)  # fmt: skip
            rows.append(row)
    return rows


def choose(grid: pd.DataFrame) -> pd.DataFrame:
    """Per collection, the setting with the lowest log loss (summed over designs) on the other
    collection, and that setting's numbers on this one."""
    loss = grid.groupby(["collection", "label_sd", "label_topic_sd"])["log_loss"].sum()
    rows = []
    for collection in grid["collection"].unique():
        other = OTHER[collection]
        if other not in loss.index.get_level_values(0):
            continue
        sd, topic_sd = loss.loc[other].idxmin()
        own_sd, own_topic_sd = loss.loc[collection].idxmin()
        scored = grid[(grid["collection"] == collection) & (grid["label_sd"] == sd)
                      & (grid["label_topic_sd"] == topic_sd)]  # fmt: skip
        for _, row in scored.iterrows():
            rows.append({**row.to_dict(), "chosen_on": other, "own_choice_label_sd": own_sd,
                         "own_choice_label_topic_sd": own_topic_sd})  # fmt: skip
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", default="dl19,dl21")
    parser.add_argument("--points", default="1:0.5,2:0.5,4:0.5,2:0,2:1", help="label_sd:label_topic_sd, ...")
    parser.add_argument("--source", default="umbrela-gpt-4o")
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    points = [tuple(float(v) for v in point.split(":")) for point in args.points.split(",")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for collection in args.collections.split(","):
        rows += grid_rows(collection, args.source, points, args.seed)
        grid = pd.DataFrame(rows)
        grid.to_csv(out / "settings_grid.csv", index=False, float_format="%.4f")
    choose(grid).to_csv(out / "settings_choice.csv", index=False, float_format="%.4f")
    return 0


if __name__ == "__main__":
    sys.exit(main())
