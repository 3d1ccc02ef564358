"""Leave-one-group-out pool-bias study on one collection and depth (see README.md here).

A model with settings chosen without the collection (``examples/calibration/held_out/``)
runs with those; the study's ``<stem>_settings.json`` records which file.

    nice -n 10 python examples/poolbias/run.py ../shared/data/trec-8-adhoc --depth 10 \
        --models fusion --stem trec8_d10
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import pandas as pd

from relimpute.bias import read_groups
from relimpute.bias.study import PUBLISHED, full_pool_scores, run_pool_bias_study, study_metrics, write_study
from relimpute.cli._format import FORMATTERS
from relimpute.data import Campaign
from relimpute.relevance.settings import settings_in

HERE = Path(__file__).resolve().parent
#: per development collection, relevance-model settings chosen without it
HELD_OUT = HERE.parent / "calibration" / "held_out"
SHORT_NAMES = {"trec-8-adhoc": "trec8", "trec-dl-2019-passage": "dl19", "trec-dl-2021-passage": "dl21"}


def held_out_settings(model: str, collection: Path) -> str:
    """The settings file of ``model`` chosen without this collection, if there is one."""
    folder = HELD_OUT / SHORT_NAMES.get(collection.resolve().name, "-")
    found = settings_in(folder, model)
    return os.path.relpath(found) if found != model else model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("collection", help="folder with qrels.txt, runs/ and groups.tsv")
    parser.add_argument("--depth", type=int, required=True)
    parser.add_argument("--rel-threshold", type=int, default=1)
    parser.add_argument("--models", default="", help="comma-separated relevance models (slow)")
    parser.add_argument(
        "--model-groups", default=None, help="comma-separated groups for the models"
    )
    parser.add_argument("--n-draws", type=int, default=1000)
    parser.add_argument(
        "--group-sds",
        default=None,
        help="comma-separated between-group spreads to run each model with (one fit shared)",
    )
    parser.add_argument(
        "--split-sds",
        default=None,
        help="comma-separated spreads of the between-group term on the split into grades",
    )
    parser.add_argument(
        "--measures", default=None, help="comma-separated measures (default: the study's six)"
    )
    parser.add_argument(
        "--models-only", action="store_true", help="skip the published correctors and Algorithm 2"
    )
    parser.add_argument(
        "--from-estimates",
        action="store_true",
        help="recompute the metrics from results/<stem>_estimates.tsv instead of running",
    )
    parser.add_argument("--stem", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    root = Path(args.collection)
    groups = read_groups(root / "groups.tsv")
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        campaign = Campaign.from_files(
            root / "qrels.txt", root / "runs", rel_threshold=args.rel_threshold
        )
    campaign = campaign.subset(list(groups.pooled_runs(campaign.systems)))
    loaded = time.perf_counter() - start
    if args.from_estimates:
        estimates = pd.read_csv(HERE / "results" / f"{args.stem}_estimates.tsv", sep="\t")
        measures = list(dict.fromkeys(estimates["measure"]))
        pooled, truth = full_pool_scores(campaign, groups, args.depth, measures)
        metrics = study_metrics(estimates, truth, pooled, measures)
        metrics.to_csv(
            HERE / "results" / f"{args.stem}_metrics.tsv",
            sep="\t",
            index=False,
            float_format="%.6g",
        )
        (HERE / "results" / f"{args.stem}_metrics.md").write_text(FORMATTERS["markdown"](metrics))
        print(metrics[metrics["filter"] == "all"].to_string(index=False))
        return
    study = run_pool_bias_study(
        campaign,
        groups,
        pool_depth=args.depth,
        **({"measures": args.measures.split(",")} if args.measures else {}),
        correctors=() if args.models_only else PUBLISHED,
        n_common=0 if args.models_only else 10,
        models=[held_out_settings(m, root) for m in args.models.split(",") if m],
        model_groups=args.model_groups.split(",") if args.model_groups else None,
        group_sds=[float(g) for g in args.group_sds.split(",")] if args.group_sds else None,
        split_sds=[float(g) for g in args.split_sds.split(",")] if args.split_sds else None,
        n_draws=args.n_draws,
        seed=args.seed,
    )
    write_study(study, HERE / "results", args.stem)
    info = {
        **study.settings,
        "collection": str(root),
        "load_seconds": round(loaded, 1),
        "corrector_seconds": {k: round(v, 1) for k, v in study.timing.items()},
        "total_seconds": round(time.perf_counter() - start, 1),
    }
    (HERE / "results" / f"{args.stem}_settings.json").write_text(json.dumps(info, indent=2) + "\n")
    print(study.metrics[study.metrics["filter"] == "all"].to_string(index=False))


if __name__ == "__main__":
    main()
