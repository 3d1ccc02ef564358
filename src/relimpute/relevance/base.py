"""The relevance-model protocol, the estimate every model returns, and the registry.

A relevance model learns from a campaign's partial judgments and predicts,
for every (topic, document) of the campaign, the probability that the
document is relevant (Carterette 2007 §2: relevance as a random variable).
Judged documents keep their labels (p = 0 or 1). Models may also hand over
joint posterior draws of those probabilities so that parameter uncertainty
reaches the confidence engine's Monte Carlo path.

A new model is one file: subclass :class:`RelevanceModel`, give it a
``name``, implement ``_fit`` and ``_predict``, and call :func:`register_model` at
the bottom of the file; :func:`relimpute.testing.check_relevance_model` checks
its contract.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._display import short_repr
from .._deprecation import deprecated_alias
from .._registry import Registry
from ..data import Campaign
from ..errors import InputError
from ..io.trec import GRADE_COLUMN
from .grades import GradeShares, from_exceedance, grade_column, judged_shares, levels_of_columns

if TYPE_CHECKING:  # the frames are made on demand: scoring reads no frame
    import pandas as pd


def as_generator(rng: int | np.random.Generator | None) -> np.random.Generator:
    """Normalise an ``rng`` argument (seed, Generator or None) once."""
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


class LazyDraws(Sequence):
    """Per-topic posterior draws computed when a topic is asked for, not held in memory.

    ``make(t)`` returns topic ``t``'s ``(n_draws, n)`` array; the last topic asked for is
    kept, so reading one topic twice in a row computes it once. Any sequence of per-topic
    arrays works as :attr:`RelevanceEstimate.draws`; this one keeps a campaign of millions
    of documents within memory (100 draws of 2 million documents are 1.6 GB as float64).
    """

    def __init__(self, n_topics: int, n_draws: int, make: Callable[[int], np.ndarray]):
        self.n_topics = n_topics
        self.n_draws = n_draws
        self.make = make
        self._last: tuple[int, np.ndarray] | None = None

    def __len__(self) -> int:
        return self.n_topics

    def __getitem__(self, t):
        if isinstance(t, slice):
            return [self[i] for i in range(*t.indices(self.n_topics))]
        t = int(t) + (self.n_topics if int(t) < 0 else 0)
        if not 0 <= t < self.n_topics:
            raise IndexError(f"topic index {t} out of range")
        if self._last is None or self._last[0] != t:
            self._last = (t, self.make(t))
        return self._last[1]

    def map(self, func: Callable[[int, np.ndarray], np.ndarray]) -> LazyDraws:
        """The draws with ``func(t, draws_t)`` applied to each topic when it is read."""
        return LazyDraws(self.n_topics, self.n_draws, partial(_apply, self.make, func))

    def __getstate__(self):
        return {**self.__dict__, "_last": None}


def _apply(make, func, t):
    return func(t, make(t))


@dataclass(frozen=True, eq=False)
class RelevanceEstimate:
    """Probabilities of relevance for every document of a campaign.

    Attributes
    ----------
    query_ids
        Topic ids, in the campaign's order.
    doc_ids
        Per topic, the ``(n,)`` document ids (the campaign's document index).
    p
        Per topic, ``(n,)`` float64 probability of relevance; judged
        documents hold 0.0 or 1.0.
    draws
        Optional per topic ``(n_draws, n)`` joint posterior draws of ``p``
        (draw ``d`` is the same parameter draw in every topic), or None: a tuple,
        or a :class:`LazyDraws` that computes each topic's when read.
    model
        Name of the model that produced the estimate.
    params
        The fitted parameters worth reporting (plain numbers and arrays).
    grades
        Optional :class:`~relimpute.relevance.grades.GradeShares`: how each document's
        relevance splits into grades (a model of graded relevance); None: binary.
    """

    query_ids: tuple[str, ...]
    doc_ids: tuple[np.ndarray, ...]
    p: tuple[np.ndarray, ...]
    draws: Sequence[np.ndarray] | None = None
    model: str = "unknown"
    params: Mapping[str, Any] = field(default_factory=dict)
    grades: GradeShares | None = None

    def __post_init__(self) -> None:
        if not (len(self.query_ids) == len(self.doc_ids) == len(self.p)):
            raise ValueError("query_ids, doc_ids and p must have one entry per topic")
        for q, d, p in zip(self.query_ids, self.doc_ids, self.p):
            if p.shape != d.shape:
                raise ValueError(f"topic {q}: p has shape {p.shape}, documents {d.shape}")
            if p.size and (np.nanmin(p) < 0 or np.nanmax(p) > 1 or np.isnan(p).any()):
                raise ValueError(f"topic {q}: probabilities must lie in [0, 1]")

    @property
    def n_draws(self) -> int:
        if self.draws is None:
            return 0
        if isinstance(self.draws, LazyDraws):
            return self.draws.n_draws
        return int(self.draws[0].shape[0])

    def topic_frame(self) -> pd.DataFrame:
        """One row per topic: ``query_id, documents, uncertain`` (0 < p < 1) and
        ``expected_relevant`` (Σ p, judged relevant documents included)."""
        import pandas as pd

        return pd.DataFrame(
            {
                "query_id": list(self.query_ids),
                "documents": [len(p) for p in self.p],
                "uncertain": [int(((p > 0) & (p < 1)).sum()) for p in self.p],
                "expected_relevant": [float(p.sum()) for p in self.p],
            }
        )

    def __repr__(self) -> str:
        draws = f", {self.n_draws} posterior draws" if self.draws is not None else ""
        return short_repr(
            self,
            f"model={self.model!r}",
            f"{len(self.query_ids)} topics",
            f"{sum(len(p) for p in self.p)} documents{draws}",
        )

    def __str__(self) -> str:
        topics = self.topic_frame()
        uncertain = [p[(p > 0) & (p < 1)] for p in self.p]
        values = np.concatenate(uncertain) if uncertain else np.zeros(0)
        mean_p = f"mean p {values.mean():.4f}" if values.size else "none"
        head = (
            f"Probabilities of relevance from {self.model!r}: {len(topics)} topics, "
            f"{topics['documents'].sum()} documents, {topics['uncertain'].sum()} uncertain "
            f"(0 < p < 1; {mean_p}); expected relevant per topic "
            f"{topics['expected_relevant'].mean():.1f}"
            + (f"; {self.n_draws} posterior draws" if self.draws is not None else "")
        )
        shown = topics.head(10).to_string(index=False, float_format=lambda x: f"{x:.2f}")
        more = f"\n... {len(topics) - 10} more topics" if len(topics) > 10 else ""
        return f"{head}\n{shown}{more}"

    def to_frame(self) -> pd.DataFrame:
        """Tidy ``query_id, doc_id, probability`` table (the probabilistic qrels); with grades
        also ``p_ge_<grade>`` = P(grade ≥ grade) for every grade above the lowest."""
        import pandas as pd

        parts = []
        for t, (q, d, p) in enumerate(zip(self.query_ids, self.doc_ids, self.p)):
            columns = {"query_id": q, "doc_id": d, "probability": p}
            if self.grades is not None:
                exceed = self.grades.at_least(t, p)
                columns.update({grade_column(g): exceed[:, k] for k, g in enumerate(self.grades.levels[1:])})
            parts.append(pd.DataFrame(columns))
        return pd.concat(parts, ignore_index=True)

    @classmethod
    def from_frame(
        cls, campaign: Campaign, frame: pd.DataFrame, *, default: float | None = None
    ) -> RelevanceEstimate:
        """Align probabilistic qrels to a campaign's document index.

        Judged documents take their labels whatever the table says. An
        unjudged document missing from the table takes ``default``; with
        ``default=None`` a missing one is an error. ``p_ge_<grade>`` columns give
        the estimate its grades (:meth:`to_frame`); judged documents keep theirs.
        """
        lookup = {
            (str(q), str(d)): float(p)
            for q, d, p in zip(frame["query_id"], frame["doc_id"], frame["probability"])
        }
        graded = [c for c in frame.columns if GRADE_COLUMN.fullmatch(str(c))]
        if graded:
            grades = _grades_of_frame(campaign, frame, graded)
        ps = []
        for topic, relevant in zip(campaign.topics, campaign.relevant()):
            p = np.empty(topic.n_docs)
            for i, doc in enumerate(topic.doc_ids):
                value = lookup.get((topic.query_id, doc), default)
                if value is None and not topic.judged[i]:
                    raise InputError(
                        f"no probability for unjudged document {doc!r} of topic {topic.query_id!r}"
                    )
                p[i] = np.nan if value is None else value
            p = np.where(topic.judged, relevant.astype(float), p)
            ps.append(p)
        return cls(
            query_ids=campaign.query_ids,
            doc_ids=tuple(t.doc_ids for t in campaign.topics),
            p=tuple(ps),
            model="table",
            grades=grades(ps) if graded else None,
        )


def _grades_of_frame(campaign: Campaign, frame: pd.DataFrame, graded: list[str]):
    """``make(p) -> GradeShares`` from a table's ``p_ge_<grade>`` columns (checked against the
    campaign's relevance threshold); a document the table does not list puts its mass at the
    lowest grade of its side, a judged one all at its grade (:func:`judged_shares`)."""
    levels = levels_of_columns(graded)
    threshold = campaign.rel_threshold
    if threshold not in levels[1:]:
        raise InputError(
            f"the grade columns {graded} have no column p_ge_{threshold} for the relevance "
            f"threshold {threshold}"
        )
    anchor = levels.index(threshold)
    names = [grade_column(g) for g in levels[1:]]
    values = frame[names].to_numpy(dtype=float)
    probability = frame["probability"].to_numpy(dtype=float)
    # equal up to rounding: a file written with fewer digits than repr's is still consistent
    mismatch = ~np.isclose(values[:, anchor - 1], probability, rtol=1e-9, atol=1e-12)
    if mismatch.any():
        i = int(np.flatnonzero(mismatch)[0])
        error = InputError(
            f"probability {float(probability[i])!r} differs from p_ge_{threshold} "
            f"{float(values[i, anchor - 1])!r} for document {frame['doc_id'].iloc[i]!r} of topic "
            f"{frame['query_id'].iloc[i]!r}: the table was written at another relevance threshold"
        )
        error.ids = (str(frame["query_id"].iloc[i]), str(frame["doc_id"].iloc[i]))  # its line
        raise error
    row = {(str(q), str(d)): i for i, (q, d) in enumerate(zip(frame["query_id"], frame["doc_id"]))}
    exceed = []
    for topic in campaign.topics:
        index = np.array([row.get((topic.query_id, d), -1) for d in topic.doc_ids], dtype=np.int64)
        e = np.where((index >= 0)[:, None], values[np.maximum(index, 0)], np.nan)
        exceed.append(e)

    def make(ps):
        filled = [
            np.where(np.isnan(e), (np.arange(e.shape[1]) < anchor)[None, :] * p[:, None], e)
            for e, p in zip(exceed, ps)
        ]
        return judged_shares(from_exceedance(levels, anchor, filled, ps), campaign.topics)

    return make


class RelevanceModel:
    """Base class of relevance models (scikit-learn conventions).

    Hyper-parameters are keyword arguments of ``__init__`` stored verbatim;
    what ``fit`` learns ends in ``_``. Subclasses implement ``_fit`` and
    ``_predict``; the public methods validate and keep judged labels.
    """

    name: ClassVar[str] = ""

    def fit(
        self, campaign: Campaign, *, rng: int | np.random.Generator | None = None
    ) -> RelevanceModel:
        """Learn from the judged documents of ``campaign`` (labels at its rel_threshold)."""
        self._fit(campaign, as_generator(rng))
        self.fitted_ = True
        return self

    def predict(self, campaign: Campaign) -> RelevanceEstimate:
        """Probabilities for every document of ``campaign``; judged ones keep their labels."""
        if not getattr(self, "fitted_", False):
            raise RuntimeError(f"{type(self).__name__} is not fitted: call fit(campaign) first")
        p, draws, params = self._predict(campaign)
        relevant = campaign.relevant()
        p = tuple(
            np.where(t.judged, r.astype(float), np.clip(pt, 0.0, 1.0))
            for t, r, pt in zip(campaign.topics, relevant, p)
        )
        if isinstance(draws, LazyDraws):
            draws = draws.map(partial(_labelled_draws, campaign.topics, relevant))
        elif draws is not None:
            draws = tuple(
                _labelled_draws(campaign.topics, relevant, t, d) for t, d in enumerate(draws)
            )
        return RelevanceEstimate(
            query_ids=campaign.query_ids,
            doc_ids=tuple(t.doc_ids for t in campaign.topics),
            p=p,
            draws=draws,
            model=self.name,
            params=params,
        )

    def fit_predict(
        self, campaign: Campaign, *, rng: int | np.random.Generator | None = None
    ) -> RelevanceEstimate:
        return self.fit(campaign, rng=rng).predict(campaign)

    def get_params(self) -> dict[str, Any]:
        """The hyper-parameters given to ``__init__``."""
        import inspect

        names = [
            p for p in inspect.signature(type(self).__init__).parameters if p != "self"
        ]
        return {n: getattr(self, n) for n in names}

    def set_params(self, **params: Any) -> RelevanceModel:
        """Set hyper-parameters by name and return the model (scikit-learn's contract); values
        are checked by ``fit``. An unknown name is a ValueError listing the valid ones."""
        valid = self.get_params()
        unknown = sorted(set(params) - set(valid))
        if unknown:
            raise ValueError(
                f"{type(self).__name__} has no parameter {', '.join(map(repr, unknown))}; "
                f"valid parameters: {', '.join(valid) or 'none'}"
            )
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # hooks ---------------------------------------------------------------
    def _fit(self, campaign: Campaign, rng: np.random.Generator) -> None:
        raise NotImplementedError

    def _predict(
        self, campaign: Campaign
    ) -> tuple[list[np.ndarray], list[np.ndarray] | None, dict[str, Any]]:
        """Return per-topic p, optional per-topic draws, and reportable parameters."""
        raise NotImplementedError


def _labelled_draws(topics, relevant, t: int, draws: np.ndarray) -> np.ndarray:
    """Topic ``t``'s draws with its judged documents at their labels, the rest in [0, 1]."""
    out = np.clip(draws, 0.0, 1.0)  # one pass; np.where over every draw was 5x the cost
    judged = np.flatnonzero(topics[t].judged)
    out[:, judged] = relevant[t][judged].astype(float)
    return out


_REGISTRY: Registry[type[RelevanceModel]] = Registry("relevance model", discover="relimpute.relevance")


def register_model(cls: type[RelevanceModel]) -> type[RelevanceModel]:
    """Make a model available by its ``name`` (use at the bottom of the model's file)."""
    return _REGISTRY.register(cls)


#: the name register_model had until 0.3.0 (deprecated)
register = deprecated_alias(register_model, "register")


def available_models() -> list[str]:
    return _REGISTRY.names()


def get_model(name: str, **params: Any) -> RelevanceModel:
    """Instantiate a registered model by name with hyper-parameters."""
    return _REGISTRY.get(name)(**params)
