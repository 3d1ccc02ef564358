"""Pooling orders: incremental (IP), depth-k, and move-to-front (MTF).

These strategies do not look at probabilities of relevance; unjudged
documents are taken as nonrelevant (``prior=0``, the trec_eval convention
and Carterette 2007 §4.3's treatment of IP), so the loop's confidence is
that of the judged-only evaluation (variance 0). Run them to a budget
(``confidence=None``); the judging order is the trace, and the pool at any budget
``b`` is its first ``b`` judgments.

Orders, exactly (``K`` compared systems in the order given, topics in the
campaign's order; documents already judged or skipped are passed over):

IP (Carterette 2007 §4.3)
    Round-robin by rank depth across topics: rank 1 of topic 1 for system 1,
    2, ..., K, then rank 1 of topic 2, ..., rank 1 of the last topic, then
    rank 2 of topic 1, and so on.
Depth-k
    The depth-``k`` pool, topic by topic: within a topic, documents by
    their best (smallest) rank over the systems, ties by system order.
MTF (Cormack, Palmer & Clarke 1998, local move-to-front, as studied by
Cormack & Lynam 2007)
    Per topic every run has a priority, initially 0. The current run is the
    one with the highest priority (ties: system order); its next unjudged
    document is judged. A relevant document keeps the run current; a
    nonrelevant one lowers its priority by 1 and the highest-priority run
    becomes current. A run with nothing left (or past ``k``) drops out.
    Topics take turns: one judgment per topic per round, in campaign order.
"""

from __future__ import annotations

import numpy as np

from .base import SelectionState, SelectionStrategy, register_strategy, set_prior


class _Pooling(SelectionStrategy):
    """Shared part: fixed prior for unjudged documents."""

    def _set_prior(self, state: SelectionState) -> None:
        set_prior(state, self.prior)


class _FixedOrder(_Pooling):
    """A precomputed order walked with a cursor."""

    def _start(self, state: SelectionState) -> None:
        self._set_prior(state)
        self.order_ = self._order(state)
        self.cursor_ = 0

    def _propose(self, state: SelectionState) -> tuple[int, int] | None:
        while self.cursor_ < len(self.order_):
            t, i = self.order_[self.cursor_]
            if state.candidates[t][i]:
                return int(t), int(i)
            self.cursor_ += 1
        return None

    def _order(self, state: SelectionState) -> np.ndarray:
        raise NotImplementedError


def _ranked_docs(state: SelectionState, t: int, k: int | None) -> np.ndarray:
    """``(K, D)`` document indices of the compared systems on topic ``t`` (-1 padded)."""
    topic = state.campaign.topics[t]
    rows = topic.ranking[state.compared]
    return rows if k is None else rows[:, :k]


class IncrementalPooling(_FixedOrder):
    """IP: documents in rank order across topics (Carterette 2007 §4.3).

    Parameters
    ----------
    prior
        Probability assumed for unjudged documents (0: nonrelevant).
    """

    name = "ip"

    def __init__(self, prior: float = 0.0):
        self.prior = prior

    def _order(self, state):
        width = max(
            (_ranked_docs(state, t, None).shape[1] for t in range(state.n_topics)), default=0
        )
        parts = []
        for t in range(state.n_topics):
            rows = _ranked_docs(state, t, None)
            padded = np.full((rows.shape[0], width), -1)
            padded[:, : rows.shape[1]] = rows
            # key: (rank, topic, system)
            rank, system = np.meshgrid(np.arange(width), np.arange(rows.shape[0]), indexing="ij")
            parts.append(
                np.stack([rank.ravel(), np.full(rank.size, t), system.ravel(), padded.T.ravel()], 1)
            )
        table = np.concatenate(parts) if parts else np.zeros((0, 4), dtype=int)
        table = table[table[:, 3] >= 0]
        table = table[np.lexsort((table[:, 2], table[:, 1], table[:, 0]))]
        return _first_occurrences(table[:, [1, 3]])


class DepthPooling(_FixedOrder):
    """Depth-k pooling: the union of every compared system's top ``k``.

    Parameters
    ----------
    k
        Pool depth (TREC's usual 100).
    prior
        Probability assumed for unjudged documents (0: nonrelevant).
    """

    name = "depth"

    def __init__(self, k: int = 100, prior: float = 0.0):
        self.k = k
        self.prior = prior

    def _order(self, state):
        if int(self.k) < 1:
            raise ValueError(f"k must be a positive integer, got {self.k}")
        parts = []
        for t in range(state.n_topics):
            rows = _ranked_docs(state, t, int(self.k))
            rank, system = np.meshgrid(
                np.arange(rows.shape[1]), np.arange(rows.shape[0]), indexing="ij"
            )
            docs = rows.T.ravel()
            keep = docs >= 0
            table = np.stack(
                [np.full(keep.sum(), t), rank.ravel()[keep], system.ravel()[keep], docs[keep]], 1
            )
            parts.append(table[np.lexsort((table[:, 2], table[:, 1]))])
        table = np.concatenate(parts) if parts else np.zeros((0, 4), dtype=int)
        return _first_occurrences(table[:, [0, 3]])


def _first_occurrences(pairs: np.ndarray) -> np.ndarray:
    """Rows ``(topic, doc)`` with later duplicates removed, order kept."""
    if len(pairs) == 0:
        return pairs.reshape(0, 2)
    _, first = np.unique(pairs, axis=0, return_index=True)
    return pairs[np.sort(first)]


class MoveToFront(_Pooling):
    """Local move-to-front pooling (Cormack, Palmer & Clarke 1998).

    Parameters
    ----------
    k
        Look at most this deep in each run (None = full depth).
    prior
        Probability assumed for unjudged documents (0: nonrelevant).
    """

    name = "mtf"

    def __init__(self, k: int | None = None, prior: float = 0.0):
        self.k = k
        self.prior = prior

    def _start(self, state):
        if self.k is not None and int(self.k) < 1:
            raise ValueError(f"k must be a positive integer, got {self.k}")
        self._set_prior(state)
        n_sys = len(state.compared)
        self.rows_ = [
            _ranked_docs(state, t, None if self.k is None else int(self.k))
            for t in range(state.n_topics)
        ]
        self.priority_ = np.zeros((state.n_topics, n_sys))
        self.position_ = np.zeros((state.n_topics, n_sys), dtype=int)
        self.current_ = np.zeros(state.n_topics, dtype=int)
        self.turn_ = 0

    def _next_in_topic(self, state: SelectionState, t: int) -> int | None:
        """The current run's next candidate in topic ``t`` (switching runs as they run dry)."""
        rows = self.rows_[t]
        priority = self.priority_[t]
        while np.isfinite(priority).any():
            s = self.current_[t]
            row = rows[s]
            while self.position_[t, s] < len(row):
                doc = row[self.position_[t, s]]
                if doc < 0:
                    break
                if state.candidates[t][doc]:
                    return int(doc)
                self.position_[t, s] += 1
            priority[s] = -np.inf
            self.current_[t] = int(np.argmax(priority))
        return None

    def _propose(self, state):
        for offset in range(state.n_topics):
            t = (self.turn_ + offset) % state.n_topics
            doc = self._next_in_topic(state, t)
            if doc is not None:
                return t, doc
        return None

    def _observe(self, state, topic, doc, p_before):
        s = self.current_[topic]
        rows = self.rows_[topic]
        if self.position_[topic, s] < rows.shape[1] and rows[s, self.position_[topic, s]] == doc:
            self.position_[topic, s] += 1
            if state.p[topic][doc] < 1.0:
                self.priority_[topic, s] -= 1.0
                self.current_[topic] = int(np.argmax(self.priority_[topic]))
        self.turn_ = (topic + 1) % state.n_topics


register_strategy(IncrementalPooling)
register_strategy(DepthPooling)
register_strategy(MoveToFront)
