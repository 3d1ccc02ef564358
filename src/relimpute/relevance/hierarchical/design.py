"""Design of the Bayesian hierarchy: its priors, the judged documents as sparse inputs, the PyMC model.

The model is the one of the package docstring (:mod:`relimpute.relevance.hierarchical`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ...data import Campaign

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
    """The PyMC model of the package docstring over the judged documents (non-centred).

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
