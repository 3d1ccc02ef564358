"""A campaign's files read in one pass, by one door (:func:`read_campaign`, for
:meth:`relimpute.data.Campaign.from_files`): the qrels in any form, read once with the relevance
threshold that goes with them (:func:`read_judgments`, first, so that a bad file fails fast),
then the runs: run frames (:mod:`relimpute.adapters`) or run files, listed and their memory
checked (:mod:`.memory`, when asked) before they are read; both aligned per topic
(:mod:`.assembly`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .._files import read_bytes
from .assembly import Aligned, align_files, align_read_frames
from .memory import check_fits
from .parsing import checked_fields
from .qrels import DEFAULT_GRADE_RANGE, qrels_forms
from .runs import read_run, run_files, skipped_note

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded for run DataFrames only: run files need none
    import pandas as pd


@dataclass(frozen=True)
class Judgments:
    """A qrels source read once (:func:`read_judgments`): the judgments (columns for run files,
    a frame for run frames or of sampled qrels), the sampled table or None, the reader's notes,
    the relevance threshold, the settings file it came from (None: given, or the default 1)
    and the source read (the path or ``irds:`` id as given; None: unknown)."""

    qrels: object = field(repr=False)
    sample: pd.DataFrame | None = field(repr=False)
    notes: list[str]
    rel_threshold: int
    threshold_from: Path | None = None
    source: str | os.PathLike | None = None


def read_judgments(
    qrels: str | os.PathLike,
    *,
    rel_threshold: int | None = None,
    duplicates: str = "error",
    frame: bool = False,
) -> Judgments:
    """The qrels file (any form, or ``"irds:<id>"``) read once, its relevance threshold
    resolved once: ``rel_threshold`` as given, else the collection's ``relimpute.toml``, else 1
    (:func:`relimpute.collection_settings.resolve_rel_threshold`). ``frame``: plain qrels as a
    DataFrame (for run frames) rather than columns."""
    from ..adapters import IR_DATASETS_PREFIX, ir_datasets_qrels
    from ..collection_settings import resolve_rel_threshold

    threshold, settings = resolve_rel_threshold(qrels, rel_threshold)
    source, irds = qrels, isinstance(qrels, str) and qrels.startswith(IR_DATASETS_PREFIX)
    # a file is read once: its form told by its first line, then parsed
    data = read_bytes(qrels) if isinstance(qrels, (str, os.PathLike)) and not irds else None
    if irds:
        qrels = ir_datasets_qrels(qrels[len(IR_DATASETS_PREFIX) :])
    forms = qrels_forms(DEFAULT_GRADE_RANGE, frame)
    if data is None:  # a DataFrame: plain qrels
        forms = {"trec": forms["trec"]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        form, judged, _ = checked_fields(qrels, data, forms, duplicates=duplicates)
    notes = [str(w.message) for w in caught] if form == "sampled" else []
    for w in caught:  # issued again: a sampled file's notes are the campaign's to keep too
        warnings.warn(w.message, w.category, stacklevel=2)
    if form == "trec":
        return Judgments(judged, None, notes, threshold, settings, source)
    # sampled qrels, or with inclusion probabilities: a document not sampled (-1) stays in the
    # pool, unjudged, and the sample keeps its strata or probabilities
    plain = judged[["query_id", "doc_id", "relevance"]]
    return Judgments(plain, judged, notes, threshold, settings, source)


def read_campaign(
    qrels: str | os.PathLike | Judgments,
    runs: str | os.PathLike | Iterable[str | os.PathLike] | Mapping[str, pd.DataFrame],
    *,
    rel_threshold: int | None = None,
    by_rank: bool = False,
    duplicates: str = "error",
    memory_per_byte: float | None = None,
) -> tuple[Judgments, Aligned, list[str]]:
    """``(judgments, aligned, notes)``: the ``qrels`` (a source, read by :func:`read_judgments`,
    or the :class:`Judgments` it read) and the ``runs`` (files and folders, or run frames in any
    form :func:`relimpute.adapters.as_run_frames` takes) aligned; the notes of the qrels reader
    and of the run files skipped (none for run frames). ``memory_per_byte``: before the runs are
    read, refuse run files and qrels whose size times this is more memory than is free
    (:func:`relimpute.io.memory.check_fits`)."""
    from ..adapters import as_run_frames

    if not isinstance(qrels, Judgments):
        qrels = read_judgments(qrels, rel_threshold=rel_threshold, duplicates=duplicates,
                               frame=isinstance(runs, Mapping))  # fmt: skip
    elif rel_threshold is not None and rel_threshold != qrels.rel_threshold:
        raise ValueError(f"the judgments were read at rel_threshold {qrels.rel_threshold}, "
                         f"not {rel_threshold}")  # fmt: skip
    if not isinstance(runs, Mapping):  # run files: listed, then read one at a time as aligned
        runs = [runs] if isinstance(runs, (str, os.PathLike)) else list(runs)
        skipped: list[Path] = []
        files = run_files(runs, skipped)
        if memory_per_byte is not None:  # before any run is read
            path, named = qrels.source, " ".join(map(str, runs))  # the runs as given
            paths = [p for _, p in files] if path is None else [path, *(p for _, p in files)]
            check_fits(paths, memory_per_byte, source=f"{path} and {named}")
        aligned = align_files(qrels.qrels, files, by_rank=by_rank, duplicates=duplicates)
        return qrels, aligned, qrels.notes + ([skipped_note(skipped)] if skipped else [])
    # run frames in any form: the qrels were checked as they were read, the runs now
    runs = {name: read_run(frame, keep_rank=by_rank) for name, frame in as_run_frames(runs).items()}
    return qrels, align_read_frames(qrels.qrels, runs, by_rank=by_rank), []
