"""`relimpute evaluate`'s plain table is made without pandas, and says the same.

The command's common answer (the means table, ``--format table``) reads the files, builds
the campaign and prints without importing pandas (a third of a second of start-up); these
tests check that its text equals the pandas formatter's on random tables, that the command
does not load pandas, and that the numpy <-> pyarrow conversions it uses instead give what
pyarrow's own give.
"""

from __future__ import annotations

import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from relimpute.io.fields import from_numpy, strings_to_numpy, to_numpy
from relimpute.studies.tables import FORMATTERS, plain_table

SRC = Path(__file__).resolve().parents[1] / "src"


def _random_columns(rng: random.Random) -> dict[str, list]:
    n = rng.randint(1, 6)
    columns = {"system": ["".join(rng.choice("abXY_-1ä€ ") for _ in range(rng.randint(1, 20)))
                          for _ in range(n)]}  # fmt: skip
    for i in range(rng.randint(1, 5)):
        stem = rng.choice(["num_q", "AP", "P@10", "nDCG@10", "NumRet", "x", "RBP(p=0.8)@10"])
        name = stem + str(i)
        if rng.random() < 0.3:
            columns[name] = [rng.choice([0, 1, 43, -5, 10 ** rng.randint(0, 9)]) for _ in range(n)]
        else:
            columns[name] = [
                rng.choice([math.nan, 0.0, -0.0, 1.0, rng.random(), -rng.random(), 1e-7, 0.99995,
                            -0.00004, rng.random() * 10 ** rng.randint(0, 12)])
                for _ in range(n)
            ]  # fmt: skip
    return columns


def test_plain_table_prints_what_pandas_prints():
    rng = random.Random(2026)
    for _ in range(500):
        columns = _random_columns(rng)
        frame = pd.DataFrame(
            {k: np.array(v, dtype=np.int64) if type(v[0]) is int else v for k, v in columns.items()}
        )
        assert plain_table(columns) == FORMATTERS["table"](frame)


def test_plain_table_leaves_what_pandas_escapes_or_other_types_to_pandas():
    assert plain_table({"system": ["a\tb"], "AP": [0.5]}) is None
    assert plain_table({"system": ["a"], "AP": [0.5], "flag": [True]}) is None
    assert plain_table({"system": ["a", "b"], "AP": [1, 0.5]}) is None  # mixed int and float


def test_evaluate_prints_the_pandas_table_without_importing_pandas(tiny_campaign_files):
    """... nor pyarrow.compute (its kernel wrappers: start-up time; io.fields calls them)."""
    qrels, runs = tiny_campaign_files
    code = (
        "import sys\nfrom relimpute.cli import main\n"
        f"code = main(['evaluate', {str(qrels)!r}, {str(runs)!r}, '-m', 'AP', '-m', 'NumRet', "
        "'-m', 'nDCG@10'])\n"
        "print('pandas loaded:', 'pandas' in sys.modules or 'pyarrow.compute' in sys.modules)\n"
        "sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC), "PATH": ""}, check=True)  # fmt: skip
    text, _, loaded = done.stdout.rpartition("pandas loaded: ")
    assert loaded.strip() == "False"
    from relimpute.cli.evaluate import _counts_as_integers, _wide
    from relimpute.data import Campaign
    from relimpute.measures import evaluate, parse_measures

    with pytest.warns(UserWarning, match="retrieves nothing"):
        campaign = Campaign.from_files(qrels, runs)
    measures = parse_measures(["AP", "NumRet", "nDCG@10"])
    frame = _wide(evaluate(campaign, measures), ["system"], [str(m) for m in measures])
    frame.insert(1, "num_q", campaign.coverage().sum(axis=1).astype(int))
    title = "estimand: qrels (trec_eval on the qrels given, unjudged = nonrelevant)"
    assert text == f"{title}\n{FORMATTERS['table'](_counts_as_integers(frame, measures))}\n"


@pytest.fixture
def tiny_campaign_files(tmp_path):
    """Two runs of two topics (one run missing a topic, ties in score) and their qrels."""
    (tmp_path / "qrels.txt").write_text(
        "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d1 1\n2 0 d9 1\n", encoding="utf-8"
    )
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.txt").write_text(
        "1 Q0 d1 1 3.0 a\n1 Q0 d3 2 2.0 a\n1 Q0 d7 3 2.0 a\n2 Q0 d9 1 1.5 a\n", encoding="utf-8"
    )
    (runs / "b_long_name.txt").write_text("1 Q0 d2 1 9 b\n1 Q0 d1 2 -1e3 b\n", encoding="utf-8")
    return tmp_path / "qrels.txt", runs


@pytest.mark.parametrize(
    "array",
    [
        pa.array(np.arange(10, dtype=np.int32)).slice(3, 5),
        pa.array(np.linspace(-1, 1, 7)).slice(1),
        pa.array(np.arange(5, dtype=np.uint64)),
        pa.array([True, False, True, True, False, False, True, False, True, True]).slice(3, 6),
        pa.array(np.zeros(0, dtype=np.int64)),
        pa.array([1.0, None, 2.0]),
    ],
)
def test_to_numpy_gives_pyarrows_numbers(array):
    got = to_numpy(array)
    want = array.to_numpy(zero_copy_only=False)
    assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize(
    "values",
    [np.array([3, 1, 2]), np.arange(6, dtype=np.uint64)[::2], np.array([True, False, True]),
     np.linspace(0, 1, 4), np.zeros(0, dtype=np.int64)],
)  # fmt: skip
def test_from_numpy_gives_pa_array(values):
    assert from_numpy(values).equals(pa.array(values))


def test_strings_to_numpy_gives_the_str_objects():
    array = pa.array(["b", "ä", "", "c"]).slice(1)
    got = strings_to_numpy(array)
    assert got.dtype == object and got.tolist() == array.to_numpy(zero_copy_only=False).tolist()
