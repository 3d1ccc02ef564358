"""Candidate, not shipped: a calibrated spread, each sd times a factor chosen on the other collections.

Run from the repository root after ``run.py`` on each collection (it reads the per-seed tables
``runs_k*_seed*.csv`` and ``pairs_k*_seed*.csv``, which are not committed)::

    python examples/estimand_coverage/scaled.py

For each held-out collection, the factor ``c`` of the runs' sd (and separately of the pairs')
is the one that makes the mean E[z²] over every depth and seed of the other two collections 1:
``c² = mean E[z²]`` there. The held-out collection's intervals become ``E ± 1.96 c sd``
(normal) and P(A beats B) ``Φ(E / (c sd))``; the same normal forms with ``c = 1`` are the
baseline they are compared with. Writes ``results/grid/scaled.csv``, and
``results/grid/interval_forms.csv``: per collection, depth and kind, the coverage of the
engine's percentile intervals beside that of ``E ± 1.96 sd`` with the same sd (mean over seeds).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from relimpute.calibration.metrics import bookmaker_w, orient

HERE = Path(__file__).resolve().parent

FOLDERS = {"trec8": HERE / "results", "dl19": HERE / "results" / "dl19",
           "dl21": HERE / "results" / "dl21"}  # fmt: skip


def tables(folder: Path, kind: str) -> pd.DataFrame:
    """Every depth's and seed's per-run (``kind="runs"``) or per-pair table, stacked, with
    ``pool_depth`` and ``seed`` columns."""
    frames = []
    for path in sorted(folder.glob(f"{kind}_k*_seed*.csv")):
        depth, seed = path.stem.split("_")[1:]
        frames.append(pd.read_csv(path).assign(pool_depth=int(depth[1:]), seed=int(seed[4:])))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def forms(frame: pd.DataFrame) -> pd.DataFrame:
    """Per depth: coverage of the percentile intervals and of ``E ± 1.96 sd``, mean over seeds."""
    frame = frame.assign(normal=((frame["truth"] - frame["e"]) / frame["sd"]).abs()
                         <= norm.ppf(0.975))  # fmt: skip
    seeds = frame.groupby(["pool_depth", "seed"])[["covered", "normal"]].mean()
    return seeds.groupby("pool_depth").mean().rename(
        columns={"covered": "percentile_coverage", "normal": "normal_coverage"}
    ).reset_index()


def scored(frame: pd.DataFrame, c: float, pairs: bool) -> dict:
    """Coverage and E[z²] with the sd times ``c``; for pairs also accuracy at P ≥ 0.95 and W."""
    z = (frame["truth"] - frame["e"]) / (c * frame["sd"])
    row = {"c": c, "coverage": float((z.abs() <= norm.ppf(0.975)).mean()),
           "ez2": float(np.nanmean(z**2))}  # fmt: skip
    if pairs:
        decided = frame[frame["truth"] != 0]
        p = norm.cdf(decided["e"] / (c * decided["sd"]))
        confidence, correct = orient(p, decided["truth"].to_numpy() > 0)
        sure = confidence >= 0.95
        row["accuracy_95"] = float(correct[sure].mean()) if sure.any() else float("nan")
        row["w"] = bookmaker_w(confidence, correct)
    return row


def main() -> int:
    data = {name: {kind: tables(folder, kind) for kind in ("runs", "pairs")}
            for name, folder in FOLDERS.items()}  # fmt: skip
    missing = [name for name, d in data.items() if d["runs"].empty]
    if missing:
        print(f"no per-seed tables for {', '.join(missing)}: run run.py first", file=sys.stderr)
        return 1
    rows = []
    for held in FOLDERS:
        for kind in ("runs", "pairs"):
            others = [data[n][kind] for n in FOLDERS if n != held]
            c = float(np.sqrt(np.mean([np.nanmean(((f["truth"] - f["e"]) / f["sd"]) ** 2)
                                       for f in others])))  # fmt: skip
            frame = data[held][kind]
            for label, factor in (("normal, c = 1", 1.0), ("scaled", c)):
                rows.append({"held_out": held, "kind": kind, "interval": label,
                             **scored(frame, factor, kind == "pairs")})  # fmt: skip
    table = pd.DataFrame(rows)
    table.to_csv(HERE / "results" / "grid" / "scaled.csv", index=False, float_format="%.4f")
    print(table.to_string(float_format="%.3f"))
    both = pd.concat([forms(data[name][kind]).assign(collection=name, kind=kind)
                      for name in FOLDERS for kind in ("runs", "pairs")])  # fmt: skip
    both.to_csv(HERE / "results" / "grid" / "interval_forms.csv", index=False, float_format="%.4f")
    print(both.to_string(float_format="%.3f"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
