"""The Campaign build's per-topic coding of document ids, batch after batch."""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def test_document_codes_decode_to_the_ids_in_any_batching(rng, monkeypatch):
    """Each topic's codes, batch after batch (its dictionary so far joined before the new
    ids), index the dictionary at the ids read, qrels and runs, string or large string."""
    from relimpute.io import assembly

    words = np.array([f"d{i}" for i in range(50)] + ["", "\u00e9"])
    for batch_rows in (1, 1 << 20):
        monkeypatch.setattr(assembly, "_BATCH_ROWS", batch_rows)
        docs = assembly._DocIds()
        qrels = pa.array(rng.choice(words, 9), type=pa.large_string())
        qrels_codes = docs.code(qrels, np.array([0, 1]), np.array([0, 4, 9]))
        runs = []
        for kind in (pa.string(), pa.large_string(), pa.string()):
            ids = pa.array(rng.choice(words, 12), type=kind)
            docs.add_run(ids, np.array([1, 0, 2]), np.array([0, 5, 5, 12]))
            runs.append(ids.to_pylist())
        dictionaries = docs.dictionaries(3)
        decoded = [dictionaries[t].to_pylist() for t in range(3)]
        assert [decoded[int(t)][c] for t, c in zip([0] * 4 + [1] * 5, qrels_codes)] == (
            qrels.to_pylist())
        for t, rows in ((0, slice(5, 5)), (1, slice(0, 5)), (2, slice(5, 12))):
            want = [doc for run in runs for doc in run[rows]]
            assert [decoded[t][c] for c in docs.run_codes(t)] == want
        assert all(len(set(d)) == len(d) for d in decoded)  # one code per id


def test_run_tag_is_stored_once_per_file(tmp_path):
    from relimpute.io import as_string_array, read_run

    (tmp_path / "r").write_text("1 Q0 a 1 2.0 mytag\n1 Q0 b 2 1.0 mytag\n2 Q0 a 1 1.0 mytag\n")
    run = read_run(tmp_path / "r")
    assert run["run"].dtype == "category" and list(run["run"].cat.categories) == ["mytag"]
    assert run["run"].tolist() == ["mytag"] * 3
    again = read_run(run)  # a categorical column as input: same values, decoded for checks
    assert again["run"].tolist() == ["mytag"] * 3
    assert as_string_array(run["run"]).to_pylist() == ["mytag"] * 3
