"""relimpute's own correction: the expected full-pool score under a fitted relevance model.

The full-pool score of a new run is its score had it been pooled too: the
documents it ranks within the pool depth would have been judged; everything
else stays as in the pool (unjudged = nonrelevant). So the only unknowns are
the new run's *would-be-pooled* documents that the pool did not judge. A
relevance model (:mod:`relimpute.relevance`; ``fusion`` by default) is
fitted on the pool's judgments over the pooled runs and the new runs, and
gives each such document a probability of relevance; every other unjudged
document gets 0. The estimate is E[measure] under those probabilities and
the interval the 95% percentile interval of its Monte Carlo distribution,
drawn with the model's joint posterior draws when it has them (parameter
uncertainty included), from :meth:`relimpute.confidence.ConfidenceEngine.monte_carlo`.
Any measure works (AP with the drawn R, nDCG with the drawn ideal list).

Between-group term. Given the model, the documents are independent, so a
run's interval shrinks with every unjudged document it has; but the
documents only the new group found are where the runs' consensus, which the
model learns from, is weakest, and the model's error there is shared by all
of them. Each Monte Carlo draw therefore shifts the log-odds of all the new
runs' would-be-pooled unjudged documents, in every topic, by one
``δ ~ N(0, group_sd²)`` (stratified over the posterior draws). ``group_sd``
cannot be learned from the pool that is being corrected (the group is not in
it); it is chosen leave-one-collection-out on leave-one-group-out studies
(:data:`GROUP_SD` says which).

Graded measures (nDCG) need a grade, not only relevance: with a model that
predicts grades (``fusion``, :class:`~relimpute.relevance.grades.GradeShares`)
each document's grade is drawn from its own distribution
(``docs/math/fusion.md``, "Monte Carlo over grades"); otherwise a drawn-relevant
document takes a grade drawn from the topic's judged relevant grades, a
drawn-nonrelevant one from its judged nonrelevant grades (grade 1 of TREC DL
is "nonrelevant" at ``rel ≥ 2`` but has a gain). With binary qrels this is
the engine's draw.

Between-group term on the split. How the model splits relevance into grades is
learned from the pool too, and for the new group's documents its error is
shared as well: with ``split_sd > 0`` each posterior draw also shifts the
log-odds at which every uncertain document's relevance splits into grades by
one ``ε ~ N(0, split_sd²)`` (stratified, independent of ``δ``;
``docs/math/fusion.md``, "A left-out group's split"). It moves graded
measures only: ``p`` and its draws are unchanged.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.special import expit, logit

from .._deprecation import renamed_kwargs
from .._normal import normal_quantile
from ..data import Campaign
from ..confidence.graded import possible as graded_possible
from ..relevance.base import RelevanceEstimate, as_generator
from .base import Corrector, PoolContext, register_corrector

#: measure families scored with grades (the others read binary relevance)
GRADED = ("nDCG",)

#: Shipped ``group_sd``: the spread with the lowest interval score over the
#: leave-one-group-out studies of TREC-8 ad hoc (depth 10 and 100), DL 2019 and
#: DL 2021 (depth 10); each collection's own study uses the value chosen on the
#: other two (examples/poolbias/results/group_sd_choice.md).
GROUP_SD = 0.5

#: Shipped ``split_sd``, the spread of the between-group term on the split into grades
#: (module docstring): none. Chosen leave-one-collection-out on the DL studies its gain was
#: within Monte Carlo noise (examples/poolbias/README.md, "A left-out group's split").
SPLIT_SD = 0.0

#: Posterior draws made when the model gives a point estimate only and the
#: between-group term needs draws to carry its shift.
SHIFT_DRAWS = 100


def truncated(campaign: Campaign, depth: int | None) -> Campaign:
    """The campaign with every ranking cut at ``depth`` (None: unchanged)."""
    if depth is None:
        return campaign
    topics = tuple(
        replace(t, ranking=t.ranking[:, :depth], depth=np.minimum(t.depth, depth))
        for t in campaign.topics
    )
    return replace(campaign, topics=topics)


def compact(campaign: Campaign) -> tuple[Campaign, list[np.ndarray]]:
    """Keep only the documents that are judged or ranked; also return, per topic, their old indices.

    A TREC-8 topic indexes ~17,000 documents (129 runs × 1,000); a model fit
    or a Monte Carlo over a few runs needs a fraction of them.
    """
    topics, index = [], []
    for t in campaign.topics:
        keep = t.judged.copy()
        keep[t.ranking[t.ranking >= 0]] = True
        old = np.flatnonzero(keep)
        new = np.full(t.n_docs + 1, -1, dtype=np.int32)  # position n maps padding -1 to -1
        new[old] = np.arange(len(old), dtype=np.int32)
        topics.append(
            replace(
                t,
                doc_ids=t.doc_ids[old],
                grades=t.grades[old],
                judged=t.judged[old],
                ranking=new[t.ranking],
            )
        )
        index.append(old)
    return replace(campaign, topics=tuple(topics)), index


@renamed_kwargs(depth="pool_depth")
def would_be_pooled(campaign: Campaign, rows: np.ndarray, pool_depth: int) -> list[np.ndarray]:
    """Per topic, the unjudged documents the runs ``rows`` rank within ``pool_depth``."""
    masks = []
    for topic in campaign.topics:
        unknown = np.zeros(topic.n_docs, dtype=bool)
        top = topic.ranking[rows, :pool_depth]
        unknown[top[top >= 0]] = True
        masks.append(unknown & ~topic.judged)
    return masks


@renamed_kwargs(depth="pool_depth")
def would_be_pool_estimate(
    campaign: Campaign, estimate: RelevanceEstimate, rows: np.ndarray, pool_depth: int
) -> RelevanceEstimate:
    """``estimate`` with every unjudged document outside the top ``pool_depth`` of ``rows``
    set to 0."""
    ps, draws = [], []
    masks = would_be_pooled(campaign, rows, pool_depth)
    for t, (topic, unknown) in enumerate(zip(campaign.topics, masks)):
        fixed = topic.relevant(campaign.rel_threshold).astype(float)
        ps.append(np.where(unknown, estimate.p[t], fixed))
        if estimate.draws is not None:
            draws.append(np.where(unknown[None, :], estimate.draws[t], fixed[None, :]))
    return RelevanceEstimate(
        query_ids=campaign.query_ids,
        doc_ids=tuple(t.doc_ids for t in campaign.topics),
        p=tuple(ps),
        draws=tuple(draws) if draws else None,
        model=estimate.model,
        params=estimate.params,
        grades=_outside_nonrelevant(estimate.grades, masks, campaign),
    )


def _outside_nonrelevant(shares, masks, campaign):
    """``shares`` with the unjudged documents outside ``masks`` at grade 0 (the pool's
    unjudged = nonrelevant); judged ones keep theirs."""
    if shares is None:
        return None
    below = tuple(
        np.where((unknown | topic.judged)[:, None], b, 0.0)
        for b, unknown, topic in zip(shares.below, masks, campaign.topics)
    )
    return replace(shares, below=below)


def _moved_grades(shares, source, target, n):
    """:func:`_moved` of the grade shares (their document axis first)."""
    if shares is None:
        return None
    above, below = (
        tuple(a.T for a in _moved(tuple(x.T for x in parts), source, target, n))
        for parts in (shares.above, shares.below)
    )
    offset = shares.offset
    if offset is not None:  # a document the source lacks, or whose split is known, stays known
        value, open_ = (
            _moved(parts, source, target, n)
            for parts in (tuple(np.nan_to_num(e) for e in offset), tuple(1.0 - np.isnan(e) for e in offset))
        )
        offset = tuple(np.where(o > 0, v, np.nan) for v, o in zip(value, open_))
    return replace(shares, above=above, below=below, offset=offset)


def group_shifted(
    estimate: RelevanceEstimate, unknown: list[np.ndarray], group_sd: float, seed,
    split_sd: float = 0.0,
) -> RelevanceEstimate:  # fmt: skip
    """``estimate`` with the between-group term (module docstring) in its draws.

    Posterior draw ``m`` gets the shift ``δ_m = group_sd · Φ⁻¹((π(m) + ½) / M)``
    (``π`` a random permutation: stratified draws of ``N(0, group_sd²)``) on
    the log-odds of the ``unknown`` documents of every topic, plus a
    per-document offset that keeps each document's mean probability over the
    draws: the term adds correlation, not relevance. Without posterior
    draws, ``M`` = :data:`SHIFT_DRAWS` copies of the point estimate are shifted.
    ``split_sd`` adds the term on the split into grades (module docstring).
    """
    rng = as_generator(seed)
    if group_sd == 0:
        return _split_shifted(estimate, split_sd, rng)
    base = estimate.draws or tuple(np.broadcast_to(p, (SHIFT_DRAWS, len(p))) for p in estimate.p)
    n = base[0].shape[0]
    order = rng.permutation(n)
    shift = group_sd * normal_quantile((order + 0.5) / n)[:, None]  # the normal's quantiles
    draws = []
    for d, u in zip(base, unknown):
        moved = np.array(d, dtype=float)
        moved[:, u] = _mean_preserving_shift(d[:, u], shift)
        draws.append(moved)
    return _split_shifted(replace(estimate, draws=tuple(draws)), split_sd, rng)


def _split_shifted(estimate: RelevanceEstimate, split_sd: float, rng) -> RelevanceEstimate:
    """``estimate`` whose posterior draw ``m`` splits every uncertain document's relevance
    into grades at log-odds shifted by ``ε_m = split_sd · Φ⁻¹((π(m) + ½) / M)`` (an
    independent permutation: stratified ``N(0, split_sd²)``;
    :attr:`~relimpute.relevance.grades.GradeShares.split_shift`). Unchanged when
    ``split_sd`` is 0 or the estimate has no drawn splits; ``p`` and its draws never change."""
    shares = estimate.grades
    if split_sd == 0 or shares is None or shares.cut_draws is None or estimate.draws is None:
        return estimate
    n = estimate.draws[0].shape[0]
    shift = split_sd * normal_quantile((rng.permutation(n) + 0.5) / n)
    return replace(estimate, grades=replace(shares, split_shift=shift))


def _mean_preserving_shift(draws: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """``expit(logit(draws) + shift + c)`` with ``c`` per column solving
    ``mean_m expit(logit(draws_m) + shift_m + c) = mean_m draws_m`` (Newton)."""
    eps = 1e-12
    target = draws.mean(axis=0)
    log_odds = logit(np.clip(draws, eps, 1 - eps)) + shift
    c = np.zeros(draws.shape[1])
    for _ in range(50):
        s = expit(log_odds + c)
        gap = s.mean(axis=0) - target
        if np.all(np.abs(gap) < 1e-10):
            break
        c -= np.clip(gap / np.maximum((s * (1 - s)).mean(axis=0), eps), -5.0, 5.0)
    return expit(log_odds + c)


def _moved(
    values: tuple[np.ndarray, ...], source: list[np.ndarray], target: list[np.ndarray], n: list[int]
):
    """Per-topic arrays on old indices ``source`` moved to old indices ``target`` (0 elsewhere)."""
    out = []
    for v, s, d, size in zip(values, source, target, n):
        full = np.zeros(v.shape[:-1] + (size,))
        full[..., s] = v
        out.append(full[..., d])
    return tuple(out)


def graded_draws(
    campaign: Campaign, estimate: RelevanceEstimate, measure, n_draws: int, rng, chunk: int = 256
) -> np.ndarray:
    """``(n_draws, S)`` per-draw mean over topics of a graded measure (module docstring).

    Draw ``d`` uses posterior draw ``d mod M`` of the estimate in every topic
    when it has draws (as the confidence engine does), else Bernoulli(p).
    """
    rng = as_generator(rng)
    threshold = campaign.rel_threshold
    out = np.zeros((n_draws, campaign.n_systems))
    for t, topic in enumerate(campaign.topics):
        p = estimate.p[t]
        posterior = None if estimate.draws is None else estimate.draws[t]
        possible = p if posterior is None else posterior.max(axis=0)
        if estimate.grades is not None:
            possible = graded_possible(estimate, t, possible)
        uncertain = np.flatnonzero(~topic.judged & (possible > 0))
        base = np.where(topic.judged, topic.grades, 0).astype(np.int64)
        judged = topic.grades[topic.judged].astype(np.int64)
        relevant_grades = judged[judged >= threshold]
        other_grades = judged[judged < threshold]
        if not len(relevant_grades):
            relevant_grades = np.array([threshold])
        if not len(other_grades):
            other_grades = np.array([0])
        for lo in range(0, n_draws, chunk):
            size = min(chunk, n_draws - lo)
            index = None if posterior is None else (lo + np.arange(size)) % posterior.shape[0]
            prob = p[uncertain][None, :] if posterior is None else posterior[index][:, uncertain]
            u = rng.random((size, len(uncertain)))
            labels = np.repeat(base[None, :], size, axis=0)
            if estimate.grades is not None:  # the model's own distribution over the grades
                labels[:, uncertain] = estimate.grades.draw(t, u, prob, uncertain, index)
            else:
                labels[:, uncertain] = np.where(
                    u < prob,
                    rng.choice(relevant_grades, size=u.shape),
                    rng.choice(other_grades, size=u.shape),
                )
            scores = measure.score(topic.ranking, labels, rel_threshold=threshold)
            out[lo : lo + size] += scores / campaign.n_topics
    return out


class ModelBased(Corrector):
    """E[full-pool score] and its 95% interval under a relevance model fitted on the pool.

    Parameters
    ----------
    model
        A registered model name or settings file (:func:`relimpute.relevance.load_model`).
    n_draws
        Monte Carlo draws of relevance.
    level
        Interval level.
    seed
        Seed of the model fit and the draws.
    fit_depth
        The model sees the runs cut at ``max(fit_depth, pool depth)`` (None:
        full depth); only documents within the pool depth are predicted, and
        deep ranks cost most of a fit on TREC-style runs of 1,000 documents.
    group_sd
        Spread of the between-group shift of the log-odds (module docstring;
        0: documents independent given the model).
    split_sd
        Spread of the between-group shift of the split into grades (module
        docstring; 0: none).
    """

    name = "model"

    def __init__(
        self,
        model: str = "fusion",
        n_draws: int = 2000,
        level: float = 0.95,
        seed: int = 0,
        fit_depth: int | None = 100,
        group_sd: float = GROUP_SD,
        split_sd: float = SPLIT_SD,
    ):
        for name, value in (("group_sd", group_sd), ("split_sd", split_sd)):
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value}")
        self.model = model
        self.n_draws = n_draws
        self.level = level
        self.seed = seed
        self.fit_depth = fit_depth
        self.group_sd = group_sd
        self.split_sd = split_sd

    def fitted(self, context: PoolContext, rows: np.ndarray) -> tuple[Campaign, RelevanceEstimate]:
        """The new runs' compact campaign and the restricted estimate on it, with the
        between-group term (cached; the fit is shared by every ``group_sd``)."""
        campaign, estimate = self._restricted(context, rows)
        fit = (self.model, self.seed, self.fit_depth, tuple(int(r) for r in rows))
        key = ("model-shifted", *fit, self.group_sd, self.split_sd)
        if key not in context.cache:
            unknown = would_be_pooled(campaign, np.arange(len(rows)), context.pool_depth)
            context.cache[key] = group_shifted(
                estimate, unknown, self.group_sd, self.seed, split_sd=self.split_sd
            )
        return campaign, context.cache[key]

    def _restricted(
        self, context: PoolContext, rows: np.ndarray
    ) -> tuple[Campaign, RelevanceEstimate]:
        """The new runs' compact campaign and the model's estimate restricted to their
        would-be-pooled documents (cached)."""
        from ..relevance import load_model

        key = ("model", self.model, self.seed, self.fit_depth, tuple(int(r) for r in rows))
        if key not in context.cache:
            campaign = context.campaign
            names = [campaign.systems[r] for r in rows]
            depth = None if self.fit_depth is None else max(self.fit_depth, context.pool_depth)
            fit_campaign, fit_index = compact(
                truncated(campaign.subset(list(context.pooled) + names), depth)
            )
            estimate = load_model(self.model).fit_predict(fit_campaign, rng=self.seed)
            runs, run_index = compact(campaign.subset(names))
            sizes = [t.n_docs for t in campaign.topics]
            moved = RelevanceEstimate(
                query_ids=runs.query_ids,
                doc_ids=tuple(t.doc_ids for t in runs.topics),
                p=_moved(estimate.p, fit_index, run_index, sizes),
                draws=None
                if estimate.draws is None
                else _moved(estimate.draws, fit_index, run_index, sizes),
                model=estimate.model,
                params=estimate.params,
                grades=_moved_grades(estimate.grades, fit_index, run_index, sizes),
            )
            restricted = would_be_pool_estimate(
                runs, moved, np.arange(len(names)), context.pool_depth
            )
            context.cache[key] = (runs, restricted)
        return context.cache[key]

    def _correct(self, context, rows, measure, reduced):
        from ..confidence import ConfidenceEngine

        runs, estimate = self.fitted(context, rows)
        if measure.family in GRADED:
            draws = graded_draws(runs, estimate, measure, self.n_draws, self.seed)
            tail = (1.0 - self.level) / 2.0
            return {
                "estimate": draws.mean(axis=0),
                "ci_low": np.quantile(draws, tail, axis=0),
                "ci_high": np.quantile(draws, 1.0 - tail, axis=0),
                "sd": draws.std(axis=0),
            }
        scores = (
            ConfidenceEngine()
            .confidence(
                runs, estimate, pairs=[], n_draws=self.n_draws, rng=self.seed,
                measure=str(measure), method="monte carlo",
            )
            .scores
        )
        interval = scores.confidence_interval(self.level)
        return {
            "estimate": scores.e_map,
            "ci_low": interval.low,
            "ci_high": interval.high,
            "sd": scores.sd_map,
        }


register_corrector(ModelBased)
