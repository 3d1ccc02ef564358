"""Relevance models: learn p(relevant) for unjudged documents from partial qrels."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the names below are, for readers and the API docs
    from .base import (
        RelevanceEstimate,
        RelevanceModel,
        as_generator,
        available_models,
        get_model,
        register,  # deprecated: register_model
        register_model,
    )
    from .bayes import Bayes
    from .fusion import Fusion
    from .fusion_llm import FusionLLM
    from .nonrelevant import Nonrelevant
    from .rtc import RTC
    from .settings import DEFAULT_MODEL, ModelSettings, load_model, load_settings
    from .uniform import Uniform

#: every name, imported from its module when first asked for: a command that reads a
#: probability (``compare --prior``) loads neither the default model (scipy) nor the
#: settings' tables (pandas); the registry imports every model when a name it does not
#: hold is asked for
_LAZY = {
    **dict.fromkeys(("RelevanceEstimate", "RelevanceModel", "as_generator", "available_models",
                     "get_model", "register", "register_model"), ".base"),
    **dict.fromkeys(("DEFAULT_MODEL", "ModelSettings", "load_model", "load_settings"),
                    ".settings"),
    "Fusion": ".fusion",
    "RTC": ".rtc",
    "Uniform": ".uniform",
    "Nonrelevant": ".nonrelevant",
    "Bayes": ".bayes",
    "FusionLLM": ".fusion_llm",
}  # fmt: skip


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
