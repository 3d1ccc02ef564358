"""The ``--format`` option of every subcommand's tables (formatters:
:mod:`relimpute.studies.tables`). A table is a frame, or its columns (name -> list or array),
which are written without pandas when they can be (:func:`write_columns`)."""

from __future__ import annotations

import sys
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (--help's start-up)

from ..studies.tables import FORMATTERS, columns_text

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


def emit(table: pd.DataFrame | dict, fmt: str, out=None, *, title: str | None = None,
         **layout) -> None:
    """Write ``table`` (a frame, or columns: :func:`write_columns`, laid out by ``layout``,
    its ``justify`` and ``line_width``) in ``fmt``, under ``title`` (:func:`heading`) when
    given."""
    head = heading(title, fmt)
    if isinstance(table, dict):
        text = write_columns(table, fmt, **layout)
    else:
        text = FORMATTERS[fmt](table)
    out = out or sys.stdout
    out.write(head + (text if text.endswith("\n") else text + "\n"))


def write_columns(columns: dict, fmt: str, *, justify: str = "right",
                  line_width: int | None = None) -> str:
    """``FORMATTERS[fmt]`` of the frame of ``columns`` (``table``: its ``to_string`` with
    ``justify`` and ``line_width``), the same text without pandas when every column is all
    text, all integers or all floats (:func:`relimpute.studies.tables.columns_text`)."""
    text = columns_text(columns, fmt, justify=justify, line_width=line_width)
    if text is not None:
        return text
    import pandas as pd

    frame = pd.DataFrame(columns)
    if fmt == "table" and (justify != "right" or line_width is not None):
        return frame.to_string(index=False, justify=justify, line_width=line_width)
    return FORMATTERS[fmt](frame)


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

