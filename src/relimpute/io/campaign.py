"""A campaign's files read in one pass: the qrels in any form, read once with the relevance
threshold that goes with them (:func:`read_judgments`, first, so that a bad file fails fast),
then the runs, aligned per topic (:mod:`.assembly`) for
:meth:`relimpute.data.Campaign.from_files`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .._files import read_bytes
from .assembly import Aligned, align_files, align_read_frames
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
    the relevance threshold and the settings file it came from (None: given, or the default 1)."""

    qrels: object = field(repr=False)
    sample: pd.DataFrame | None = field(repr=False)
    notes: list[str]
    rel_threshold: int
    threshold_from: Path | None = None


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
    irds = isinstance(qrels, str) and qrels.startswith(IR_DATASETS_PREFIX)
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
        return Judgments(judged, None, notes, threshold, settings)
    # sampled qrels, or with inclusion probabilities: a document not sampled (-1) stays in the
    # pool, unjudged, and the sample keeps its strata or probabilities
    plain = judged[["query_id", "doc_id", "relevance"]]
    return Judgments(plain, judged, notes, threshold, settings)


def read_campaign(
    judgments: Judgments,
    runs: str | os.PathLike | Iterable[str | os.PathLike] | Mapping[str, pd.DataFrame],
    *,
    by_rank: bool,
    duplicates: str,
) -> tuple[Aligned, list[str]]:
    """``(aligned, notes)``: the ``judgments`` read (:func:`read_judgments`) and the runs (files
    and folders, or ``{name: frame}``) aligned; the notes of the qrels reader and of the run
    files skipped (none for run frames)."""
    from ..adapters import as_run_frames

    qrels = judgments.qrels
    if not isinstance(runs, Mapping):
        skipped: list[Path] = []
        files = run_files(runs, skipped)
        aligned = align_files(qrels, files, by_rank=by_rank, duplicates=duplicates)
        return aligned, judgments.notes + ([skipped_note(skipped)] if skipped else [])
    # the qrels were checked as they were read: the runs now
    runs = {name: read_run(frame, keep_rank=by_rank) for name, frame in as_run_frames(runs).items()}
    return align_read_frames(qrels, runs, by_rank=by_rank), []
