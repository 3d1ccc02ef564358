"""One vocabulary across subcommands: one spelling per meaning, in one table.

The charter:

- ``QRELS RUN...`` are positional everywhere.
- :data:`VOCABULARY` lists every option of every subcommand with its one
  meaning; ``tests/test_vocabulary.py`` fails on an option outside it or on
  two spellings of one meaning, and the docs render it (``cli/vocabulary.md``).
- ``--confidence P`` is the one name for a confidence level: the level of
  intervals, the confidence ``judge`` and ``calibrate`` judge until, the call
  ``demo`` counts as confident, and (as 1 − P) the significance level of
  ``evaluate --baseline`` and ``power``.
- ``--depth K`` truncates every run at rank K; ``--pool-depth K`` judges only
  the depth-K pool (with ``--estimand pool``: the depth each run is pooled to);
  ``--n-topics`` and ``--n-systems`` are counts.
- ``--estimand complete|pool|qrels`` names which score a table prints
  (:mod:`relimpute.confidence.estimands`, docs/which-map.md), and the table says it.
- ``-m/--measure`` and ``-M/--model`` take one value each and repeat for more
  (measure names and settings paths may hold commas); names of strategies or
  correctors and lists of numbers are comma-separated.
- ``--rel-threshold N`` defaults to the collection's ``relimpute.toml``, else 1.
- ``--quiet`` turns progress off: bars on a terminal, and a study's plain progress lines
  on a standard error that is not one.
- ``--resume`` goes on with the study an output holds, ``--overwrite`` starts afresh there;
  with neither, an output holding a study's finished work is refused.

Version 0.2.0 removed the old spellings; CHANGELOG.md lists each with its new one.
"""

from __future__ import annotations

import argparse

#: ``(spellings, meaning)`` of every option: the long spelling first, then its short one.
VOCABULARY: tuple[tuple[tuple[str, ...], str], ...] = (
    (("--answers",), "answers read from a file or piped in, instead of typed at the terminal"),
    (("--baseline",), "test every other run against this run, over topics"),
    (("--budget",), "the number of judgments available"),
    (("--by-rank",), "order runs by their rank column instead of score"),
    (("--c",), "initial runs per calibration trial"),
    (("--cap",), "confidence cap of the capped calibration tables"),
    (("--common-repeats",), "random common-topic sets per run (pool bias, Algorithm 2)"),
    (("--common-topics",), "common topics of the pool-bias Algorithm 2"),
    (("--complete", "-c"), "score 0 on topics a run retrieves nothing for (trec_eval -c)"),
    (("--condensed",), "remove unjudged documents from every ranking first"),
    (("--confidence",), "a confidence level P (significance level 1 - P)"),
    (("--correction",), "multiple-testing correction"),
    (("--correctors",), "pool-bias correctors to study, comma-separated"),
    (("--depth",), "truncate every run at rank K"),
    (("--design",), "judge a sample drawn by this design"),
    (("--docs",), "document texts shown to the assessor"),
    (("--duplicates",), "what to do with a document listed twice"),
    (("--epsilon",), "nudging of AP = 0 and 1 before the logit"),
    (("--estimand",), "which score: complete, pool or qrels (trec_eval on the qrels given)"),
    (("--estimate",), "probabilistic qrels written by `relimpute fit`"),
    (("--estimator",), "a design-based estimator from sampled qrels: ht, model-assisted or ppi++"),
    (("--bias-correction",), "how a design-based AP corrects its ratio's bias: auto (by the "
     "design), taylor, jackknife or none"),
    (("--variance",), "how a design-based interval's variance is estimated: auto (by the "
     "design), jackknife, linearised or averaged"),
    (("--export-qrels",), "write the qrels with the journal's judgments"),
    (("--floor-share",), "the π floor of a Poisson sampling design, as a share of the budget's "
     "rate"),
    (("--format", "-f"), "output format"),
    (("--gain",), "gains of graded measures"),
    (("--group-sd",), "between-group spread of the model-based pool-bias correction"),
    (("--groups",), "the groups table of the runs (run, group, pooled)"),
    (("--help", "-h"), "show the help"),
    (("--intervals",), "per-run expected measures with intervals under a relevance model"),
    (("--jobs",), "parallel workers"),
    (("--journal",), "the judging journal file"),
    (("--k",), "runs per calibration trial"),
    (("--leave",), "what a pool-bias study leaves out of the pool: each group's runs, or each run"),
    (("--llm-labels",), "relevance labels from an LLM"),
    (("--looks",), "looks at a sample's estimate while it is judged, each at a Bonferroni level"),
    (("--margin",), "the equivalence margin EPS of P(|dMAP| < EPS)"),
    (("--matrix",), "print the table of P(row beats column)"),
    (("--max-bias",), "largest acceptable bias of a design"),
    (("--mc-draws",), "Monte Carlo draws of relevance"),
    (("--measure", "-m"), "an evaluation measure by name (repeat for more)"),
    (("--method",), "confidence-interval method"),
    (("--model", "-M"), "a relevance model: registered name or settings file (repeat for more)"),
    (("--n-systems",), "number of runs to simulate"),
    (("--new",), "a new run checked against the official runs (repeat for more)"),
    (("--n-topics",), "number of topics (or several, comma-separated)"),
    (("--normal",), "the normal approximation even when the model has draws"),
    (("--output", "-o"), "where to write the result"),
    (("--pair",), "two runs, A and B"),
    (("--per-topic", "-q"), "one row per run and topic"),
    (("--permutations",), "sign flips of the randomization test"),
    (("--topics-only",), "the t-test on E[m] without the judgments' variance"),
    (("--plot",), "draw the result into a figure file"),
    (("--pool-depth",), "the pool depth K: judge only the depth-K pool (or several depths, "
     "comma-separated), or the depth --estimand pool pools to"),
    (("--prior",), "one probability of relevance for every unjudged document"),
    (("--quiet", "-Q"), "no progress bars or progress lines"),
    (("--ratio",), "variance of AP = Q/R: constant E[R] or the delta method"),
    (("--rel-threshold",), "lowest grade counted relevant"),
    (("--repetitions",), "random topic subsets per size"),
    (("--resamples", "-B"), "bootstrap resamples of the corpus"),
    (("--overwrite",), "start a study afresh in an output holding another (or this one unfinished)"),
    (("--resume",), "go on with a study a stopped run left in the output folder"),
    (("--run-length",), "documents per simulated ranking"),
    (("--scale",), "scale of differences"),
    (("--scheduler",), "the Dask scheduler a study's units or topic parts run on (or local)"),
    (("--seed",), "seed of the random numbers"),
    (("--settings-dir",), "a folder of model settings files used instead of the shipped ones"),
    (("--small-r",), "widen AP intervals near 0 or 1 (silver bullets, lead balloons)"),
    (("--split",), "the split-corpus validation table"),
    (("--splits",), "splits of the documents in the split-corpus validation"),
    (("--strata",), "the strata of a stratified sample: ranks and rate of each"),
    (("--strategies",), "strategies the study compares, comma-separated"),
    (("--strategy",), "the judgment selection strategy"),
    (("--systems",), "select runs by name"),
    (("--test",), "a paired significance test (repeat for more)"),
    (("--top",), "show this many rows (or compare with this many of the best runs)"),
    (("--topic-bootstrap",), "add topic sampling: bootstrap the topics"),
    (("--topic-parts",), "fit and compare in parts of the topics, combined"),
    (("--trials",), "number of calibration trials"),
    (("--version",), "print the version"),
)


def spellings() -> dict[str, str]:
    """Every spelling (long and short) -> the long spelling it belongs to."""
    return {alias: names[0] for names, _ in VOCABULARY for alias in names}


def confidence_level(text: str) -> float:
    """An argparse type: a probability strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {value}")
    return value


def add_confidence_argument(parser, help: str) -> None:
    """``--confidence P`` (default 0.95)."""
    parser.add_argument(
        "--confidence",
        type=confidence_level,
        default=0.95,
        metavar="P",
        help=f"{help} (default: %(default)s)",
    )


def add_choice_argument(parser, flag: str, choices, help: str, *, default: str | None = None):
    """``FLAG NAME``: one of ``choices`` (default: the first), the default said at the end of
    ``help`` as every option here says it."""
    parser.add_argument(
        flag,
        choices=choices,
        default=choices[0] if default is None else default,
        help=f"{help} (default: %(default)s)",
    )


def add_mc_draws_argument(parser, help: str, *, default: int = 4000, dest: str = "mc_draws"):
    """``--mc-draws N``: Monte Carlo draws of relevance, 2 or more, into ``args.<dest>``."""
    from ._common import integer_at_least

    parser.add_argument(
        "--mc-draws",
        dest=dest,
        type=integer_at_least(2),
        default=default,
        metavar="N",
        help=f"{help} (default: %(default)s)",
    )


def add_depth_argument(
    parser, help: str = "truncate every run at rank K", *, default: int | None = None, why: str = ""
) -> None:
    """``--depth K``: a positive rank to cut every run at, into ``args.depth`` (None: full depth);
    a command that cuts at a ``default`` rank (``why``: the reason) takes 0 for full depth."""
    from ._common import integer_at_least, positive_int

    if default is None:
        rank, said = positive_int, "default: full depth"
    else:
        rank, said = integer_at_least(0), f"default {default}, {why}; 0 = full depth"
    parser.add_argument("--depth", type=rank, default=default, metavar="K", help=f"{help} ({said})")


def add_prior_argument(parser, help: str) -> None:
    """``--prior P``: one probability of relevance in [0, 1] for every unjudged document."""
    from ._common import number_between

    parser.add_argument("--prior", type=number_between(0, 1), default=None, metavar="P", help=help)


def add_measure_argument(parser, help: str, *, type=str) -> None:
    """``-m/--measure MEASURE``, repeated for more, into ``args.measures`` (None if not given)."""
    parser.add_argument(
        "-m",
        "--measure",
        dest="measures",
        metavar="MEASURE",
        action="append",
        type=type,
        help=help,
    )


def add_one_measure_argument(parser, help: str) -> None:
    """``-m/--measure MEASURE``: one measure, by its canonical registry name (``map`` -> ``AP``;
    default AP), into ``args.measure``."""
    from ._common import measure_option

    def name(text: str) -> str:
        return str(measure_option(text))

    parser.add_argument("-m", "--measure", type=name, default="AP", metavar="MEASURE", help=help)


def add_groups_argument(parser, dest: str, help: str, *, required: bool = False) -> None:
    """``--groups GROUPS.tsv``: the groups table (run, group, pooled), into ``args.<dest>``."""
    parser.add_argument(
        "--groups",
        dest=dest,
        required=required,
        metavar="GROUPS.tsv",
        help=f"the groups table (columns run, group, pooled): {help}",
    )


def add_quiet_argument(parser) -> None:
    """``--quiet``: no progress (bars when stderr is a terminal, a study's lines otherwise)."""
    parser.add_argument(
        "--quiet",
        "-Q",
        action="store_true",
        help="no progress: no bars (stderr a terminal), no progress lines of a study (stderr "
        "a file or pipe: about every tenth of the study, or every minute)",
    )


#: ``--estimand``'s values and what each is, as ``--help`` says them
#: (:data:`relimpute.confidence.estimands.ESTIMANDS`, written out so that --help loads no numpy).
ESTIMAND_HELP = (
    "complete: every retrieved document to the evaluation depth judged; pool: the run pooled "
    "with the judged runs to --pool-depth; qrels: trec_eval on the qrels given (unjudged = "
    "nonrelevant, no model)"
)


def add_estimand_argument(parser, choices=("complete", "pool", "qrels"), default="complete",
                          what: str = "") -> None:
    """``--estimand NAME``: which score the command's tables print (docs: which-map.md)."""
    parser.add_argument(
        "--estimand",
        choices=choices,
        default=default,
        help=f"which score{what}: {ESTIMAND_HELP} (default: %(default)s; docs: which-map.md)",
    )


def add_pool_depth_argument(parser) -> None:
    """``--pool-depth K`` of ``--estimand pool``, into ``args.pool_depth`` (None: inferred)."""
    from ._common import positive_int

    parser.add_argument(
        "--pool-depth",
        dest="pool_depth",
        type=positive_int,
        default=None,
        metavar="K",
        help="with --estimand pool, the depth each run is pooled to (default: the depth most "
        "runs are judged to on every topic)",
    )
