"""A campaign's files read in one pass: the qrels in any form (read first, so that a bad file
fails fast), then the runs, aligned per topic (:mod:`.assembly`) for
:meth:`relimpute.data.Campaign.from_files`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from .assembly import Aligned, align_files, align_frames
from .qrels import read_any_qrels
from .runs import read_run, run_files, skipped_note

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded for run DataFrames only: run files need none
    import pandas as pd


def read_campaign(
    qrels: str | os.PathLike,
    runs: str | os.PathLike | Iterable[str | os.PathLike] | Mapping[str, pd.DataFrame],
    *,
    by_rank: bool,
    duplicates: str,
) -> tuple[Aligned, pd.DataFrame | None, list[str]]:
    """``(aligned, sample, notes)``: the qrels (a file of any form, or ``"irds:<id>"``) and the
    runs (files and folders, or ``{name: frame}``) aligned; the sampled table or None; the
    readers' notes (the qrels reader's and the run files skipped; none for run frames)."""
    from ..adapters import IR_DATASETS_PREFIX, as_run_frames, ir_datasets_qrels

    if isinstance(qrels, str) and qrels.startswith(IR_DATASETS_PREFIX):
        qrels = ir_datasets_qrels(qrels[len(IR_DATASETS_PREFIX) :])
    # fail fast; plain qrels as columns for run files (no pandas), as a frame for frames
    qrels, sample, notes = read_any_qrels(qrels, duplicates=duplicates,
                                          frame=isinstance(runs, Mapping))  # fmt: skip
    if isinstance(runs, Mapping):  # the qrels were checked as they were read: the runs now
        runs = {name: read_run(frame, keep_rank=by_rank) for name, frame in as_run_frames(runs).items()}
        return align_frames(qrels, runs, by_rank=by_rank, validate=False), sample, []
    skipped: list[Path] = []
    files = run_files(runs, skipped)
    aligned = align_files(qrels, files, by_rank=by_rank, duplicates=duplicates)
    return aligned, sample, notes + ([skipped_note(skipped)] if skipped else [])
