"""A campaign compared in topic parts, on one machine or a Dask cluster.

MAP is a mean over topics. Split the T topics into parts of T_i; fit the relevance model on
each part's judgments and score its topics there; then MAP = Σ_i (T_i / T) MAP_i. Given the
estimate the topics are independent (Carterette 2007 §2.1: Var MAP = Σ_t Var AP_t / T²), so
the parts combine without loss:

- the exact engine's per-topic moments are put side by side, and the combined moments and the
  normal P(ΔMAP > 0) are the ones the engine forms from them (:func:`combine`);
- Monte Carlo: draw k of the whole is Σ_i (T_i / T) times draw k of each part (independent
  parts, so a draw of the sum), and P(ΔMAP > 0) is read from those draws.

With a model whose topics share no parameter (the uniform prior; the ``qrels`` estimand) and
the exact engine the answer is the one machine's; a model that shares parameters across topics
(the default model's feature weights and run effects) fits them on each part's topics alone:
that is the approximation, and ``benchmarks/bench_topic_parts.py`` measures it. Each part's
fit and draws are seeded from (seed, part), so the answer does not depend on where or in which
order the parts run (serial, joblib, a Dask cluster: the same numbers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..data import Campaign
from .engine import ConfidenceEngine
from .montecarlo import _pair_summaries
from .results import Comparison, SystemScores, prob_positive


def topic_parts(campaign: Campaign, parts: int) -> list[list[str]]:
    """The campaign's topics in ``parts`` contiguous groups of sizes differing by at most one."""
    if int(parts) != parts or parts < 1:
        raise ValueError(f"parts must be a positive integer, got {parts!r}")
    if parts > campaign.n_topics:
        raise ValueError(f"{parts} parts for {campaign.n_topics} topics: at most one part a topic")
    ids = list(campaign.query_ids)
    return [list(group) for group in np.array_split(np.array(ids, dtype=object), int(parts))]


def part_seed(seed: int, part: int) -> int:
    """The seed of one part's fit and draws: a function of (seed, part) only (part −1: the
    draws every part shares)."""
    return int(np.random.SeedSequence([int(seed), int(part) + 1]).generate_state(1)[0])


def compare_in_parts(
    campaign: Campaign,
    parts: int,
    *,
    model: str | None = None,
    prior: float | None = None,
    systems: Sequence[str] | None = None,
    engine: ConfidenceEngine | None = None,
    measure: str = "AP",
    method: str = "auto",
    n_draws: int = 4000,
    seed: int = 0,
    jobs: int | None = 1,
    scheduler: Any = None,
    progress: bool = True,
) -> Comparison:
    """Every pair of ``systems`` (all by default) compared as the module docstring says.

    ``model`` names the relevance model fitted on each part (a registered name or a settings
    file; the default model when None); ``prior`` fits the uniform prior instead (no shared
    parameter); ``engine`` the estimand (``complete`` by default). ``jobs`` runs the parts on
    joblib processes, ``scheduler`` (an address, ``"local"`` or a ``distributed.Client``) on
    a Dask cluster; each part is sent to one worker only.
    """
    from ..studies.parallel import map_units

    engine = engine or ConfidenceEngine()
    groups = topic_parts(campaign, parts)
    names = list(systems) if systems is not None else list(campaign.systems)
    spec = {"model": model, "prior": prior, "systems": names, "engine": engine,
            "measure": measure, "method": method, "n_draws": int(n_draws),
            "shared_seed": part_seed(seed, -1)}  # fmt: skip
    seeds = [part_seed(seed, i) for i in range(len(groups))]
    units = [(i, campaign.subset(topics=g), s) for i, (g, s) in enumerate(zip(groups, seeds))]
    results = map_units(_score_part, units, shared={"spec": spec}, jobs=jobs, client=scheduler,
                        desc="topic parts", unit="part", progress=progress)  # fmt: skip
    return combine(results, campaign.query_ids)


def _score_part(unit: tuple[int, Campaign, int], spec: Mapping[str, Any]) -> Comparison:
    """One part: its model fitted on its judgments, its comparison (seeded from the part)."""
    from ..relevance import Uniform, load_model
    from .binary import predict_for

    _, part, seed = unit
    engine: ConfidenceEngine = spec["engine"]
    estimate = None
    if engine.estimand != "qrels":
        if spec["prior"] is not None:
            estimate = Uniform(prior=spec["prior"]).fit_predict(part)
        else:
            model = load_model() if spec["model"] is None else load_model(spec["model"])
            model.fit(part, rng=seed)
            if hasattr(model, "share_draws"):  # what every topic shares: drawn alike in every part
                model.share_draws(spec["shared_seed"])
            estimate = predict_for(model, part, [spec["measure"]])
    return engine.confidence(part, estimate, systems=spec["systems"], measure=spec["measure"],
                             method=spec["method"], n_draws=spec["n_draws"], rng=seed)  # fmt: skip


def combine(parts: Sequence[Comparison], query_ids: Sequence[str]) -> Comparison:
    """One :class:`Comparison` of the parts' topics together (module docstring), its topics in
    ``query_ids``' order. Every part must compare the same systems by the same method."""
    first = parts[0].scores
    for part in parts[1:]:
        if part.scores.systems != first.systems or part.scores.method != first.method:
            raise ValueError("the parts compare different systems or use different methods")
    got = [q for part in parts for q in part.scores.query_ids]
    if got != list(query_ids):  # contiguous parts, in the campaign's order (topic_parts)
        raise ValueError("the parts do not hold each of the campaign's topics once, in order")
    n_topics = len(got)
    weights = np.array([len(part.scores.query_ids) / n_topics for part in parts])
    e_ap = np.concatenate([part.scores.e_ap for part in parts], axis=1)
    var_ap = np.concatenate([part.scores.var_ap for part in parts], axis=1)
    pairs = parts[0].pairs
    if first.draws is not None:  # Monte Carlo: draw k of the whole from draw k of every part
        draws = sum(w * part.scores.draws for w, part in zip(weights, parts))
        e_map, var_map = draws.mean(axis=0), draws.var(axis=0)
        e_delta, var_delta, p_better = _pair_summaries(draws, pairs)
        e_delta_ap = var_delta_ap = None
    else:
        # the engine's own sums over the topics (bit for bit the one machine's), plus what a
        # part adds beyond its topics' sum (the pool estimand's shared shift, fitted per part)
        draws = None
        e_delta_ap = np.concatenate([part.e_delta_ap for part in parts], axis=1)
        var_delta_ap = np.concatenate([part.var_delta_ap for part in parts], axis=1)
        e_map, e_delta = e_ap.mean(axis=1), e_delta_ap.mean(axis=1)
        var_map = var_ap.sum(axis=1) / n_topics**2 + _beyond_topics(
            weights, [(p.scores.var_map, p.scores.var_ap) for p in parts])
        var_delta = var_delta_ap.sum(axis=1) / n_topics**2 + _beyond_topics(
            weights, [(p.var_delta_map, p.var_delta_ap) for p in parts])
        p_better = prob_positive(e_delta, var_delta)
    scores = SystemScores(
        systems=first.systems,
        query_ids=tuple(got),
        e_ap=e_ap,
        var_ap=var_ap,
        e_map=e_map,
        var_map=var_map,
        measure=first.measure,
        method=first.method,
        ratio=first.ratio,
        draws=draws,
        sources=first.sources,
        estimand=first.estimand,
        clusters=first.clusters,
    )
    return Comparison(pairs=pairs, e_delta_map=e_delta, var_delta_map=var_delta,
                      p_a_better=p_better, scores=scores, e_delta_ap=e_delta_ap,
                      var_delta_ap=var_delta_ap)  # fmt: skip


def _beyond_topics(weights: np.ndarray, parts: Sequence[tuple[np.ndarray, np.ndarray]]):
    """Σ_i w_i² (Var_i − Σ_t Var_t / T_i²): the variance each part states beyond its
    topics'."""
    extra = 0.0
    for w, (var_mean, var_topic) in zip(weights, parts):
        beyond = var_mean - var_topic.sum(axis=1) / var_topic.shape[1] ** 2
        if np.any(beyond != 0.0):
            extra = extra + w**2 * beyond
    return extra
