"""``relimpute evaluate``: score runs against qrels, as trec_eval does."""

from __future__ import annotations

import sys

from ._common import (
    add_campaign_arguments,
    add_model_argument,
    add_seed_argument,
    check_run_names,
    load_campaign,
    measure_option,
    positive_int,
)
from ._relevance import add_estimate_argument
from ._intervals import INTERVAL_MEASURES, intervals, wants_intervals
from ._labels import add_llm_labels_argument
from ._format import add_format_argument, emit
from ._survey import add_estimator_argument, survey_command
from ._vocabulary import (
    add_choice_argument,
    add_confidence_argument,
    add_depth_argument,
    add_estimand_argument,
    add_mc_draws_argument,
    add_measure_argument,
    add_pool_depth_argument,
    add_quiet_argument,
)

COMMAND = "evaluate"
HELP = (
    "score runs against qrels (AP, P@k, nDCG@k, RR, Bpref, infAP, ...), like trec_eval; with "
    "--intervals, E[m] and an interval per run under a relevance model"
)
DEFAULT_MEASURES = ("AP", "P@10", "nDCG@10", "Rprec", "Judged@10")
# relimpute.measures.describe_measures() and significance's TESTS, CORRECTIONS, written out so
# that `relimpute evaluate --help` need not load the measures (tests/test_startup.py checks them)
_MEASURE_LIST = """\
  AP[@k]             average precision (trec_eval map; with @k map_cut_k)
  Bpref              binary preference over judged documents (trec_eval bpref)
  DCG[@k]            discounted cumulative gain, unnormalised (linear in 0/1 relevance)
  ERR[@k]            expected reciprocal rank over the grades (gdeval.pl, max grade 4)
  infAP              inferred AP from a judged sample of the pool (trec_eval infAP)
  Judged[@k]         share of the top k documents that are judged
  nDCG[@k]           normalised DCG over the grades (linear or exponential gains)
  NumRel             relevant documents of the topic (trec_eval num_rel; summed over topics)
  NumRelRet          relevant documents retrieved (trec_eval num_rel_ret; summed over topics)
  NumRet             documents retrieved (trec_eval num_ret; summed over topics)
  P@k                precision in the top k, divided by k (trec_eval P_k)
  R[@k]              share of the topic's relevant documents in the top k (trec_eval recall_k)
  RBP(p=0.8)[@k]     rank-biased precision, persistence p; unjudged = nonrelevant
  RBPres(p=0.8)[@k]  RBP residual: weight of unjudged ranks and of the tail
  Rprec              precision at rank R = number of relevant (trec_eval Rprec)
  RR[@k]             reciprocal rank of the first relevant document (trec_eval recip_rank)
  Success[@k]        1 if a relevant document is in the top k, else 0 (trec_eval success_k)
"""
TESTS = ("t", "wilcoxon", "randomization")
CORRECTIONS = ("holm", "bh", "none")
DESCRIPTION = f"""\
Score every run against the qrels and print one row per run (columns:
system = the run's name, num_q = topics averaged over, then one column per
measure, in the order given). With -q/--per-topic print one row per run and topic, followed by
each run's "all" row (the mean), as trec_eval -q does.

Runs are ordered as trec_eval orders them (score descending, ties by docno
descending), or by their rank column with --by-rank. Topics are the qrels'
topics: topics only in a run are dropped, with a note on stderr. A topic a
run retrieves nothing for is skipped in that run's mean (trec_eval's
default) or, with -c/--complete, scores 0 and counts (trec_eval -c).
Unjudged documents count as nonrelevant (Bpref and infAP treat them as
trec_eval does: see their docs); --condensed removes them from every ranking
first (Sakai 2007's condensed lists).

Measures (ir_measures names; default: {" ".join(DEFAULT_MEASURES)}):
{_MEASURE_LIST}trec_eval's names work too (map, P_10, ndcg_cut_10, recip_rank, recall_100,
success_10, bpref, infAP, num_ret, num_rel, num_rel_ret), and ir_measures'
aliases (MAP, NDCG@10, MRR, Recall@100). Binary measures count grade >=
--rel-threshold as relevant; a measure can override it as ir_measures does,
e.g. AP(rel=2) or P(rel=2)@10. The counts (NumRet, NumRel, NumRelRet) are
summed over topics, as trec_eval's "all" rows; the other measures averaged.

Sampled qrels (five columns, topic iter docno stratum rel, rel -1 = in the
stratum's population but not sampled; read by every command, the -1 documents
unjudged) also give NIST's inferred measures, equal to sample_eval.pl (Yilmaz,
Kanoulas & Aslam 2008), printed by default for such qrels:
  xinfAP             inferred AP of stratified samples (sample_eval.pl's infAP;
                     trec_eval's one-sample infAP stays -m infAP)
  infNDCG            inferred nDCG (gains = grades; ideal from estimated counts)
  iP@10 iP@50 iP@1000  inferred precision (sample_eval.pl iP10, iP50, iP1000)
  iNumRel iNumRelRet inferred relevant (retrieved) documents, summed over topics
  statAP             Horvitz-Thompson estimate of AP (statMAP over topics;
                     Aslam, Pavlu & Yilmaz 2006), pi = n_h/N_h per stratum
Qrels with inclusion probabilities (a header line 'query_id doc_id relevance
inclusion_probability', pi in (0, 1], rel -1 = not sampled; Poisson sampling)
give statAP, printed by default for them.
Grades under --rel-threshold count as nonrelevant (sample_eval.pl -G 1=0 for 2).

--format trec prints trec_eval's layout (measure, topic, value; with -q the
per-topic lines, then runid, num_q and the "all" lines, one block per run)
with trec_eval's measure names, so scripts that read trec_eval output read
it; --format latex prints a booktabs table for a paper.

--intervals prints instead, per run, the measure expected once every
retrieved document is judged, E[m], its standard deviation sd[m] and a
--confidence interval (ci_low[m], ci_high[m]) under the default relevance
model (fusion) fitted to these qrels: Monte Carlo over --mc-draws draws of
relevance from the model's posterior draws, as `relimpute compare` (the
same seed gives the same E[MAP]), so the uncertainty of unjudged documents
and of the model's own parameters is in it, topics fixed. Every qrels topic
counts (as -c) and R counts the unjudged documents of every run. Default
measure then: AP (MAP); each -m is one Monte Carlo pass. --model NAME|PATH
fits another model (a model without draws, e.g. rtc, says its answer is
narrower); --llm-labels FILE (repeatable) fits fusion-llm, with automatic
labels as evidence whose error is learned from the judgments, and E[m] is
then the measure once every labelled document is judged (a document neither
judged nor labelled counts nonrelevant, as in qrels; docs: llm-labels.md);
--estimate
FILE reads what `relimpute fit -o FILE` wrote instead of fitting: its
probabilities and the posterior draws beside it (FILE.draws.npz). A FILE
without draws gives E[m] only (its sd would be too narrow), and with
--intervals is an error. With --estimate and --llm-labels the labels only
add the documents they name, so that R counts them as the fit did. --depth
K cuts every run at rank K (trec_eval -M), with or without a model.

--estimand names which score each table holds, on its first line (beside tsv,
json and trec output: on stderr; docs: which-map.md). The plain table is
trec_eval's on the qrels given (qrels); E[m] is complete by default;
--estimand complete or pool without --estimate or --llm-labels fits the
default model; pool scores the runs as if pooled together with the judged
runs to --pool-depth K (exact moments: AP and the linear measures; a pooled run gets
its trec_eval score with sd 0, as with -c).

--baseline RUN tests every other run against RUN on every measure, over the
topics: paired t-test, Wilcoxon signed-rank and Fisher's randomization test
(--test to choose), p-values adjusted across ALL runs and measures of a test
(--correction holm: family-wise error; bh: false discovery rate), effect
size Cohen's d_z = mean/sd of the per-topic differences. These p-values
carry topic-sampling uncertainty only (would the run still win on other
topics?), with the qrels as they are; the uncertainty from unjudged
documents is what `relimpute compare` measures. With --intervals (--model,
--llm-labels, --estimate) the same tests run on each run's per-topic E[m]
under the model, and the t-test adds to the topic variance the variance the
unjudged documents leave in the run's mean difference from RUN (from the
same draws; --topics-only drops it; the Wilcoxon and randomization tests
see E[m] only). On depth-10 pools of DL 2019, DL 2021 and TREC-8, 0.4-2.8% of
its significant calls were wrong by the full qrels (6-9% over topics alone).
"""
EPILOG = """\
examples:
  relimpute evaluate qrels.txt runs/                  every run in a directory
  relimpute evaluate qrels.txt a.run b.run.gz -m AP -m P@10 -m "RBP(p=0.9)" -m RBPres
  relimpute evaluate qrels.txt runs/ --rel-threshold 2 -m AP -m nDCG@10 --gain exponential
  relimpute evaluate qrels.txt runs/ -q -c --format tsv > per_topic.tsv
  relimpute evaluate qrels.txt runs/ --condensed -m AP --format markdown
  relimpute evaluate qrels.txt runs/ -m map -m P_10 -m bpref -m infAP -q --format trec
  relimpute evaluate qrels.txt runs/ -m AP -m nDCG@10 -m RR --format latex > table.tex
  relimpute evaluate qrels.txt runs/ --rel-threshold 2 --intervals
  relimpute evaluate qrels.txt runs/ --rel-threshold 2 --intervals -m AP -m P@10 --depth 100
  relimpute evaluate qrels.txt runs/ --rel-threshold 2 -m AP -m nDCG@10 --estimate estimate.tsv
  relimpute evaluate qrels.txt runs/ --rel-threshold 2 -m AP -m nDCG@10 --baseline bm25base_p
  relimpute evaluate qrels.txt runs/ --baseline bm25base_p --test t --correction bh -f tsv
  relimpute evaluate qrels.txt runs/ --rel-threshold 2 --intervals --baseline bm25base_p --test t
  relimpute evaluate qrels-sampled.txt runs/ -m xinfAP -m infNDCG -m iP@10 -q

exit status: 0 on success, 2 on bad input (the message names file and line).
"""


def _measure(text: str):
    """``-m``: NIST's inferred measures of sampled qrels by name, else any measure."""
    from ._sampled import inferred_measure

    return inferred_measure(text) or measure_option(text)


def add_arguments(parser) -> None:
    parser.epilog = EPILOG
    add_campaign_arguments(parser)
    add_measure_argument(
        parser,
        "a measure to compute; repeat for more, e.g. -m AP -m P@10 (default: "
        + " ".join(DEFAULT_MEASURES)
        + ")",
        type=_measure,
    )
    parser.add_argument(
        "-q",
        "--per-topic",
        action="store_true",
        help="one row per run and topic, plus each run's 'all' row",
    )
    parser.add_argument(
        "-c",
        "--complete",
        action="store_true",
        help="score 0 on qrels topics a run retrieves nothing for, and average over all topics",
    )
    parser.add_argument(
        "--condensed",
        action="store_true",
        help="remove unjudged documents from every ranking first",
    )
    add_choice_argument(
        parser, "--gain", ("linear", "exponential"), "nDCG gains: the grade (trec_eval) or 2^grade - 1"
    )
    add_depth_argument(parser, "truncate every run at rank K, as trec_eval -M")
    add_confidence_argument(
        parser,
        "level of the intervals; with --baseline 'significant' means an adjusted p-value below "
        "1 - this (0.95: p < 0.05)",
    )
    add_seed_argument(parser, "the model's fit, the Monte Carlo draws and the randomization test")
    expected = parser.add_argument_group(
        "expected measures with intervals, under a relevance model of the unjudged documents"
    )
    expected.add_argument(
        "--intervals",
        action="store_true",
        help="per run E[m], sd[m] and a --confidence interval (ci_low, ci_high) under the "
        "default model fitted to these qrels, from its posterior draws as `relimpute compare` "
        "(default measures then: " + " ".join(INTERVAL_MEASURES) + ")",
    )
    add_model_argument(expected, None, "relevance model for the intervals (implies --intervals)")
    add_llm_labels_argument(expected)
    add_estimate_argument(expected)
    add_mc_draws_argument(expected, "Monte Carlo draws of relevance")
    add_estimand_argument(
        expected, default=None,
        what=" (default: qrels for the trec_eval table, complete with --estimate or --llm-labels)",
    )  # fmt: skip
    add_pool_depth_argument(expected)
    tests = parser.add_argument_group("topic-level tests against a baseline (topic sampling)")
    tests.add_argument(
        "--baseline",
        metavar="RUN",
        help="test every other run against this run on every measure, over topics",
    )
    tests.add_argument(
        "--test",
        dest="tests",
        action="append",
        choices=TESTS,
        help="a paired test; repeat for more (default: all of " + ", ".join(TESTS) + ")",
    )
    add_choice_argument(
        tests, "--correction", CORRECTIONS, "multiple-testing correction across all runs and "
        "measures, per test"
    )
    tests.add_argument(
        "--permutations",
        type=positive_int,
        default=10_000,
        metavar="B",
        help="sign flips of the randomization test (exact below 2^n <= B; default: %(default)s)",
    )
    tests.add_argument(
        "--topics-only", action="store_true",
        help="with --intervals: the t-test on E[m] over topics alone, without the variance the "
        "unjudged documents leave in each mean difference",
    )  # fmt: skip
    design = parser.add_argument_group("design-based estimates from sampled qrels (docs/survey.md)")
    add_estimator_argument(design)
    add_quiet_argument(parser)
    add_format_argument(parser, extra=("trec",))


def run(args) -> int:
    import numpy as np

    from ..measures import evaluate, parse_measures

    if args.estimator is not None:
        from ._requests import SurveyRequest

        return survey_command(SurveyRequest.from_args(args, COMMAND),
                              COMMAND, measures=[str(m) for m in args.measures or ["AP"]],
                              pairs=None)
    from ._requests import Estimand

    Estimand.from_args(args).check((
        ("--estimate", args.estimate), ("--llm-labels", args.llm_labels),
        ("--model", args.model), ("--intervals", args.intervals),
    ))  # fmt: skip
    from ._sampled import inferred_request

    given = inferred_request(args, DEFAULT_MEASURES)
    if given is not None:
        return _with_inferred(given, args)
    from ._requests import CampaignInputs

    campaign = load_campaign(CampaignInputs.from_args(args, COMMAND), COMMAND)
    default = INTERVAL_MEASURES if wants_intervals(args) else DEFAULT_MEASURES
    measures = parse_measures(args.measures or default)
    names = [str(m) for m in measures]
    title = "estimand: qrels (trec_eval on the qrels given, unjudged = nonrelevant)"
    options = {
        "missing": "zero" if args.complete else "skip",
        "condensed": args.condensed,
        "gain": args.gain,
    }
    if args.topics_only and not (wants_intervals(args) and args.baseline is not None):
        from ..errors import InputError

        raise InputError("--topics-only is for --baseline with --intervals (or --model, "
                         "--llm-labels, --estimate)")  # fmt: skip
    if wants_intervals(args):
        return intervals(campaign, measures, args, COMMAND)
    campaign = campaign.truncated(args.depth)
    if args.baseline is not None:
        return _significance(campaign, measures, options, args)
    if not args.per_topic and args.format != "trec":  # the common answer, without pandas
        emit(_summary_columns(campaign, measures, options, args.complete), args.format,
             title=title)  # fmt: skip
        return 0
    means = evaluate(campaign, measures, **options)
    summary = _wide(means, ["system"], names)
    kept = campaign.coverage() if not args.complete else np.ones_like(campaign.coverage())
    summary.insert(1, "num_q", kept.sum(axis=1).astype(int))
    if not args.per_topic:
        if args.format == "trec":
            from ._trec import trec_eval_text

            sys.stdout.write(trec_eval_text(summary, None, measures))
        else:
            emit(_counts_as_integers(summary, measures), args.format, title=title)
        return 0
    topics = evaluate(campaign, measures, per_topic=True, **options)
    table = _wide(topics, ["system", "query_id"], names)
    if args.format == "trec":
        from ._trec import trec_eval_text

        sys.stdout.write(trec_eval_text(summary, table, measures))
        return 0
    import pandas as pd

    summary = summary.drop(columns="num_q").assign(query_id="all")[table.columns]
    order = {name: i for i, name in enumerate(campaign.systems)}
    frame = pd.concat([table, summary], ignore_index=True)
    frame = frame.iloc[np.argsort(frame["system"].map(order).to_numpy(), kind="stable")]
    emit(_counts_as_integers(frame.reset_index(drop=True), measures), args.format, title=title)
    return 0


def _with_inferred(given, args) -> int:
    """The inferred measures of sampled qrels, beside any ordinary measures asked for."""
    import pandas as pd

    from ..measures import evaluate
    from ._sampled import inferred_table, inferred_title, split_measures
    from ._survey import read_design

    measures, inferred = split_measures(given)
    keys = ["system", "query_id"] if args.per_topic else ["system"]
    if not measures:  # the inferred measures alone need no campaign
        design = read_design(args.qrels, args.rel_threshold, COMMAND)
        table = inferred_table(design.sample, design.rel_threshold, args, inferred)
    else:
        from ._requests import CampaignInputs

        campaign = load_campaign(CampaignInputs.from_args(args, COMMAND), COMMAND)
        table = inferred_table(campaign.sample, campaign.rel_threshold, args, inferred)
        options = {"missing": "zero" if args.complete else "skip", "condensed": args.condensed,
                   "gain": args.gain}
        names = [str(m) for m in measures]
        ordinary = _wide(evaluate(campaign, measures, per_topic=args.per_topic, **options),
                         keys, names)
        if args.per_topic:
            means = _wide(evaluate(campaign, measures, **options), ["system"], names)
            ordinary = pd.concat([ordinary, means.assign(query_id="all")[ordinary.columns]])
        table = ordinary.merge(table, on=keys, how="left", validate="one_to_one")
    columns = keys + [str(m) for m in given]
    title = inferred_title(inferred) + ("; trec_eval on the qrels given (the others)"
                                        if measures else "")
    emit(_counts_as_integers(table[columns].reset_index(drop=True), measures), args.format,
         title=title)
    return 0


def _significance(campaign, measures, options, args) -> int:
    """Every run against --baseline: one row per (measure, run, test)."""
    from ..errors import InputError
    from ..measures import evaluate
    from ..measures.significance import compare_to_baseline

    check_run_names([args.baseline], campaign.systems, "--baseline")
    if campaign.n_systems < 2:
        raise InputError("--baseline needs at least one other run to test")
    if args.format == "trec":
        raise InputError("--format trec has no layout for tests; use table, tsv, json, ...")
    if args.per_topic:
        raise InputError("--baseline prints one row per run, measure and test; drop -q")
    topics = evaluate(campaign, measures, per_topic=True, **options)
    frame = compare_to_baseline(
        topics,
        args.baseline,
        tests=tuple(dict.fromkeys(args.tests or TESTS)),
        correction=args.correction,
        alpha=1.0 - args.confidence,
        permutations=args.permutations,
        rng=args.seed,
    )
    print(
        f"relimpute evaluate: p-values carry topic-sampling uncertainty only (the qrels taken as "
        f"they are; unjudged documents scored as each measure scores them); {args.correction} "
        f"correction across all {frame['system'].nunique()} runs x {len(measures)} measures of each "
        f"test. For the uncertainty from unjudged documents add --intervals (tests on E[m]) or "
        "use `relimpute compare`.",
        file=sys.stderr,
    )
    emit(frame, args.format)
    return 0


def _summary_columns(campaign, measures, options, complete: bool) -> dict[str, list]:
    """The columns of each run's means, as the frame of them has them (:func:`_wide`, then
    :func:`_counts_as_integers`), made without pandas for :func:`~._format.emit`."""
    import numpy as np

    from ..measures.evaluate import run_means

    values = run_means(campaign, measures, **options)
    kept = campaign.coverage() if not complete else np.ones_like(campaign.coverage())
    columns = {"system": list(campaign.systems), "num_q": kept.sum(axis=1).tolist()}
    for m, measure in enumerate(measures):  # as _wide, then _counts_as_integers
        column = values[:, m]
        if measure.aggregate == "sum" and not np.isnan(column).any():
            column = np.round(column).astype(np.int64)
        columns[str(measure)] = column.tolist()
    return columns


def _counts_as_integers(frame: pd.DataFrame, measures) -> pd.DataFrame:
    """Count columns (NumRet, ...) as integers where every value is known."""
    import numpy as np

    for measure in measures:
        column = frame[str(measure)]
        if measure.aggregate == "sum" and column.notna().all():
            frame[str(measure)] = column.round().astype(np.int64)
    return frame


def _wide(frame: pd.DataFrame, keys: list[str], names: list[str]) -> pd.DataFrame:
    """Tidy rows (measures vary fastest, as ``evaluate`` orders them) to one column per measure."""
    out = frame[keys].iloc[:: len(names)].reset_index(drop=True)
    values = frame["value"].to_numpy().reshape(-1, len(names))
    for column, name in enumerate(names):
        out[name] = values[:, column]
    return out
