"""Relevance from the runs' consensus, learned where judging followed the ranks.

A document many runs rank high is likely relevant (rank fusion: Cormack,
Clarke & Büttcher 2009's reciprocal rank fusion; Carterette 2007 §3 treats
the runs as experts). This model turns that consensus into calibrated
probabilities of each relevance grade while keeping in mind *how the judged
documents were chosen* (a pool is not a random sample of the documents).
``docs/math/fusion.md`` states the model; in short:

- features of the runs' evidence (:mod:`.evidence`), and cumulative logits
  ``logit P(G ≥ l_k) = α_t + c_k + w · x + Σ_j u_j / log2(1 + r_ij)`` with partially
  pooled topic intercepts, per-run effects and ordered cut-points (the proportional-odds
  model, McCullagh 1980): ``θ`` by Newton's method with a Laplace approximation on relevance
  at the threshold (the binary model, unchanged by grades), then the cut-points given the
  log-odds, partially pooled over topics (:func:`relimpute.relevance.ordinal.fit_topic_cuts`);
- fitted only on the judged documents inside the pool the judging followed
  (:func:`pool_depth`), corrected for the documents judged beyond it (the capture
  adjustment, :mod:`.capture`), with relevance fading below the pool by
  ``γ log(b / k_t)`` (``beyond_decay``);
- posterior draws carrying the parameters' uncertainty and what the judgments cannot
  tell below the pool (``beyond_decay_sd``, ``beyond_run_sd``).

Judged documents keep their grades. The shipped settings, and how each was chosen, are
in ``models/fusion.json`` and ``models/README.md`` (``Fusion()`` equals them, a test
keeps the two equal); :meth:`Fusion.plug_in` is the uncalibrated plug-in variant.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, logit

from ..._normal import normal_quantile
from ...data import Campaign
from ..arrowhead import Arrowhead, laplace_draws, laplace_form
from ..base import LazyDraws, RelevanceEstimate, RelevanceModel, register_model
from .capture import capture_factors
from .carry import carry_centres, carry_factors, with_carry_spread
from .evidence import (
    FEATURE_NAMES,
    N_FEATURES,
    TopicEvidence,
    _log_depth_ratio,
    _only_judged_where_unretrieved,
    _retrieved_any,
    _votes_below,
    fit_mask,
    pool_depth,
    topic_evidence,
)
from .draws import _PosteriorDraws
from .prior import theta_prior
from ..grades import GradeShares, judged_shares
from ..ordinal import fit_logistic as _fit_logistic, fit_topic_cuts, grade_scale, grade_shares

#: the plug-in variant (:meth:`Fusion.plug_in`): what the class defaults were before they
#: became the shipped, calibrated settings; its confidence is the point estimate's, over-confident
#: (its intervals miss more often than they say), kept for studies that fit the weights
#: themselves or test one part of the model
PLUG_IN: dict[str, Any] = {
    "weight_sd": 2.0,
    "weight_mean": (0.0, 0.0, 0.0),
    "run_effect_sd": 0.0,
    "n_draws": 0,
    "beyond_decay": 0.0,
    "beyond_decay_sd": 0.0,
    "beyond_run_sd": 0.0,
    "beyond_run_carry": 0.0,
    "beyond_run_carry_sd": 0.0,
}
#: γ's spread over the draws grows with log(b / k_t) down to this many times the pool
#: depth and holds below it (``docs/math/fusion.md``, "Below the pool")
SPREAD_RATIO = 10.0
#: sd of the Gaussian prior on each free cut-point of the grades (``docs/math/fusion.md``,
#: "Relevance and grades"): set a priori as wide as the prior on ``μ`` (``models/README.md``)
CUT_SD = 3.0


class Fusion(RelevanceModel):
    """Pool-aware ordinal model on the runs' fused evidence (``docs/math/fusion.md``).

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
        the pool (``docs/math/fusion.md``, "Below the pool"); only the
        draws carry them.
    beyond_run_carry, beyond_run_carry_sd
        ``β ≥ 0``: a document below the pool also gets ``β`` times the vote-weighted
        mean of its runs' effects ``u_j`` (the same section; 0: they fade with the votes),
        and the spread of ``β`` over the draws.

    Attributes
    ----------
    coef_
        Posterior mode of ``θ = (w, μ, α_1..α_T, u_1..u_S)`` (``w`` on
        standardised features; ``u`` only with ``run_effect_sd > 0``).
    precision_, covariance_
        Laplace precision of ``θ`` at the mode, kept as an arrowhead (diagonal in ``α``), and
        the covariance, dense, formed when read (an engine sampling ``θ`` sets it instead).
    query_ids_, systems_
        The topics of ``α`` and the runs of ``u``, in order.
    feature_mean_, feature_scale_
        Standardisation of the features.
    horizons_
        Pool depth ``k_t`` per topic.
    n_fit_
        Judged documents the model was fitted on.
    grade_levels_, anchor_, cuts_
        The grade levels of the fit set, the index of the lowest relevant one and the
        shared cut-points ``c_1..c_{K−1}`` (``c_a = 0``); a binary scale is ``(0, 1)``, 1, ``(0,)``.
    topic_cuts_
        Each topic's cut-points, their spread and Laplace covariance
        (:class:`~.ordinal.TopicCuts`; None on a binary scale).
    """

    name = "fusion"
    contract_params: ClassVar[dict[str, Any]] = {"n_draws": 8}

    @classmethod
    def plug_in(cls, **params: Any) -> Fusion:
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
        beyond_run_carry: float = 0.0,
        beyond_run_carry_sd: float = 0.0,
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
        self.beyond_run_carry, self.beyond_run_carry_sd = beyond_run_carry, beyond_run_carry_sd

    def _validate(self) -> None:
        if not self.rrf_offset >= 0:
            raise ValueError(f"rrf_offset must be >= 0, got {self.rrf_offset}")
        prior = self.mean_prior
        if np.shape(prior) != (2,) or not np.all(np.isfinite(np.asarray(prior, float))):
            raise ValueError(f"mean_prior must be two numbers (mean, sd), got {self.mean_prior}")
        sds = (self.intercept_sd, self.weight_sd, self.mean_prior[1])
        if not all(1e-100 < sd < 1e100 for sd in sds):  # so that every 1 / sd**2 is finite, > 0
            raise ValueError("prior standard deviations must be > 0 (from 1e-100 to 1e100)")
        if np.shape(self.weight_mean) != (N_FEATURES,) or not np.all(np.isfinite(self.weight_mean)):
            raise ValueError(f"weight_mean must be {N_FEATURES} finite numbers, got {self.weight_mean}")
        if int(self.capture_bins) != self.capture_bins or self.capture_bins < 1:
            raise ValueError(f"capture_bins must be a positive integer, got {self.capture_bins}")
        if not 0.0 <= self.capture_floor <= 1.0:
            raise ValueError(f"capture_floor must lie in [0, 1], got {self.capture_floor}")
        if not (self.run_effect_sd == 0 or 1e-100 < self.run_effect_sd < 1e100):
            sd = self.run_effect_sd
            raise ValueError(f"run_effect_sd must be 0 or from 1e-100 to 1e100, got {sd}")
        for name in ("beyond_decay", "beyond_decay_sd", "beyond_run_sd", "beyond_run_carry",
                     "beyond_run_carry_sd"):  # fmt: skip
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value}")
        if int(self.n_draws) != self.n_draws or self.n_draws < 0:
            raise ValueError(f"n_draws must be a non-negative integer, got {self.n_draws}")

    # ------------------------------------------------------------------ fit

    def _evidence(self, campaign: Campaign) -> list[TopicEvidence]:
        return [topic_evidence(t, self.rrf_offset) for t in campaign.topics]

    def _evidence_and_designs(self, campaign: Campaign) -> tuple[list, list]:
        """Each topic's evidence and design; the fit's, once, when ``predict`` reads the
        campaign it was fitted on (``fit`` then ``predict``, as every command calls them:
        built once, not twice)."""
        kept = self.__dict__.pop("_fit_evidence", None)
        if kept is not None and kept[0] is campaign and kept[1] == self.rrf_offset:
            return kept[2], kept[3]
        evidence = self._evidence(campaign)
        return evidence, self._designs(campaign, evidence)

    def __getstate__(self):
        # the fit's evidence and designs are a cache for the next predict, not the model
        return {k: v for k, v in self.__dict__.items() if k != "_fit_evidence"}

    def _fit(self, campaign: Campaign, rng: np.random.Generator) -> None:
        self._validate()
        self.__dict__.pop("_fit_evidence", None)
        evidence = self._evidence(campaign)
        masks = [fit_mask(t, ev) for t, ev in zip(campaign.topics, evidence)]
        x = np.concatenate([ev.features[m] for ev, m in zip(evidence, masks)])
        if len(x):
            self.feature_mean_ = x.mean(axis=0)
            self.feature_scale_ = np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
        else:
            self.feature_mean_, self.feature_scale_ = np.zeros(N_FEATURES), np.ones(N_FEATURES)
        self.systems_ = tuple(campaign.systems) if self.run_effect_sd > 0 else ()
        self.query_ids_ = tuple(campaign.query_ids)
        full = self._designs(campaign, evidence)  # the fit's rows of them here, all in predict
        design = sp.vstack([d[m] for d, m in zip(full, masks)], format="csr")
        self._fit_evidence = (campaign, self.rrf_offset, evidence, full)
        y = np.concatenate([r[m] for r, m in zip(campaign.relevant(), masks)]).astype(float)
        grades = np.concatenate([t.grades[m] for t, m in zip(campaign.topics, masks)])
        prec, shift = self._prior(campaign.n_topics)  # dense for small campaigns, as it always was
        prec = laplace_form(prec, f"the {type(self).__name__} model's fit over {campaign.n_topics:,} topics")
        start = np.zeros(len(shift))
        start[N_FEATURES : N_FEATURES + 1 + campaign.n_topics] = self.mean_prior[0]
        theta, posterior = self._fit_theta(design, y, prec, shift, start)
        self.grade_levels_, self.anchor_ = grade_scale(grades, campaign.rel_threshold)
        self.cuts_, self.topic_cuts_ = np.zeros(1), None
        if len(self.grade_levels_) > 2:  # the cut-points given the log-odds, fitted when read
            level = np.searchsorted(self.grade_levels_, grades)
            topic = np.repeat(np.arange(campaign.n_topics), [int(m.sum()) for m in masks])
            self._pending_cuts = (design @ theta, level, topic, campaign.n_topics)
        self.coef_ = theta
        if isinstance(posterior, Arrowhead):  # the Laplace posterior's precision
            self.__dict__.pop("covariance_", None)
            self.precision_ = posterior
        else:  # an engine's dense covariance
            self.covariance_ = posterior
        self.horizons_ = dict(zip(campaign.query_ids, (ev.horizon for ev in evidence)))
        self.n_fit_ = len(y)
        self.draw_seed_ = int(rng.integers(2**63))

    @property
    def topic_cuts_(self):
        """Each topic's cut-points (:func:`relimpute.relevance.ordinal.fit_topic_cuts`), fitted when first read:
        they do not move ``θ`` or ``p``, and a binary measure never reads them."""
        pending = self.__dict__.pop("_pending_cuts", None)
        if pending is not None:
            eta, level, topic, n_topics = pending
            self._topic_cuts = fit_topic_cuts(
                eta, level, topic, n_topics, self.anchor_, len(self.grade_levels_), cut_sd=CUT_SD
            )
            self._cuts = self._topic_cuts.shared
        return self.__dict__.get("_topic_cuts")

    @topic_cuts_.setter
    def topic_cuts_(self, value) -> None:
        self.__dict__.pop("_pending_cuts", None)
        self._topic_cuts = value

    @property
    def cuts_(self) -> np.ndarray:
        """The shared cut-points ``c_1..c_{K−1}`` (fitted with :attr:`topic_cuts_`)."""
        self.topic_cuts_  # noqa: B018  (fits them if pending)
        return self.__dict__.get("_cuts")

    @cuts_.setter
    def cuts_(self, value) -> None:
        self.__dict__.pop("_pending_cuts", None)
        self._cuts = value

    def _fit_theta(self, design, y, prec, shift, start) -> tuple[np.ndarray, Any]:
        """Posterior mode of ``θ`` and its Laplace precision (an :class:`~..arrowhead.Arrowhead`)
        or a dense covariance: the inference engine (here Newton + Laplace; the Bayesian
        hierarchy samples the same posterior by NUTS)."""
        return _fit_logistic(design, y, prec, shift, start)

    @property
    def covariance_(self) -> np.ndarray:
        """Laplace covariance of ``θ``, dense: formed from :attr:`precision_` when read (and
        memory-checked), or an engine's (set)."""
        dense = self.__dict__.get("covariance_")  # set, or a model saved before precision_
        return self.precision_.covariance() if dense is None else dense

    @covariance_.setter
    def covariance_(self, value) -> None:
        self.__dict__["covariance_"] = np.asarray(value, dtype=float)
        self.__dict__.pop("precision_", None)

    def share_draws(self, seed: int | None) -> Fusion:
        """Draw what every topic shares (γ's spread, the run effects below the pool) from
        ``seed``, so that models fitted on parts of one campaign's topics draw the same ones
        (:mod:`relimpute.confidence.parts`); None: from the fit's own draws, as by default."""
        self.shared_draw_seed_ = seed
        return self

    def _theta_draws(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``(n, P)`` posterior draws of ``θ`` (here Laplace's: :func:`~..arrowhead.laplace_draws`)."""
        dense = self.__dict__.get("covariance_")
        return laplace_draws(rng, self.coef_, self.precision_ if dense is None else dense, n)

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
            runs = votes @ mapping
            if self.beyond_run_carry:  # the carry's row scaling below the pool
                runs = sp.diags(carry_factors(ev, self.beyond_run_carry)[keep]) @ runs
            designs.append(sp.hstack([sp.csr_matrix(z), intercept, runs], format="csr"))
        return designs

    def _prior(self, n_topics: int) -> tuple[Arrowhead, np.ndarray]:
        """Prior precision (an arrowhead) and linear term of ``θ`` (:func:`.prior.theta_prior`)."""
        return theta_prior(self, n_topics)

    # ------------------------------------------------------------------ predict

    def _predict(self, campaign: Campaign):
        p, params, parts = self._point(campaign)
        return p, None if not self.n_draws else self._draws(campaign, parts), params

    def _point(self, campaign: Campaign):
        """``_predict``'s p and parameters, and the parts its draws are built from (evidence,
        designs, offsets, run effects, capture sets, relevance): :meth:`_draws` reuses them."""
        evidence, designs = self._evidence_and_designs(campaign)
        # outside the fit set, for the capture adjustment (a topic no run retrieves: no part in it)
        outside = [
            ~fit_mask(t, ev) & _retrieved_any(t) for t, ev in zip(campaign.topics, evidence)
        ]
        relevant = campaign.relevant()
        u = dict(zip(self.systems_, map(float, self.coef_[len(self.coef_) - len(self.systems_) :])))
        offsets = [-self.beyond_decay * _log_depth_ratio(ev) for ev in evidence]  # −γ log(b / k_t)
        eta = [d @ self.coef_ + o for d, o in zip(designs, offsets)]
        effects = np.array([u.get(s, 0.0) for s in campaign.systems])
        centres = carry_centres(evidence, eta, effects, self.beyond_run_carry)
        offsets, eta = [o - c for o, c in zip(offsets, centres)], [e - c for e, c in zip(eta, centres)]
        point = [expit(e) for e in eta]
        point = _only_judged_where_unretrieved(campaign, point)
        bins, factor = self._capture(campaign, point, outside, relevant)
        p = [pt * factor[b] for pt, b in zip(point, bins)]
        params = {
            "weights": dict(zip(FEATURE_NAMES, map(float, self.coef_[:N_FEATURES]))),
            "mu": float(self.coef_[N_FEATURES]),
            "run_effects": u,
            "median_horizon": float(np.median(list(self.horizons_.values()) or [0])),
            "n_fit": self.n_fit_,
            "capture_factor_min": float(factor.min()),
        }
        if len(self.grade_levels_) > 2 and getattr(self, "_with_grades", True):
            params["cut_points"] = dict(zip(map(int, self.grade_levels_[1:]), map(float, self.cuts_)))
            self._shares, self._eta = self._grade_split(campaign, eta), eta
        return p, params, (evidence, designs, offsets, effects, outside, relevant)

    def _grade_split(self, campaign: Campaign, eta) -> tuple[list, tuple | None]:
        """Per topic the split into grades at its cut-points (``docs/math/fusion.md``, "Each
        topic's split"), and with posterior draws each topic's ``(n_draws, K − 1)`` drawn
        cut-points (from their own stream: the draws of ``p`` are those without grades)."""
        cuts = getattr(self, "topic_cuts_", None)
        if cuts is None:  # a model saved before the cut-points were per topic
            return [grade_shares(e, self.cuts_, self.anchor_) for e in eta], None
        known = {q: i for i, q in enumerate(self.query_ids_)}
        index = [known.get(q, -1) for q in campaign.query_ids]
        split = [grade_shares(e, c, self.anchor_) for e, c in zip(eta, cuts.of(index))]
        if not self.n_draws:
            return split, None
        rng = np.random.default_rng([self.draw_seed_, 1])
        drawn = cuts.draws(rng, int(self.n_draws), index, structured="precision_" in self.__dict__)  # as θ's
        return split, tuple(drawn[:, t] for t in range(campaign.n_topics))

    def predict(self, campaign: Campaign, *, grades: bool = True) -> RelevanceEstimate:
        """Probabilities of relevance, and with a graded scale each document's distribution
        over the grades (:class:`~.grades.GradeShares`; judged documents keep theirs).
        ``grades=False``: p and its draws only (the same numbers), for binary measures."""
        self._shares, self._with_grades = None, grades
        try:
            estimate = super().predict(campaign)
        finally:
            self._with_grades = True
        if self._shares is None:
            return estimate
        (split, cut_draws), eta = self._shares, self._eta
        # a draw's split moves with its log-odds of relevance (the cumulative logits share η)
        offset = tuple(e - logit(np.clip(p, 1e-12, 1 - 1e-12)) for e, p in zip(eta, estimate.p))
        shares = GradeShares(
            tuple(map(int, self.grade_levels_)), self.anchor_,
            tuple(a for a, _ in split), tuple(b for _, b in split),
            offset=None if cut_draws is None else offset, cut_draws=cut_draws,
        )  # fmt: skip
        self._shares = self._eta = None
        return replace(estimate, grades=judged_shares(shares, campaign.topics))

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

    def _draws(self, campaign, parts, beyond_run_sd: float | None = None) -> LazyDraws:
        """Laplace draws of ``θ``, each with its own γ and below-pool run effects of spread
        ``beyond_run_sd`` (None: the model's; module docstring), turned into p and capture-adjusted;
        each topic's computed when read. ``parts``: :meth:`_point`'s; the same θ at any spread."""
        evidence, designs, offsets, effects, outside, relevant = parts
        run_sd = self.beyond_run_sd if beyond_run_sd is None else beyond_run_sd
        rng = np.random.default_rng(self.draw_seed_)
        n = int(self.n_draws)
        theta = self._theta_draws(rng, n)
        seed = getattr(self, "shared_draw_seed_", None)  # share_draws
        rng = rng if seed is None else np.random.default_rng(seed)
        strata = normal_quantile((rng.permutation(n) + 0.5) / n)  # the normal's quantiles
        run_effects = below = None
        if run_sd > 0:
            run_effects = rng.normal(0.0, run_sd, size=(n, campaign.n_systems))
            below = [_votes_below(ev) for ev in evidence]
        sd = self.beyond_run_carry_sd
        run_effects, below = with_carry_spread(run_effects, below, evidence, effects, sd, rng, n)
        draws = _PosteriorDraws(
            theta=theta,
            spreads=self.beyond_decay_sd * strata,
            run_effects=run_effects,
            designs=designs,
            offsets=offsets,  # γ's and the carry's centre, as in the point estimate
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


register_model(Fusion)
