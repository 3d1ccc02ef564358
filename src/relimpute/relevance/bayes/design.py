"""Design of the Bayesian hierarchy: its hyperpriors, the fit set as model inputs, the PyMC model.

The model is the one of the package docstring (:mod:`relimpute.relevance.bayes`):
the default model's likelihood (:mod:`relimpute.relevance.fusion`) with its
spreads as hyper-parameters.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..fusion import N_FEATURES

DEFAULT_PRIORS: dict[str, float] = {
    "intercept_sd_log_sd": 0.5,
    "run_effect_sd_log_sd": 0.5,
    "weight_sd_log_sd": 0.5,
}
"""Hyperprior widths: ``σ ~ LogNormal(log σ₀, s)`` for each spread ``σ`` (``σ_α`` of the
topic intercepts, ``σ_u`` of the run effects, ``σ_w`` of the weights around their
prior mean), centred on the default model's setting ``σ₀`` (``models/fusion.json``,
chosen leave-one-collection-out); ``s = 0`` fixes the spread at ``σ₀`` (the default
model's posterior exactly)."""

METHODS = ("nuts", "advi")
SAMPLERS = ("nutpie", "pymc")
FORMAT_VERSION = 2
#: the spreads: (hyper-parameter, the default model's setting it is centred on, prior key)
SPREADS = (
    ("sigma_alpha", "intercept_sd", "intercept_sd_log_sd"),
    ("sigma_u", "run_effect_sd", "run_effect_sd_log_sd"),
    ("sigma_w", "weight_sd", "weight_sd_log_sd"),
)
_HYPER = tuple(name for name, _, _ in SPREADS)


def _import_pymc():
    """Import PyMC lazily (slow), silencing two environment notices.

    ArviZ announces its refactor (FutureWarning) and PyTensor warns, when it
    first looks for BLAS, that a pip install has none; the model has no
    large matrix products, so neither concerns it. Resolving PyTensor's BLAS
    flags here, once, keeps that notice out of every later compilation.
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
    """The default model's fit set (the judged documents it learns from) as model inputs.

    Attributes
    ----------
    columns
        ``(N, 3 + S)`` dense: the standardised features ``z`` and the runs' votes
        ``1 / log2(1 + r)`` (the columns of ``w`` and ``u``; dense because one
        matrix-vector product per gradient is several times faster under numba
        than a scatter of the (document, run) pairs).
    topic
        ``(N,)`` topic index of each document.
    label
        ``(N,)`` int8 relevance at the campaign's threshold.
    weight_centre
        ``(3,)`` prior mean of ``w`` on the standardised features.
    """

    columns: np.ndarray
    topic: np.ndarray
    label: np.ndarray
    weight_centre: np.ndarray

    @classmethod
    def from_fusion(cls, design, y, n_topics: int, weight_centre) -> JudgedDesign:
        """From :class:`~relimpute.relevance.fusion.Fusion`'s fit-set design over
        ``θ = (w, μ, α_1..α_T, u_1..u_S)`` (every fitted topic has its own α column)."""
        design = sp.csr_matrix(design)
        k = N_FEATURES
        intercepts = design[:, k + 1 : k + 1 + n_topics].tocoo()
        topic = np.zeros(design.shape[0], dtype=np.int64)
        topic[intercepts.row] = intercepts.col
        wu = sp.hstack([design[:, :k], design[:, k + 1 + n_topics :]], format="csr")
        return cls(
            columns=np.ascontiguousarray(wu.toarray()),
            topic=topic,
            label=np.asarray(y).astype(np.int8),
            weight_centre=np.asarray(weight_centre, dtype=np.float64),
        )

    @property
    def n(self) -> int:
        return len(self.label)


def design_data(design: JudgedDesign) -> dict[str, np.ndarray]:
    """The ``pm.Data`` values of :func:`build_model` for ``design`` (swapped between fits)."""
    return {
        "columns": design.columns,
        "doc_topic": design.topic,
        "label": design.label.astype(np.int64),
        "weight_centre": design.weight_centre,
    }


def build_model(design: JudgedDesign, topics, systems, settings: Mapping[str, float]):
    """The PyMC model of the package docstring over the fit set (non-centred).

    ``settings``: :data:`DEFAULT_PRIORS`'s keys, and the default model's
    ``intercept_sd``, ``run_effect_sd``, ``weight_sd``, ``mean_mean``, ``mean_sd``.
    ``systems`` are the runs with an effect (none when ``run_effect_sd`` is 0).
    """
    pm = _import_pymc()
    import pytensor.tensor as pt

    coords = {"topic": list(topics), "system": list(systems), "feature": list(range(N_FEATURES))}
    with pm.Model(coords=coords) as model:

        def spread(name, centre, key):
            if settings[key] == 0:
                return pt.as_tensor_variable(float(settings[centre]))
            return pm.LogNormal(name, math.log(settings[centre]), settings[key])

        data = {name: pm.Data(name, value) for name, value in design_data(design).items()}
        z_w = pm.Normal("z_w", 0.0, 1.0, dims="feature")
        w = data["weight_centre"] + spread(*SPREADS[2]) * z_w
        mu = pm.Normal("mu", settings["mean_mean"], settings["mean_sd"])
        z_alpha = pm.Normal("z_alpha", 0.0, 1.0, dims="topic")
        alpha = mu + spread(*SPREADS[0]) * z_alpha
        parts = [w, mu[None], alpha]
        coef = w
        if len(systems):
            u = spread(*SPREADS[1]) * pm.Normal("z_u", 0.0, 1.0, dims="system")
            parts.append(u)
            coef = pt.concatenate([w, u])
        eta = alpha[data["doc_topic"]] + pt.dot(data["columns"], coef)
        pm.Deterministic("theta", pt.concatenate(parts))
        pm.Bernoulli("relevant", logit_p=eta, observed=data["label"])
    return model
