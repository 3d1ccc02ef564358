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
