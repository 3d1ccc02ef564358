"""``evaluate`` with intervals: per run E[m], sd[m] and an interval from a model's posterior.

The same path as ``relimpute compare``: the model (the default one, ``--model``, the
labels' model of ``--llm-labels``, or the probabilities and draws ``--estimate FILE``
holds) and the confidence engine's Monte Carlo over its posterior draws, per measure, with
the same seed; the interval is the percentile interval of the draws of each run's mean
over topics (normal, E ± z·sd, for a model without draws and a measure with exact moments).
"""

from __future__ import annotations

import sys

#: the measures with intervals when no -m is given: MAP, as `compare` (each measure is one
#: Monte Carlo pass over the posterior draws)
INTERVAL_MEASURES = ("AP",)


def wants_intervals(args) -> bool:
    """Whether ``evaluate`` scores against a model (or an --estimate file), not the qrels:
    asked for by name, or by ``--estimand complete|pool`` (the model's estimands)."""
    return bool(
        args.intervals or args.model is not None or args.llm_labels or args.estimate is not None
        or args.estimand in ("complete", "pool")
    )


def check_options(args, measures) -> None:
    """An error for an option the model path has no answer for."""
    from ..errors import InputError

    asked = next(
        o for o, v in (("--estimate", args.estimate), ("--llm-labels", args.llm_labels),
                       ("--model", args.model), ("--intervals", args.intervals),
                       (f"--estimand {args.estimand}", True)) if v  # fmt: skip
    )
    if args.estimate is not None and args.model is not None:
        raise InputError("give one of --model and --estimate, not both")
    for option, given in (
        ("-q/--per-topic", args.per_topic),
        ("--condensed", args.condensed),
        ("--format trec", args.format == "trec"),
        ("--gain exponential", args.gain != "linear"),
    ):
        if given:
            raise InputError(f"{asked} cannot be combined with {option}")
    if args.estimand == "pool":  # exact moments only
        from ..confidence import has_closed_form

        for measure in measures:
            if not has_closed_form(str(measure)):
                raise InputError(
                    f"pool has exact moments only (AP, P@k, RBP, DCG, NumRelRet), not {measure}: "
                    "choose -m among them, or --estimand complete", "--estimand"
                )  # fmt: skip


def interval_table(campaign, estimate, measures, args, engine):
    """One row per run: ``system, num_q``, then per measure ``E[m], sd[m], ci_low[m],
    ci_high[m]`` at --confidence; only ``E[m]`` when the estimate is a file without draws."""
    import numpy as np
    import pandas as pd

    point_only = args.estimate is not None and estimate.n_draws == 0
    frame = pd.DataFrame({"system": list(campaign.systems), "num_q": campaign.n_topics})
    for measure in measures:
        scores = engine.confidence(
            campaign, estimate, pairs=[], measure=str(measure), n_draws=args.mc_draws,
            rng=args.seed,
        ).scores  # fmt: skip
        scale = campaign.n_topics if measure.aggregate == "sum" else 1
        frame[f"E[{measure}]"] = scores.e_map * scale
        if point_only:
            continue
        ci = scores.confidence_interval(args.confidence)
        frame[f"sd[{measure}]"] = scores.sd_map * scale
        frame[f"ci_low[{measure}]"] = np.asarray(ci.low) * scale
        frame[f"ci_high[{measure}]"] = np.asarray(ci.high) * scale
    return frame


def baseline_tests(campaign, estimate, measures, args, engine):
    """``compare_to_baseline`` on each run's per-topic E[m]; the t-test adds the variance
    of each run's mean difference from the baseline that the judgments leave (the
    engine's ``var_delta_map``, from the same draws), unless --topics-only."""
    import pandas as pd

    from ..measures.significance import TESTS, compare_to_baseline
    from ._common import check_run_names

    check_run_names([args.baseline], campaign.systems, "--baseline")
    others = [s for s in campaign.systems if s != args.baseline]
    if not others:
        from ..errors import InputError

        raise InputError("--baseline needs at least one other run to test")
    tidy, variance = [], {}
    for measure in measures:
        result = engine.confidence(
            campaign, estimate, pairs=[(s, args.baseline) for s in others],
            measure=str(measure), n_draws=args.mc_draws, rng=args.seed,
        )  # fmt: skip
        frame = result.scores.topic_frame().rename(columns={"e_ap": "value"})
        tidy.append(frame.assign(measure=str(measure))[["system", "query_id", "measure", "value"]])
        variance.update({(str(measure), s): v for s, v in zip(others, result.var_delta_map)})
    return compare_to_baseline(
        pd.concat(tidy, ignore_index=True), args.baseline,
        tests=tuple(dict.fromkeys(args.tests or TESTS)),
        correction=args.correction, alpha=1.0 - args.confidence,
        permutations=args.permutations, rng=args.seed,
        judgment_variance=None if args.topics_only else variance,
    )  # fmt: skip


def _tests_note(frame, measures, args, command: str) -> str:
    """What the p-values of the tests on E[m] carry."""
    tests = list(dict.fromkeys(frame["test"]))
    if args.topics_only or "t" not in tests:
        what = "topic sampling only: the uncertainty from unjudged documents is not in them"
    else:
        what = ("topic sampling, and in the t-test also the variance the unjudged documents "
                "leave in each run's mean difference (--topics-only drops it)")  # fmt: skip
        others = [name for name in tests if name != "t"]
        if others:
            what += f"; the {' and '.join(others)} test(s) see E[m] only"
    return (
        f"relimpute {command}: the tests are on each run's per-topic E[m] (expected scores under "
        f"the model); their p-values carry {what}; {args.correction} correction across all "
        f"{frame['system'].nunique()} runs x {len(measures)} measures of each test"
    )


def intervals(campaign, measures, args, command: str) -> int:
    """``evaluate`` with --intervals, --model, --llm-labels or --estimate."""
    from ..errors import InputError
    from ._format import emit

    from ._estimand import estimand_engine
    from ._relevance import relevance_estimate
    from ._requests import Estimand, RelevanceSource
    from ._answer import file_without_draws, labels_pool_title, narrower_note, on_labels_pool

    args.estimand = args.estimand or "complete"  # E[m]'s default
    check_options(args, measures)
    estimate = relevance_estimate(RelevanceSource.from_args(args), campaign, measures, command,
                                  args.seed)
    if args.estimate is not None and estimate.n_draws == 0:
        why = file_without_draws(args.estimate)
        if args.intervals:
            raise InputError(
                f"{why}: refit with `relimpute fit QRELS RUN... -o {args.estimate}` (it writes "
                "the draws beside it) or evaluate with --model instead of --estimate"
            )
        print(
            f"relimpute {command}: note: {why}, so it gives E[m] only: sd and intervals need "
            f"the model's posterior draws (refit with `relimpute fit ... -o {args.estimate}`, "
            "or evaluate with --model)",
            file=sys.stderr,
        )
    elif estimate.n_draws == 0:
        print(narrower_note(command, f"the model {estimate.model!r} gives a point estimate "
                                     "only"), file=sys.stderr)  # fmt: skip
    engine = estimand_engine(Estimand.from_args(args), campaign, command, depth=args.depth)
    if estimate.n_draws and engine.estimand == "pool":
        print(narrower_note(command, "--estimand pool uses the model's point estimate of p"),
              file=sys.stderr)  # fmt: skip
    if args.baseline is not None:
        frame = baseline_tests(campaign, estimate, measures, args, engine)
        print(_tests_note(frame, measures, args, command), file=sys.stderr)
        emit(frame, args.format, title=labels_pool_title(engine.describe(campaign), estimate))
        return 0
    frame = interval_table(campaign, estimate, measures, args, engine)
    where = f" at depth {args.depth}" if args.depth else ""
    once = "every retrieved document is judged" if engine.estimand == "complete" else "each run's top K are judged"
    if on_labels_pool(estimate) and engine.estimand == "complete":
        once = ("every labelled document is judged (a document neither judged nor labelled counts "
                "nonrelevant, as trec_eval counts one outside its qrels)")  # fmt: skip
    if args.estimate is not None and estimate.n_draws == 0:
        spread = ""
    else:
        spread = (
            f"; sd[m] and the {args.confidence:.0%} interval [ci_low, ci_high] are the "
            "uncertainty from unjudged documents"
            + (f" and the model's parameters ({estimate.n_draws} posterior draws)"
               if estimate.n_draws and engine.estimand == "complete" else "")  # fmt: skip
        )
    print(
        f"relimpute {command}: E[m] is the measure{where} expected once {once}{spread}, "
        "topics fixed (every qrels topic counts, as -c)",
        file=sys.stderr,
    )
    emit(frame, args.format, title=labels_pool_title(engine.describe(campaign), estimate))
    return 0
