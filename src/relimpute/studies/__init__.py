"""Studies: one runner (:func:`run`) for every study, its output folder and where its units run.

A study (the calibration trials, the pool-bias study, power curves, the split-corpus
validation, or one of your own) is an object of the :class:`Study` protocol: its identity,
its units, how to run one unit and save its result, how to combine the results and write
its tables. ``run(study, folder, jobs=, scheduler=, resume=, overwrite=)`` runs it here, on
local processes or on a Dask cluster, keeps each finished unit in ``folder`` so a stopped
study resumes, and refuses a folder that holds another study (:class:`StudyFolder`).

Modules: :mod:`.runner` (the protocol and :func:`run`), :mod:`.parallel` (:func:`map_units`,
:func:`cluster`), :mod:`.folder` (:class:`StudyFolder`, the manifest and the parts) and
:mod:`.tables` (a result table as text: aligned, TSV, JSON, Markdown, LaTeX).
"""

from __future__ import annotations

#: where each name lives, imported on first use: :mod:`.folder` loads numpy and pandas, and
#: :mod:`.tables` (the ``--format`` writers every subcommand's help names) must come without
#: the runner's imports
_MODULES = {
    "parallel": ("LOCAL", "cluster", "map_units"),
    "runner": ("Study", "run"),
    "folder": ("StudyFolder", "frame_from_json", "frame_to_json", "study_identity"),
}
_NAMES = {name: module for module, names in _MODULES.items() for name in names}

__all__ = list(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        import importlib

        return getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
