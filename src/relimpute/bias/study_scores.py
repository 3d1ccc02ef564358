"""The pool-bias study's scores of the correctors: MAE, SRE, SRE*, τ-b, coverage
(:mod:`relimpute.bias.study`'s docstring defines them)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

FILTERS = ("all", "top75")
#: scores within this of each other are tied in the rank errors
TIE = 1e-9


def paired_p_values(scores: np.ndarray) -> np.ndarray:
    """``(P, P)`` two-sided paired t-test p-values of ``(P, T)`` scores (1 on the diagonal)."""
    diff = scores[:, None, :] - scores[None, :, :]
    n = scores.shape[1]
    mean = diff.mean(axis=2)
    sd = diff.std(axis=2, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    p = 2.0 * stats.t.sf(np.abs(t), df=n - 1)
    p = np.where(sd > 0, p, np.where(mean == 0, 1.0, 0.0))
    np.fill_diagonal(p, 1.0)
    return p


def study_metrics(
    estimates: pd.DataFrame, truth: np.ndarray, pooled: Sequence[str], names: Sequence[str]
) -> pd.DataFrame:
    """MAE, SRE, SRE*, τ-b and coverage per corrector, measure and filter (module docstring)."""
    position = {r: i for i, r in enumerate(pooled)}
    rows = []
    for k, measure in enumerate(names):
        true_all = truth[k].mean(axis=1)
        p_all = paired_p_values(truth[k])
        cut = np.sort(true_all)[len(true_all) // 4]
        for filt in FILTERS:
            keep = np.ones(len(pooled), dtype=bool) if filt == "all" else true_all >= cut
            kept_idx = np.flatnonzero(keep)
            sub = estimates[estimates["measure"] == measure]
            for corrector, by_corrector in sub.groupby("corrector", sort=False):
                per_repeat = []
                for _, frame in by_corrector.groupby("repeat"):
                    frame = frame[keep[[position[r] for r in frame["run"]]]]
                    if len(frame) < 2:
                        continue
                    idx = np.array([position[r] for r in frame["run"]])
                    est = frame["estimate"].to_numpy()
                    tru = true_all[idx]
                    local = {p: i for i, p in enumerate(kept_idx)}
                    sre, sre_star = rank_errors(
                        true_all[kept_idx],
                        np.array([local[i] for i in idx]),
                        est,
                        [pooled[i] for i in kept_idx],
                        p_all[np.ix_(kept_idx, kept_idx)],
                    )
                    tau = stats.kendalltau(tru, est).statistic
                    low, high = frame["ci_low"].to_numpy(), frame["ci_high"].to_numpy()
                    has = np.isfinite(low) & np.isfinite(high)
                    per_repeat.append(
                        {
                            "mae": float(np.mean(np.abs(tru - est))),
                            "bias": float(np.mean(est - tru)),
                            "sre": sre,
                            "sre_star": sre_star,
                            "tau": float(tau),
                            "coverage": float(np.mean(covers(low[has], high[has], tru[has])))
                            if has.any()
                            else np.nan,
                            "width": float(np.mean(high[has] - low[has])) if has.any() else np.nan,
                            "n_runs": len(frame),
                        }
                    )
                if per_repeat:
                    mean = pd.DataFrame(per_repeat).mean(numeric_only=True)
                    rows.append(
                        {
                            "corrector": corrector,
                            "measure": measure,
                            "filter": filt,
                            **mean.to_dict(),
                        }
                    )
    frame = pd.DataFrame(rows)
    frame["n_runs"] = frame["n_runs"].round().astype(int)
    return frame


def covers(low: np.ndarray, high: np.ndarray, value: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """``low ≤ value ≤ high`` up to ``tol``: a degenerate interval (nothing left unjudged) is
    ``[x, x]`` with ``x`` computed along another path than the full-pool score."""
    return (low - tol <= value) & (value <= high + tol)


def rank_errors(
    true: np.ndarray,
    moved: np.ndarray,
    estimate: np.ndarray,
    names: Sequence[str],
    p_values: np.ndarray,
    alpha: float = 0.05,
) -> tuple[int, int]:
    """``(SRE, SRE*)`` of runs ``moved`` placed at ``estimate`` among the others' true scores.

    As PoolBiasEstimators' ``ScoresError``: a run's true rank is 1 + the number
    of true scores above it; its new rank 1 + the number of the *other* runs'
    true scores above its estimate; SRE* counts the runs whose position (true
    order, ties by name descending) lies between the two and whose paired
    test against the moved run has p < ``alpha``. Scores equal to ``TIE``
    count as tied (means computed along different paths differ in the last bits,
    and P@k and its corrections are often exactly equal).
    """
    true = np.round(np.asarray(true, dtype=float) / TIE) * TIE
    estimate = np.round(np.asarray(estimate, dtype=float) / TIE) * TIE
    order = sorted(range(len(true)), key=lambda i: names[i], reverse=True)
    order = sorted(order, key=lambda i: -true[i])
    position = np.empty(len(true), dtype=int)
    position[order] = np.arange(1, len(true) + 1)
    sre = sre_star = 0
    for i, est in zip(moved, estimate):
        others = np.arange(len(true)) != i
        old = 1 + int((true > true[i]).sum())
        new = 1 + int((true[others] > est).sum())
        sre += abs(old - new)
        passed = others & (
            ((new <= position) & (position < old)) | ((old < position) & (position <= new))
        )
        sre_star += int((passed & (p_values[i] < alpha)).sum())
    return sre, sre_star
