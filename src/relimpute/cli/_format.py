"""One formatter table for every subcommand's tabular output."""

from __future__ import annotations

import json
import sys

import pandas as pd


def _table(frame: pd.DataFrame) -> str:
    return frame.to_string(index=False, float_format=lambda x: f"{x:.4f}")


def _tsv(frame: pd.DataFrame) -> str:
    return frame.to_csv(sep="\t", index=False, float_format="%.6g")


def _json(frame: pd.DataFrame) -> str:
    # NaN is not JSON: missing values become null.
    records = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    return json.dumps(records, indent=2, default=float) + "\n"


def _markdown(frame: pd.DataFrame) -> str:
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        cells = [f"{v:.4f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


FORMATTERS = {"table": _table, "tsv": _tsv, "json": _json, "markdown": _markdown}


def add_format_argument(parser) -> None:
    parser.add_argument(
        "--format", "-f", choices=sorted(FORMATTERS), default="table", help="output format (default: table)"
    )


def emit(frame: pd.DataFrame, fmt: str, out=None) -> None:
    text = FORMATTERS[fmt](frame)
    (out or sys.stdout).write(text if text.endswith("\n") else text + "\n")
