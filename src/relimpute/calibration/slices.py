"""The critics' tests as slices of a calibration study's pairs.

Agreement is said to weaken among the top-scoring systems (Clarke & Dietz) and between close
systems. Each slice takes the scored pairs (:func:`~relimpute.calibration.scoring.scored_pairs`:
oriented ``confidence``, ``correct``, ``w_i``, ``true_delta_map`` and the runs' ranks by true
MAP among all the collection's runs, ``true_rank_a``/``true_rank_b``) and gives one row per
strategy: pairs, W, accuracy, and the share and accuracy of the pairs stated at ≥ 0.95. The
target (:func:`relimpute.stats.slice_scores`, judged where a slice holds at least 100
pairs): W ≥ 0 and at least 95% of the pairs stated at ≥ 0.95 right.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..stats import CLOSE, MIN_PAIRS, STATED, slice_scores  # noqa: F401 (the slices' target)

#: the top-k slice's k (both runs among the k best by true MAP)
TOP_K = 10


def slice_masks(scored: pd.DataFrame, top_k: int = TOP_K, close: float = CLOSE) -> dict[str, np.ndarray]:
    """The slices' rows of ``scored``: ``all``, ``top-k`` (NaN ranks, from a study written
    before the ranks were kept, are in no top-k slice) and ``close``."""
    delta = np.abs(scored["true_delta_map"].to_numpy(dtype=float))
    if {"true_rank_a", "true_rank_b"} <= set(scored.columns):
        ranks = scored[["true_rank_a", "true_rank_b"]].to_numpy(dtype=float)
        top = np.all(ranks <= top_k, axis=1)  # NaN compares False
    else:
        top = np.zeros(len(scored), dtype=bool)
    return {"all": np.ones(len(scored), dtype=bool), f"top-{top_k}": top, f"close (<{close:g})": delta < close}


def slices_frame(scored: pd.DataFrame, strategies, top_k: int = TOP_K, close: float = CLOSE) -> pd.DataFrame:
    """One row per (strategy, slice) of the scored pairs (module docstring)."""
    rows = []
    for strategy in strategies:
        group = scored[scored["strategy"] == strategy]
        for name, mask in slice_masks(group, top_k, close).items():
            part = group[mask]
            rows.append({"strategy": strategy, "slice": name,
                         **slice_scores(part["confidence"].to_numpy(), part["correct"].to_numpy(),
                                     part["w_i"].to_numpy())})  # fmt: skip
    return pd.DataFrame(rows)
