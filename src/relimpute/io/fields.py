"""The fields of a file or DataFrame, typed and checked, with the pyarrow kernels they call.

:class:`Fields` are the rows :func:`relimpute.io.parsing.read_fields` split; a reader says once,
in the :class:`Checks` of its :class:`~relimpute.io.parsing.Layout`, how its numbers are read
and bounded and how a (topic, document) listed twice is treated, and :meth:`Fields.checked`
does it all, every error naming the file and line (module docstring of :mod:`relimpute.io`).

The kernels are pyarrow's, called without importing ``pyarrow.compute``: importing it writes a
Python wrapper with a parsed docstring for each of its few hundred kernels, a start-up cost paid
by every command that reads a file; the kernels live in ``pyarrow._compute``, and each function
here calls one with the options its ``pyarrow.compute`` namesake passes (none but the defaults,
or a safe cast). Array methods such as ``take``, ``cast`` or ``dictionary_encode`` import
``pyarrow.compute`` on first use, so the reading path calls these instead
(``benchmarks/bench_floor.py`` measures the command). :func:`sort_distinct` sorts short ids as
integers, faster than the kernel.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from ..errors import InputError
from .trec import GRADE_COLUMN

try:
    from pyarrow._compute import CastOptions, call_function
except ImportError:  # pragma: no cover - a pyarrow that moved its private module
    from pyarrow.compute import CastOptions, call_function

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded for DataFrames only: reading files needs none
    import pandas as pd

_STRING = pa.large_string()


# --------------------------------------------------------------------------- kernels


def cast(values, target: pa.DataType):
    """``pc.cast(values, target)``: a safe cast (an error, not a wrap, on overflow)."""
    if values.type == target:
        return values
    return call_function("cast", [values], CastOptions.safe(target))


def take(values, indices):
    """``pc.take(values, indices)`` (``values.take(indices)``), bounds checked."""
    return call_function("take", [values, indices])


def dictionary_encode(values, memory_pool: pa.MemoryPool | None = None):
    """``pc.dictionary_encode(values)``: nulls masked, codes in order of first appearance."""
    return call_function("dictionary_encode", [values], None, memory_pool)


def unique(values) -> pa.Array:
    """``pc.unique(values)``: the distinct values, in order of first appearance."""
    return call_function("unique", [values])


def not_equal(left, right) -> pa.Array:
    """``pc.not_equal(left, right)``, element by element."""
    return call_function("not_equal", [left, right])


def sort_indices(values) -> pa.Array:
    """``pc.sort_indices(values)``: the stable ascending order (strings: by their bytes)."""
    return call_function("sort_indices", [values])


def sort_distinct(values) -> np.ndarray:
    """``pc.sort_indices(values)`` (byte order, as trec_eval's strcmp) of distinct strings, as
    numpy: strings of at most 8 bytes and no NUL are packed big-endian into uint64 (zero
    padded, so a prefix sorts first) and sorted as integers, others by the kernel."""
    n, kind = len(values), values.type
    if n and not values.null_count and kind in (pa.string(), pa.large_string()):
        _, offsets, data = values.buffers()
        width = 4 if kind == pa.string() else 8
        offsets = np.frombuffer(offsets, f"<i{width}", n + 1, values.offset * width)
        lengths = np.diff(offsets)
        if data is not None and len(data) and lengths.max() <= 8:
            data = np.frombuffer(data, dtype=np.uint8)
            key = np.zeros(n, dtype=np.uint64)
            for j in range(int(lengths.max())):
                has = lengths > j
                byte = np.where(has, data[np.where(has, offsets[:-1] + j, 0)], 0)
                if (has & (byte == 0)).any():  # a NUL would tie with the padding
                    return _indices(sort_indices(values))
                key |= byte.astype(np.uint64) << np.uint64(56 - 8 * j)
            return np.argsort(key)
    return _indices(sort_indices(values))


def _indices(order: pa.Array) -> np.ndarray:
    """The uint64 array sort_indices returns (no nulls), as numpy without copying."""
    return np.frombuffer(order.buffers()[1], np.uint64, len(order), order.offset * 8)


def filter_rows(values, mask):
    """``pc.filter(values, mask)`` (``values.filter(mask)``): the rows ``mask`` keeps."""
    return call_function("filter", [values, mask])


def is_null(values) -> pa.Array:
    """``pc.is_null(values)`` (NaN is not null)."""
    return call_function("is_null", [values])


def binary_length(values) -> pa.Array:
    """``pc.binary_length(values)``: the bytes of every string."""
    return call_function("binary_length", [values])


def any_empty(values) -> bool:
    """Whether a string array holds an empty string (``pc.min(pc.binary_length(values))``)."""
    return bool(len(values)) and call_function("min", [binary_length(values)]).as_py() == 0


def all_finite(values) -> bool:
    """Whether every number of a float array is finite (``pc.all(pc.is_finite(values))``)."""
    return bool(call_function("all", [call_function("is_finite", [values])]).as_py())


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


# --------------------------------------------------------------------------- checks

@dataclass(frozen=True)
class Number:
    """A numeric column as a file kind reads it: integers or finite floats, named ``what`` in
    errors (default: the column), within ``bounds`` (``open_low``: the lower one excluded) that
    errors spell ``outside``, given out as ``name`` (default: the column); ``missing``: the
    error when a DataFrame lacks it (default: not read then)."""

    column: str
    integer: bool = False
    what: str | None = None
    bounds: tuple[float, float] | None = None
    open_low: bool = False
    outside: str = ""
    name: str | None = None
    missing: str | None = None


@dataclass(frozen=True)
class Checks:
    """What a file kind's reader makes of its :class:`Fields`, in this order: the ``numbers``
    (``every``: how each other value column is read, its name put in); the ``p_ge_<grade>``
    columns ordered (``graded``); a (topic, document) listed twice refused (``listed_twice``:
    the error, formatted with ``query``, ``doc``, ``line`` and the ``first`` and ``here`` rows'
    numbers); in sampled qrels (``strata``), the strata none of whose documents was judged
    named in a warning; the ``tags`` kept as they are (``encode``: dictionary-encoded); the rows
    kept under a duplicate policy among ``policies`` by the number ``value``
    (:meth:`Fields.keep`: ``what``, ``merge_identical``); a DataFrame of them if ``frame``."""

    numbers: tuple[Number, ...] = ()
    every: Number | None = None
    graded: bool = False
    listed_twice: str | None = None
    policies: tuple[str, ...] = ()
    value: str = ""
    what: str = ""
    merge_identical: bool = False
    tags: tuple[str, ...] = ()
    encode: bool = False
    frame: bool = False
    strata: bool = False

    def check_policy(self, duplicates: str) -> None:
        """Refuse an unknown duplicate policy (a programming error, so ValueError)."""
        if self.policies and duplicates not in self.policies:
            raise ValueError(f"duplicates must be one of {self.policies}, got {duplicates!r}")


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

    def checked(self, checks: Checks, duplicates: str = "error"):
        """``(rows, lines)``: the ids and what ``checks`` make of the other columns (a DataFrame
        if ``checks.frame``), rows kept under the ``duplicates`` policy, and each row's line."""
        numbers = list(checks.numbers)
        for number in numbers:
            if number.missing and number.column not in self.values:
                raise InputError(number.missing, self.source)
        if checks.every is not None:
            numbers += [replace(checks.every, column=c, what=c) for c in self.values]
        out: dict[str, object] = {"query_id": self.query, "doc_id": self.doc}
        for number in numbers:
            if number.column in self.values:
                out[number.name or number.column] = self._number(number)
        if checks.graded:
            self._graded(out)
        if checks.listed_twice is not None:
            first = {name: values for name, values in out.items() if isinstance(values, np.ndarray)}
            self.refuse_repeats(lambda row, earlier: checks.listed_twice.format(
                query=self.query[row].as_py(), doc=self.doc[row].as_py(),
                line=int(self.lines[earlier]), first={c: v[earlier] for c, v in first.items()},
                here={c: v[row] for c, v in first.items()}))  # fmt: skip
        if checks.strata:
            self._warn_unjudged_strata(out["stratum"], out["relevance"])
        for tag in checks.tags:
            if tag in self.values:
                values = self.values[tag]  # a file's tags are strings, a DataFrame's may not be
                if checks.encode:  # one tag per file: stored once, not per line
                    values = values if isinstance(values, pa.Array) else as_string_array(values)
                    values = dictionary_encode(values)
                out[tag] = values
        keep = None
        if checks.policies:
            keep = self.keep(out[checks.value], duplicates, checks.what, checks.value,
                             checks.merge_identical)  # fmt: skip
        kept = kept_columns({**out, "line": self.lines}, keep)
        lines = kept.pop("line")
        return (_table(kept, None) if checks.frame else kept), lines

    def _warn_unjudged_strata(self, stratum: np.ndarray, relevance: np.ndarray) -> None:
        """Name in a warning the first five (topic, stratum), in order, none of whose documents
        was judged: the stratum adds nothing to the estimated R (as ``sample_eval.pl``)."""
        encoded = dictionary_encode(self.query)
        names = encoded.dictionary.to_pylist()
        rank = np.empty(len(names), dtype=np.int64)
        rank[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
        topic = rank[to_numpy(encoded.indices)]
        order = np.lexsort((stratum, topic))
        topic, group = topic[order], stratum[order]
        starts = np.flatnonzero(np.r_[True, (topic[1:] != topic[:-1]) | (group[1:] != group[:-1])])
        judged = np.logical_or.reduceat(relevance[order] >= 0, starts)
        if judged.all():
            return
        rows = order[starts[~judged][:5]]
        empty = ", ".join(f"topic {self.query[i].as_py()} stratum {stratum[i]}" for i in rows)
        warnings.warn(f"{self.source}: no document of {empty} was judged: the stratum adds nothing "
                      "to the estimated number of relevant documents (as sample_eval.pl)",
                      stacklevel=_outside_io())  # fmt: skip

    def _number(self, number: Number) -> np.ndarray:
        """One column as ``number`` says, its bounds checked."""
        what = number.what or number.column
        array = self.integers(number.column) if number.integer else self.floats(number.column, what)
        if number.bounds is not None:
            low, high = number.bounds
            inside = (array > low) if number.open_low else (array >= low)
            shown = (lambda i: array[i]) if number.integer else (lambda i: repr(float(array[i])))
            self.refuse(~(inside & (array <= high)),
                        lambda i: f"{what} {shown(i)} is outside {number.outside}")  # fmt: skip
        return array

    def _graded(self, table: dict[str, object]) -> None:
        """Refuse ``p_ge_<grade>`` columns that repeat a grade or grow with it."""
        graded = [c for c in table if GRADE_COLUMN.fullmatch(str(c))]
        grades = [int(GRADE_COLUMN.fullmatch(c).group(1)) for c in graded]
        if len(set(grades)) != len(grades):
            raise InputError(f"a grade column is repeated in {graded}", self.source)
        order = [c for _, c in sorted(zip(grades, graded))]
        for low, high in zip(order, order[1:]):  # P(grade >= g) cannot grow with g
            self.refuse(table[high] > table[low], lambda i: (
                f"{high} {float(table[high][i])!r} exceeds {low} {float(table[low][i])!r}: "
                "P(grade >= g) cannot grow with g"))  # fmt: skip

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


def _outside_io() -> int:
    """The ``stacklevel`` at which a warning issued by its caller names the first caller outside
    :mod:`relimpute.io` (a reader's caller, however deep the reader)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(f"{__package__}."):
        frame, level = frame.f_back, level + 1
    return level


def _repeats(query: pa.Array, doc: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(key, order, repeat)``: a key per (topic, document), the stable order sorting it and the
    positions ``i`` in that order whose row ``order[i + 1]`` repeats the key of ``order[i]``."""
    q = to_numpy(dictionary_encode(query).indices).astype(np.int64)
    d = to_numpy(dictionary_encode(doc).indices).astype(np.int64)
    key = q * (int(d.max(initial=0)) + 1) + d  # one per (topic, document)
    order = np.argsort(key, kind="stable")
    return key, order, np.flatnonzero(key[order][1:] == key[order][:-1])


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
