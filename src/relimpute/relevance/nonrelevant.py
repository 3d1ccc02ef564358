"""The trec_eval convention: every unjudged document is nonrelevant."""

from __future__ import annotations

from .base import register_model
from .uniform import Uniform


class Nonrelevant(Uniform):
    """p = 0 for every unjudged document (:class:`~relimpute.relevance.uniform.Uniform` with
    ``prior=0``); judged documents keep their labels."""

    name = "nonrelevant"

    def __init__(self):
        super().__init__(prior=0.0)


register_model(Nonrelevant)
