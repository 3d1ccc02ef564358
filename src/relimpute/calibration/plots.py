"""The reliability diagram: confidence against accuracy per strategy (Carterette 2007, Figure 2)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd


def reliability_diagram(
    bins: pd.DataFrame,
    path: str | os.PathLike,
    *,
    capped: pd.DataFrame | None = None,
    cap: float | None = None,
) -> Path:
    """Plot accuracy against mean confidence per bin, with counts and the break-even line.

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
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("uncapped confidence", bins)]
    if capped is not None:
        panels.append((f"confidence capped at {cap:g}", capped))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.0 * len(panels), 5.5), squeeze=False)
    for ax, (title, table) in zip(axes[0], panels):
        ax.plot([0.5, 1.0], [0.5, 1.0], color="black", lw=1.0, label="break-even (W = 0)")
        for strategy in dict.fromkeys(table["strategy"]):
            part = table[(table["strategy"] == strategy) & (table["n"] > 0)]
            x = part["mean_confidence"].to_numpy(float)
            y = part["accuracy"].to_numpy(float)
            (line,) = ax.plot(x, y, marker="o", label=strategy)
            for xi, yi, n in zip(x, y, part["n"].to_numpy()):
                ax.annotate(
                    f"{n}",
                    (xi, yi),
                    textcoords="offset points",
                    xytext=(0, 6),
                    ha="center",
                    fontsize=7,
                    color=line.get_color(),
                )
        ax.set_xlim(0.48, 1.01)
        ax.set_ylim(max(0.0, np.nanmin(np.r_[table["accuracy"].to_numpy(float), 0.5]) - 0.05), 1.02)
        ax.set_xlabel("confidence (mean per bin)")
        ax.set_ylabel("accuracy")
        ax.set_title(title + " — numbers: pairs per bin", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
