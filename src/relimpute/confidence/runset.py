"""What the engine scores: the run set and pairs by name, and each topic cut to it.

:func:`select_runs` checks a campaign, an estimate and the systems and pairs asked for, and
:func:`topic_views` cuts every topic to those runs and the evaluation depth, in the dtypes the
kernels read. The engine and the conditioned draws (:mod:`relimpute.confidence.conditioned`)
read the same views, so their draws agree draw for draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..data import Campaign, TopicData
from ..relevance.base import RelevanceEstimate
from .moments import counted_documents


@dataclass(frozen=True, slots=True)
class TopicView:
    """One topic restricted to the evaluated run set and depth, in kernel dtypes."""

    ranking: np.ndarray  # (S, D) int64, -1 padded
    depth: np.ndarray  # (S,) int64
    counted: np.ndarray  # (n,) bool: documents whose relevance counts towards R


def topic_view(topic: TopicData, rows: np.ndarray, depth: int | None = None, labelled=None) -> TopicView:
    """``topic`` cut to the campaign ``rows`` and ``depth`` (None: full depth); ``labelled``
    the documents a label source names there (they count in R)."""
    run_depth = topic.depth[rows].astype(np.int64)
    width = int(run_depth.max(initial=0))
    if depth is not None:
        run_depth = np.minimum(run_depth, depth)
        width = min(width, depth)
    ranking = np.ascontiguousarray(topic.ranking[rows, :width], dtype=np.int64)
    return TopicView(ranking, run_depth, counted_documents(topic, None, depth, labelled))


def topic_views(campaign: Campaign, rows: np.ndarray, depth: int | None = None) -> list[TopicView]:
    """:func:`topic_view` of every topic, with the documents the campaign's label sources name."""
    from ..labels import labelled_documents

    labelled = labelled_documents(campaign) or [None] * campaign.n_topics
    return [topic_view(topic, rows, depth, named) for topic, named in zip(campaign.topics, labelled)]


def select_runs(
    campaign: Campaign,
    estimate: RelevanceEstimate,
    systems: Sequence[str] | None,
    pairs: Sequence[tuple[str, str]] | None,
) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
    """Validate inputs; return campaign rows of the run set, its names and pair indices into it."""
    if campaign.n_topics == 0:
        raise ValueError("the campaign has no topics")
    if tuple(estimate.query_ids) != campaign.query_ids:
        raise ValueError(
            "the estimate's topics do not match the campaign's (predict on this campaign)"
        )
    for topic, p in zip(campaign.topics, estimate.p):
        if p.shape != (topic.n_docs,):
            raise ValueError(
                f"topic {topic.query_id}: estimate has {p.shape[0]} documents, campaign {topic.n_docs}"
            )
    if systems is None:
        rows = np.arange(campaign.n_systems)
    else:
        if isinstance(systems, str):
            systems = [systems]
        if len(set(systems)) != len(systems):
            raise ValueError("systems must not repeat")
        rows = campaign.system_index(list(systems))
    names = tuple(campaign.systems[i] for i in rows)
    if pairs is None:
        a, b = np.triu_indices(len(rows), k=1)
        return rows, names, np.stack([a, b], axis=1).astype(np.int64)
    lookup = {name: i for i, name in enumerate(names)}
    out = []
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError(f"a pair is two system names, got {pair!r}")
        a, b = pair
        for name in (a, b):
            if name not in lookup:
                raise KeyError(f"system {name!r} of pair ({a!r}, {b!r}) is not in the run set")
        if a == b:
            raise ValueError(f"cannot compare {a!r} with itself")
        out.append((lookup[a], lookup[b]))
    return rows, names, np.array(out, dtype=np.int64).reshape(-1, 2)
