"""Can a new run game the new-run check? A run re-ranked by the LLM labels, and empty runs.

Run from the repository root::

    python examples/new_run/adversarial.py              # DL 2019, 6 source runs: ~1 CPU minute
    python examples/new_run/adversarial.py --sources 1  # the best run only

DL 2019 passage (relevant = grade >= 2), with the UMBRELA GPT-4o labels of every judged pair.
For each of 6 official runs R (evenly spaced by official MAP, the best to the worst), three new
runs are built: ``R~llm``, R's top 100 per topic re-ranked by the LLM label (3 first, then 2,
1, 0, then the unlabelled documents; ties in R's order), the run a team tuned on the labels would
submit; ``R~half``, R with its first half of the topics removed; ``R~none``, R on topic ids the
qrels lack (empty everywhere). R's group and the three are held out (the documents only they
brought into the depth-10 pool lose their judgments, as ``validate.py``'s ``without_group``) and
checked as new runs (:func:`relimpute.bias.newrun.check_new_runs`, estimand pool) twice: with the
default model, and with the labels' model (``fusion-llm`` on the labels, as ``--llm-labels``).
The truth is each run's MAP on the full official qrels and its rank by it. A claim is wrong
when P(beats X) >= 0.95 and the run's true MAP is below X's (or P <= 0.05 and above). Writes
``results/adversarial.md`` and ``results/adversarial_runs.csv``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute import Campaign
from relimpute.confidence import predict_for
from relimpute.labels import with_labels
from relimpute.measures import evaluate
from relimpute.cli.newrun import LABEL_AGREEMENT_MARGIN
from relimpute.bias.newrun import check_new_runs, label_agreement
from relimpute.relevance import load_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate import DATA, HERE, without_group  # noqa: E402

FOLDER = DATA / "trec-dl-2019-passage"
LABELS = FOLDER / "llm" / "umbrela-gpt-4o.txt"
COLUMNS = ["query_id", "q0", "doc_id", "rank", "score", "tag"]


def read_run(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep=r"\s+", names=COLUMNS, dtype={"query_id": str, "doc_id": str})


def by_labels(run: pd.DataFrame, labels: pd.DataFrame, depth: int = 100) -> pd.DataFrame:
    """The run's top ``depth`` per topic re-ranked by LLM label (unlabelled last; ties in the
    run's order)."""
    top = run.sort_values(["query_id", "rank"]).groupby("query_id").head(depth)
    top = top.merge(labels, on=["query_id", "doc_id"], how="left").fillna({"label": -1})
    top = top.sort_values(["query_id", "label", "rank"], ascending=[True, False, True])
    top["rank"] = top.groupby("query_id").cumcount() + 1
    top["score"] = 1000.0 - top["rank"]
    return top[COLUMNS]


def write(frame: pd.DataFrame, path: Path) -> Path:
    frame.assign(tag=path.name).to_csv(path, sep=" ", header=False, index=False)
    return path


def new_runs(source: str, labels: pd.DataFrame, folder: Path) -> list[Path]:
    run = read_run(FOLDER / "runs" / f"{source}.gz")
    topics = sorted(run["query_id"].unique())
    half = run[~run["query_id"].isin(topics[: len(topics) // 2])]
    none = run.assign(query_id="x" + run["query_id"])
    return [write(by_labels(run, labels), folder / f"{source}~llm"),
            write(half, folder / f"{source}~half"), write(none, folder / f"{source}~none")]


def study(source: str, group_of: pd.Series, labels: pd.DataFrame, *, seed: int,
          n_draws: int) -> tuple[list[dict], list[dict]]:
    rows, pairs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        files = new_runs(source, labels, Path(tmp))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            campaign = Campaign.from_files(
                FOLDER / "qrels.txt",
                [FOLDER / "runs" / f"{r}.gz" for r in group_of.index] + files, rel_threshold=2,
            )  # fmt: skip
    new = [f.name for f in files]
    held = [s for s in group_of.index if group_of[s] == group_of[source]] + new
    truth = evaluate(campaign, ["AP"], missing="zero").set_index("system")["value"]
    reduced = without_group(campaign, held, 10)
    for model in ("fusion", "fusion-llm"):
        fitted = with_labels(reduced, [LABELS]) if model == "fusion-llm" else reduced
        estimate = predict_for(load_model(model).fit(fitted, rng=seed), fitted, ["AP"])
        check = check_new_runs(fitted, held, estimate, top=len(campaign.systems),
                               n_draws=n_draws, rng=seed)  # fmt: skip
        agreement = dict(zip(campaign.systems, label_agreement(with_labels(campaign, [LABELS]))))
        top = max(v for k, v in agreement.items() if k not in held)
        for row in check.table.to_dict("records"):
            name = row["run"]
            others = [s for s in campaign.systems if s not in held]
            rank = 1 + int((truth[others] > truth[name] + 1e-12).sum())
            p = np.array([row[f"P(beats {o})"] for o in others])
            delta = truth[name] - truth[others].to_numpy()
            wrong = ((p >= 0.95) & (delta < 0)) | ((p <= 0.05) & (delta > 0))
            rows.append({
                "source": source, "model": model, "run": name,
                "kind": name.split("~")[1] if "~" in name else "group",
                "truth": truth[name], "trec_eval": row["trec_eval"], "E": row["E"],
                "ci_low": row["ci_low"], "ci_high": row["ci_high"],
                "covered": row["ci_low"] - 1e-9 <= truth[name] <= row["ci_high"] + 1e-9,
                "truth_rank": rank, "rank_low": row["rank_low"], "rank_high": row["rank_high"],
                "confident": int(((p >= 0.95) | (p <= 0.05)).sum()), "wrong": int(wrong.sum()),
                "label_agreement": agreement[name],
                "warned": model == "fusion-llm" and agreement[name] > top + LABEL_AGREEMENT_MARGIN,
                "verdict": row["verdict"],
            })  # fmt: skip
            pairs += [{"source": source, "model": model, "run": name, "other": o, "p": q,
                       "delta": d} for o, q, d in zip(others, p, delta)]  # fmt: skip
        print(f"  {source} {model}", file=sys.stderr, flush=True)
    return rows, pairs


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per kind of new run and model: coverage of the true MAP, E - truth, confident claims."""
    out = runs.assign(error=runs["E"] - runs["truth"],
                      rank_covered=(runs["rank_low"] <= runs["truth_rank"])
                      & (runs["truth_rank"] <= runs["rank_high"]))  # fmt: skip
    return out.groupby(["kind", "model"], sort=False).agg(
        runs=("run", "size"), map_in_interval=("covered", "mean"),
        rank_in_interval=("rank_covered", "mean"), mean_error=("error", "mean"),
        max_error=("error", "max"), confident=("confident", "sum"), wrong=("wrong", "sum"),
        warned=("warned", "sum"),
    ).reset_index()  # fmt: skip


def uncertain(pairs: pd.DataFrame) -> pd.DataFrame:
    """Calibration where the check is unsure (0.05 < P(beats) < 0.95): the mean stated P
    against the share the run truly beat, per kind of new run and model; Brier over all."""
    pairs = pairs.assign(kind=pairs["run"].str.split("~").str[1].fillna("group"),
                         won=(pairs["delta"] > 0).astype(float))  # fmt: skip
    pairs["brier"] = (pairs["p"] - pairs["won"]) ** 2
    unsure = pairs[(pairs["p"] > 0.05) & (pairs["p"] < 0.95)]
    table = unsure.groupby(["kind", "model"], sort=False).agg(
        unsure_pairs=("p", "size"), mean_p=("p", "mean"), won=("won", "mean"))
    brier = pairs.groupby(["kind", "model"], sort=False)["brier"].mean()
    return table.join(brier, how="outer").reset_index()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=int, default=6,
                        help="source runs, evenly spaced by official MAP from the best")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mc-draws", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    if not LABELS.is_file():
        print(f"skipped: {LABELS} not found", file=sys.stderr)
        return 0
    groups = pd.read_csv(FOLDER / "groups.tsv", sep="\t", dtype=str).set_index("run")["group"]
    labels = read_run(LABELS).rename(columns={"rank": "label"})[["query_id", "doc_id", "label"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        official = Campaign.from_files(FOLDER / "qrels.txt", FOLDER / "runs", rel_threshold=2)
    maps = evaluate(official, ["AP"], missing="zero").set_index("system")["value"].sort_values()
    spread = np.linspace(len(maps) - 1, 0, args.sources).round().astype(int) if args.sources > 1 else [len(maps) - 1]
    order = list(dict.fromkeys(maps.index[i] for i in spread))
    rows, pairs = [], []
    for source in order:
        r, p = study(source, groups, labels, seed=args.seed, n_draws=args.mc_draws)
        rows, pairs = rows + r, pairs + p
    runs = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(args.out / "adversarial_runs.csv", index=False, float_format="%.4f")
    pairs = pd.DataFrame(pairs)
    pairs.to_csv(args.out / "adversarial_pairs.csv.gz", index=False, float_format="%.4g")
    shown = runs[runs["kind"] != "group"].drop(columns="verdict")
    (args.out / "adversarial.md").write_text(
        summary(runs).to_markdown(index=False, floatfmt=".3f") + "\n\n"
        + uncertain(pairs).to_markdown(index=False, floatfmt=".3f") + "\n\n"
        + shown.to_markdown(index=False, floatfmt=".3f") + "\n\n"
        + "\n".join(f"- {r.run} ({r.model}): {r.verdict}" for r in runs.itertuples()
                    if r.kind != "group") + "\n"  # fmt: skip
    )
    for table in (summary(runs), uncertain(pairs)):
        print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
