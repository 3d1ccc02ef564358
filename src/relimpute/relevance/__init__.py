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
from .uniform import UniformPrior, UnjudgedNonrelevant
from .hierarchical import BayesianHierarchy
from .fusion import RankFusion
from .labelled import LabelledFusion

__all__ = [
    "DEFAULT_MODEL",
    "BayesianHierarchy",
    "ExpertAggregation",
    "LabelledFusion",
    "RankFusion",
    "ModelSettings",
    "load_model",
    "load_settings",
    "RelevanceEstimate",
    "RelevanceModel",
    "UniformPrior",
    "UnjudgedNonrelevant",
    "as_generator",
    "available_models",
    "get_model",
    "register",
]
