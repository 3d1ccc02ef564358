"""Array plumbing shared by the measure kernels: gather by rank, condense, validate.

A *ranking* is ``(S, D)`` integer document indices into a topic's document
index, one row per system in rank order, padded with ``-1`` after the last
retrieved document (the rows of :attr:`relimpute.data.TopicData.ranking`).
Per-document values come as ``(n,)`` or, with a leading draw axis, ``(B, n)``.
"""

from __future__ import annotations

import functools

import numpy as np

#: Kernels given ``(B, n)`` values work on chunks of draws holding at most
#: this many ``(draw, system, rank)`` cells: memory stays bounded (a few 8 MB
#: temporaries) and the chunks stay cache-friendly (faster than larger ones).
CHUNK_CELLS = 1 << 20


def check_ranking(ranking: np.ndarray, n_docs: int) -> np.ndarray:
    """Validate a padded ``(S, D)`` ranking against a document index of size ``n_docs``."""
    ranking = np.asarray(ranking)
    if ranking.ndim != 2:
        raise ValueError(f"ranking must be 2-D (systems, depth), got shape {ranking.shape}")
    if ranking.size == 0:
        return ranking.astype(np.int64, copy=False)
    if not np.issubdtype(ranking.dtype, np.integer):
        raise ValueError(f"ranking must hold integer document indices, got {ranking.dtype}")
    low, high = int(ranking.min()), int(ranking.max())
    if low < -1 or high >= n_docs:
        raise ValueError(
            f"ranking indices must lie in [-1, {n_docs - 1}] (-1 = padding), found [{low}, {high}]"
        )
    return ranking


def check_values(values: np.ndarray, what: str) -> np.ndarray:
    """Per-document values as ``(n,)`` or ``(B, n)``."""
    values = np.asarray(values)
    if values.ndim not in (1, 2):
        raise ValueError(f"{what} must have shape (n,) or (draws, n), got {values.shape}")
    return values


def as_binary(values: np.ndarray, what: str) -> np.ndarray:
    """Values as bool, refusing anything but 0/1 (a probability would silently become True)."""
    values = check_values(values, what)
    if values.dtype != bool:
        if ((values != 0) & (values != 1)).any():
            raise ValueError(f"{what} must be binary (bool or 0/1) for this measure")
        values = values.astype(bool)
    return values


def check_count(count: np.ndarray | float, values: np.ndarray, what: str) -> np.ndarray:
    """A per-draw count (such as R) as an array broadcastable to ``values.shape[:-1]``."""
    lead = values.shape[:-1]
    count = np.asarray(count, dtype=np.float64)
    if count.shape not in ((), lead):
        raise ValueError(f"{what} must have shape () or {lead}, got {count.shape}")
    if (count < 0).any() or not np.isfinite(count).all():
        raise ValueError(f"{what} must be finite and non-negative")
    return np.broadcast_to(count, lead)


def check_cutoff(k: int | None) -> int | None:
    if k is not None and (int(k) != k or k < 1):
        raise ValueError(f"cutoff must be a positive integer, got {k!r}")
    return None if k is None else int(k)


def in_draw_chunks(kernel):
    """Run a kernel ``(ranking, values, ...)`` over chunks of the draw axis of ``values``.

    Results are concatenated along the draw axis; a ``(B,)`` ``n_relevant``
    keyword is split alongside. ``(n,)`` values go straight through.
    """

    @functools.wraps(kernel)
    def wrapper(ranking, values, *args, **kwargs):
        values = np.asarray(values)
        ranking = np.asarray(ranking)
        step = max(1, CHUNK_CELLS // max(ranking.size, 1))
        if values.ndim != 2 or values.shape[0] <= step:
            return kernel(ranking, values, *args, **kwargs)
        count = kwargs.get("n_relevant")
        if count is not None:
            count = check_count(count, values, "n_relevant")
        parts = []
        for lo in range(0, values.shape[0], step):
            if count is not None:
                kwargs["n_relevant"] = count[lo : lo + step]
            parts.append(kernel(ranking, values[lo : lo + step], *args, **kwargs))
        return np.concatenate(parts, axis=0)

    return wrapper


def at_ranks(ranking: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``(..., S, D)``: the value of the document at every rank, 0 at padding.

    ``values`` is ``(..., n)``; padding (``-1``) picks an appended zero, so no
    Python loop and no mask are needed.
    """
    pad = np.zeros(values.shape[:-1] + (1,), dtype=values.dtype)
    return np.concatenate([values, pad], axis=-1)[..., ranking]


def truncate(ranking: np.ndarray, k: int | None) -> np.ndarray:
    """The first ``k`` columns of a ranking (all of it when ``k`` is None)."""
    return ranking if k is None else ranking[:, :k]


def top_k(ranking: np.ndarray, values: np.ndarray, k: int | None) -> np.ndarray:
    """``ranking`` checked against the documents of ``values`` and cut at rank ``k``."""
    return truncate(check_ranking(ranking, values.shape[-1]), check_cutoff(k))


def ratio_or_zero(numerator: np.ndarray, denominator) -> np.ndarray:
    """``numerator / denominator``, 0 where the denominator is not positive (no relevant
    document, nothing retrieved: the score is 0, as trec_eval's)."""
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)


def recall_inputs(ranking, relevant, k: int | None, n_relevant) -> tuple:
    """The checked inputs of a measure divided by R: ``(ranking, relevant, R)``, the ranking
    cut at ``k`` and R (``relevant.sum(-1)`` when ``n_relevant`` is None) ``()`` or ``(B,)``."""
    relevant = as_binary(relevant, "relevant")
    ranking = top_k(ranking, relevant, k)
    if n_relevant is None:
        n_relevant = relevant.sum(axis=-1)
    return ranking, relevant, check_count(n_relevant, relevant, "n_relevant")


def retrieved_count(ranking: np.ndarray) -> np.ndarray:
    """``(S,)`` number of documents in each (contiguously padded) row."""
    return (ranking >= 0).sum(axis=-1)


def rank_discount(depth: int, p: float) -> np.ndarray:
    """``(D,)`` geometric weights ``p ** (rank - 1)``."""
    return p ** np.arange(depth, dtype=np.float64)


def condense(ranking: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """Judged-only condensed rankings (Sakai 2007): unjudged documents removed.

    Each row keeps its judged documents in their original order and is
    re-padded with ``-1``; the width shrinks to the longest condensed row.
    """
    ranking = check_ranking(ranking, len(judged))
    judged = np.asarray(judged, dtype=bool)
    keep = (ranking >= 0) & at_ranks(ranking, judged)
    order = np.argsort(~keep, axis=1, kind="stable")
    packed = np.take_along_axis(ranking, order, axis=1)
    packed = np.where(np.take_along_axis(keep, order, axis=1), packed, -1)
    width = int(keep.sum(axis=1).max(initial=0))
    return np.ascontiguousarray(packed[:, :width]).astype(ranking.dtype, copy=False)
