"""Qrels in every form: TREC qrels (:func:`read_qrels`), sampled qrels with strata
(:func:`read_sampled_qrels`, ``sample_eval.pl``'s input), qrels with inclusion probabilities
(:func:`read_inclusion_qrels`, statAP's form), probabilistic qrels (:func:`read_prob_qrels`),
and :func:`qrels_forms`, the first three in the order a file's first line tells them apart
(:func:`relimpute.io.campaign.read_judgments` reads qrels of any of them).

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
import zlib
from collections.abc import Mapping
from dataclasses import replace

from .._files import read_bytes
from .fields import Checks, Number
from .parsing import Layout, checked_fields, kind_of, read_checked
from .trec import GRADE_COLUMN, PROB_QRELS_COLUMNS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded for DataFrames only: reading files needs none
    import numpy as np
    import pandas as pd
    import pyarrow as pa

#: Labels allowed in qrels by default. -1 marks a pooled-but-unjudged document;
#: -2 is the TREC Web track's "junk" grade (judged, nonrelevant).
DEFAULT_GRADE_RANGE = (-2, 10)

DUPLICATE_POLICIES = ("error", "first", "last", "max")

#: The header line of the form, and the spellings its last column may take.
INCLUSION_QRELS_COLUMNS = ("query_id", "doc_id", "relevance", "inclusion_probability")
INCLUSION_FILE = Layout(INCLUSION_QRELS_COLUMNS, " ".join(INCLUSION_QRELS_COLUMNS),
                        header="required", aliases={"inclusion": "inclusion_probability",
                                                    "pi": "inclusion_probability"})  # fmt: skip
QRELS_FILE = Layout(("query_id", None, "doc_id", "relevance"), "qid iter docno rel")
#: The five columns of a sampled qrels file (``sample_eval.pl``'s input).
SAMPLED_QRELS_LAYOUT = "topic iter docno stratum rel"
SAMPLED_FILE = Layout(("query_id", None, "doc_id", "stratum", "relevance"), SAMPLED_QRELS_LAYOUT)
#: Probabilistic qrels: a header line is optional, and may name ``p_ge_<grade>`` columns too
PROB_QRELS_FILE = Layout(
    PROB_QRELS_COLUMNS, "qid docno p", header="optional", extra=GRADE_COLUMN,
    checks=Checks(every=Number("probability", bounds=(0, 1), outside="[0, 1]"), graded=True,
                  policies=DUPLICATE_POLICIES, value="probability", what="probability",
                  merge_identical=True),
)  # fmt: skip


def _qrels(grade_range: tuple[int, int], frame: bool) -> Layout:
    """TREC qrels as :func:`read_qrels_columns` (``frame``: :func:`read_qrels`) checks them."""
    low, high = grade_range
    relevance = Number("relevance", integer=True, bounds=(low, high), outside=f"the allowed "
                       f"range [{low}, {high}] (set grade_range to allow it)")  # fmt: skip
    return replace(QRELS_FILE, checks=Checks((relevance,), policies=DUPLICATE_POLICIES,
                   value="relevance", what="judgment", merge_identical=True, frame=frame))


def _sampled_relevance(grade_range: tuple[int, int], lowest: int) -> Number:
    """The grade of a sampled document, ``-1`` when it was not sampled."""
    low, high = max(grade_range[0], lowest), grade_range[1]
    return Number("relevance", integer=True, bounds=(low, high),
                  outside=f"[{low}, {high}] (-1: not sampled)")  # fmt: skip


def _inclusion(grade_range: tuple[int, int]) -> Layout:
    """Qrels with inclusion probabilities as :func:`read_inclusion_qrels` checks them."""
    inclusion = Number("inclusion_probability", what="inclusion probability", bounds=(0, 1),
                       open_low=True, outside="(0, 1]", name="inclusion")  # fmt: skip
    return replace(INCLUSION_FILE, checks=Checks(
        (_sampled_relevance(grade_range, -2), inclusion), frame=True,
        listed_twice="topic {query!r}, document {doc!r} is listed twice (also on line {line})"))


def _sampled(grade_range: tuple[int, int]) -> Layout:
    """Sampled qrels as :func:`read_sampled_qrels` checks them."""
    return replace(SAMPLED_FILE, checks=Checks(
        (Number("stratum", integer=True), _sampled_relevance(grade_range, -1)), frame=True,
        strata=True,
        listed_twice="topic {query!r}, document {doc!r} is listed twice (stratum "
        "{first[stratum]} on line {line}, stratum {here[stratum]} here)"))


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
    if not isinstance(source, (str, os.PathLike)) or str(source).startswith("irds:"):
        return "trec"
    line = first_line(source)
    return "trec" if line is None else _form(line)


def _form(line: bytes) -> str:
    """The form of qrels whose first non-blank line is ``line`` (:func:`qrels_form`)."""
    return kind_of(line, qrels_forms(DEFAULT_GRADE_RANGE, frame=True)) or "trec"


def qrels_forms(grade_range: tuple[int, int], frame: bool) -> dict[str, Layout]:
    """The three forms of qrels, in the order a first line is tried on them (the last, TREC
    qrels, taken when none fits); ``frame``: plain qrels as a DataFrame, not columns."""
    return {"inclusion": _inclusion(grade_range), "sampled": _sampled(grade_range),
            "trec": _qrels(grade_range, frame)}  # fmt: skip


def is_inclusion_qrels(source) -> bool:
    """Whether a qrels file starts with the header line of :func:`read_inclusion_qrels`."""
    return qrels_form(source) == "inclusion"


def read_inclusion_qrels(source: str | os.PathLike, *, grade_range: tuple[int, int] = (-2, 10),
                         data: bytes | None = None) -> pd.DataFrame:  # fmt: skip
    """Read sampled qrels with inclusion probabilities (statAP's form, ``docs/sampled.md``).

    Returns ``query_id, doc_id, relevance, inclusion``. A missing header, a probability
    outside (0, 1], a grade outside ``grade_range`` (``-1``: not sampled) or a document listed
    twice in a topic is an error naming the file and line. ``data``: the file's bytes, when
    read already.
    """
    return read_checked(source, {"inclusion": _inclusion(grade_range)}, data=data)[1]


def read_qrels(
    source: str | os.PathLike | pd.DataFrame,
    *,
    duplicates: str = "error",
    columns: Mapping[str, str] | None = None,
    grade_range: tuple[int, int] = DEFAULT_GRADE_RANGE,
    data: bytes | None = None,
) -> pd.DataFrame:
    """Read TREC qrels (``qid iter docno rel``) or a qrels DataFrame.

    Labels must be integers within ``grade_range`` (inclusive). ``-1`` marks a
    pooled-but-unjudged document and is kept in the table; the data model
    treats it as unjudged. ``duplicates`` is ``"error"`` (conflicting labels;
    identical repeats are merged), ``"first"``, ``"last"`` or ``"max"``; ``data``: the
    file's bytes, when read already.
    """
    qrels = {"trec": _qrels(grade_range, frame=True)}
    return read_checked(source, qrels, duplicates=duplicates, columns=columns, data=data)[1]


def read_qrels_columns(source, **options) -> tuple[dict[str, pa.Array | np.ndarray], np.ndarray]:
    """The columns of :func:`read_qrels`'s table, checked as it checks them, without pandas:
    ``query_id`` and ``doc_id`` as pyarrow strings, ``relevance`` as int64; and each row's line.
    ``options``: :func:`read_qrels`'s keywords (``duplicates``, ``columns``, ``grade_range``,
    ``data``)."""
    qrels = {"trec": _qrels(options.pop("grade_range", DEFAULT_GRADE_RANGE), frame=False)}
    return read_checked(source, qrels, **options)[1:]


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
    data: bytes | None = None,
) -> pd.DataFrame:
    """Read sampled qrels: ``topic iter docno stratum rel``, as NIST's ``sample_eval.pl`` does.

    Each line puts a pooled document in a stratum (an integer) of its topic;
    ``rel`` is its grade when the document was sampled and judged, ``-1`` when
    it is in the stratum's population but was not sampled (Yilmaz, Kanoulas &
    Aslam, SIGIR 2008). Returns ``query_id, doc_id, stratum, relevance``.
    A document twice in one topic is an error naming both lines, and so is a
    file mixing four- and five-column lines; a stratum none of whose documents
    was judged is named in a warning (it adds nothing to the estimated R). ``data``: the
    file's bytes, when read already.
    """
    return read_checked(source, {"sampled": _sampled(grade_range)}, data=data)[1]


def read_label_file(source: str | os.PathLike | pd.DataFrame) -> tuple[str, pd.DataFrame, np.ndarray | None]:
    """``(form, table, lines)`` of a file of automatic labels (:func:`relimpute.labels.read_labels`):
    ``"probability"`` (three fields, or a header line naming those of probabilistic qrels and
    ``p_ge_<grade>`` columns: :func:`read_prob_qrels`) or ``"qrels"`` (four fields:
    :func:`read_qrels`), the table, and each row's line (None for a DataFrame, which has
    ``probability`` or ``relevance`` beside the ids)."""
    if not isinstance(source, (str, os.PathLike)):
        probability = "probability" in source.columns or "p" in source.columns
        read = read_prob_qrels if probability else read_qrels
        return ("probability" if probability else "qrels"), read(source), None
    forms = {"probability": _prob(frame=True), "qrels": _qrels(DEFAULT_GRADE_RANGE, frame=True)}
    return checked_fields(source, read_bytes(source), forms, unknown="a label file has 4 fields "
                          "per line (qrels: qid iter docno label) or 3 (query_id doc_id "
                          "probability); the first line has {fields}")  # fmt: skip


def _prob(frame: bool) -> Layout:
    """Probabilistic qrels as :func:`read_prob_qrels_columns` (``frame``: as
    :func:`read_prob_qrels`) checks them."""
    return replace(PROB_QRELS_FILE, checks=replace(PROB_QRELS_FILE.checks, frame=frame))


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
    read = read_checked(source, {"probability": _prob(frame=True)}, duplicates=duplicates,
                        columns=columns)  # fmt: skip
    return read[1]


def read_prob_qrels_columns(
    source: str | os.PathLike | pd.DataFrame,
    *,
    duplicates: str = "error",
    columns: Mapping[str, str] | None = None,
    data: bytes | None = None,
) -> tuple[dict[str, pa.Array | np.ndarray], np.ndarray]:
    """The columns of :func:`read_prob_qrels`'s table, checked as it checks them, and each
    row's line; ``data``: the file's bytes, when read already."""
    read = read_checked(source, {"probability": PROB_QRELS_FILE}, duplicates=duplicates,
                        columns=columns, data=data)  # fmt: skip
    return read[1:]
