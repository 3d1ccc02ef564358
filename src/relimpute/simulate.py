"""Synthetic test collections with known answers.

:func:`simulate_campaign` draws a seeded campaign that looks like a TREC
ad hoc task: topics whose number of relevant documents varies widely
(lognormal), graded labels, systems of varying quality, families of
near-duplicate systems (one team's variants) that share most of their
ranking, some short runs, and *complete* qrels, so every measure has a true
value. :meth:`Campaign.pooled <relimpute.data.Campaign.pooled>` then hides every judgment outside the depth-k pool,
as TREC pooling does (Cormack & Lynam 2007, §1: only the top-ranked k
documents of each system are adjudicated).

The generative model, per topic ``t`` and document ``d`` (``z`` standard normal):

- ``R_t ~ round(LogNormal(log(relevant_median), relevant_sigma))``, clipped to
  ``[1, n_docs // 2]``, documents chosen at random are relevant, with grades
  ``1..len(grade_probs)`` drawn with ``grade_probs``; the rest have grade 0;
- apparent relevance ``a_td = grade_td + doc_noise * z_td`` (shared by all
  systems: some relevant documents are hard for everyone);
- system ``s`` of family ``f(s)`` has skill ``b_s = B_f + skill_jitter * z_s``
  with ``B_f ~ Uniform(skill_range)``, and on topic ``t`` skill
  ``b_st = max(0, b_s + topic_interaction * z_st)``;
- score ``y_std = b_st * a_td + sqrt(overlap) * e_f(s)td + sqrt(1 - overlap) * e_std``
  with family noise ``e_ftd`` and own noise ``e_std``; the run is the top
  ``depth_st`` documents by score, where ``depth_st = depth`` except for
  short systems (a ``short_fraction`` of them), whose depth on each topic is
  uniform on ``[depth // 10, depth]``.

Higher skill puts relevant documents earlier (MAP rises with skill);
``overlap`` near 1 makes a family's runs near-identical.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._display import short_repr
from .data import Campaign, TopicData
from .relevance.base import as_generator


@dataclass(frozen=True, slots=True, eq=False)
class SimulatedCampaign:
    """A synthetic campaign with complete qrels and the parameters that made it.

    Attributes
    ----------
    campaign
        Every document of every topic judged (the ground truth).
    skill
        ``(S,)`` each system's skill ``b_s`` (higher = relevant documents earlier).
    topic_skill
        ``(S, T)`` the per-topic skill ``b_st`` actually used.
    family
        ``(S,)`` family of near-duplicate systems each system belongs to.
    n_relevant
        ``(T,)`` number of documents with grade >= 1 per topic.
    params
        The arguments of :func:`simulate_campaign`, including the seed.
    """

    campaign: Campaign
    skill: np.ndarray
    topic_skill: np.ndarray
    family: np.ndarray
    n_relevant: np.ndarray
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """One row per system: ``system, family, skill, mean_depth``."""
        depth = np.stack([t.depth for t in self.campaign.topics], axis=1)
        return pd.DataFrame(
            {
                "system": list(self.campaign.systems),
                "family": self.family,
                "skill": self.skill,
                "mean_depth": depth.mean(axis=1),
            }
        )

    def __repr__(self) -> str:
        c = self.campaign
        return short_repr(
            self, f"{c.n_systems} systems", f"{c.n_topics} topics", f"rng={self.params.get('rng')!r}"
        )

    def __str__(self) -> str:
        c = self.campaign
        return (
            f"SimulatedCampaign: {c.n_systems} systems in {len(np.unique(self.family))} families, "
            f"{c.n_topics} topics, {self.params.get('n_docs')} documents per topic, "
            f"relevant per topic {int(self.n_relevant.min())}-{int(self.n_relevant.max())} "
            f"(median {np.median(self.n_relevant):g}), skill "
            f"{self.skill.min():.2f}-{self.skill.max():.2f}, seed {self.params.get('rng')!r}"
        )


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def simulate_campaign(
    n_topics: int = 25,
    n_systems: int = 12,
    n_docs: int = 2000,
    depth: int = 100,
    *,
    n_families: int | None = None,
    relevant_median: float = 40.0,
    relevant_sigma: float = 0.8,
    grade_probs: Sequence[float] = (0.5, 0.3, 0.2),
    skill_range: tuple[float, float] = (0.3, 2.5),
    skill_jitter: float = 0.1,
    topic_interaction: float = 0.3,
    doc_noise: float = 0.7,
    overlap: float = 0.7,
    short_fraction: float = 0.2,
    rel_threshold: int = 1,
    rng: int | np.random.Generator | None = None,
) -> SimulatedCampaign:
    """Draw a synthetic campaign with complete graded qrels (model in the module docstring).

    Parameters
    ----------
    n_topics, n_systems, n_docs, depth
        Campaign size: documents per topic, and documents retrieved per run
        and topic (at most ``n_docs``).
    n_families
        Families of near-duplicate systems (default ``ceil(n_systems / 3)``).
    relevant_median, relevant_sigma
        Lognormal prevalence: median number of relevant documents per topic
        and the spread (sd of its log).
    grade_probs
        Probabilities of grades ``1, 2, ...`` among relevant documents.
    skill_range, skill_jitter, topic_interaction
        Family skills are uniform on ``skill_range``; systems deviate from
        their family by ``skill_jitter`` sd and from topic to topic by
        ``topic_interaction`` sd.
    doc_noise
        Sd of the document effect shared by all systems.
    overlap
        Share of a system's score noise common to its family, in [0, 1].
    short_fraction
        Fraction of systems with short runs (depth uniform on
        ``[depth // 10, depth]`` per topic).
    rel_threshold
        The campaign's binary relevance threshold.
    rng
        Seed or Generator; the same seed gives the same campaign.
    """
    params = {
        "n_topics": n_topics,
        "n_systems": n_systems,
        "n_docs": n_docs,
        "depth": depth,
        "n_families": n_families,
        "relevant_median": relevant_median,
        "relevant_sigma": relevant_sigma,
        "grade_probs": tuple(grade_probs),
        "skill_range": tuple(skill_range),
        "skill_jitter": skill_jitter,
        "topic_interaction": topic_interaction,
        "doc_noise": doc_noise,
        "overlap": overlap,
        "short_fraction": short_fraction,
        "rel_threshold": rel_threshold,
        "rng": rng,
    }
    params, grade_probs = _checked(params)
    gen = as_generator(rng)
    plan = _plan(gen, params, grade_probs)
    topics = tuple(_topics(gen, plan))
    campaign = Campaign(systems=plan.systems, topics=topics, rel_threshold=rel_threshold)
    return SimulatedCampaign(
        campaign=campaign,
        skill=plan.skill,
        topic_skill=plan.topic_skill,
        family=plan.family,
        n_relevant=plan.n_relevant,
        params=params,
    )


def _checked(params: dict[str, Any]) -> tuple[dict[str, Any], np.ndarray]:
    """The arguments of :func:`simulate_campaign` checked, ``n_families`` filled in."""
    p = params
    for name in ("n_topics", "n_systems", "depth"):
        value = p[name]
        _check(
            int(value) == value and value >= 1, f"{name} must be a positive integer, got {value!r}"
        )
    _check(p["depth"] <= p["n_docs"], f"depth ({p['depth']}) cannot exceed n_docs ({p['n_docs']})")
    _check(p["n_docs"] >= 2, "n_docs must be at least 2")
    n_families = -(-p["n_systems"] // 3) if p["n_families"] is None else p["n_families"]
    _check(
        1 <= n_families <= p["n_systems"],
        f"n_families must be in [1, n_systems], got {n_families}",
    )
    grade_probs = np.asarray(p["grade_probs"], dtype=float)
    _check(
        grade_probs.ndim == 1
        and len(grade_probs) >= 1
        and (grade_probs >= 0).all()
        and np.isclose(grade_probs.sum(), 1.0),
        "grade_probs must be non-negative and sum to 1",
    )
    _check(
        p["relevant_median"] > 0 and p["relevant_sigma"] >= 0,
        "relevant_median > 0 and relevant_sigma >= 0",
    )
    low, high = p["skill_range"]
    _check(0 <= low <= high, "skill_range must be 0 <= low <= high")
    _check(0 <= p["overlap"] <= 1, f"overlap must be in [0, 1], got {p['overlap']}")
    _check(
        0 <= p["short_fraction"] <= 1,
        f"short_fraction must be in [0, 1], got {p['short_fraction']}",
    )
    _check(
        min(p["skill_jitter"], p["topic_interaction"], p["doc_noise"]) >= 0,
        "noise scales must be >= 0",
    )
    return {**p, "n_families": n_families}, grade_probs


@dataclass(frozen=True, slots=True)
class _Plan:
    """The draws made once per campaign (systems, families, depths, topic sizes)."""

    systems: tuple[str, ...]
    family: np.ndarray
    skill: np.ndarray
    topic_skill: np.ndarray
    depths: np.ndarray
    n_relevant: np.ndarray
    grade_probs: np.ndarray
    params: Mapping[str, Any]


def _plan(gen: np.random.Generator, params: Mapping[str, Any], grade_probs: np.ndarray) -> _Plan:
    """Draw the systems and topic sizes, in the order :func:`simulate_campaign` always has."""
    n_systems, n_topics, n_families = params["n_systems"], params["n_topics"], params["n_families"]
    depth, n_docs = params["depth"], params["n_docs"]
    family = np.sort(
        np.r_[np.arange(n_families), gen.integers(0, n_families, n_systems - n_families)]
    )
    family_skill = gen.uniform(*params["skill_range"], size=n_families)
    skill = np.maximum(
        family_skill[family] + params["skill_jitter"] * gen.standard_normal(n_systems), 0.0
    )
    topic_skill = np.maximum(
        skill[:, None] + params["topic_interaction"] * gen.standard_normal((n_systems, n_topics)),
        0.0,
    )
    short = gen.random(n_systems) < params["short_fraction"]
    depths = np.where(
        short[:, None], gen.integers(max(depth // 10, 1), depth + 1, (n_systems, n_topics)), depth
    ).astype(np.int32)
    n_relevant = np.clip(
        np.rint(gen.lognormal(np.log(params["relevant_median"]), params["relevant_sigma"], n_topics)),
        1,
        n_docs // 2,
    ).astype(np.int64)
    systems = tuple(f"s{s:0{len(str(n_systems - 1))}d}" for s in range(n_systems))
    return _Plan(systems, family, skill, topic_skill, depths, n_relevant, grade_probs, params)


def _topics(gen: np.random.Generator, plan: _Plan) -> Iterator[TopicData]:
    """Each topic's complete judgments and rankings, drawn one topic at a time."""
    params = plan.params
    n_docs, depth, n_topics = params["n_docs"], params["depth"], params["n_topics"]
    n_families, n_systems = params["n_families"], len(plan.systems)
    digits = len(str(n_docs - 1))  # zero-padded, so the index is in docno order
    doc_ids = np.array([f"d{j:0{digits}d}" for j in range(n_docs)], dtype=object)
    own, shared = np.sqrt(1.0 - params["overlap"]), np.sqrt(params["overlap"])
    doc_noise = np.float32(params["doc_noise"])
    rows = np.arange(n_systems)[:, None]
    for t in range(n_topics):
        grades = np.zeros(n_docs, dtype=np.int16)
        n_rel = plan.n_relevant[t]
        relevant = gen.choice(n_docs, size=n_rel, replace=False)
        grades[relevant] = 1 + gen.choice(len(plan.grade_probs), size=n_rel, p=plan.grade_probs)
        # float32 throughout: half the memory traffic, and ties stay improbable
        apparent = grades + doc_noise * gen.standard_normal(n_docs, np.float32)
        score = np.float32(shared) * gen.standard_normal((n_families, n_docs), np.float32)[plan.family]
        score += np.float32(own) * gen.standard_normal((n_systems, n_docs), np.float32)
        score += plan.topic_skill[:, t, None].astype(np.float32) * apparent
        top = np.argpartition(-score, depth - 1, axis=1)[:, :depth]
        top = np.take_along_axis(top, np.argsort(-score[rows, top], axis=1), axis=1)
        width = int(plan.depths[:, t].max())  # as Campaign.from_frames: no all-padding columns
        ranking = np.where(np.arange(width) < plan.depths[:, t, None], top[:, :width], -1)
        yield TopicData(
            query_id=f"{t + 1:0{len(str(n_topics))}d}",
            doc_ids=doc_ids,
            grades=grades,
            judged=np.ones(n_docs, dtype=bool),
            ranking=ranking.astype(np.int32),
            depth=plan.depths[:, t].copy(),
        )


#: Campaign sizes for the scale benchmarks: today's (TREC RAG 2024: 301 topics, 77 runs of 100
#: segments) and the Million Query track's (10,000 topics; 40 runs cut at 100).
SIZES: dict[str, dict[str, int]] = {
    "rag-2024": {"n_topics": 301, "n_systems": 77, "depth": 100, "n_docs": 2000},
    "million-query": {"n_topics": 10_000, "n_systems": 40, "depth": 100, "n_docs": 1000},
}


def write_simulated(
    folder: str | os.PathLike,
    size: str | None = None,
    *,
    pool_depth: int = 10,
    rng: int | np.random.Generator | None = 0,
    **params: Any,
) -> dict[str, Any]:
    """Write a simulated campaign as TREC files, one topic at a time (memory of one topic).

    ``folder`` receives ``qrels.txt`` (the judgments of the depth-``pool_depth`` pool of
    every run, as TREC pools), ``runs/<system>.txt`` and ``simulation.json`` (the parameters,
    seed and line counts). ``size`` names a row of :data:`SIZES`; ``params`` are
    :func:`simulate_campaign`'s and override it. The same seed writes the same files, and the
    topics are :func:`simulate_campaign`'s for the same arguments. The files appear together:
    they are written in a temporary folder beside ``folder`` and renamed into place.
    """
    folder = Path(folder)
    if size is not None and size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    _check(int(pool_depth) == pool_depth and pool_depth >= 1, "pool_depth must be >= 1")
    if folder.exists():
        raise FileExistsError(f"{folder} exists: give a new folder")
    defaults = {
        name: p.default
        for name, p in inspect.signature(simulate_campaign).parameters.items()
        if name != "rng"
    }
    unknown = set(params) - set(defaults)
    if unknown:
        raise TypeError(f"unknown simulate_campaign arguments: {', '.join(sorted(unknown))}")
    params_all, grade_probs = _checked({**defaults, **(SIZES[size] if size else {}), **params})
    gen = as_generator(rng)
    plan = _plan(gen, params_all, grade_probs)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        (work / "runs").mkdir()
        counts = _write_files(work, gen, plan, pool_depth)
        seed = rng if isinstance(rng, int) else None
        record = {"size": size, "pool_depth": pool_depth, "seed": seed, "params": params_all, **counts}
        (work / "simulation.json").write_text(json.dumps(record, indent=1) + "\n")
        os.replace(work, folder)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return record


def _write_files(work: Path, gen: np.random.Generator, plan: _Plan, pool_depth: int) -> dict:
    """Stream every topic's pool judgments and run lines into ``work``; the line counts."""
    handles = [open(work / "runs" / f"{s}.txt", "w", encoding="ascii") for s in plan.systems]
    qrels_lines = run_lines = 0
    try:
        with open(work / "qrels.txt", "w", encoding="ascii") as qrels:
            for topic in _topics(gen, plan):
                qid, ids = topic.query_id, topic.doc_ids
                pooled = np.unique(topic.ranking[:, :pool_depth])
                pooled = pooled[pooled >= 0]
                qrels.writelines(f"{qid} 0 {ids[d]} {topic.grades[d]}\n" for d in pooled)
                qrels_lines += len(pooled)
                for s, handle in enumerate(handles):
                    docs = topic.ranking[s, : topic.depth[s]]
                    handle.write("".join(
                        f"{qid} Q0 {ids[d]} {r} {1000 - r} {plan.systems[s]}\n"
                        for r, d in enumerate(docs, 1)
                    ))
                    run_lines += len(docs)
    finally:
        for handle in handles:
            handle.close()
    return {"qrels_lines": qrels_lines, "run_lines": run_lines}
