"""The pool-bias study's slices: the left-out runs by their hole fraction.

A left-out run's *hole fraction* is the share of its top :data:`TOP` documents (over every
topic) left unjudged once its group (or itself) is out of the pool. A correction that works
keeps its bias (corrected − full-pool score) flat against it; trec_eval's score, unjudged
counted nonrelevant (the ``reduced`` column), falls. Per measure and corrector, the runs are
binned by hole fraction (bins :data:`WIDTH` wide) with their mean bias, and the least-squares
slope of the bias on the hole fraction is given per :data:`WIDTH` of holes; ``flat`` when its
size is at most :data:`FLAT`.

The pairs (:func:`pair_slices`): each left-out run against every pooled run left out in
another step, whose full-pool score is known, called from the run's 95% interval; a slice of
variants when runs were left out one by one (their group's other runs still pooled), of new
systems when whole groups were.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .._deprecation import renamed_kwargs
from .._normal import normal_cdf
from ..stats import CLOSE, bookmaker_winnings, slice_scores
from .study_scores import covers

#: the documents of a run whose holes are counted
TOP = 100
#: the hole-fraction bins' width, and the unit of the slope
WIDTH = 0.1
#: a slope at most this large (score per WIDTH of holes) is flat
FLAT = 0.02
#: the label of the uncorrected score (unjudged = nonrelevant)
TREC_EVAL = "trec_eval"


@renamed_kwargs(depth="pool_depth")
def hole_fractions(
    campaign,
    steps: Iterable[tuple[str, Sequence[str], Sequence[str]]],
    pool_depth: int,
    top: int = TOP,
) -> dict[str, float]:
    """Run → share of its top ``top`` documents outside the kept runs' judged depth-``pool_depth``
    pool, for each ``(label, left out, kept)`` step (a run with nothing retrieved: NaN)."""
    out = {}
    for _, left_out, kept in steps:
        rows = campaign.system_rows(list(left_out))
        kept_rows = campaign.system_rows(list(kept))
        holes = np.zeros(len(rows))
        seen = np.zeros(len(rows))
        for topic in campaign.topics:
            known = topic.retrieved(kept_rows, pool_depth) & topic.judged
            ranked = topic.ranking[rows, :top]
            valid = ranked >= 0
            holes += (valid & ~known[np.where(valid, ranked, 0)]).sum(axis=1)
            seen += valid.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = holes / seen
        out.update({r: float(s) if n else float("nan") for r, s, n in zip(left_out, share, seen)})
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
    per_run = _per_run(estimates)
    for (measure, corrector), part in per_run.groupby(["measure", "corrector"], sort=False):
        tilt = slope(part["holes"].to_numpy(), part["bias"].to_numpy(), width)
        known = part[np.isfinite(part["holes"])]
        index = np.floor(known["holes"].to_numpy() / width + 1e-9).astype(int)
        index = np.minimum(index, int(round(1 / width)) - 1)
        for b, runs in known.groupby(index, sort=True):
            rows.append({"measure": measure, "corrector": corrector,
                         "holes": f"{b * width:.2g}-{(b + 1) * width:.2g}", "runs": len(runs),
                         "mean_holes": float(runs["holes"].mean()),
                         "bias": float(runs["bias"].mean()), "slope": tilt,
                         "flat": bool(abs(tilt) <= FLAT) if np.isfinite(tilt) else None})  # fmt: skip
    return pd.DataFrame(rows)


def slices_markdown(slices: pd.DataFrame, table, pairs: pd.DataFrame | None = None) -> str:
    """The report's sections on the slices; ``table`` formats a frame as markdown."""
    paired = "" if pairs is None or pairs.empty else (
        "\n\n## Slices: pairs of a left-out run with the pooled runs\n\n"
        "Each left-out run against every pooled run of another step (its full-pool score known), "
        "P(beats it) from the run's 95% interval as a normal; W, accuracy at ≥ 0.95 and the "
        "target (from 100 pairs: W ≥ 0 and ≥ 95% right at ≥ 0.95); coverage of the runs' "
        "intervals.\n\n" + table(pairs)
    )  # fmt: skip
    return (
        "## Slices: left-out runs by hole fraction\n\n"
        f"Hole fraction: the share of a left-out run's top {TOP} documents unjudged once it is out "
        f"of the pool; bias: mean corrected − full-pool score; slope: of the bias per {WIDTH:g} of "
        f"holes, flat when at most {FLAT:g} in size; {TREC_EVAL}: the reduced-pool score "
        "(unjudged = nonrelevant).\n\n" + table(slices) + paired
    )


#: what the pairs of a study that left runs or groups out are
PAIR_SLICES = {"run": "variants (leave one run out)", "group": "new systems (leave one group out)"}


def pair_slices(estimates: pd.DataFrame, leave: str = "group") -> pd.DataFrame:
    """Per measure and corrector with 95% intervals (``model:…``, ``webber-park-topics``): the
    pairs of each left-out run with every pooled run of another step, P(left-out beats it) read
    off the run's interval as a normal (centre the estimate, sd its width / 3.92) against the
    other's full-pool score, right when the full-pool scores agree (ties left out); W,
    accuracy at ≥ 0.95 (:func:`relimpute.stats.slice_scores`), and the runs' ``coverage``; all
    the pairs, then the close ones (|full-pool difference| < 0.01).
    A corrector with several repeats scores every repeat's calls (the counts are per repeat)."""
    rows = []
    with_ci = estimates[estimates["corrector"].str.startswith("model:")
                        | (estimates["corrector"] == "webber-park-topics")]  # fmt: skip
    for (measure, corrector), part in with_ci.groupby(["measure", "corrector"], sort=False):
        truth = estimates[estimates["measure"] == measure].drop_duplicates("run").set_index("run")
        others_truth, others_step = truth["truth"].to_numpy(), truth["group"].to_numpy()
        est, low, high = (part[c].to_numpy(dtype=float) for c in ("estimate", "ci_low", "ci_high"))
        sd = (high - low) / 3.92
        delta = est[:, None] - others_truth[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            point = np.where(delta > 0, 1.0, np.where(delta < 0, 0.0, 0.5))  # a zero-width interval
            p = np.where(sd[:, None] > 0, normal_cdf(delta / sd[:, None]), point)
        true_delta = part["truth"].to_numpy()[:, None] - others_truth[None, :]
        keep = part["group"].to_numpy()[:, None] != others_step[None, :]
        keep &= np.abs(true_delta) > 1e-12
        keep &= np.isfinite(p)
        p, right, close = p[keep], (true_delta > 0)[keep], (np.abs(true_delta) < CLOSE)[keep]
        confidence = np.maximum(p, 1 - p)
        correct = (p >= 0.5) == right
        repeats = max(int(part["repeat"].nunique()), 1)
        covered = covers(low, high, part["truth"].to_numpy())
        name = PAIR_SLICES[leave]
        for name, mask in ((name, np.ones(len(p), bool)), (f"{name}, close (<{CLOSE:g})", close)):
            scores = slice_scores(confidence[mask], correct[mask], bookmaker_winnings(confidence[mask], correct[mask]))
            rows.append({"measure": measure, "corrector": corrector, "slice": name, **scores,
                         "pairs": scores["pairs"] // repeats, "pairs_conf_95": scores["pairs_conf_95"] // repeats,
                         "coverage": float(np.mean(covered))})  # fmt: skip
    return pd.DataFrame(rows)
