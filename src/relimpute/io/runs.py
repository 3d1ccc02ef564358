"""Runs: one run file or frame (:func:`read_run`), a run file's columns for the campaign's
assembly (:func:`read_run_columns`), and the run files of folders (:func:`run_files`).
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from ..errors import InputError
from .fields import Checks, Number
from .parsing import Layout, read_checked

#: A run's numbers: its scores, and its ranks when kept (a DataFrame without them is refused)
_SCORE = Number("score")
_RANK = Number("rank", integer=True, missing="keep_rank needs a 'rank' column")
#: A run file's six fields (the rank kept or not); a DataFrame has the three columns of
#: :data:`~relimpute.io.RUN_COLUMNS`, and ``rank`` and ``run`` when it has them
RUN_FILE = Layout(("query_id", None, "doc_id", None, "score", "run"), "qid Q0 docno rank score tag",
                  floats=("score",), optional=("rank", "run"),
                  checks=Checks((_SCORE,), tags=("run",)))
RANKED_RUN_FILE = Layout(("query_id", None, "doc_id", "rank", "score", "run"), RUN_FILE.text,
                         floats=("score",), checks=Checks((_SCORE, _RANK), tags=("run",)))

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded for DataFrames only: reading files needs none
    import numpy as np
    import pandas as pd
    import pyarrow as pa


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
    layout = RANKED_RUN_FILE if keep_rank else RUN_FILE
    if not isinstance(source, (str, os.PathLike)):  # a DataFrame: its rank read when kept
        layout = replace(RUN_FILE, checks=layout.checks)
    checks = replace(layout.checks, policies=("error", "first", "last"), value="score",
                     what="document in run", encode=True, frame=True)  # fmt: skip
    return read_checked(source, {"run": replace(layout, checks=checks)}, duplicates=duplicates,
                        columns=columns)[1]  # fmt: skip


def read_run_columns(
    path: str | os.PathLike, *, keep_rank: bool = False
) -> tuple[dict[str, pa.Array | np.ndarray], np.ndarray]:
    """The columns of one run file, checked as :func:`read_run` checks them but for duplicates.

    Returns ``{"query_id", "doc_id", "score"[, "rank"], "run"}`` (ids and tags as
    pyarrow strings, numbers as numpy arrays) and each row's line number.
    :meth:`Campaign.from_files <relimpute.data.Campaign.from_files>` reads runs
    with it and finds duplicates while it aligns the documents.
    """
    return read_checked(path, {"run": RANKED_RUN_FILE if keep_rank else RUN_FILE})[1:]


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
