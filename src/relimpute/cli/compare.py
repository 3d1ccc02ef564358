"""``relimpute compare``: how sure are we that one run beats another (Carterette 2007 §2)."""

from __future__ import annotations

from ._common import (
    DEFAULT_MODEL,
    add_campaign_arguments,
    add_model_argument,
    add_seed_argument,
    check_run_names,
    load_campaign,
    measure_option,
)
from ._estimand import check_estimand_options, estimand_engine
from ._estimate import add_estimate_argument, load_estimate
from ._format import add_format_argument, emit
from ._survey import add_estimator_argument, add_margin_argument, survey_command
from ._labels import add_llm_labels_argument, labels_pool_title, model_with_labels, refuse_with_labels
from ._vocabulary import (
    add_confidence_argument,
    add_depth_argument,
    add_estimand_argument,
    add_mc_draws_argument,
    add_pool_depth_argument,
    add_prior_argument,
    add_quiet_argument,
)

COMMAND = "compare"
HELP = (
    "pairwise confidence P(MAP_a > MAP_b) (or another measure), unjudged documents' relevance "
    "estimated by a relevance model"
)
DESCRIPTION = """\
Treat the relevance of every unjudged document as random and print, for
every pair of runs (a, b), the distribution of dMAP = MAP(a) - MAP(b): its
mean (e_delta_map), standard deviation (sd_delta_map), the confidence
p_a_better = P(dMAP > 0) and a confidence interval (ci_low, ci_high). By
default these come by Monte Carlo: --mc-draws draws of relevance over the
default model's posterior draws, so the uncertainty of the model's own
parameters widens the answer. A model without posterior draws (--model rtc,
--prior P, --estimate FILE) or --normal gives instead the normal
approximation of Carterette 2007, where the measure has exact moments.
Carterette's P(dMAP < 0) is 1 - p_a_better. This uncertainty is the
relevance of unjudged documents, with the topics fixed; whether a run would
also win on other topics (topic sampling) is what `relimpute evaluate
--baseline RUN` tests; --topic-bootstrap combines the two: a bootstrap over
topics with a relevance draw inside every resample (--mc-draws resamples),
whose interval and p_a_better cover other topics of the same kind as well as
the unjudged documents, printed with the standard deviation each source
alone gives (sd_topics, sd_judgments). With --matrix print instead the S x S
table of P(row run beats column run); in the table, markdown and latex
formats the columns are numbered as the rows and the values have two
decimals, so 37 runs fit (the table wraps to the terminal); tsv and json
keep full names and all digits.

Relevance model: judged documents keep their labels (grade >= --rel-threshold
is relevant). By default the relevance of every unjudged document is
estimated by the 'fusion' model, fitted to these qrels: it assumes a document
is as likely relevant as the runs' consensus ranks it, learned from the
documents judged by pool depth (starting from how the consensus predicted
relevance on three TREC collections), fading faster below the pool, and
counts the relevant documents that judging beyond the pool already found.
E[MAP] is then the MAP expected once every retrieved document is judged;
where the qrels are nearly complete it ranks the runs as trec_eval's MAP
does, which counts unjudged documents as nonrelevant (its values can be
lower: it also expects relevant documents below the pool). --model NAME|PATH fits another model (rtc, bayes, a settings
file); --prior P instead gives every unjudged document probability P (the
uniform prior of MTC; 0 is the trec_eval convention); --estimate FILE reads
probabilistic qrels that `relimpute fit -o FILE` wrote (no refitting), with
the model's posterior draws that fit wrote beside it (FILE.draws.npz); a
file without them holds point probabilities only, and the answer is then
the normal approximation or Bernoulli Monte Carlo with them, narrower than
the posterior-predictive one of --model. E[R] counts every
judged relevant document plus the probability of every unjudged document
any run of the campaign retrieves, so a pair's answer does not depend on
which other runs are compared. Give it every run you have (those that built
the pool too) and choose pairs with --systems: shown only 10 of TREC-8's 71
pooled runs, the model cannot see a third of the relevant documents the
others found (examples/precision, section 4). Runs are evaluated at full depth unless
--depth is given; a topic a run retrieves nothing for scores 0 (trec_eval -c).

-m/--measure compares another measure's mean over topics instead of MAP
(ir_measures or trec_eval names: -m nDCG@10, -m P_10, -m RR). AP and the
measures linear in relevance (P@k, RBP(p=0.8), DCG@k, NumRelRet) have exact
moments for the normal approximation; every other measure goes through Monte
Carlo draws of relevance (--mc-draws), from the model's posterior draws when
it has them, else independent Bernoulli(p). The columns keep their names
(e_delta_map is then the difference of the measure's means).

--estimand names which MAP is compared (docs: which-map.md), and the table's
first line says it (beside tsv and json output: on stderr): complete (the
default, described above), pool (the runs as if pooled together with the
judged runs to --pool-depth K, as a campaign pools a group's runs: unjudged
documents below K are nonrelevant; a run that was pooled has its trec_eval score with sd 0; exact
moments with the model's point estimate: AP and the linear measures) or qrels
(trec_eval's number on these qrels, unjudged = nonrelevant: no model, sd 0).
"""
EPILOG = """\
examples:
  relimpute compare qrels.txt runs/ --rel-threshold 2
  relimpute compare qrels.txt runs/ --model rtc --rel-threshold 2
  relimpute compare qrels.txt runs/ --prior 0.5
  relimpute compare qrels.txt runs/ --rel-threshold 2 --estimate estimate.tsv
  relimpute compare qrels.txt runs/ --systems bm25base_p runid2 --ratio delta
  relimpute compare qrels.txt a.run b.run c.run --matrix --format markdown
  relimpute compare qrels.txt runs/ --rel-threshold 2 --depth 100 --format tsv > pairs.tsv
  relimpute compare qrels.txt runs/ --rel-threshold 2 -m nDCG@10 --systems bm25base_p runid2
  relimpute compare qrels.txt runs/ --rel-threshold 2 --topic-bootstrap --systems p_bert bm25base_p
  relimpute compare qrels.txt runs/ --rel-threshold 2 --estimand pool --pool-depth 10

--ratio constant is the paper's Var[Q]/E[R]^2; --ratio delta also accounts for
the randomness of R (delta method), which matters for single-run intervals.

exit status: 0 on success, 2 on bad input (the message names file and line).
"""


def _measure(text: str) -> str:
    """A measure name of the registry, canonical (``map`` -> ``AP``)."""
    return str(measure_option(text))


def add_arguments(parser) -> None:
    parser.epilog = EPILOG
    add_campaign_arguments(parser)
    add_model_argument(parser, None)
    add_llm_labels_argument(parser)
    parser.add_argument(
        "-m",
        "--measure",
        type=_measure,
        default="AP",
        metavar="MEASURE",
        help="the measure whose mean over topics is compared (default: %(default)s, i.e. MAP); "
        "e.g. nDCG@10, P@10, RR, Bpref",
    )
    add_seed_argument(parser, "the model's fit and the Monte Carlo draws")
    add_prior_argument(
        parser,
        "instead of a model, give every unjudged document this probability of relevance "
        "(0.5: the uniform prior of MTC; 0: unjudged = nonrelevant)",
    )
    add_estimate_argument(parser)
    parser.add_argument(
        "--systems",
        nargs="+",
        metavar="RUN_NAME",
        help="compare only these runs, by name (the run file's name; default: all)",
    )
    parser.add_argument(
        "--ratio",
        choices=("constant", "delta"),
        default="constant",
        help="variance of AP = Q/R: the paper's constant E[R] or the delta method (default: %(default)s)",
    )
    add_depth_argument(parser)
    add_confidence_argument(parser, "confidence level of the intervals")
    add_mc_draws_argument(
        parser, "Monte Carlo draws, when the model has posterior draws or the measure no exact moments"
    )
    parser.add_argument(
        "--normal",
        action="store_true",
        help="use the normal approximation with the point estimate even when the model has draws",
    )
    parser.add_argument(
        "--topic-bootstrap",
        dest="topics",
        action="store_true",
        help="add topic sampling: bootstrap the topics with a relevance draw inside each "
        "resample, so the answer also covers other topics (Monte Carlo)",
    )
    add_estimand_argument(parser)
    add_pool_depth_argument(parser)
    parser.add_argument(
        "--matrix", action="store_true", help="print the S x S table of P(row beats column)"
    )
    design = parser.add_argument_group("design-based estimates from sampled qrels (docs/survey.md)")
    add_estimator_argument(design)
    add_margin_argument(design)
    add_quiet_argument(parser)
    add_format_argument(parser)


def estimate_relevance(campaign, args):
    """The relevance estimate the comparison uses: --estimate FILE, the fitted --model, or the
    uniform --prior."""
    from ..confidence import predict_for
    from ..relevance import load_model

    if args.estimate is not None:
        return load_estimate(args.estimate, campaign, COMMAND)
    if args.prior is not None:
        from ..relevance import Uniform

        return Uniform(prior=args.prior).fit_predict(campaign)
    model = load_model(model_with_labels(args, args.model) or DEFAULT_MODEL)
    model.fit(campaign, rng=args.seed)
    return predict_for(model, campaign, [args.measure])  # a binary measure reads no grades


def run(args) -> int:
    from ..confidence import has_closed_form
    from ..errors import InputError

    if args.estimator is not None:
        return _by_design(args)
    if args.margin is not None:
        raise InputError("--margin is for --estimator (the equivalence P(|dMAP| < EPS))")
    given = [o for o, v in (("--model", args.model), ("--prior", args.prior),
                            ("--estimate", args.estimate)) if v is not None]
    if len(given) > 1:
        raise InputError(f"give one of --model, --prior and --estimate, not {' and '.join(given)}")
    refuse_with_labels(args, ("--prior", args.prior))  # with --estimate, they name documents
    _check_estimand(args)
    campaign = load_campaign(args, COMMAND)
    if args.systems:
        check_run_names(args.systems, campaign.systems, "--systems")
        if len(set(args.systems)) != len(args.systems):
            raise InputError("--systems lists a run twice")
    systems = args.systems or list(campaign.systems)
    if len(systems) < 2:
        raise InputError("need at least two runs to compare")
    if args.normal and not has_closed_form(args.measure):
        raise InputError(
            f"--normal needs a measure with exact moments (AP, P@k, RBP, DCG, NumRelRet); "
            f"{args.measure} goes through Monte Carlo: drop --normal"
        )
    if args.topics and args.normal:
        raise InputError("--topic-bootstrap resamples topics by Monte Carlo: drop --normal")
    from ._calibration_check import warn_if_uncalibrated

    estimate = None  # the qrels estimand needs none
    if args.estimand != "qrels":
        warn_if_uncalibrated("uniform" if args.prior == 0.5 else args.model, COMMAND)
        from ..progress import stage

        with stage(f"relimpute {COMMAND}: estimating the unjudged documents' relevance"):
            estimate = estimate_relevance(campaign, args)
    engine = estimand_engine(args, campaign, COMMAND, ratio=args.ratio, depth=args.depth)
    result = engine.confidence(
        campaign,
        estimate,
        systems=systems,
        measure=args.measure,
        method="normal" if args.normal else "auto",
        n_draws=args.mc_draws,
        rng=args.seed,
        topics=args.topics,
    )
    if args.topics:
        note = (
            "relimpute compare: the uncertainty here is topic sampling and the relevance of "
            "unjudged documents together (sd_topics, sd_judgments: each source alone)"
        )
    else:
        note = (
            "relimpute compare: the uncertainty here is the relevance of unjudged documents, on "
            "these topics; add --topic-bootstrap for topic sampling too, or test topics alone with "
            "`relimpute evaluate --baseline RUN`"
        )
    import sys

    if args.estimand == "qrels":
        note = (
            "relimpute compare: --estimand qrels: trec_eval's numbers on these qrels (unjudged = "
            "nonrelevant), no uncertainty from unjudged documents"
            + (" (topic sampling only)" if args.topics else "")
        )
    print(note, file=sys.stderr)
    narrower = _point_estimate_note(args, estimate)
    if narrower:
        print(narrower, file=sys.stderr)
    title = labels_pool_title(engine.describe(campaign), estimate)
    if args.matrix:
        _emit_matrix(result.matrix(), args.format, title)
    elif args.topics or result.scores.draws is None or estimate is None:
        emit(result.to_frame(level=args.confidence), args.format, title=title)
    else:
        emit(_bounds_to_their_digits(result, estimate, args), args.format, title=title)
    return 0


def _check_estimand(args) -> None:
    """``--estimand`` against the other options: qrels takes no model, pool exact moments."""
    from ..confidence import has_closed_form
    from ..errors import InputError

    models = (("--model", args.model), ("--prior", args.prior is not None),
              ("--estimate", args.estimate), ("--llm-labels", args.llm_labels))
    check_estimand_options(args, models)
    if args.estimand != "pool":
        return
    if args.topics:
        raise InputError(
            "pool has exact moments only, and --topic-bootstrap is Monte Carlo: drop "
            "--topic-bootstrap, or choose --estimand complete or qrels", "--estimand"
        )  # fmt: skip
    if not has_closed_form(args.measure):
        raise InputError(
            f"pool has exact moments only (AP, P@k, RBP, DCG, NumRelRet), not {args.measure}: "
            "choose --estimand complete or qrels for it", "--estimand"
        )  # fmt: skip


def _bounds_to_their_digits(result, estimate, args):
    """The answer with each Monte Carlo bound rounded at the decimal of its Monte Carlo standard
    error (``Comparison.to_frame(rounded=True)``), and a note saying so; tsv and json, read by
    programs, keep every digit and the note gives the error.

    The bounds are tail quantiles: with a model's posterior draws they rest on the few
    draws in the tail, so their last digits would change with the seed.
    """
    import sys

    import numpy as np

    errors = result.bound_errors(args.confidence)
    machine = args.format in ("tsv", "json")  # read by programs: every digit, none rounded
    frame = result.to_frame(level=args.confidence, rounded=not machine, errors=errors)
    worst = max(float(np.max(e, initial=0.0)) for e in errors)
    said = "have" if machine else "are rounded at the decimal of their"
    print(
        f"relimpute {COMMAND}: ci_low and ci_high {said} Monte Carlo "
        f"standard error (up to {worst:.2g}"
        + (f", over {estimate.n_draws} posterior draws of the model)" if estimate.n_draws else ")"),
        file=sys.stderr,
    )
    return frame


def _point_estimate_note(args, estimate) -> str | None:
    """One line when the answer ignores the model's own uncertainty (it is then narrower
    than the posterior predictive answer the default model gives)."""
    from ._estimate import file_without_draws, narrower_note

    if args.prior is not None or estimate is None:
        return None  # a fixed prior (or the qrels) has no parameters to be unsure of
    if args.normal or (args.estimand == "pool" and estimate.n_draws):
        why = f"{'--normal' if args.normal else '--estimand pool'} uses the model's point estimate of p"
    elif estimate.n_draws == 0:
        why = (
            file_without_draws(args.estimate)
            if args.estimate is not None
            else f"the model {args.model!r} gives a point estimate only"
        )
    else:
        return None
    return narrower_note(COMMAND, why)


def _by_design(args) -> int:
    """Every pair of runs (or of --systems) by the design-based --estimator."""
    from itertools import combinations

    from ..errors import InputError
    from ..io import run_files

    names = [system for system, _ in run_files(args.runs)]
    if args.systems:
        check_run_names(args.systems, names, "--systems")
    systems = args.systems or names
    if len(systems) < 2:
        raise InputError("need at least two runs to compare")
    if args.matrix:
        raise InputError("--matrix is for the model-based answer: drop it with --estimator")
    return survey_command(args, COMMAND, measures=[args.measure],
                          pairs=list(combinations(systems, 2)))


def _emit_matrix(matrix, fmt: str, title: str) -> None:
    """P(row beats column): numbered columns and two decimals where people read it."""
    import shutil
    import sys

    from ._format import FORMATTERS, heading

    if fmt in ("tsv", "json"):
        emit(matrix.reset_index(), fmt, title=title)
        return
    numbers = [str(i) for i in range(1, len(matrix) + 1)]
    cells = matrix.map(lambda p: "-" if p != p else f"{p:.2f}")  # NaN: the diagonal
    cells.columns = numbers
    labels = [f"{n:>{len(numbers[-1])}} {name}" for n, name in zip(numbers, matrix.index)]
    width = max(map(len, labels))
    cells.insert(0, "system", [label.ljust(width) for label in labels])
    if fmt == "table":
        columns = shutil.get_terminal_size((120, 24)).columns
        text = cells.to_string(index=False, justify="left", line_width=columns)
    else:
        text = FORMATTERS[fmt](cells)
    sys.stdout.write(heading(title, fmt) + text.rstrip("\n") + "\n")
    print(
        "relimpute compare: columns are numbered as the rows; --format tsv or json prints "
        "full names and all digits",
        file=sys.stderr,
    )
