"""Penalised logistic regression with an offset, and its Laplace posterior (fusion-llm's label shifts).

``logit P(y = 1) = offset + design · θ`` with ``θ ~ N(0, diag(1/prec))``: the posterior mode by
Newton's method on the sparse curvature, and the Laplace approximation (the curvature at the
mode as the precision; Bishop 2006, *Pattern Recognition and Machine Learning*, §4.4). Up to
:data:`~.arrowhead.DENSE_LIMIT` parameters the covariance is dense, as in every earlier release;
beyond it, when the curvature is an arrowhead (its ``block`` diagonal: each row one per-topic
column), the precision stays one (:class:`~.arrowhead.Arrowhead`), linear in the topics.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_expit

from .arrowhead import Arrowhead


def fit_offset_logistic(design, y, offset, prec, *, max_iter: int = 100, tol: float = 1e-9, start=None,
                        block: tuple[int, int] | None = None):  # fmt: skip
    """Mode and Laplace posterior of ``θ``: a dense covariance, or with ``block`` ``(start,
    stop)``, columns whose curvature block is diagonal, the :class:`~.arrowhead.Arrowhead`
    precision (its steps by the Schur complement, never a dense ``P × P`` matrix).

    Newton's method with step halving, as :func:`~._newton.newton_maximise`, but on the
    sparse curvature (each topic's ``δ`` meets only its own documents and ``β``).
    """
    from scipy.sparse.linalg import spsolve

    def log_post(theta):
        e = offset + design @ theta
        return float(y @ log_expit(e) + (1 - y) @ log_expit(-e)) - 0.5 * float(prec @ theta**2)

    def gradient_curvature(theta):
        s = expit(offset + design @ theta)
        weighted = design.multiply((s * (1 - s))[:, None]).tocsr()
        return design.T @ (y - s) - prec * theta, (sp.diags(prec) + design.T @ weighted).tocsc()

    def solve(curvature, grad):
        return spsolve(curvature, grad) if block is None else _arrowhead(curvature, *block).solve(grad)

    theta = np.zeros(design.shape[1]) if start is None else np.array(start, float)
    value = log_post(theta)
    for _ in range(max_iter):
        grad, curvature = gradient_curvature(theta)
        step, t = solve(curvature, grad), 1.0
        while (new := log_post(theta + t * step)) < value + 1e-4 * t * float(grad @ step) and t >= 1e-10:
            t /= 2
        theta, value = theta + t * step, new
        if np.abs(t * step).max() < tol:
            break
    if block is not None:
        return theta, _arrowhead(gradient_curvature(theta)[1], *block)
    cov = np.linalg.inv(gradient_curvature(theta)[1].toarray())
    return theta, (cov + cov.T) / 2


def _arrowhead(matrix, start: int, stop: int) -> Arrowhead:
    """The symmetric sparse ``matrix`` as an arrowhead whose rows ``start:stop`` are a diagonal
    block (the caller knows their off-diagonal entries to be 0)."""
    matrix = sp.csr_matrix(matrix)
    rest = np.r_[0:start, stop : matrix.shape[0]]
    coupling = matrix[start:stop][:, rest].toarray()
    return Arrowhead(start, stop, matrix.diagonal()[start:stop], coupling, matrix[rest][:, rest].toarray())


def posterior_property(name: str) -> property:
    """A model attribute holding a Laplace posterior, read as its dense covariance: a dense
    array as it is, an :class:`~.arrowhead.Arrowhead` precision inverted when read (and
    memory-checked, :meth:`~.arrowhead.Arrowhead.covariance`)."""

    def read(self) -> np.ndarray:
        value = self.__dict__[name]
        return value.covariance() if isinstance(value, Arrowhead) else value

    def write(self, value) -> None:
        self.__dict__[name] = value

    return property(read, write, doc=f"Laplace covariance ``{name}``, dense (formed when read from a structured precision).")
