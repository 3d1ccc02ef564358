"""Relevance models: learn p(relevant) for unjudged documents from partial qrels."""

from typing import TYPE_CHECKING

from .base import (
    RelevanceEstimate,
    RelevanceModel,
    as_generator,
    available_models,
    get_model,
    register,  # deprecated: register_model
    register_model,
)
from .settings import DEFAULT_MODEL, ModelSettings, load_model, load_settings
from .fusion import Fusion

if TYPE_CHECKING:  # what the names below are, for readers and the API docs
    from .bayes import Bayes
    from .fusion_llm import FusionLLM
    from .nonrelevant import Nonrelevant
    from .rtc import RTC
    from .uniform import Uniform

#: the other models, imported when first named (the registry imports them all when a
#: name it does not hold is asked for): the default model's commands do without them
_LAZY = {
    "RTC": ".rtc",
    "Uniform": ".uniform",
    "Nonrelevant": ".nonrelevant",
    "Bayes": ".bayes",
    "FusionLLM": ".fusion_llm",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "DEFAULT_MODEL",
    "Bayes",
    "RTC",
    "Fusion",
    "FusionLLM",
    "ModelSettings",
    "load_model",
    "load_settings",
    "RelevanceEstimate",
    "RelevanceModel",
    "Uniform",
    "Nonrelevant",
    "as_generator",
    "available_models",
    "get_model",
    "register_model",
]
