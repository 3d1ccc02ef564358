"""Per-collection settings: a ``relimpute.toml`` beside the qrels.

A collection whose relevant grade is not trec_eval's 1 (TREC DL: grade 2 and
above) says so once, in a file next to its qrels::

    # relimpute.toml
    rel_threshold = 2

Every command (and :meth:`Campaign.from_files <relimpute.data.Campaign.from_files>`
with ``rel_threshold=None``) then uses it; ``--rel-threshold N`` (or an
explicit ``rel_threshold=N``) overrides it. Without the file the threshold is
1, trec_eval's. Unknown keys are an error, so a typo does not pass silently.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InputError

SETTINGS_FILE = "relimpute.toml"
DEFAULT_REL_THRESHOLD = 1
_KEYS = {"rel_threshold": int}


def settings_path(qrels: str | os.PathLike) -> Path | None:
    """Where the settings of the collection whose qrels are ``qrels`` live (None for
    ``irds:`` qrels, which have no folder)."""
    if isinstance(qrels, str) and qrels.startswith("irds:"):
        return None
    # realpath, not Path.resolve: a link loop is the qrels reader's to report, not a RuntimeError
    return Path(os.path.realpath(qrels)).parent / SETTINGS_FILE


def read_collection_settings(qrels: str | os.PathLike) -> dict:
    """The settings beside ``qrels`` (an empty dict when there is no file).

    A file that is there but cannot be read (permissions, a directory, a link
    loop) or is not TOML is an InputError naming it.
    """
    return _settings_at(settings_path(qrels))


def _settings_at(path: Path | None) -> dict:
    """The settings file at ``path`` (:func:`read_collection_settings`), read and checked."""
    from ._files import read_input

    if path is None or not os.path.lexists(path):
        return {}
    data = read_input(path, "settings file")
    import tomllib  # only when a collection has its settings file

    try:
        settings = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid TOML ({exc})", str(path)) from None
    for key, value in settings.items():
        if key not in _KEYS:
            raise InputError(f"unknown setting {key!r} (known: {', '.join(_KEYS)})", str(path))
        if not isinstance(value, _KEYS[key]) or isinstance(value, bool):
            raise InputError(f"{key} must be an integer, got {value!r}", str(path))
    return settings


def resolve_rel_threshold(
    qrels: str | os.PathLike, rel_threshold: int | None
) -> tuple[int, Path | None]:
    """``(threshold, source)``: the explicit one, else the collection's, else 1.

    ``source`` is the settings file the threshold came from, or None.
    """
    if rel_threshold is not None:
        return int(rel_threshold), None
    path = settings_path(qrels)
    settings = _settings_at(path)
    if "rel_threshold" in settings:
        return settings["rel_threshold"], path
    return DEFAULT_REL_THRESHOLD, None
