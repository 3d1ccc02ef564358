"""``relimpute newrun``: can a new run be trusted on these qrels, and where does it rank?"""

from __future__ import annotations

import sys

from ._common import (
    add_campaign_arguments,
    add_model_argument,
    add_seed_argument,
    integer_at_least,
    load_campaign,
    measure_option,
    output_file,
)
from ._format import add_format_argument, emit
from ._labels import add_llm_labels_argument
from ._vocabulary import (
    add_confidence_argument,
    add_mc_draws_argument,
    add_estimand_argument,
    add_pool_depth_argument,
    add_quiet_argument,
)

COMMAND = "newrun"
HELP = "check new runs against the official runs: judged share, E[MAP], interval, rank"
DESCRIPTION = """\
For each new run (--new FILE, a run that did not build the pool), print the
share of its top 10 and top 100 the qrels judge, its MAP as trec_eval scores
it (unjudged = nonrelevant), E[MAP] with a --confidence interval, its rank
among the official runs (RUN...) as a 90% interval, P(it beats each of the
--top best official runs), and a verdict in words. E[MAP] is by default the
pool estimand (docs: which-map.md): the MAP the run would have had, had it
been pooled with the official runs to the pool depth (--pool-depth K, else
the depth the judgments show), the number the official runs' published
scores are; --estimand complete gives the MAP once every retrieved document
is judged. The relevance of the unjudged documents comes from the default
model (or --model, --llm-labels), fitted to the qrels with the new runs'
rankings as evidence; the documents only the new runs found share one
log-odds shift per draw (the model can be wrong about them all at once).
Every number is one Monte Carlo pass over the model's posterior draws, so the
rank interval and the P(beats) agree with one another. Every qrels topic
counts (trec_eval -c). A score is called reliable when its interval's half
width is at most 0.02 (docs: new-runs.md). With --llm-labels, a new run whose
ranking follows the labels far more closely than any official run's (the
share of its top 100's labelled pairs it ranks higher label first, more than
0.1 above every official run's) is named in a warning: the labels' model
overrates a run built from them, so check it without --llm-labels too.
"""
EPILOG = """\
examples:
  relimpute newrun qrels.txt runs/ --new mine.run --rel-threshold 2
  relimpute newrun qrels.txt runs/ --new a.run --new b.run --plot ranks.png -f tsv

exit status: 0 on success, 2 on bad input (the message names file and line).
"""

#: the central interval of the rank distribution
RANK_CONFIDENCE = 0.9


def add_arguments(parser) -> None:
    parser.epilog = EPILOG
    add_campaign_arguments(parser)
    parser.add_argument(
        "--new",
        action="append",
        required=True,
        metavar="FILE",
        help="a new run to check against the official runs RUN... (repeat for more)",
    )
    parser.add_argument(
        "-m", "--measure", type=lambda text: str(measure_option(text)), default="AP",
        metavar="MEASURE", help="the measure (default: %(default)s, i.e. MAP)",
    )  # fmt: skip
    add_model_argument(parser, None)
    add_llm_labels_argument(parser)
    add_seed_argument(parser, "the model's fit and the Monte Carlo draws")
    add_confidence_argument(parser, "confidence level of the score's interval")
    add_estimand_argument(parser, choices=("pool", "complete"), default="pool")
    add_pool_depth_argument(parser)
    parser.add_argument(
        "--top", type=integer_at_least(0), default=3, metavar="K",
        help="P(beats) each of the K best official runs (default: %(default)s)",
    )  # fmt: skip
    add_mc_draws_argument(parser, "Monte Carlo draws of the scores, joint across runs")
    parser.add_argument(
        "--plot", type=output_file(".png", ".svg", ".pdf"), default=None, metavar="FILE",
        help="draw each new run's rank distribution into FILE (.png, .svg or .pdf)",
    )  # fmt: skip
    add_quiet_argument(parser)
    add_format_argument(parser)


def check_new_files(args) -> tuple[list[str], list[str]]:
    """The new runs' names and the files to read besides RUN... (a new run that is one of
    RUN... is checked against the others, not read twice); an error naming the file when one
    is empty, a directory or has the name of another official run."""
    from pathlib import Path

    from ..errors import InputError
    from ..io import run_files, run_name

    official = {name: path for name, path in run_files(args.runs, [])}
    names, extra = [], []
    for path in args.new:
        if Path(path).is_dir():
            raise InputError("a new run is one run file, not a directory", path)
        if not Path(path).is_file():
            raise InputError("no such run file", path)
        if Path(path).stat().st_size == 0:
            raise InputError("the run file is empty", path)
        name = run_name(path)
        if name in names:
            raise InputError(f"two new runs are both named {name!r}", path)
        names.append(name)
        if name not in official:
            extra.append(path)
        elif Path(official[name]).resolve() != Path(path).resolve():
            raise InputError(
                f"a new run named {name!r}, as the official run {official[name]}: rename one "
                "of the files (a run's name is its file name)", path,
            )  # fmt: skip
    return names, extra


def run(args) -> int:
    from ..measures import parse_measure
    from ..bias.newrun import check_new_runs
    from ._relevance import relevance_estimate

    from ._requests import CampaignInputs, Estimand, RelevanceSource

    Estimand.from_args(args).check()
    new, extra = check_new_files(args)
    args.runs = list(args.runs) + extra
    args.estimate, args.intervals = None, True  # what the model path of evaluate reads
    campaign = load_campaign(CampaignInputs.from_args(args, COMMAND), COMMAND)
    _check_topics(campaign, new, args.new)
    estimate = relevance_estimate(RelevanceSource.from_args(args), campaign,
                                  [parse_measure(args.measure)], COMMAND, args.seed)
    check = check_new_runs(
        campaign, new, estimate, measure=args.measure, top=args.top,
        confidence=args.confidence, rank_confidence=RANK_CONFIDENCE, n_draws=args.mc_draws,
        rng=args.seed, estimand=args.estimand, pool_depth=args.pool_depth,
    )  # fmt: skip
    what = (
        f"had it been pooled to depth {check.pool_depth} (estimand pool"
        if check.estimand == "pool"
        else "once every retrieved document is judged (estimand complete"
    )
    title = (
        f"{len(new)} new run(s) against {len(check.officials)} official runs; trec_eval = "
        f"{args.measure} on these qrels (unjudged = nonrelevant); E, sd, ci = the measure "
        f"{what}, {args.confidence:.0%}); "
        f"rank_low-rank_high = {RANK_CONFIDENCE:.0%} interval of its rank among "
        f"{len(check.officials) + 1} (1 = best)"
    )
    if args.llm_labels:
        _warn_label_agreement(campaign, new, args.new)
    table = check.table
    emit(table.drop(columns="verdict") if args.format == "table" else table, args.format,
         title=title)  # fmt: skip
    if args.format == "table":
        print("\n".join(check.verdicts()))
    if args.plot:
        check.plot(args.plot)
        print(f"relimpute {COMMAND}: wrote {args.plot}", file=sys.stderr)
    return 0


#: how far above every official run's agreement with the labels a new run's must be to be
#: warned about (on DL 2019 the official runs agree 25-78%, runs re-ranked by the labels 100%)
LABEL_AGREEMENT_MARGIN = 0.1


def _warn_label_agreement(campaign, new, paths) -> None:
    """A warning naming a new run whose ranking follows the labels far more closely than any
    official run's (:func:`~relimpute.bias.newrun.label_agreement`): the labels' model scores it by
    the evidence it was built from, and overrates it."""
    import numpy as np

    from ..bias.newrun import label_agreement

    agreement = label_agreement(campaign)
    rows = [campaign.systems.index(name) for name in new]
    official = np.delete(agreement, rows)
    top = np.nanmax(official) if np.isfinite(official).any() else np.nan
    for name, path, row in zip(new, paths, rows):
        if np.isfinite(top) and agreement[row] > top + LABEL_AGREEMENT_MARGIN:
            print(
                f"relimpute {COMMAND}: warning: {name} ({path}) follows the --llm-labels far more "
                f"closely than any official run: it ranks {agreement[row]:.0%} of its labelled "
                f"document pairs in the labels' order (the official runs at most {top:.0%}); a "
                "run tuned on the labels is scored by the evidence it was built from, so its E, "
                "interval and P(beats) may be too high: check it without --llm-labels",
                file=sys.stderr,
            )


def _check_topics(campaign, new, paths) -> None:
    """An error naming the file of a new run that retrieves nothing for any qrels topic (its
    topics do not meet the qrels'), a warning for one that misses some."""
    from ..errors import InputError

    empty = (~campaign.coverage()).sum(axis=1)
    for name, path in zip(new, paths):
        count = int(empty[campaign.systems.index(name)])
        if count == campaign.n_topics:
            raise InputError(
                f"the run retrieves nothing for any of the {count} qrels topics: its topic ids "
                "do not meet the qrels' (or every line was dropped)", path,
            )  # fmt: skip
        if count:
            print(
                f"relimpute {COMMAND}: warning: {name} ({path}) retrieves nothing for {count} "
                f"of {campaign.n_topics} qrels topics (it scores 0 there)",
                file=sys.stderr,
            )
