"""Choose the spread of the between-group term on the split into grades leave-one-collection-out.

Reads the studies run with ``--split-sds`` (``results/<stem>_estimates.tsv``) and, for the
graded measures (nDCG@10, and ERR@10 where the study has it), scores each spread by the
interval score of its 95% intervals relative to no spread (``choose_group_sd.py``: Gneiting
& Raftery 2007, §6.2). Each collection gets the spread with the lowest mean relative score
on the *other* collections; only graded collections can say anything (TREC-8's qrels are
binary: no split), so DL 2019's spread is DL 2021's choice and DL 2021's DL 2019's. The
shipped default (``relimpute.bias.model.SPLIT_SD``) is the one chosen on both.

    python examples/poolbias/choose_split_sd.py dl19_d10_splitgrid dl21_d10_splitgrid
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd

from choose_group_sd import HERE, collection, interval_score

GRADED = ("nDCG@10", "ERR@10")


def split_table(stems: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per study, graded measure and spread: coverage, width, MAE, interval score (and
    relative to no spread); and the per-run rows behind them."""
    rows, runs = [], []
    for stem in stems:
        estimates = pd.read_csv(HERE / f"{stem}_estimates.tsv", sep="\t")
        estimates = estimates[estimates["measure"].isin(GRADED) & (estimates["repeat"] == 0)]
        spread = estimates["corrector"].str.extract(r"\[split_sd=([0-9.eE+-]+)\]")[0].astype(float)
        estimates = estimates.assign(
            split_sd=spread,
            covered=(estimates["ci_low"] - 1e-9 <= estimates["truth"])
            & (estimates["truth"] <= estimates["ci_high"] + 1e-9),
            width=estimates["ci_high"] - estimates["ci_low"],
            score=interval_score(estimates["ci_low"], estimates["ci_high"], estimates["truth"]),
            abs_error=(estimates["estimate"] - estimates["truth"]).abs(),
            study=stem,
            collection=collection(stem),
        )
        runs.append(estimates)
        summary = estimates.groupby(["measure", "split_sd"], sort=False).agg(
            coverage=("covered", "mean"), width=("width", "mean"), score=("score", "mean"),
            mae=("abs_error", "mean"), n_runs=("run", "size"),
        )  # fmt: skip
        rows.append(summary.reset_index().assign(study=stem, collection=collection(stem)))
    table = pd.concat(rows, ignore_index=True)
    base = table[table["split_sd"] == 0].set_index(["study", "measure"])["score"]
    key = pd.MultiIndex.from_frame(table[["study", "measure"]])
    table["relative_score"] = table["score"] / base.reindex(key).to_numpy()
    return table, pd.concat(runs, ignore_index=True)


def choose(table: pd.DataFrame, held_out: str | None) -> float:
    """The spread with the lowest relative interval score, averaged over the graded measures,
    then collections, on the collections other than ``held_out``."""
    used = table if held_out is None else table[table["collection"] != held_out]
    per_collection = used.groupby(["collection", "split_sd"])["relative_score"].mean()
    return float(per_collection.groupby("split_sd").mean().idxmin())


def main(stems: list[str]) -> None:
    from relimpute.cli._format import FORMATTERS

    table, runs = split_table(stems)
    collections = list(dict.fromkeys(table["collection"]))
    chosen = {c: choose(table, c) for c in collections}
    chosen["all"] = choose(table, None)
    (HERE / "split_sd_choice.json").write_text(json.dumps(chosen, indent=2) + "\n")
    held = pd.concat(
        [table[(table["collection"] == c) & (table["split_sd"].isin([0.0, chosen[c]]))] for c in collections]
    )[["study", "measure", "split_sd", "coverage", "width", "mae", "relative_score", "n_runs"]]
    # the runs each collection's chosen spread misses, with their error and z (sd from the width)
    at = pd.concat([runs[(runs["collection"] == c) & (runs["split_sd"] == chosen[c])] for c in collections])
    missed = at[~at["covered"]].assign(
        error=lambda f: f["estimate"] - f["truth"],
        z=lambda f: (f["estimate"] - f["truth"]) / (f["width"] / (2 * 1.959964)),
    )[["study", "measure", "group", "run", "error", "z", "width"]]
    sections = {
        "Each collection without the term and at the spread chosen without it (95% intervals)": held,
        "Runs missed at the chosen spread": missed,
        "Every spread": table.drop(columns=["collection"]),
    }
    summary = ", ".join(f"{c} {v:g}" for c, v in chosen.items() if c != "all")
    text = "\n".join(
        [
            "# Between-group spread of the split into grades, chosen leave-one-collection-out\n",
            f"`python examples/poolbias/choose_split_sd.py {' '.join(stems)}`\n",
            "Chosen (lowest mean interval score of the graded measures relative to no spread, on "
            f"the other collection): {summary}; on both (shipped): {chosen['all']:g}.",
        ]
        + [f"\n## {title}\n\n" + (FORMATTERS["markdown"](frame) if len(frame) else "(none)")
           for title, frame in sections.items()]
    )  # fmt: skip
    (HERE / "split_sd_choice.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    assert np.isfinite(list(chosen.values())).all()


if __name__ == "__main__":
    main(sys.argv[1:])
