"""``relimpute poolbias``: the leave-one-group-out pool-bias study on real runs."""

from __future__ import annotations

import sys

from ._common import (
    add_campaign_arguments,
    add_parallel_arguments,
    add_resume_arguments,
    add_seed_argument,
    finite_at_least,
    flag_names,
    integer_at_least,
    load_campaign,
    output_folder,
    positive_int,
)
from ._format import add_format_argument, emit
from ._estimand import refuse_estimand
from ._vocabulary import (
    add_estimand_argument,
    add_groups_argument,
    add_mc_draws_argument,
    add_measure_argument,
    add_quiet_argument,
)

COMMAND = "poolbias"
HELP = "leave-one-group-out pool-bias study: correct unpooled scores, report MAE, SRE, SRE*, tau"
DESCRIPTION = """\
Take each group's pooled runs out of the depth-k pool of the pooled runs
(groups.tsv: run, group, pooled), score them against the reduced pool, correct
the scores with each corrector, and compare with their full-pool scores
(Lipani et al. 2016 §4; Webber & Park 2009 §3). Reports MAE, system rank error
(SRE), SRE* (only swaps significant by a paired t-test, p < 0.05), Kendall's
tau-b and, for correctors with intervals, their coverage; with and without the
bottom 25% of runs, and the left-out runs' bias binned by their hole fraction
(the share of their top 100 unjudged once out of the pool). Writes estimates.tsv,
metrics.tsv, slices.tsv and metrics.md to OUT,
with manifest.json naming the study; each finished group is kept in
OUT/.resume/, so a stopped study goes on with the same command and --resume
(metrics.md begins with an UNFINISHED line until then). A folder holding a
study is never cleared unasked: without --resume the command is refused there,
unless the study is this one and complete, or --overwrite starts afresh.

correctors: reduced, condensed, webber-park (Algorithm 1), lipani (2016, P@n),
anti-precision (Lipani 2015, P@n); webber-park-topics (Algorithm 2) runs with
--common-topics N > 0; --model NAME adds relimpute's model-based correction
(one model fit per group: slow).

example:
  relimpute poolbias trec8/qrels.txt trec8/runs --groups trec8/groups.tsv --pool-depth 10 -o out/
"""

# relimpute.bias.STUDY_MEASURES, named here so `relimpute poolbias --help` need not load it
STUDY_MEASURES = ("P@5", "P@10", "P@20", "RBP(p=0.8)", "AP", "nDCG@10")


def add_arguments(parser) -> None:
    add_campaign_arguments(parser)
    add_groups_argument(parser, "groups", "the pooled runs and their groups", required=True)
    parser.add_argument(
        "--pool-depth",
        dest="depth",
        type=positive_int,
        required=True,
        metavar="K",
        help="pool depth k (e.g. 10, or the official 100)",
    )
    add_estimand_argument(
        parser, default="pool", what=" the correctors estimate (pool only: the full-pool score)"
    )
    add_measure_argument(parser, f"a measure; repeat for more (default: {' '.join(STUDY_MEASURES)})")
    parser.add_argument(
        "--correctors",
        default="reduced,condensed,webber-park,lipani,anti-precision",
        help="comma-separated correctors (default %(default)s)",
    )
    parser.add_argument(
        "--model",
        "-M",
        action="append",
        default=[],
        metavar="NAME|PATH",
        help="add a model-based corrector with this relevance model; repeat for more",
    )
    parser.add_argument(
        "--group-sd",
        type=finite_at_least(0),
        action="append",
        default=None,
        metavar="SD",
        help="between-group spread of the model-based correction's log-odds (repeatable: "
        "one row per spread, the fit shared; default: the shipped value)",
    )
    parser.add_argument(
        "--common-topics",
        type=integer_at_least(0),
        default=10,
        metavar="N",
        help="common topics of Algorithm 2 (0 = off; default 10)",
    )
    parser.add_argument(
        "--common-repeats",
        type=positive_int,
        default=20,
        help="random common-topic sets per run (default 20)",
    )
    add_mc_draws_argument(
        parser, "Monte Carlo draws of the model-based corrector", default=1000, dest="draws"
    )
    parser.add_argument(
        "--leave",
        choices=("group", "run"),
        default="group",
        help="leave each group's pooled runs out of the pool (new systems; the default), or each "
        "pooled run alone, its group's other runs still pooled (variants of pooled systems)",
    )
    add_seed_argument(parser, "Algorithm 2's topic draws and the models", default=0)
    add_parallel_arguments(parser, "groups")
    add_format_argument(parser)
    parser.add_argument("-o", "--output", required=True, metavar="OUT", type=output_folder,
                        help="output folder")  # fmt: skip
    add_resume_arguments(
        parser,
        "go on with the study a stopped run left in OUT: the groups it finished are kept "
        "(each is saved there as it ends), the others run, and the tables are the ones an "
        "uninterrupted run writes; refused if OUT holds another study (other runs, qrels, "
        "groups or options, --seed included)",
        "start afresh in OUT though it holds a study (another one, or this one unfinished): "
        "its finished groups are dropped and its tables replaced; without --resume or this, "
        "such a folder is refused and nothing is lost",
    )
    add_quiet_argument(parser)


def run(args) -> int:
    from pathlib import Path

    from .._files import check_output_path
    from ..bias import available_correctors, read_groups
    from ..bias.study import LeaveOneGroupOut
    from ..confidence.estimands import describe
    from ..errors import InputError
    from ..measures import parse_measures
    from ..relevance import load_settings
    from ..studies import run as run_study

    refuse_estimand(
        args.estimand, COMMAND, ("pool",),
        "its correctors estimate each left-out run's full-pool score (use evaluate or compare)",
    )  # fmt: skip
    check_output_path(args.output, directory=True)  # before the study, not after it
    groups = read_groups(args.groups)
    correctors = [c.strip() for c in args.correctors.split(",") if c.strip()]
    unknown = [
        c
        for c in correctors
        if c not in available_correctors() or c in ("model", "webber-park-topics")
    ]
    if unknown:
        raise InputError(
            f"unknown {unknown}; choose from reduced, condensed, webber-park, lipani, "
            "anti-precision (use --model and --common-topics for the others)",
            "--correctors",
        )
    try:
        measures = parse_measures(args.measures or STUDY_MEASURES)
    except ValueError as exc:
        raise InputError(str(exc), "--measure") from None
    for name in args.model:  # an unknown model or a bad settings file fails before any work
        load_settings(name)
    from ._requests import CampaignInputs

    campaign = load_campaign(CampaignInputs.from_args(args, COMMAND), COMMAND)
    campaign = _without_unpooled_groups(campaign, groups)
    with flag_names(pool_depth="--pool-depth", n_common="--common-topics", leave="--leave"):
        study = LeaveOneGroupOut(
            campaign, groups, pool_depth=args.depth, measures=measures, correctors=tuple(correctors),
            models=tuple(args.model), group_sds=args.group_sd, n_common=args.common_topics,
            common_repeats=args.common_repeats, n_draws=args.draws, seed=args.seed, leave=args.leave,
        )  # fmt: skip
    result = run_study(study, args.output, jobs=args.jobs, scheduler=args.scheduler, resume=args.resume,
                       overwrite=args.overwrite, progress=not args.quiet)  # fmt: skip
    title = describe("pool", pool_depth=args.depth) + ": the correctors' target"
    emit(result.metrics, args.format, title=title)
    names = ["estimates", "metrics"] + [n for n in ("slices", "pair_slices") if not getattr(result, n).empty]
    paths = [Path(args.output) / f"{name}.tsv" for name in names] + [Path(args.output) / "metrics.md"]
    print(f"relimpute poolbias: wrote {', '.join(map(str, paths))}", file=sys.stderr)
    return 0


def _without_unpooled_groups(campaign, groups):
    """The campaign without the runs of groups that put no run in the pool, said on stderr.

    Their runs were never in the pool, so leaving their group out changes nothing: a
    collection's full set of runs and its groups.tsv is the natural call.
    """
    groups.check_runs(campaign.systems)
    dropped = groups.unpooled_groups(campaign.systems)
    if not dropped:
        return campaign
    kept = [r for r in campaign.systems if groups.group_of(r) not in set(dropped)]
    shown = ", ".join(dropped[:10]) + (", ..." if len(dropped) > 10 else "")
    print(
        f"relimpute poolbias: note: left {len(dropped)} group(s) with no pooled run out of the "
        f"study ({len(campaign.systems) - len(kept)} run(s) never in the pool): {shown}",
        file=sys.stderr,
    )
    return campaign.subset(kept) if kept else campaign
