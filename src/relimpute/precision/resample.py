"""The corpus bootstrap of every ranked list of a campaign (Cormack & Lynam 2006, §5).

The test corpus is taken as an i.i.d. sample from an infinite population of
materially similar documents. A bootstrap corpus replicates each document
``k ~ Poisson(1)`` times; a system's list on it is its list with every
retrieved document repeated ``k`` times in place, and ``R* = R*_ret +
Σ_{R_not} Poisson(1)``. All systems of a topic share the resamples (a
document has one count per resample), so differences are bootstrapped
paired. Topics use independent seeds drawn from ``rng``.

2,000 resamples of all 37 × 43 DL 2019 lists take a few seconds
(``benchmarks/bench_bootstrap.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data import Campaign
from ..measures.ap import average_precision
from ..relevance.base import as_generator
from ._kernels import POISSON1_CDF, bootstrap_ap, bootstrap_ap_serial, jackknife_influence
from ._nanstats import nan_mean, nan_sd


@dataclass(frozen=True, slots=True, eq=False)
class CorpusBootstrap:
    """Bootstrap replicates of AP for every system and topic.

    Attributes
    ----------
    systems, query_ids
        Row and column labels.
    observed
        ``(S, T)`` AP on the test corpus (trec_eval ``map``; 0 for an empty list).
    replicates
        ``(S, T, B)`` AP on each bootstrap corpus (NaN where ``R* = 0``).
    n_relevant
        ``(T,)`` R, relevant documents of each topic.
    retrieved
        ``(S, T)`` bool: the system returned a non-empty list for the topic.
    acceleration
        ``(S, T)`` BCa acceleration from the delete-one-document jackknife
        (documents of the corpus that neither are retrieved nor relevant have
        no influence; Efron & Tibshirani 1994, Eq. 14.15).
    seeds
        ``(T,)`` the per-topic hash seeds (same seed, same corpus resamples).
    """

    systems: tuple[str, ...]
    query_ids: tuple[str, ...]
    observed: np.ndarray
    replicates: np.ndarray
    n_relevant: np.ndarray
    retrieved: np.ndarray
    acceleration: np.ndarray
    seeds: np.ndarray

    @property
    def n_resamples(self) -> int:
        return self.replicates.shape[-1]

    def to_frame(self) -> pd.DataFrame:
        """One row per system and topic: AP, R, bootstrap mean and standard deviation."""
        mean = nan_mean(self.replicates, axis=-1)
        sd = nan_sd(self.replicates)
        n_sys, n_top = self.observed.shape
        return pd.DataFrame(
            {
                "system": np.repeat(self.systems, n_top),
                "query_id": np.tile(self.query_ids, n_sys),
                "ap": self.observed.ravel(),
                "n_relevant": np.tile(self.n_relevant, n_sys),
                "retrieved": self.retrieved.ravel(),
                "bootstrap_mean": mean.ravel(),
                "bootstrap_sd": sd.ravel(),
            }
        )

    def __str__(self) -> str:
        return (
            f"CorpusBootstrap({len(self.systems)} systems x {len(self.query_ids)} topics, "
            f"{self.n_resamples} resamples)"
        )


def corpus_bootstrap(
    campaign: Campaign,
    n_resamples: int = 2000,
    *,
    systems: Sequence[str] | None = None,
    rng: int | np.random.Generator | None = None,
    progress: bool | None = None,
) -> CorpusBootstrap:
    """Bootstrap AP of every (system, topic) list over corpus resamples.

    Parameters
    ----------
    campaign
        Runs and qrels; unjudged documents count as nonrelevant.
    n_resamples
        B, bootstrap corpora per topic (the paper uses 2,000).
    systems
        Restrict to these systems (default: all).
    rng
        Seed or Generator for the per-topic hash seeds.
    progress
        tqdm bar over topics (None: only when standard error is a terminal).
    """
    n_resamples = int(n_resamples)
    if n_resamples < 2:
        raise ValueError(f"n_resamples must be at least 2, got {n_resamples}")
    if systems is not None:
        campaign = campaign.subset(systems=systems)
    generator = as_generator(rng)
    seeds = generator.integers(0, 2**63, size=campaign.n_topics, dtype=np.int64)
    n_sys, n_top = campaign.n_systems, campaign.n_topics
    observed = np.zeros((n_sys, n_top))
    replicates = np.empty((n_sys, n_top, n_resamples))
    acceleration = np.zeros((n_sys, n_top))
    n_relevant = np.zeros(n_top, dtype=np.int64)

    from tqdm.auto import tqdm  # shown in a terminal only (disable=None)

    topics = tqdm(
        list(enumerate(campaign.topics)),
        desc="corpus bootstrap",
        unit="topic",
        disable=None if progress is None else not progress,
        leave=False,
    )
    # numba's threads for the resamples only from the main thread: a study's units on a Dask
    # worker's threads each run serially (the same numbers)
    kernel = bootstrap_ap if threading.current_thread() is threading.main_thread() else bootstrap_ap_serial
    for t, topic in topics:
        relevant = topic.relevant(campaign.rel_threshold)
        ranking = np.ascontiguousarray(topic.ranking, dtype=np.int32)
        stop = _stop_positions(ranking, topic.depth, relevant)
        n_relevant[t] = int(relevant.sum())
        if ranking.shape[1]:
            observed[:, t] = average_precision(ranking, relevant)
        replicates[:, t] = kernel(ranking, stop, relevant, np.uint64(seeds[t]), n_resamples, POISSON1_CDF)
        for s in range(n_sys):
            acceleration[s, t] = _acceleration(ranking[s], int(stop[s]), relevant, n_relevant[t])
    return CorpusBootstrap(
        systems=campaign.systems,
        query_ids=campaign.query_ids,
        observed=observed,
        replicates=replicates,
        n_relevant=n_relevant,
        retrieved=campaign.coverage(),
        acceleration=acceleration,
        seeds=seeds,
    )


def _stop_positions(ranking: np.ndarray, depth: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """``(S,)`` one past the last relevant position of each list (0: none retrieved)."""
    if ranking.shape[1] == 0:
        return np.zeros(ranking.shape[0], dtype=np.int64)
    hit = (ranking >= 0) & relevant[np.maximum(ranking, 0)]
    hit &= np.arange(ranking.shape[1]) < depth[:, None]
    last = ranking.shape[1] - np.argmax(hit[:, ::-1], axis=1)
    return np.where(hit.any(axis=1), last, 0).astype(np.int64)


def _acceleration(row: np.ndarray, stop: int, relevant: np.ndarray, n_relevant: int) -> float:
    """BCa acceleration ``Σ U³ / (6 (Σ U²)^{3/2})`` over the documents' influences."""
    influence = jackknife_influence(row, stop, relevant, n_relevant)
    retrieved_relevant = int(relevant[row[:stop]].sum()) if stop else 0
    weights = np.ones_like(influence)
    weights[-1] = n_relevant - retrieved_relevant  # one entry stands for every R_not document
    usable = np.isfinite(influence)
    u, w = influence[usable], weights[usable]
    second = float(np.sum(w * u**2))
    return float(np.sum(w * u**3) / (6.0 * second**1.5)) if second > 0 else 0.0
