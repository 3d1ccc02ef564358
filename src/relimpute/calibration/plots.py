"""The reliability diagram: confidence against accuracy per strategy (Carterette 2007, Figure 2).

Read at a glance: the diagonal is labelled "perfectly calibrated" (points
below it are over-confident), each bin's accuracy carries its 95% Wilson
interval, the pairs per bin are a bar panel underneath (so counts never
overprint), bins with fewer than :data:`FEW_PAIRS` pairs are drawn hollow
with a note saying they are too few to read, and the title names the study.
The Wilson intervals treat a bin's pairs as independent; pairs of one trial
share runs, so read them as a lower bound on the noise.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..stats import wilson_interval

#: Bins with fewer pairs than this are drawn hollow: their accuracy is too noisy to read.
FEW_PAIRS = 30


def reliability_diagram(
    bins: pd.DataFrame,
    path: str | os.PathLike,
    *,
    capped: pd.DataFrame | None = None,
    cap: float | None = None,
    title: str = "Reliability of P(A beats B)",
) -> Path:
    """Plot accuracy against mean confidence per bin, with Wilson intervals and counts.

    Parameters
    ----------
    bins
        :func:`relimpute.calibration.report.bins_frame` output (``strategy, bin,
        n, mean_confidence, accuracy``).
    path
        Output file; the format follows the suffix (``.png``, ``.svg``, ...).
    capped
        The same table with confidence capped, drawn as a second panel.
    cap
        The cap, for the second panel's title.
    title
        The figure's title: name the study (collection, trials, runs per trial).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("uncapped confidence", bins)]
    if capped is not None:
        panels.append((f"confidence capped at {cap:g}", capped))
    fig, axes = plt.subplots(
        2,
        len(panels),
        figsize=(6.0 * len(panels), 7.0),
        squeeze=False,
        gridspec_kw={"height_ratios": [3, 1]},
    )
    few = False
    for column, (subtitle, table) in enumerate(panels):
        few |= _accuracy_panel(axes[0, column], table, subtitle)
        _count_panel(axes[1, column], table)
    fig.suptitle(title, fontsize=11)
    if few:
        fig.text(
            0.5,
            0.005,
            f"hollow markers: bins with fewer than {FEW_PAIRS} pairs, too few to read; "
            "bars: 95% Wilson intervals",
            ha="center",
            va="bottom",
            fontsize=8,
        )
    fig.tight_layout(rect=(0, 0.03 if few else 0, 1, 1))
    from .._files import save_figure

    try:
        return save_figure(fig, path, dpi=120)
    finally:
        plt.close(fig)


def _strategies(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table["strategy"]))


def _accuracy_panel(ax, table: pd.DataFrame, subtitle: str) -> bool:
    """Accuracy per bin with Wilson intervals; True when some bin holds too few pairs."""
    ax.plot([0.5, 1.0], [0.5, 1.0], color="black", lw=1.0, ls="--", label="perfectly calibrated")
    few, lowest = False, 0.5
    for index, strategy in enumerate(_strategies(table)):
        part = table[(table["strategy"] == strategy) & (table["n"] > 0)]
        x = part["mean_confidence"].to_numpy(float)
        y = part["accuracy"].to_numpy(float)
        n = part["n"].to_numpy(int)
        low, high = wilson_interval(np.rint(y * n), n)
        lowest = float(np.nanmin(np.r_[low, lowest]))
        color = f"C{index}"
        ax.errorbar(
            x, y, yerr=[y - low, high - y], color=color, marker="", capsize=3, lw=1.2, label=strategy
        )
        sparse = n < FEW_PAIRS
        few |= bool(sparse.any())
        ax.scatter(x[~sparse], y[~sparse], color=color, zorder=3, s=25)
        ax.scatter(x[sparse], y[sparse], facecolors="white", edgecolors=color, zorder=3, s=25)
    ax.set_xlim(0.48, 1.01)
    ax.set_ylim(max(0.0, lowest - 0.03), 1.02)
    ax.set_xlabel("stated confidence (mean per bin)")
    ax.set_ylabel("accuracy (share of calls right)")
    ax.set_title(f"{subtitle}; below the diagonal = over-confident", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return few


def _count_panel(ax, table: pd.DataFrame) -> None:
    """Pairs per bin: grouped bars, one per strategy, labelled with the count."""
    labels = list(dict.fromkeys(table["bin"]))
    strategies = _strategies(table)
    width = 0.8 / max(len(strategies), 1)
    position = np.arange(len(labels))
    for index, strategy in enumerate(strategies):
        part = table[table["strategy"] == strategy].set_index("bin").reindex(labels)
        counts = part["n"].fillna(0).to_numpy(int)
        bars = ax.bar(position + (index - (len(strategies) - 1) / 2) * width, counts, width,
                      color=f"C{index}")  # fmt: skip
        ax.bar_label(
            bars, labels=[str(c) if c else "" for c in counts], fontsize=6, padding=2, rotation=90
        )
    ax.set_xticks(position, labels, fontsize=7)
    ax.set_ylabel("pairs per bin", fontsize=8)
    ax.margins(y=0.45)
    ax.tick_params(axis="y", labelsize=7)
