"""Qrels in every form: TREC qrels (:func:`read_qrels`), sampled qrels with strata
(:func:`read_sampled_qrels`, ``sample_eval.pl``'s input), qrels with inclusion probabilities
(:func:`read_inclusion_qrels`, statAP's form), probabilistic qrels (:func:`read_prob_qrels`),
and :func:`read_any_qrels`, which tells the first three apart by the file's first line.

The inclusion form has a header line naming its four columns, ``query_id doc_id relevance
inclusion_probability`` (``qid``/``topic``, ``docno``, ``rel`` and ``inclusion``/``pi`` work
too), so it is never mistaken for four-column TREC qrels or five-column stratified qrels (whose
first line holds data). Each row is a document of the topic's universe,
``inclusion_probability`` its chance π of being sampled, in (0, 1]; ``relevance`` its grade, or
``-1`` when it was not sampled.
"""

from __future__ import annotations

import gzip
import os
import warnings
import zlib
from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from ..errors import InputError
from .parsing import (
    _FRAME,
    COLUMN_ALIASES,
    GRADE_COLUMN,
    PROB_QRELS_COLUMNS,
    QRELS_COLUMNS,
    _check_policy,
    _frame_ids,
    _keep_mask,
    _normalise_frame,
    _parse_fields,
    read_bytes,
    _table,
    _to_float,
    _to_int,
    check_grades,
    first_repeat,
    kept_columns,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded for DataFrames only: reading files needs none
    import pandas as pd

#: Labels allowed in qrels by default. -1 marks a pooled-but-unjudged document;
#: -2 is the TREC Web track's "junk" grade (judged, nonrelevant).
DEFAULT_GRADE_RANGE = (-2, 10)

DUPLICATE_POLICIES = ("error", "first", "last", "max")

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


def qrels_form(source) -> str:
    """``"inclusion"`` (the header line of :func:`read_inclusion_qrels`), ``"sampled"`` (five
    columns, :func:`read_sampled_qrels`) or ``"trec"``: the form of a qrels file by its first
    line, read once; a DataFrame, ``irds:`` qrels or what is not a readable file is ``"trec"``
    (whose reader names the problem)."""
    if not isinstance(source, (str, os.PathLike)):
        return "trec"
    line = first_line(source)
    if line is None:
        return "trec"
    if _header(line):
        return "inclusion"
    if len(line.split()) == 5 and not str(source).startswith("irds:"):
        return "sampled"
    return "trec"


def is_inclusion_qrels(source) -> bool:
    """Whether a qrels file starts with the header line of :func:`read_inclusion_qrels`."""
    return qrels_form(source) == "inclusion"


def read_inclusion_qrels(source: str | os.PathLike, *, grade_range: tuple[int, int] = (-2, 10)
                         ) -> pd.DataFrame:
    """Read sampled qrels with inclusion probabilities (statAP's form, ``docs/sampled.md``).

    Returns ``query_id, doc_id, relevance, inclusion``. A missing header, a probability
    outside (0, 1], a grade outside ``grade_range`` (``-1``: not sampled) or a document listed
    twice in a topic is an error naming the file and line.
    """
    name = str(source)
    rows = read_bytes(source).split(b"\n")
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


def _id_value_columns(source, n_fields, picks, layout, names, columns):
    """``(source name, query ids, doc ids, raw values, line numbers)`` of a file or DataFrame.

    For the readers whose tables are ids plus one value column (qrels and
    probabilistic qrels): a file is split into ``n_fields`` fields of which
    ``picks`` are kept; a DataFrame is renamed to ``names``.
    """
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        fields, lines = _parse_fields(read_bytes(source), n_fields, picks, name, layout)
        query, doc, values = fields
        return name, query, doc, values, lines
    frame = _normalise_frame(source, names, columns)
    lines = np.arange(1, len(frame) + 1)
    query, doc = _frame_ids(frame, lines)
    return _FRAME, query, doc, frame[names[2]], lines


def read_qrels(
    source: str | os.PathLike | pd.DataFrame,
    *,
    duplicates: str = "error",
    columns: Mapping[str, str] | None = None,
    grade_range: tuple[int, int] = DEFAULT_GRADE_RANGE,
) -> pd.DataFrame:
    """Read TREC qrels (``qid iter docno rel``) or a qrels DataFrame.

    Labels must be integers within ``grade_range`` (inclusive). ``-1`` marks a
    pooled-but-unjudged document and is kept in the table; the data model
    treats it as unjudged. ``duplicates`` is ``"error"`` (conflicting labels;
    identical repeats are merged), ``"first"``, ``"last"`` or ``"max"``.
    """
    return _table(read_qrels_columns(source, duplicates=duplicates, columns=columns,
                                     grade_range=grade_range), None)  # fmt: skip


def read_qrels_columns(
    source: str | os.PathLike | pd.DataFrame,
    *,
    duplicates: str = "error",
    columns: Mapping[str, str] | None = None,
    grade_range: tuple[int, int] = DEFAULT_GRADE_RANGE,
) -> dict[str, pa.Array | np.ndarray]:
    """The columns of :func:`read_qrels`'s table, checked as it checks them, without pandas:
    ``query_id`` and ``doc_id`` as pyarrow strings, ``relevance`` as int64."""
    _check_policy(duplicates, DUPLICATE_POLICIES)
    name, query, doc, labels, lines = _id_value_columns(
        source, 4, [0, 2, 3], "qid iter docno rel", QRELS_COLUMNS, columns
    )
    relevance = _to_int(labels, "relevance", name, lines)
    low, high = grade_range
    check_grades(relevance, low, high, name, lines,
                 f"the allowed range [{low}, {high}] (set grade_range to allow it)")
    keep = _keep_mask(query, doc, relevance, duplicates, name, lines, "judgment", "relevance", True)
    return kept_columns({"query_id": query, "doc_id": doc, "relevance": relevance}, keep)


#: The five columns of a sampled qrels file (``sample_eval.pl``'s input).
SAMPLED_QRELS_LAYOUT = "topic iter docno stratum rel"


def is_sampled_qrels(source) -> bool:
    """Whether a qrels file's first line has the five columns of sampled qrels.

    Reads the first few kilobytes only (inflating a gzip file as far as that),
    so that every command can tell the two forms apart without reading twice.
    """
    return qrels_form(source) == "sampled"


def read_sampled_qrels(
    source: str | os.PathLike,
    *,
    grade_range: tuple[int, int] = DEFAULT_GRADE_RANGE,
) -> pd.DataFrame:
    """Read sampled qrels: ``topic iter docno stratum rel``, as NIST's ``sample_eval.pl`` does.

    Each line puts a pooled document in a stratum (an integer) of its topic;
    ``rel`` is its grade when the document was sampled and judged, ``-1`` when
    it is in the stratum's population but was not sampled (Yilmaz, Kanoulas &
    Aslam, SIGIR 2008). Returns ``query_id, doc_id, stratum, relevance``.
    A document twice in one topic is an error naming both lines, and so is a
    file mixing four- and five-column lines; a stratum none of whose documents
    was judged is named in a warning (it adds nothing to the estimated R).
    """
    name = str(source)
    (query, doc, stratum, labels), lines = _parse_fields(
        read_bytes(source), 5, [0, 2, 3, 4], name, SAMPLED_QRELS_LAYOUT
    )
    stratum = _to_int(stratum, "stratum", name, lines)
    relevance = _to_int(labels, "relevance", name, lines)
    low, high = max(grade_range[0], -1), grade_range[1]
    check_grades(relevance, low, high, name, lines, f"[{low}, {high}] (-1: not sampled)")
    repeat = first_repeat(query, doc)
    if repeat is not None:
        row, first = repeat
        raise InputError(
            f"topic {query[row].as_py()!r}, document {doc[row].as_py()!r} is listed twice "
            f"(stratum {stratum[first]} on line {int(lines[first])}, stratum {stratum[row]} here)",
            name,
            int(lines[row]),
        )
    table = _table(
        {"query_id": query, "doc_id": doc, "stratum": stratum, "relevance": relevance}, None
    )
    judged = table.assign(judged=table["relevance"] >= 0).groupby(
        ["query_id", "stratum"], sort=True
    )["judged"].any()
    if not judged.all():
        empty = ", ".join(f"topic {q} stratum {h}" for q, h in judged.index[~judged.to_numpy()][:5])
        warnings.warn(
            f"{name}: no document of {empty} was judged: the stratum adds nothing to the "
            "estimated number of relevant documents (as sample_eval.pl)",
            stacklevel=2,
        )
    return table


def read_any_qrels(source, *, duplicates: str = "error", frame: bool = True):
    """``(qrels, sample, notes)``: qrels of either form, the sampled table or None, and notes.

    With ``frame=False`` plain qrels come as :func:`read_qrels_columns` returns them (no pandas).

    Sampled qrels (five columns, :func:`read_sampled_qrels`) give qrels in
    which a not-sampled document (``-1``) stays in the pool, unjudged; the notes
    are the reader's warnings (issued again), for the campaign to keep. Qrels with inclusion
    probabilities (:func:`read_inclusion_qrels`) give the sample with its ``inclusion`` column.
    """
    form = qrels_form(source)
    if form == "inclusion":
        sample = read_inclusion_qrels(source)
        return sample[["query_id", "doc_id", "relevance"]], sample, []
    if form == "trec":
        read = read_qrels if frame else read_qrels_columns
        return read(source, duplicates=duplicates), None, []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sample = read_sampled_qrels(source)
    notes = [str(w.message) for w in caught]
    for note in notes:
        warnings.warn(note, stacklevel=3)
    return sample[["query_id", "doc_id", "relevance"]], sample, notes


def _without_header(data: bytes, names: tuple[str, ...], source: str) -> tuple[bytes, int]:
    """``data`` without a first line that names the columns, and how many lines were dropped."""
    first, _, rest = data.partition(b"\n")
    fields = [f.decode("utf-8", "replace").lower() for f in first.split()]
    if [COLUMN_ALIASES.get(f, f) for f in fields] != list(names):
        return data, 0
    if not rest.strip():
        raise InputError("no rows after the header line", source)
    return rest, 1


def read_prob_qrels(
    source: str | os.PathLike | pd.DataFrame,
    *,
    duplicates: str = "error",
    columns: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Read probabilistic qrels (the format :func:`write_prob_qrels` writes, or a DataFrame).

    A file has three fields per line, query id, document id and probability,
    separated by tabs or spaces, under an optional header line naming them
    (``query_id doc_id probability``, or aliases such as ``qid docno p``).
    A header may name more columns, ``p_ge_<grade>`` (:data:`GRADE_COLUMN`), each
    P(grade ≥ grade) of a model of graded relevance (``docs/math/fusion.md``); they
    must not increase with the grade. Probabilities must be finite and within
    [0, 1]; ``duplicates`` as for :func:`read_qrels`.
    """
    _check_policy(duplicates, DUPLICATE_POLICIES)
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        data = read_bytes(source)
        names = PROB_QRELS_COLUMNS + _grade_header(data)
        data, skipped = _without_header(data, names, name)
        (query, doc, values, *graded), lines = _parse_fields(
            data, len(names), list(range(len(names))), name, " ".join(names), first_line=1 + skipped
        )
    else:
        name, query, doc, values, lines = _id_value_columns(
            source, 3, [0, 1, 2], "qid docno p", PROB_QRELS_COLUMNS, columns
        )
        names = PROB_QRELS_COLUMNS + tuple(c for c in source.columns if GRADE_COLUMN.fullmatch(str(c)))
        graded = [source[c].reset_index(drop=True) for c in names[3:]]
    probability = _probability_column(values, "probability", name, lines)
    table = {"query_id": query, "doc_id": doc, "probability": probability}
    table.update({c: _probability_column(v, c, name, lines) for c, v in zip(names[3:], graded)})
    _check_grade_order(table, names[3:], name, lines)
    keep = _keep_mask(
        query, doc, probability, duplicates, name, lines, "probability", "probability", True
    )
    return _table(table, keep)


def _probability_column(values, what: str, name: str, lines: np.ndarray) -> np.ndarray:
    """Finite numbers within [0, 1], else an error naming the line."""
    probability = _to_float(values, what, name, lines)
    outside = (probability < 0) | (probability > 1)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise InputError(f"{what} {float(probability[i])!r} is outside [0, 1]", name, int(lines[i]))
    return probability


def _grade_header(data: bytes) -> tuple[str, ...]:
    """The ``p_ge_<grade>`` columns a header line names after the three of probabilistic qrels."""
    fields = [f.decode("utf-8", "replace").lower() for f in data.partition(b"\n")[0].split()]
    extra = fields[3:]
    if extra and all(GRADE_COLUMN.fullmatch(f) for f in extra):
        return tuple(extra)
    return ()


def _check_grade_order(table: dict, graded: tuple[str, ...], name: str, lines: np.ndarray) -> None:
    """P(grade ≥ g) must not increase with g, nor repeat a grade."""
    grades = [int(GRADE_COLUMN.fullmatch(c).group(1)) for c in graded]
    if len(set(grades)) != len(grades):
        raise InputError(f"a grade column is repeated in {list(graded)}", name)
    order = sorted(zip(grades, graded))
    for (_, low), (_, high) in zip(order, order[1:]):
        bad = table[high] > table[low]
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"{high} {float(table[high][i])!r} exceeds {low} {float(table[low][i])!r}: "
                "P(grade >= g) cannot grow with g", name, int(lines[i]),
            )  # fmt: skip


# --------------------------------------------------------------------------- writing
