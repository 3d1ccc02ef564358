"""Relevance models: learn p(relevant) for unjudged documents from partial qrels."""

from .base import (
    RelevanceEstimate,
    RelevanceModel,
    as_generator,
    available_models,
    get_model,
    register,
)
from .rtc import RTC
from .settings import DEFAULT_MODEL, ModelSettings, load_model, load_settings
from .uniform import Uniform
from .nonrelevant import Nonrelevant
from .bayes import Bayes
from .fusion import Fusion
from .fusion_llm import FusionLLM

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
    "register",
]
