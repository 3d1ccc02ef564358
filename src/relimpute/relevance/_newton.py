"""Newton's method with backtracking for the concave log posteriors of the logistic models."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext

import numpy as np

#: seconds a fit runs before its progress bar shows
PROGRESS_DELAY = 1.0


def newton_maximise(
    log_post: Callable[[np.ndarray], float],
    gradient_curvature: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    start: np.ndarray,
    *,
    max_iter: int = 100,
    ridge: float = 0.0,
    tol: float = 1e-9,
    solve: Callable | None = None,
    show_progress: bool = True,
    polish: bool = True,
) -> np.ndarray:
    """The maximiser of a smooth concave ``log_post``.

    ``gradient_curvature(θ)`` returns the gradient and the curvature (minus the
    Hessian, positive definite). Each step solves ``(curvature + ridge·I) s =
    gradient`` and halves its length until the Armijo condition holds; the
    iterations stop when a step moves no coordinate by ``tol``. ``solve(curvature, gradient)``,
    when given, solves for the step (a curvature with structure; ``ridge`` is then ignored). On a terminal a fit
    lasting over ``PROGRESS_DELAY`` seconds counts its steps with a progress bar (a large
    fit takes tens of seconds; the many small fits of a study stay silent), unless
    ``show_progress`` is false (fits of milliseconds, many in a row: the bar's set-up would
    cost more than they do). ``polish=False`` stops before a step that moves no coordinate
    by ``tol`` (the point is the mode within ``tol``): its line search would be decided by
    the roundoff of ``log_post``, not by the step, at up to 34 evaluations.
    """
    from ..progress import progress

    theta = np.asarray(start, dtype=float).copy()
    value = log_post(theta)
    steps = range(max_iter)
    if show_progress:
        steps = progress(iter(steps), desc="fitting", unit="step", delay=PROGRESS_DELAY)
    with steps if show_progress else nullcontext():
        for _ in steps:
            grad, curvature = gradient_curvature(theta)
            if solve is not None:
                step = solve(curvature, grad)
            else:
                step = np.linalg.solve(curvature + ridge * np.eye(len(theta)), grad)
            if not polish and np.abs(step).max() < tol:
                break
            t = 1.0
            while True:
                new = log_post(theta + t * step)
                if new >= value + 1e-4 * t * float(grad @ step) or t < 1e-10:
                    break
                t /= 2
            if not np.isfinite(new):  # at the edge of the domain (ordered cut-points): stay
                break
            theta, value = theta + t * step, new
            if np.abs(t * step).max() < tol:
                break
    return theta
