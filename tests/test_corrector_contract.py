"""The contract every registered pool-bias corrector honours, and the public checks themselves.

:func:`relimpute.testing.check_corrector` and :func:`~relimpute.testing.check_relevance_model`
are what a third party runs on a corrector or model of theirs: here they pass on every
registered one and fail, naming the check, on one broken on purpose.
"""

from __future__ import annotations

import numpy as np
import pytest

from relimpute.bias import Corrector, available_correctors, get_corrector
from relimpute.relevance import RelevanceModel
from relimpute.testing import CORRECTOR_CHECKS, check_corrector, check_relevance_model

#: settings a corrector needs on the contract's pool, or that keep it cheap
PARAMS = {
    "webber-park-topics": {"common_topics": ["1", "2"]},
    "model": {"model": "uniform", "n_draws": 200},
}


@pytest.mark.parametrize("name", available_correctors())
def test_every_corrector_passes_the_public_contract(name):
    assert check_corrector(get_corrector(name, **PARAMS.get(name, {}))) == list(CORRECTOR_CHECKS)


class Halves(Corrector):
    """Every run's estimate is half its reduced score; ``broken`` names one way to break it."""

    name = "halves"

    def __init__(self, broken: str = ""):
        self.broken = broken

    def _correct(self, context, rows, measure, reduced):
        if self.broken == "nan":
            return {"estimate": np.full(len(rows), np.nan)}
        if self.broken == "one-ended":
            return {"estimate": reduced / 2, "ci_low": reduced / 4}
        if self.broken == "judges":
            context.campaign.topics[0].judged[:] = True
        return {"estimate": reduced / 2}


def test_a_corrector_of_ones_own_passes_as_a_class_or_an_instance():
    assert check_corrector(Halves) == check_corrector(Halves()) == list(CORRECTOR_CHECKS)
    assert check_corrector(Halves(), checks=["named"]) == ["named"]
    with pytest.raises(ValueError, match="no corrector check nosuch; checks: named"):
        check_corrector(Halves(), checks=["nosuch"])


@pytest.mark.parametrize(
    ("broken", "check", "says"),
    [
        ("nan", "estimates_and_intervals", "an estimate is not finite"),
        ("one-ended", "estimates_and_intervals", "one end only"),
        ("judges", "leaves_the_judgments", "changed the campaign's judgments"),
    ],
)
def test_a_broken_corrector_fails_the_check_that_names_it(broken, check, says):
    with pytest.raises(AssertionError, match=f"corrector check '{check}' failed for Halves.*{says}"):
        check_corrector(Halves(broken))


class Noisy(RelevanceModel):
    """p = a constant for every unjudged document, from the global random state (not ``rng``)
    unless ``seeded``; ``prior`` is not stored under its name unless ``stores``."""

    name = "noisy"

    def __init__(self, seeded: bool = True, stores: bool = True):
        self.seeded = seeded
        if stores:
            self.stores = stores

    def _fit(self, campaign, rng):
        self.value_ = float(rng.uniform() if self.seeded else np.random.default_rng().uniform())

    def _predict(self, campaign):
        return [np.full(t.n_docs, self.value_) for t in campaign.topics], None, {}


def test_a_model_of_ones_own_passes_and_a_broken_one_fails_naming_the_check():
    assert check_relevance_model(Noisy) == check_relevance_model(Noisy())
    with pytest.raises(AssertionError, match="'same_seed_same_answer' failed for Noisy"):
        check_relevance_model(Noisy(seeded=False))
    with pytest.raises(AssertionError, match="'params_round_trip' failed"):
        check_relevance_model(Noisy(stores=False), checks=["params_round_trip"])
