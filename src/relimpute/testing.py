"""The contracts a relevance model and a pool-bias corrector honour, as checks anyone can run.

As scikit-learn's ``check_estimator``: :func:`check_relevance_model` and
:func:`check_corrector` run a list of named checks on a model or corrector of
yours (an instance, or a class built with its ``contract_params`` class
attribute, else its defaults) and raise :class:`AssertionError` naming the
check and what failed; they return the names of the checks passed. The
project's own tests run them over every registered model and corrector.

The checks run on small campaigns that hold the edge cases at once
(:func:`contract_campaign`, :func:`contract_pool`); a check says what it
asserts in its docstring (``RELEVANCE_MODEL_CHECKS``, ``CORRECTOR_CHECKS``).
:func:`make_campaign` writes such a campaign by hand, for tests of your own.
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from .bias import Corrector, topic_scores
from .data import Campaign
from .errors import ConvergenceWarning, InputError
from .measures import parse_measures
from .relevance import RelevanceModel

__all__ = [
    "CORRECTOR_CHECKS",
    "RELEVANCE_MODEL_CHECKS",
    "check_corrector",
    "check_relevance_model",
    "contract_campaign",
    "contract_pool",
    "make_campaign",
]


def make_campaign(
    qrels, runs: Mapping, *, hidden=(), topic: str = "q", quiet: bool = False, **options: Any
) -> Campaign:
    """A campaign written by hand, for tests: ``qrels`` as ``(topic, doc, grade)`` triples,
    ``runs`` as ``{name: {topic: [documents in rank order]}}`` (or ``{name: [documents]}``
    for the one topic ``topic``); ``hidden`` the ``(topic, doc)`` judgments to hide (judged
    no more, as a partial judgment would leave them); ``quiet`` silences the warnings of
    building it (a run that misses a topic); ``options`` go to :meth:`Campaign.from_frames`."""
    frames = {}
    for name, lists in runs.items():
        lists = lists if isinstance(lists, Mapping) else {topic: lists}
        rows = [
            (q, d, float(len(docs) - i)) for q, docs in lists.items() for i, d in enumerate(docs)
        ]
        frames[name] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    frame = pd.DataFrame(list(qrels), columns=["query_id", "doc_id", "relevance"])
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
        campaign = Campaign.from_frames(frame, frames, **options)
    hidden = set(hidden)
    if not hidden:
        return campaign
    return campaign.with_judged(
        [
            t.judged & ~np.isin(t.doc_ids, [d for q, d in hidden if q == t.query_id])
            for t in campaign.topics
        ]
    )


def contract_campaign() -> Campaign:
    """The relevance-model contract's campaign: a topic with no judgments (``t2``), a run that
    retrieves nothing for a topic (``C`` on ``t2``), and unjudged documents no run retrieves
    (``d9``, ``d10`` of ``t1``); graded qrels at relevance threshold 1."""
    qrels = [
        ("t1", "d1", 2), ("t1", "d2", 0), ("t1", "d3", 1), ("t1", "d4", 0),
        ("t1", "d5", 2), ("t1", "d9", 0), ("t1", "d10", 2),
        ("t2", "e1", 1), ("t2", "e2", 0),
        ("t3", "f1", 1), ("t3", "f2", 0), ("t3", "f3", 0),
    ]  # fmt: skip
    lists = {
        "A": {
            "t1": ["d1", "d2", "d3", "d6", "d7"],
            "t2": ["e1", "e3", "e2"],
            "t3": ["f1", "f2", "f4"],
        },
        "B": {"t1": ["d5", "d1", "d6", "d8"], "t2": ["e3", "e1"], "t3": ["f3", "f1"]},
        "C": {"t1": ["d2", "d4", "d8", "d7", "d1"], "t3": ["f4", "f1", "f2"]},
    }
    hidden = {("t1", "d9"), ("t1", "d10"), ("t2", "e1"), ("t2", "e2")}
    return make_campaign(qrels, lists, hidden=hidden, quiet=True, rel_threshold=1)


def contract_pool() -> tuple[Campaign, tuple[str, ...], int, tuple[str, ...]]:
    """The corrector contract's pool: ``(campaign, pooled, depth, new runs)``, the campaign
    judged to the depth-2 pool of runs A and B; the new runs N and M each bring a relevant
    document of their own (N on topic 1, M on topic 3), and M retrieves nothing for topic 2."""
    qrels = [
        ("1", "a", 1), ("1", "b", 0), ("1", "d", 1), ("1", "x", 1),
        ("2", "p", 1), ("2", "q", 0), ("2", "z", 0),
        ("3", "g", 0), ("3", "h", 1), ("3", "y", 1),
    ]  # fmt: skip
    lists = {
        "A": {"1": ["a", "b", "c"], "2": ["p", "q", "r"], "3": ["g", "h", "i"]},
        "B": {"1": ["b", "d", "e"], "2": ["p", "q", "s"], "3": ["h", "g"]},
        "N": {"1": ["a", "x", "d"], "2": ["p", "z", "q"], "3": ["g", "i", "h"]},
        "M": {"1": ["c", "d"], "3": ["y", "h", "g"]},
    }
    full = make_campaign(qrels, lists, quiet=True)
    return full.pooled(2, ["A", "B"]), ("A", "B"), 2, ("N", "M")


def _run_checks(kind: str, subject, checks: dict, only: Sequence[str] | None) -> list[str]:
    unknown = sorted(set(only or ()) - set(checks))
    if unknown:
        raise ValueError(f"no {kind} check {', '.join(unknown)}; checks: {', '.join(checks)}")
    passed = []
    for name, check in checks.items():
        if only is not None and name not in only:
            continue
        try:
            check(subject)
        except Exception as error:  # a check that raises anything else fails too, saying what
            why = error if isinstance(error, AssertionError) else f"{type(error).__name__}: {error}"
            label = _label(subject.subject)
            raise AssertionError(f"{kind} check {name!r} failed for {label}: {why}") from error
        passed.append(name)
    return passed


def _label(obj) -> str:
    """``repr(obj)``, else its class's name (a broken ``get_params`` breaks the repr too)."""
    try:
        return repr(obj)
    except Exception:
        return type(obj).__name__


def _instance(obj, base: type):
    """``obj`` itself, or its class built with ``contract_params`` (else no arguments)."""
    if isinstance(obj, type):
        assert issubclass(obj, base), f"{obj.__name__} is not a {base.__name__} subclass"
        return obj(**(getattr(obj, "contract_params", None) or {}))
    return obj


def _fresh(obj):
    """A new, unfitted object with ``obj``'s hyper-parameters (scikit-learn's ``clone``)."""
    params = obj.get_params() if hasattr(obj, "get_params") else {}
    return type(obj)(**params)


# relevance models -------------------------------------------------------------------------
class _Model:
    """A model under check: fresh copies on demand, one fit (seed 7) shared by the checks."""

    def __init__(self, model, campaign: Campaign | None):
        self.model = self.subject = _instance(model, RelevanceModel)
        self.campaign = contract_campaign() if campaign is None else campaign

    def fit(self):
        with warnings.catch_warnings():
            # the environment's PyTensor build, not the model: not part of the contract
            warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
            # a cheap configuration need not converge: the contract is about behaviour
            warnings.filterwarnings("ignore", category=ConvergenceWarning)
            return _fresh(self.model).fit(self.campaign, rng=7)

    @cached_property
    def fitted(self):
        model = self.fit()
        return model, model.predict(self.campaign)


def _aligned_and_in_range(s: _Model) -> None:
    """The estimate has the campaign's topics and documents, the model's name, finite
    probabilities in [0, 1], and draws (if any) of shape (draws, documents) in [0, 1]."""
    model, est = s.fitted
    assert est.query_ids == s.campaign.query_ids, "the estimate's topics are not the campaign's"
    assert est.model == model.name, f"the estimate says model {est.model!r}, not {model.name!r}"
    for topic, p in zip(s.campaign.topics, est.p):
        assert p.shape == (topic.n_docs,), f"topic {topic.query_id}: p has shape {p.shape}"
        assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all(), (
            f"topic {topic.query_id}: a probability outside [0, 1]"
        )
    for topic, d in zip(s.campaign.topics, est.draws if est.draws is not None else ()):
        assert d.shape == (est.n_draws, topic.n_docs), f"topic {topic.query_id}: draws {d.shape}"
        assert (d >= 0).all() and (d <= 1).all(), f"topic {topic.query_id}: a draw outside [0, 1]"


def _judged_keep_their_labels(s: _Model) -> None:
    """Every judged document has p 1 (relevant) or 0 (not)."""
    _, est = s.fitted
    for topic, relevant, p in zip(s.campaign.topics, s.campaign.relevant(), est.p):
        expected = relevant[topic.judged].astype(float)
        assert np.array_equal(p[topic.judged], expected), (
            f"topic {topic.query_id}: a judged document's p is not its label"
        )


def _same_seed_same_answer(s: _Model) -> None:
    """Two fits with the same ``rng`` predict the same probabilities and draws."""
    _, est = s.fitted
    again = s.fit().predict(s.campaign)
    for a, b in zip(est.p, again.p):
        assert np.array_equal(a, b), "two fits with rng=7 predict different probabilities"
    for a, b in zip(est.draws or (), again.draws or ()):
        assert np.array_equal(a, b), "two fits with rng=7 draw differently"


def _pickles(s: _Model) -> None:
    """A pickled and unpickled fitted model predicts the same probabilities."""
    model, est = s.fitted
    clone = pickle.loads(pickle.dumps(model))
    for a, b in zip(est.p, clone.predict(s.campaign).p):
        assert np.array_equal(a, b), "the unpickled model predicts differently"


def _same_evidence_same_p(s: _Model) -> None:
    """Two unjudged documents of a topic that no run retrieves (the same evidence: none)
    get the same probability."""
    _, est = s.fitted
    for t, topic in enumerate(s.campaign.topics):
        unseen = np.flatnonzero(~topic.judged & ~topic.retrieved())
        if unseen.size > 1:
            values = est.p[t][unseen]
            assert np.allclose(values, values[0], atol=1e-12, rtol=0), (
                f"topic {topic.query_id}: documents no run retrieves differ: {values}"
            )


def _predict_before_fit(s: _Model) -> None:
    """``predict`` before ``fit`` is a RuntimeError that says it is not fitted."""
    try:
        _fresh(s.model).predict(s.campaign)
    except RuntimeError as error:
        assert "not fitted" in str(error), f"the error does not say 'not fitted': {error}"
    else:
        raise AssertionError("predict before fit did not raise RuntimeError")


def _params_round_trip(s: _Model) -> None:
    """scikit-learn's contract: ``set_params`` returns the model and sets what ``get_params``
    reads, refuses a name ``__init__`` does not take (a ValueError listing the valid ones),
    and what ``get_params`` returns rebuilds the model."""
    model = _fresh(s.model)
    params = model.get_params()
    assert model.set_params(**params) is model, "set_params does not return the model"
    assert model.get_params() == params, "set_params(**get_params()) changed the parameters"
    if params:
        first, marker = next(iter(params)), object()
        assert model.set_params(**{first: marker}).get_params()[first] is marker, (
            f"set_params({first}=...) is not what get_params reads"
        )
    try:
        model.set_params(unknown=1)
    except ValueError as error:
        assert all(p in str(error) for p in params), (
            f"the error does not list the parameters: {error}"
        )
    else:
        raise AssertionError("set_params(unknown=1) did not raise ValueError")
    assert type(model)(**params).get_params() == params, "get_params() does not rebuild the model"


#: the relevance-model checks, in the order they run
RELEVANCE_MODEL_CHECKS: dict[str, Callable[[_Model], None]] = {
    "aligned_and_in_range": _aligned_and_in_range,
    "judged_keep_their_labels": _judged_keep_their_labels,
    "same_seed_same_answer": _same_seed_same_answer,
    "pickles": _pickles,
    "same_evidence_same_p": _same_evidence_same_p,
    "predict_before_fit": _predict_before_fit,
    "params_round_trip": _params_round_trip,
}


def check_relevance_model(
    model, *, campaign: Campaign | None = None, checks: Sequence[str] | None = None
) -> list[str]:
    """Run the relevance-model contract (:data:`RELEVANCE_MODEL_CHECKS`) on ``model``, a
    :class:`~relimpute.relevance.RelevanceModel` instance or class; ``campaign`` replaces
    :func:`contract_campaign`, ``checks`` picks checks by name. The names of the checks
    passed; an AssertionError naming the first that fails."""
    return _run_checks("relevance-model", _Model(model, campaign), RELEVANCE_MODEL_CHECKS, checks)


# correctors -------------------------------------------------------------------------------
#: the measures a corrector is asked for: precision (Lipani's family) and two others
MEASURES = ("P@2", "AP", "nDCG@3")
COLUMNS = ["run", "measure", "reduced", "estimate", "ci_low", "ci_high"]


class _Corrector:
    """A corrector under check, with the pool it corrects and its first answer."""

    def __init__(self, corrector, pool):
        self.corrector = self.subject = _instance(corrector, Corrector)
        pool = contract_pool() if pool is None else pool
        self.campaign, self.pooled, self.depth, self.runs = pool
        self.judged = [t.judged.copy() for t in self.campaign.topics]

    def correct(self, corrector=None, runs=None, measures=MEASURES):
        corrector = self.corrector if corrector is None else corrector
        runs = self.runs if runs is None else runs
        return corrector.correct(self.campaign, self.pooled, runs, measures, pool_depth=self.depth)

    @cached_property
    def answer(self):
        return self.correct()


def _named(s: _Corrector) -> None:
    """The corrector has a ``name`` and ``families`` (None, or a tuple of measure families)."""
    c = s.corrector
    assert isinstance(c.name, str) and c.name, "the corrector has no name"
    assert c.families is None or (
        isinstance(c.families, tuple) and all(isinstance(f, str) for f in c.families)
    ), f"families must be None or a tuple of names, got {c.families!r}"


def _one_row_per_run_and_measure(s: _Corrector) -> None:
    """A Correction named after the corrector: columns run, measure, reduced, estimate,
    ci_low, ci_high first; one row per (measure it supports, run), in the order asked."""
    out = s.answer
    assert out.corrector == s.corrector.name, f"the correction says {out.corrector!r}"
    assert list(out.table.columns[: len(COLUMNS)]) == COLUMNS, f"columns {list(out.table.columns)}"
    supported = [str(m) for m in parse_measures(MEASURES) if s.corrector.supports(m)]
    rows = [(r, m) for m in supported for r in s.runs]
    assert list(zip(out.table["run"], out.table["measure"])) == rows, "rows not (measure, run)"
    assert len(out.to_frame()) == len(rows) and "corrector" in out.to_frame(), "to_frame"


def _reduced_is_the_pool_score(s: _Corrector) -> None:
    """``reduced`` is the run's mean score against the pool's judgments (unjudged =
    nonrelevant, a topic it misses 0), the score every corrector starts from."""
    table = s.answer.table
    measures = parse_measures(list(dict.fromkeys(table["measure"])))
    scores = topic_scores(s.campaign, measures, s.campaign.system_index(list(s.runs))).mean(axis=2)
    for m, measure in enumerate(measures):
        got = table.loc[table["measure"] == str(measure), "reduced"].to_numpy()
        assert np.allclose(got, scores[m], atol=1e-12, rtol=0), f"{measure}: reduced {got}"


def _estimates_and_intervals(s: _Corrector) -> None:
    """Every estimate is finite; an interval is both ends or neither, low <= high."""
    table = s.answer.table
    assert np.isfinite(table["estimate"].to_numpy(float)).all(), "an estimate is not finite"
    low, high = table["ci_low"].to_numpy(float), table["ci_high"].to_numpy(float)
    assert (np.isnan(low) == np.isnan(high)).all(), "an interval has one end only"
    given = ~np.isnan(low)
    assert (low[given] <= high[given]).all(), "an interval's low end is above its high end"


def _unsupported_measures_left_out(s: _Corrector) -> None:
    """Measures outside the corrector's families are left out, and with none left the table
    is empty with the same columns."""
    families = s.corrector.families
    if families is None:
        return
    names = ("AP", "nDCG@3", "P@2", "RBP(p=0.8)")
    other = [m for m in names if parse_measures(m)[0].family not in families]
    out = s.correct(measures=other)
    assert out.table.empty and list(out.table.columns[: len(COLUMNS)]) == COLUMNS, (
        f"measures outside {families} gave rows or lost the columns"
    )


def _refuses_pooled_and_unknown_runs(s: _Corrector) -> None:
    """A pooled run, a run not in the campaign, or no run at all is an InputError."""
    cases = ((s.pooled[:1], "in the pool"), (("nosuchrun",), "not in the campaign"), ((), "no run"))
    for runs, says in cases:
        try:
            s.correct(runs=runs)
        except InputError as error:
            assert says in str(error), f"correcting {runs}: the error does not say {says!r}"
        else:
            raise AssertionError(f"correcting {runs} did not raise InputError")


def _same_answer_twice(s: _Corrector) -> None:
    """Correcting again gives the same table."""
    again = s.correct()
    pd.testing.assert_frame_equal(again.table, s.answer.table, obj="the second correction")


def _leaves_the_judgments(s: _Corrector) -> None:
    """Correcting leaves the campaign's judgments as they were."""
    _ = s.answer
    assert all(np.array_equal(a, t.judged) for a, t in zip(s.judged, s.campaign.topics)), (
        "correcting changed the campaign's judgments"
    )


def _pickles_corrector(s: _Corrector) -> None:
    """A pickled and unpickled corrector corrects the same, and its repr names its class."""
    clone = pickle.loads(pickle.dumps(s.corrector))
    pd.testing.assert_frame_equal(
        s.correct(corrector=clone).table, s.answer.table, obj="the unpickled corrector's table"
    )
    assert repr(s.corrector).startswith(type(s.corrector).__name__), "repr does not name the class"


#: the corrector checks, in the order they run
CORRECTOR_CHECKS: dict[str, Callable[[_Corrector], None]] = {
    "named": _named,
    "one_row_per_run_and_measure": _one_row_per_run_and_measure,
    "reduced_is_the_pool_score": _reduced_is_the_pool_score,
    "estimates_and_intervals": _estimates_and_intervals,
    "unsupported_measures_left_out": _unsupported_measures_left_out,
    "refuses_pooled_and_unknown_runs": _refuses_pooled_and_unknown_runs,
    "same_answer_twice": _same_answer_twice,
    "leaves_the_judgments": _leaves_the_judgments,
    "pickles": _pickles_corrector,
}


def check_corrector(
    corrector, *, pool: tuple | None = None, checks: Sequence[str] | None = None
) -> list[str]:
    """Run the corrector contract (:data:`CORRECTOR_CHECKS`) on ``corrector``, a
    :class:`~relimpute.bias.Corrector` instance or class; ``pool`` replaces
    :func:`contract_pool` (``(campaign, pooled, depth, new runs)``), ``checks`` picks checks
    by name. The names of the checks passed; an AssertionError naming the first that fails."""
    return _run_checks("corrector", _Corrector(corrector, pool), CORRECTOR_CHECKS, checks)
