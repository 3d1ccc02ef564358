"""Prediction of the Bayesian hierarchy: posterior draws of its parameters, log-odds of every document.

Vectorised numpy over the posterior draws (no PyMC graph over the unjudged
documents); an unseen topic or system draws its parameters from the fitted
hyperpriors (package docstring).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...data import TopicData
from .design import _HYPER


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
