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
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

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
    client=None,
    checkpoint=None,
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
    jobs, client
        Where the grid cells (strategy × measure × depth) run
        (:func:`relimpute.parallel.map_units`); the curves do not depend on them.
    checkpoint
        A :class:`relimpute._study_folder.StudyFolder`: each grid cell is saved there as it
        finishes, and cells it already holds are not run again, so a killed study resumes
        with the same curves (the topic subsets depend on ``rng`` alone).
    """
    depths = sorted({int(k) for k in depths})
    if not depths or depths[0] < 1:
        raise InputError(
            f"pool depths must be positive integers, got {list(depths)}", source="depths"
        )
    n_avail = campaign.n_topics
    if topic_counts is None:
        topic_counts = sorted({max(2, round(n_avail * f)) for f in (0.25, 0.5, 0.75, 1.0)})
    topic_counts = sorted({int(n) for n in topic_counts})
    if topic_counts[0] < 2 or topic_counts[-1] > n_avail:
        raise InputError(
            f"topic subsets need between 2 and {n_avail} topics (the campaign has {n_avail}); "
            f"got {topic_counts}",
            source="topic_counts",
        )
    unknown = set(strategies) - set(STRATEGIES)
    if unknown:
        raise InputError(f"unknown strategy {sorted(unknown)}; choose from {list(STRATEGIES)}")
    parsed = power_measures(measures)
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie in (0, 1), got {alpha}", source="alpha")
    pooled = list(pool_systems) if pool_systems is not None else list(campaign.systems)
    evaluated = campaign.system_index(
        list(systems) if systems is not None else list(campaign.systems)
    )
    if len(evaluated) < 2:
        raise InputError("power needs at least two evaluated systems")
    generator = as_generator(rng)
    pairs = all_pairs(len(evaluated))

    relevant = campaign.relevant()
    gold_scores = np.stack(
        [
            average_precision(t.ranking[evaluated], r)
            if t.ranking.shape[1]
            else np.zeros(len(evaluated))
            for t, r in zip(campaign.topics, relevant)
        ],
        axis=1,
    )
    gold_map = gold_scores.mean(axis=1)
    gold_sign = np.sign(gold_map[pairs[:, 0]] - gold_map[pairs[:, 1]])

    best = best_ranks(campaign, campaign.system_index(pooled))
    max_depth = depths[-1]
    orders = {"depth": [depth_order(b, max_depth) for b in best]}
    for replayed in ("mtf", "mtc"):
        if replayed in strategies:
            orders[replayed] = replayed_orders(campaign, pooled, max_depth, replayed)
    pool_sizes = {k: np.array([int(((b > 0) & (b <= k)).sum()) for b in best]) for k in depths}
    subsets = {
        n: [
            np.sort(generator.choice(n_avail, size=n, replace=False))
            for _ in range(repetitions if n < n_avail else 1)
        ]
        for n in topic_counts
    }

    from ..parallel import map_resumable

    shared = {"campaign": campaign, "orders": orders, "pool_sizes": pool_sizes, "evaluated": evaluated,
              "parsed": parsed, "subsets": subsets, "pairs": pairs, "gold_sign": gold_sign,
              "gold_map": gold_map, "alpha": alpha}  # fmt: skip
    cells = [(s, m, k) for s in strategies for m in measures for k in depths]
    found = map_resumable(_design_rows, cells, checkpoint=checkpoint, name="design", encode=list,
                          decode=list, shared=shared, jobs=jobs, client=client, desc="power",
                          unit="design", progress=progress is None or progress)  # fmt: skip
    rows = [row for cell in found for row in cell]
    return PowerCurves(
        curves=pd.DataFrame(rows),
        gold=pd.Series(gold_map, index=[campaign.systems[i] for i in evaluated], name="gold_map"),
        alpha=float(alpha),
        n_topics_available=n_avail,
    )


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
