"""Scoring a calibration study's pairwise predictions: Carterette's (2007) §5 tables in long form.

Pairs whose true ΔMAP is exactly 0 have no winner and are left out. Each
function takes a study (:class:`~relimpute.calibration.study.CalibrationStudy`,
which prints its summary through this module: only its ``pairs``, ``trials``
and ``strategies`` are read), with confidence optionally capped (Carterette's
remedy for over-fitting).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pandas as pd

from ..stats import log_loss
from .metrics import (
    W_CAP,
    bin_labels,
    bin_table,
    bookmaker_terms,
    brier_score,
    cap_confidence,
    expected_calibration_error,
    orient,
)

class Study(Protocol):
    """What scoring reads of a :class:`~relimpute.calibration.study.CalibrationStudy`."""

    pairs: pd.DataFrame
    trials: pd.DataFrame

    @property
    def strategies(self) -> list[str]: ...


#: Run-similarity bins of Table 4 (share of documents retrieved in common).
SIMILARITY_EDGES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
INITIAL_GROUPS = {2: "two initial", 1: "one initial", 0: "no initial"}
TIE_TOLERANCE = 1e-12
N_BOOTSTRAP = 2000


def scored_pairs(study: Study, cap: float | None = None) -> pd.DataFrame:
    """Pairs with a winner, with oriented ``confidence``, ``correct`` and ``w_i`` columns."""
    pairs = study.pairs
    decided = pairs[np.abs(pairs["true_delta_map"].to_numpy()) > TIE_TOLERANCE].copy()
    confidence, correct = orient(decided["p_a_better"].to_numpy(), decided["true_delta_map"].to_numpy() > 0)
    confidence = cap_confidence(confidence, cap)
    decided["confidence"] = confidence
    decided["correct"] = correct
    decided["w_i"] = bookmaker_terms(confidence, correct, W_CAP)
    return decided


def _scores(group: pd.DataFrame) -> dict[str, float]:
    conf = group["confidence"].to_numpy()
    y = group["correct"].to_numpy()
    high = conf >= 0.95
    return {
        "pairs": len(group),
        "w": float(group["w_i"].mean()) if len(group) else float("nan"),
        "accuracy": float(y.mean()) if len(y) else float("nan"),
        "ece": expected_calibration_error(conf, y),
        "brier": brier_score(conf, y),
        "log_loss": log_loss(y, conf) if len(y) else float("nan"),
        "share_conf_95": float(high.mean()) if len(y) else float("nan"),
        "accuracy_conf_95": float(y[high].mean()) if high.any() else float("nan"),
    }


def _bootstrap_w(group: pd.DataFrame, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile 95% interval of W resampling whole trials (pairs within a trial are dependent)."""
    per_trial = group.groupby("trial")["w_i"].agg(["sum", "count"])
    if len(per_trial) < 2:
        return float("nan"), float("nan")
    sums, counts = per_trial["sum"].to_numpy(), per_trial["count"].to_numpy()
    idx = rng.integers(len(sums), size=(N_BOOTSTRAP, len(sums)))
    w = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    low, high = np.percentile(w, [2.5, 97.5])
    return float(low), float(high)


def trial_outcomes(study: Study, cap: float | None = None) -> pd.DataFrame:
    """The per-trial table with the trial's W (mean W_i over its decided pairs) added."""
    scored = scored_pairs(study, cap)
    w = scored.groupby(["trial", "strategy"])["w_i"].mean().rename("w").reset_index()
    return study.trials.merge(w, on=["trial", "strategy"], how="left")


def summary_frame(study: Study, cap: float | None = None) -> pd.DataFrame:
    """One row per strategy: W (with a trial-bootstrap interval), ECE, Brier, log loss, judgments, τ."""
    scored = scored_pairs(study, cap)
    rows = []
    for strategy in study.strategies:
        group = scored[scored["strategy"] == strategy]
        trials = study.trials[study.trials["strategy"] == strategy]
        judged = trials["judgments"].to_numpy()
        low, high = _bootstrap_w(group, np.random.default_rng(0))
        rows.append(
            {
                "strategy": strategy,
                "trials": len(trials),
                **_scores(group),
                "w_low": low,
                "w_high": high,
                "ties_excluded": int((study.pairs["strategy"] == strategy).sum() - len(group)),
                "median_judgments": float(np.median(judged)),
                "mean_judgments": float(np.mean(judged)),
                "share_zero_judgments": float(np.mean(judged == 0)),
                "share_stopped_at_budget": float(np.mean(trials["stopped_because"] == "budget"))
                if study.config.get("max_judgments") else 0.0,
                "mean_tau": float(trials["tau"].mean()),
                "trials_with_warnings": int((trials.get("warnings", pd.Series(0, index=trials.index)) > 0).sum()),
            }
        )
    return pd.DataFrame(rows)


def bins_frame(study: Study, cap: float | None = None) -> pd.DataFrame:
    """Table 2 in long form: strategy × confidence bin, with count, share and accuracy."""
    scored = scored_pairs(study, cap)
    parts = []
    for strategy in study.strategies:
        group = scored[scored["strategy"] == strategy]
        table = bin_table(group["confidence"].to_numpy(), group["correct"].to_numpy())
        table.insert(0, "strategy", strategy)
        parts.append(table)
    return pd.concat(parts, ignore_index=True)


def breakdown_frame(study: Study, by: str, cap: float | None = None) -> pd.DataFrame:
    """Table 3 (``by="initial"``) or Table 4 (``by="similarity"``) in long form.

    One row per (strategy, group, confidence bin) with count, share and
    accuracy, and the group's W, accuracy and pair count repeated on its rows.
    """
    scored = scored_pairs(study, cap)
    if by == "initial":
        labels = scored["n_initial"].map(INITIAL_GROUPS)
        order = list(INITIAL_GROUPS.values())
    elif by == "similarity":
        edges = np.asarray(SIMILARITY_EDGES)
        idx = np.clip(np.searchsorted(edges, scored["similarity"].to_numpy(), side="right") - 1, 0, len(edges) - 2)
        names = bin_labels(SIMILARITY_EDGES)
        labels = pd.Series([names[i] for i in idx], index=scored.index)
        order = names
    else:
        raise ValueError(f"by must be 'initial' or 'similarity', got {by!r}")
    scored = scored.assign(group=labels)
    parts = []
    for strategy in study.strategies:
        for name in order:
            group = scored[(scored["strategy"] == strategy) & (scored["group"] == name)]
            if group.empty:
                continue
            table = bin_table(group["confidence"].to_numpy(), group["correct"].to_numpy())
            table.insert(0, "group", name)
            table.insert(0, "strategy", strategy)
            table["group_pairs"] = len(group)
            table["group_w"] = float(group["w_i"].mean())
            table["group_accuracy"] = float(group["correct"].mean())
            parts.append(table)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
