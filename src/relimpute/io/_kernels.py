"""pyarrow's compute kernels as the readers call them, without importing ``pyarrow.compute``.

Importing ``pyarrow.compute`` writes a Python wrapper with a parsed docstring for each of its
few hundred kernels, a start-up cost paid by every command that reads a file; the kernels
themselves live in ``pyarrow._compute``, and each function here calls one with the options
its ``pyarrow.compute`` namesake passes (none but the defaults, or a safe cast). Array methods
such as ``take``, ``cast`` or ``dictionary_encode`` import ``pyarrow.compute`` on first use,
so the reading path calls these instead. ``benchmarks/bench_floor.py`` measures the command.
:func:`sort_distinct` sorts short ids as integers, faster than the kernel.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

try:
    from pyarrow._compute import CastOptions, call_function
except ImportError:  # pragma: no cover - a pyarrow that moved its private module
    from pyarrow.compute import CastOptions, call_function


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
