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


def emit(table: pd.DataFrame | dict, fmt: str, out=None, *, title: str | None = None) -> None:
    """Write ``table`` (a frame, or columns: :func:`write_columns`) in ``fmt``, under
    ``title`` (:func:`heading`) when given."""
    head = heading(title, fmt)
    text = write_columns(table, fmt) if isinstance(table, dict) else FORMATTERS[fmt](table)
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


def emit_matrix(result, fmt: str, title: str, command: str) -> None:
    """P(row beats column) (``result.beats()``, a comparison of
    :mod:`relimpute.confidence`): numbered columns and two decimals where people read it,
    with a line on stderr saying so; full names and every digit in tsv and json."""
    import shutil

    systems = list(result.systems)
    beats = result.beats()
    if fmt in ("tsv", "json"):
        if "system" in systems:  # a run named "system": the frame says how pandas names it
            emit(result.matrix().reset_index(), fmt, title=title)
            return
        emit({"system": systems} | {name: beats[:, j] for j, name in enumerate(systems)}, fmt,
             title=title)  # fmt: skip
        return
    numbers = [str(i) for i in range(1, len(systems) + 1)]
    labels = [f"{n:>{len(numbers[-1])}} {name}" for n, name in zip(numbers, systems)]
    width = max(map(len, labels))
    cells = {"system": [label.ljust(width) for label in labels]}
    for number, column in zip(numbers, beats.T.tolist()):
        cells[number] = ["-" if p != p else f"{p:.2f}" for p in column]  # NaN: the diagonal
    line_width = shutil.get_terminal_size((120, 24)).columns if fmt == "table" else None
    head = heading(title, fmt)
    text = write_columns(cells, fmt, justify="left", line_width=line_width)
    sys.stdout.write(head + text.rstrip("\n") + "\n")
    print(
        f"relimpute {command}: columns are numbered as the rows; --format tsv or json prints "
        "full names and all digits",
        file=sys.stderr,
    )
