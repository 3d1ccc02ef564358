"""Power and bias of pooling strategies against judging effort (Cormack & Lynam 2007).

For a strategy, a pool depth k and a number of topics n: judge the pool of
each of n randomly drawn topics (unjudged documents count as nonrelevant),
score every evaluated system with a measure of the registry
(:mod:`relimpute.measures`: ``MAP``, ``nDCG@10``, ...; ``P@k`` is precision
at the pool depth k), and for every pair of systems run a paired t-test over
the n topics.

- power: the share of pairs with p < α;
- bias: among those, the share whose sign disagrees with the gold standard
  (MAP over all topics with the campaign's full judgments);
- Kendall τ between the systems' scores and the gold MAP, beside them.

Depth-k pools are the union of the pooled runs' top k; move-to-front and
MTC are given the same number of judgments as the depth-k pool, topic by
topic (matched effort; :mod:`.pools`). Random topic subsets are repeated and the results averaged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._deprecation import renamed_kwargs
from ..data import Campaign
from ..errors import InputError
from ..measures import Measure, parse_measure
from ..measures.ap import average_precision
from ..relevance.base import as_generator
from ..selection.base import all_pairs
from .pools import DEFAULT_STRATEGIES, STRATEGIES, best_ranks, depth_order, replayed_orders

#: Precision at the pool depth: not a registry name, as its cutoff is the design's k.
POOL_DEPTH_PRECISION = "P@k"
MEASURES = ("MAP", POOL_DEPTH_PRECISION)
DEFAULT_DEPTHS = (1, 2, 5, 10, 20, 50, 100)


@dataclass(frozen=True, slots=True, eq=False)
class PowerCurves:
    """Power, bias and τ per strategy, measure, pool depth and number of topics.

    ``curves`` has one row per combination: ``effort`` (mean judgments over
    the repetitions), ``power``, ``bias``, ``tau`` (means) and ``power_sd``;
    ``gold`` the gold-standard MAP per system.
    """

    curves: pd.DataFrame
    gold: pd.Series
    alpha: float
    n_topics_available: int

    def to_frame(self) -> pd.DataFrame:
        return self.curves

    def plan(
        self, budget: float, *, measure: str = "MAP", max_bias: float | None = None
    ) -> pd.DataFrame:
        """The designs within ``budget`` judgments with bias below ``max_bias`` (default α),
        most powerful first."""
        return plan_design(self.curves, budget, measure=measure, max_bias=max_bias or self.alpha)

    def __str__(self) -> str:
        return (
            f"PowerCurves({len(self.curves)} designs, α = {self.alpha}, "
            f"{len(self.gold)} systems, {self.n_topics_available} topics)"
        )


def plan_design(
    curves: pd.DataFrame, budget: float, *, measure: str = "MAP", max_bias: float = 0.05
) -> pd.DataFrame:
    """Rows of ``curves`` for ``measure`` with effort ≤ budget and bias < max_bias, by power."""
    rows = curves[curves["measure"] == measure]
    if rows.empty:
        raise InputError(
            f"no curves for measure {measure!r}; have {sorted(set(curves['measure']))}"
        )
    smallest = rows["effort_per_topic"].min()
    if budget < smallest:
        raise InputError(
            f"a budget of {budget:g} judgments is smaller than one topic's pool "
            f"(the shallowest studied pool needs {smallest:.0f} judgments per topic)",
            source="budget",
        )
    fits = rows[(rows["effort"] <= budget) & (rows["bias"] < max_bias)]
    return fits.sort_values(["power", "effort"], ascending=[False, True]).reset_index(drop=True)


def power_measures(names: Sequence[str]) -> dict[str, Measure | None]:
    """Each name as given -> its registry measure (None for ``P@k``, precision at the pool depth).

    Raises InputError naming the measures power takes (every registry name, and ``P@k``).
    """
    out: dict[str, Measure | None] = {}
    for name in names:
        if name == POOL_DEPTH_PRECISION:
            out[name] = None
            continue
        try:
            out[name] = parse_measure(name)
        except ValueError as exc:
            raise InputError(
                f"{exc}; power also takes {POOL_DEPTH_PRECISION} (precision at the pool depth)",
                source="measures",
            ) from None
    return out


def _per_topic_scores(campaign, pools, evaluated, measure: Measure | None, k):
    """``(S, T)`` scores of the evaluated systems with only ``pools[t]`` judged.

    ``measure`` None is precision at the pool depth ``k``.
    """
    scores = np.zeros((len(evaluated), campaign.n_topics))
    for t, (topic, pool) in enumerate(zip(campaign.topics, pools)):
        judged = np.zeros(topic.n_docs, dtype=bool)
        judged[pool] = topic.judged[pool]
        ranking = topic.ranking[evaluated]
        if not ranking.shape[1]:
            continue
        if measure is None:
            relevant = judged & (topic.grades >= campaign.rel_threshold)
            top = ranking[:, :k]
            hits = (top >= 0) & relevant[np.maximum(top, 0)]
            scores[:, t] = hits.sum(axis=1) / k
        else:
            labels = np.where(judged, topic.grades, 0)
            scores[:, t] = measure.score(
                ranking, labels, judged=judged, rel_threshold=campaign.rel_threshold
            )
    return scores


def paired_t_pvalues(scores: np.ndarray, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean difference and two-sided paired t-test p-value over topics for every pair.

    A pair with identical scores on every topic has p = 1.
    """
    diff = scores[pairs[:, 0]] - scores[pairs[:, 1]]
    n = diff.shape[1]
    mean = diff.mean(axis=1)
    sd = diff.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    p = np.where(sd > 0, 2 * stats.t.sf(np.abs(t), n - 1), np.where(mean != 0, 0.0, 1.0))
    return mean, p


@renamed_kwargs(client="scheduler", checkpoint="folder")
def power_curves(
    campaign: Campaign,
    *,
    depths: Sequence[int] = DEFAULT_DEPTHS,
    topic_counts: Sequence[int] | None = None,
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    measures: Sequence[str] = MEASURES,
    pool_systems: Sequence[str] | None = None,
    systems: Sequence[str] | None = None,
    repetitions: int = 20,
    alpha: float = 0.05,
    rng: int | np.random.Generator | None = None,
    progress: bool | None = None,
    jobs: int | None = 1,
    scheduler=None,
    folder=None,
) -> PowerCurves:
    """Power and bias curves of pooling strategies on ``campaign`` (its judgments are the gold).

    Parameters
    ----------
    depths
        Pool depths k (per-topic effort: the depth-k pool size).
    topic_counts
        Numbers of topics n drawn at random (default: quarters of the topics).
    strategies, measures
        From :data:`~relimpute.precision.pools.STRATEGIES`; measures are
        registry names (:func:`relimpute.measures.available_measures`) or
        ``P@k``, precision at the pool depth; the curves name them as given.
    pool_systems
        Runs that form the pools (default: all); ``systems`` the evaluated runs.
    repetitions
        Random topic subsets per n (one when n is every topic), all drawn before any cell runs.
    jobs, scheduler
        Where the grid cells (strategy × measure × depth) run
        (:func:`relimpute.studies.run`); the curves do not depend on them.
    folder
        The study's output folder (a path): each grid cell is saved there as it finishes and
        the curves are written there (``curves.tsv``); cells it already holds are not run
        again, so a killed study resumes with the same curves (the topic subsets depend on
        ``rng`` alone, an int then). A folder holding another study is refused.
    """
    from ..studies import run

    study = PowerGrid(campaign, depths=tuple(depths), topic_counts=topic_counts, strategies=tuple(strategies),
                      measures=tuple(measures), pool_systems=pool_systems, systems=systems,
                      repetitions=repetitions, alpha=alpha, seed=rng)  # fmt: skip
    return run(study, folder, jobs=jobs, scheduler=scheduler, resume=True, progress=progress is None or progress)


@dataclass(frozen=True, eq=False)
class PowerGrid:
    """Power curves as a :class:`relimpute.studies.Study`: one unit per design (strategy,
    measure, depth); the arguments are :func:`power_curves`' (``seed`` its ``rng``), checked here."""

    campaign: Campaign
    depths: tuple = DEFAULT_DEPTHS
    topic_counts: Sequence[int] | None = None
    strategies: tuple = DEFAULT_STRATEGIES
    measures: tuple = MEASURES
    pool_systems: Sequence[str] | None = None
    systems: Sequence[str] | None = None
    repetitions: int = 20
    alpha: float = 0.05
    seed: Any = None

    command = "power"
    unit = "design"
    report = None
    #: the file of the curves in the study's folder
    TABLE = "curves.tsv"

    def __post_init__(self) -> None:
        depths = sorted({int(k) for k in self.depths})
        if not depths or depths[0] < 1:
            raise InputError(f"pool depths must be positive integers, got {list(self.depths)}", source="depths")
        n_avail = self.campaign.n_topics
        counts = self.topic_counts
        if counts is None:
            counts = {max(2, round(n_avail * f)) for f in (0.25, 0.5, 0.75, 1.0)}
        counts = sorted({int(n) for n in counts})
        if counts[0] < 2 or counts[-1] > n_avail:
            raise InputError(
                f"topic subsets need between 2 and {n_avail} topics (the campaign has {n_avail}); got {counts}",
                source="topic_counts",
            )
        unknown = set(self.strategies) - set(STRATEGIES)
        if unknown:
            raise InputError(f"unknown strategy {sorted(unknown)}; choose from {list(STRATEGIES)}")
        power_measures(self.measures)
        if not 0 < self.alpha < 1:
            raise InputError(f"alpha must lie in (0, 1), got {self.alpha}", source="alpha")
        if len(self._evaluated) < 2:
            raise InputError("power needs at least two evaluated systems")
        object.__setattr__(self, "depths", tuple(depths))
        object.__setattr__(self, "topic_counts", tuple(counts))

    @property
    def _evaluated(self) -> np.ndarray:
        chosen = self.campaign.systems if self.systems is None else self.systems
        return self.campaign.system_index(list(chosen))

    def with_seed(self, seed: int) -> PowerGrid:
        return replace(self, seed=seed)

    def identity(self) -> dict:
        from ..studies import study_identity

        # keyed by the command's options, so a refused --resume names the one that changed
        arguments = {"--pool-depth": list(self.depths), "--n-topics": list(self.topic_counts),
                     "--strategies": list(self.strategies), "-m": list(self.measures),
                     "--groups": self.pool_systems, "--repetitions": self.repetitions,
                     "--confidence": round(1.0 - self.alpha, 12),
                     **({} if self.systems is None else {"systems": list(self.systems)})}  # fmt: skip
        seed = self.seed if self.seed is None or isinstance(self.seed, int) else repr(self.seed)
        return study_identity(self.command, seed, arguments, self.campaign)

    @cached_property
    def _prepared(self) -> dict:
        """The gold standard, the strategies' judging orders and every topic subset, drawn here."""
        campaign, depths, evaluated = self.campaign, self.depths, self._evaluated
        pooled = list(campaign.systems if self.pool_systems is None else self.pool_systems)
        pairs = all_pairs(len(evaluated))
        gold_scores = np.stack(
            [average_precision(t.ranking[evaluated], r) if t.ranking.shape[1] else np.zeros(len(evaluated))
             for t, r in zip(campaign.topics, campaign.relevant())],
            axis=1,
        )  # fmt: skip
        gold_map = gold_scores.mean(axis=1)
        best = best_ranks(campaign, campaign.system_index(pooled))
        orders = {"depth": [depth_order(b, depths[-1]) for b in best]}
        for replayed in ("mtf", "mtc"):
            if replayed in self.strategies:
                orders[replayed] = replayed_orders(campaign, pooled, depths[-1], replayed)
        generator, n_avail = as_generator(self.seed), campaign.n_topics
        subsets = {n: [np.sort(generator.choice(n_avail, size=n, replace=False))
                       for _ in range(self.repetitions if n < n_avail else 1)] for n in self.topic_counts}  # fmt: skip
        return {"orders": orders, "pool_sizes": {k: np.array([int(((b > 0) & (b <= k)).sum()) for b in best])
                                                 for k in depths},
                "evaluated": evaluated, "parsed": power_measures(self.measures), "subsets": subsets,
                "pairs": pairs, "gold_sign": np.sign(gold_map[pairs[:, 0]] - gold_map[pairs[:, 1]]),
                "gold_map": gold_map, "alpha": self.alpha}  # fmt: skip

    def units(self) -> list[list]:
        self._prepared  # noqa: B018 (drawn before the study is sent)
        return [[s, m, k] for s in self.strategies for m in self.measures for k in self.depths]

    def run_unit(self, unit) -> list[dict]:
        return _design_rows(tuple(unit), campaign=self.campaign, **self._prepared)

    def encode(self, result: list[dict]) -> list[dict]:
        return result

    def decode(self, data: list[dict]) -> list[dict]:
        return data

    def combine(self, results: list[list[dict]]) -> PowerCurves:
        ready = self._prepared
        return PowerCurves(
            curves=pd.DataFrame([row for cell in results for row in cell]),
            gold=pd.Series(ready["gold_map"], index=[self.campaign.systems[i] for i in ready["evaluated"]],
                           name="gold_map"),
            alpha=float(self.alpha),
            n_topics_available=self.campaign.n_topics,
        )  # fmt: skip

    def write(self, result: PowerCurves, folder: Path) -> list[Path]:
        from .._files import write_table

        path = Path(folder) / self.TABLE
        write_table(result.curves, path, sep="\t", index=False, float_format="%.6g")
        return [path]


def _design_rows(cell, *, campaign, orders, pool_sizes, evaluated, parsed, subsets, pairs, gold_sign,
                 gold_map, alpha) -> list[dict]:
    """The curves' rows of one grid cell (strategy, measure, depth), one per number of topics."""
    strategy, measure, k = cell
    pools = [order[:size] for order, size in zip(orders[strategy], pool_sizes[k])]
    scores = _per_topic_scores(campaign, pools, evaluated, parsed[measure], k)
    rows = []
    for n, draws in subsets.items():
        found = [_assess(scores[:, topics], pairs, gold_sign, gold_map, alpha) for topics in draws]
        power, bias, tau = np.array(found).T
        efforts = [pool_sizes[k][topics].sum() for topics in draws]
        rows.append(
            {
                "strategy": strategy,
                "measure": measure,
                "depth": k,
                "n_topics": n,
                "effort": float(np.mean(efforts)),
                "effort_per_topic": float(np.mean(efforts)) / n,
                "power": float(power.mean()),
                "power_sd": float(power.std(ddof=1)) if len(draws) > 1 else 0.0,
                "bias": float(np.nanmean(bias)) if np.isfinite(bias).any() else np.nan,
                "tau": float(tau.mean()),
                "repetitions": len(draws),
            }
        )
    return rows


def _assess(scores, pairs, gold_sign, gold_map, alpha) -> tuple[float, float, float]:
    """Power, bias (NaN when nothing is significant) and Kendall τ of one topic subset."""
    mean, p = paired_t_pvalues(scores, pairs)
    significant = p < alpha
    disagree = significant & (gold_sign != 0) & (np.sign(mean) != gold_sign)
    bias = disagree.sum() / significant.sum() if significant.any() else np.nan
    tau = stats.kendalltau(scores.mean(axis=1), gold_map).statistic
    return float(significant.mean()), float(bias), float(tau)
