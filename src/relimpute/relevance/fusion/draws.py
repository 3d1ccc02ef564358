"""Posterior draws of the fusion model's ``p``, computed topic by topic when read.

The draws of :class:`relimpute.relevance.fusion.Fusion` (its module docstring,
"Judged documents keep their labels" and "What the judgments cannot tell"): Laplace
draws of the parameters, each turned into ``p`` and capture-adjusted by the numba
kernels of :mod:`._kernels`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class _PosteriorDraws:
    """Topic ``t``'s ``(n_draws, n)`` posterior draws of ``p``, computed when called.

    Draw ``d``'s log-odds are ``design · θ_d + offset − (γ_d − γ) · capped (+ the runs'
    effects below the pool)``; its capture adjustment couples the topics (the groups are
    quantiles over every topic's documents), so the groups' edges and factors of every
    draw are found first, in one pass over the campaign, and each topic's draws are then
    computed alone (:mod:`._kernels`; the same numbers as the point estimate's
    numpy code would give, up to rounding in the group edges).
    """

    def __init__(self, *, designs, offsets, capped, below, retrieved, outside, judged, relevant,
                 theta, spreads, run_effects, n_bins, floor):  # fmt: skip
        self.parts = (designs, below)  # stacked when first needed (never, if nothing reads)
        sizes = [d.shape[0] for d in designs]
        self.bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.theta_t = np.ascontiguousarray(theta.T)
        effects = np.zeros((len(theta), 0)) if run_effects is None else run_effects
        self.effects_t = np.ascontiguousarray(effects.T, dtype=float)
        self.spreads = np.asarray(spreads, dtype=float)
        self.offsets = np.concatenate(offsets) if offsets else np.zeros(0)
        self.capped = np.concatenate(capped) if capped else np.zeros(0)
        self.retrieved = retrieved
        self.alive = np.repeat(np.asarray(retrieved, dtype=bool), sizes)
        outside_rows = [np.flatnonzero(o) + lo for o, lo in zip(outside, self.bounds)]
        self.rows = np.concatenate(outside_rows or [np.zeros(0)]).astype(np.int64)
        self.starts = np.concatenate([[0], np.cumsum([len(r) for r in outside_rows])]).astype(np.int64)
        self.judged = np.concatenate([j[o] for j, o in zip(judged, outside)] or [np.zeros(0, bool)])
        self.relevant = np.concatenate([r[o] for r, o in zip(relevant, outside)] or [np.zeros(0, bool)])
        self.n_bins = n_bins
        self.floor = float(floor)
        self.capture_: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.unread = set(range(len(retrieved)))  # topics not read since the capture pass
        self.design = self.low = None

    def _stack(self) -> None:
        """One CSR design (and one of the runs' votes below the pool) over every topic."""
        if self.design is not None:
            return
        designs, below = self.parts
        _release_freed_memory()  # the fit's and the prediction's, before the stacked copies
        n_rows, n_cols = int(self.bounds[-1]), self.theta_t.shape[0]
        stacked = sp.vstack(designs, format="csr") if designs else sp.csr_matrix((n_rows, n_cols))
        low = sp.vstack(below, format="csr") if below else sp.csr_matrix((n_rows, 0))
        self.parts = None
        self.design = (stacked.indptr, stacked.indices, stacked.data)
        self.low = (low.indptr, low.indices, low.data.astype(float))
        del designs, below, stacked, low
        _release_freed_memory()  # the per-topic designs', now free

    def _common(self):
        self._stack()
        return (*self.design, self.theta_t, self.offsets, self.spreads, self.capped, *self.low,
                self.effects_t)  # fmt: skip

    def __getstate__(self):
        # recomputed when read (the same numbers)
        return {**self.__dict__, "capture_": None, "unread": set(range(len(self.retrieved)))}

    def _capture(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(n_draws, n_bins − 1)`` group edges, ``(n_draws, n_bins)`` factors and the draws
        of the documents outside the fit set when one pass held them all (else empty)."""
        if self.capture_ is None:
            from ._kernels import capture_draws

            q = np.linspace(0, 1, self.n_bins + 1)[1:-1]
            # a few draws at a time over every document: a buffer of at most ~2^24 values
            # (128 MB; each chunk is one pass over the design, so 8 draws of 2 million
            # documents at a time cost a third less time than 4), or every draw in one pass
            # up to 2^25 (DL 2019's 100 draws of 200,000 documents: a short second pass
            # cost a fifth more time)
            n_values = len(self.spreads) * len(self.rows)
            budget = 1 << 25 if n_values <= 1 << 25 else 1 << 24
            chunk = max(1, min(len(self.spreads), budget // max(len(self.rows), 1)))
            self.capture_ = capture_draws(
                *self._common(), self.alive, self.rows, self.starts, self.judged, self.relevant,
                q, self.floor, chunk,
            )  # fmt: skip
        return self.capture_

    def __call__(self, t: int) -> np.ndarray:
        from ._kernels import topic_draws

        edges, factors, kept = self._capture()
        drawn = topic_draws(
            *self._common(), bool(self.retrieved[t]), self.bounds[t], self.bounds[t + 1],
            edges, factors, kept, self.rows, self.starts[t], self.starts[t + 1],
        )  # fmt: skip
        self.unread.discard(t)
        if not self.unread and kept.size:  # every topic read once (the Monte Carlo's pass):
            self.capture_ = (edges, factors, np.empty((0, 0)))  # a second reading computes
        return drawn


def _release_freed_memory() -> None:
    """Hand the memory the C heap holds free back to the system (glibc's ``malloc_trim``).

    The fit and the per-topic designs free hundreds of MB in blocks the heap keeps (a
    campaign of 2 million documents: about 230 MB of the peak); elsewhere a no-op.
    """
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)  # the process's own symbols: libc's on Linux
    except (OSError, AttributeError, TypeError):  # no malloc_trim (macOS, musl, Windows)
        pass
