"""relimpute: IR evaluation with incomplete relevance judgments.

The names below are imported on first use (PEP 562), so ``import relimpute``
and the command line's start-up do not load numpy, pandas and pyarrow until
something needs them.
"""

from __future__ import annotations

import importlib

#: the one place the version is written: pyproject.toml reads it from here
__version__ = "0.2.0"

_EXPORTS = {
    "Campaign": "data",
    "TopicData": "data",
    "InputError": "errors",
    "read_prob_qrels": "io",
    "read_qrels": "io",
    "read_run": "io",
    "read_runs": "io",
    "write_prob_qrels": "io",
    "write_qrels": "io",
    "write_run": "io",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    """An exported name from its module, or a submodule (``relimpute.io``), on first use."""
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    else:
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
