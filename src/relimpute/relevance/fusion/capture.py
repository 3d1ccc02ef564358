"""The capture adjustment of the rank-fusion model (``docs/math/fusion.md``, "Capture").

Documents outside the fit set are grouped by predicted log-odds; where the
judging already found ``F_b`` relevant documents among a group expected to hold
``E_b``, the group's unjudged documents share what is left.
"""

from __future__ import annotations

import numpy as np

def capture_factors(point, bins, outside, judged, relevant, n_bins: int, floor: float) -> np.ndarray:
    """``(n_bins,)`` factor on the unjudged documents of each group (``docs/math/fusion.md``).

    Over the documents outside the fit set: ``E_b`` their expected relevant
    count, ``F_b`` the relevant ones found among the judged, ``U_b`` the
    expected count of the unjudged; the factor is
    ``min(1, max(E_b − F_b, floor · U_b) / U_b)`` (1 where ``U_b = 0``).
    """
    expected = np.zeros(n_bins)
    found = np.zeros(n_bins)
    unjudged = np.zeros(n_bins)
    for pt, b, o, j, r in zip(point, bins, outside, judged, relevant):
        expected += np.bincount(b[o], weights=pt[o], minlength=n_bins)
        found += np.bincount(b[o & j], weights=r[o & j].astype(float), minlength=n_bins)
        unjudged += np.bincount(b[o & ~j], weights=pt[o & ~j], minlength=n_bins)
    return _factors(expected, found, unjudged, floor)


def _factors(expected, found, unjudged, floor: float) -> np.ndarray:
    """``min(1, max(E_b − F_b, floor · U_b) / U_b)``, 1 where ``U_b = 0``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.maximum(expected - found, floor * unjudged) / unjudged
    return np.where(unjudged > 0, np.minimum(factor, 1.0), 1.0)

