"""Reading input files safely, and writing files so that a failure never leaves a damaged
or half-written one.

:func:`read_input` is the one way every reader opens a user's file: a FIFO,
socket, device or directory is refused at once (never waited on), a missing
file, a symbolic-link loop or a permission problem becomes an
:class:`~relimpute.errors.InputError` naming the path (with a hint when the
name differs from an existing file only by ``.gz``). :func:`read_input_table`
reads a TSV/CSV table through it.

For writing, every failure (no such directory, a directory in the way, permission, disk
full) becomes an :class:`~relimpute.errors.InputError` naming the path.
New files get the permissions the user's umask gives (like ``open``), a
replaced file keeps its own.
"""

from __future__ import annotations

import errno
import gzip
import os
import re
import stat
import tempfile
from pathlib import Path

from .errors import InputError


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file is, in words (None: a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _missing_hint(path: str) -> str:
    """`` (did you mean X?)`` when ``path`` without or with ``.gz`` exists, else ``""``."""
    other = path[:-3] if path.endswith(".gz") else path + ".gz"
    return f" (did you mean {other}?)" if other != path and os.path.isfile(other) else ""


def refuse_special_file(fd: int | str, source: str, what: str = "file") -> None:
    """Raise InputError naming ``source`` unless ``fd`` (an open descriptor, or a path that
    exists) is a regular file; OSError of ``os.stat`` goes to the caller."""
    kind = _kind(os.fstat(fd).st_mode if isinstance(fd, int) else os.stat(fd).st_mode)
    if kind is not None:
        raise InputError(f"is {kind}, not a regular file (give the path of a {what})", source)


def read_input(path: str | os.PathLike, what: str = "file") -> bytes:
    """All the bytes of the regular file ``path``; anything else raises InputError naming it.

    A FIFO, socket, device or directory is refused before it is opened for
    reading (a FIFO would block), and checked again on the opened descriptor,
    which is opened non-blocking so a path swapped for a FIFO cannot hang.
    ``what`` names the file in messages (``"--docs file"``, ``"groups table"``).
    """
    source = os.fspath(path)
    try:
        refuse_special_file(source, source, what)  # a socket cannot even be opened
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            refuse_special_file(fd, source, what)
            os.set_blocking(fd, True)
            with os.fdopen(fd, "rb", closefd=False) as handle:
                return handle.read()
        finally:
            os.close(fd)
    except FileNotFoundError as exc:
        hint = _missing_hint(source)
        raise InputError(f"cannot read {what}: {_reason(exc)}{hint}", source) from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"cannot read {what}: a loop of symbolic links", source) from exc
        raise InputError(f"cannot read {what}: {_reason(exc)}", source) from exc


def read_input_table(path: str | os.PathLike, what: str = "table", **options):
    """A tab-separated table (header line first) read with pandas through :func:`read_input`.

    Fields are split at every tab (no quoting), and every line must have as
    many as the header line: pandas would otherwise shift a longer row's
    values into the wrong columns without a word. An empty file, text that is
    not UTF-8 or a row of the wrong length raise InputError naming the file
    and the line; a header without rows comes back as an empty frame, for the
    caller to judge. ``frame.attrs["lines"]`` holds the file line of every row.
    """
    import csv
    import io

    import pandas as pd

    source = os.fspath(path)
    data = read_input(source, what)
    if not data.strip():
        raise InputError(f"{what} is empty", source)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"{what} is not UTF-8 text (byte {exc.start})", source, line) from None
    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    width, rows = None, []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line:  # pandas skips empty lines (a line of blanks is a row)
            continue
        fields = line.count(b"\t") + 1
        if width is None:
            width = fields
            continue
        rows.append(number)
        if fields != width:
            raise InputError(
                f"{what}: expected {width} tab-separated fields (as the header line), found "
                f"{fields}",
                source,
                number,
            )
    try:
        frame = pd.read_csv(io.BytesIO(data), sep="\t", quoting=csv.QUOTE_NONE, **options)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        problem = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read {what}: {problem}", source, line) from None
    frame.attrs["lines"] = rows  # the file line of every row, for messages
    return frame


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
