"""A file's bytes into fields: the one door of every file kind (:func:`read_checked`).

Each kind of file is a :class:`Layout` (its fields, header line and :class:`~.fields.Checks`),
and :func:`read_checked` the one way a reader takes one in: a file (plain or gzip, its kind
told by its first line among several, split by pyarrow's CSV reader on a fast path or line by
line otherwise: the same tables and errors) or a DataFrame, into :class:`~.fields.Fields` that
check themselves as the layout says, every error naming file and line (module docstring of
:mod:`relimpute.io`).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from .._files import read_bytes
from ..errors import InputError
from .fields import Checks, Fields, all_finite, any_empty, as_string_array, binary_length, cast
from .fields import to_numpy
from .trec import COLUMN_ALIASES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded for DataFrames only: reading files needs none
    import pandas as pd

_STRING = pa.large_string()
_BLOCK_LIMIT = 1 << 30  # bytes the fast path parses as one block (files above: several chunks)
_ASCII_SPACE = re.compile(r"[ \t\n\r\x0b\x0c]")  # what bytes.split() splits on
_FRAME = "<DataFrame>"


# --------------------------------------------------------------------------- reading files


def _single_separator(data: bytes) -> str | None:
    """The separator when a file uses only tabs or only spaces, else None.

    A vertical tab or form feed anywhere also gives None, so that the
    line-by-line path splits on it as on any other whitespace.
    """
    if b"\x0b" in data or b"\x0c" in data:
        return None
    has_tab = b"\t" in data
    if has_tab and b" " in data:
        return None
    return "\t" if has_tab else " "


def _arrow_read(
    data: bytes, ncols: int, sep: str, floats: tuple[int, ...] = ()
) -> pa.Table | None:
    """Parse ``sep``-separated bytes into ``ncols`` string columns (float64 for the columns
    ``floats``: no text kept for numbers read once), or None if not clean.

    Clean means every line has exactly ``ncols`` non-empty fields and there
    are no blank lines (a blank line is a row of one field: an error here),
    so that row ``i`` is line ``i + 1``.
    Columns are 32-bit-offset strings (cheaper to parse and to keep than
    large strings), read as one block up to ``_BLOCK_LIMIT`` (one chunk per
    column: nothing to combine) on this thread (fewer allocator arenas: lower
    peak memory, same CPU time).
    """
    names = [str(i) for i in range(ncols)]
    try:
        table = pcsv.read_csv(
            io.BytesIO(data),
            read_options=pcsv.ReadOptions(
                column_names=names, block_size=min(len(data) + 1, _BLOCK_LIMIT), use_threads=False
            ),
            parse_options=pcsv.ParseOptions(
                delimiter=sep, quote_char=False, double_quote=False, ignore_empty_lines=False
            ),
            convert_options=pcsv.ConvertOptions(
                column_types={n: pa.float64() if i in floats else pa.string()
                              for i, n in enumerate(names)},  # fmt: skip
                null_values=[],
                strings_can_be_null=False,
            ),
            # the system allocator gives the parser's scratch buffers back to the OS; arrow's
            # default pool keeps them, which raised a campaign load's peak memory by ~40 MB
            memory_pool=pa.system_memory_pool(),
        )
    except pa.ArrowInvalid:  # wrong column count, blank line, not UTF-8 or not a number (in
        return None  # ``floats``; an empty field too): located line by line
    for i, column in enumerate(table.columns):
        if i not in floats and any_empty(column):
            return None
        if i in floats and not all_finite(column):  # errors quote the text
            return None
    return table


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    """A column as one array: its only chunk (not copied), or its chunks joined as large
    strings (a file over ``_BLOCK_LIMIT``: the column may not fit 32-bit offsets)."""
    if column.num_chunks == 1:
        return column.chunk(0)
    if not pa.types.is_string(column.type):  # numbers: joined as they are
        return pa.concat_arrays(column.chunks)
    return pa.concat_arrays([cast(chunk, _STRING) for chunk in column.chunks])


def _parse_fields(
    data: bytes, ncols: int, keep: list[int], source: str, layout: str, first_line: int = 1,
    floats: tuple[int, ...] = (),
) -> tuple[list[pa.Array], np.ndarray]:
    """Split a whitespace-separated file into string columns.

    Returns the columns listed in ``keep`` and the 1-based line number of
    every row (``data`` starting at line ``first_line`` of the file: 2 below
    a header). A line with the wrong number of fields, or text that is not
    UTF-8, raises an :class:`InputError` naming the line. The columns ``floats`` may come
    as float64 instead (when every line parses; the caller converts text or numbers alike).
    """
    sep = _single_separator(data)
    table = None if sep is None else _arrow_read(data, ncols, sep, floats)  # fmt: skip
    if table is not None:
        columns = [_one_array(table.column(i)) for i in keep]
        return columns, np.arange(first_line, table.num_rows + first_line)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + first_line
        raise InputError(f"not UTF-8 text (byte {exc.start})", source, line) from exc
    rows, lines = [], []
    for number, line in enumerate(data.split(b"\n"), start=first_line):
        fields = line.split()  # ASCII whitespace only, as trec_eval
        if not fields:
            continue
        if len(fields) != ncols:
            raise InputError(
                f"expected {ncols} columns ({layout}), found {len(fields)}", source, number
            )
        rows.append([fields[i] for i in keep])
        lines.append(number)
    columns = [cast(pa.array(col, type=pa.large_binary()), _STRING) for col in zip(*rows)]
    return columns, np.asarray(lines, dtype=np.int64)


# --------------------------------------------------------------------------- one file kind


@dataclass(frozen=True)
class Layout:
    """A kind of whitespace-separated file: the column each field of a line holds (None: a
    field not kept; the first two kept are the query and document ids), the layout as errors
    name it, the columns parsed as numbers on the fast path, and its header line: None (no
    header), ``"optional"`` or ``"required"``, naming the columns (:data:`COLUMN_ALIASES` and
    ``aliases`` spell them too) and then, if ``extra`` matches them, more columns. A DataFrame
    of the kind has the kept columns but ``optional``, taken when present. ``checks``: what its
    reader makes of the fields (:meth:`~.fields.Fields.checked`)."""

    fields: tuple[str | None, ...]
    text: str
    floats: tuple[str, ...] = ()
    header: str | None = None
    extra: re.Pattern | None = None
    aliases: Mapping[str, str] = field(default_factory=dict)
    optional: tuple[str, ...] = ()
    checks: Checks = Checks()

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(name for name in self.fields if name is not None)


def header_columns(line: bytes, layout: Layout) -> tuple[str, ...] | None:
    """The columns a header ``line`` of ``layout`` names, or None if it is no such header."""
    names = [f.decode("utf-8", "replace").lower() for f in line.split()]
    names = tuple(layout.aliases.get(n, COLUMN_ALIASES.get(n, n)) for n in names)
    given, more = names[: len(layout.fields)], names[len(layout.fields) :]
    if given != layout.columns or (more and not (layout.extra and all(map(layout.extra.fullmatch, more)))):
        return None
    return names


def _split_header(data: bytes, layout: Layout, source: str) -> tuple[bytes, int, tuple[str, ...]]:
    """``(rows, line of the first row, columns)``: ``data`` without the header line of
    ``layout`` (its first non-blank line), and the columns it names (the layout's without)."""
    skip, first, rest = 0, b"", data
    while rest:
        first, _, rest = rest.partition(b"\n")
        if first.split():
            break
        skip += 1
    named = header_columns(first, layout)
    if named is None and layout.header == "required":
        raise InputError(f"expected a header line '{layout.text}'", source, skip + 1)
    if named is None:
        return data, 1, layout.columns
    if not rest or rest.isspace():
        raise InputError("no rows after the header line", source)
    return rest, skip + 2, named


def read_checked(
    source: str | os.PathLike | pd.DataFrame, kinds: Mapping[str, Layout], *,
    duplicates: str = "error", columns: Mapping[str, str] | None = None,
    data: bytes | None = None, unknown: str | None = None,
):
    """``(kind, rows, lines)`` of a file (plain or gzip; ``data``: its bytes, when read already)
    or a DataFrame: :func:`checked_fields` of its bytes."""
    if len(kinds) == 1:  # a bad policy is a programming error: refused before reading
        next(iter(kinds.values())).checks.check_policy(duplicates)
    if data is None and isinstance(source, (str, os.PathLike)):
        data = read_bytes(source)
    return checked_fields(source, data, kinds, duplicates=duplicates, columns=columns,
                          unknown=unknown)  # fmt: skip


def checked_fields(
    source: str | os.PathLike | pd.DataFrame, data: bytes | None, kinds: Mapping[str, Layout], *,
    duplicates: str = "error", columns: Mapping[str, str] | None = None,
    unknown: str | None = None,
):
    """``(kind, rows, lines)``: which of ``kinds`` the file ``source`` whose bytes are ``data``
    is, told by its first non-blank line (the first whose header it is, or whose number of
    fields it has; else the last kind, or, given ``unknown``, an error saying it with
    ``{fields}``), and its fields read and checked as that layout says
    (:meth:`~.fields.Fields.checked`, under the ``duplicates`` policy). A DataFrame (``data``
    None) is of the first kind."""
    name = next(iter(kinds))
    if data is not None and len(kinds) > 1:
        line = first_data_line(data)
        name = kind_of(line, kinds)
        if name is None and unknown is not None:
            raise InputError(unknown.format(fields=len(line.split())), str(source), 1)
        name = name or list(kinds)[-1]
    layout = kinds[name]
    layout.checks.check_policy(duplicates)
    return name, *read_fields(source, layout, columns, data).checked(layout.checks, duplicates)


def first_data_line(data: bytes) -> bytes:
    """The first non-blank line of a file's bytes ``data`` (LF line endings), the rest not
    split."""
    start = 0
    while (end := data.find(b"\n", start)) >= 0 and not data[start:end].split():
        start = end + 1
    return data[start:] if end < 0 else data[start:end]


def kind_of(line: bytes, kinds: Mapping[str, Layout]) -> str | None:
    """The first of ``kinds`` that a file whose first non-blank line is ``line`` may be of."""
    return next((kind for kind, layout in kinds.items() if _fits(line, layout)), None)


def _fits(line: bytes, layout: Layout) -> bool:
    """Whether a file whose first non-blank line is ``line`` may be of ``layout``: that line
    is its header, or (a header not required) has as many fields as its lines."""
    if layout.header and header_columns(line, layout):
        return True
    return layout.header != "required" and len(line.split()) == len(layout.fields)


def read_fields(
    source: str | os.PathLike | pd.DataFrame, layout: Layout, columns: Mapping[str, str] | None = None,
    data: bytes | None = None,
) -> Fields:
    """The :class:`Fields` of a file of ``layout`` (its bytes ``data``, as
    :func:`~relimpute._files.read_bytes` gives them; fields split, ids checked) or of a
    DataFrame of its columns (renamed as :data:`COLUMN_ALIASES` and ``columns`` say)."""
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        first, names, fields, text = 1, layout.columns, layout.fields, layout.text
        if layout.header:
            data, first, names = _split_header(data, layout, name)
            fields, text = names, " ".join(names)
        keep = [i for i, column in enumerate(fields) if column is not None]
        floats = tuple(i for i in keep if fields[i] in layout.floats)
        (query, doc, *values), lines = _parse_fields(data, len(fields), keep, name, text, first, floats)
        return Fields(name, query, doc, dict(zip(names[2:], values)), lines)
    required = tuple(c for c in layout.columns if c not in layout.optional)
    frame = _normalise_frame(source, required, columns)
    more = [c for c in source.columns if layout.extra and layout.extra.fullmatch(str(c))]
    values = {c: frame[c] for c in dict.fromkeys((*layout.columns[2:], *layout.optional, *more))
              if c in frame}  # fmt: skip
    fields = Fields(_FRAME, as_string_array(frame["query_id"]), as_string_array(frame["doc_id"]),
                    values, np.arange(1, len(frame) + 1))  # fmt: skip
    for what, ids in (("query_id", fields.query), ("doc_id", fields.doc)):  # no file holds these
        fields.refuse(ids.is_null().to_numpy(zero_copy_only=False), lambda i: f"{what} is missing")
        empty = to_numpy(binary_length(ids)) == 0
        fields.refuse(empty, lambda i: f"{what} is empty")
    return fields
# --------------------------------------------------------------------------- DataFrame input


def _normalise_frame(
    frame: pd.DataFrame, required: tuple[str, ...], columns: Mapping[str, str] | None
) -> pd.DataFrame:
    """Rename a user's DataFrame to the ir_measures names and check the columns."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"expected a path or a pandas DataFrame, got {type(frame).__name__}")
    mapping = {
        c: COLUMN_ALIASES[c]
        for c in frame.columns
        if c in COLUMN_ALIASES and COLUMN_ALIASES[c] not in frame.columns
    }
    mapping.update(columns or {})
    frame = frame.rename(columns=mapping)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(
            f"missing column(s) {missing}; have {list(frame.columns)} "
            "(pass columns={'your_name': 'query_id', ...} to map them)",
            _FRAME,
        )
    if frame.empty:
        raise InputError("table is empty", _FRAME)
    return frame.reset_index(drop=True)
