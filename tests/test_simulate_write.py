"""write_simulated: the simulator's campaign as TREC files, streamed one topic at a time."""

import hashlib
import json

import numpy as np
import pytest

from relimpute.data import Campaign
from relimpute.simulate import SIZES, simulate_campaign, write_simulated

SMALL = dict(n_topics=6, n_systems=5, n_docs=200, depth=20)


def _digest(folder):
    h = hashlib.md5()
    for path in sorted(folder.rglob("*.txt")):
        h.update(path.name.encode() + path.read_bytes())
    return h.hexdigest()


def test_files_hold_the_simulated_campaign_pooled(tmp_path):
    record = write_simulated(tmp_path / "c", pool_depth=5, rng=1, **SMALL)
    read = Campaign.from_files(tmp_path / "c" / "qrels.txt", tmp_path / "c" / "runs")
    pooled = simulate_campaign(**SMALL, rng=1).campaign.pooled(5)
    assert read.systems == pooled.systems
    for a, b in zip(read.topics, pooled.topics, strict=True):
        assert a.query_id == b.query_id
        rank_a = [[a.doc_ids[d] for d in row if d >= 0] for row in a.ranking]
        rank_b = [[b.doc_ids[d] for d in row if d >= 0] for row in b.ranking]
        assert rank_a == rank_b
        judged_a = sorted((a.doc_ids[i], int(a.grades[i])) for i in np.flatnonzero(a.judged))
        judged_b = sorted((b.doc_ids[i], int(b.grades[i])) for i in np.flatnonzero(b.judged))
        assert judged_a == judged_b
    lines = sum(len(p.read_text().splitlines()) for p in (tmp_path / "c" / "runs").iterdir())
    assert record["run_lines"] == lines
    assert json.loads((tmp_path / "c" / "simulation.json").read_text())["seed"] == 1


def test_same_seed_same_files_other_seed_other_files(tmp_path):
    write_simulated(tmp_path / "a", rng=7, **SMALL)
    write_simulated(tmp_path / "b", rng=7, **SMALL)
    write_simulated(tmp_path / "c", rng=8, **SMALL)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b") != _digest(tmp_path / "c")


def test_sizes_and_bad_arguments(tmp_path):
    assert SIZES["million-query"]["n_topics"] == 10_000
    assert SIZES["rag-2024"]["n_systems"] == 77
    with pytest.raises(ValueError, match="size must be one of"):
        write_simulated(tmp_path / "x", "huge")
    with pytest.raises(TypeError, match="unknown simulate_campaign arguments: n_runs"):
        write_simulated(tmp_path / "x", n_runs=3)
    with pytest.raises(ValueError, match="depth"):
        write_simulated(tmp_path / "x", n_docs=10, depth=20)
    (tmp_path / "exists").mkdir()
    with pytest.raises(FileExistsError, match="exists"):
        write_simulated(tmp_path / "exists", **SMALL)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exists"]  # nothing half-written


def test_a_failure_leaves_nothing(tmp_path, monkeypatch):
    import relimpute.simulate as simulate

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(simulate, "_write_files", broken)
    with pytest.raises(OSError, match="disk full"):
        write_simulated(tmp_path / "c", **SMALL)
    assert list(tmp_path.iterdir()) == []
