"""The contract every registered relevance model honours (docs/contributing.md, habit 8).

The generic checks are the public :func:`relimpute.testing.check_relevance_model`, run here
over every registered model; what stays here is what a model documents of itself (the
probability of a document no run retrieves, of a topic without judgments). The campaign,
:func:`relimpute.testing.contract_campaign`, holds every edge case at once: a topic with no
judgments (t2), a run that retrieves nothing for a topic (C on t2), and unjudged documents
that no run retrieves (d9, d10 in t1). Each model is fitted on it with a cheap
configuration: its ``contract_params`` class attribute, else the entry of :data:`CHEAP`.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings

import numpy as np
import pytest

from relimpute import relevance
from relimpute.errors import ConvergenceWarning
from relimpute.relevance import available_models, get_model
from relimpute.testing import RELEVANCE_MODEL_CHECKS, check_relevance_model, contract_campaign

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

CAMPAIGN = contract_campaign()


def _model(name: str):
    params = getattr(type(get_model(name)), "contract_params", None)
    return get_model(name, **(CHEAP.get(name, {}) if params is None else params))


@pytest.mark.parametrize("name", available_models())
def test_every_model_passes_the_public_contract(name):
    """check_relevance_model: aligned, in range, judged labels kept, the same answer for the
    same rng, pickling, the same p for the same evidence, predict before fit, parameters."""
    assert check_relevance_model(_model(name)) == list(RELEVANCE_MODEL_CHECKS)


@pytest.fixture(scope="module", params=sorted(UNRETRIEVED))
def fitted(request):
    """(name, model, estimate) of a model that documents its probabilities, fitted once."""
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


def test_document_retrieved_by_no_run(fitted):
    name, _, est = fitted
    t, i = _doc("t1", "d9")  # (d9 and d10 alike: the contract's same_evidence_same_p)
    assert est.p[t][i] == pytest.approx(UNRETRIEVED[name], abs=1e-12)


def test_topic_without_judgments_and_run_missing_a_topic(fitted):
    name, _, est = fitted
    t = CAMPAIGN.query_ids.index("t2")
    p = est.p[t]  # (finite for every model: the contract's aligned_and_in_range)
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


def test_set_params_changes_the_fit():
    model = get_model("uniform")
    assert model.set_params(prior=0.25).fit_predict(CAMPAIGN).p[1].max() == 0.25
    with pytest.raises(ValueError, match="prior must lie in"):
        get_model("uniform").set_params(prior=2.0).fit(CAMPAIGN)
