"""The process tuning a command runs under, set by :func:`tuned` (and :func:`untranslated`
while it parses) and undone when it returns.

``main`` may run inside a Python session (a notebook, a test): whatever it changes in the
process for speed (BLAS threads, the garbage collector's threshold, argparse's gettext) is put
back afterwards.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager

#: the environment variables that set how many threads a BLAS library starts (OpenBLAS, as
#: numpy's and scipy's wheels ship it; MKL); each library reads its own once, when it loads
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@contextmanager
def tuned():
    """One BLAS thread, fewer garbage collections, objects frozen at exit: the environment
    and the collector's threshold are restored on the way out (the freeze registers once)."""
    _no_collection_at_exit()
    with _one_blas_thread(), _fewer_collections():
        yield


@contextmanager
def untranslated():
    """argparse's own messages as written (English, as relimpute's), not looked up by gettext:
    each of its ~100 lookups searches the disk for a catalogue and the first imports
    ``locale``, a fifth of ``relimpute COMMAND --help``'s CPU time above the interpreter's."""
    saved = argparse._, argparse.ngettext
    argparse._ = str
    argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved


@contextmanager
def _one_blas_thread():
    """A command's BLAS calls run on one thread unless the environment names a number. The
    models' matrices are small: on DL 2019's ``compare`` and the 2-million-line campaign,
    OpenBLAS's extra threads spin between calls, costing CPU without shortening the wall time
    (benchmarks/results/default_scale_profile.md). Set only before numpy is first imported
    (later it would change nothing); worker processes started meanwhile inherit it. The
    variables are removed again afterwards (the loaded library keeps its thread count)."""
    added = []
    if "numpy" not in sys.modules:
        added = [name for name in BLAS_THREADS if name not in os.environ]
        for name in added:
            os.environ[name] = "1"
    try:
        yield
    finally:
        for name in added:
            if os.environ.get(name) == "1":  # unless the command itself set it since
                del os.environ[name]


@contextmanager
def _fewer_collections(young: int = 10_000):
    """Python's cyclic garbage collector run every ``young`` new container objects instead of
    700: the imports of numpy, pandas, scipy and numba create ~10^5 objects, and with the
    default threshold the collections they set off (three of them full) cost DL 2019's
    ``compare`` a quarter of a second of CPU; cyclic garbage waits a little longer."""
    import gc

    saved = gc.get_threshold()
    gc.set_threshold(max(young, saved[0]), *saved[1:])
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def _no_collection_at_exit() -> None:
    """At interpreter exit, the objects then alive are frozen (``gc.freeze``) before Python's
    finalisation, whose garbage collections would otherwise walk all of them (numpy, pandas,
    scipy, numba: ~0.4 s of CPU after DL 2019's ``compare`` has printed its answer). The
    memory goes back to the system with the process; objects are still released by reference
    count, and exit handlers registered before this one run after it. Registered once."""
    import atexit
    import gc

    global FREEZE_REGISTERED
    if not FREEZE_REGISTERED:
        atexit.register(gc.freeze)
        FREEZE_REGISTERED = True


#: whether :func:`_no_collection_at_exit` has registered the freeze
FREEZE_REGISTERED = False
