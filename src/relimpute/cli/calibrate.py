"""``relimpute calibrate``: the reusability study of Carterette (2007, §4.3–4.4) on real runs."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

COMMAND = "calibrate"
HELP = "measure whether confidence is calibrated: trials, bins, W, τ, paired tests"
DESCRIPTION = """\
Run the reusability study of Carterette (2007, §4.3-4.4). Each trial draws k runs
(optionally one per group) and c initial ones, judges for the initial pair with a
selection strategy and an oracle from the full qrels until confidence alpha,
fits the strategy's relevance model on those judgments alone, and predicts
P(MAP_a > MAP_b) for every pair of the k runs. The report (markdown, CSV, JSON,
reliability diagram) compares confidence with accuracy: Table 2 per strategy, W,
ECE, Brier, log loss, Tables 3-4, and paired tests between strategies.

strategies: mtc (uniform prior), rtc (expert model, shipped settings), rtc-paper
(the paper's expert model), bayes (Bayesian hierarchy on the MTC judgments),
bayes-mc (the same, confidence by Monte Carlo over its posterior draws),
fusion-mc (the default answer: the MTC judgments generalised by the default
fusion model, confidence by Monte Carlo over its posterior draws), ip
(incremental pooling, as many judgments as mtc), or any SELECTOR+MODEL pair such
as mtc+rtc. Models named here take their shipped settings (models/NAME.json).

example:
  relimpute calibrate --runs DL19/runs --qrels DL19/qrels.txt --trials 200 \\
      --k 10 --c 2 --strategies mtc,rtc,fusion-mc --one-per-group DL19/groups.tsv -o out/
"""


def add_arguments(parser) -> None:
    parser.add_argument("--runs", required=True, nargs="+", help="run files or a directory of runs")
    parser.add_argument("--qrels", required=True, help="the full qrels (the oracle and the truth)")
    parser.add_argument("--trials", type=int, default=100, help="number of trials (default 100)")
    parser.add_argument("--k", type=int, default=10, help="runs per trial (default 10)")
    parser.add_argument("--c", type=int, default=2, help="initial runs per trial (default 2)")
    parser.add_argument(
        "--strategies", default="mtc,rtc,fusion-mc", help="comma-separated strategies (default %(default)s)"
    )
    parser.add_argument("--alpha", type=float, default=0.95, help="target confidence (default 0.95)")
    parser.add_argument("--depth", type=int, default=100, help="truncate runs at this rank (default 100; 0 = full)")
    parser.add_argument("--rel-threshold", type=int, default=2, help="minimum relevant grade (default 2)")
    parser.add_argument("--one-per-group", metavar="GROUPS.tsv", help="draw one run per group (TSV: run, group)")
    parser.add_argument("--cap", type=float, default=0.95, help="confidence cap of the capped tables (default 0.95)")
    parser.add_argument("--seed", type=int, default=None, help="study seed (trials are reproducible from it)")
    parser.add_argument("--jobs", type=int, default=1, help="parallel workers (-1 = all cores)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("-o", "--output", required=True, help="output folder for the report")


def run(args) -> int:
    from .._files import check_output_path
    from ..calibration import CalibrationReport, read_groups, run_study
    from ..calibration.strategies import resolve_strategies
    from ..calibration.trials import trial_specs
    from ..data import Campaign

    check_output_path(args.output, directory=True)  # before the study, not after it
    runs = args.runs[0] if len(args.runs) == 1 else args.runs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # topic-policy notes; kept in campaign.notes
        campaign = Campaign.from_files(args.qrels, runs, rel_threshold=args.rel_threshold)
    groups = read_groups(args.one_per_group) if args.one_per_group else None
    try:  # check the study's settings before any work
        resolve_strategies(args.strategies)
        trial_specs(campaign.systems, max(args.trials, 1), args.k, args.c, args.seed, groups)
        if args.trials < 1 or not 0.5 < args.alpha <= 1.0:
            raise ValueError("need --trials >= 1 and 0.5 < --alpha <= 1")
    except (KeyError, ValueError) as exc:
        print(f"relimpute calibrate: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    study = run_study(
        campaign,
        args.strategies,
        n_trials=args.trials,
        k=args.k,
        c=args.c,
        alpha=args.alpha,
        depth=args.depth or None,
        groups=groups,
        seed=args.seed,
        jobs=args.jobs,
        progress=not args.no_progress,
    )
    report = CalibrationReport.from_study(study, cap=args.cap)
    report.write(args.output, study=study)
    print(report.terminal_summary())
    print(f"\nreport written to {Path(args.output) / 'report.md'}")
    return 0
