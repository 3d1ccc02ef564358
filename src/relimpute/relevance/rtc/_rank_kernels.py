"""numba kernels of the rank → probability problem of RTC (Carterette 2007 §3.2).

One topic, ranks ``r = 0 .. D-1`` (0 = top), a relevance coefficient
``θ_r`` per rank, optionally grouped in blocks of ``m_r`` equal ranks (the
coarse problem that warm-starts the full one; ``m = 1`` is the paper's
problem). The objective is the log posterior

    f(θ) = Σ_{r<k} m_r m_k log σ(θ_r − θ_k) + Σ_r m_r [a log σ(θ_r) + b log σ(−θ_r)]

(the pairwise-preference likelihood of rank ``r`` over rank ``k`` and the
Beta(a, b) prior on ``σ(θ_r)`` carried to ``θ_r``). It is strictly concave;
the kernels return its gradient, its slope along a direction, and the
weighted graph whose Laplacian plus a diagonal is the negative Hessian, and
solve the Newton system. Imported lazily by
:mod:`relimpute.relevance.rtc` (numba compiles on first use).
"""

from __future__ import annotations

import numpy as np
from ..._jit import njit_cached


@njit_cached()
def slope(theta, step, m, a, b):
    """Directional derivative ``∇f(θ) · step`` (one division per pair)."""
    n = theta.size
    total = 0.0
    for r in range(n):
        total += m[r]
    below = total
    out = 0.0
    u = np.exp(np.maximum(theta - theta.max(), -700.0))
    for r in range(n):
        below -= m[r]
        s = 1.0 / (1.0 + np.exp(-theta[r]))
        out += step[r] * m[r] * (below + a - (a + b) * s)
        ur = u[r]
        acc = 0.0
        for k in range(r + 1, n):
            s = ur / (ur + u[k])
            mm = m[r] * m[k]
            acc -= mm * s
            out -= step[k] * mm * (1.0 - s)
        out += step[r] * acc
    return out


@njit_cached()
def gradient_hessian(theta, m, a, b, weights):
    """Gradient of ``f`` and the negative Hessian as ``diag − weights``.

    The strict upper triangle of ``weights`` (n, n) is filled with
    ``m_r m_k σ'(θ_r − θ_k)`` (the rest is not touched: ``weights`` stands
    for the symmetric matrix); the returned ``diag`` adds the prior's
    curvature to the row sums, so the negative Hessian is
    ``np.diag(diag) − (weights + weights.T)`` on the off-diagonal part.
    """
    n = theta.size
    g = np.empty(n)
    diag = np.empty(n)
    total = 0.0
    for r in range(n):
        total += m[r]
    below = total
    for r in range(n):
        below -= m[r]
        s = 1.0 / (1.0 + np.exp(-theta[r]))
        # wins of rank r: every lower rank, plus a prior "wins" against θ = 0
        g[r] = m[r] * (below + a - (a + b) * s)
        diag[r] = m[r] * (a + b) * s * (1.0 - s)
    # σ(θ_r − θ_k) = u_r / (u_r + u_k) with u = exp(θ − max θ): a division per pair;
    # shifts below −700 are clipped (σ is 0 or 1 to double precision there)
    u = np.exp(np.maximum(theta - theta.max(), -700.0))
    for r in range(n):
        ur = u[r]
        for k in range(r + 1, n):
            s = ur / (ur + u[k])
            mm = m[r] * m[k]
            g[r] -= mm * s
            g[k] -= mm * (1.0 - s)
            w = mm * s * (1.0 - s)
            weights[r, k] = w
            diag[r] += w
            diag[k] += w
    return g, diag


@njit_cached()
def solve_newton_system(weights, diag, g, rtol, max_iter):
    """Solve ``(diag(diag) − W) x = g`` by preconditioned conjugate gradients.

    ``W`` is the symmetric matrix whose strict upper triangle is ``weights``;
    the matrix is a weighted graph Laplacian plus a positive diagonal
    (symmetric positive definite). Two-level additive preconditioner:
    Jacobi plus an exact solve on blocks of consecutive ranks (the smooth,
    nearly constant modes a Laplacian leaves to its small diagonal).
    """
    n = g.size
    n_blocks = min(n, 32)
    block = (np.arange(n) * n_blocks) // n
    coarse = np.zeros((n_blocks, n_blocks))
    for r in range(n):
        coarse[block[r], block[r]] += diag[r]
        for k in range(r + 1, n):
            w = weights[r, k]
            coarse[block[r], block[k]] -= w
            coarse[block[k], block[r]] -= w
    coarse_inv = np.linalg.inv(coarse)
    x = np.zeros(n)
    res = g.copy()
    z = _precondition(res, diag, block, coarse_inv, n_blocks)
    p = z.copy()
    rz = res @ z
    gnorm = np.sqrt(g @ g)
    for _ in range(max_iter):
        if np.sqrt(res @ res) <= rtol * gnorm:
            break
        ap = diag * p - _matvec(weights, p, n)
        alpha = rz / (p @ ap)
        x += alpha * p
        res -= alpha * ap
        z = _precondition(res, diag, block, coarse_inv, n_blocks)
        rz_new = res @ z
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x


@njit_cached()
def _precondition(res, diag, block, coarse_inv, n_blocks):
    sums = np.zeros(n_blocks)
    for r in range(res.size):
        sums[block[r]] += res[r]
    corr = coarse_inv @ sums
    out = res / diag
    for r in range(res.size):
        out[r] += corr[block[r]]
    return out


@njit_cached(fastmath=True)
def _matvec(a, x, n):
    """``W @ x`` for the symmetric ``W`` stored in the strict upper triangle of ``a``."""
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        xi = x[i]
        for j in range(i + 1, n):
            acc += a[i, j] * x[j]
            out[j] += a[i, j] * xi
        out[i] += acc
    return out
