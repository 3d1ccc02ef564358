"""How much a compare in topic parts differs from the one-machine compare, and from the truth.

Run from the repository root::

    python examples/topic_parts/measure.py [--parts 1 2 5] [--depth 10] [--seeds 0 1] [--quick]
    python examples/topic_parts/measure.py --simulated 1000 --parts 1 10   # Million Query-like

TREC-8 ad hoc: the 71 pooled runs cut at rank 100 (every pooled run's top 100 is judged, so
the full qrels give each run's `complete` MAP exactly), the judgments cut to the depth-10 pool.
For each number of parts, `relimpute.confidence.parts.compare_in_parts` fits the default model
on each part's topics alone and compares every pair by Monte Carlo (4,000 draws); one part is
the one-machine compare. Per setting: how far P(A beats B) and E[ΔMAP] move from one part's
(the same seed's; for one part, from the first seed's: the seed's own noise), the ΔMAP
intervals' coverage of the true ΔMAP and E[z²], accuracy at P ≥ 0.95 and the bookmaker W,
each run's MAP interval coverage, and the CPU seconds.
``--simulated N``: a campaign of ``relimpute.simulate`` with the Million Query track's shape
(40 runs, depth 100) and N topics, its complete qrels the truth, judged to the depth-10 pool.
Writes ``results/parts.csv`` and ``results/parts.md`` (``parts_simulated_<N>.*``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute import Campaign
from relimpute.confidence import ConfidenceEngine
from relimpute.confidence.parts import compare_in_parts

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1].parent / "shared" / "data" / "trec-8-adhoc"


def load(quick: bool) -> Campaign:
    """The pooled TREC-8 runs cut at 100 (quick: 10 runs, 20 topics)."""
    groups = pd.read_csv(DATA / "groups.tsv", sep="\t", dtype=str)
    runs = groups.loc[groups["pooled"] == "yes", "run"].tolist()
    if quick:
        runs = groups[groups["pooled"] == "yes"].drop_duplicates("group")["run"].head(10).tolist()
    campaign = Campaign.from_files(DATA / "qrels.txt", [DATA / "runs" / f"{r}.gz" for r in runs])
    campaign = campaign.truncated(100, shrink=True)
    return campaign.subset(topics=campaign.query_ids[:20]) if quick else campaign


def simulated(n_topics: int) -> Campaign:
    """A Million Query-shaped campaign of ``n_topics`` with complete qrels (seeded)."""
    from relimpute.simulate import SIZES, simulate_campaign

    return simulate_campaign(**{**SIZES["million-query"], "n_topics": n_topics}, rng=2026).campaign


def bookmaker_w(p: np.ndarray, right: np.ndarray) -> float:
    """Mean log2 score gain over 0.5 of the stated probability of the true winner."""
    q = np.clip(np.where(right, p, 1 - p), 1e-6, 1)
    return float(np.mean(np.log2(q) + 1))


def score(result, truth_map: np.ndarray, base=None) -> dict:
    frame = result.to_frame(level=0.95)
    index = {s: i for i, s in enumerate(result.systems)}
    a = frame["system_a"].map(index).to_numpy()
    b = frame["system_b"].map(index).to_numpy()
    true_delta = truth_map[a] - truth_map[b]
    p = frame["p_a_better"].to_numpy()
    decided = np.maximum(p, 1 - p) >= 0.95
    right = np.where(true_delta > 0, p >= 0.5, p < 0.5)
    z2 = ((true_delta - frame["e_delta_map"]) / frame["sd_delta_map"]) ** 2
    runs = result.scores.to_frame()
    out = {
        "pairs_covered": float(((frame["ci_low"] <= true_delta)
                                & (true_delta <= frame["ci_high"])).mean()),  # fmt: skip
        "pairs_ez2": float(z2.mean()),
        "acc_at_95": float(right[decided].mean()) if decided.any() else np.nan,
        "share_at_95": float(decided.mean()),
        "W": bookmaker_w(p, true_delta > 0),
        "sd_dmap": float(frame["sd_delta_map"].mean()),
    }
    truth = runs["system"].map(dict(zip(result.systems, truth_map)))
    out["runs_covered"] = float(((runs["ci_low"] <= truth) & (truth <= runs["ci_high"])).mean())
    if base is not None:
        out["max_abs_dP"] = float(np.abs(result.p_a_better - base.p_a_better).max())
        out["mean_abs_dP"] = float(np.abs(result.p_a_better - base.p_a_better).mean())
        out["mean_abs_dE"] = float(np.abs(result.e_delta_map - base.e_delta_map).mean())
        both = (result.var_delta_map > 0) & (base.var_delta_map > 0)
        ratio = result.var_delta_map[both] / base.var_delta_map[both]
        out["sd_ratio"] = float(np.median(np.sqrt(ratio)))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", type=int, nargs="+", default=[1, 2, 5])
    parser.add_argument("--depth", type=int, default=10, help="the judged pool's depth")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--quick", action="store_true", help="10 runs, 20 topics")
    parser.add_argument("--simulated", type=int, metavar="N",
                        help="a simulated campaign of N topics")  # fmt: skip
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    full = simulated(args.simulated) if args.simulated else load(args.quick)
    truth = ConfidenceEngine(estimand="qrels").confidence(full, None, method="normal").scores.e_map
    cut = full.pooled(args.depth)
    rows = []
    first = None  # one part at the first seed: a later seed's one part against it is the
    for seed in args.seeds:  # seed's own noise, the yardstick for the parts' changes
        base = None
        for parts in sorted(args.parts):
            started = time.process_time()
            result = compare_in_parts(cut, parts, seed=seed, n_draws=args.draws, progress=False)
            cpu = time.process_time() - started
            against = first if parts == 1 else base
            if parts == 1:
                base, first = result, first or result
            row = {"seed": seed, "parts": parts, "topics_per_part": cut.n_topics / parts,
                   **score(result, truth, against if against is not result else None),
                   "cpu_s": cpu}  # fmt: skip
            rows.append(row)
            print({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()},
                  flush=True)  # fmt: skip
    table = pd.DataFrame(rows)
    out = args.out / "quick" if args.quick else args.out
    out.mkdir(parents=True, exist_ok=True)
    stem = f"parts_simulated_{args.simulated}" if args.simulated else "parts"
    table.to_csv(out / f"{stem}.csv", index=False, float_format="%.4f")
    mean = table.groupby("parts").mean(numeric_only=True).drop(columns="seed").reset_index()
    (out / f"{stem}.md").write_text(mean.to_markdown(index=False, floatfmt=".4f") + "\n")
    print(mean.to_markdown(index=False, floatfmt=".4f"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
