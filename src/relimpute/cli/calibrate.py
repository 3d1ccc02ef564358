"""``relimpute calibrate``: the reusability study of Carterette (2007, §4.3–4.4) on real runs."""

from __future__ import annotations

import sys

from ._common import (
    add_campaign_arguments,
    add_resume_arguments,
    add_seed_argument,
    add_parallel_arguments,
    integer_at_least,
    load_campaign,
    number_between,
    output_folder,
    positive_int,
)
from ._labels import add_llm_labels_argument, strategies_with_labels
from ._vocabulary import (
    add_confidence_argument,
    add_depth_argument,
    add_estimand_argument,
    add_groups_argument,
    add_one_measure_argument,
    add_quiet_argument,
)

COMMAND = "calibrate"
HELP = "measure whether confidence is calibrated: trials, bins, W, τ, paired tests"
DESCRIPTION = """\
Run the reusability study of Carterette (2007, §4.3-4.4). Each trial draws k runs
(optionally one per group) and c initial ones, judges for the initial pair with a
selection strategy and an oracle from the full qrels until --confidence,
fits the strategy's relevance model on those judgments alone, and predicts
P(MAP_a > MAP_b) for every pair of the k runs. The report (markdown, CSV, JSON,
reliability diagram) compares confidence with accuracy: Table 2 per strategy, W,
ECE, Brier, log loss, Tables 3-4, and paired tests between strategies.

strategies: mtc (uniform prior), rtc (Carterette 2007: the RTC loop and its expert
model, as published), bayes (Bayesian hierarchy on the MTC judgments),
bayes-mc (the same, confidence by Monte Carlo over its posterior draws),
fusion-mc (the default answer: the MTC judgments generalised by the default
fusion model, confidence by Monte Carlo over its posterior draws), posterior
(judged until the default model's posterior predictive confidence is reached, then
scored as fusion-mc), ip (incremental pooling, as many judgments as mtc),
DESIGN-ESTIMATOR (stratified-ht, stratified-ppi++, pps-ht, pps-ppi++, guided-ht,
guided-ppi++: a random sample of the trial's pool drawn with judge --design's
design, as many judgments as mtc, read with evaluate --estimator's estimator), or any
SELECTOR+MODEL pair such as mtc+rtc. Models named here take their shipped settings (models/NAME.json).

The output folder carries manifest.json naming the study (arguments, seed,
labels, data) and keeps each finished trial in OUT/.resume/: a stopped study
goes on with the same command and --resume, and writes the report an
uninterrupted run writes (report.md begins with an UNFINISHED line until then).
A folder holding a study is never cleared unasked: without --resume the command
is refused there, unless the study is this one and complete (it runs again
from its kept trials) or --overwrite starts afresh. When standard error is not a
terminal, progress lines say how many trials are done (-Q: none).

QRELS are the full qrels (the oracle and the truth). The old spelling
--runs RUN... --qrels QRELS still works, with a note.

example:
  relimpute calibrate DL19/qrels.txt DL19/runs --rel-threshold 2 --trials 200 \\
      --k 10 --c 2 --strategies mtc,rtc,fusion-mc --groups DL19/groups.tsv -o out/
"""


def add_arguments(parser) -> None:
    add_campaign_arguments(parser)
    add_llm_labels_argument(parser)
    parser.add_argument("--trials", type=positive_int, default=100, help="number of trials (default 100)")
    parser.add_argument("--k", type=integer_at_least(2), default=10, help="runs per trial (default 10)")
    parser.add_argument("--c", type=positive_int, default=2, help="initial runs per trial (default 2)")
    parser.add_argument(
        "--strategies", default="mtc,rtc,fusion-mc", help="comma-separated strategies (default %(default)s)"
    )
    add_confidence_argument(parser, "judge each trial until this confidence")
    add_estimand_argument(parser, what=" the trials judge towards (complete only)")
    add_depth_argument(parser, default=100, why="the paper's setup")
    parser.add_argument(
        "--budget",
        type=positive_int,
        metavar="N",
        help="stop a trial's judging after N judgments when --confidence is not reached first "
        "(default: judge until it is, the paper's protocol); the report counts the trials it stopped",
    )
    add_groups_argument(parser, "one_per_group", "draw one run per group (its run and group columns)")
    parser.add_argument("--cap", type=number_between(0.5, 1), default=0.95, help="confidence cap of the capped tables (default 0.95)")
    add_one_measure_argument(
        parser,
        "state and score the confidence for this measure's mean over topics instead of MAP "
        "(e.g. nDCG@10; the judging still follows each strategy; default %(default)s)",
    )
    add_seed_argument(parser, "the study (trials are reproducible from it)")
    add_parallel_arguments(parser, "trials")
    parser.add_argument(
        "--settings-dir",
        dest="models",
        metavar="DIR",
        help="take a named model's settings from DIR/NAME.json where that file exists, instead of "
        "the shipped models/ (e.g. settings chosen without the collection under study)",
    )
    add_quiet_argument(parser)
    parser.add_argument("-o", "--output", required=True, type=output_folder,
                        help="output folder for the report")  # fmt: skip
    add_resume_arguments(
        parser,
        "go on with the study a stopped run left in --output: the trials it finished are "
        "kept (each is saved there as it ends), the others run, and the report is the one an "
        "uninterrupted run writes; refused if the folder holds another study (other runs, "
        "qrels, labels or options, --seed included: give the study's own --seed)",
        "start afresh in --output though it holds a study (another one, or this one "
        "unfinished): its finished trials are dropped and its report files replaced; without "
        "--resume or this, such a folder is refused and nothing is lost",
    )


def run(args) -> int:
    from ._requests import CalibrateRequest

    return study(CalibrateRequest.from_args(args, COMMAND))


def study(request) -> int:
    """Run, or go on with, the study ``request`` (a :class:`relimpute.cli._requests.CalibrateRequest`)
    asks for, and print its summary."""
    from pathlib import Path  # here, not at the top: --help does not load it

    from ..calibration import CalibrationTrials
    from ..calibration.strategies import resolve_strategies, with_settings_from
    from ..groups import read_groups
    from ..studies import run as run_study

    campaign = load_campaign(request.campaign, COMMAND)
    groups = read_groups(request.one_per_group).run_to_group() if request.one_per_group else None
    try:  # check the study's settings before any work
        strategies = resolve_strategies(request.strategies)
        if request.settings_dir:
            strategies = with_settings_from(strategies, request.settings_dir)
        strategies = strategies_with_labels(request.campaign.llm_labels, strategies)
        if not 0.5 < request.study["confidence"] < 1.0:
            raise ValueError("need 0.5 < --confidence < 1")
        trials = CalibrationTrials(
            campaign, tuple(strategies), groups=groups, **request.study,
            collection=Path(request.campaign.qrels).resolve().parent.name,  # names the diagram
        )  # fmt: skip
    except (KeyError, ValueError) as exc:
        print(f"relimpute calibrate: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    run_study(trials, request.output, jobs=request.jobs, scheduler=request.scheduler,
              resume=request.resume, overwrite=request.overwrite, progress=not request.quiet)  # fmt: skip
    print((Path(request.output) / "summary.txt").read_text(encoding="utf-8"), end="")
    print(f"\nreport written to {Path(request.output) / 'report.md'}")
    return 0
