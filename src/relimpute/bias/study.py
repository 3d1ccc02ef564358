"""The leave-one-group-out pool-bias study (Lipani et al. 2016 §4.1; Webber & Park 2009 §3).

For each group with a pooled run, its pooled runs are taken out of the pool
(the pool of the other groups' pooled runs at the same depth becomes the
qrels), scored against that reduced pool, corrected, and compared with their
full-pool score (the pool of every pooled run at that depth). Per corrector
and measure, over the tested runs (all pooled runs, or without the bottom 25%
by full-pool score):

MAE
    mean |full-pool − corrected|.
SRE
    system rank error: Σ over tested runs of |rank of its full-pool score −
    rank of its corrected score among the others' full-pool scores|.
SRE*
    the runs passed over in that move, counted only when the paired t-test
    of the full-pool per-topic scores of the two runs has p < 0.05.
τ
    Kendall's τ-b between full-pool and corrected scores.
coverage
    share of 95% intervals that hold the full-pool score (correctors with one).

The left-out runs are also sliced by their hole fraction (:mod:`relimpute.bias.slices`).

The definitions follow the authors' PoolBiasEstimators (``ScoresError``).
Webber & Park's Algorithm 2 is run with ``n_common`` common topics drawn
``common_repeats`` times per run; its metrics are averaged over the draws.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from .._deprecation import renamed_kwargs
from ..studies.folder import frame_from_json, frame_to_json
from ..data import Campaign
from ..errors import InputError
from ..measures import parse_measures
from .base import STUDY_MEASURES, PoolContext, get_corrector, topic_scores
from .common_topics import common_topic_adjustment
from ..groups import RunGroups
from .pools import LeaveOutPool, check_depth, group_leave_outs
from .slices import hole_fractions, hole_slices, pair_slices, slices_markdown
from .study_scores import study_metrics

#: what a step leaves out of the pool: a run (a variant of the pooled systems; its group's other
#: runs stay pooled) or a group (a new system)
LEAVE = ("group", "run")
#: correctors of the study without a relevance model (the fast ones)
PUBLISHED = ("reduced", "condensed", "webber-park", "lipani", "anti-precision")


@dataclass(frozen=True, eq=False)
class PoolBiasStudy:
    """Results of :func:`run_pool_bias_study`.

    Attributes
    ----------
    estimates
        One row per (group, run, corrector, measure, repeat): ``reduced``,
        ``estimate``, ``ci_low``, ``ci_high``, ``truth`` (full-pool score) and ``holes`` (the
        run's hole fraction, :mod:`relimpute.bias.slices`).
    metrics
        One row per (corrector, measure, filter): ``mae, sre, sre_star, tau,
        coverage, width, n_runs``.
    truth_topics
        ``(M, P, T)`` full-pool per-topic scores of the pooled runs.
    timing
        Seconds spent per corrector.
    settings
        What was run (depth, measures, correctors, seed, ...).
    slices, pair_slices
        The left-out runs by hole fraction (:func:`~relimpute.bias.slices.hole_slices`), and
        their pairs with the pooled runs (:func:`~relimpute.bias.slices.pair_slices`).
    """

    estimates: pd.DataFrame
    metrics: pd.DataFrame
    truth_topics: np.ndarray = field(repr=False)
    timing: dict
    settings: dict
    slices: pd.DataFrame = field(default_factory=pd.DataFrame)
    pair_slices: pd.DataFrame = field(default_factory=pd.DataFrame)

    def to_frame(self) -> pd.DataFrame:
        return self.metrics.copy()

    def __str__(self) -> str:
        return self.metrics.to_string(index=False, float_format=lambda x: f"{x:.4f}")


@renamed_kwargs(depth="pool_depth")
def check_study_input(
    campaign: Campaign, groups: RunGroups, pool_depth: int, n_common: int = 0, leave: str = "group"
) -> tuple[str, ...]:
    """Clear errors before any work; returns the pooled runs."""
    check_depth(pool_depth)
    if leave not in LEAVE:
        raise InputError(f"must be 'run' or 'group', got {leave!r}", "leave")
    groups.check_runs(campaign.systems)
    groups.check_pooled_groups(campaign.systems)
    pooled = groups.pooled_runs(campaign.systems)
    if len({groups.group_of(r) for r in pooled}) < 2:
        raise InputError(
            "leave-one-group-out needs pooled runs from at least two groups", groups.source
        )
    if leave == "run" and len({groups.group_of(r) for r in pooled}) == len(pooled):
        raise InputError(
            "every group has one pooled run, so leaving a run out is leaving its group out "
            "(use 'group')", "leave"
        )  # fmt: skip
    rows = campaign.system_index(list(pooled))
    deepest = max(int(t.depth[rows].max(initial=0)) for t in campaign.topics)
    if pool_depth > deepest:
        raise InputError(
            f"{pool_depth} is larger than the runs (the deepest pooled ranking has {deepest})",
            "pool_depth",
        )
    if n_common and not 2 <= n_common < campaign.n_topics:
        raise InputError(
            f"must be 0 (off) or 2 to {campaign.n_topics - 1} common topics, got {n_common}",
            "n_common",
        )
    return pooled


def model_label(model: str, group_sd: float | None = None, split_sd: float | None = None) -> str:
    """The corrector label of a model-based correction: ``model:NAME`` for a registered
    name, and for a settings file ``model:`` and the file's stem (``held_out/x/fusion.json``
    → ``model:fusion``; the study's settings record the file); a ``group_sd`` other than
    the default adds ``[group_sd=…]``, a ``split_sd`` ``[split_sd=…]``."""
    text = str(model)
    label = f"model:{Path(text).stem if text.endswith('.json') else text}"
    label = label if group_sd is None else f"{label}[group_sd={group_sd:g}]"
    return label if split_sd is None else f"{label}[split_sd={split_sd:g}]"


def _spreads(group_sds, split_sds) -> list[dict]:
    """The model correctors' keyword arguments: every ``group_sd`` with every ``split_sd``."""
    groups = [{}] if group_sds is None else [{"group_sd": g} for g in group_sds]
    splits = [{}] if split_sds is None else [{"split_sd": s} for s in split_sds]
    return [{**g, **s} for g in groups for s in splits]


@renamed_kwargs(depth="pool_depth", client="scheduler", checkpoint="folder")
def run_pool_bias_study(
    campaign: Campaign,
    groups: RunGroups,
    *,
    pool_depth: int,
    measures: str | Iterable[str] = STUDY_MEASURES,
    correctors: Sequence[str] = PUBLISHED,
    models: Sequence[str] = (),
    model_groups: Sequence[str] | None = None,
    group_sds: Sequence[float] | None = None,
    split_sds: Sequence[float] | None = None,
    n_common: int = 10,
    common_repeats: int = 20,
    n_draws: int = 2000,
    seed: int = 0,
    progress: bool = True,
    folder=None,
    jobs: int | None = 1,
    scheduler=None,
    leave: str = "group",
) -> PoolBiasStudy:
    """Run the study (module docstring) at one pool depth: :class:`LeaveOneGroupOut` on
    :func:`relimpute.studies.run`.

    ``models`` adds a model-based corrector per relevance model name (slow:
    one fit per group); ``model_groups`` restricts those to some groups;
    ``group_sds`` runs each of them with several between-group spreads (one
    fit shared; None: the default spread only), ``split_sds`` with several spreads of
    the between-group term on the split into grades (each with every ``group_sds``).
    ``n_common = 0`` leaves Webber & Park's Algorithm 2 out.
    ``folder`` (the study's output folder, a path) keeps each group as it finishes and
    gets the tables (:func:`write_study`); groups it already holds are not run again, so a
    killed study resumes with the same result. ``jobs`` and ``scheduler`` say where the groups
    run; the result does not depend on them. ``leave="run"`` leaves each pooled run out alone,
    its group's other runs still pooled (variants instead of new systems).
    """
    from ..studies import run

    study = LeaveOneGroupOut(
        campaign, groups, pool_depth=pool_depth, measures=measures, correctors=tuple(correctors),
        models=tuple(models), model_groups=model_groups, group_sds=group_sds, split_sds=split_sds,
        n_common=n_common, common_repeats=common_repeats, n_draws=n_draws, seed=seed, leave=leave,
    )  # fmt: skip
    return run(study, folder, jobs=jobs, scheduler=scheduler, resume=True, progress=progress)


@renamed_kwargs(depth="pool_depth")
@dataclass(frozen=True, eq=False)
class LeaveOneGroupOut:
    """The pool-bias study as a :class:`relimpute.studies.Study`: one unit per group left out
    (the arguments are :func:`run_pool_bias_study`'s; checked here, before any work)."""

    campaign: Campaign
    groups: RunGroups
    pool_depth: int
    measures: str | Iterable[str] = STUDY_MEASURES
    correctors: tuple = PUBLISHED
    models: tuple = ()
    model_groups: Sequence[str] | None = None
    group_sds: Sequence[float] | None = None
    split_sds: Sequence[float] | None = None
    n_common: int = 10
    common_repeats: int = 20
    n_draws: int = 2000
    seed: int = 0
    leave: str = "group"

    command = "poolbias"
    unit = "group"
    report = "metrics.md"

    def __post_init__(self) -> None:
        check_study_input(self.campaign, self.groups, self.pool_depth, self.n_common, self.leave)
        object.__setattr__(self, "measures", tuple(parse_measures(self.measures)))

    def with_seed(self, seed: int) -> LeaveOneGroupOut:
        return replace(self, seed=seed)

    def identity(self) -> dict:
        from ..relevance import load_settings
        from ..studies import study_identity

        table = list(zip(self.groups.runs, self.groups.groups, self.groups.pooled))
        arguments = {
            "depth": self.pool_depth, "measures": [str(m) for m in self.measures], "correctors": list(self.correctors),
            "models": {m: {"model": s.model, "params": s.params} for m, s in
                       ((m, load_settings(m)) for m in self.models)},
            "model_groups": self.model_groups, "group_sd": self.group_sds, "split_sd": self.split_sds,
            "common_topics": self.n_common, "common_repeats": self.common_repeats, "draws": self.n_draws,
            "groups": hashlib.sha256(json.dumps(table).encode()).hexdigest(),
            **({"leave": self.leave} if self.leave != "group" else {}),  # older studies: group
        }  # fmt: skip
        return study_identity(self.command, self.seed, arguments, self.campaign)

    @cached_property
    def _prepared(self) -> dict:
        """The full pool, its scores and every group's common-topic draws, made here in group
        order: a group's result does not depend on which worker runs it or when."""
        pooled = self.groups.pooled_runs(self.campaign.systems)
        full = self.campaign.pooled(self.pool_depth, pooled)
        truth = topic_scores(full, list(self.measures), full.system_index(list(pooled)))  # (M, P, T)
        steps = list(group_leave_outs(full, self.groups, runs=pooled)) if self.leave == "group" else [
            (run, (run,), tuple(r for r in pooled if r != run)) for run in pooled]  # fmt: skip
        rng = np.random.default_rng(self.seed)
        draws = [[np.sort(rng.choice(full.n_topics, size=self.n_common, replace=False))
                  for _ in range(self.common_repeats)] if self.n_common else [] for _ in steps]  # fmt: skip
        return {"pooled": pooled, "full": full, "truth": truth, "steps": steps, "draws": draws}

    def units(self) -> list[list]:
        return [[number, str(label)] for number, (label, _, _) in enumerate(self._prepared["steps"])]

    def run_unit(self, unit) -> tuple[list[pd.DataFrame], dict]:
        ready = self._prepared
        label, left_out, kept = ready["steps"][unit[0]]
        position = {r: i for i, r in enumerate(ready["pooled"])}
        return _group_unit((unit[0], label, left_out, kept, ready["draws"][unit[0]]), full=ready["full"],
                           depth=self.pool_depth, parsed=list(self.measures), names=[str(m) for m in self.measures],
                           truth=ready["truth"], position=position, correctors=list(self.correctors),
                           models=list(self.models), model_groups=self.model_groups, group_sds=self.group_sds,
                           split_sds=self.split_sds, n_draws=self.n_draws, seed=self.seed)  # fmt: skip

    def encode(self, result) -> dict:
        return {"timing": result[1], "parts": [frame_to_json(f) for f in result[0]]}

    def decode(self, data) -> tuple[list[pd.DataFrame], dict]:
        return [frame_from_json(f) for f in data["parts"]], data["timing"]

    def combine(self, results: list) -> PoolBiasStudy:
        ready = self._prepared
        holes = hole_fractions(ready["full"], ready["steps"], self.pool_depth)
        return _combined(self, results, ready["pooled"], ready["truth"], len(ready["steps"]), holes)

    def write(self, result: PoolBiasStudy, folder: Path) -> list[Path]:
        return write_study(result, folder)


def _combined(study: LeaveOneGroupOut, results, pooled, truth, n_groups, holes=None) -> PoolBiasStudy:
    """The study's tables from its groups' parts and seconds."""
    names = [str(m) for m in study.measures]
    parts, timing = [], {}
    for found, seconds in results:
        parts += found
        for label, spent in seconds.items():
            timing[label] = timing.get(label, 0.0) + spent
    estimates = pd.concat(parts, ignore_index=True)
    truth_mean = truth.mean(axis=2)
    lookup = {(r, m): truth_mean[k, i] for k, m in enumerate(names) for i, r in enumerate(pooled)}
    estimates["truth"] = [lookup[(r, m)] for r, m in zip(estimates["run"], estimates["measure"])]
    columns = ["group", "run", "corrector", "measure", "repeat", "reduced", "estimate", "ci_low",
               "ci_high", "truth"]  # fmt: skip
    estimates = estimates[columns + [c for c in estimates.columns if c not in columns]]
    if holes is not None:
        estimates.insert(len(columns), "holes", estimates["run"].map(holes).astype(float))
    metrics = study_metrics(estimates, truth, pooled, names)
    group_sds, split_sds = study.group_sds, study.split_sds
    settings = {
        "depth": study.pool_depth,
        "measures": names,
        "correctors": list(study.correctors) + [model_label(m, spread.get("group_sd"), spread.get("split_sd"))
                                               for m in study.models for spread in _spreads(group_sds, split_sds)],
        "model_settings": {model_label(m): str(m) for m in study.models},
        "n_common": study.n_common,
        "common_repeats": study.common_repeats,
        "n_draws": study.n_draws,
        "seed": study.seed,
        "pooled_runs": len(pooled),
        "groups": n_groups,
        "leave": study.leave,
        "model_groups": None if study.model_groups is None else list(study.model_groups),
        "group_sds": None if group_sds is None else list(group_sds),
        **({} if split_sds is None else {"split_sds": list(split_sds)}),
    }  # fmt: skip
    return PoolBiasStudy(estimates, metrics, truth, timing, settings, hole_slices(estimates),
                         pair_slices(estimates, study.leave))


def _group_unit(unit, *, full, depth, parsed, names, truth, position, correctors, models,
                model_groups, group_sds, split_sds, n_draws, seed) -> tuple[list[pd.DataFrame], dict]:
    """One group left out of the pool: its tables and the seconds per corrector."""
    _, label, left_out, kept, common = unit
    step = LeaveOutPool(left_out, kept, full.pooled(depth, kept), label)
    timing: dict[str, float] = {}
    parts = []
    subset = step.campaign.subset(list(step.kept) + list(step.left_out))
    context = PoolContext.build(subset, step.kept, depth)
    chosen = [get_corrector(n) for n in correctors]
    if model_groups is None or step.label in model_groups:
        chosen += [
            get_corrector("model", model=m, n_draws=n_draws, seed=seed, **spread)
            for m in models
            for spread in _spreads(group_sds, split_sds)
        ]
    for corrector in chosen:
        name = corrector.name
        if name == "model":
            name = model_label(corrector.model, None if group_sds is None else corrector.group_sd,
                               None if split_sds is None else corrector.split_sd)  # fmt: skip
        start = time.perf_counter()
        table = corrector.correct_context(context, step.left_out, parsed).table
        timing[name] = timing.get(name, 0.0) + time.perf_counter() - start
        parts.append(table.assign(group=step.label, corrector=name, repeat=0))
    if common:
        start = time.perf_counter()
        unpooled = context.reduced_scores(parsed, subset.system_index(list(step.left_out)))
        parts.append(_common_topics(step, names, unpooled, truth, position, common))
        timing["webber-park-topics"] = time.perf_counter() - start
    return parts, timing


@renamed_kwargs(depth="pool_depth")
def full_pool_scores(
    campaign: Campaign, groups: RunGroups, pool_depth: int, measures: Iterable[str] = STUDY_MEASURES
) -> tuple[tuple[str, ...], np.ndarray]:
    """The pooled runs and their ``(M, P, T)`` per-topic scores against the full depth-k pool."""
    pooled = check_study_input(campaign, groups, pool_depth)
    full = campaign.pooled(pool_depth, pooled)
    return pooled, topic_scores(full, parse_measures(measures), full.system_index(list(pooled)))


def _common_topics(step, names, unpooled, truth, position, draws) -> pd.DataFrame:
    """Webber & Park Algorithm 2 on each of ``draws``, a set of common topics."""
    rows = []
    for repeat, common in enumerate(draws):
        for j, run in enumerate(step.left_out):
            for k, name in enumerate(names):
                fit = common_topic_adjustment(
                    truth[k, position[run], common], unpooled[k, j], common
                )
                rows.append(
                    {
                        "run": run,
                        "measure": name,
                        "reduced": unpooled[k, j].mean(),
                        "estimate": fit.estimate,
                        "ci_low": fit.ci_low,
                        "ci_high": fit.ci_high,
                        "adjustment": fit.adjustment,
                        "helps": fit.helps,
                        "group": step.label,
                        "corrector": "webber-park-topics",
                        "repeat": repeat,
                    }
                )
    return pd.DataFrame(rows)


@renamed_kwargs(directory="folder")
def write_study(study: PoolBiasStudy, folder: str | Path, stem: str = "") -> list[Path]:
    """Write ``estimates.tsv``, ``metrics.tsv``, ``slices.tsv`` and ``pair_slices.tsv`` (when
    the study has them) and ``metrics.md`` (prefixed by ``stem``), each through a temporary file
    and a rename (a kill leaves the old file or the new one)."""
    from .._files import atomic_write_text, output_directory, write_table
    from ..studies.tables import FORMATTERS

    out = output_directory(folder)
    prefix = f"{stem}_" if stem else ""
    tables = {"estimates": (study.estimates, "%.10g"), "metrics": (study.metrics, "%.6g"),
              "slices": (study.slices, "%.6g"), "pair_slices": (study.pair_slices, "%.6g")}  # fmt: skip
    paths = []
    for name, (frame, digits) in tables.items():
        if name in ("estimates", "metrics") or not frame.empty:
            paths.append(out / f"{prefix}{name}.tsv")
            write_table(frame, paths[-1], sep="\t", index=False, float_format=digits)
    text = FORMATTERS["markdown"](study.metrics)
    if not study.slices.empty:
        text = text.rstrip("\n") + "\n\n" + slices_markdown(study.slices, FORMATTERS["markdown"], study.pair_slices)
    paths.append(out / f"{prefix}metrics.md")
    atomic_write_text(paths[-1], text)
    return paths
