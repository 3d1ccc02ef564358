"""pyarrow arrays to numpy and back without pyarrow's pandas conversion layer, and ids of any
kind as pyarrow strings (:func:`as_string_array`).

``Array.to_numpy`` and ``pa.array`` go through pyarrow's pandas-compatible
conversion, which imports pandas (about 0.35 s of CPU) the first time, even for
an array of integers. Reading run files needs none of it: these read and wrap the
arrays' buffers directly (no copy but for booleans, which arrow packs in bits).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded for DataFrames only: reading files needs none
    import pandas as pd


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
            array = pa.array(strings, type=pa.large_string(), mask=mask)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return array.cast(pa.large_string())
