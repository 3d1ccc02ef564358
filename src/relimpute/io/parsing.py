"""The fields of TREC text files and of DataFrames, typed and checked, and the duplicate policy.

The layer under :mod:`relimpute.io`: each kind of file is a :class:`Layout` (its fields and
header line), and :func:`read_fields` is the one way a reader takes one in, a file (plain or
gzip, split by pyarrow's CSV reader on a fast path or line by line otherwise: the same tables
and errors) or a DataFrame; the :class:`Fields` it returns convert and check the numbers and
apply a duplicate policy, every error naming file and line (module docstring of
:mod:`relimpute.io`).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from .._files import read_bytes
from ..errors import InputError
from ._kernels import all_finite, any_empty, binary_length, cast, dictionary_encode, filter_rows
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
    of the kind has the kept columns but ``optional``, taken when present."""

    fields: tuple[str | None, ...]
    text: str
    floats: tuple[str, ...] = ()
    header: str | None = None
    extra: re.Pattern | None = None
    aliases: Mapping[str, str] = field(default_factory=dict)
    optional: tuple[str, ...] = ()

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


def read_fields(
    source: str | os.PathLike | pd.DataFrame, layout: Layout, columns: Mapping[str, str] | None = None,
    data: bytes | None = None,
) -> Fields:
    """The :class:`Fields` of a file of ``layout`` (plain or gzip, or its bytes ``data``; fields
    split, ids checked) or of a DataFrame of its columns (renamed as :data:`COLUMN_ALIASES` and
    ``columns`` say)."""
    if isinstance(source, (str, os.PathLike)):
        name, data = str(source), read_bytes(source) if data is None else data
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


@dataclass(frozen=True)
class Fields:
    """The rows of one file or DataFrame: the query and document ids (pyarrow strings), the
    other columns as given (text, float64, or a pandas Series), each row's line; its methods
    convert and check them, an error naming ``source`` and the line."""

    source: str
    query: pa.Array
    doc: pa.Array
    values: dict[str, object]
    lines: np.ndarray

    def floats(self, column: str, what: str | None = None) -> np.ndarray:
        """``column``'s numbers (or their text) as finite float64 (``what`` names it in errors;
        default its name)."""
        values, what = self.values[column], what or column
        if not isinstance(values, (pa.Array, pa.ChunkedArray)):  # a pandas Series
            import pandas as pd

            if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(
                values.dtype
            ):
                return self._finite(values.to_numpy(dtype=float, na_value=np.nan), values, what)
            values = as_string_array(values)
        if values.null_count:
            self.refuse(values.is_null().to_numpy(zero_copy_only=False), lambda i: f"{what} is missing")
        try:
            array = to_numpy(cast(values, pa.float64()))
        except pa.ArrowInvalid:
            i = _first_failing_cast(values)
            raise InputError(f"{what} {values[i].as_py()!r} is not a number", self.source,
                             int(self.lines[i])) from None  # fmt: skip
        return self._finite(array, values, what)

    def _finite(self, array: np.ndarray, given: pa.Array | pd.Series, what: str) -> np.ndarray:
        """``array`` if all finite, else an error naming the first bad value as it was given."""
        shown = (lambda i: given[i].as_py()) if isinstance(given, pa.Array) else (
            lambda i: given.iloc[[i]].tolist()[0])  # as given
        self.refuse(~np.isfinite(array), lambda i: f"{what} {shown(i)!r} is not a finite number")
        return array

    def integers(self, column: str) -> np.ndarray:
        """``column`` as int64, an error at the first line that holds no integer."""
        array = self.floats(column)
        self.refuse((array != np.round(array)) | (np.abs(array) > 2.0**53),
                    lambda i: f"{column} {float(array[i])!r} is not an integer")  # fmt: skip
        return array.astype(np.int64)

    def refuse(self, bad: np.ndarray, problem: Callable[[int], str]) -> None:
        """An error at the first row ``bad`` marks, ``problem(row)`` saying what is wrong."""
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(problem(i), self.source, int(self.lines[i]))

    def refuse_repeats(self, problem: Callable[[int, int], str]) -> None:
        """An error at the first (topic, document) listed again, ``problem(row, earlier row)``
        saying what is wrong."""
        key, order, repeat = _repeats(self.query, self.doc)
        if len(repeat):
            row = int(order[repeat + 1].min())
            raise InputError(problem(row, int(np.flatnonzero(key == key[row])[0])), self.source,
                             int(self.lines[row]))  # fmt: skip

    def keep(self, value: np.ndarray, duplicates: str, what: str, value_name: str,
             merge_identical: bool) -> np.ndarray | None:  # fmt: skip
        """Rows to keep under the duplicate policy (None: no duplicates, keep all).

        ``merge_identical`` (qrels) drops exact repeats under ``"error"`` and
        only stops on conflicting values; it also marks ``"max"`` as available.
        """
        key, order, repeat = _repeats(self.query, self.doc)
        if not len(repeat):
            return None
        keep = np.ones(len(key), dtype=bool)
        if duplicates == "error":
            later, earlier = order[repeat + 1], order[repeat]
            if merge_identical:
                conflict = value[later] != value[earlier]
                keep[later[~conflict]] = False
                later, earlier = later[conflict], earlier[conflict]
                if not len(later):
                    return keep
            row = int(later[int(np.argmin(later))])
            i = int(np.flatnonzero(key == key[row])[0])
            kind = "conflicting duplicate" if value[i] != value[row] else "duplicate"
            options = "'first'|'last'" + ("|'max'" if merge_identical else "")
            raise InputError(
                f"{kind} {what}: topic {self.query[row].as_py()!r}, document "
                f"{self.doc[row].as_py()!r} also on line {int(self.lines[i])} ({value_name} "
                f"{value[i]:g} vs {value[row]:g}); choose a policy with duplicates={options}",
                self.source,
                int(self.lines[row]),
            )
        if duplicates == "first":
            keep[order[repeat + 1]] = False
        elif duplicates == "last":
            keep[order[repeat]] = False
        else:  # "max": highest value per key, earliest line among equals
            best = np.lexsort((np.arange(len(key)), -value, key))
            first_of_key = np.r_[True, key[best][1:] != key[best][:-1]]
            keep[:] = False
            keep[best[first_of_key]] = True
        return keep


# --------------------------------------------------------------------------- arrays
# pyarrow arrays to numpy and back without pyarrow's pandas conversion layer, which imports
# pandas (about 0.35 s of CPU) even for integers: reading run files needs none of it.

#: numpy's type of each of arrow's numeric types, by arrow's type id
_NUMBERS = {
    kind.id: np.dtype(kind.to_pandas_dtype())
    for kind in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(),
                 pa.uint32(), pa.uint64(), pa.float32(), pa.float64())
}  # fmt: skip
_BOOLEAN = pa.bool_().id


def to_numpy(array: pa.Array) -> np.ndarray:
    """A numeric or boolean array as numpy, as ``array.to_numpy(zero_copy_only=False)``
    gives it (read-only but for booleans); an array with nulls or of another type goes
    through pyarrow's own conversion."""
    kind = array.type.id
    dtype = _NUMBERS.get(kind)
    if array.null_count or (dtype is None and kind != _BOOLEAN):
        return array.to_numpy(zero_copy_only=False)
    data = array.buffers()[1]
    if dtype is None:  # booleans, one bit each
        if data is None:
            return np.zeros(0, dtype=bool)
        bits = np.frombuffer(data, dtype=np.uint8)
        return np.unpackbits(bits, count=array.offset + len(array), bitorder="little")[
            array.offset :
        ].astype(bool)
    if data is None:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-d numeric numpy array as a pyarrow array of its type, as ``pa.array(values)``
    (sharing its memory when contiguous)."""
    values = np.ascontiguousarray(values)
    if values.dtype == bool:
        return pa.Array.from_buffers(
            pa.bool_(), len(values), [None, pa.py_buffer(np.packbits(values, bitorder="little"))]
        )
    return pa.Array.from_buffers(
        pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)]
    )


def strings_to_numpy(array: pa.Array) -> np.ndarray:
    """A string array without nulls as a numpy object array of ``str``."""
    out = np.empty(len(array), dtype=object)
    out[:] = array.to_pylist()
    return out


# --------------------------------------------------------------------------- columns


def as_string_array(values: pd.Series | pa.Array | pa.ChunkedArray) -> pa.LargeStringArray:
    """Ids as a pyarrow large-string array (zero-copy for pyarrow-backed pandas strings).

    Non-string ids (e.g. integer topic numbers) are converted with ``str``.
    Missing values stay missing (null) so callers can report them.
    """
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        array = values
    else:
        try:
            array = pa.array(values, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            array = None
        if array is not None and pa.types.is_dictionary(array.type):  # a categorical column
            array = array.dictionary_decode()
        if array is None or not (
            pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
        ):
            mask = values.isna().to_numpy()
            strings = np.array([str(v) for v in values.to_numpy(dtype=object)], dtype=object)
            array = pa.array(strings, type=_STRING, mask=mask)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return cast(array, _STRING)


def _first_failing_cast(values: pa.Array) -> int:
    """Index of the first string that does not parse as a float (bisection over slices)."""
    lo, hi = 0, len(values)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            cast(values.slice(lo, mid - lo), pa.float64())
        except pa.ArrowInvalid:
            hi = mid
        else:
            lo = mid
    return lo


# --------------------------------------------------------------------------- duplicates


def _check_policy(duplicates: str, allowed: tuple[str, ...]) -> None:
    """Refuse an unknown duplicate policy (a programming error, so ValueError)."""
    if duplicates not in allowed:
        raise ValueError(f"duplicates must be one of {allowed}, got {duplicates!r}")


def _repeats(query: pa.Array, doc: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(key, order, repeat)``: a key per (topic, document), the stable order sorting it and the
    positions ``i`` in that order whose row ``order[i + 1]`` repeats the key of ``order[i]``."""
    q = to_numpy(dictionary_encode(query).indices).astype(np.int64)
    d = to_numpy(dictionary_encode(doc).indices).astype(np.int64)
    key = q * (int(d.max(initial=0)) + 1) + d  # one per (topic, document)
    order = np.argsort(key, kind="stable")
    return key, order, np.flatnonzero(key[order][1:] == key[order][:-1])


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


def kept_columns(columns: dict[str, object], keep: np.ndarray | None) -> dict[str, object]:
    """The rows ``keep`` marks (all when None) of every column (pyarrow or numpy)."""
    if keep is None:
        return dict(columns)
    mask = from_numpy(keep)
    return {
        name: filter_rows(values, mask) if isinstance(values, pa.Array) else values[keep]
        for name, values in columns.items()
    }


def _table(columns: dict[str, object], keep: np.ndarray | None) -> pd.DataFrame:
    """Assemble the output DataFrame (pyarrow-backed strings where pandas has them)."""
    import pandas as pd

    return pd.DataFrame({
        name: values.to_pandas() if isinstance(values, pa.Array) else values
        for name, values in kept_columns(columns, keep).items()
    })  # fmt: skip
