"""Cross-check the pools against TREC-8's reference/pool_bias_scores.tsv (isoboroff/trec8-scores).

The reference's leave-one-group-out qrels count *every* run (pooled or not)
as a contributor: a group's documents are removed only if no other run has
them in its top 100 (top 10 for the depth-10 pool, itself the pool of all
129 runs); its depth-10 MAPs are judged-only (trec_eval -J, i.e. condensed
lists). This script rebuilds those pools with :mod:`relimpute.bias.pools`
(contributors = all runs), taking each run's top k in trec_eval order or
in its rank-column order (the source's annotated pool uses the rank column;
scoring is always in trec_eval order), and compares MAP to the 4 decimals of the
reference; then it shows how the
study's own protocol (only the 71 runs flagged ``pooled`` contribute) differs.

    nice -n 10 python examples/poolbias/reference_check.py ../shared/data/trec-8-adhoc
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.bias import depth_pool, groups_from_frame, read_groups, topic_scores
from relimpute.cli._format import FORMATTERS
from relimpute.data import Campaign
from relimpute.measures import parse_measure

HERE = Path(__file__).resolve().parent


def logo_map(
    campaign: Campaign,
    groups,
    depth: int,
    contributors,
    condensed=False,
    pool_from: Campaign | None = None,
) -> dict[str, float]:
    """MAP of every run against the pool of ``contributors`` at ``depth`` without its own group.

    ``pool_from`` (same documents, other run order) builds the pools; ``campaign`` scores.
    """
    ap = [parse_measure("AP")]
    out = {}
    for group in groups.group_names():
        members = [r for r in groups.members(group) if r in campaign.systems]
        others = [r for r in contributors if r not in members]
        pool = depth_pool(pool_from or campaign, others, depth)
        reduced = campaign.with_judged([p & t.judged for p, t in zip(pool, campaign.topics)])
        rows = reduced.system_index(members)
        scores = topic_scores(reduced, ap, rows, condensed=condensed)[0].mean(axis=1)
        out.update(zip(members, scores))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("collection")
    args = parser.parse_args()
    root = Path(args.collection)
    groups = read_groups(root / "groups.tsv")
    reference = pd.read_csv(
        root / "reference" / "pool_bias_scores.tsv", sep="\t", na_values="NA"
    ).set_index("run")
    all_pooled = groups_from_frame(groups.to_frame().assign(pooled="yes"))
    ap = [parse_measure("AP")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        campaign = Campaign.from_files(root / "qrels.txt", root / "runs")
        by_rank = Campaign.from_files(root / "qrels.txt", root / "runs", by_rank=True)
    everyone = list(campaign.systems)
    rows = []
    for order, pool_from in (("trec_eval", campaign), ("rank column", by_rank)):
        depth10_all = campaign.with_judged(
            [p & t.judged for p, t in zip(depth_pool(pool_from, everyone, 10), campaign.topics)]
        )
        ours = pd.DataFrame(index=everyone)
        ours["map_official"] = topic_scores(campaign, ap, np.arange(len(everyone)))[0].mean(axis=1)
        ours["map_logo_depth100"] = pd.Series(
            logo_map(campaign, all_pooled, 100, everyone, pool_from=pool_from)
        )
        ours["map_depth10_pool"] = topic_scores(
            depth10_all, ap, np.arange(len(everyone)), condensed=True
        )[0].mean(axis=1)
        ours["map_logo_depth10_pool"] = pd.Series(
            logo_map(depth10_all, all_pooled, 10, everyone, condensed=True, pool_from=pool_from)
        )
        for column in ours.columns:
            both = reference[column].notna()
            diff = (ours.loc[reference.index[both], column] - reference.loc[both, column]).abs()
            rows.append(
                {
                    "pool order": order,
                    "column": column,
                    "runs": int(both.sum()),
                    "max_abs_diff": diff.max(),
                    "within_0.00005": int((diff <= 0.00005 + 1e-12).sum()),
                }
            )
    check = pd.DataFrame(rows)
    # the study's protocol: only pooled runs contribute
    pooled = list(groups.pooled_runs())
    study_logo = pd.Series(logo_map(campaign, groups, 100, pooled))
    flagged = reference.index[reference["pooled"] == "yes"]
    gap = reference.loc[flagged, "map_logo_depth100"] - study_logo[flagged]
    text = "## Reference MAPs rebuilt (contributors = all 129 runs)\n\n" + FORMATTERS["markdown"](
        check
    )
    text += (
        "\n## Study protocol (contributors = the 71 pooled runs) vs the reference, "
        "depth 100, pooled runs\n\n"
        "reference minus study leave-one-group-out MAP: "
        f"mean {gap.mean():.5f}, max {gap.max():.5f}, "
        f"runs with a difference > 0.00005: {int((gap.abs() > 0.00005).sum())} of {len(gap)}; "
        f"largest: {gap.abs().sort_values().index[-1]} ({gap.abs().max():.4f})\n"
    )
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "reference_check.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
