"""Judging orders of pooling strategies, per topic, from the selection capability.

A pool of a given size is a prefix of its strategy's order. ``depth``
orders documents by their best rank over the pooled runs (ties by system
order), so the depth-k pool is the prefix of the size of the union of the
runs' top k. ``mtf`` is :class:`relimpute.selection.MoveToFront` (Cormack,
Palmer & Clarke 1998) and ``mtc`` :class:`relimpute.selection.MTC`
(Carterette et al. 2006), each replayed over the pooled runs' top
``max_depth`` with the campaign's own judgments as the assessor (a document
the qrels do not judge counts as nonrelevant). Move-to-front's topics do not
interact, so each topic's order is its own; MTC chooses across topics, and a
topic's order is the order in which it judged that topic's documents while
choosing for all of them (so a subset of topics gets the documents MTC would
have judged first for them within the whole set, not a fresh MTC run).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..data import Campaign
from ..selection import SelectionState, get_strategy

STRATEGIES = ("depth", "mtf", "mtc")
#: strategies of ``relimpute power`` unless told (MTC replays at ~130 judgments/s on TREC-8)
DEFAULT_STRATEGIES = ("depth", "mtf")


def best_ranks(campaign: Campaign, pool_systems: Sequence[int]) -> list[np.ndarray]:
    """Per topic, ``(n,)`` best 1-based rank over ``pool_systems`` (0 = not retrieved)."""
    out = []
    for topic in campaign.topics:
        ranks = np.stack([topic.ranks(int(s)) for s in pool_systems]).astype(float)
        ranks[ranks == 0] = np.inf
        best = ranks.min(axis=0)
        out.append(np.where(np.isfinite(best), best, 0).astype(np.int64))
    return out


def depth_order(best: np.ndarray, max_depth: int) -> np.ndarray:
    """Documents with best rank ≤ ``max_depth``, by best rank (stable: index order within a rank)."""
    docs = np.flatnonzero((best > 0) & (best <= max_depth))
    return docs[np.argsort(best[docs], kind="stable")]


def replayed_orders(
    campaign: Campaign, pool_systems: Sequence[str], max_depth: int, strategy: str
) -> list[np.ndarray]:
    """Per topic, the judging order of ``strategy`` (``mtf`` or ``mtc``) over the pooled
    runs' top ``max_depth`` documents, until every one is judged (module docstring)."""
    relevant = campaign.relevant()
    hidden = campaign.truncated(max_depth).with_judged(
        [np.zeros(t.n_docs, dtype=bool) for t in campaign.topics]
    )
    state = SelectionState(hidden, list(pool_systems))
    chooser = get_strategy(strategy, k=max_depth) if strategy == "mtf" else get_strategy(strategy)
    chooser.start(state, np.random.default_rng(0))
    orders: list[list[int]] = [[] for _ in campaign.topics]
    while (choice := chooser.propose(state)) is not None:
        t, d = choice
        grade = campaign.rel_threshold if relevant[t][d] else 0
        p_before = state.record(t, d, grade)
        chooser.observe(state, t, d, p_before)
        orders[t].append(d)
    return [np.asarray(o, dtype=np.int64) for o in orders]
