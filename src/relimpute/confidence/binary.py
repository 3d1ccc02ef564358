"""A binary measure reads no grades: the estimate it is scored with need not carry them.

A model of a graded scale (the default ``fusion``) splits each unjudged document's
probability of relevance into grades; only a graded measure (nDCG, DCG, ...; the registry's
``Measure.graded``) reads that split. For the others the split changes no number, and
predicting it costs time: :func:`predict_for` leaves it out, and
:meth:`~relimpute.confidence.ConfidenceEngine.confidence` drops it
(:func:`without_grades`), so Python gives what ``relimpute compare`` and ``evaluate``
give.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import replace

from ..data import Campaign
from ..measures import parse_measure
from ..relevance.base import RelevanceEstimate, RelevanceModel


def reads_grades(measures: Iterable) -> bool:
    """Whether any of ``measures`` (names or parsed) reads the grades."""
    return any(parse_measure(str(measure)).graded for measure in measures)


def without_grades(estimate: RelevanceEstimate | None, measures: Iterable):
    """``estimate`` without its split into grades when none of ``measures`` reads it."""
    if estimate is None or estimate.grades is None or reads_grades(measures):
        return estimate
    return replace(estimate, grades=None)


def predict_for(model: RelevanceModel, campaign: Campaign, measures: Iterable) -> RelevanceEstimate:
    """The fitted ``model``'s estimate of ``campaign`` for scoring ``measures``: without the
    grades when none of them reads them (p and its draws are the same numbers)."""
    if "grades" in inspect.signature(model.predict).parameters and not reads_grades(measures):
        return model.predict(campaign, grades=False)
    return model.predict(campaign)
