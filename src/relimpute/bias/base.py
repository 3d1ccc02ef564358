"""The corrector interface: pooled runs, their qrels, new runs → corrected score per measure.

Every pool-bias corrector answers the same question: a run that did not
contribute to the pool is scored against the pool's judgments (the *reduced*
score, unjudged = nonrelevant); what would it have scored had it been pooled
too (its *full-pool* score)? A corrector is one file: subclass
:class:`Corrector`, give it a ``name``, implement ``_correct`` and call
:func:`register_corrector` at the bottom of the file; :func:`relimpute.testing.check_corrector`
checks its contract.

Scores are means over all the campaign's topics (a topic a run retrieves
nothing for scores 0, trec_eval ``-c``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._deprecation import deprecated_alias, renamed_kwargs, warn_deprecated
from .._registry import Registry
from ..data import Campaign
from ..errors import InputError
from ..measures import Measure, parse_measures
from ..measures._ranked import condense
from .pools import check_depth, pool_counts

#: The measures of the study (Lipani et al. 2016 §4; Webber & Park 2009 §2.1).
STUDY_MEASURES = ("P@5", "P@10", "P@20", "RBP(p=0.8)", "AP", "nDCG@10")


def topic_scores(
    campaign: Campaign,
    measures: Sequence[Measure],
    rows: np.ndarray,
    *,
    judged: Sequence[np.ndarray] | None = None,
    condensed: bool = False,
) -> np.ndarray:
    """``(M, S, T)`` per-topic scores of the systems ``rows`` (unjudged = nonrelevant).

    ``judged`` replaces the campaign's judged masks (a document can only count
    as relevant if it is judged in both); ``condensed`` scores Sakai's
    judged-only condensed lists.
    """
    out = np.zeros((len(measures), len(rows), campaign.n_topics))
    for t, topic in enumerate(campaign.topics):
        mask = topic.judged if judged is None else judged[t] & topic.judged
        ranking = topic.ranking[rows]
        if condensed:
            ranking = condense(ranking, mask)
        for m, measure in enumerate(measures):
            out[m, :, t] = measure.score(
                ranking, topic.grades, judged=mask, rel_threshold=campaign.rel_threshold
            )
    return out


@renamed_kwargs(depth="pool_depth")
@dataclass(frozen=True, eq=False)
class PoolContext:
    """A campaign whose judgments are the depth-``pool_depth`` pool of ``pooled``, ready for
    correctors.

    Attributes
    ----------
    campaign
        Runs and judgments (the qrels of the pool).
    pooled
        The runs that built the pool.
    pool_depth
        The pool depth (``depth`` until 0.3.0, still read with a warning).
    counts
        Per topic, ``(n,)`` how many pooled runs rank each document within ``depth``.
    cache
        Per-context results shared by correctors (leave-one-out scores).
    """

    campaign: Campaign
    pooled: tuple[str, ...]
    pool_depth: int
    counts: tuple[np.ndarray, ...]
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    @classmethod
    @renamed_kwargs(depth="pool_depth")
    def build(cls, campaign: Campaign, pooled: Sequence[str], pool_depth: int) -> PoolContext:
        pool_depth = check_depth(pool_depth)
        pooled = tuple(pooled)
        if not pooled:
            raise InputError("no pooled runs: a pool needs at least one run")
        unknown = [r for r in pooled if r not in set(campaign.systems)]
        if unknown:
            raise InputError(f"pooled run(s) not in the campaign: {', '.join(unknown[:5])}")
        deepest = max(
            int(t.depth[campaign.system_index(list(pooled))].max(initial=0))
            for t in campaign.topics
        )
        if pool_depth > deepest:
            raise InputError(
                f"pool depth {pool_depth} is larger than the pooled runs "
                f"(deepest ranking: {deepest})"
            )
        return cls(campaign, pooled, pool_depth, tuple(pool_counts(campaign, pooled, pool_depth)))

    @property
    def depth(self) -> int:
        """The pool depth under its name until 0.3.0 (deprecated: :attr:`pool_depth`)."""
        warn_deprecated("PoolContext.depth", "PoolContext.pool_depth", stacklevel=3)
        return self.pool_depth

    @property
    def pooled_rows(self) -> np.ndarray:
        return self.campaign.system_index(list(self.pooled))

    def top(self, row: int, t: int) -> np.ndarray:
        """``(n,)`` bool: what system ``row`` ranks within the pool depth on topic ``t``."""
        topic = self.campaign.topics[t]
        mask = np.zeros(topic.n_docs, dtype=bool)
        docs = topic.ranking[row, : self.pool_depth]
        mask[docs[docs >= 0]] = True
        return mask

    def reduced_scores(self, measures: Sequence[Measure], rows: np.ndarray) -> np.ndarray:
        """``(M, S, T)`` scores against the pool's judgments."""
        return topic_scores(self.campaign, measures, rows)


@dataclass(frozen=True, eq=False)
class Correction:
    """Corrected scores of some runs by one corrector.

    Attributes
    ----------
    corrector
        The corrector's name.
    table
        One row per (run, measure): ``run, measure, reduced, estimate,
        ci_low, ci_high`` (the 95% interval where the method gives one, else
        NaN) and the corrector's own diagnostics.
    """

    corrector: str
    table: pd.DataFrame

    def to_frame(self) -> pd.DataFrame:
        return self.table.assign(corrector=self.corrector)[
            ["corrector", *self.table.columns]
        ].reset_index(drop=True)

    def __str__(self) -> str:
        return f"Correction({self.corrector})\n{self.table.to_string(index=False)}"


class Corrector:
    """Base class of pool-bias correctors (scikit-learn conventions: keyword hyper-parameters)."""

    name: ClassVar[str] = ""
    #: measure families the method is defined for (None = any measure)
    families: ClassVar[tuple[str, ...] | None] = None

    def supports(self, measure: Measure) -> bool:
        return self.families is None or measure.family in self.families

    @renamed_kwargs(depth="pool_depth")
    def correct(
        self,
        campaign: Campaign,
        pooled: Sequence[str],
        runs: str | Sequence[str],
        measures: str | Iterable[str | Measure] = STUDY_MEASURES,
        *,
        pool_depth: int,
    ) -> Correction:
        """Correct ``runs`` (not pooled) scored against the depth-``pool_depth`` pool of ``pooled``.

        ``campaign`` holds the runs and the pool's judgments (its qrels).
        Measures the method does not cover are left out of the table.
        """
        return self.correct_context(PoolContext.build(campaign, pooled, pool_depth), runs, measures)

    def correct_context(
        self,
        context: PoolContext,
        runs: str | Sequence[str],
        measures: str | Iterable[str | Measure] = STUDY_MEASURES,
    ) -> Correction:
        """:meth:`correct` on a prepared :class:`PoolContext` (shared across correctors)."""
        runs = (runs,) if isinstance(runs, str) else tuple(runs)
        if not runs:
            raise InputError("no run to correct")
        overlap = [r for r in runs if r in set(context.pooled)]
        if overlap:
            raise InputError(f"run(s) to correct are in the pool: {', '.join(overlap)}")
        unknown = [r for r in runs if r not in set(context.campaign.systems)]
        if unknown:
            raise InputError(f"run(s) not in the campaign: {', '.join(unknown[:5])}")
        parsed = [m for m in parse_measures(measures) if self.supports(m)]
        rows = context.campaign.system_index(list(runs))
        reduced = (
            context.reduced_scores(parsed, rows).mean(axis=2)
            if parsed
            else np.zeros((0, len(runs)))
        )
        parts = []
        for m, measure in enumerate(parsed):
            columns = self._correct(context, rows, measure, reduced[m])
            frame = pd.DataFrame(
                {"run": list(runs), "measure": str(measure), "reduced": reduced[m]}
            )
            for key in ("estimate", "ci_low", "ci_high"):
                frame[key] = np.asarray(columns.pop(key, np.full(len(runs), np.nan)), dtype=float)
            for key, value in columns.items():
                frame[key] = value
            parts.append(frame)
        table = (
            pd.concat(parts, ignore_index=True)
            if parts
            else pd.DataFrame(
                columns=["run", "measure", "reduced", "estimate", "ci_low", "ci_high"]
            )
        )
        return Correction(self.name, table)

    def _correct(
        self, context: PoolContext, rows: np.ndarray, measure: Measure, reduced: np.ndarray
    ) -> dict[str, np.ndarray]:
        """Columns ``estimate`` (and ``ci_low``/``ci_high``, diagnostics) for the runs ``rows``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        import inspect

        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        args = ", ".join(f"{n}={getattr(self, n)!r}" for n in names if hasattr(self, n))
        return f"{type(self).__name__}({args})"


_REGISTRY: Registry[type[Corrector]] = Registry("corrector", sort=False, discover="relimpute.bias")


def register_corrector(cls: type[Corrector]) -> type[Corrector]:
    """Make a corrector available by its ``name`` (bottom of the corrector's module)."""
    return _REGISTRY.register(cls)


#: the name register_corrector had until 0.3.0 (deprecated)
register = deprecated_alias(register_corrector, "register")


def available_correctors() -> list[str]:
    """The correctors' names, in the order their modules registered them."""
    return _REGISTRY.names()


def get_corrector(name: str, **params: Any) -> Corrector:
    return _REGISTRY.get(name)(**params)
