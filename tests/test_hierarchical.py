"""The Bayesian hierarchy ("bayes"): the default model's likelihood in PyMC, sampled by NUTS.

Oracles: the PyMC log density against the default model's own design written
out in numpy (the same likelihood), and NUTS against Newton + Laplace where
the posterior is near normal (the same posterior, another engine). ADVI fits
(compiled in seconds) serve the tests of prediction and persistence; the NUTS
tests are ``-m slow`` (nutpie's numba compilation alone takes longer than a
unit test may).
"""

from __future__ import annotations

import json
import pickle
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.special import log_expit
from scipy.stats import lognorm, norm

from relimpute.errors import ConvergenceWarning
from relimpute.relevance import Fusion, get_model
from relimpute.relevance.bayes import (
    DEFAULT_PRIORS,
    Bayes,
    FusionPosterior,
    JudgedDesign,
    _AdviProgram,
    build_model,
)
from relimpute.simulate import simulate_campaign

#: the spreads fixed at the default model's settings: the default model's posterior exactly
FIXED = {key: 0.0 for key in DEFAULT_PRIORS}
SMALL_ADVI = {"method": "advi", "draws": 100, "chains": 1, "n_draws": 40}


@pytest.fixture(scope="module")
def campaign():
    """A depth-10 pool of a simulated campaign (runs of unequal quality)."""
    return simulate_campaign(n_topics=8, n_systems=6, depth=40, rng=4).campaign.pooled(10)


@pytest.fixture(scope="module")
def fitted(campaign):
    return Bayes(**SMALL_ADVI).fit(campaign, rng=11)


@pytest.fixture(scope="module")
def estimate(fitted, campaign):
    return fitted.predict(campaign)


def _fusion_fit_set(campaign, model: Fusion):
    """The default model's fit-set design, labels and prior mean of w, as its _fit builds them."""
    captured = {}

    class Capture(Fusion):
        def _fit_theta(self, design, y, prec, shift, start):
            centre = np.asarray(self.weight_mean) * self.feature_scale_
            theta, cov = super()._fit_theta(design, y, prec, shift, start)
            captured.update(design=design, y=y, prec=prec, shift=shift, centre=centre, theta=theta, cov=cov)
            return theta, cov

    Capture(**model.get_params()).fit(campaign, rng=0)
    return captured


@pytest.mark.parametrize("learned", [False, True])
def test_log_density_is_the_default_models_likelihood(campaign, learned):
    """The PyMC model's log density at a random point against the default model's sparse
    design times θ, with the Bernoulli likelihood and the priors written out by hand."""
    fusion = Fusion()
    fit = _fusion_fit_set(campaign, fusion)
    n_topics, n_systems = campaign.n_topics, campaign.n_systems
    design = JudgedDesign.from_fusion(fit["design"], fit["y"], n_topics, fit["centre"])
    priors = DEFAULT_PRIORS if learned else FIXED
    settings = {
        **priors,
        "intercept_sd": fusion.intercept_sd,
        "run_effect_sd": fusion.run_effect_sd,
        "weight_sd": fusion.weight_sd,
        "mean_mean": fusion.mean_prior[0],
        "mean_sd": fusion.mean_prior[1],
    }
    model = build_model(design, campaign.query_ids, campaign.systems, settings)
    rng = np.random.default_rng(0)
    z_w, z_alpha, z_u = rng.normal(size=3), rng.normal(size=n_topics), rng.normal(size=n_systems)
    mu = -1.7
    sigma = {"sigma_alpha": 1.2, "sigma_u": 2.5, "sigma_w": 0.3} if learned else {
        "sigma_alpha": fusion.intercept_sd, "sigma_u": fusion.run_effect_sd,
        "sigma_w": fusion.weight_sd,
    }  # fmt: skip
    point = {"z_w": z_w, "mu": mu, "z_alpha": z_alpha, "z_u": z_u}
    if learned:
        point.update({f"{k}_log__": np.log(v) for k, v in sigma.items()})
    logp = model.compile_logp(jacobian=False)(point)

    theta = np.concatenate([
        fit["centre"] + sigma["sigma_w"] * z_w, [mu], mu + sigma["sigma_alpha"] * z_alpha,
        sigma["sigma_u"] * z_u,
    ])  # fmt: skip
    eta = fit["design"] @ theta
    y = fit["y"]
    expected = y @ log_expit(eta) + (1 - y) @ log_expit(-eta)
    expected += norm.logpdf(np.r_[z_w, z_alpha, z_u]).sum()
    expected += norm.logpdf(mu, fusion.mean_prior[0], fusion.mean_prior[1])
    if learned:
        for name, centre, key in (
            ("sigma_alpha", fusion.intercept_sd, "intercept_sd_log_sd"),
            ("sigma_u", fusion.run_effect_sd, "run_effect_sd_log_sd"),
            ("sigma_w", fusion.weight_sd, "weight_sd_log_sd"),
        ):
            expected += lognorm.logpdf(sigma[name], DEFAULT_PRIORS[key], scale=centre)
    assert logp == pytest.approx(expected, rel=1e-10)


def test_predictions_are_the_default_models_code_over_the_draws(fitted, estimate, campaign):
    """Judged documents keep their labels; p is the default model's capture-adjusted
    prediction at the posterior mean, and every draw's θ is one of the sampler's."""
    for p, d, t, r in zip(estimate.p, estimate.draws, campaign.topics, campaign.relevant()):
        assert np.all((p >= 0) & (p <= 1)) and d.shape == (40, len(p))
        np.testing.assert_array_equal(p[t.judged], r[t.judged])
    rebuilt = Fusion(n_draws=0)
    for name in ("feature_mean_", "feature_scale_", "systems_", "query_ids_", "horizons_",
                 "n_fit_", "coef_", "covariance_", "draw_seed_", "grade_levels_", "anchor_", "cuts_"):  # fmt: skip
        setattr(rebuilt, name, getattr(fitted.fusion_, name))
    rebuilt.fitted_ = True
    again = rebuilt.predict(campaign)
    np.testing.assert_allclose(np.concatenate(again.p), np.concatenate(estimate.p), rtol=1e-12)
    theta = fitted.idata_.posterior["theta"].to_numpy()[0]
    np.testing.assert_allclose(fitted.fusion_.coef_, theta.mean(axis=0), rtol=1e-12)
    assert estimate.params["sigma_alpha"] > 0 and estimate.params["method"] == "advi"


def test_save_load_round_trip(fitted, estimate, campaign, tmp_path):
    path = fitted.save(tmp_path / "bayes.nc")
    loaded = Bayes.load(path)
    assert loaded.get_params() == fitted.get_params()
    assert str(loaded.diagnostics_) == str(fitted.diagnostics_)  # (NaN fields: compare text)
    again = loaded.predict(campaign)
    for a, b in zip(estimate.draws, again.draws):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_load_rejects_an_altered_configuration(fitted, tmp_path):
    from relimpute.relevance.bayes import _import_arviz

    az = _import_arviz()
    path = fitted.save(tmp_path / "bayes.nc")
    idata = az.from_netcdf(str(path))
    idata.load()
    idata.posterior.attrs["relimpute_config"] = idata.posterior.attrs["relimpute_config"].replace(
        '"draws": 100', '"draws": 101'
    )
    idata.to_netcdf(str(tmp_path / "altered.nc"))
    with pytest.raises(ValueError, match="hash"):
        Bayes.load(tmp_path / "altered.nc")


def test_pickle_round_trip(fitted, estimate, campaign):
    clone = pickle.loads(pickle.dumps(fitted))
    again = clone.predict(campaign)
    np.testing.assert_array_equal(np.concatenate(estimate.p), np.concatenate(again.p))


def test_registered_under_bayes_and_validates(campaign):
    model = get_model("bayes", method="advi")
    assert isinstance(model, Bayes) and model.method == "advi"
    with pytest.raises(ValueError, match="method"):
        Bayes(method="gibbs").fit(campaign)
    with pytest.raises(ValueError, match="unknown prior"):
        Bayes(priors={"beta_scale": 1.0}).fit(campaign)
    with pytest.raises(ValueError, match="must be finite and >= 0"):
        Bayes(priors={"weight_sd_log_sd": -1.0}).fit(campaign)
    with pytest.raises(ValueError, match="unknown fusion setting"):
        Bayes(fusion={"intercept": 1.0}).fit(campaign)
    with pytest.raises(RuntimeError, match="not fitted"):
        Bayes().predict(campaign)


def test_fusion_settings_reach_the_likelihood(campaign):
    """``fusion`` overrides the default model's settings: without run effects θ has none."""
    model = Bayes(**SMALL_ADVI, fusion={"run_effect_sd": 0.0}).fit(campaign, rng=1)
    assert model.fusion_.systems_ == () and "z_u" not in model.idata_.posterior
    assert model.fusion_.coef_.shape == (3 + 1 + campaign.n_topics,)
    assert isinstance(model.fusion_, FusionPosterior)


def test_convergence_warning_on_a_starved_sampler(campaign):
    model = Bayes(method="nuts", sampler="pymc", draws=20, tune=5, chains=2)
    with pytest.warns(ConvergenceWarning, match="ESS"):
        model.fit(campaign, rng=3)
    assert not model.diagnostics_.converged
    assert model.predict(campaign).params["converged"] is False


def test_advi_refit_on_other_judgments_equals_a_fresh_compile(campaign):
    """The compiled ADVI step is reused across fits of the same shape; each fit restores
    the variational and optimiser state, so its draws do not depend on what ran before."""
    other = campaign.pooled(5)  # same shape, fewer judgments
    _AdviProgram._cache.clear()
    fresh = Bayes(**SMALL_ADVI).fit(campaign, rng=5)
    between = Bayes(**SMALL_ADVI).fit(other, rng=6)
    again = Bayes(**SMALL_ADVI).fit(campaign, rng=5)
    assert len(_AdviProgram._cache) == 1  # one compilation served the three fits
    np.testing.assert_array_equal(
        np.concatenate(fresh.predict(campaign).p), np.concatenate(again.predict(campaign).p)
    )
    assert between.diagnostics_.n_judged < fresh.diagnostics_.n_judged
    assert list(again.idata_.posterior["system"].to_numpy()) == list(campaign.systems)


#: NUTS against the exact posterior moments with the spreads fixed (the default model's
#: posterior), found independently by importance sampling from a multivariate t around the
#: Laplace approximation (the fusion log posterior written out here): every mean within
#: MEAN_TOL posterior sds, every sd within SD_TOL (relative). Then NUTS against Newton +
#: Laplace where the posterior is near normal (the exact mean within NEAR_NORMAL sds of the
#: mode): the same tolerances. Topic intercepts with few relevant documents are skewed
#: (their mean lies a few tenths of an sd from the mode on this campaign), which neither engine gets
#: wrong: the Laplace form centres on the mode by construction.
MEAN_TOL, SD_TOL, NEAR_NORMAL = 0.15, 0.15, 0.1


@pytest.fixture(scope="module")
def deep_pool():
    return simulate_campaign(n_topics=15, n_systems=6, depth=60, rng=7).campaign.pooled(20)


def _importance_moments(fit, mode, cov, n=40_000, df=8, seed=0):
    """Posterior mean and sd of θ by self-normalised importance sampling (t proposal)."""
    rng = np.random.default_rng(seed)
    chol = np.linalg.cholesky(cov)
    z = rng.standard_normal((n, len(mode)))
    scale = np.sqrt(df / rng.chisquare(df, size=n))
    theta = mode + (z @ chol.T) * scale[:, None]
    maha = ((z * scale[:, None]) ** 2).sum(axis=1)
    log_q = -0.5 * (df + len(mode)) * np.log1p(maha / df)
    design, y, prec, shift = fit["design"], fit["y"], fit["prec"], fit["shift"]
    log_p = np.empty(n)
    for lo in range(0, n, 5000):
        t = theta[lo : lo + 5000]
        eta = design @ t.T
        log_p[lo : lo + 5000] = (
            y @ log_expit(eta) + (1 - y) @ log_expit(-eta)
            - 0.5 * np.einsum("ij,jk,ik->i", t, prec, t) + t @ shift
        )  # fmt: skip
    w = np.exp(log_p - log_q - (log_p - log_q).max())
    w /= w.sum()
    mean = w @ theta
    return mean, np.sqrt(w @ (theta - mean) ** 2), 1.0 / (w**2).sum()


@pytest.mark.slow
def test_nuts_is_the_default_models_posterior_and_agrees_with_laplace_where_normal(deep_pool):
    nuts = Bayes(priors=FIXED, n_draws=20).fit(deep_pool, rng=3)
    d = nuts.diagnostics_
    assert d.converged, str(d)  # R-hat <= 1.01, bulk and tail ESS >= 400, no divergence
    assert d.rhat_max <= 1.01 and min(d.ess_bulk_min, d.ess_tail_min) >= 400
    fit = _fusion_fit_set(deep_pool, Fusion(n_draws=0))
    mode, cov = fit["theta"], fit["cov"]
    mean, sd, ess = _importance_moments(fit, mode, cov)
    assert ess > 2000  # the oracle itself is accurate
    nuts_mean = nuts.fusion_.coef_
    nuts_sd = np.sqrt(np.diag(nuts.fusion_.covariance_))
    assert np.abs(nuts_mean - mean).max() / sd.min() < 1  # (a gross error)
    assert np.all(np.abs(nuts_mean - mean) / sd < MEAN_TOL), ((nuts_mean - mean) / sd).round(2)
    assert np.all(np.abs(nuts_sd / sd - 1) < SD_TOL), (nuts_sd / sd).round(2)
    laplace_sd = np.sqrt(np.diag(cov))
    normal = np.abs(mean - mode) / sd < NEAR_NORMAL
    assert normal[:3].all() and normal.sum() >= 6  # the weights and most run effects
    gap = np.abs(nuts_mean - mode)[normal] / laplace_sd[normal]
    assert gap.max() < MEAN_TOL + NEAR_NORMAL, gap.round(2)
    assert np.all(np.abs(nuts_sd / laplace_sd - 1)[normal] < SD_TOL), (nuts_sd / laplace_sd).round(2)


@pytest.mark.slow
def test_nuts_refit_on_swapped_judgments_equals_the_first_fit(deep_pool):
    """nutpie compiles once per model shape; a refit swaps the judgments in (issue 25)."""
    first = Bayes(n_draws=20).fit(deep_pool, rng=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        between = Bayes(draws=100, tune=100).fit(deep_pool.pooled(5), rng=6)
    again = Bayes(n_draws=20).fit(deep_pool, rng=11)
    assert between.diagnostics_.compile_seconds == 0 == again.diagnostics_.compile_seconds
    assert between.diagnostics_.n_judged < first.diagnostics_.n_judged
    np.testing.assert_array_equal(again.fusion_.theta_draws_, first.fusion_.theta_draws_)
    assert first.diagnostics_.converged, str(first.diagnostics_)


def test_progress_reads_a_running_nutpie_sampler():
    """The NUTS progress bar counts tuning and draws of all chains on nutpie's raw trace (one
    batch of statistics per chain); nutpie 0.16 raises TimeoutError from ``is_finished``
    while sampling, which means "not yet"."""
    from types import SimpleNamespace

    from relimpute.relevance.bayes.inference import _finished, _iterations_done

    class Raw:
        def __init__(self, rows):
            self.rows = rows

        def inspect(self):
            if self.rows is None:
                raise RuntimeError("nothing stored yet")
            batches = [SimpleNamespace(num_rows=n) for n in self.rows]
            return SimpleNamespace(get_arrow_trace=lambda: (batches, batches))

    class Sampler:
        def __init__(self, rows, done):
            self._sampler, self.done = Raw(rows), done

        @property
        def is_finished(self):
            if not self.done:
                raise TimeoutError("Timeout while waiting for sampler to finish")
            return True

    assert not _finished(Sampler(None, False)) and _finished(Sampler([8, 8], True))
    assert _iterations_done(Sampler(None, False)) == 0
    assert _iterations_done(Sampler([8, 5], False)) == 13


@pytest.mark.slow
def test_progress_counts_a_real_nutpie_trace():
    """nutpie's raw trace as the installed version stores it: every tuning step and draw."""
    import nutpie

    from relimpute.relevance.bayes import _import_pymc
    from relimpute.relevance.bayes.inference import _finished, _iterations_done

    pm = _import_pymc()
    with pm.Model() as model:
        pm.Normal("x", 0.0, 1.0, shape=2)
    sampler = nutpie.sample(
        nutpie.compile_pymc_model(model), draws=30, tune=20, chains=2, seed=1,
        progress_bar=False, blocking=False, save_warmup=True,
    )  # fmt: skip
    while not _finished(sampler):
        time.sleep(0.1)
    assert _iterations_done(sampler) == 2 * (20 + 30)
    assert sampler.wait().posterior.sizes["draw"] == 30


HELD_OUT = Path(__file__).resolve().parents[1] / "examples" / "calibration" / "held_out"


@pytest.mark.parametrize("collection", ["dl19", "dl21", "trec8"])
def test_held_out_bayes_settings_centre_on_the_held_out_default(collection):
    """held_out/C/bayes.json (examples/bayes_calibration/held_out.py) is models/bayes.json with
    the default model's settings chosen without C: a bayes-mc study on C is held out."""
    folder = HELD_OUT / collection
    fusion = json.loads((folder / "fusion.json").read_text())["params"]
    bayes = json.loads((folder / "bayes.json").read_text())
    shipped = json.loads((HELD_OUT.parents[2] / "models" / "bayes.json").read_text())["params"]
    assert bayes["model"] == "bayes"
    assert bayes["params"]["fusion"] == {k: v for k, v in fusion.items() if k != "n_draws"}
    assert {k: v for k, v in bayes["params"].items() if k != "fusion"} == {
        k: v for k, v in shipped.items() if k != "fusion"
    }


def test_settings_dir_gives_bayes_mc_the_held_out_centres(campaign):
    """calibrate --settings-dir held_out/dl21: bayes-mc's model reads held_out/dl21/bayes.json
    (keeping the strategy's own draws) and its hyperpriors are centred on dl21's held-out
    spreads; fusion-mc reads fusion.json from the same folder."""
    from relimpute.calibration.strategies import resolve_strategies, with_settings_from

    strategies = with_settings_from(resolve_strategies("bayes-mc,fusion-mc"), HELD_OUT / "dl21")
    by_name = {s.name: s for s in strategies}
    model = by_name["bayes-mc"].make_model()
    assert isinstance(model, Bayes) and model.n_draws == 200
    assert model.fusion["run_effect_sd"] == 4.0 and model.fusion["weight_sd"] == 0.5
    assert by_name["fusion-mc"].make_model().run_effect_sd == 4.0
    posterior = model._posterior_model()
    assert (posterior.run_effect_sd, posterior.weight_sd, posterior.beyond_decay) == (4.0, 0.5, 0.3)
    centres = {}

    class Capture(Bayes):
        def _sample(self, design, y, n_topics, weight_centre, settings):
            centres.update(settings)
            return super()._sample(design, y, n_topics, weight_centre, settings)

    Capture(**SMALL_ADVI, fusion=model.fusion).fit(campaign, rng=2)
    # the hyperpriors' centres (build_model's LogNormal(log centre, s)) are dl21's held-out spreads
    assert (centres["run_effect_sd"], centres["weight_sd"]) == (4.0, 0.5)
