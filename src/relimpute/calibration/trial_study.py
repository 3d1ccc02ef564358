"""The reusability study (Carterette 2007 §4.3) as a study: :class:`CalibrationTrials`, one
unit per trial, run by :func:`run_study` on :func:`relimpute.studies.run`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from .._deprecation import renamed_kwargs
from ..data import Campaign
from ..studies import frame_from_json, frame_to_json, run, study_identity
from .report import CalibrationReport
from .strategies import Strategy, resolve_strategies
from .study import CalibrationStudy
from . import trials
from .trials import TrialSpec, run_similarity, trial_specs, true_map


@renamed_kwargs(client="scheduler", checkpoint="folder")
def run_study(
    campaign: Campaign,
    strategies: str | Sequence[str | Strategy] = "mtc,rtc,bayes",
    *,
    n_trials: int = 100,
    k: int = 10,
    c: int = 2,
    confidence: float = 0.95,
    depth: int | None = 100,
    groups: Mapping[str, str] | None = None,
    seed: int | None = None,
    jobs: int | None = 1,
    scheduler=None,
    progress: bool = True,
    folder=None,
    max_judgments: int | None = None,
    measure: str = "AP",
) -> CalibrationStudy:
    """Run ``n_trials`` trials of the reusability study for every strategy (paired).

    Parameters
    ----------
    campaign
        Runs with their full judgments (the oracle and the truth).
    strategies
        Names (comma-separated or a list) or :class:`Strategy` objects.
    n_trials, k, c, confidence
        Carterette (2007) §4.3: trials, runs per trial, initial runs, target
        confidence (the paper's α).
    depth
        Truncate runs at this depth (Carterette: 100); None keeps full depth.
    groups
        Run → group: draw one run per group (k of the groups uniformly).
    seed
        Study seed; trial seeds come from ``SeedSequence(seed).spawn(n_trials)``.
    jobs, scheduler
        Where the trials run (:func:`relimpute.studies.run`): joblib processes (-1 = all
        cores; None = the ambient joblib backend), or a ``distributed.Client`` (or a scheduler
        address). Results do not depend on either.
    progress
        Show a progress bar over trials (on a terminal; :func:`relimpute.progress.quiet`).
    max_judgments
        Stop a trial's judging after this many judgments when the confidence is
        not reached first (None: judge until it is, the paper's protocol).
    folder
        The study's output folder (a path; :func:`relimpute.studies.run`): each trial is
        saved there as it finishes and the report is written there; trials it already holds
        are not run again, so a killed study resumes with the same result (trial seeds
        depend on ``seed`` alone). A folder holding another study is refused.
    measure
        The measure whose mean over topics the confidence and the truth are about (default
        AP: MAP); the judging still follows each strategy.
    """
    chosen = resolve_strategies(strategies if isinstance(strategies, str) else list(strategies))
    study = CalibrationTrials(campaign, tuple(chosen), n_trials=n_trials, k=k, c=c, confidence=confidence,
                              depth=depth, groups=groups, seed=seed, max_judgments=max_judgments,
                              measure=measure)  # fmt: skip
    return run(study, folder, jobs=jobs, scheduler=scheduler, resume=True, progress=progress)


@dataclass(frozen=True, eq=False)
class CalibrationTrials:
    """The reusability study as a :class:`relimpute.studies.Study`: one unit per trial.

    ``campaign`` holds the full judgments (the oracle and the truth) and is truncated at
    ``depth`` here; the other fields are :func:`~relimpute.calibration.run_study`'s. ``cap``
    is the report's confidence cap and ``collection`` names its diagram (:meth:`write`).
    """

    campaign: Any
    strategies: tuple
    n_trials: int = 100
    k: int = 10
    c: int = 2
    confidence: float = 0.95
    depth: int | None = 100
    groups: Mapping[str, str] | None = None
    seed: int | None = None
    max_judgments: int | None = None
    measure: str = "AP"
    cap: float = 0.95
    collection: str | None = None

    command = "calibrate"
    unit = "trial"
    report = "report.md"

    def __post_init__(self) -> None:
        if not 0.5 < self.confidence <= 1.0:
            raise ValueError(f"confidence must lie in (0.5, 1], got {self.confidence}")
        budget = self.max_judgments
        if budget is not None and (int(budget) != budget or budget < 1):
            raise ValueError(f"max_judgments must be a positive integer or None, got {budget!r}")
        object.__setattr__(self, "campaign", self.campaign.truncated(self.depth, shrink=True))
        object.__setattr__(self, "strategies", tuple(self.strategies))
        trial_specs(self.campaign.systems, self.n_trials, self.k, self.c, 0, self.groups)  # checks

    def with_seed(self, seed: int) -> CalibrationTrials:
        return replace(self, seed=seed)

    def identity(self) -> dict:
        labels = [[s.source, len(s.frame)] for s in self.campaign.labels]
        arguments = {
            "trials": self.n_trials, "k": self.k, "c": self.c, "confidence": self.confidence,
            "depth": self.depth, "cap": self.cap, "strategies": [_described(s) for s in self.strategies],
            "budget": self.max_judgments, "measure": self.measure,
            "one_per_group": None if self.groups is None else dict(sorted(self.groups.items())),
            **({"llm_labels": labels} if labels else {}),
        }  # fmt: skip
        return study_identity(self.command, self.seed, arguments, self.campaign)

    @cached_property
    def _prepared(self) -> dict:
        """The truth and the runs' similarity, computed once here (they go to the workers)."""
        return {"truth": true_map(self.campaign, measure=self.measure),
                "similarity": run_similarity(self.campaign)}  # fmt: skip

    def units(self) -> list[dict]:
        self._prepared  # noqa: B018 (computed before the study is sent)
        specs = trial_specs(self.campaign.systems, self.n_trials, self.k, self.c, self.seed, self.groups)
        return [{"trial": s.trial, "seed": s.seed, "systems": list(s.systems), "n_initial": s.n_initial}
                for s in specs]  # fmt: skip

    def run_unit(self, unit: Mapping[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
        spec = TrialSpec(unit["trial"], unit["seed"], tuple(unit["systems"]), unit["n_initial"])
        return trials.run_trial(self.campaign, spec, self.strategies, confidence=self.confidence,
                                max_judgments=self.max_judgments, measure=self.measure,
                                **self._prepared)  # fmt: skip

    def encode(self, result: tuple[pd.DataFrame, pd.DataFrame]) -> dict:
        return {"pairs": frame_to_json(result[0]), "trials": frame_to_json(result[1])}

    def decode(self, data: Mapping[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
        return frame_from_json(data["pairs"]), frame_from_json(data["trials"])

    def combine(self, results: list) -> CalibrationStudy:
        config = {
            "n_trials": self.n_trials, "k": self.k, "c": self.c,
            "alpha": self.confidence,  # the key of the paper's α, kept so older reports still read
            "depth": self.depth, "max_judgments": self.max_judgments, "seed": self.seed,
            "one_per_group": self.groups is not None, "rel_threshold": self.campaign.rel_threshold,
            "measure": self.measure, "strategies": [s.name for s in self.strategies],
            "strategy_specs": {s.name: _described(s, settings=False) for s in self.strategies},
            **({"collection": self.collection} if self.collection else {}),
        }  # fmt: skip
        return CalibrationStudy(
            pairs=pd.concat([r[0] for r in results], ignore_index=True),
            trials=pd.concat([r[1] for r in results], ignore_index=True),
            config=config,
        )

    def write(self, result: CalibrationStudy, folder: Path) -> list[Path]:
        """The report (:class:`~relimpute.calibration.CalibrationReport`) and the pair table."""
        return CalibrationReport.from_study(result, cap=self.cap).write(folder, study=result)


def _described(strategy, settings: bool = True) -> dict[str, Any]:
    """A strategy as the study records it; ``settings``: a named model with its settings
    (what the identity compares), else by name (the report's config)."""
    model = strategy.model if isinstance(strategy.model, str) else repr(strategy.model)
    if settings and isinstance(strategy.model, str):
        from ..relevance import load_settings

        loaded = load_settings(strategy.model)
        model = {"model": loaded.model, "params": loaded.params}
    described = {"selector": strategy.selector, "model": model,
                 "selector_params": strategy.selector_kwargs(), "model_params": dict(strategy.model_params),
                 "budget_from": strategy.budget_from,
                 "monte_carlo_draws": strategy.n_draws}  # (0.2.0's key: old studies resume)  # fmt: skip
    if strategy.design is not None:  # a survey strategy (absent otherwise: old studies resume)
        described.update(design=strategy.design, estimator=strategy.estimator)
    return {"name": strategy.name, **described} if settings else described
