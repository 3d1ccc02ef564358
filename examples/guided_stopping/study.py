"""Judging a model-guided sample and stopping early: does the interval at the stop still cover?

For each pair of runs a campaign is judged as `judge --design guided --looks K` judges it:
no judgment to start with; the default model fitted on that draws π ∝ its uncertainty about
each document's weight in ΔAP (budget 300 expected over the pair's depth-100 pool, floor
0.01); the drawn documents are answered by an oracle (the truth) in the order of their entry
U/π, so a look at fraction f of the design is the Poisson sample with π · f. At every look of
a grid the model-assisted (GREG) estimate of ΔMAP and its linearised se are read
(relimpute.confidence.survey, the model's p as control variate; se by the delete-one
jackknife). Stopping rules are then
replayed on the same looks:

- fixed: no stopping, the 95% interval of the whole design;
- naive: 4 looks (at 25, 50, 75, 100% of the design), each 95%, stop at the first interval
  that excludes 0;
- Bonferroni: the same 4 looks, each at 1 − 0.05/4 (relimpute.selection.looks.Looks), stop
  likewise.

Coverage: the interval reported at the stop contains the pair's ΔMAP with every document of
its universe (the pair's depth-100 pool) judged. Judgments: the documents answered by the
stop. Collections: DL 2019 on the 20 trials' initial pairs of examples/posterior_selector
(seed 2007, k = 10 runs one per group, runs cut at 100; the model's settings chosen without
DL 2019; unjudged documents of the qrels answered nonrelevant), and a synthetic campaign
(relimpute.simulate, complete qrels) on 12 random pairs and on its 12 closest pairs.

    python examples/guided_stopping/study.py dl19 --draws 12        # 240 trials
    python examples/guided_stopping/study.py synthetic --draws 20   # 240 trials
    python examples/guided_stopping/study.py close --draws 25       # 300 trials
    python examples/guided_stopping/study.py dl19 --draws 6 --budget 1000   # 120 trials
    python examples/guided_stopping/summarize.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "posterior_selector"))

BUDGET, DEPTH, FLOOR, SEED = 300, 100, 0.01, 43
#: every look any rule reads: the quarters of the design
GRID = (0.25, 0.5, 0.75, 1.0)


def dl19_pairs(trials: int):
    """(full campaign, hidden campaign, pair, model settings) of the posterior_selector trials."""
    from _protocol import C, K, SEED as PROTOCOL_SEED, held_out, load
    from relimpute.calibration.trials import trial_specs

    campaign, groups = load("dl19")
    base = campaign.truncated(DEPTH, shrink=True)
    for spec in trial_specs(base.systems, trials, K, C, PROTOCOL_SEED, groups):
        full = base.subset(list(spec.systems))
        yield spec.trial, full, tuple(spec.initial), str(held_out("dl19") / "fusion.json")


def synthetic_pairs(trials: int):
    """A synthetic campaign (25 topics, 8 runs of 100, 1000 documents a topic), 12 pairs."""
    from relimpute.simulate import simulate_campaign

    full = simulate_campaign(n_topics=25, n_systems=8, n_docs=1000, depth=DEPTH, rng=SEED).campaign
    rng = np.random.default_rng(SEED)
    every = [(a, b) for i, a in enumerate(full.systems) for b in full.systems[i + 1:]]
    for trial, k in enumerate(rng.choice(len(every), size=min(trials, len(every)), replace=False)):
        yield trial, full, every[k], "fusion"


def close_pairs(trials: int):
    """The synthetic campaign's 12 pairs closest in MAP with complete qrels (the hard case of
    optional stopping: an interval near 0 crosses it by chance)."""
    from relimpute.calibration.trials import true_map

    full = next(synthetic_pairs(1))[1]
    score = true_map(full)
    every = [(a, b) for i, a in enumerate(full.systems) for b in full.systems[i + 1:]]
    every.sort(key=lambda pair: abs(score[pair[0]] - score[pair[1]]))
    for trial, pair in enumerate(every[:trials]):
        yield trial, full, pair, "fusion"


def pair_looks(full, pair, model, draws: int, seed: int, budget: int = BUDGET) -> list[dict]:
    """One row per draw and look of the grid (module docstring)."""
    from relimpute.confidence.survey import controls, run_ranks, topic_estimate, topic_samples
    from relimpute.selection.designs import ModelGuidedDesign, poisson_draw
    from relimpute.selection.guided import fit_model, guided_uncertainty
    from relimpute.selection.looks import look_sample

    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    rng = np.random.default_rng(seed)
    estimate = fit_model(hidden, model, rng)
    design = ModelGuidedDesign(budget, DEPTH, FLOOR, model, pairs=[pair], floor_share=0.0)
    universe = design.universe(hidden, rng, systems=pair, estimate=estimate)
    grade = {(t.query_id, d): int(g) if j else 0
             for t in full.topics for d, g, j in zip(t.doc_ids.astype(str), t.grades, t.judged)}
    truth = np.array([grade[q, d] for q, d in zip(universe["query_id"], universe["doc_id"])])
    control = guided_uncertainty(hidden, estimate, pair, DEPTH, [pair])[["query_id", "doc_id", "p"]]
    complete = topic_samples(universe.assign(relevance=truth, inclusion=1.0), "poisson")
    ranks = {name: run_ranks(full.run_frame(name), complete) for name in pair}
    preds = controls(complete, control)
    a, b = pair

    def delta(samples, estimator, variance):
        per = [topic_estimate(samples[t], "AP", [ranks[a][t], ranks[b][t]], preds[t], estimator,
                              full.rel_threshold, variance) for t in samples]  # fmt: skip
        return np.mean([p[0] for p in per]), np.sqrt(sum(p[1] for p in per)) / len(per)

    true_delta, _ = delta(complete, "ht", "linearised")
    rows = []
    for k in range(draws):
        drawn = poisson_draw(universe, np.random.default_rng([seed, k]))
        drawn = drawn.assign(relevance=np.where(drawn["drawn"], truth, -1))
        for f in GRID:
            look = look_sample(drawn, f)
            samples = topic_samples(look, "poisson")
            value, se = delta(samples, "model-assisted", "jackknife")
            rows.append({"draw": k, "fraction": f, "judged": int(look["drawn"].sum()),
                         "empty_topics": sum(s.n_judged == 0 for s in samples.values()),
                         "estimate": value, "se": se,
                         "true_delta": true_delta})  # fmt: skip
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", choices=("dl19", "synthetic", "close"))
    parser.add_argument("--trials", type=int, default=None, help="pairs (dl19 20, synthetic 12)")
    parser.add_argument("--draws", type=int, default=12, help="design draws per pair")
    parser.add_argument("--budget", type=int, default=BUDGET, help="judgments expected")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    suffix = "" if args.budget == BUDGET else f"_b{args.budget}"
    out = args.out or HERE / "results" / f"looks_{args.collection}{suffix}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    every = {"dl19": dl19_pairs, "synthetic": synthetic_pairs, "close": close_pairs}
    pairs = every[args.collection]
    frames = []
    for trial, full, pair, model in pairs(args.trials or (20 if args.collection == "dl19" else 12)):
        start = time.process_time()
        rows = pair_looks(full, pair, model, args.draws, SEED * 1000 + trial, args.budget)
        frame = pd.DataFrame(rows).assign(trial=trial, system_a=pair[0], system_b=pair[1])
        frames.append(frame)
        pd.concat(frames).to_csv(out, index=False, float_format="%.6g")
        print(f"trial {trial}: {pair[0]} - {pair[1]}, "
              f"true ΔMAP {frame['true_delta'].iloc[0]:+.4f}, "
              f"{time.process_time() - start:.0f} s", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
