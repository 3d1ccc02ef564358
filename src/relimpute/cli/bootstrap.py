"""``relimpute bootstrap``: corpus-bootstrap intervals for AP, MAP and differences."""

from __future__ import annotations

import sys

from ..errors import InputError
from ._common import (
    add_campaign_arguments,
    add_parallel_arguments,
    add_study_output,
    check_study_output,
    add_seed_argument,
    check_run_names,
    integer_at_least,
    load_campaign,
    number_between,
)
from ._format import add_format_argument, emit
from ._vocabulary import add_choice_argument, add_confidence_argument, add_quiet_argument

COMMAND = "bootstrap"
HELP = "confidence intervals under corpus variation (Cormack & Lynam 2006): AP, MAP, L-MAP, A - B"
DESCRIPTION = """\
Resample the corpus (every retrieved document replicated Poisson(1) times in
place, R re-drawn) and report how much each score would move on a materially
similar corpus (Cormack & Lynam 2006). Unjudged documents count as nonrelevant.

  default       per system: MAP (parametric, logit variances weighted by
                AP - AP^2) and L-MAP (bootstrap) with their intervals
  --per-topic   per system and topic: AP and its interval (--method)
  --pair A B    A minus B on shared resamples, per topic and the mean, plus the
                fixed- and random-effects meta-analysis over topics (--scale);
                p_value: two-sided, of no difference, normal with that standard error
  --split       the paper's validation: split the documents in two by MD5 of
                the docno, intervals on one half, the other half's value
                below / in / above (the model predicts 83.5% in for 95%); --splits N
                adds N - 1 salted splits (--jobs / --scheduler run them in parallel);
                with -o OUT the study is a folder (OUT/split.tsv, its manifest and the
                finished splits): a stopped study goes on with the same command and
                --resume (and is never dropped without --overwrite)

examples:
  relimpute bootstrap qrels.txt runs/ --rel-threshold 2
  relimpute bootstrap qrels.txt runs/ --per-topic --method bca --small-r
  relimpute bootstrap qrels.txt runs/ --pair runA runB --scale logit
  relimpute bootstrap qrels.txt runs/ --split --resamples 2000 --format markdown

exit status: 0 on success, 2 on bad input (the message names file, line or option).
"""
# relimpute.precision.intervals.METHODS, named here so `relimpute --help` need not load numba
INTERVAL_METHODS = ("bca", "logit", "normal", "percentile")


def add_arguments(parser) -> None:
    add_campaign_arguments(parser)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--per-topic", action="store_true", help="AP intervals per system and topic")
    mode.add_argument(
        "--pair", dest="compare", nargs=2, metavar=("A", "B"), help="the difference of run A minus run B"
    )
    mode.add_argument("--split", action="store_true", help="the split-corpus validation table")
    parser.add_argument(
        "--resamples", "-B", type=integer_at_least(2), default=2000, help="bootstrap corpora (default: %(default)s)"
    )
    add_choice_argument(parser, "--method", INTERVAL_METHODS, "AP interval for --per-topic",
                        default="logit")  # fmt: skip
    parser.add_argument(
        "--small-r",
        action="store_true",
        help="widen intervals of AP near 0 or 1 to the silver-bullet / lead-balloon limits",
    )
    add_choice_argument(parser, "--scale", ("logit", "ap"), "scale of --pair differences")
    add_confidence_argument(parser, "confidence level of the intervals")
    parser.add_argument(
        "--epsilon",
        type=number_between(0, 0.5, open_interval=True),
        default=1e-3,
        help="nudging of AP = 0 and 1 before logit (default: %(default)s)",
    )
    parser.add_argument(
        "--splits", type=integer_at_least(1), default=1, metavar="N",
        help="with --split: the paper's split and N - 1 salted ones (MD5 of salt + docno), "
        "the table then one block per split (column split; 0 = the paper's); default 1",
    )  # fmt: skip
    add_parallel_arguments(parser, "splits of --split")
    add_study_output(parser, "split.tsv", "splits", only="with --split: ")
    add_quiet_argument(parser)
    add_seed_argument(parser, "the resamples")
    add_format_argument(parser)


def run(args) -> int:
    import numpy as np
    import pandas as pd

    from ..precision import (
        ap_intervals,
        corpus_bootstrap,
        mean_intervals,
        paired_difference,
        small_r_corrected,
    )

    split_only = ((args.output, "--output"), (args.resume, "--resume"), (args.overwrite, "--overwrite"))
    for given, option in split_only:
        if given and not args.split:
            raise InputError("goes with --split (the split-corpus study) only", option)
    check_study_output(args, "split.tsv")
    if args.compare and args.compare[0] == args.compare[1]:
        raise InputError(
            f"names run {args.compare[0]} twice: a run minus itself is 0 on every resample; "
            "give two different runs", "--pair",
        )  # fmt: skip
    if args.output:  # before the study, not after it
        from .._files import check_output_path

        check_output_path(args.output, directory=True)
    from ._requests import CampaignInputs

    campaign = load_campaign(CampaignInputs.from_args(args, COMMAND), COMMAND)
    if args.compare:
        check_run_names(args.compare, campaign.systems, "--pair")
    options = {"level": args.confidence, "epsilon": args.epsilon}
    if args.split:
        return _split(campaign, args, options)
    boot = corpus_bootstrap(campaign, args.resamples, rng=args.seed)
    if args.compare:
        diff = paired_difference(boot, *args.compare, scale=args.scale, **options)
        frame = pd.concat([diff.to_frame(), diff.summary_frame()], ignore_index=True)
        emit(frame, args.format)
        return 0
    if args.per_topic:
        intervals = ap_intervals(boot, args.method, **options)
        if args.small_r:
            depth = np.stack([t.depth for t in campaign.topics], axis=1)
            intervals = small_r_corrected(intervals, boot, depth)
        emit(intervals.to_frame(), args.format)
        return 0
    frames = [
        mean_intervals(boot, "MAP", "parametric", **options).to_frame(),
        mean_intervals(boot, "L-MAP", "bootstrap", **options).to_frame(),
    ]
    emit(pd.concat(frames, ignore_index=True), args.format)
    return 0


def _split(campaign, args, options) -> int:
    """``--split``: the split-corpus validation on --splits splits (one table, a block each)."""
    from ..precision.split import CorpusSplits, split_table
    from ..studies import run as run_study

    study = CorpusSplits(campaign, args.splits, args.resamples, seed=args.seed, options=options)
    results = run_study(study, args.output, jobs=args.jobs, scheduler=args.scheduler, resume=args.resume,
                        overwrite=args.overwrite, progress=not args.quiet)  # fmt: skip
    for number, result in enumerate(results):
        label = "" if args.splits == 1 else f"split {number}: "
        print(f"relimpute bootstrap: {label}{result}", file=sys.stderr)
        for row in result.variance_ratio().itertuples(index=False):
            print(
                f"relimpute bootstrap: {label}{row.measure} ({row.method}): observed / predicted "
                f"variance of the halves' difference {row.variance_ratio:.2f}",
                file=sys.stderr,
            )
    emit(split_table(results), args.format)
    return 0
