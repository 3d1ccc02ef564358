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


def _kind(values: list) -> str | None:
    """``"str"``, ``"int"`` or ``"float"`` when every value is one (and there is one), else
    None: the column kinds the writers below print as pandas does."""
    for kind in (str, int, float):
        if values and all(type(v) is kind for v in values):
            return kind.__name__
    return None


def _as_lists(columns: dict) -> dict[str, list]:
    return {name: v.tolist() if hasattr(v, "tolist") else list(v) for name, v in columns.items()}


def plain_table(columns: dict[str, list], *, justify: str = "right",
                line_width: int | None = None) -> str | None:
    """:func:`_table`'s text of a frame of these columns (each all ``str``, all ``int`` or all
    ``float``) without pandas, or None for anything else (a tab or line break in a text
    cell, which pandas escapes; other types). Numbers right-aligned under a header one wider
    than its name, floats to 4 decimals (NaN as ``NaN``), one space between columns.

    ``justify="left"`` (text columns only) and ``line_width`` are ``DataFrame.to_string``'s:
    headers to the left, and the columns wrapped into blocks of at most that width."""
    columns = _as_lists(columns)
    strcols = []
    for name, values in columns.items():
        kind = _kind(values)
        if kind == "str":
            if any(c in v for v in values for c in "\t\r\n") or max(map(len, values)) > 50:
                return None  # pandas escapes these, or cuts the cell at its max_colwidth
            text, numeric = values, False
        elif kind == "int" and justify == "right":
            text, numeric = [f"{v:d}" for v in values], True
        elif kind == "float" and justify == "right":
            text, numeric = ["NaN" if math.isnan(v) else f"{v:.4f}" for v in values], True
        else:
            return None
        inner = max(len(t) for t in text)
        width = max([len(name) + numeric, inner])
        side = str.rjust if justify == "right" else str.ljust  # the header, and cells in it
        strcols.append([side(name, width)] + [side(t.rjust(inner), width) for t in text])
    if not strcols:
        return None
    if line_width is None:
        return _adjoin(strcols)
    return _wrapped(strcols, line_width)


def _adjoin(strcols: list[list[str]]) -> str:
    """Columns side by side, one space apart, each cell padded to its column's width (the
    last column to its own): pandas' ``adjoin(1, ...)``."""
    widths = [max(map(len, col)) + 1 for col in strcols[:-1]] + [max(map(len, strcols[-1]))]
    return "\n".join("".join(c.ljust(w) for c, w in zip(row, widths)) for row in zip(*strcols))


def _wrapped(strcols: list[list[str]], line_width: int) -> str:
    """pandas' ``to_string(index=False, line_width=...)``: the columns in blocks (pandas'
    ``_binify``), each but the last marked with a backslash, blocks a blank line apart."""
    widths = [max(map(len, col)) for col in strcols]
    bins, used = [], 0
    for i, w in enumerate(widths):
        used += w + 1
        if i > 0 and used + (1 if i == len(widths) - 1 else 2) > line_width:
            bins.append(i)
            used = w + 1
    bins.append(len(widths))
    blocks, start, n = [], 0, len(strcols[0])
    for i, end in enumerate(bins):
        block = strcols[start:end]
        if len(bins) > 1:
            block = block + [[" \\"] + ["  "] * (n - 1) if i < len(bins) - 1 else [" "] * n]
        blocks.append(_adjoin(block))
        start = end
    return "\n\n".join(blocks)


def _tsv(frame: pd.DataFrame) -> str:
    # every digit (Python's shortest repr, which reads back to the same float): it is for programs
    return frame.to_csv(sep="\t", index=False)


def _tsv_columns(columns: dict[str, list], kinds: list[str]) -> str:
    """:func:`_tsv` of these columns: floats as numpy writes them (``astype(str)``, pandas'
    way; NaN empty), through the csv module with pandas' dialect."""
    import csv
    import io

    import numpy as np

    cells = []
    for values, kind in zip(columns.values(), kinds):
        if kind == "float":
            array = np.array(values, dtype=float)
            text = array.astype(str)
            text[np.isnan(array)] = ""
            values = text.tolist()
        cells.append([str(v) for v in values])
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(list(columns))
    writer.writerows(zip(*cells))
    return out.getvalue()


def _json(frame: pd.DataFrame) -> str:
    # NaN is not JSON: missing values become null.
    return _json_text(frame.astype(object).where(frame.notna(), None).to_dict(orient="records"))


def _json_text(records: list[dict]) -> str:
    import json

    return json.dumps(records, indent=2, default=float) + "\n"


def _json_columns(columns: dict[str, list], kinds: list[str]) -> str:
    cells = [[None if k == "float" and math.isnan(v) else v for v in values]
             for values, k in zip(columns.values(), kinds)]  # fmt: skip
    return _json_text([dict(zip(columns, row)) for row in zip(*cells)])


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
    return _markdown_rows(list(frame.columns), frame.itertuples(index=False))


def _markdown_rows(names: list, rows) -> str:
    cols = [markdown_text(c) for c in names]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in rows:
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
    return _latex_rows(list(frame.columns), numeric, frame.itertuples(index=False))


def _latex_rows(names: list, numeric: list[bool], rows) -> str:
    spec = "".join("r" if n else "l" for n in numeric)
    lines = [
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(_latex_text(c) for c in names) + r" \\",
        "\\midrule",
    ]
    for row in rows:
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


def columns_text(columns: dict, fmt: str, *, justify: str = "right",
                 line_width: int | None = None) -> str | None:
    """``FORMATTERS[fmt]`` of ``pd.DataFrame(columns)`` made without pandas (a third of a
    second of start-up), or None when pandas must make it: a column not all ``str``, all
    ``int`` or all ``float`` (lists or numpy arrays), no rows, or text pandas would escape or
    cut in a table. ``justify`` and ``line_width``: :func:`plain_table`'s, for ``table``."""
    columns = _as_lists(columns)
    kinds = [_kind(values) for values in columns.values()]
    if not columns or None in kinds:
        return None
    if fmt == "table":
        return plain_table(columns, justify=justify, line_width=line_width)
    if fmt == "tsv":
        return _tsv_columns(columns, kinds)
    if fmt == "json":
        return _json_columns(columns, kinds)
    if fmt == "markdown":
        return _markdown_rows(list(columns), zip(*columns.values()))
    if fmt == "latex":
        return _latex_rows(list(columns), [k != "str" for k in kinds], zip(*columns.values()))
    return None
