"""Gaussian precisions with one block-diagonal part: Laplace fits linear in the topics.

The default model's ``θ = (w, μ, α_1..α_T, u)`` has one intercept per topic, and each
judged document's log-odds has exactly one ``α_t`` (``docs/math/fusion.md``). Its prior
precision and the likelihood's curvature ``designᵀ W design`` therefore have a *diagonal*
``α`` block ``D``; the rest, ``(w, μ, u)`` of size ``m = k + 1 + S``, is small and dense:

    H = [[A, C], [Cᵀ, D]]   (A: m × m, C: m × T, D diagonal; θ reordered)

an arrowhead. The topics' cut-points (:func:`~.ordinal.fit_topic_cuts`) have the same form
with ``b × b`` blocks ``D_t`` (each topic's ``b`` free cut-point terms) around the ``b`` shared
cut-points. Everything a Laplace fit needs goes through the Schur complement
``S = A − Σ_t C_t D_t⁻¹ C_tᵀ`` (block Gaussian elimination, the block Cholesky factor; Golub &
Van Loan 2013, *Matrix Computations*, 4th ed.): Newton's steps, the log-determinant, the
marginal variances and posterior draws in ``O(T m² b)`` time and ``O(T m b)`` memory, never
the dense ``P × P`` matrix (``P = m + T b``), which a campaign of 10,000 topics could not
hold. :func:`laplace_draws` chooses between the exact dense draw (small ``P``) and the
structured one, :func:`laplace_form` the fit's form.
"""

from __future__ import annotations

import numpy as np
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
    block-diagonal part (see the module): ``T`` blocks ``D_t``, as ``diagonal`` ``(T,)`` (scalar
    blocks, one parameter per topic) or ``(T, b, b)`` (``b`` parameters per topic, the block's
    rows topic by topic); ``coupling`` ``C_t``, the other ``m`` rows (in their order) against
    block ``t``, ``(T, m)`` or ``(T, m, b)``; ``dense`` ``(m, m)``, those rows among themselves.
    The default model's prior and curvature have scalar blocks, the topics' cut-points'
    (:func:`~.ordinal.fit_topic_cuts`) one block of ``b`` free cut-points per topic.
    """

    __array_ufunc__ = None  # ``x @ H`` with an array ``x``: numpy defers to ``__rmatmul__``

    def __init__(self, start: int, stop: int, diagonal, coupling, dense):
        self.start, self.stop = int(start), int(stop)
        self.diagonal = np.asarray(diagonal, dtype=float)
        self.coupling = np.asarray(coupling, dtype=float)
        self.dense = np.asarray(dense, dtype=float)
        self.size = self.stop - self.start + len(self.dense)
        self._factor = None

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_factor"}  # rebuilt when used

    def __setstate__(self, state):
        self.__dict__.update(state, _factor=None)

    @property
    def _blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """``D`` as ``(T, b, b)`` and ``C`` as ``(T, m, b)`` (views)."""
        n = len(self.diagonal)
        if self.diagonal.ndim == 1:
            return self.diagonal.reshape(n, 1, 1), self.coupling.reshape(n, -1, 1)
        return self.diagonal, self.coupling

    @classmethod
    def from_dense(cls, matrix, start: int, stop: int) -> Arrowhead:
        """The arrowhead of a dense ``matrix`` whose block ``start:stop`` is diagonal (its
        off-diagonal entries there are dropped: the caller knows them to be 0)."""
        matrix = np.asarray(matrix, dtype=float)
        rest = np.r_[0:start, stop : len(matrix)]
        block = np.arange(start, stop)
        return cls(start, stop, matrix[block, block], matrix[np.ix_(block, rest)], matrix[np.ix_(rest, rest)])

    def _split(self, x):
        """``x``'s rows outside the block-diagonal part, and those inside it ``(T, b, …)``."""
        block = x[self.start : self.stop].reshape(self._blocks[0].shape[:2] + x.shape[1:])
        return np.concatenate([x[: self.start], x[self.stop :]]), block

    def _join(self, x_rest, x_block):
        k = self.start
        x_block = x_block.reshape((-1,) + x_block.shape[2:])
        return np.concatenate([x_rest[:k], x_block, x_rest[k:]], axis=0)

    def __add__(self, other: Arrowhead) -> Arrowhead:
        if (other.start, other.stop, other.size) != (self.start, self.stop, self.size):
            raise ValueError("arrowheads of different shapes")
        return Arrowhead(self.start, self.stop, self.diagonal + other.diagonal,
                         self.coupling + other.coupling, self.dense + other.dense)  # fmt: skip

    def __matmul__(self, x):
        """``H x`` for a vector ``x``."""
        d, c = self._blocks
        rest, block = self._split(np.asarray(x, dtype=float))
        out_rest = self.dense @ rest + np.einsum("tij,tj->i", c, block)
        out_block = np.einsum("tij,tj->ti", d, block) + np.einsum("tji,j->ti", c, rest)
        return self._join(out_rest, out_block)

    __rmatmul__ = __matmul__  # symmetric: xᵀ H = (H x)ᵀ

    def _indices(self):
        """The rows outside the block-diagonal part, and each block's rows ``(T, b)``."""
        rest = np.r_[0 : self.start, self.stop : self.size]
        return rest, np.arange(self.start, self.stop).reshape(self._blocks[0].shape[:2])

    def toarray(self, what: str = "a dense precision", copies: int = DENSE_COPIES) -> np.ndarray:
        """The dense matrix, after checking that ``copies`` of it fit in memory (else
        :class:`~relimpute.errors.InputError` naming ``what`` needs them)."""
        out = checked_square(self.size, what, copies)
        d, c = self._blocks
        rest, block = self._indices()
        out[np.ix_(rest, rest)] = self.dense
        out[np.ix_(rest, block.ravel())] = c.transpose(1, 0, 2).reshape(len(rest), -1)
        out[np.ix_(block.ravel(), rest)] = c.transpose(0, 2, 1).reshape(-1, len(rest))
        out[block[:, :, None], block[:, None, :]] = d
        return out

    def _factored(self):
        """``D⁻¹``, ``C D⁻¹`` and the Schur complement ``S = A − Σ_t C_t D_t⁻¹ C_tᵀ`` with its
        inverse (``A`` the dense part)."""
        if self._factor is None:
            d, c = self._blocks
            inv_blocks = _inverse(d)
            gain = c @ inv_blocks  # the blocks symmetric: C_t D_t⁻¹
            schur = self.dense - np.einsum("tij,tkj->ik", gain, c)
            self._factor = (inv_blocks, gain, schur, _inverse(schur))
        return self._factor

    def solve(self, g) -> np.ndarray:
        """``H⁻¹ g`` by the Schur complement (a Newton step: ``newton_maximise``'s ``solve``)."""
        inv_blocks, gain, _, inv_schur = self._factored()
        g_rest, g_block = self._split(np.asarray(g, dtype=float))
        x_rest = inv_schur @ (g_rest - np.einsum("tij,tj->i", gain, g_block))
        x_block = np.einsum("tij,tj->ti", inv_blocks, g_block)
        return self._join(x_rest, x_block - np.einsum("tji,j->ti", gain, x_rest))

    def logdet(self) -> float:
        """``log det H``: the blocks' and the Schur complement's."""
        _, _, schur, _ = self._factored()
        return float(np.sum(np.linalg.slogdet(self._blocks[0])[1]) + np.linalg.slogdet(schur)[1])

    def _through(self):
        """``C D⁻¹`` as ``(m, T b)``, and ``S⁻¹`` times it."""
        _, gain, _, inv_schur = self._factored()
        flat = gain.transpose(1, 0, 2).reshape(gain.shape[1], -1)
        return flat, inv_schur @ flat

    def variances(self) -> np.ndarray:
        """The diagonal of ``H⁻¹`` (marginal variances of the Laplace posterior)."""
        inv_blocks, _, _, inv_schur = self._factored()
        flat, through = self._through()  # D_t⁻¹ + D_t⁻¹C_tᵀ S⁻¹ C_t D_t⁻¹ on the blocks
        block = np.einsum("tjj->tj", inv_blocks).ravel() + (flat * through).sum(axis=0)
        return self._join(np.diag(inv_schur).copy(), block)

    def covariance(self) -> np.ndarray:
        """``H⁻¹``, dense (refused with the memory it needs when that is not free): blocks
        ``S⁻¹``, ``−S⁻¹ C D⁻¹`` and ``D⁻¹ + D⁻¹Cᵀ S⁻¹ C D⁻¹``."""
        inv_blocks, _, _, inv_schur = self._factored()
        out = checked_square(self.size, f"the dense {self.size:,} x {self.size:,} Laplace covariance", copies=3)
        flat, through = self._through()
        rest, block = self._indices()
        out[np.ix_(rest, rest)] = inv_schur
        out[np.ix_(rest, block.ravel())] = -through
        out[np.ix_(block.ravel(), rest)] = -through.T
        out[self.start : self.stop, self.start : self.stop] = flat.T @ through
        out[block[:, :, None], block[:, None, :]] += inv_blocks
        return (out + out.T) / 2

    def draws(self, rng: np.random.Generator, mean, n: int) -> np.ndarray:
        """``(n, P)`` draws of ``N(mean, H⁻¹)``: ``mean + L⁻ᵀ z`` with ``H = L Lᵀ`` the block
        Cholesky factor (blocks first: ``D_t = L_t L_tᵀ``, ``S = L_S L_Sᵀ``), so
        ``x_rest = L_S⁻ᵀ z_rest`` and ``x_t = L_t⁻ᵀ z_t − D_t⁻¹ C_tᵀ x_rest``. Takes ``n × P``
        standard normals from ``rng``, as ``multivariate_normal`` does."""
        d = self._blocks[0]
        _, gain, schur, _ = self._factored()
        z = rng.standard_normal((n, self.size))
        z_rest, z_block = self._split(z.T)  # (m, n) and (T, b, n)
        x_rest = np.linalg.solve(np.linalg.cholesky(schur).T, z_rest).T  # (n, m)
        x_block = np.linalg.solve(np.linalg.cholesky(d).transpose(0, 2, 1), z_block)  # L_t⁻ᵀ z_t
        x_block -= np.einsum("tij,ni->tjn", gain, x_rest)  # D_t⁻¹ C_tᵀ = (C_t D_t⁻¹)ᵀ
        return np.asarray(mean, dtype=float) + self._join(x_rest.T, x_block).T


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


def _inverse(blocks):
    """Inverses of a stack of small symmetric blocks ``(…, n, n)``: in closed form for
    ``n ≤ 2`` (LAPACK's per-matrix overhead is most of the cost of a batch of 2×2s)."""
    n = blocks.shape[-1]
    if n == 1:
        return 1 / blocks
    if n == 2:
        a, b, d = blocks[..., 0, 0], blocks[..., 0, 1], blocks[..., 1, 1]
        scale = 1 / (a * d - b * b)
        out = np.empty_like(blocks)
        out[..., 0, 0], out[..., 1, 1] = d * scale, a * scale
        out[..., 0, 1] = out[..., 1, 0] = -b * scale
        return out
    return np.linalg.inv(blocks)
