"""A Bayesian hierarchical relevance model in PyMC, partially pooled across topics and systems.

Carterette 2007 §3.1 rejects a hierarchical model because it "will not
generalize to unseen topics"; this one does, by drawing the parameters of an
unseen topic or system from the fitted hyperpriors. The relevance of
document ``i`` of topic ``t`` is ``X_ti ~ Bernoulli(σ(η_ti))`` with log-odds

    η_ti = α_t + Σ_{j ∈ C_t} [ R_jti · β_j · r_jti^(−γ_j) + (R_jti − ½) · δ_j ]

where ``C_t`` are the systems that retrieve anything for topic ``t``,
``R_jti`` is 1 when system ``j`` retrieves the document (at 1-based rank
``r_jti``) and 0 otherwise. Each system has a reliability ``β_j`` (log-odds
its top document adds), a decay shape ``γ_j`` (the contribution falls as a
power of the rank, linearly in log rank: ``log g = −γ log r``) and a
retrieval evidence ``δ_j`` (effect-coded, so a document the system leaves out
loses ``δ_j / 2``: the evidence of *not* retrieving). The topic intercept is
the log-odds of a document retrieved, at infinite depth, by half the covering
systems. Partial pooling (non-centred)::

    α_t ~ N(μ_α, σ_α),  β_j ~ N(μ_β, σ_β),  log γ_j ~ N(μ_logγ, σ_logγ),  δ_j ~ N(μ_δ, σ_δ)

with the hyperpriors of ``models/bayes.json``. By default
(``delta_pooling="shared"``) the retrieval evidence is one δ for every
system (δ_j = μ_δ, σ_δ = 0), the others stay per system: with per-system δ_j
the posterior of σ_δ on DL 2019 is a funnel set by its prior (90% interval
0.07-0.59 under HalfNormal(0.25), 0.006-0.22 under HalfNormal(0.1)) that NUTS
does not converge on (R-hat ~1.03, divergences; models/bayes.json), i.e. the
data barely say how much the δ_j differ; ``delta_pooling="partial"`` is that
model. The model is fitted on the
judged documents only (labels at ``campaign.rel_threshold``) by NUTS (nutpie
with its low-rank mass-matrix adaptation, which follows the posterior
correlation between the topic intercepts and the δ_j; or PyMC's sampler) or
by mean-field ADVI (PyMC's ``ADVI`` with Adam, its step compiled once per model
shape and refitted on swapped ``pm.Data``; PyMC 5.28 has no native Pathfinder,
that lives in pymc-extras); prediction for every document of a
campaign is vectorised numpy over the posterior draws (no PyMC graph over the
unjudged documents). Convergence after NUTS is checked with rank-normalised
R-hat, bulk/tail ESS (Vehtari et al. 2021, Bayesian Analysis 16(2)) and the
count of divergent transitions.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
import warnings
import zlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.special import expit

from ..data import Campaign, TopicData
from ..errors import ConvergenceWarning
from .base import RelevanceModel, register

DEFAULT_PRIORS: dict[str, float] = {
    "alpha_mu_mean": -1.0,
    "alpha_mu_sd": 2.0,
    "alpha_sd_scale": 1.0,
    "beta_mu_mean": 0.0,
    "beta_mu_sd": 0.5,
    "beta_sd_scale": 0.25,
    "log_gamma_mu_mean": -0.7,
    "log_gamma_mu_sd": 1.0,
    "log_gamma_sd_scale": 0.25,
    "delta_mu_mean": 0.0,
    "delta_mu_sd": 0.5,
    "delta_sd_scale": 0.25,
}
"""Hyperprior settings: ``*_mu_mean``/``*_mu_sd`` of the Normal on a population
mean, ``*_sd_scale`` of the HalfNormal on a population standard deviation
(``delta_sd_scale`` only with ``delta_pooling="partial"``)."""

METHODS = ("nuts", "advi")
DELTA_POOLING = ("shared", "partial")
SAMPLERS = ("nutpie", "pymc")
FORMAT_VERSION = 1
_PARAMETERS = ("alpha", "beta", "gamma", "delta")
_HYPER = (
    "mu_alpha",
    "sigma_alpha",
    "mu_beta",
    "sigma_beta",
    "mu_log_gamma",
    "sigma_log_gamma",
    "mu_delta",
    "sigma_delta",
)


def _import_pymc():
    """Import PyMC lazily (slow), silencing two environment notices.

    ArviZ announces its refactor (FutureWarning) and PyTensor warns, when it
    first looks for BLAS, that a pip install has none; the model has no
    matrix products, so neither concerns it. Resolving PyTensor's BLAS flags
    here, once, keeps that notice out of every later compilation.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.filterwarnings("ignore", "PyTensor could not link to a BLAS", UserWarning)
        import arviz  # noqa: F401
        import pymc
        import pytensor

        pytensor.config.blas__ldflags  # noqa: B018 (resolved once, cached by PyTensor)
    return pymc


def _import_arviz():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


# --------------------------------------------------------------------------- design


@dataclass(frozen=True, slots=True, eq=False)
class JudgedDesign:
    """The judged documents of a campaign as sparse model inputs.

    Attributes
    ----------
    topic
        ``(N,)`` topic index of each judged document.
    label
        ``(N,)`` int8 relevance at the campaign's threshold.
    entry_doc, entry_system, entry_rank
        ``(E,)`` the (judged document, system, 1-based rank) triplets: one per
        system that retrieves the document.
    cover
        ``(T, S)`` bool: the system retrieves anything for the topic.
    """

    topic: np.ndarray
    label: np.ndarray
    entry_doc: np.ndarray
    entry_system: np.ndarray
    entry_rank: np.ndarray
    cover: np.ndarray

    @classmethod
    def from_campaign(cls, campaign: Campaign) -> JudgedDesign:
        topics, labels, docs, systems, ranks = [], [], [], [], []
        offset = 0
        for t, (topic, relevant) in enumerate(zip(campaign.topics, campaign.relevant())):
            judged = np.flatnonzero(topic.judged)
            row = np.full(topic.n_docs, -1, dtype=np.int64)
            row[judged] = np.arange(len(judged)) + offset
            for s in range(campaign.n_systems):
                rank = topic.ranks(s)[judged]
                hit = np.flatnonzero(rank)
                docs.append(row[judged[hit]])
                systems.append(np.full(len(hit), s, dtype=np.int64))
                ranks.append(rank[hit])
            topics.append(np.full(len(judged), t, dtype=np.int64))
            labels.append(relevant[judged].astype(np.int8))
            offset += len(judged)
        cover = (
            campaign.coverage().T if campaign.n_topics else np.zeros((0, campaign.n_systems), bool)
        )
        return cls(
            topic=np.concatenate(topics) if topics else np.zeros(0, np.int64),
            label=np.concatenate(labels) if labels else np.zeros(0, np.int8),
            entry_doc=np.concatenate(docs) if docs else np.zeros(0, np.int64),
            entry_system=np.concatenate(systems) if systems else np.zeros(0, np.int64),
            entry_rank=np.concatenate(ranks).astype(np.int64) if ranks else np.zeros(0, np.int64),
            cover=np.asarray(cover, dtype=bool),
        )

    @property
    def n(self) -> int:
        return len(self.label)


def design_data(design: JudgedDesign) -> dict[str, np.ndarray]:
    """The ``pm.Data`` values of :func:`build_model` for ``design``.

    The (system, rank) pairs of the triplets repeat (DL 2019's official qrels:
    168k triplets over 28k pairs), so the curve ``β_j r^(−γ_j) + δ_j`` is
    evaluated once per distinct pair (``key_*``) and gathered per triplet
    (``entry_key``): the gradient then touches each triplet twice instead of
    through three per-system gathers and an exponential (4x less CPU per
    gradient).
    """
    width = int(design.entry_rank.max(initial=0)) + 1
    keys, entry_key = np.unique(design.entry_system * width + design.entry_rank, return_inverse=True)
    by_doc = np.argsort(design.entry_doc, kind="stable")  # the scatter runs through memory once
    return {
        "key_system": keys // width,
        "key_log_rank": np.log((keys % width).astype(np.float64)),
        "entry_key": entry_key.reshape(-1)[by_doc],
        "entry_doc": design.entry_doc[by_doc],
        "doc_topic": design.topic,
        "cover": design.cover.astype(np.float64),
        "label": design.label.astype(np.int64),
    }


def build_model(
    design: JudgedDesign,
    topics: tuple[str, ...],
    systems: tuple[str, ...],
    priors: Mapping[str, float],
    delta_pooling: str = "partial",
):
    """The PyMC model of the module docstring over the judged documents (non-centred).

    ``delta_pooling="shared"`` gives every system the one retrieval evidence ``μ_δ``.
    """
    pm = _import_pymc()
    import pytensor.tensor as pt

    coords = {"topic": list(topics), "system": list(systems)}
    pr = priors
    with pm.Model(coords=coords) as model:
        mu_alpha = pm.Normal("mu_alpha", pr["alpha_mu_mean"], pr["alpha_mu_sd"])
        sigma_alpha = pm.HalfNormal("sigma_alpha", pr["alpha_sd_scale"])
        z_alpha = pm.Normal("z_alpha", 0.0, 1.0, dims="topic")
        alpha = pm.Deterministic("alpha", mu_alpha + sigma_alpha * z_alpha, dims="topic")

        def pooled(name, key):
            mu = pm.Normal(f"mu_{name}", pr[f"{key}_mu_mean"], pr[f"{key}_mu_sd"])
            sigma = pm.HalfNormal(f"sigma_{name}", pr[f"{key}_sd_scale"])
            z = pm.Normal(f"z_{name}", 0.0, 1.0, dims="system")
            return mu + sigma * z

        beta = pm.Deterministic("beta", pooled("beta", "beta"), dims="system")
        gamma = pm.Deterministic("gamma", pt.exp(pooled("log_gamma", "log_gamma")), dims="system")
        if delta_pooling == "shared":
            mu_delta = pm.Normal("mu_delta", pr["delta_mu_mean"], pr["delta_mu_sd"])
            delta = pm.Deterministic("delta", mu_delta * pt.ones(len(systems)), dims="system")
        else:
            delta = pm.Deterministic("delta", pooled("delta", "delta"), dims="system")

        # pm.Data: the judged documents can be swapped without recompiling (_AdviProgram)
        data = {name: pm.Data(name, value) for name, value in design_data(design).items()}
        key_system = data["key_system"]
        curve = beta[key_system] * pt.exp(-gamma[key_system] * data["key_log_rank"])
        curve = curve + delta[key_system]
        label = data["label"]
        entry = curve[data["entry_key"]]
        retrieved = pt.inc_subtensor(pt.zeros(label.shape[0])[data["entry_doc"]], entry)
        absent = 0.5 * (data["cover"] * delta[None, :]).sum(axis=1)
        eta = (alpha - absent)[data["doc_topic"]] + retrieved
        pm.Bernoulli("relevant", logit_p=eta, observed=label)
    return model


# --------------------------------------------------------------------------- inference


@dataclass(frozen=True, slots=True)
class FitDiagnostics:
    """How well inference went (Vehtari et al. 2021 for R-hat and ESS).

    ``rhat_max``, ``ess_bulk_min``, ``ess_tail_min`` and ``divergences`` are
    NaN/-1 for ADVI, which reports the final mean ``elbo`` instead (and its
    plateau check among the ``problems``). ``seconds`` is the whole inference
    (compilation included); ``compile_seconds`` the part spent compiling the
    model for nutpie (NaN with PyMC's sampler, which compiles inside
    ``pm.sample``, and with ADVI).
    """

    method: str
    n_judged: int
    n_posterior_draws: int
    rhat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    divergences: int
    elbo: float
    iterations: int
    seconds: float
    problems: tuple[str, ...]
    compile_seconds: float = math.nan

    @property
    def converged(self) -> bool:
        return not self.problems

    def to_frame(self) -> pd.DataFrame:
        row = asdict(self)
        row["problems"] = "; ".join(self.problems)
        row["converged"] = self.converged
        return pd.DataFrame([row])

    def __str__(self) -> str:
        head = f"{self.method}: {self.n_judged} judged, {self.n_posterior_draws} draws, {self.seconds:.1f} s"
        if not math.isnan(self.compile_seconds):
            head += f" ({self.compile_seconds:.1f} s compiling)"
        if self.method == "nuts":
            body = (
                f"R-hat max {self.rhat_max:.3f}, ESS bulk min {self.ess_bulk_min:.0f}, "
                f"ESS tail min {self.ess_tail_min:.0f}, {self.divergences} divergences"
            )
        else:
            body = f"ELBO {self.elbo:.1f} after {self.iterations} iterations"
        status = "converged" if self.converged else "NOT converged: " + "; ".join(self.problems)
        return f"{head}; {body}; {status}"


class _NutsProgram:
    """nutpie's compiled model for one model shape, refitted on swapped judgments.

    nutpie compiles the log density and its gradient with numba (tens of
    seconds); the judged documents are shared data, so one compilation
    serves every fit of the same topics, systems and priors (``with_data``
    swaps them in) and a fit gives the same draws whether or not the program
    was compiled for it.
    """

    _cache: dict[tuple, _NutsProgram] = {}
    _cache_size = 4

    def __init__(self, model):
        import nutpie

        start = time.perf_counter()
        self.compiled = nutpie.compile_pymc_model(model, freeze_model=False)
        self.compile_seconds = time.perf_counter() - start

    @classmethod
    def for_model(cls, design, topics, systems, priors, delta_pooling):
        """The program for this shape (compiled now if new) and the seconds spent compiling."""
        key = (len(topics), len(systems), tuple(sorted(priors.items())), delta_pooling)
        program, seconds = cls._cache.pop(key, None), 0.0
        if program is None:
            program = cls(build_model(design, topics, systems, priors, delta_pooling))
            seconds = program.compile_seconds
        cls._cache[key] = program  # most recently used last
        while len(cls._cache) > cls._cache_size:
            cls._cache.pop(next(iter(cls._cache)))
        return program, seconds

    def sample(self, design, topics, systems, *, draws, tune, chains, target_accept, seed, bar):
        """NUTS draws as InferenceData (this campaign's coordinates); ``bar`` counts iterations."""
        import nutpie

        compiled = self.compiled.with_data(**design_data(design))
        sampler = nutpie.sample(
            compiled,
            draws=draws,
            tune=tune,
            chains=chains,
            cores=min(chains, 2),
            seed=seed,
            save_warmup=True,  # counted by the progress bar, dropped below
            progress_bar=False,
            target_accept=target_accept,
            low_rank_modified_mass_matrix=True,
            blocking=False,
        )
        while not _finished(sampler):
            time.sleep(0.5)
            if bar is not None:
                bar.update(_iterations_done(sampler) - bar.n)
        idata = sampler.wait()
        for group in [g for g in idata.groups() if g.startswith("warmup")]:
            del idata[group]
        if bar is not None:
            bar.update(bar.total - bar.n)
        idata.posterior = idata.posterior.assign_coords(topic=list(topics), system=list(systems))
        return idata


def _finished(sampler) -> bool:
    """Whether a background nutpie sampler is done (nutpie 0.16 raises TimeoutError while not)."""
    try:
        return bool(sampler.is_finished)
    except TimeoutError:
        return False


def _iterations_done(sampler) -> int:
    """Iterations (tuning and draws, all chains) a running nutpie sampler has finished."""
    try:
        trace = sampler.inspect()
    except Exception:  # noqa: BLE001 (nothing stored yet: the count is only for display)
        return 0
    return sum(
        trace[g].sizes["chain"] * trace[g].sizes["draw"]
        for g in ("warmup_posterior", "posterior")
        if g in trace.groups()
    )


def _sample_nuts_pymc(model, *, draws, tune, chains, target_accept, seed):
    """PyMC's own NUTS (compiles inside ``pm.sample``) as InferenceData."""
    from pymc.model.transform.optimization import freeze_dims_and_data

    pm = _import_pymc()
    with freeze_dims_and_data(model):
        return pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=min(chains, 2),
            target_accept=target_accept,
            random_seed=seed,
            progressbar=False,
            compute_convergence_checks=False,
        )


def _nuts_diagnostics(
    idata, *, n_judged, seconds, rhat_max, min_ess_per_chain, compile_seconds=math.nan
):
    az = _import_arviz()
    names = [v for v in idata.posterior.data_vars]
    rhat = float(max(float(az.rhat(idata, var_names=names)[v].max()) for v in names))
    ess_bulk = az.ess(idata, var_names=names, method="bulk")
    ess_tail = az.ess(idata, var_names=names, method="tail")
    bulk = float(min(float(ess_bulk[v].min()) for v in names))
    tail = float(min(float(ess_tail[v].min()) for v in names))
    divergences = int(idata.sample_stats["diverging"].sum())
    chains = idata.posterior.sizes["chain"]
    ess_min = min_ess_per_chain * chains
    problems = []
    if not rhat <= rhat_max:
        problems.append(f"R-hat {rhat:.3f} > {rhat_max}")
    if not min(bulk, tail) >= ess_min:
        problems.append(f"ESS {min(bulk, tail):.0f} < {ess_min}")
    if divergences:
        problems.append(f"{divergences} divergent transitions")
    return FitDiagnostics(
        method="nuts",
        n_judged=n_judged,
        n_posterior_draws=chains * idata.posterior.sizes["draw"],
        rhat_max=rhat,
        ess_bulk_min=bulk,
        ess_tail_min=tail,
        divergences=divergences,
        elbo=math.nan,
        iterations=int(idata.posterior.sizes["draw"]),
        seconds=seconds,
        problems=tuple(problems),
        compile_seconds=compile_seconds,
    )


class _AdviProgram:
    """Mean-field ADVI (Adam) on :func:`build_model`, compiled once and refitted on new data.

    Compiling the gradient step costs ~2 s and the 5,000 steps ~0.4 s on a
    reusability trial, so the compiled step is kept per model shape (topics,
    systems, priors) and every fit swaps in the judged documents (``pm.Data``),
    restores the variational parameters and Adam's state to their initial
    values and reseeds the step's random stream: a fit gives the same draws
    whether or not the program was compiled for it.
    """

    _cache: dict[tuple, _AdviProgram] = {}
    _cache_size = 4

    def __init__(self, model, learning_rate: float):
        pm = _import_pymc()
        from pytensor.tensor.random.type import RandomType

        self.model = model
        self.lock = threading.Lock()  # one fit at a time: the program's state is shared
        with model:
            self.inference = pm.ADVI()
            self.step = self.inference.objective.step_function(
                obj_optimizer=pm.adam(learning_rate=learning_rate), score=True
            )
        data = {id(v) for v in model.data_vars}
        shared = [v for v in self.step.get_shared() if id(v) not in data]
        self.rngs = [v for v in shared if isinstance(v.type, RandomType)]
        self.initial = [
            (v, v.get_value(borrow=False)) for v in shared if not isinstance(v.type, RandomType)
        ]

    @classmethod
    def for_model(cls, design, topics, systems, priors, delta_pooling, learning_rate):
        key = (len(topics), len(systems), tuple(sorted(priors.items())), delta_pooling, learning_rate)
        program = cls._cache.pop(key, None)
        if program is None:
            program = cls(build_model(design, topics, systems, priors, delta_pooling), learning_rate)
        cls._cache[key] = program  # most recently used last
        while len(cls._cache) > cls._cache_size:
            cls._cache.pop(next(iter(cls._cache)))
        return program

    def fit(self, design, topics, systems, *, steps, draws, seed, bar=None):
        """Draws as InferenceData (coordinates of this campaign) and the loss (−ELBO) history."""
        from pymc.pytensorf import reseed_rngs

        with self.lock:
            for name, value in design_data(design).items():
                self.model.set_data(name, value)
            for variable, value in self.initial:
                variable.set_value(value.copy())
            reseed_rngs(self.rngs, seed)
            loss = np.empty(steps)
            for i in range(steps):
                loss[i] = self.step()
                if not np.isfinite(loss[i]):
                    raise FloatingPointError(f"ADVI's loss became {loss[i]} at step {i}")
                if bar is not None and (i + 1) % 100 == 0:
                    bar.update(100)
            idata = self.inference.approx.sample(draws, random_seed=seed + 1)
        idata.posterior = idata.posterior.assign_coords(topic=list(topics), system=list(systems))
        return idata, loss


def elbo_plateau(loss: np.ndarray) -> tuple[float, float]:
    """Mean ELBO over the last tenth of the iterations and its relative change from the tenth before.

    A small relative change says the optimisation has reached its plateau.
    """
    window = max(1, len(loss) // 10)
    last, before = loss[-window:], loss[-2 * window : -window]
    if not len(before):
        return float(-last.mean()), math.inf
    return float(-last.mean()), float(abs(last.mean() - before.mean()) / abs(last.mean()))


# --------------------------------------------------------------------------- prediction


@dataclass(frozen=True, slots=True, eq=False)
class PosteriorDraws:
    """Posterior draws of every parameter, ``(D, ...)`` numpy arrays (D draws)."""

    alpha: np.ndarray
    beta: np.ndarray
    gamma: np.ndarray
    delta: np.ndarray
    hyper: Mapping[str, np.ndarray]

    @classmethod
    def from_idata(cls, idata, n_draws: int) -> PosteriorDraws:
        post = idata.posterior
        total = post.sizes["chain"] * post.sizes["draw"]
        pick = np.unique(np.linspace(0, total - 1, min(n_draws, total)).round().astype(int))

        def flat(name):
            if name not in post:  # σ_δ of a shared δ
                return np.zeros(len(pick))
            values = post[name].to_numpy()
            return values.reshape(total, *values.shape[2:])[pick]

        return cls(
            alpha=flat("alpha"),
            beta=flat("beta"),
            gamma=flat("gamma"),
            delta=flat("delta"),
            hyper={h: flat(h) for h in _HYPER},
        )

    @property
    def n(self) -> int:
        return self.beta.shape[0]

    def new_topic(self, key: str, seed: int) -> np.ndarray:
        """``(D,)`` α for an unseen topic: one hyperprior draw per posterior draw."""
        z = np.random.default_rng([seed, 0, zlib.crc32(key.encode())]).standard_normal(self.n)
        return self.hyper["mu_alpha"] + self.hyper["sigma_alpha"] * z

    def new_system(self, key: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(D,)`` β, γ, δ for an unseen system, drawn from the hyperpriors."""
        z = np.random.default_rng([seed, 1, zlib.crc32(key.encode())]).standard_normal((3, self.n))
        h = self.hyper
        return (
            h["mu_beta"] + h["sigma_beta"] * z[0],
            np.exp(h["mu_log_gamma"] + h["sigma_log_gamma"] * z[1]),
            h["mu_delta"] + h["sigma_delta"] * z[2],
        )


def topic_log_odds(
    topic: TopicData, alpha: np.ndarray, curve: np.ndarray, delta: np.ndarray
) -> np.ndarray:
    """``(D, n)`` log-odds η of every document of one topic for D parameter draws.

    ``curve[d, j, r - 1] = β_j r^(−γ_j) + δ_j`` is what retrieving at rank r
    adds on top of the ``−δ_j / 2`` every covering system contributes; the
    sparse (document, system, rank) triplets of the topic gather from it.
    """
    covering = topic.depth > 0
    base = alpha - 0.5 * delta[:, covering].sum(axis=1)
    systems = np.repeat(np.arange(len(topic.depth)), topic.depth)
    ranks = np.concatenate([np.arange(d) for d in topic.depth]) if len(systems) else systems
    docs = topic.ranking[systems, ranks]
    values = curve[:, systems, ranks]  # (D, n_triplets)
    scatter = sp.csr_matrix(
        (np.ones(len(docs)), (docs, np.arange(len(docs)))), shape=(topic.n_docs, len(docs))
    )
    return base[:, None] + np.asarray(scatter @ values.T).T


# --------------------------------------------------------------------------- the model


class BayesianHierarchy(RelevanceModel):
    """Hierarchical Bernoulli-logit relevance model (module docstring), fitted with PyMC.

    Parameters
    ----------
    method
        ``"nuts"`` (default) or ``"advi"`` (mean-field, fast, approximate).
    draws, tune, chains
        NUTS draws and tuning steps per chain, and the number of chains.
        With ADVI, ``draws * chains`` draws are taken from the approximation.
    sampler
        NUTS implementation: ``"nutpie"`` (default) or ``"pymc"``.
    target_accept
        NUTS step-size adaptation target.
    advi_steps, advi_learning_rate, advi_tolerance
        ADVI iterations and Adam step size; after them, the mean ELBO of the
        last tenth of the iterations must differ from the tenth before by
        at most ``advi_tolerance`` (relative), else a ConvergenceWarning.
    n_draws
        Posterior draws (evenly thinned) used for prediction; ``p`` is their
        mean and, when ``return_draws``, they are handed over as joint draws.
    return_draws
        Whether :meth:`predict` returns the ``(n_draws, n)`` draws per topic.
    rhat_max, min_ess_per_chain
        Convergence thresholds after NUTS (Vehtari et al. 2021: R-hat ≤ 1.01,
        bulk and tail ESS ≥ 100 per chain); a failed check, or any divergent
        transition, raises a :class:`~relimpute.errors.ConvergenceWarning`.
    priors
        Overrides of :data:`DEFAULT_PRIORS` (keys must exist there).

    delta_pooling
        ``"shared"`` (default): one retrieval evidence δ for all systems;
        ``"partial"``: per-system δ_j partially pooled (module docstring).

    Attributes
    ----------
    idata_
        The ArviZ InferenceData of the fit.
    systems_, topics_
        Names of the fitted systems and topic ids (matched by name at predict time).
    diagnostics_
        :class:`FitDiagnostics`.
    predict_seed_
        Seed of the hyperprior draws for unseen topics and systems.
    """

    name = "bayes"

    def __init__(
        self,
        method: str = "nuts",
        draws: int = 1500,
        tune: int = 300,
        chains: int = 2,
        sampler: str = "nutpie",
        target_accept: float = 0.95,
        advi_steps: int = 5000,
        advi_tolerance: float = 0.01,
        advi_learning_rate: float = 0.02,
        n_draws: int = 100,
        return_draws: bool = True,
        rhat_max: float = 1.01,
        min_ess_per_chain: int = 100,
        priors: Mapping[str, float] | None = None,
        delta_pooling: str = "shared",
    ):
        self.method = method
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.sampler = sampler
        self.target_accept = target_accept
        self.advi_steps = advi_steps
        self.advi_tolerance = advi_tolerance
        self.advi_learning_rate = advi_learning_rate
        self.n_draws = n_draws
        self.return_draws = return_draws
        self.rhat_max = rhat_max
        self.min_ess_per_chain = min_ess_per_chain
        self.priors = priors
        self.delta_pooling = delta_pooling

    # ------------------------------------------------------------------ config

    def _validate(self) -> dict[str, float]:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.delta_pooling not in DELTA_POOLING:
            raise ValueError(
                f"delta_pooling must be one of {DELTA_POOLING}, got {self.delta_pooling!r}"
            )
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        for name in ("draws", "chains", "n_draws", "advi_steps"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if int(self.tune) < 0:
            raise ValueError(f"tune must be non-negative, got {self.tune}")
        if not 0.0 < self.target_accept < 1.0:
            raise ValueError(f"target_accept must lie in (0, 1), got {self.target_accept}")
        priors = dict(DEFAULT_PRIORS)
        unknown = set(self.priors or {}) - set(DEFAULT_PRIORS)
        if unknown:
            raise ValueError(
                f"unknown prior setting(s) {sorted(unknown)}; known: {sorted(DEFAULT_PRIORS)}"
            )
        priors.update({k: float(v) for k, v in (self.priors or {}).items()})
        bad = [k for k, v in priors.items() if ("_sd" in k) and not v > 0]
        if bad:
            raise ValueError(f"prior scale(s) {bad} must be positive")
        return priors

    def config(self) -> dict[str, Any]:
        """The hyper-parameters as JSON-ready data (what :meth:`save` stores and hashes)."""
        params = self.get_params()
        params["priors"] = None if self.priors is None else dict(sorted(self.priors.items()))
        return {"model": self.name, "format": FORMAT_VERSION, "params": params}

    @staticmethod
    def _hash(config_json: str) -> str:
        return hashlib.sha256(config_json.encode()).hexdigest()

    # ------------------------------------------------------------------ fit / predict

    def _fit(self, campaign: Campaign, rng: np.random.Generator) -> None:
        from ..progress import progress

        priors = self._validate()
        design = JudgedDesign.from_campaign(campaign)
        seed = int(rng.integers(2**31 - 1))
        start = time.perf_counter()
        nuts = self.method == "nuts"
        total = int(self.chains) * (int(self.tune) + int(self.draws)) if nuts else int(self.advi_steps)
        # shown at once: importing PyMC and compiling take seconds before the first step
        with progress(None, desc="bayes: loading PyMC", total=total) as bar:
            _import_pymc()
            topics, systems = campaign.query_ids, campaign.systems
            if nuts and self.sampler == "nutpie":
                bar.set_description("bayes: compiling the model")
                program, compile_seconds = _NutsProgram.for_model(
                    design, topics, systems, priors, self.delta_pooling
                )
                bar.set_description("bayes: NUTS (nutpie)")
                idata = program.sample(
                    design,
                    topics,
                    systems,
                    draws=int(self.draws),
                    tune=int(self.tune),
                    chains=int(self.chains),
                    target_accept=float(self.target_accept),
                    seed=seed,
                    bar=bar,
                )
            elif nuts:
                bar.set_description("bayes: NUTS (PyMC)")
                compile_seconds = math.nan
                idata = _sample_nuts_pymc(
                    build_model(design, topics, systems, priors, self.delta_pooling),
                    draws=int(self.draws),
                    tune=int(self.tune),
                    chains=int(self.chains),
                    target_accept=float(self.target_accept),
                    seed=seed,
                )
            else:
                bar.set_description("bayes: compiling the model")
                program = _AdviProgram.for_model(
                    design, topics, systems, priors, self.delta_pooling,
                    float(self.advi_learning_rate),
                )  # fmt: skip
                bar.set_description("bayes: ADVI")
                idata, loss = program.fit(
                    design,
                    topics,
                    systems,
                    steps=int(self.advi_steps),
                    draws=int(self.draws) * int(self.chains),
                    seed=seed,
                    bar=bar,
                )
        if nuts:
            diagnostics = _nuts_diagnostics(
                idata,
                n_judged=design.n,
                seconds=time.perf_counter() - start,
                rhat_max=self.rhat_max,
                min_ess_per_chain=self.min_ess_per_chain,
                compile_seconds=compile_seconds,
            )
        else:
            iterations = len(loss)
            elbo, change = elbo_plateau(loss)
            problems = ()
            if not change <= self.advi_tolerance:
                problems = (
                    (
                        f"ADVI's ELBO still moves by {change:.3g} (relative) over its last "
                        f"tenth of {iterations} iterations (> {self.advi_tolerance})"
                    ),
                )
            diagnostics = FitDiagnostics(
                method="advi",
                n_judged=design.n,
                n_posterior_draws=int(self.draws) * int(self.chains),
                rhat_max=math.nan,
                ess_bulk_min=math.nan,
                ess_tail_min=math.nan,
                divergences=-1,
                elbo=elbo,
                iterations=iterations,
                seconds=time.perf_counter() - start,
                problems=problems,
            )
        self._set_state(
            idata=idata,
            systems=campaign.systems,
            topics=campaign.query_ids,
            diagnostics=diagnostics,
            predict_seed=int(rng.integers(2**31 - 1)),
        )
        if not diagnostics.converged:
            warnings.warn(
                f"bayes relevance model: {'; '.join(diagnostics.problems)} "
                "(raise draws/tune or check the priors)",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _set_state(self, *, idata, systems, topics, diagnostics, predict_seed) -> None:
        self.idata_ = idata
        self.systems_ = tuple(systems)
        self.topics_ = tuple(topics)
        self.diagnostics_ = diagnostics
        self.predict_seed_ = predict_seed

    def posterior_draws(self) -> PosteriorDraws:
        """The ``n_draws`` thinned posterior draws used for prediction."""
        return PosteriorDraws.from_idata(self.idata_, int(self.n_draws))

    def _predict(self, campaign: Campaign):
        post = self.posterior_draws()
        fitted_system = {s: i for i, s in enumerate(self.systems_)}
        fitted_topic = {q: i for i, q in enumerate(self.topics_)}
        shape = (post.n, campaign.n_systems)
        beta, gamma, delta = np.empty(shape), np.empty(shape), np.empty(shape)
        for j, name in enumerate(campaign.systems):
            if name in fitted_system:
                k = fitted_system[name]
                beta[:, j], gamma[:, j], delta[:, j] = (
                    post.beta[:, k],
                    post.gamma[:, k],
                    post.delta[:, k],
                )
            else:
                beta[:, j], gamma[:, j], delta[:, j] = post.new_system(name, self.predict_seed_)
        max_depth = max((int(t.depth.max(initial=0)) for t in campaign.topics), default=0)
        log_rank = np.log(np.arange(1, max_depth + 1, dtype=np.float64))
        curve = beta[:, :, None] * np.exp(-gamma[:, :, None] * log_rank) + delta[:, :, None]

        ps, draws = [], []
        for topic in campaign.topics:
            if topic.query_id in fitted_topic:
                alpha = post.alpha[:, fitted_topic[topic.query_id]]
            else:
                alpha = post.new_topic(topic.query_id, self.predict_seed_)
            prob = expit(topic_log_odds(topic, alpha, curve, delta))
            ps.append(prob.mean(axis=0))
            if self.return_draws:
                draws.append(prob)
        d = self.diagnostics_
        params = {
            "method": d.method,
            "converged": d.converged,
            "rhat_max": d.rhat_max,
            "ess_bulk_min": d.ess_bulk_min,
            "ess_tail_min": d.ess_tail_min,
            "divergences": d.divergences,
            "n_judged": d.n_judged,
            "fit_seconds": d.seconds,
            "unseen_systems": tuple(s for s in campaign.systems if s not in fitted_system),
            "unseen_topics": tuple(q for q in campaign.query_ids if q not in fitted_topic),
            **{h: float(post.hyper[h].mean()) for h in _HYPER},
            **{p: getattr(post, p).mean(axis=0) for p in _PARAMETERS},
        }
        return ps, (draws if self.return_draws else None), params

    # ------------------------------------------------------------------ persistence

    def save(self, path: str | Path) -> Path:
        """Write the posterior as netCDF with the configuration and its hash in the attrs."""
        if not getattr(self, "fitted_", False):
            raise RuntimeError("BayesianHierarchy is not fitted: nothing to save")
        config_json = json.dumps(self.config(), sort_keys=True)
        idata = self.idata_.copy()
        idata.posterior.attrs.update(
            {
                "relimpute_config": config_json,
                "relimpute_config_hash": self._hash(config_json),
                "relimpute_systems": json.dumps(self.systems_),
                "relimpute_topics": json.dumps(self.topics_),
                "relimpute_predict_seed": str(self.predict_seed_),
                "relimpute_diagnostics": json.dumps(asdict(self.diagnostics_)),
            }
        )
        path = Path(path)
        idata.to_netcdf(str(path))
        return path

    @classmethod
    def load(cls, path: str | Path) -> BayesianHierarchy:
        """Restore a model written by :meth:`save`, checking its configuration and hash."""
        az = _import_arviz()
        idata = az.from_netcdf(str(path))
        idata.load()
        attrs = dict(idata.posterior.attrs)
        if "relimpute_config" not in attrs:
            raise ValueError(f"{path}: not a saved relimpute 'bayes' model (no configuration)")
        config_json = attrs["relimpute_config"]
        if cls._hash(config_json) != attrs.get("relimpute_config_hash"):
            raise ValueError(f"{path}: configuration does not match its hash (file altered?)")
        config = json.loads(config_json)
        if config.get("model") != cls.name or config.get("format") != FORMAT_VERSION:
            raise ValueError(
                f"{path}: saved model {config.get('model')!r} format {config.get('format')} "
                f"is not {cls.name!r} format {FORMAT_VERSION}"
            )
        # saved before delta_pooling existed: per-system δ_j
        model = cls(**{"delta_pooling": "partial", **config["params"]})
        systems = tuple(json.loads(attrs["relimpute_systems"]))
        topics = tuple(json.loads(attrs["relimpute_topics"]))
        post = idata.posterior
        if post.sizes.get("system") != len(systems) or post.sizes.get("topic") != len(topics):
            raise ValueError(f"{path}: posterior dimensions do not match the saved systems/topics")
        diag = json.loads(attrs["relimpute_diagnostics"])
        diag["problems"] = tuple(diag["problems"])
        for key in [k for k in post.attrs if k.startswith("relimpute_")]:
            del post.attrs[key]
        model._set_state(
            idata=idata,
            systems=systems,
            topics=topics,
            diagnostics=FitDiagnostics(**diag),
            predict_seed=int(attrs["relimpute_predict_seed"]),
        )
        model.fitted_ = True
        return model


register(BayesianHierarchy)
