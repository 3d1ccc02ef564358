"""Read and write TREC runs, qrels and probabilistic qrels.

Files may be plain or gzip-compressed (detected by content, not name), with
LF or CRLF line endings and an optional UTF-8 byte-order mark. Every problem
is reported as an :class:`~relimpute.errors.InputError` naming the file, the
line and what is wrong. Tables come back with the ir_measures column names:
``query_id, doc_id, score`` for runs and ``query_id, doc_id, relevance`` for
qrels, ids as strings.

Duplicate policy (``duplicates=``), for a document twice in one topic of a
run or a (topic, document) twice in qrels:

``"error"`` (default)
    stop with an error naming both lines.
``"first"`` / ``"last"``
    keep the line that comes first / last in the file.
``"max"`` (qrels only)
    keep the highest relevance label.

Writers write to a temporary file beside the target and rename it into
place, so an interrupted write never leaves a truncated file.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import tempfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import InputError

RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
PROB_QRELS_COLUMNS = ("query_id", "doc_id", "probability")

#: Other common spellings of the ir_measures column names, mapped automatically.
COLUMN_ALIASES = {
    "qid": "query_id",
    "query": "query_id",
    "topic": "query_id",
    "docno": "doc_id",
    "docid": "doc_id",
    "doc": "doc_id",
    "rel": "relevance",
    "label": "relevance",
    "judgment": "relevance",
    "p": "probability",
    "prob": "probability",
    "p_rel": "probability",
    "sim": "score",
    "rank": "rank",
}

#: Labels allowed in qrels by default. -1 marks a pooled-but-unjudged document;
#: -2 is the TREC Web track's "junk" grade (judged, nonrelevant).
DEFAULT_GRADE_RANGE = (-2, 10)

DUPLICATE_POLICIES = ("error", "first", "last", "max")


# --------------------------------------------------------------------------- reading text


def _read_text(path: str | os.PathLike) -> str:
    """Return the decoded text of a plain or gzip file (BOM stripped, CRLF -> LF)."""
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", source) from exc
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"unreadable gzip data ({exc})", source) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte {exc.start})", source, line) from exc
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise InputError("file is empty", source)
    return text


def _split_columns(text: str, ncols: int, source: str, layout: str) -> pd.DataFrame:
    """Split whitespace-separated text into ``ncols`` string columns.

    Row ``i`` of the result is line ``i + 1`` of the file; blank lines come back
    as all-missing rows so that numbering is kept. A line with the wrong number
    of fields raises an :class:`InputError` naming it.
    """
    try:
        table = pd.read_csv(
            io.StringIO(text),
            sep=r"\s+",
            header=None,
            names=list(range(ncols)),
            dtype=object,
            skip_blank_lines=False,
            quoting=csv.QUOTE_NONE,
            keep_default_na=False,
            na_values=[""],
            engine="c",
        )
    except pd.errors.ParserError:
        table = None
    if table is not None:
        blank = table.isna().all(axis=1).to_numpy()
        short = table.isna().any(axis=1).to_numpy() & ~blank
        if not short.any():
            return table.loc[~blank]
    # Slow path: locate the first offending line exactly.
    for number, line in enumerate(text.split("\n"), start=1):
        fields = line.split()
        if fields and len(fields) != ncols:
            raise InputError(
                f"expected {ncols} columns ({layout}), found {len(fields)}", source, number
            )
    raise InputError(f"could not parse as {layout}", source)  # pragma: no cover


def _line_of(table: pd.DataFrame, mask: np.ndarray) -> int:
    """1-based line number of the first row selected by ``mask``."""
    return int(table.index[np.flatnonzero(mask)[0]]) + 1


def _check_policy(duplicates: str, allowed: tuple[str, ...]) -> None:
    if duplicates not in allowed:
        raise ValueError(f"duplicates must be one of {allowed}, got {duplicates!r}")


def _resolve_duplicates(
    table: pd.DataFrame, value: str, duplicates: str, source: str, what: str, lines: np.ndarray
) -> pd.DataFrame:
    """Apply the duplicate policy to rows sharing (query_id, doc_id)."""
    dup = table.duplicated(["query_id", "doc_id"], keep=False).to_numpy()
    if not dup.any():
        return table
    if duplicates == "error":
        first = np.flatnonzero(dup)[0]
        key = (table["query_id"].iat[first], table["doc_id"].iat[first])
        same = np.flatnonzero(
            (table["query_id"].to_numpy() == key[0]) & (table["doc_id"].to_numpy() == key[1])
        )
        values = table[value].to_numpy()[same]
        kind = "conflicting duplicate" if len(set(values.tolist())) > 1 else "duplicate"
        raise InputError(
            f"{kind} {what}: topic {key[0]!r}, document {key[1]!r} also on line "
            f"{int(lines[same[0]])} ({value} {values[0]} vs {values[1]}); "
            "choose a policy with duplicates='first'|'last'"
            + ("|'max'" if value == "relevance" else ""),
            source,
            int(lines[same[1]]),
        )
    if duplicates == "max":
        order = table.sort_values(value, kind="stable", ascending=False)
        return order.drop_duplicates(["query_id", "doc_id"], keep="first").sort_index()
    return table.drop_duplicates(["query_id", "doc_id"], keep=duplicates)


# --------------------------------------------------------------------------- DataFrame input


def _normalise_frame(
    frame: pd.DataFrame, required: tuple[str, ...], columns: Mapping[str, str] | None
) -> pd.DataFrame:
    """Rename a user's DataFrame to the ir_measures names and check the columns."""
    mapping = {c: COLUMN_ALIASES[c] for c in frame.columns if c in COLUMN_ALIASES}
    mapping.update(columns or {})
    frame = frame.rename(columns=mapping)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(
            f"missing column(s) {missing}; have {list(frame.columns)} "
            "(pass columns={'your_name': 'query_id', ...} to map them)",
            "<DataFrame>",
        )
    frame = frame.reset_index(drop=True)
    return frame


# --------------------------------------------------------------------------- runs


def read_run(
    source: str | os.PathLike | pd.DataFrame,
    *,
    duplicates: str = "error",
    columns: Mapping[str, str] | None = None,
    keep_rank: bool = False,
) -> pd.DataFrame:
    """Read one TREC run (``qid Q0 docno rank score tag``) or a run DataFrame.

    Returns a DataFrame with ``query_id, doc_id, score`` (plus ``rank`` when
    ``keep_rank``, and ``run`` holding the tag). Row order is the file's.
    """
    _check_policy(duplicates, ("error", "first", "last"))
    if isinstance(source, pd.DataFrame):
        name = "<DataFrame>"
        frame = _normalise_frame(source, RUN_COLUMNS, columns)
        table = pd.DataFrame(
            {
                "query_id": frame["query_id"].astype(str),
                "doc_id": frame["doc_id"].astype(str),
                "score": frame["score"],
            }
        )
        if "rank" in frame:
            table["rank"] = frame["rank"]
        if "run" in frame:
            table["run"] = frame["run"].astype(str)
        table.index = pd.RangeIndex(len(table))
        lines = np.arange(1, len(table) + 1)
        if table.empty:
            raise InputError("run table is empty", name)
    else:
        name = str(source)
        raw = _split_columns(_read_text(source), 6, name, "qid Q0 docno rank score tag")
        table = pd.DataFrame(
            {
                "query_id": raw[0],
                "doc_id": raw[2],
                "score": raw[4],
                "rank": raw[3],
                "run": raw[5],
            }
        )
        lines = table.index.to_numpy() + 1
    table["score"] = _numeric(table["score"], "score", name, lines, integer=False)
    if "rank" in table:
        if keep_rank:
            table["rank"] = _numeric(table["rank"], "rank", name, lines, integer=True)
        else:
            table = table.drop(columns="rank")
    table = _resolve_duplicates(table, "score", duplicates, name, "document in run", lines)
    return table.reset_index(drop=True)


def _numeric(
    values: pd.Series, what: str, source: str, lines: np.ndarray, *, integer: bool
) -> pd.Series:
    """Convert a column to numbers, naming the first line that is not one."""
    converted = pd.to_numeric(values, errors="coerce")
    array = converted.to_numpy(dtype=float)
    bad = ~np.isfinite(array)
    if bad.any():
        i = np.flatnonzero(bad)[0]
        raise InputError(
            f"{what} {values.iat[i]!r} is not a finite number", source, int(lines[i])
        )
    if integer:
        fractional = array != np.round(array)
        if fractional.any():
            i = np.flatnonzero(fractional)[0]
            raise InputError(f"{what} {values.iat[i]!r} is not an integer", source, int(lines[i]))
        return pd.Series(array.astype(np.int64), index=values.index)
    return pd.Series(array, index=values.index)


def read_runs(
    sources: str | os.PathLike | Iterable[str | os.PathLike] | Mapping[str, pd.DataFrame],
    **kwargs,
) -> dict[str, pd.DataFrame]:
    """Read several runs: a directory, a list of paths, or ``{name: DataFrame}``.

    Run names are the file names without ``.gz`` (the tag column is kept as
    ``run`` but not used as the name, so two files with one tag stay apart).
    """
    if isinstance(sources, Mapping):
        return {str(k): read_run(v, **kwargs) for k, v in sources.items()}
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    paths: list[Path] = []
    for item in sources:
        item = Path(item)
        if item.is_dir():
            paths.extend(sorted(p for p in item.iterdir() if p.is_file() and not p.name.startswith(".")))
        else:
            paths.append(item)
    if not paths:
        raise InputError("no run files found", ", ".join(str(s) for s in sources) or "<none>")
    runs: dict[str, pd.DataFrame] = {}
    for path in paths:
        name = run_name(path)
        if name in runs:
            raise InputError(f"two run files are both named {name!r}", str(path))
        runs[name] = read_run(path, **kwargs)
    return runs


def run_name(path: str | os.PathLike) -> str:
    """The name of a run file: its file name without ``.gz``/``.txt``/``.run``."""
    name = Path(path).name
    for suffix in (".gz", ".txt", ".run", ".trec"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


# --------------------------------------------------------------------------- qrels


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
    treats it as unjudged.
    """
    _check_policy(duplicates, DUPLICATE_POLICIES)
    if isinstance(source, pd.DataFrame):
        name = "<DataFrame>"
        frame = _normalise_frame(source, QRELS_COLUMNS, columns)
        table = pd.DataFrame(
            {
                "query_id": frame["query_id"].astype(str),
                "doc_id": frame["doc_id"].astype(str),
                "relevance": frame["relevance"],
            }
        )
        if table.empty:
            raise InputError("qrels table is empty", name)
    else:
        name = str(source)
        raw = _split_columns(_read_text(source), 4, name, "qid iter docno rel")
        table = pd.DataFrame({"query_id": raw[0], "doc_id": raw[2], "relevance": raw[3]})
    lines = table.index.to_numpy() + 1
    table["relevance"] = _numeric(table["relevance"], "relevance", name, lines, integer=True)
    low, high = grade_range
    out = ((table["relevance"] < low) | (table["relevance"] > high)).to_numpy()
    if out.any():
        i = np.flatnonzero(out)[0]
        raise InputError(
            f"relevance {table['relevance'].iat[i]} is outside the allowed range "
            f"[{low}, {high}] (set grade_range to allow it)",
            name,
            int(lines[i]),
        )
    table = _resolve_duplicates(table, "relevance", duplicates, name, "judgment", lines)
    return table.reset_index(drop=True)


def read_prob_qrels(source: str | os.PathLike | pd.DataFrame) -> pd.DataFrame:
    """Read probabilistic qrels (``qid docno p`` lines, or a DataFrame)."""
    if isinstance(source, pd.DataFrame):
        name = "<DataFrame>"
        frame = _normalise_frame(source, PROB_QRELS_COLUMNS, None)
        table = frame[list(PROB_QRELS_COLUMNS)].copy()
        table["query_id"] = table["query_id"].astype(str)
        table["doc_id"] = table["doc_id"].astype(str)
    else:
        name = str(source)
        raw = _split_columns(_read_text(source), 3, name, "qid docno p")
        table = pd.DataFrame({"query_id": raw[0], "doc_id": raw[1], "probability": raw[2]})
    lines = table.index.to_numpy() + 1
    table["probability"] = _numeric(table["probability"], "probability", name, lines, integer=False)
    outside = ((table["probability"] < 0) | (table["probability"] > 1)).to_numpy()
    if outside.any():
        i = np.flatnonzero(outside)[0]
        raise InputError(
            f"probability {table['probability'].iat[i]} is outside [0, 1]", name, int(lines[i])
        )
    table = _resolve_duplicates(table, "probability", "error", name, "probability", lines)
    return table.reset_index(drop=True)


# --------------------------------------------------------------------------- writing


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            data = text.encode("utf-8")
            if path.suffix == ".gz":
                data = gzip.compress(data, mtime=0)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _lines(frame: pd.DataFrame, fmt: str, columns: list[str]) -> str:
    rows = zip(*(frame[c].tolist() for c in columns))
    return "".join(fmt.format(*row) for row in rows)


def write_qrels(qrels: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write qrels as ``qid 0 docno rel`` lines."""
    frame = _normalise_frame(qrels, QRELS_COLUMNS, None)
    atomic_write_text(path, _lines(frame, "{} 0 {} {}\n", list(QRELS_COLUMNS)))


def write_run(run: pd.DataFrame, path: str | os.PathLike, tag: str = "relimpute") -> None:
    """Write a run as ``qid Q0 docno rank score tag`` lines, ranked as trec_eval ranks."""
    frame = _normalise_frame(run, RUN_COLUMNS, None)
    frame = sort_trec(frame)
    frame["rank"] = frame.groupby("query_id", sort=False).cumcount() + 1
    frame["tag"] = tag
    atomic_write_text(
        path, _lines(frame, "{} Q0 {} {} {!r} {}\n", ["query_id", "doc_id", "rank", "score", "tag"])
    )


def write_prob_qrels(estimate: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write probabilistic qrels as ``qid docno p`` lines (p with 17 significant digits)."""
    frame = _normalise_frame(estimate, PROB_QRELS_COLUMNS, None)
    atomic_write_text(path, _lines(frame, "{} {} {!r}\n", list(PROB_QRELS_COLUMNS)))


def sort_trec(run: pd.DataFrame, *, by_rank: bool = False) -> pd.DataFrame:
    """Order a run as trec_eval does: per topic, score descending, ties by docno descending.

    With ``by_rank`` the rank column orders the documents instead (ties by docno
    descending), for runs whose scores are not meant to be used.
    """
    if by_rank:
        return run.sort_values(
            ["query_id", "rank", "doc_id"], ascending=[True, True, False], kind="stable"
        ).reset_index(drop=True)
    return run.sort_values(
        ["query_id", "score", "doc_id"], ascending=[True, False, False], kind="stable"
    ).reset_index(drop=True)
