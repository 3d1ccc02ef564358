"""``relimpute compare``: how sure are we that one run beats another (Carterette 2007 §2)."""

from __future__ import annotations

from ._common import (
    add_campaign_arguments,
    add_model_argument,
    add_seed_argument,
    chosen_runs,
    load_campaign,
)
from ._estimand import estimand_engine
from ._relevance import add_estimate_argument, relevance_estimate
from ._format import add_format_argument
from ._survey import add_estimator_argument, add_margin_argument, survey_table
from ._labels import add_llm_labels_argument
from ._answer import answer_table, write_answer
from ._vocabulary import (
    add_choice_argument,
    add_confidence_argument,
    add_depth_argument,
    add_estimand_argument,
    add_mc_draws_argument,
    add_one_measure_argument,
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


def add_arguments(parser) -> None:
    parser.epilog = EPILOG
    add_campaign_arguments(parser)
    add_model_argument(parser, None)
    add_llm_labels_argument(parser)
    add_one_measure_argument(
        parser,
        "the measure whose mean over topics is compared (default: %(default)s, i.e. MAP); "
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
    add_choice_argument(
        parser,
        "--ratio",
        ("constant", "delta"),
        "variance of AP = Q/R: the paper's constant E[R] or the delta method",
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
    parts = parser.add_argument_group("a campaign too large for one fit (docs: at-scale.md)")
    _add_parts_arguments(parts)
    design = parser.add_argument_group("design-based estimates from sampled qrels (docs/survey.md)")
    add_estimator_argument(design)
    add_margin_argument(design)
    add_quiet_argument(parser)
    add_format_argument(parser)



def _add_parts_arguments(parts) -> None:
    """--topic-parts N, and --jobs and --scheduler where the parts run."""
    from ._common import add_parallel_arguments, positive_int

    parts.add_argument(
        "--topic-parts", type=positive_int, metavar="N",
        help="fit the model and compare in N parts of the topics, each part on its own, and "
        "combine them (MAP = the parts' MAPs weighted by their topics): the model's shared "
        "parameters are learned per part, an approximation measured in examples/topic_parts",
    )  # fmt: skip
    add_parallel_arguments(parts, "topic parts")


def run(args) -> int:
    from ._requests import CompareRequest

    request = CompareRequest.from_args(args, COMMAND)  # checked as it is built
    return answer(request)


def answer(request) -> int:
    """Print the comparison ``request`` (a :class:`relimpute.cli._requests.CompareRequest`)
    asks for."""
    from itertools import combinations

    from ..errors import InputError
    from ..io import run_files

    if request.by_design is None:  # the model-based answer: the campaign read
        campaign = load_campaign(request.campaign, COMMAND)
        names = campaign.systems
    else:  # the design-based --estimator reads its sample itself: only the runs' names here
        names = [system for system, _ in run_files(request.campaign.runs)]
    systems = chosen_runs(request.systems, names, "--systems")
    if request.by_design is None:
        table, title, layout = _by_model(request, campaign, systems)
    elif request.matrix:
        raise InputError("--matrix is for the model-based answer: drop it with --estimator")
    else:  # the runs chosen and every pair of them
        table, title = survey_table(request.by_design, COMMAND, measures=[request.measure],
                                    pairs=list(combinations(systems, 2)), runs=systems)
        layout = {}
    write_answer(COMMAND, request, table, title, layout)
    return 0


def _by_model(request, campaign, systems: list[str]):
    """``(table, title, layout)``: the model-based answer to ``request`` on ``campaign``'s
    ``systems`` (:func:`relimpute.cli._answer.answer_table`), its notes on stderr."""
    import sys

    from ..confidence import has_closed_form
    from ..errors import InputError

    if request.normal and not has_closed_form(request.measure):
        raise InputError(
            f"--normal needs a measure with exact moments (AP, P@k, RBP, DCG, NumRelRet); "
            f"{request.measure} goes through Monte Carlo: drop --normal"
        )
    if request.topics and request.normal:
        raise InputError("--topic-bootstrap resamples topics by Monte Carlo: drop --normal")
    engine = estimand_engine(request.estimand, campaign, COMMAND, ratio=request.ratio,
                             depth=request.depth)  # fmt: skip
    method = "normal" if request.normal else "auto"
    estimate = None  # the qrels estimand needs none; the topic parts fit their own
    if request.parts.parts:  # each part fits its own estimate (docs: at-scale.md)
        from ..confidence import compare_in_parts
        from ..confidence.parts import topic_parts

        parts = request.parts
        try:
            topic_parts(campaign, parts.parts)  # the split's own check, before any fit
        except ValueError as exc:
            raise InputError(str(exc), "--topic-parts") from None
        source = request.relevance
        size = campaign.n_topics // parts.parts
        print(f"relimpute {COMMAND}: the {campaign.n_topics} topics in {parts.parts} parts of "
              f"about {size}, each part's {'prior' if source.prior is not None else 'model'} "
              "fitted and scored on its own topics, the parts' MAPs weighted by their topics"
              + ("" if source.prior is not None else ": an approximation of one fit, closer the "
                 "more topics a part holds (examples/topic_parts)"), file=sys.stderr)  # fmt: skip
        result = compare_in_parts(campaign, parts.parts, model=source.model, prior=source.prior,
                                  systems=systems, engine=engine, measure=request.measure,
                                  method=method, n_draws=request.mc_draws, seed=request.seed,
                                  jobs=parts.jobs, scheduler=parts.scheduler)  # fmt: skip
        n_draws = None if request.estimand.name == "qrels" else result.scores.clusters or 0
    else:
        if request.estimand.name != "qrels":
            estimate = relevance_estimate(request.relevance, campaign, [request.measure],
                                          COMMAND, request.seed)  # fmt: skip
        result = engine.confidence(campaign, estimate, systems=systems, measure=request.measure,
                                   method=method, n_draws=request.mc_draws, rng=request.seed,
                                   topics=request.topics)  # fmt: skip
        n_draws = None if estimate is None else estimate.n_draws
    return answer_table(COMMAND, request, result, n_draws, engine.describe(campaign), estimate)
