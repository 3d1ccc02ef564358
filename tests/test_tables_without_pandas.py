"""Tables written from columns, without pandas, say what pandas' formatters say.

:func:`relimpute.studies.tables.columns_text` writes every ``--format`` of a table of text,
integer and float columns; ``relimpute evaluate`` and ``relimpute compare`` (its pairs and
its ``--matrix``) print through it, so that neither loads pandas, nor compare scipy's special
functions (:mod:`relimpute._normal`). The oracle is pandas itself on random tables, and
the commands' text before this writer (the frames, through the same formatters).
"""

from __future__ import annotations

import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from relimpute.cli._format import write_columns
from relimpute.studies.tables import FORMATTERS, columns_text
from test_evaluate_without_pandas import _random_columns

SRC = Path(__file__).resolve().parents[1] / "src"


def _frame(columns: dict) -> pd.DataFrame:
    return pd.DataFrame(
        {k: np.array(v, dtype=np.int64) if type(v[0]) is int else v for k, v in columns.items()}
    )


def test_every_format_is_what_pandas_writes():
    rng = random.Random(45)
    for _ in range(600):
        columns = _random_columns(rng)
        if rng.random() < 0.4:  # text the formats quote or escape
            columns["system"] = [v + rng.choice(['"', "|", "&", ",", "\\", "_", "%", "<br>"])
                                 for v in columns["system"]]  # fmt: skip
        if rng.random() < 0.3:  # floats whose shortest text is long or in exponent form
            columns["x"] = [rng.choice([1e16, 1e-5, 123456789.123, 5e-324, -1e300, math.inf,
                                        0.1 + 0.2, -0.0]) for _ in columns["system"]]  # fmt: skip
        frame = _frame(columns)
        for fmt, formatter in FORMATTERS.items():
            assert columns_text(columns, fmt) == formatter(frame), fmt


def test_left_justified_table_wraps_as_pandas_to_string():
    rng = random.Random(2026)
    for _ in range(400):
        rows = rng.randint(1, 8)
        columns = {"system": ["".join(rng.choice("ab xy_-") for _ in range(rng.randint(1, 25)))
                              for _ in range(rows)]}  # fmt: skip
        for j in range(rng.randint(1, 40)):
            columns[str(j + 1) * rng.randint(1, 3)] = [
                rng.choice(["-", "0.00", "1.00", "0.5", "12345"]) for _ in range(rows)
            ]
        width = rng.choice([None, 20, 80, 120, 200])
        want = pd.DataFrame(columns).to_string(index=False, justify="left", line_width=width)
        assert columns_text(columns, "table", justify="left", line_width=width) == want


@pytest.mark.parametrize(
    "columns",
    [
        {"system": ["a", "b"], "flag": [True, False]},  # bool: pandas' type
        {"system": ["a", "b"], "AP": [1, 0.5]},  # mixed int and float
        {"system": [], "AP": []},  # no rows
        {"system": ["a\tb"], "AP": [0.5]},  # pandas escapes the tab in a table
        {"system": ["x" * 60], "AP": [0.5]},  # pandas cuts the cell at 50 characters
    ],
)
def test_what_pandas_must_write_goes_to_pandas(columns):
    assert columns_text(columns, "table") is None
    assert write_columns(columns, "table") == FORMATTERS["table"](pd.DataFrame(columns))


def test_arrays_are_written_as_their_lists():
    columns = {"system": np.array(["a", "b"]), "num_q": np.array([3, 4]), "AP": np.array([0.5, np.nan])}
    lists = {k: v.tolist() for k, v in columns.items()}
    for fmt in FORMATTERS:
        assert columns_text(columns, fmt) == columns_text(lists, fmt) == FORMATTERS[fmt](_frame(lists))


@pytest.mark.parametrize("fmt", ["table", "tsv", "json", "markdown", "latex"])
@pytest.mark.parametrize("matrix", [False, True])
def test_compare_prints_what_the_frames_print_without_pandas_or_scipy(tmp_path, fmt, matrix):
    qrels, runs = _collection(tmp_path)
    code = (
        "import sys\nfrom relimpute.cli import main\n"
        f"code = main(['compare', {str(qrels)!r}, {str(runs)!r}, '--prior', '0.5', '-f', {fmt!r}"
        + (", '--matrix'" if matrix else "") + "])\n"
        "print('loaded:', 'pandas' in sys.modules, 'scipy.special' in sys.modules)\n"
        "sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC), "PATH": "", "COLUMNS": "60"},
                          check=True)  # fmt: skip
    text, _, loaded = done.stdout.rpartition("loaded: ")
    assert loaded.split() == ["False", "False"]
    assert text == _compare_with_frames(qrels, runs, fmt, matrix)


def _compare_with_frames(qrels, runs, fmt: str, matrix: bool) -> str:
    """What compare printed when it wrote its frames (pandas, scipy's ndtr)."""
    from scipy.special import ndtr

    from relimpute.cli._format import heading
    from relimpute.confidence import ConfidenceEngine
    from relimpute.data import Campaign
    from relimpute.relevance import Uniform

    campaign = Campaign.from_files(qrels, runs)
    engine = ConfidenceEngine()
    result = engine.confidence(campaign, Uniform(0.5).fit_predict(campaign), method="normal")
    z = result.e_delta_map / np.sqrt(result.var_delta_map)
    assert np.array_equal(result.p_a_better, np.where(result.var_delta_map > 0, ndtr(z), 0.5))
    title = heading(engine.describe(campaign), fmt)
    if not matrix:
        return title + FORMATTERS[fmt](result.to_frame()).rstrip("\n") + "\n"
    frame = result.matrix()
    if fmt in ("tsv", "json"):
        return title + FORMATTERS[fmt](frame.reset_index()).rstrip("\n") + "\n"
    numbers = [str(i) for i in range(1, len(frame) + 1)]
    cells = frame.map(lambda p: "-" if p != p else f"{p:.2f}")
    cells.columns = numbers
    labels = [f"{n:>{len(numbers[-1])}} {name}" for n, name in zip(numbers, frame.index)]
    cells.insert(0, "system", [label.ljust(max(map(len, labels))) for label in labels])
    if fmt == "table":
        return title + cells.to_string(index=False, justify="left", line_width=60) + "\n"
    return title + FORMATTERS[fmt](cells).rstrip("\n") + "\n"


def _collection(tmp_path) -> tuple[Path, Path]:
    """Twelve runs (so that the matrix wraps at 60 columns) over three topics, a few
    judgments each; names with characters the formats quote."""
    rng = np.random.default_rng(45)
    docs = [f"d{i}" for i in range(30)]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{t} 0 {d} {int(rng.random() < 0.4)}\n"
                             for t in range(3) for d in docs[: 12 + 3 * t]))  # fmt: skip
    runs = tmp_path / "runs"
    runs.mkdir()
    for s in range(12):
        name = f"run_{s}" + ("&x" if s == 3 else "")
        lines = [f"q{t} Q0 {d} {r + 1} {20 - r} {name}"
                 for t in range(3) for r, d in enumerate(rng.permutation(docs)[:15])]  # fmt: skip
        (runs / name).write_text("\n".join(lines) + "\n")
    return qrels, runs
