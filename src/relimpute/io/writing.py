"""Writing qrels, runs and probabilistic qrels in the formats :mod:`relimpute.io` reads.

Every writer goes through the atomic writers of :mod:`relimpute._files` (a temporary
file in the destination folder, renamed into place); ids are checked before writing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TextIO

import numpy as np

from .._files import atomic_write_chunks, atomic_write_text
from .parsing import _ASCII_SPACE, _normalise_frame
from .trec import GRADE_COLUMN, PROB_QRELS_COLUMNS, QRELS_COLUMNS, RUN_COLUMNS, sort_trec

if TYPE_CHECKING:  # pandas is loaded by the writers, not on import
    import pandas as pd


def _writable_ids(frame: pd.DataFrame, column: str, first_row: int = 0) -> list[str]:
    """Ids as strings, refusing values the readers would split or drop (rows are
    counted from ``first_row``)."""
    ids = [str(v) for v in frame[column].tolist()]
    for row, value in enumerate(ids, start=first_row):
        if not value or _ASCII_SPACE.search(value):
            raise ValueError(f"{column} {value!r} (row {row}) is empty or contains whitespace")
    return ids


def _lines(fmt: str, *columns: list) -> str:
    """One formatted line per row of the given columns."""
    return "".join(fmt.format(*row) for row in zip(*columns))


def _finite(frame: pd.DataFrame, column: str) -> list[float]:
    """A numeric column as floats, refusing NaN and infinities."""
    return _finite_array(frame, column).tolist()


def _finite_array(frame: pd.DataFrame, column: str) -> np.ndarray:
    """:func:`_finite` as a float64 array."""
    import pandas as pd

    values = pd.to_numeric(frame[column]).to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise ValueError(f"{column} must be finite (row {int(bad[0])}: {values[bad[0]]})")
    return values


def write_qrels(qrels: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write qrels as ``qid 0 docno rel`` lines (``.gz`` paths are compressed)."""
    frame = _normalise_frame(qrels, QRELS_COLUMNS, None)
    labels = _finite(frame, "relevance")
    if any(v != int(v) for v in labels):
        raise ValueError("relevance labels must be integers")
    atomic_write_text(
        path,
        _lines(
            "{} 0 {} {}\n",
            _writable_ids(frame, "query_id"),
            _writable_ids(frame, "doc_id"),
            [int(v) for v in labels],
        ),
    )


def write_run(run: pd.DataFrame, path: str | os.PathLike, tag: str = "relimpute") -> None:
    """Write a run as ``qid Q0 docno rank score tag`` lines, ranked as trec_eval ranks.

    Scores are written with ``repr`` (shortest round-tripping form), so reading
    the file back gives the same floats and the same order.
    """
    if not tag or _ASCII_SPACE.search(tag):
        raise ValueError(f"tag {tag!r} is empty or contains whitespace")
    frame = sort_trec(_normalise_frame(run, RUN_COLUMNS, None))
    rank = (frame.groupby("query_id", sort=False).cumcount() + 1).tolist()
    atomic_write_text(
        path,
        _lines(
            "{} Q0 {} {} {!r} " + tag + "\n",
            _writable_ids(frame, "query_id"),
            _writable_ids(frame, "doc_id"),
            rank,
            _finite(frame, "score"),
        ),
    )


def write_prob_qrels(estimate: pd.DataFrame, path: str | os.PathLike | TextIO) -> None:
    """Write probabilistic qrels: a ``query_id<TAB>doc_id<TAB>probability`` header, then
    one tab-separated line per document (p written with ``repr``, so it round-trips exactly);
    the frame's ``p_ge_<grade>`` columns (:data:`GRADE_COLUMN`) follow, header and values.
    The text is written in chunks of rows as it is made (millions of rows never sit in
    memory as one string); ``path`` may be an open text stream (``sys.stdout``)."""
    frame = _normalise_frame(estimate, PROB_QRELS_COLUMNS, None)
    names = PROB_QRELS_COLUMNS + tuple(c for c in frame.columns if GRADE_COLUMN.fullmatch(str(c)))
    values = [_finite_array(frame, c) for c in names[2:]]
    line = "{}\t{}" + "\t{!r}" * (len(names) - 2) + "\n"

    def chunks():  # ids are made strings (and checked) a chunk at a time too
        yield "\t".join(names) + "\n"
        for lo in range(0, len(frame), _ROWS_PER_CHUNK):
            part = frame.iloc[lo : lo + _ROWS_PER_CHUNK]
            yield _lines(
                line,
                _writable_ids(part, "query_id", first_row=lo),
                _writable_ids(part, "doc_id", first_row=lo),
                *(v[lo : lo + _ROWS_PER_CHUNK].tolist() for v in values),
            )

    if hasattr(path, "write"):
        for chunk in chunks():
            path.write(chunk)
        return
    atomic_write_chunks(path, chunks())


#: rows of text :func:`write_prob_qrels` makes at a time
_ROWS_PER_CHUNK = 1 << 16


def write_sampled_qrels(sample: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write stratified sampled qrels as ``topic 0 docno stratum rel`` lines (the five columns
    ``sample_eval.pl`` and :func:`relimpute.io.read_sampled_qrels` read; ``rel`` -1: in the
    stratum's population, not sampled)."""
    labels = [int(v) for v in _finite(sample, "relevance")]
    atomic_write_text(path, _lines(
        "{} 0 {} {} {}\n", _writable_ids(sample, "query_id"), _writable_ids(sample, "doc_id"),
        [int(v) for v in _finite(sample, "stratum")], labels,
    ))  # fmt: skip


def write_inclusion_qrels(sample: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write qrels with inclusion probabilities: the header ``query_id doc_id relevance
    inclusion_probability``, then one line per document (π with ``repr``: it round-trips),
    as :func:`relimpute.io.read_inclusion_qrels` reads them."""
    from .qrels import INCLUSION_QRELS_COLUMNS

    pi = _finite(sample, "inclusion")
    if any(not 0 < v <= 1 for v in pi):
        raise ValueError("inclusion probabilities must lie in (0, 1]")
    atomic_write_text(path, " ".join(INCLUSION_QRELS_COLUMNS) + "\n" + _lines(
        "{} {} {} {!r}\n", _writable_ids(sample, "query_id"), _writable_ids(sample, "doc_id"),
        [int(v) for v in _finite(sample, "relevance")], pi,
    ))  # fmt: skip
