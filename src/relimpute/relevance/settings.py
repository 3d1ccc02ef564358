"""Model settings as files: load a relevance model by name or by path.

A settings file is JSON::

    {"model": "<registered name>",
     "params": {<keyword arguments of the model's __init__>},
     "provenance": {"data": ..., "command": ..., "date": ..., "how_chosen": ...}}

The repository's top-level ``models/`` folder holds the shipped settings
(``models/<name>.json``). :func:`load_model` takes either a registered name
(its shipped file when there is one, else the class defaults) or a path to a
settings file. ``models/`` is found beside the source tree (editable and
source installs) or where a wheel installs it (:data:`MODELS_DIRS`); without
it a name falls back to the class defaults.
"""

from __future__ import annotations

import inspect
import json
import os
import sysconfig
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._defaults import DEFAULT_MODEL
from ..errors import InputError
from .base import _REGISTRY, RelevanceModel, available_models

_HERE = Path(__file__).resolve()
#: where shipped settings are looked for, in order: the repository's ``models/``
#: folder (source and editable installs: src/relimpute/relevance/settings.py →
#: repo root) and ``<prefix>/share/relimpute/models`` (a wheel's data files,
#: see pyproject.toml)
MODELS_DIRS: tuple[Path, ...] = tuple(
    d
    for d in (
        _HERE.parents[3] / "models" if _HERE.parents[2].name == "src" else None,
        Path(sysconfig.get_paths()["data"]) / "share" / "relimpute" / "models",
    )
    if d is not None
)


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """A model name, its hyper-parameters and where they came from."""

    model: str
    params: Mapping[str, Any] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)
    source: str = "<class defaults>"

    def build(self) -> RelevanceModel:
        """Instantiate the model with these hyper-parameters."""
        return _REGISTRY[self.model](**self.params)

    def to_frame(self) -> pd.DataFrame:
        """One row per hyper-parameter: ``model, param, value``."""
        return pd.DataFrame(
            {
                "model": self.model,
                "param": list(self.params),
                "value": [json.dumps(v) for v in self.params.values()],
            }
        )

    def to_json(self) -> str:
        body = {
            "model": self.model,
            "params": dict(self.params),
            "provenance": dict(self.provenance),
        }
        return json.dumps(body, indent=2) + "\n"

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.model}({args})  [from {self.source}]"


def load_settings(name_or_path: str | os.PathLike) -> ModelSettings:
    """Settings from a registered name or a settings file (module docstring).

    Any model that registers itself in its own file of the package can be named (the
    registry discovers it).

    Raises
    ------
    InputError
        Unknown name, unreadable file, invalid JSON, unknown model or
        hyper-parameter in the file (the message names the file).
    """
    text = os.fspath(name_or_path)
    path = Path(text)
    looks_like_path = path.suffix == ".json" or os.sep in text or os.path.lexists(path)
    if looks_like_path:
        return _read(path)
    shipped = next(
        (d / f"{text}.json" for d in MODELS_DIRS if (d / f"{text}.json").is_file()), None
    )
    if shipped is not None:
        settings = _read(shipped)
        if settings.model != text:
            raise InputError(f"file is for model {settings.model!r}, not {text!r}", str(shipped))
        return settings
    if text in _REGISTRY:
        if not any(d.is_dir() for d in MODELS_DIRS):
            warnings.warn(
                f"the shipped model settings were not found (looked in "
                f"{', '.join(map(str, MODELS_DIRS)) or 'no folder'}): {text!r} runs with its "
                "class defaults, not the settings in models/",
                stacklevel=2,
            )
        return ModelSettings(model=text, provenance={"how_chosen": "class defaults"})
    raise InputError(
        f"unknown relevance model {text!r}: not a registered name ({', '.join(available_models())}) "
        "nor a settings file"
    )


def settings_in(folder: str | os.PathLike, name: str) -> str:
    """``folder/NAME.json`` when that file exists, else ``name`` (the shipped settings):
    what :func:`load_settings` should read when a folder of settings (for example those
    chosen without the collection under study) overrides ``models/``."""
    path = Path(folder) / f"{name}.json"
    return str(path) if path.is_file() else name




def load_model(name_or_path: str | os.PathLike = DEFAULT_MODEL) -> RelevanceModel:
    """A relevance model from a registered name or a settings file (unfitted);
    :data:`DEFAULT_MODEL` with its shipped settings when none is named."""
    return load_settings(name_or_path).build()


def _read(path: Path) -> ModelSettings:
    from .._files import read_input

    source = str(path)
    data = read_input(path, "model settings file")  # a FIFO or a missing file: InputError
    try:
        body = json.loads(data.decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", source, exc.lineno) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read: {exc}", source) from None
    if not isinstance(body, dict):
        raise InputError("settings must be a JSON object with 'model' and 'params'", source)
    extra = set(body) - {"model", "params", "provenance"}
    if extra:
        raise InputError(
            f"unknown key(s) {sorted(extra)}; expected model, params, provenance", source
        )
    model = body.get("model")
    if model not in _REGISTRY:
        raise InputError(
            f"'model' must name a registered relevance model ({', '.join(available_models())}), "
            f"got {model!r}",
            source,
        )
    params = body.get("params", {})
    provenance = body.get("provenance", {})
    if not isinstance(params, dict) or not isinstance(provenance, dict):
        raise InputError("'params' and 'provenance' must be JSON objects", source)
    accepted = set(inspect.signature(_REGISTRY[model].__init__).parameters) - {"self"}
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise InputError(
            f"model {model!r} has no hyper-parameter(s) {unknown}; accepted: {sorted(accepted)}",
            source,
        )
    settings = ModelSettings(model=model, params=params, provenance=provenance, source=source)
    try:
        settings.build()
    except (TypeError, ValueError) as exc:
        raise InputError(f"invalid hyper-parameters: {exc}", source) from None
    return settings
