"""statAP and statMAP: Horvitz–Thompson estimates of AP from judgments sampled with known
inclusion probabilities (Aslam, Pavlu & Yilmaz, SIGIR 2006; Pavlu & Aslam 2007).

For one topic, x_d is the relevance of document d (1 at grade ≥ the threshold), S the judged
sample, π_d = P(d ∈ S) and π_jk = P(j, k ∈ S); the run's document at rank k has x_k, π_k.
AP = N / R with R = Σ_d x_d and N = Σ_{j ≤ k} x_j x_k / k; each sum is estimated without bias
(``docs/sampled.md``, "statAP"):

    R̂ = Σ_{d ∈ S} x_d / π_d
    N̂ = Σ_{k ∈ S} x_k / (k π_k) + Σ_{j < k; j, k ∈ S} x_j x_k / (k π_jk)
    statAP = N̂ / R̂                       (0 when R̂ = 0)

With y_k = x_k / π_k on S (0 elsewhere) and Y_k = y_1 + ... + y_k, Poisson sampling
(π_jk = π_j π_k) gives N̂ = Σ_k (y_k / k)(1 + Y_{k-1}). A stratum h sampled without
replacement (n_h of N_h: π_h = n_h / N_h, and π_hh = n_h (n_h − 1) / (N_h (N_h − 1)) for two
of its documents) scales its within-stratum pairs by f_h = π_h² / π_hh; pairs across strata
are independent. statMAP is the mean over topics; the ratio makes it nearly, not exactly, unbiased.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..io.trec import sort_trec

#: What :func:`stat_eval` returns per topic: the estimated AP and number of relevant documents.
STAT_MEASURES = ("statAP", "statNumRel")


def stat_ap(
    weights: np.ndarray,
    ranks: np.ndarray,
    num_rel: np.ndarray | float,
    stratum: np.ndarray | None = None,
    pair_factor: np.ndarray | None = None,
) -> np.ndarray:
    """statAP from the HT weights ``y = x / π`` of the sampled documents of a ranking.

    ``weights`` is ``(..., m)`` (a leading axis per sample or run), ``ranks`` the 1-based ranks
    ``(m,)`` of those positions, ascending (positions with y = 0 may be left out), ``num_rel`` R̂
    ``(...)``. ``stratum`` ``(m,)`` indexes ``pair_factor`` ``(H,)``, f_h = π_h² / π_hh of
    sampling without replacement within stratum h (omit both for Poisson sampling).
    """
    y = np.asarray(weights, dtype=float)
    k = np.asarray(ranks, dtype=float)
    before = np.cumsum(y, axis=-1) - y  # Y_{k-1}
    pairs = before
    if stratum is not None:
        stratum = np.asarray(stratum)
        for h in np.unique(stratum):
            inside = np.where(stratum == h, y, 0.0)
            same = np.cumsum(inside, axis=-1) - inside
            pairs = pairs + np.where(stratum == h, (pair_factor[h] - 1.0) * same, 0.0)
    numerator = (y / k * (1.0 + pairs)).sum(axis=-1)
    num_rel = np.asarray(num_rel, dtype=float)
    return np.divide(numerator, num_rel, out=np.zeros(np.broadcast(numerator, num_rel).shape),
                     where=num_rel > 0)


def strata_inclusion(sample: pd.DataFrame) -> pd.DataFrame:
    """Stratified sampled qrels (``query_id, doc_id, stratum, relevance``) with each document's
    ``inclusion`` π_h = n_h / N_h and ``pair_factor`` f_h = π_h² / π_hh of its stratum (0 where
    fewer than two were sampled: no pair of the stratum is ever judged)."""
    judged = sample["relevance"].to_numpy() >= 0
    groups = sample.assign(_judged=judged).groupby(["query_id", "stratum"], sort=False)["_judged"]
    size = groups.transform("size").to_numpy(dtype=float)
    drawn = groups.transform("sum").to_numpy(dtype=float)
    inclusion = drawn / size
    both = np.divide(drawn * (drawn - 1), size * (size - 1), out=np.zeros_like(size),
                     where=size > 1)
    factor = np.divide(inclusion**2, both, out=np.zeros_like(size), where=both > 0)
    return sample.assign(inclusion=inclusion, pair_factor=factor)


class StatDesign:
    """Sampled qrels prepared once to score many runs with :func:`stat_eval`.

    ``qrels`` holds ``query_id, doc_id, relevance`` (``-1``: in the universe, not sampled) and
    either ``inclusion`` (π_d, Poisson sampling: :func:`relimpute.io.read_inclusion_qrels`) or
    ``stratum`` (stratified sampling without replacement: :func:`~relimpute.io.read_sampled_qrels`).
    A grade ≥ ``rel_threshold`` is relevant.
    """

    def __init__(self, qrels: pd.DataFrame, *, rel_threshold: int = 1):
        if "inclusion" not in qrels.columns:
            qrels = strata_inclusion(qrels)
        relevant = qrels["relevance"].to_numpy() >= rel_threshold
        frame = pd.DataFrame({
            "query_id": qrels["query_id"].astype(str).to_numpy(),
            "doc_id": qrels["doc_id"].astype(str).to_numpy(),
            "weight": np.where(relevant, 1.0 / qrels["inclusion"].to_numpy(dtype=float), 0.0),
            "stratum": qrels["stratum"].to_numpy() if "stratum" in qrels.columns else 0,
            "pair_factor": qrels["pair_factor"].to_numpy() if "pair_factor" in qrels else 1.0,
        })  # fmt: skip
        self.num_rel = frame.groupby("query_id", sort=True)["weight"].sum()
        self.stratified = "pair_factor" in qrels.columns
        self.relevant = frame[relevant].reset_index(drop=True)

    @property
    def topics(self) -> list[str]:
        return list(self.num_rel.index)


def stat_eval(design: StatDesign | pd.DataFrame, run: pd.DataFrame, *,
              rel_threshold: int = 1) -> pd.DataFrame:
    """statAP and statNumRel (R̂) of one run, per topic the run and the qrels share, then a row
    ``all``: statMAP (the mean statAP) and the summed R̂ of those topics.

    The run (``query_id, doc_id, score``) is ordered as trec_eval orders it, every document
    counted (a document outside the qrels is nonrelevant). ``rel_threshold`` applies when
    ``design`` is a qrels table (a :class:`StatDesign` has its own).
    """
    if not isinstance(design, StatDesign):
        design = StatDesign(design, rel_threshold=rel_threshold)
    ranked = sort_trec(run[["query_id", "doc_id", "score"]].astype({"query_id": str,
                                                                    "doc_id": str}))
    ranked["rank"] = ranked.groupby("query_id", sort=False).cumcount() + 1
    topics = [t for t in design.topics if t in set(ranked["query_id"])]
    if not topics:
        raise ValueError("the run and the sampled qrels share no topic")
    found = ranked.merge(design.relevant, on=["query_id", "doc_id"], how="inner")
    found = found.sort_values(["query_id", "rank"], kind="stable")
    scores = dict.fromkeys(topics, 0.0)
    for topic, rows in found.groupby("query_id", sort=False):
        strata = rows["stratum"].to_numpy()
        codes, index = np.unique(strata, return_inverse=True)
        factor = np.array([rows["pair_factor"].to_numpy()[index == i][0] for i in
                           range(len(codes))])
        scores[topic] = float(stat_ap(
            rows["weight"].to_numpy(), rows["rank"].to_numpy(), design.num_rel[topic],
            index if design.stratified else None, factor if design.stratified else None,
        ))  # fmt: skip
    table = pd.DataFrame({"statAP": pd.Series(scores),
                          "statNumRel": design.num_rel[topics]}, index=pd.Index(topics))
    total = pd.DataFrame({"statAP": [table["statAP"].mean()],
                          "statNumRel": [table["statNumRel"].sum()]}, index=["all"])
    return pd.concat([table, total]).rename_axis("query_id")
