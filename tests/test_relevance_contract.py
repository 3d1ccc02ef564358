"""The contract every registered relevance model honours (docs/contributing.md, habit 8).

One small campaign holds every edge case at once: a topic with no
judgments (t2), a run that retrieves nothing for a topic (C on t2), and
unjudged documents that no run retrieves (d9, d10 in t1). Each model is
fitted on it with a cheap configuration: its ``contract_params`` class
attribute, else the entry of :data:`CHEAP` below.
"""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import warnings

import numpy as np
import pandas as pd
import pytest

from relimpute import relevance
from relimpute.data import Campaign
from relimpute.errors import ConvergenceWarning
from relimpute.relevance import available_models, get_model

# register every plug-in of the package (a model is one file that registers itself)
for _info in pkgutil.iter_modules(relevance.__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"relimpute.relevance.{_info.name}")

#: cheap settings for models without a ``contract_params`` class attribute; the
#: hierarchy's: the same PyMC model with ADVI (its step compiled once per shape, a few
#: seconds with PyTensor's compilation cache warm) and few draws
CHEAP = {
    "bayes": {"method": "advi", "advi_steps": 2000, "n_draws": 20, "draws": 10, "chains": 1},
}

#: documented p of an unjudged document no run retrieves (models not listed:
#: only range and exchangeability are asserted)
UNRETRIEVED = {"uniform": 0.5, "nonrelevant": 0.0, "rtc": 0.5}


def _campaign() -> Campaign:
    qrels = pd.DataFrame(
        [
            ("t1", "d1", 2), ("t1", "d2", 0), ("t1", "d3", 1), ("t1", "d4", 0),
            ("t1", "d5", 2), ("t1", "d9", 0), ("t1", "d10", 2),
            ("t2", "e1", 1), ("t2", "e2", 0),
            ("t3", "f1", 1), ("t3", "f2", 0), ("t3", "f3", 0),
        ],
        columns=["query_id", "doc_id", "relevance"],
    )  # fmt: skip
    lists = {
        "A": {
            "t1": ["d1", "d2", "d3", "d6", "d7"],
            "t2": ["e1", "e3", "e2"],
            "t3": ["f1", "f2", "f4"],
        },
        "B": {"t1": ["d5", "d1", "d6", "d8"], "t2": ["e3", "e1"], "t3": ["f3", "f1"]},
        "C": {"t1": ["d2", "d4", "d8", "d7", "d1"], "t3": ["f4", "f1", "f2"]},
    }
    runs = {
        name: pd.DataFrame(
            [
                (q, d, float(len(docs) - i))
                for q, docs in per_topic.items()
                for i, d in enumerate(docs)
            ],
            columns=["query_id", "doc_id", "score"],
        )
        for name, per_topic in lists.items()
    }
    with pytest.warns(UserWarning, match="retrieves nothing"):
        full = Campaign.from_frames(qrels, runs, rel_threshold=1)
    hidden = {("t1", "d9"), ("t1", "d10"), ("t2", "e1"), ("t2", "e2")}
    masks = [
        t.judged & ~np.isin(t.doc_ids, [d for q, d in hidden if q == t.query_id])
        for t in full.topics
    ]
    return full.with_judged(masks)


CAMPAIGN = _campaign()


def _model(name: str):
    params = getattr(type(get_model(name)), "contract_params", None)
    return get_model(name, **(CHEAP.get(name, {}) if params is None else params))


@pytest.fixture(scope="module", params=available_models())
def fitted(request):
    """(name, model, estimate) fitted once per model with a fixed seed."""
    name = request.param
    model = _fit(name)
    return name, model, model.predict(CAMPAIGN)


def _fit(name: str):
    with warnings.catch_warnings():
        # the environment's PyTensor build, not the model: not part of the contract
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
        # a cheap configuration need not converge: the contract is about behaviour
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        return _model(name).fit(CAMPAIGN, rng=7)


def _doc(topic: str, doc: str) -> tuple[int, int]:
    t = CAMPAIGN.query_ids.index(topic)
    return t, int(np.flatnonzero(CAMPAIGN.topics[t].doc_ids == doc)[0])


def test_the_campaign_holds_the_edge_cases():
    t2 = CAMPAIGN.topics[CAMPAIGN.query_ids.index("t2")]
    assert not t2.judged.any()
    assert t2.depth[CAMPAIGN.systems.index("C")] == 0
    t, i = _doc("t1", "d9")
    assert not CAMPAIGN.topics[t].judged[i] and not CAMPAIGN.topics[t].retrieved()[i]


def test_probabilities_are_aligned_and_in_range(fitted):
    name, _, est = fitted
    assert est.query_ids == CAMPAIGN.query_ids
    assert est.model == name
    for topic, p in zip(CAMPAIGN.topics, est.p):
        assert p.shape == (topic.n_docs,)
        assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()
    if est.draws is not None:
        for topic, d in zip(CAMPAIGN.topics, est.draws):
            assert d.shape == (est.n_draws, topic.n_docs)
            assert (d >= 0).all() and (d <= 1).all()


def test_judged_documents_keep_their_labels(fitted):
    _, _, est = fitted
    for topic, relevant, p in zip(CAMPAIGN.topics, CAMPAIGN.relevant(), est.p):
        np.testing.assert_array_equal(p[topic.judged], relevant[topic.judged].astype(float))


def test_deterministic_under_a_fixed_rng(fitted):
    name, _, est = fitted
    again = _fit(name).predict(CAMPAIGN)
    for a, b in zip(est.p, again.p):
        np.testing.assert_array_equal(a, b)
    if est.draws is not None:
        for a, b in zip(est.draws, again.draws):
            np.testing.assert_array_equal(a, b)


def test_pickle_round_trip_predicts_the_same(fitted):
    _, model, est = fitted
    clone = pickle.loads(pickle.dumps(model))
    for a, b in zip(est.p, clone.predict(CAMPAIGN).p):
        np.testing.assert_array_equal(a, b)


def test_document_retrieved_by_no_run(fitted):
    name, _, est = fitted
    t, i = _doc("t1", "d9")
    _, j = _doc("t1", "d10")
    # the same evidence (none) gives the same probability
    assert est.p[t][i] == pytest.approx(est.p[t][j], abs=1e-12)
    if name in UNRETRIEVED:
        assert est.p[t][i] == pytest.approx(UNRETRIEVED[name], abs=1e-12)


def test_topic_without_judgments_and_run_missing_a_topic(fitted):
    name, _, est = fitted
    t = CAMPAIGN.query_ids.index("t2")
    p = est.p[t]
    assert np.isfinite(p).all()
    if name == "uniform":
        np.testing.assert_allclose(p, 0.5)
    if name == "nonrelevant":
        np.testing.assert_allclose(p, 0.0)
    if name == "rtc":
        # documented: stage 1 with the Beta(1, 1) prior (no judgments), then the
        # fitted calibrations and weights; run C, missing the topic, gives no opinion
        from scipy.special import expit

        from relimpute.relevance.rtc import rank_probabilities

        q = rank_probabilities(3, 0, 0)
        a, b, w = est.params["A"], est.params["B"], est.params["weights"]
        sa, sb = CAMPAIGN.systems.index("A"), CAMPAIGN.systems.index("B")
        _, e3 = _doc("t2", "e3")  # rank 2 in A, rank 1 in B
        expected = expit(w[sa] * expit(a[sa] + b[sa] * q[1]) + w[sb] * expit(a[sb] + b[sb] * q[0]))
        assert p[e3] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("name", available_models())
def test_predict_before_fit_is_an_error(name):
    with pytest.raises(RuntimeError, match="not fitted"):
        _model(name).predict(CAMPAIGN)


@pytest.mark.parametrize("name", available_models())
def test_set_params_is_get_params_inverse(name):
    """scikit-learn's contract: ``set_params`` returns the model, sets what ``get_params`` reads,
    and refuses a name ``__init__`` does not take, listing the valid ones."""
    model = _model(name)
    params = model.get_params()
    assert model.set_params(**params) is model and model.get_params() == params
    if params:
        first = next(iter(params))
        marker = object()
        assert model.set_params(**{first: marker}).get_params()[first] is marker
    with pytest.raises(ValueError, match="no parameter 'unknown'; valid parameters") as info:
        model.set_params(unknown=1)
    assert all(p in str(info.value) for p in params)
    clone = type(model)(**params)  # what get_params returns rebuilds the model
    assert clone.get_params() == params


def test_set_params_changes_the_fit():
    model = get_model("uniform")
    assert model.set_params(prior=0.25).fit_predict(CAMPAIGN).p[1].max() == 0.25
    with pytest.raises(ValueError, match="prior must lie in"):
        get_model("uniform").set_params(prior=2.0).fit(CAMPAIGN)
