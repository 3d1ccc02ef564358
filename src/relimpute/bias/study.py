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

The definitions follow the authors' PoolBiasEstimators (``ScoresError``).
Webber & Park's Algorithm 2 is run with ``n_common`` common topics drawn
``common_repeats`` times per run; its metrics are averaged over the draws.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from .._study_folder import frame_from_json, frame_to_json
from ..data import Campaign
from ..errors import InputError
from ..measures import parse_measures
from .base import STUDY_MEASURES, PoolContext, get_corrector, topic_scores
from .common_topics import common_topic_adjustment
from ..groups import RunGroups
from .pools import LeaveOutPool, check_depth, group_leave_outs

#: correctors of the study without a relevance model (the fast ones)
PUBLISHED = ("reduced", "condensed", "webber-park", "lipani", "anti-precision")
FILTERS = ("all", "top75")
#: scores within this of each other are tied in the rank errors
TIE = 1e-9


@dataclass(frozen=True, eq=False)
class PoolBiasStudy:
    """Results of :func:`run_pool_bias_study`.

    Attributes
    ----------
    estimates
        One row per (group, run, corrector, measure, repeat): ``reduced``,
        ``estimate``, ``ci_low``, ``ci_high`` and ``truth`` (full-pool score).
    metrics
        One row per (corrector, measure, filter): ``mae, sre, sre_star, tau,
        coverage, width, n_runs``.
    truth_topics
        ``(M, P, T)`` full-pool per-topic scores of the pooled runs.
    timing
        Seconds spent per corrector.
    settings
        What was run (depth, measures, correctors, seed, ...).
    """

    estimates: pd.DataFrame
    metrics: pd.DataFrame
    truth_topics: np.ndarray = field(repr=False)
    timing: dict
    settings: dict

    def to_frame(self) -> pd.DataFrame:
        return self.metrics.copy()

    def __str__(self) -> str:
        return self.metrics.to_string(index=False, float_format=lambda x: f"{x:.4f}")


def check_study_input(
    campaign: Campaign, groups: RunGroups, depth: int, n_common: int = 0
) -> tuple[str, ...]:
    """Clear errors before any work; returns the pooled runs."""
    check_depth(depth)
    groups.check_runs(campaign.systems)
    groups.check_pooled_groups(campaign.systems)
    pooled = groups.pooled_runs(campaign.systems)
    if len({groups.group_of(r) for r in pooled}) < 2:
        raise InputError(
            "leave-one-group-out needs pooled runs from at least two groups", groups.source
        )
    rows = campaign.system_index(list(pooled))
    deepest = max(int(t.depth[rows].max(initial=0)) for t in campaign.topics)
    if depth > deepest:
        raise InputError(
            f"{depth} is larger than the runs (the deepest pooled ranking has {deepest})", "depth"
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


def run_pool_bias_study(
    campaign: Campaign,
    groups: RunGroups,
    *,
    depth: int,
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
    checkpoint=None,
    jobs: int | None = 1,
    client=None,
) -> PoolBiasStudy:
    """Run the study (module docstring) at one pool depth.

    ``models`` adds a model-based corrector per relevance model name (slow:
    one fit per group); ``model_groups`` restricts those to some groups;
    ``group_sds`` runs each of them with several between-group spreads (one
    fit shared; None: the default spread only), ``split_sds`` with several spreads of
    the between-group term on the split into grades (each with every ``group_sds``).
    ``n_common = 0`` leaves Webber & Park's Algorithm 2 out.
    ``checkpoint`` (a :class:`relimpute._study_folder.StudyFolder`) saves each group as
    it finishes; groups it already holds are not run again, so a killed study resumes with
    the same result. ``jobs`` and ``client`` say where the groups run
    (:func:`relimpute.parallel.map_units`); the result does not depend on them.
    """
    from ..parallel import map_units

    pooled = check_study_input(campaign, groups, depth, n_common)
    parsed = parse_measures(measures)
    names = [str(m) for m in parsed]
    full = campaign.pooled(depth, pooled)
    pooled_rows = full.system_index(list(pooled))
    truth = topic_scores(full, parsed, pooled_rows)  # (M, P, T)
    truth_mean = truth.mean(axis=2)
    position = {r: i for i, r in enumerate(pooled)}
    steps = list(group_leave_outs(full, groups, runs=pooled))
    # every group's common-topic draws, drawn here in group order: a group's result does not
    # depend on which worker runs it or when (and is the one a serial run gives)
    rng = np.random.default_rng(seed)
    draws = [[np.sort(rng.choice(full.n_topics, size=n_common, replace=False))
              for _ in range(common_repeats)] if n_common else [] for _ in steps]  # fmt: skip
    units, found = [], {}
    if checkpoint is not None:
        checkpoint.expect(len(steps))
    for number, ((label, left_out, kept), common) in enumerate(zip(steps, draws)):
        saved = None if checkpoint is None else checkpoint.load(f"group-{number}")
        if saved is not None and saved.get("group") == str(label):
            found[number] = ([frame_from_json(f) for f in saved["parts"]], saved["timing"])
        else:
            units.append((number, label, left_out, kept, common))

    def finished(index: int, result: tuple[list[pd.DataFrame], dict]) -> None:
        number, label = units[index][:2]
        found[number] = result
        if checkpoint is not None:
            checkpoint.save(f"group-{number}", {"group": str(label), "timing": result[1],
                                                "parts": [frame_to_json(f) for f in result[0]]})  # fmt: skip

    shared = {"full": full, "depth": depth, "parsed": parsed, "names": names, "truth": truth,
              "position": position, "correctors": list(correctors), "models": list(models),
              "model_groups": model_groups, "group_sds": group_sds, "split_sds": split_sds, "n_draws": n_draws, "seed": seed}  # fmt: skip
    map_units(_group_unit, units, shared=shared, jobs=jobs, client=client, desc=f"groups (depth {depth})",
              unit="group", progress=progress, on_result=finished, already=len(found))  # fmt: skip
    parts, timing = [], {}
    for number in range(len(steps)):
        parts += found[number][0]
        for label, seconds in found[number][1].items():
            timing[label] = timing.get(label, 0.0) + seconds
    estimates = pd.concat(parts, ignore_index=True)
    lookup = {(r, m): truth_mean[k, position[r]] for k, m in enumerate(names) for r in pooled}
    estimates["truth"] = [lookup[(r, m)] for r, m in zip(estimates["run"], estimates["measure"])]
    columns = [
        "group",
        "run",
        "corrector",
        "measure",
        "repeat",
        "reduced",
        "estimate",
        "ci_low",
        "ci_high",
        "truth",
    ]
    extra = [c for c in estimates.columns if c not in columns]
    estimates = estimates[columns + extra]
    metrics = study_metrics(estimates, truth, pooled, names)
    settings = {
        "depth": depth,
        "measures": names,
        "correctors": list(correctors)
        + [
            model_label(m, spread.get("group_sd"), spread.get("split_sd"))
            for m in models
            for spread in _spreads(group_sds, split_sds)
        ],
        "model_settings": {model_label(m): str(m) for m in models},
        "n_common": n_common,
        "common_repeats": common_repeats,
        "n_draws": n_draws,
        "seed": seed,
        "pooled_runs": len(pooled),
        "groups": len(steps),
        "model_groups": None if model_groups is None else list(model_groups),
        "group_sds": None if group_sds is None else list(group_sds),
        **({} if split_sds is None else {"split_sds": list(split_sds)}),
    }
    return PoolBiasStudy(estimates, metrics, truth, timing, settings)


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


def full_pool_scores(
    campaign: Campaign, groups: RunGroups, depth: int, measures: Iterable[str] = STUDY_MEASURES
) -> tuple[tuple[str, ...], np.ndarray]:
    """The pooled runs and their ``(M, P, T)`` per-topic scores against the full depth-k pool."""
    pooled = check_study_input(campaign, groups, depth)
    full = campaign.pooled(depth, pooled)
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


def paired_p_values(scores: np.ndarray) -> np.ndarray:
    """``(P, P)`` two-sided paired t-test p-values of ``(P, T)`` scores (1 on the diagonal)."""
    diff = scores[:, None, :] - scores[None, :, :]
    n = scores.shape[1]
    mean = diff.mean(axis=2)
    sd = diff.std(axis=2, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    p = 2.0 * stats.t.sf(np.abs(t), df=n - 1)
    p = np.where(sd > 0, p, np.where(mean == 0, 1.0, 0.0))
    np.fill_diagonal(p, 1.0)
    return p


def study_metrics(
    estimates: pd.DataFrame, truth: np.ndarray, pooled: Sequence[str], names: Sequence[str]
) -> pd.DataFrame:
    """MAE, SRE, SRE*, τ-b and coverage per corrector, measure and filter (module docstring)."""
    position = {r: i for i, r in enumerate(pooled)}
    rows = []
    for k, measure in enumerate(names):
        true_all = truth[k].mean(axis=1)
        p_all = paired_p_values(truth[k])
        cut = np.sort(true_all)[len(true_all) // 4]
        for filt in FILTERS:
            keep = np.ones(len(pooled), dtype=bool) if filt == "all" else true_all >= cut
            kept_idx = np.flatnonzero(keep)
            sub = estimates[estimates["measure"] == measure]
            for corrector, by_corrector in sub.groupby("corrector", sort=False):
                per_repeat = []
                for _, frame in by_corrector.groupby("repeat"):
                    frame = frame[keep[[position[r] for r in frame["run"]]]]
                    if len(frame) < 2:
                        continue
                    idx = np.array([position[r] for r in frame["run"]])
                    est = frame["estimate"].to_numpy()
                    tru = true_all[idx]
                    local = {p: i for i, p in enumerate(kept_idx)}
                    sre, sre_star = rank_errors(
                        true_all[kept_idx],
                        np.array([local[i] for i in idx]),
                        est,
                        [pooled[i] for i in kept_idx],
                        p_all[np.ix_(kept_idx, kept_idx)],
                    )
                    tau = stats.kendalltau(tru, est).statistic
                    low, high = frame["ci_low"].to_numpy(), frame["ci_high"].to_numpy()
                    has = np.isfinite(low) & np.isfinite(high)
                    per_repeat.append(
                        {
                            "mae": float(np.mean(np.abs(tru - est))),
                            "bias": float(np.mean(est - tru)),
                            "sre": sre,
                            "sre_star": sre_star,
                            "tau": float(tau),
                            "coverage": float(np.mean(covers(low[has], high[has], tru[has])))
                            if has.any()
                            else np.nan,
                            "width": float(np.mean(high[has] - low[has])) if has.any() else np.nan,
                            "n_runs": len(frame),
                        }
                    )
                if per_repeat:
                    mean = pd.DataFrame(per_repeat).mean(numeric_only=True)
                    rows.append(
                        {
                            "corrector": corrector,
                            "measure": measure,
                            "filter": filt,
                            **mean.to_dict(),
                        }
                    )
    frame = pd.DataFrame(rows)
    frame["n_runs"] = frame["n_runs"].round().astype(int)
    return frame


def covers(low: np.ndarray, high: np.ndarray, value: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """``low ≤ value ≤ high`` up to ``tol``: a degenerate interval (nothing left unjudged) is
    ``[x, x]`` with ``x`` computed along another path than the full-pool score."""
    return (low - tol <= value) & (value <= high + tol)


def rank_errors(
    true: np.ndarray,
    moved: np.ndarray,
    estimate: np.ndarray,
    names: Sequence[str],
    p_values: np.ndarray,
    alpha: float = 0.05,
) -> tuple[int, int]:
    """``(SRE, SRE*)`` of runs ``moved`` placed at ``estimate`` among the others' true scores.

    As PoolBiasEstimators' ``ScoresError``: a run's true rank is 1 + the number
    of true scores above it; its new rank 1 + the number of the *other* runs'
    true scores above its estimate; SRE* counts the runs whose position (true
    order, ties by name descending) lies between the two and whose paired
    test against the moved run has p < ``alpha``. Scores equal to ``TIE``
    count as tied (means computed along different paths differ in the last bits,
    and P@k and its corrections are often exactly equal).
    """
    true = np.round(np.asarray(true, dtype=float) / TIE) * TIE
    estimate = np.round(np.asarray(estimate, dtype=float) / TIE) * TIE
    order = sorted(range(len(true)), key=lambda i: names[i], reverse=True)
    order = sorted(order, key=lambda i: -true[i])
    position = np.empty(len(true), dtype=int)
    position[order] = np.arange(1, len(true) + 1)
    sre = sre_star = 0
    for i, est in zip(moved, estimate):
        others = np.arange(len(true)) != i
        old = 1 + int((true > true[i]).sum())
        new = 1 + int((true[others] > est).sum())
        sre += abs(old - new)
        passed = others & (
            ((new <= position) & (position < old)) | ((old < position) & (position <= new))
        )
        sre_star += int((passed & (p_values[i] < alpha)).sum())
    return sre, sre_star


def write_study(study: PoolBiasStudy, directory: str | Path, stem: str = "") -> list[Path]:
    """Write ``estimates.tsv``, ``metrics.tsv`` and ``metrics.md`` (prefixed by ``stem``),
    each through a temporary file and a rename (a kill leaves the old file or the new one)."""
    from .._files import atomic_write_text, output_directory, write_table
    from .._tables import FORMATTERS

    out = output_directory(directory)
    prefix = f"{stem}_" if stem else ""
    paths = [
        out / f"{prefix}estimates.tsv",
        out / f"{prefix}metrics.tsv",
        out / f"{prefix}metrics.md",
    ]
    write_table(study.estimates, paths[0], sep="\t", index=False, float_format="%.10g")
    write_table(study.metrics, paths[1], sep="\t", index=False, float_format="%.6g")
    atomic_write_text(paths[2], FORMATTERS["markdown"](study.metrics))
    return paths
