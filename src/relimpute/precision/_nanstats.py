"""Means and standard deviations over bootstrap axes that skip undefined (NaN) resamples."""

from __future__ import annotations

import numpy as np


def nan_mean(values: np.ndarray, axis: int) -> np.ndarray:
    """Mean over ``axis`` ignoring NaN (NaN where nothing is left, without a warning)."""
    count = np.sum(np.isfinite(values), axis=axis)
    total = np.nansum(values, axis=axis)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def nan_sd(values: np.ndarray) -> np.ndarray:
    """Standard deviation over the last axis ignoring NaN (0 with fewer than two values)."""
    count = np.sum(np.isfinite(values), axis=-1)
    centred = values - nan_mean(values, axis=-1)[..., None]
    squares = np.nansum(centred**2, axis=-1)
    return np.where(count > 1, np.sqrt(squares / np.maximum(count - 1, 1)), 0.0)
