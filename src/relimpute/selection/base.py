"""The judgment-selection protocol, the state a selection loop shares, and the registry.

A selection strategy decides which unjudged document to judge next
(Carterette, Allan & Sitaraman 2006; Carterette 2007 Algorithm 1; Cormack,
Palmer & Clarke 1998). The loop in :mod:`relimpute.selection.loop` owns a
:class:`SelectionState` (probabilities of relevance, judgments, candidates)
and asks the strategy, one document at a time, for the next one.

A new strategy is one file: subclass :class:`SelectionStrategy`, give it a
``name``, implement ``_start``, ``_propose`` and (when it keeps derived
state) ``_observe``, and call :func:`register_strategy` at the bottom of the file.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any, ClassVar

import numpy as np

from .._deprecation import deprecated_alias
from .._registry import Registry
from ..confidence.moments import counted_documents
from ..data import Campaign
from ..labels import labelled_documents


def all_pairs(n_systems: int) -> np.ndarray:
    """``(P, 2)`` int array of the pairs ``(a, b)``, ``a < b``, of ``n_systems`` systems."""
    return np.array(list(combinations(range(n_systems), 2)), dtype=int).reshape(-1, 2)


class SelectionState:
    """What a selection loop knows: judgments, probabilities, candidates.

    Parameters
    ----------
    campaign
        The campaign to judge (already truncated); its judged documents are
        the initial judgments.
    systems
        Names of the compared systems (two for a pair, more for a run set).

    Attributes
    ----------
    campaign
        The campaign as given (initial judgments).
    compared
        ``(K,)`` row indices of the compared systems in ``campaign``.
    pairs
        ``(P, 2)`` pairs of positions into ``compared``, ``a < b``.
    judged, grades
        Per topic, current judgments (initial plus new).
    p
        Per topic, ``(n,)`` current probability of relevance (judged: 0/1).
    candidates
        Per topic, ``(n,)`` bool: unjudged, not skipped, and retrieved by a
        compared system. Only these may be proposed.
    ranks
        Per topic, ``(K, n)`` int32 1-based ranks in the compared systems
        (0 = not retrieved).
    counted
        Per topic, ``(n,)`` bool: the documents that count towards ``R``
        (judged, retrieved by a compared system: the run set being
        evaluated while judging, or named by a label source of the campaign;
        docs/math/average-precision.md).
    target_confidence
        The loop's stopping confidence (None: it does not stop on one), for a
        strategy that states its confidence more precisely near it.
    """

    def __init__(self, campaign: Campaign, systems: Sequence[str]):
        if len(systems) < 2:
            raise ValueError(f"need at least two systems to compare, got {list(systems)}")
        if len(set(systems)) != len(systems):
            raise ValueError(f"systems must be distinct, got {list(systems)}")
        self.campaign = campaign
        self.systems = tuple(systems)
        self.compared = campaign.system_index(list(systems))
        self.pairs = all_pairs(len(self.compared))
        self.judged = [t.judged.copy() for t in campaign.topics]
        self.grades = [t.grades.copy() for t in campaign.topics]
        self.p = [t.relevant(campaign.rel_threshold).astype(float) for t in campaign.topics]
        self.ranks = [np.stack([t.ranks(int(s)) for s in self.compared]) for t in campaign.topics]
        self.candidates = [(r > 0).any(axis=0) & ~j for r, j in zip(self.ranks, self.judged)]
        named = labelled_documents(campaign) or [None] * campaign.n_topics
        self.counted = [
            counted_documents(t, self.compared, None, n) for t, n in zip(campaign.topics, named)
        ]
        self._topic_index = {q: t for t, q in enumerate(campaign.query_ids)}
        self.target_confidence: float | None = None

    @property
    def n_topics(self) -> int:
        return self.campaign.n_topics

    def doc_id(self, topic: int, doc: int) -> str:
        return str(self.campaign.topics[topic].doc_ids[doc])

    def query_id(self, topic: int) -> str:
        return self.campaign.topics[topic].query_id

    def expected_relevant(self, topic: int) -> float:
        """``E[R_t]``: Σ p over judged documents and unjudged ones a compared
        system retrieves or a label source names (Carterette 2007 §2.1)."""
        return float(self.p[topic][self.counted[topic]].sum())

    def locate(self, query_id: str, doc_id: str) -> tuple[int, int]:
        """``(topic, doc)`` indices of a document (KeyError when unknown)."""
        t = self._topic_index.get(str(query_id))
        if t is None:
            raise KeyError(f"unknown topic {query_id!r}")
        hit = np.flatnonzero(self.campaign.topics[t].doc_ids == str(doc_id))
        if len(hit) == 0:
            raise KeyError(f"document {doc_id!r} is not in topic {query_id!r}")
        return t, int(hit[0])

    def candidate(self, query_id: str, doc_id: str) -> tuple[int, int]:
        """``(topic, doc)`` of a document that may be judged now (KeyError when unknown,
        ValueError when it is judged, skipped or retrieved by no compared system)."""
        t, i = self.locate(query_id, doc_id)
        if not self.candidates[t][i]:
            raise ValueError(
                f"document {doc_id!r} of topic {query_id!r} is not a candidate to judge"
            )
        return t, i

    def record(self, topic: int, doc: int, grade: int) -> float:
        """Store a judgment; returns the document's probability before it."""
        if self.judged[topic][doc]:
            raise ValueError(
                f"document {self.doc_id(topic, doc)!r} of topic {self.query_id(topic)!r} is already judged"
            )
        before = float(self.p[topic][doc])
        self.judged[topic][doc] = True
        self.grades[topic][doc] = grade
        self.p[topic][doc] = float(grade >= self.campaign.rel_threshold)
        self.candidates[topic][doc] = False
        return before

    def exclude(self, topic: int, doc: int) -> None:
        """Take a document out of the candidates (a skipped document)."""
        self.candidates[topic][doc] = False

    def exhausted(self) -> bool:
        return not any(c.any() for c in self.candidates)

    def current_campaign(self) -> Campaign:
        """The campaign with the initial and the new judgments."""
        topics = tuple(
            replace(t, judged=j.copy(), grades=g.copy())
            for t, j, g in zip(self.campaign.topics, self.judged, self.grades)
        )
        return replace(self.campaign, topics=topics)


def set_prior(state: SelectionState, prior: float) -> None:
    """Every unjudged document's probability of relevance set to ``prior`` (in [0, 1])."""
    if not 0.0 <= prior <= 1.0:
        raise ValueError(f"prior must lie in [0, 1], got {prior}")
    for p, judged in zip(state.p, state.judged):
        p[~judged] = prior


class SelectionStrategy:
    """Base class of judgment-selection strategies.

    Hyper-parameters are keyword arguments of ``__init__`` stored verbatim.
    The loop calls :meth:`start` once, then alternately :meth:`propose` and
    :meth:`observe`. A strategy sets the probabilities ``state.p`` of the
    unjudged documents it assumes (they drive the loop's confidence), and may
    set ``last_weight_`` to the weight of its last proposal (NaN otherwise).
    """

    name: ClassVar[str] = ""

    def start(self, state: SelectionState, rng: np.random.Generator) -> None:
        """Prepare for a loop over ``state`` (sets ``state.p`` for unjudged documents)."""
        self.rng_ = rng
        self._start(state)

    def propose(self, state: SelectionState) -> tuple[int, int] | None:
        """The next ``(topic, doc)`` to judge, or None when there is none."""
        self.last_weight_ = float("nan")
        if state.exhausted():
            return None
        choice = self._propose(state)
        if choice is not None and not state.candidates[choice[0]][choice[1]]:
            raise RuntimeError(f"{self.name} proposed a non-candidate document {choice}")
        return choice

    def observe(
        self, state: SelectionState, topic: int, doc: int, p_before: float
    ) -> list[int] | None:
        """Update after ``state.record``; returns the topics whose ``p`` changed
        beyond the judged document (None = only ``topic``)."""
        return self._observe(state, topic, doc, p_before)

    def skipped(self, state: SelectionState, topic: int, doc: int) -> None:
        """Hook after ``state.exclude`` (a skipped document)."""

    def set_undecided(self, state: SelectionState, undecided: np.ndarray) -> None:
        """Hook: which pairs (bool ``(P,)``) are still undecided."""

    def confidence_tracker(self, state: SelectionState):
        """What the loop's confidence reads after :meth:`start`, when the strategy keeps
        its own; None: the normal approximation over ``state.p``
        (:class:`~.stopping.PairConfidence`)."""
        return None

    def get_params(self) -> dict[str, Any]:
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # hooks ---------------------------------------------------------------
    def _start(self, state: SelectionState) -> None:
        raise NotImplementedError

    def _propose(self, state: SelectionState) -> tuple[int, int] | None:
        raise NotImplementedError

    def _observe(
        self, state: SelectionState, topic: int, doc: int, p_before: float
    ) -> list[int] | None:
        return None


_REGISTRY: Registry[type[SelectionStrategy]] = Registry("selection strategy", discover="relimpute.selection")


def register_strategy(cls: type[SelectionStrategy]) -> type[SelectionStrategy]:
    """Make a strategy available by its ``name`` (use at the bottom of its file)."""
    return _REGISTRY.register(cls)


#: the name register_strategy had until 0.3.0 (deprecated)
register = deprecated_alias(register_strategy, "register")


def available_strategies() -> list[str]:
    return _REGISTRY.names()


def get_strategy(name: str | SelectionStrategy, **params: Any) -> SelectionStrategy:
    """Instantiate a registered strategy by name (an instance passes through)."""
    if isinstance(name, SelectionStrategy):
        if params:
            raise ValueError("parameters given with a strategy instance")
        return name
    return _REGISTRY.get(name)(**params)
