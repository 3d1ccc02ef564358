"""Studies: one runner (:func:`run`) for every study, its output folder and where its units run.

A study (the calibration trials, the pool-bias study, power curves, the split-corpus
validation, or one of your own) is an object of the :class:`Study` protocol: its identity,
its units, how to run one unit and save its result, how to combine the results and write
its tables. ``run(study, folder, jobs=, scheduler=, resume=, overwrite=)`` runs it here, on
local processes or on a Dask cluster, keeps each finished unit in ``folder`` so a stopped
study resumes, and refuses a folder that holds another study (:class:`StudyFolder`).

Modules: :mod:`.runner` (the protocol and :func:`run`), :mod:`.parallel` (:func:`map_units`,
:func:`cluster`) and :mod:`.folder` (:class:`StudyFolder`, the manifest and the parts).
"""

from __future__ import annotations

from .parallel import LOCAL, cluster, map_units
from .runner import Study, run

#: names of :mod:`.folder`, imported on first use (it loads numpy and pandas)
_FOLDER = ("StudyFolder", "frame_from_json", "frame_to_json", "study_identity")

__all__ = ["LOCAL", "Study", "cluster", "map_units", "run", *_FOLDER]


def __getattr__(name: str):
    if name in _FOLDER:
        from . import folder

        return getattr(folder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
