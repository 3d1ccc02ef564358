"""CPU time of a posterior-selector trial against an MTC and a fusion-mc trial (issue 24).

The calibration protocol of examples/posterior_selector/ (k = 10 runs, c = 2, depth 100, seed
2007, budget 300, the default model's settings chosen without the collection): each of the
first N trials (default 3) is run by ``run_trial`` once per strategy, ``mtc``, ``fusion-mc``
and ``posterior``, and the process CPU time of each is recorded (wall time on a shared machine
includes waiting for a core). The posterior selector's judging loop is split into its
model refits (the default model's fit and prediction on the judgments so far) and the Monte
Carlo of its stopping confidence at those refits; with ``--check-every N`` a fourth row per
trial runs the posterior selector checking its confidence every N judgments between refits
(``PosteriorSelection(check_every=N)``, the same random stream), whose checks are timed too;
with ``--update reweight --min-ess X`` another row runs it reweighting the refit's draws
between refits (``PosteriorSelection(update="reweight", min_ess=X)``, refits when the weights'
effective sample size falls below X times the draws), and with ``--confirm`` it refits at a
check's candidate stop and stops only on the refit's confidence (``confirm=True``).
Target (issue 24): a posterior trial ≤ 2× an MTC trial. Writes
``benchmarks/results/posterior_selector.{json,md}``.

    python benchmarks/bench_posterior_selector.py [--collection dl19] [--trials 3] [--check-every 1]
        [--update reweight --min-ess 0.5 [--fixed-refits] [--confirm]]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from _run_info import machine, utc_now

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
COLLECTIONS = {
    "dl19": ("trec-dl-2019-passage", 2),
    "dl21": ("trec-dl-2021-passage", 2),
    "trec8": ("trec-8-adhoc", 1),
}
STRATEGIES = ("mtc", "fusion-mc", "posterior")


class _Clock:
    """CPU seconds spent in the posterior selector's refits, in its Monte Carlo at them and
    in its checks between them."""

    KEYS = {"_refit": "refit", "_posterior_confidence": "monte_carlo", "_check": "check"}

    def __init__(self):
        from relimpute.selection.posterior import PosteriorSelection

        self.cls, self.spent = PosteriorSelection, dict.fromkeys(self.KEYS.values(), 0.0)
        for method, key in self.KEYS.items():
            setattr(self.cls, method, self._timed(getattr(self.cls, method), key))

    def _timed(self, method, key):
        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                self.spent[key] += time.process_time() - start

        return timed

    def reset(self) -> None:
        self.spent.update(dict.fromkeys(self.KEYS.values(), 0.0))


def main(argv: list[str] | None = None) -> None:
    from relimpute import Campaign
    from relimpute.calibration.strategies import get_calibration_strategy, with_settings_from
    from relimpute.calibration.trials import run_trial, trial_specs
    from relimpute.groups import read_groups

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", choices=sorted(COLLECTIONS), default="dl19")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--check-every", type=int, help="add the posterior selector with checks")
    parser.add_argument("--update", choices=("reweight",), help="add the posterior selector reweighting")
    parser.add_argument("--min-ess", type=float, default=0.5, help="with --update reweight")
    parser.add_argument("--fixed-refits", action="store_true",
                        help="with --update reweight: refit every 10 judgments, not on the ESS")
    parser.add_argument("--confirm", action="store_true",
                        help="with --update reweight: refit at a candidate stop (confirm=True)")
    args = parser.parse_args(argv)
    folder, threshold = COLLECTIONS[args.collection]
    data = ROOT.parent / "shared" / "data" / folder
    if not data.is_dir():
        print(f"skipped: {data} not found (see examples/README.md)")
        return
    info = machine()
    campaign = Campaign.from_files(data / "qrels.txt", data / "runs", rel_threshold=threshold)
    base = campaign.truncated(100, shrink=True)
    groups = read_groups(data / "groups.tsv").run_to_group()
    specs = trial_specs(base.systems, args.trials, 10, 2, 2007, groups)
    held_out = ROOT / "examples" / "calibration" / "held_out" / args.collection
    strategies = list(with_settings_from([get_calibration_strategy(s) for s in STRATEGIES], held_out))
    labels = list(STRATEGIES)
    if args.check_every is not None:  # the same strategy (name, random stream), checking between refits
        posterior = strategies[-1]
        params = {**posterior.selector_params, "check_every": args.check_every}
        strategies.append(replace(posterior, selector_params=params))
        labels.append(f"posterior, check_every={args.check_every}")
    if args.update is not None:
        posterior = strategies[2]
        params = {**posterior.selector_params, "update": args.update, "min_ess": args.min_ess,
                  "ess_refits": not args.fixed_refits, "confirm": args.confirm}  # fmt: skip
        strategies.append(replace(posterior, selector_params=params))
        labels.append(f"posterior, {args.update}, min_ess={args.min_ess:g}"
                      + (", refits every 10" if args.fixed_refits else "")
                      + (", confirm" if args.confirm else ""))
    clock = _Clock()
    run_trial(base, specs[0], strategies[:2], max_judgments=300)  # numba's compile and caches, not timed
    rows = []
    for spec in specs:
        for label, strategy in zip(labels, strategies):
            clock.reset()
            start = time.process_time()
            _, trial = run_trial(base, spec, [strategy], max_judgments=300)
            rows.append({
                "trial": spec.trial, "strategy": label, "cpu_s": time.process_time() - start,
                "judgments": int(trial["judgments"].iloc[0]), "stopped": trial["stopped_because"].iloc[0],
                **({"fit_cpu_s": clock.spent["refit"] - clock.spent["monte_carlo"],  # refit calls the MC
                    "monte_carlo_cpu_s": clock.spent["monte_carlo"],
                    "check_cpu_s": clock.spent["check"]} if strategy.name == "posterior" else {}),
            })  # fmt: skip
            print(rows[-1], flush=True)
    medians = {s: float(np.median([r["cpu_s"] for r in rows if r["strategy"] == s])) for s in labels}
    ratio = medians["posterior"] / medians["mtc"]
    ratios = {label: medians[label] / medians["mtc"] for label in labels[2:]}
    result = {"date": utc_now(), "machine": info, "collection": args.collection, "trials": rows,
              "median_cpu_s": medians, "posterior_over_mtc": ratio, "over_mtc": ratios, "target_ratio": 2.0, "met": min(ratios.values()) <= 2.0}  # fmt: skip
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = "posterior_selector" if args.collection == "dl19" else f"posterior_selector_{args.collection}"
    stem += "_reweight" if args.update is not None else ""
    stem += "_every10" if args.update is not None and args.fixed_refits else ""
    stem += "_confirm" if args.update is not None and args.confirm else ""
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        f"# A posterior-selector trial against MTC and fusion-mc ({folder}), CPU seconds", "",
        f"`python benchmarks/bench_posterior_selector.py --collection {args.collection} --trials {args.trials}"
        + ("" if args.check_every is None else f" --check-every {args.check_every}")
        + ("" if args.update is None else f" --update {args.update} --min-ess {args.min_ess:g}")
        + (" --fixed-refits" if args.fixed_refits else "") + (" --confirm" if args.confirm else "") + "`"
        f" ({result['date']}, load {info['load_average_1min']} on {info['cpus']} CPUs). One process;",
        "model fit and Monte Carlo are the posterior selector's judging loop (its refits, and the",
        "Monte Carlo of its stopping confidence at them; checks: between refits); the rest of",
        "its trial is the generalisation to the 10 runs that fusion-mc also does.", "",
        "| trial | strategy | judgments | stopped | CPU s | model fit CPU s | Monte Carlo CPU s | checks CPU s |",
        "|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in rows:
        parts = [f"{r[k]:.2f}" if k in r else "" for k in ("fit_cpu_s", "monte_carlo_cpu_s", "check_cpu_s")]
        lines.append(f"| {r['trial']} | {r['strategy']} | {r['judgments']} | {r['stopped']} | {r['cpu_s']:.2f} | " + " | ".join(parts) + " |")
    lines += ["", "Median CPU s per trial: " + ", ".join(f"{s} {v:.2f}" for s, v in medians.items())
              + "; " + ", ".join(f"{k} / mtc = {v:.1f}" for k, v in ratios.items())
              + f" (target ≤ 2: {'met' if result['met'] else 'not met'})."]  # fmt: skip
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
