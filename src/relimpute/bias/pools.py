"""Depth-k pools from any subset of runs, and the reduced pools of leave-one-out studies.

A depth-k pool of a set of runs is, per topic, every document some run of the
set ranks within the top k (trec_eval order). Its *qrels* are the campaign's
judgments restricted to it: scoring against them is scoring as if only those
runs had been pooled. Leaving a run (or a group's runs) out of the pool marks
the documents only it contributed as unjudged (Webber & Park 2009 §2.2;
Lipani et al. 2016 §4.1). Only runs flagged ``pooled`` contribute. The
campaign judged on such a pool is :meth:`relimpute.data.Campaign.pooled`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._deprecation import renamed_kwargs
from ..data import Campaign
from ..groups import RunGroups


@renamed_kwargs(depth="pool_depth")
def pool_counts(
    campaign: Campaign, systems: Sequence[str] | np.ndarray, pool_depth: int
) -> list[np.ndarray]:
    """Per topic, ``(n,)`` int32: how many of ``systems`` rank each document within
    ``pool_depth``."""
    check_depth(pool_depth)
    rows = campaign.system_rows(systems)
    out = []
    for topic in campaign.topics:
        top = topic.ranking[rows, :pool_depth]
        out.append(np.bincount(top[top >= 0], minlength=topic.n_docs).astype(np.int32))
    return out


@renamed_kwargs(depth="pool_depth")
def depth_pool(
    campaign: Campaign, systems: Sequence[str] | np.ndarray, pool_depth: int
) -> list[np.ndarray]:
    """Per topic, ``(n,)`` bool: the depth-``pool_depth`` pool of ``systems``."""
    return [c > 0 for c in pool_counts(campaign, systems, pool_depth)]


@renamed_kwargs(depth="pool_depth")
def check_depth(pool_depth: int) -> int:
    if int(pool_depth) != pool_depth or pool_depth < 1:
        raise ValueError(f"pool depth must be a positive integer, got {pool_depth!r}")
    return int(pool_depth)


@dataclass(frozen=True, slots=True)
class LeaveOutPool:
    """One leave-out step: the runs left out and the campaign judged on the others' pool."""

    left_out: tuple[str, ...]
    kept: tuple[str, ...]
    campaign: Campaign
    label: str


@renamed_kwargs(depth="pool_depth")
def leave_one_run_out(
    campaign: Campaign, pooled: Sequence[str], pool_depth: int
) -> Iterator[LeaveOutPool]:
    """For each pooled run, the campaign judged on the depth-``pool_depth`` pool of the others."""
    for run in pooled:
        kept = tuple(r for r in pooled if r != run)
        yield LeaveOutPool((run,), kept, campaign.pooled(pool_depth, kept), run)


@renamed_kwargs(depth="pool_depth")
def leave_one_group_out(
    campaign: Campaign, groups: RunGroups, pool_depth: int, *, runs: Sequence[str] | None = None
) -> Iterator[LeaveOutPool]:
    """Per group with a pooled run: the campaign judged on the other groups' pooled runs' pool.

    ``left_out`` holds the group's *pooled* runs (those whose full-pool score
    includes their own contribution); unpooled runs never contribute.
    """
    for group, left, kept in group_leave_outs(campaign, groups, runs=runs):
        yield LeaveOutPool(left, kept, campaign.pooled(pool_depth, kept), group)


def group_leave_outs(
    campaign: Campaign, groups: RunGroups, *, runs: Sequence[str] | None = None
) -> Iterator[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """``(group, left out, kept)`` of each step of :func:`leave_one_group_out`, without
    building its campaign (a study builds it where the step runs)."""
    runs = tuple(campaign.systems if runs is None else runs)
    groups.check_runs(runs)
    pooled = groups.pooled_runs(runs)
    for group in groups.group_names():
        left = tuple(r for r in groups.members(group, pooled_only=True) if r in runs)
        if left:
            yield group, left, tuple(r for r in pooled if r not in left)


@renamed_kwargs(depth="pool_depth")
def pool_reproduction(campaign: Campaign, systems: Sequence[str], pool_depth: int) -> pd.DataFrame:
    """How exactly the depth-``pool_depth`` pool of ``systems`` reproduces the campaign's judgments.

    One row per topic and a final ``all`` row: ``pool`` documents in the pool,
    ``judged`` judged documents, ``pool_judged`` pool documents judged,
    ``judged_outside`` judged documents outside the pool, and the shares
    ``pool_judged_share`` (1 = the pool is fully judged) and
    ``exact`` (pool and judgments are the same set).
    """
    rows = []
    for topic, pool in zip(campaign.topics, depth_pool(campaign, systems, pool_depth)):
        rows.append(
            {
                "query_id": topic.query_id,
                "pool": int(pool.sum()),
                "judged": int(topic.judged.sum()),
                "pool_judged": int((pool & topic.judged).sum()),
                "judged_outside": int((topic.judged & ~pool).sum()),
            }
        )
    frame = pd.DataFrame(rows)
    total = frame[["pool", "judged", "pool_judged", "judged_outside"]].sum()
    frame = pd.concat(
        [frame, pd.DataFrame([{"query_id": "all", **total.to_dict()}])], ignore_index=True
    )
    frame["pool_judged_share"] = frame["pool_judged"] / frame["pool"].where(frame["pool"] > 0)
    frame["exact"] = (frame["pool_judged"] == frame["pool"]) & (frame["judged_outside"] == 0)
    return frame
