"""An append-only journal of a judging session, so that no judgment is ever lost.

One JSON object per line, one line per action: a ``start`` header (the
session's settings), then ``judge`` (``query_id, doc_id, relevance``),
``skip`` (``query_id, doc_id``) and ``undo`` (takes back the latest
judgment or skip not yet taken back). Each line is flushed and fsynced
before the caller goes on, so a session killed at any moment has on disk
every action it acknowledged. Replaying the journal gives the effective
actions in order; re-applying them to a fresh
:class:`relimpute.selection.loop.SelectionSession` rebuilds exactly the
state the session had, because the loop is deterministic.

A last line cut short by a kill during the write (no newline, not JSON) was
never acknowledged: :meth:`Journal.open` drops it. A last line that is
complete JSON and lacks only its newline is kept (the newline is added).

Judgments are stored on the collection's grade scale, recorded in the
header as ``scale: [0, top]`` with the ``rel_threshold`` that reads them;
a label outside the scale is refused on writing and on reading. While a
session has a journal open it holds an advisory lock on it (``flock``), so a
second session on the same journal stops with an error instead of
interleaving its judgments.

A journal judging a sample (``relimpute judge --design``) holds in its start record the
``design`` (:mod:`.designs`) and the drawn ``sample`` table, so that resuming asks the same
documents in the same order and an export knows each document's stratum and π.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .._files import lock_exclusive, new_file_mode, read_input, refuse_special_file, write_fully
from ..errors import InputError

ACTIONS = ("start", "judge", "skip", "undo")
_BLANK = re.compile(r"[ \t\n\r\x0b\x0c]")  # what splits qrels fields
#: 3: the seed of the model strategies' fits is recorded (judge's default became the default
#: model's answer); 4: a journal may judge a sample, its ``design`` and drawn ``sample`` in
#: the header. An older journal takes the settings it lacks from the resuming session
VERSION = 4
#: Grades a journal without a recorded ``scale`` may hold (the qrels readers' highest).
FALLBACK_SCALE = (0, 10)
#: The grades the qrels readers take (:data:`relimpute.io.DEFAULT_GRADE_RANGE`): a journal's
#: scale must lie within them, so that its exported qrels read back.
GRADE_LIMITS = (-2, 10)


@dataclass(frozen=True, slots=True)
class Action:
    """One effective judgment (``relevance`` set) or skip (``relevance`` None)."""

    query_id: str
    doc_id: str
    relevance: int | None
    line: int


class Journal:
    """Append-only JSONL journal at ``path``.

    Use :meth:`open` to write (it creates the file with a header, or checks
    the header of an existing one, and locks it; :meth:`close` or a ``with``
    block releases it) and :meth:`read` to only read.

    Attributes
    ----------
    path
        The journal file.
    header
        The ``start`` record's settings.
    records
        Every record read or written, in order.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        header: Mapping[str, Any],
        records: list[dict],
        fd: int | None = None,
    ):
        self.path = Path(path)
        self.header = dict(header)
        self.records = records
        self._fd = fd

    @property
    def scale(self) -> tuple[int, int]:
        """Lowest and highest grade a judgment may have."""
        low, high = self.header.get("scale") or FALLBACK_SCALE
        return int(low), int(high)

    @classmethod
    def read(cls, path: str | os.PathLike) -> Journal:
        """A journal to read only (no lock, no repair)."""
        path = Path(path)
        records = read_records(path)
        return cls(path, records[0], records)

    @classmethod
    def open(
        cls, path: str | os.PathLike, settings: Mapping[str, Any], *, check: tuple[str, ...] = ()
    ) -> Journal:
        """Open (resume) or create a journal, and lock it.

        ``settings`` go into the header of a new journal; for an existing one
        the keys in ``check`` must equal the header's (else InputError).
        Another process holding the journal is an InputError too.
        """
        path = Path(path)
        fd = _open_locked(path)
        try:
            if os.fstat(fd).st_size > 0:
                records = read_records(path, repair=fd)
                header = records[0]
                if int(header.get("version", 1)) < VERSION:
                    # an older release's journal: the settings it did not record (the qrels'
                    # digest, the grade scale) are taken from this session, not compared
                    added = {k: v for k, v in settings.items() if k not in header}
                    header = records[0] = {**header, **added}
                for key in check:
                    if _normal(header.get(key)) != _normal(settings.get(key)):
                        raise InputError(
                            f"journal was started with {key}={header.get(key)!r}, not "
                            f"{settings.get(key)!r}; use another --journal for different settings",
                            str(path),
                            1,
                        )
                return cls(path, header, records, fd)
            header = {"action": "start", "version": VERSION, **settings}
            journal = cls(path, header, [], fd)
            journal.append(header)
            return journal
        except BaseException:
            os.close(fd)
            raise

    def close(self) -> None:
        """Release the lock (closing the file)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def append(self, record: Mapping[str, Any]) -> dict:
        """Write one record as a line, fsynced, and keep it.

        A failed write (disk full, ...) is taken back from the file and
        raised as an InputError: the action was not saved.
        """
        record = dict(record)
        if record.get("action") not in ACTIONS:
            raise ValueError(f"unknown journal action {record.get('action')!r}")
        if self._fd is None:
            raise ValueError(f"journal {self.path} is open for reading only")
        record.setdefault("time", round(time.time(), 3))
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        size = os.fstat(self._fd).st_size
        try:
            write_fully(self._fd, line.encode("utf-8"))
            os.fsync(self._fd)
        except OSError as exc:
            try:
                os.ftruncate(self._fd, size)
            except OSError:
                pass  # the reader drops a cut-short last line anyway
            raise InputError(
                f"cannot write the journal ({exc.strerror or exc}); the last action was not saved",
                str(self.path),
            ) from exc
        record["_line"] = (self.records[-1]["_line"] if self.records else 0) + 1
        self.records.append(record)
        return record

    def judge(self, query_id: str, doc_id: str, relevance: int) -> dict:
        low, high = self.scale
        if not low <= int(relevance) <= high:
            raise ValueError(f"grade {relevance} is outside the journal's scale [{low}, {high}]")
        return self.append(
            {"action": "judge", "query_id": query_id, "doc_id": doc_id, "relevance": int(relevance)}
        )

    def skip(self, query_id: str, doc_id: str) -> dict:
        return self.append({"action": "skip", "query_id": query_id, "doc_id": doc_id})

    def undo(self) -> dict:
        return self.append({"action": "undo"})

    def actions(self) -> list[Action]:
        """The effective judgments and skips, in order (undos applied)."""
        return effective_actions(self.records, str(self.path), self.scale)

    def judgments(self) -> pd.DataFrame:
        """The effective judgments as qrels (``query_id, doc_id, relevance``).

        A document judged twice (both in force: a hand-edited journal) is kept
        once when the grades agree and is an InputError naming both lines when
        they do not, as the qrels readers treat conflicting lines.
        """
        rows, first = [], {}
        for a in self.actions():
            if a.relevance is None:
                continue
            key = (a.query_id, a.doc_id)
            if key in first:
                earlier = first[key]
                if earlier.relevance != a.relevance:
                    raise InputError(
                        f"document {a.doc_id!r} of topic {a.query_id!r} is judged "
                        f"{a.relevance} here and {earlier.relevance} on line {earlier.line}; "
                        "undo one of them",
                        str(self.path),
                        a.line,
                    )
                continue
            first[key] = a
            rows.append((a.query_id, a.doc_id, a.relevance))
        return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]).astype(
            {"relevance": int}
        )


def _open_locked(path: Path) -> int:
    """A read-write append descriptor of ``path`` (created if needed) under an exclusive lock."""
    if path.is_dir():
        raise InputError("is a directory, not a journal file", str(path))
    if os.path.exists(path):
        refuse_special_file(str(path), str(path), "journal")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(
            path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK, new_file_mode()
        )
    except OSError as exc:
        raise InputError(f"cannot open the journal: {exc.strerror or exc}", str(path)) from exc
    try:
        refuse_special_file(fd, str(path), "journal")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    busy = "journal is in use by another relimpute judge session; quit that one first (or give another --journal)"
    return lock_exclusive(fd, busy, str(path))


def read_records(path: str | os.PathLike, *, repair: int | None = None) -> list[dict]:
    """Parse a journal.

    A last line cut short (not JSON) is dropped; a last line that is
    complete JSON without its newline is kept. With ``repair`` (the journal's
    open descriptor) the file is mended to match: the cut-short line
    removed or the newline added, so that appends stay line-aligned.
    """
    data = read_input(path, "journal")
    lines = data.split(b"\n")
    records = []
    complete = len(data)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        last = number == len(lines)
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            if last:  # written partly when the session was killed
                complete = len(data) - len(raw)
                break
            raise InputError("not a JSON journal line", str(path), number) from None
        if not isinstance(record, dict) or record.get("action") not in ACTIONS:
            raise InputError(f"unknown journal action {record!r}", str(path), number)
        record["_line"] = number
        records.append(record)
    if not records or records[0]["action"] != "start":
        raise InputError("a journal starts with a 'start' record", str(path), 1)
    _check_header(records[0], str(path))
    if repair is not None and complete < len(data):
        os.ftruncate(repair, complete)
        os.fsync(repair)
    elif repair is not None and not data.endswith(b"\n"):
        write_fully(repair, b"\n")
        os.fsync(repair)
    return records


def _check_header(header: dict, source: str) -> None:
    """Refuse a start record this release cannot read: a newer version, or a grade scale
    the qrels readers would refuse (so every journal exports qrels ``evaluate`` reads)."""
    version = header.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(f"journal version {version!r} is not a positive integer", source, 1)
    if version > VERSION:
        raise InputError(
            f"journal version {version} was written by a newer relimpute (this one reads up to "
            f"version {VERSION}); upgrade relimpute to resume or export it",
            source,
            1,
        )
    if header.get("design") is not None:
        _check_sample(header, source)
    scale = header.get("scale")
    if scale is None:
        return
    low, high = GRADE_LIMITS
    if (
        not isinstance(scale, list)
        or len(scale) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in scale)
        or not low <= scale[0] <= scale[1] <= high
    ):
        raise InputError(
            f"scale {scale!r} is not [lowest, highest] grade within [{low}, {high}]", source, 1
        )


def _check_sample(header: dict, source: str) -> None:
    """A sample journal's header must hold a design this release knows and its drawn sample."""
    from .designs import design_from_spec, sample_from_record

    try:
        design_from_spec(header["design"])
        sample_from_record(header["sample"])
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise InputError(f"the sample design or its drawn sample is malformed ({exc})", source,
                         1) from None


def effective_actions(
    records: list[dict], source: str | None = None, scale: tuple[int, int] = FALLBACK_SCALE
) -> list[Action]:
    """Replay judge/skip/undo records into the actions still in force.

    A judge record without an integer grade within ``scale`` is an
    InputError naming ``source`` (the journal) and the line.
    """
    stack: list[Action] = []
    low, high = scale
    for record in records:
        kind = record["action"]
        line = int(record.get("_line", 0))
        if kind in ("judge", "skip"):
            try:
                query_id, doc_id = str(record["query_id"]), str(record["doc_id"])
                relevance = record["relevance"] if kind == "judge" else None
            except KeyError:
                raise InputError(f"incomplete {kind} record", source, line) from None
            for what, value in (("query_id", query_id), ("doc_id", doc_id)):
                if not value or _BLANK.search(value):  # qrels could not hold it
                    raise InputError(f"{what} {value!r} is empty or holds a blank", source, line)
            if kind == "judge" and (
                not isinstance(relevance, int)
                or isinstance(relevance, bool)
                or not low <= relevance <= high
            ):
                raise InputError(
                    f"grade {relevance!r} is not on the journal's scale {low}..{high}",
                    source,
                    line,
                )
            stack.append(Action(query_id, doc_id, relevance, line))
        elif kind == "undo" and stack:
            stack.pop()
    return stack


def export_qrels(initial: pd.DataFrame, judgments: pd.DataFrame) -> pd.DataFrame:
    """Initial qrels plus the session's judgments (a new label replaces an old one)."""
    new_keys = set(zip(judgments["query_id"].astype(str), judgments["doc_id"].astype(str)))
    old = initial[
        [(str(q), str(d)) not in new_keys for q, d in zip(initial["query_id"], initial["doc_id"])]
    ]
    frame = pd.concat(
        [old[["query_id", "doc_id", "relevance"]], judgments[["query_id", "doc_id", "relevance"]]],
        ignore_index=True,
    )
    return frame.astype({"query_id": str, "doc_id": str, "relevance": int})


def _normal(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
