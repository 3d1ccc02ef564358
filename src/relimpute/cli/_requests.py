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

    def check(self, models: tuple[tuple[str, object], ...] = ()) -> None:
        """Refuse ``--pool-depth`` without ``--estimand pool``, and a model (``models``: the
        command's ``(option, value)`` pairs that choose one) with ``--estimand qrels``."""
        from ..errors import InputError

        if self.pool_depth is not None and self.name != "pool":
            raise InputError(f"the depth of --estimand pool, not of {self.name}: add --estimand "
                             "pool or drop --pool-depth", "--pool-depth")  # fmt: skip
        given = [option for option, value in models if value]
        if self.name == "qrels" and given:
            raise InputError(f"qrels is trec_eval on the qrels given and uses no relevance model: "
                             f"drop {given[0]}, or choose --estimand complete or pool",
                             "--estimand")  # fmt: skip


@dataclass(frozen=True)
class RelevanceSource:
    """Where the relevance of unjudged documents comes from: ``--estimate FILE``, ``--prior P``
    or ``--model NAME|PATH`` (None each: the default model), with ``--llm-labels`` as the
    model's evidence (:func:`relimpute.cli._relevance.relevance_estimate`)."""

    model: str | None
    prior: float | None
    estimate: str | None
    labels: tuple[str, ...]

    @classmethod
    def from_args(cls, args) -> RelevanceSource:
        return cls(args.model, getattr(args, "prior", None), args.estimate,
                   tuple(getattr(args, "llm_labels", None) or ()))  # fmt: skip

    def check(self) -> None:
        """One source at most, and the labels with a fitted model: not with ``--prior``
        (``--estimate`` may have them: they name documents it counts)."""
        from ..errors import InputError
        from ._labels import LABELS_MODEL

        sources = (("--model", self.model), ("--prior", self.prior), ("--estimate", self.estimate))
        given = [option for option, value in sources if value is not None]
        if len(given) > 1:
            raise InputError(f"give one of --model, --prior and --estimate, not "
                             f"{' and '.join(given)}")
        if self.labels and self.prior is not None:
            raise InputError(f"--llm-labels cannot be combined with --prior: the labels are "
                             f"evidence for a model fitted here ({LABELS_MODEL})")  # fmt: skip

    def chosen(self) -> tuple[tuple[str, object], ...]:
        """The ``(option, value)`` pairs that choose a relevance model (:meth:`Estimand.check`)."""
        return (("--model", self.model), ("--prior", self.prior is not None),
                ("--estimate", self.estimate), ("--llm-labels", self.labels))  # fmt: skip


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
    bias_correction: str = "auto"
    variance: str = "auto"

    @classmethod
    def from_args(cls, args, command: str) -> SurveyRequest | None:
        """None when no ``--estimator`` is given (the command's model-based answer)."""
        if args.estimator is None:
            return None
        return cls(CampaignInputs.from_args(args, command), args.estimator, args.model, args.seed,
                   args.confidence, getattr(args, "margin", None),
                   getattr(args, "per_topic", False), args.format,
                   getattr(args, "bias_correction", "auto"),
                   getattr(args, "variance", "auto"))  # fmt: skip


@dataclass(frozen=True)
class CompareRequest:
    """What ``relimpute compare`` asks: the campaign, the relevance source, the estimand, the
    measure, the runs (``systems``; empty: all), how the answer is computed and printed,
    ``by_design`` the design-based answer asked instead (``--estimator``), if any, and
    ``parts`` the topic parts it is computed in; checked as it is built."""

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

    def __post_init__(self) -> None:
        """The options against each other, before any file is read: ``--topic-parts`` with
        what it splits; then, for the model-based answer, one relevance source, the labels with
        a fitted model and ``--estimand`` (qrels takes no model, pool exact moments)."""
        self._check_parts()
        if self.by_design is None:
            self.relevance.check()
            self.estimand.check(self.relevance.chosen())
            self._check_pool()

    def _check_parts(self) -> None:
        """--topic-parts with what it can split: a model fitted per part, complete or qrels."""
        from ..errors import InputError

        parts, source = self.parts, self.relevance
        if parts.parts is None:
            if parts.scheduler is not None or parts.jobs != 1:
                given = "--scheduler" if parts.scheduler is not None else "--jobs"
                raise InputError("runs the topic parts: give --topic-parts N too", given)
            return
        conflicts = (("--estimate", source.estimate is not None), ("--llm-labels", source.labels),
                     ("--topic-bootstrap", self.topics), ("--estimator", self.by_design),
                     ("--estimand pool", self.estimand.name == "pool"))  # fmt: skip
        for option, given in conflicts:
            if given:
                raise InputError(f"the topic parts fit a model (or --prior) per part and score "
                                 f"complete or qrels: drop {option}", "--topic-parts")  # fmt: skip

    def _check_pool(self) -> None:
        """``--estimand pool`` has exact moments only: no --topic-bootstrap, no other measure."""
        from ..confidence import has_closed_form
        from ..errors import InputError

        if self.estimand.name != "pool":
            return
        if self.topics:
            raise InputError("pool has exact moments only, and --topic-bootstrap is Monte Carlo: "
                             "drop --topic-bootstrap, or choose --estimand complete or qrels",
                             "--estimand")  # fmt: skip
        if not has_closed_form(self.measure):
            raise InputError(f"pool has exact moments only (AP, P@k, RBP, DCG, NumRelRet), not "
                             f"{self.measure}: choose --estimand complete or qrels for it",
                             "--estimand")  # fmt: skip

    @classmethod
    def from_args(cls, args, command: str) -> CompareRequest:
        if args.margin is not None and args.estimator is None:
            from ..errors import InputError

            raise InputError("--margin is for --estimator (the equivalence P(|dMAP| < EPS))")
        return cls(
            CampaignInputs.from_args(args, command), RelevanceSource.from_args(args), args.seed,
            Estimand.from_args(args), args.measure, tuple(args.systems or ()),
            args.ratio, args.depth, args.confidence, args.mc_draws, args.normal, args.topics,
            args.matrix, args.format, SurveyRequest.from_args(args, command),
            TopicParts.from_args(args),
        )  # fmt: skip


#: why calibrate gives the complete estimand only: its truth (``--estimand pool`` and others)
_POOLED_TRUTH = (
    "its trials start from no judgments and judge where a strategy chooses, so no run is pooled "
    "to a depth and the truth they score is the complete MAP, not each run's top K judged "
    "(relimpute poolbias scores runs left out of a pool)"
)
_HELD_OUT_TRUTH = (
    "its trials check the confidence about the complete MAP against the held-out qrels"
)


@dataclass(frozen=True)
class CalibrateRequest:
    """What ``relimpute calibrate`` asks: the campaign, the study's settings (the keywords of
    :class:`relimpute.calibration.CalibrationTrials` but the campaign and strategies), the
    strategies by name (``settings_dir``: their settings from there) and where the study runs
    and is written; checked as it is built."""

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

    def __post_init__(self) -> None:
        """The estimand the trials score (complete only) and the output folder, checked before
        any file is read."""
        from .._files import check_output_path
        from ._estimand import refuse_estimand

        refuse_estimand(self.estimand, "calibrate", ("complete",),
                        _POOLED_TRUTH if self.estimand == "pool" else _HELD_OUT_TRUTH)
        check_output_path(self.output, directory=True)  # before the study, not after it

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
