"""Choose the model-based corrector's between-group spread leave-one-collection-out.

Reads the studies run with ``--group-sds`` (``results/<stem>_estimates.tsv``), scores each
spread by the interval score of its 95% intervals (Gneiting & Raftery 2007, §6.2: width plus
40 times the distance by which the full-pool score falls outside; a proper score, lowest in
expectation for the true 2.5% and 97.5% quantiles, where coverage alone would reward any
wide interval), relative to no spread, and picks for each collection the spread with the
lowest mean relative score on the *other* collections (averaged over measures, then
studies, then collections); the shipped default (``relimpute.bias.model.GROUP_SD``) is the
one chosen on all.

    python examples/poolbias/choose_group_sd.py trec8_d10 trec8_d100 dl19_d10 dl21_d10
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent / "results"
LABEL = re.compile(r"^model:(?P<model>[^\[]+)\[group_sd=(?P<sd>[0-9.eE+-]+)\]$")
ALPHA = 0.05


def collection(stem: str) -> str:
    """``trec8_d100`` → ``trec8``."""
    return stem.split("_d")[0]


def interval_score(low, high, truth, alpha: float = ALPHA) -> np.ndarray:
    """Interval score of central ``1 − alpha`` intervals (lower is better)."""
    return (
        (high - low)
        + 2.0 / alpha * np.maximum(low - truth, 0.0)
        + 2.0 / alpha * np.maximum(truth - high, 0.0)
    )


def spread_table(stems: list[str], model: str = "fusion") -> pd.DataFrame:
    """Per study, measure and spread: coverage, mean width and interval score."""
    rows = []
    for stem in stems:
        estimates = pd.read_csv(HERE / f"{stem}_estimates.tsv", sep="\t")
        found = estimates["corrector"].str.extract(LABEL)
        estimates = estimates[found["model"] == model].assign(group_sd=found["sd"].astype(float))
        tol = 1e-9
        estimates = estimates.assign(
            covered=(estimates["ci_low"] - tol <= estimates["truth"])
            & (estimates["truth"] <= estimates["ci_high"] + tol),
            width=estimates["ci_high"] - estimates["ci_low"],
            score=interval_score(estimates["ci_low"], estimates["ci_high"], estimates["truth"]),
            abs_error=(estimates["estimate"] - estimates["truth"]).abs(),
        )
        summary = estimates.groupby(["measure", "group_sd"], sort=False).agg(
            coverage=("covered", "mean"),
            width=("width", "mean"),
            score=("score", "mean"),
            mae=("abs_error", "mean"),
        )
        rows.append(summary.reset_index().assign(study=stem, collection=collection(stem)))
    table = pd.concat(rows, ignore_index=True)
    base = table[table["group_sd"] == 0].set_index(["study", "measure"])["score"]
    table["relative_score"] = table["score"] / base.reindex(
        pd.MultiIndex.from_frame(table[["study", "measure"]])
    ).to_numpy()
    return table


def choose(table: pd.DataFrame, held_out: str | None) -> float:
    """The spread with the lowest relative interval score, averaged over measures, then
    studies, then collections, on the collections other than ``held_out``."""
    used = table if held_out is None else table[table["collection"] != held_out]
    per_study = used.groupby(["collection", "study", "group_sd"])["relative_score"].mean()
    per_collection = per_study.groupby(["collection", "group_sd"]).mean()
    return float(per_collection.groupby("group_sd").mean().idxmin())


def main(stems: list[str]) -> None:
    from relimpute.cli._format import FORMATTERS

    table = spread_table(stems)
    collections = list(dict.fromkeys(table["collection"]))
    chosen = {c: choose(table, c) for c in collections}
    chosen["all"] = choose(table, None)
    (HERE / "group_sd_choice.json").write_text(json.dumps(chosen, indent=2) + "\n")
    overview = (
        table.groupby(["study", "group_sd"], sort=False)[
            ["coverage", "width", "relative_score", "mae"]
        ]
        .mean()
        .reset_index()
    )
    held = pd.concat(
        [
            table[(table["collection"] == c) & (table["group_sd"] == chosen[c])]
            for c in collections
        ]
    )[["study", "measure", "group_sd", "coverage", "width", "relative_score", "mae"]]
    text = [
        "# Between-group spread of the model-based corrector, chosen leave-one-collection-out",
        "",
        f"`python examples/poolbias/choose_group_sd.py {' '.join(stems)}`",
        "",
        "Chosen (lowest mean interval score relative to no spread on the other collections): "
        + ", ".join(f"{c} {v:g}" for c, v in chosen.items() if c != "all")
        + f"; on all collections (shipped): {chosen['all']:g}.",
        "",
        "## Each collection at the spread chosen without it (95% intervals)",
        "",
        FORMATTERS["markdown"](held),
        "",
        "## Every spread (means over the six measures)",
        "",
        FORMATTERS["markdown"](overview),
    ]
    (HERE / "group_sd_choice.md").write_text("\n".join(text), encoding="utf-8")
    print("\n".join(text))


if __name__ == "__main__":
    main(sys.argv[1:])
