"""The selection loop: propose, judge, update, until the comparison is decided.

Carterette 2007 Algorithm 1 with any registered strategy. A
:class:`SelectionSession` is the loop one step at a time (the interactive
``relimpute judge`` command drives it); :func:`run_selection` runs it to the
end with an assessor and returns a :class:`SelectionResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .._display import short_repr
from ..data import Campaign
from ..relevance.base import as_generator
from .assessors import Assessor
from .base import SelectionState, SelectionStrategy, get_strategy
from .stopping import PairConfidence, StoppingRule

TRACE_COLUMNS = [
    "judgment",
    "query_id",
    "doc_id",
    "relevance",
    "relevant",
    "weight",
    "p_before",
    "system_a",
    "system_b",
    "e_delta_map",
    "sd_delta_map",
    "p_a_better",
    "confidence",
    "undecided",
]


class SelectionSession:
    """One selection loop, advanced a judgment at a time.

    Parameters
    ----------
    campaign
        Runs and the judgments known so far (hide the rest with
        :meth:`Campaign.with_judged` for a simulation).
    strategy
        A registered strategy name (``"mtc"``, ``"rtc"``, ``"ip"``,
        ``"depth"``, ``"mtf"``) or a :class:`SelectionStrategy` instance.
    systems
        The compared systems: two for a pair, more for a run set (weights
        and stopping over every pair); None = every system of the campaign.
    confidence, budget
        The :class:`StoppingRule` (``confidence=None``: no confidence stop).
    depth
        Cut every ranking at this rank first (None = full depth).
    rng
        Seed or Generator for strategies that draw (relevance-model fits).
    strategy_params
        Hyper-parameters for a strategy given by name.

    Notes
    -----
    While judging, the run set being evaluated is the compared systems: the
    MTC weights and the confidence use ``E[R_t]`` over the judged documents
    and the unjudged ones a compared system retrieves (Carterette 2007 §4.3
    judges for the two initial runs before the others are seen). The other
    systems of ``campaign`` are carried along (``campaign_after``) but do not
    enter the loop.
    """

    def __init__(
        self,
        campaign: Campaign,
        strategy: str | SelectionStrategy = "mtc",
        systems: Sequence[str] | None = None,
        *,
        confidence: float | None = 0.95,
        budget: int | None = None,
        depth: int | None = None,
        rng: int | np.random.Generator | None = None,
        **strategy_params,
    ):
        self.original = campaign
        self.stopping = StoppingRule(confidence=confidence, budget=budget)
        systems = campaign.systems if systems is None else tuple(systems)
        self.state = SelectionState(campaign.truncated(depth), systems)
        self.state.target_confidence = confidence
        self.strategy = get_strategy(strategy, **strategy_params)
        self.strategy.start(self.state, as_generator(rng))
        self.tracker = self.strategy.confidence_tracker(self.state) or PairConfidence(self.state)
        self.strategy.set_undecided(self.state, ~self.stopping.decided(self.tracker.confidence()))
        self.initial_confidence = float(self.tracker.confidence().min())
        self.rows: list[dict] = []
        self._proposal: tuple[int, int] | None = None

    # -- reading -----------------------------------------------------------
    @property
    def n_judged(self) -> int:
        """New judgments made in this session."""
        return len(self.rows)

    def confidence(self) -> np.ndarray:
        """``(P,)`` ``max(P, 1 − P)`` per compared pair."""
        return self.tracker.confidence()

    def stop_reason(self) -> str | None:
        return self.stopping.reason(self.confidence(), self.n_judged, self.state.exhausted())

    def propose(self) -> tuple[str, str] | None:
        """``(query_id, doc_id)`` of the next document to judge, or None."""
        choice = self.strategy.propose(self.state)
        self._proposal = choice
        if choice is None:
            return None
        return self.state.query_id(choice[0]), self.state.doc_id(choice[0], choice[1])

    def pairs_frame(self) -> pd.DataFrame:
        """Per compared pair: E[ΔMAP], sd, P(ΔMAP > 0) and max(P, 1 − P)."""
        mean, var = self.tracker.moments()
        p = self.tracker.p_a_better()
        names = np.asarray(self.state.systems, dtype=object)
        return pd.DataFrame(
            {
                "system_a": names[self.state.pairs[:, 0]],
                "system_b": names[self.state.pairs[:, 1]],
                "e_delta_map": mean,
                "sd_delta_map": np.sqrt(var),
                "p_a_better": p,
                "confidence": np.maximum(p, 1.0 - p),
            }
        )

    # -- acting ------------------------------------------------------------
    def judge(self, query_id: str, doc_id: str, grade: int) -> dict:
        """Record a judgment of a candidate document and update everything."""
        t, i = self._locate_candidate(query_id, doc_id)
        weight = self.strategy.last_weight_ if self._proposal == (t, i) else float("nan")
        p_before = self.state.record(t, i, int(grade))
        changed = self.strategy.observe(self.state, t, i, p_before)
        if changed is None:
            self.tracker.update(self.state, t, i)
        else:
            self.tracker.refresh(self.state, sorted(set(changed) | {t}))
        confidence = self.confidence()
        self.strategy.set_undecided(self.state, ~self.stopping.decided(confidence))
        self._proposal = None
        worst = int(np.argmin(confidence))
        mean, var = self.tracker.moments()
        a, b = self.state.pairs[worst]
        row = {
            "judgment": self.n_judged + 1,
            "query_id": str(query_id),
            "doc_id": str(doc_id),
            "relevance": int(grade),
            "relevant": bool(self.state.p[t][i] == 1.0),
            "weight": weight,
            "p_before": p_before,
            "system_a": self.state.systems[a],
            "system_b": self.state.systems[b],
            "e_delta_map": float(mean[worst]),
            "sd_delta_map": float(np.sqrt(var[worst])),
            "p_a_better": float(self.tracker.p_a_better()[worst]),
            "confidence": float(confidence[worst]),
            "undecided": int((~self.stopping.decided(confidence)).sum()),
        }
        self.rows.append(row)
        return row

    def skip(self, query_id: str, doc_id: str) -> None:
        """Take a candidate document out of this session without judging it."""
        t, i = self._locate_candidate(query_id, doc_id)
        self.state.exclude(t, i)
        self.strategy.skipped(self.state, t, i)
        self._proposal = None

    def _locate_candidate(self, query_id: str, doc_id: str) -> tuple[int, int]:
        proposal = self._proposal
        if proposal is not None and (
            self.state.query_id(proposal[0]) == str(query_id)
            and self.state.doc_id(*proposal) == str(doc_id)
        ):
            return proposal
        return self.state.candidate(query_id, doc_id)

    # -- results -----------------------------------------------------------
    def trace(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=TRACE_COLUMNS)

    def result(self, stopped_because: str) -> SelectionResult:
        trace = self.trace()
        topics = tuple(
            replace(t, judged=j.copy(), grades=g.copy())
            for t, j, g in zip(self.original.topics, self.state.judged, self.state.grades)
        )
        return SelectionResult(
            judgments=trace[["query_id", "doc_id", "relevance"]].copy(),
            trace=trace,
            campaign_after=replace(self.original, topics=topics),
            stopped_because=stopped_because,
            pairs=self.pairs_frame(),
            strategy=self.strategy.name,
            initial_confidence=self.initial_confidence,
        )


@dataclass(frozen=True, slots=True, eq=False)
class SelectionResult:
    """What a selection loop did.

    Attributes
    ----------
    judgments
        The new judgments in the order made (``query_id, doc_id, relevance``);
        ``judgments.head(b)`` is the pool at budget ``b``.
    trace
        One row per judgment (columns :data:`TRACE_COLUMNS`): the document,
        its label, the strategy's weight, and, after it, the least decided
        pair's E[ΔMAP], sd, P(ΔMAP > 0), ``confidence = max(P, 1 − P)`` and
        the number of pairs still undecided.
    campaign_after
        The input campaign (full depth) with the new judgments added.
    stopped_because
        ``"confidence"``, ``"budget"`` or ``"exhausted"``.
    pairs
        Per compared pair at the end: E[ΔMAP], sd, P(ΔMAP > 0), confidence.
    strategy
        The strategy's name.
    initial_confidence
        The least decided pair's ``max(P, 1 − P)`` before any judgment.
    """

    judgments: pd.DataFrame
    trace: pd.DataFrame
    campaign_after: Campaign
    stopped_because: str
    pairs: pd.DataFrame
    strategy: str
    initial_confidence: float

    @property
    def n_judgments(self) -> int:
        return len(self.judgments)

    @property
    def confidence(self) -> float:
        """The least decided pair's ``max(P, 1 − P)`` at the end."""
        return float(self.pairs["confidence"].min())

    def pool(self, budget: int) -> pd.DataFrame:
        """The judgments made within the first ``budget`` (the pool at that budget)."""
        return self.judgments.head(budget).reset_index(drop=True)

    def to_frame(self) -> pd.DataFrame:
        """The trace: one row per judgment (columns :data:`TRACE_COLUMNS`)."""
        return self.trace.copy()

    def __repr__(self) -> str:
        return short_repr(
            self,
            f"strategy={self.strategy!r}",
            f"{self.n_judgments} judgments",
            f"stopped_because={self.stopped_because!r}",
            f"confidence {self.initial_confidence:.3f} -> {self.confidence:.3f}",
        )

    def __str__(self) -> str:
        n_rel = int(self.trace["relevant"].sum()) if len(self.trace) else 0
        head = (
            f"{self.strategy}: {self.n_judgments} judgments ({n_rel} relevant), "
            f"stopped because of {self.stopped_because}; confidence "
            f"{self.initial_confidence:.3f} -> {self.confidence:.3f} over {len(self.pairs)} pair(s)"
        )
        lines = [head]
        for row in self.pairs.head(5).itertuples(index=False):
            lines.append(
                f"  {row.system_a} vs {row.system_b}: E[dMAP] = {row.e_delta_map:+.4f} "
                f"(sd {row.sd_delta_map:.4f}), P(a better) = {row.p_a_better:.3f}"
            )
        if len(self.pairs) > 5:
            lines.append(f"  ... {len(self.pairs) - 5} more pairs")
        return "\n".join(lines)


def run_selection(
    campaign: Campaign,
    strategy: str | SelectionStrategy,
    assessor: Assessor | Callable[[str, str], int],
    systems: Sequence[str] | None = None,
    *,
    confidence: float | None = 0.95,
    budget: int | None = None,
    depth: int | None = None,
    rng: int | np.random.Generator | None = None,
    **strategy_params,
) -> SelectionResult:
    """Judge documents chosen by ``strategy`` until a stopping rule fires.

    Parameters are those of :class:`SelectionSession`; ``assessor`` is an
    :class:`Assessor` or a callable ``(query_id, doc_id) -> grade``. The
    confidence is checked before the first judgment, so an already decided
    comparison stops with none.

    Examples
    --------
    >>> hidden = campaign.with_judged([np.zeros(t.n_docs, bool) for t in campaign.topics])
    >>> result = run_selection(hidden, "mtc", SimulatedAssessor(campaign),
    ...                        systems=("runA", "runB"), depth=100)
    >>> result.n_judgments, result.stopped_because
    """
    ask = assessor.judge if isinstance(assessor, Assessor) else assessor
    session = SelectionSession(
        campaign,
        strategy,
        systems,
        confidence=confidence,
        budget=budget,
        depth=depth,
        rng=rng,
        **strategy_params,
    )
    while True:
        reason = session.stop_reason()
        if reason is not None:
            return session.result(reason)
        proposal = session.propose()
        if proposal is None:
            return session.result("exhausted")
        query_id, doc_id = proposal
        session.judge(query_id, doc_id, ask(query_id, doc_id))
