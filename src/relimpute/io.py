"""Read and write TREC runs, qrels and probabilistic qrels.

Files may be plain or gzip-compressed (detected by content, not name), with
LF, CRLF or CR line endings and an optional UTF-8 byte-order mark; fields are
separated by any run of ASCII whitespace: space, tab, vertical tab and form
feed (C ``isspace``, as trec_eval reads; a no-break space or other Unicode
space is part of an id), and blank lines are skipped. Every
problem is reported as an :class:`~relimpute.errors.InputError` naming the
file, the line and what is wrong:

- a line with the wrong number of columns;
- a score (or probability) that is not a finite number;
- a relevance label that is not an integer, or outside ``grade_range``;
- a duplicate (see below);
- an empty file, a file that is not UTF-8 text, unreadable or truncated gzip.

Tables come back with the ir_measures column names: ``query_id, doc_id,
score`` for runs, ``query_id, doc_id, relevance`` for qrels and ``query_id,
doc_id, probability`` for probabilistic qrels, ids as strings. DataFrames are
accepted in the same form; other common spellings (``qid``, ``docno``,
``rel``, ...; :data:`COLUMN_ALIASES`) are renamed automatically, and
``columns={"their_name": "query_id", ...}`` maps any others.

Duplicate policy (``duplicates=``), for a document twice in one topic of a
run or a (topic, document) twice in qrels:

``"error"`` (default)
    stop with an error naming both lines. Qrels lines that repeat a
    judgment with the *same* label are harmless and are merged silently;
    only conflicting labels are an error.
``"first"`` / ``"last"``
    keep the line that comes first / last in the file.
``"max"`` (qrels and probabilistic qrels)
    keep the highest label.

Parsing is done by pyarrow's CSV reader on a fast path (one consistent
separator, no blank lines); anything else goes through a line-by-line path
that finds the exact offending line, so both give the same tables and the
same errors.

Writers write to a temporary file beside the target and rename it into
place, so an interrupted write never leaves a truncated file.
:func:`sort_trec` orders a run as trec_eval does (scores compared as C
``float``, :func:`trec_scores`; ties by docno descending).
"""

from __future__ import annotations

import gzip
import io
import os
import re
import warnings
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ._files import atomic_write_text, read_input
from .errors import InputError

RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
PROB_QRELS_COLUMNS = ("query_id", "doc_id", "probability")
#: optional probabilistic-qrels columns after those three: ``p_ge_<grade>`` = P(grade ≥ grade)
GRADE_COLUMN = re.compile(r"p_ge_(-?\d+)")

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

#: Labels allowed in qrels by default. -1 marks a pooled-but-unjudged document;
#: -2 is the TREC Web track's "junk" grade (judged, nonrelevant).
DEFAULT_GRADE_RANGE = (-2, 10)

DUPLICATE_POLICIES = ("error", "first", "last", "max")

_STRING = pa.large_string()
_BLOCK_LIMIT = 1 << 30  # bytes the fast path parses as one block (files above: several chunks)
_ASCII_SPACE = re.compile(r"[ \t\n\r\x0b\x0c]")  # what bytes.split() splits on
_FRAME = "<DataFrame>"


# --------------------------------------------------------------------------- reading files


def _read_bytes(path: str | os.PathLike) -> bytes:
    """Bytes of a plain or gzip file, BOM stripped and line endings made LF."""
    source = str(path)
    raw = read_input(path)
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"unreadable or truncated gzip data ({exc})", source) from exc
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if not raw or raw.isspace():  # (not raw.strip(): that copies the file)
        raise InputError("file is empty", source)
    return raw


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


def _arrow_read(data: bytes, ncols: int, sep: str) -> pa.Table | None:
    """Parse ``sep``-separated bytes into ``ncols`` string columns, or None if not clean.

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
                column_types={n: pa.string() for n in names},
                null_values=[],
                strings_can_be_null=False,
            ),
            # the system allocator gives the parser's scratch buffers back to the OS; arrow's
            # default pool keeps them, which raised a campaign load's peak memory by ~40 MB
            memory_pool=pa.system_memory_pool(),
        )
    except pa.ArrowInvalid:  # wrong column count, blank line or not UTF-8: located line by line
        return None
    for column in table.columns:
        if pc.min(pc.binary_length(column)).as_py() == 0:
            return None
    return table


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    """A column as one array: its only chunk (not copied), or its chunks joined as large
    strings (a file over ``_BLOCK_LIMIT``: the column may not fit 32-bit offsets)."""
    if column.num_chunks == 1:
        return column.chunk(0)
    return pa.concat_arrays([chunk.cast(_STRING) for chunk in column.chunks])


def _parse_fields(
    data: bytes, ncols: int, keep: list[int], source: str, layout: str, first_line: int = 1
) -> tuple[list[pa.Array], np.ndarray]:
    """Split a whitespace-separated file into string columns.

    Returns the columns listed in ``keep`` and the 1-based line number of
    every row (``data`` starting at line ``first_line`` of the file: 2 below
    a header). A line with the wrong number of fields, or text that is not
    UTF-8, raises an :class:`InputError` naming the line.
    """
    sep = _single_separator(data)
    table = None if sep is None else _arrow_read(data, ncols, sep)
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
    if isinstance(values, pd.Series):
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
        array = pc.cast(values, pa.float64()).to_numpy()
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
    q = query.dictionary_encode().indices.to_numpy().astype(np.int64)
    d = doc.dictionary_encode().indices.to_numpy().astype(np.int64)
    return q * (int(d.max(initial=0)) + 1) + d


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
    key = _pair_keys(query, doc)
    order = np.argsort(key, kind="stable")
    repeat = np.flatnonzero(key[order][1:] == key[order][:-1])
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


def _table(columns: dict[str, object], keep: np.ndarray | None) -> pd.DataFrame:
    """Assemble the output DataFrame (pyarrow-backed strings where pandas has them)."""
    out = {}
    for name, values in columns.items():
        if keep is not None:
            values = values.filter(pa.array(keep)) if isinstance(values, pa.Array) else values[keep]
        out[name] = values.to_pandas() if isinstance(values, pa.Array) else values
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- runs


def read_run(
    source: str | os.PathLike | pd.DataFrame,
    *,
    duplicates: str = "error",
    columns: Mapping[str, str] | None = None,
    keep_rank: bool = False,
) -> pd.DataFrame:
    """Read one TREC run (``qid Q0 docno rank score tag``) or a run DataFrame.

    Parameters
    ----------
    source
        A path (plain or gzip) or a DataFrame with ``query_id, doc_id, score``.
    duplicates
        ``"error"``, ``"first"`` or ``"last"``: what to do with a document that
        appears twice in one topic (see the module docstring).
    columns
        Extra ``{their_name: ir_measures_name}`` renames for DataFrames.
    keep_rank
        Keep (and validate as integers) the rank column, to order by rank
        instead of score.

    Returns
    -------
    DataFrame with ``query_id, doc_id, score`` (plus ``rank`` when
    ``keep_rank``, and ``run``, the tag, for files, as a categorical: stored once, not per
    line). Row order is the file's.
    """
    _check_policy(duplicates, ("error", "first", "last"))
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        out, lines = read_run_columns(source, keep_rank=keep_rank)
        out["run"] = out["run"].dictionary_encode()  # one tag per file: stored once, not per line
    else:
        name = _FRAME
        frame = _normalise_frame(source, RUN_COLUMNS, columns)
        lines = np.arange(1, len(frame) + 1)
        query, doc = _frame_ids(frame, lines)
        out = {"query_id": query, "doc_id": doc}
        out["score"] = _to_float(frame["score"], "score", name, lines)
        if keep_rank and "rank" not in frame:
            raise InputError("keep_rank needs a 'rank' column", name)
        if keep_rank:
            out["rank"] = _to_int(frame["rank"], "rank", name, lines)
        if "run" in frame:
            out["run"] = as_string_array(frame["run"]).dictionary_encode()
    query, doc, score = out["query_id"], out["doc_id"], out["score"]
    keep_rows = _keep_mask(
        query, doc, score, duplicates, name, lines, "document in run", "score", False
    )
    return _table(out, keep_rows)


def read_run_columns(
    path: str | os.PathLike, *, keep_rank: bool = False
) -> tuple[dict[str, pa.Array | np.ndarray], np.ndarray]:
    """The columns of one run file, checked as :func:`read_run` checks them but for duplicates.

    Returns ``{"query_id", "doc_id", "score"[, "rank"], "run"}`` (ids and tags as
    pyarrow strings, numbers as numpy arrays) and each row's line number.
    :meth:`Campaign.from_files <relimpute.data.Campaign.from_files>` reads runs
    with it and finds duplicates while it aligns the documents.
    """
    name = str(path)
    keep = [0, 2, 3, 4, 5] if keep_rank else [0, 2, 4, 5]
    fields, lines = _parse_fields(_read_bytes(path), 6, keep, name, "qid Q0 docno rank score tag")
    out = {"query_id": fields[0], "doc_id": fields[1]}
    out["score"] = _to_float(fields[-2], "score", name, lines)
    if keep_rank:
        out["rank"] = _to_int(fields[2], "rank", name, lines)
    out["run"] = fields[-1]
    return out, lines


def read_runs(
    sources: str | os.PathLike | Iterable[str | os.PathLike] | Mapping[str, pd.DataFrame],
    **kwargs,
) -> dict[str, pd.DataFrame]:
    """Read several runs: a directory, a list of paths (and directories), or ``{name: DataFrame}``.

    Run names are the file names without ``.gz``/``.txt``/``.run``/``.trec``
    (the tag column is kept as ``run`` but not used as the name, so two files
    with one tag stay apart). Hidden files in directories are skipped, and
    so are files that are not runs (:data:`NOT_RUN_FILES`: a README, ``*.md``,
    ``*.json``, ..., named in a warning). Keyword arguments go to :func:`read_run`.
    """
    if isinstance(sources, Mapping):
        return {str(k): read_run(v, **kwargs) for k, v in sources.items()}
    return {name: read_run(path, **kwargs) for name, path in run_files(sources)}


#: Files in a run directory that are not runs (skipped, with a note): a README, a licence,
#: notes and tables by their suffix. A run file named on the command line is always read.
NOT_RUN_FILES = re.compile(
    r"^(readme|license|licence|notice|changelog|changes|authors)([._-].*)?$"
    r"|\.(md|markdown|rst|html?|pdf|json|jsonl|ya?ml|toml|ini|cfg|tsv|csv|py|sh|ipynb)$",
    re.IGNORECASE,
)


def run_files(
    sources: str | os.PathLike | Iterable[str | os.PathLike], skipped: list[Path] | None = None
) -> list[tuple[str, Path]]:
    """``(run name, path)`` of every run file among ``sources`` (files and directories), in
    :func:`read_runs`'s order; two files with one name are an error.

    Files of a directory that :data:`NOT_RUN_FILES` matches (``README.md``, ``notes.json``,
    ...) are left out: appended to ``skipped`` when a list is given, else named in a warning.
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    sources = list(sources)
    paths: list[Path] = []
    left_out: list[Path] = []
    for item in map(Path, sources):
        if item.is_dir():
            for path in _run_files(item):
                (left_out if NOT_RUN_FILES.search(path.name) else paths).append(path)
        else:
            paths.append(item)
    if skipped is not None:
        skipped.extend(left_out)
    elif left_out:
        warnings.warn(skipped_note(left_out), stacklevel=2)
    if not paths:
        raise InputError("no run files found", ", ".join(map(str, sources)) or "<none>")
    named: dict[str, Path] = {}
    for path in paths:
        name = run_name(path)
        if name in named:
            raise InputError(f"two run files are both named {name!r}", str(path))
        named[name] = path
    return list(named.items())


def skipped_note(paths: list[Path]) -> str:
    """The note naming the files of run directories that were not read as runs."""
    names = ", ".join(str(p) for p in paths[:5]) + (", ..." if len(paths) > 5 else "")
    return f"{len(paths)} file(s) in the run directories are not runs and were skipped ({names})"


def _run_files(directory: Path) -> list[Path]:
    """The visible files of a run directory, sorted; a broken link or unreadable directory is
    an error."""
    try:
        entries = sorted(p for p in directory.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        reason = exc.strerror or exc
        raise InputError(f"cannot list run directory: {reason}", str(directory)) from exc
    for entry in entries:
        if entry.is_symlink() and not entry.exists():
            raise InputError(
                f"broken symbolic link to {os.readlink(entry)!r} in a run directory", str(entry)
            )
    return [p for p in entries if p.is_file()]


def run_name(path: str | os.PathLike) -> str:
    """The name of a run file: its file name without ``.gz``/``.txt``/``.run``/``.trec``."""
    name = Path(path).name
    for suffix in (".gz", ".txt", ".run", ".trec"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


# --------------------------------------------------------------------------- qrels


def _id_value_columns(source, n_fields, picks, layout, names, columns):
    """``(source name, query ids, doc ids, raw values, line numbers)`` of a file or DataFrame.

    For the readers whose tables are ids plus one value column (qrels and
    probabilistic qrels): a file is split into ``n_fields`` fields of which
    ``picks`` are kept; a DataFrame is renamed to ``names``.
    """
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        fields, lines = _parse_fields(_read_bytes(source), n_fields, picks, name, layout)
        query, doc, values = fields
        return name, query, doc, values, lines
    frame = _normalise_frame(source, names, columns)
    lines = np.arange(1, len(frame) + 1)
    query, doc = _frame_ids(frame, lines)
    return _FRAME, query, doc, frame[names[2]], lines


def read_qrels(
    source: str | os.PathLike | pd.DataFrame,
    *,
    duplicates: str = "error",
    columns: Mapping[str, str] | None = None,
    grade_range: tuple[int, int] = DEFAULT_GRADE_RANGE,
) -> pd.DataFrame:
    """Read TREC qrels (``qid iter docno rel``) or a qrels DataFrame.

    Labels must be integers within ``grade_range`` (inclusive). ``-1`` marks a
    pooled-but-unjudged document and is kept in the table; the data model
    treats it as unjudged. ``duplicates`` is ``"error"`` (conflicting labels;
    identical repeats are merged), ``"first"``, ``"last"`` or ``"max"``.
    """
    _check_policy(duplicates, DUPLICATE_POLICIES)
    name, query, doc, labels, lines = _id_value_columns(
        source, 4, [0, 2, 3], "qid iter docno rel", QRELS_COLUMNS, columns
    )
    relevance = _to_int(labels, "relevance", name, lines)
    low, high = grade_range
    out = (relevance < low) | (relevance > high)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise InputError(
            f"relevance {relevance[i]} is outside the allowed range [{low}, {high}] "
            "(set grade_range to allow it)",
            name,
            int(lines[i]),
        )
    keep = _keep_mask(query, doc, relevance, duplicates, name, lines, "judgment", "relevance", True)
    return _table({"query_id": query, "doc_id": doc, "relevance": relevance}, keep)


def _without_header(data: bytes, names: tuple[str, ...], source: str) -> tuple[bytes, int]:
    """``data`` without a first line that names the columns, and how many lines were dropped."""
    first, _, rest = data.partition(b"\n")
    fields = [f.decode("utf-8", "replace").lower() for f in first.split()]
    if [COLUMN_ALIASES.get(f, f) for f in fields] != list(names):
        return data, 0
    if not rest.strip():
        raise InputError("no rows after the header line", source)
    return rest, 1


def read_prob_qrels(
    source: str | os.PathLike | pd.DataFrame,
    *,
    duplicates: str = "error",
    columns: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Read probabilistic qrels (the format :func:`write_prob_qrels` writes, or a DataFrame).

    A file has three fields per line, query id, document id and probability,
    separated by tabs or spaces, under an optional header line naming them
    (``query_id doc_id probability``, or aliases such as ``qid docno p``).
    A header may name more columns, ``p_ge_<grade>`` (:data:`GRADE_COLUMN`), each
    P(grade ≥ grade) of a model of graded relevance (``docs/math/fusion.md``); they
    must not increase with the grade. Probabilities must be finite and within
    [0, 1]; ``duplicates`` as for :func:`read_qrels`.
    """
    _check_policy(duplicates, DUPLICATE_POLICIES)
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        data = _read_bytes(source)
        names = PROB_QRELS_COLUMNS + _grade_header(data)
        data, skipped = _without_header(data, names, name)
        (query, doc, values, *graded), lines = _parse_fields(
            data, len(names), list(range(len(names))), name, " ".join(names), first_line=1 + skipped
        )
    else:
        name, query, doc, values, lines = _id_value_columns(
            source, 3, [0, 1, 2], "qid docno p", PROB_QRELS_COLUMNS, columns
        )
        names = PROB_QRELS_COLUMNS + tuple(c for c in source.columns if GRADE_COLUMN.fullmatch(str(c)))
        graded = [source[c].reset_index(drop=True) for c in names[3:]]
    probability = _probability_column(values, "probability", name, lines)
    table = {"query_id": query, "doc_id": doc, "probability": probability}
    table.update({c: _probability_column(v, c, name, lines) for c, v in zip(names[3:], graded)})
    _check_grade_order(table, names[3:], name, lines)
    keep = _keep_mask(
        query, doc, probability, duplicates, name, lines, "probability", "probability", True
    )
    return _table(table, keep)


def _probability_column(values, what: str, name: str, lines: np.ndarray) -> np.ndarray:
    """Finite numbers within [0, 1], else an error naming the line."""
    probability = _to_float(values, what, name, lines)
    outside = (probability < 0) | (probability > 1)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise InputError(f"{what} {float(probability[i])!r} is outside [0, 1]", name, int(lines[i]))
    return probability


def _grade_header(data: bytes) -> tuple[str, ...]:
    """The ``p_ge_<grade>`` columns a header line names after the three of probabilistic qrels."""
    fields = [f.decode("utf-8", "replace").lower() for f in data.partition(b"\n")[0].split()]
    extra = fields[3:]
    if extra and all(GRADE_COLUMN.fullmatch(f) for f in extra):
        return tuple(extra)
    return ()


def _check_grade_order(table: dict, graded: tuple[str, ...], name: str, lines: np.ndarray) -> None:
    """P(grade ≥ g) must not increase with g, nor repeat a grade."""
    grades = [int(GRADE_COLUMN.fullmatch(c).group(1)) for c in graded]
    if len(set(grades)) != len(grades):
        raise InputError(f"a grade column is repeated in {list(graded)}", name)
    order = sorted(zip(grades, graded))
    for (_, low), (_, high) in zip(order, order[1:]):
        bad = table[high] > table[low]
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"{high} {float(table[high][i])!r} exceeds {low} {float(table[low][i])!r}: "
                "P(grade >= g) cannot grow with g", name, int(lines[i]),
            )  # fmt: skip


# --------------------------------------------------------------------------- writing


def _writable_ids(frame: pd.DataFrame, column: str) -> list[str]:
    """Ids as strings, refusing values the readers would split or drop."""
    ids = [str(v) for v in frame[column].tolist()]
    for row, value in enumerate(ids):
        if not value or _ASCII_SPACE.search(value):
            raise ValueError(f"{column} {value!r} (row {row}) is empty or contains whitespace")
    return ids


def _lines(fmt: str, *columns: list) -> str:
    """One formatted line per row of the given columns."""
    return "".join(fmt.format(*row) for row in zip(*columns))


def _finite(frame: pd.DataFrame, column: str) -> list[float]:
    """A numeric column as floats, refusing NaN and infinities."""
    values = pd.to_numeric(frame[column]).to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise ValueError(f"{column} must be finite (row {int(bad[0])}: {values[bad[0]]})")
    return values.tolist()


def write_qrels(qrels: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write qrels as ``qid 0 docno rel`` lines (``.gz`` paths are compressed)."""
    frame = _normalise_frame(qrels, QRELS_COLUMNS, None)
    labels = _finite(frame, "relevance")
    if any(v != int(v) for v in labels):
        raise ValueError("relevance labels must be integers")
    atomic_write_text(
        path,
        _lines(
            "{} 0 {} {}\n",
            _writable_ids(frame, "query_id"),
            _writable_ids(frame, "doc_id"),
            [int(v) for v in labels],
        ),
    )


def write_run(run: pd.DataFrame, path: str | os.PathLike, tag: str = "relimpute") -> None:
    """Write a run as ``qid Q0 docno rank score tag`` lines, ranked as trec_eval ranks.

    Scores are written with ``repr`` (shortest round-tripping form), so reading
    the file back gives the same floats and the same order.
    """
    if not tag or _ASCII_SPACE.search(tag):
        raise ValueError(f"tag {tag!r} is empty or contains whitespace")
    frame = sort_trec(_normalise_frame(run, RUN_COLUMNS, None))
    rank = (frame.groupby("query_id", sort=False).cumcount() + 1).tolist()
    atomic_write_text(
        path,
        _lines(
            "{} Q0 {} {} {!r} " + tag + "\n",
            _writable_ids(frame, "query_id"),
            _writable_ids(frame, "doc_id"),
            rank,
            _finite(frame, "score"),
        ),
    )


def write_prob_qrels(estimate: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write probabilistic qrels: a ``query_id<TAB>doc_id<TAB>probability`` header, then
    one tab-separated line per document (p written with ``repr``, so it round-trips exactly);
    the frame's ``p_ge_<grade>`` columns (:data:`GRADE_COLUMN`) follow, header and values."""
    frame = _normalise_frame(estimate, PROB_QRELS_COLUMNS, None)
    names = PROB_QRELS_COLUMNS + tuple(c for c in frame.columns if GRADE_COLUMN.fullmatch(str(c)))
    atomic_write_text(
        path,
        "\t".join(names)
        + "\n"
        + _lines(
            "{}\t{}" + "\t{!r}" * (len(names) - 2) + "\n",
            _writable_ids(frame, "query_id"),
            _writable_ids(frame, "doc_id"),
            *(_finite(frame, c) for c in names[2:]),
        ),
    )


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
