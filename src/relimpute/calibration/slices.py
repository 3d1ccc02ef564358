"""The critics' tests as slices of a calibration study's pairs.

Agreement is said to weaken among the top-scoring systems (Clarke & Dietz) and between close
systems. Each slice takes the scored pairs (:func:`~relimpute.calibration.scoring.scored_pairs`:
oriented ``confidence``, ``correct``, ``w_i``, ``true_delta_map`` and the runs' ranks by true
MAP among all the collection's runs, ``true_rank_a``/``true_rank_b``) and gives one row per
strategy: pairs, W, accuracy, and the share and accuracy of the pairs stated at ≥ 0.95. The
target (met where a slice holds at least :data:`MIN_PAIRS` pairs): W ≥ 0 and at least 95% of
the pairs stated at ≥ 0.95 right.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the top-k slice's k (both runs among the k best by true MAP)
TOP_K = 10
#: pairs closer than this in true ΔMAP are "close"
CLOSE = 0.01
#: fewer pairs than this in a slice: its target is not judged
MIN_PAIRS = 100
#: the confidence of the "stated at ≥ 0.95" columns
STATED = 0.95


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


def slice_row(confidence: np.ndarray, correct: np.ndarray, w_i: np.ndarray) -> dict[str, float]:
    """One slice's scores: pairs, W, accuracy, share and accuracy at ≥ 0.95, the target."""
    conf = np.asarray(confidence, dtype=float)
    y = np.asarray(correct, dtype=bool)
    high = conf >= STATED
    n = len(conf)
    w = float(np.mean(w_i)) if n else float("nan")
    acc_high = float(y[high].mean()) if high.any() else float("nan")
    if n < MIN_PAIRS:
        target = "too few pairs"
    else:
        target = "met" if w >= 0 and not acc_high < STATED else "missed"  # no pair at 0.95: met
    return {
        "pairs": n,
        "w": w,
        "accuracy": float(y.mean()) if n else float("nan"),
        "pairs_conf_95": int(high.sum()),
        "share_conf_95": float(high.mean()) if n else float("nan"),
        "accuracy_conf_95": acc_high,
        "target": target,
    }


def slices_frame(scored: pd.DataFrame, strategies, top_k: int = TOP_K, close: float = CLOSE) -> pd.DataFrame:
    """One row per (strategy, slice) of the scored pairs (module docstring)."""
    rows = []
    for strategy in strategies:
        group = scored[scored["strategy"] == strategy]
        for name, mask in slice_masks(group, top_k, close).items():
            part = group[mask]
            rows.append({"strategy": strategy, "slice": name,
                         **slice_row(part["confidence"].to_numpy(), part["correct"].to_numpy(),
                                     part["w_i"].to_numpy())})  # fmt: skip
    return pd.DataFrame(rows)
