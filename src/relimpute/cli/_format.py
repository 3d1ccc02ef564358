"""The ``--format`` option of every subcommand's tables (formatters: :mod:`relimpute._tables`)."""

from __future__ import annotations

import sys
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (--help's start-up)

from .._tables import FORMATTERS

if TYPE_CHECKING:  # pandas is loaded by the commands that make frames, not by --help
    import pandas as pd


def add_format_argument(parser, extra: tuple[str, ...] = ()) -> None:
    """``--format/-f`` with the shared formatters, plus ``extra`` ones the command handles itself."""
    parser.add_argument(
        "--format",
        "-f",
        choices=sorted([*FORMATTERS, *extra]),
        default="table",
        help="output format (default: table)",
    )


def emit(frame: pd.DataFrame, fmt: str, out=None) -> None:
    text = FORMATTERS[fmt](frame)
    (out or sys.stdout).write(text if text.endswith("\n") else text + "\n")
