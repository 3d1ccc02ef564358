"""Below the pool, against complete judgments: choose fusion's below-pool settings there.

Run from the repository root (each ~10–30 minutes on 2 cores)::

    python examples/calibration/choose_below_pool.py --param beyond_run_sd --grid 1,2,3,4
    python examples/calibration/choose_below_pool.py --param beyond_decay --grid 0,0.3,0.6
    python examples/calibration/choose_below_pool.py --param beyond_decay_sd --grid 1,1.25 --collections trec8 --pool 3

The reusability studies (``choose_setting.py``) score the stated confidence against the
official qrels at depth 100. On the DL collections those qrels are themselves a shallow
pool: below it nothing is judged, so the studies cannot see whether the model is right
about documents below a pool. Here every collection is cut where its official judgments
are complete for the pooled runs (``REGIMES``: TREC-8 ad hoc at rank 100, its depth-100
pool; DL 2019 and DL 2021 at rank 10, their depth-10 pools) and only a shallow pool of
that is judged (TREC-8 depth 10, DL depth 2; ``--pool K`` judges depth K on every
collection instead), so every document the model predicts below the pool has a true label.

Per split (paired across the grid's values): 10 pooled runs, one per group, half the
topics at random; the fusion model with the settings chosen without the collection
(``held_out/<collection>/fusion.json``) and ``--param`` set to each value is fitted to the
shallow pool of all pooled runs; for every pair of the 10, E[ΔMAP], its judgment-only sd
and P(A beats B) by Monte Carlo over the posterior draws are set against the pair's ΔMAP
on the complete judgments of the same topics. Per collection and value:

- ``e_z2``: mean of ``z² = ((E[ΔMAP] − ΔMAP) / sd)²``: 1 when the sd is right, above 1
  when the draws are too sure of themselves;
- ``cover_95``: share of pairs with ``|z| ≤ 1.96``; ``slope``: E[ΔMAP] regressed on ΔMAP;
- ``log_loss``: of P(A beats B) against the complete judgments' sign (ties left out);
- ``below_ratio``: expected / true relevant documents among those below the pool.

For each collection the value chosen *for* it is the one whose mean ``|log e_z2|`` over
the *other two* collections is smallest (``--criterion log_loss`` uses the log loss).
Writes ``below_pool_<param>_grid.csv`` and ``below_pool_<param>_choice.md`` into ``choices/``
(``--out``; not committed, condensed in ``models/provenance/``).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from relimpute import Campaign
from relimpute.calibration.trials import draw_trial
from relimpute.cli._format import FORMATTERS
from relimpute.confidence import ConfidenceEngine
from relimpute.measures import evaluate
from relimpute.relevance import load_model

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / "shared" / "data"
REGIMES = {  # name: (folder, rel threshold, cut rank = complete official pool, judged pool)
    "dl19": ("trec-dl-2019-passage", 2, 10, 2),
    "dl21": ("trec-dl-2021-passage", 2, 10, 2),
    "trec8": ("trec-8-adhoc", 1, 100, 10),
}
N_RUNS, N_DRAWS = 10, 2000


def load_collection(name: str) -> tuple[Campaign, list[str], dict[str, str]]:
    """The official campaign of the pooled runs cut at the complete depth, and the groups."""
    folder, threshold, cut, _ = REGIMES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        official = Campaign.from_files(
            DATA / folder / "qrels.txt", DATA / folder / "runs", rel_threshold=threshold
        )
    groups = pd.read_csv(DATA / folder / "groups.tsv", sep="\t", dtype=str)
    pooled = groups.loc[groups["pooled"] == "yes", "run"].tolist()
    return official.subset(pooled).truncated(cut), pooled, dict(zip(groups["run"], groups["group"]))


def draw_split(official: Campaign, pooled: list[str], groups: dict, gen) -> tuple[list[str], Campaign]:
    """10 pooled runs, one per group (as a reusability trial draws them), and half of the topics."""
    chosen, _ = draw_trial(pooled, N_RUNS, 2, gen, groups)
    topics = np.array(official.query_ids)
    half = sorted(gen.choice(topics, size=len(topics) // 2, replace=False))
    return sorted(chosen), official.subset(topics=half)


def score_split(half: Campaign, chosen: list[str], settings: Path, pool: int, seed: int) -> tuple[pd.DataFrame, float, float]:
    """Pairs of the 10 runs fitted on the shallow pool against the complete judgments, and
    the expected and true relevant documents below the pool."""
    shallow = half.pooled(pool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimate = load_model(str(settings)).fit_predict(shallow, rng=seed)
        pairs = ConfidenceEngine().confidence(
            shallow, estimate, systems=chosen, n_draws=N_DRAWS, rng=seed,
            method="monte carlo",
        ).to_frame()
    truth = evaluate(half.subset(chosen), ["AP"], missing="zero").set_index("system")["value"]
    pairs["delta_map"] = truth[pairs["system_a"]].to_numpy() - truth[pairs["system_b"]].to_numpy()
    below = [~s.judged & h.judged for s, h in zip(shallow.topics, half.topics)]
    expected = sum(float(p[b].sum()) for p, b in zip(estimate.p, below))
    true = sum(float(r[b].sum()) for r, b in zip(half.relevant(), below))
    return pairs, expected, true


def summarise(pairs: pd.DataFrame) -> dict:
    """The calibration of the judgment-only sd and of P(A beats B) (module docstring)."""
    z = (pairs["e_delta_map"] - pairs["delta_map"]) / pairs["sd_delta_map"]
    decided = pairs["delta_map"] != 0
    p = pairs.loc[decided, "p_a_better"].clip(1e-4, 1 - 1e-4)
    won = pairs.loc[decided, "delta_map"] > 0
    return {
        "pairs": len(pairs),
        "e_z2": float(np.mean(z**2)),
        "cover_95": float(np.mean(np.abs(z) <= 1.959964)),
        "slope": float(np.polyfit(pairs["delta_map"], pairs["e_delta_map"], 1)[0]),
        "log_loss": float(-np.mean(np.where(won, np.log(p), np.log(1 - p)))),
    }


def judged_depth(name: str, pool: int | None) -> int:
    """The depth judged on collection ``name``: ``pool`` if given, else its regime's."""
    return pool or REGIMES[name][3]


def grid_study(name: str, param: str, values: list[float], fixed: dict, splits: int, seed: int, out: Path,
               pool: int | None = None) -> pd.DataFrame:
    """One row per value of ``param`` on collection ``name``, every value on the same splits
    (judged to depth ``pool``, by default the regime's)."""
    official, pooled, groups = load_collection(name)
    pool = judged_depth(name, pool)
    base = json.loads((HERE / "held_out" / name / "fusion.json").read_text(encoding="utf-8"))
    settings = {}
    for value in values:
        body = copy.deepcopy(base)
        body["params"].update(fixed, **{param: value})
        path = out / f"below_pool_{name}_{param}_{value}.json"
        path.write_text(json.dumps(body), encoding="utf-8")
        settings[value] = path
    gen = np.random.default_rng([seed, len(name)])
    parts = {value: [] for value in values}
    counts = {value: [0.0, 0.0] for value in values}
    for _ in tqdm(range(splits), desc=f"{name} {param}", unit="split"):
        chosen, half = draw_split(official, pooled, groups, gen)
        split_seed = int(gen.integers(2**31 - 1))
        for value in values:
            pairs, expected, true = score_split(half, chosen, settings[value], pool, split_seed)
            parts[value].append(pairs)
            counts[value][0] += expected
            counts[value][1] += true
    rows = []
    for value in values:
        row = summarise(pd.concat(parts[value], ignore_index=True))
        rows.append({"collection": name, param: value, **row, "below_ratio": counts[value][0] / counts[value][1]})
    for path in settings.values():
        path.unlink()
    return pd.DataFrame(rows)


def choose(grid: pd.DataFrame, param: str, criterion: str) -> pd.DataFrame:
    """For each collection, the value best on the other two (mean of the criterion)."""
    score = np.abs(np.log(grid["e_z2"])) if criterion == "e_z2" else grid["log_loss"]
    scored = grid.assign(score=score)
    rows = []
    for name in scored["collection"].unique():
        if scored["collection"].nunique() < 2:
            break
        others = scored[scored["collection"] != name].groupby(param)["score"].mean()
        value = others.idxmin()
        own = scored[(scored["collection"] == name) & (scored[param] == value)].iloc[0]
        rows.append({"collection": name, "chosen from the other two": value, "score on the others": others.min(),
                     **{k: own[k] for k in ("e_z2", "cover_95", "slope", "log_loss", "below_ratio")}})
    return pd.DataFrame(rows, columns=None if rows else ["collection"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--param", required=True)
    parser.add_argument("--grid", required=True, help="comma-separated values")
    parser.add_argument("--fixed", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--splits", type=int, default=25)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--criterion", choices=("e_z2", "log_loss"), default="e_z2")
    parser.add_argument("--collections", default="dl19,dl21,trec8")
    parser.add_argument("--out", type=Path, default=HERE / "choices")
    parser.add_argument("--pool", type=int, help="judged pool depth for every collection (default: REGIMES)")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"data not found at {DATA}; nothing to do", file=sys.stderr)
        return 1
    values = [float(v) for v in args.grid.split(",")]
    fixed = {k: json.loads(v) for k, _, v in (item.partition("=") for item in args.fixed)}
    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    grid = pd.concat(
        [grid_study(name, args.param, values, fixed, args.splits, args.seed, args.out, args.pool)
         for name in args.collections.split(",")],
        ignore_index=True,
    )
    stem = f"below_pool_{args.param}"
    grid.to_csv(args.out / f"{stem}_grid.csv", index=False)
    command = "python examples/calibration/choose_below_pool.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    text = "\n".join([
        f"# `{args.param}` below the pool, against complete judgments",
        "",
        f"`{command}` ({time.perf_counter() - started:.0f} s)",
        "",
        "Regimes (cut rank, judged pool): " + "; ".join(
            f"{n} ({REGIMES[n][2]}, depth {judged_depth(n, args.pool)})" for n in args.collections.split(",")),
        "",
        f"## Chosen leave-one-collection-out (criterion: {args.criterion})",
        "",
        FORMATTERS["markdown"](choose(grid, args.param, args.criterion)),
        "",
        "## Every value",
        "",
        FORMATTERS["markdown"](grid),
        "",
    ])
    (args.out / f"{stem}_choice.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
