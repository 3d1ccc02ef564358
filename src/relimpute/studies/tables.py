"""One formatter table for every tabular output: the CLI's ``--format`` and the studies' files.

Each formatter turns a DataFrame into text: an aligned table, TSV, JSON
records (NaN as null), markdown or a booktabs LaTeX ``tabular``.
"""

from __future__ import annotations

import math
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (--help's start-up)

if TYPE_CHECKING:  # pandas is loaded by the commands that make frames, not by --help
    import pandas as pd


def _table(frame: pd.DataFrame) -> str:
    return frame.to_string(index=False, float_format=lambda x: f"{x:.4f}")


def plain_table(columns: dict[str, list]) -> str | None:
    """:func:`_table`'s text of a frame of these columns (each all ``str``, all ``int`` or all
    ``float``) without pandas, or None for anything else (a tab or line break in a text
    cell, which pandas escapes; other types). Numbers right-aligned under a header one wider
    than its name, floats to 4 decimals (NaN as ``NaN``), one space between columns."""
    widths, cells = [], []
    for name, values in columns.items():
        if all(type(v) is str for v in values):
            if any(c in v for v in values for c in "\t\r\n"):
                return None
            text, numeric = values, False
        elif all(type(v) is int for v in values):
            text, numeric = [f"{v:d}" for v in values], True
        elif all(type(v) is float for v in values):
            text, numeric = ["NaN" if math.isnan(v) else f"{v:.4f}" for v in values], True
        else:
            return None
        widths.append(max([len(name) + numeric] + [len(t) for t in text]))
        cells.append(text)
    lines = [" ".join(n.rjust(w) for n, w in zip(columns, widths))]
    lines += [" ".join(t.rjust(w) for t, w in zip(row, widths)) for row in zip(*cells)]
    return "\n".join(lines)


def _tsv(frame: pd.DataFrame) -> str:
    # every digit (Python's shortest repr, which reads back to the same float): it is for programs
    return frame.to_csv(sep="\t", index=False)


def _json(frame: pd.DataFrame) -> str:
    # NaN is not JSON: missing values become null.
    records = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    import json

    return json.dumps(records, indent=2, default=float) + "\n"


def _cell(value, missing: str) -> str:
    """A number to 4 decimals, a missing value (NaN) as ``missing``, anything else as text."""
    if isinstance(value, float):
        return missing if math.isnan(value) else f"{value:.4f}"
    return str(value)


def markdown_text(value) -> str:
    """Text safe inside a markdown table cell: ``|`` as ``\\|``, a line break as ``<br>``
    (a run named ``a|b`` would otherwise add a column, a newline end the table)."""
    text = str(value).replace("\\", "\\\\").replace("|", "\\|")
    return text.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


def _markdown(frame: pd.DataFrame) -> str:
    cols = [markdown_text(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(markdown_text(_cell(v, "-")) for v in row) + " |")
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {
    "~": r"\textasciitilde{}",
    "^": r"\^{}",
    "\\": r"\textbackslash{}",
}


def _latex_text(value) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in str(value))


def _latex(frame: pd.DataFrame) -> str:
    """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``): text left, numbers right."""
    import pandas as pd

    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    spec = "".join("r" if n else "l" for n in numeric)
    lines = [
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(_latex_text(c) for c in frame.columns) + r" \\",
        "\\midrule",
    ]
    for row in frame.itertuples(index=False):
        cells = [_cell(v, "--") if isinstance(v, float) else _latex_text(v) for v in row]
        lines.append(" & ".join(cells) + r" \\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


FORMATTERS = {
    "table": _table,
    "tsv": _tsv,
    "json": _json,
    "markdown": _markdown,
    "latex": _latex,
}
