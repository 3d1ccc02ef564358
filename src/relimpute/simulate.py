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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
    for name in ("n_topics", "n_systems", "depth"):
        value = params[name]
        _check(
            int(value) == value and value >= 1, f"{name} must be a positive integer, got {value!r}"
        )
    _check(depth <= n_docs, f"depth ({depth}) cannot exceed n_docs ({n_docs})")
    _check(n_docs >= 2, "n_docs must be at least 2")
    n_families = -(-n_systems // 3) if n_families is None else n_families
    _check(1 <= n_families <= n_systems, f"n_families must be in [1, n_systems], got {n_families}")
    grade_probs = np.asarray(grade_probs, dtype=float)
    _check(
        grade_probs.ndim == 1
        and len(grade_probs) >= 1
        and (grade_probs >= 0).all()
        and np.isclose(grade_probs.sum(), 1.0),
        "grade_probs must be non-negative and sum to 1",
    )
    _check(
        relevant_median > 0 and relevant_sigma >= 0, "relevant_median > 0 and relevant_sigma >= 0"
    )
    _check(0 <= skill_range[0] <= skill_range[1], "skill_range must be 0 <= low <= high")
    _check(0 <= overlap <= 1, f"overlap must be in [0, 1], got {overlap}")
    _check(0 <= short_fraction <= 1, f"short_fraction must be in [0, 1], got {short_fraction}")
    _check(min(skill_jitter, topic_interaction, doc_noise) >= 0, "noise scales must be >= 0")
    params["n_families"] = n_families
    gen = as_generator(rng)

    family = np.sort(
        np.r_[np.arange(n_families), gen.integers(0, n_families, n_systems - n_families)]
    )
    family_skill = gen.uniform(*skill_range, size=n_families)
    skill = np.maximum(family_skill[family] + skill_jitter * gen.standard_normal(n_systems), 0.0)
    topic_skill = np.maximum(
        skill[:, None] + topic_interaction * gen.standard_normal((n_systems, n_topics)), 0.0
    )
    short = gen.random(n_systems) < short_fraction
    depths = np.where(
        short[:, None], gen.integers(max(depth // 10, 1), depth + 1, (n_systems, n_topics)), depth
    ).astype(np.int32)
    n_relevant = np.clip(
        np.rint(gen.lognormal(np.log(relevant_median), relevant_sigma, n_topics)), 1, n_docs // 2
    ).astype(np.int64)

    digits = len(str(n_docs - 1))  # zero-padded, so the index is in docno order
    doc_ids = np.array([f"d{j:0{digits}d}" for j in range(n_docs)], dtype=object)
    own, shared = np.sqrt(1.0 - overlap), np.sqrt(overlap)
    rows = np.arange(n_systems)[:, None]
    topics = []
    for t in range(n_topics):
        grades = np.zeros(n_docs, dtype=np.int16)
        relevant = gen.choice(n_docs, size=n_relevant[t], replace=False)
        grades[relevant] = 1 + gen.choice(len(grade_probs), size=n_relevant[t], p=grade_probs)
        # float32 throughout: half the memory traffic, and ties stay improbable
        apparent = grades + np.float32(doc_noise) * gen.standard_normal(n_docs, np.float32)
        score = np.float32(shared) * gen.standard_normal((n_families, n_docs), np.float32)[family]
        score += np.float32(own) * gen.standard_normal((n_systems, n_docs), np.float32)
        score += topic_skill[:, t, None].astype(np.float32) * apparent
        top = np.argpartition(-score, depth - 1, axis=1)[:, :depth]
        top = np.take_along_axis(top, np.argsort(-score[rows, top], axis=1), axis=1)
        width = int(depths[:, t].max())  # as Campaign.from_frames: no all-padding columns
        ranking = np.where(np.arange(width) < depths[:, t, None], top[:, :width], -1)
        topics.append(
            TopicData(
                query_id=f"{t + 1:0{len(str(n_topics))}d}",
                doc_ids=doc_ids,
                grades=grades,
                judged=np.ones(n_docs, dtype=bool),
                ranking=ranking.astype(np.int32),
                depth=depths[:, t].copy(),
            )
        )
    systems = tuple(f"s{s:0{len(str(n_systems - 1))}d}" for s in range(n_systems))
    campaign = Campaign(systems=systems, topics=tuple(topics), rel_threshold=rel_threshold)
    return SimulatedCampaign(
        campaign=campaign,
        skill=skill,
        topic_skill=topic_skill,
        family=family,
        n_relevant=n_relevant,
        params=params,
    )
