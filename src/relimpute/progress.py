"""Progress bars: tqdm on stderr, shown only when stderr is a terminal, never under :func:`quiet`.

Every long operation (fusion's posterior draws, Monte Carlo chunks,
calibration trials) goes through :func:`progress`; ``--quiet`` on the command
line, or ``with relimpute.progress.quiet():`` in Python, switches them all off.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

_quiet = False


def progress(
    iterable: Iterable, *, desc: str, total: int | None = None, unit: str = "it", delay: float = 0.0
):
    """``iterable`` wrapped in a transient tqdm bar (on a terminal, unless quiet), shown
    once ``delay`` seconds have passed (a step that is often quick stays silent)."""
    from tqdm.auto import tqdm

    # disable=None: tqdm shows the bar only when its output (stderr) is a terminal
    return tqdm(iterable, desc=desc, total=total, unit=unit, leave=False, delay=delay,
                disable=True if _quiet else None)  # fmt: skip


@contextmanager
def quiet(enabled: bool = True) -> Iterator[None]:
    """No progress bars inside the block (when ``enabled``)."""
    global _quiet
    before, _quiet = _quiet, _quiet or enabled
    try:
        yield
    finally:
        _quiet = before
