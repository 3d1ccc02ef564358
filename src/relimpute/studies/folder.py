"""A study's output folder: a manifest naming the study, its tables, and its finished parts.

``manifest.json`` names the study (command, arguments, seed, version, a digest
of the data) and its state: ``running`` while it runs (the report files then
in the folder belong to no finished study; ``stale`` lists those of earlier
studies), ``complete`` with the list of the report's files once they are all
written (the earlier studies' files it did not rewrite are then removed).
Each finished unit of work (a calibration trial, a pool-bias group) is saved
under ``.resume/`` as it completes, so a killed study resumes from them; every
file goes through :func:`relimpute._files.atomic_write_bytes`, so a kill
never leaves a part.

A folder holding finished work (parts of an unfinished study, or a complete
study's files) is never cleared unasked: the same study goes on with
``--resume``, another one starts there only with ``--overwrite``. While the
study runs its markdown report begins with an ``UNFINISHED`` line.
:func:`relimpute.studies.run` is the one caller; a study's own code never opens a folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sys
import threading
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._files import (
    atomic_write_text,
    lock_exclusive,
    output_directory,
    remove_stale_temporaries,
)
from ..errors import InputError

MANIFEST = "manifest.json"
#: the manifest's format: 2 since every study runs on :func:`relimpute.studies.run` (its parts
#: are saved as ``UNIT-i`` with the unit beside the result); 1 was 0.2's
FORMAT = 2
#: the first line of a study's markdown report while the study is unfinished
BANNER = "> **UNFINISHED:"
#: the study folder this process has open (for the interrupt message), or None
_current: weakref.ref[StudyFolder] | None = None


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


def labels_digest(campaign) -> dict[str, str]:
    """SHA-256 of each automatic label source's labels (by source): what a study reads of them."""
    return {
        source.source: hashlib.sha256(source.frame.to_csv(index=False).encode()).hexdigest()
        for source in getattr(campaign, "labels", ())
    }


def study_identity(command: str, seed: Any, arguments: Mapping[str, Any], campaign) -> dict:
    """What names a study in its manifest: command, release, seed, arguments, data digest
    (and the labels' digests, when the campaign carries automatic labels)."""
    from .. import __version__

    identity = {
        "command": command,
        "version": __version__,
        "seed": seed,
        "arguments": dict(arguments),
        "data": campaign_digest(campaign),
    }
    labels = labels_digest(campaign)
    return {**identity, "labels": labels} if labels else identity


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
    data digest). The same study, unfinished, goes on with ``resume`` (its
    finished parts are kept: :meth:`load`) and is refused without it; a complete
    one runs again, reusing the parts it kept. A folder holding another study's
    finished work is refused unless ``overwrite``: this study then starts afresh
    (the manifest rewritten first, then the old parts removed). ``units`` names
    the parts in messages (``trials``); ``report`` is the markdown report that
    begins with an ``UNFINISHED`` line while the study runs (:meth:`expect`
    gives the count it shows). ``prefix`` lets several studies share a folder
    (``PREFIX_manifest.json``). A ``seed`` of None in ``study`` is drawn here
    (or taken from the folder's study) and recorded: read it back from
    ``self.study["seed"]``.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        study: Mapping[str, Any],
        *,
        resume: bool = False,
        overwrite: bool = False,
        prefix: str = "",
        units: str = "parts",
        report: str | None = None,
    ):
        self.path = output_directory(path)
        self.units, self.report, self.total = units, report, None
        self._signal: Any = None
        self._lock = _lock(self.path)
        try:
            self._open(study, resume, overwrite, prefix)
        except BaseException:
            self.close()
            raise

    def _open(self, study: Mapping[str, Any], resume: bool, overwrite: bool, prefix: str) -> None:
        self.study = _normal(dict(study))
        self.manifest = self.path / f"{prefix}{MANIFEST}"
        self.parts = self.path / f".{prefix}resume"
        self.resumed = False
        _refuse_link(self.parts)
        old = self._read_manifest()
        # the report files of earlier studies here: removed once this one's are written
        self._earlier = [] if old is None else [*old.get("files", []), *old.get("stale", [])]
        self._earlier += [self.report] if self.report else []  # an UNFINISHED-only report too
        kept = self.kept()
        if old is not None and old["state"] == "earlier" and not overwrite:
            _refuse_earlier(old, self.manifest)
        if old is not None and not overwrite:
            self._go_on_or_refuse(old, kept, resume)
        if self.study.get("seed", 0) is None:  # drawn here and recorded, so a resume can reuse it
            self.study["seed"] = int(np.random.SeedSequence().entropy)
        self._write_manifest("running", [])
        #: finished parts of an unfinished study that ``overwrite`` threw away
        killed = old is not None and old.get("state") in ("running", "earlier") and not self.resumed
        self.discarded = kept if killed else 0
        if not self.resumed:
            shutil.rmtree(self.parts, ignore_errors=True)
        self.parts.mkdir(exist_ok=True)
        remove_stale_temporaries(self.path)
        remove_stale_temporaries(self.parts)
        self._mark_unfinished()

    def _go_on_or_refuse(self, old: Mapping[str, Any], kept: int, resume: bool) -> None:
        """Go on with the folder's study when it is this one; refuse to lose finished work."""
        recorded = old["study"]
        if self.study.get("seed", 0) is None:  # no seed given: the folder's study's own
            self.study["seed"] = recorded.get("seed")
        differ = _differences(recorded, self.study)
        complete = old.get("state") == "complete"
        if not differ and (resume or complete or not kept):
            self.resumed = True
            return
        where = str(self.manifest)
        if resume:
            raise InputError(
                f"cannot resume: this folder holds another study ({'; '.join(differ)}); "
                "give another -o, or --overwrite to start this study afresh there",
                where,
            )
        if not differ:
            raise InputError(
                f"this folder holds this study, unfinished ({kept} finished {self.units} kept): "
                "add --resume to go on with it, or --overwrite to start it afresh (dropping them)",
                where,
            )
        if not kept and not (complete and _any_file(self.path, old.get("files", []))):
            return  # nothing finished to lose
        what = "a complete study" if complete else f"an unfinished study ({kept} finished {self.units} kept)"
        raise InputError(
            f"this folder holds {what} with other options ({'; '.join(differ)}): give another -o, "
            "or add --overwrite to replace it with this one (to go on with that one instead, "
            "run it with its own options and --resume)",
            where,
        )

    def kept(self) -> int:
        """How many finished parts the folder holds."""
        return len(list(self.parts.glob("*.json"))) if self.parts.is_dir() else 0

    def expect(self, total: int) -> None:
        """Say how many parts the study has (for the UNFINISHED line and the interrupt message)."""
        self.total = int(total)
        self._mark_unfinished()

    def _mark_unfinished(self) -> None:
        """Begin the report with the UNFINISHED line (what follows: what the file held)."""
        if self.report is None or self._lock is None:
            return
        path = self.path / self.report
        try:  # a link is replaced, not read: nothing outside the folder is touched
            body = path.read_text(encoding="utf-8") if path.is_file() and not path.is_symlink() else ""
        except (OSError, UnicodeDecodeError):
            return  # not a report this module can mark: the final one replaces it
        if body.startswith(BANNER):
            body = body.partition("\n\n")[2]
        of = f" of {self.total}" if self.total else ""
        banner = (
            f"{BANNER} {self.kept()}{of} {self.units} finished.** This study is running or was "
            "stopped; what follows here (and the tables beside this file) may be an earlier "
            "run's. Go on with the same command and --resume.\n\n"
        )
        atomic_write_text(path, banner + body)

    # ---------------------------------------------------------------- manifest

    def _read_manifest(self) -> dict | None:
        if not self.manifest.exists():
            return None
        try:
            data = json.loads(self.manifest.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            problem = f"cannot read the study's manifest ({exc}); remove it, or give another -o"
            raise InputError(problem, str(self.manifest)) from None
        if isinstance(data, dict) and data.get("format") == 1 and isinstance(data.get("study"), dict):
            return {"format": 1, "state": "earlier", "study": data["study"],
                    "files": [f for f in data.get("files", []) if isinstance(f, str)]}  # fmt: skip
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            problem = "not a relimpute study manifest (or another release's); give another -o"
            raise InputError(problem, str(self.manifest))
        lists = all(_names(data.get(key, [])) for key in ("files", "stale"))
        state = data.get("state") in ("running", "complete")
        if not isinstance(data.get("study"), dict) or not state or not lists:
            problem = ("a damaged study manifest (its study, state or files are not what a study "
                       "writes); remove it, or give another -o")  # fmt: skip
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
            if candidate.parent == self.path and (candidate.is_file() or candidate.is_symlink()):
                candidate.unlink()
        self.close()

    def close(self) -> None:
        """Let another run write a study into the folder (:meth:`finish` does it too)."""
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
        if self._signal is not None:
            try:
                signal.signal(signal.SIGTERM, self._signal)
            except ValueError:  # not the main thread (a garbage collection): the process is ending
                pass
            self._signal = None

    def abandon(self) -> None:
        """Stop writing after a failure or an interrupt: the report says UNFINISHED with the count,
        :func:`interrupted` says what is kept, and the folder is let go."""
        if self._lock is not None:
            self._mark_unfinished()
            self.note = _kept_note(self)
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_lock", None) is not None:
            self.close()

    # ---------------------------------------------------------------- finished parts

    def _part(self, key: str) -> Path:
        return self.parts / f"{key}.json"

    def load(self, key: str) -> Any | None:
        """A finished part saved by :meth:`save`, or None (not done, or unreadable: redone)."""
        path = self._part(key)
        if not self.resumed or not path.is_file() or path.is_symlink():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            return None

    def save(self, key: str, payload: Any) -> None:
        """Save a finished part (JSON-able; numpy scalars allowed) atomically."""
        atomic_write_text(self._part(key), json.dumps(payload, default=_json_default))
        self._mark_unfinished()


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _any_file(folder: Path, names: Iterable[str]) -> bool:
    return any((folder / name).is_file() for name in names)


def _refuse_link(parts: Path) -> None:
    """Refuse a parts folder that is a link or not a folder: nothing is written or removed
    outside the study's own folder."""
    if parts.is_symlink() or (parts.exists() and not parts.is_dir()):
        what = "a symbolic link" if parts.is_symlink() else "not a folder"
        raise InputError(
            f"is {what}: a study keeps its finished parts only in a folder of its own; "
            "remove it (or give another -o)",
            str(parts),
        )


def _interrupt(signum, frame) -> None:
    """SIGTERM as Ctrl-C: the study stops the same way, saying what it kept."""
    raise KeyboardInterrupt


def interrupted() -> str | None:
    """What the study this process runs kept when it was interrupted, and how to go on
    (None: no study was running); its report is marked UNFINISHED with the count."""
    folder = None if _current is None else _current()
    if folder is None:
        return None
    if folder._lock is None:  # let go by :meth:`StudyFolder.abandon`, which kept its note
        return getattr(folder, "note", None)
    folder._mark_unfinished()
    return _kept_note(folder)


def _kept_note(folder: StudyFolder) -> str:
    kept, of = folder.kept(), f" of {folder.total}" if folder.total else ""
    if not kept:
        return f"no {folder.units[:-1]} had finished; run the same command to start again"
    return (
        f"{kept}{of} {folder.units} finished and are kept in {folder.parts}; "
        "run the same command with --resume to go on"
    )


def _lock(folder: Path) -> int:
    """An exclusive lock on ``folder``, held while a study writes into it."""
    busy = "another relimpute run is writing a study into this folder; let it end first (or give another -o)"
    return lock_exclusive(os.open(folder, os.O_RDONLY), busy, str(folder))


def open_study(
    command: str, path, study: Mapping[str, Any], resume: bool, overwrite: bool = False, **options
) -> StudyFolder:
    """A command's :class:`StudyFolder` (``options``: ``units``, ``report``), saying on
    standard error what it found; until it finishes, SIGTERM stops it as Ctrl-C does and
    :func:`interrupted` tells what it kept."""
    global _current
    folder = StudyFolder(path, study, resume=resume, overwrite=overwrite, **options)
    kept, units = folder.kept(), folder.units
    if resume and folder.resumed:
        print(f"relimpute {command}: resuming the study in {path}: {kept} finished parts kept",
              file=sys.stderr)  # fmt: skip
    elif resume:
        print(f"relimpute {command}: nothing to resume in {path}: the study starts afresh",
              file=sys.stderr)  # fmt: skip
    elif folder.resumed and kept:
        print(f"relimpute {command}: the study in {path} is complete: running it again with the "
              f"{kept} finished {units} it kept", file=sys.stderr)  # fmt: skip
    elif folder.discarded:
        print(f"relimpute {command}: started afresh in {path} (--overwrite): the {folder.discarded} "
              f"finished {units} of the study there were dropped", file=sys.stderr)  # fmt: skip
    _current = weakref.ref(folder)
    if threading.current_thread() is threading.main_thread():
        folder._signal = signal.signal(signal.SIGTERM, _interrupt) or signal.SIG_DFL
    return folder


def _refuse_earlier(old: Mapping[str, Any], manifest: Path) -> None:
    """Refuse a study an earlier release wrote (manifest format 1): its parts are not this
    release's; it goes on with that release, or this one starts afresh with --overwrite."""
    complete = old["files"] and all((manifest.parent / f).is_file() for f in old["files"])
    what = "a complete study" if complete else "a study"
    raise InputError(
        f"this folder holds {what} written by relimpute 0.2 (an earlier study format, which "
        "this release does not resume): go on with it using that release and --resume, give "
        "another -o, or add --overwrite to start this study afresh here",
        str(manifest),
    )


def _differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between two studies' identities, option by option (empty: the same study)."""
    if old.get("command") != new.get("command"):
        return [f"a {old.get('command')} study, not a {new.get('command')} one"]
    a, b = (d.get("arguments") if isinstance(d.get("arguments"), dict) else {} for d in (old, new))
    differ = [_differs(k, a, b) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    differ += [_differs(k, old, new) for k in ("seed", "version") if old.get(k) != new.get(k)]
    if old.get("data") != new.get("data"):
        differ.append("other qrels or runs")
    if old.get("labels") != new.get("labels"):
        differ.append("other --llm-labels, or other labels in them")
    return differ


def _differs(key: str, old: Mapping[str, Any], new: Mapping[str, Any], width: int = 60) -> str:
    there, now = (repr(d.get(key)) for d in (old, new))
    if max(len(there), len(now)) > width:  # long values: shown from a little before they differ
        same = next((i for i, (x, y) in enumerate(zip(there, now)) if x != y), len(there))
        start = max(0, min(same, len(there), len(now)) - 10)
        there, now = (("..." if start else "") + t[start:] for t in (there, now))
    there, now = (t if len(t) <= width else t[: width - 3] + "..." for t in (there, now))
    return f"{key}: {there} there, {now} now"
