"""What a command asks for, read once from argparse's namespace into frozen values.

A command's ``run(args)`` builds its request here, in one place, and hands its helpers the
values they read (the campaign's files, the relevance source, the estimand), never ``args``.
Imported by ``run`` only: ``--help`` loads no dataclass machinery (tests/test_startup.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

#: the commands that fit a relevance model to the campaign (evaluate does with an interval)
FITTING_COMMANDS = frozenset({"fit", "compare", "judge", "calibrate", "newrun", "poolbias"})


@dataclass(frozen=True)
class CampaignInputs:
    """The campaign a command reads: QRELS, RUN..., --rel-threshold, --by-rank, --duplicates
    and --llm-labels (:func:`relimpute.cli._common.add_campaign_arguments`); ``fits`` says
    whether a model is fitted to it, which sizes the memory it needs."""

    qrels: str
    runs: list[str]
    rel_threshold: int | None
    by_rank: bool
    duplicates: str
    llm_labels: tuple[str, ...]
    fits: bool

    @classmethod
    def from_args(cls, args, command: str) -> CampaignInputs:
        fits = command in FITTING_COMMANDS or any(
            getattr(args, name, None) for name in ("intervals", "model", "llm_labels")
        )
        return cls(args.qrels, args.runs, args.rel_threshold, args.by_rank, args.duplicates,
                   tuple(getattr(args, "llm_labels", None) or ()), fits)  # fmt: skip


@dataclass(frozen=True)
class Estimand:
    """--estimand NAME and --pool-depth K (None: inferred from the judgments)."""

    name: str
    pool_depth: int | None = None

    @classmethod
    def from_args(cls, args) -> Estimand:
        return cls(args.estimand, getattr(args, "pool_depth", None))


@dataclass(frozen=True)
class RelevanceSource:
    """Where the relevance of unjudged documents comes from: ``--estimate FILE``, ``--prior P``
    or ``--model NAME|PATH`` (None each: the default model), with ``--llm-labels`` as the
    model's evidence (:func:`relimpute.cli._estimate.relevance_estimate`)."""

    model: str | None
    prior: float | None
    estimate: str | None
    labels: tuple[str, ...]

    @classmethod
    def from_args(cls, args) -> RelevanceSource:
        return cls(args.model, getattr(args, "prior", None), args.estimate,
                   tuple(getattr(args, "llm_labels", None) or ()))  # fmt: skip


@dataclass(frozen=True)
class TopicParts:
    """--topic-parts N (None: one fit of every topic) and where the parts run: --jobs and
    --scheduler (:func:`relimpute.confidence.compare_in_parts`)."""

    parts: int | None
    jobs: int
    scheduler: str | None

    @classmethod
    def from_args(cls, args) -> TopicParts:
        return cls(args.topic_parts, args.jobs, args.scheduler)


@dataclass(frozen=True)
class SurveyRequest:
    """A design-based answer (``--estimator``, :mod:`relimpute.cli._survey`): the campaign (its
    qrels sampled with a known design), the estimator, its control variate's model (None:
    the labels', or none), the interval's level, ``--margin`` (compare), the output, AP's
    ``--bias-correction`` and the ``--variance``."""

    campaign: CampaignInputs
    estimator: str
    model: str | None
    seed: int
    level: float
    margin: float | None
    per_topic: bool
    format: str
    bias_correction: str = "taylor"
    variance: str = "jackknife"

    @classmethod
    def from_args(cls, args, command: str) -> SurveyRequest | None:
        """None when no ``--estimator`` is given (the command's model-based answer)."""
        if args.estimator is None:
            return None
        return cls(CampaignInputs.from_args(args, command), args.estimator, args.model, args.seed,
                   args.confidence, getattr(args, "margin", None),
                   getattr(args, "per_topic", False), args.format,
                   getattr(args, "bias_correction", "taylor"),
                   getattr(args, "variance", "jackknife"))  # fmt: skip


@dataclass(frozen=True)
class CompareRequest:
    """What ``relimpute compare`` asks: the campaign, the relevance source, the estimand, the
    measure,
    the runs (``systems``; empty: all), how the answer is computed and printed,
    ``by_design`` the design-based answer asked instead (``--estimator``), if any, and
    ``parts`` the topic parts it is computed in."""

    campaign: CampaignInputs
    relevance: RelevanceSource
    seed: int
    estimand: Estimand
    measure: str
    systems: tuple[str, ...]
    ratio: str
    depth: int | None
    confidence: float
    mc_draws: int
    normal: bool
    topics: bool
    matrix: bool
    format: str
    by_design: SurveyRequest | None
    parts: TopicParts = TopicParts(None, 1, None)  # one fit of every topic

    @classmethod
    def from_args(cls, args, command: str) -> CompareRequest:
        return cls(
            CampaignInputs.from_args(args, command), RelevanceSource.from_args(args), args.seed,
            Estimand.from_args(args), args.measure, tuple(args.systems or ()),
            args.ratio, args.depth, args.confidence, args.mc_draws, args.normal, args.topics,
            args.matrix, args.format, SurveyRequest.from_args(args, command),
            TopicParts.from_args(args),
        )  # fmt: skip


@dataclass(frozen=True)
class CalibrateRequest:
    """What ``relimpute calibrate`` asks: the campaign, the study's settings (the keywords of
    :class:`relimpute.calibration.CalibrationTrials` but the campaign and strategies), the
    strategies by name (``settings_dir``: their settings from there) and where the study runs
    and is written."""

    campaign: CampaignInputs
    estimand: str
    strategies: str
    settings_dir: str | None
    one_per_group: str | None
    study: Mapping[str, object]
    output: str
    resume: bool
    overwrite: bool
    jobs: int
    scheduler: str | None
    quiet: bool

    @classmethod
    def from_args(cls, args, command: str) -> CalibrateRequest:
        study = MappingProxyType(dict(
            n_trials=args.trials, k=args.k, c=args.c, confidence=args.confidence,
            depth=args.depth or None, seed=args.seed, max_judgments=args.budget,
            measure=args.measure, cap=args.cap,
        ))  # fmt: skip
        return cls(
            CampaignInputs.from_args(args, command), args.estimand, args.strategies, args.models,
            args.one_per_group, study, args.output, args.resume, args.overwrite, args.jobs,
            args.scheduler, args.quiet,
        )  # fmt: skip
