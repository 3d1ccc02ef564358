"""``relimpute power``: power and bias of pooling strategies against judging effort."""

from __future__ import annotations

import sys

from ..errors import InputError
from ._common import (
    add_campaign_arguments,
    add_parallel_arguments,
    add_study_output,
    check_study_output,
    add_seed_argument,
    finite_at_least,
    flag_names,
    load_campaign,
    output_file,
    positive_int,
    positive_int_list,
)
from ._format import add_format_argument, emit
from ._vocabulary import (
    add_confidence_argument,
    add_groups_argument,
    add_measure_argument,
    add_quiet_argument,
)

COMMAND = "power"
HELP = "power and bias of depth-k and move-to-front pools vs judgments; plan a judging budget"
DESCRIPTION = """\
Treat the judgments of QRELS as the gold standard and replay cheaper designs
(Cormack & Lynam 2007): pools of depth k (or move-to-front with the same
number of judgments per topic) on n random topics. For every pair of runs a
paired t-test over the n topics: power = share with p < alpha (alpha = 1 -
--confidence), bias = share
of those whose sign disagrees with the gold MAP; Kendall tau beside them.

Prints the curves (one row per strategy, measure, depth and number of
topics). With --budget, prints instead the designs that fit the budget with
bias below alpha, most powerful first (the planning answer).

examples:
  relimpute power qrels.txt runs/ --groups groups.tsv --pool-depth 1,2,5,10,20,50,100 \\
      --n-topics 10,25,50 --output curves --plot curves.png
  relimpute power qrels.txt runs/ --rel-threshold 2 --pool-depth 1,2,5,10 --budget 2000

exit status: 0 on success, 2 on bad input (too few topics, a budget below one
topic's pool, unknown runs: the message names the option).
With --output OUT the study is a folder: OUT/curves.tsv, OUT/manifest.json naming
the study, and each finished design in OUT/.resume/; a stopped study goes on
with the same command and --resume, and a folder holding a study is never
dropped without --overwrite. Plan again from saved curves with
`relimpute plan OUT/curves.tsv --budget N`.
"""


PLOT_SUFFIXES = (".png", ".pdf", ".svg")
# relimpute.precision.power.MEASURES, named here so `relimpute --help` need not load it
MEASURES = ("MAP", "P@k")


def add_arguments(parser) -> None:
    add_campaign_arguments(parser)
    parser.add_argument(
        "--pool-depth",
        dest="depths",
        type=positive_int_list,
        default="1,2,5,10,20,50,100",
        metavar="K,K,...",
        help="pool depths (default: %(default)s)",
    )
    parser.add_argument(
        "--n-topics",
        dest="topics",
        type=positive_int_list,
        default=None,
        metavar="N,N,...",
        help="numbers of topics, e.g. 10,25,50 (default: quarters)",
    )
    parser.add_argument(
        "--strategies",
        default="depth,mtf",
        help="depth, mtf, mtc (default: %(default)s; mtc is slower, ~130 judgments/s on TREC-8)",
    )
    add_measure_argument(
        parser,
        "a measure (as evaluate -m) or P@k, precision at the pool depth; repeat for more "
        f"(default: {' '.join(MEASURES)})",
    )
    add_groups_argument(
        parser, "pooled_from", "pool only the runs marked pooled=yes (default: all runs)"
    )
    parser.add_argument(
        "--repetitions",
        type=positive_int,
        default=20,
        help="random topic subsets per size (default: %(default)s)",
    )
    add_confidence_argument(parser, "a pair differs when its t-test has p < 1 - this")
    parser.add_argument(
        "--budget", type=finite_at_least(0), default=None, help="plan: total judgments available"
    )
    add_study_output(parser, "curves.tsv", "designs")
    add_quiet_argument(parser)
    parser.add_argument(
        "--plot",
        type=output_file(*PLOT_SUFFIXES),
        metavar="FILE.png",
        help="draw power and bias against judgments (.png, .pdf or .svg)",
    )
    add_seed_argument(parser, "the topic subsets")
    add_parallel_arguments(parser, "designs (strategy x measure x depth)")
    add_format_argument(parser)


def _pooled_runs(path: str, systems) -> list[str]:
    from ..groups import read_groups

    pooled = list(read_groups(path, need_group=False).pooled_runs())
    unknown = sorted(set(pooled) - set(systems))
    if unknown:
        raise InputError(f"pooled runs {unknown[:5]} are not among the runs given", path)
    if len(pooled) < 2:
        raise InputError(
            f"{len(pooled) or 'no'} run(s) marked pooled: the pool needs at least two", path
        )
    return pooled


def _alpha(args) -> float:
    """The significance level, 1 - --confidence (rounded: 0.95 gives 0.05, not 0.050000000000000044)."""
    return round(1.0 - args.confidence, 12)


def run(args) -> int:
    from .._files import check_figure_path, check_output_path
    from ..precision.power import PowerGrid
    from ..studies import run as run_study

    check_study_output(args, "curves.tsv")
    if args.output:  # before the study, not after it
        check_output_path(args.output, directory=True)
    if args.plot:
        check_figure_path(args.plot)
    from ._requests import CampaignInputs

    campaign = load_campaign(CampaignInputs.from_args(args, COMMAND), COMMAND)
    pooled = _pooled_runs(args.pooled_from, campaign.systems) if args.pooled_from else None
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    flags = {"depths": "--pool-depth", "topic_counts": "--n-topics", "alpha": "--confidence", "measures": "-m"}
    with flag_names(**flags):
        study = PowerGrid(campaign, depths=tuple(args.depths), topic_counts=args.topics,
                          strategies=tuple(strategies), measures=tuple(args.measures or MEASURES),
                          pool_systems=pooled, repetitions=args.repetitions, alpha=_alpha(args),
                          seed=args.seed)  # fmt: skip
        result = run_study(study, args.output, jobs=args.jobs, scheduler=args.scheduler,
                           resume=args.resume, overwrite=args.overwrite, progress=not args.quiet)  # fmt: skip
    print(f"relimpute power: {result}", file=sys.stderr)
    if args.plot:
        from ..precision.power_plots import plot_power_curves

        plot_power_curves(result.curves, args.plot, alpha=_alpha(args))
    if args.budget is not None:
        from .plan import show_plan

        show_plan(result.plan(args.budget), args.budget, _alpha(args), args.format, COMMAND)
    else:
        emit(result.curves, args.format)
    return 0
