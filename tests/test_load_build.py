"""The Campaign build's shared-dictionary encoding of document ids (one hash table, no concat)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from relimpute.io.assembly import _encode_shared


def test_chunks_share_one_dictionary_and_match_a_concatenated_encoding(rng):
    words = np.array([f"d{i}" for i in range(50)])
    chunks = [pa.array(rng.choice(words, size=n), type=pa.large_string()) for n in (7, 0, 30, 1)]
    encoded = _encode_shared(pa.chunked_array(chunks, type=pa.large_string()))
    dictionary = encoded.chunk(0).dictionary
    assert all(c.dictionary.equals(dictionary) for c in encoded.chunks)
    codes = np.concatenate([c.indices.to_numpy() for c in encoded.chunks])
    decoded = dictionary.take(pa.array(codes)).to_pylist()
    assert decoded == pa.concat_arrays(chunks).to_pylist()


def test_run_tag_is_stored_once_per_file(tmp_path):
    from relimpute.io import as_string_array, read_run

    (tmp_path / "r").write_text("1 Q0 a 1 2.0 mytag\n1 Q0 b 2 1.0 mytag\n2 Q0 a 1 1.0 mytag\n")
    run = read_run(tmp_path / "r")
    assert run["run"].dtype == "category" and list(run["run"].cat.categories) == ["mytag"]
    assert run["run"].tolist() == ["mytag"] * 3
    again = read_run(run)  # a categorical column as input: same values, decoded for checks
    assert again["run"].tolist() == ["mytag"] * 3
    assert as_string_array(run["run"]).to_pylist() == ["mytag"] * 3
