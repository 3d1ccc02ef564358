"""The fields of TREC text files and of DataFrames, typed and checked, and the duplicate policy.

The layer under :mod:`relimpute.io`: bytes (plain or gzip) split into fields
by pyarrow's CSV reader on a fast path or line by line otherwise (the same
tables and errors), ids and numbers checked with errors naming file and line,
and the rows a duplicate policy keeps (module docstring of
:mod:`relimpute.io`).
"""

from __future__ import annotations

import io
import os
import re
import zlib
from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from .._files import read_input
from ..errors import InputError
from .arrow import from_numpy, to_numpy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded for DataFrames only: reading files needs none
    import pandas as pd

#: Other common spellings of the ir_measures column names, mapped automatically.
COLUMN_ALIASES = {
    "qid": "query_id",
    "query": "query_id",
    "topic": "query_id",
    "docno": "doc_id",
    "docid": "doc_id",
    "doc": "doc_id",
    "rel": "relevance",
    "label": "relevance",
    "judgment": "relevance",
    "p": "probability",
    "prob": "probability",
    "p_rel": "probability",
    "sim": "score",
}

_STRING = pa.large_string()
_BLOCK_LIMIT = 1 << 30  # bytes the fast path parses as one block (files above: several chunks)
_ASCII_SPACE = re.compile(r"[ \t\n\r\x0b\x0c]")  # what bytes.split() splits on
_FRAME = "<DataFrame>"


# --------------------------------------------------------------------------- reading files


def line_naming(path: str | os.PathLike, query: str, doc: str) -> int | None:
    """The first line of a qrels-like file naming ``query`` and ``doc`` (to point an error
    at it), else None."""
    for number, line in enumerate(read_bytes(path).decode("utf-8", "replace").splitlines(), 1):
        fields = line.split()
        if len(fields) >= 3 and fields[0] == query and doc in fields[1:3]:
            return number
    return None


def read_bytes(path: str | os.PathLike) -> bytes:
    """Bytes of a plain or gzip file, BOM stripped and line endings made LF."""
    source = str(path)
    raw = read_input(path)
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(raw, source)
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if not raw or raw.isspace():  # (not raw.strip(): that copies the file)
        raise InputError("file is empty", source)
    return raw


def _gunzip(raw: bytes, source: str) -> bytes:
    """The data of every gzip member of ``raw``, as :func:`gzip.decompress` reads them (NUL
    padding between members allowed), with zlib checking each member's CRC and length as it
    inflates (gzip's own pass over the output for the CRC costs a tenth of the time)."""
    members = []
    while raw:
        inflate = zlib.decompressobj(wbits=31)  # 16 + 15: a gzip header and trailer
        try:
            members.append(inflate.decompress(raw))
        except zlib.error as exc:
            raise InputError(f"unreadable or truncated gzip data ({exc})", source) from exc
        if not inflate.eof:
            raise InputError(
                "unreadable or truncated gzip data (the file ends inside its compressed data)",
                source,
            )
        raw = inflate.unused_data.lstrip(b"\x00")
    return members[0] if len(members) == 1 else b"".join(members)


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
        if i not in floats and pc.min(pc.binary_length(column)).as_py() == 0:
            return None
        if i in floats and not pc.all(pc.is_finite(column)).as_py():  # errors quote the text
            return None
    return table


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    """A column as one array: its only chunk (not copied), or its chunks joined as large
    strings (a file over ``_BLOCK_LIMIT``: the column may not fit 32-bit offsets)."""
    if column.num_chunks == 1:
        return column.chunk(0)
    if not pa.types.is_string(column.type):  # numbers: joined as they are
        return pa.concat_arrays(column.chunks)
    return pa.concat_arrays([chunk.cast(_STRING) for chunk in column.chunks])


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
    columns = [pa.array(col, type=pa.large_binary()).cast(_STRING) for col in zip(*rows)]
    return columns, np.asarray(lines, dtype=np.int64)


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
    return array.cast(_STRING)


def _check_ids(array: pa.Array, what: str, source: str, lines: np.ndarray) -> None:
    """Refuse missing or empty ids in a DataFrame (a file cannot hold them)."""
    if array.null_count:
        i = int(np.flatnonzero(array.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(f"{what} is missing", source, int(lines[i]))
    empty = pc.equal(pc.utf8_length(array), 0)
    if pc.any(empty).as_py():
        i = int(np.flatnonzero(empty.to_numpy(zero_copy_only=False))[0])
        raise InputError(f"{what} is empty", source, int(lines[i]))


def _first_failing_cast(values: pa.Array) -> int:
    """Index of the first string that does not parse as a float (bisection over slices)."""
    lo, hi = 0, len(values)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            pc.cast(values.slice(lo, mid - lo), pa.float64())
        except pa.ArrowInvalid:
            hi = mid
        else:
            lo = mid
    return lo


def _to_float(
    values: pa.Array | pd.Series, what: str, source: str, lines: np.ndarray
) -> np.ndarray:
    """Convert a column of numbers (or their text) to finite float64, naming a bad line."""
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):  # a pandas Series
        import pandas as pd

        if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(
            values.dtype
        ):
            array = values.to_numpy(dtype=float, na_value=np.nan)
            return _check_finite(array, values, what, source, lines)
        values = as_string_array(values)
    if values.null_count:
        i = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(f"{what} is missing", source, int(lines[i]))
    try:
        array = to_numpy(pc.cast(values, pa.float64()))
    except pa.ArrowInvalid:
        i = _first_failing_cast(values)
        raise InputError(
            f"{what} {values[i].as_py()!r} is not a number", source, int(lines[i])
        ) from None
    return _check_finite(array, values, what, source, lines)


def _check_finite(
    array: np.ndarray, given: pa.Array | pd.Series, what: str, source: str, lines: np.ndarray
) -> np.ndarray:
    """Return ``array`` if all finite, else name the first bad value as it was given."""
    bad = ~np.isfinite(array)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        shown = given[i].as_py() if isinstance(given, pa.Array) else given.iloc[[i]].tolist()[0]
        raise InputError(f"{what} {shown!r} is not a finite number", source, int(lines[i]))
    return array


def _to_int(values: pa.Array | pd.Series, what: str, source: str, lines: np.ndarray) -> np.ndarray:
    """Convert to int64, naming the first line that does not hold an integer."""
    array = _to_float(values, what, source, lines)
    bad = (array != np.round(array)) | (np.abs(array) > 2.0**53)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{what} {float(array[i])!r} is not an integer", source, int(lines[i]))
    return array.astype(np.int64)


# --------------------------------------------------------------------------- duplicates


def _check_policy(duplicates: str, allowed: tuple[str, ...]) -> None:
    """Refuse an unknown duplicate policy (a programming error, so ValueError)."""
    if duplicates not in allowed:
        raise ValueError(f"duplicates must be one of {allowed}, got {duplicates!r}")


def _pair_keys(query: pa.Array, doc: pa.Array) -> np.ndarray:
    """One int64 key per (query_id, doc_id) pair."""
    q = to_numpy(query.dictionary_encode().indices).astype(np.int64)
    d = to_numpy(doc.dictionary_encode().indices).astype(np.int64)
    return q * (int(d.max(initial=0)) + 1) + d


def check_grades(relevance: np.ndarray, low: int, high: int, source: str, lines: np.ndarray,
                 hint: str) -> None:
    """An error naming the first line whose grade is outside ``[low, high]`` (``hint`` after)."""
    out = (relevance < low) | (relevance > high)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise InputError(f"relevance {relevance[i]} is outside {hint}", source, int(lines[i]))


def _repeats(query: pa.Array, doc: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(key, order, repeat)``: a key per (topic, document), the stable order sorting it and the
    positions ``i`` in that order whose row ``order[i + 1]`` repeats the key of ``order[i]``."""
    key = _pair_keys(query, doc)
    order = np.argsort(key, kind="stable")
    return key, order, np.flatnonzero(key[order][1:] == key[order][:-1])


def first_repeat(query: pa.Array, doc: pa.Array) -> tuple[int, int] | None:
    """``(row, earlier row)`` of the first (topic, document) listed again, else None."""
    key, order, repeat = _repeats(query, doc)
    if not len(repeat):
        return None
    row = int(order[repeat + 1].min())
    return row, int(np.flatnonzero(key == key[row])[0])


def _keep_mask(
    query: pa.Array,
    doc: pa.Array,
    value: np.ndarray,
    duplicates: str,
    source: str,
    lines: np.ndarray,
    what: str,
    value_name: str,
    merge_identical: bool,
) -> np.ndarray | None:
    """Rows to keep under the duplicate policy (None: no duplicates, keep all).

    ``merge_identical`` (qrels) drops exact repeats under ``"error"`` and
    only stops on conflicting values; it also marks ``"max"`` as available.
    """
    key, order, repeat = _repeats(query, doc)
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
        j = int(np.argmin(later))
        i = int(np.flatnonzero(key == key[later[j]])[0])
        row = int(later[j])
        kind = "conflicting duplicate" if value[i] != value[row] else "duplicate"
        options = "'first'|'last'" + ("|'max'" if merge_identical else "")
        raise InputError(
            f"{kind} {what}: topic {query[row].as_py()!r}, document {doc[row].as_py()!r} "
            f"also on line {int(lines[i])} ({value_name} {value[i]:g} vs {value[row]:g}); "
            f"choose a policy with duplicates={options}",
            source,
            int(lines[row]),
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


def _frame_ids(frame: pd.DataFrame, lines: np.ndarray) -> tuple[pa.Array, pa.Array]:
    query, doc = as_string_array(frame["query_id"]), as_string_array(frame["doc_id"])
    _check_ids(query, "query_id", _FRAME, lines)
    _check_ids(doc, "doc_id", _FRAME, lines)
    return query, doc


def kept_columns(columns: dict[str, object], keep: np.ndarray | None) -> dict[str, object]:
    """The rows ``keep`` marks (all when None) of every column (pyarrow or numpy)."""
    if keep is None:
        return dict(columns)
    mask = from_numpy(keep)
    return {
        name: values.filter(mask) if isinstance(values, pa.Array) else values[keep]
        for name, values in columns.items()
    }


def _table(columns: dict[str, object], keep: np.ndarray | None) -> pd.DataFrame:
    """Assemble the output DataFrame (pyarrow-backed strings where pandas has them)."""
    import pandas as pd

    return pd.DataFrame({
        name: values.to_pandas() if isinstance(values, pa.Array) else values
        for name, values in kept_columns(columns, keep).items()
    })  # fmt: skip


# --------------------------------------------------------------------------- TREC layout

RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
PROB_QRELS_COLUMNS = ("query_id", "doc_id", "probability")
#: optional probabilistic-qrels columns after those three: ``p_ge_<grade>`` = P(grade ≥ grade)
GRADE_COLUMN = re.compile(r"p_ge_(-?\d+)")


def trec_scores(scores: pd.Series | np.ndarray) -> np.ndarray:
    """Scores as trec_eval compares them: rounded to float32, returned as float64.

    trec_eval stores a run's scores as C ``float`` (``trec_format.h``:
    ``float sim``), so scores that differ only beyond float32 precision tie
    and are ordered by docno.
    """
    with np.errstate(over="ignore"):
        return np.asarray(scores, dtype=np.float64).astype(np.float32).astype(np.float64)


def sort_trec(run: pd.DataFrame, *, by_rank: bool = False) -> pd.DataFrame:
    """Order a run as trec_eval does: per topic, score descending, ties by docno descending.

    Scores are compared at trec_eval's float32 precision (:func:`trec_scores`).
    With ``by_rank`` the rank column orders the documents instead (ties by
    docno descending), for runs whose scores are not meant to be used.
    """
    key = run["rank"].to_numpy() if by_rank else -trec_scores(run["score"])
    order = run.assign(_key=key).sort_values(
        ["query_id", "_key", "doc_id"], ascending=[True, True, False], kind="stable"
    )
    return order.drop(columns="_key").reset_index(drop=True)
