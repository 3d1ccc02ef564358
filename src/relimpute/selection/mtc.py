"""MTC: judge the document whose relevance would most change ΔMAP.

Carterette, Allan & Sitaraman (2006), as used in Carterette (2007)
Algorithm 1. For a pair of systems with ``c_ij = a_ij − b_ij`` the weight of
an unjudged document ``i`` of topic ``t`` is its marginal effect on
``E[ΔMAP]``::

    w_i = |c_ii + Σ_{j≠i} c_ij p_j| / (T · E[R_t])

with ``p_j = x_j`` for judged documents and ``p = ½`` for unjudged ones. For
a run set the weight is summed over the pairs not yet decided. Because
``c = a − b``, ``c_ii + Σ_j c_ij p_j = g^a_i − g^b_i`` with the per-system
sum ``g^s_i = a^s_ii + Σ_{j≠i} a^s_ij p_j`` (0 when ``s`` does not retrieve
``i``). Those sums are kept per compared system and topic, and judging a
document ``k`` at rank ``r_k`` of ``s`` changes them by
``δ_k / max(r_i, r_k)``: O(depth) per system retrieving ``k``, nothing
else is recomputed.
"""

from __future__ import annotations

import numpy as np

from .base import SelectionState, SelectionStrategy, register_strategy, set_prior


def system_sums(ranking_row: np.ndarray, depth: int, p: np.ndarray) -> np.ndarray:
    """``(n,)`` ``g_i = a_ii + Σ_{j≠i} a_ij p_j`` for one ranking (0 where unretrieved).

    With documents in rank order ``x_k = p`` at rank ``k``:
    ``g = (1 + Σ_{m<k} x_m) / k + Σ_{m>k} x_m / m`` (Carterette 2007 §2.1,
    ``a_ij = 1 / max(r(i), r(j))``).
    """
    out = np.zeros(len(p))
    docs = ranking_row[:depth]
    if depth == 0:
        return out
    x = p[docs]
    rank = np.arange(1, depth + 1, dtype=float)
    before = np.cumsum(x) - x
    scaled = x / rank
    after = np.cumsum(scaled[::-1])[::-1] - scaled
    out[docs] = (1.0 + before) / rank + after
    return out


def pair_abs_sum(g: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """``(n,)`` ``Σ_{(a,b) in pairs} |g_a − g_b|`` for ``g`` of shape ``(K, n)``."""
    n_pairs = len(pairs)
    n_all = g.shape[0] * (g.shape[0] - 1) // 2
    if n_pairs == 0:
        return np.zeros(g.shape[1])
    if n_pairs <= n_all // 2:
        return np.abs(g[pairs[:, 0]] - g[pairs[:, 1]]).sum(axis=0)
    # All pairs through the sorted order: Σ_{a<b}|x_a − x_b| = Σ_k (2k − K + 1) x_(k).
    k = g.shape[0]
    coef = (2.0 * np.arange(k) - k + 1.0)[:, None]
    total = (coef * np.sort(g, axis=0)).sum(axis=0)
    if n_pairs == n_all:
        return total
    mask = np.ones((k, k), dtype=bool)
    mask[pairs[:, 0], pairs[:, 1]] = False
    rest = np.argwhere(np.triu(mask, 1))
    return total - np.abs(g[rest[:, 0]] - g[rest[:, 1]]).sum(axis=0)


class MTC(SelectionStrategy):
    """Minimal test collections (Carterette et al. 2006; Carterette 2007 Alg. 1).

    Parameters
    ----------
    prior
        Probability of relevance assumed for unjudged documents (½ in the
        paper).

    Notes
    -----
    Ties go to the first topic (campaign order), then the lowest document
    index. A topic with ``E[R_t] = 0`` divides by ``T`` only.
    """

    name = "mtc"

    def __init__(self, prior: float = 0.5):
        self.prior = prior

    # -- probabilities ------------------------------------------------------
    def _initial_p(self, state: SelectionState) -> None:
        set_prior(state, self.prior)

    # -- hooks --------------------------------------------------------------
    def _start(self, state: SelectionState) -> None:
        self._initial_p(state)
        self.undecided_ = np.ones(len(state.pairs), dtype=bool)
        self._recompute_all(state)

    def _recompute_all(self, state: SelectionState) -> None:
        self.g_ = [self._topic_sums(state, t) for t in range(state.n_topics)]
        self.best_weight_ = np.full(state.n_topics, -np.inf)
        self.best_doc_ = np.full(state.n_topics, -1)
        for t in range(state.n_topics):
            self._refresh_topic(state, t)

    def _choice_probabilities(self, state: SelectionState) -> list[np.ndarray]:
        """Per topic, the probabilities the weights use (the loop's own ``state.p``)."""
        return state.p

    def _topic_sums(self, state: SelectionState, t: int) -> np.ndarray:
        topic = state.campaign.topics[t]
        p = self._choice_probabilities(state)[t]
        return np.stack([system_sums(topic.ranking[s], int(topic.depth[s]), p) for s in state.compared])

    def topic_weights(self, state: SelectionState, t: int) -> np.ndarray:
        """``(n,)`` weights of every document of topic ``t`` (0 for non-candidates)."""
        pairs = state.pairs[self.undecided_]
        numerator = pair_abs_sum(self.g_[t], pairs)
        expected_r = state.expected_relevant(t)
        scale = state.n_topics * (expected_r if expected_r > 0 else 1.0)
        return np.where(state.candidates[t], numerator / scale, 0.0)

    def _refresh_topic(self, state: SelectionState, t: int) -> None:
        cand = state.candidates[t]
        if not cand.any():
            self.best_weight_[t], self.best_doc_[t] = -np.inf, -1
            return
        w = np.where(cand, self.topic_weights(state, t), -np.inf)
        i = int(np.argmax(w))
        self.best_weight_[t], self.best_doc_[t] = w[i], i

    def _propose(self, state: SelectionState) -> tuple[int, int] | None:
        t = int(np.argmax(self.best_weight_))
        if self.best_doc_[t] < 0:
            return None
        self.last_weight_ = float(self.best_weight_[t])
        return t, int(self.best_doc_[t])

    def _observe(self, state, topic, doc, p_before):
        self._update_sums(state, topic, doc, state.p[topic][doc] - p_before)
        self._refresh_topic(state, topic)

    def _update_sums(self, state: SelectionState, t: int, doc: int, delta: float) -> None:
        if delta == 0.0:
            return
        topic = state.campaign.topics[t]
        ranks = state.ranks[t][:, doc]
        for k in np.flatnonzero(ranks):
            s = state.compared[k]
            depth = int(topic.depth[s])
            docs = topic.ranking[s, :depth]
            rank_k = float(ranks[k])
            self.g_[t][k, docs] += delta / np.maximum(np.arange(1, depth + 1, dtype=float), rank_k)
            self.g_[t][k, doc] -= delta / rank_k

    def skipped(self, state, topic, doc):
        self._refresh_topic(state, topic)

    def set_undecided(self, state, undecided):
        undecided = np.asarray(undecided, dtype=bool)
        if undecided.shape != self.undecided_.shape:
            raise ValueError(f"undecided must have shape {self.undecided_.shape}")
        if (undecided != self.undecided_).any():
            self.undecided_ = undecided.copy()
            for t in range(state.n_topics):
                self._refresh_topic(state, t)


register_strategy(MTC)
