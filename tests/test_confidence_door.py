"""One entry to the engine: ``ConfidenceEngine.confidence`` and the methods that fix its method.

The old entries (``evaluate``, ``compare``, ``monte_carlo``, ``topic_bootstrap``) give the
numbers they gave before, and the entry chooses exact moments or Monte Carlo by what the
measure, the estimate and the estimand allow; results carry the Monte Carlo error of their
bounds and print them to it; a binary measure reads no grades from Python as from the CLI.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from relimpute.confidence import ConfidenceEngine, predict_for
from relimpute.confidence.bounds import bound_decimals, bound_standard_errors, rounded_bounds
from relimpute.relevance import Uniform, load_model
from relimpute.simulate import simulate_campaign


@pytest.fixture(scope="module")
def campaign():
    """Graded (grades 1-3), pooled to depth 5: unjudged documents below the pool."""
    return simulate_campaign(n_topics=6, n_systems=4, n_docs=200, depth=30, rng=1).campaign.pooled(5)


@pytest.fixture(scope="module")
def fitted(campaign):
    """The default model fitted (posterior draws, grades)."""
    return load_model().fit(campaign, rng=0)


@pytest.fixture(scope="module")
def graded(campaign, fitted):
    return fitted.predict(campaign)


def same(one, other) -> None:
    """Two comparisons hold the same numbers, draw for draw."""
    for name in ("pairs", "e_delta_map", "var_delta_map", "p_a_better"):
        np.testing.assert_array_equal(getattr(one, name), getattr(other, name))
    for name in ("e_ap", "var_ap", "e_map", "var_map"):
        np.testing.assert_array_equal(getattr(one.scores, name), getattr(other.scores, name))
    if one.scores.draws is None or other.scores.draws is None:
        assert one.scores.draws is None and other.scores.draws is None
    else:
        np.testing.assert_array_equal(one.scores.draws, other.scores.draws)
    assert (one.scores.method, one.scores.measure) == (other.scores.method, other.scores.measure)


def simulated(engine, campaign, estimate, n_draws, rng, measure="AP"):
    """The Monte Carlo path as the engine called it before it had one entry: its views and
    :func:`~relimpute.confidence.montecarlo.simulate` directly (the oracle)."""
    from relimpute.confidence.montecarlo import simulate
    from relimpute.confidence.runset import select_runs, topic_views

    rows, names, pairs = select_runs(campaign, estimate, None, None)
    return simulate(
        campaign, estimate, topic_views(campaign, rows, engine.depth), names, pairs,
        n_draws=n_draws, rng=rng, measure=measure, use_posterior_draws=True,
        max_elements=1 << 22,
    )  # fmt: skip


def _old(name):
    """The warning a deprecated entry gives, naming the entry and ``confidence``."""
    return pytest.warns(DeprecationWarning, match=rf"ConfidenceEngine\.{name} is deprecated.*confidence")


def test_old_compare_warns_and_gives_the_entrys_numbers(campaign, graded):
    engine = ConfidenceEngine()
    uniform = Uniform(0.3).fit_predict(campaign)
    with _old("compare"):
        same(engine.compare(campaign, uniform), engine.confidence(campaign, uniform))  # auto: exact
    with _old("compare"):
        old = engine.compare(campaign, graded)
    same(old, engine.confidence(campaign, graded, method="normal"))


def test_old_evaluate_warns_and_gives_the_entrys_numbers(campaign):
    engine = ConfidenceEngine()
    uniform = Uniform(0.3).fit_predict(campaign)
    with _old("evaluate"):
        evaluated = engine.evaluate(campaign, uniform, measure="P@10")
    scores = engine.confidence(campaign, uniform, pairs=[], measure="P@10").scores
    np.testing.assert_array_equal(evaluated.e_map, scores.e_map)
    np.testing.assert_array_equal(evaluated.var_ap, scores.var_ap)


def test_old_monte_carlo_warns_and_gives_the_entrys_numbers(campaign, graded):
    engine = ConfidenceEngine()
    with _old("monte_carlo"):
        old = engine.monte_carlo(campaign, graded, n_draws=300, rng=5)
    same(old, engine.confidence(campaign, graded, n_draws=300, rng=5))  # auto: the posterior draws


def test_old_topic_bootstrap_warns_and_gives_the_entrys_numbers(campaign, graded):
    engine = ConfidenceEngine()
    with _old("topic_bootstrap"):
        one = engine.topic_bootstrap(campaign, graded, n_draws=200, rng=7)
    other = engine.confidence(campaign, graded, n_draws=200, rng=7, topics=True)
    same(one.comparison, other.comparison)
    np.testing.assert_array_equal(one.sd_topics, other.sd_topics)


def test_old_doors_warn_at_the_callers_line_and_keep_their_defaults(campaign):
    """The warning names the caller's file (not the engine's); monte_carlo still draws 10,000
    by default; an old door passes confidence's keywords on and refuses the one it fixes."""
    engine = ConfidenceEngine()
    uniform = Uniform(0.3).fit_predict(campaign)
    with pytest.warns(DeprecationWarning) as caught:
        engine.evaluate(campaign, uniform)
    assert [w.filename for w in caught] == [__file__]
    with _old("monte_carlo"):
        drawn = engine.monte_carlo(campaign, uniform, rng=3)
    assert drawn.scores.draws.shape[0] == 10_000
    with pytest.raises(TypeError, match="method"):
        engine.compare(campaign, uniform, method="monte carlo")


def test_monte_carlo_through_the_entry_is_the_simulation_draw_for_draw(campaign, graded):
    engine = ConfidenceEngine()
    for measure in ("AP", "nDCG@10", "P@5"):
        want = simulated(engine, campaign, graded, 250, 11, measure)
        got = engine.confidence(campaign, graded, measure=measure, n_draws=250, rng=11)
        same(got, want)
        assert got.scores.clusters == graded.n_draws


def test_the_entry_chooses_by_measure_estimate_and_estimand(campaign, graded):
    engine = ConfidenceEngine()
    uniform = Uniform(0.3).fit_predict(campaign)
    assert engine.confidence(campaign, uniform, measure="AP").scores.method == "normal"
    assert engine.confidence(campaign, uniform, measure="RR", n_draws=50).scores.method == "monte carlo"
    assert engine.confidence(campaign, graded, n_draws=50).scores.method == "monte carlo"
    pool = ConfidenceEngine(estimand="pool", pool_depth=5)
    assert pool.confidence(campaign, graded).scores.method == "normal"  # exact only
    with pytest.raises(ValueError, match="exact moments only"):
        pool.confidence(campaign, graded, method="monte carlo")
    with pytest.raises(ValueError, match="topic sampling is Monte Carlo"):
        engine.confidence(campaign, graded, method="normal", topics=True)
    with pytest.raises(ValueError, match="method must be one of"):
        engine.confidence(campaign, graded, method="exact")


def test_a_comparison_rounds_its_bounds_to_their_monte_carlo_error(campaign, graded):
    result = ConfidenceEngine().confidence(campaign, graded, n_draws=400, rng=3)
    errors = result.bound_errors(0.9)
    low, high = bound_standard_errors(result.scores.draws, result.pairs, 0.9, graded.n_draws)
    np.testing.assert_array_equal(errors.low, low)
    np.testing.assert_array_equal(errors.high, high)
    whole = result.to_frame(level=0.9)
    frame = result.to_frame(level=0.9, rounded=True)
    assert frame["ci_low"].tolist() == rounded_bounds(whole["ci_low"].to_numpy(), low)
    assert frame["ci_high"].tolist() == rounded_bounds(whole["ci_high"].to_numpy(), high)
    for text, value, se in zip(frame["ci_high"], whole["ci_high"], high):
        assert len(text.split(".")[1]) == bound_decimals(value, se)
        assert abs(float(text) - value) <= 0.5 * 10.0 ** -bound_decimals(value, se) + 1e-12
    given = result.to_frame(level=0.9, rounded=True, errors=errors)
    assert given.equals(frame)
    exact = ConfidenceEngine().confidence(campaign, graded, method="normal")
    assert exact.bound_errors() is None
    assert exact.to_frame(rounded=True).equals(exact.to_frame())  # exact bounds: every digit


def test_rounded_bounds_never_print_minus_zero_nor_zero_for_a_bound_that_is_not():
    assert rounded_bounds([-0.00004, 0.0003, 0.123456], [0.01, 0.01, 0.001]) == [
        "0.0000", "0.0003", "0.123",
    ]  # fmt: skip


def test_a_binary_measure_reads_no_grades_from_python(campaign, fitted, graded):
    assert graded.grades is not None  # the default model splits relevance into grades
    binary = predict_for(fitted, campaign, ["AP", "P@10"])
    assert binary.grades is None
    assert predict_for(fitted, campaign, ["AP", "nDCG@10"]).grades is not None
    for t in range(campaign.n_topics):  # p and its draws: the same numbers
        np.testing.assert_array_equal(binary.p[t], graded.p[t])
        np.testing.assert_array_equal(binary.draws[t], graded.draws[t])
    assert predict_for(Uniform(0.5).fit(campaign), campaign, ["AP"]).grades is None  # no grades=
    engine = ConfidenceEngine()
    same(
        engine.confidence(campaign, graded, n_draws=200, rng=2),
        engine.confidence(campaign, binary, n_draws=200, rng=2),
    )
    with_grades = engine.confidence(campaign, graded, measure="nDCG@10", n_draws=200, rng=2)
    without = engine.confidence(campaign, replace(graded, grades=None), measure="nDCG@10",
                                n_draws=200, rng=2)  # fmt: skip
    assert not np.array_equal(with_grades.scores.draws, without.scores.draws)  # nDCG reads them


def test_exact_moments_on_threads_are_the_serial_ones_bit_for_bit():
    """``jobs`` runs the topics' exact AP moments on threads: every number as on one thread
    (P, E and Var per pair, per system and topic), under every estimand that has them."""
    sim = simulate_campaign(n_topics=9, n_systems=7, n_docs=400, depth=60, rng=3).campaign
    campaign = sim.pooled(5)
    estimate = Uniform(0.4).fit_predict(campaign)
    for engine in (ConfidenceEngine(), ConfidenceEngine(ratio="constant"),
                   ConfidenceEngine(estimand="pool", pool_depth=5)):  # fmt: skip
        serial = engine.confidence(campaign, estimate, method="normal")
        for jobs in (2, 3, -1):
            threaded = engine.confidence(campaign, estimate, method="normal", jobs=jobs)
            same(threaded, serial)
            np.testing.assert_array_equal(threaded.var_delta_ap, serial.var_delta_ap)
    with pytest.raises(ValueError, match="jobs must be"):
        ConfidenceEngine().confidence(campaign, estimate, method="normal", jobs=0)
