"""The readers' calls of pyarrow's kernels (``relimpute.io.fields``) give what
``pyarrow.compute`` gives, on random string, number and index arrays (the oracle)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from relimpute.io import fields as k


def _strings(rng: np.random.Generator, n: int, large: bool = False) -> pa.Array:
    words = ["", "a", "b", "ab", "ä", "€x", "10", "9", "d1", "D1", "zz z"]
    values = [words[i] for i in rng.integers(0, len(words), n)]
    return pa.array(values, type=pa.large_string() if large else pa.string())


@pytest.mark.parametrize("seed", range(5))
def test_kernels_give_pyarrow_computes_results(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    for values in (_strings(rng, n), _strings(rng, n, large=True).slice(n // 3)):
        assert k.unique(values).equals(pc.unique(values))
        assert k.sort_indices(values).equals(pc.sort_indices(values))
        assert k.dictionary_encode(values).equals(pc.dictionary_encode(values))
        assert k.binary_length(values).equals(pc.binary_length(values))
        empty = pc.min(pc.binary_length(values)).as_py() == 0
        assert k.any_empty(values) == empty
        indices = pa.array(rng.integers(0, max(len(values), 1), len(values)))
        assert k.take(values, indices).equals(pc.take(values, indices))
        mask = pa.array(rng.random(len(values)) < 0.5)
        assert k.filter_rows(values, mask).equals(pc.filter(values, mask))
        assert k.cast(values, pa.large_string()).equals(pc.cast(values, pa.large_string()))
        if len(values) > 1:
            left, right = values.slice(1), values.slice(0, len(values) - 1)
            assert k.not_equal(left, right).equals(pc.not_equal(left, right))
    numbers = pa.array(rng.normal(size=n).tolist() + [float(x) for x in rng.choice(
        [np.inf, -np.inf, np.nan, 0.0], int(rng.integers(0, 2)))])  # fmt: skip
    assert k.all_finite(numbers) == bool(pc.all(pc.is_finite(numbers)).as_py())
    with_nulls = pa.array([1.5, None, 2.0])
    assert k.is_null(with_nulls).equals(pc.is_null(with_nulls))
    text = pa.array(["1.5", "-2", "1e3"])
    assert k.cast(text, pa.float64()).equals(pc.cast(text, pa.float64()))


def test_cast_is_safe_as_pyarrows():
    with pytest.raises(pa.ArrowInvalid):
        k.cast(pa.array([300]), pa.int8())
    with pytest.raises(pa.ArrowInvalid):
        k.cast(pa.array(["x"]), pa.float64())


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_sort_distinct_gives_pyarrows_byte_order(kind):
    """Packed short ids (prefixes, UTF-8, DEL, NUL: the kernel's) order as sort_indices."""
    rng = np.random.default_rng(7)
    alphabet = ["a", "b", "0", "9", "\u00e9", "\u20ac", "\x7f", "A", "z"]
    for trial in range(600):
        longest = int(rng.integers(0, 11))
        values = sorted({"".join(rng.choice(alphabet, int(rng.integers(0, longest + 1))))
                         for _ in range(int(rng.integers(0, 30)))})  # fmt: skip
        if trial % 3 == 0 and values:
            values.append(values[-1] + "\x00")  # ties with the padding: the kernel's order
        values = [values[i] for i in rng.permutation(len(values))]
        array = pa.array(values, type=kind)
        if trial % 5 == 0 and len(array) > 2:
            array = array.slice(1)
        got = k.sort_distinct(array)
        assert np.array_equal(got, pc.sort_indices(array).to_numpy()), values
