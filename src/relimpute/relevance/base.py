"""The relevance-model protocol, the estimate every model returns, and the registry.

A relevance model learns from a campaign's partial judgments and predicts,
for every (topic, document) of the campaign, the probability that the
document is relevant (Carterette 2007 §2: relevance as a random variable).
Judged documents keep their labels (p = 0 or 1). Models may also hand over
joint posterior draws of those probabilities so that parameter uncertainty
reaches the confidence engine's Monte Carlo path.

A new model is one file: subclass :class:`RelevanceModel`, give it a
``name``, implement ``_fit`` and ``_predict``, and call :func:`register` at
the bottom of the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._display import short_repr
from ..data import Campaign
from ..errors import InputError


def as_generator(rng: int | np.random.Generator | None) -> np.random.Generator:
    """Normalise an ``rng`` argument (seed, Generator or None) once."""
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


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
        (draw ``d`` is the same parameter draw in every topic), or None.
    model
        Name of the model that produced the estimate.
    params
        The fitted parameters worth reporting (plain numbers and arrays).
    """

    query_ids: tuple[str, ...]
    doc_ids: tuple[np.ndarray, ...]
    p: tuple[np.ndarray, ...]
    draws: tuple[np.ndarray, ...] | None = None
    model: str = "unknown"
    params: Mapping[str, Any] = field(default_factory=dict)

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
        return 0 if self.draws is None else int(self.draws[0].shape[0])

    def topic_frame(self) -> pd.DataFrame:
        """One row per topic: ``query_id, documents, uncertain`` (0 < p < 1) and
        ``expected_relevant`` (Σ p, judged relevant documents included)."""
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
        """Tidy ``query_id, doc_id, probability`` table (the probabilistic qrels)."""
        parts = [
            pd.DataFrame({"query_id": q, "doc_id": d, "probability": p})
            for q, d, p in zip(self.query_ids, self.doc_ids, self.p)
        ]
        return pd.concat(parts, ignore_index=True)

    @classmethod
    def from_frame(
        cls, campaign: Campaign, frame: pd.DataFrame, *, default: float | None = None
    ) -> RelevanceEstimate:
        """Align probabilistic qrels to a campaign's document index.

        Judged documents take their labels whatever the table says. An
        unjudged document missing from the table takes ``default``; with
        ``default=None`` a missing one is an error.
        """
        lookup = {
            (str(q), str(d)): float(p)
            for q, d, p in zip(frame["query_id"], frame["doc_id"], frame["probability"])
        }
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
        )


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
        if draws is not None:
            draws = tuple(
                np.where(t.judged[None, :], r[None, :].astype(float), np.clip(d, 0.0, 1.0))
                for t, r, d in zip(campaign.topics, relevant, draws)
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


_REGISTRY: dict[str, type[RelevanceModel]] = {}


def register(cls: type[RelevanceModel]) -> type[RelevanceModel]:
    """Make a model available by its ``name`` (use at the bottom of the model's file)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def available_models() -> list[str]:
    return sorted(_REGISTRY)


def get_model(name: str, **params: Any) -> RelevanceModel:
    """Instantiate a registered model by name with hyper-parameters."""
    try:
        cls = _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown relevance model {name!r}; available: {available_models()}") from None
    return cls(**params)
