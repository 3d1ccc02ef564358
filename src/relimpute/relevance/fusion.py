"""Relevance from the runs' consensus, learned where judging followed the ranks.

A document many runs rank high is likely relevant (rank fusion: Cormack,
Clarke & Büttcher 2009's reciprocal rank fusion; Carterette 2007 §3 treats
the runs as experts). This model turns that consensus into calibrated
probabilities while keeping in mind *how the judged documents were chosen*,
which is where fitted models go wrong on pooled collections (a pool is not a
random sample of the documents).

Model. For document ``i`` of topic ``t`` and the runs ``C_t`` that retrieve
anything for ``t``, three features summarise the runs' evidence::

    x₁ = log( (1/|C_t|) Σ_{j∈C_t} 1 / (c + r_ij) )   fused reciprocal rank
    x₂ = log( |{j : i retrieved by j}| / |C_t| )       share of runs retrieving i
    x₃ = log min_j r_ij                                 best rank

(a run that does not retrieve ``i`` adds nothing to x₁ and x₂), and

    logit P(X_ti = 1) = α_t + w · x + Σ_j u_j / log2(1 + r_ij),
    α_t ~ N(μ, σ_α²),   u_j ~ N(0, σ_u²)

with the topic intercepts partially pooled and an optional effect ``u_j``
per run (``run_effect_sd`` = σ_u; 0 leaves it out): how much better or
worse than the consensus the documents a run ranks high are. Gaussian
priors on ``w`` (centred on weights learned across collections,
``weight_mean``) and ``μ``; fitted by penalised maximum
likelihood (Newton on one sparse design) with a Laplace approximation for
the posterior of ``θ = (w, μ, α, u)``. A run with few judged documents
keeps the prior's spread of ``u_j``, and the posterior draws carry that to
the confidence of every comparison it takes part in.

Which judged documents it learns from. Judging by pool depth (every
document some run ranks within ``k``) selects on the features only, so a
logistic model fitted on those documents is unbiased given its features
(selection on covariates is ignorable). Documents judged *beyond* the pool,
by active learning such as the HiCAL stage of TREC DL, were picked because
they looked relevant: fitted on them, a model predicts their relevance rate
for every unjudged document and expects tens of relevant documents per
topic that are not there. So the model finds how deep the judging
followed each run (its judged prefix: the ranks before its first unjudged
document), takes a robust *pool depth* ``k_t`` per topic from those
prefixes (:func:`pool_depth`), and fits on the judged documents some run
ranks within both its prefix and ``k_t``. It then accounts for the documents judged beyond the
horizon (*capture adjustment*): documents outside the fit set are grouped
by predicted log-odds; where the judging has already found ``F_b`` relevant
documents among a group expected to hold ``E_b = Σ π_i``, the group's
unjudged documents share what is left, ``max(E_b − F_b, f · U_b)`` with
``U_b`` their own expected count and ``f`` the floor ``capture_floor``
(never more than ``U_b``). With nothing judged beyond the horizon the
adjustment is the identity.

How fast relevance fades below the pool. Inside the pool the features fix
how relevance falls with rank; below it nothing was judged, so the fitted
curve is pure extrapolation, and judgments chosen by MTC leave pools of
depth 1–3. A document whose best rank ``b`` lies below the topic's pool
depth ``k_t`` has its log-odds lowered by ``γ log(b / k_t)``
(``beyond_decay`` = γ): one more power of the rank ratio. γ cannot be
learned from one collection's judgments: none lie below its pool, and the
pool's own lower half does not predict it (fitted on half the depth, the
γ that fits the pool's bottom half is −0.5 to 0.4 on TREC-8, DL 2019 and
DL 2021 alike). So it is set across collections (``models/fusion.json`` says
which), and the collections disagree: the DL reusability studies want
0.6–1, while on TREC-8 ad hoc, with the other settings chosen on the DL
collections, the relevant documents below depth-5, 10 and 20 pools are
best matched by γ ≈ 0.3 (expected / true 0.98, 0.79, 0.91; γ = 0: 1.38,
1.01, 1.08; the shipped 0.6: 0.71, 0.63, 0.78). A topic with no pool (no
run's top document judged, e.g. judgments chosen by MTC elsewhere) is
fitted on all its judged documents.

Judged documents keep their labels. With ``n_draws > 0`` the estimate
carries joint posterior draws of ``p`` (Laplace draws of the parameters,
each adjusted the same way) for the confidence engine's Monte Carlo path,
computed topic by topic when read (a campaign of millions of documents never
holds them all).

What the judgments cannot tell. Below the pool two things are assumed, not
learned: the decay γ, and that a run's effect ``u_j`` (learned from its judged,
top-ranked documents) holds for its deeper ones. The draws can carry both as
uncertainty shared by every topic. ``beyond_decay_sd`` draws, per posterior
draw, how far γ_d lies from γ (stratified ``N(0, beyond_decay_sd²)``, negative
draws kept: below TREC-8's depth-10 pools relevance fades *slower* than the
in-pool curve says) and lowers the log-odds by ``(γ_d − γ) log(b / k_t)`` down
to ``SPREAD_RATIO`` = 10 times the pool depth, by ``(γ_d − γ) log 10`` below
that. It stops there because the error, measured against complete judgments,
stops too: on TREC-8 cut at rank 100 a depth-3 pool is fitted as well with the
stop as without it (E[z²] 1.09 against 1.05), while without it the reusability
studies, whose MTC pools are 1–3 deep, lost confidence with no gain in accuracy
(development numbers, TREC-8 only; ``examples/calibration/README.md``, "Below
the pool"). ``beyond_run_sd`` adds a per-run effect ``v_j ~ N(0, beyond_run_sd²)``,
weighted by the run's vote, to the documents it ranks below the pool depth.
Both are priors with nothing to update them. The shipped settings (the class
defaults, ``models/fusion.json``) use ``beyond_run_sd`` = 1, chosen
leave-one-collection-out by the log loss of the reusability studies' stated
confidences (``examples/calibration/beyond_run_sd_choice.md``), and
``beyond_decay_sd`` = 1.25, chosen leave-one-collection-out against complete
judgments below shallow pools, where the reusability studies cannot look
(``examples/calibration/below_pool_beyond_decay_sd_choice.md``).

Defaults. ``RankFusion()`` is the shipped, calibrated configuration (the values of
``models/fusion.json``, which ``load_model("fusion")`` reads; a test keeps the two
equal). :meth:`RankFusion.plug_in` is the uncalibrated plug-in variant: flat weight
prior, no run effects, no decay below the pool, the point estimate only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_expit, logit, ndtri

from ..data import Campaign, TopicData
from ._newton import newton_maximise
from .base import LazyDraws, RelevanceModel, register

N_FEATURES = 3
FEATURE_NAMES = ("log_fused_rr", "log_share_retrieving", "log_best_rank")
#: the plug-in variant (:meth:`RankFusion.plug_in`): what the class defaults were before they
#: became the shipped, calibrated settings; its confidence is the point estimate's, over-confident
#: (issue 24), kept for studies that fit the weights themselves or test one part of the model
PLUG_IN: dict[str, Any] = {
    "weight_sd": 2.0,
    "weight_mean": (0.0, 0.0, 0.0),
    "run_effect_sd": 0.0,
    "n_draws": 0,
    "beyond_decay": 0.0,
    "beyond_decay_sd": 0.0,
    "beyond_run_sd": 0.0,
}
#: γ's spread over the draws grows with log(b / k_t) down to this many times the pool
#: depth and holds below it (module docstring, "What the judgments cannot tell")
SPREAD_RATIO = 10.0


@dataclass(frozen=True, slots=True)
class TopicEvidence:
    """The runs' evidence about every document of one topic.

    Attributes
    ----------
    features
        ``(n, 3)`` raw features (module docstring), unstandardised.
    best_rank
        ``(n,)`` best rank over the covering runs (``inf`` if no run retrieves it).
    votes
        ``(n, S)`` sparse: run ``j``'s vote ``1 / log2(1 + r_ij)`` for the
        documents it retrieves (the feature of its run effect).
    within
        ``(n,)`` bool: ranked by some run within both its judged prefix
        (:func:`judged_prefixes`) and the topic's pool depth: the pool.
    horizon
        The topic's pool depth ``k_t`` (:func:`pool_depth`).
    """

    features: np.ndarray
    best_rank: np.ndarray
    votes: sp.csr_matrix
    within: np.ndarray
    horizon: int


def topic_evidence(topic: TopicData, rrf_offset: float) -> TopicEvidence:
    """Features, runs' votes, best ranks and pool of one topic (see the module docstring)."""
    n = topic.n_docs
    n_cover = max(int((topic.depth > 0).sum()), 1)
    rows, cols = np.nonzero(topic.ranking >= 0)
    docs = topic.ranking[rows, cols]
    rank = cols + 1.0
    deepest = float(topic.ranking.shape[1])
    fused = np.bincount(docs, weights=1.0 / (rrf_offset + rank), minlength=n) / n_cover
    share = np.bincount(docs, minlength=n) / n_cover
    best = np.full(n, np.inf)
    np.minimum.at(best, docs, rank)
    # a document no run retrieves: as if one run had it just below the deepest rank
    beyond = 1.0 / (rrf_offset + deepest + 1.0) / n_cover
    features = np.column_stack(
        [
            np.log(np.where(share > 0, fused, beyond)),
            np.log(np.where(share > 0, share, 1.0 / n_cover)),
            np.log(np.where(np.isfinite(best), best, deepest + 1.0)),
        ]
    )
    votes = sp.csr_matrix(
        (1.0 / np.log2(1.0 + rank), (docs, rows)), shape=(n, len(topic.depth))
    )
    prefix = judged_prefixes(topic)
    depth = pool_depth(prefix[topic.depth > 0])
    inside = cols < np.minimum(prefix[rows], depth)
    within = np.zeros(n, dtype=bool)
    within[docs[inside]] = True
    return TopicEvidence(features, best, votes, within, depth)


def pool_depth(prefixes: np.ndarray) -> int:
    """The depth to which judging followed the ranks, from the runs' judged prefixes.

    Runs left out of a pool have short prefixes and judging beyond the pool
    (active learning) extends some prefixes at random; the lower quartile of
    the prefixes that reach at least half the median prefix is robust to both.
    """
    if not len(prefixes):
        return 0
    long = prefixes[prefixes >= np.median(prefixes) / 2]
    return int(np.floor(np.quantile(long, 0.25)))


def judged_prefixes(topic: TopicData) -> np.ndarray:
    """``(S,)`` per run, how many of its top documents are judged before the first
    unjudged one: how deep the judging reached into each run."""
    valid = topic.ranking >= 0
    unjudged = valid & ~topic.judged[np.maximum(topic.ranking, 0)]
    unjudged |= ~valid  # the end of the run stops the prefix too
    if not unjudged.shape[1]:  # no run retrieves anything for this topic
        return np.zeros(len(unjudged), dtype=np.int64)
    return np.where(unjudged.any(axis=1), np.argmax(unjudged, axis=1), topic.ranking.shape[1])


class RankFusion(RelevanceModel):
    """Pool-aware logistic model on the runs' fused evidence; module docstring for the model.

    The defaults are the shipped settings (``models/fusion.json``, where each is said
    how it was chosen); :meth:`plug_in` builds the uncalibrated plug-in variant.

    Parameters
    ----------
    rrf_offset
        ``c`` of the fused reciprocal rank ``1 / (c + r)``.
    intercept_sd
        ``σ_α``: spread of the topic intercepts around ``μ`` (log-odds).
    mean_prior
        ``(mean, sd)`` of the Gaussian prior on ``μ``.
    weight_sd
        Standard deviation of the Gaussian prior on each weight (features
        are standardised on the fit set).
    weight_mean
        Mean of the Gaussian prior on the weights ``w``, per unit of the *raw*
        features (so it carries across campaigns whatever the fit set; zero:
        no preference for or against the consensus). Learned across collections
        (``models/fusion.json`` says which); it decides the direction of the
        consensus when few documents are judged.
    capture_bins
        Number of groups (quantiles of the predicted log-odds of the documents
        outside the fit set) of the capture adjustment.
    capture_floor
        ``f``: share of its extrapolated probability an unjudged document
        keeps however many relevant documents the judging found around it.
    run_effect_sd
        ``σ_u`` of a per-run effect ``u_j ~ N(0, σ_u²)`` on the log-odds of
        the documents run ``j`` retrieves, weighted by its vote
        ``1 / log2(1 + r_ij)``: how much better or worse than the consensus a
        run's documents are. Learned from the run's judged documents; a run
        with few keeps the prior's spread, which the posterior draws carry to
        the confidence. 0: no run effects.
    n_draws
        Joint posterior draws of ``p`` handed to the confidence engine
        (0: none, the point estimate only).
    beyond_decay
        ``γ ≥ 0``: extra decay of the log-odds, ``γ log(b / k_t)``, for documents
        whose best rank ``b`` lies below the topic's pool depth ``k_t`` (module
        docstring). 0: the fitted curve is extrapolated as it is.
    beyond_decay_sd, beyond_run_sd
        Spread of γ over the posterior draws, and of the per-run effects below
        the pool (module docstring, "What the judgments cannot tell"); only the
        draws carry them.

    Attributes
    ----------
    coef_
        Posterior mode of ``θ = (w, μ, α_1..α_T, u_1..u_S)`` (``w`` on
        standardised features; ``u`` only with ``run_effect_sd > 0``).
    covariance_
        Laplace covariance of ``θ``.
    query_ids_, systems_
        The topics of ``α`` and the runs of ``u``, in order.
    feature_mean_, feature_scale_
        Standardisation of the features.
    horizons_
        Pool depth ``k_t`` per topic.
    n_fit_
        Judged documents the model was fitted on.
    """

    name = "fusion"
    contract_params: ClassVar[dict[str, Any]] = {"n_draws": 8}

    @classmethod
    def plug_in(cls, **params: Any) -> RankFusion:
        """The uncalibrated plug-in variant (:data:`PLUG_IN`: a flat N(0, 2²) weight prior,
        no run effects, no decay below the pool, no posterior draws), ``params`` on top."""
        return cls(**{**PLUG_IN, **params})

    def __init__(
        self,
        rrf_offset: float = 3.0,
        intercept_sd: float = 1.5,
        mean_prior: tuple[float, float] = (-2.0, 3.0),
        weight_sd: float = 0.25,
        weight_mean: tuple[float, float, float] = (0.834, 0.097, 0.299),
        capture_bins: int = 20,
        capture_floor: float = 0.1,
        run_effect_sd: float = 3.0,
        n_draws: int = 100,
        beyond_decay: float = 0.6,
        beyond_decay_sd: float = 1.25,
        beyond_run_sd: float = 1.0,
    ):
        self.rrf_offset = rrf_offset
        self.intercept_sd = intercept_sd
        self.mean_prior = mean_prior
        self.weight_sd = weight_sd
        self.weight_mean = weight_mean
        self.capture_bins = capture_bins
        self.capture_floor = capture_floor
        self.run_effect_sd = run_effect_sd
        self.n_draws = n_draws
        self.beyond_decay = beyond_decay
        self.beyond_decay_sd = beyond_decay_sd
        self.beyond_run_sd = beyond_run_sd

    def _validate(self) -> None:
        if not self.rrf_offset >= 0:
            raise ValueError(f"rrf_offset must be >= 0, got {self.rrf_offset}")
        if not (self.intercept_sd > 0 and self.weight_sd > 0 and self.mean_prior[1] > 0):
            raise ValueError("prior standard deviations must be > 0")
        if len(self.weight_mean) != N_FEATURES or not np.all(np.isfinite(self.weight_mean)):
            raise ValueError(f"weight_mean must be {N_FEATURES} finite numbers, got {self.weight_mean}")
        if int(self.capture_bins) != self.capture_bins or self.capture_bins < 1:
            raise ValueError(f"capture_bins must be a positive integer, got {self.capture_bins}")
        if not 0.0 <= self.capture_floor <= 1.0:
            raise ValueError(f"capture_floor must lie in [0, 1], got {self.capture_floor}")
        if not self.run_effect_sd >= 0:
            raise ValueError(f"run_effect_sd must be >= 0, got {self.run_effect_sd}")
        for name in ("beyond_decay", "beyond_decay_sd", "beyond_run_sd"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value}")
        if int(self.n_draws) != self.n_draws or self.n_draws < 0:
            raise ValueError(f"n_draws must be a non-negative integer, got {self.n_draws}")

    # ------------------------------------------------------------------ fit

    def _evidence(self, campaign: Campaign) -> list[TopicEvidence]:
        return [topic_evidence(t, self.rrf_offset) for t in campaign.topics]

    def _fit_mask(self, topic: TopicData, ev: TopicEvidence) -> np.ndarray:
        """The judged documents the model learns from: those within the pool horizon
        (all judged documents when the judging follows no run's ranks; none in a topic
        no run retrieves for, whose documents carry no evidence of the runs)."""
        if not _retrieved_any(topic):
            return np.zeros(topic.n_docs, dtype=bool)
        if not ev.within.any():
            return topic.judged.copy()
        return topic.judged & ev.within

    def _fit(self, campaign: Campaign, rng: np.random.Generator) -> None:
        self._validate()
        evidence = self._evidence(campaign)
        masks = [self._fit_mask(t, ev) for t, ev in zip(campaign.topics, evidence)]
        x = np.concatenate([ev.features[m] for ev, m in zip(evidence, masks)])
        if len(x):
            self.feature_mean_ = x.mean(axis=0)
            self.feature_scale_ = np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
        else:
            self.feature_mean_, self.feature_scale_ = np.zeros(N_FEATURES), np.ones(N_FEATURES)
        self.systems_ = tuple(campaign.systems) if self.run_effect_sd > 0 else ()
        self.query_ids_ = tuple(campaign.query_ids)
        design = sp.vstack(self._designs(campaign, evidence, masks), format="csr")
        y = np.concatenate([r[m] for r, m in zip(campaign.relevant(), masks)]).astype(float)
        prec, shift = self._prior(campaign.n_topics)
        start = np.zeros(len(shift))
        start[N_FEATURES : N_FEATURES + 1 + campaign.n_topics] = self.mean_prior[0]
        theta, cov = self._fit_theta(design, y, prec, shift, start)
        self.coef_ = theta
        self.covariance_ = cov
        self.horizons_ = dict(zip(campaign.query_ids, (ev.horizon for ev in evidence)))
        self.n_fit_ = len(y)
        self.draw_seed_ = int(rng.integers(2**63))

    def _fit_theta(self, design, y, prec, shift, start) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mode and covariance of ``θ``: the inference engine (here Newton +
        Laplace; the Bayesian hierarchy samples the same posterior by NUTS)."""
        return _fit_logistic(design, y, prec, shift, start)

    def _theta_draws(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``(n, P)`` posterior draws of ``θ`` (here from the Laplace approximation)."""
        return rng.multivariate_normal(self.coef_, self.covariance_, size=n, method="cholesky")

    def _designs(self, campaign: Campaign, evidence, rows=None) -> list[sp.csr_matrix]:
        """Per topic, ``(n, P)`` rows ``η_i = design_i · θ`` over ``θ = (w, μ, α, u)``,
        for the documents ``rows[t]`` selects (all when None).

        A topic the fit did not see takes ``μ``; a run it did not see has no effect.
        """
        run_pos = {s: i for i, s in enumerate(self.systems_)}
        known = [j for j, s in enumerate(campaign.systems) if s in run_pos]
        mapping = sp.csr_matrix(
            (np.ones(len(known)), (known, [run_pos[campaign.systems[j]] for j in known])),
            shape=(campaign.n_systems, len(self.systems_)),
        )
        topic_pos = {q: i for i, q in enumerate(self.query_ids_)}
        designs = []
        for t, (q, ev) in enumerate(zip(campaign.query_ids, evidence)):
            keep = slice(None) if rows is None else rows[t]
            features, votes = ev.features[keep], ev.votes[keep]
            n = len(features)
            col = 1 + topic_pos[q] if q in topic_pos else 0  # α_t, else μ
            intercept = sp.csr_matrix(
                (np.ones(n), (np.arange(n), np.full(n, col))), shape=(n, 1 + len(topic_pos))
            )
            z = (features - self.feature_mean_) / self.feature_scale_
            designs.append(sp.hstack([sp.csr_matrix(z), intercept, votes @ mapping], format="csr"))
        return designs

    def _prior(self, n_topics: int) -> tuple[np.ndarray, np.ndarray]:
        """Prior precision matrix and linear term of ``θ`` (Gaussian; module docstring)."""
        k = N_FEATURES
        n_par = k + 1 + n_topics + len(self.systems_)
        prec = np.zeros((n_par, n_par))
        prec[np.arange(k), np.arange(k)] = 1.0 / self.weight_sd**2
        a = np.arange(k + 1, k + 1 + n_topics)
        prec[a, a] = 1.0 / self.intercept_sd**2
        prec[k, k] = n_topics / self.intercept_sd**2 + 1.0 / self.mean_prior[1] ** 2
        prec[k, a] = prec[a, k] = -1.0 / self.intercept_sd**2
        u = np.arange(k + 1 + n_topics, n_par)
        if len(u):
            prec[u, u] = 1.0 / self.run_effect_sd**2
        shift = np.zeros(n_par)
        # the prior mean of w is given per raw unit; w acts on standardised features
        shift[:k] = np.asarray(self.weight_mean, float) * self.feature_scale_ / self.weight_sd**2
        shift[k] = self.mean_prior[0] / self.mean_prior[1] ** 2
        return prec, shift

    # ------------------------------------------------------------------ predict

    def _predict(self, campaign: Campaign):
        evidence = self._evidence(campaign)
        designs = self._designs(campaign, evidence)
        # outside the fit set, for the capture adjustment (a topic no run retrieves: no part in it)
        outside = [
            ~self._fit_mask(t, ev) & _retrieved_any(t) for t, ev in zip(campaign.topics, evidence)
        ]
        relevant = campaign.relevant()
        offsets = [self._beyond_offset(ev) for ev in evidence]
        point = [expit(d @ self.coef_ + o) for d, o in zip(designs, offsets)]
        point = _only_judged_where_unretrieved(campaign, point)
        bins, factor = self._capture(campaign, point, outside, relevant)
        p = [pt * factor[b] for pt, b in zip(point, bins)]
        draws = self._draws(campaign, evidence, designs, outside, relevant) if self.n_draws else None
        params = {
            "weights": dict(zip(FEATURE_NAMES, map(float, self.coef_[:N_FEATURES]))),
            "mu": float(self.coef_[N_FEATURES]),
            "run_effects": dict(zip(self.systems_, map(float, self.coef_[len(self.coef_) - len(self.systems_) :]))),
            "median_horizon": float(np.median(list(self.horizons_.values()) or [0])),
            "n_fit": self.n_fit_,
            "capture_factor_min": float(factor.min()),
        }
        return p, draws, params

    def _capture(self, campaign, point, outside, relevant):
        """Per topic each document's group, and the factor of each group on unjudged documents."""
        logits = [logit(np.clip(pt, 1e-300, 1 - 1e-16)) for pt in point]
        out_logits = np.concatenate([lg[o] for lg, o in zip(logits, outside)])
        n_bins = int(self.capture_bins)
        edges = np.quantile(out_logits, np.linspace(0, 1, n_bins + 1)[1:-1]) if len(out_logits) else []
        bins = [np.searchsorted(edges, lg, side="right") for lg in logits]
        judged = [t.judged for t in campaign.topics]
        factor = capture_factors(point, bins, outside, judged, relevant, n_bins, self.capture_floor)
        return bins, factor

    def _beyond_offset(self, ev: TopicEvidence) -> np.ndarray:
        """Log-odds offset ``−γ log(max(b / k_t, 1))`` of documents whose best rank ``b``
        lies beyond the topic's pool depth ``k_t`` (``γ`` = ``beyond_decay``)."""
        return -self.beyond_decay * _log_depth_ratio(ev)

    def _draws(self, campaign, evidence, designs, outside, relevant) -> LazyDraws:
        """Laplace draws of ``θ``, each with its own γ and below-pool run effects (module
        docstring), turned into p and capture-adjusted; each topic's computed when read."""
        rng = np.random.default_rng(self.draw_seed_)
        n = int(self.n_draws)
        theta = self._theta_draws(rng, n)
        strata = ndtri((rng.permutation(n) + 0.5) / n)  # the normal's quantiles
        run_effects = below = None
        if self.beyond_run_sd > 0:
            run_effects = rng.normal(0.0, self.beyond_run_sd, size=(n, campaign.n_systems))
            below = [_votes_below(ev) for ev in evidence]
        draws = _PosteriorDraws(
            theta=theta,
            spreads=self.beyond_decay_sd * strata,
            run_effects=run_effects,
            designs=designs,
            offsets=[self._beyond_offset(ev) for ev in evidence],  # γ's, as in the point estimate
            capped=[np.minimum(_log_depth_ratio(ev), np.log(SPREAD_RATIO)) for ev in evidence],
            below=below,
            retrieved=[_retrieved_any(t) for t in campaign.topics],
            outside=outside,
            judged=[t.judged for t in campaign.topics],
            relevant=relevant,
            n_bins=int(self.capture_bins),
            floor=self.capture_floor,
        )
        return LazyDraws(campaign.n_topics, n, draws)


class _PosteriorDraws:
    """Topic ``t``'s ``(n_draws, n)`` posterior draws of ``p``, computed when called.

    Draw ``d``'s log-odds are ``design · θ_d + offset − (γ_d − γ) · capped (+ the runs'
    effects below the pool)``; its capture adjustment couples the topics (the groups are
    quantiles over every topic's documents), so the groups' edges and factors of every
    draw are found first, in one pass over the campaign, and each topic's draws are then
    computed alone (:mod:`._fusion_kernels`; the same numbers as the point estimate's
    numpy code would give, up to rounding in the group edges).
    """

    def __init__(self, *, designs, offsets, capped, below, retrieved, outside, judged, relevant,
                 theta, spreads, run_effects, n_bins, floor):  # fmt: skip
        self.parts = (designs, below)  # stacked when first needed (never, if nothing reads)
        sizes = [d.shape[0] for d in designs]
        self.bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.theta_t = np.ascontiguousarray(theta.T)
        effects = np.zeros((len(theta), 0)) if run_effects is None else run_effects
        self.effects_t = np.ascontiguousarray(effects.T, dtype=float)
        self.spreads = np.asarray(spreads, dtype=float)
        self.offsets = np.concatenate(offsets) if offsets else np.zeros(0)
        self.capped = np.concatenate(capped) if capped else np.zeros(0)
        self.retrieved = retrieved
        self.alive = np.repeat(np.asarray(retrieved, dtype=bool), sizes)
        outside_rows = [np.flatnonzero(o) + lo for o, lo in zip(outside, self.bounds)]
        self.rows = np.concatenate(outside_rows or [np.zeros(0)]).astype(np.int64)
        self.starts = np.concatenate([[0], np.cumsum([len(r) for r in outside_rows])]).astype(np.int64)
        self.judged = np.concatenate([j[o] for j, o in zip(judged, outside)] or [np.zeros(0, bool)])
        self.relevant = np.concatenate([r[o] for r, o in zip(relevant, outside)] or [np.zeros(0, bool)])
        self.n_bins = n_bins
        self.floor = float(floor)
        self.capture_: tuple[np.ndarray, np.ndarray] | None = None
        self.design = self.low = None

    def _stack(self) -> None:
        """One CSR design (and one of the runs' votes below the pool) over every topic."""
        if self.design is not None:
            return
        designs, below = self.parts
        n_rows, n_cols = int(self.bounds[-1]), self.theta_t.shape[0]
        stacked = sp.vstack(designs, format="csr") if designs else sp.csr_matrix((n_rows, n_cols))
        low = sp.vstack(below, format="csr") if below else sp.csr_matrix((n_rows, 0))
        self.parts = None
        self.design = (stacked.indptr, stacked.indices, stacked.data)
        self.low = (low.indptr, low.indices, low.data.astype(float))

    def _common(self):
        self._stack()
        return (*self.design, self.theta_t, self.offsets, self.spreads, self.capped, *self.low,
                self.effects_t)  # fmt: skip

    def _capture(self) -> tuple[np.ndarray, np.ndarray]:
        """``(n_draws, n_bins − 1)`` group edges and ``(n_draws, n_bins)`` factors."""
        if self.capture_ is None:
            from ._fusion_kernels import capture_draws

            q = np.linspace(0, 1, self.n_bins + 1)[1:-1]
            # a few draws at a time over every document: a buffer of at most ~2^23 values
            chunk = max(1, min(len(self.spreads), (1 << 23) // max(len(self.rows), 1)))
            self.capture_ = capture_draws(
                *self._common(), self.alive, self.rows, self.starts, self.judged, self.relevant,
                q, self.floor, chunk,
            )  # fmt: skip
        return self.capture_

    def __call__(self, t: int) -> np.ndarray:
        from ._fusion_kernels import topic_draws

        edges, factors = self._capture()
        return topic_draws(
            *self._common(), bool(self.retrieved[t]), self.bounds[t], self.bounds[t + 1],
            edges, factors,
        ).T  # fmt: skip


def _retrieved_any(topic: TopicData) -> bool:
    """Whether some run retrieves anything for the topic."""
    return bool(topic.ranking.shape[1]) and bool((topic.depth > 0).any())


def _only_judged_where_unretrieved(campaign: Campaign, point: list[np.ndarray]) -> list[np.ndarray]:
    """p = 0 for the unjudged documents of a topic no run retrieves for: such a topic
    contributes its judged documents only (no measure counts the others, and the runs
    say nothing about them)."""
    return [pt if _retrieved_any(t) else np.zeros_like(pt) for t, pt in zip(campaign.topics, point)]


def _log_depth_ratio(ev: TopicEvidence) -> np.ndarray:
    """``log(max(b / k_t, 1))`` per document: how far below the pool depth its best rank lies
    (a document no run retrieves: just below the deepest rank)."""
    return np.maximum(ev.features[:, 2] - np.log(max(ev.horizon, 1)), 0.0)


def _votes_below(ev: TopicEvidence) -> sp.csr_matrix:
    """The runs' votes ``1 / log2(1 + r)`` on the documents they rank below the pool depth."""
    below = ev.votes.copy()
    below.data[below.data >= 1.0 / np.log2(1.0 + max(ev.horizon, 1))] = 0.0
    below.eliminate_zeros()
    return below


def capture_factors(point, bins, outside, judged, relevant, n_bins: int, floor: float) -> np.ndarray:
    """``(n_bins,)`` factor on the unjudged documents of each group (module docstring).

    Over the documents outside the fit set: ``E_b`` their expected relevant
    count, ``F_b`` the relevant ones found among the judged, ``U_b`` the
    expected count of the unjudged; the factor is
    ``min(1, max(E_b − F_b, floor · U_b) / U_b)`` (1 where ``U_b = 0``).
    """
    expected = np.zeros(n_bins)
    found = np.zeros(n_bins)
    unjudged = np.zeros(n_bins)
    for pt, b, o, j, r in zip(point, bins, outside, judged, relevant):
        expected += np.bincount(b[o], weights=pt[o], minlength=n_bins)
        found += np.bincount(b[o & j], weights=r[o & j].astype(float), minlength=n_bins)
        unjudged += np.bincount(b[o & ~j], weights=pt[o & ~j], minlength=n_bins)
    return _factors(expected, found, unjudged, floor)


def _factors(expected, found, unjudged, floor: float) -> np.ndarray:
    """``min(1, max(E_b − F_b, floor · U_b) / U_b)``, 1 where ``U_b = 0``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.maximum(expected - found, floor * unjudged) / unjudged
    return np.where(unjudged > 0, np.minimum(factor, 1.0), 1.0)


def _fit_logistic(design, y, prec, shift, start):
    """Posterior mode and Laplace covariance of a logistic regression with a Gaussian prior.

    Maximises ``Σ y η − log(1 + e^η) − ½ θᵀ P θ + bᵀ θ`` with ``η = design · θ``
    (``P`` the prior precision, ``b`` its linear term) by Newton's method
    (:func:`newton_maximise`); the objective is strictly concave, so the mode is unique.
    The covariance is the inverse Hessian at the mode.
    """
    design = sp.csr_matrix(design)

    def log_post(theta):
        e = design @ theta
        return float(y @ log_expit(e) + (1 - y) @ log_expit(-e)) - 0.5 * theta @ prec @ theta + shift @ theta

    def gradient_curvature(theta):
        s = expit(design @ theta)
        grad = design.T @ (y - s) - prec @ theta + shift
        weighted = design.multiply((s * (1 - s))[:, None]).tocsr()
        return grad, prec + (design.T @ weighted).toarray()

    theta = newton_maximise(log_post, gradient_curvature, start)
    cov = np.linalg.inv(gradient_curvature(theta)[1])
    return theta, (cov + cov.T) / 2


register(RankFusion)
