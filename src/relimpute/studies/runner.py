"""One way to run a study: a :class:`Study` says what it is, :func:`run` runs it.

A study is a map over independent units (a calibration trial, a pool-bias group, a power
design, a split of the corpus) and a step that combines their results into tables. The
:class:`Study` says which units, how to run one, how to save a result exactly (JSON), how
to combine the results and which files they make; :func:`run` does the rest, the same way
for every study: it runs the units here, on local processes or on a Dask cluster
(:func:`relimpute.studies.map_units`), and with a ``folder`` it keeps each finished unit
there as it ends, resumes from them, refuses a folder holding another study (or this one
unfinished without ``resume``), writes the tables atomically and marks the study complete
(:mod:`relimpute.studies.folder`). The result depends on the study alone (its seed
included), never on where or in which order its units ran.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from .parallel import RETRIES, cluster, map_units

Result = TypeVar("Result")


@runtime_checkable
class Study(Protocol):
    """What :func:`run` needs of a study.

    ``command`` names the kind of study (first in its identity: ``calibrate``); ``unit``
    what one unit is called (``trial``: the parts are ``trial-0``, ``trial-1``, ... and
    messages count ``trials``); ``report`` the markdown file of its tables that begins with
    an ``UNFINISHED`` line while the study runs in a folder (None: none); ``seed`` its seed,
    or None to have :func:`run` draw one (recorded in the folder, reused by ``resume``).
    The study object goes to the workers once, with every unit's task.
    """

    command: str
    unit: str
    report: str | None
    seed: Any

    def with_seed(self, seed: int) -> Study:
        """The same study with this seed (``seed`` was None)."""

    def identity(self) -> dict:
        """What the results depend on, JSON-able (:func:`study_identity`): a folder holding a
        study with another identity is refused."""

    def units(self) -> Sequence[Any]:
        """The units in order, each JSON-able (a finished part is reused for the same unit)."""

    def run_unit(self, unit: Any) -> Any:
        """One unit's result (on a worker: it must not depend on what else ran)."""

    def encode(self, result: Any) -> Any:
        """A result as JSON, exactly (floats by ``repr``: a resumed study writes the same bytes)."""

    def decode(self, data: Any) -> Any:
        """The result :meth:`encode` saved."""

    def combine(self, results: list[Any]) -> Any:
        """The study's result from its units' results, in the units' order."""

    def write(self, result: Any, folder: Path) -> list[Path]:
        """Write the result's tables into ``folder`` (atomically); the files written."""


def run(
    study: Study,
    folder: str | os.PathLike | None = None,
    *,
    jobs: int | None = 1,
    scheduler=None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    retries: int = RETRIES,
) -> Any:
    """Run ``study`` and return its combined result (:meth:`Study.combine`).

    ``jobs`` local processes (-1: all cores; None: the ambient joblib backend) or
    ``scheduler`` (a ``distributed.Client``, a scheduler's address, or ``"local"``: a
    cluster of ``jobs`` workers here) run the units; ``retries``: how often a unit that
    raised on a cluster is run again. With ``folder``, the study's output folder: its
    tables (:meth:`Study.write`), ``manifest.json`` and each finished unit in ``.resume/``;
    ``resume`` goes on with the study the folder holds, ``overwrite`` starts afresh there
    (with neither, a folder holding finished work is refused: :class:`StudyFolder`).
    Ctrl-C (or SIGTERM) stops it with what finished kept, for ``resume``.
    """
    if isinstance(scheduler, str):
        with cluster(scheduler, jobs) as client:
            return run(study, folder, jobs=jobs, scheduler=client, resume=resume, overwrite=overwrite,
                       progress=progress, retries=retries)  # fmt: skip
    options = {"jobs": jobs, "client": scheduler, "progress": progress, "retries": retries}
    if folder is None:
        if study.seed is None:
            study = study.with_seed(_draw_seed())
        return study.combine(_map(study, list(study.units()), options))
    from .folder import open_study

    opened = open_study(study.command, folder, study.identity(), resume, overwrite,
                        units=f"{study.unit}s", report=study.report)  # fmt: skip
    try:
        if study.seed is None:  # drawn by the folder, or the seed of the study it resumes
            study = study.with_seed(opened.study["seed"])
        result = study.combine(_resumed(study, opened, options))
        opened.finish(study.write(result, opened.path))
    except BaseException:
        opened.abandon()
        raise
    return result


def _resumed(study: Study, folder, options: Mapping[str, Any]) -> list[Any]:
    """Every unit's result: the folder's finished ones, and the others run and saved as they end."""
    from .folder import _normal

    units = list(study.units())
    folder.expect(len(units))
    found: dict[int, Any] = {}
    for index, unit in enumerate(units):
        saved = folder.load(f"{study.unit}-{index}")
        if isinstance(saved, dict) and saved.get("unit") == _normal(unit) and "result" in saved:
            found[index] = study.decode(saved["result"])
    todo = [i for i in range(len(units)) if i not in found]

    def finished(position: int, result: Any) -> None:
        index = todo[position]
        found[index] = result
        folder.save(f"{study.unit}-{index}", {"unit": _normal(units[index]), "result": study.encode(result)})

    _map(study, [units[i] for i in todo], {**options, "on_result": finished, "already": len(found)})
    return [found[i] for i in range(len(units))]


def _map(study: Study, units: list[Any], options: Mapping[str, Any]) -> list[Any]:
    desc = f"{study.command} {study.unit}s"
    return map_units(_run_unit, units, shared={"study": study}, desc=desc, unit=study.unit, **options)


def _run_unit(unit: Any, *, study: Study) -> Any:
    """One unit on a worker (module level: importable by name there)."""
    return study.run_unit(unit)


def _draw_seed() -> int:
    import numpy as np

    return int(np.random.SeedSequence().entropy)

