"""The judged sample of one campaign as the design sees it: per topic, the universe U, which
documents were judged (S), their inclusion probabilities π and the strata (``docs/sampled.md``).

Two designs (Aslam, Pavlu & Yilmaz 2006; Yilmaz, Kanoulas & Aslam 2008):

- Poisson sampling: d ∈ S independently with probability π_d, so π_jk = π_j π_k;
- stratified sampling without replacement: n_h of stratum h's N_h documents, π_d = n_h / N_h
  and π_jk = n_h (n_h − 1) / (N_h (N_h − 1)) within a stratum (f_h = π_h² / π_jk scales the
  within-stratum pairs of AP, as :func:`relimpute.measures.statap.strata_inclusion`).

A document is in S when its grade is ≥ 0 (judged); ``-1`` is in U, not judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...measures.statap import strata_inclusion

POISSON = "poisson"
STRATIFIED = "stratified"
SAMPLINGS = (POISSON, STRATIFIED)


@dataclass
class TopicSample:
    """One topic's universe: ``doc_ids``, ``grade`` (−1 not judged), ``inclusion`` π,
    ``stratum`` (codes 0..H−1), per stratum its ``population`` N_h, judged ``drawn`` n_h and
    ``pair_factor`` f_h; ``unsampled`` names strata of U none of whose documents was judged
    (their contribution is unknown: the topic has no design-based estimate)."""

    query_id: str
    doc_ids: np.ndarray
    grade: np.ndarray
    inclusion: np.ndarray
    stratum: np.ndarray
    population: np.ndarray
    drawn: np.ndarray
    pair_factor: np.ndarray
    sampling: str
    unsampled: list = field(default_factory=list)
    _replicates: tuple | None = field(default=None, repr=False, compare=False)
    #: measure totals already computed on this sample (:func:`.estimate.sample_totals`)
    _totals: dict = field(default_factory=dict, repr=False, compare=False)

    def replicate_set(self) -> tuple:
        """:func:`replicates` of this sample, computed once."""
        if self._replicates is None:
            self._replicates = replicates(self)
        return self._replicates

    @property
    def judged(self) -> np.ndarray:
        return self.grade >= 0

    @property
    def weight(self) -> np.ndarray:
        """w_d = 1[d ∈ S] / π_d (0 off the sample)."""
        return np.where(self.judged, 1.0 / np.where(self.inclusion > 0, self.inclusion, 1.0), 0.0)

    @property
    def n_judged(self) -> int:
        return int(self.judged.sum())


def infer_sampling(sample: pd.DataFrame) -> str:
    """Poisson when the table has π and no strata (statAP's qrels with inclusion
    probabilities), stratified when it has strata and no π (``sample_eval.pl``'s qrels); a
    sample table with both (:mod:`relimpute.selection.designs`) is stratified when every
    stratum's π is the share judged of it, else Poisson."""
    if "inclusion" not in sample.columns:
        if "stratum" not in sample.columns:
            raise ValueError("a sample without inclusion probabilities (no 'inclusion' column) "
                             "and without strata has no design: no design-based estimate can "
                             "be made from it (the chance that each document was judged is "
                             "unknown)")
        return STRATIFIED
    if "stratum" not in sample.columns:
        return POISSON
    judged = sample["relevance"].to_numpy() >= 0
    groups = sample.assign(_judged=judged).groupby(["query_id", "stratum"], sort=False)
    share = groups["_judged"].transform("mean").to_numpy()
    flat = groups["inclusion"].transform(lambda s: s.max() - s.min()).to_numpy()
    same = np.allclose(share, sample["inclusion"].to_numpy(), atol=1e-9) and (flat < 1e-12).all()
    return STRATIFIED if same else POISSON


def topic_samples(sample: pd.DataFrame, sampling: str | None = None) -> dict[str, TopicSample]:
    """Per topic, the :class:`TopicSample` of a sampled qrels or sample table
    (``query_id, doc_id, relevance`` and ``inclusion`` and/or ``stratum``).

    A judged document with π = 0 is refused (its HT weight 1/π is infinite: the design could
    not have drawn it); in a Poisson table a document drawn but not judged yet is refused (the
    sample judged is then not the design's).
    """
    sampling = sampling or infer_sampling(sample)
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling {sampling!r} is not one of {', '.join(SAMPLINGS)}")
    table = sample.reset_index(drop=True)
    judged = table["relevance"].to_numpy() >= 0
    if sampling == POISSON:
        if "inclusion" not in table.columns:
            raise ValueError("Poisson sampling needs each document's inclusion probability")
        pi = table["inclusion"].to_numpy(dtype=float)
        bad = judged & ~(pi > 0)
        if bad.any():
            row = table.iloc[int(np.flatnonzero(bad)[0])]
            raise ValueError(f"topic {row['query_id']}, document {row['doc_id']} is judged with "
                             f"inclusion probability {row['inclusion']}: a design-based weight "
                             "needs π > 0 (a document the design cannot draw was judged)")
        if "drawn" in table.columns:
            waiting = table["drawn"].to_numpy(dtype=bool) & ~judged
            if waiting.any():
                row = table.iloc[int(np.flatnonzero(waiting)[0])]
                raise ValueError(f"topic {row['query_id']}, document {row['doc_id']} was drawn "
                                 "but not judged: the judged set is not the Poisson sample")
        strata = np.zeros(len(table), dtype=int) if "stratum" not in table else \
            table["stratum"].to_numpy()
        table = table.assign(stratum=strata, pair_factor=1.0)
    else:
        if "stratum" not in table.columns:
            raise ValueError("stratified sampling needs each document's stratum")
        table = strata_inclusion(table.drop(columns=["inclusion"], errors="ignore"))
    out = {}
    for topic, rows in table.groupby(table["query_id"].astype(str), sort=True):
        codes, index = np.unique(rows["stratum"].to_numpy(), return_inverse=True)
        grade = rows["relevance"].to_numpy(dtype=int)
        population = np.bincount(index, minlength=len(codes)).astype(float)
        drawn = np.bincount(index, weights=(grade >= 0), minlength=len(codes))
        factor = np.ones(len(codes))
        pf = rows["pair_factor"].to_numpy(dtype=float)
        for h in range(len(codes)):
            factor[h] = pf[index == h][0]
        out[topic] = TopicSample(
            query_id=topic, doc_ids=rows["doc_id"].astype(str).to_numpy(), grade=grade,
            inclusion=rows["inclusion"].to_numpy(dtype=float), stratum=index,
            population=population, drawn=drawn, pair_factor=factor, sampling=sampling,
            unsampled=[] if sampling == POISSON else
            [f"stratum {codes[h]} ({int(population[h])} documents)"
             for h in range(len(codes)) if drawn[h] == 0],
        )  # fmt: skip
    return out


def design_covariance(topic: TopicSample, a: np.ndarray, b: np.ndarray) -> tuple[float, bool]:
    """The estimated design covariance of the linearised totals Σ_d a_d w_d and Σ_d b_d w_d
    (``a``, ``b`` over U, read on S only), and whether it needed the one-document fallback.

    Poisson: Σ_{d ∈ S} (1 − π_d) / π_d² a_d b_d (unbiased for Σ_U (1 − π_d)/π_d a_d b_d).
    Stratified: Σ_h N_h² (1 − n_h/N_h) / n_h · s_h(a, b), s_h the sample covariance in
    stratum h (unbiased). A stratum with one judged document of several has no sample
    covariance: the Poisson formula with its π stands in (an approximation, flagged).
    """
    judged = topic.judged
    pi = topic.inclusion
    if topic.sampling == POISSON:
        c = np.where(judged, (1.0 - pi) / np.where(pi > 0, pi, 1.0) ** 2, 0.0)
        return float((c * a * b).sum()), False
    total, fallback = 0.0, False
    for h in range(len(topic.population)):
        n, size = topic.drawn[h], topic.population[h]
        if n == 0 or n >= size:
            continue
        m = judged & (topic.stratum == h)
        if n == 1:
            fallback = True
            total += float(((1.0 - n / size) * (size / n) ** 2 * a[m] * b[m]).sum())
            continue
        da, db = a[m] - a[m].mean(), b[m] - b[m].mean()
        total += size**2 * (1.0 - n / size) / n * float((da * db).sum()) / (n - 1)
    return total, fallback


def replicates(topic: TopicSample) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Delete-one jackknife replicates of the sample: ``(weights (B, n), pair factors (B, H),
    coefficients (B,), groups (B,))``, one replicate per judged document d with π_d < 1.

    Poisson: w_d = 0, the rest unchanged, coefficient 1 − π_d; the variance is
    Σ_d (1 − π_d)(θ̂_(d) − θ̂)², for a linear total exactly the unbiased HT estimator
    Σ_S (1 − π_d) / π_d² t_d². Stratified (n_h ≥ 2 of N_h): w_d = 0 and the others of the
    stratum N_h / (n_h − 1), the pair factor of n_h − 1 draws, coefficient
    (1 − n_h/N_h)(n_h − 1)/n_h about the stratum's replicate mean (the stratified jackknife,
    Wolter 2007 §4.5), again the unbiased estimator for a linear total; a stratum with one
    judged document falls back to the Poisson form.
    """
    judged = np.flatnonzero(topic.judged & (topic.inclusion < 1))
    base = topic.weight
    weights = np.repeat(base[None, :], len(judged), axis=0)
    weights[np.arange(len(judged)), judged] = 0.0
    factor = np.repeat(topic.pair_factor[None, :], len(judged), axis=0)
    coef = 1.0 - topic.inclusion[judged]
    groups = np.full(len(judged), -1)
    if topic.sampling == STRATIFIED:
        for b, d in enumerate(judged):
            h = topic.stratum[d]
            m, size = topic.drawn[h], topic.population[h]
            if m < 2:
                continue
            others = (topic.stratum == h) & topic.judged
            others[d] = False
            weights[b, others] = size / (m - 1)
            pairs = (m - 1) * (m - 2) / (size * (size - 1))
            factor[b, h] = ((m - 1) / size) ** 2 / pairs if pairs > 0 else 0.0
            coef[b] = (1.0 - m / size) * (m - 1) / m
            groups[b] = h
    return weights, factor, coef, groups


def jackknife_variance(estimate: float, values: np.ndarray, coef: np.ndarray,
                       groups: np.ndarray) -> float:
    """Σ_b c_b (θ̂_b − centre_b)²: centre θ̂ for Poisson replicates (group −1), the mean of
    the stratum's replicates for stratified ones (:func:`replicates`)."""
    centre = np.full(len(values), float(estimate))
    for g in np.unique(groups[groups >= 0]):
        inside = groups == g
        centre[inside] = values[inside].mean()
    return float((coef * (values - centre) ** 2).sum())
