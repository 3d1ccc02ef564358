"""Per-topic moments of AP and ΔAP (Carterette 2007 §2.1).

The functions here work on one topic with dense arrays over the topic's
document index: ``ranks`` are 1-based ranks (0 = not retrieved, as
:meth:`relimpute.data.TopicData.ranks` returns them) and ``p`` the
probabilities of relevance (judged documents hold 0 or 1). They are what an
incremental judgment-selection loop recomputes for the one topic that changed;
:class:`relimpute.confidence.ConfidenceEngine` does the same for a whole
campaign without building dense rank arrays.

AP = Q / R with Q the quadratic form of Carterette 2007 §2.1 and R the number of
relevant documents. Two ratio treatments are offered:

``"constant"``
    The paper's: ``E[AP] = E[Q] / E[R]``, ``Var[AP] = Var[Q] / E[R]²``.
``"delta"``
    The delta method for a ratio of random variables:
    ``Var[Q/R] ≈ Var[Q - θR] / E[R]²`` with ``θ = E[Q] / E[R]``, i.e.
    ``(Var[Q] - 2θ Cov(Q, R) + θ² Var[R]) / E[R]²``; the mean stays
    ``E[Q] / E[R]``. For ΔAP = ΔQ / R the same with ΔQ.

A topic with ``E[R] = 0`` has no relevant and no possibly relevant document:
AP is 0 with variance 0 there (trec_eval scores AP = 0 when R = 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..data import TopicData

RATIOS = ("constant", "delta")


class QMoments(NamedTuple):
    """Exact moments of Q (or ΔQ): mean, variance and covariance with R."""

    mean: float
    var: float
    cov_r: float


def check_ratio(ratio: str) -> str:
    """Validate a ratio treatment name (``"constant"`` or ``"delta"``)."""
    if ratio not in RATIOS:
        raise ValueError(f"ratio must be one of {RATIOS}, got {ratio!r}")
    return ratio


def ratio_moments(e_q, var_q, cov_qr, e_r, var_r, ratio: str = "constant"):
    """Mean and variance of Q / R from the moments of Q and R (arrays broadcast).

    ``"constant"``: Carterette 2007 §2.1, ``Var[Q] / E[R]²``. ``"delta"``: the
    delta method, ``(Var[Q] - 2θ Cov(Q, R) + θ² Var[R]) / E[R]²`` with
    ``θ = E[Q] / E[R]`` (clipped at 0 against rounding). Where ``E[R] = 0``
    both moments are 0.
    """
    check_ratio(ratio)
    e_q, var_q, cov_qr, e_r, var_r = np.broadcast_arrays(
        *(np.asarray(x, dtype=float) for x in (e_q, var_q, cov_qr, e_r, var_r))
    )
    positive = e_r > 0
    safe_r = np.where(positive, e_r, 1.0)
    mean = np.where(positive, e_q / safe_r, 0.0)
    if ratio == "constant":
        var = var_q / safe_r**2
    else:
        var = (var_q - 2.0 * mean * cov_qr + mean**2 * var_r) / safe_r**2
    var = np.where(positive, np.maximum(var, 0.0), 0.0)
    return mean, var


# ---------------------------------------------------------------------- R


def counted_documents(
    topic: TopicData,
    systems: Sequence[int] | None = None,
    depth: int | None = None,
    labelled: np.ndarray | None = None,
) -> np.ndarray:
    """``(n,)`` bool: the documents whose relevance counts towards R.

    Every document of the topic the campaign has evidence of (Carterette 2007 §2.1: R counts
    every relevant document of the topic, retrieved or not): every judged document (judged
    relevant ones count even when no run retrieved them), every document retrieved by any of
    ``systems`` (row indices; all when None) within ``depth``, and every document in
    ``labelled`` (``(n,)`` bool, the documents a label source names:
    :func:`relimpute.labels.labelled_documents`), each unjudged one by its probability
    (docs/math/average-precision.md, "Which documents R counts").
    """
    rows = topic.ranking if systems is None else topic.ranking[np.asarray(systems, dtype=int)]
    if depth is not None:
        rows = rows[:, :depth]
    mask = topic.judged.copy()
    mask[rows[rows >= 0]] = True
    if labelled is not None:
        if labelled.shape != mask.shape:
            raise ValueError(f"labelled has shape {labelled.shape}, the topic {mask.shape}")
        mask |= labelled
    return mask


def relevant_moments(
    topic: TopicData,
    p: np.ndarray,
    systems: Sequence[int] | None = None,
    depth: int | None = None,
    labelled: np.ndarray | None = None,
) -> tuple[float, float]:
    """``(E[R], Var[R])`` over :func:`counted_documents` with independent Bernoulli(p)."""
    p = _check_p(p, topic.n_docs)
    mask = counted_documents(topic, systems, depth, labelled)
    return float(p[mask].sum()), float((p[mask] * (1.0 - p[mask])).sum())


def expected_relevant(
    topic: TopicData,
    p: np.ndarray,
    systems: Sequence[int] | None = None,
    depth: int | None = None,
    labelled: np.ndarray | None = None,
) -> float:
    """E[R] for a topic and a run set: Σp over :func:`counted_documents`."""
    return relevant_moments(topic, p, systems, depth, labelled)[0]


# ---------------------------------------------------------------------- Q


def q_moments(ranks: np.ndarray, p: np.ndarray) -> QMoments:
    """Exact E[Q], Var[Q] and Cov(Q, R) for one ranking (O(n) prefix sums, Carterette 2007 §2.1)."""
    from . import _kernels  # numba: imported when first needed

    p = _check_p(p, None)
    ranking, rank, depth = _stack_ranks([ranks], len(p))
    eq, first, second, cov, _ = _kernels.system_terms(ranking, rank, depth, p, p * (1.0 - p))
    return QMoments(float(eq[0]), float(first[0] + second[0]), float(cov[0]))


def delta_q_moments(ranks_a: np.ndarray, ranks_b: np.ndarray, p: np.ndarray) -> QMoments:
    """Exact E[ΔQ], Var[ΔQ] and Cov(ΔQ, R) for ΔQ = Q_a - Q_b (O(n log n), Carterette 2007 §2.1)."""
    from . import _kernels  # numba: imported when first needed

    p = _check_p(p, None)
    v = p * (1.0 - p)
    ranking, rank, depth = _stack_ranks([ranks_a, ranks_b], len(p))
    eq, first, second, cov, g = _kernels.system_terms(ranking, rank, depth, p, v)
    cf, cs = _kernels.pair_terms(
        ranking,
        rank,
        depth,
        g,
        v,
        len(p),
        np.array([0], dtype=np.int64),
        np.array([1], dtype=np.int64),
    )
    var = first[0] + first[1] - 2.0 * cf[0] + second[0] + second[1] - 2.0 * cs[0]
    return QMoments(float(eq[0] - eq[1]), float(max(var, 0.0)), float(cov[0] - cov[1]))


# ---------------------------------------------------------------------- AP


def topic_moments(
    ranks: np.ndarray,
    p: np.ndarray,
    expected_r: float,
    *,
    var_r: float | None = None,
    ratio: str = "constant",
) -> tuple[float, float]:
    """``(E[AP], Var[AP])`` of one ranking on one topic.

    ``expected_r`` (and, for ``ratio="delta"``, ``var_r``) come from
    :func:`relevant_moments` for the run set being evaluated.
    """
    m = q_moments(ranks, p)
    return _finish(m, expected_r, var_r, ratio)


def pair_topic_moments(
    ranks_a: np.ndarray,
    ranks_b: np.ndarray,
    p: np.ndarray,
    expected_r: float,
    *,
    var_r: float | None = None,
    ratio: str = "constant",
) -> tuple[float, float]:
    """``(E[ΔAP], Var[ΔAP])`` for ΔAP = AP_a - AP_b on one topic.

    R is shared by both systems, so ΔAP = ΔQ / R (Carterette 2007 §2.1).
    """
    m = delta_q_moments(ranks_a, ranks_b, p)
    return _finish(m, expected_r, var_r, ratio)


def _finish(m: QMoments, expected_r: float, var_r: float | None, ratio: str) -> tuple[float, float]:
    check_ratio(ratio)
    if ratio == "delta" and var_r is None:
        raise ValueError('ratio="delta" needs var_r (see relevant_moments)')
    if expected_r < 0:
        raise ValueError(f"expected_r must be >= 0, got {expected_r}")
    mean, var = ratio_moments(
        m.mean, m.var, m.cov_r, expected_r, 0.0 if var_r is None else var_r, ratio
    )
    return float(mean), float(var)


def _check_p(p: np.ndarray, n: int | None) -> np.ndarray:
    p = np.ascontiguousarray(p, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p must be one-dimensional, got shape {p.shape}")
    if n is not None and len(p) != n:
        raise ValueError(f"p has {len(p)} entries, the topic has {n} documents")
    if p.size and (np.isnan(p).any() or p.min() < 0.0 or p.max() > 1.0):
        raise ValueError("probabilities must lie in [0, 1]")
    return p


def _stack_ranks(ranks_list, n: int):
    """Dense rank arrays -> (ranking, rank, depth) rows for the kernels."""
    rows, values = [], []
    for ranks in ranks_list:
        ranks = np.asarray(ranks)
        if ranks.shape != (n,):
            raise ValueError(f"ranks must have shape ({n},) like p, got {ranks.shape}")
        if (ranks < 0).any():
            raise ValueError("ranks must be >= 1, or 0 for not retrieved")
        docs = np.flatnonzero(ranks > 0)
        docs = docs[np.argsort(ranks[docs], kind="stable")]
        r = ranks[docs].astype(np.float64)
        if len(r) > 1 and (np.diff(r) == 0).any():
            raise ValueError("ranks must be distinct among retrieved documents")
        rows.append(docs)
        values.append(r)
    width = max((len(d) for d in rows), default=0)
    ranking = np.full((len(rows), width), -1, dtype=np.int64)
    rank = np.ones((len(rows), width))
    for s, (d, r) in enumerate(zip(rows, values)):
        ranking[s, : len(d)] = d
        rank[s, : len(r)] = r
    depth = np.array([len(d) for d in rows], dtype=np.int64)
    return ranking, rank, depth
