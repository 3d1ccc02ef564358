"""Assessors: who answers "is this document relevant?" during a selection loop.

:class:`SimulatedAssessor` answers from full qrels, the protocol of
Carterette 2007 §4.3 (judgments hidden, then revealed one at a time as the
loop asks for them), optionally with label noise for robustness studies. The
interactive assessor is the ``relimpute judge`` command
(:mod:`relimpute.cli.judge`), which drives a
:class:`relimpute.selection.loop.SelectionSession` itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data import Campaign
from ..relevance.base import as_generator

UNJUDGED_POLICIES = ("nonrelevant", "error")


class Assessor:
    """Base class: :meth:`judge` returns the graded label of one document."""

    def judge(self, query_id: str, doc_id: str) -> int:
        raise NotImplementedError


class SimulatedAssessor(Assessor):
    """An oracle from full qrels, with optional label noise.

    Parameters
    ----------
    truth
        The full judgments: a :class:`~relimpute.data.Campaign` (its judged
        documents) or a qrels DataFrame ``query_id, doc_id, relevance``.
    unjudged
        What a document missing from the full qrels is: ``"nonrelevant"``
        (grade 0, the TREC convention) or ``"error"`` (raise KeyError).
    noise
        Probability of flipping the binary label of each answer (relevant
        becomes grade 0, nonrelevant becomes grade ``rel_threshold``).
    rel_threshold
        Grade that counts as relevant for the noise flip; defaults to the
        truth campaign's, or 1 for a DataFrame.
    rng
        Seed or Generator for the noise.

    Attributes
    ----------
    n_asked_
        How many questions were answered.
    n_flipped_
        How many answers were flipped by the noise.
    """

    def __init__(
        self,
        truth: Campaign | pd.DataFrame,
        *,
        unjudged: str = "nonrelevant",
        noise: float = 0.0,
        rel_threshold: int | None = None,
        rng: int | np.random.Generator | None = None,
    ):
        if unjudged not in UNJUDGED_POLICIES:
            raise ValueError(f"unjudged must be one of {UNJUDGED_POLICIES}, got {unjudged!r}")
        if not 0.0 <= noise <= 1.0:
            raise ValueError(f"noise must lie in [0, 1], got {noise}")
        if isinstance(truth, Campaign):
            frame = truth.qrels_frame()
            threshold = truth.rel_threshold if rel_threshold is None else rel_threshold
        else:
            frame = truth
            threshold = 1 if rel_threshold is None else rel_threshold
        self.labels = {
            (str(q), str(d)): int(r)
            for q, d, r in zip(frame["query_id"], frame["doc_id"], frame["relevance"])
            if int(r) >= 0
        }
        self.unjudged = unjudged
        self.noise = noise
        self.rel_threshold = int(threshold)
        self.rng = as_generator(rng)
        self.n_asked_ = 0
        self.n_flipped_ = 0

    def judge(self, query_id: str, doc_id: str) -> int:
        key = (str(query_id), str(doc_id))
        grade = self.labels.get(key)
        if grade is None:
            if self.unjudged == "error":
                raise KeyError(
                    f"document {doc_id!r} of topic {query_id!r} is not in the full qrels"
                )
            grade = 0
        self.n_asked_ += 1
        if self.noise and self.rng.random() < self.noise:
            self.n_flipped_ += 1
            grade = 0 if grade >= self.rel_threshold else self.rel_threshold
        return grade

    def __repr__(self) -> str:
        return (
            f"SimulatedAssessor({len(self.labels)} labels, unjudged={self.unjudged!r}, "
            f"noise={self.noise}, rel_threshold={self.rel_threshold})"
        )
