"""Are a relevance model's estimates believable? Two checks on real TREC collections.

Run from the repository root::

    python examples/believability/run.py [--models fusion,rtc,uniform]
        [--collections dl19,dl21,trec8] [--out examples/believability/results]

Protocol 1 (documents, extrapolation below the pool): keep only the judgments
of the depth-k pool of the pooled runs (k = 5, 10, 20), fit the model, and
score its p on the held-out judged documents (ECE over 10 equal-width bins,
log loss against the best constant). On TREC-8, whose qrels are exactly the
depth-100 pool, also compare the expected number of relevant documents per
topic with the true one.

Protocol 2 (systems): fit on the official qrels and ask whether E[MAP] ranks
the pooled runs as MAP does, whether P(A beats B) is ever confidently wrong
on a clear difference, and whether E[MAP] matches MAP for well-judged runs.

Writes ``<collection>_documents.csv.gz`` (per model, k and topic),
``<collection>_systems.csv`` (per model and run), ``summary.md`` and
``calibration.png`` to ``--out``. The data is read from ``../shared/data``
(research use only, never copied here).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
import warnings
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy.stats import kendalltau
from tqdm import tqdm

from relimpute import Campaign
from relimpute._files import save_figure
from relimpute.confidence import ConfidenceEngine
from relimpute.measures import evaluate
from relimpute.relevance import load_model
from relimpute.relevance.settings import settings_in
from relimpute.relevance.quality import calibration_curve, log_loss

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / "shared" / "data"
#: per collection, fusion's settings chosen without it (examples/calibration/held_out.py)
HELD_OUT = HERE.parent / "calibration" / "held_out"
DEPTHS = (5, 10, 20)
PLOTTED = ("dl19", "trec8")  # collections in the reliability diagram (depth-5 pool)


class Collection(NamedTuple):
    """Where a collection lives and how to read it."""

    folder: str
    rel_threshold: int
    qrels_are_pool: bool  # official qrels = a depth pool of the pooled runs (ratio check)
    official_pool: int  # depth to which the official judging pooled every pooled run


COLLECTIONS = {
    "dl19": Collection("trec-dl-2019-passage", 2, False, 10),
    "dl21": Collection("trec-dl-2021-passage", 2, False, 10),
    "trec8": Collection("trec-8-adhoc", 1, True, 100),
}


def load(name: str) -> tuple[Campaign, list[str]]:
    """The official campaign of collection ``name`` and its pooled runs."""
    folder = DATA / COLLECTIONS[name].folder
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(
            folder / "qrels.txt", folder / "runs", rel_threshold=COLLECTIONS[name].rel_threshold
        )
    groups = pd.read_csv(folder / "groups.tsv", sep="\t", dtype=str)
    return campaign, groups.loc[groups["pooled"] == "yes", "run"].tolist()


def calibration(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """Size, base rate, mean p, ECE (10 equal-width bins), log loss and best-constant log loss."""
    if not len(y):
        return dict(n=0, base_rate=np.nan, mean_p=np.nan, ece=np.nan, ll=np.nan, ll_const=np.nan)
    curve = calibration_curve(y, p, bins=10)
    gap = (curve["observed"] - curve["mean_predicted"]).abs()
    base = float(y.mean())
    return dict(
        n=len(y),
        base_rate=base,
        mean_p=float(p.mean()),
        ece=float((curve["n"] * gap).sum() / len(y)),
        ll=log_loss(y, p),
        ll_const=log_loss(y, np.full(len(y), base)),
    )


def settings_for(name: str, model: str) -> str:
    """The settings a model is scored with on collection ``name``: the held-out file
    (chosen without ``name``) where there is one, else the shipped settings."""
    return settings_in(HELD_OUT / name, model)


def documents(
    campaign: Campaign, pooled: list[str], model: str, k: int, official_pool: int
) -> tuple[pd.DataFrame, dict, tuple[np.ndarray, np.ndarray]]:
    """Protocol 1 for one model and pool depth: per-topic table, summary row, held-out (y, p).

    Besides all held-out judged documents, the row scores two subsets: those some
    run retrieves (``ret``) or none does (``none``), and those the official pool
    of the pooled runs holds (``pool``: chosen by rank, not by active learning).
    """
    train = campaign.pooled(k, pooled)
    official = campaign.pooled(official_pool, pooled)
    estimate = load_model(model).fit_predict(train, rng=0)
    topics, ys, ps, retrieved, in_pool = [], [], [], [], []
    for topic, kept, pool, rel, p in zip(
        campaign.topics, train.topics, official.topics, campaign.relevant(), estimate.p
    ):
        held = topic.judged & ~kept.judged
        ys.append(rel[held])
        ps.append(p[held])
        retrieved.append(topic.retrieved()[held])
        in_pool.append(pool.judged[held])
        topics.append(
            dict(
                query_id=topic.query_id,
                pool_judged=int(kept.judged.sum()),
                heldout=int(held.sum()),
                true_relevant=int(rel.sum()),
                pool_relevant=int(rel[kept.judged].sum()),
                heldout_relevant=int(rel[held].sum()),
                heldout_p=float(p[held].sum()),
                unjudged_p=float(p[~topic.judged].sum()),
            )
        )
    frame = pd.DataFrame(topics)
    frame["expected_relevant"] = frame["pool_relevant"] + frame["heldout_p"]
    frame["ratio"] = frame["expected_relevant"] / frame["true_relevant"]
    y, p, ret, inside = map(np.concatenate, (ys, ps, retrieved, in_pool))
    row = calibration(y, p)
    for tag, mask in (("ret", ret), ("none", ~ret), ("pool", inside)):
        part = calibration(y[mask], p[mask])
        row |= {f"n_{tag}": part["n"], f"ece_{tag}": part["ece"], f"ll_{tag}": part["ll"],
                f"llc_{tag}": part["ll_const"]}
    row |= dict(unjudged_p=frame["unjudged_p"].mean(), R=frame["true_relevant"].mean())
    return frame, row, (y, p)


def ratio_summary(frame: pd.DataFrame) -> dict[str, float]:
    """Median, 10th/90th percentiles and share in [0.5, 2] of the per-topic E[R]/R, and
    the expected over the true relevant documents below the pool, summed over topics."""
    ratio = frame["ratio"]
    return dict(
        below_ratio=frame["heldout_p"].sum() / max(frame["heldout_relevant"].sum(), 1),
        ratio_median=ratio.median(),
        ratio_p10=ratio.quantile(0.1),
        ratio_p90=ratio.quantile(0.9),
        ratio_in_half_2=ratio.between(0.5, 2).mean(),
    )


def judged_at_100(campaign: Campaign) -> np.ndarray:
    """Per system, the share of judged documents among its first min(100, depth) over all topics."""
    hits = np.zeros(campaign.n_systems)
    total = np.zeros(campaign.n_systems)
    for topic in campaign.topics:
        top = topic.ranking[:, :100]
        valid = top >= 0
        hits += (topic.judged[top] & valid).sum(axis=1)
        total += valid.sum(axis=1)
    return hits / np.maximum(total, 1)


def systems(campaign: Campaign, pooled: list[str], model: str) -> tuple[pd.DataFrame, dict]:
    """Protocol 2 for one model on the official qrels: per-run table and summary row."""
    estimate = load_model(model).fit_predict(campaign, rng=0)
    extra = unjudged_mass(campaign, estimate.p)
    comparison = ConfidenceEngine().confidence(campaign, estimate, systems=pooled, method="normal")
    official = evaluate(campaign, ["AP"], missing="zero").set_index("system")["value"]
    judged = pd.Series(judged_at_100(campaign), index=campaign.systems)
    runs = pd.DataFrame({"system": comparison.scores.systems, "e_map": comparison.scores.e_map})
    runs["map"] = official[runs["system"]].to_numpy()
    runs["ratio"] = runs["e_map"] / runs["map"]
    runs["judged_at_100"] = judged[runs["system"]].to_numpy()

    pairs = comparison.to_frame()
    dmap = official[pairs["system_a"]].to_numpy() - official[pairs["system_b"]].to_numpy()
    p_a = pairs["p_a_better"].to_numpy()
    clear = np.abs(dmap) > 0.05
    wrong = clear & (((dmap > 0) & (p_a <= 0.1)) | ((dmap < 0) & (p_a >= 0.9)))
    well = runs.loc[runs["judged_at_100"] >= 0.9, "ratio"]
    row = dict(
        runs=len(runs),
        tau=kendalltau(runs["e_map"], runs["map"]).statistic,
        clear_pairs=int(clear.sum()),
        confident_wrong=int(wrong.sum()),
        well_judged=len(well),
        emap_ratio_min=well.min(),
        emap_ratio_median=well.median(),
        emap_ratio_max=well.max(),
        within_10pct=int((well - 1).abs().le(0.1).sum()),
    ) | extra
    return runs, row


def unjudged_mass(campaign: Campaign, p: list[np.ndarray]) -> dict[str, float]:
    """E[R] over the judged R (all topics), and the expected relevant among the unjudged
    documents as a share of R: those some run ranks in its top 100 and those only below."""
    judged_relevant = sum(int(rel.sum()) for rel in campaign.relevant())
    top, below = 0.0, 0.0
    for topic, prob in zip(campaign.topics, p):
        ranked_top = np.zeros(topic.n_docs, dtype=bool)
        head = topic.ranking[:, :100]
        ranked_top[head[head >= 0]] = True
        top += float(prob[~topic.judged & ranked_top].sum())
        below += float(prob[~topic.judged & ~ranked_top].sum())
    r = max(judged_relevant, 1)
    return dict(er_ratio=1 + (top + below) / r, extra_top100=top / r, extra_below100=below / r)


def deep_band(campaign: Campaign, pooled: list[str], model: str, official_pool: int) -> dict:
    """Fitted on the pool half as deep as the official one, the expected against the true
    relevant documents between the two depths: the deepest extrapolation the qrels can check."""
    k = official_pool // 2
    frame, row, _ = documents(campaign, pooled, model, k, official_pool)
    band = frame["heldout_relevant"]
    return dict(
        k=k,
        band_judged=int(frame["heldout"].sum()),
        band_relevant=int(band.sum()),
        band_expected=float(frame["heldout_p"].sum()),
        band_ratio=float(frame["heldout_p"].sum() / max(band.sum(), 1)),
        band_ratio_median=float((frame["heldout_p"] / band.where(band > 0)).median()),
        band_ece=row["ece"],
    )


def verdict(ok: bool) -> str:
    """The verdict on one target: PASS or FAIL."""
    return "PASS" if ok else "FAIL"


def document_targets(row: dict) -> dict[str, str]:
    """PASS/FAIL of the issue's protocol-1 targets, "n/a" where the issue sets none."""
    ratio = "n/a"
    if "ratio_median" in row:
        ratio = verdict(0.8 <= row["ratio_median"] <= 1.25 and row["ratio_in_half_2"] >= 0.8)
    calib = "n/a"
    if row["collection"] in ("dl19", "trec8") and row["k"] == 5:
        calib = verdict(row["ece"] <= 0.03 and row["ll"] < row["ll_const"])
    return dict(ratio_target=ratio, calib_target=calib)


def system_targets(row: dict) -> dict[str, str]:
    """PASS/FAIL of the issue's protocol-2 targets."""
    emap = verdict(row["within_10pct"] == row["well_judged"]) if row["well_judged"] else "n/a"
    return dict(
        tau_target=verdict(row["tau"] >= 0.9),
        wrong_target=verdict(row["confident_wrong"] == 0),
        emap_target=emap,
    )


def markdown(frame: pd.DataFrame) -> str:
    """A pipe table, floats to 3 decimals, NaN as a dash."""
    def cell(v) -> str:
        if isinstance(v, float):
            return "–" if np.isnan(v) else f"{v:.3f}"
        return str(v)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += [
        "| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)
    ]
    return "\n".join(lines)


def plot_calibration(curves: dict[str, dict[str, tuple]], path: Path) -> None:
    """Reliability diagram: one panel per collection, one line per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 4.6), squeeze=False)
    for ax, (name, by_model) in zip(axes[0], curves.items()):
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--", label="perfect")
        for model, (y, p) in by_model.items():
            curve = calibration_curve(y, p, bins=10)
            ax.plot(curve["mean_predicted"], curve["observed"], marker="o", label=model)
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="mean p in bin", ylabel="observed share relevant",
               title=f"{name}: held-out judgments, depth-5 pool")
        ax.legend(loc="upper left")
    fig.tight_layout()
    save_figure(fig, path, dpi=100, colors=256)
    plt.close(fig)


P1_COLUMNS = [
    "collection", "model", "k", "n", "base_rate", "mean_p", "ece", "ll", "ll_const",
    "n_ret", "ece_ret", "ll_ret", "llc_ret", "n_none", "ece_none", "ll_none", "llc_none",
    "n_pool", "ece_pool", "ll_pool", "llc_pool", "unjudged_p", "R", "below_ratio", "ratio_median", "ratio_p10", "ratio_p90", "ratio_in_half_2",
    "ratio_target", "calib_target",
]
P2_COLUMNS = [
    "collection", "model", "runs", "tau", "clear_pairs", "confident_wrong", "well_judged",
    "emap_ratio_min", "emap_ratio_median", "emap_ratio_max", "within_10pct",
    "er_ratio", "extra_top100", "extra_below100",
    "tau_target", "wrong_target", "emap_target",
]
BAND_COLUMNS = [
    "collection", "model", "k", "band_judged", "band_relevant", "band_expected", "band_ratio",
    "band_ratio_median", "band_ece",
]
NOTES = """\
Settings: on each collection, fusion runs with the settings chosen without that collection
(examples/calibration/held_out/<collection>/fusion.json: weight prior fitted on the other two,
run-effect spread, decay below the pool and weight spread chosen on the other two); rtc and
uniform with their shipped settings (models/). Every fusion number below is a held-out number.

Protocol 1 (documents): model fitted on the depth-k pool of the pooled runs, scored on the
held-out judged documents (officially judged, not in the pool). ece = expected calibration
error (10 equal-width bins), ll = log loss (nats), ll_const = log loss of the held-out base
rate; _ret / _none = held-out documents retrieved by at least one run / by none, _pool = those
in the official pool of the pooled runs (DL: depth 10, TREC-8: depth 100), i.e. judged because
of their rank rather than picked by active learning (llc = best constant of that subset). unjudged_p = mean over topics of the sum of p over documents not in
the official qrels; R = mean true relevant per topic. ratio = (pool relevant + sum of p over
held-out) / true R per topic, TREC-8 only (its qrels are the depth-100 pool); below_ratio = sum
of p over the held-out documents / the relevant among them, over all topics (the pool's own
relevant documents left out: the extrapolation below the pool alone). Targets:
ratio median in [0.8, 1.25] and >= 80% of topics in [0.5, 2]; ECE <= 0.03 and ll < ll_const
(set by the issue for DL 2019 and TREC-8 at k = 5 only).

Protocol 2 (systems): model fitted on the official qrels; pooled runs only. tau = Kendall tau
of E[MAP] vs MAP; clear_pairs = pairs with |official dMAP| > 0.05, confident_wrong = those
with P(a better) >= 0.9 for the wrong sign; well_judged = runs with >= 90% of their top-100
judged, emap_ratio = E[MAP]/MAP over them, within_10pct = how many within +-10%. Targets:
tau >= 0.9, no confident-wrong pair, every well-judged run within +-10%. er_ratio = E[R] / judged R
over all topics; extra_top100 / extra_below100 = expected relevant among the unjudged documents
that some run ranks in its top 100 / that every run ranks below 100 (or no run retrieves), as a
share of the judged R: E[MAP] < MAP where these are large.

Deepest band (TREC-8): fitted on the depth-50 pool of the pooled runs, the expected (sum of p)
against the true relevant documents among the held-out judgments, i.e. the documents the
pooled runs rank 51-100: the one step below a pool that these qrels can check, the step the
official-qrels fit takes below depth 100 (band_ratio over all topics, band_ratio_median per topic).
"""


def run_collection(
    name: str, models: list[str], out: Path, curves: dict, bar: tqdm
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Both protocols on one collection: write its CSVs, return its summary rows
    (documents, systems, and the deepest band where the qrels are a pool).

    The held-out (y, p) of the depth-5 pool go to ``curves[name][model]`` for
    the collections of the reliability diagram.
    """
    bar.set_description(f"loading {name}")
    campaign, pooled = load(name)
    p1_rows, p2_rows, doc_frames, run_frames = [], [], [], []
    for k in DEPTHS:
        for model in models:
            bar.set_description(f"{name} {model} k={k}")
            frame, row, heldout = documents(
                campaign, pooled, settings_for(name, model), k, COLLECTIONS[name].official_pool
            )
            if k == 5 and name in PLOTTED:
                curves.setdefault(name, {})[model] = heldout
            row = dict(collection=name, model=model, k=k) | row
            if COLLECTIONS[name].qrels_are_pool:
                row |= ratio_summary(frame)
            p1_rows.append(row | document_targets(row))
            doc_frames.append(frame.assign(model=model, k=k))
            bar.update()
    band_rows = []
    if COLLECTIONS[name].qrels_are_pool:
        for model in models:
            bar.set_description(f"{name} {model} deepest band")
            band = deep_band(campaign, pooled, settings_for(name, model),
                             COLLECTIONS[name].official_pool)
            band_rows.append(dict(collection=name, model=model) | band)
            bar.update()
    for model in models:
        bar.set_description(f"{name} {model} official qrels")
        runs, row = systems(campaign, pooled, settings_for(name, model))
        row = dict(collection=name, model=model) | row
        p2_rows.append(row | system_targets(row))
        run_frames.append(runs.assign(model=model))
        bar.update()

    docs = pd.concat(doc_frames)
    lead = ["model", "k", "query_id"]
    docs[lead + [c for c in docs.columns if c not in lead]].to_csv(
        out / f"{name}_documents.csv.gz", index=False, compression={"method": "gzip", "mtime": 0}
    )
    runs = pd.concat(run_frames)
    runs[["model"] + [c for c in runs.columns if c != "model"]].to_csv(
        out / f"{name}_systems.csv", index=False
    )
    return (
        pd.DataFrame(p1_rows, columns=P1_COLUMNS),
        pd.DataFrame(p2_rows, columns=P2_COLUMNS),
        pd.DataFrame(band_rows, columns=BAND_COLUMNS),
    )


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run both protocols on every collection, write the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models", default="fusion,rtc,uniform", help="comma-separated model names"
    )
    parser.add_argument("--collections", default="dl19,dl21,trec8",
                        help=f"comma-separated, of {','.join(COLLECTIONS)}")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="output folder")
    args = parser.parse_args(argv)
    models = args.models.split(",")
    names = args.collections.split(",")
    unknown = set(names) - set(COLLECTIONS)
    if unknown:
        parser.error(f"unknown collection(s) {sorted(unknown)}; have {list(COLLECTIONS)}")
    if not DATA.is_dir():
        print(f"data not found at {DATA}; nothing to do", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    command = shlex.join(["python", "examples/believability/run.py",
                          *(sys.argv[1:] if argv is None else argv)])
    started = time.perf_counter()

    p1_parts, p2_parts, band_parts, curves = [], [], [], {}
    cells = sum(len(DEPTHS) + 1 + COLLECTIONS[n].qrels_are_pool for n in names) * len(models)
    with tqdm(total=cells, unit="cell") as bar:
        for name in names:
            p1, p2, band = run_collection(name, models, args.out, curves, bar)
            tqdm.write(f"\n{name}, protocol 1 (documents)\n{markdown(p1)}")
            tqdm.write(f"\n{name}, protocol 2 (systems)\n{markdown(p2)}\n")
            p1_parts.append(p1)
            p2_parts.append(p2)
            band_parts.append(band)
    if curves:
        plot_calibration(curves, args.out / "calibration.png")

    elapsed = time.perf_counter() - started
    report = [
        "# Believability of relevance models",
        "",
        f"Command: `{command}`  ",
        f"Date: {datetime.now().isoformat(timespec='seconds')} (run time {elapsed:.0f} s)",
        "",
        NOTES,
        "## Protocol 1: documents (depth-k pool, held-out judgments)",
        "",
        markdown(pd.concat(p1_parts, ignore_index=True)),
        "",
        "## Protocol 2: systems (official qrels)",
        "",
        markdown(pd.concat(p2_parts, ignore_index=True)),
        "",
        "## Deepest band: from half the official pool depth to the official depth",
        "",
        markdown(pd.concat(band_parts, ignore_index=True)),
        "",
    ]
    (args.out / "summary.md").write_text("\n".join(report), encoding="utf-8")
    print(f"wrote {args.out} in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
