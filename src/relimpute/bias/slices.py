"""The pool-bias study's slices: the left-out runs by their hole fraction.

A left-out run's *hole fraction* is the share of its top :data:`TOP` documents (over every
topic) left unjudged once its group (or itself) is out of the pool. A correction that works
keeps its bias (corrected − full-pool score) flat against it; trec_eval's score, unjudged
counted nonrelevant (the ``reduced`` column), falls. Per measure and corrector, the runs are
binned by hole fraction (bins :data:`WIDTH` wide) with their mean bias, and the least-squares
slope of the bias on the hole fraction is given per :data:`WIDTH` of holes; ``flat`` when its
size is at most :data:`FLAT`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

#: the documents of a run whose holes are counted
TOP = 100
#: the hole-fraction bins' width, and the unit of the slope
WIDTH = 0.1
#: a slope at most this large (score per WIDTH of holes) is flat
FLAT = 0.02
#: the label of the uncorrected score (unjudged = nonrelevant)
TREC_EVAL = "trec_eval"


def hole_fractions(
    campaign, steps: Iterable[tuple[str, Sequence[str], Sequence[str]]], depth: int, top: int = TOP
) -> dict[str, float]:
    """Run → share of its top ``top`` documents outside the kept runs' judged depth-``depth``
    pool, for each ``(label, left out, kept)`` step (a run with nothing retrieved: NaN)."""
    out = {}
    for _, left_out, kept in steps:
        rows = campaign.system_rows(list(left_out))
        kept_rows = campaign.system_rows(list(kept))
        holes = np.zeros(len(rows))
        seen = np.zeros(len(rows))
        for topic in campaign.topics:
            known = topic.retrieved(kept_rows, depth) & topic.judged
            ranked = topic.ranking[rows, :top]
            valid = ranked >= 0
            holes += (valid & ~known[np.where(valid, ranked, 0)]).sum(axis=1)
            seen += valid.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = holes / seen
        out.update({run: float(s) if n else float("nan") for run, s, n in zip(left_out, share, seen)})
    return out


def _per_run(estimates: pd.DataFrame) -> pd.DataFrame:
    """One row per (measure, corrector, run): bias and holes, repeats averaged; trec_eval's
    score (the ``reduced`` column) added as a corrector of its own."""
    keys = ["measure", "corrector", "run"]
    table = estimates.assign(bias=estimates["estimate"] - estimates["truth"])
    runs = table.groupby(keys, sort=False)[["bias", "holes"]].mean().reset_index()
    plain = table.drop_duplicates(["measure", "run"]).assign(corrector=TREC_EVAL)
    plain = plain.assign(bias=plain["reduced"] - plain["truth"])[keys + ["bias", "holes"]]
    return pd.concat([plain, runs], ignore_index=True)


def slope(holes: np.ndarray, bias: np.ndarray, width: float = WIDTH) -> float:
    """Least-squares slope of ``bias`` on ``holes``, per ``width`` of holes (NaN: fewer than two
    distinct hole fractions)."""
    x, y = np.asarray(holes, dtype=float), np.asarray(bias, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if len(np.unique(x)) < 2:
        return float("nan")
    return float(np.polyfit(x, y, 1)[0] * width)


def hole_slices(estimates: pd.DataFrame, width: float = WIDTH) -> pd.DataFrame:
    """Per measure, corrector and hole-fraction bin: runs, mean holes, mean bias; the
    corrector's slope per ``width`` of holes and whether it is flat, repeated on its rows.
    ``estimates`` needs ``measure, corrector, run, reduced, estimate, truth, holes``."""
    if estimates.empty or "holes" not in estimates:
        return pd.DataFrame()
    rows = []
    for (measure, corrector), part in _per_run(estimates).groupby(["measure", "corrector"], sort=False):
        tilt = slope(part["holes"].to_numpy(), part["bias"].to_numpy(), width)
        known = part[np.isfinite(part["holes"])]
        index = np.floor(known["holes"].to_numpy() / width + 1e-9).astype(int)
        index = np.minimum(index, int(round(1 / width)) - 1)
        for b, runs in known.groupby(index, sort=True):
            rows.append({"measure": measure, "corrector": corrector,
                         "holes": f"{b * width:.2g}-{(b + 1) * width:.2g}", "runs": len(runs),
                         "mean_holes": float(runs["holes"].mean()), "bias": float(runs["bias"].mean()),
                         "slope": tilt, "flat": bool(abs(tilt) <= FLAT) if np.isfinite(tilt) else None})  # fmt: skip
    return pd.DataFrame(rows)


def slices_markdown(slices: pd.DataFrame, table) -> str:
    """The report's section on the slices; ``table`` formats a frame as markdown."""
    return (
        "## Slices: left-out runs by hole fraction\n\n"
        f"Hole fraction: the share of a left-out run's top {TOP} documents unjudged once it is out "
        f"of the pool; bias: mean corrected − full-pool score; slope: of the bias per {WIDTH:g} of "
        f"holes, flat when at most {FLAT:g} in size; {TREC_EVAL}: the reduced-pool score "
        "(unjudged = nonrelevant).\n\n" + table(slices)
    )
