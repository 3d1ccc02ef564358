"""One-line reprs for result objects: what they hold and how big, never their contents.

A dataclass's generated repr prints every array and DataFrame it holds, which
for a campaign-sized result is pages of numbers. Results define ``__repr__``
with :func:`short_repr` instead (``SystemScores(measure='AP', 37 systems,
43 topics, exact moments)``) and keep the readable table for ``__str__``.
"""

from __future__ import annotations


def short_repr(obj: object, *parts: str) -> str:
    """``ClassName(part, part, ...)`` for ``obj``."""
    return f"{type(obj).__name__}({', '.join(parts)})"
