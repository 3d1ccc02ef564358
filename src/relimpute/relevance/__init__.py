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
from .uniform import Nonrelevant, Uniform, UniformPrior, UnjudgedNonrelevant  # noqa: F401 (old names)
from .hierarchical import BayesianHierarchy
from .fusion import Fusion, RankFusion  # noqa: F401 (RankFusion: the old name)
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
