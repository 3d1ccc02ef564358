"""A study's output folder: a manifest naming the study, and its finished parts for ``--resume``.

``manifest.json`` names the study (command, arguments, seed, version, a digest
of the data) and its state: ``running`` while it runs (the report files then
in the folder belong to no finished study; ``stale`` lists those of earlier
studies), ``complete`` with the list of the report's files once they are all
written (the earlier studies' files it did not rewrite are then removed).
Each finished unit of work (a calibration trial, a pool-bias group) is saved
under ``.resume/`` as it completes, so a killed study resumes from them; every
file goes through :func:`relimpute._files.atomic_write_bytes`, so a kill
never leaves a part.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._files import (
    atomic_write_text,
    lock_exclusive,
    output_directory,
    remove_stale_temporaries,
)
from .errors import InputError

MANIFEST = "manifest.json"
FORMAT = 1


def campaign_digest(campaign) -> str:
    """SHA-256 of what a study reads of a campaign: runs, topics, documents, grades, rankings."""
    digest = hashlib.sha256()
    digest.update(json.dumps([list(campaign.systems), campaign.rel_threshold]).encode())
    for t in campaign.topics:
        digest.update(f"\0{t.query_id}\0".encode())
        digest.update("\0".join(map(str, t.doc_ids)).encode())
        for array in (t.grades, t.judged, t.ranking, t.depth):
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def study_identity(command: str, seed: Any, arguments: Mapping[str, Any], campaign) -> dict:
    """What names a study in its manifest: command, release, seed, arguments, data digest."""
    from . import __version__

    return {
        "command": command,
        "version": __version__,
        "seed": seed,
        "arguments": dict(arguments),
        "data": campaign_digest(campaign),
    }


def frame_to_json(frame: pd.DataFrame) -> dict[str, Any]:
    """A DataFrame as JSON-able columns, dtypes and rows; floats by ``repr``, so exact."""
    rows = [[_plain(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    return {"columns": list(frame.columns), "dtypes": [str(d) for d in frame.dtypes], "rows": rows}


def frame_from_json(data: Mapping[str, Any]) -> pd.DataFrame:
    """The DataFrame :func:`frame_to_json` saved, with its dtypes."""
    frame = pd.DataFrame(data["rows"], columns=data["columns"], dtype=object)
    return frame.astype(dict(zip(data["columns"], data["dtypes"])))


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _json_default(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else str(value)


def _normal(value: Any) -> Any:
    """``value`` as JSON reads it back (tuples become lists, numpy scalars numbers)."""
    return json.loads(json.dumps(value, default=_json_default))


class StudyFolder:
    """The folder a study writes into; see the module docstring.

    ``study`` names the study (JSON-able: command, arguments, seed, version,
    data digest). With ``resume`` a folder whose manifest names the same study
    keeps its finished parts (:meth:`load`); one naming another study is
    refused. Without ``resume`` (or with nothing to resume) the study starts
    afresh: the manifest is rewritten first, then the old parts are removed.
    ``prefix`` lets several studies share a folder (``PREFIX_manifest.json``).
    A ``seed`` of None in ``study`` is drawn here (or, resuming, taken from the
    manifest) and recorded: read it back from ``self.study["seed"]``.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        study: Mapping[str, Any],
        *,
        resume: bool = False,
        prefix: str = "",
    ):
        self.path = output_directory(path)
        self._lock = _lock(self.path)
        try:
            self._open(study, resume, prefix)
        except BaseException:
            self.close()
            raise

    def _open(self, study: Mapping[str, Any], resume: bool, prefix: str) -> None:
        self.study = _normal(dict(study))
        self.manifest = self.path / f"{prefix}{MANIFEST}"
        self.parts = self.path / f".{prefix}resume"
        self.resumed = False
        old = self._read_manifest()
        # the report files of earlier studies here: removed once this one's are written
        self._earlier = [] if old is None else [*old.get("files", []), *old.get("stale", [])]
        if resume and old is not None:
            recorded = old.get("study", {})
            if self.study.get("seed", 0) is None:  # resumed without --seed: the study's own
                self.study["seed"] = recorded.get("seed")
            _check_same(recorded, self.study, self.manifest)
            self.resumed = True
        if self.study.get("seed", 0) is None:  # drawn here and recorded, so a resume can reuse it
            self.study["seed"] = int(np.random.SeedSequence().entropy)
        self._write_manifest("running", [])
        #: finished parts of a killed run that a fresh start (no ``resume``) threw away
        killed = old is not None and old.get("state") == "running" and not self.resumed
        self.discarded = len(list(self.parts.glob("*.json"))) if killed else 0
        if not self.resumed:
            shutil.rmtree(self.parts, ignore_errors=True)
        self.parts.mkdir(exist_ok=True)
        remove_stale_temporaries(self.path)
        remove_stale_temporaries(self.parts)

    # ---------------------------------------------------------------- manifest

    def _read_manifest(self) -> dict | None:
        if not self.manifest.exists():
            return None
        try:
            data = json.loads(self.manifest.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            problem = f"cannot read the study's manifest ({exc})"
            raise InputError(problem, str(self.manifest)) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            problem = "not a relimpute study manifest (or another release's); give another -o"
            raise InputError(problem, str(self.manifest))
        return data

    def _write_manifest(self, state: str, files: Iterable[str]) -> None:
        document = {"format": FORMAT, "state": state, "study": self.study, "files": sorted(files)}
        if state != "complete":
            document["stale"] = sorted(set(self._earlier))
        atomic_write_text(self.manifest, json.dumps(document, indent=2) + "\n")

    def finish(self, files: Iterable[str | os.PathLike]) -> None:
        """Mark the study complete, listing its report files (relative to the folder); the
        files the previous study in the folder listed and this one did not write are removed."""
        names = [os.path.relpath(f, self.path) for f in files]
        self._write_manifest("complete", names)
        for name in set(self._earlier) - set(names):  # the previous study's, not rewritten
            candidate = self.path / name
            if candidate.parent == self.path and candidate.is_file():
                candidate.unlink()
        self.close()

    def close(self) -> None:
        """Let another run write a study into the folder (:meth:`finish` does it too)."""
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def __del__(self) -> None:
        if getattr(self, "_lock", None) is not None:
            self.close()

    # ---------------------------------------------------------------- finished parts

    def _part(self, key: str) -> Path:
        return self.parts / f"{key}.json"

    def load(self, key: str) -> Any | None:
        """A finished part saved by :meth:`save`, or None (not done, or unreadable: redone)."""
        path = self._part(key)
        if not self.resumed or not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None

    def save(self, key: str, payload: Any) -> None:
        """Save a finished part (JSON-able; numpy scalars allowed) atomically."""
        atomic_write_text(self._part(key), json.dumps(payload, default=_json_default))


def _lock(folder: Path) -> int:
    """An exclusive lock on ``folder``, held while a study writes into it."""
    busy = "another relimpute run is writing a study into this folder; let it end first (or give another -o)"
    return lock_exclusive(os.open(folder, os.O_RDONLY), busy, str(folder))


def open_study(command: str, path, study: Mapping[str, Any], resume: bool) -> StudyFolder:
    """A command's :class:`StudyFolder`, saying on standard error what ``--resume`` found."""
    folder = StudyFolder(path, study, resume=resume)
    if resume and folder.resumed:
        kept = len(list(folder.parts.glob("*.json")))
        print(f"relimpute {command}: resuming the study in {path}: {kept} finished parts kept",
              file=sys.stderr)  # fmt: skip
    elif resume:
        print(f"relimpute {command}: nothing to resume in {path}: the study starts afresh",
              file=sys.stderr)  # fmt: skip
    elif folder.discarded:
        print(f"relimpute {command}: started afresh in {path}: the {folder.discarded} finished "
              "parts a killed run left there were dropped (--resume keeps them)",
              file=sys.stderr)  # fmt: skip
    return folder


def file_study(command: str, file, study: Mapping[str, Any], resume: bool) -> StudyFolder:
    """:func:`open_study` for a study whose report is one ``file``: its manifest and finished
    parts go in the hidden folder ``.NAME.study`` beside the file (:func:`finish_file_study`)."""
    file = Path(file)
    return open_study(command, file.parent / f".{file.name}.study", study, resume)


def finish_file_study(folder: StudyFolder, file) -> None:
    """Mark a :func:`file_study` complete once ``file`` is written, and drop its finished parts
    (the file holds what they held; the manifest stays, naming the study that wrote it)."""
    folder.finish([file])
    shutil.rmtree(folder.parts, ignore_errors=True)


def _check_same(old: Mapping[str, Any], new: Mapping[str, Any], where: Path) -> None:
    """Refuse to resume a folder holding another study, naming what differs."""
    if old.get("command") != new.get("command"):
        differ = [f"a {old.get('command')} study, not a {new.get('command')} one"]
    else:
        a, b = old.get("arguments", {}), new.get("arguments", {})
        differ = [_differs(k, a, b) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        differ += [_differs(k, old, new) for k in ("seed", "version") if old.get(k) != new.get(k)]
        if old.get("data") != new.get("data"):
            differ.append("other qrels or runs")
    if differ:
        raise InputError(
            "cannot resume: this folder holds another study (" + "; ".join(differ) + "); "
            "give another -o, or run without --resume to start this study afresh there",
            str(where),
        )


def _differs(key: str, old: Mapping[str, Any], new: Mapping[str, Any], width: int = 60) -> str:
    there, now = (repr(d.get(key)) for d in (old, new))
    there, now = (t if len(t) <= width else t[: width - 3] + "..." for t in (there, now))
    return f"{key}: {there} there, {now} now"
