"""A census of the top of the pool, a uniform sample below: do relimpute's HT intervals of MAP
and ΔMAP cover then?

The universe and the truth are ``study.py``'s (each topic's depth-100 pool, MAP with the whole
pool judged). The design, per topic: every document some run ranks in its top ``--census``
judged (π = 1, stratum 0), the rest of the budget (``--budget`` × the pool, over all topics)
drawn uniformly without replacement from the documents below, the same rate in every topic
(at least 2 per topic): StratifiedDesign's ``1-k:1.0,k+1-100:rate``, as xinfAP's TREC designs.
Each sampling's sample goes through ``relimpute.confidence.survey.estimate`` (HT, the
stratified jackknife, the ratio's bias correction: the package's defaults), and 40 seeded
pairs of runs give ΔMAP's rows.

    python examples/design_based/census.py trec8 --budget 0.10 --census 3 --samplings 15
    python examples/design_based/census.py dl19 --budget 0.10 --census 2 --samplings 30
"""

from __future__ import annotations

import argparse
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.confidence.survey import estimate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study import COLLECTIONS, Universe, load  # noqa: E402


def census_sample(universe: Universe, top: list, rate: float, rng) -> pd.DataFrame:
    """One sampling: the census strata judged, ``rate`` of each topic's rest drawn."""
    frames = []
    for t, census in zip(universe.topics, top):
        relevance = np.full(len(t["x"]), -1)
        relevance[census] = t["x"][census]
        below = np.flatnonzero(~census)
        n = min(max(2, int(round(rate * len(below)))), len(below))
        pick = rng.choice(below, size=n, replace=False)
        relevance[pick] = t["x"][pick]
        frames.append(pd.DataFrame({"query_id": t["query_id"], "doc_id": t["doc_ids"],
                                    "relevance": relevance, "stratum": np.where(census, 0, 1)}))
    return pd.concat(frames, ignore_index=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection", choices=sorted(COLLECTIONS))
    parser.add_argument("--budget", type=float, default=0.10, help="share of the pool judged")
    parser.add_argument("--census", type=int, default=3, help="depth judged in full")
    parser.add_argument("--samplings", type=int, default=15)
    parser.add_argument("--pairs", type=int, default=40)
    args = parser.parse_args(argv)
    campaign = load(args.collection)
    universe = Universe(campaign)
    systems = list(campaign.systems)
    runs = {s: campaign.run_frame(s) for s in systems}
    truth = universe.truth_map
    every = list(combinations(range(len(systems)), 2))
    chosen = np.random.default_rng(43).choice(len(every), min(args.pairs, len(every)),
                                              replace=False)
    pairs = [(systems[every[i][0]], systems[every[i][1]]) for i in chosen]
    truth_delta = np.array([truth[systems.index(a)] - truth[systems.index(b)] for a, b in pairs])
    top = [t["best"] <= args.census for t in universe.topics]
    in_census = sum(int(m.sum()) for m in top)
    rest = universe.pool_size * args.budget - in_census
    if rest <= 0:
        raise SystemExit(f"the depth-{args.census} census ({in_census} documents) exceeds the "
                         f"budget ({universe.pool_size * args.budget:.0f})")
    rate = rest / sum(int((~m).sum()) for m in top)
    print(f"{args.collection}: pool {universe.pool_size}, census of depth {args.census} "
          f"{in_census} documents, below it a uniform {rate:.4f}", flush=True)
    rng = np.random.default_rng(7)
    found = {k: [] for k in ("map", "low", "high", "delta", "d_low", "d_high", "judged")}
    for b in range(args.samplings):
        sample = census_sample(universe, top, rate, rng)
        table = estimate(sample, runs, rel_threshold=1, pairs=pairs)  # x is 0/1 already
        table = table[table["query_id"] == "all"]
        single = table[table["run_b"] == ""].set_index("run").loc[systems]
        paired = table[table["run_b"] != ""].set_index(["run", "run_b"]).loc[pairs]
        for key, column in (("map", "estimate"), ("low", "low"), ("high", "high")):
            found[key].append(single[column].to_numpy())
        for key, column in (("delta", "estimate"), ("d_low", "low"), ("d_high", "high")):
            found[key].append(paired[column].to_numpy())
        found["judged"].append(int((sample["relevance"] >= 0).sum()))
        covered = (found["low"][-1] <= truth) & (truth <= found["high"][-1])
        print(f"  sampling {b}: MAP intervals covering {covered.mean():.3f}", flush=True)
    f = {k: np.array(v) for k, v in found.items()}
    covered = (f["low"] <= truth) & (truth <= f["high"])
    d_covered = (f["d_low"] <= truth_delta) & (truth_delta <= f["d_high"])
    print(f"{args.collection}, {args.budget:.0%} (census depth {args.census}), {args.samplings} "
          f"samplings, {f['judged'].mean():.0f} of {universe.pool_size} judged: "
          f"MAP coverage {covered.mean():.3f}, mean |bias| of MAP "
          f"{np.abs(f['map'].mean(0) - truth).mean():.4f} (its Monte Carlo se "
          f"{(f['map'].std(0, ddof=1) / np.sqrt(args.samplings)).mean():.4f}), mean MAP width "
          f"{(f['high'] - f['low']).mean():.4f}; ΔMAP coverage {d_covered.mean():.3f} over "
          f"{len(pairs)} pairs, mean ΔMAP width {(f['d_high'] - f['d_low']).mean():.4f}")


if __name__ == "__main__":
    main()
