"""RTC: relevance by aggregating the systems as experts (Carterette 2007 §3).

Three successive logistic models (Carterette 2007 §3.3; docs/math/rtc.md):

1. **ranks → probabilities**, per topic, unsupervised (§3.2): a relevance
   coefficient ``θ_r`` per rank maximising the pairwise-preference likelihood
   ``Π_{r<r'} σ(θ_r − θ_r')`` under a Beta(|R_t|+1, |N_t|+1) prior on
   ``σ(θ_r)``; ``q*(r) = σ(θ_r)``, ``q*(∞) = 0``. It depends only on the
   rank and the topic's judged counts, so it is solved once per topic and
   shared by every expert (:func:`rank_probabilities`).
2. **probabilities → calibrated probabilities**, per expert across topics
   (§3.2): Platt scaling ``q_ij = σ(A_j + B_j q*_ij)`` on the expert's judged
   documents (:func:`fit_platt`).
3. **calibrated probabilities → document probabilities** (§3.1, Eq. 2):
   ``p_i = σ(Σ_j λ_j q_ij)`` fitted on every judged document with a beta
   prior (α = β = 1) on the weights (:func:`fit_aggregation`).

Judged documents keep their labels. How each ambiguity of the paper is
resolved, and every deviation, is a named hyper-parameter of
:class:`RTC`; the class defaults are the paper's reading (``models/rtc.json``),
the deviations are options for studying it (``examples/rtc_paper/``). Two of
the deviations (``platt_feature="log_rank"``, ``aggregate="logit"``) exist because, fitted
on a pool of the top ranks, the paper's model expects tens of times more
relevant documents per topic than a pooled collection holds: stage 1 spreads
the judged share relevant over every rank, and stage 3, without an intercept
and on bounded features, cannot reach the low base rate of documents no
expert ranks high (benchmarks/results/rtc.md, scored by
``quality.heldout_quality(..., score_unjudged=True)``). A variant built on them
was shipped until 0.2.0 and retired: it was not calibrated (CHANGELOG.md).
"""

from __future__ import annotations


import numpy as np
from scipy.special import expit

from ...data import Campaign, TopicData
from .stages import fit_aggregation, fit_platt, rank_probabilities
from ..base import RelevanceModel, register_model

# ----------------------------------------------------------------------------
# the model





#: The weakest stage-1 prior RTC fits with: below it the rank-probability problem's Newton
#: iterations need not converge (1e-4 failed, 1e-8 and 1e-100 too, on a depth-5 pool).
MIN_PRIOR_STRENGTH = 1e-3

class RTC(RelevanceModel):
    """RTC expert aggregation (Carterette 2007 §3); module docstring for the stages.

    The defaults are the paper's reading (``models/rtc.json``); every
    deviation from it is an explicit option. Not calibrated: its confidence is
    over-stated (``examples/rtc_paper/``), so it is for reproducing the paper.

    Parameters
    ----------
    prior_strength
        Multiplier ``s`` of the Beta(|R_t|+1, |N_t|+1) log prior of stage 1
        (1 = the paper's; larger pulls every ``q*`` to (|R|+1)/(|R|+|N|+2));
        at least :data:`MIN_PRIOR_STRENGTH`.
    max_rank
        Ranks deeper than this count as not retrieved (the paper's studies
        truncate runs at 100); None keeps every rank. Stage 1 is solved over
        ``1..min(max_rank, deepest run of the topic)`` once per topic and
        shared across experts, as the paper does (a shallower run uses the
        top of that solution).
    unretrieved
        ``"zero"``: a document an expert does not retrieve has ``q_ij = 0``
        (no opinion) and Platt is fitted on the judged documents the expert
        retrieved. ``"calibrated"``: ``q_ij = C_j(q*=0) = σ(A_j)`` for a
        document the expert does not retrieve in a topic it covers, and Platt
        is fitted on all judged documents of those topics (the evidence of
        not retrieving). A run with nothing for a topic is 0 either way.
    platt_targets
        Platt's (2000) smoothed targets ``(N₊+1)/(N₊+2)`` and ``1/(N₋+2)``
        in place of 0/1 labels (the calibration method the paper cites).
    calibration_shrinkage
        Precision of a Gaussian prior pulling each expert's ``(A_j, B_j)``
        towards the calibration pooled over all experts: an expert with few
        or one-class judgments gets a sane calibration, one with none gets
        the pooled one. 0 = the paper's independent per-expert fit (with a
        vanishing 1e-8 ridge so that a constant feature stays identifiable).
    weight_prior, weight_alpha, weight_beta, weight_scale
        Stage-3 prior on each ``λ_j``: ``"beta"`` (the paper's, α = β = 1;
        Beta on ``σ(λ)``), ``"beta_weight"`` (Beta on ``λ`` itself, so
        ``0 ≤ λ ≤ 1``: the literal reading of §3.1) or ``"gaussian"`` with
        standard deviation ``weight_scale``.
    intercept
        Add an intercept to stage 3 (not in the paper; without one a document
        no expert retrieves has ``p = σ(0) = ½``).
    platt_feature
        What stage 2 calibrates. ``"qstar"`` (the paper's): ``q*(r)`` of
        stage 1. ``"log_rank"``: ``log(L+1) − log r`` with ``L`` the
        ``max_rank`` (else the deepest run of the fitted campaign), 0 for a
        document not retrieved, so Platt learns a power-law decay from the
        judged ranks instead of the decay stage 1 imposes (stage 1 is then
        not solved). Not in the paper: the mean of ``q*`` over *all* ranks is
        the judged share relevant, a share measured at the (top) ranks that
        were judged, which puts too much probability on deep ranks.
    aggregate
        Stage-3 features. ``"probability"`` (the paper's Eq. 2): ``q_ij``.
        ``"logit"``: ``logit q_ij = A_j + B_j x_ij``, so every expert that
        ranks a document deep (or, with ``unretrieved="calibrated"``, not at
        all) adds its own evidence to the log-odds instead of a bounded
        ``λ_j q_ij``; with ``"zero"`` an expert's "no opinion" is 0 there too.
        Not in the paper; it lets the aggregation reach the low base rate of
        documents no expert ranks high (benchmarks/results/rtc.md).

    Attributes
    ----------
    systems_
        Names of the fitted experts (matched by name at predict time).
    calibration_
        ``(S, 2)``: ``A_j, B_j`` per expert.
    pooled_calibration_
        ``(A, B)`` fitted on all experts' judged documents together.
    weights_, intercept_
        Stage-3 coefficients.
    n_judged_
        Judged (topic, document) pairs used by stage 3.
    feature_depth_
        ``L`` of ``platt_feature="log_rank"``.

    Notes
    -----
    Defined values: a document retrieved by no run (or only by runs
    unknown to the fit) has ``p = σ(intercept_)`` with ``unretrieved="zero"``
    (½ without intercept), and ``σ(intercept_ + Σ_j λ_j σ(A_j))`` over the
    experts covering the topic with ``"calibrated"`` (``A_j`` in place of
    ``σ(A_j)`` with ``aggregate="logit"``); a
    topic with no judgments uses the Beta(1, 1) prior in stage 1 and the
    fitted calibrations and weights; a run missing a topic gives no opinion
    there. With no judgments at all, every unjudged document gets ½ (the
    priors' modes). Point estimate: no posterior draws.
    """

    name = "rtc"

    def __init__(
        self,
        prior_strength: float = 1.0,
        max_rank: int | None = None,
        unretrieved: str = "zero",
        platt_targets: bool = True,
        calibration_shrinkage: float = 1.0,
        weight_prior: str = "beta",
        weight_alpha: float = 1.0,
        weight_beta: float = 1.0,
        weight_scale: float = 1.0,
        intercept: bool = False,
        platt_feature: str = "qstar",
        aggregate: str = "probability",
    ):
        self.prior_strength = prior_strength
        self.max_rank = max_rank
        self.unretrieved = unretrieved
        self.platt_targets = platt_targets
        self.calibration_shrinkage = calibration_shrinkage
        self.weight_prior = weight_prior
        self.weight_alpha = weight_alpha
        self.weight_beta = weight_beta
        self.weight_scale = weight_scale
        self.intercept = intercept
        self.platt_feature = platt_feature
        self.aggregate = aggregate

    def _validate(self) -> None:
        if self.unretrieved not in ("zero", "calibrated"):
            raise ValueError(
                f"unretrieved must be 'zero' or 'calibrated', got {self.unretrieved!r}"
            )
        if self.platt_feature not in ("qstar", "log_rank"):
            raise ValueError(
                f"platt_feature must be 'qstar' or 'log_rank', got {self.platt_feature!r}"
            )
        if self.aggregate not in ("probability", "logit"):
            raise ValueError(f"aggregate must be 'probability' or 'logit', got {self.aggregate!r}")
        if self.max_rank is not None and int(self.max_rank) < 1:
            raise ValueError(f"max_rank must be >= 1 or None, got {self.max_rank}")
        if not self.prior_strength >= MIN_PRIOR_STRENGTH:  # weaker: stage 1 has no stable optimum
            raise ValueError(
                f"prior_strength must be >= {MIN_PRIOR_STRENGTH} (weaker leaves the rank "
                f"probabilities of stage 1 numerically undetermined), got {self.prior_strength}"
            )
        if self.weight_prior not in ("beta", "beta_weight", "gaussian"):
            raise ValueError(f"weight_prior must be 'beta', 'beta_weight' or 'gaussian', "
                             f"got {self.weight_prior!r}")  # fmt: skip
        gaussian = self.weight_prior == "gaussian"
        spread = ("weight_scale",) if gaussian else ("weight_alpha", "weight_beta")
        if not all(getattr(self, name) > 0 for name in spread):
            raise ValueError(f"{' and '.join(spread)} of the {self.weight_prior} prior must be > 0")
        if not self.calibration_shrinkage >= 0:
            raise ValueError(
                f"calibration_shrinkage must be >= 0, got {self.calibration_shrinkage}"
            )

    # stage 1 for one topic: the Platt feature of every (system, retrieved document)
    def _topic_opinions(self, topic: TopicData, relevant: np.ndarray):
        depth = topic.depth if self.max_rank is None else np.minimum(topic.depth, self.max_rank)
        cols = np.arange(topic.ranking.shape[1])
        keep = cols[None, :] < depth[:, None]
        system, rank = np.nonzero(keep)
        if self.platt_feature == "log_rank":
            feature = np.log(self.feature_depth_ + 1.0) - np.log1p(rank)
        else:
            n_rel = int(relevant.sum())
            n_non = int(topic.judged.sum()) - n_rel
            qstar = rank_probabilities(
                int(depth.max(initial=0)), n_rel, n_non, prior_strength=self.prior_strength
            )
            feature = qstar[rank]
        return system, topic.ranking[system, rank], feature, depth > 0

    def _fit(self, campaign: Campaign, rng: np.random.Generator) -> None:
        from threadpoolctl import threadpool_limits

        self._validate()
        # the fits are small: multi-threaded BLAS only adds contention
        with threadpool_limits(limits=1, user_api="blas"):
            self._fit_stages(campaign)

    def _fit_stages(self, campaign: Campaign) -> None:
        n_sys = campaign.n_systems
        deepest = max((int(t.depth.max(initial=0)) for t in campaign.topics), default=0)
        self.feature_depth_ = deepest if self.max_rank is None else int(self.max_rank)
        xs, ys, gs = [], [], []
        for topic, relevant in zip(campaign.topics, campaign.relevant()):
            system, doc, q, covers = self._topic_opinions(topic, relevant)
            judged = topic.judged[doc]
            xs.append(q[judged])
            ys.append(relevant[doc][judged])
            gs.append(system[judged])
            if self.unretrieved == "calibrated":
                seen = np.zeros((n_sys, topic.n_docs), dtype=bool)
                seen[system, doc] = True
                miss_sys, miss_doc = np.nonzero(~seen & covers[:, None] & topic.judged[None, :])
                xs.append(np.zeros(len(miss_sys)))
                ys.append(relevant[miss_doc])
                gs.append(miss_sys)
        x, y, g = np.concatenate(xs), np.concatenate(ys), np.concatenate(gs).astype(np.intp)
        pooled = fit_platt(
            x, y, np.zeros(len(x), dtype=np.intp), 1, precision=1e-6, targets=self.platt_targets
        )[0]
        self.pooled_calibration_ = (float(pooled[0]), float(pooled[1]))
        self.calibration_ = fit_platt(
            x,
            y,
            g,
            n_sys,
            prior_mean=self.pooled_calibration_,
            precision=self.calibration_shrinkage,
            targets=self.platt_targets,
        )
        self.systems_ = tuple(campaign.systems)
        features, labels = [], []
        for topic, relevant, (j, doc, value, base) in zip(
            campaign.topics, campaign.relevant(), self._opinions(campaign)
        ):
            row = np.full(topic.n_docs, -1)
            row[topic.judged] = np.arange(int(topic.judged.sum()))
            x = np.tile(base, (int(topic.judged.sum()), 1))
            hit = row[doc] >= 0
            x[row[doc[hit]], j[hit]] = value[hit]
            features.append(x)
            labels.append(relevant[topic.judged])
        self.weights_, self.intercept_ = fit_aggregation(
            np.concatenate(features) if features else np.zeros((0, n_sys)),
            np.concatenate(labels) if labels else np.zeros(0),
            prior=self.weight_prior,
            alpha=self.weight_alpha,
            beta=self.weight_beta,
            scale=self.weight_scale,
            intercept=self.intercept,
        )
        self.n_judged_ = int(sum(len(v) for v in labels))

    def _opinions(self, campaign: Campaign):
        """Per topic, the calibrated opinions as ``(j, doc, q_ij, base)``.

        ``q_ij`` for every (fitted expert ``j``, retrieved document) pair;
        ``base`` (S_fit,) is each expert's opinion of a document it does not
        retrieve (``σ(A_j)`` for ``unretrieved="calibrated"`` in a topic it
        covers, else 0). Systems of ``campaign`` unknown to the fit give no
        opinion.
        """
        index = {s: i for i, s in enumerate(self.systems_)}
        known = np.array([s in index for s in campaign.systems])
        col = np.array([index.get(s, -1) for s in campaign.systems], dtype=np.intp)
        cal = self.calibration_
        for topic, relevant in zip(campaign.topics, campaign.relevant()):
            system, doc, q, covers = self._topic_opinions(topic, relevant)
            base = np.zeros(len(self.systems_))
            link = (lambda z: z) if self.aggregate == "logit" else expit
            if self.unretrieved == "calibrated":
                rows = col[np.nonzero(covers & known)[0]]
                base[rows] = link(cal[rows, 0])
            ok = known[system]
            j = col[system[ok]]
            yield j, doc[ok], link(cal[j, 0] + cal[j, 1] * q[ok]), base

    def _predict(self, campaign: Campaign):
        w = np.asarray(self.weights_)
        p = []
        for topic, (j, doc, value, base) in zip(campaign.topics, self._opinions(campaign)):
            shift = np.bincount(doc, weights=w[j] * (value - base[j]), minlength=topic.n_docs)
            p.append(expit(self.intercept_ + base @ w + shift))
        params = {
            "systems": list(self.systems_),
            "A": self.calibration_[:, 0].copy(),
            "B": self.calibration_[:, 1].copy(),
            "weights": np.asarray(self.weights_).copy(),
            "intercept": float(self.intercept_),
            "pooled_calibration": self.pooled_calibration_,
            "n_judged": self.n_judged_,
        }
        return p, None, params


register_model(RTC)
