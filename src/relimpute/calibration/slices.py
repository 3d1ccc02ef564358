"""The critics' tests as slices of a calibration study's pairs.

Agreement is said to weaken among the top-scoring systems (Clarke & Dietz) and between close
systems. Each slice takes the scored pairs (:func:`~relimpute.calibration.scoring.scored_pairs`:
oriented ``confidence``, ``correct``, ``w_i``, ``true_delta_map`` and the runs' ranks by true
MAP among all the collection's runs, ``true_rank_a``/``true_rank_b``) and gives one row per
strategy: pairs, W, accuracy, and the share and accuracy of the pairs stated at ≥ 0.95. The
target (:func:`relimpute.stats.slice_scores`, judged where a slice holds at least 100
pairs): W ≥ 0 and at least 95% of the pairs stated at ≥ 0.95 right.

:func:`top_by_judgments` splits the top-k slice by how many documents its trial judged: what
the judging leaves unjudged the model fills from the runs' consensus, which among a
collection's best runs can order them backwards (Aslam & Savell 2003 on ranking systems by
their agreement; docs/studies.md, "Slices").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..stats import CLOSE, slice_scores

#: the top-k slice's k (both runs among the k best by true MAP)
TOP_K = 10
#: the trials' judgment counts that split the top-k slice (:func:`top_by_judgments`): 0, 1–10,
#: 11–100, 101–1000 and more
JUDGMENT_EDGES = (0, 10, 100, 1000)


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


def _judgment_bins(judgments: np.ndarray, edges=JUDGMENT_EDGES) -> tuple[np.ndarray, list[str]]:
    """Each count's bin (``searchsorted`` on the edges' right sides) and the bins' labels."""
    labels = [f"{lo + 1}–{hi}" if lo + 1 < hi else str(hi) for lo, hi in zip((-1, *edges), edges)]
    labels[0] = str(edges[0])
    return np.searchsorted(np.asarray(edges), judgments, side="left"), [*labels, f">{edges[-1]}"]


def top_by_judgments(scored: pd.DataFrame, trials: pd.DataFrame, strategies, top_k: int = TOP_K) -> pd.DataFrame:
    """The top-k slice of the scored pairs split by the judgments their trial made: per
    strategy and bin (:data:`JUDGMENT_EDGES`), pairs, accuracy, the mean stated confidence
    and W. Accuracy far below the mean confidence is a bias of the model, not chance."""
    made = trials.set_index(["trial", "strategy"])["judgments"]
    rows = []
    for strategy in strategies:
        group = scored[scored["strategy"] == strategy]
        part = group[slice_masks(group, top_k)[f"top-{top_k}"]]
        keys = pd.MultiIndex.from_arrays([part["trial"], part["strategy"]])
        judgments = made.reindex(keys).to_numpy(dtype=float)
        bins, labels = _judgment_bins(judgments)
        bins[np.isnan(judgments)] = -1  # a trial the trials table does not hold: in no bin
        for i, label in enumerate(labels):
            rows_in = part[bins == i]
            n = len(rows_in)
            rows.append({"strategy": strategy, "judgments": label, "pairs": n,
                         "accuracy": float(rows_in["correct"].mean()) if n else float("nan"),
                         "mean_confidence": float(rows_in["confidence"].mean()) if n else float("nan"),
                         "w": float(rows_in["w_i"].mean()) if n else float("nan")})  # fmt: skip
    return pd.DataFrame(rows)
