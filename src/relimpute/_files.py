"""Writing files so that a failure never leaves a damaged or half-written one.

Every failure (no such directory, a directory in the way, permission, disk
full) becomes an :class:`~relimpute.errors.InputError` naming the path.
New files get the permissions the user's umask gives (like ``open``), a
replaced file keeps its own.
"""

from __future__ import annotations

import gzip
import os
import stat
import tempfile
from pathlib import Path

from .errors import InputError


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def check_output_path(path: str | os.PathLike, *, directory: bool = False) -> Path:
    """Refuse, before any work is done, an output path that cannot be written.

    A file path that is a directory, a directory path that is a file, or a
    path below a file raises :class:`InputError` naming it.
    """
    path = Path(path)
    if not directory and path.is_dir():
        raise InputError("is a directory, not a file to write", str(path))
    if directory and path.exists() and not path.is_dir():
        raise InputError("is a file, not a directory to write into", str(path))
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"cannot write below {parent}: it is not a directory", str(path))
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


def new_file_mode() -> int:
    """The permission bits ``open`` gives a new file under the current umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and an atomic rename.

    A ``.gz`` path is gzip-compressed. If anything fails (encoding,
    compression, disk full, rename) the temporary file is removed, an
    existing file at ``path`` is left untouched, and an OS failure is
    reported as :class:`InputError` naming ``path``.
    """
    path = check_output_path(path)
    tmp = None
    try:
        data = text.encode("utf-8")
        if path.suffix == ".gz":
            data = gzip.compress(data, mtime=0)
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else new_file_mode()
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
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
