"""Split-topic validation of the combined topic + judgment interval for ΔMAP.

Run from the repository root (about 25 minutes per command on 2 cores):

    python examples/precision/split_topics.py --splits 100 trec8 dl19
    python examples/precision/split_topics.py --split corpus --splits 50 trec8 dl19

``--split corpus`` halves the documents instead (MD5 of a salted docno, as Cormack &
Lynam 2006 split the corpus): both halves then share every topic, and half B differs
from half A by its documents only.

Each split draws 10 pooled runs, one per group (Carterette 2007 §4.3), cuts
them at rank 100, and halves the topics at random. On half A only a shallow
pool is judged (the depth-k pool of all pooled runs: k = 10 on TREC-8, 5 on
DL 2019), the default relevance model is fitted to it (with the settings chosen
without the collection, ``examples/calibration/held_out/``) and to the rankings of
all the pooled runs (``--fit-on chosen``: only the 10 compared; half B's official
R counts what every pooled run found, so a model shown 10 runs cannot expect a
third of it), and for every pair of the 10 runs three 95% intervals are computed:

- ``judgments``: the unjudged documents alone, topics fixed (what
  ``relimpute compare`` says), E ± 1.96 sd;
- ``topics``: topic sampling alone, E ± 1.96 sd_topics;
- ``combined``: ``relimpute compare --topic-bootstrap`` (percentile interval of a
  topic bootstrap with a relevance draw in every resample, its topic spread
  widened to the t distribution's);
- ``complete``: the same interval from half A's official judgments instead of
  its shallow pool (unjudged = nonrelevant, as trec_eval): the reference any
  judgment model can at best reach, since it carries the same topic sampling.

Each is checked against half B, which it never saw, in two ways: its official
ΔMAP (trec_eval, depth 100), and E[ΔMAP] from the same model fitted on half B's
official qrels (the quantity the model estimates: it also expects relevant
documents below the pool, so its MAP runs lower than trec_eval's). An interval
for the population mean catches the other half's mean less often than 95%,
because the other half has its own topic sampling (Cormack & Lynam 2006's
83.5% when all the error is sampling); the ``predicted`` column is that rate
under the interval's own variances: half B's mean varies around the population
with the spread of the per-topic values, relevance noise included, sd² − sd_judgments²
(see relimpute.confidence.topic_bootstrap), so the rate is
2Φ(1.96·sd / √(2·sd² − sd_judgments²)) − 1.

Half A's own official ΔMAP checks the judgment-only part on its own: the model's
error against it, in units of ``sd_judgments``, should have E[z²] = 1
(:func:`judgment_error`), and with the measured E[z²] in place of 1 the prediction
for half B should match what the combined interval covers.

Writes ``results/split_topics.md`` (coverage and width per collection, interval
and reference) and ``results/split_topics_pairs.tsv.gz`` (every pair of every split);
``split_corpus_dmap.*`` for ``--split corpus``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from tqdm import tqdm

from relimpute.cli._format import FORMATTERS
from relimpute.confidence import ConfidenceEngine
from relimpute.data import Campaign
from relimpute.measures import evaluate
from relimpute.precision.split import split_halves
from relimpute.relevance import load_model
from relimpute.relevance.settings import settings_in

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / "shared" / "data"
HELD_OUT = HERE.parent / "calibration" / "held_out"
COLLECTIONS = {  # name: (folder, rel threshold, judged pool depth on half A)
    "trec8": ("trec-8-adhoc", 1, 10),
    "dl19": ("trec-dl-2019-passage", 2, 5),
}
DEPTH, N_RUNS, LEVEL, N_DRAWS = 100, 10, 0.95, 2000
Z = float(stats.norm.ppf(0.5 + LEVEL / 2))


def one_split(
    official: Campaign,
    pooled: list[str],
    groups: dict,
    model: str,
    k: int,
    split: str,
    gen,
    fit_on: str = "pooled",
):
    """Intervals on half A against the truths of half B for every pair of 10 runs.

    ``fit_on``: the runs whose rankings the model sees, all the pooled runs (what the
    researcher who built the pool has) or only the 10 compared.
    """
    by_group: dict[str, list[str]] = {}
    for run in pooled:
        by_group.setdefault(groups[run], []).append(run)
    chosen = sorted(gen.choice(runs) for runs in by_group.values() if runs)
    chosen = sorted(gen.choice(chosen, size=min(N_RUNS, len(chosen)), replace=False))
    if split == "topics":
        topics = np.array(official.query_ids)
        half_a = set(gen.choice(topics, size=len(topics) // 2, replace=False))
        source_a = official.subset(topics=sorted(half_a))
        source_b = official.subset(topics=[q for q in topics if q not in half_a])
    else:  # the documents, by MD5 of a salted docno (Cormack & Lynam 2006)
        source_a, source_b = split_halves(official, salt=str(int(gen.integers(2**31 - 1))))

    seen = pooled if fit_on == "pooled" else chosen
    shallow = source_a.pooled(k, pooled)
    camp_a = shallow.subset(seen).truncated(DEPTH)
    camp_b = source_b.subset(seen).truncated(DEPTH)
    seed = int(gen.integers(2**31 - 1))
    boot = ConfidenceEngine().confidence(
        camp_a,
        load_model(model).fit_predict(camp_a, rng=seed),
        systems=chosen,
        n_draws=N_DRAWS,
        rng=seed,
        topics=True,
    )
    model_b = ConfidenceEngine().confidence(
        camp_b,
        load_model(model).fit_predict(camp_b, rng=seed),
        systems=chosen,
        n_draws=N_DRAWS,
        rng=seed,
        method="monte carlo",
    )
    trec = evaluate(camp_b, ["AP"], missing="zero").set_index("system")["value"]
    camp_a_official = source_a.subset(chosen).truncated(DEPTH)
    complete = ConfidenceEngine().confidence(
        camp_a_official,
        load_model("nonrelevant").fit_predict(camp_a_official),
        n_draws=N_DRAWS,
        rng=seed,
        topics=True,
    )
    complete_ci = complete.comparison.confidence_interval(LEVEL)
    own = evaluate(camp_a_official, ["AP"], missing="zero").set_index("system")["value"]
    pairs_a = boot.to_frame()["system_a"].tolist()
    assert complete.to_frame()["system_a"].tolist() == pairs_a == model_b.to_frame()["system_a"].tolist()

    frame = boot.to_frame(LEVEL)
    centre, sd = frame["e_delta_map"].to_numpy(), frame["sd_delta_map"].to_numpy()
    judged = frame["sd_judgments"].to_numpy()
    out = pd.DataFrame(
        {
            "system_a": frame["system_a"],
            "system_b": frame["system_b"],
            "e_delta_map": centre,
            "official_b": trec[frame["system_a"]].to_numpy() - trec[frame["system_b"]].to_numpy(),
            "official_a": own[frame["system_a"]].to_numpy() - own[frame["system_b"]].to_numpy(),
            "sd_judgments": judged,
            "sd_combined": sd,
            "model_b": model_b.e_delta_map,
            "predicted": 2 * stats.norm.cdf(Z * sd / np.sqrt(2 * sd**2 - judged**2)) - 1,
        }
    )
    intervals = {
        "judgments": (centre - Z * frame["sd_judgments"], centre + Z * frame["sd_judgments"]),
        "topics": (centre - Z * frame["sd_topics"], centre + Z * frame["sd_topics"]),
        "combined": (frame["ci_low"], frame["ci_high"]),
        "complete": (complete_ci.low, complete_ci.high),
    }
    for name, (low, high) in intervals.items():
        out[f"{name}_width"] = np.asarray(high) - np.asarray(low)
        for truth in ("official_b", "model_b"):
            inside = (out[truth] >= np.asarray(low)) & (out[truth] <= np.asarray(high))
            out[f"{name}_covers_{truth}"] = inside
    return out


def summarise(pairs: pd.DataFrame) -> pd.DataFrame:
    """Coverage of each interval against each truth, mean width and the predicted rate."""
    rows = []
    for (collection, k), group in pairs.groupby(["collection", "k"], sort=False):
        for name in ("judgments", "topics", "combined", "complete"):
            rows.append(
                {
                    "collection": collection,
                    "judged pool": f"depth {k}",
                    "interval": name,
                    "covers official dMAP of half B": group[f"{name}_covers_official_b"].mean(),
                    "covers model's E[dMAP] of half B": group[f"{name}_covers_model_b"].mean(),
                    "mean width": group[f"{name}_width"].mean(),
                    "predicted (combined)": group["predicted"].mean() if name == "combined" else np.nan,
                    "pairs": len(group),
                    "splits": group["split"].nunique(),
                }
            )
    return pd.DataFrame(rows)


def coverage_gaps(pairs: pd.DataFrame, n_boot: int = 4000, seed: int = 0) -> pd.DataFrame:
    """The combined interval's coverage of half B's official ΔMAP minus its prediction,
    and minus the coverage of the same interval from complete judgments, each with a 95%
    percentile interval from a bootstrap over splits: the pairs of one split share its
    topics and model, so the splits are the independent units."""
    rng = np.random.default_rng(seed)
    rows = []
    for (collection, k), group in pairs.groupby(["collection", "k"], sort=False):
        per_split = group.groupby("split")[
            ["combined_covers_official_b", "predicted", "complete_covers_official_b"]
        ].mean()
        combined = per_split["combined_covers_official_b"].to_numpy()
        picks = rng.integers(0, len(per_split), size=(n_boot, len(per_split)))
        for reference, column in (("predicted", "predicted"), ("complete judgments", "complete_covers_official_b")):
            gap = combined - per_split[column].to_numpy()
            low, high = np.percentile(gap[picks].mean(axis=1), [2.5, 97.5])
            rows.append(
                {
                    "collection": collection,
                    "judged pool": f"depth {k}",
                    "combined minus": reference,
                    "gap": gap.mean(),
                    "95% interval (bootstrap over splits)": f"({low:+.3f}, {high:+.3f})",
                }
            )
    return pd.DataFrame(rows)


def judgment_error(pairs: pd.DataFrame, split: str) -> pd.DataFrame:
    """How well the judgment-only sd describes the model's error on half A's own topics.

    ``z = (E[ΔMAP] − ΔMAP_A) / sd_judgments`` against half A's official ΔMAP; E[z²] = 1 when
    the unjudged documents' uncertainty is stated right. For a topic split, the combined
    interval's prediction redone with the judgment variance scaled by the measured E[z²]:
    half B's error is then ``2·sd² − sd_j² + (E[z²] − 1)·sd_j²``.
    """
    rows = []
    for (collection, k), group in pairs.groupby(["collection", "k"], sort=False):
        z = (group["e_delta_map"] - group["official_a"]) / group["sd_judgments"]
        ratio = float(np.mean(z**2))
        sd, judged = group["sd_combined"], group["sd_judgments"]
        corrected = 2 * stats.norm.cdf(Z * sd / np.sqrt(2 * sd**2 + (ratio - 2) * judged**2)) - 1
        rows.append(
            {
                "collection": collection,
                "judged pool": f"depth {k}",
                "E[z^2] (1 = stated right)": ratio,
                "judgments interval covers half A's official dMAP": float(np.mean(np.abs(z) <= Z)),
                "slope of E[dMAP] on half A's dMAP": float(np.polyfit(group["official_a"], group["e_delta_map"], 1)[0]),
                "combined covers half B": group["combined_covers_official_b"].mean(),
                "predicted with measured E[z^2]": corrected.mean() if split == "topics" else np.nan,
            }
        )
    return pd.DataFrame(rows)


def with_params(settings: str, overrides: list[str], out: Path, name: str) -> str:
    """``settings`` with ``KEY=VALUE`` parameter overrides, written next to the results."""
    if not overrides:
        return settings
    body = json.loads(Path(settings).read_text(encoding="utf-8"))
    for item in overrides:
        key, _, value = item.partition("=")
        body["params"][key] = json.loads(value)
    body["provenance"]["how_chosen"] += f" Overridden for a sensitivity study: {overrides}."
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"fusion_{name}.json"
    path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collections", nargs="+", choices=sorted(COLLECTIONS))
    parser.add_argument("--splits", type=int, default=60)
    parser.add_argument("--split", choices=("topics", "corpus"), default="topics",
                        help="halve the topics, or the documents (MD5 of a salted docno)")
    parser.add_argument(
        "--fit-on",
        choices=("pooled", "chosen"),
        default="pooled",
        help="the runs the model sees on half A: all pooled runs (default) or the 10 compared",
    )
    parser.add_argument("--seed", type=int, default=2006)
    parser.add_argument(
        "--resummarise",
        action="store_true",
        help="rewrite the tables from the pairs file already in --out, without refitting",
    )
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a parameter of the held-out fusion settings (a sensitivity study)",
    )
    args = parser.parse_args(argv)
    stem = f"split_{args.split}" if args.split == "topics" else "split_corpus_dmap"
    command = "python examples/precision/split_topics.py " + " ".join(
        (argv if argv is not None else sys.argv[1:])
    )
    if args.resummarise:
        pairs = pd.read_csv(args.out / f"{stem}_pairs.tsv.gz", sep="\t")
        previous = (args.out / f"{stem}.md").read_text(encoding="utf-8").splitlines()
        ran = next(line for line in previous if line.startswith("Command:")).split("; tables")[0]
        write_tables(pairs, args.split, args.out / f"{stem}.md", f"{ran}; tables rewritten by `{command}`")
        return 0
    if not DATA.is_dir():
        print(f"data not found at {DATA}; nothing to do", file=sys.stderr)
        return 1
    started = time.perf_counter()
    parts = []
    for name in args.collections:
        folder, threshold, k = COLLECTIONS[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            official = Campaign.from_files(
                DATA / folder / "qrels.txt", DATA / folder / "runs", rel_threshold=threshold
            )
        groups_frame = pd.read_csv(DATA / folder / "groups.tsv", sep="\t", dtype=str)
        pooled = groups_frame.loc[groups_frame["pooled"] == "yes", "run"].tolist()
        groups = dict(zip(groups_frame["run"], groups_frame["group"]))
        model = with_params(settings_in(HELD_OUT / name, "fusion"), args.param, args.out, name)
        gen = np.random.default_rng([args.seed, len(name)])
        for split in tqdm(range(args.splits), desc=name, unit="split"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pairs = one_split(official, pooled, groups, model, k, args.split, gen, args.fit_on)
            parts.append(pairs.assign(collection=name, k=k, split=split))
    pairs = pd.concat(parts, ignore_index=True)
    args.out.mkdir(parents=True, exist_ok=True)
    pairs.to_csv(args.out / f"{stem}_pairs.tsv.gz", sep="\t", index=False)
    ran = f"Command: `{command}` ({time.perf_counter() - started:.0f} s)"
    write_tables(pairs, args.split, args.out / f"{stem}.md", ran)
    return 0


def write_tables(pairs: pd.DataFrame, split: str, path: Path, ran: str) -> None:
    """The coverage table and the coverage gaps, as Markdown (printed too)."""
    text = "\n".join(
        [
            f"# Split-{split} coverage of 95% intervals for dMAP (10 runs, depth 100)",
            "",
            ran,
            "",
            f"Intervals computed on half A of the {split} (shallow pool judged, default "
            "model with held-out settings); coverage of half B's dMAP. Sampling alone predicts "
            "83.5% for an interval that holds only the sampling error of the split; `predicted` "
            "is the combined interval's own prediction for a topic split (module docstring).",
            "",
            FORMATTERS["markdown"](summarise(pairs)),
            "",
            "Coverage gaps of the combined interval (official dMAP of half B):",
            "",
            FORMATTERS["markdown"](coverage_gaps(pairs)),
            "",
            "The judgment-only uncertainty on half A's own topics (`judgment_error`):",
            "",
            FORMATTERS["markdown"](judgment_error(pairs, split)),
            "",
        ]
    )
    path.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
