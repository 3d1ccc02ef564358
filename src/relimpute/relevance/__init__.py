"""Relevance models: learn p(relevant) for unjudged documents from partial qrels."""

from .base import (
    RelevanceEstimate,
    RelevanceModel,
    as_generator,
    available_models,
    get_model,
    register,
)
from .uniform import UniformPrior, UnjudgedNonrelevant

__all__ = [
    "RelevanceEstimate",
    "RelevanceModel",
    "UniformPrior",
    "UnjudgedNonrelevant",
    "as_generator",
    "available_models",
    "get_model",
    "register",
]
