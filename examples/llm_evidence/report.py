"""The headline table (markdown) and the figure of the LLM-evidence study, from ``summary.csv``.

Run from the repository root after ``study.py``::

    python examples/llm_evidence/report.py [--results examples/llm_evidence/results]

Writes ``headline.md`` (one row per collection, design and method, for the source
``--source``; then fusion-llm with every source) and ``headline.png``, drawn from
``--figure-from`` (default ``headline_pool.csv``: the four designs measured on the current
engine, with fusion-llm taking the labels' documents as the pool beside its default reading).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from relimpute._files import save_figure

COLUMNS = {
    "mean_abs_bias": "mean abs bias MAP",
    "tau": "τ",
    "map_coverage": "MAP cov.",
    "map_width": "MAP width",
    "delta_coverage": "ΔMAP cov.",
    "delta_width": "ΔMAP width",
    "W": "W",
    "share_sure": "share ≥0.95",
    "accuracy_sure": "acc. ≥0.95",
}
ORDER = ("substitution", "ppi", "ppi++", "fusion", "fusion-llm", "fusion-llm, pool")


def _markdown(frame: pd.DataFrame) -> str:
    keys = ["collection", "design", "size", "human_per_topic", "method", "source"]
    shown = frame[keys + list(COLUMNS)].rename(columns=COLUMNS)
    head = "| " + " | ".join(shown.columns) + " |\n|" + "---|" * len(shown.columns) + "\n"
    body = "".join(
        "| " + " | ".join("" if pd.isna(v) else f"{v:.3f}" if isinstance(v, float) else str(v) for v in r) + " |\n"
        for r in shown.itertuples(index=False)
    )
    return head + body


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--source", default="umbrela-gpt-4o")
    parser.add_argument("--figure-from", default="headline_pool.csv", help="results file the figure draws")
    args = parser.parse_args(argv)
    summary = pd.read_csv(args.results / "summary.csv")
    summary["order"] = summary["method"].map({m: i for i, m in enumerate(ORDER)})
    summary = summary.sort_values(["collection", "design", "size", "order"], kind="stable")
    one = summary[(summary["source"] == args.source) | (summary["method"] == "fusion")]
    llm = summary[summary["method"] == "fusion-llm"]
    text = (
        f"# LLM evidence: headline ({args.source})\n\n" + _markdown(one)
        + "\n## fusion-llm with each label source\n\n" + _markdown(llm)
    )  # fmt: skip
    (args.results / "headline.md").write_text(text)
    print(text)
    _figure(pd.read_csv(args.results / args.figure_from), args.source, args.results / "headline.png")
    return 0


def _figure(summary: pd.DataFrame, source: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary[(summary["source"] == source) | (summary["method"] == "fusion")]
    methods = [m for m in ORDER if (rows["method"] == m).any()]
    settings = rows[["collection", "design", "size"]].drop_duplicates().itertuples(index=False)
    settings = list(settings)
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.8), gridspec_kw={"width_ratios": [1.6, 1]})
    width = 0.8 / len(methods)
    for j, method in enumerate(methods):
        part = rows[rows["method"] == method].set_index(["collection", "design", "size"])
        bias = [part["mean_abs_bias"].get(tuple(s), float("nan")) for s in settings]
        axes[0].bar([i + j * width for i in range(len(settings))], bias, width, label=method)
        cov = part.reindex([tuple(s) for s in settings])
        axes[1].scatter(cov["delta_width"], cov["delta_coverage"], label=method)
    axes[0].set_xticks([i + 0.4 - width / 2 for i in range(len(settings))])
    axes[0].set_xticklabels([f"{c} {d} {s}" for c, d, s in settings], rotation=45, ha="right", fontsize=8)
    axes[0].axhline(0.01, color="grey", lw=0.8, ls="--")
    axes[0].set_ylabel("mean |bias| of MAP")
    axes[0].legend(fontsize=8)
    axes[1].axhspan(0.93, 0.97, color="grey", alpha=0.2)
    axes[1].set_xlabel("mean width of 95% interval for ΔMAP")
    axes[1].set_ylabel("coverage of ΔMAP intervals")
    fig.suptitle(f"LLM labels ({source}) with few human labels: DL 2019 and DL 2021")
    fig.tight_layout()
    save_figure(fig, path, dpi=110, colors=256)


if __name__ == "__main__":
    raise SystemExit(main())
