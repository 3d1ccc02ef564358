"""Writing files so that a failure never leaves a damaged or half-written one.

Every failure (no such directory, a directory in the way, permission, disk
full) becomes an :class:`~relimpute.errors.InputError` naming the path.
New files get the permissions the user's umask gives (like ``open``), a
replaced file keeps its own.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import io
import os
import re
import stat
import tempfile
from pathlib import Path

from .errors import InputError


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


#: how a file name may be long (bytes) on the usual file systems
NAME_MAX = 255


def check_output_path(path: str | os.PathLike, *, directory: bool = False) -> Path:
    """Refuse, before any work is done, an output path that cannot be written.

    A file path that is a directory (or ends in a separator), a directory path
    that is a file, a path below a file, a name longer than the file system
    allows, or a folder that is not writable raises :class:`InputError` naming it.
    """
    raw = os.fspath(path)
    path = Path(path)
    for part in path.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise InputError(f"a name in this path is longer than {NAME_MAX} bytes", str(path))
    if not directory and (path.is_dir() or raw.endswith((os.sep, "/"))):
        raise InputError("is a directory, not a file to write", raw)
    if directory and path.exists() and not path.is_dir():
        raise InputError("is a file, not a directory to write into", str(path))
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"cannot write below {parent}: it is not a directory", str(path))
            if not os.access(parent, os.W_OK | os.X_OK):
                raise InputError(f"cannot write into {parent}: permission denied", str(path))
            break
    return path


def output_directory(path: str | os.PathLike) -> Path:
    """Create (if needed) and return a directory to write into, or raise InputError naming it."""
    path = check_output_path(path, directory=True)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create directory: {_reason(exc)}", str(path)) from exc
    return path


def write_fully(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a short write is not an error)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def lock_exclusive(fd: int, busy: str, source: str) -> int:
    """Lock ``fd`` for this process without waiting and return it; if another process
    holds the lock, close ``fd`` and raise :class:`InputError` (``busy``, ``source``)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise InputError(busy, source) from None
    return fd


def new_file_mode() -> int:
    """The permission bits ``open`` gives a new file under the current umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


#: temporary files are ``.rlp-<target's digest>-<pid>-<random>.tmp``: short (a legal 255-byte
#: target name stays legal), and telling which target and which process they were for
_TEMP = re.compile(r"^\.rlp-(?P<target>[0-9a-f]{8})-(?P<pid>[0-9]+)-[a-z0-9_]+\.tmp$")


#: the temporaries of earlier releases: ``.NAME.`` and mkstemp's eight characters
_EARLIER = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")


def _target_tag(name: str) -> str:
    return hashlib.sha1(os.fsencode(name)).hexdigest()[:8]


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files killed writers left: those for the file ``path`` (beside
    it), or, when ``path`` is a folder, those for any file in it.

    Temporaries of this module whose process is gone, and those of earlier
    releases (``.NAME.XXXXXXXX.tmp``); returns what was removed.
    """
    path = Path(path)
    folder, name = (path, None) if path.is_dir() else (path.parent, path.name)
    tag = None if name is None else _target_tag(name)
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for entry in names:
        match = _TEMP.match(entry)
        ours = (
            match is not None
            and tag in (None, match["target"])
            and not _alive(int(match["pid"]))
        )
        earlier = _EARLIER.match(entry) is not None and (name is None or entry[1:-13] == name)
        if ours or earlier:
            try:
                os.unlink(folder / entry)
                removed.append(folder / entry)
            except OSError:
                pass
    return removed


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in its folder and an atomic rename.

    The only writer of files: a kill leaves the old file or the new one, never
    a part. Temporaries a killed writer left for ``path`` are removed first. If
    anything fails (disk full, permission, rename) the temporary is removed, an
    existing file at ``path`` is left untouched, and the failure is raised as
    :class:`InputError` naming ``path``.
    """
    path = check_output_path(path)
    tmp = None
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else new_file_mode()
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path)
        prefix = f".rlp-{_target_tag(path.name)}-{os.getpid()}-"
        handle, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
        try:
            os.fchmod(handle, mode)
            write_fully(handle, data)
            os.fsync(handle)
        finally:
            os.close(handle)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise InputError(f"cannot write file: {_reason(exc)}", str(path)) from exc
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8; a ``.gz`` path is gzip-compressed."""
    data = text.encode("utf-8")
    if Path(path).suffix == ".gz":
        try:
            data = gzip.compress(data, mtime=0)
        except OSError as exc:
            raise InputError(f"cannot write file: {_reason(exc)}", os.fspath(path)) from exc
    return atomic_write_bytes(path, data)


def write_table(frame, path: str | os.PathLike, **to_csv) -> Path:
    """A DataFrame's ``to_csv(**to_csv)`` text written atomically (``.gz`` compressed)."""
    return atomic_write_text(path, frame.to_csv(**to_csv))


#: figure formats :func:`save_figure` writes, by file suffix
FIGURE_FORMATS = ("png", "svg", "pdf")


def check_figure_path(path: str | os.PathLike) -> Path:
    """:func:`check_output_path` for a figure, whose suffix must name its format."""
    path = check_output_path(path)
    if path.suffix.lower().lstrip(".") not in FIGURE_FORMATS:
        raise InputError(
            "a figure needs a suffix naming its format: "
            + ", ".join("." + f for f in FIGURE_FORMATS),
            str(path),
        )
    return path


def save_figure(fig, path: str | os.PathLike, **savefig) -> Path:
    """Render a matplotlib figure in memory and write it with :func:`atomic_write_bytes`
    (the format is the path's suffix; no date nor random ids, so a rerun gives the same bytes)."""
    path = check_figure_path(path)
    kind = path.suffix.lower().lstrip(".")
    import matplotlib

    buffer = io.BytesIO()
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(kind)
    with matplotlib.rc_context({"svg.hashsalt": "relimpute"}):  # no random ids in an SVG
        fig.savefig(buffer, format=kind, metadata=metadata, **savefig)
    return atomic_write_bytes(path, buffer.getvalue())
