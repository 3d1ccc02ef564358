"""The ``--format`` option of every subcommand's tables (formatters:
:mod:`relimpute.studies.tables`)."""

from __future__ import annotations

import sys
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (--help's start-up)

from ..studies.tables import FORMATTERS

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


def emit(frame: pd.DataFrame, fmt: str, out=None, *, title: str | None = None) -> None:
    """Write ``frame`` in ``fmt``, under ``title`` (:func:`heading`) when given."""
    text = FORMATTERS[fmt](frame)
    out = out or sys.stdout
    out.write(heading(title, fmt) + (text if text.endswith("\n") else text + "\n"))


def heading(title: str | None, fmt: str) -> str:
    """What goes above a table in ``fmt`` to say ``title`` (which estimand, ...): the line
    over a table or markdown, a ``%`` comment over LaTeX; beside TSV and JSON (which stay
    machine-readable) it goes to stderr and nothing goes above them."""
    if title is None:
        return ""
    if fmt in ("tsv", "json", "trec"):
        print(title, file=sys.stderr)
        return ""
    return {"markdown": f"{title}\n\n", "latex": f"% {title}\n"}.get(fmt, f"{title}\n")
