"""Is this collection fair to a new run? Its expected score, interval and rank among the
official runs.

The Million Query track's reusability study (Carterette et al., TREC 2009) asked whether a
run that did not contribute to the pool can be scored with confidence on the qrels. This
module answers it for one collection and one or more new runs: the share of the new run's
top 10 and top 100 that is judged, its measure as trec_eval scores it (unjudged =
nonrelevant), E[measure] under a relevance model with a ``confidence`` interval, its rank
among the official runs as a distribution, and P(it beats each of the best official runs).

Every probabilistic number comes from one Monte Carlo pass of the confidence engine over
the model's posterior draws (:meth:`ConfidenceEngine.confidence`; for the default ``pool``
estimand through :func:`~relimpute.confidence.estimands.pool_estimate`): the draws are joint across runs and topics, so a run's rank in each draw is one
more statistic of the same draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data import Campaign
from ..errors import InputError

#: the share of a run's top k that must be judged for trec_eval's score to be read as is
HOLE_DEPTHS = (10, 100)
#: The spread of the ``pool`` estimand's shared shift for a new run: chosen leaving one group
#: out against the official qrels' MAP, which also judge documents below the pool depth, on DL
#: 2019, DL 2021 and TREC-8 (each collection's value chosen on the other two;
#: examples/new_run/). Wider than the estimand's own ``POOL_GROUP_SD``, whose target is the
#: pool to depth K alone.
NEW_RUN_GROUP_SD = 1.25

#: scores this close are tied (floating-point rounding of equal sums)
TIE = 1e-12



@dataclass(frozen=True, slots=True, eq=False)
class NewRunCheck:
    """The check of each new run against the official runs.

    Attributes
    ----------
    table
        One row per new run: ``run, judged@10, judged@100, trec_eval, E, sd, ci_low, ci_high,
        rank_low, rank_high, empty_topics`` and ``P(beats NAME)`` for each of the best official
        runs (by E), then ``verdict``.
    ranks
        ``P(rank = r)``: one row per new run, one column per rank 1 (best) … N + 1 among the N
        official runs and the new run.
    measure, confidence, rank_confidence, tolerance
        What was computed and the levels of the intervals; a score is called reliable when
        its interval's half width is at most ``tolerance``.
    officials
        The official runs, best first by E.
    estimand, pool_depth
        Which score E estimates (``"pool"`` to ``pool_depth``, or ``"complete"``).
    """

    table: pd.DataFrame
    ranks: pd.DataFrame
    measure: str
    confidence: float
    rank_confidence: float
    tolerance: float
    officials: tuple[str, ...]
    estimand: str = "pool"
    pool_depth: int | None = None

    def verdicts(self) -> list[str]:
        """One line per new run, in words."""
        return [f"{row.run}: {row.verdict}" for row in self.table.itertuples()]

    def plot(self, path) -> None:
        """Bar chart of each new run's rank distribution, its ``rank_confidence`` interval shaded."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from .._files import save_figure

        n = len(self.ranks)
        fig, axes = plt.subplots(n, 1, figsize=(7, 1.9 * n + 0.6), squeeze=False, sharex=True)
        ranks = np.asarray(self.ranks.columns, dtype=int)
        for ax, (run, shares), row in zip(axes[:, 0], self.ranks.iterrows(), self.table.itertuples()):
            inside = (ranks >= row.rank_low) & (ranks <= row.rank_high)
            ax.bar(ranks, shares.to_numpy(), color=np.where(inside, "tab:blue", "tab:gray"))
            ax.set_ylabel("P(rank)")
            ax.set_title(f"{run}: rank {row.rank_low}–{row.rank_high} "
                         f"({self.rank_confidence:.0%}, blue)", fontsize=10)  # fmt: skip
        axes[-1, 0].set_xlabel(f"rank by mean {self.measure} among {len(ranks)} runs (1 = best)")
        fig.tight_layout()
        save_figure(fig, path, colors=16)
        plt.close(fig)

    def __str__(self) -> str:
        shown = self.table.drop(columns="verdict")
        body = shown.to_string(index=False, float_format=lambda x: f"{x:.4f}")
        return f"New runs against {len(self.officials)} official runs\n{body}\n" + "\n".join(
            self.verdicts()
        )


def check_new_runs(
    campaign: Campaign,
    new: Sequence[str],
    estimate,
    *,
    measure: str = "AP",
    top: int = 3,
    confidence: float = 0.95,
    rank_confidence: float = 0.9,
    tolerance: float = 0.02,
    n_draws: int = 4000,
    rng: int | np.random.Generator | None = None,
    estimand: str = "pool",
    pool_depth: int | None = None,
    pool_group_sd: float | None = None,
) -> NewRunCheck:
    """Check each run of ``new`` (names of runs in ``campaign``) against the others.

    ``estimate`` is the relevance model's estimate on ``campaign`` (new runs included: their
    rankings are evidence too). ``estimand``: ``"pool"`` (default), the score each new run
    would have had, had it been pooled with the official runs to ``pool_depth`` (default: the
    depth the judgments show, :func:`~relimpute.confidence.estimands.judged_pool_depth`): the
    number the official runs' published scores are; ``"complete"``, the score once everything
    retrieved is judged (docs/which-map.md). ``top``: how many of the best official runs the
    new runs are compared with. ``pool_group_sd``: the spread of the pool estimand's shared
    log-odds shift of the documents only the new runs bring into the pool (None:
    :data:`NEW_RUN_GROUP_SD`;
    :func:`~relimpute.confidence.estimands.pool_estimate`). The measure is
    averaged over every qrels topic (trec_eval ``-c``), for trec_eval's score and the expected
    one alike.
    """
    from ..confidence import ConfidenceEngine
    from ..confidence.estimands import check_estimand, judged_pool_depth, pool_estimate
    from ..measures import evaluate

    new = list(dict.fromkeys(new))
    missing = [name for name in new if name not in campaign.systems]
    if missing:
        raise InputError(f"not a run of the campaign: {', '.join(missing)}", "new")
    officials = [name for name in campaign.systems if name not in new]
    if not officials:
        raise InputError("no official run to check the new runs against", "new")
    if not 0.0 < tolerance:
        raise InputError(f"tolerance must be positive, got {tolerance}", "tolerance")
    if check_estimand(estimand) == "qrels":
        raise InputError("the new-run check estimates a score: choose complete or pool", "estimand")
    if estimand == "pool":
        pool_depth = pool_depth or judged_pool_depth(campaign)
        group_sd = NEW_RUN_GROUP_SD if pool_group_sd is None else pool_group_sd
        estimate = pool_estimate(campaign, estimate, pool_depth, group_sd=group_sd, rng=rng)
    scores = ConfidenceEngine().confidence(
        campaign, estimate, pairs=[], measure=measure, method="monte carlo", n_draws=n_draws,
        rng=rng,
    ).scores  # fmt: skip
    rows = {name: i for i, name in enumerate(scores.systems)}
    by_e = sorted(officials, key=lambda o: -scores.e_map[rows[o]])  # stable: ties keep order
    best = by_e[: max(0, min(top, len(by_e)))]
    measures = [measure] + [f"Judged@{k}" for k in HOLE_DEPTHS]
    scored = evaluate(campaign, measures, missing="zero").pivot(
        index="system", columns="measure", values="value"
    )
    empty = (~campaign.coverage()).sum(axis=1)
    ci = scores.confidence_interval(confidence)
    official_rows = np.array([rows[o] for o in officials])
    rank_table, records = {}, []
    for name in new:
        i = rows[name]
        rank = _ranks(scores.draws, i, official_rows)
        shares = np.bincount(rank - 1, minlength=len(officials) + 1) / len(rank)
        rank_table[name] = shares
        low, high = _rank_interval(shares, rank_confidence)
        record = {
            "run": name,
            **{f"judged@{k}": scored.loc[name, f"Judged@{k}"] for k in HOLE_DEPTHS},
            "trec_eval": scored.loc[name, measure],
            "E": scores.e_map[i],
            "sd": scores.sd_map[i],
            "ci_low": float(np.asarray(ci.low)[i]),
            "ci_high": float(np.asarray(ci.high)[i]),
            "rank_low": low,
            "rank_high": high,
            "empty_topics": int(empty[campaign.systems.index(name)]),
        }
        for official in best:
            record[f"P(beats {official})"] = _beats(scores.draws[:, i], scores.draws[:, rows[official]])
        record["verdict"] = _verdict(record, len(officials) + 1, campaign.n_topics,
                                     confidence, rank_confidence, tolerance)  # fmt: skip
        records.append(record)
    ranks = pd.DataFrame.from_dict(rank_table, orient="index",
                                   columns=range(1, len(officials) + 2))  # fmt: skip
    ranks.index.name = "run"
    return NewRunCheck(
        table=pd.DataFrame.from_records(records),
        estimand=estimand,
        pool_depth=pool_depth if estimand == "pool" else None,
        ranks=ranks,
        measure=measure,
        confidence=confidence,
        rank_confidence=rank_confidence,
        tolerance=tolerance,
        officials=tuple(by_e),
    )


def _beats(new: np.ndarray, official: np.ndarray) -> float:
    """P(the new run scores more) over the draws, a tie (within :data:`TIE`) counting ½, as the
    rank counts it."""
    diff = new - official
    return float(np.mean((diff > TIE) + 0.5 * (np.abs(diff) <= TIE)))


def _ranks(draws: np.ndarray, row: int, officials: np.ndarray) -> np.ndarray:
    """The new run's rank in each draw among itself and the official runs (1 = best; an
    official run within :data:`TIE` of it ties, and a tie does not beat it: two runs with the
    same relevant documents at the same ranks score alike up to the rounding of the sums)."""
    return 1 + (draws[:, officials] > draws[:, [row]] + TIE).sum(axis=1)


def _rank_interval(shares: np.ndarray, level: float) -> tuple[int, int]:
    """The central ``level`` interval of a rank distribution (ranks from 1)."""
    cdf = np.cumsum(shares)
    tail = (1.0 - level) / 2.0
    low = int(np.searchsorted(cdf, tail - 1e-12, side="right")) + 1
    high = int(np.searchsorted(cdf, 1.0 - tail - 1e-12, side="left")) + 1
    return low, min(max(low, high), len(shares))


def _verdict(record, n_ranked, n_topics, confidence, rank_confidence, tolerance) -> str:
    """The check of one new run in words."""
    if record["empty_topics"] == n_topics:
        return "it retrieves nothing for any topic: not ranked"
    half = (record["ci_high"] - record["ci_low"]) / 2.0
    score = (
        f"its score is reliable to ±{half:.3f}"
        if half <= tolerance
        else f"its score is uncertain: {record['ci_low']:.3f}–{record['ci_high']:.3f}"
    )
    low, high = record["rank_low"], record["rank_high"]
    where = f"ranks {_ordinal(low)}" if low == high else f"ranks {_ordinal(low)}–{_ordinal(high)}"
    parts = [f"{score} ({confidence:.0%}); it {where} of {n_ranked} ({rank_confidence:.0%})"]
    holes = 1.0 - record["judged@10"]
    if holes > 0:
        parts.append(f"{holes:.0%} of its top 10 unjudged")
    if record["trec_eval"] < record["ci_low"] - TIE:
        parts.append(f"trec_eval's {record['trec_eval']:.3f} (unjudged = nonrelevant) is below "
                     "its interval")  # fmt: skip
    if record["empty_topics"]:
        parts.append(f"retrieves nothing for {record['empty_topics']} of {n_topics} topics "
                     "(scored 0 there)")  # fmt: skip
    return "; ".join(parts)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def label_agreement(campaign: Campaign, depth: int = 100) -> np.ndarray:
    """Per run, how closely its ranking follows the automatic labels: of the pairs of
    labelled documents in its top ``depth`` with different labels (the first label source),
    the share it ranks higher-label first, averaged over topics (NaN: no such pair)."""
    if not campaign.labels:
        raise ValueError("the campaign carries no labels")
    codes = campaign.labels[0].align(campaign)
    shares = np.full((campaign.n_systems, campaign.n_topics), np.nan)
    for t, topic in enumerate(campaign.topics):
        for s in range(campaign.n_systems):
            c = codes[t][topic.ranking[s, : min(depth, int(topic.depth[s]))]]
            c = c[c >= 0]
            order = np.sign(c[:, None] - c[None, :])[np.triu_indices(len(c), 1)]
            if np.any(order):
                shares[s, t] = (order > 0).sum() / np.count_nonzero(order)
    counted = np.isfinite(shares).sum(axis=1)
    return np.where(counted > 0, np.nansum(shares, axis=1) / np.maximum(counted, 1), np.nan)
