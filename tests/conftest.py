"""Shared fixtures: the DL 2019 data in ../shared/data (skipped when absent) and an rng."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
DL19 = SHARED_DATA / "trec-dl-2019-passage"


def require_dl19() -> Path:
    """Skip the calling test with a clear reason when the DL 2019 data is absent."""
    if not (DL19 / "qrels.txt").is_file():
        pytest.skip(f"DL 2019 data not found at {DL19} (../shared/data is not beside the repo)")
    return DL19


@pytest.fixture(scope="session")
def dl19_dir() -> Path:
    return require_dl19()


@pytest.fixture(scope="session")
def dl19(dl19_dir):
    """The 37 DL 2019 passage runs with the official qrels, binary at rel >= 2."""
    from relimpute.data import Campaign

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Campaign.from_files(dl19_dir / "qrels.txt", dl19_dir / "runs", rel_threshold=2)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20070723)


@pytest.fixture
def write_collection(tmp_path):
    """``write_collection(qrels_text, {name: run_text})``: ``qrels.txt`` and ``runs/`` in tmp_path."""

    def write(qrels: str, runs: dict[str, str]) -> Path:
        (tmp_path / "qrels.txt").write_text(qrels)
        (tmp_path / "runs").mkdir(exist_ok=True)
        for name, text in runs.items():
            (tmp_path / "runs" / name).write_text(text)
        return tmp_path

    return write


def make_campaign(qrels, runs, **options):
    """The one factory of hand-written test campaigns: :func:`relimpute.testing.make_campaign`
    (public, the contracts build theirs with it), imported when first called so that loading
    the tests' fixtures imports no model."""
    from relimpute.testing import make_campaign as make

    return make(qrels, runs, **options)
