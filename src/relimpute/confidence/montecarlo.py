"""Monte Carlo confidence: draw relevance, score exactly, summarise (Carterette 2007 §2.1).

Each draw is a full relevance vector for every topic: the documents whose
relevance counts (judged ones, and unjudged ones retrieved by any run of the campaign)
keep their judged label or are drawn Bernoulli(p). With posterior draws of p
(``estimate.draws``), draw ``d`` uses posterior draw ``d mod M`` in every
topic, so parameter uncertainty is shared across topics as the model says.
Every system of the run set is scored on the same draw (paired comparisons),
AP with the drawn R exactly (AP = 0 when R = 0). Draws are processed in
chunks of bounded size.

Measures: ``"AP"`` uses a numba kernel (the hot path; it equals
:func:`relimpute.measures.average_precision`, tested); linear measures
(:mod:`relimpute.confidence.linear`) are a sparse product; any other
:mod:`relimpute.measures` name (``nDCG@10``, ``Rprec``, ...) is scored by its
kernel with labels ``grade`` for judged documents and ``rel_threshold`` for
drawn-relevant unjudged ones (so a drawn relevant document has the lowest
relevant grade's gain in nDCG).
"""

from __future__ import annotations

import numpy as np

from ..data import Campaign
from ..relevance.base import RelevanceEstimate, as_generator
from .linear import canonical_name, parse_linear, weight_matrix
from .results import Comparison, SystemScores


def simulate(
    campaign: Campaign,
    estimate: RelevanceEstimate,
    views,
    names: tuple[str, ...],
    pairs: np.ndarray,
    *,
    n_draws: int,
    rng,
    measure: str,
    use_posterior_draws: bool,
    max_elements: int,
    topic_draws: np.ndarray | None = None,
) -> Comparison:
    """Monte Carlo :class:`Comparison` (with its :class:`SystemScores`); see the module docstring.

    ``topic_draws``, a ``(n_draws, S, T)`` array when given, receives every draw's
    score per system and topic (for :mod:`relimpute.confidence.topic_bootstrap`).
    """
    rng = as_generator(rng)
    scorer, label = _scorer(measure, campaign.rel_threshold)
    posterior = estimate.draws if use_posterior_draws and estimate.draws is not None else None
    n_sys, n_topics = len(names), campaign.n_topics
    per_draw = max(
        max(view.ranking.size for view in views),
        max(topic.n_docs for topic in campaign.topics),
    )
    chunk = int(max(1, min(n_draws, max_elements // max(per_draw, 1))))

    prepared = []
    for t, (topic, view) in enumerate(zip(campaign.topics, views)):
        p = np.asarray(estimate.p[t], dtype=np.float64)
        relevant = topic.relevant(campaign.rel_threshold)
        if posterior is not None and posterior[t].shape[1:] != p.shape:
            raise ValueError(
                f"topic {topic.query_id}: posterior draws have shape {posterior[t].shape}"
            )
        possible = p if posterior is None else posterior[t].max(axis=0)
        uncertain = np.flatnonzero(view.counted & ~topic.judged & (possible > 0.0))
        prepared.append((topic, view, p, relevant, uncertain))

    sums = np.zeros((n_sys, n_topics))
    squares = np.zeros((n_sys, n_topics))
    mean_draws = np.zeros((n_draws, n_sys))
    from ..progress import progress

    starts = range(0, n_draws, chunk)
    for start in progress(starts, desc="Monte Carlo", unit="chunk"):
        size = min(chunk, n_draws - start)
        for t, (topic, view, p, relevant, uncertain) in enumerate(prepared):
            if posterior is None:
                prob = p[uncertain][None, :]
            else:
                index = (start + np.arange(size)) % posterior[t].shape[0]
                prob = posterior[t][index][:, uncertain]
            # float32 uniforms: half the cost; p is resolved to 2^-24
            drawn = rng.random((size, len(uncertain)), dtype=np.float32) < prob
            scores = scorer(topic, view, relevant, uncertain, drawn)
            sums[:, t] += scores.sum(axis=0)
            squares[:, t] += (scores**2).sum(axis=0)
            mean_draws[start : start + size] += scores / n_topics
            if topic_draws is not None:
                topic_draws[start : start + size, :, t] = scores

    e_topic = sums / n_draws
    var_topic = np.maximum(squares / n_draws - e_topic**2, 0.0)
    scores = SystemScores(
        systems=names,
        query_ids=campaign.query_ids,
        e_ap=e_topic,
        var_ap=var_topic,
        e_map=mean_draws.mean(axis=0),
        var_map=mean_draws.var(axis=0),
        measure=label,
        method="monte carlo",
        ratio=None,
        draws=mean_draws,
    )
    e_delta, var_delta, p_better = _pair_summaries(mean_draws, pairs, max_elements)
    return Comparison(
        pairs=pairs,
        e_delta_map=e_delta,
        var_delta_map=var_delta,
        p_a_better=p_better,
        scores=scores,
    )


def _pair_summaries(mean_draws: np.ndarray, pairs: np.ndarray, max_elements: int):
    """Mean, variance and P(Δ > 0) (ties ½) of ΔMAP per pair, pairs in bounded blocks."""
    n_pairs = len(pairs)
    e = np.zeros(n_pairs)
    var = np.zeros(n_pairs)
    prob = np.zeros(n_pairs)
    block = max(1, max_elements // max(len(mean_draws), 1))
    for lo in range(0, n_pairs, block):
        sel = pairs[lo : lo + block]
        delta = mean_draws[:, sel[:, 0]] - mean_draws[:, sel[:, 1]]
        e[lo : lo + block] = delta.mean(axis=0)
        var[lo : lo + block] = delta.var(axis=0)
        prob[lo : lo + block] = (delta > 0).mean(axis=0) + 0.5 * (delta == 0).mean(axis=0)
    return e, var, prob


def _scorer(measure: str, rel_threshold: int):
    """A function ``(topic, view, relevant, uncertain, drawn) -> (B, S)`` and the measure's name."""
    name = canonical_name(measure)
    if name == "AP":
        return _score_ap, "AP"
    linear = parse_linear(name)
    if linear is not None:

        def score_linear(topic, view, relevant, uncertain, drawn):
            w = weight_matrix(linear, view.ranking, view.depth, topic.n_docs)
            fixed = w @ relevant.astype(np.float64)
            return fixed[None, :] + (w[:, uncertain] @ drawn.T.astype(np.float64)).T

        return score_linear, str(linear)

    from ..measures import parse_measure

    parsed = parse_measure(name)

    def score_generic(topic, view, relevant, uncertain, drawn):
        base = np.where(topic.judged, topic.grades, 0).astype(np.int64)
        labels = np.repeat(base[None, :], len(drawn), axis=0)
        labels[:, uncertain] = np.where(drawn, rel_threshold, 0)
        ranking = _pad_to_depth(view)
        return parsed.score(ranking, labels, rel_threshold=rel_threshold)

    return score_generic, str(parsed)


def _score_ap(topic, view, relevant, uncertain, drawn):
    """AP of every system per draw with the numba kernel (equals relimpute.measures AP)."""
    from . import _kernels  # numba: imported when first needed

    base = relevant.astype(np.float64)
    return _kernels.average_precision_draws(
        view.ranking,
        view.depth,
        base,
        uncertain.astype(np.int64),
        drawn.view(np.uint8),
        int(relevant.sum()),
    )


def _pad_to_depth(view) -> np.ndarray:
    """The view's ranking with positions beyond each system's (truncated) depth set to -1."""
    keep = np.arange(view.ranking.shape[1])[None, :] < view.depth[:, None]
    return np.where(keep, view.ranking, -1)
