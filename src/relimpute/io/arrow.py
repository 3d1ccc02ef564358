"""pyarrow arrays to numpy and back without pyarrow's pandas conversion layer.

``Array.to_numpy`` and ``pa.array`` go through pyarrow's pandas-compatible
conversion, which imports pandas (about 0.35 s of CPU) the first time, even for
an array of integers. Reading run files needs none of it: these read and wrap the
arrays' buffers directly (no copy but for booleans, which arrow packs in bits).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


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
