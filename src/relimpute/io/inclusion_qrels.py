"""The reader of qrels with inclusion probabilities (statAP's sampled form), for :mod:`.io`.

A header line names the four columns, ``query_id doc_id relevance inclusion_probability``
(``qid``/``topic``, ``docno``, ``rel`` and ``inclusion``/``pi`` work too), so the form is never
mistaken for four-column TREC qrels or five-column stratified qrels (whose first line holds
data). Each row is a document of the topic's universe, ``inclusion_probability`` its chance π
of being sampled, in (0, 1]; ``relevance`` its grade, or ``-1`` when it was not sampled.
"""

from __future__ import annotations

import gzip
import os
import zlib

import numpy as np
import pandas as pd

from .parsing import (
    COLUMN_ALIASES,
    check_grades,
    first_repeat,
    _parse_fields,
    _read_bytes,
    _table,
    _to_float,
    _to_int,
)
from ..errors import InputError

#: The header line of the form, and the spellings its last column may take.
INCLUSION_QRELS_COLUMNS = ("query_id", "doc_id", "relevance", "inclusion_probability")
INCLUSION_NAMES = ("inclusion_probability", "inclusion", "pi")


def _header(line: bytes) -> bool:
    fields = [f.decode("utf-8", "replace").lower() for f in line.split()]
    if len(fields) != 4 or fields[3] not in INCLUSION_NAMES:
        return False
    return [COLUMN_ALIASES.get(f, f) for f in fields[:3]] == list(INCLUSION_QRELS_COLUMNS[:3])


def first_line(source) -> bytes | None:
    """The first non-blank line of a qrels file (reading a few kilobytes, inflating a gzip file
    as far as that), or None for what is not a readable regular file (the full reader names
    the problem; a FIFO or device is read once, by the full reader)."""
    try:
        if not os.path.isfile(source):
            return None
        with open(source, "rb") as handle:
            head = handle.read(2)
            handle.seek(0)
            stream = gzip.GzipFile(fileobj=handle) if head == b"\x1f\x8b" else handle
            start = stream.read(65536)
    except (OSError, EOFError, zlib.error):
        return None
    return next((line for line in start.replace(b"\r", b"\n").split(b"\n") if line.split()), b"")


def is_inclusion_qrels(source) -> bool:
    """Whether a qrels file starts with the header line of :func:`read_inclusion_qrels`."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    line = first_line(source)
    return line is not None and _header(line)


def read_inclusion_qrels(source: str | os.PathLike, *, grade_range: tuple[int, int] = (-2, 10)
                         ) -> pd.DataFrame:
    """Read sampled qrels with inclusion probabilities (statAP's form, ``docs/sampled.md``).

    Returns ``query_id, doc_id, relevance, inclusion``. A missing header, a probability
    outside (0, 1], a grade outside ``grade_range`` (``-1``: not sampled) or a document listed
    twice in a topic is an error naming the file and line.
    """
    name = str(source)
    rows = _read_bytes(source).split(b"\n")
    skip = next((i for i, line in enumerate(rows) if line.strip()), 0)
    if not _header(rows[skip]):
        raise InputError("expected a header line 'query_id doc_id relevance "
                         "inclusion_probability'", name, skip + 1)
    rest = b"\n".join(rows[skip + 1:])
    if not rest.strip():
        raise InputError("no rows after the header line", name)
    (query, doc, labels, values), lines = _parse_fields(
        rest, 4, [0, 1, 2, 3], name, " ".join(INCLUSION_QRELS_COLUMNS), first_line=skip + 2
    )
    relevance = _to_int(labels, "relevance", name, lines)
    low, high = max(grade_range[0], -2), grade_range[1]
    check_grades(relevance, low, high, name, lines, f"[{low}, {high}] (-1: not sampled)")
    inclusion = _to_float(values, "inclusion probability", name, lines)
    bad = ~((inclusion > 0) & (inclusion <= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"inclusion probability {float(inclusion[i])!r} is outside (0, 1]",
                         name, int(lines[i]))
    repeat = first_repeat(query, doc)
    if repeat is not None:
        row, first = repeat
        raise InputError(f"topic {query[row].as_py()!r}, document {doc[row].as_py()!r} is "
                         f"listed twice (also on line {int(lines[first])})", name, int(lines[row]))
    return _table({"query_id": query, "doc_id": doc, "relevance": relevance,
                   "inclusion": inclusion}, None)
