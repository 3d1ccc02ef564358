"""pyarrow's compute kernels as the readers call them, without importing ``pyarrow.compute``.

Importing ``pyarrow.compute`` writes a Python wrapper with a parsed docstring for each of its
few hundred kernels, a start-up cost paid by every command that reads a file; the kernels
themselves live in ``pyarrow._compute``, and each function here calls one with the options
its ``pyarrow.compute`` namesake passes (none but the defaults, or a safe cast). Array methods
such as ``take``, ``cast`` or ``dictionary_encode`` import ``pyarrow.compute`` on first use,
so the reading path calls these instead. ``benchmarks/bench_floor.py`` measures the command.
"""

from __future__ import annotations

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
