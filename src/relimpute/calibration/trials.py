"""The reusability study of Carterette (2007, §4.3): trials and their protocol.

One trial (Carterette 2007 §4.3; docs/math/reference-points.md):

1. draw k runs (uniformly, or one per group: k of the groups uniformly, then
   one run uniformly within each), and c of them as the initial systems;
2. hide every judgment, and judge documents for the initial systems with a
   selection strategy and an oracle assessor built from the full qrels until
   ``max(P, 1 − P) ≥ α`` (or a budget);
3. with no further judgments, fit the strategy's relevance model on the
   judgments gathered and estimate every document of the k runs;
4. compute ``P(MAP_a > MAP_b)`` for all k(k−1)/2 pairs and E[MAP] per run.

The truth is the sign of ΔMAP under the full qrels. Runs are truncated at a
depth first (Carterette: 100) and that truncation applies to the truth too.

Step 2 sees only the initial systems: the others "do not exist yet", so the
selection loop's E[R] counts the documents the initial runs retrieve (R
depends on the run set: docs/math/average-precision.md). Step 4 then counts
those of all k runs. This reading reproduces the share of trials that stop
before the first judgment in the independent reference measurement
(docs/math/reference-points.md, which gives the numbers); counting the
documents of all k runs already during step 2 does not.
Every strategy sees the same trials (paired comparisons), and trials are
reproducible: trial ``t`` of a study with seed ``s`` gets its own seed from
``SeedSequence(s).spawn``, and each strategy's randomness within a trial is
derived from that seed and the strategy's name alone.
"""

from __future__ import annotations

import time
import warnings
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..data import Campaign
from ..relevance import get_model
from .metrics import kendall_tau
from .strategies import Strategy

# --------------------------------------------------------------------------- campaign preparation


def run_similarity(campaign: Campaign) -> np.ndarray:
    """``(S, S)`` share of documents two runs retrieve in common, averaged over topics.

    Per topic ``|A ∩ B| / max(|A|, |B|)`` (the share of the longer list that
    the other run also retrieves; at equal depth simply the share in common,
    Carterette 2007 §5 after Aslam & Savell 2003), averaged over the topics
    where at least one of the two runs retrieves something.
    """
    n = campaign.n_systems
    total = np.zeros((n, n))
    count = np.zeros((n, n))
    for t in campaign.topics:
        member = np.zeros((n, t.n_docs), dtype=np.float64)
        rows, cols = np.nonzero(t.ranking >= 0)
        member[rows, t.ranking[rows, cols]] = 1.0
        common = member @ member.T
        longest = np.maximum.outer(t.depth, t.depth).astype(float)
        active = longest > 0
        total[active] += common[active] / longest[active]
        count[active] += 1
    with np.errstate(invalid="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), 0.0)


# --------------------------------------------------------------------------- drawing trials


@dataclass(frozen=True, slots=True)
class TrialSpec:
    """The run set of one trial.

    Attributes
    ----------
    trial
        The trial number within its study.
    seed
        The trial's own seed (rerun it alone with :func:`run_trial`).
    systems
        The k runs, the initial ones first.
    n_initial
        How many of ``systems`` are initial (c).
    """

    trial: int
    seed: int
    systems: tuple[str, ...]
    n_initial: int

    @property
    def initial(self) -> tuple[str, ...]:
        return self.systems[: self.n_initial]


def draw_trial(
    systems: Sequence[str],
    k: int,
    c: int,
    rng: np.random.Generator,
    groups: Mapping[str, str] | None = None,
) -> tuple[tuple[str, ...], int]:
    """Draw k runs (optionally one per group) and put c random initial ones first."""
    if not 2 <= c <= k:
        raise ValueError(f"need 2 <= c <= k, got c={c}, k={k}")
    systems = list(systems)
    if groups is None:
        if k > len(systems):
            raise ValueError(f"k={k} exceeds the {len(systems)} runs available")
        chosen = [systems[i] for i in rng.choice(len(systems), size=k, replace=False)]
    else:
        unknown = [s for s in systems if s not in groups]
        if unknown:
            raise ValueError(f"runs without a group: {unknown[:5]}")
        by_group: dict[str, list[str]] = {}
        for s in systems:
            by_group.setdefault(groups[s], []).append(s)
        names = sorted(by_group)
        if k > len(names):
            raise ValueError(f"k={k} exceeds the {len(names)} groups available")
        picked = [names[i] for i in rng.choice(len(names), size=k, replace=False)]
        chosen = [by_group[g][int(rng.integers(len(by_group[g])))] for g in picked]
    order = rng.permutation(k)
    return tuple(chosen[i] for i in order), c


def trial_specs(
    systems: Sequence[str],
    n_trials: int,
    k: int,
    c: int,
    seed: int | None,
    groups: Mapping[str, str] | None = None,
) -> list[TrialSpec]:
    """The run sets of ``n_trials`` trials, one SeedSequence child per trial."""
    if n_trials < 1:
        raise ValueError(f"n_trials must be positive, got {n_trials}")
    children = np.random.SeedSequence(seed).spawn(n_trials)
    specs = []
    for t, child in enumerate(children):
        trial_seed = int(child.generate_state(1)[0])
        chosen, n_initial = draw_trial(systems, k, c, np.random.default_rng([trial_seed, 0]), groups)
        specs.append(TrialSpec(trial=t, seed=trial_seed, systems=chosen, n_initial=n_initial))
    return specs


def strategy_rng(trial_seed: int, name: str) -> np.random.Generator:
    """A strategy's generator within a trial: depends on the trial seed and the name only."""
    return np.random.default_rng([trial_seed, zlib.crc32(name.encode()) + 1])


# --------------------------------------------------------------------------- the wiring to selection and the engine


def _engine():
    from ..confidence import ConfidenceEngine

    return ConfidenceEngine()


def _expected_map(comparison) -> pd.Series:
    """E[MAP] per system (indexed by name) from a :class:`~relimpute.confidence.Comparison`."""
    scores = comparison.scores
    return pd.Series(np.asarray(scores.e_map, dtype=float), index=list(scores.systems))


def true_map(campaign: Campaign, systems: Sequence[str] | None = None, measure: str = "AP") -> pd.Series:
    """MAP (or ``measure``'s mean over topics) of each system under the campaign's full
    judgments (the study's truth).

    Computed by the confidence engine with every p in {0, 1}, where E[AP] is
    AP exactly (unjudged = nonrelevant; a topic a run retrieves nothing for
    scores 0), so truth and predictions share one definition of MAP; another
    measure is scored on two Monte Carlo draws, which with nothing uncertain are exact.
    """
    systems = list(campaign.systems if systems is None else systems)
    estimate = get_model("nonrelevant").fit_predict(campaign)
    method = "normal" if measure == "AP" else "monte carlo"  # p is 0 or 1: either is exact
    scores = _engine().confidence(campaign, estimate, systems=systems, pairs=[], measure=measure,
                                  method=method, n_draws=2, rng=0).scores  # fmt: skip
    return pd.Series(np.asarray(scores.e_map, dtype=float), index=list(scores.systems))


def _gather_judgments(
    hidden: Campaign,
    assessor,
    strategy: Strategy,
    initial: tuple[str, ...],
    confidence: float | None,
    budget: int | None,
    rng: np.random.Generator,
):
    """Judge for the initial systems only (the others do not exist yet, §4.3 step 3)."""
    from ..selection import run_selection

    return run_selection(
        hidden.subset(list(initial)),
        strategy.selector,
        assessor,
        systems=initial,
        confidence=confidence,
        budget=budget,
        rng=rng,
        **strategy.selector_kwargs(),
    )


# --------------------------------------------------------------------------- one trial


def _with_labels(campaign: Campaign, labelled: Campaign) -> Campaign:
    """``campaign`` (all k runs) knowing exactly the labels of ``labelled`` (same document index).

    The oracle labels a document missing from the full qrels nonrelevant, so
    the judgments gathered are copied over rather than unhidden.
    """
    topics = tuple(
        replace(t, judged=src.judged.copy(), grades=src.grades.copy())
        for t, src in zip(campaign.topics, labelled.topics)
    )
    return replace(campaign, topics=topics)


#: the relevance model that reads a campaign's label sources (relimpute.relevance.FusionLLM)
LABELS_MODEL = "fusion-llm"


def _label_free(campaign: Campaign, reads_labels: bool) -> Campaign:
    """``campaign`` without its label sources for a selector or model that reads none: the
    documents only a label names count towards R (docs/math/average-precision.md), which is
    the labels' model's to use; a label-blind strategy answers as without labels."""
    return campaign if reads_labels or not campaign.labels else replace(campaign, labels=())


def run_trial(
    campaign: Campaign,
    spec: TrialSpec,
    strategies: Sequence[Strategy],
    *,
    confidence: float = 0.95,
    similarity: np.ndarray | None = None,
    truth: pd.Series | None = None,
    max_judgments: int | None = None,
    measure: str = "AP",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run every strategy on one trial; return its pair rows and its per-strategy rows.

    ``max_judgments`` stops a strategy's judging there when ``confidence`` is not
    reached first (its row says ``stopped_because = "budget"``); None judges on.

    ``campaign`` must already be truncated (:meth:`~relimpute.data.Campaign.truncated` with ``shrink``) and
    hold the full judgments; ``similarity`` and ``truth`` (from
    :func:`run_similarity`, :func:`true_map`) are computed here when absent.
    Warnings raised while a strategy runs (e.g. a model's convergence
    warning) are recorded in its row (``warnings``, ``warning_messages``)
    instead of being printed once per trial. ``measure``: the confidence is stated for its
    mean over topics instead of MAP (the judging still follows its strategy).
    """
    systems = list(spec.systems)
    full = campaign.subset(systems)
    if truth is None:
        truth = true_map(campaign, measure=measure)  # every run: the ranks are the collection's
    if similarity is None:
        sim = run_similarity(full)
    else:
        rows = campaign.system_index(systems)
        sim = similarity[np.ix_(rows, rows)]
    from ..selection import SimulatedAssessor

    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    initial = set(spec.initial)
    engine = _engine()
    assessor = SimulatedAssessor(full)
    pair_rows, trial_rows, spent = [], [], {}
    for strategy in strategies:
        rng = strategy_rng(spec.seed, strategy.name)
        started = time.perf_counter()
        if strategy.budget_from is None:
            target, budget = confidence, max_judgments
        else:  # spends what another strategy spent, not stopped at the confidence
            target, budget = None, spent[strategy.budget_from]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if strategy.design is not None:  # a survey strategy: a sample, an estimator
                from .survey import run_survey

                reads = strategy.make_model().name == LABELS_MODEL  # --llm-labels' control
                e_map, comparison, n_judged, stopped, reached = run_survey(
                    _label_free(full, reads), _label_free(hidden, False), strategy, budget, rng,
                    spec.initial, measure)
            else:
                e_map, comparison, n_judged, stopped, reached = _select_and_fit(
                    full, hidden, assessor, strategy, spec, systems, target, budget, rng, engine,
                    measure)
            spent[strategy.name] = n_judged
        comparison = comparison.copy()
        ia = full.system_index(comparison["system_a"].tolist())
        ib = full.system_index(comparison["system_b"].tolist())
        comparison.insert(0, "strategy", strategy.name)
        comparison.insert(0, "trial", spec.trial)
        comparison["true_delta_map"] = (
            truth[comparison["system_a"]].to_numpy() - truth[comparison["system_b"]].to_numpy()
        )
        ranks = truth.rank(ascending=False, method="min")  # 1 = the best of the collection
        comparison["true_rank_a"] = ranks[comparison["system_a"]].to_numpy()
        comparison["true_rank_b"] = ranks[comparison["system_b"]].to_numpy()
        comparison["n_initial"] = comparison["system_a"].isin(initial).astype(int) + comparison[
            "system_b"
        ].isin(initial).astype(int)
        comparison["similarity"] = sim[ia, ib]
        pair_rows.append(comparison)
        trial_rows.append(
            {
                "trial": spec.trial,
                "strategy": strategy.name,
                "seed": spec.seed,
                "systems": ",".join(systems),
                "initial": ",".join(spec.initial),
                "judgments": n_judged,
                "stopped_because": stopped,
                "selection_confidence": reached,
                "tau": kendall_tau(e_map[systems].to_numpy(), truth[systems].to_numpy()),
                "seconds": time.perf_counter() - started,
                "warnings": len(caught),
                "warning_messages": " | ".join(sorted({str(w.message)[:200] for w in caught})),
            }
        )
    return pd.concat(pair_rows, ignore_index=True), pd.DataFrame(trial_rows)


def _select_and_fit(full, hidden, assessor, strategy, spec, systems, target, budget, rng, engine,
                    measure):
    """Steps 2–4 for a selector and a model: (E[MAP], the pair rows, judgments, why judging
    stopped, the confidence it reached)."""
    model = strategy.make_model()
    judging = _label_free(hidden, strategy.selector_kwargs().get("model") == LABELS_MODEL)
    result = _gather_judgments(judging, assessor, strategy, spec.initial, target, budget, rng)
    after = _with_labels(_label_free(full, model.name == LABELS_MODEL), result.campaign_after)
    estimate = model.fit(after, rng=rng).predict(after)
    method = ("monte carlo" if strategy.n_draws
              else "normal" if measure == "AP" else "auto")  # fmt: skip
    compared = engine.confidence(
        after, estimate, systems=systems, measure=measure, method=method,
        n_draws=strategy.n_draws or 4000, rng=rng,
    )  # fmt: skip
    rows = compared.to_frame()[["system_a", "system_b", "e_delta_map", "p_a_better"]]
    return (_expected_map(compared), rows, result.n_judgments, result.stopped_because,
            result.confidence)
