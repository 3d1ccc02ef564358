"""The confidence engine: distributions of AP, MAP and ΔMAP over a campaign (Carterette 2007 §2).

:class:`ConfidenceEngine` turns a campaign and a
:class:`~relimpute.relevance.RelevanceEstimate` into per-system scores and
pairwise comparisons through one entry, :meth:`~ConfidenceEngine.confidence`, which takes
exact moments and the normal approximation or Monte Carlo draws of relevance by what the
measure, the estimate and the estimand allow. :meth:`~ConfidenceEngine.evaluate`,
:meth:`~ConfidenceEngine.compare`, :meth:`~ConfidenceEngine.monte_carlo` and
:meth:`~ConfidenceEngine.topic_bootstrap` are that entry with the method fixed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._deprecation import warn_deprecated
from ..data import Campaign, TopicData
from ..measures import Measure, measure_families, parse_measure
from ..relevance.base import RelevanceEstimate
from .estimands import (
    EXACT_ONLY,
    POOL_GROUP_SD,
    check_estimand,
    check_pool_group_sd,
    describe,
    judged_pool_depth,
    qrels_estimate,
    shared_shift_variance,
    without_variance,
)
from .linear import linear_moments
from .moments import check_ratio, ratio_moments
from .results import Comparison, SystemScores, prob_positive
from .binary import without_grades
from .runset import TopicView, select_runs, topic_view, topic_views

if TYPE_CHECKING:
    from .topic_bootstrap import TopicBootstrap


#: How :meth:`ConfidenceEngine.confidence` may compute a comparison.
METHODS = ("auto", "normal", "monte carlo")


class ConfidenceEngine:
    """Exact and Monte Carlo confidence in system comparisons (Carterette 2007 §2.1).

    Parameters
    ----------
    ratio
        How AP = Q / R is treated: ``"constant"`` is the paper's
        ``Var[Q] / E[R]²``; ``"delta"`` the delta-method variance of Q / R
        with Cov(Q, R) (see :mod:`relimpute.confidence.moments`).
    depth
        Evaluate every ranking truncated at this depth (None = full depth).
        R then counts the unjudged documents retrieved within the depth.
    estimand
        Which score (:mod:`relimpute.confidence.estimands`, docs/which-map.md):
        ``"complete"`` (every retrieved document judged), ``"pool"`` (each run
        pooled to ``pool_depth``; exact moments only) or ``"qrels"`` (trec_eval
        on the qrels given: no model, variance 0; ``estimate`` may be None).
    pool_depth
        The pool depth K of ``estimand="pool"``; None: the depth most runs are
        judged to on every topic (:func:`~relimpute.confidence.estimands.judged_pool_depth`).
    pool_group_sd
        The spread of ``estimand="pool"``'s shared shift of a run's would-be-pooled
        documents (:mod:`~relimpute.confidence.estimands`); None: the shipped
        :data:`~relimpute.confidence.estimands.POOL_GROUP_SD`, 0: documents independent.
    pool_together
        ``estimand="pool"``: True (the default) pools every run of the campaign together, as a
        campaign pools a group's runs (and :func:`~relimpute.confidence.estimands.pool_estimate`
        does): one pool, the top K of every run. False: each run (each pair) pooled alone.

    Notes
    -----
    Under ``estimand="complete"``, E[R] of a topic is Σp over every judged
    document plus every unjudged document retrieved by any system of the
    *campaign* (within ``depth``),
    whichever systems are compared (a pair's answer does not depend on the
    other runs on the command line), plus every document a label source of the
    campaign names (:func:`~relimpute.confidence.moments.counted_documents`). A topic a system retrieves nothing for scores 0 with
    variance 0 and counts in MAP (the mean over all the campaign's topics, as
    trec_eval ``-c``); a topic with E[R] = 0 scores 0 with variance 0.

    Examples
    --------
    >>> estimate = Uniform(0.5).fit_predict(campaign)          # doctest: +SKIP
    >>> result = ConfidenceEngine(ratio="delta").confidence(campaign, estimate)  # doctest: +SKIP
    >>> result.to_frame()  # doctest: +SKIP
    >>> result.matrix()  # P(row beats column)  # doctest: +SKIP
    >>> result.scores.ranking()  # systems by E[MAP], best first  # doctest: +SKIP
    """

    def __init__(
        self,
        ratio: str = "constant",
        depth: int | None = None,
        *,
        estimand: str = "complete",
        pool_depth: int | None = None,
        pool_group_sd: float | None = None,
        pool_together: bool | None = None,
    ):
        self.ratio = ratio
        self.depth = depth
        self.estimand = check_estimand(estimand)
        self.pool_depth = pool_depth
        check_ratio(ratio)
        for name, value in (("depth", depth), ("pool_depth", pool_depth)):
            if value is not None and (int(value) != value or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
        if pool_depth is not None and estimand != "pool":
            raise ValueError(f"pool_depth is the pool estimand's, not {estimand!r}'s")
        self.pool_group_sd = check_pool_group_sd(pool_group_sd, estimand)
        if pool_together is not None and estimand != "pool":
            raise ValueError(f"pool_together is the pool estimand's, not {estimand!r}'s")
        self.pool_together = self.estimand == "pool" if pool_together is None else bool(pool_together)

    def __repr__(self) -> str:
        more = "" if self.estimand == "complete" else f", estimand={self.estimand!r}"
        if self.pool_depth is not None:
            more += f", pool_depth={self.pool_depth!r}"
        if self.estimand == "pool" and self.pool_group_sd != POOL_GROUP_SD:
            more += f", pool_group_sd={self.pool_group_sd!r}"
        if self.estimand == "pool" and not self.pool_together:
            more += ", pool_together=False"
        return f"ConfidenceEngine(ratio={self.ratio!r}, depth={self.depth!r}{more})"

    def describe(self, campaign: Campaign | None = None) -> str:
        """The line a table prints: which estimand, e.g. ``estimand: complete (every
        retrieved document to full depth judged)``; the inferred pool depth with ``campaign``."""
        pool_depth = self.pool_depth
        if self.estimand == "pool" and pool_depth is None and campaign is not None:
            pool_depth = judged_pool_depth(campaign)
        line = describe(self.estimand, self.depth, pool_depth)
        if self.estimand == "pool" and not self.pool_together:
            line = line.replace("the runs pooled together with", "each run pooled alone with")
        return line

    # ------------------------------------------------------------------ public

    def confidence(
        self,
        campaign: Campaign,
        estimate: RelevanceEstimate | None,
        systems: Sequence[str] | None = None,
        pairs: Sequence[tuple[str, str]] | None = None,
        *,
        measure: str = "AP",
        method: str = "auto",
        n_draws: int = 4000,
        rng: int | np.random.Generator | None = None,
        topics: bool = False,
        use_posterior_draws: bool = True,
        max_elements: int = 1 << 22,
        jobs: int = 1,
    ) -> Comparison | TopicBootstrap:
        """The comparison of ``measure``'s mean over topics per pair, by the best method it allows.

        The one entry to the engine (``relimpute compare`` and ``evaluate`` call it).

        Parameters
        ----------
        campaign, estimate
            The runs and the probabilities of relevance aligned to them (None under the
            ``qrels`` estimand). A binary measure reads no grades: the estimate's split into
            grades is dropped for it (:mod:`relimpute.confidence.binary`).
        systems
            The systems to score (names; all by default). E[R] comes from the whole
            campaign, whatever this selects.
        pairs
            ``(a, b)`` names within ``systems``; default every pair ``a < b`` in the order
            of ``systems``; ``[]``: the per-system ``.scores`` only.
        measure
            Any measure name (``"AP"``, ``"P@10"``, ``"nDCG@10"``, ...).
        method
            ``"auto"``: Monte Carlo over the estimate's posterior draws when it has them
            (their uncertainty belongs in the answer); else exact moments and the normal
            approximation where the measure has them (:func:`has_closed_form`); else Monte
            Carlo with independent Bernoulli(p) relevance. The ``pool`` estimand has exact
            moments only: ``"auto"`` takes them (the model's point estimate of p).
            ``"normal"`` forces exact moments (an error for a measure without them),
            ``"monte carlo"`` forces draws (an error under ``pool``).
        n_draws, rng, use_posterior_draws, max_elements
            Monte Carlo's (:mod:`relimpute.confidence.montecarlo`): draw ``d`` uses posterior
            draw ``d mod M`` in every topic with ``use_posterior_draws``, else independent
            Bernoulli(p); ``max_elements`` bounds one chunk of draws (memory).
        jobs
            Threads for AP's exact moments (topics in parallel; -1: one per core), bit for bit
            the serial numbers; Monte Carlo and the linear measures run on one.
        topics
            Add topic sampling: a :class:`~relimpute.confidence.TopicBootstrap`, one topic
            resample per Monte Carlo draw (:mod:`relimpute.confidence.topic_bootstrap`).

        Returns
        -------
        Comparison
            With its per-system :class:`SystemScores`; from Monte Carlo it carries its draws
            and their error (:meth:`Comparison.bound_errors`;
            ``to_frame(rounded=True)`` prints each bound to the decimal of its error).
        """
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        estimate = without_grades(estimate, [measure])
        draws_of = dict(n_draws=n_draws, rng=rng, measure=measure,
                        use_posterior_draws=use_posterior_draws, max_elements=max_elements)  # fmt: skip
        if topics:
            if method == "normal":
                raise ValueError("topic sampling is Monte Carlo: method 'normal' cannot add it")
            return self._topic_bootstrap(campaign, estimate, systems, pairs, **draws_of)
        draws = None if estimate is None or self.estimand != "complete" else estimate.draws
        exact = method == "normal" or (
            method == "auto" and draws is None and has_closed_form(measure)
        )
        if self.estimand == "pool" and method == "auto":
            exact = True  # its only method (the model's point estimate p)
        if exact:
            return self._exact(campaign, estimate, systems, pairs, measure, jobs)
        comparison, _ = self._simulate(campaign, estimate, systems, pairs, keep_topic_draws=False,
                                       **draws_of)  # fmt: skip
        return comparison

    # The four doors of earlier releases: ``confidence`` with the method fixed, kept for
    # existing code (deprecated); their arguments are ``confidence``'s.

    def evaluate(self, campaign, estimate, *args, **options) -> SystemScores:
        """Exact E and Var of ``measure`` per system and topic and of its mean over topics:
        ``confidence(..., pairs=[], method="normal").scores`` (kept for existing code).

        ``measure`` is ``"AP"`` (or ``"MAP"``, ``"map"``) or a linear measure
        (``P@k``, ``RBP(p=φ)``, ``DCG@k``, ``NumRelRet``; see
        :mod:`relimpute.confidence.linear`); :func:`has_closed_form` tells. Deprecated.
        """
        new = 'confidence(..., pairs=[], method="normal").scores'
        return self._old_door("evaluate", new, campaign, estimate, *args, pairs=[], method="normal",
                              **options).scores  # fmt: skip

    def compare(self, campaign, estimate, *args, **options) -> Comparison:
        """Exact moments of ΔMAP = MAP_a - MAP_b and the normal P(ΔMAP > 0) per pair:
        ``confidence(..., method="normal")`` (kept for existing code; deprecated)."""
        new = 'confidence(..., method="normal")'
        return self._old_door("compare", new, campaign, estimate, *args, method="normal", **options)

    def monte_carlo(self, campaign, estimate, *args, n_draws=10_000, **options) -> Comparison:
        """The comparison from drawn relevance vectors: ``confidence(..., method="monte
        carlo")`` with its Monte Carlo ``options`` (``rng``, ``measure``,
        ``use_posterior_draws``, ``max_elements``) and 10,000 draws by default, kept for
        existing code; deprecated."""
        return self._old_door("monte_carlo", 'confidence(..., method="monte carlo")', campaign,
                              estimate, *args, method="monte carlo", n_draws=n_draws,
                              **options)  # fmt: skip

    def topic_bootstrap(self, campaign, estimate, *args, **options) -> TopicBootstrap:
        """ΔMAP with topic sampling and unjudged documents together:
        ``confidence(..., topics=True)`` with its Monte Carlo ``options`` (``n_draws=4000``,
        ``rng``, ``measure``, ...), kept for existing code; deprecated."""
        return self._old_door("topic_bootstrap", "confidence(..., topics=True)", campaign, estimate,
                              *args, method="monte carlo", topics=True,
                              **options)  # fmt: skip

    def _old_door(self, name: str, new: str, *args, **keywords):
        """A door of earlier releases: warn that ``name`` is now ``new``, then call
        ``confidence`` with the keywords that door fixed (``method``, ``topics``, ...)."""
        warn_deprecated(f"ConfidenceEngine.{name}", new, stacklevel=4)
        return self.confidence(*args, **keywords)

    # ------------------------------------------------------------------ private

    def _exact(self, campaign, estimate, systems, pairs, measure, jobs=1) -> Comparison:
        """Exact moments per system and pair and the normal P(ΔMAP > 0) (Carterette 2007 §2.1)."""
        estimate = self._estimate(campaign, estimate)
        rows, names, pair_idx = select_runs(campaign, estimate, systems, pairs)
        if self.estimand == "pool" and not has_closed_form(measure):
            raise ValueError(f"{EXACT_ONLY}, not {measure!r}: score it as 'complete' or 'qrels'")
        linear = _exact_measure(measure)
        views = self._views(campaign, rows)
        ratio = self.ratio if linear is None else None
        shared = self.estimand == "pool" and self.pool_group_sd > 0
        if self.estimand == "pool":
            from .estimands import pooled_topic_moments

            k = self.pool_depth or judged_pool_depth(campaign)
            topic_moments = [
                pooled_topic_moments(
                    topic, view, p, pair_idx, k, rows, self.ratio, linear, shared, self.pool_together
                )
                for topic, view, p in zip(campaign.topics, views, estimate.p)
            ]
        elif linear is None:
            topic_moments = _in_order(
                lambda view, p: self._ap_topic(view, p, pair_idx), zip(views, estimate.p), jobs
            )
        else:
            topic_moments = [
                linear_moments(
                    linear, view.ranking, view.depth, p, pair_idx if len(pair_idx) else None
                )
                for view, p in zip(views, estimate.p)
            ]
        n_topics = campaign.n_topics
        e_ap = np.stack([m[0] for m in topic_moments], axis=1)
        var_ap = np.stack([m[1] for m in topic_moments], axis=1)
        var_map = var_ap.sum(axis=1) / n_topics**2
        if shared:  # one shift for every topic: it adds to the mean's variance only
            var_map = var_map + shared_shift_variance(topic_moments, 4, self.pool_group_sd)
        scores = SystemScores(
            systems=names,
            query_ids=campaign.query_ids,
            e_ap=e_ap,
            var_ap=var_ap,
            e_map=e_ap.mean(axis=1),
            var_map=var_map,
            measure=str(linear or "AP"),
            method="normal",
            ratio=ratio,
            estimand=self.estimand,
        )
        if len(pair_idx):
            e_delta = np.stack([m[2] for m in topic_moments], axis=1)
            var_delta = np.stack([m[3] for m in topic_moments], axis=1)
        else:
            e_delta = var_delta = np.zeros((0, n_topics))
        e_map = e_delta.mean(axis=1)
        var_map = var_delta.sum(axis=1) / n_topics**2
        if shared and len(pair_idx):
            var_map = var_map + shared_shift_variance(topic_moments, 5, self.pool_group_sd)
        return Comparison(
            pairs=pair_idx,
            e_delta_map=e_map,
            var_delta_map=var_map,
            p_a_better=prob_positive(e_map, var_map),
            scores=scores,
            e_delta_ap=e_delta,
            var_delta_ap=var_delta,
        )

    def _topic_bootstrap(self, campaign, estimate, systems, pairs, *, rng, **draws_of):
        """Monte Carlo with one topic resample per draw (:mod:`.topic_bootstrap`)."""
        from ..relevance.base import as_generator
        from .topic_bootstrap import resample_topics

        generator = as_generator(rng)
        fixed_topics, topic_draws = self._simulate(
            campaign, estimate, systems, pairs, rng=generator, keep_topic_draws=True, **draws_of
        )
        return resample_topics(fixed_topics, topic_draws, generator)

    def _simulate(
        self, campaign, estimate, systems, pairs, *, n_draws, rng, measure, use_posterior_draws,
        max_elements, keep_topic_draws: bool,
    ) -> tuple[Comparison, np.ndarray | None]:
        """Monte Carlo comparison and, when asked, every draw's ``(D, S, T)`` topic scores."""
        from .montecarlo import simulate

        if self.estimand == "pool":
            raise ValueError(
                f"{EXACT_ONLY}: use compare or evaluate (method 'normal'); Monte Carlo gives "
                "the estimands 'complete' and 'qrels'"
            )
        estimate = self._estimate(campaign, estimate)
        rows, names, pair_idx = select_runs(campaign, estimate, systems, pairs)
        if int(n_draws) != n_draws or n_draws < 2:
            raise ValueError(f"n_draws must be an integer >= 2, got {n_draws!r}")
        if self.estimand == "qrels" and not keep_topic_draws:
            n_draws = 2  # the qrels decide every document: every draw is the same
        views = self._views(campaign, rows)
        shape = (int(n_draws), len(rows), campaign.n_topics)
        topic_draws = np.empty(shape) if keep_topic_draws else None
        comparison = simulate(
            campaign,
            estimate,
            views,
            names,
            pair_idx,
            n_draws=int(n_draws),
            rng=rng,
            measure=measure,
            use_posterior_draws=use_posterior_draws,
            max_elements=int(max_elements),
            topic_draws=topic_draws,
            estimand=self.estimand,
        )
        if self.estimand == "qrels":
            comparison = without_variance(comparison)
        return comparison, topic_draws


    def _estimate(self, campaign: Campaign, estimate: RelevanceEstimate | None):
        """The estimate the estimand scores with: the qrels' own for ``qrels``."""
        if self.estimand == "qrels":
            return qrels_estimate(campaign)
        if estimate is None:
            raise ValueError(f"estimand {self.estimand!r} needs a relevance estimate")
        return estimate

    def _views(self, campaign: Campaign, rows: np.ndarray) -> list[TopicView]:
        return topic_views(campaign, rows, self.depth)

    def _view(self, topic: TopicData, rows: np.ndarray, labelled=None) -> TopicView:
        return topic_view(topic, rows, self.depth, labelled)

    def _ap_topic(self, view: TopicView, p: np.ndarray, pairs: np.ndarray):
        """E/Var of AP per system and of ΔAP per pair on one topic (Carterette 2007 §2.1)."""
        from . import _kernels  # numba: imported when first needed

        p = np.ascontiguousarray(p, dtype=np.float64)
        v = p * (1.0 - p)
        e_r = float(p[view.counted].sum())
        var_r = float(v[view.counted].sum())
        width = view.ranking.shape[1]
        rank = np.broadcast_to(np.arange(1.0, width + 1.0), view.ranking.shape).copy()
        eq, first, second, cov, g = _kernels.system_terms(view.ranking, rank, view.depth, p, v)
        e_ap, var_ap = ratio_moments(eq, first + second, cov, e_r, var_r, self.ratio)
        if not len(pairs):
            return e_ap, var_ap, None, None
        order = np.argsort(pairs[:, 0], kind="stable")
        a, b = pairs[order, 0], pairs[order, 1]
        cf, cs = _kernels.pair_terms(view.ranking, rank, view.depth, g, v, len(p), a, b)
        var_dq = np.empty(len(pairs))
        var_dq[order] = first[a] + first[b] - 2.0 * cf + second[a] + second[b] - 2.0 * cs
        a, b = pairs[:, 0], pairs[:, 1]
        e_d, var_d = ratio_moments(
            eq[a] - eq[b], np.maximum(var_dq, 0.0), cov[a] - cov[b], e_r, var_r, self.ratio
        )
        return e_ap, var_ap, e_d, var_d


def has_closed_form(measure) -> bool:
    """Whether ``measure`` has exact moments (:meth:`ConfidenceEngine.confidence`, method
    ``"normal"``).

    The measure registry says (``Measure.exact_moments()``): AP over the
    whole list (any spelling: ``MAP``, ``map``) and the measures linear in
    relevance; the others, and unknown names, need Monte Carlo.
    """
    try:
        return parse_measure(measure).exact_moments() is not None
    except ValueError:
        return False


def exact_measure_names() -> list[str]:
    """How the registry's measures with exact moments are written, e.g. ``["AP", "DCG[@k]", ...]``."""
    return [cls.syntax() for cls in measure_families() if cls.moments is not None]


def _in_order(function, items, jobs: int) -> list:
    """``[function(*item) for item in items]`` on ``jobs`` threads (-1: one per core; the kernels
    release the GIL): each result as on one thread, in the order of ``items``, bit for bit."""
    if jobs == -1:
        jobs = os.cpu_count() or 1
    if int(jobs) != jobs or jobs < 1:
        raise ValueError(f"jobs must be a positive integer or -1, got {jobs!r}")
    if jobs == 1:
        return [function(*item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(int(jobs)) as pool:
        return list(pool.map(lambda item: function(*item), items))


def _exact_measure(measure: str) -> Measure | None:
    """None for AP, the linear measure otherwise; a clear error for the rest."""
    parsed = parse_measure(measure)
    if parsed.exact_moments() is None:
        raise ValueError(
            f"no closed form for {str(parsed)!r}: exact moments cover "
            f"{', '.join(exact_measure_names())} (AP without a cutoff, no rel=); "
            "use method 'auto' or 'monte carlo' of ConfidenceEngine.confidence for other measures"
        )
    return parsed if parsed.exact_moments() == "linear" else None
