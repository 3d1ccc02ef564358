"""Progress bars: tqdm on stderr, shown only when stderr is a terminal, never under :func:`quiet`.

Every long operation (fusion's posterior draws, Monte Carlo chunks,
calibration trials) goes through :func:`progress`, and a step with nothing to
count (assembling the campaign, setting up a fit, writing a file) says what it
does with :func:`stage`; ``--quiet`` on the command line, or ``with
relimpute.progress.quiet():`` in Python, switches them all off.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

_quiet = False


def _tqdm():
    """tqdm's notebook bar under IPython (``tqdm.auto``), else its plain one: ``tqdm.auto``
    imports asyncio (a twentieth of a second) to give a terminal the plain bar anyway."""
    if "IPython" in sys.modules:
        from tqdm.auto import tqdm
    else:
        from tqdm.std import tqdm
    return tqdm


def progress(
    iterable: Iterable, *, desc: str, total: int | None = None, unit: str = "it", delay: float = 0.0
):
    """``iterable`` wrapped in a transient tqdm bar (on a terminal, unless quiet), shown
    once ``delay`` seconds have passed (a step that is often quick stays silent)."""
    tqdm = _tqdm()
    # disable=None: tqdm shows the bar only when its output (stderr) is a terminal
    return tqdm(iterable, desc=desc, total=total, unit=unit, leave=False, delay=delay,
                disable=True if _quiet else None)  # fmt: skip


@contextmanager
def stage(desc: str) -> Iterator[None]:
    """A transient line ``desc ...`` (on a terminal, unless quiet) while the block runs: shown
    at once, above the bars of the steps inside it, gone when the block ends. Nothing else
    should write to stderr inside the block (it would land on the same line)."""
    tqdm = _tqdm()
    bar = tqdm(total=None, desc=desc, bar_format="{desc} ...", leave=False,
               disable=True if _quiet else None)  # fmt: skip
    try:
        yield
    finally:
        bar.close()


@contextmanager
def quiet(enabled: bool = True) -> Iterator[None]:
    """No progress bars inside the block (when ``enabled``)."""
    global _quiet
    before, _quiet = _quiet, _quiet or enabled
    try:
        yield
    finally:
        _quiet = before
