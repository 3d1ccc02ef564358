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
import math
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
from .fusion import Fusion  # noqa: F401  the default model, registered before a name is looked up

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

    A :class:`~pathlib.Path`, or text that holds a path separator or ends in ``.json``, is a
    file (``./fusion``, ``my.json``); a registered name means its shipped settings, even when
    a file of that name is in the current folder (a warning then says which was read); any
    other name is read as a file when one exists. Any model that registers itself in its own file of the package can be named (the
    registry discovers it).

    Raises
    ------
    InputError
        Unknown name, unreadable file, invalid JSON, unknown model or
        hyper-parameter in the file (the message names the file).
    """
    text = os.fspath(name_or_path)
    path = Path(text)
    separated = any(s and s in text for s in (os.sep, os.altsep, "/"))
    if not isinstance(name_or_path, str) or path.suffix == ".json" or separated:
        return _read(path)  # a Path is always a file
    shipped = next(
        (d / f"{text}.json" for d in MODELS_DIRS if (d / f"{text}.json").is_file()), None
    )
    if (shipped is not None or text in _REGISTRY) and os.path.lexists(path):
        # a stray file named like a model never replaces its settings unannounced
        warnings.warn(
            f"model {text!r}: reading {shipped or 'its class defaults'}, not the file {text!r} "
            f"in the current folder (name it ./{text} to read that file)",
            stacklevel=2,
        )
    if shipped is not None:
        settings = _read(shipped)
        if settings.model != text:
            raise InputError(f"file is for model {settings.model!r}, not {text!r}", str(shipped))
        return settings
    if text not in _REGISTRY and os.path.lexists(path):
        return _read(path)  # a settings file named without .json
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
    except RecursionError:
        raise InputError("JSON nested too deeply to be model settings", source) from None
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
    try:
        _check_ranges(model, params, source)
    except RecursionError:
        raise InputError("JSON nested too deeply to be model settings", source) from None
    settings = ModelSettings(model=model, params=params, provenance=provenance, source=source)
    try:
        built = settings.build()
        wrapped = params.get("fusion")  # fusion-llm and bayes take fusion's settings
        for one in (built, _REGISTRY["fusion"](**wrapped) if isinstance(wrapped, dict) else None):
            if hasattr(one, "_validate"):
                one._validate()  # the checks a fit makes, before any data are read
    except (TypeError, ValueError, OverflowError, IndexError, KeyError) as exc:
        raise InputError(f"invalid hyper-parameters: {exc}", source) from None
    return settings


#: the largest value of a count hyper-parameter (one whose default is an integer), and of
#: some in particular: ``n_draws`` posterior draws are kept for every document at once
COUNT_LIMIT = 1_000_000
COUNT_LIMITS = {"n_draws": 10_000}


def _check_ranges(model: str, params: Mapping[str, Any], source: str, prefix: str = "") -> None:
    """Numbers finite, counts whole and at most :data:`COUNT_LIMIT`: a typo's ``1e12`` draws
    is refused here, naming file and key, not by a MemoryError once the data are loaded."""
    defaults = inspect.signature(_REGISTRY[model].__init__).parameters
    for key, value in params.items():
        name = f"{prefix}{key}"
        if key == "fusion" and isinstance(value, dict) and "fusion" in _REGISTRY:
            _check_ranges("fusion", value, source, f"{name}.")  # the wrapped model's params
            continue
        for number in _numbers(value):
            if isinstance(number, float) and not math.isfinite(number):
                raise InputError(f"params.{name}: {number} is not a finite number", source)
        default = defaults[key].default if key in defaults else None
        scalar = isinstance(value, (int, float)) and not isinstance(value, bool)
        if isinstance(default, float) and not scalar:  # a string or list: a TypeError in fit
            raise InputError(f"params.{name}: {value!r} is not a number", source)
        if isinstance(default, int) and not isinstance(default, bool):
            limit = COUNT_LIMITS.get(key, COUNT_LIMIT)
            if not scalar or value != int(value) or not 0 <= value <= limit:
                raise InputError(
                    f"params.{name}: {value!r} is not a whole number from 0 to {limit:,}", source
                )


def _numbers(value):
    """The numbers in a JSON value (nested lists and objects included)."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)
