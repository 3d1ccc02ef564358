"""One registry for every plug-in kind: measures, relevance models, bias correctors,
selection strategies, calibration strategies and precision interval methods.

A plug-in is one file that defines its class (or function) and registers it at the
bottom (habit 1 of docs/contributing.md: declare, then register)::

    MODELS = Registry("relevance model")

    @MODELS.register          # a class with a ``name`` attribute
    class Fusion(RelevanceModel):
        name = "fusion"

    METHODS.register(bca_interval, name="bca")   # or any object under a given name

``get(name)`` returns it, or raises (``KeyError`` unless the registry says otherwise)
with a "did you mean" hint (:mod:`difflib`) and the list of names.

Discovery: a registry made with ``discover="relimpute.relevance"`` imports every public
module of that package (each registers itself) before it answers a name it does not hold
or lists its names, so a new plug-in is one file in the package, with no import to add.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Named plug-ins of one kind (``kind`` names it in errors: ``"relevance model"``)."""

    def __init__(
        self,
        kind: str,
        *,
        error: type[Exception] = KeyError,
        sort: bool = True,
        discover: str | None = None,
    ):
        self.kind = kind
        self.error = error
        self.sort = sort
        self.package = discover
        self._discovered = discover is None
        self._items: dict[str, T] = {}

    def discover(self) -> None:
        """Import every public module (and subpackage) of the registry's package once."""
        if self._discovered:
            return
        self._discovered = True  # first: the modules imported below look names up too
        package = importlib.import_module(self.package)
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{self.package}.{info.name}")

    def register(self, item: T | None = None, *, name: str | None = None):
        """Register ``item`` under ``name`` (default: its ``name`` attribute); returns it.

        Usable as a decorator, bare or as ``@registry.register(name=...)``. A name
        taken by another item is an error; registering the same item again is not.
        """
        if item is None:
            return lambda obj: self.register(obj, name=name)
        key = name if name is not None else getattr(item, "name", None)
        if not key or not isinstance(key, str):
            raise ValueError(f"{self.kind} {item!r} has no name")
        if self._items.get(key, item) is not item:
            raise ValueError(f"{self.kind} name {key!r} is taken by {self._items[key]!r}")
        self._items[key] = item
        return item

    def names(self) -> list[str]:
        """The registered names (sorted, unless the registry keeps registration order)."""
        self.discover()
        return sorted(self._items) if self.sort else list(self._items)

    def closest(self, name: str) -> str | None:
        """The registered name nearest to ``name`` (case-insensitive first), or None."""
        self.discover()
        by_lower = {key.lower(): key for key in self._items}
        if str(name).lower() in by_lower:
            return by_lower[str(name).lower()]
        import difflib  # only for a name not registered

        close = difflib.get_close_matches(str(name).lower(), list(by_lower), n=1, cutoff=0.6)
        return by_lower[close[0]] if close else None

    def unknown(self, name: str, extra: str = "") -> Exception:
        """The error for an unknown name: a "did you mean" hint and the names available."""
        close = self.closest(name)
        hint = "" if close is None else f" (did you mean {close!r}?)"
        return self.error(f"unknown {self.kind} {name!r}{hint}; available: {self.names()}{extra}")

    def get(self, name: str) -> T:
        """The item registered as ``name``; an error with a hint otherwise."""
        if name not in self:
            raise self.unknown(name)
        return self._items[name]

    __getitem__ = get

    def __contains__(self, name: object) -> bool:
        try:
            if name in self._items:
                return True
        except TypeError:  # unhashable
            return False
        self.discover()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self.discover()
        return len(self._items)

    def items(self) -> list[tuple[str, T]]:
        return [(key, self._items[key]) for key in self.names()]

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self.names())})"
