"""``njit_cached``: numba's ``njit(cache=True)`` that works on read-only installs too.

numba caches compiled kernels beside their source (``__pycache__``) or in the
user's cache directory (``~/.cache/numba``). When neither is writable — an
install owned by another account, used by one without a writable home —
``njit(cache=True)`` fails at import with "cannot cache function ... no
locator available". Then the kernels are cached in a private per-user
directory under the system's temporary directory (``relimpute-numba-<uid>``,
mode 0700, used only if owned by the user and writable by nobody else,
since cache files are loaded as code), or, failing that, compiled on every
run without a cache. ``NUMBA_CACHE_DIR`` still takes precedence when set.
"""

from __future__ import annotations

import os
import stat
import tempfile

import numba
from numba.core import config


def private_cache_dir() -> str | None:
    """A cache directory only this user can write, created if needed; None if there is none."""
    path = os.path.join(tempfile.gettempdir(), f"relimpute-numba-{os.getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return None
    private = (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        and os.access(path, os.W_OK)
    )
    return path if private else None


def njit_cached(**options):
    """Decorator: ``numba.njit(cache=True, **options)``, falling back as the module says."""

    def decorate(func):
        try:
            return numba.njit(cache=True, **options)(func)
        except RuntimeError as exc:
            if "no locator available" not in str(exc):
                raise
        fallback = private_cache_dir()
        if fallback is not None:
            saved, config.CACHE_DIR = config.CACHE_DIR, fallback
            try:  # the locator takes the directory now; the global setting is restored
                return numba.njit(cache=True, **options)(func)
            except RuntimeError:
                pass
            finally:
                config.CACHE_DIR = saved
        return numba.njit(**options)(func)

    return decorate
