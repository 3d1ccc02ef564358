"""Coverage of the ``pool`` estimand, leave one group out (DL 2019, DL 2021, TREC-8; depth 10).

Run from the repository root::

    python examples/pool_coverage/run.py                 # the three collections, a few minutes
    python examples/pool_coverage/run.py --pool alone    # each left-out run pooled alone (earlier design)
    python examples/pool_coverage/run.py --quick         # DL 2019, 10 topics, 4 groups: seconds

The truth of each pooled run is its MAP (full depth, unjudged = nonrelevant) on the qrels cut to
the depth-10 pool of every pooled run (fully judged on all three: the script checks). For each
group, the qrels are cut to the depth-10 pool of the other groups' pooled runs, the default model
is fitted on that, and ``ConfidenceEngine(estimand="pool", pool_depth=10, pool_together=True)``
(the group's runs pooled together, as the truth pools them) gives each of the group's runs E,
sd and the 95% interval of its MAP and, against every run of the other groups, of ΔMAP with
P(A beats B). Scored as the ``complete`` study (``../estimand_coverage/run.py``):
coverage, E[z²], accuracy at P ≥ 0.95, W. The estimand's own target, the run pooled alone with
the other groups (``own``), is scored beside the truth (their gap is the group's other runs'
pool). Writes ``results/summary.csv`` and ``.md`` and per collection ``runs_<name>.csv`` and
``pairs_<name>.csv`` (not committed).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
from scipy.special import ndtri

from relimpute import Campaign
from relimpute.bias.pools import group_leave_outs, pool_reproduction
from relimpute.confidence import ConfidenceEngine
from relimpute.confidence.results import prob_positive
from relimpute.groups import read_groups
from relimpute.measures import evaluate
from relimpute.relevance import load_model

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "estimand_coverage"))
from run import _checked, markdown, summarize  # noqa: E402  (the complete study's scoring)

DATA = HERE.parents[2] / "shared" / "data"
#: name → (folder, relevance threshold)
COLLECTIONS = {
    "dl19": ("trec-dl-2019-passage", 2),
    "dl21": ("trec-dl-2021-passage", 2),
    "trec8": ("trec-8-adhoc", 1),
}
DEPTH = 10
LEVEL = 0.95
#: an sd-0 interval [E, E] covers a truth computed along another path up to this
TOL = 1e-9
#: the spreads of the shared shift the study scores
GROUP_SDS = [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]


def load(name: str, data: Path = DATA, quick: bool = False):
    """The pooled runs of a collection and its groups (quick: 10 topics)."""
    folder, threshold = COLLECTIONS[name]
    root = data / folder
    groups = read_groups(root / "groups.tsv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(root / "qrels.txt", root / "runs", rel_threshold=threshold)
    campaign = campaign.subset(list(groups.pooled_runs(campaign.systems)))
    if quick:
        campaign = campaign.subset(topics=list(campaign.query_ids[:10]))
    return campaign, groups


def judged_share(campaign: Campaign, depth: int = DEPTH) -> float:
    """The share of the depth-``depth`` pool of every run that the qrels judge."""
    table = pool_reproduction(campaign, campaign.systems, depth)
    return float(table["pool_judged_share"].iloc[-1])


def judged_pool(campaign: Campaign, depth: int = DEPTH) -> Campaign:
    """The campaign judged on the depth-``depth`` pool of every run, a document of the pool
    the qrels leave unjudged judged nonrelevant (as the truth counts it: trec_eval's)."""
    full = campaign.pooled(depth)
    topics = []
    for topic in full.topics:
        hole = topic.retrieved(None, depth) & ~topic.judged
        grades = np.where(hole, 0, topic.grades).astype(topic.grades.dtype)
        topics.append(replace(topic, judged=topic.judged | hole, grades=grades))
    return replace(full, topics=tuple(topics))


def mean_ap(campaign: Campaign, systems) -> pd.Series:
    """MAP per system (trec_eval with ``-c``: a topic a run misses scores 0)."""
    table = evaluate(campaign.subset(list(systems)), ["AP"], missing="zero")
    return table.set_index("system")["value"]


def study(campaign: Campaign, groups, *, depth: int = DEPTH, seed: int = 0, fit_depth=None,
          max_groups: int | None = None, together: bool = True, progress=True):  # fmt: skip
    """Per-run and per-pair tables of the left-out runs, every group left out in turn: the
    truth, the estimand's own target (``own``), E, the sd without the shared shift
    (``sd_model``) and the sd the shift adds per unit of its spread (``slope``). ``together``:
    the group's runs pooled together (``pool_together``, as the truth pools them), else each
    alone."""
    engines = [ConfidenceEngine(estimand="pool", pool_depth=depth, pool_group_sd=g, pool_together=together)
               for g in (0, 1)]  # fmt: skip
    full = judged_pool(campaign, depth)
    truth = mean_ap(full, campaign.systems)
    runs, pairs = [], []
    steps = list(group_leave_outs(full, groups, runs=campaign.systems))[:max_groups]
    for number, (group, left, kept) in enumerate(steps):
        start = time.time()
        reduced = full.pooled(depth, kept)
        fit = reduced if fit_depth is None else reduced.truncated(fit_depth)
        estimate = load_model().fit_predict(fit, rng=seed)
        wanted = [(a, b) for a in left for b in kept]
        systems = list(left) + list(kept)
        alone, shifted = (
            e.confidence(reduced, estimate, systems, wanted, method="normal") for e in engines
        )
        own = {a: mean_ap(full.pooled(depth, (*kept, a)), (a, *kept)) for a in left}
        n = len(left)
        runs.append(pd.DataFrame({
            "group": group, "system": list(left), "truth": truth[list(left)].to_numpy(),
            "own": [own[a][a] for a in left], "reduced": mean_ap(reduced, left)[list(left)].to_numpy(),
            "e": alone.scores.e_map[:n], "sd_model": alone.scores.sd_map[:n],
            "slope": _added(shifted.scores.var_map[:n], alone.scores.var_map[:n]),
        }))  # fmt: skip
        a, b = list(alone.system_a), list(alone.system_b)
        pairs.append(pd.DataFrame({
            "group": group, "system_a": a, "system_b": b,
            "truth": truth[a].to_numpy() - truth[b].to_numpy(),
            "own": [own[x][x] - own[x][y] for x, y in zip(a, b)],
            "e": alone.e_delta_map, "sd_model": alone.sd_delta_map,
            "slope": _added(shifted.var_delta_map, alone.var_delta_map),
        }))  # fmt: skip
        if progress:
            print(f"  group {number + 1}/{len(steps)} {group}: {len(left)} runs, "
                  f"{time.time() - start:.1f}s", file=sys.stderr, flush=True)  # fmt: skip
    return pd.concat(runs, ignore_index=True), pd.concat(pairs, ignore_index=True)


def _added(total, alone):
    """The sd a unit spread adds: √(Var with it − Var without)."""
    return np.sqrt(np.maximum(np.asarray(total) - np.asarray(alone), 0.0))


def scored(runs: pd.DataFrame, pairs: pd.DataFrame, group_sd: float, target: str = "truth"):
    """The tables as the engine gives them at ``pool_group_sd=group_sd`` (sd, normal interval,
    P(A beats B)), checked against ``target`` (``truth`` or ``own``) as the complete study."""
    out = []
    for frame in (runs, pairs):
        sd = np.sqrt(frame["sd_model"] ** 2 + (group_sd * frame["slope"]) ** 2).to_numpy()
        half = ndtri(0.5 + LEVEL / 2) * sd
        ci = SimpleNamespace(low=frame["e"] - half - TOL, high=frame["e"] + half + TOL)
        columns = [c for c in ("group", "system", "system_a", "system_b") if c in frame]
        table = _checked(frame[columns].copy(), frame[target], frame["e"], sd, ci)
        out.append(table)
    out[1]["p_a_better"] = prob_positive(pairs["e"].to_numpy(), out[1]["sd"].to_numpy() ** 2)
    return out


def against_own(runs: pd.DataFrame, pairs: pd.DataFrame, group_sd: float) -> dict:
    """Coverage and E[z²] with the estimand's own target in place of the truth."""
    runs, pairs = scored(runs, pairs, group_sd, "own")
    return {"run_coverage_own": float(runs["covered"].mean()),
            "run_ez2_own": float(np.nanmean(runs["z"] ** 2)),
            "pair_coverage_own": float(pairs["covered"].mean()),
            "pair_ez2_own": float(np.nanmean(pairs["z"] ** 2))}  # fmt: skip


def summary_rows(tables: dict, group_sds) -> pd.DataFrame:
    """One row per collection and spread: the complete study's summary, and against ``own``."""
    rows = []
    for name, (runs, pairs) in tables.items():
        for g in group_sds:
            row = summarize(*scored(runs, pairs, g))
            rows.append({"collection": name, "group_sd": g, **row, **against_own(runs, pairs, g)})
    return pd.DataFrame(rows)


def choose(summary: pd.DataFrame) -> pd.DataFrame:
    """Leave one collection out: per collection the spread whose ΔMAP coverage, averaged over
    the other collections, is closest to 95% (the smaller on a tie), and its row there."""
    rows = []
    for name in summary["collection"].unique():
        others = summary[summary["collection"] != name]
        if others.empty:
            continue
        gap = (others.groupby("group_sd")["pair_coverage"].mean() - LEVEL).abs()
        chosen = float(gap.index[gap.to_numpy() == gap.min()].min())
        row = summary[(summary["collection"] == name) & (summary["group_sd"] == chosen)]
        rows.append(row.assign(chosen_on=",".join(others["collection"].unique())))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def by_group(tables: dict, chosen: dict) -> pd.DataFrame:
    """Per collection and left-out group, its pairs with and without the shared shift (at the
    spread chosen without the collection): where the misses are, bias or width."""
    rows = []
    for name, (runs, pairs) in tables.items():
        for g, label in ((0.0, "none"), (chosen.get(name, 0.0), "chosen")):
            table = scored(runs, pairs, g)[1].assign(error=pairs["e"] - pairs["truth"])
            rows.append(table.groupby("group", sort=False).agg(
                pairs=("z", "size"), coverage=("covered", "mean"), ez2=("z", lambda z: float(np.nanmean(z**2))),
                mean_error=("error", "mean"), mean_sd=("sd", "mean"),
            ).reset_index().assign(collection=name, shift=label, group_sd=g))  # fmt: skip
    return pd.concat(rows, ignore_index=True)


def figure(summary: pd.DataFrame, held_out: pd.DataFrame, path: Path) -> None:
    """ΔMAP coverage and E[z²] against the spread, one line per collection, the chosen
    spread of each (chosen without it) marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from relimpute._files import save_figure

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for name, frame in summary.groupby("collection", sort=False):
        for ax, column in zip(axes, ("pair_coverage", "pair_ez2")):
            line = ax.plot(frame["group_sd"], frame[column], marker=".", label=name)[0]
            mark = held_out[held_out["collection"] == name]
            ax.plot(mark["group_sd"], mark[column], "o", mfc="none", ms=10, color=line.get_color())
    axes[0].axhspan(0.93, 0.97, color="0.9", zorder=0)
    axes[0].set_ylabel("ΔMAP intervals covering the truth")
    axes[1].axhspan(0.8, 1.25, color="0.9", zorder=0)
    axes[1].set_ylabel("E[z²], ΔMAP")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xlabel("spread of the shared shift (pool_group_sd)")
    axes[0].legend(fontsize=8, title="circled: chosen without it", title_fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, colors=64, dpi=110)
    plt.close(fig)


def _tables(out: Path, name: str) -> tuple[Path, Path]:
    """Where a collection's per-run and per-pair tables go."""
    return out / f"runs_{name}.csv", out / f"pairs_{name}.csv.gz"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the folder of the collections")
    parser.add_argument("--collections", nargs="+", default=list(COLLECTIONS),
                        choices=list(COLLECTIONS))  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="the model's fit")
    parser.add_argument("--fit-depth", type=int, default=100,
                        help="fit the model on the runs cut at this rank (0: full depth)")
    parser.add_argument("--group-sds", type=float, nargs="+", default=GROUP_SDS,
                        help="the spreads of the shared shift to score (chosen among them)")
    parser.add_argument("--from-tables", action="store_true",
                        help="score the runs_ and pairs_ tables already in --out (no fits)")
    parser.add_argument("--pool", choices=("together", "alone"), default="together",
                        help="the left-out group's runs pooled together (as the truth) or each alone")
    parser.add_argument("--quick", action="store_true", help="DL 2019, 10 topics, 4 groups")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    names = ["dl19"] if args.quick else args.collections
    out = args.out / "quick" if args.quick else args.out
    out.mkdir(parents=True, exist_ok=True)
    tables = {}
    for name in names:
        if args.from_tables:
            tables[name] = tuple(pd.read_csv(path) for path in _tables(out, name))
            continue
        if not (args.data / COLLECTIONS[name][0] / "qrels.txt").is_file():
            print(f"{name}: data not found under {args.data}; skipped", file=sys.stderr)
            continue
        start = time.time()
        campaign, groups = load(name, args.data, args.quick)
        print(f"{name}: {campaign.n_systems} pooled runs, depth-{DEPTH} pool judged "
              f"{judged_share(campaign):.2%}", file=sys.stderr)  # fmt: skip
        tables[name] = study(campaign, groups, seed=args.seed, fit_depth=args.fit_depth or None,
                             max_groups=4 if args.quick else None, together=args.pool == "together")  # fmt: skip
        for path, table in zip(_tables(out, name), tables[name]):
            table.to_csv(path, index=False, float_format="%.6g")
        print(f"{name}: {time.time() - start:.0f}s", file=sys.stderr)
    summary = summary_rows(tables, args.group_sds)
    summary.to_csv(out / "summary.csv", index=False, float_format="%.4f")
    held_out = choose(summary)
    (out / "summary.md").write_text(
        "Development: every spread on every collection\n\n" + markdown(summary)
        + "\nHeld out: each collection at the spread chosen on the others\n\n" + markdown(held_out)
    )  # fmt: skip
    chosen = dict(zip(held_out.get("collection", []), held_out.get("group_sd", [])))
    by_group(tables, chosen).to_csv(out / "by_group.csv", index=False, float_format="%.4f")
    if len(held_out) and not args.quick:
        figure(summary, held_out, HERE / "coverage.png")
    print(markdown(held_out if len(held_out) else summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
