"""B samplings of one topic's universe under one design, as arrays (:class:`Samplings`), and
what the estimators share whether they read one sample or many: their names, PPI++'s λ, the
jackknife's centring and the mean over topics.

PPI++ has no per-topic fallback to HT: a choice between the two made on a topic's own sample
selects on its outcome (where no relevant document is drawn HT is 0 with variance 0), and
biased MAP low. λ ∈ [0, 1] is the only choice between the control and HT, and
:func:`.estimate.estimate` cross-fits it over the other topics (``tests/test_survey_coverage.py``).
What the fallback guarded, AP̂ = N̂/R̂ blown up by an R̂(λ) in (0, 1), is met by holding PPI++'s
R̂ at 1, a map of R̂ alone (:meth:`.batched.TopicSamplings._held`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .design import POISSON, SAMPLINGS

ESTIMATORS = ("ht", "model-assisted", "ppi++")
#: ``averaged`` goes with AP's jackknife bias correction (:mod:`.quenouille`); elsewhere it is
#: the jackknife (no correction: its two variances are one); ``auto`` is the design's
#: (:func:`.quenouille.by_design`)
VARIANCES = ("auto", "jackknife", "linearised", "averaged")


def tuned_lambda(cov, var):
    """PPI++'s λ = Ĉov(u, v) / V̂ar(v), clipped to [0, 1] (0 when the predictions vary not);
    elementwise on arrays, a float on numbers."""
    cov, var = np.asarray(cov, dtype=float), np.asarray(var, dtype=float)
    lam = np.where(var > 0, np.clip(cov / np.where(var > 0, var, 1.0), 0.0, 1.0), 0.0)
    return float(lam) if lam.ndim == 0 else lam


@dataclass
class Samplings:
    """B samplings of one topic's universe of n documents under one design: ``drawn`` (B, n)
    which documents each judged; ``inclusion`` (n,) π (Poisson; stratified: n_h/N_h of each
    sampling is read from ``drawn``); ``stratum`` (n,) integer codes (stratified)."""

    drawn: np.ndarray
    inclusion: np.ndarray | None = None
    stratum: np.ndarray | None = None
    sampling: str = POISSON

    def __post_init__(self):
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"sampling {self.sampling!r} is not one of {', '.join(SAMPLINGS)}")
        self.drawn = np.atleast_2d(np.asarray(self.drawn, dtype=bool))
        B, n = self.drawn.shape
        codes = np.zeros(n, int) if self.stratum is None else np.asarray(self.stratum)
        _, self.stratum = np.unique(codes, return_inverse=True)
        member = np.eye(self.stratum.max(initial=0) + 1)[self.stratum]  # (n, H)
        size = member.sum(0)
        if self.sampling == POISSON:
            if self.inclusion is None:
                raise ValueError("Poisson sampling needs each document's inclusion probability")
            pi = np.broadcast_to(np.asarray(self.inclusion, dtype=float), (B, n))
            if (self.drawn & ~(pi > 0)).any():
                raise ValueError("a drawn document has inclusion probability 0")
            self.pair_factor = np.ones((B, member.shape[1]))
            self.var_coef = np.where(self.drawn, (1 - pi) / np.where(pi > 0, pi, 1) ** 2, 0.0)
            self.centred = np.zeros((B, member.shape[1]), bool)
        else:  # n_h of N_h without replacement: strata_inclusion's π and pair factor
            n_h = self.drawn.astype(float) @ member  # (B, H)
            share = n_h / size
            both = np.divide(n_h * (n_h - 1), size * (size - 1), out=np.zeros_like(n_h),
                             where=size > 1)
            self.pair_factor = np.divide(share**2, both, out=np.zeros_like(n_h), where=both > 0)
            pi = share[:, self.stratum]
            open_ = (n_h > 0) & (n_h < size)
            with np.errstate(divide="ignore", invalid="ignore"):
                per = np.where(n_h >= 2, size**2 * (1 - share) / (n_h * (n_h - 1)),
                               (1 - share) / share**2)  # one judged: the Poisson formula
            self.var_coef = np.where(self.drawn, np.where(open_, per, 0.0)[:, self.stratum], 0.0)
            self.centred = open_ & (n_h >= 2)
            self.n_h = n_h
        self.member = member
        self.weight = np.where(self.drawn, 1.0 / np.where(pi > 0, pi, 1.0), 0.0)
        self.pi = pi

    def __len__(self) -> int:
        return len(self.drawn)


@dataclass
class SamplingEstimates:
    """Per sampling (rows) and quantity (columns): the estimate, its variance and λ of every
    run (``(B, R)``) and of every pair A − B (``(B, P)``, the pairs as given)."""

    value: np.ndarray
    variance: np.ndarray
    lam: np.ndarray
    delta: np.ndarray
    delta_variance: np.ndarray
    delta_lam: np.ndarray


def _gathered(drawn):
    """(idx, valid) (B, m): each sampling's drawn documents first (m the most drawn by any),
    and which of the gathered positions are drawn."""
    m = max(int(drawn.sum(axis=1).max()), 1)
    idx = np.argsort(~drawn, axis=1, kind="stable")[:, :m]
    return idx, np.take_along_axis(drawn, idx, 1)


def _stratum_means(rep, split, h, H, centre):
    """The centre of each replicate (:func:`.design.jackknife_variance`): the mean of its
    stratum's split replicates, else ``centre`` (θ̂); ``rep`` (b, Q, m), ``split``/``h`` (b, m)."""
    member = ((h[..., None] == np.arange(H)) & split[..., None]).astype(float)
    count = member.sum(1)  # (b, H)
    mean = (rep @ member) / np.maximum(count, 1)[:, None]  # (b, Q, H)
    at = np.broadcast_to(h[:, None, :], rep.shape)
    return np.where(split[:, None], np.take_along_axis(mean, at, 2), centre)


def mean_over_topics(topics: list[SamplingEstimates]) -> SamplingEstimates:
    """MAP and ΔMAP per sampling: the means over topics, Var = Σ_t Var_t / T² (topics are
    independent designs), λ the mean over topics."""
    T = len(topics)
    return SamplingEstimates(*(sum(getattr(t, f) for t in topics) / (T**2 if "variance" in f
                                                                     else T)
                               for f in SamplingEstimates.__dataclass_fields__))
