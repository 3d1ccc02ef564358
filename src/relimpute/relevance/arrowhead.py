"""Gaussian precisions with one diagonal block: the default model's fit linear in topics.

The default model's ``θ = (w, μ, α_1..α_T, u)`` has one intercept per topic, and each
judged document's log-odds has exactly one ``α_t`` (``docs/math/fusion.md``). Its prior
precision and the likelihood's curvature ``designᵀ W design`` therefore have a *diagonal*
``α`` block ``D``; the rest, ``(w, μ, u)`` of size ``m = k + 1 + S``, is small and dense:

    H = [[C, Bᵀ], [B, D]]   (C: m × m, B: T × m, D diagonal; θ reordered)

an arrowhead. Everything the Laplace fit needs goes through the Schur complement
``S = C − Bᵀ D⁻¹ B`` (block Gaussian elimination, the block Cholesky factor; Golub & Van
Loan 2013, *Matrix Computations*, 4th ed.):
Newton's steps, the marginal variances and posterior draws in ``O(T m²)`` time and
``O(T m)`` memory, never the dense ``P × P`` matrix (``P = m + T``), which a campaign of
10,000 topics could not hold. :func:`laplace_draws` chooses between the exact dense draw
(small ``P``) and the structured one, :func:`laplace_form` the fit's form.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp

from ..io.memory import DENSE_COPIES, checked_square

#: Largest ``P`` whose Laplace fit stays dense, as in every release before the structured one
#: (numpy's solve per Newton step, ``np.linalg.inv``, and draws by
#: ``rng.multivariate_normal(..., method="cholesky")``): the dense matrices then cost at most
#: 32 MB each and a fraction of a second, and the seeded answers stay the numbers they were, to
#: the last bit (the structured fit's mode and covariance differ from the dense ones in the last
#: bits, and a seeded draw from another factor is another draw, of the same distribution; the
#: grades' cut-points, drawn through an eigendecomposition, would change visibly). Campaigns of
#: up to about 1,900 topics (every TREC track but the Million Query one) keep their answers.
DENSE_LIMIT = 2000


class Arrowhead:
    """A symmetric positive-definite ``P × P`` matrix whose rows ``start:stop`` form a
    diagonal block (see the module): ``diagonal`` ``(T,)``, ``coupling`` ``B`` ``(T, m)``
    between that block and the other ``m`` rows (in their order), ``dense`` ``C`` ``(m, m)``.
    """

    __array_ufunc__ = None  # ``x @ H`` with an array ``x``: numpy defers to ``__rmatmul__``

    def __init__(self, start: int, stop: int, diagonal, coupling, dense):
        self.start, self.stop = int(start), int(stop)
        self.diagonal = np.asarray(diagonal, dtype=float)
        self.coupling = np.asarray(coupling, dtype=float)
        self.dense = np.asarray(dense, dtype=float)
        self.size = len(self.dense) + len(self.diagonal)
        self._factor = None

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_factor"}  # rebuilt when used

    def __setstate__(self, state):
        self.__dict__.update(state, _factor=None)

    @classmethod
    def from_dense(cls, matrix, start: int, stop: int) -> Arrowhead:
        """The arrowhead of a dense ``matrix`` whose block ``start:stop`` is diagonal (its
        off-diagonal entries there are dropped: the caller knows them to be 0)."""
        matrix = np.asarray(matrix, dtype=float)
        rest = np.r_[0:start, stop : len(matrix)]
        block = np.arange(start, stop)
        return cls(start, stop, matrix[block, block], matrix[np.ix_(block, rest)], matrix[np.ix_(rest, rest)])

    def _split(self, x):
        """``x``'s rows outside the diagonal block, and those inside it."""
        return np.concatenate([x[: self.start], x[self.stop :]]), x[self.start : self.stop]

    def _join(self, x_rest, x_block):
        k = self.start
        return np.concatenate([x_rest[:k], x_block, x_rest[k:]], axis=0)

    def __add__(self, other: Arrowhead) -> Arrowhead:
        if (other.start, other.stop, other.size) != (self.start, self.stop, self.size):
            raise ValueError("arrowheads of different shapes")
        return Arrowhead(self.start, self.stop, self.diagonal + other.diagonal,
                         self.coupling + other.coupling, self.dense + other.dense)  # fmt: skip

    def __matmul__(self, x):
        """``H x`` for a vector ``x``."""
        x = np.asarray(x, dtype=float)
        rest, block = self._split(x)
        return self._join(self.dense @ rest + self.coupling.T @ block, self.diagonal * block + self.coupling @ rest)

    __rmatmul__ = __matmul__  # symmetric: xᵀ H = (H x)ᵀ

    def toarray(self, what: str = "a dense precision", copies: int = DENSE_COPIES) -> np.ndarray:
        """The dense matrix, after checking that ``copies`` of it fit in memory (else
        :class:`~relimpute.errors.InputError` naming ``what`` needs them)."""
        out = checked_square(self.size, what, copies)
        rest = np.r_[0 : self.start, self.stop : self.size]
        block = np.arange(self.start, self.stop)
        out[np.ix_(rest, rest)] = self.dense
        out[np.ix_(block, rest)] = self.coupling
        out[np.ix_(rest, block)] = self.coupling.T
        out[block, block] = self.diagonal
        return out

    def _factored(self):
        """``D⁻¹ B`` and the Cholesky factor of the Schur complement ``S = C − Bᵀ D⁻¹ B``."""
        if self._factor is None:
            gain = self.coupling / self.diagonal[:, None]
            schur = self.dense - self.coupling.T @ gain
            self._factor = (gain, la.cholesky((schur + schur.T) / 2, lower=True))
        return self._factor

    def solve(self, g) -> np.ndarray:
        """``H⁻¹ g`` by the Schur complement (a Newton step: ``newton_maximise``'s ``solve``)."""
        gain, chol = self._factored()
        g_rest, g_block = self._split(np.asarray(g, dtype=float))
        x_rest = la.cho_solve((chol, True), g_rest - gain.T @ g_block)
        return self._join(x_rest, g_block / self.diagonal - gain @ x_rest)

    def variances(self) -> np.ndarray:
        """The diagonal of ``H⁻¹`` (marginal variances of the Laplace posterior)."""
        gain, chol = self._factored()
        inv_chol = la.solve_triangular(chol, np.eye(len(chol)), lower=True)  # L⁻¹; S⁻¹ = L⁻ᵀL⁻¹
        through = gain @ inv_chol.T  # (D⁻¹B) L⁻ᵀ: its rows' squares give D⁻¹ B S⁻¹ Bᵀ D⁻¹'s diagonal
        return self._join((inv_chol**2).sum(axis=0), 1 / self.diagonal + (through**2).sum(axis=1))

    def covariance(self) -> np.ndarray:
        """``H⁻¹``, dense (refused with the memory it needs when that is not free): blocks
        ``S⁻¹``, ``−D⁻¹B S⁻¹`` and ``D⁻¹ + D⁻¹B S⁻¹ BᵀD⁻¹``."""
        gain, chol = self._factored()
        out = checked_square(self.size, f"the dense {self.size:,} x {self.size:,} Laplace covariance", copies=3)
        inv_schur = la.cho_solve((chol, True), np.eye(len(chol)))
        rest = np.r_[0 : self.start, self.stop : self.size]
        block = np.arange(self.start, self.stop)
        cross = -gain @ inv_schur
        out[np.ix_(rest, rest)] = inv_schur
        out[np.ix_(block, rest)] = cross
        out[np.ix_(rest, block)] = cross.T
        out[self.start : self.stop, self.start : self.stop] = -cross @ gain.T
        out[block, block] += 1 / self.diagonal
        return (out + out.T) / 2

    def draws(self, rng: np.random.Generator, mean, n: int) -> np.ndarray:
        """``(n, P)`` draws of ``N(mean, H⁻¹)``: ``mean + L⁻ᵀ z`` with ``H = L Lᵀ`` the block
        Cholesky factor (diagonal block first: ``L = [[√D, 0], [BᵀD^-½, L_S]]``, ``S = L_S L_Sᵀ``),
        so ``x_rest = L_S⁻ᵀ z_rest`` and ``x_block = z_block / √D − D⁻¹B x_rest``. Takes
        ``n × P`` standard normals from ``rng``, as ``multivariate_normal`` does."""
        gain, chol = self._factored()
        z = rng.standard_normal((n, self.size))
        z_rest = np.concatenate([z[:, : self.start], z[:, self.stop :]], axis=1)
        x_rest = la.solve_triangular(chol, z_rest.T, lower=True, trans="T").T
        x_block = z[:, self.start : self.stop] / np.sqrt(self.diagonal) - x_rest @ gain.T
        return np.asarray(mean, dtype=float) + self._join(x_rest.T, x_block.T).T


class GramBlocks:
    """``designᵀ diag(w) design`` as an :class:`Arrowhead`, for many weights ``w`` (one per
    Newton step): the design's columns ``start:stop`` have at most one entry per row (each
    judged document's topic intercept), which makes their block diagonal."""

    def __init__(self, design, start: int, stop: int):
        design = sp.csr_matrix(design)
        self.start, self.stop = int(start), int(stop)
        block = design[:, start:stop].tocsr()
        per_row = np.diff(block.indptr)
        if np.any(per_row > 1):
            row = int(np.flatnonzero(per_row > 1)[0])
            raise ValueError(f"design row {row} has {per_row[row]} entries in columns {start}:{stop}, "
                             "which must hold at most one per row")  # fmt: skip
        self.rest = sp.hstack([design[:, :start], design[:, stop:]], format="csr")
        self.topic = np.full(design.shape[0], -1, dtype=np.int64)
        self.value = np.zeros(design.shape[0])
        has = per_row == 1
        self.topic[has], self.value[has] = block.indices, block.data
        n_block = stop - start
        # (T, n) with each row's one entry: B = indicatorᵀ-weighted sums of the rest's rows
        self.block = sp.csr_matrix((block.data, block.indices, block.indptr), shape=(design.shape[0], n_block)).T.tocsr()

    def __call__(self, w) -> Arrowhead:
        w = np.asarray(w, dtype=float)
        weighted = self.rest.multiply(w[:, None]).tocsr()
        dense = (self.rest.T @ weighted).toarray()
        coupling = (self.block @ weighted).toarray()
        has = self.topic >= 0
        diagonal = np.bincount(self.topic[has], w[has] * self.value[has] ** 2, minlength=self.stop - self.start)
        return Arrowhead(self.start, self.stop, diagonal, coupling, dense)


def laplace_form(prec: Arrowhead, what: str) -> Arrowhead | np.ndarray:
    """The form a Laplace fit takes with the prior precision ``prec``: dense up to
    :data:`DENSE_LIMIT` parameters (the numbers of every earlier release, to the last bit;
    ``what`` names the fit when its dense matrices would not fit in memory), else the
    arrowhead itself (the fit linear in the topics)."""
    return prec.toarray(what) if prec.size <= DENSE_LIMIT else prec


def laplace_draws(rng: np.random.Generator, mean, posterior, n: int) -> np.ndarray:
    """``(n, P)`` draws of the Laplace posterior ``N(mean, ·)``: ``posterior`` is a dense
    covariance (the dense fit's, :func:`laplace_form`) or an :class:`Arrowhead` precision.
    From a dense covariance, or up to :data:`DENSE_LIMIT` parameters, the dense Cholesky draw
    of every earlier release (the same seeded numbers); beyond it the structured draw
    (:meth:`Arrowhead.draws`, the same distribution), which never forms the covariance."""
    mean = np.asarray(mean, dtype=float)
    if isinstance(posterior, Arrowhead):
        if len(mean) > DENSE_LIMIT:
            return posterior.draws(rng, mean, n)
        posterior = posterior.covariance()
    return rng.multivariate_normal(mean, posterior, size=n, method="cholesky")
