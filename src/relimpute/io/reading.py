"""The readers of :mod:`relimpute.io` (runs, qrels, probabilistic qrels, run folders).

:mod:`relimpute.io` is the public face of reading and writing; the library's own modules
import from here, :mod:`._parsing` and :mod:`._writing`, below it.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from .parsing import (
    GRADE_COLUMN,
    PROB_QRELS_COLUMNS,
    QRELS_COLUMNS,
    RUN_COLUMNS,
    _FRAME,
    COLUMN_ALIASES,
    _check_policy,
    check_grades,
    first_repeat,
    _frame_ids,
    _keep_mask,
    _normalise_frame,
    _parse_fields,
    _read_bytes,
    _table,
    _to_float,
    _to_int,
    as_string_array,
)
from .inclusion_qrels import first_line, is_inclusion_qrels, read_inclusion_qrels
from ..errors import InputError

#: Labels allowed in qrels by default. -1 marks a pooled-but-unjudged document;
#: -2 is the TREC Web track's "junk" grade (judged, nonrelevant).
DEFAULT_GRADE_RANGE = (-2, 10)

DUPLICATE_POLICIES = ("error", "first", "last", "max")


# --------------------------------------------------------------------------- runs


def read_run(
    source: str | os.PathLike | pd.DataFrame,
    *,
    duplicates: str = "error",
    columns: Mapping[str, str] | None = None,
    keep_rank: bool = False,
) -> pd.DataFrame:
    """Read one TREC run (``qid Q0 docno rank score tag``) or a run DataFrame.

    Parameters
    ----------
    source
        A path (plain or gzip) or a DataFrame with ``query_id, doc_id, score``.
    duplicates
        ``"error"``, ``"first"`` or ``"last"``: what to do with a document that
        appears twice in one topic (see the module docstring).
    columns
        Extra ``{their_name: ir_measures_name}`` renames for DataFrames.
    keep_rank
        Keep (and validate as integers) the rank column, to order by rank
        instead of score.

    Returns
    -------
    DataFrame with ``query_id, doc_id, score`` (plus ``rank`` when
    ``keep_rank``, and ``run``, the tag, for files, as a categorical: stored once, not per
    line). Row order is the file's.
    """
    _check_policy(duplicates, ("error", "first", "last"))
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        out, lines = read_run_columns(source, keep_rank=keep_rank)
        out["run"] = out["run"].dictionary_encode()  # one tag per file: stored once, not per line
    else:
        name = _FRAME
        frame = _normalise_frame(source, RUN_COLUMNS, columns)
        lines = np.arange(1, len(frame) + 1)
        query, doc = _frame_ids(frame, lines)
        out = {"query_id": query, "doc_id": doc}
        out["score"] = _to_float(frame["score"], "score", name, lines)
        if keep_rank and "rank" not in frame:
            raise InputError("keep_rank needs a 'rank' column", name)
        if keep_rank:
            out["rank"] = _to_int(frame["rank"], "rank", name, lines)
        if "run" in frame:
            out["run"] = as_string_array(frame["run"]).dictionary_encode()
    query, doc, score = out["query_id"], out["doc_id"], out["score"]
    keep_rows = _keep_mask(
        query, doc, score, duplicates, name, lines, "document in run", "score", False
    )
    return _table(out, keep_rows)


def read_run_columns(
    path: str | os.PathLike, *, keep_rank: bool = False
) -> tuple[dict[str, pa.Array | np.ndarray], np.ndarray]:
    """The columns of one run file, checked as :func:`read_run` checks them but for duplicates.

    Returns ``{"query_id", "doc_id", "score"[, "rank"], "run"}`` (ids and tags as
    pyarrow strings, numbers as numpy arrays) and each row's line number.
    :meth:`Campaign.from_files <relimpute.data.Campaign.from_files>` reads runs
    with it and finds duplicates while it aligns the documents.
    """
    name = str(path)
    keep = [0, 2, 3, 4, 5] if keep_rank else [0, 2, 4, 5]
    fields, lines = _parse_fields(_read_bytes(path), 6, keep, name, "qid Q0 docno rank score tag")
    out = {"query_id": fields[0], "doc_id": fields[1]}
    out["score"] = _to_float(fields[-2], "score", name, lines)
    if keep_rank:
        out["rank"] = _to_int(fields[2], "rank", name, lines)
    out["run"] = fields[-1]
    return out, lines


def read_runs(
    sources: str | os.PathLike | Iterable[str | os.PathLike] | Mapping[str, pd.DataFrame],
    **kwargs,
) -> dict[str, pd.DataFrame]:
    """Read several runs: a directory, a list of paths (and directories), or ``{name: DataFrame}``.

    Run names are the file names without ``.gz``/``.txt``/``.run``/``.trec``
    (the tag column is kept as ``run`` but not used as the name, so two files
    with one tag stay apart). Hidden files in directories are skipped, and
    so are files that are not runs (:data:`NOT_RUN_FILES`: a README, ``*.md``,
    ``*.json``, ..., named in a warning). Keyword arguments go to :func:`read_run`.
    """
    if isinstance(sources, Mapping):
        return {str(k): read_run(v, **kwargs) for k, v in sources.items()}
    return {name: read_run(path, **kwargs) for name, path in run_files(sources)}


#: Files in a run directory that are not runs (skipped, with a note): a README, a licence,
#: notes and tables by their suffix. A run file named on the command line is always read.
NOT_RUN_FILES = re.compile(
    r"^(readme|license|licence|notice|changelog|changes|authors)([._-].*)?$"
    r"|\.(md|markdown|rst|html?|pdf|json|jsonl|ya?ml|toml|ini|cfg|tsv|csv|py|sh|ipynb)$",
    re.IGNORECASE,
)


def run_files(
    sources: str | os.PathLike | Iterable[str | os.PathLike], skipped: list[Path] | None = None
) -> list[tuple[str, Path]]:
    """``(run name, path)`` of every run file among ``sources`` (files and directories), in
    :func:`read_runs`'s order; two files with one name are an error.

    Files of a directory that :data:`NOT_RUN_FILES` matches (``README.md``, ``notes.json``,
    ...) are left out: appended to ``skipped`` when a list is given, else named in a warning.
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    sources = list(sources)
    paths: list[Path] = []
    left_out: list[Path] = []
    for item in map(Path, sources):
        if item.is_dir():
            for path in _run_files(item):
                (left_out if NOT_RUN_FILES.search(path.name) else paths).append(path)
        else:
            paths.append(item)
    if skipped is not None:
        skipped.extend(left_out)
    elif left_out:
        warnings.warn(skipped_note(left_out), stacklevel=2)
    if not paths:
        raise InputError("no run files found", ", ".join(map(str, sources)) or "<none>")
    named: dict[str, Path] = {}
    for path in paths:
        name = run_name(path)
        if name in named:
            raise InputError(f"two run files are both named {name!r}", str(path))
        named[name] = path
    return list(named.items())


def skipped_note(paths: list[Path]) -> str:
    """The note naming the files of run directories that were not read as runs."""
    names = ", ".join(str(p) for p in paths[:5]) + (", ..." if len(paths) > 5 else "")
    return f"{len(paths)} file(s) in the run directories are not runs and were skipped ({names})"


def _run_files(directory: Path) -> list[Path]:
    """The visible files of a run directory, sorted; a broken link or unreadable directory is
    an error."""
    try:
        entries = sorted(p for p in directory.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        reason = exc.strerror or exc
        raise InputError(f"cannot list run directory: {reason}", str(directory)) from exc
    for entry in entries:
        if entry.is_symlink() and not entry.exists():
            raise InputError(
                f"broken symbolic link to {os.readlink(entry)!r} in a run directory", str(entry)
            )
    return [p for p in entries if p.is_file()]


def run_name(path: str | os.PathLike) -> str:
    """The name of a run file: its file name without ``.gz``/``.txt``/``.run``/``.trec``."""
    name = Path(path).name
    for suffix in (".gz", ".txt", ".run", ".trec"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


# --------------------------------------------------------------------------- qrels


def _id_value_columns(source, n_fields, picks, layout, names, columns):
    """``(source name, query ids, doc ids, raw values, line numbers)`` of a file or DataFrame.

    For the readers whose tables are ids plus one value column (qrels and
    probabilistic qrels): a file is split into ``n_fields`` fields of which
    ``picks`` are kept; a DataFrame is renamed to ``names``.
    """
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        fields, lines = _parse_fields(_read_bytes(source), n_fields, picks, name, layout)
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
    _check_policy(duplicates, DUPLICATE_POLICIES)
    name, query, doc, labels, lines = _id_value_columns(
        source, 4, [0, 2, 3], "qid iter docno rel", QRELS_COLUMNS, columns
    )
    relevance = _to_int(labels, "relevance", name, lines)
    low, high = grade_range
    check_grades(relevance, low, high, name, lines,
                 f"the allowed range [{low}, {high}] (set grade_range to allow it)")
    keep = _keep_mask(query, doc, relevance, duplicates, name, lines, "judgment", "relevance", True)
    return _table({"query_id": query, "doc_id": doc, "relevance": relevance}, keep)


#: The five columns of a sampled qrels file (``sample_eval.pl``'s input).
SAMPLED_QRELS_LAYOUT = "topic iter docno stratum rel"


def is_sampled_qrels(source) -> bool:
    """Whether a qrels file's first line has the five columns of sampled qrels.

    Reads the first few kilobytes only (inflating a gzip file as far as that),
    so that every command can tell the two forms apart without reading twice.
    """
    if not isinstance(source, (str, os.PathLike)) or str(source).startswith("irds:"):
        return False
    line = first_line(source)
    return line is not None and len(line.split()) == 5


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
        _read_bytes(source), 5, [0, 2, 3, 4], name, SAMPLED_QRELS_LAYOUT
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


def read_any_qrels(source, *, duplicates: str = "error"):
    """``(qrels, sample, notes)``: qrels of either form, the sampled table or None, and notes.

    Sampled qrels (five columns, :func:`read_sampled_qrels`) give qrels in
    which a not-sampled document (``-1``) stays in the pool, unjudged; the notes
    are the reader's warnings (issued again), for the campaign to keep. Qrels with inclusion
    probabilities (:func:`read_inclusion_qrels`) give the sample with its ``inclusion`` column.
    """
    if is_inclusion_qrels(source):
        sample = read_inclusion_qrels(source)
        return sample[["query_id", "doc_id", "relevance"]], sample, []
    if not is_sampled_qrels(source):
        return read_qrels(source, duplicates=duplicates), None, []
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
        data = _read_bytes(source)
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
