"""The structured Laplace fit (relevance.arrowhead) against dense numpy, and its draws by Monte Carlo."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from relimpute.relevance.arrowhead import DENSE_LIMIT, Arrowhead, GramBlocks, laplace_draws
from relimpute.relevance.fusion import Fusion
from relimpute.simulate import simulate_campaign


def _random_arrowhead(rng, m: int, n_block: int, start: int) -> tuple[Arrowhead, np.ndarray]:
    """A random positive-definite arrowhead (block ``start:start + n_block`` diagonal) and its dense form."""
    size = m + n_block
    x = rng.normal(size=(3 * size, m))
    dense = x.T @ x / len(x) + np.eye(m)
    coupling = rng.normal(size=(n_block, m)) * 0.3
    # diagonal large enough that Bᵀ D⁻¹ B ≤ I/2 < C: the Schur complement stays positive definite
    diagonal = rng.uniform(0.5, 2.0, n_block) + (coupling**2).sum(axis=1) * 2 * n_block
    arrow = Arrowhead(start, start + n_block, diagonal, coupling, dense)
    full = np.zeros((size, size))
    rest = np.r_[0:start, start + n_block : size]
    block = np.arange(start, start + n_block)
    full[np.ix_(rest, rest)], full[block, block] = dense, diagonal
    full[np.ix_(block, rest)], full[np.ix_(rest, block)] = coupling, coupling.T
    return arrow, full


@pytest.mark.parametrize("m, n_block, start", [(4, 30, 4), (1, 5, 0), (7, 50, 3), (3, 1, 3)])
def test_solve_covariance_variances_and_product_equal_dense_numpy(rng, m, n_block, start):
    """Oracle: numpy's dense solve and inverse of the same matrix (to 1e-10)."""
    arrow, full = _random_arrowhead(rng, m, n_block, start)
    g = rng.normal(size=len(full))
    np.testing.assert_allclose(arrow.toarray(), full, rtol=0, atol=0)
    np.testing.assert_allclose(arrow @ g, full @ g, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g @ arrow, full @ g, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(arrow.solve(g), np.linalg.solve(full, g), rtol=1e-10, atol=1e-10)
    inverse = np.linalg.inv(full)
    np.testing.assert_allclose(arrow.covariance(), inverse, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(arrow.variances(), np.diag(inverse), rtol=1e-10, atol=1e-12)
    back = Arrowhead.from_dense(full, start, start + n_block)
    np.testing.assert_allclose(back.solve(g), arrow.solve(g), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "m, n_topics, b, start", [(2, 30, 2, 2), (3, 12, 3, 1), (1, 4, 1, 0), (5, 9, 2, 5)]
)
def test_block_arrowhead_equals_dense_numpy(rng, m, n_topics, b, start):
    """Blocks of ``b`` rows per topic (the topics' cut-points' form): the dense matrix, the
    product, solve, inverse, variances, log-determinant and draws against numpy on the
    dense matrix (to 1e-10; the draws' moments by Monte Carlo, 5 standard errors)."""
    size, stop = m + n_topics * b, start + n_topics * b
    x = rng.normal(size=(3 * b, n_topics, b))
    diagonal = np.einsum("ktj,ktl->tjl", x, x) / len(x) + 2 * np.eye(b) * (1 + m)
    coupling = rng.normal(size=(n_topics, m, b)) * 0.3 / np.sqrt(n_topics)
    y = rng.normal(size=(3 * m, m))
    dense = y.T @ y / len(y) + np.eye(m)
    arrow = Arrowhead(start, stop, diagonal, coupling, dense)
    full = np.zeros((size, size))
    rest, block = np.r_[0:start, stop:size], np.arange(start, stop)
    full[np.ix_(rest, rest)] = dense
    for t in range(n_topics):
        rows = block[t * b : (t + 1) * b]
        full[np.ix_(rows, rows)] = diagonal[t]
        full[np.ix_(rest, rows)], full[np.ix_(rows, rest)] = coupling[t], coupling[t].T
    g = rng.normal(size=size)
    np.testing.assert_array_equal(arrow.toarray(), full)
    np.testing.assert_allclose(arrow @ g, full @ g, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(arrow.solve(g), np.linalg.solve(full, g), rtol=1e-10, atol=1e-10)
    inverse = np.linalg.inv(full)
    np.testing.assert_allclose(arrow.covariance(), inverse, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(arrow.variances(), np.diag(inverse), rtol=1e-10, atol=1e-12)
    assert arrow.logdet() == pytest.approx(np.linalg.slogdet(full)[1], rel=1e-12)
    draws = arrow.draws(np.random.default_rng(8), g, 40_000)
    z_mean, z_cov = _moment_errors(draws, g, inverse)
    assert np.abs(z_mean).max() < 5 and np.abs(z_cov).max() < 5


def test_gram_blocks_equal_the_dense_weighted_gram(rng):
    """designᵀ diag(w) design, built by blocks, against the dense product; a design with two
    entries of a row in the diagonal block is refused."""
    n, k, n_topics, s = 300, 3, 12, 5
    topic = rng.integers(n_topics, size=n)
    runs = rng.random((n, s)) * (rng.random((n, s)) < 0.4)
    design = np.column_stack([rng.normal(size=(n, k)), np.zeros(n), np.eye(n_topics)[topic], runs])
    design[::7, k + 1 :][:, :n_topics] = 0.0  # some rows in no topic's column
    w = rng.uniform(0.01, 0.25, n)
    gram = GramBlocks(sp.csr_matrix(design), k + 1, k + 1 + n_topics)(w)
    np.testing.assert_allclose(gram.toarray(), design.T @ (design * w[:, None]), rtol=1e-12, atol=1e-12)
    design[0, k + 1 : k + 3] = 1.0
    with pytest.raises(ValueError, match="row 0 has 2 entries"):
        GramBlocks(sp.csr_matrix(design), k + 1, k + 1 + n_topics)


def _moment_errors(draws, mean, cov):
    """Sample mean and covariance minus the truth, in units of their standard errors
    (Var of a sample covariance entry: (Σ_ii Σ_jj + Σ_ij²) / n for a normal)."""
    n = len(draws)
    sd = np.sqrt(np.diag(cov))
    z_mean = (draws.mean(axis=0) - mean) / (sd / np.sqrt(n))
    se_cov = np.sqrt((np.outer(sd**2, sd**2) + cov**2) / n)
    z_cov = (np.cov(draws, rowvar=False) - cov) / se_cov
    return z_mean, z_cov


@pytest.mark.parametrize("structured", [True, False])
def test_draws_have_the_laplace_mean_and_covariance(rng, structured, monkeypatch):
    """Monte Carlo (40,000 draws): every mean and covariance entry within 5 standard errors of
    N(mean, H⁻¹) (over ~700 entries a 5-SE miss has probability < 1e-3), for the structured
    draw and for the dense Cholesky draw :func:`laplace_draws` keeps for small P."""
    arrow, full = _random_arrowhead(rng, 5, 20, 2)
    mean = rng.normal(size=len(full))
    if structured:
        monkeypatch.setattr("relimpute.relevance.arrowhead.DENSE_LIMIT", 10)
    draws = laplace_draws(np.random.default_rng(7), mean, arrow, 40_000)
    assert draws.shape == (40_000, len(full))
    z_mean, z_cov = _moment_errors(draws, mean, np.linalg.inv(full))
    assert np.abs(z_mean).max() < 5 and np.abs(z_cov).max() < 5


def test_dense_draw_below_the_limit_is_multivariate_normals(rng):
    """Up to DENSE_LIMIT parameters the draws are numpy's seeded dense Cholesky draws of
    the covariance (the numbers every release before the structured fit drew)."""
    arrow, full = _random_arrowhead(rng, 4, 10, 4)
    mean = rng.normal(size=len(full))
    assert len(full) <= DENSE_LIMIT
    ours = laplace_draws(np.random.default_rng(3), mean, arrow, 5)
    numpy = np.random.default_rng(3).multivariate_normal(mean, arrow.covariance(), size=5, method="cholesky")
    np.testing.assert_array_equal(ours, numpy)


def test_default_model_fit_over_hundreds_of_topics_equals_the_dense_fit(monkeypatch):
    """A campaign of 300 topics: below DENSE_LIMIT the fit is the dense one of every release
    (numpy's solve and inverse); forced structured (the limit at 100), its mode, covariance
    and marginal variances equal the dense fit's to 1e-8."""
    campaign = simulate_campaign(300, 6, n_docs=60, depth=20, rng=11).campaign.pooled(5)
    dense = Fusion(n_draws=4).fit(campaign, rng=1)
    assert "covariance_" in dense.__dict__ and "precision_" not in dense.__dict__
    monkeypatch.setattr("relimpute.relevance.arrowhead.DENSE_LIMIT", 100)
    model = Fusion(n_draws=4).fit(campaign, rng=1)
    assert isinstance(model.precision_, Arrowhead) and "covariance_" not in model.__dict__
    assert len(model.coef_) == 3 + 1 + 300 + 6
    np.testing.assert_allclose(model.coef_, dense.coef_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(model.covariance_, dense.covariance_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.precision_.variances(), np.diag(dense.covariance_), rtol=1e-8)
    theta = model._theta_draws(np.random.default_rng(0), 3)  # the structured draw, beyond the limit
    assert theta.shape == (3, len(model.coef_)) and np.all(np.isfinite(theta))
    clone = pickle.loads(pickle.dumps(model))  # a saved model: the precision without its factor
    assert clone.precision_._factor is None
    np.testing.assert_array_equal(clone._theta_draws(np.random.default_rng(0), 3), theta)


@pytest.mark.parametrize("spread", [0.0, 1.5])
def test_topic_cut_points_structured_draws_have_the_laplace_moments(spread, monkeypatch):
    """The topics' cut-points (grades 0..3, anchor 2, 8 topics): the block-factor draws of
    their precision (an Arrowhead of one 2 × 2 block per topic) against its dense inverse, by
    Monte Carlo (40,000 draws, every mean and covariance entry within 5 standard errors; held
    topic terms, τ = 0, are identity rows of the precision, and at 0 in TopicCuts.draws), and
    TopicCuts.draws beyond DENSE_LIMIT the same distribution as below it."""
    from scipy.special import expit

    from relimpute.relevance.ordinal import fit_topic_cuts

    rng = np.random.default_rng(5)
    topic = np.repeat(np.arange(8), 250)
    eta = rng.normal(-0.5, 1.5, len(topic))
    c = np.array([1.5, 0.0, -2.0]) + rng.normal(0, spread, (8, 3)) * np.array([1, 0, 1])
    level = (rng.random(len(topic))[:, None] < expit(eta[:, None] + c[topic])).sum(axis=1)
    cuts = fit_topic_cuts(eta, level, topic, 8, 2, 4, cut_sd=3.0, topic_sds=(0.0, 1.0))
    cov = cuts.covariance
    mode = rng.normal(size=len(cov))
    draws = cuts.precision.draws(np.random.default_rng(2), mode, 40_000)
    held = np.diag(cov) == 0
    assert held.any() == (cuts.tau == 0).any()
    np.testing.assert_array_equal(cuts.precision.toarray()[np.ix_(held, held)], np.eye(held.sum()))
    z_mean, z_cov = _moment_errors(draws[:, ~held], mode[~held], cov[np.ix_(~held, ~held)])
    assert np.abs(z_mean).max() < 5 and np.abs(z_cov).max() < 5
    dense = cuts.draws(np.random.default_rng(3), 20_000, [0, 3, -1])
    monkeypatch.setattr("relimpute.relevance.ordinal.DENSE_LIMIT", 0)
    structured = cuts.draws(np.random.default_rng(4), 20_000, [0, 3, -1])
    sd = dense.std(axis=0)  # two samples' means differ by sd·√(2/n), their sds by about sd·√(1/n)
    np.testing.assert_allclose(structured.mean(axis=0), dense.mean(axis=0), atol=5 * sd.max() * np.sqrt(2 / 20_000))
    np.testing.assert_allclose(structured.std(axis=0), sd, atol=5 * sd.max() / np.sqrt(20_000))
    for k in np.flatnonzero(cuts.tau == 0):  # a held cut-point: the shared one in every topic
        column = np.asarray(cuts.free)[k] - 1
        for out in (dense, structured):
            np.testing.assert_array_equal(out[:, 0, column], out[:, 1, column])


def _labelled(n_topics: int, sources: int = 1):
    """A simulated campaign judged on its depth-3 pool, with ``sources`` noisy label sources of
    grades 0..3 on its depth-10 pool (the second, if any, labelling the same documents)."""
    import pandas as pd

    from relimpute.labels import read_labels, with_labels

    truth = simulate_campaign(n_topics, 6, n_docs=60, depth=20, rng=11).campaign
    full = truth.pooled(10)
    rng = np.random.default_rng(3)
    files = []
    for s in range(sources):
        rows = []
        for topic, relevant in zip(full.topics, full.relevant()):
            labelled = topic.judged
            label = np.clip(2 * relevant[labelled] + rng.integers(-1, 2, labelled.sum()), 0, 3)
            rows.append(pd.DataFrame({"query_id": topic.query_id, "doc_id": topic.doc_ids[labelled], "relevance": label}))
        files.append(read_labels(pd.concat(rows, ignore_index=True), name=f"sim{s}"))
    return with_labels(truth.pooled(3), files)


@pytest.mark.parametrize("label_draws", ["independent", "conditional"])
def test_fusion_llm_label_shifts_structured_equal_the_dense_fit(monkeypatch, label_draws):
    """fusion-llm's label shifts over 120 topics (4 label values: 485 parameters, and the labels
    alone 484): below DENSE_LIMIT the dense fit of every release; forced structured (the limit at
    100; one source, so each document has one topic shift δ) the modes and covariances of both
    fits equal the dense ones to 1e-8 and the point probabilities to 1e-8; the draws (by the
    structured Laplace draw, whose moments the tests above check) are probabilities."""
    from relimpute.relevance import FusionLLM

    campaign = _labelled(120)
    settings = {"fusion": {"n_draws": 4}, "label_draws": label_draws}
    dense = FusionLLM(**settings).fit(campaign, rng=1)
    assert dense.block_ is None and isinstance(dense.__dict__["covariance_"], np.ndarray)
    monkeypatch.setattr("relimpute.relevance.arrowhead.DENSE_LIMIT", 100)
    model = FusionLLM(**settings).fit(campaign, rng=1)
    assert model.block_ == (4, 484) and isinstance(model.__dict__["covariance_"], Arrowhead)
    assert len(model.coef_) == 4 * 121 + 1 and model.n_fit_ > 1000
    for a, b in [("coef_", "covariance_"), ("alone_coef_", "alone_covariance_")]:
        np.testing.assert_allclose(getattr(model, a), getattr(dense, a), rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(getattr(model, b), getattr(dense, b), rtol=1e-8, atol=1e-10)
    ours, theirs = model.predict(campaign), dense.predict(campaign)
    for t in range(campaign.n_topics):
        np.testing.assert_allclose(ours.p[t], theirs.p[t], rtol=1e-8, atol=1e-10)
        assert np.all((ours.draws[t] >= 0) & (ours.draws[t] <= 1)) and ours.draws[t].shape == theirs.draws[t].shape


def test_fusion_llm_keeps_dense_label_shifts_when_two_sources_label_one_document(monkeypatch):
    """Two sources labelling the same documents give a document two topic shifts: the δ block is
    not diagonal, so the fit stays dense (and memory-checked) beyond the limit."""
    from relimpute.relevance import FusionLLM

    monkeypatch.setattr("relimpute.relevance.arrowhead.DENSE_LIMIT", 100)
    model = FusionLLM(fusion={"n_draws": 0}).fit(_labelled(30, sources=2), rng=1)
    assert model.block_ is None and model.covariance_.shape == (8 * 31 + 1,) * 2
