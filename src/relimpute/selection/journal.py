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
never acknowledged: :meth:`Journal.open` drops it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError

ACTIONS = ("start", "judge", "skip", "undo")
VERSION = 1


@dataclass(frozen=True, slots=True)
class Action:
    """One effective judgment (``relevance`` set) or skip (``relevance`` None)."""

    query_id: str
    doc_id: str
    relevance: int | None
    line: int


class Journal:
    """Append-only JSONL journal at ``path``.

    Use :meth:`open`, which creates the file with a header or checks the
    header of an existing one.

    Attributes
    ----------
    path
        The journal file.
    header
        The ``start`` record's settings.
    records
        Every record read or written, in order.
    """

    def __init__(self, path: str | os.PathLike, header: Mapping[str, Any], records: list[dict]):
        self.path = Path(path)
        self.header = dict(header)
        self.records = records

    @classmethod
    def open(
        cls, path: str | os.PathLike, settings: Mapping[str, Any], *, check: tuple[str, ...] = ()
    ) -> Journal:
        """Open (resume) or create a journal.

        ``settings`` go into the header of a new journal; for an existing one
        the keys in ``check`` must equal the header's (else InputError).
        """
        path = Path(path)
        if path.exists() and path.stat().st_size > 0:
            records = read_records(path, repair=True)
            header = records[0]
            for key in check:
                if _normal(header.get(key)) != _normal(settings.get(key)):
                    raise InputError(
                        f"journal was started with {key}={header.get(key)!r}, not {settings.get(key)!r}; "
                        "use another --journal for different settings",
                        str(path),
                        1,
                    )
            return cls(path, header, records)
        header = {"action": "start", "version": VERSION, **settings}
        journal = cls(path, header, [])
        journal.append(header)
        return journal

    def append(self, record: Mapping[str, Any]) -> dict:
        """Write one record as a line, flushed and fsynced, and keep it."""
        record = dict(record)
        if record.get("action") not in ACTIONS:
            raise ValueError(f"unknown journal action {record.get('action')!r}")
        record.setdefault("time", round(time.time(), 3))
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(line)
            out.flush()
            os.fsync(out.fileno())
        self.records.append(record)
        return record

    def judge(self, query_id: str, doc_id: str, relevance: int) -> dict:
        return self.append(
            {"action": "judge", "query_id": query_id, "doc_id": doc_id, "relevance": int(relevance)}
        )

    def skip(self, query_id: str, doc_id: str) -> dict:
        return self.append({"action": "skip", "query_id": query_id, "doc_id": doc_id})

    def undo(self) -> dict:
        return self.append({"action": "undo"})

    def actions(self) -> list[Action]:
        """The effective judgments and skips, in order (undos applied)."""
        return effective_actions(self.records)

    def judgments(self) -> pd.DataFrame:
        """The effective judgments as qrels (``query_id, doc_id, relevance``)."""
        rows = [
            (a.query_id, a.doc_id, a.relevance) for a in self.actions() if a.relevance is not None
        ]
        return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]).astype(
            {"relevance": int}
        )


def read_records(path: str | os.PathLike, *, repair: bool = False) -> list[dict]:
    """Parse a journal; an incomplete last line is dropped (and, with
    ``repair``, cut from the file so that appends stay line-aligned)."""
    path = Path(path)
    data = path.read_bytes()
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
        if last:  # valid JSON without its newline: also a cut-short write
            complete = len(data) - len(raw)
            break
        if not isinstance(record, dict) or record.get("action") not in ACTIONS:
            raise InputError(f"unknown journal action {record!r}", str(path), number)
        record["_line"] = number
        records.append(record)
    if not records or records[0]["action"] != "start":
        raise InputError("a journal starts with a 'start' record", str(path), 1)
    if repair and complete < len(data):
        with open(path, "r+b") as out:
            out.truncate(complete)
            out.flush()
            os.fsync(out.fileno())
    return records


def effective_actions(records: list[dict]) -> list[Action]:
    """Replay judge/skip/undo records into the actions still in force."""
    stack: list[Action] = []
    for record in records:
        kind = record["action"]
        line = int(record.get("_line", 0))
        if kind in ("judge", "skip"):
            try:
                relevance = int(record["relevance"]) if kind == "judge" else None
                stack.append(
                    Action(str(record["query_id"]), str(record["doc_id"]), relevance, line)
                )
            except (KeyError, TypeError, ValueError):
                raise InputError(f"incomplete {kind} record", None, line) from None
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
