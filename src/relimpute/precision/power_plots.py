"""Figures of power and bias against judging effort (Cormack & Lynam 2007, Figures 1-4)."""

from __future__ import annotations

import os

import pandas as pd


def plot_power_curves(
    curves: pd.DataFrame, path: str | os.PathLike, *, alpha: float = 0.05, title: str = ""
) -> None:
    """One column per strategy × measure: power (top) and bias (bottom) against judgments,
    one line per number of topics, one point per pool depth."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = curves[["strategy", "measure"]].drop_duplicates().itertuples(index=False)
    panels = list(panels)
    fig, axes = plt.subplots(
        2, len(panels), figsize=(4 * len(panels), 6.5), squeeze=False, sharey="row"
    )
    for col, (strategy, measure) in enumerate(panels):
        rows = curves[(curves.strategy == strategy) & (curves.measure == measure)]
        for n, group in rows.groupby("n_topics"):
            group = group.sort_values("effort")
            for row, field in enumerate(("power", "bias")):
                ax = axes[row, col]
                ax.plot(group["effort"], group[field], marker="o", ms=3, label=f"{n} topics")
                ax.set_xscale("log")
        axes[0, col].set_title(f"{strategy}, {measure}")
        axes[1, col].axhline(alpha, color="grey", lw=0.8, ls="--")
        axes[1, col].set_xlabel("judgments")
    axes[0, 0].set_ylabel("power (share of pairs with p < α)")
    axes[1, 0].set_ylabel("bias (significant, wrong sign)")
    axes[0, -1].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    from .._files import save_figure

    try:
        save_figure(fig, path, dpi=120)
    finally:
        plt.close(fig)
