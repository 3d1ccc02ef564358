"""Relevance models: learn p(relevant) for unjudged documents from partial qrels."""

from .base import (
    RelevanceEstimate,
    RelevanceModel,
    as_generator,
    available_models,
    get_model,
    register,
)
from .expert import ExpertAggregation
from .settings import DEFAULT_MODEL, ModelSettings, load_model, load_settings
from .uniform import Nonrelevant, Uniform
from .hierarchical import BayesianHierarchy
from .fusion import Fusion
from .labelled import LabelledFusion

__all__ = [
    "DEFAULT_MODEL",
    "BayesianHierarchy",
    "ExpertAggregation",
    "Fusion",
    "LabelledFusion",
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
