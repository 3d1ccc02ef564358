"""``relimpute compare``: how sure are we that one run beats another (Carterette 2007 §2)."""

from __future__ import annotations

import sys
import warnings

from ._format import add_format_argument, emit

COMMAND = "compare"
HELP = "pairwise confidence P(MAP_a > MAP_b) with unjudged documents relevant with probability p"
DESCRIPTION = """\
Treat the relevance of every unjudged document as random and print, for
every pair of runs (a, b), the distribution of dMAP = MAP(a) - MAP(b):
its mean (e_delta_map), standard deviation (sd_delta_map), the confidence
p_a_better = P(dMAP > 0) under the normal approximation of Carterette 2007,
and a confidence interval (ci_low, ci_high). Carterette's P(dMAP < 0) is
1 - p_a_better. With --matrix print instead the S x S table of
P(row run beats column run).

Relevance model: judged documents keep their labels (grade >= --rel-threshold
is relevant); every unjudged document retrieved by one of the compared runs
is relevant with probability --prior (the uniform prior of MTC; 0 is the
trec_eval convention). E[R] counts every judged relevant document plus the
prior of every unjudged document the compared runs retrieve. Runs are
evaluated at full depth unless --depth is given; a topic a run retrieves
nothing for scores 0 (trec_eval -c).
"""
EPILOG = """\
examples:
  relimpute compare qrels.txt runs/ --prior 0.5
  relimpute compare qrels.txt runs/ --systems bm25base_p runid2 --ratio delta
  relimpute compare qrels.txt a.run b.run c.run --matrix --format markdown
  relimpute compare qrels.txt runs/ --rel-threshold 2 --depth 100 --format tsv > pairs.tsv

--ratio constant is the paper's Var[Q]/E[R]^2; --ratio delta also accounts for
the randomness of R (delta method), which matters for single-run intervals.

exit status: 0 on success, 2 on bad input (the message names file and line).
"""


def _probability(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie in [0, 1], got {value}")
    return value


def _level(text: str) -> float:
    import argparse

    value = _probability(text)
    if value in (0.0, 1.0):
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {value}")
    return value


def add_arguments(parser) -> None:
    parser.epilog = EPILOG
    parser.add_argument(
        "qrels", metavar="QRELS", help="qrels file (qid iter docno rel), plain or .gz"
    )
    parser.add_argument(
        "runs", metavar="RUN", nargs="+", help="run files or directories of run files"
    )
    parser.add_argument(
        "--prior",
        type=_probability,
        default=0.5,
        metavar="P",
        help="probability that an unjudged document is relevant (default: %(default)s)",
    )
    parser.add_argument(
        "--systems",
        nargs="+",
        metavar="RUN_NAME",
        help="compare only these runs (names as in the run files; default: all)",
    )
    parser.add_argument(
        "--rel-threshold",
        type=int,
        default=1,
        metavar="N",
        help="lowest grade counted relevant (default: %(default)s; 2 for TREC DL)",
    )
    parser.add_argument(
        "--ratio",
        choices=("constant", "delta"),
        default="constant",
        help="variance of AP = Q/R: the paper's constant E[R] or the delta method (default: %(default)s)",
    )
    parser.add_argument(
        "--depth", type=int, default=None, metavar="K", help="truncate every run at rank K"
    )
    parser.add_argument(
        "--level",
        type=_level,
        default=0.95,
        help="confidence level of the intervals (default: %(default)s)",
    )
    parser.add_argument(
        "--matrix", action="store_true", help="print the S x S table of P(row beats column)"
    )
    parser.add_argument(
        "--by-rank", action="store_true", help="order runs by their rank column instead of score"
    )
    parser.add_argument(
        "--duplicates",
        choices=("error", "first", "last"),
        default="error",
        help="a document listed twice: stop with an error, or keep its first or last line",
    )
    add_format_argument(parser)


def estimate_relevance(campaign, args):
    """The relevance estimate the comparison uses (the one place a --model option plugs in)."""
    from ..relevance import UniformPrior

    return UniformPrior(prior=args.prior).fit_predict(campaign)


def run(args) -> int:
    from ..confidence import ConfidenceEngine
    from ..data import Campaign
    from ..errors import InputError

    if args.depth is not None and args.depth < 1:
        raise InputError(f"--depth must be a positive integer, got {args.depth}")
    with warnings.catch_warnings():  # the notes are printed below instead
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(
            args.qrels,
            args.runs,
            rel_threshold=args.rel_threshold,
            by_rank=args.by_rank,
            duplicates=args.duplicates,
        )
    for note in campaign.notes:
        print(f"relimpute {COMMAND}: note: {note}", file=sys.stderr)
    if args.systems:
        unknown = [s for s in args.systems if s not in campaign.systems]
        if unknown:
            raise InputError(f"unknown run(s) {unknown}; the runs are {list(campaign.systems)}")
        if len(set(args.systems)) != len(args.systems):
            raise InputError("--systems lists a run twice")
    systems = args.systems or list(campaign.systems)
    if len(systems) < 2:
        raise InputError("need at least two runs to compare")
    estimate = estimate_relevance(campaign, args)
    result = ConfidenceEngine(ratio=args.ratio, depth=args.depth).compare(
        campaign, estimate, systems=systems
    )
    if args.matrix:
        emit(result.matrix().reset_index(), args.format)
    else:
        emit(result.to_frame(level=args.level), args.format)
    return 0
