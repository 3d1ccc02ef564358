"""Progress bars: tqdm on stderr, shown only when stderr is a terminal, never under :func:`quiet`.

Every long operation (fusion's posterior draws, Monte Carlo chunks,
calibration trials) goes through :func:`progress`, and a step with nothing to
count (assembling the campaign, setting up a fit, writing a file) says what it
does with :func:`stage`; ``--quiet`` on the command line, or ``with
relimpute.progress.quiet():`` in Python, switches them all off. A study's units
(``progress(..., lines=True)``) also print plain lines when stderr is a file or
a pipe (a batch job's log): ``calibration trials: 20/200 done, 1m12s, about 10m48s left``,
about every tenth of the study or every minute, none in its first seconds.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

_quiet = False
#: a study's progress lines: none before this many seconds, then at least one a minute
LINES_AFTER, LINES_EVERY = 5.0, 60.0


def _tqdm():
    """tqdm's notebook bar under IPython (``tqdm.auto``), else its plain one: ``tqdm.auto``
    imports asyncio (a twentieth of a second) to give a terminal the plain bar anyway."""
    if "IPython" in sys.modules:
        from tqdm.auto import tqdm
    else:
        from tqdm.std import tqdm
    return tqdm


def progress(
    iterable: Iterable,
    *,
    desc: str,
    total: int | None = None,
    unit: str = "it",
    delay: float = 0.0,
    lines: bool = False,
    initial: int = 0,
):
    """``iterable`` wrapped in a transient tqdm bar (on a terminal, unless quiet), shown
    once ``delay`` seconds have passed (a step that is often quick stays silent), counting
    from ``initial``; with ``lines``, plain progress lines instead when stderr is not a
    terminal (:func:`progress_lines`)."""
    if lines and total and not _quiet and not _terminal(sys.stderr):
        return progress_lines(iterable, desc=desc, total=total, stream=sys.stderr, initial=initial)
    if iterable is not None and (_quiet or not _terminal(sys.stderr)):
        return _Unshown(iterable)  # no bar would show: tqdm not imported (0.05 s CPU)
    tqdm = _tqdm()
    # disable=None: tqdm shows the bar only when its output (stderr) is a terminal
    return tqdm(iterable, desc=desc, total=total, unit=unit, leave=False, delay=delay,
                initial=initial, disable=True if _quiet else None)  # fmt: skip


class _Unshown:
    """A disabled bar over an iterable, as tqdm's (iterate it, use it in ``with``, close it)
    without importing tqdm."""

    def __init__(self, iterable: Iterable) -> None:
        self.iterable = iterable

    def __iter__(self) -> Iterator:
        return iter(self.iterable)

    def __enter__(self) -> _Unshown:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to clear."""


def _terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # None, or closed
        return False


def progress_lines(
    iterable: Iterable, *, desc: str, total: int, stream, initial: int = 0, clock=time.monotonic
) -> Iterator:
    """``iterable``, writing ``DESC: DONE/TOTAL done, ELAPSED, about LEFT left`` to ``stream``
    as items arrive (``initial`` done before): at each tenth of ``total`` and at least every
    :data:`LINES_EVERY` seconds, none in the first :data:`LINES_AFTER` seconds (a short study
    says nothing)."""
    start = last = clock()
    step, done = max(1, -(-total // 10)), initial
    shown = done
    for item in iterable:
        done += 1
        now = clock()
        due = done // step > shown // step or now - last >= LINES_EVERY or done == total
        if due and now - start >= LINES_AFTER:
            left = (now - start) / (done - initial) * (total - done)
            rest = f", about {_duration(left)} left" if done < total else ""
            print(f"{desc}: {done}/{total} done, {_duration(now - start)}{rest}", file=stream, flush=True)
            last, shown = now, done
        yield item


def _duration(seconds: float) -> str:
    """``45s``, ``12m03s``, ``2h05m``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


@contextmanager
def stage(desc: str) -> Iterator[None]:
    """A transient line ``desc ...`` (on a terminal, unless quiet) while the block runs: shown
    at once, above the bars of the steps inside it, gone when the block ends. Nothing else
    should write to stderr inside the block (it would land on the same line)."""
    if _quiet or not _terminal(sys.stderr):  # nothing to show: tqdm not imported
        yield
        return
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
