"""``--estimator ht|model-assisted|ppi++`` of ``evaluate`` and ``compare``: design-based and
model-assisted estimates from a sampled qrels file (:mod:`relimpute.confidence.survey`).

The design comes from the qrels: a header line ``query_id doc_id relevance
inclusion_probability`` (Poisson sampling, statAP's form) or five columns ``topic iter docno
stratum rel`` (stratified sampling without replacement, ``sample_eval.pl``'s form). The control
variate comes from ``--llm-labels FILE`` (the labels as predictions) or ``--model NAME``
(cross-fitted to the sample); ``ht`` needs neither.
"""

from __future__ import annotations

import sys
import warnings

from ..errors import InputError

ESTIMATORS = ("ht", "model-assisted", "ppi++")
ESTIMATOR_HELP = (
    "a design-based answer from a sampled qrels file (inclusion probabilities or strata), "
    "whatever the model: ht (Horvitz-Thompson; statAP's ratio for AP), model-assisted (the "
    "difference estimator, --model or --llm-labels as the control variate) or ppi++ (the same "
    "with its weight tuned per topic: never much wider than ht); intervals from the design "
    "(docs/survey.md)"
)


BIAS_CORRECTIONS = ("auto", "taylor", "jackknife", "none")
BIAS_CORRECTION_HELP = (
    "with --estimator, how AP's ratio is corrected for its bias: auto (the default: jackknife "
    "for a stratified sample, taylor for a Poisson one), taylor (its second-order term), "
    "jackknife (the jackknife's own estimate; strata only) or none (statAP)"
)
VARIANCES = ("auto", "jackknife", "linearised", "averaged")
VARIANCE_HELP = (
    "with --estimator, the variance of the interval: auto (the default: averaged with the "
    "jackknife's correction, else jackknife), jackknife (delete-one, within strata; of the "
    "jackknife-corrected AP: delete-two, wider), linearised, or averaged (with the jackknife's "
    "correction: the mean of the delete-two and the plain ratio's jackknife; "
    "examples/design_based/README.md)"
)


def interval_title(correction: str, variance: str) -> str:
    """How the title names AP's bias correction and the variance of the interval."""
    point = {"taylor": "AP less its second-order ratio bias",
             "jackknife": "AP the jackknife's bias-corrected ratio",
             "none": "AP the plain ratio"}[correction]
    if variance == "linearised":
        return f"linearised variance; {point}"
    if correction != "jackknife":
        return f"jackknife variance; {point}"
    return point + (", its delete-two jackknife variance" if variance == "jackknife" else
                    ", the mean of its delete-two and the plain ratio's jackknife variances")


def add_estimator_argument(parser) -> None:
    """``--estimator NAME`` (None: the command's model-based answer) and
    ``--bias-correction`` and ``--variance``."""
    parser.add_argument("--estimator", choices=ESTIMATORS, default=None, help=ESTIMATOR_HELP)
    parser.add_argument("--bias-correction", choices=BIAS_CORRECTIONS, default="auto",
                        help=BIAS_CORRECTION_HELP)
    parser.add_argument("--variance", choices=VARIANCES, default="auto", help=VARIANCE_HELP)


def add_margin_argument(parser) -> None:
    """``--margin EPS``: the equivalence margin of P(|ΔMAP| < ε)."""
    from ._common import number_between

    parser.add_argument(
        "--margin", type=number_between(0, 1), default=None, metavar="EPS",
        help="with --estimator, also P(|dMAP| < EPS): the pair is equivalent within EPS",
    )  # fmt: skip


def survey_command(request, command: str, *, measures, pairs) -> int:
    """Print the estimates of ``measures`` for every run (and ``pairs``, (A, B) names) that
    ``request`` (a :class:`relimpute.cli._requests.SurveyRequest`) asks for."""
    from ._format import emit

    table, title = survey_table(request, command, measures=measures, pairs=pairs)
    emit(table, request.format, title=title)
    return 0


def survey_table(request, command: str, *, measures, pairs, runs=None):
    """``(table, title)``: what :func:`survey_command` prints, its notes on stderr; ``runs``:
    the runs whose own rows are shown (None: every run; every run is estimated)."""
    from ..confidence.survey import ESTIMATOR_TITLES, SURVEY_ESTIMAND, by_design, estimate, \
        infer_sampling

    inputs = request.campaign
    # plain qrels are refused here, before the options are checked against each other
    design = read_design(inputs.qrels, inputs.rel_threshold, command)
    sample, threshold = design.sample, design.rel_threshold
    labels, model = inputs.llm_labels, request.model
    if request.estimator == "ht" and (labels or model is not None):
        raise InputError("--estimator ht uses no control variate: drop --model/--llm-labels, "
                         "or choose --estimator model-assisted or ppi++")
    if request.estimator != "ht" and not labels and model is None:
        raise InputError(f"--estimator {request.estimator} needs a control variate: --model NAME "
                         "(cross-fitted to the sample) or --llm-labels FILE")
    if labels and model is not None:
        raise InputError("give one control variate: --model or --llm-labels, not both")
    if len(labels) > 1:
        raise InputError("--estimator takes one --llm-labels file as its control variate")
    try:  # the design's reading of AP's ratio, named in the title
        sampling = infer_sampling(sample)  # read once: estimate() is told it
        correction, variance = by_design(request.bias_correction, request.variance, sampling)
    except ValueError as exc:
        raise InputError(str(exc), str(inputs.qrels)) from None
    campaign = _sampled_campaign(inputs, command, design, noted=model is not None)
    control, name = None, "none"
    if model is not None:
        from ..confidence.survey.control import model_predictions
        from ..progress import stage

        with stage(f"relimpute {command}: cross-fitting {model} to the sample"):
            control = model_predictions(campaign, sample, model, rng=request.seed,
                                        measures=measures)
        name = f"model {model} (cross-fitted, 2 folds)"
    elif labels:
        from ..confidence.survey.control import label_predictions

        control, name = label_predictions(labels[0], threshold), f"LLM labels {labels[0]}"
    try:
        table = estimate(sample, campaign, measures=measures, control=control,
                         estimator=request.estimator, pairs=pairs, level=request.level,
                         margin=request.margin, rel_threshold=threshold,
                         per_topic=request.per_topic, control_name=name, sampling=sampling,
                         bias_correction=correction, variance=variance)
    except ValueError as exc:
        raise InputError(str(exc), str(inputs.qrels)) from None
    for note in table.loc[(table["query_id"] == "all") & (table["note"] != ""), "note"].unique():
        print(f"relimpute {command}: note: {note}", file=sys.stderr)
    title = (f"estimator: {ESTIMATOR_TITLES[request.estimator]}; control variate: {name}; "
             f"{round(100 * request.level):d}% normal intervals from the design "
             f"({interval_title(correction, variance)}); "
             f"estimand: {SURVEY_ESTIMAND}")
    if runs is not None:
        table = table[table["run"].isin(runs) | (table["run_b"] != "")]
    if not request.per_topic:
        table = table[table["query_id"] == "all"].drop(columns=["query_id"])
    if not pairs:
        table = table.drop(columns=["run_b", "p_a_better", "p_equivalent"])
    elif request.margin is None:
        table = table.drop(columns=["p_equivalent"])
    return table.drop(columns=["estimand"]).reset_index(drop=True), title


def _sampled_campaign(inputs, command: str, design, *, noted: bool):
    """The runs of ``inputs`` read once with the sample ``design`` (its qrels read already), as
    evaluate reads them (by score, a document listed twice refused once): the estimates' ranks
    and the campaign a model is cross-fitted to; its notes on stderr when ``noted`` (a model
    is fitted to it, as to any campaign), else silent as the design's estimates were."""
    from dataclasses import replace

    from ..data import Campaign
    from ._common import load_campaign

    if noted:
        return load_campaign(replace(inputs, by_rank=False), command, design)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the design's notes were printed as it was read
        return Campaign.from_files(design, inputs.runs, by_rank=False,
                                   duplicates=inputs.duplicates)


#: why ordinary qrels give no design-based answer
NO_DESIGN = (
    "--estimator needs sampled qrels with a known design: a header line 'query_id doc_id "
    "relevance inclusion_probability' (Poisson sampling) or five columns 'topic iter docno "
    "stratum rel' (stratified); these qrels say nothing of the chance each document had to be "
    "judged, so no design-based interval can be made from them"
)


def read_design(qrels: str, rel_threshold: int | None, command: str):
    """The sampled ``qrels`` of the command read once (:class:`relimpute.io.campaign.Judgments`:
    the sample, and the threshold: ``rel_threshold`` as given, else the collection's settings,
    else 1), notes on stderr; ordinary qrels are refused (:data:`NO_DESIGN`)."""
    from ..io.campaign import read_judgments
    from ._common import grades_warning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reader's notes are printed below instead
        judgments = read_judgments(qrels, rel_threshold=rel_threshold)
    sample = judgments.sample
    if sample is None:
        raise InputError(NO_DESIGN, str(qrels))
    for note in judgments.notes:
        print(f"relimpute {command}: note: {note}", file=sys.stderr)
    threshold = judgments.rel_threshold
    given = "--rel-threshold" if rel_threshold is not None else judgments.threshold_from is not None
    judged = sample["relevance"].to_numpy()
    message = grades_warning(judged[judged >= 0], threshold, given=given, qrels=qrels)
    if message:  # a threshold above every grade: refused, as for any qrels
        print(f"relimpute {command}: {message}", file=sys.stderr)
    return judgments
