"""The default answer at scale (issue 26, item 5), checked against the code it replaced.

- the fusion model's posterior draws, now computed topic by topic when read
  (:class:`~relimpute.relevance.base.LazyDraws`), equal, bit for bit, the draws of the
  former one-pass-per-draw numpy code (kept below as the oracle);
- the exact quantiles of its capture adjustment equal ``np.quantile``;
- the Monte Carlo AP kernel that draws only the relevant documents gives the AP of the
  dense kernel for every drawn vector, draws each document with its probability, and
  gives the same E[MAP], sd and P(A beats B) as the former dense Monte Carlo within
  Monte Carlo error.
"""

from __future__ import annotations

import pickle
from functools import partial

import numba
import numpy as np
import pytest
from scipy.special import expit, ndtri

from relimpute.confidence import ConfidenceEngine
from relimpute.confidence import _kernels
from relimpute.confidence.montecarlo import _halving_blocks, _pair_summaries
from relimpute.relevance import Fusion, load_model
from relimpute.relevance.fusion._kernels import quantiles
from relimpute.relevance.base import LazyDraws
from relimpute.relevance.fusion import SPREAD_RATIO
from relimpute.relevance.fusion.evidence import (
    _log_depth_ratio,
    _only_judged_where_unretrieved,
    _retrieved_any,
    fit_mask,
    _votes_below,
)
from relimpute.simulate import simulate_campaign


def _former_draws(model, campaign):
    """The posterior draws as computed before they became lazy (oracle)."""
    evidence = model._evidence(campaign)
    designs = model._designs(campaign, evidence)
    outside = [
        ~fit_mask(t, ev) & _retrieved_any(t) for t, ev in zip(campaign.topics, evidence)
    ]
    relevant = campaign.relevant()
    rng = np.random.default_rng(model.draw_seed_)
    n = int(model.n_draws)
    theta = rng.multivariate_normal(model.coef_, model.covariance_, size=n, method="cholesky")
    spreads = model.beyond_decay_sd * ndtri((rng.permutation(n) + 0.5) / n)
    offsets = [-model.beyond_decay * _log_depth_ratio(ev) for ev in evidence]  # −γ log(b / k_t)
    capped = [np.minimum(_log_depth_ratio(ev), np.log(SPREAD_RATIO)) for ev in evidence]
    if model.beyond_run_sd > 0:
        run_effects = rng.normal(0.0, model.beyond_run_sd, size=(n, campaign.n_systems))
        below = [_votes_below(ev) for ev in evidence]
    out = []
    for d in range(n):
        eta = [g @ theta[d] + o - spreads[d] * c for g, o, c in zip(designs, offsets, capped)]
        if model.beyond_run_sd > 0:
            eta = [e + low @ run_effects[d] for e, low in zip(eta, below)]
        point = _only_judged_where_unretrieved(campaign, [expit(e) for e in eta])
        bins, factor = model._capture(campaign, point, outside, relevant)
        out.append([pt * factor[b] for pt, b in zip(point, bins)])
    return [
        np.where(t.judged[None, :], r[None, :].astype(float), np.clip(np.stack(d), 0, 1))
        for t, r, d in zip(campaign.topics, relevant, zip(*out))
    ]


@pytest.fixture(scope="module")
def shallow():
    """A depth-5 pool plus judgments beyond it (as active learning adds): the capture
    adjustment is at work."""
    sim = simulate_campaign(n_topics=8, n_systems=7, n_docs=300, depth=60, rng=21)
    pooled = sim.campaign.pooled(5)
    rng = np.random.default_rng(5)
    masks = []
    for full, topic in zip(sim.campaign.topics, pooled.topics):
        deep = topic.ranking[:, 10:40].ravel()
        extra = rng.choice(deep[deep >= 0], size=12, replace=False)
        mask = topic.judged.copy()
        mask[extra] = full.judged[extra]
        masks.append(mask)
    return sim.campaign.with_judged(masks)


@pytest.mark.parametrize(
    "model",
    [
        lambda: load_model("fusion"),
        lambda: Fusion.plug_in(n_draws=40, run_effect_sd=2.0, beyond_decay=0.4,
                                   beyond_decay_sd=1.0, beyond_run_sd=0.5),  # fmt: skip
    ],
)
def test_lazy_draws_equal_the_former_draws_bit_for_bit(shallow, model):
    fitted = model().fit(shallow, rng=4)
    estimate = fitted.predict(shallow)
    assert isinstance(estimate.draws, LazyDraws) and estimate.n_draws == fitted.n_draws
    assert estimate.params["capture_factor_min"] < 1  # the adjustment is exercised
    former = _former_draws(fitted, shallow)
    for t in range(shallow.n_topics):
        np.testing.assert_array_equal(estimate.draws[t], former[t])
    # negative and sliced indexing, and a pickled estimate reads the same draws
    np.testing.assert_array_equal(estimate.draws[-1], former[-1])
    assert len(estimate.draws[1:3]) == 2
    clone = pickle.loads(pickle.dumps(estimate))
    np.testing.assert_array_equal(clone.draws[2], former[2])
    with pytest.raises(IndexError):
        estimate.draws[shallow.n_topics]


def test_quantiles_equal_numpys_bit_for_bit():
    rng = np.random.default_rng(0)
    q = np.linspace(0, 1, 21)[1:-1]
    for n in (1, 2, 3, 19, 20, 21, 1000, 54321):
        for x in (
            rng.normal(size=n),
            rng.integers(0, 4, size=n).astype(float),  # ties
            np.r_[np.full(n, -690.7755278982137), rng.normal(size=3) * 40],
        ):
            np.testing.assert_array_equal(quantiles(x, q), np.quantile(x, q))


def _random_topic(rng, n_docs=400, n_sys=6, width=120):
    ranking = np.full((n_sys, width), -1, np.int32)
    depth = np.zeros(n_sys, np.int32)
    for s in range(n_sys):
        d = int(rng.integers(0, width + 1)) if s else width
        depth[s] = d
        ranking[s, :d] = rng.permutation(n_docs)[:d]
    fixed = rng.random(n_docs) < 0.08
    return ranking, depth, fixed


def test_ap_kernel_scores_every_drawn_vector_as_the_dense_kernel():
    """Probabilities 0 or 1: the drawn vector is known, and AP must equal the dense one."""
    rng = np.random.default_rng(3)
    for _ in range(30):
        ranking, depth, fixed = _random_topic(rng)
        uncertain = np.flatnonzero(~fixed)
        drawn = (rng.random((4, len(uncertain))) < 0.1).astype(float)
        starts = np.array([0, len(uncertain) // 3, len(uncertain)])
        probs = np.zeros((4, len(fixed)))  # the kernel reads each document's column
        probs[:, uncertain] = drawn
        ap = _kernels.ap_monte_carlo(
            ranking, depth, fixed.view(np.uint8), uncertain, probs, starts, 4, 1
        )
        dense = _kernels.average_precision_draws(
            ranking, depth, fixed.astype(float), uncertain, drawn.astype(np.uint8),
            int(fixed.sum()),
        )  # fmt: skip
        np.testing.assert_allclose(ap, dense, rtol=1e-12, atol=1e-15)


def test_ap_kernel_draws_each_document_with_its_probability():
    """One system per document, retrieving only it: AP > 0 iff the document was drawn."""
    rng = np.random.default_rng(4)
    p = np.r_[rng.random(40) * 0.01, rng.random(40), 1.0, 1.0, rng.random(60) * 0.3, 1e-4]
    order = np.argsort(-p, kind="stable")
    n = len(p)
    ranking = np.arange(n, dtype=np.int32)[:, None]
    b = 40_000
    ap = _kernels.ap_monte_carlo(
        ranking, np.ones(n, np.int32), np.zeros(n, np.uint8), order.astype(np.int64),
        p[None, :], _halving_blocks(p[order], size=16), b, 11,
    )  # fmt: skip
    freq = (ap > 0).mean(axis=0)
    sd = np.sqrt(p * (1 - p) / b)
    assert np.all(np.abs(freq - p) <= 5 * sd + 1e-12)
    # independence: two documents with p = 1/2-ish are drawn together as often as chance says
    i, j = np.argsort(np.abs(p - 0.5))[:2]
    both = ((ap[:, i] > 0) & (ap[:, j] > 0)).mean()
    assert abs(both - p[i] * p[j]) <= 5 * np.sqrt(p[i] * p[j] / b)


def test_ap_kernel_with_vanishing_probabilities_draws_nothing_and_does_not_crash():
    """A block whose largest probability is tiny (a posterior draw far below the pool) makes
    the geometric skip larger than any int64: it must end the block, not wrap to a negative
    index (which read outside the arrays and killed the process)."""
    n = 300
    p = np.r_[np.full(100, 1e-30), np.full(100, 1e-300), np.full(100, 5e-324)]
    ranking = np.arange(n, dtype=np.int32)[None, :]
    fixed = np.zeros(n, np.uint8)
    fixed[0] = 1  # one judged relevant document, at rank 1
    uncertain = np.arange(1, n, dtype=np.int64)
    probs = p[1:][None, :]
    starts = _halving_blocks(probs[0], size=16)
    ap = _kernels.ap_monte_carlo(ranking, np.array([n], np.int32), fixed, uncertain, p[None, :], starts, 2000, 7)
    np.testing.assert_array_equal(ap, 1.0)  # nothing drawn: AP of the judged document alone


@numba.njit
def _numbas_uniforms(seed, n):
    np.random.seed(seed)
    return np.array([np.random.random() for _ in range(n)])


def test_the_kernels_uniforms_are_numbas_random_stream():
    """The AP kernel makes its uniforms a twist at a time: the numbers numba's
    ``np.random.random()`` gives after ``np.random.seed(seed)``, across several twists."""
    for seed in (0, 1, 12345, 2**31, 2**32 - 1):
        state = _kernels._mt_seed(seed)
        block = np.empty(_kernels.MT_N // 2)
        mine = []
        for _ in range(7):
            assert _kernels._mt_twist(state, block) == 0
            mine.append(block.copy())
        np.testing.assert_array_equal(np.concatenate(mine), _numbas_uniforms(seed, 7 * len(block)))


@numba.njit
def _thinned_draws(probs, starts, n_draws, seed, dense):
    """Oracle: which documents the kernel draws, with numba's global random stream
    (a uniform per document where a block's bound exceeds ``dense``, else geometric skips)."""
    np.random.seed(seed)
    out = np.zeros((n_draws, probs.shape[1]), np.uint8)
    for b in range(n_draws):
        p = probs[b % probs.shape[0]]
        for lo, hi in zip(starts[:-1], starts[1:]):
            q = p[lo:hi].max() if hi > lo else 0.0
            if q > dense:
                for j in range(lo, hi):
                    out[b, j] = np.random.random() < p[j]
            elif q > 0.0:
                j = lo + np.floor(np.log(1.0 - np.random.random()) / np.log1p(-q))
                while j < hi:
                    out[b, int(j)] = np.random.random() * q < p[int(j)]
                    j += 1 + np.floor(np.log(1.0 - np.random.random()) / np.log1p(-q))
    return out


@pytest.mark.parametrize("width", [120, 3000])  # bitmaps read whole, and only where drawn
def test_ap_kernel_equals_the_dense_kernel_on_the_same_random_stream(width):
    """For a seed, the kernel draws the documents a plain loop over numba's random stream
    draws (:func:`_thinned_draws`), and scores them as :func:`average_precision_draws` does."""
    assert (width // 64 + 1 > _kernels.TRACKED_WORDS) == (width > 2000)
    rng = np.random.default_rng(8)
    for seed in (3, 2**32 - 1):
        ranking, depth, fixed = _random_topic(rng, n_docs=width + 300, width=width)
        uncertain = np.flatnonzero(~fixed)
        probs = rng.random((3, len(uncertain))) ** 3 * np.r_[np.ones(40), np.full(len(uncertain) - 40, 0.05)]
        order = np.argsort(-probs[0], kind="stable")
        probs, uncertain = np.ascontiguousarray(probs[:, order]), uncertain[order]
        starts = _halving_blocks(probs[0], size=64)
        n = 500  # several twists of the generator
        by_document = np.zeros((3, len(fixed)))
        by_document[:, uncertain] = probs
        ap = _kernels.ap_monte_carlo(
            ranking, depth, fixed.view(np.uint8), uncertain, by_document, starts, n, seed
        )
        drawn = _thinned_draws(probs, starts, n, seed, _kernels.DENSE)
        assert 0 < drawn.sum(axis=1).mean() < 0.5 * len(uncertain)
        dense = _kernels.average_precision_draws(
            ranking, depth, fixed.astype(float), uncertain, drawn, int(fixed.sum())
        )
        np.testing.assert_allclose(ap, dense, rtol=1e-12, atol=1e-15)


def _former_monte_carlo(campaign, estimate, n_draws, rng):
    """Per-draw MAP of every system by the former dense path (uniforms for every document)."""
    rng = np.random.default_rng(rng)
    out = np.zeros((n_draws, campaign.n_systems))
    for t, topic in enumerate(campaign.topics):
        post = estimate.draws[t]
        relevant = topic.relevant(campaign.rel_threshold)
        uncertain = np.flatnonzero(topic.retrieved() & ~topic.judged & (post.max(axis=0) > 0))
        prob = post[np.arange(n_draws) % len(post)][:, uncertain]
        drawn = rng.random(prob.shape) < prob
        out += _kernels.average_precision_draws(
            topic.ranking, topic.depth, relevant.astype(float), uncertain,
            drawn.view(np.uint8), int(relevant.sum()),
        ) / campaign.n_topics  # fmt: skip
    return out


def test_monte_carlo_agrees_with_the_former_dense_path(shallow):
    estimate = load_model("fusion").fit_predict(shallow, rng=2)
    n = 6000
    result = ConfidenceEngine().confidence(
        shallow, estimate, n_draws=n, rng=9, method="monte carlo"
    )
    former = _former_monte_carlo(shallow, estimate, n, 9)
    sd = former.std(axis=0)
    assert np.all(np.abs(result.scores.e_map - former.mean(axis=0)) <= 5 * sd / np.sqrt(n) * 1.5)
    np.testing.assert_allclose(np.sqrt(result.scores.var_map), sd, rtol=0.1)
    frame = result.to_frame()
    index = {s: i for i, s in enumerate(shallow.systems)}
    delta = former[:, [index[a] for a in frame.system_a]] - former[:, [index[b] for b in frame.system_b]]
    p_former = (delta > 0).mean(axis=0) + 0.5 * (delta == 0).mean(axis=0)
    tolerance = 5 * np.sqrt(np.maximum(p_former * (1 - p_former), 1e-4) * 2 / n)
    assert np.all(np.abs(frame.p_a_better.to_numpy() - p_former) <= tolerance)


def _numpys_pair_summaries(draws, pairs):
    """The former numpy code (oracle): a ``(B, P)`` array of differences, its mean and var."""
    delta = draws[:, pairs[:, 0]] - draws[:, pairs[:, 1]]
    prob = (delta > 0).mean(axis=0) + 0.5 * (delta == 0).mean(axis=0)
    return delta.mean(axis=0), delta.var(axis=0), prob


def test_pair_summaries_equal_numpys():
    rng = np.random.default_rng(12)
    draws = rng.normal(0.3, 0.05, size=(4000, 9))
    draws[:, 4] = draws[:, 3]  # a tie in every draw
    draws[::3, 6] = draws[::3, 5]  # ties in some
    pairs = np.array([(a, b) for a in range(9) for b in range(a + 1, 9)])
    got = _pair_summaries(draws, pairs)
    mean, var, prob = _numpys_pair_summaries(draws, pairs)
    # numpy sums pairwise or in order depending on the array's shape: equal up to the
    # rounding of 4000 sums of draws near 0.3 (1e-13 is ~10^3 times their spacing there)
    np.testing.assert_allclose(got[0], mean, rtol=0, atol=1e-13)
    np.testing.assert_allclose(got[1], var, rtol=1e-10)
    np.testing.assert_array_equal(got[2], prob)  # counts: exact
    tie = pairs.tolist().index([3, 4])
    assert got[0][tie] == got[1][tie] == 0.0 and got[2][tie] == 0.5
    # a difference the same in every draw: its mean exactly, variance exactly 0
    draws[:, 7] = 0.25 + rng.integers(0, 64, size=len(draws)) / 1024  # exact sums below
    draws[:, 8] = draws[:, 7] + 0.125
    mean, var, _ = _pair_summaries(draws, np.array([[8, 7]]))
    assert mean[0] == 0.125 and var[0] == 0.0


def _capture_arguments(campaign):
    """The fusion estimate of ``campaign``, and :func:`capture_draws`'s arguments but ``chunk``."""
    from relimpute.relevance.fusion.draws import _PosteriorDraws

    estimate = load_model("fusion").fit(campaign, rng=4).predict(campaign)
    make = estimate.draws.make
    while not isinstance(make, _PosteriorDraws):  # under the estimate's maps (partials)
        make = next(a for a in make.args if isinstance(a, (_PosteriorDraws, partial)))
    q = np.linspace(0, 1, make.n_bins + 1)[1:-1]
    common = (*make._common(), make.alive, make.rows, make.starts, make.judged, make.relevant, q,
              make.floor)  # fmt: skip
    return estimate, common


def test_capture_groups_do_not_depend_on_how_many_draws_a_pass_takes(shallow):
    """The capture pass's edges and factors, one draw per pass, a few, or every draw in one
    (as DL 2019's 100 draws now are), are the same numbers bit for bit."""
    from relimpute.relevance.fusion._kernels import capture_draws

    estimate, common = _capture_arguments(shallow)
    whole = capture_draws(*common, estimate.n_draws)
    assert estimate.n_draws > 3 and whole[1].min() < 1  # the adjustment is at work
    for chunk in (1, 3):
        got = capture_draws(*common, chunk)
        for part in range(2):  # edges, factors
            np.testing.assert_array_equal(got[part], whole[part])
        assert got[2].shape == (0, 0)  # draws kept only when one pass holds them all


def test_capture_pass_is_the_same_on_any_number_of_threads(shallow, monkeypatch):
    """The capture pass shared out among threads (its document blocks, then its draws), run
    serially, or serially because numba has no threading layer: the same numbers bit for
    bit, kept draws included, one pass or several."""
    from relimpute.relevance.fusion import _kernels as kernels

    estimate, common = _capture_arguments(shallow)
    monkeypatch.setattr(kernels, "_SHARED_VALUES", 0)  # shared out here
    for chunk in (estimate.n_draws, 3):
        serial = kernels.capture_draws(*common, chunk, threads=1)
        # more parts than the machine's threads, and than a pass's draws: some parts idle
        for threads in (2, 5):
            got = kernels.capture_draws(*common, chunk, threads=threads)
            for part in range(3):
                np.testing.assert_array_equal(got[part], serial[part])
    assert serial[1].min() < 1 and serial[2].shape == (0, 0)
    assert kernels.capture_draws(*common, estimate.n_draws)[2].shape[0] == estimate.n_draws
    # each topic's draws, computed or partly copied from the kept ones
    design, rows, starts = common[:11], common[12], common[13]
    make = estimate.draws.make
    while not hasattr(make, "bounds"):  # the _PosteriorDraws under the estimate's maps
        make = next(a for a in make.args if hasattr(a, "bounds") or hasattr(a, "args"))
    edges, factors, kept = kernels.capture_draws(*common, estimate.n_draws, threads=1)
    monkeypatch.setattr(kernels, "_SHARED_TOPIC", kernels._BLOCK + 1)  # shared out here
    for t in range(shallow.n_topics):
        topic = (bool(make.retrieved[t]), make.bounds[t], make.bounds[t + 1], edges, factors)
        for copied in (kept, np.empty((0, 0))):
            args = (*design, *topic, copied, rows, starts[t], starts[t + 1])
            one = kernels.topic_draws(*args, threads=1)
            for threads in (2, 5):
                np.testing.assert_array_equal(kernels.topic_draws(*args, threads=threads), one)
    assert (make.bounds[1:] - make.bounds[:-1]).max() > kernels._SHARED_TOPIC  # some shared

    def no_layer():  # what numba's thread count raises without a threading layer
        raise ValueError("No threading layer could be loaded.")

    def parallel(*args):
        raise AssertionError("run in parallel without a threading layer")

    monkeypatch.setattr(kernels.numba, "get_num_threads", no_layer)
    monkeypatch.setattr(kernels, "_capture_parallel", parallel)
    got = kernels.capture_draws(*common, 3, threads=2)
    for part in range(2):
        np.testing.assert_array_equal(got[part], serial[part])

    def other_error():
        raise ValueError("something else")

    monkeypatch.setattr(kernels.numba, "get_num_threads", other_error)
    with pytest.raises(ValueError, match="something else"):
        kernels.capture_draws(*common, 3, threads=2)


def test_topic_draws_read_from_the_capture_pass_equal_the_computed_ones(shallow):
    """The capture pass keeps the draws of the documents outside the fit set when one pass
    holds every draw; the Monte Carlo's first reading of each topic copies them, and once
    every topic was read they are let go: a second reading computes them, bit for bit the
    same."""
    from relimpute.relevance.fusion.draws import _PosteriorDraws

    estimate = load_model("fusion").fit(shallow, rng=4).predict(shallow)
    make = estimate.draws.make
    while not isinstance(make, _PosteriorDraws):  # under the estimate's maps (partials)
        make = next(a for a in make.args if isinstance(a, (_PosteriorDraws, partial)))
    assert make._capture()[2].shape == (estimate.n_draws, len(make.rows)) and len(make.rows)
    first = [make(t) for t in range(shallow.n_topics)]
    assert make.capture_[2].size == 0  # let go after the last topic
    for t in range(shallow.n_topics):
        np.testing.assert_array_equal(make(t), first[t])
