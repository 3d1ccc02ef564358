"""Coverage of the ``complete`` estimand where the truth exists: TREC-8, DL 2019, DL 2021.

Run from the repository root::

    python examples/estimand_coverage/run.py --depths 10 5 20
    python examples/estimand_coverage/run.py --collection dl19     # depths 1 3 5
    python examples/estimand_coverage/run.py --quick      # a few runs and topics, seconds
    python examples/estimand_coverage/run.py --set beyond_decay_sd=0.5   # a candidate setting

Every pooled TREC-8 run's top 100 is judged, so with the runs cut at rank 100 the full qrels
are complete judgments: MAP@100 under them is the number ``complete`` estimates (DL 2019: every
run's top 10 is judged; DL 2021: all but 31 of its pool's documents once the three runs with
the most unjudged are left out, those 31 counted nonrelevant in the truth). The qrels are
cut to the depth-k pool of the same runs, the default model is fitted on that (seeded), and
per run the 95% interval of MAP (and per pair of ΔMAP) is checked against the truth:
coverage, z = (truth − E)/sd and E[z²] (1 when the sd is right), P(A beats B)'s accuracy at
P ≥ 0.95 and the bookmaker W. Writes ``results/summary.csv`` and ``.md`` (one row per depth),
coverage and E[z²] of the pairs by their sd (``results/pairs_by_sd.csv``), per run the
coverage of its pairs (``results/by_run_k<k>.csv``, the first seed), the per-run and
per-pair tables (``results/runs_k<k>_seed<s>.csv``, ``pairs_...``: not committed) and ``z.png``
(the first seed); each collection but TREC-8 in ``results/<collection>/``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from relimpute import Campaign
from relimpute.calibration.metrics import bookmaker_w, orient
from relimpute.confidence import ConfidenceEngine
from relimpute.measures import evaluate
from relimpute._defaults import DEFAULT_MODEL
from relimpute.relevance import load_model
from relimpute.relevance.settings import ModelSettings, load_settings

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2] / "shared" / "data"
DATA = SHARED / "trec-8-adhoc"
TRUTH_DEPTH = 100  # the depth every pooled TREC-8 run is judged to
LEVEL = 0.95


class Collection(NamedTuple):
    """Where the truth exists: the runs cut at ``truth_depth``, whose pool is judged."""

    folder: str
    rel_threshold: int
    truth_depth: int
    depths: tuple[int, ...]
    left_out: tuple[str, ...] = ()  # runs whose top ``truth_depth`` holds unjudged documents


COLLECTIONS = {
    "trec8": Collection("trec-8-adhoc", 1, TRUTH_DEPTH, (10, 5, 20)),
    "dl19": Collection("trec-dl-2019-passage", 2, 10, (1, 3, 5)),  # one unjudged in the pool
    "dl21": Collection("trec-dl-2021-passage", 2, 10, (1, 3, 5),
                       ("p_tct1", "bl_bcai_p_trad", "p_tct0")),  # 53 of the pool's 84 unjudged
}  # fmt: skip


def load(data: Path, quick: bool, collection: Collection = COLLECTIONS["trec8"]
         ) -> tuple[Campaign, list[str]]:  # fmt: skip
    """The pooled runs cut at the collection's truth depth (quick: 8 runs, 10 topics)."""
    groups = pd.read_csv(data / "groups.tsv", sep="\t", dtype=str)
    groups = groups[(groups["pooled"] == "yes") & ~groups["run"].isin(collection.left_out)]
    pooled = groups["run"].tolist()
    if quick:  # one run from each of the first 8 pooled groups: small, still varied
        pooled = groups.drop_duplicates("group")["run"].head(8).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(
            data / "qrels.txt", [data / "runs" / f"{run}.gz" for run in pooled],
            rel_threshold=collection.rel_threshold,
        )  # fmt: skip
    if quick:
        campaign = campaign.subset(topics=list(campaign.query_ids[:10]))
    return campaign.truncated(collection.truth_depth, shrink=True), pooled


def model(overrides: dict | None = None):
    """The default model, with ``overrides`` of its settings (a candidate)."""
    if not overrides:
        return load_model()
    settings = load_settings(DEFAULT_MODEL)
    return ModelSettings(settings.model, {**settings.params, **overrides}).build()


def study(
    campaign: Campaign, k: int, *, truth_depth: int = TRUTH_DEPTH, seed: int = 0,
    n_draws: int = 4000, max_pairs: int | None = None, level: float = LEVEL,
    overrides: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-run and per-pair tables for one pool depth ``k``.

    The truth is MAP under the judgments of the depth-``truth_depth`` pool of every run of
    ``campaign`` (complete when the runs are cut at that depth and the pool was judged); the
    model sees only the depth-``k`` pool. ``max_pairs``: a seeded sample of that many pairs;
    ``overrides``: settings of the default model to change (:func:`model`).
    """
    full = campaign.pooled(truth_depth)
    truth = evaluate(full, ["AP"]).set_index("system")["value"]
    cut = campaign.pooled(k)
    estimate = model(overrides).fit_predict(cut, rng=seed)
    pairs = list(combinations(campaign.systems, 2))
    if max_pairs is not None and len(pairs) > max_pairs:
        keep = np.sort(np.random.default_rng(seed).choice(len(pairs), max_pairs, replace=False))
        pairs = [pairs[i] for i in keep]
    result = ConfidenceEngine().confidence(
        cut, estimate, pairs=pairs, measure="AP", n_draws=n_draws, rng=seed
    )
    scores = result.scores
    ci = scores.confidence_interval(level)
    runs = _checked(
        pd.DataFrame({"system": list(scores.systems)}),
        truth[list(scores.systems)].to_numpy(), scores.e_map, scores.sd_map, ci,
    )
    a, b = list(result.system_a), list(result.system_b)
    pair_ci = result.confidence_interval(level)
    pairs_frame = _checked(
        pd.DataFrame({"system_a": a, "system_b": b}),
        truth[a].to_numpy() - truth[b].to_numpy(), result.e_delta_map, result.sd_delta_map,
        pair_ci,
    )
    pairs_frame["p_a_better"] = result.p_a_better
    return runs, pairs_frame


def _checked(frame: pd.DataFrame, truth, mean, sd, ci) -> pd.DataFrame:
    """``frame`` with truth, E, sd, interval, covered and z columns."""
    frame["truth"] = np.asarray(truth, float)
    frame["e"] = np.asarray(mean, float)
    frame["sd"] = np.asarray(sd, float)
    frame["ci_low"], frame["ci_high"] = np.asarray(ci.low, float), np.asarray(ci.high, float)
    frame["covered"] = (frame["ci_low"] <= frame["truth"]) & (frame["truth"] <= frame["ci_high"])
    with np.errstate(divide="ignore", invalid="ignore"):
        frame["z"] = np.where(frame["sd"] > 0, (frame["truth"] - frame["e"]) / frame["sd"], np.nan)
    return frame


def summarize(runs: pd.DataFrame, pairs: pd.DataFrame, threshold: float = 0.95) -> dict:
    """One row: coverage and E[z²] of runs and pairs, mean error, accuracy at ≥ ``threshold``
    and W of P(A beats B) (pairs whose true ΔMAP is 0 have no winner and are left out)."""
    decided = pairs[pairs["truth"] != 0]
    confidence, correct = orient(decided["p_a_better"].to_numpy(), decided["truth"].to_numpy() > 0)
    sure = confidence >= threshold
    return {
        "runs": len(runs),
        "run_coverage": float(runs["covered"].mean()),
        "run_ez2": float(np.nanmean(runs["z"] ** 2)),
        "run_bias": float((runs["e"] - runs["truth"]).mean()),
        "run_sd": float(runs["sd"].mean()),
        "pairs": len(pairs),
        "pair_coverage": float(pairs["covered"].mean()),
        "pair_ez2": float(np.nanmean(pairs["z"] ** 2)),
        "pair_sd": float(pairs["sd"].mean()),
        "confident": int(sure.sum()),
        "accuracy_95": float(correct[sure].mean()) if sure.any() else float("nan"),
        "w": bookmaker_w(confidence, correct) if len(decided) else float("nan"),
    }


def by_sd(pairs: pd.DataFrame, bins: int = 5) -> pd.DataFrame:
    """Coverage and E[z²] of the pairs in ``bins`` equal-count bins of their sd: is the sd
    right for close pairs as well as for far ones?"""
    which = pd.qcut(pairs["sd"].rank(method="first"), bins, labels=False)
    return pairs.groupby(which).agg(
        sd_low=("sd", "min"), sd_high=("sd", "max"), pairs=("z", "size"),
        coverage=("covered", "mean"), ez2=("z", lambda z: float(np.nanmean(z**2))),
    ).reset_index(drop=True)  # fmt: skip


def by_run(runs: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The runs with the coverage of the pairs each is in (where the misses concentrate),
    fewest covered first."""
    long = pd.concat([pairs.rename(columns={"system_a": "system"}),
                      pairs.rename(columns={"system_b": "system"})])  # fmt: skip
    covered = long.groupby("system")["covered"].mean().rename("pair_coverage")
    table = runs.drop(columns="covered").join(covered, on="system")
    return table.sort_values(["pair_coverage", "system"]).reset_index(drop=True)


def figure(tables: dict[int, tuple[pd.DataFrame, pd.DataFrame]], path: Path) -> None:
    """Histograms of z for runs and pairs, one line per depth, the standard normal beside."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from relimpute._files import save_figure

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    grid = np.linspace(-6, 6, 241)
    bins = np.linspace(-6, 6, 49)
    for ax, which, title in ((axes[0], 0, "per run: MAP"), (axes[1], 1, "per pair: ΔMAP")):
        for k, frames in sorted(tables.items()):
            z = frames[which]["z"].dropna().clip(-6, 6)
            ax.hist(z, bins=bins, density=True, histtype="step", label=f"depth-{k} pool")
        ax.plot(grid, np.exp(-grid**2 / 2) / np.sqrt(2 * np.pi), "k--", lw=1, label="N(0, 1)")
        ax.set_title(title)
        ax.set_xlabel("z = (truth − E) / sd")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, colors=64, dpi=110)
    plt.close(fig)


def markdown(summary: pd.DataFrame) -> str:
    """The summary as a markdown table."""
    columns = list(summary.columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in summary.itertuples(index=False):
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def setting(text: str) -> tuple[str, float]:
    """``NAME=VALUE`` of ``--set``: a number."""
    name, _, value = text.partition("=")
    try:
        return name, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--set wants NAME=NUMBER, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collection", choices=sorted(COLLECTIONS), default="trec8")
    parser.add_argument("--data", type=Path, default=None,
                        help="the collection's folder (default: shared/data's)")
    parser.add_argument("--depths", type=int, nargs="+", default=None,
                        help="pool depths (default: the collection's)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2],
                        help="the model's fit and the Monte Carlo; the figure shows the first")
    parser.add_argument("--draws", type=int, default=4000, help="Monte Carlo draws")
    parser.add_argument("--max-pairs", type=int, default=None,
                        help="a seeded sample of this many pairs (default all)")
    parser.add_argument("--set", type=setting, action="append", default=[], dest="overrides",
                        metavar="NAME=VALUE", help="a setting of the default model (a candidate)")
    parser.add_argument("--quick", action="store_true", help="8 runs, 10 topics: a smoke test")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    collection = COLLECTIONS[args.collection]
    data = args.data or SHARED / collection.folder
    if not (data / "qrels.txt").is_file():
        print(f"{args.collection} data not found at {data}; nothing to do", file=sys.stderr)
        return 1
    campaign, _ = load(data, args.quick, collection)
    out = args.out if args.collection == "trec8" else args.out / args.collection
    out = out / "quick" if args.quick else out
    out.mkdir(parents=True, exist_ok=True)
    overrides = dict(args.overrides)
    rows, tables, sds = [], {}, []
    for k in args.depths or collection.depths:
        for seed in args.seeds:
            start = time.time()
            runs, pairs = study(
                campaign, k, truth_depth=collection.truth_depth, seed=seed, n_draws=args.draws,
                max_pairs=args.max_pairs, overrides=overrides,
            )  # fmt: skip
            stem = f"k{k}_seed{seed}"
            runs.to_csv(out / f"runs_{stem}.csv", index=False, float_format="%.5f")
            pairs.to_csv(out / f"pairs_{stem}.csv", index=False, float_format="%.5f")
            rows.append({"pool_depth": k, "seed": seed, **summarize(runs, pairs)})
            sds.append(by_sd(pairs).assign(pool_depth=k, seed=seed))
            if seed == args.seeds[0]:
                tables[k] = (runs, pairs)
                by_run(runs, pairs).to_csv(out / f"by_run_k{k}.csv", index=False,
                                           float_format="%.4f")  # fmt: skip
            print(f"depth {k}, seed {seed}: {time.time() - start:.0f}s", file=sys.stderr)
            summary = pd.DataFrame(rows)
            summary.to_csv(out / "summary.csv", index=False, float_format="%.4f")
            (out / "summary.md").write_text(markdown(summary))
            print(markdown(summary.tail(1)), flush=True)
    pd.concat(sds).to_csv(out / "pairs_by_sd.csv", index=False, float_format="%.4f")
    if not args.quick:
        figure(tables, HERE / "z.png" if out == HERE / "results" else out / "z.png")
    print(markdown(pd.DataFrame(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
