"""Reading input files safely, and writing files so that a failure never leaves a damaged
or half-written one.

:func:`read_input` is the one way every reader opens a user's file: a FIFO,
socket, device or directory is refused at once (never waited on), a missing
file, a symbolic-link loop or a permission problem becomes an
:class:`~relimpute.errors.InputError` naming the path (with a hint when the
name differs from an existing file only by ``.gz``). :func:`read_input_table`
reads a TSV/CSV table through it, :func:`read_bytes` a text file, plain or gzip.

For writing, every failure (no such directory, a directory in the way, permission, disk
full) becomes an :class:`~relimpute.errors.InputError` naming the path.
New files get the permissions the user's umask gives (like ``open``), a
replaced file keeps its own.
"""

from __future__ import annotations

import errno
import fcntl
import io
import os
import re
import stat
import tempfile
import zlib
from collections.abc import Callable, Iterable
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


def read_bytes(path: str | os.PathLike) -> bytes:
    """Bytes of a plain or gzip file, BOM stripped and line endings made LF."""
    source = str(path)
    raw = read_input(path)
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(raw, source)
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if not raw or raw.isspace():  # (not raw.strip(): that copies the file)
        raise InputError("file is empty", source)
    return raw


def _gunzip(raw: bytes, source: str) -> bytes:
    """The data of every gzip member of ``raw``, as :func:`gzip.decompress` reads them (NUL
    padding between members allowed), with zlib checking each member's CRC and length as it
    inflates (gzip's own pass over the output for the CRC costs a tenth of the time)."""
    members = []
    while raw:
        inflate = zlib.decompressobj(wbits=31)  # 16 + 15: a gzip header and trailer
        try:
            members.append(inflate.decompress(raw))
        except zlib.error as exc:
            raise InputError(f"unreadable or truncated gzip data ({exc})", source) from exc
        if not inflate.eof:
            raise InputError(
                "unreadable or truncated gzip data (the file ends inside its compressed data)",
                source,
            )
        raw = inflate.unused_data.lstrip(b"\x00")
    return members[0] if len(members) == 1 else b"".join(members)


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
    import hashlib  # here: loading OpenSSL is start-up time for every command that reads

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
    return _write_atomically(path, lambda handle: write_fully(handle, data))


def atomic_write_chunks(path: str | os.PathLike, chunks: Iterable[str]) -> Path:
    """:func:`atomic_write_bytes` of the text ``chunks`` joined, in UTF-8 (gzip-compressed
    for a ``.gz`` path, the bytes ``gzip.compress(..., mtime=0)`` gives), written as they
    come: one chunk is in memory at a time. An error raised by ``chunks`` removes the
    temporary and leaves ``path`` untouched, as a failed write does."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31) if Path(path).suffix == ".gz" else None

    def write(handle: int) -> None:
        for chunk in chunks:
            data = chunk.encode("utf-8")
            write_fully(handle, packer.compress(data) if packer else data)
        if packer:
            write_fully(handle, packer.flush())

    return _write_atomically(path, write)


def atomic_write_stream(path: str | os.PathLike, write: Callable[[io.BufferedWriter], None]) -> Path:
    """:func:`atomic_write_bytes` of what ``write(stream)`` writes to a seekable binary stream
    (a zip archive, a numpy file written piece by piece): nothing is held in memory whole."""

    def to_stream(handle: int) -> None:
        with os.fdopen(handle, "wb", closefd=False) as stream:
            write(stream)

    return _write_atomically(path, to_stream)


def _write_atomically(path: str | os.PathLike, write: Callable[[int], None]) -> Path:
    """``write(fd)`` into a temporary beside ``path``, then renamed over it
    (:func:`atomic_write_bytes` says what a failure leaves)."""
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
            write(handle)
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
    return atomic_write_chunks(path, (text,))


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


def save_figure(fig, path: str | os.PathLike, *, colors: int | None = None, **savefig) -> Path:
    """Render a matplotlib figure in memory and write it with :func:`atomic_write_bytes`
    (the format is the path's suffix; no date nor random ids, so a rerun gives the same bytes).
    ``colors``: a PNG is written with a palette of at most that many colours (a plot's few
    colours and their anti-aliasing fit in 256: a third of the bytes)."""
    path = check_figure_path(path)
    kind = path.suffix.lower().lstrip(".")
    import matplotlib

    buffer = io.BytesIO()
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(kind)
    with matplotlib.rc_context({"svg.hashsalt": "relimpute"}):  # no random ids in an SVG
        fig.savefig(buffer, format=kind, metadata=metadata, **savefig)
    if colors is not None and kind == "png":
        from PIL import Image

        image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
        buffer = io.BytesIO()
        image.quantize(colors=colors, method=Image.Quantize.MEDIANCUT).save(buffer, format="png", optimize=True)
    return atomic_write_bytes(path, buffer.getvalue())
