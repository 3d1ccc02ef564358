"""Will the files fit? The memory that reading a campaign takes, checked before reading it.

Reading qrels and runs holds the parsed columns and the aligned campaign at once; fitting the
default model adds its posterior draws. The peak of each is a multiple of the files' size
(:data:`READ_BYTES_PER_INPUT_BYTE`, :data:`FIT_BYTES_PER_INPUT_BYTE`, bounds of what
``benchmarks/bench_campaign_size.py`` measured). A campaign that would not fit fails at once,
with the size it needs, rather than after an hour of swapping.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..errors import InputError

#: Peak resident memory of reading a campaign, per byte of its files (with a margin).
READ_BYTES_PER_INPUT_BYTE = 1.5
#: Peak resident memory of fitting the default model and writing its draws, per byte of files.
FIT_BYTES_PER_INPUT_BYTE = 9.0
#: Overrides the memory this machine offers, e.g. ``8G`` or ``500M`` (a cluster worker's limit).
LIMIT_VARIABLE = "RELIMPUTE_MEMORY_LIMIT"
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_size(text: str) -> int:
    """Bytes in ``8G``, ``500M``, ``1.5T`` or a plain number (powers of 1024)."""
    value = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = value[-1] if value and value[-1] in _UNITS else ""
    try:
        number = float(value[: len(value) - len(unit)])
    except ValueError:
        raise InputError(f"{LIMIT_VARIABLE}={text!r} is not a size (say 8G or 500M)") from None
    if number <= 0:
        raise InputError(f"{LIMIT_VARIABLE}={text!r} must be positive")
    return int(number * _UNITS[unit])


def available_bytes() -> int | None:
    """Memory a new allocation can take: :data:`LIMIT_VARIABLE`, else Linux's MemAvailable,
    else free physical pages; None when the platform does not say."""
    limit = os.environ.get(LIMIT_VARIABLE)
    if limit:
        return parse_size(limit)
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def human(size: float) -> str:
    """``1.3 GB`` style (powers of 1024, as ``free -h``)."""
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"


def check_fits(
    paths: Iterable[str | os.PathLike],
    per_input_byte: float = READ_BYTES_PER_INPUT_BYTE,
    source: str | None = None,
) -> None:
    """Raise :class:`InputError` when working on ``paths`` would take more memory than is free
    (``per_input_byte`` times their size: reading, or fitting a model); ``source`` names the
    files in the message (default: the first path)."""
    paths = [Path(p) for p in paths]
    size = sum(p.stat().st_size for p in paths if p.is_file())
    what = f"these {len(paths)} files ({human(size)}) need"
    _refuse_beyond(size * per_input_byte, what, "work on fewer topics or runs at once",
                   source or str(paths[0]))  # fmt: skip


#: Copies of a dense (parameters × parameters) matrix a dense Laplace fit holds at its peak (prior
#: precision, curvature, its factor, the covariance and the draws' factor; measured at 1,000 and
#: 3,000 simulated topics, where the fit's peak grew by about this many copies). The default
#: model's fit is dense only up to ``relevance.arrowhead.DENSE_LIMIT`` parameters (32 MB a
#: copy); beyond, it never forms one.
DENSE_COPIES = 10


def checked_square(n: int, what: str, copies: int = DENSE_COPIES) -> np.ndarray:
    """An ``(n, n)`` float64 zero matrix, after checking that ``copies`` of it fit in memory;
    else :class:`InputError` naming ``what`` needs it and how much (a dense matrix over many
    topics, one parameter per topic, fails here at once)."""
    need = copies * 8 * n * n
    what = f"{what} needs ({copies} dense {n:,} x {n:,} matrices)"
    _refuse_beyond(need, what, "fit on fewer topics at once, or use the model's structured precision_")
    return np.zeros((n, n))


def _refuse_beyond(need: float, what: str, advice: str, source: str | None = None) -> None:
    """Raise :class:`InputError` when ``need`` bytes are more than :func:`available_bytes`."""
    free = available_bytes()
    if free is None or need <= free:
        return
    where = f"{LIMIT_VARIABLE} allows" if os.environ.get(LIMIT_VARIABLE) else "is available"
    raise InputError(
        f"{what} about {human(need)} of memory and {human(free)} {where}; {advice} (the docs' "
        f"'At scale' page says how), or set {LIMIT_VARIABLE} if this machine can give more",
        source,
    )
