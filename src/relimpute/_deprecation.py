"""Old names keep working for one minor version, with a ``DeprecationWarning`` naming the new one.

:func:`renamed_kwargs` renames keywords of a function or a class (its ``__init__``);
:func:`deprecated_alias` keeps a renamed function under its old name; :func:`warn_deprecated`
is the one warning both give (also for a method kept as a thin alias of another). The words
themselves are in :mod:`relimpute._vocabulary` (docs/conventions.md renders it).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: the version that deprecated the names below, and the one that removes them
SINCE, REMOVED_IN = "0.3.0", "0.4.0"


def warn_deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated: use ``new`` (``stacklevel`` 3: the caller's caller)."""
    warnings.warn(
        f"{old} is deprecated since relimpute {SINCE} and will be removed in {REMOVED_IN}; "
        f"use {new}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def renamed_kwargs(**renamed: str) -> Callable[[F], F]:
    """Decorator: each ``old=new`` keyword is still accepted, with a warning, as ``new``.

    Giving both the old and the new keyword is a ``TypeError``. On a class it wraps
    ``__init__`` (a dataclass's too). The wrapper keeps the signature (``inspect`` shows
    the new names) and lists the renames in ``__renamed_kwargs__``.
    """

    def decorate(obj):
        if isinstance(obj, type):
            obj.__init__ = decorate(obj.__init__)
            obj.__renamed_kwargs__ = dict(renamed)
            return obj
        name = obj.__qualname__.removesuffix(".__init__")

        @functools.wraps(obj)
        def wrapper(*args, **kwargs):
            for old, new in renamed.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{name}() got {old}= and {new}=: {old}= is {new}=")
                    warn_deprecated(f"{name}({old}=...)", f"{new}=...")
                    kwargs[new] = kwargs.pop(old)
            return obj(*args, **kwargs)

        wrapper.__renamed_kwargs__ = {**getattr(obj, "__renamed_kwargs__", {}), **renamed}
        return wrapper

    return decorate


def deprecated_alias(function: F, old_name: str) -> F:
    """``function`` under its old name ``old_name``: it warns, then calls ``function``."""

    @functools.wraps(function)
    def alias(*args, **kwargs):
        warn_deprecated(old_name, function.__name__)
        return function(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old_name
    alias.__deprecated__ = f"use {function.__name__}"  # as PEP 702's warnings.deprecated marks it
    return alias
